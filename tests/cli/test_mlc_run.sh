#!/bin/sh
# test_mlc_run.sh: the deploy-side runner mlc-run gives what `mlc-onnx run`
# gives (same outputs, byte for byte, from files and from seeded random
# inputs; the same JSON), reads .npy only, and links neither LLVM nor
# protobuf.  Env: MLC_CLI, MLC_SRCDIR, MLC_BUILDDIR.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:-.}
build=${MLC_BUILDDIR:-.}
runner=$build/mlc-run
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
[ -x "$runner" ] || { echo "FAIL: no $runner"; echo "test_mlc_run: 0 passed, 1 failed"; exit 1; }
"$cli" compile "$src/models/cnn.onnx" -o "$tmp/cnn.so" -q --no-header || { echo "FAIL: compile"; exit 1; }
# the same outputs, from a file and from random inputs
"$cli" run "$tmp/cnn.so" --input "$src/models/cnn.input_0.npy" --output-dir "$tmp/a" >/dev/null 2>&1
"$runner" "$tmp/cnn.so" --input "$src/models/cnn.input_0.npy" --output-dir "$tmp/b" >/dev/null 2>&1
cmp -s "$tmp/a/output_0.npy" "$tmp/b/output_0.npy" && ok || fail "outputs from a file differ"
"$cli" run "$tmp/cnn.so" --seed 3 --output-dir "$tmp/c" >/dev/null 2>&1
"$runner" "$tmp/cnn.so" --seed 3 --output-dir "$tmp/d" >/dev/null 2>&1
cmp -s "$tmp/c/output_0.npy" "$tmp/d/output_0.npy" && ok || fail "outputs from random inputs differ"
[ -s "$tmp/d/output_0.npy" ] && ! cmp -s "$tmp/b/output_0.npy" "$tmp/d/output_0.npy" && ok || fail "seed ignored"
# JSON with latency
"$runner" "$tmp/cnn.so" --bench 3 --json >"$tmp/j" 2>&1 && grep -q '"latency_ms": {"median"' "$tmp/j" && ok ||
  fail "--json --bench: $(head -c 200 "$tmp/j")"
# errors: usage 2, a missing file 1 naming it, a .pb refused, a truncated .npy
"$runner" "$tmp/cnn.so" --frobnicate >/dev/null 2>&1; [ $? -eq 2 ] && ok || fail "bad option is not exit 2"
"$runner" >/dev/null 2>&1; [ $? -eq 2 ] && ok || fail "no model is not exit 2"
"$runner" --help >"$tmp/h" 2>&1 && grep -q '^usage: mlc-run MODEL.so' "$tmp/h" && ok || fail "--help"
"$runner" "$tmp/nope.so" >"$tmp/e" 2>&1; [ $? -eq 1 ] && grep -q nope.so "$tmp/e" && ok || fail "missing model"
printf 'not a tensor' >"$tmp/x.pb"
"$runner" "$tmp/cnn.so" --input "$tmp/x.pb" >"$tmp/e" 2>&1; [ $? -eq 1 ] && grep -q '.npy files only' "$tmp/e" && ok ||
  fail ".pb input: $(cat "$tmp/e")"
head -c 100 "$src/models/cnn.input_0.npy" >"$tmp/t.npy"
"$runner" "$tmp/cnn.so" --input "$tmp/t.npy" >"$tmp/e" 2>&1; [ $? -eq 1 ] && grep -q 't.npy' "$tmp/e" && ok ||
  fail "truncated .npy: $(cat "$tmp/e")"
# the deploy side: no LLVM, no protobuf
real=$runner
[ -x "$build/.libs/mlc-run" ] && real=$build/.libs/mlc-run
if command -v ldd >/dev/null; then
  ldd "$real" >"$tmp/ldd" 2>&1
  grep -qi -e llvm -e protobuf -e libmlc "$tmp/ldd" && fail "mlc-run links: $(cat "$tmp/ldd")" || ok
fi
echo "test_mlc_run: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
