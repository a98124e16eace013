#!/bin/sh
# test_plan_inspect.sh: the memory plan and the per-step report of a
# compiled model, end to end.
#   - an elementwise/broadcast chain (Relu -> Exp -> Add -> Sigmoid) runs in
#     place: one arena storage, arena a third of the intermediates' bytes,
#     and outputs equal to NumPy's;
#   - `inspect` (text and --json) lists each step's ONNX nodes; node names
#     with quotes, backslashes, newlines, non-ASCII and 10000 bytes come back
#     exactly in JSON and escaped and cut in text;
#   - a damaged manifest (a changed bracket, a kernel name that does not
#     match, deep nesting, a control byte) is reported, never copied, and
#     inspect still gives valid JSON.
# Env: MLC_CLI (the built mlc-onnx), PYTHON_ONNX (python with onnx and numpy).
set -u
cli=${MLC_CLI:?}
py=${PYTHON_ONNX:-/usr/bin/python3}
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
  echo "test_plan_inspect: skipped (no python with onnx and numpy)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -5 "$tmp/err"; fi; }
pycheck() { desc=$1; shift; if "$py" -c "$@" >"$tmp/pyout" 2>&1; then ok; else fail "$desc"; tail -5 "$tmp/pyout"; fi; }

# ---- the models ---------------------------------------------------------------------------
"$py" - "$tmp" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, TensorProto as T
d = sys.argv[1]
def save(name, nodes, ins, outs):
    g = helper.make_graph(nodes, name, ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, f"{d}/{name}.onnx")
vi = helper.make_tensor_value_info
save("chain", [helper.make_node("Relu", ["x"], ["r"], name="relu"),
               helper.make_node("Exp", ["r"], ["e"], name="exp"),
               helper.make_node("Add", ["z", "e"], ["a"], name="add"),
               helper.make_node("Sigmoid", ["a"], ["y"], name="sigmoid")],
     [vi("x", T.FLOAT, [1, 3, 16, 16]), vi("z", T.FLOAT, [16])], [vi("y", T.FLOAT, [1, 3, 16, 16])])
rng = np.random.default_rng(5)
x = rng.uniform(-2, 2, (1, 3, 16, 16)).astype(np.float32)
z = rng.uniform(-1, 1, (16,)).astype(np.float32)
np.save(f"{d}/x.npy", x); np.save(f"{d}/z.npy", z)
np.save(f"{d}/want.npy", 1 / (1 + np.exp(-(z + np.exp(np.maximum(x, 0))))))
names = ['q"uote \\ back', "new\nline\ttab", "caf\u00e9 \u2603", "x" * 10000]
with open(f"{d}/names.txt", "w") as f: f.write("\n".join(repr(n) for n in names))
save("names", [helper.make_node("Relu", ["x"], ["r"], name=names[0]),
               helper.make_node("Neg", ["r"], ["n"], name=names[1]),
               helper.make_node("Add", ["n", "x"], ["a"], name=names[2]),
               helper.make_node("Exp", ["a"], ["y"], name=names[3])],
     [vi("x", T.FLOAT, [4, 8])], [vi("y", T.FLOAT, [4, 8])])
PY
[ -f "$tmp/chain.onnx" ] && [ -f "$tmp/names.onnx" ] && ok || fail "could not write the test models"

# ---- in place: one storage, outputs right -------------------------------------------------
# Without fusion every op is a kernel of its own, so exp and add write in
# place of their dying argument (a build without --no-fuse has no fusion).
nofuse=--no-fuse
"$cli" compile "$tmp/chain.onnx" -o "$tmp/chain.so" $nofuse >/dev/null 2>&1 || nofuse=
check "compile chain" "$cli" compile "$tmp/chain.onnx" -o "$tmp/chain.so" $nofuse
grep -q 'arena 3072 bytes (intermediates 9216 bytes)' "$tmp/err" && ok ||
  fail "compile chain: last line $(tail -1 "$tmp/err")"
# a kernel run in place has no disjoint alias scopes (tir.noalias dropped)
check "compile chain --dump-ir" "$cli" compile "$tmp/chain.onnx" -o "$tmp/chain_d.so" $nofuse --dump-ir "$tmp/chain_ir"
if [ -n "$nofuse" ]; then
  awk '/^define .*@mlc_k_exp\(/{f=1} f&&/alias.scope/{s=1} f&&/^}/{exit} END{exit s}' "$tmp/chain_ir/20_codegen.ll" && ok ||
    fail "the in-place exp kernel keeps alias scopes"
fi
check "inspect --json chain" "$cli" inspect --json "$tmp/chain.so"
pycheck "chain plan" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["storages"] == 1, d["storages"]
assert d["arena_bytes"] == 3072 and d["intermediate_bytes"] == 9216, (d["arena_bytes"], d["intermediate_bytes"])
assert d["manifest"]["intermediate_bytes"] == 9216 and d["manifest"]["steps"] == d["nsteps"] == 4
assert [n["name"] for s in d["steps"] for n in s["nodes"]] == ["relu", "exp", "add", "sigmoid"], d["steps"]
assert [n["op_type"] for s in d["steps"] for n in s["nodes"]] == ["Relu", "Exp", "Add", "Sigmoid"]
' "$tmp/out"
check "run chain" "$cli" run "$tmp/chain.so" --input "x=$tmp/x.npy" --input "z=$tmp/z.npy" --output-dir "$tmp/o"
pycheck "chain output" '
import sys, numpy as np
a, e = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == e.shape and np.allclose(a, e, rtol=1e-5, atol=1e-6), abs(a - e).max()
' "$tmp/o/output_0.npy" "$tmp/want.npy"
# the same with the default pipeline (fused or not): the same numbers
check "compile chain (default)" "$cli" compile "$tmp/chain.onnx" -o "$tmp/chain2.so"
check "run chain (default)" "$cli" run "$tmp/chain2.so" --input "x=$tmp/x.npy" --input "z=$tmp/z.npy" --output-dir "$tmp/o2"
pycheck "chain output (default)" '
import sys, numpy as np
a, e = np.load(sys.argv[1]), np.load(sys.argv[2])
assert np.allclose(a, e, rtol=1e-5, atol=1e-6), abs(a - e).max()
' "$tmp/o2/output_0.npy" "$tmp/want.npy"
check "inspect chain (text)" "$cli" inspect "$tmp/chain.so"
grep -q '^arena: 3072 bytes (intermediates 9216 bytes)$' "$tmp/out" && ok || fail "inspect chain: no arena line"
grep -q '^steps (4):$' "$tmp/out" && ok || fail "inspect chain: no steps list"
grep -q '"exp" (Exp)' "$tmp/out" && ok || fail "inspect chain: no node of step 1"

# ---- odd node names -----------------------------------------------------------------------
# (one kernel per node: every step lists one name)
check "compile names" "$cli" compile "$tmp/names.onnx" -o "$tmp/names.so" $nofuse
check "inspect --json names" "$cli" inspect --json "$tmp/names.so"
pycheck "names in JSON" '
import json, sys, ast, onnx
d = json.load(open(sys.argv[1], encoding="utf-8"))
want = [n.name for n in onnx.load(sys.argv[2]).graph.node]
got = [n["name"] for s in d["steps"] for n in s["nodes"]]
assert all(w in got for w in want), (len(got), [len(g) for g in got])
assert set(got) <= set(want)
' "$tmp/out" "$tmp/names.onnx"
check "inspect names (text)" "$cli" inspect "$tmp/names.so"
grep -qF '"q\"uote \\ back" (Relu)' "$tmp/out" && ok || fail "inspect names: quote and backslash not escaped"
grep -qF '"new\nline\x09tab" (Neg)' "$tmp/out" && ok || fail "inspect names: newline or tab not escaped"
grep -qF '... (10000 bytes) (Exp)' "$tmp/out" && ok || fail "inspect names: the long name is not cut"
[ "$(grep -c "^  [0-9]" "$tmp/out")" -ge 6 ] && ok || fail "inspect names: steps broken over lines"
# every line of the steps list is one step
sed -n '/^steps (/,$p' "$tmp/out" | sed 1d | grep -qv '^  [0-9]' && fail "inspect names: a name broke a line" || ok

# ---- a damaged manifest -------------------------------------------------------------------
# Each case rewrites bytes of the manifest inside names.so (same length);
# inspect must still work, give valid JSON, and say what is wrong.
for case in bracket kernel deep control; do
  "$py" - "$tmp/names.so" "$tmp/bad_$case.so" "$case" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
case = sys.argv[3]
def sub(old, new):
    assert len(old) == len(new)
    i = data.find(old)
    assert i >= 0, old
    data[i:i + len(old)] = new
long = b'"name": "' + b"x" * 10000 + b'"'
if case == "bracket": sub(b'"plan": [', b'"plan": {')
if case == "kernel":
    i = data.find(b'"plan": [{"kernel": "') + len(b'"plan": [{"kernel": "')
    data[i] = ord("Z") if data[i] != ord("Z") else ord("Y")
if case == "deep": sub(long, b'"name": ' + b"[" * 10002)
if case == "control": sub(long, long[:20] + b"\x01" + long[21:])
open(sys.argv[2], "wb").write(data)
PY
  check "inspect --json bad_$case" "$cli" inspect --json "$tmp/bad_$case.so"
  pycheck "bad_$case: JSON" '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
case = sys.argv[2]
assert all(s["nodes"] is None for s in d["steps"]), d["steps"][:2]
if case == "kernel":
    assert "manifest_error" not in d and d["manifest"]["steps"] == d["nsteps"] and d["arena_bytes"] > 0
else:
    assert d["manifest"] is None and "invalid JSON" in d["manifest_error"], d.get("manifest_error")
    assert d["arena_bytes"] == -1
if case == "deep": assert "at most 64 levels" in d["manifest_error"]
if case == "control": assert "control character" in d["manifest_error"]
' "$tmp/out" "$case"
  check "inspect bad_$case (text)" "$cli" inspect "$tmp/bad_$case.so"
  grep -q '^steps (' "$tmp/out" && ok || fail "inspect bad_$case: no steps"
  if [ "$case" != kernel ]; then
    grep -q '^manifest: (unreadable: invalid JSON at byte' "$tmp/out" && ok || fail "inspect bad_$case: manifest line"
    grep -q '^arena: not recorded' "$tmp/out" && ok || fail "inspect bad_$case: arena line"
  fi
  check "run bad_$case" "$cli" run "$tmp/bad_$case.so" --seed 1
done

echo "test_plan_inspect: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
