#!/bin/sh
# test_large_chain.sh: a model of many nodes (bench/make_chain.py's mixed
# chain: Add and Mul with constants, Relu, Sigmoid, Neg, Abs, Transpose,
# Reshape; 50000 nodes, or $MLC_LARGE_CHAIN_NODES) compiles and runs, and
# its outputs match a NumPy evaluation of the same graph done here, node by
# node.  Besides the chain's end the model returns its input and a value
# from the middle of the chain (outputs that need a copy, and one that is
# also used later).  No timing is checked; the test only has to finish.
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
py=${PYTHON_ONNX:-/usr/bin/python3}
n=${MLC_LARGE_CHAIN_NODES:-50000}
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
  echo "SKIP: no Python with onnx and numpy"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

"$py" "$src/bench/make_chain.py" mixed "$n" "$tmp/chain.onnx" && ok || fail "make_chain.py mixed $n"
# Two more outputs: the input itself and the 101st node's output.
"$py" - "$tmp/chain.onnx" "$tmp/x.npy" <<'PY' && ok || fail "extra outputs and input"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
m = onnx.load(sys.argv[1])
g = m.graph
mid = g.node[min(100, len(g.node) - 1)].output[0]
if mid != "y":
    g.output.append(helper.make_tensor_value_info(mid, TensorProto.FLOAT, None))
g.output.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8]))
onnx.save(m, sys.argv[1])
rng = np.random.default_rng(7)
np.save(sys.argv[2], rng.uniform(-2, 2, size=(2, 8)).astype(np.float32))
PY
if "$cli" compile "$tmp/chain.onnx" -o "$tmp/chain.so" -q --no-header 2>"$tmp/err"; then ok; else
  fail "compile a chain of $n nodes"; head -5 "$tmp/err"; fi
if "$cli" run "$tmp/chain.so" --input "$tmp/x.npy" --output-dir "$tmp/out" >"$tmp/log" 2>&1; then ok; else
  fail "run the chain of $n nodes"; head -5 "$tmp/log"; fi
# The reference: each node evaluated with NumPy, in file order.
"$py" - "$tmp/chain.onnx" "$tmp/x.npy" "$tmp/out" <<'PY' && ok || fail "outputs differ from NumPy's"
import sys
import numpy as np
import onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
env = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
env["x"] = np.load(sys.argv[2])
ops = {
    "Add": lambda n, a, b: a + b,
    "Mul": lambda n, a, b: a * b,
    "Relu": lambda n, a: np.maximum(a, np.float32(0)),
    "Sigmoid": lambda n, a: (1 / (1 + np.exp(-a.astype(np.float64)))).astype(np.float32),
    "Neg": lambda n, a: -a,
    "Abs": lambda n, a: np.abs(a),
    "Transpose": lambda n, a: np.transpose(a, list(n.attribute[0].ints)),
    "Reshape": lambda n, a, s: a.reshape(s),
}
for n in m.graph.node:
    env[n.output[0]] = ops[n.op_type](n, *[env[i] for i in n.input]).astype(np.float32)
bad = 0
for i, o in enumerate(m.graph.output):
    got = np.load("%s/output_%d.npy" % (sys.argv[3], i))
    want = env[o.name]
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        print("output %d (%s): got %s, expected %s" % (i, o.name, got.ravel()[:4], want.ravel()[:4]))
        bad = 1
sys.exit(bad)
PY
echo "test_large_chain: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
