#!/bin/sh
# Runs the scoreboard built against AMD's stock HIP 5.2 (build/scoreboard-stock) under kfdsim,
# one process per section, each under a timeout, and writes what it measured as the rows file
# that bench/scoreboard.c reads from SCORE_STOCK:
#   row<TAB>section<TAB>index<TAB>value     (written by the stock scoreboard itself)
#   section<TAB>name<TAB>reason             (a section that failed or timed out)
# Each section's output goes to OUT.<section>.log.
#   bench/stock.sh KFDSIM GPUS STOCK_BINARY OUT [TIMEOUT_S] [SECTIONS...]
set -u
kfdsim=$1 gpus=$2 bin=$3 out=$4 limit=${5:-120}
shift 5 2>/dev/null || shift $#
sections=${*:-ipc malloc live peer sdma pairs kernel}
: > "$out"
for s in $sections; do
  log=$out.$s.log
  SCORE_ONLY=$s SCORE_ROWS=$out timeout -k 5 "$limit" "$kfdsim" run --gpus "$gpus" -- "$bin" > "$log" 2>&1
  rc=$?
  case $rc in
    0) continue ;;
    124|137) why="timed out after $limit s (killed; see $log)" ;;
    *) why=$(grep -m1 -E -- '-> hipError|scoreboard:' "$log" | sed -E 's/^bench\/scoreboard\.c:[0-9]+: //')
       [ -n "$why" ] || why="exit status $rc: $(grep -v '^ ' "$log" | tail -n 1)" ;;
  esac
  printf 'section\t%s\t%s\n' "$s" "$(printf %s "$why" | tr '\t' ' ' | cut -c1-150)" >> "$out"
  echo "stock HIP 5.2, section $s: $why" >&2
done
exit 0
