#!/bin/sh
# test_tune.sh: `mlc-onnx tune` and `compile --tune-log` from the command
# line, on the bundled mlp and cnn with a few trials and a fixed seed: the
# log's records, compile applying them (outputs against ONNX Runtime's,
# inspect marking the tuned kernels), a resumed run, corrupt and stale log
# lines reported rather than fatal, and the same seed proposing the same
# candidates.  Timings are never asserted (they belong to bench reports).
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
exit_is() { want=$1 desc=$2; shift 2; "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; if [ "$rc" -eq "$want" ]; then ok; else fail "$desc: exit $rc, expected $want"; fi; }
have_numpy() { "$py" -c 'import numpy' 2>/dev/null; }
close() { # close OUT.npy REF.npy: rtol 1e-3, atol 1e-4
  "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-3,atol=1e-4) else 1)' "$1" "$2"
}
# quick measurements: the test checks what is recorded, not how fast
quick="--seed 7 --min-ms 0.2 --repeats 3 --jobs 2"

# ---- usage ------------------------------------------------------------------------------
exit_is 0 "tune --help" "$cli" tune --help
grep -q -- '--trials N' "$tmp/out" && ok || fail "tune --help: no --trials"
exit_is 2 "tune without -o" "$cli" tune "$models/mlp.onnx"
exit_is 2 "tune --budget nonsense" "$cli" tune "$models/mlp.onnx" -o "$tmp/x.tune" --budget 10q
exit_is 2 "tune --trials 0" "$cli" tune "$models/mlp.onnx" -o "$tmp/x.tune" --trials 0
exit_is 1 "tune a missing model" "$cli" tune "$tmp/none.onnx" -o "$tmp/x.tune" --trials 2
exit_is 1 "compile --tune-log of a missing log" "$cli" compile "$models/mlp.onnx" -o "$tmp/x.so" --tune-log "$tmp/none.tune"

# ---- tune, then compile with the log --------------------------------------------------------
for m in mlp cnn; do
  check "tune $m" "$cli" tune "$models/$m.onnx" -o "$tmp/$m.tune" --trials 16 $quick
  grep -q '^\[tune\] done' "$tmp/err" && ok || fail "tune $m: no summary line"
  n=$(grep -c '"v":1' "$tmp/$m.tune")
  [ "$n" -ge 2 ] && ok || fail "tune $m: $n records in the log"
  # every line a record with the key fields, one default per task at least
  [ "$(grep -c '"task":"[0-9a-f]\{16\}".*"target":"llvm' "$tmp/$m.tune")" -eq "$(wc -l <"$tmp/$m.tune")" ] && ok ||
    fail "tune $m: a record without its task hash and target"
  grep -q '"default":true' "$tmp/$m.tune" && ok || fail "tune $m: no default record"
  grep -q 'sample_categorical' "$tmp/$m.tune" && ok || fail "tune $m: no trace with recorded decisions"
  if have_numpy; then
    "$py" -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/$m.tune" && ok ||
      fail "tune $m: a log line is not JSON"
  fi
  check "compile $m --tune-log" "$cli" compile "$models/$m.onnx" -o "$tmp/$m.so" --tune-log "$tmp/$m.tune"
  grep -q 'tuned schedules for [1-9][0-9]* of' "$tmp/err" && ok || fail "compile $m --tune-log: no kernel tuned"
  check "inspect tuned $m" "$cli" inspect "$tmp/$m.so"
  grep -q ' tuned' "$tmp/out" && ok || fail "inspect $m: no kernel marked tuned"
  check "inspect tuned $m --json" "$cli" inspect "$tmp/$m.so" --json
  grep -q '"tuned_kernels": \["' "$tmp/out" && ok || fail "inspect $m --json: no tuned_kernels"
  check "run tuned $m" "$cli" run "$tmp/$m.so" --input "$models/$m.input_0.npy" --output-dir "$tmp/$m.out"
  if have_numpy; then
    close "$tmp/$m.out/output_0.npy" "$models/$m.output_0.npy" && ok || fail "tuned $m: output differs from ONNX Runtime's"
  fi
  # the same log gives the same library
  check "compile $m --tune-log again" "$cli" compile "$models/$m.onnx" -o "$tmp/$m.again.so" --tune-log "$tmp/$m.tune"
  cmp -s "$tmp/$m.so" "$tmp/$m.again.so" && ok || fail "compile $m --tune-log: not reproducible"
done

# ---- resume: the log's records count; more trials add records ---------------------------------
check "tune mlp, nothing left" "$cli" tune "$models/mlp.onnx" -o "$tmp/mlp.tune" --trials 2 $quick
grep -q 'nothing to do' "$tmp/err" && ok || fail "tune resumed with fewer trials than the log: not reported"
before=$(wc -l <"$tmp/mlp.tune")
check "tune mlp, resumed" "$cli" tune "$models/mlp.onnx" -o "$tmp/mlp.tune" --trials 24 $quick
grep -q "($before records read)" "$tmp/err" && ok || fail "tune resumed: the log was not read"
[ "$(wc -l <"$tmp/mlp.tune")" -gt "$before" ] && ok || fail "tune resumed: no records added"

# ---- Ctrl-C: the search stops, what was measured is in the log ------------------------------
"$cli" tune "$models/cnn.onnx" -o "$tmp/int.tune" --trials 100000 $quick >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q '^\[tune\] [0-9]*/100000 trials' "$tmp/int.err"; do sleep 0.2; i=$((i + 1)); done
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
if ! grep -q '^\[tune\] done' "$tmp/int.err"; then
  fail "tune interrupted: no summary"
elif [ $rc -ne 0 ]; then
  fail "tune interrupted: exit $rc"
else
  ok
fi
grep -q '^\[tune\] done' "$tmp/int.err" && [ -s "$tmp/int.tune" ] && ok || fail "tune interrupted: nothing in the log"
[ -z "$(tail -c 1 "$tmp/int.tune" | tr -d '\n')" ] && ok || fail "tune interrupted: a partial last line"

# ---- corrupt and stale lines: reported, skipped ----------------------------------------------
cp "$tmp/mlp.tune" "$tmp/bad.tune"
printf '{not json\n{"v": 99, "task": "x"}\n' >>"$tmp/bad.tune"
check "compile with a corrupt log line" "$cli" compile "$models/mlp.onnx" -o "$tmp/bad.so" --tune-log "$tmp/bad.tune"
grep -q "bad.tune:$((before + 1 + $(wc -l <"$tmp/mlp.tune") - before)):.*not JSON" "$tmp/err" && ok ||
  fail "a corrupt log line: not reported with its line"
grep -q 'another log version' "$tmp/err" && ok || fail "a record of another version: not reported"
check "tune with a corrupt log line" "$cli" tune "$models/mlp.onnx" -o "$tmp/bad.tune" --trials 2 $quick
grep -q 'warning: .*not JSON' "$tmp/err" && ok || fail "tune: a corrupt log line not reported"
# a record that no longer replays (an unknown primitive) and claims to be fastest
if have_numpy; then
  "$py" - "$tmp/mlp.tune" "$tmp/stale.tune" <<'PYEOF' && ok || fail "could not build a stale log"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
out = open(sys.argv[2], "w")
for r in recs:
    out.write(json.dumps(r) + "\n")
for r in recs:
    if r["ms"]:
        r = dict(r, ms=1e-9, validated=True, trace=r["trace"] + "sch.no_such_primitive()\n")
        out.write(json.dumps(r) + "\n")
PYEOF
  check "compile with a stale record" "$cli" compile "$models/mlp.onnx" -o "$tmp/stale.so" --tune-log "$tmp/stale.tune"
  grep -q 'does not replay' "$tmp/err" && ok || fail "a record that does not replay: not reported"
  check "run stale" "$cli" run "$tmp/stale.so" --input "$models/mlp.input_0.npy" --output-dir "$tmp/stale.out"
  close "$tmp/stale.out/output_0.npy" "$models/mlp.output_0.npy" && ok || fail "stale record: output differs"
fi

# ---- a log written by another version of the default rules ------------------------------------
# its default records (another candidate poses as one here) are candidates
# like the others: the current default is measured and compared side by
# side again, and compile takes the last comparison's best.  The log's
# times are made 100 times slower (measured on a slower day): the current
# default is then faster than all of them, and is still compared
if have_numpy; then
  "$py" - "$tmp/mlp.tune" "$tmp/olddef.tune" <<'PYEOF' && ok || fail "could not build a log of other defaults"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
swapped = set()
for r in recs:  # per task: the default is no longer one; another measured candidate poses as it
    if r["default"]:
        r["default"] = False
for r in recs:
    if r["ms"] and r["ms"] > 0:
        r["ms"] *= 100
    if r["ms"] and r["decisions"] and r["task"] not in swapped:
        r["default"] = True
        swapped.add(r["task"])
assert swapped
with open(sys.argv[2], "w") as out:
    for r in recs:
        out.write(json.dumps(r) + "\n")
PYEOF
  n0=$(wc -l <"$tmp/olddef.tune")
  check "tune with a log of other defaults" "$cli" tune "$models/mlp.onnx" -o "$tmp/olddef.tune" --trials "$n0" $quick
  grep -q 'default schedule changed since the log was written' "$tmp/err" && ok ||
    fail "tune: a log of other defaults not reported"
  grep -q 'side by side' "$tmp/err" && ok || { fail "tune: the new default not compared side by side"; grep '^\[tune\]' "$tmp/err" | tail -5; }
  tail -n +"$((n0 + 1))" "$tmp/olddef.tune" | grep -q '"default":true' && ok || fail "tune: the new default not recorded"
  check "compile with the re-validated log" "$cli" compile "$models/mlp.onnx" -o "$tmp/olddef.so" --tune-log "$tmp/olddef.tune"
  check "run re-validated" "$cli" run "$tmp/olddef.so" --input "$models/mlp.input_0.npy" --output-dir "$tmp/olddef.out"
  close "$tmp/olddef.out/output_0.npy" "$models/mlp.output_0.npy" && ok || fail "re-validated mlp: output differs"
fi

# ---- the same seed proposes the same candidates ----------------------------------------------
# (the first round's: ranked at random before the model has samples, so
# independent of the measured times)
for r in 1 2; do
  check "tune seeded $r" "$cli" tune "$models/mlp.onnx" -o "$tmp/seed$r.tune" --trials 10 $quick
  grep -o '"decisions":\[[0-9,]*\]' "$tmp/seed$r.tune" | head -n 10 >"$tmp/dec$r"
done
[ -s "$tmp/dec1" ] && cmp -s "$tmp/dec1" "$tmp/dec2" && ok || fail "the same seed proposed other candidates"
check "tune another seed" "$cli" tune "$models/mlp.onnx" -o "$tmp/seed3.tune" --trials 10 --seed 8 --min-ms 0.2 --repeats 3
grep -o '"decisions":\[[0-9,]*\]' "$tmp/seed3.tune" | head -n 10 >"$tmp/dec3"
cmp -s "$tmp/dec1" "$tmp/dec3" && fail "another seed proposed the same candidates" || ok

# ---- the same seed and log make the same choices, over the whole search ----------------------
# With MLC_TUNE_TEST_TIMES a candidate's time is a function of its trace, so
# two runs see the same times: every later round (mutations of the best,
# the cost model's ranking, the side-by-side validation) must then repeat.
# Both runs resume from the same log.
choices() { grep -o '"task":"[0-9a-f]*"\|"decisions":\[[0-9,]*\]\|"ms":[0-9.e+-]*' "$1" | tr '\n' ' '; }
check "tune seeded, first part" env MLC_TUNE_TEST_TIMES=1 "$cli" tune "$models/cnn.onnx" -o "$tmp/part.tune" \
  --trials 24 $quick
for r in 1 2; do
  cp "$tmp/part.tune" "$tmp/whole$r.tune"
  check "tune seeded, resumed $r" env MLC_TUNE_TEST_TIMES=1 "$cli" tune "$models/cnn.onnx" -o "$tmp/whole$r.tune" \
    --trials 64 $quick
  grep 'cost model' "$tmp/err" >"$tmp/model$r"
done
[ "$(wc -l <"$tmp/whole1.tune")" -gt "$(wc -l <"$tmp/part.tune")" ] && ok || fail "tune seeded: nothing added"
[ "$(choices "$tmp/whole1.tune")" = "$(choices "$tmp/whole2.tune")" ] && ok ||
  fail "the same seed and log gave other choices"
grep -q 'cost model against the measurements, over the [1-9][0-9]* rounds' "$tmp/model1" && ok ||
  fail "tune: no ranking quality of the cost model in the summary"
cmp -s "$tmp/model1" "$tmp/model2" && ok || fail "the same seed and log: the cost model ranked otherwise"
cp "$tmp/part.tune" "$tmp/other.tune"
check "tune another seed, resumed" env MLC_TUNE_TEST_TIMES=1 "$cli" tune "$models/cnn.onnx" -o "$tmp/other.tune" \
  --trials 64 --seed 8 --min-ms 0.2 --repeats 3 --jobs 2
[ "$(choices "$tmp/whole1.tune")" != "$(choices "$tmp/other.tune")" ] && ok ||
  fail "another seed made the same choices"
check "compile seeded 1" "$cli" compile "$models/cnn.onnx" -o "$tmp/w1.so" --tune-log "$tmp/whole1.tune"
check "compile seeded 2" "$cli" compile "$models/cnn.onnx" -o "$tmp/w2.so" --tune-log "$tmp/whole2.tune"
cmp -s "$tmp/w1.so" "$tmp/w2.so" && ok || fail "the same seed and log: other libraries"

echo "test_tune: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
