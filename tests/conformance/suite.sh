# suite.sh: sourced by the scripts that use the ONNX node test suite
# (tests/conformance/run.sh, tests/cli/conformance_inspect.sh).
#
#   ensure_suite NAME GENERATOR SUITE_DIR
#
# Generates the suite into SUITE_DIR with GENERATOR (shared/conformance/
# generate.sh) unless a complete one is there.  Only one generator runs at a
# time: the scripts share SUITE_DIR and the lock $MLC_BUILDDIR/.onnx-node-tests.lock,
# and whoever waited finds the suite complete.  Returns 0, or 99 when the
# generator failed.  NAME prefixes the progress lines.

suite_count_tests() { find "$1/" -mindepth 2 -maxdepth 2 -name model.onnx 2>/dev/null | wc -l; }
suite_complete() { [ -f "$1/.onnx-node-tests" ] && [ "$(suite_count_tests "$1")" -ge 922 ]; }

ensure_suite() {
  _name=$1 _gen=$2 _suite=$3
  suite_complete "$_suite" && return 0
  (
    if command -v flock >/dev/null 2>&1; then flock 9; fi
    if ! suite_complete "$_suite"; then
      echo "$_name: generating the node tests into $_suite"
      bash "$_gen" "$_suite" || exit 1
    fi
  ) 9>"$MLC_BUILDDIR/.onnx-node-tests.lock" || {
    echo "$_name: generate.sh failed"
    return 99
  }
}
