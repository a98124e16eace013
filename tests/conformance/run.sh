#!/bin/sh
# run.sh: the ONNX node conformance suite under `make check`.
#
# Generates the suite with shared/conformance/generate.sh (beside the source
# tree) into $MLC_BUILDDIR/onnx-node-tests unless a complete one is there
# (tests/cli/conformance_inspect.sh shares it; both generate under the lock
# $MLC_BUILDDIR/.onnx-node-tests.lock), then runs tests/conformance/runner on
# it: every test compiled, run and compared with its expected outputs.
# Results: $MLC_BUILDDIR/tests/conformance/results.txt
# ("test_name PASS|FAIL|SKIP [reason]").  Tests listed in
# tests/conformance/PASSING that no longer pass are regressions.
#
# Exit status: the runner's (0; 1 if a test crashed, timed out or
# regressed); 77 (skip) without the conformance folder.
# Environment: MLC_CONFORMANCE_DIR (the folder of generate.sh and ops.tsv,
# default: shared/conformance beside the source tree), MLC_CONFORMANCE_JOBS
# (parallel tests, default: online CPUs),
# MLC_CONFORMANCE_TIMEOUT (seconds per test, default 60),
# MLC_CONFORMANCE_ONLY (space-separated names or globs to run),
# MLC_CONFORMANCE_RESULTS (the results file).
set -u
here=$(cd "$(dirname "$0")" && pwd)
MLC_SRCDIR=${MLC_SRCDIR:-$(cd "$here/../.." && pwd)}
MLC_BUILDDIR=${MLC_BUILDDIR:-$(pwd)}
conf=${MLC_CONFORMANCE_DIR:-$MLC_SRCDIR/../shared/conformance}
gen=$conf/generate.sh
suite=$MLC_BUILDDIR/onnx-node-tests
runner=$MLC_BUILDDIR/tests/conformance/runner
results=${MLC_CONFORMANCE_RESULTS:-$MLC_BUILDDIR/tests/conformance/results.txt}
passing=$MLC_SRCDIR/tests/conformance/PASSING

if [ ! -f "$gen" ] || [ ! -f "$conf/ops.tsv" ]; then
  echo "conformance: SKIP: no conformance suite (shared/conformance beside the source tree, or MLC_CONFORMANCE_DIR)"
  exit 77
fi
if [ ! -x "$runner" ]; then
  echo "conformance: $runner is not built"
  echo "conformance: 0 passed, 1 failed"
  exit 1
fi

. "$MLC_SRCDIR/tests/conformance/suite.sh"
ensure_suite conformance "$gen" "$suite" || exit $?

mkdir -p "$(dirname "$results")" || exit 99
set -- "$suite" "$conf/ops.tsv" "$results"
[ -n "${MLC_CONFORMANCE_JOBS:-}" ] && set -- "$@" --jobs "$MLC_CONFORMANCE_JOBS"
[ -n "${MLC_CONFORMANCE_TIMEOUT:-}" ] && set -- "$@" --timeout "$MLC_CONFORMANCE_TIMEOUT"
[ -f "$passing" ] && set -- "$@" --passing "$passing"
if [ -n "${MLC_CONFORMANCE_ONLY:-}" ]; then
  set -f
  # shellcheck disable=SC2086
  set -- "$@" --only $MLC_CONFORMANCE_ONLY
  set +f
fi
"$runner" "$@"
rc=$?
# Every tier-1 test that does not pass must be explained in EXPECTED_FAILURES.
expected=$MLC_SRCDIR/tests/conformance/EXPECTED_FAILURES
if [ -z "${MLC_CONFORMANCE_ONLY:-}" ] && [ -f "$results" ]; then
  unexplained=$(awk -F'\t' 'FILENAME == ARGV[1] { if (FNR > 1 && $7 == 1) t1[$1] = 1; next }
                           FILENAME == ARGV[2] { split($0, e, " "); if ($0 !~ /^#/ && NF) ok[e[1]] = 1; next }
                           { split($0, f, " ") }
                           (f[1] in t1) && f[2] == "FAIL" && !(f[1] in ok) { print f[1] }' \
                  "$conf/ops.tsv" "$expected" "$results")
  if [ -n "$unexplained" ]; then
    echo "conformance: tier-1 failures missing from tests/conformance/EXPECTED_FAILURES:"
    echo "$unexplained" | sed 's/^/  /'
    echo "conformance: 0 passed, 1 failed"
    exit 1
  fi
fi
exit $rc
