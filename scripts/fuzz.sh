#!/bin/sh
# fuzz.sh [SECONDS] [TARGET...]: builds the libFuzzer targets of fuzz/ in
# build-fuzz/ (configure --enable-fuzzing CC=clang-19; ASan + UBSan) if
# needed and runs each target (default: all) for SECONDS (default 60; 0 = no
# time limit) on its seed corpus.  Prints "PASS: fuzz/TARGET" or
# "FAIL: fuzz/TARGET" per target and exits 1 if any target found a crash, a
# leak, a timeout or ran out of memory.
#
# The targets run as many at a time as there are CPUs (at least 2).
# Per target, in build-fuzz/fuzz/: work/TARGET/ is the working corpus
# (started from the committed fuzz/corpus/TARGET/ and the folders named in
# fuzz/TARGET.seeds, which are never written),
# artifacts/TARGET/ holds the crashing inputs, TARGET.out libFuzzer's output
# and TARGET.log the summary line tests/summary.sh counts (TARGET.report:
# what this script prints of it).
# Env: FUZZ_ARGS adds libFuzzer options (e.g. FUZZ_ARGS=-runs=10000000 with
# SECONDS 0 for a long run; add -fork=1 -ignore_crashes=1 to keep going past
# crashes and collect them all in artifacts/), FUZZ_CC the compiler (default clang-19),
# FUZZ_BUILD the build folder (default build-fuzz).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
secs=${1:-60}
[ $# -gt 0 ] && shift
bdir=${FUZZ_BUILD:-build-fuzz}
cc=${FUZZ_CC:-clang-19}

command -v "$cc" >/dev/null 2>&1 || { echo "fuzz.sh: $cc not found (install clang-19 libclang-rt-19-dev)"; exit 1; }
[ -x configure ] || autoreconf -fi >/dev/null 2>&1 || { echo "fuzz.sh: autoreconf failed"; exit 1; }
mkdir -p "$bdir/fuzz"
if [ ! -f "$bdir/Makefile" ]; then
  ( cd "$bdir" && "$top/configure" -q --enable-fuzzing CC="$cc" >configure.out 2>&1 ) ||
    { cat "$bdir/configure.out"; exit 1; }
fi
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 2 ] 2>/dev/null || jobs=2
make -C "$bdir" -j"$jobs" fuzz-targets >"$bdir/fuzz/make.out" 2>&1 ||
  { tail -50 "$bdir/fuzz/make.out"; exit 1; }

targets=$*
if [ -z "$targets" ]; then
  targets=$(make -s -C "$bdir" print-fuzz-targets)
  rm -f "$bdir"/fuzz/*.log # a run of all targets leaves only their lines
fi
targets=$(echo "$targets" | sed 's|fuzz/||g') # names as the targets' own
# run_one TARGET: one target's run; its verdict in $bdir/fuzz/TARGET.log,
# what to print in $bdir/fuzz/TARGET.report
run_one() {
  t=$1
  exe="$bdir/fuzz/$t"
  seeds="fuzz/corpus/$t"
  work="$bdir/fuzz/work/$t"
  art="$bdir/fuzz/artifacts/$t"
  out="$bdir/fuzz/$t.out"
  log="$bdir/fuzz/$t.log"
  if [ ! -x "$exe" ] || [ ! -d "$seeds" ]; then
    echo "FAIL: fuzz/$t"
    echo "fuzz.sh: no target $exe or no seed corpus $seeds"
    echo "$t.fuzz: 0 passed, 1 failed" >"$log"
    return
  fi
  mkdir -p "$work" "$art"
  # More seed folders of the tree (read, never written): fuzz/TARGET.seeds.
  extra=""
  [ -f "fuzz/$t.seeds" ] && extra=$(cat "fuzz/$t.seeds")
  dict=""
  [ -f "fuzz/$t.dict" ] && dict="-dict=fuzz/$t.dict"
  # Detect leaks and report UBSan findings as crashes (the build stops on
  # the first one); libFuzzer's own limits: 30 s per input (constant
  # folding may take seconds under ASan on a loaded machine), 2 GiB RSS.
  # shellcheck disable=SC2086
  ASAN_OPTIONS="intercept_tls_get_addr=0:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    "$exe" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$art/" $dict ${FUZZ_ARGS:-} \
      "$work" "$seeds" $extra >"$out" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n 1)
  if [ $rc -eq 0 ]; then
    echo "PASS: fuzz/$t"
    echo "$t.fuzz: 1 passed, 0 failed (${runs:-?} inputs in ${secs}s)" >"$log"
  else
    echo "FAIL: fuzz/$t"
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written|^    #[0-9]' "$out" | head -40
    echo "$t.fuzz: 0 passed, 1 failed (exit $rc; artifacts in $art, output in $out)" >"$log"
  fi
}

# The targets run $jobs at a time (each is one process on one core), their
# reports printed in order once all are done.
status=0
running=0
for t in $targets; do
  run_one "$t" >"$bdir/fuzz/$t.report" 2>&1 &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait
    running=0
  fi
done
wait
for t in $targets; do
  cat "$bdir/fuzz/$t.report"
  grep -q ', 0 failed' "$bdir/fuzz/$t.log" 2>/dev/null || status=1
done
exit $status
