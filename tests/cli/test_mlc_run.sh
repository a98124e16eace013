#!/bin/sh
# test_mlc_run.sh: the deploy-side runner mlc-run gives what `mlc-onnx run`
# gives (the same output files, byte for byte, from .npy inputs in order and
# by name and from seeded random inputs, symbolic dims included; the same
# JSON), times runs (--bench, JSON latency_ms), reads .npy files only, fails
# cleanly on bad usage (2) and on a missing or bad model or input (1, named),
# and is one executable that links neither LLVM nor protobuf nor libmlc.
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR, MLC_BUILDDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
build=${MLC_BUILDDIR:-.}
py=${PYTHON_ONNX:-}
[ -n "$py" ] || py=/usr/bin/python3
runner=$build/mlc-run
models=$src/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -5 "$tmp/err"; fi; }
exit_is() { want=$1 desc=$2; shift 2; "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; if [ "$rc" -eq "$want" ]; then ok; else fail "$desc: exit $rc, expected $want"; head -3 "$tmp/err"; fi; }
says() { grep -qF -- "$2" "$tmp/err" && ok || fail "$1: message lacks '$2': $(head -c 300 "$tmp/err")"; }
# same_outputs DESC A B: A and B hold the same output_N.npy files (at least
# one), byte for byte
same_outputs() {
  la=$(cd "$2" 2>/dev/null && ls | tr '\n' ' '); lb=$(cd "$3" 2>/dev/null && ls | tr '\n' ' ')
  if [ -z "$la" ] || [ "$la" != "$lb" ]; then fail "$1: output files '$la' vs '$lb'"; return; fi
  for f in $la; do cmp -s "$2/$f" "$3/$f" || { fail "$1: $f differs"; return; }; done
  ok
}
# both DESC ARGS...: `mlc-onnx run ARGS --output-dir DIR.a` and
# `mlc-run ARGS --output-dir DIR.b` succeed and write the same files; their
# stdout and stderr (input and output lines, JSON) are the same too
n=0
both() {
  desc=$1; shift; n=$((n + 1))
  "$cli" run "$@" --output-dir "$tmp/o$n.a" >"$tmp/o$n.a.out" 2>"$tmp/o$n.a.err" || { fail "$desc: mlc-onnx run: $(cat "$tmp/o$n.a.err")"; return; }
  "$runner" "$@" --output-dir "$tmp/o$n.b" >"$tmp/o$n.b.out" 2>"$tmp/o$n.b.err" || { fail "$desc: mlc-run: $(cat "$tmp/o$n.b.err")"; return; }
  same_outputs "$desc" "$tmp/o$n.a" "$tmp/o$n.b"
  cmp -s "$tmp/o$n.a.out" "$tmp/o$n.b.out" && cmp -s "$tmp/o$n.a.err" "$tmp/o$n.b.err" && ok ||
    fail "$desc: printed differently: $(diff "$tmp/o$n.a.out" "$tmp/o$n.b.out"; diff "$tmp/o$n.a.err" "$tmp/o$n.b.err")"
}
# npy FILE DESCR SHAPE [NBYTES]: a .npy file of numpy dtype DESCR ('<f4') and
# SHAPE ('(1, 3)'), values from -5 to 5 that depend on FILE's name; with
# NBYTES, that many zero bytes of data instead
npy() {
  "$py" - "$@" <<'PYEOF'
import struct, sys
path, descr, shape = sys.argv[1:4]
n = 1
for d in eval(shape): n *= d
fmt = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i"}.get(descr)
if len(sys.argv) > 4:
    data = bytes(int(sys.argv[4]))
elif fmt:
    data = struct.pack("<%d%s" % (n, fmt), *[(i * 3 + sum(path.encode())) % 11 - 5 for i in range(n)])
else:
    data = bytes(n * int(descr[2:]))
h = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)).encode()
h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data)
PYEOF
}

[ -x "$runner" ] || { echo "FAIL: no $runner"; echo "test_mlc_run: 0 passed, 1 failed"; exit 1; }

# ---- the same outputs as mlc-onnx run ----------------------------------------------------
check "compile cnn" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn.so" -q --no-header
check "compile mlp_dyn" "$cli" compile "$models/mlp_dyn.onnx" -o "$tmp/dyn.so" -q --no-header
both "cnn, input from a file" "$tmp/cnn.so" --input "$models/cnn.input_0.npy"
both "cnn, random input" "$tmp/cnn.so"
both "cnn, random input --seed 3" "$tmp/cnn.so" --seed 3
grep -q 'random data (seed 0)' "$tmp/o2.b.err" && ok || fail "cnn: no random-input line: $(cat "$tmp/o2.b.err")"
# the seed is honoured, and random inputs are not the file's
[ -s "$tmp/o3.b/output_0.npy" ] && ! cmp -s "$tmp/o2.b/output_0.npy" "$tmp/o3.b/output_0.npy" &&
  ! cmp -s "$tmp/o1.b/output_0.npy" "$tmp/o2.b/output_0.npy" && ok || fail "cnn: the seed or the input file is ignored"
both "mlp_dyn, batch 4 by name" "$tmp/dyn.so" --input "x=$models/mlp_dyn.batch4.input_0.npy"
both "mlp_dyn, random input (symbolic dim)" "$tmp/dyn.so" --seed 7
both "cnn, --json" "$tmp/cnn.so" --json --threads 1
# three inputs (float, float, int64; one dim symbolic) and three outputs, inputs
# by name, in order and random mixed
if "$py" -c 'import onnx' 2>/dev/null; then
  "$py" - "$tmp/multi.onnx" <<'PYEOF' && ok || fail "make multi.onnx"
import sys, onnx
from onnx import helper as h, TensorProto as T
v = h.make_tensor_value_info
g = h.make_graph([h.make_node("Add", ["x", "w"], ["sum"]), h.make_node("Mul", ["x", "w"], ["prod"]),
                  h.make_node("Add", ["k", "k"], ["k2"])], "multi",
                 [v("x", T.FLOAT, ["N", 4]), v("w", T.FLOAT, [4]), v("k", T.INT64, [3])],
                 [v("sum", T.FLOAT, ["N", 4]), v("prod", T.FLOAT, ["N", 4]), v("k2", T.INT64, [3])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
PYEOF
  check "compile multi" "$cli" compile "$tmp/multi.onnx" -o "$tmp/multi.so" -q --no-header
  npy "$tmp/x.npy" '<f4' '(2, 4)' && npy "$tmp/w.npy" '<f4' '(4,)' && npy "$tmp/k.npy" '<i8' '(3,)' && ok || fail "make .npy inputs"
  both "multi, random inputs" "$tmp/multi.so" --seed 11
  [ -s "$tmp/o$n.b/output_2.npy" ] && ok || fail "multi: no output_2.npy"
  both "multi, all three in order" "$tmp/multi.so" --input "$tmp/x.npy" --input "$tmp/w.npy" --input "$tmp/k.npy"
  both "multi, by name and in order" "$tmp/multi.so" --input "k=$tmp/k.npy" --input "$tmp/x.npy" --input "$tmp/w.npy"
  both "multi, one by name, the rest random" "$tmp/multi.so" --input "w=$tmp/w.npy" --json
  exit_is 1 "multi: an input given twice" "$runner" "$tmp/multi.so" --input "w=$tmp/w.npy" --input "w=$tmp/w.npy"
  says "an input given twice" '"w" given twice'
  exit_is 1 "multi: too many inputs" "$runner" "$tmp/multi.so" --input "$tmp/x.npy" --input "$tmp/w.npy" --input "$tmp/k.npy" --input "$tmp/k.npy"
  says "too many inputs" 'the model has 3 inputs'
else
  echo "SKIP: the three-input model (no python3 onnx)"
fi

# ---- --bench and --json ---------------------------------------------------------------
check "--bench 5 --json" "$runner" "$tmp/cnn.so" --bench 5 --warmup 1 --threads 1 --json
"$py" -c 'import json,sys; json.load(sys.stdin)' <"$tmp/out" && ok || fail "--bench --json: not JSON: $(head -c 300 "$tmp/out")"
"$py" - "$tmp/out" <<'PYEOF' && ok || fail "--bench --json: fields: $(head -c 300 "$tmp/out")"
import json, sys
j = json.load(open(sys.argv[1]))
lat = j["latency_ms"]
assert sorted(lat) == ["median", "min", "p90"], lat
assert 0 < lat["min"] <= lat["median"] <= lat["p90"], lat
assert j["runs"] == 5 and j["threads"] == 1, j
assert j["model"] == "cnn" and [(o["name"], o["dtype"], o["shape"]) for o in j["outputs"]] == [("y", "float32", [1, 10])], j
PYEOF
check "--json without --bench" "$runner" "$tmp/cnn.so" --json
"$py" -c 'import json,sys; j=json.load(sys.stdin); assert "latency_ms" not in j and j["outputs"]' <"$tmp/out" && ok ||
  fail "--json: $(head -c 300 "$tmp/out")"
check "--bench 4 (text)" "$runner" "$tmp/cnn.so" --bench 4
grep -q '^latency over 4 runs (one thread per CPU): median [0-9.]* ms, min [0-9.]* ms, p90 [0-9.]* ms$' "$tmp/out" && ok ||
  fail "--bench: $(cat "$tmp/out")"
check "--profile --json" "$runner" "$tmp/cnn.so" --profile --json
"$py" -c 'import json,sys; j=json.load(sys.stdin); assert j["profile"] and all(p["ms"] >= 0 for p in j["profile"])' <"$tmp/out" &&
  ok || fail "--profile --json: $(head -c 300 "$tmp/out")"

# ---- usage: exit 2 with the usage on stderr; --help ---------------------------------------
exit_is 2 "no arguments" "$runner"
says "no arguments" "usage: mlc-run MODEL.so"
exit_is 2 "unknown option" "$runner" "$tmp/cnn.so" --frobnicate
says "unknown option" "unknown option '--frobnicate'"
says "unknown option" "usage: mlc-run MODEL.so"
exit_is 2 "no MODEL" "$runner" --json
says "no MODEL" "no MODEL given"
exit_is 2 "two models" "$runner" "$tmp/cnn.so" "$tmp/dyn.so"
exit_is 2 "--bench abc" "$runner" "$tmp/cnn.so" --bench abc
says "--bench abc" "--bench needs a non-negative integer, not 'abc'"
exit_is 2 "--input without a value" "$runner" "$tmp/cnn.so" --input
says "--input without a value" "--input needs a value"
[ ! -s "$tmp/out" ] && ok || fail "usage errors print to stdout: $(cat "$tmp/out")"
exit_is 0 "--help" "$runner" --help
head -1 "$tmp/out" | grep -q '^usage: mlc-run MODEL.so ' && ok || fail "--help: $(head -2 "$tmp/out")"
for o in --input --output-dir --bench --warmup --threads --seed --json --profile --help 'Exit status'; do
  grep -q -- "$o" "$tmp/out" || { fail "--help does not mention $o"; o=; break; }
done
[ -n "$o" ] && ok
exit_is 0 "-h" "$runner" -h

# ---- errors: exit 1, naming the file; never a crash -----------------------------------
exit_is 1 "missing model" "$runner" "$tmp/nope.so"
says "missing model" "$tmp/nope.so: No such file"
printf 'not a model' >"$tmp/bad.so"
exit_is 1 "a model that is not one" "$runner" "$tmp/bad.so"
says "a model that is not one" "bad.so"
exit_is 1 "missing input file" "$runner" "$tmp/cnn.so" --input "$tmp/nope.npy"
says "missing input file" "cannot open $tmp/nope.npy"
printf 'not a tensor' >"$tmp/x.pb"
exit_is 1 "a .pb input" "$runner" "$tmp/cnn.so" --input "$tmp/x.pb"
says "a .pb input" "$tmp/x.pb: not a .npy file"
head -c 100 "$models/cnn.input_0.npy" >"$tmp/t1.npy"
exit_is 1 "truncated .npy header" "$runner" "$tmp/cnn.so" --input "$tmp/t1.npy"
says "truncated .npy header" "$tmp/t1.npy: truncated .npy header"
head -c 1000 "$models/cnn.input_0.npy" >"$tmp/t2.npy"
exit_is 1 "truncated .npy data" "$runner" "$tmp/cnn.so" --input "$tmp/t2.npy"
says "truncated .npy data" "$tmp/t2.npy: .npy data has"
npy "$tmp/i8.npy" '<i8' '(1, 3, 32, 32)' && npy "$tmp/shape.npy" '<f4' '(1, 3, 16, 16)' &&
  npy "$tmp/c8.npy" '<c8' '(1, 3, 32, 32)' && npy "$tmp/big.npy" '<f4' '(100000, 100000, 100000)' 16 && ok ||
  fail "make the bad .npy files"
exit_is 1 "wrong dtype" "$runner" "$tmp/cnn.so" --input "$tmp/i8.npy"
says "wrong dtype" 'input "x" (0): dtype int64, expected float32'
exit_is 1 "wrong shape" "$runner" "$tmp/cnn.so" --input "$tmp/shape.npy"
says "wrong shape" 'input "x" (0): dim 2 is 16, expected 32'
exit_is 1 "unsupported numpy dtype" "$runner" "$tmp/cnn.so" --input "$tmp/c8.npy"
says "unsupported numpy dtype" "numpy dtype '<c8' not supported"
exit_is 1 "a shape of petabytes" "$runner" "$tmp/cnn.so" --input "$tmp/big.npy"
says "a shape of petabytes" "$tmp/big.npy: .npy data has 16 bytes, shape needs 4000000000000000"
# a version 2.0 header that claims 4 GiB
printf '\223NUMPY\002\000\360\377\377\377{}' >"$tmp/hdr.npy"
exit_is 1 "huge header" "$runner" "$tmp/cnn.so" --input "$tmp/hdr.npy"
says "huge header" "$tmp/hdr.npy: truncated .npy header"
# mlc-onnx run refuses the same files in the same way
exit_is 1 "mlc-onnx run, truncated .npy" "$cli" run "$tmp/cnn.so" --input "$tmp/t2.npy"
says "mlc-onnx run, truncated .npy" "$tmp/t2.npy: .npy data has"
mkdir -p "$tmp/ro" && chmod 500 "$tmp/ro"
if [ ! -w "$tmp/ro" ]; then # not as root
  exit_is 1 "unwritable --output-dir" "$runner" "$tmp/cnn.so" --output-dir "$tmp/ro/sub"
  says "unwritable --output-dir" "$tmp/ro/sub"
fi

# ---- the deploy side: no LLVM, no protobuf, no compiler library ---------------------
# mlc-run itself is the executable (the loader linked in), not a libtool
# wrapper script that finds a library in the build tree: it can be copied
[ "$(head -c 4 "$runner" | od -An -c | tr -d ' ')" = '177ELF' ] && ok || fail "$runner is not an ELF executable: $(file "$runner")"
real=$runner
[ -x "$build/.libs/mlc-run" ] && real=$build/.libs/mlc-run
[ -x "$build/.libs/lt-mlc-run" ] && real=$build/.libs/lt-mlc-run
if ldd "$real" >"$tmp/ldd" 2>&1 && grep -q 'libc\.so' "$tmp/ldd"; then
  ok
  grep -qi -e llvm -e protobuf -e libonnx -e 'libmlc' "$tmp/ldd" && fail "mlc-run links: $(cat "$tmp/ldd")" || ok
else
  fail "ldd $real: $(cat "$tmp/ldd")"
fi

echo "test_mlc_run: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
