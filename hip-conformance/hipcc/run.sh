#!/usr/bin/env bash
# Runs each argument (a command line, word-split) and sums the "N passed, N failed" line it ends
# with; a run that ends without one, or exits non-zero with no failure counted, counts as one
# failure; so does one still running after HIPCC_TIMEOUT seconds (default 600: a hang fails the
# run instead of holding CI). Prints the total as the last line and fails when anything failed.
set -u
passed=0 failed=0
for cmd in "$@"; do
  echo "== hipcc: $cmd"
  out=$(timeout -k 10 "${HIPCC_TIMEOUT:-600}" bash -c "$cmd" 2>&1); rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "== timed out after ${HIPCC_TIMEOUT:-600} s"; fi
  printf '%s\n' "$out" | sed -E 's/^([0-9]+ passed, [0-9]+ failed)/   \1/'
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  if [ -z "$line" ]; then echo "== no summary (exit status $rc)"; failed=$((failed + 1)); continue; fi
  p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then echo "== exit status $rc"; f=1; fi
  passed=$((passed + p)); failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
