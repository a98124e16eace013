#!/bin/bash
# gpu_serve_check.sh: the inference server on a GPU, in two halves.
#
#   scripts/gpu_serve_check.sh prepare MODELS OUT   (here: mlc-onnx, mlc-serve built)
#       compiles MODELS/{mobilenet_v2,encoder}.onnx for --target cuda and puts
#       into OUT the models, binary-extension request bodies made from their
#       reference inputs (MODELS/NAME/input_0.npy) with the reference outputs
#       beside them, mlc-serve with the shared libraries it needs
#       (libmicrohttpd, jansson and theirs; not the C library), mlc-run, and
#       the load generator bench/serve_load.c built here.
#   scripts/gpu_serve_check.sh run OUT [SECONDS]    (the GPU machine: libc, python3 with numpy)
#       starts mlc-serve on both models (2 sessions each, so two CUDA
#       sessions of a model run at once), checks one answer per model against
#       the reference (max |err| <= 1e-4 + 1e-3 |ref|, as tests/large_models.sh),
#       drives each with serve_load at 1, 4 and 16 connections for SECONDS
#       (default 5) with every answer compared with the first, prints
#       requests/s and latency beside mlc-run's in-process latency, and
#       checks that SIGTERM ends the server with status 0.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
case "$mode" in
prepare)
  models=${2:?usage: gpu_serve_check.sh prepare MODELS OUT}
  out=${3:?usage: gpu_serve_check.sh prepare MODELS OUT}
  cli=${MLC_CLI:-$here/build/mlc-onnx}
  py=${PYTHON_ONNX:-/usr/bin/python3}
  mkdir -p "$out/lib" || exit 1
  for p in mlc-serve mlc-run; do
    f=$here/build/$p
    [ -x "$(dirname "$f")/.libs/$p" ] && f=$(dirname "$f")/.libs/$p
    cp "$f" "$out/$p" || exit 1
  done
  ldd "$out/mlc-serve" | awk '$3 ~ /^\// {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|ld-linux[^/]*)\.so' |
    while read -r l; do cp -L "$l" "$out/lib/"; done
  cc -O2 -pthread -o "$out/serve_load" "$here/bench/serve_load.c" -lm || exit 1
  for m in mobilenet_v2 encoder; do
    "$cli" compile "$models/$m.onnx" -o "$out/$m.so" --target cuda -q || exit 1
    rm -f "$out/$m.h"
    cp "$models/$m/input_0.npy" "$out/$m.input.npy" && cp "$models/$m/output_0.npy" "$out/$m.ref.npy" || exit 1
    "$cli" inspect "$out/$m.so" --json >"$out/$m.sig.json" || exit 1
    "$py" - "$out/$m.sig.json" "$out/$m.input.npy" "$out/$m.bin" <<'PY' || exit 1
import json, sys, numpy as np
sig = json.load(open(sys.argv[1]))
x = np.load(sys.argv[2]).astype(np.float32)
head = json.dumps({"inputs": [{"name": sig["inputs"][0]["name"], "datatype": "FP32", "shape": list(x.shape),
                               "parameters": {"binary_data_size": x.nbytes}}],
                   "parameters": {"binary_data_output": True}}).encode()
open(sys.argv[3], "wb").write(head + x.tobytes())
open(sys.argv[3] + ".hlen", "w").write(str(len(head)))
PY
  done
  echo "gpu_serve_check: prepared $out"
  ;;
run)
  out=$(cd "${2:?usage: gpu_serve_check.sh run OUT [SECONDS]}" && pwd) || exit 1
  secs=${3:-5}
  cd "$out" || exit 1
  libs=$out/lib
  for d in /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64 /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib; do
    [ -d "$d" ] && libs=$libs:$d
  done
  export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  py=python3
  python3 -c 'import numpy' 2>/dev/null || for p in /opt/*/.venv/bin/python3; do [ -x "$p" ] && py=$p; done
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  fail=0
  for m in mobilenet_v2 encoder; do
    echo "in-process $m: $(./mlc-run "$m.so" --input "$m.input.npy" --bench 200 --json 2>&1 | tr -d '\n' | sed 's/.*"latency_ms"/latency_ms/')"
  done
  ./mlc-serve mobilenet_v2.so encoder.so --port 0 --sessions 2 --threads 1 --access-log off >server.out 2>server.err &
  spid=$!
  url=""
  for _ in $(seq 1 300); do
    url=$(sed -n 's|^mlc-serve: listening on \(http://[^ ]*\)$|\1|p' server.out)
    [ -n "$url" ] && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then echo "gpu_serve_check: the server did not start: $(cat server.err)"; exit 1; fi
  cat server.err
  for m in mobilenet_v2 encoder; do
    "$py" - "$url/v2/models/$m/infer" "$m.bin" "$m.ref.npy" <<'PY' || fail=1
import json, sys, urllib.request, numpy as np
url, body, ref = sys.argv[1:]
data = open(body, "rb").read()
hlen = open(body + ".hlen").read()
r = urllib.request.urlopen(urllib.request.Request(url, data=data, headers={
    "Inference-Header-Content-Length": hlen, "Content-Type": "application/octet-stream"}), timeout=60)
raw = r.read()
hl = int(r.headers["Inference-Header-Content-Length"])
o = json.loads(raw[:hl])["outputs"][0]
y = np.frombuffer(raw[hl:hl + o["parameters"]["binary_data_size"]], "<f4").reshape(o["shape"])
e = np.load(ref)
err = np.abs(y - e)
ok = y.shape == e.shape and bool(np.all(err <= 1e-4 + 1e-3 * np.abs(e)))
print("%s: answer %s, max |err| %.3g" % (url.split("/")[-2], "matches" if ok else "DIFFERS", err.max()))
sys.exit(0 if ok else 1)
PY
    for c in 1 4 16; do
      printf '%s connections %2d: ' "$m" "$c"
      ./serve_load --url "$url/v2/models/$m/infer" --body "$m.bin" --header "Inference-Header-Content-Length: $(cat "$m.bin.hlen")" \
        --header "Content-Type: application/octet-stream" --connections "$c" --duration "$secs" --warmup 10 --check-same --json ||
        fail=1
      echo
    done
  done
  kill -TERM "$spid"
  wait "$spid"
  rc=$?
  echo "server exit status after SIGTERM: $rc"
  [ "$rc" -eq 0 ] || fail=1
  echo "gpu_serve_check: $([ $fail -eq 0 ] && echo ok || echo FAILED)"
  exit $fail
  ;;
*)
  echo "usage: gpu_serve_check.sh prepare MODELS OUT | run OUT [SECONDS]" >&2
  exit 2
  ;;
esac
