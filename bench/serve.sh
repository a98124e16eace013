#!/bin/sh
# serve.sh: requests per second and latency of the inference server.
#
#   bench/serve.sh [-c CLI] [-s SERVER] [--duration S] [--connections "C..."]
#                  [--warmup W] [-n ITERS] [--models DIR] [MODEL...]
#
# Compiles each MODEL of the repository's models/ (default: mlp cnn; or of
# DIR, e.g. the benchmark models resnet18 and resnet50, whose reference
# input and output are DIR/MODEL/input_0.npy and output_0.npy) with
# CLI (default: the mlc-onnx built in-tree or in build/) and writes two
# request bodies for the Open Inference Protocol (KServe v2) from its input
# models/MODEL.input_0.npy (seeded random data for any other input): a JSON
# body ("data" in the JSON) and one of the binary tensor extension (a JSON
# header of Inference-Header-Content-Length bytes, then the raw tensors).
# For 1 and 2 threads it starts SERVER (default: mlc-serve in-tree or in
# build/) as `SERVER MODEL.so --host 127.0.0.1 --port 0 --sessions T
# --threads 1` (T requests run at once, one thread each: what serves a
# small model best), takes its URL from the `listening on` line, checks
# /v2/health/ready and that the answer to the JSON body matches
# models/MODEL.output_0.npy, then for each body and each connection count
# (default "1 2 8") runs bench/serve_load.c (built with cc into a
# temporary directory) for S seconds (default 3) after W warm-up requests
# per connection (default 20), every 2xx body checked against the first;
# then stops the server with SIGTERM and checks that it exits 0.
# Prints the in-process latency of each model (`CLI run --bench ITERS`,
# default 1000 runs, for 1 and 2 threads: what HTTP adds is the difference)
# and a markdown table: model, body, threads, connections, requests/s,
# p50, p90, p99 ms, errors (failed requests + non-2xx answers + bodies that
# differ from the first).  The load generator runs on the same CPUs as the
# server, so the rates are those of the pair.
# Exit status: 0 when every server started, answered every request with
# the same 2xx body and exited 0 (whatever the timings), 1 otherwise,
# 2 on bad usage or a missing SERVER.
# Env: PYTHON (a Python 3 with numpy; default /usr/bin/python3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
. "$here/common.sh"
cli=$(default_cli)
server=
for s in ./mlc-serve "$root/mlc-serve" "$root/build/mlc-serve"; do
  if [ -z "$server" ] && [ -x "$s" ]; then server=$s; fi
done
[ -n "$server" ] || server=$root/build/mlc-serve
duration=3
conns="1 2 8"
warmup=20
iters=1000
mdir=$root/models
while [ $# -gt 0 ]; do
  case $1 in
    -c) cli=$2; shift 2 ;;
    -s) server=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    --models) mdir=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "serve.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- mlp cnn
models=$*
for m in $models; do
  [ -f "$mdir/$m.onnx" ] || { echo "serve.sh: no model $mdir/$m.onnx" >&2; exit 2; }
done
[ -x "$cli" ] || { echo "serve.sh: no mlc-onnx at '$cli' (build it, or -c CLI)" >&2; exit 2; }
[ -x "$server" ] || { echo "serve.sh: no server at '$server' (build mlc-serve, or -s SERVER)" >&2; exit 2; }
cli=$(abspath "$cli")
server=$(abspath "$server")
tmp=$(mktemp -d)
spid=
# shellcheck disable=SC2317
cleanup() {
  if [ -n "$spid" ]; then kill -KILL "$spid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# npy MODEL input|output: its reference input or output, MODEL.input_0.npy
# (models/) or MODEL/input_0.npy (the layout of ../shared/bench's models)
npy() {
  if [ -f "$mdir/$1/$2_0.npy" ]; then echo "$mdir/$1/$2_0.npy"; else echo "$mdir/$1.$2_0.npy"; fi
}

cc -std=gnu11 -O2 -pthread -o "$tmp/serve_load" "$here/serve_load.c" -lm
load=$tmp/serve_load
status=0

# bodies MODEL: writes $tmp/MODEL.json and $tmp/MODEL.bin (its JSON header's
# length in $tmp/MODEL.hlen) from the compiled model's signature
bodies() {
  "$cli" inspect "$tmp/$1.so" --json >"$tmp/$1.sig"
  "$py" - "$tmp/$1.sig" "$(npy "$1" input)" "$tmp/$1" <<'EOF'
import json, os, sys
import numpy as np
sig = json.load(open(sys.argv[1]))
types = {"float32": "FP32", "float64": "FP64", "float16": "FP16", "int8": "INT8", "int16": "INT16",
         "int32": "INT32", "int64": "INT64", "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32",
         "uint64": "UINT64", "bool": "BOOL"}
rng = np.random.default_rng(0)
heads, datas, raws = [], [], []
for i, t in enumerate(sig["inputs"]):
    shape = [d if isinstance(d, int) else 1 for d in t["shape"]]
    if i == 0 and os.path.exists(sys.argv[2]):
        x = np.load(sys.argv[2])
    else:
        x = rng.standard_normal(shape).astype(t["dtype"])
    dt = types[t["dtype"]]
    heads.append({"name": t["name"], "datatype": dt, "shape": list(x.shape)})
    datas.append(dict(heads[-1], data=x.ravel().tolist()))
    raw = x.astype(x.dtype.newbyteorder("<")).tobytes()
    raws.append(raw)
    heads[-1]["parameters"] = {"binary_data_size": len(raw)}
with open(sys.argv[3] + ".json", "w") as f:
    json.dump({"inputs": datas}, f)
head = json.dumps({"inputs": heads}).encode()
with open(sys.argv[3] + ".bin", "wb") as f:
    f.write(head + b"".join(raws))
with open(sys.argv[3] + ".hlen", "w") as f:
    print(len(head), file=f)
EOF
}

# check_output URL MODEL NAME: whether the answer to the JSON body matches
# models/MODEL.output_0.npy (prints a line saying so)
check_output() {
  "$py" - "$1" "$tmp/$2.json" "$(npy "$2" output)" "$3" <<'EOF'
import json, os, sys, urllib.request
import numpy as np
url, body, ref, name = sys.argv[1:]
req = urllib.request.Request(url, data=open(body, "rb").read(), headers={"Content-Type": "application/json"})
try:
    ans = json.load(urllib.request.urlopen(req, timeout=10))
    out = ans["outputs"][0]
    y = np.asarray(out["data"], dtype=np.float64).reshape(out["shape"])
except Exception as e:
    print("%s: output check: no usable answer (%s)" % (name, e))
    sys.exit(1)
if not os.path.exists(ref):
    print("%s: output check: no reference %s" % (name, os.path.basename(ref)))
    sys.exit(0)
r = np.load(ref).astype(np.float64)
d = float(np.max(np.abs(y - r))) if y.shape == r.shape else float("inf")
ok = y.shape == r.shape and np.allclose(y, r, rtol=1e-3, atol=1e-4)
print("%s: output check: %s (shape %s, max |diff| %.3g)" % (name, "ok" if ok else "MISMATCH", list(y.shape), d))
sys.exit(0 if ok else 1)
EOF
}

# start_server MODEL THREADS: starts the server, sets spid and url (fails
# when it does not print its listening line within 60 s)
start_server() {
  : >"$tmp/server.out"
  "$server" "$tmp/$1.so" --host 127.0.0.1 --port 0 --sessions "$2" --threads 1 \
    >"$tmp/server.out" 2>"$tmp/server.err" &
  spid=$!
  i=0
  while :; do
    url=$(sed -n '1s|^mlc-serve: listening on \(http://[^ ]*\).*|\1|p' "$tmp/server.out")
    url=${url%/}
    [ -z "$url" ] || return 0
    if ! kill -0 "$spid" 2>/dev/null || [ "$i" -ge 600 ]; then
      echo "serve.sh: $server did not start for $1 (threads $2): $(head -n 3 "$tmp/server.err")" >&2
      kill -KILL "$spid" 2>/dev/null || true
      wait "$spid" 2>/dev/null || true
      spid=
      return 1
    fi
    sleep 0.1
    i=$((i + 1))
  done
}

# stop_server: SIGTERM, then waits up to 30 s; fails unless it exits 0
stop_server() {
  kill -TERM "$spid"
  i=0
  while kill -0 "$spid" 2>/dev/null && [ "$i" -lt 300 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  if kill -0 "$spid" 2>/dev/null; then
    echo "serve.sh: the server did not exit within 30 s of SIGTERM" >&2
    kill -KILL "$spid" 2>/dev/null || true
  fi
  rc=0
  wait "$spid" || rc=$?
  spid=
  if [ "$rc" -ne 0 ]; then
    echo "serve.sh: the server exited $rc after SIGTERM $(tail -n 3 "$tmp/server.err")" >&2
    return 1
  fi
}

# run_load URL MODEL BODY CONNS: serve_load's JSON for BODY (json or binary)
run_load() {
  if [ "$3" = json ]; then
    "$load" --url "$1" --body "$tmp/$2.json" --header 'Content-Type: application/json' \
      --connections "$4" --duration "$duration" --warmup "$warmup" --check-same --json
  else
    "$load" --url "$1" --body "$tmp/$2.bin" --header 'Content-Type: application/octet-stream' \
      --header "Inference-Header-Content-Length: $(cat "$tmp/$2.hlen")" \
      --connections "$4" --duration "$duration" --warmup "$warmup" --check-same --json
  fi
}

# row MODEL BODY THREADS CONNS JSONFILE: one table row from serve_load's JSON
row() {
  "$py" - "$@" <<'EOF'
import json, sys
m, b, t, c, f = sys.argv[1:]
try:
    r = json.load(open(f))
except Exception:
    print("| %s | %s | %s | %s | | | | | run failed |" % (m, b, t, c))
    sys.exit(0)
l = r["latency_ms"]
ms = lambda v: "%.3f" % v if v is not None else "-"
bad = r["errors"] + r["non_2xx"] + r.get("mismatches", 0)
print("| %s | %s | %s | %s | %.0f | %s | %s | %s | %d |" % (m, b, t, c, r["requests_per_s"], ms(l["p50"]),
                                                      ms(l["p90"]), ms(l["p99"]), bad))
EOF
}

echo "server: $server --sessions T --threads 1; load: serve_load, ${duration} s per row after $warmup warm-up requests per connection"
echo
for m in $models; do
  "$cli" compile "$mdir/$m.onnx" -o "$tmp/$m.so" --no-header -q
  bodies "$m"
done

echo "| model | threads | in-process median ms | in-process p90 ms |"
echo "|---|---|---|---|"
for m in $models; do
  for t in 1 2; do
    in=
    [ -f "$(npy "$m" input)" ] && in="--input $(npy "$m" input)"
    # shellcheck disable=SC2086
    "$cli" run "$tmp/$m.so" $in --bench "$iters" --threads "$t" --json |
      "$py" -c 'import json, sys; l = json.load(sys.stdin)["latency_ms"]
print("| %s | %s | %.4f | %.4f |" % (sys.argv[1], sys.argv[2], l["median"], l["p90"]))' "$m" "$t"
  done
done
echo

: >"$tmp/rows"
: >"$tmp/notes"
for m in $models; do
  name=$m # the server names a model after its file
  for t in 1 2; do
    if ! start_server "$m" "$t"; then
      status=1
      continue
    fi
    if ! "$load" --url "$url/v2/health/ready" --requests 1 --timeout 10 >/dev/null 2>"$tmp/ready.err"; then
      echo "serve.sh: $url/v2/health/ready did not answer 2xx ($(cat "$tmp/ready.err")); skipping $m at $t threads" >&2
      status=1
      stop_server || true
      continue
    fi
    infer=$url/v2/models/$name/infer
    check_output "$infer" "$m" "$m (threads $t)" >>"$tmp/notes" || status=1
    for b in json binary; do
      for c in $conns; do
        if ! run_load "$infer" "$m" "$b" "$c" >"$tmp/load.json" 2>"$tmp/load.err"; then
          status=1
          echo "$m $b threads $t connections $c: $(tr '\n' ' ' <"$tmp/load.err")" >>"$tmp/notes"
        fi
        row "$m" "$b" "$t" "$c" "$tmp/load.json" >>"$tmp/rows"
      done
    done
    stop_server || status=1
  done
done

echo "| model | body | threads | connections | req/s | p50 ms | p90 ms | p99 ms | errors |"
echo "|---|---|---|---|---|---|---|---|---|"
cat "$tmp/rows"
if [ -s "$tmp/notes" ]; then
  echo
  cat "$tmp/notes"
fi
exit "$status"
