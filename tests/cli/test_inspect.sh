#!/bin/sh
# test_inspect.sh: the `mlc-onnx inspect` command line, end to end.
#
# Env (set by make check): MLC_CLI = the built mlc-onnx, MLC_SRCDIR = the
# source tree (for models/).  Checks the facts shown for each bundled model,
# the --json/--ir/--dot/-o forms, that every flag the help documents is
# accepted (and every accepted flag documented), the exit status of bad usage
# (2) and of bad models (1, with a message), and that damaged models never
# crash it.  Ends with "test_inspect: N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
MLC_SRCDIR=${MLC_SRCDIR:-$(cd "$here/../.." && pwd)}
MLC_CLI=${MLC_CLI:-./mlc-onnx}
models=$MLC_SRCDIR/models
py=/usr/bin/python3
[ -x "$py" ] || py=

if [ ! -x "$MLC_CLI" ]; then
  echo "test_inspect: $MLC_CLI is not built"
  echo "test_inspect: 0 passed, 1 failed"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_inspect.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

passed=0
failed=0
ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
  if [ -s "$tmp/err" ]; then sed -n '1,15s/^/  stderr| /p' "$tmp/err"; fi
}

# run ARGS...: runs mlc-onnx; sets $rc, stdout in $tmp/out, stderr in $tmp/err.
run() {
  "$MLC_CLI" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  # A sanitizer report is a failure whatever the exit status says.
  if grep -q 'Sanitizer\|runtime error:' "$tmp/err"; then rc=99; fi
}

# expect_rc WANT DESC ARGS...
expect_rc() {
  want=$1 desc=$2
  shift 2
  run "$@"
  if [ "$rc" -eq "$want" ]; then ok; else fail "$desc: exit $rc, expected $want (mlc-onnx $*)"; fi
}

# expect_out PATTERN DESC: extended regex on the last run's stdout.
expect_out() {
  if grep -Eq -- "$1" "$tmp/out"; then ok; else fail "$2: stdout lacks /$1/"; fi
}

# expect_usage DESC ARGS...: exit 2, an error line and a hint to --help.
expect_usage() {
  desc=$1
  shift
  run "$@"
  if [ "$rc" -eq 2 ] && grep -q '^mlc-onnx: error: ' "$tmp/err" && grep -q -- '--help' "$tmp/err"; then
    ok
  elif [ "$rc" -eq 2 ] && [ "$#" -eq 0 ] && grep -q -- '--help' "$tmp/err"; then
    ok
  else
    fail "$desc: exit $rc, expected 2 with an error and a --help hint (mlc-onnx $*)"
  fi
}

# expect_error DESC PATTERN ARGS...: exit 1 with "mlc-onnx: error: " and PATTERN on stderr.
expect_error() {
  desc=$1 pat=$2
  shift 2
  run "$@"
  if [ "$rc" -eq 1 ] && grep -q '^mlc-onnx: error: ' "$tmp/err" && grep -Eqi -- "$pat" "$tmp/err"; then
    ok
  else
    fail "$desc: exit $rc, expected 1 with an error matching /$pat/ (mlc-onnx $*)"
  fi
}

# json_check FILE PYTHON_EXPR DESC: PYTHON_EXPR over the parsed object d must hold.
json_check() {
  [ -n "$py" ] || return 0
  if "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>"$tmp/pyerr"; then
    ok
  else
    fail "$3: JSON check failed: $2"
    sed 's/^/  python| /' "$tmp/pyerr" | tail -3
  fi
}

# ---- each bundled model: text facts -------------------------------------------
expect_rc 0 "inspect mlp" inspect "$models/mlp.onnx"
expect_out '^ir_version: +8$' "mlp ir_version"
expect_out '^producer: +mlc-onnx make_models.py 1.0$' "mlp producer"
expect_out '^opsets: +ai.onnx 13$' "mlp opsets"
expect_out '^  x +float32 \[1, 784\]$' "mlp input"
expect_out '^  y +float32 \[1, 10\]$' "mlp output"
expect_out '^nodes: +4$' "mlp nodes"
for op in MatMul Add Relu Gemm; do expect_out "^  $op +1$" "mlp op $op"; done
expect_out '^params: +101770 \(407080 bytes\)$' "mlp params"
expect_out '^import: +ok' "mlp import"

expect_rc 0 "inspect mlp_dyn" inspect "$models/mlp_dyn.onnx"
expect_out '^  x +float32 \[N, 784\]$' "mlp_dyn input"
expect_out '^  y +float32 \[N, 10\]$' "mlp_dyn output"
expect_out '^nodes: +4$' "mlp_dyn nodes"

expect_rc 0 "inspect cnn" inspect "$models/cnn.onnx"
expect_out '^  x +float32 \[1, 3, 32, 32\]$' "cnn input"
expect_out '^  y +float32 \[1, 10\]$' "cnn output"
expect_out '^nodes: +17$' "cnn nodes"
for oc in BatchNormalization:4 Conv:4 Relu:4 Add:1 Flatten:1 Gemm:1 GlobalAveragePool:1 MaxPool:1; do
  expect_out "^  ${oc%:*} +${oc#*:}\$" "cnn op $oc"
done
expect_out '^params: +2890 ' "cnn params"
# the histogram is sorted by count (descending), then by name
if sed -n '/^ops:/,/^params:/p' "$tmp/out" | sed -n '2,4p' | awk '{print $1}' | tr '\n' ' ' |
  grep -q '^BatchNormalization Conv Relu $'; then ok; else fail "cnn op order"; fi

expect_rc 0 "inspect encoder" inspect "$models/encoder.onnx"
expect_out '^  x +float32 \[1, 16, 32\]$' "encoder input"
expect_out '^  y +float32 \[1, 16, 32\]$' "encoder output"
expect_out '^nodes: +47$' "encoder nodes"
for oc in Add:12 MatMul:8 ReduceMean:4 Reshape:4 Transpose:4 Div:3 Constant:2 Softmax:1; do
  expect_out "^  ${oc%:*} +${oc#*:}\$" "encoder op $oc"
done
# initializers plus the elements of the two Constant nodes (int64 shapes)
expect_out '^params: +8554 \(34244 bytes\)$' "encoder params"

# ---- --json ----------------------------------------------------------------------
for m in mlp mlp_dyn cnn encoder; do
  expect_rc 0 "inspect --json $m" inspect "$models/$m.onnx" --json
  cp "$tmp/out" "$tmp/$m.json"
  if [ -n "$py" ]; then
    if "$py" -m json.tool <"$tmp/$m.json" >/dev/null 2>"$tmp/err"; then ok; else fail "$m --json is not valid JSON"; fi
  fi
  for k in file ir_version producer opsets inputs outputs nodes ops params; do
    if grep -q "\"$k\":" "$tmp/$m.json"; then ok; else fail "$m --json lacks key $k"; fi
  done
done
json_check "$tmp/mlp.json" 'd["inputs"]==[{"name":"x","kind":"tensor","dtype":"float32","shape":[1,784]}] and d["outputs"][0]["shape"]==[1,10] and d["nodes"]==4 and d["ops"]=={"MatMul":1,"Add":1,"Relu":1,"Gemm":1} and d["params"]=={"count":101770,"bytes":407080} and d["opsets"]==[{"domain":"ai.onnx","version":13}] and d["ir_version"]==8' "mlp json facts"
json_check "$tmp/mlp_dyn.json" 'd["inputs"][0]["shape"]==["N",784] and d["outputs"][0]["shape"]==["N",10]' "mlp_dyn json shape"
json_check "$tmp/cnn.json" 'list(d["ops"].items())[:3]==[("BatchNormalization",4),("Conv",4),("Relu",4)] and d["nodes"]==17' "cnn json ops"
json_check "$tmp/encoder.json" 'd["ops"]["Add"]==12 and d["ops"]["Softmax"]==1 and d["params"]["count"]==8554' "encoder json ops"

# ---- --ir, --dot, -o ---------------------------------------------------------------
for m in mlp mlp_dyn cnn encoder; do
  expect_rc 0 "inspect --ir $m" inspect "$models/$m.onnx" --ir
  expect_out 'R\.function' "$m --ir"
  expect_rc 0 "inspect --dot $m" inspect "$models/$m.onnx" --dot
  if head -n 1 "$tmp/out" | grep -q '^digraph'; then ok; else fail "$m --dot does not start with digraph"; fi
done
expect_rc 0 "inspect --ir mlp_dyn" inspect --ir "$models/mlp_dyn.onnx"
expect_out '"N"|\bN\b' "mlp_dyn --ir keeps the symbolic batch"

expect_rc 0 "inspect -o" inspect "$models/mlp.onnx" -o "$tmp/o.txt"
if [ ! -s "$tmp/out" ] && [ -s "$tmp/o.txt" ] && grep -q '^nodes: *4$' "$tmp/o.txt"; then ok; else fail "-o writes the report to the file only"; fi
expect_rc 0 "inspect --output=FILE --json" inspect --json --output="$tmp/o.json" "$models/mlp.onnx"
if [ -n "$py" ]; then
  if "$py" -m json.tool <"$tmp/o.json" >/dev/null 2>&1; then ok; else fail "--output=FILE --json is valid JSON"; fi
fi
expect_rc 0 "inspect -- MODEL" inspect -- "$models/mlp.onnx"
expect_rc 0 "inspect --json given twice" inspect --json --json "$models/mlp.onnx"

# ---- help and version ------------------------------------------------------------
expect_rc 0 "--help" --help
expect_out '^usage: mlc-onnx' "--help usage line"
expect_out 'inspect' "--help lists inspect"
expect_rc 0 "-h" -h
expect_rc 0 "help" help
expect_rc 0 "help inspect" help inspect
expect_out '^usage: mlc-onnx inspect' "help inspect usage line"
expect_rc 0 "--version" --version
expect_out '^mlc-onnx [0-9]+\.[0-9]+' "--version output"
expect_rc 0 "inspect --help" inspect --help
cp "$tmp/out" "$tmp/inspect_help"
"$MLC_CLI" --help >"$tmp/main_help" 2>/dev/null

# Every flag in an Options section of a help text must work: scrape
# "  -o, --output FILE  text" lines into "FLAG ARG" pairs.
scrape() {
  awk '/^Options:/ { on = 1; next }
       on && /^$/ { on = 0 }
       on && /^  -/ {
         spec = $0; sub(/^  /, "", spec); sub(/  .*/, "", spec)
         n = split(spec, part, ", ")
         arg = ""
         if (split(part[n], w, " ") == 2) arg = w[2]
         for (i = 1; i <= n; i++) { split(part[i], w, " "); print w[1], arg }
       }' "$1"
}
scrape "$tmp/inspect_help" >"$tmp/inspect_flags"
scrape "$tmp/main_help" >"$tmp/main_flags"
if [ "$(wc -l <"$tmp/inspect_flags")" -ge 6 ]; then ok; else fail "inspect --help documents its flags in an Options section"; fi
while read -r flag arg; do
  case $flag in
    --) expect_rc 0 "documented flag $flag" inspect -- "$models/mlp.onnx" ;;
    *)
      if [ -n "$arg" ]; then
        expect_rc 0 "documented flag $flag $arg" inspect "$models/mlp.onnx" "$flag" "$tmp/flag.out"
      else
        expect_rc 0 "documented flag $flag" inspect "$models/mlp.onnx" "$flag"
      fi ;;
  esac
done <"$tmp/inspect_flags"
while read -r flag arg; do
  expect_rc 0 "documented flag $flag" "$flag"
done <"$tmp/main_flags"
# ... and every flag the parser accepts is documented.
for flag in --json --ir --dot -o --output -h --help --; do
  if awk '{print $1}' "$tmp/inspect_flags" | grep -qx -- "$flag"; then ok; else fail "inspect flag $flag is not in inspect --help"; fi
done
for flag in -h --help --version; do
  if awk '{print $1}' "$tmp/main_flags" | grep -qx -- "$flag"; then ok; else fail "flag $flag is not in --help"; fi
done

# ---- bad usage: exit 2 -------------------------------------------------------------
expect_usage "no arguments"
expect_usage "unknown command" frobnicate
expect_usage "unknown global option" --bogus
expect_usage "unknown inspect option" inspect "$models/mlp.onnx" --bogus
expect_usage "unknown short option" inspect -x "$models/mlp.onnx"
expect_usage "inspect without MODEL" inspect
expect_usage "inspect with two MODELs" inspect "$models/mlp.onnx" "$models/cnn.onnx"
expect_usage "-o without FILE" inspect "$models/mlp.onnx" -o
expect_usage "--output= without FILE" inspect "$models/mlp.onnx" --output=
expect_usage "-o given twice" inspect "$models/mlp.onnx" -o "$tmp/a" -o "$tmp/b"
expect_usage "--json with --ir" inspect "$models/mlp.onnx" --json --ir
expect_usage "--ir with --dot" inspect --ir --dot "$models/mlp.onnx"
expect_usage "help of an unknown command" help frobnicate
expect_usage "help with two commands" help inspect inspect

# ---- bad models: exit 1 with a message -----------------------------------------------
expect_error "missing file" 'nonexistent\.onnx' inspect "$tmp/nonexistent.onnx"
printf 'this is not a protobuf \001\002\003\377\376' >"$tmp/corrupt.onnx"
expect_error "corrupt file" 'corrupt\.onnx' inspect "$tmp/corrupt.onnx"
: >"$tmp/empty.onnx"
expect_error "empty file" 'empty\.onnx' inspect "$tmp/empty.onnx"
head -c 1000 "$models/mlp.onnx" >"$tmp/truncated.onnx"
expect_error "truncated file" 'truncated\.onnx' inspect "$tmp/truncated.onnx"
expect_error "a directory" 'director' inspect "$tmp"
if [ -f /bin/sh ]; then
  cp /bin/sh "$tmp/model.so"
  expect_error "a shared object that is no model" 'cannot load|not a model' inspect "$tmp/model.so"
fi
[ -e /dev/null ] && expect_error "a device" 'null' inspect /dev/null
if command -v timeout >/dev/null 2>&1 && mkfifo "$tmp/fifo" 2>/dev/null; then
  # a FIFO nobody writes to must not block inspect
  timeout 10 "$MLC_CLI" inspect "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 1 ] && grep -q '^mlc-onnx: error: ' "$tmp/err"; then ok; else fail "a FIFO: exit $rc, expected 1"; fi
fi
# no output file is left behind when the model is bad
expect_error "bad model with -o" 'corrupt' inspect "$tmp/corrupt.onnx" -o "$tmp/never.txt"
if [ ! -e "$tmp/never.txt" ]; then ok; else fail "-o file written for a bad model"; fi
expect_error "unwritable -o" 'cannot' inspect "$models/mlp.onnx" -o "$tmp/no/such/dir/out.txt"

# ---- damaged models never crash: exit 0 or 1 with a message ----------------------------
size=$(wc -c <"$models/cnn.onnx")
damaged=0
for cut in 1 2 3 7 16 64 200 1000 4000 9000 $((size - 1)); do
  head -c "$cut" "$models/cnn.onnx" >"$tmp/cut.onnx"
  run inspect "$tmp/cut.onnx"
  if [ "$rc" -le 1 ] && { [ "$rc" -eq 0 ] || grep -q '^mlc-onnx: error: ' "$tmp/err"; }; then :; else
    fail "cnn.onnx cut at $cut bytes: exit $rc"
    damaged=1
  fi
done
for pos in 0 1 5 20 100 300 700 1500 3000 6000 10000 13000; do
  for byte in '\377' '\000' '\177'; do
    cp "$models/cnn.onnx" "$tmp/flip.onnx"
    # shellcheck disable=SC2059
    printf "$byte" | dd of="$tmp/flip.onnx" bs=1 seek="$pos" conv=notrunc 2>/dev/null
    run inspect "$tmp/flip.onnx"
    if [ "$rc" -le 1 ] && { [ "$rc" -eq 0 ] || grep -q '^mlc-onnx: error: ' "$tmp/err"; }; then :; else
      fail "cnn.onnx with byte $byte at $pos: exit $rc"
      damaged=1
    fi
  done
done
if [ "$damaged" -eq 0 ]; then ok; fi

echo "test_inspect: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
