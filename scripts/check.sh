#!/bin/sh
# check.sh: builds mlc-onnx and runs the whole test suite, twice: a normal
# build (build/) and one with AddressSanitizer + UndefinedBehaviorSanitizer
# (build-san/), then runs each libFuzzer target of fuzz/ for FUZZ_SECONDS
# (default 30) in build-fuzz/ (scripts/fuzz.sh).  Ends with one line
# "total: N passed, N failed".  SANITIZERS=0 skips the sanitizer build,
# FUZZ=0 the fuzz run.
#
# To keep CI within 30 minutes the sanitizer build's run leaves out two
# passes over the ONNX node suite that the normal build makes (with the GPU
# schedules, and `inspect` of each model; the suite's main run stays), and
# its large-chain model has 10000 nodes instead of 50000; SANITIZERS=full
# runs it whole, as `make check` in that build does.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh || exit 1
autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
status=0
run_build() { # dir, configure args...; $skip: tests to leave out
  dir=$1; shift
  mkdir -p "$dir"
  ( cd "$dir" && "$top/configure" -q "$@" >configure.out 2>&1 ) || { cat "$dir/configure.out"; return 1; }
  make -C "$dir" -j"$jobs" >"$dir/make.out" 2>&1 || { tail -50 "$dir/make.out"; return 1; }
  if [ -n "$skip" ]; then
    for t in $skip; do rm -f "$dir/$t.log" "$dir/$t.trs"; done # not counted from an earlier run
    tests=$(make -s -C "$dir" print-tests | tr ' ' '\n' | grep -v -x -F "$skip" | tr '\n' ' ')
    make -C "$dir" -j"$jobs" check TESTS="$tests" >"$dir/check.out" 2>&1
  else
    make -C "$dir" -j"$jobs" check >"$dir/check.out" 2>&1
  fi
  rc=$?
  grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP):' "$dir/check.out"
  [ $rc -eq 0 ] || { grep -h -B2 -A20 -E 'FAILED|failed|ERROR|Sanitizer' $(find "$dir/tests" -name '*.log') 2>/dev/null | tail -80; }
  return $rc
}
echo "== build + make check"
skip= && run_build build || status=1
logs=$(find build/tests -name '*.log' ! -name test-suite.log 2>/dev/null | sort)
if [ "${SANITIZERS:-1}" != 0 ]; then
  echo "== build + make check with -fsanitize=address,undefined"
  if [ "${SANITIZERS:-1}" != full ]; then
    skip="tests/conformance/run_gpu_schedule.sh
tests/cli/conformance_inspect.sh"
    MLC_LARGE_CHAIN_NODES=${MLC_LARGE_CHAIN_NODES:-10000}
    export MLC_LARGE_CHAIN_NODES
  fi
  run_build build-san --enable-sanitizers || status=1
  logs="$logs $(find build-san/tests -name '*.log' ! -name test-suite.log 2>/dev/null | sort)"
fi
if [ "${FUZZ:-1}" != 0 ]; then
  echo "== fuzz targets, ${FUZZ_SECONDS:-30} s each (scripts/fuzz.sh, build-fuzz/)"
  scripts/fuzz.sh "${FUZZ_SECONDS:-30}" || status=1
  logs="$logs $(find build-fuzz/fuzz -maxdepth 1 -name '*.log' 2>/dev/null | sort)"
fi
# shellcheck disable=SC2086
tests/summary.sh $logs || status=1
exit $status
