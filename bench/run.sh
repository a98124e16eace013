#!/bin/sh
# run.sh: latency of the benchmark models, ours beside ONNX Runtime.
#
#   bench/run.sh [-c CLI] [--ort DIR] [--models DIR] [-n ITERS] [-r ROUNDS] [MODEL...]
#
# Compiles each MODEL (default: resnet18 resnet50 mobilenet_v2 squeezenet1_1
# encoder) once from MODELS/MODEL.onnx with input MODELS/MODEL/input_0.npy
# (--models, default ../shared/bench/work/models from the project root), then
# for 1 and 2 threads times ONNX Runtime and the compiled model interleaved:
# ROUNDS rounds (default 3) of ORT then ours, each round a fresh process that
# times ITERS runs (default 10) after its warm-up, so that machine noise hits
# both alike.  A latency is the median of its rounds' medians.
# --ort DIR: the reference tools (ort_bench.js with its work/node_modules,
# flops.py, peak_gflops.c; default ../shared/bench from the project root);
# without a working ort_bench.js the ORT columns stay empty.
# Prints the machine's FP32 FMA peak (peak_gflops.c), each model's compile
# time and GFLOP (flops.py: 2 x the multiply-adds of Conv/Gemm/MatMul), and
# a markdown table: model, threads, ORT ms, ours ms, ours/ORT (the ratio of
# the medians), paired (the median of the rounds' own ratios, each round's
# ORT and ours run back to back: steadier where the machine's speed drifts
# between rounds), our GFLOP/s and its fraction of the peak for that thread
# count.
# A report: the exit status says only whether it ran, not how fast.
# Env: PYTHON (a Python 3 with onnx and numpy; default /usr/bin/python3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
. "$here/common.sh"
cli=$(default_cli)
ref=$ref_default
models=$root/../shared/bench/work/models
iters=10
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    -c) cli=$2; shift 2 ;;
    --ort) ref=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- resnet18 resnet50 mobilenet_v2 squeezenet1_1 encoder
[ "$rounds" -ge 1 ] || { echo "run.sh: -r wants at least 1 round" >&2; exit 2; }
need_models run.sh "$@"

# our_ms MODEL THREADS: the compiled model's median ms of one process
our_ms() {
  "$cli" run "$tmp/$1.so" --input "$models/$1/input_0.npy" --bench "$iters" --warmup 1 \
    --threads "$2" --json | "$py" -c 'import json, sys; print(json.load(sys.stdin)["latency_ms"]["median"])'
}

# model_gflop MODEL: GFLOP of one inference, from flops.py or bench/model_flops.py
model_gflop() {
  f=$("$py" "$ref/flops.py" "$models/$1.onnx" --json 2>/dev/null |
    "$py" -c 'import json, sys; r = json.load(sys.stdin)[0]; print(r["flops"] if not r["unknown"] else "")' \
    2>/dev/null || true)
  [ -n "$f" ] || f=$("$py" "$here/model_flops.py" "$models/$1.onnx")
  awk -v f="$f" 'BEGIN { printf "%.3f\n", f / 1e9 }'
}

use_ort=1
[ -f "$ref/ort_bench.js" ] || { use_ort=0; echo "note: no $ref/ort_bench.js: ORT columns left empty" >&2; }

probe_peak "$tmp" "$ref"
echo "$peak_line"
echo

echo "| model | compile s | GFLOP |"
echo "|---|---|---|"
for m in "$@"; do
  s=$(seconds "$cli" compile "$models/$m.onnx" -o "$tmp/$m.so" --no-header -q)
  g=$(model_gflop "$m")
  echo "$g" >"$tmp/$m.gflop"
  echo "| $m | $s | $g |"
done
echo

echo "| model | threads | ORT ms | ours ms | ours/ORT | paired | ours GFLOP/s | of peak |"
echo "|---|---|---|---|---|---|---|---|"
for m in "$@"; do
  for t in 1 2; do
    : >"$tmp/ort.ms"
    : >"$tmp/our.ms"
    r=0
    while [ "$r" -lt "$rounds" ]; do
      if [ "$use_ort" = 1 ]; then
        if ! ort_ms "$m" "$t" >>"$tmp/ort.ms"; then
          use_ort=0
          echo "note: ort_bench.js failed, ORT columns left empty from here: $(grep -m 1 -i error "$tmp/ort.log" || tail -n 1 "$tmp/ort.log")" >&2
        fi
      fi
      our_ms "$m" "$t" >>"$tmp/our.ms"
      r=$((r + 1))
    done
    ort=$(median <"$tmp/ort.ms")
    ours=$(median <"$tmp/our.ms")
    paired=""
    if [ -s "$tmp/ort.ms" ]; then
      paired=$(paste "$tmp/our.ms" "$tmp/ort.ms" | awk '$2 > 0 { printf "%.6f\n", $1 / $2 }' | median)
    fi
    awk -v m="$m" -v t="$t" -v o="$ort" -v u="$ours" -v q="$paired" -v g="$(cat "$tmp/$m.gflop")" -v p="$(peak_for "$t")" 'BEGIN {
      ratio = o != "" ? sprintf("%.2f", u / o) : ""
      pr = q != "" ? sprintf("%.2f", q) : ""
      rate = g / u * 1e3
      frac = p != "" ? sprintf("%.1f %%", 100 * rate / p) : ""
      printf "| %s | %d | %s | %.2f | %s | %s | %.1f | %s |\n", m, t, o != "" ? sprintf("%.2f", o) : "", u, ratio, pr, rate, frac
    }'
  done
done
