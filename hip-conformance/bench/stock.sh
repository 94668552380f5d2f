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
sections=${*:-ipc malloc contention live peer sdma wait calls pairs kernel}
: > "$out"
for s in $sections; do
  log=$out.$s.log
  SCORE_ONLY=$s SCORE_ROWS=$out timeout -k 5 "$limit" "$kfdsim" run --gpus "$gpus" -- "$bin" > "$log" 2>&1
  rc=$?
  case $rc in
    0) continue ;;
    124|137) why="timed out after $limit s (killed; see $log)" ;;
    *) why=$(grep -m1 -E -- '-> hipError|^scoreboard:' "$log" | sed -E 's/^bench\/scoreboard\.c:[0-9]+: //')
       [ -n "$why" ] || why="exit status $rc: $(grep -v '^ ' "$log" | tail -n 1)" ;;
  esac
  # The model's side of a failure: rerun the section under KFDSIM_TRACE and name the ioctls
  # that failed (nr 0x82, DBG_TRAP at open and close, always fails on an upstream kernel); the
  # numbers of ROCm 5.2's out-of-tree uapi (ROCT-Thunk-Interface include/linux/kfd_ioctl.h) named.
  # (Not after a timeout: that rerun would take as long again.)
  failed=
  [ $rc = 124 ] || [ $rc = 137 ] || {
    SCORE_ONLY=$s KFDSIM_TRACE=1 timeout -k 5 "$limit" "$kfdsim" run --gpus "$gpus" -- "$bin" > "$log.trace" 2>&1
    failed=$(grep -E ' = -1 E[A-Z]+' "$log.trace" | grep -v 'nr 0x82 ' | awk '{
        n = ($2 == "KFD" || $2 == "DRM") ? $2 " " $3 " " $4 " " $5 : $2;
        for (i = 3; i < NF; i++) if ($i == "=" && $(i + 1) == "-1") { print n " -> " $(i + 2); break } }' | sort -u | \
        sed 's/nr 0x80 /nr 0x80 (ROCm-only IPC_IMPORT_HANDLE) /; s/nr 0x81 /nr 0x81 (ROCm-only IPC_EXPORT_HANDLE) /; s/nr 0x83 /nr 0x83 (ROCm-only CROSS_MEMORY_COPY) /' | \
        tr '\n' ',' | sed 's/,$//; s/,/, /g')
  }
  [ -n "$failed" ] && why="$why; KFDSIM_TRACE: $failed"
  printf 'section\t%s\t%s\n' "$s" "$(printf %s "$why" | tr '\t' ' ' | cut -c1-240)" >> "$out"
  echo "stock HIP 5.2, section $s: $why" >&2
done
exit 0
