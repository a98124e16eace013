#!/bin/sh
# faults.sh [PROGRAM...]: fault injection over the unit suites (SQLite's
# and Lua's way).  For each test of each program (default: the suites
# below), a counting run finds K, the allocations the test makes; then the
# test is rerun with MLC_FAIL_ALLOC=N (tests/testutil.c fails the Nth
# allocation) for N = 1, 1 + S, 1 + 2S, ... up to K, where the stride S
# keeps a test to at most $FAULT_RUNS runs (default 24; S = 1 covers every
# N), and once more with N+ (that allocation and every later one fails) at
# N = 1 and N = K / 2.  Failed test assertions are expected there; a run
# fails when it crashes, aborts, hangs (over $FAULT_TIMEOUT seconds, default
# 60), prints a sanitizer report (leaks included, in a sanitizer build) or
# does not finish.  test_legalize, which generates code with LLVM, runs the
# subset in FAULT_LLVM_TESTS below; test_vectorize its suite without LLVM.  Prints one line per program
# (N range, stride, runs, seconds) and the failures with their output, and
# ends with "faults: N passed, N failed", counting tests.
set -u
builddir=${MLC_BUILDDIR:-.}
runs_cap=${FAULT_RUNS:-24}
tmo=${FAULT_TIMEOUT:-60}
progs="$*"
[ -n "$progs" ] || progs="test_base test_onnx test_graph test_infer test_frontend test_tir test_arith test_visit test_vectorize test_legalize test_runtime"
# test_legalize compiles and runs kernels with LLVM (a second or more a
# run): only these of its tests run here.  Slow tests (its legalize_numeric
# ones, the fuzz corpus of test_onnx, and test_runtime's loader/flipped_so,
# which checks thousands of mutated model files a run) take at most
# $FAULT_SLOW_RUNS runs (default 6).  loader/flipped_so (40 s a run in a
# sanitizer build) makes the same allocations for each of its thousands of
# files: it runs once failing the first and N+ at 1 and K/2.
FAULT_LLVM_TESTS=${FAULT_LLVM_TESTS:-"legalize_pass/dedup legalize_pass/unimplemented legalize_numeric/matmul legalize_numeric/softmax"}
slow_cap=${FAULT_SLOW_RUNS:-6}
# A failing allocation aborts nothing by itself: make the sanitizers' exits
# distinct from the driver's (0 = ran; 2 = bad usage).
ASAN_OPTIONS="exitcode=86:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
LSAN_OPTIONS="exitcode=86${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
UBSAN_OPTIONS="halt_on_error=1:exitcode=86${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
out=$(mktemp)
trap 'rm -f "$out"' EXIT
passed=0; failed=0
# run PROG TEST N: 0 when the run ended cleanly; leaves its output in $out.
run() {
  MLC_TEST_ONLY=$2 MLC_FAIL_ALLOC=$3 timeout "$tmo" "$builddir/tests/unit/$1" >"$out" 2>&1
  rc=$?
  [ $rc -eq 0 ] && grep -q '^mlc-fault: ' "$out" &&
    ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|Sanitizer:DEADLYSIGNAL' "$out"
}
for p in $progs; do
  prog="$builddir/tests/unit/$p"
  [ -x "$prog" ] || { echo "$p: not built here, skipped"; continue; }
  tests=$(MLC_TEST_LIST=1 "$prog") || { echo "$p: cannot list tests"; failed=$((failed + 1)); continue; }
  case $p in
    test_legalize) tests=$FAULT_LLVM_TESTS ;;
    test_vectorize) tests=$(echo "$tests" | grep '^vectorize/') ;; # not the LLVM suite vectorize_run
  esac
  start=$(date +%s); nruns=0; kmax=0; smax=1; pf=0; pp=0
  for t in $tests; do
    MLC_TEST_ONLY=$t MLC_FAIL_ALLOC=999999999999 "$prog" >"$out" 2>&1
    k=$(sed -n 's/^mlc-fault: .* not reached (\([0-9]*\) allocations)$/\1/p' "$out")
    if [ -z "$k" ]; then
      echo "FAIL: $p $t: the counting run did not finish"; tail -20 "$out"; pf=$((pf + 1)); continue
    fi
    [ "$k" -gt "$kmax" ] && kmax=$k
    cap=$runs_cap
    case $t in legalize_numeric/*|onnx_malformed/fuzz) cap=$slow_cap ;; loader/flipped_so) cap=1 ;; esac
    s=$(( (k + cap - 1) / cap )); [ $s -ge 1 ] || s=1
    [ $s -gt "$smax" ] && smax=$s
    ok=1; n=1
    set --
    while [ $n -le "$k" ]; do set -- "$@" $n; n=$((n + s)); done
    [ "$k" -ge 1 ] && set -- "$@" "1+" "$(( (k + 1) / 2 ))+"
    for n in "$@"; do
      nruns=$((nruns + 1))
      if ! run "$p" "$t" "$n"; then
        echo "FAIL: $p $t MLC_FAIL_ALLOC=$n (exit $rc)"
        grep -v '^$' "$out" | grep -vE '^ +(suites|tests|asserts) |^Run Summary|^Elapsed' | head -40
        ok=0; break
      fi
    done
    if [ $ok -eq 1 ]; then pp=$((pp + 1)); else pf=$((pf + 1)); fi
  done
  echo "$p: N = 1..$kmax (stride up to $smax, N+ at 1 and K/2), $nruns runs, $(( $(date +%s) - start )) s: $pp tests passed, $pf failed"
  passed=$((passed + pp)); failed=$((failed + pf))
done
echo "faults: $passed passed, $failed failed"
[ $failed -eq 0 ]
