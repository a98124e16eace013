#!/bin/sh
# test_compile_run.sh: `mlc-onnx compile`, `run` and `inspect MODEL.so` from
# the command line, the deployed artifact's properties (exports, libraries,
# reproducibility, manifest) and the example program.
# Env: MLC_CLI (the built mlc-onnx), MLC_SRCDIR, MLC_BUILDDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
build=${MLC_BUILDDIR:-.}
py=${PYTHON_ONNX:-/usr/bin/python3}
models=$src/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { desc=$1; shift; if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$desc"; cat "$tmp/err" | head -5; fi; }
exit_is() { want=$1 desc=$2; shift 2; "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; if [ "$rc" -eq "$want" ]; then ok; else fail "$desc: exit $rc, expected $want"; fi; }
have_numpy() { "$py" -c 'import numpy' 2>/dev/null; }
close() { # close OUT.npy REF.npy: rtol 1e-3, atol 1e-4
  "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-3,atol=1e-4) else 1)' "$1" "$2"
}

# ---- compile + run every bundled model, outputs against ONNX Runtime's -------------------
for m in mlp cnn encoder; do
  check "compile $m" "$cli" compile "$models/$m.onnx" -o "$tmp/$m.so"
  grep -q '6/6' "$tmp/err" && ok || fail "compile $m: no progress lines"
  [ -f "$tmp/$m.h" ] && grep -q 'mlc_model_entry_v1' "$tmp/$m.h" && ok || fail "compile $m: no header"
  check "run $m" "$cli" run "$tmp/$m.so" --input "$models/$m.input_0.npy" --output-dir "$tmp/$m.out"
  if have_numpy; then
    close "$tmp/$m.out/output_0.npy" "$models/$m.output_0.npy" && ok || fail "$m: output differs from ONNX Runtime's"
  fi
done

# ---- pass groups: each switched off, the outputs stay; fusion makes fewer steps ---------
steps() { sed -n 's/.*: \([0-9]*\) steps.*/\1/p' "$tmp/err" | tail -1; }
for m in cnn encoder; do
  check "compile $m (all passes)" "$cli" compile "$models/$m.onnx" -o "$tmp/$m.all.so" --no-header
  all=$(steps)
  for g in fold fuse layout; do
    check "compile $m --no-$g" "$cli" compile "$models/$m.onnx" -o "$tmp/$m.no$g.so" --no-header --no-$g
    eval "n_$g=\$(steps)"
    check "run $m --no-$g" "$cli" run "$tmp/$m.no$g.so" --input "$models/$m.input_0.npy" --output-dir "$tmp/$m.no$g"
    if have_numpy; then
      close "$tmp/$m.no$g/output_0.npy" "$models/$m.output_0.npy" && ok || fail "$m --no-$g: output differs"
    fi
  done
  [ -n "$all" ] && [ "$all" -lt "$n_fuse" ] && ok || fail "$m: fusion does not cut steps ($all with, $n_fuse without)"
done
# the cnn's BatchNormalization folds into its convolutions: fewer steps with fold
check "compile cnn --no-fold --no-fuse --no-layout" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn.none.so" --no-header --no-fold --no-fuse --no-layout
none=$(steps)
check "compile cnn --no-fuse --no-layout" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn.fold.so" --no-header --no-fuse --no-layout
[ "$(steps)" -lt "$none" ] && ok || fail "cnn: folding BatchNormalization does not cut steps ($(steps) with, $none without)"
exit_is 2 "compile --no-such-group" "$cli" compile "$models/cnn.onnx" -o "$tmp/x.so" --no-fusion

# ---- symbolic batch: one .so, batch 1 and 4, input by name ------------------------------
check "compile mlp_dyn" "$cli" compile "$models/mlp_dyn.onnx" -o "$tmp/dyn.so" -q
check "run mlp_dyn batch 1" "$cli" run "$tmp/dyn.so" --input "x=$models/mlp_dyn.input_0.npy" --output-dir "$tmp/d1"
check "run mlp_dyn batch 4" "$cli" run "$tmp/dyn.so" --input "$models/mlp_dyn.batch4.input_0.npy" --output-dir "$tmp/d4"
if have_numpy; then
  close "$tmp/d1/output_0.npy" "$models/mlp_dyn.output_0.npy" && ok || fail "mlp_dyn batch 1 differs"
  close "$tmp/d4/output_0.npy" "$models/mlp_dyn.batch4.output_0.npy" && ok || fail "mlp_dyn batch 4 differs"
fi

# ---- run --json and --bench --------------------------------------------------------------
check "run --json --bench" "$cli" run "$tmp/cnn.so" --json --bench 5 --threads 2
if have_numpy; then
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); l=d["latency_ms"]; assert set(l)=={"median","min","p90"} and l["min"]<=l["median"]<=l["p90"]; o=d["outputs"][0]; assert o["name"]=="y" and o["dtype"]=="float32" and o["shape"]==[1,10]' "$tmp/out" && ok || fail "run --json: wrong object: $(cat "$tmp/out")"
fi
check "run without --input (random)" "$cli" run "$tmp/mlp.so" --seed 7
grep -q 'random data' "$tmp/err" && ok || fail "run: random inputs not announced"

# ---- inspect MODEL.so ----------------------------------------------------------------------
check "inspect .so" "$cli" inspect "$tmp/cnn.so"
for want in 'manifest:' 'model_sha256' 'arena:' 'kernels (' '0 x: float32 (1, 3, 32, 32)'; do
  grep -qF "$want" "$tmp/out" && ok || fail "inspect .so: no '$want'"
done
check "inspect .so --json" "$cli" inspect --json "$tmp/cnn.so"
if have_numpy; then
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert all(k in d for k in ("kernels","extern_calls","arena_bytes","inputs","outputs","options")); assert d["arena_bytes"]>0 and d["manifest"]["compiler"].startswith("mlc-onnx")' "$tmp/out" && ok || fail "inspect .so --json: missing keys"
fi
sum=$(sha256sum "$models/cnn.onnx" | cut -d' ' -f1)
grep -q "$sum" "$tmp/out" && ok || fail "inspect .so: manifest lacks the source model's sha256"

# ---- the artifact: exports, libraries, reproducibility ---------------------------------
if command -v nm >/dev/null; then
  exports=$(nm -D --defined-only "$tmp/cnn.so" | awk '$2 ~ /^[TDRB]$/ {print $3}' | sort | tr '\n' ' ')
  [ "$exports" = "mlc_model_entry_v1 " ] && ok || fail "model.so exports more than the entry: $exports"
fi
if command -v ldd >/dev/null; then
  extra=$(ldd "$tmp/cnn.so" | awk '{print $1}' | grep -vE '^(linux-vdso|/lib.*ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|libasan|libubsan|libstdc\+\+|libgcc_s|librt\.so)' | tr '\n' ' ')
  [ -z "$extra" ] && ok || fail "model.so needs more than libc/libm/libpthread: $extra"
fi
check "compile again" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn_again.so" -q --no-header
cmp -s "$tmp/cnn.so" "$tmp/cnn_again.so" && ok || fail "two compiles of one model differ"
# ... and the same bytes from any build directory: no path of this build in it
# (the runtime's debug information, RT_PREFIX_MAP_CFLAGS); not in a sanitizer
# build, whose checks carry their source file names as the compiler gives them
if [ -z "${MLC_TEST_SAN_CFLAGS:-}" ]; then
  for d in "$(cd "$build" && pwd)" "$(cd "$src" && pwd)"; do
    grep -qF "$d" "$tmp/cnn.so" && fail "model.so names the directory $d" || ok
  done
fi
check "compile --dump-ir" "$cli" compile "$models/mlp.onnx" -o "$tmp/mlp_d.so" -q --dump-ir "$tmp/dump"
for f in 00_import.txt 10_legalize.tir.txt 11_schedule.tir.txt 20_codegen.ll; do
  [ -s "$tmp/dump/$f" ] && ok || fail "--dump-ir: no $f"
done
grep -q 'T.parallel' "$tmp/dump/11_schedule.tir.txt" && ok || fail "default schedule has no parallel loop"
# every kernel: its TIR beside the trace that scheduled it
nk=$(grep -c '^def ' "$tmp/dump/11_schedule.tir.txt")
[ "$(ls "$tmp/dump/11_schedule/"*.tir | wc -l)" -eq "$nk" ] && ok || fail "--dump-ir: not one .tir per kernel"
[ "$(ls "$tmp/dump/11_schedule/"*.trace | wc -l)" -eq "$nk" ] && ok || fail "--dump-ir: not one .trace per kernel"
grep -l 'sch.parallel(loop=' "$tmp/dump/11_schedule/"*.trace >/dev/null && ok || fail "--dump-ir: no trace applies parallel"
# a conv's default schedule makes explicit vectors: in its trace, and as
# T.Ramp accesses in the lowered TIR
check "compile cnn --dump-ir" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn_d.so" -q --dump-ir "$tmp/cdump"
# (the first kernel with a conv block: the conv alone, or fused with its
# epilogue)
ck=$(grep -l 'T.block("T_conv' "$tmp/cdump/11_schedule/"*.tir | head -1)
ck=$(basename "${ck:-none}" .tir)
grep -q 'sch.vectorize(loop=' "$tmp/cdump/11_schedule/$ck.trace" && ok || fail "--dump-ir: the conv's trace has no vectorize"
awk -v RS= -v k="def $ck(" 'index($0, k)' "$tmp/cdump/12_lowered.tir.txt" | grep -q 'T.Ramp(' && ok || fail "--dump-ir: the lowered conv has no vector access"
check "compile -v" "$cli" compile "$models/mlp.onnx" -o "$tmp/mlp_v.so" -v
for step in setup load import 'pass fold_constant' 'pass dce' 'pass fuse_ops' 'pass legalize' 'pass schedule' 'pass plan_memory' codegen archive; do
  grep -q "^ *$step.* ms" "$tmp/err" && ok || fail "compile -v: no line for $step"
done
grep -q '(cpu .* ms)' "$tmp/err" && ok || fail "compile -v: no CPU times"
grep -q '6/6' "$tmp/err" && ok || fail "compile -v: no stage lines"
cmp -s "$tmp/mlp.so" "$tmp/mlp_v.so" && ok || fail "compile -v changes the library"
check "compile --target" "$cli" compile "$models/mlp.onnx" -o "$tmp/mlp_v2.so" -q --target "llvm -mcpu=x86-64-v2"
check "run x86-64-v2 build" "$cli" run "$tmp/mlp_v2.so" --input "$models/mlp.input_0.npy"
# an AVX2 target: register tiles of 8-lane vectors (16 registers), same results
check "compile cnn for haswell" "$cli" compile "$models/cnn.onnx" -o "$tmp/cnn_avx2.so" -q --no-header \
  --target "llvm -mcpu=haswell" --dump-ir "$tmp/dump_avx2"
grep -q 'factors=\[None, 8\]' "$tmp/dump_avx2/11_schedule/"*.trace && ok || fail "haswell: no 8-lane split"
grep -q 'factors=\[None, 16\]' "$tmp/dump_avx2/11_schedule/"*.trace && fail "haswell: a 16-lane split" || ok
if have_numpy; then
  check "run cnn haswell build" "$cli" run "$tmp/cnn_avx2.so" --input "$models/cnn.input_0.npy" --output-dir "$tmp/avx2.out"
  close "$tmp/avx2.out/output_0.npy" "$models/cnn.output_0.npy" && ok || fail "haswell build: output differs"
fi

# ---- errors ------------------------------------------------------------------------------
exit_is 2 "compile without -o" "$cli" compile "$models/mlp.onnx"
exit_is 2 "compile -q -v" "$cli" compile "$models/mlp.onnx" -o "$tmp/x.so" -q -v
exit_is 2 "compile unknown flag" "$cli" compile "$models/mlp.onnx" -o "$tmp/x.so" --frobnicate
exit_is 2 "compile --extern unknown" "$cli" compile "$models/mlp.onnx" -o "$tmp/x.so" --extern blas
exit_is 2 "compile --extern twice" "$cli" compile "$models/mlp.onnx" -o "$tmp/x.so" --extern onednn,onednn
exit_is 2 "compile --extern empty name" "$cli" compile "$models/mlp.onnx" -o "$tmp/x.so" --extern onednn,
exit_is 2 "run unknown flag" "$cli" run "$tmp/mlp.so" --frobnicate
exit_is 2 "run --bench abc" "$cli" run "$tmp/mlp.so" --bench abc
exit_is 1 "compile unsupported model" "$cli" compile "$src/tests/malformed/unknown_op.onnx" -o "$tmp/u.so"
grep -q 'not supported' "$tmp/err" && ok || fail "compile unsupported: message $(cat "$tmp/err")"
exit_is 1 "compile bad target" "$cli" compile "$models/mlp.onnx" -o "$tmp/x.so" --target "llvm -mcpu=nosuchcpu"
exit_is 1 "run missing model" "$cli" run "$tmp/nonexistent.so"
exit_is 1 "run wrong input shape" "$cli" run "$tmp/cnn.so" --input "$models/mlp.input_0.npy"
grep -q 'input "x"' "$tmp/err" && ok || fail "run wrong shape: message $(cat "$tmp/err")"
exit_is 1 "run too many inputs" "$cli" run "$tmp/mlp.so" --input "$models/mlp.input_0.npy" --input "$models/mlp.input_0.npy"
exit_is 1 "run a non-model" "$cli" run "$models/mlp.onnx"

# ---- the example program -------------------------------------------------------------------
ex=$build/examples/classify
if [ -x "$ex" ]; then
  check "examples/classify" "$ex" "$tmp/cnn.so" "$models/cnn.input_0.npy" 3
  top=$(sed -n 's/^1\. class \([0-9]*\).*/\1/p' "$tmp/out")
  if have_numpy; then
    want=$("$py" -c 'import sys, numpy as np; print(int(np.argmax(np.load(sys.argv[1]))))' "$models/cnn.output_0.npy")
    [ "$top" = "$want" ] && ok || fail "classify: top class $top, ONNX Runtime's is $want"
  fi
  exit_is 1 "classify bad model" "$ex" "$models/cnn.onnx" "$models/cnn.input_0.npy"
else
  fail "examples/classify was not built"
fi

# ---- run --profile: every step timed, as many as inspect lists ---------------------------
if have_numpy; then
  check "run --profile --json" "$cli" run "$tmp/cnn.so" --bench 3 --profile --json
  "$py" - "$tmp/out" "$tmp/cnn.so" "$cli" <<'PYEOF' && ok || fail "run --profile: a step missing or untimed"
import json, subprocess, sys
r = json.load(open(sys.argv[1]))
steps = json.loads(subprocess.run([sys.argv[3], "inspect", sys.argv[2], "--json"], capture_output=True, check=True).stdout)["nsteps"]
p = r["profile"]
assert len(p) == steps and steps > 0
assert all(s["ms"] >= 0 and s["function"] for s in p) and sum(s["ms"] for s in p) > 0
assert r["latency_ms"]["median"] > 0
PYEOF
  check "run --profile (text)" "$cli" run "$tmp/cnn.so" --profile
  grep -q '^profile (mean ms per run' "$tmp/out" && ok || fail "run --profile: no profile table"
fi

echo "test_compile_run: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
