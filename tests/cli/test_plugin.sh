#!/bin/sh
# test_plugin.sh: a user's plugin library (tests/plugin/myops.c,
# libmyops.so) beside OpenBLAS and generated kernels in one model.
#
# A small model (MatMul 2-D -> Relu -> Reshape -> MatMul 3-D -> Add ->
# Softmax) compiled with --extern openblas --extern-lib libmyops.so: the
# 2-D MatMul and the Relu go to the plugin, the 3-D MatMul (which the
# plugin's supports() refuses) to OpenBLAS, the rest is generated; outputs
# match NumPy.  The plugin is found through MLC_EXTERN_LIB_PATH or next to
# the model; without either the load fails naming it; --link-extern-lib
# links it.  A bad plugin is a compile error.
# Env: MLC_CLI, MLC_SRCDIR, MLC_BUILDDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
build=${MLC_BUILDDIR:-.}
py=${PYTHON_ONNX:-/usr/bin/python3}
plugin=$build/tests/plugin/.libs/libmyops.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() { echo "test_plugin: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
if [ "$py" = no ] || ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
  echo "test_plugin: skipped (no Python with onnx and numpy)"; exit 77
fi
if ! grep -q 'MLC_HAVE_OPENBLAS 1' "$build/config.h" 2>/dev/null; then
  echo "test_plugin: skipped (no OpenBLAS in this build)"; exit 77
fi
[ -f "$plugin" ] || { fail "no $plugin"; finish; }

"$py" - "$tmp" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]
rng = np.random.default_rng(7)
w1 = rng.standard_normal((16, 32)).astype(np.float32)
w2 = rng.standard_normal((32, 8)).astype(np.float32)
b2 = rng.standard_normal((8,)).astype(np.float32)
x = rng.standard_normal((4, 16)).astype(np.float32)
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
    helper.make_node("Relu", ["h"], ["r"], name="relu"),
    helper.make_node("Reshape", ["r", "shape"], ["r3"], name="reshape"),
    helper.make_node("MatMul", ["r3", "w2"], ["m2"], name="mm2"),
    helper.make_node("Add", ["m2", "b2"], ["a"], name="add"),
    helper.make_node("Softmax", ["a"], ["y"], name="softmax", axis=-1),
]
inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
         numpy_helper.from_array(b2, "b2"), numpy_helper.from_array(np.array([2, 2, 32], np.int64), "shape")]
g = helper.make_graph(nodes, "mix", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2, 8])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, d + "/mix.onnx")
np.save(d + "/x.npy", x)
h = np.maximum(x @ w1, 0).reshape(2, 2, 32) @ w2 + b2
e = np.exp(h - h.max(-1, keepdims=True))
np.save(d + "/ref.npy", (e / e.sum(-1, keepdims=True)).astype(np.float32))
PYEOF
close() { "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-4,atol=1e-6) else 1)' "$1" "$2"; }

mkdir -p "$tmp/m" "$tmp/lib"
cp "$plugin" "$tmp/lib/libmyops.so"
if "$cli" compile "$tmp/mix.onnx" -o "$tmp/m/mix.so" -q --extern openblas --extern-lib "$tmp/lib/libmyops.so" 2>"$tmp/err"; then
  ok
else
  fail "compile with the plugin: $(cat "$tmp/err")"
fi
"$cli" inspect "$tmp/m/mix.so" --json >"$tmp/inspect.json" 2>&1
for f in myops.linear myops.relu openblas.matmul; do
  grep -q "\"function\": \"$f\"" "$tmp/inspect.json" && ok || fail "inspect: no extern call to $f"
done
grep -q '"libmyops.so"' "$tmp/inspect.json" && ok || fail "inspect: the plugin file is not recorded"
"$cli" inspect "$tmp/m/mix.so" | grep -q 'plugins: libmyops.so' && ok || fail "inspect text: no plugins line"
"$cli" inspect "$tmp/m/mix.so" | grep -q 'matmul "mm1" .* -> myops.linear' && ok || fail "inspect text: mm1 not shown going to myops.linear"

# found through MLC_EXTERN_LIB_PATH
if MLC_EXTERN_LIB_PATH="$tmp/nothing:$tmp/lib" "$cli" run "$tmp/m/mix.so" --input "$tmp/x.npy" --output-dir "$tmp/o1" >/dev/null 2>"$tmp/err"; then
  close "$tmp/o1/output_0.npy" "$tmp/ref.npy" && ok || fail "outputs with the plugin differ from NumPy's"
else
  fail "run with MLC_EXTERN_LIB_PATH: $(cat "$tmp/err")"
fi
# not found: exit 1, the message names the plugin and a function
MLC_EXTERN_LIB_PATH= "$cli" run "$tmp/m/mix.so" --input "$tmp/x.npy" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && ok || fail "run without the plugin: exit $rc, expected 1"
grep -q 'libmyops.so' "$tmp/err" && grep -q 'myops\.' "$tmp/err" && ok || fail "missing plugin: message: $(cat "$tmp/err")"
# next to the model
cp "$tmp/lib/libmyops.so" "$tmp/m/"
if MLC_EXTERN_LIB_PATH= "$cli" run "$tmp/m/mix.so" --input "$tmp/x.npy" --output-dir "$tmp/o2" >/dev/null 2>"$tmp/err"; then
  close "$tmp/o2/output_0.npy" "$tmp/ref.npy" && ok || fail "outputs (plugin next to the model) differ"
else
  fail "run with the plugin next to the model: $(cat "$tmp/err")"
fi
rm -f "$tmp/m/libmyops.so"
# linked into the model
if "$cli" compile "$tmp/mix.onnx" -o "$tmp/m/linked.so" -q --extern openblas --extern-lib "$tmp/lib/libmyops.so" --link-extern-lib 2>"$tmp/err"; then
  ok
  objdump -p "$tmp/m/linked.so" | grep -q 'NEEDED.*libmyops.so' && ok || fail "--link-extern-lib: no NEEDED libmyops.so"
  if MLC_EXTERN_LIB_PATH= "$cli" run "$tmp/m/linked.so" --input "$tmp/x.npy" --output-dir "$tmp/o3" >/dev/null 2>"$tmp/err"; then
    close "$tmp/o3/output_0.npy" "$tmp/ref.npy" && ok || fail "outputs (linked plugin) differ"
  else
    fail "run with the linked plugin: $(cat "$tmp/err")"
  fi
else
  fail "compile --link-extern-lib: $(cat "$tmp/err")"
fi
# a file that is no plugin, and a missing one: compile errors (exit 1)
"$cli" compile "$tmp/mix.onnx" -o "$tmp/m/bad.so" -q --extern-lib "$tmp/x.npy" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'x.npy' "$tmp/err" && ok || fail "a non-library plugin: exit $rc: $(cat "$tmp/err")"
"$cli" compile "$tmp/mix.onnx" -o "$tmp/m/bad.so" -q --extern-lib "$tmp/none.so" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && ok || fail "a missing plugin: exit $rc"
cp "$tmp/lib/libmyops.so" "$tmp/lib/lib my.so"
"$cli" compile "$tmp/mix.onnx" -o "$tmp/m/bad.so" -q --extern-lib "$tmp/lib/lib my.so" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'without spaces' "$tmp/err" && ok || fail "a plugin file name with a space: exit $rc"
"$cli" compile "$tmp/mix.onnx" -o "$tmp/m/bad.so" -q --link-extern-lib >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] && ok || fail "--link-extern-lib alone: exit $rc, expected 2"
finish
