#!/bin/sh
# regen.sh ORT_BENCH_JS: rebuilds the bundled models and their reference
# outputs.  Step 1 writes the .onnx files and seeded inputs with
# make_models.py (Debian's python3 with onnx + numpy); step 2 runs each model
# once in ONNX Runtime with the benchmark script ort_bench.js (from the shared
# reference tools, installed with onnxruntime-node) and keeps its outputs as
# <name>.output_0.npy.  Env: PYTHON (default /usr/bin/python3), NODE (node).
set -eu
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 path/to/ort_bench.js" >&2
  exit 2
fi
bench=$1
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
node=${NODE:-node}

"$py" "$here/make_models.py" "$here"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# ref MODEL INPUT OUTPUT [ort_bench args...]: one run, output_0 kept.
ref() {
  model=$1 input=$2 output=$3
  shift 3
  rm -rf "$tmp/out"
  "$node" "$bench" "$here/$model" --threads 1 --iters 1 --warmup 0 \
    --input "$here/$input" --dump-dir "$tmp/out" "$@" >/dev/null
  cp "$tmp/out/output_0.npy" "$here/$output"
  echo "regen.sh: $output"
}
ref mlp.onnx mlp.input_0.npy mlp.output_0.npy
ref cnn.onnx cnn.input_0.npy cnn.output_0.npy
ref encoder.onnx encoder.input_0.npy encoder.output_0.npy
ref mlp_dyn.onnx mlp_dyn.input_0.npy mlp_dyn.output_0.npy --dim N=1
ref mlp_dyn.onnx mlp_dyn.batch4.input_0.npy mlp_dyn.batch4.output_0.npy --dim N=4
