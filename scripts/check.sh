#!/bin/sh
# check.sh: builds mlc-onnx and runs the whole test suite, twice: a normal
# build (build/) and one with AddressSanitizer + UndefinedBehaviorSanitizer
# (build-san/), then runs each libFuzzer target of fuzz/ for FUZZ_SECONDS
# (default 60) in build-fuzz/ (scripts/fuzz.sh).  Ends with one line
# "total: N passed, N failed".  SANITIZERS=0 skips the sanitizer build,
# FUZZ=0 the fuzz run.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh || exit 1
autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
status=0
run_build() { # dir, configure args...
  dir=$1; shift
  mkdir -p "$dir"
  ( cd "$dir" && "$top/configure" -q "$@" >configure.out 2>&1 ) || { cat "$dir/configure.out"; return 1; }
  make -C "$dir" -j"$jobs" >"$dir/make.out" 2>&1 || { tail -50 "$dir/make.out"; return 1; }
  make -C "$dir" -j"$jobs" check >"$dir/check.out" 2>&1
  rc=$?
  grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP):' "$dir/check.out"
  [ $rc -eq 0 ] || { grep -h -B2 -A20 -E 'FAILED|failed|ERROR|Sanitizer' $(find "$dir/tests" -name '*.log') 2>/dev/null | tail -80; }
  return $rc
}
echo "== build + make check"
run_build build || status=1
logs=$(find build/tests -name '*.log' ! -name test-suite.log 2>/dev/null | sort)
if [ "${SANITIZERS:-1}" != 0 ]; then
  echo "== build + make check with -fsanitize=address,undefined"
  run_build build-san --enable-sanitizers || status=1
  logs="$logs $(find build-san/tests -name '*.log' ! -name test-suite.log 2>/dev/null | sort)"
fi
if [ "${FUZZ:-1}" != 0 ]; then
  echo "== fuzz targets, ${FUZZ_SECONDS:-60} s each (scripts/fuzz.sh, build-fuzz/)"
  scripts/fuzz.sh "${FUZZ_SECONDS:-60}" || status=1
  logs="$logs $(find build-fuzz/fuzz -maxdepth 1 -name '*.log' 2>/dev/null | sort)"
fi
# shellcheck disable=SC2086
tests/summary.sh $logs || status=1
exit $status
