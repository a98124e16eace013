#!/bin/sh
# regen.sh ORT_BENCH_JS [NAME...]: writes the models (all, or those named)
# and ONNX Runtime's outputs for each of their inputs
# (NAME.SIZE.output_<i>.npy), as models/regen.sh does.
set -eu
ort=${1:?usage: regen.sh path/to/ort_bench.js [NAME...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/make_models.py" "$@"
if [ $# -eq 0 ] || echo " $* " | grep -q " encoder "; then /usr/bin/python3 "$here/make_seq_models.py"; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for in0 in "$here"/*.input_0.npy; do
  base=${in0%.input_0.npy}
  model=${base%.*}.onnx
  name=${model##*/}
  if [ $# -gt 0 ] && ! echo " $* " | grep -q " ${name%.onnx} "; then continue; fi
  node "$ort" "$model" --input "$in0" --iters 1 --warmup 0 --dump-dir "$tmp/out" >/dev/null
  for o in "$tmp"/out/output_*.npy; do cp "$o" "$base.$(basename "$o")"; done
  rm -rf "$tmp/out"
done
