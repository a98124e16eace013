#!/bin/sh
# test_passes.sh: the graph passes end to end, through the command line.
#   - shape arithmetic as torch exports it (tests/passes/shape_flatten.onnx):
#     after the graph passes no shape op is left, Gemm + BatchNormalization
#     is one matmul and one add, the output keeps its name and its values;
#   - BatchNormalization folds into the convolutions of models/cnn.onnx
#     (no multiply left, fewer steps than without the fold group's pass
#     at work: the dump before fold_scale_shift has them);
#   - compile --params-as-inputs: the weights are inputs named by their
#     initializers; run with the model's weights it gives the reference
#     output, with a second weight set the output of the model rebuilt with
#     those weights as constants.
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
py=${PYTHON_ONNX:-/usr/bin/python3}
models=$src/models
here=$src/tests/passes
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -5 "$tmp/err"; fi; }
have_onnx() { "$py" -c 'import numpy, onnx' 2>/dev/null; }
close() { # close OUT.npy REF.npy: rtol 1e-4, atol 1e-5
  "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-4,atol=1e-5) else 1)' "$1" "$2"
}
# graph DUMPDIR PASS: the graph IR text after pass PASS (its last run)
graph() { f=$(ls "$1"/*_"$2".after.txt | tail -1); grep -v '^#' "$f"; }

# ---- shape arithmetic folds away --------------------------------------------------------
check "compile shape_flatten" "$cli" compile "$here/shape_flatten.onnx" -o "$tmp/sf.so" --dump-ir "$tmp/dsf"
graph "$tmp/dsf" dce >"$tmp/sf.txt"
if grep -Eq 'R\.(shape_of|take|concat|cast|permute_dims|copy|[a-z_]*_dims|dyn_[a-z_]*)\(' "$tmp/sf.txt"; then
  fail "shape_flatten: shape ops left after the graph passes: $(grep -Eo 'R\.[a-z_]+\(' "$tmp/sf.txt" | sort -u | tr '\n' ' ')"
else ok; fi
n=$(grep -c ' = R\.' "$tmp/sf.txt")
[ "$n" -eq 4 ] && ok || fail "shape_flatten: $n bindings after the graph passes, expected 4 (relu, reshape, matmul, add)"
check "inspect shape_flatten" "$cli" inspect "$tmp/sf.so" --json
grep -q '"outputs": \[{"name": "y"' "$tmp/out" && ok || fail "shape_flatten: the output is not named y: $(grep -o '"outputs": [^]]*' "$tmp/out")"
check "run shape_flatten" "$cli" run "$tmp/sf.so" --input "$here/shape_flatten.input_0.npy" --output-dir "$tmp/sf.out"
if have_onnx; then
  close "$tmp/sf.out/output_0.npy" "$here/shape_flatten.output_0.npy" && ok || fail "shape_flatten: output differs from numpy's"
fi

# ---- BatchNormalization into the convolutions of the CNN ----------------------------------
check "compile cnn" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn.so" --dump-ir "$tmp/dcnn"
b=$(graph "$tmp/dcnn" simplify | grep -c 'R\.multiply(')
a=$(graph "$tmp/dcnn" fold_scale_shift | grep -c 'R\.multiply(')
[ "$b" -eq 4 ] && [ "$a" -eq 0 ] && ok || fail "cnn: $b multiplies before fold_scale_shift (expected 4), $a after (expected 0)"
check "run cnn" "$cli" run "$tmp/cnn.so" --input "$models/cnn.input_0.npy" --output-dir "$tmp/cnn.out"
if have_onnx; then
  close "$tmp/cnn.out/output_0.npy" "$models/cnn.output_0.npy" && ok || fail "cnn: output differs from the reference"
fi

# ---- --params-as-inputs -------------------------------------------------------------------
check "compile cnn --params-as-inputs" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnnp.so" --params-as-inputs
check "inspect cnn --params-as-inputs" "$cli" inspect "$tmp/cnnp.so" --json
grep -q '"name": "stem.conv.weight"' "$tmp/out" && grep -q '"name": "fc.bias"' "$tmp/out" && ok ||
  fail "--params-as-inputs: the weights are not inputs"
if have_onnx; then
  # Two weight sets: the model's own and a perturbed one, each as .npy files
  # and (the second) as a model with those weights as constants.
  "$py" - "$models/cnn.onnx" "$tmp" <<'PY' || fail "writing the weight sets"
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper
model = onnx.load(sys.argv[1]); out = sys.argv[2]
rng = np.random.default_rng(3)
for k in (1, 2):
    os.makedirs(os.path.join(out, "w%d" % k), exist_ok=True)
for t in model.graph.initializer:
    a = numpy_helper.to_array(t)
    np.save(os.path.join(out, "w1", t.name + ".npy"), a)
    b = a
    if a.dtype.kind == "f":
        b = (a * rng.uniform(0.5, 1.5, a.shape) + 0.05).astype(a.dtype)
        if t.name.endswith(".var"):
            b = np.abs(b) + 0.1
    np.save(os.path.join(out, "w2", t.name + ".npy"), b)
    t.CopyFrom(numpy_helper.from_array(b, t.name))
onnx.save(model, os.path.join(out, "cnn_w2.onnx"))
PY
  for k in 1 2; do
    set --
    for f in "$tmp/w$k"/*.npy; do set -- "$@" --input "$(basename "$f" .npy)=$f"; done
    check "run cnn --params-as-inputs, weight set $k" "$cli" run "$tmp/cnnp.so" --input "x=$models/cnn.input_0.npy" "$@" \
      --output-dir "$tmp/p$k.out"
  done
  close "$tmp/p1.out/output_0.npy" "$models/cnn.output_0.npy" && ok || fail "--params-as-inputs, the model's weights: wrong output"
  check "compile cnn_w2" "$cli" compile "$tmp/cnn_w2.onnx" -o "$tmp/cnn_w2.so"
  check "run cnn_w2" "$cli" run "$tmp/cnn_w2.so" --input "$models/cnn.input_0.npy" --output-dir "$tmp/w2.out"
  close "$tmp/p2.out/output_0.npy" "$tmp/w2.out/output_0.npy" && ok || fail "--params-as-inputs, a second weight set: wrong output"
  close "$tmp/p2.out/output_0.npy" "$tmp/p1.out/output_0.npy" && fail "the two weight sets give the same output" || ok
fi

echo "test_passes.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
