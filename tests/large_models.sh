#!/bin/sh
# large_models.sh: compiles the six reference models of the shared bench
# (mlp, squeezenet1_1, mobilenet_v2, resnet18, resnet50, encoder), runs each on
# its input and compares with ONNX Runtime's output (rtol 1e-3, atol 1e-4).
#
#   tests/large_models.sh [BENCH_MODELS_DIR]
#
# BENCH_MODELS_DIR defaults to ../shared/bench/work/models (made by the
# bench's setup.sh and make_models.py).  MLC_COMPILE_FLAGS adds options to
# every compile (e.g. "--extern onednn").  Prints a table with compile time,
# .so size, weights size and the max error, and ends with
# "large_models: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/../shared/bench/work/models}
cli=${MLC_CLI:-$top/mlc-onnx}
py=${PYTHON_ONNX:-/usr/bin/python3}
[ -d "$dir" ] || { echo "large_models: no models in $dir (run the bench's setup.sh and make_models.py)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0; fail=0
printf '%-14s %9s %10s %10s %12s  %s\n' model compile_s so_bytes weights max_abs_err result
for m in mlp squeezenet1_1 mobilenet_v2 resnet18 resnet50 encoder; do
  onnx=$dir/$m.onnx
  if [ ! -f "$onnx" ]; then echo "$m: missing $onnx"; fail=$((fail + 1)); continue; fi
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  if ! "$cli" compile "$onnx" -o "$work/$m.so" ${MLC_COMPILE_FLAGS:-} >"$work/$m.compile.log" 2>&1; then
    echo "$m: compile failed:"; tail -5 "$work/$m.compile.log"; fail=$((fail + 1)); continue
  fi
  t1=$(date +%s.%N)
  if ! "$cli" run "$work/$m.so" --input "$dir/$m/input_0.npy" --output-dir "$work/$m.out" >"$work/$m.run.log" 2>&1; then
    echo "$m: run failed:"; tail -5 "$work/$m.run.log"; fail=$((fail + 1)); continue
  fi
  res=$("$py" -c '
import sys, numpy as np
a = np.load(sys.argv[1]); e = np.load(sys.argv[2])
ok = a.shape == e.shape and np.allclose(a, e, rtol=1e-3, atol=1e-4)
err = float(np.max(np.abs(a.astype(np.float64) - e))) if a.shape == e.shape else float("inf")
print("%.3g %s" % (err, "PASS" if ok else "FAIL"))' "$work/$m.out/output_0.npy" "$dir/$m/output_0.npy")
  wbytes=$("$py" -c '
import sys, onnx
m = onnx.load(sys.argv[1]); import numpy as np
from onnx import numpy_helper
print(sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer))' "$onnx")
  printf '%-14s %9.2f %10d %10d %12s  %s\n' "$m" "$(awk "BEGIN {print $t1 - $t0}")" \
    "$(stat -c %s "$work/$m.so")" "$wbytes" ${res% *} ${res#* }
  case "$res" in *PASS) pass=$((pass + 1));; *) fail=$((fail + 1));; esac
done
echo "large_models: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
