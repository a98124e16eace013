#!/bin/sh
# test_schedule_rules.sh: default CPU schedule rules on small models, each
# compiled for an AVX2 target (llvm -mcpu=znver3: 8-lane vectors, whose
# code runs on AVX-512 hosts too) and for the host, its outputs checked
# against numpy's (tests/schedule_rules/make_models.py):
#   - a classifier's matrix-vector product (1 x 96 @ 96 x 1000) streams its
#     weight by rows (rule 1, lower/schedule_default.c): the columns in 8
#     chunks of 16 vectors of 8 lanes, the reduction outside each chunk's
#     vectors;
#   - a depthwise conv in 16-channel blocks gets a register tile on 8-lane
#     targets (rule T): the block's two vectors an outer loop, output
#     pixels the tile's rows, the padded copy made per tile.
# Env: MLC_CLI, MLC_SRCDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
py=${PYTHON_ONNX:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
  echo "SKIP: no onnx/numpy in $py"
  echo "test_schedule_rules.sh: 0 passed, 0 failed"
  exit 0
fi
"$py" "$src/tests/schedule_rules/make_models.py" "$tmp" || { echo "FAIL: make_models.py"; exit 1; }

# build MODEL TAG [compile options]: compile with --dump-ir, run, compare
build() {
  m=$1; t=$2; shift 2
  if ! "$cli" compile "$tmp/$m.onnx" -o "$tmp/$m.$t.so" -q --dump-ir "$tmp/d.$m.$t" "$@" 2>"$tmp/err"; then
    fail "$m ($t): compile"; head -5 "$tmp/err"; return 1
  fi
  if ! "$cli" run "$tmp/$m.$t.so" --input "$tmp/${m}_x.npy" --output-dir "$tmp/o.$m.$t" >/dev/null 2>"$tmp/err"; then
    fail "$m ($t): run"; head -5 "$tmp/err"; return 1
  fi
  "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-3,atol=1e-4) else 1)' \
    "$tmp/o.$m.$t/output_0.npy" "$tmp/${m}_ref.npy" && ok || fail "$m ($t): output differs from numpy's"
}
trace() { cat "$tmp/d.$1.$2/11_schedule/$3.trace" 2>/dev/null; }

for t in avx2 host; do
  if [ $t = avx2 ]; then set -- --target "llvm -mcpu=znver3"; else set --; fi
  build gemv $t "$@"
  build dwconv $t "$@"
done

# the matrix-vector product, AVX2: lanes by 8, 16 vectors a chunk, the
# reduce loop k moved outside the chunk's vectors
tr=$(trace gemv avx2 fused_matmul_add)
echo "$tr" | grep -q 'factors=\[None, 8\]' && echo "$tr" | grep -q 'factors=\[None, 16\]' && ok ||
  fail "gemv (avx2): no split into chunks of 16 vectors of 8 lanes: $tr"
low=$(awk '/mlc_k_fused_matmul_add"/,/^@T.prim_func/' "$tmp/d.gemv.avx2/16_lower_tir.after.txt" 2>/dev/null)
echo "$low" | grep -q 'T.parallel(8)' && ok || fail "gemv (avx2): the 8 chunks are not the parallel loop"
echo "$low" | grep -q 'for k, [a-z0-9_]* in T.grid(96, 16)' && ok ||
  fail "gemv (avx2): the reduction is not outside each chunk's vectors: $(echo "$low" | grep 'for k')"
# the host's too: whatever its lanes, whole vectors (not 10 lanes, the
# divisor of 1000 that rule 1 alone takes), then chunks of them
first=$(trace gemv host fused_matmul_add | grep 'sch.split' | head -2 | tr '\n' ' ')
case $first in
  *"None, 10]"*|"") fail "gemv (host): not streamed: $first" ;;
  *"factors=[None, "*"factors=[None, "*) ok ;;
  *) fail "gemv (host): not streamed: $first" ;;
esac

# the depthwise conv, AVX2: the 16c block split in two vectors, a tile of
# output pixels (unrolled), the padded copy under the tile's loops
tr=$(trace dwconv avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[None, 8\]' && echo "$tr" | grep -q 'sch.unroll' && ok ||
  fail "dwconv (avx2): no register tile: $tr"
echo "$tr" | grep -q 'sch.compute_at' && ok || fail "dwconv (avx2): the padded copy is not made per tile: $tr"

echo "test_schedule_rules.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
