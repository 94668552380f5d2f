#!/usr/bin/env bash
# Runs each argument (a command line, word-split) and sums the "N passed, N failed" line it ends
# with; a run that ends without one, or exits non-zero with no failure counted, counts as one
# failure. Prints the total as the last line and fails when anything failed.
set -u
passed=0 failed=0
for cmd in "$@"; do
  echo "== hipcc: $cmd"
  out=$(eval "$cmd" 2>&1); rc=$?
  printf '%s\n' "$out" | sed -E 's/^([0-9]+ passed, [0-9]+ failed)/   \1/'
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  if [ -z "$line" ]; then echo "== no summary (exit status $rc)"; failed=$((failed + 1)); continue; fi
  p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then echo "== exit status $rc"; f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
