#!/bin/sh
# test_serve.sh: the inference server.  Here: mlc-serve's command line
# (--help, bad usage exits 2, a model that does not load or a port in use
# exits 1 with the reason), and that it links neither LLVM nor protobuf nor
# libmlc; then tests/serve/test_serve.py: the Open Inference Protocol's
# endpoints, inference against `mlc-onnx run`, bad requests, load, batching,
# queue limits, metrics, access log, reload and drain (127.0.0.1 only).
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR, MLC_BUILDDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
build=${MLC_BUILDDIR:-.}
py=${PYTHON_ONNX:-}
[ -n "$py" ] && [ "$py" != no ] || py=/usr/bin/python3
server=$build/mlc-serve
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
exit_is() { want=$1 desc=$2; shift 2; "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; rc=$?; if [ "$rc" -eq "$want" ]; then ok; else fail "$desc: exit $rc, expected $want"; head -3 "$tmp/err"; fi; }
says() { grep -qF -- "$2" "$tmp/err" && ok || fail "$1: message lacks '$2': $(head -c 300 "$tmp/err")"; }

exit_is 0 "--help" "$server" --help
grep -q "Open Inference Protocol" "$tmp/out" && grep -q -- "--max-queue" "$tmp/out" && ok || fail "--help text"
exit_is 0 "mlc-onnx help serve" "$cli" help serve
grep -q -- "--max-batch" "$tmp/out" && ok || fail "mlc-onnx help serve text"
exit_is 2 "no model" "$server" --port 0
says "no model" "no model given"
exit_is 2 "unknown option" "$server" m.so --frobnicate
says "unknown option" "--frobnicate"
exit_is 2 "bad port" "$server" m.so --port 70000
exit_is 2 "bad size" "$server" m.so --max-body 12Q
exit_is 2 "option without value" "$server" m.so --sessions
exit_is 2 "two models of one name" "$server" a/m.so b/m.so
says "two models of one name" "two models are called \"m\""
exit_is 1 "missing model file" "$server" "$tmp/none.so" --port 0
says "missing model file" "$tmp/none.so"
printf 'not a model' >"$tmp/bad.so"
exit_is 1 "not a model" "$server" "$tmp/bad.so" --port 0
says "not a model" "bad.so"
# a port in use
"$cli" compile "$src/models/mlp.onnx" -o "$tmp/mlp.so" -q 2>"$tmp/err" || fail "compile mlp: $(cat "$tmp/err")"
"$server" "$tmp/mlp.so" --port 0 --access-log off >"$tmp/first.out" 2>"$tmp/first.err" &
pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/first.out")
  [ -n "$port" ] && break
  sleep 0.1
done
if [ -n "$port" ]; then
  ok
  exit_is 1 "port in use" "$server" "$tmp/mlp.so" --port "$port"
  says "port in use" "cannot listen"
else
  fail "server did not start: $(cat "$tmp/first.err")"
fi
kill -TERM "$pid" 2>/dev/null
wait "$pid"; rc=$?
[ "$rc" -eq 0 ] && ok || fail "SIGTERM of an idle server: exit $rc"
# the deploy side: no compiler libraries
if command -v ldd >/dev/null 2>&1; then
  ldd "$server" >"$tmp/ldd" 2>&1
  if grep -qiE "libLLVM|libprotobuf|libmlc\.so" "$tmp/ldd"; then fail "mlc-serve links $(grep -iE 'libLLVM|libprotobuf|libmlc' "$tmp/ldd")"; else ok; fi
fi

# the protocol, end to end
if "$py" -c 'import onnx, numpy' 2>/dev/null; then
  mkdir "$tmp/py"
  "$py" "$src/tests/serve/test_serve.py" "$cli" "$server" "$src/models" "$tmp/py" >"$tmp/py.out" 2>&1
  cat "$tmp/py.out"
  line=$(grep -E '^test_serve: [0-9]+ passed, [0-9]+ failed' "$tmp/py.out" | tail -n 1)
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
    passed=$((passed + p)); failed=$((failed + f))
  else
    fail "test_serve.py ended without its summary (crashed?)"
  fi
else
  echo "SKIP: the protocol tests need Python with onnx and numpy"
fi

echo "test_serve.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
