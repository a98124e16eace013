#!/bin/sh
# test_schedule.sh: `mlc-onnx schedule`, and the kernels and traces that
# `compile --dump-ir` writes: every kernel's trace replays on its TIR to the
# kernel that was compiled.
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
models=$src/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; head -5 "$tmp/err"; fi; }
exit_is() { want=$1 desc=$2; shift 2; "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; if [ "$rc" -eq "$want" ]; then ok; else fail "$desc: exit $rc, expected $want"; fi; }
has() { grep -q -- "$1" "$2" && ok || { fail "$3"; head -5 "$2"; }; }

# ---- every kernel of two models: trace + TIR before -> the compiled kernel -----------------
for m in cnn encoder; do
  check "compile $m --dump-ir" "$cli" compile "$models/$m.onnx" -o "$tmp/$m.so" -q --dump-ir "$tmp/$m"
  n=0
  for t in "$tmp/$m/11_schedule/"*.trace; do
    k=$(basename "$t" .trace)
    # the kernel as compiled: its paragraph of 11_schedule.tir.txt
    awk -v RS= -v k="def $k(" 'index($0, k) { print; exit }' "$tmp/$m/11_schedule.tir.txt" >"$tmp/want"
    "$cli" schedule "$tmp/$m/11_schedule/$k.tir" --trace "$t" >"$tmp/got" 2>"$tmp/err" || { fail "$m/$k: schedule failed"; head -3 "$tmp/err"; continue; }
    # the printer ends a function with one newline; awk's paragraph too
    if cmp -s "$tmp/want" "$tmp/got"; then ok; else fail "$m/$k: the trace does not replay to the compiled kernel"; diff "$tmp/want" "$tmp/got" | head -10; fi
    n=$((n + 1))
  done
  [ "$n" -gt 3 ] && ok || fail "$m: only $n kernels replayed"
  # the lowered kernels (flat views of the parameters) read back as printed
  for k in $(sed -n 's/^def \([A-Za-z0-9_]*\)(.*/\1/p' "$tmp/$m/12_lowered.tir.txt"); do
    awk -v RS= -v k="def $k(" 'index($0, k) { print; exit }' "$tmp/$m/12_lowered.tir.txt" >"$tmp/want"
    "$cli" schedule "$tmp/$m/12_lowered.tir.txt" --func "$k" >"$tmp/got" 2>"$tmp/err" || { fail "$m/$k: the lowered kernel does not parse"; head -3 "$tmp/err"; continue; }
    cmp -s "$tmp/want" "$tmp/got" && ok || { fail "$m/$k: the lowered kernel does not print back the same"; diff "$tmp/want" "$tmp/got" | head -5; }
  done
done

# ---- the command ---------------------------------------------------------------------
# a 4-d relu kernel as the compiler writes it (the CNN's own relus run in the
# blocked layout since alter_layout)
k=$tmp/relu.tir
cat >"$k" <<'T'
@T.prim_func
def relu(A: T.Buffer((1, 8, 32, 32), "float32"), T_unary: T.Buffer((1, 8, 32, 32), "float32")):
    T.func_attr({"global_symbol": "mlc_k_relu", "tir.noalias": True})
    for i0, i1, i2, i3 in T.grid(1, 8, 32, 32):
        with T.block("T_unary"):
            vi0 = T.axis.spatial(1, i0)
            vi1 = T.axis.spatial(8, i1)
            vi2 = T.axis.spatial(32, i2)
            vi3 = T.axis.spatial(32, i3)
            T.reads(A[vi0, vi1, vi2, vi3])
            T.writes(T_unary[vi0, vi1, vi2, vi3])
            T_unary[vi0, vi1, vi2, vi3] = T.max(A[vi0, vi1, vi2, vi3], T.float32(0))
T
cat >"$tmp/par.trace" <<'T'
# the relu in parallel, its inner loop a vector
b0 = sch.get_block(name="T_unary")
l1, l2, l3, l4 = sch.get_loops(block=b0)
sch.parallel(loop=l2)
sch.vectorize(loop=l4)
T
check "schedule --trace" "$cli" schedule "$k" --trace "$tmp/par.trace"
has 'for i1 in T.parallel(8):' "$tmp/out" "schedule: no parallel loop"
has 'in T.vectorized(32):' "$tmp/out" "schedule: no vectorized loop"
check "schedule --print-trace" "$cli" schedule "$k" --trace "$tmp/par.trace" --print-trace
has '^# sch.vectorize(loop=l4)$' "$tmp/out" "schedule --print-trace: no trace"
check "schedule without a trace" "$cli" schedule "$k"
cmp -s "$k" "$tmp/out" && ok || fail "schedule without a trace does not print the function as read"
check "schedule -o" "$cli" schedule "$k" --trace "$tmp/par.trace" -o "$tmp/sched.tir"
has 'T.parallel' "$tmp/sched.tir" "schedule -o: not written"
f1=$(sed -n 's/^def \([A-Za-z0-9_]*\)(.*/\1/p' "$tmp/cnn/11_schedule.tir.txt" | head -1)
check "schedule --func" "$cli" schedule "$tmp/cnn/11_schedule.tir.txt" --func "$f1"
exit_is 1 "schedule of a file with several functions" "$cli" schedule "$tmp/cnn/11_schedule.tir.txt"
has 'prim functions: name one' "$tmp/err" "several functions: unclear message"
exit_is 1 "schedule --func unknown" "$cli" schedule "$k" --func nope
has 'no prim function named "nope"' "$tmp/err" "--func unknown: unclear message"

# a refused primitive names the line, the primitive and why
printf 'b0 = sch.get_block(name="T_unary")\nl1, l2, l3, l4 = sch.get_loops(block=b0)\nsch.parallel(loop=l2)\nsch.parallel(loop=l4)\n' >"$tmp/bad.trace"
exit_is 1 "a refused primitive" "$cli" schedule "$k" --trace "$tmp/bad.trace"
has 'bad.trace:4: parallel: loop i3 is inside the parallel loop i1' "$tmp/err" "refusal: unclear message"
printf 'b0 = sch.get_block(name="nope")\n' >"$tmp/bad2.trace"
exit_is 1 "an unknown block" "$cli" schedule "$k" --trace "$tmp/bad2.trace"
has 'no block named "nope"' "$tmp/err" "unknown block: unclear message"
printf '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    A[0] = B[0]\n' >"$tmp/bad.tir"
exit_is 1 "a TIR syntax error" "$cli" schedule "$tmp/bad.tir"
has 'bad.tir:3:' "$tmp/err" "TIR error: no line number"
printf '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    Y = T.alloc_buffer((4,), "float32")\n    V = T.Buffer((4,), "float32", data=Y.data)\n    A[0] = V[0]\n' >"$tmp/badview.tir"
exit_is 1 "a view of a non-parameter" "$cli" schedule "$tmp/badview.tir"
has "expected" "$tmp/err" "view of a non-parameter: no message"
exit_is 1 "a missing file" "$cli" schedule "$tmp/none.tir"
exit_is 2 "no file" "$cli" schedule
exit_is 2 "two files" "$cli" schedule "$k" "$k"
exit_is 2 "unknown option" "$cli" schedule "$k" --frobnicate
exit_is 2 "--trace twice" "$cli" schedule "$k" --trace a --trace b
exit_is 2 "--trace without a value" "$cli" schedule "$k" --trace
check "schedule --help" "$cli" schedule --help
has 'sch.split' "$tmp/out" "schedule --help: no example"
check "help schedule" "$cli" help schedule
check "--help" "$cli" --help
has 'schedule FUNC.tir' "$tmp/out" "--help does not list schedule"

echo "test_schedule.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
