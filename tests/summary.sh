#!/bin/sh
# summary.sh LOG...: adds up the "<name>: N passed, N failed" lines that the
# test programs print and ends with one such line for the whole run.
# Exit status 1 if any test failed or a log has no summary line.
passed=0; failed=0; status=0
for log in "$@"; do
  [ -f "$log" ] || continue
  line=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "$log: no summary line (crashed?)"; failed=$((failed + 1)); status=1; continue
  fi
  echo "$line"
  p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
  f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
  passed=$((passed + p)); failed=$((failed + f))
  [ "$f" -eq 0 ] || status=1
done
[ $# -gt 0 ] || { echo "summary.sh: no test logs"; status=1; }
echo "total: $passed passed, $failed failed"
exit $status
