#!/bin/sh
# vectorize_kernels.sh: the legalization suites again, with every innermost
# loop of every lowered kernel marked vectorized and the vectorize pass run
# on it (MLC_TEST_VECTORIZE=1, tests/harness_kernel.c): each op's kernels
# are then explicitly vectorized where the pass takes the loop, and checked
# against the same references.  Env: MLC_BUILDDIR.
set -u
bld=${MLC_BUILDDIR:?}
passed=0; failed=0
for p in test_legalize test_image_ops; do
  out=$(MLC_TEST_VECTORIZE=1 "$bld/tests/unit/$p" 2>&1)
  line=$(echo "$out" | grep -E "^$p: [0-9]+ passed, [0-9]+ failed" | tail -n 1)
  if [ -n "$line" ] && echo "$line" | grep -q ', 0 failed'; then
    passed=$((passed + $(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
  else
    echo "FAIL: $p with MLC_TEST_VECTORIZE=1"
    echo "$out" | tail -40
    failed=$((failed + 1))
  fi
done
echo "vectorize_kernels: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
