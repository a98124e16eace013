#!/bin/sh
# test_alter_layout.sh: blocked convolutions end to end on the bundled CNN:
# alter_layout rewrites every conv to conv2d_nchwc, only the model's edges
# keep a layout_transform after the dce that follows it, the blocked convs'
# kernels are vector loops over the channel block, and the outputs still
# match ONNX Runtime's; the MLP's constant-weight matmul reads its weight
# packed (matmul_packed).  With --no-layout (when the CLI has it) nothing is
# blocked and the outputs match too.
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
py=${PYTHON_ONNX:-/usr/bin/python3}
models=$src/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -5 "$tmp/err"; fi; }
count() { grep -o -- "$1" "$2" | wc -l | tr -d ' '; }
close() { # close OUT.npy REF.npy: rtol 1e-3, atol 1e-4
  "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-3,atol=1e-4) else 1)' "$1" "$2"
}

check "compile cnn --dump-ir" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn.so" -q --dump-ir "$tmp/d"
after=$(ls "$tmp/d/"*_alter_layout.after.txt 2>/dev/null | head -1)
if [ -z "$after" ]; then
  fail "no alter_layout dump"
else
  # the four convs of the CNN (stem, res1a, res1b, down) are all blocked
  n=$(count 'R.conv2d_nchwc(' "$after"); [ "$n" -eq 4 ] && ok || fail "alter_layout: $n blocked convs, expected 4"
  n=$(count ' R.conv(' "$after"); [ "$n" -eq 0 ] && ok || fail "alter_layout: $n NCHW convs left"
  # after fold_constant and dce: the input's transform and the one before the flatten
  num=${after##*/}; num=${num%%_*}
  dce=$(ls "$tmp/d/"*_dce.after.txt | awk -F/ -v n="$num" '{ f = $NF; split(f, p, "_"); if (p[1] + 0 > n + 0) { print; exit } }')
  n=$(count 'R.layout_transform(' "$dce"); [ "$n" -eq 2 ] && ok || fail "after dce: $n layout transforms, expected 2"
  grep -q 'layout_transform(x, src="NCHW", dst="NCHW3c")' "$dce" && ok || fail "the input is not transformed to NCHW3c"
fi
# the blocked convs' accumulation runs on vectors of the channel block
grep 'T_conv2d_nchwc' "$tmp/d/12_lowered.tir.txt" | grep -q 'T.Ramp(' && ok || fail "no vector loop in the blocked convs"
check "run cnn" "$cli" run "$tmp/cnn.so" --input "$models/cnn.input_0.npy" --output-dir "$tmp/out1"
if "$py" -c 'import numpy' 2>/dev/null; then
  close "$tmp/out1/output_0.npy" "$models/cnn.output_0.npy" && ok || fail "blocked cnn: output differs from ONNX Runtime's"
fi

# the MLP's first matmul (784 x 128, a constant weight) reads its weight
# packed in blocks of the register tile's width (4 vectors: 64 columns with
# AVX-512, 32 with AVX2): contiguous vector loads, no div or mod (the
# reduce loop k may be split for unrolling: k_0, k_1)
check "compile mlp --dump-ir" "$cli" compile "$models/mlp.onnx" -o "$tmp/mlp.so" -q --dump-ir "$tmp/m"
n=$(cat "$tmp/m/"*_alter_layout.after.txt | count 'R.matmul_packed(' -); [ "$n" -eq 1 ] && ok || fail "mlp: $n packed matmuls, expected 1"
packed=$(grep -o 'B: T.Buffer((\(2, 784, 64\|4, 784, 32\))' "$tmp/m/12_lowered.tir.txt" | head -1)
nb=${packed##*, }; nb=${nb%)}
[ -n "$packed" ] && ok || fail "mlp: no weight packed as [2, 784, 64] or [4, 784, 32]"
loads=$(grep -o 'B_1\[T.Ramp([^]]*\]' "$tmp/m/12_lowered.tir.txt" | head -1)
case $loads in
  *"k * ${nb:-64} +"*|*"k_1 * ${nb:-64} +"*) case $loads in *%*|*//*) fail "mlp: the packed weight's load divides: $loads" ;; *) ok ;; esac ;;
  *) fail "mlp: no contiguous load of the packed weight: $loads" ;;
esac
check "run mlp" "$cli" run "$tmp/mlp.so" --input "$models/mlp.input_0.npy" --output-dir "$tmp/out3"
if "$py" -c 'import numpy' 2>/dev/null; then
  close "$tmp/out3/output_0.npy" "$models/mlp.output_0.npy" && ok || fail "packed mlp: output differs from ONNX Runtime's"
fi

# without the layout group (once the command line has --no-layout)
if "$cli" compile "$models/cnn.onnx" -o "$tmp/nl.so" -q --no-layout --dump-ir "$tmp/nl" 2>/dev/null; then
  ! grep -q 'conv2d_nchwc' "$tmp/nl/12_lowered.tir.txt" && ok || fail "--no-layout: blocked convs"
  check "run cnn --no-layout" "$cli" run "$tmp/nl.so" --input "$models/cnn.input_0.npy" --output-dir "$tmp/out2"
  if "$py" -c 'import numpy' 2>/dev/null; then
    close "$tmp/out2/output_0.npy" "$models/cnn.output_0.npy" && ok || fail "--no-layout cnn: output differs"
  fi
fi

# a model whose output comes out of a blocked op (a global pool after a conv)
# keeps the output's name: the transform back to NCHW stands for it
if "$py" -c 'import onnx' 2>/dev/null; then
  "$py" - "$tmp/gp.onnx" <<'PYEOF'
import sys, numpy as np
from onnx import TensorProto, helper, numpy_helper, save
w = numpy_helper.from_array(np.ones((32, 16, 3, 3), np.float32) * 0.01, "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                       helper.make_node("GlobalAveragePool", ["c"], ["pooled"])], "gp",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
                      [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, 32, 1, 1])], initializer=[w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PYEOF
  check "compile conv + global pool" "$cli" compile "$tmp/gp.onnx" -o "$tmp/gp.so" -q
  "$cli" inspect "$tmp/gp.so" >"$tmp/gp.txt" 2>&1
  grep -q "conv2d_nchwc" "$tmp/gp.txt" && ok || fail "conv + global pool: the conv is not blocked"
  grep -q "^  0 pooled: float32 (1, 32, 1, 1)" "$tmp/gp.txt" && ok ||
    fail "conv + global pool: output name lost: $(grep -A1 'outputs (' "$tmp/gp.txt")"
fi

echo "test_alter_layout.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
