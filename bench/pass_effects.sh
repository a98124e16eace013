#!/bin/sh
# pass_effects.sh: what each group of graph passes brings, per model.
#
#   bench/pass_effects.sh [-c CLI] [-t THREADS] [-n ITERS] [--ort DIR] MODELS_DIR MODEL...
#
# Compiles MODELS_DIR/MODEL.onnx five ways (all passes; without the fold
# group; without the layout group; without the fuse group; without all
# three) and prints one markdown row each: steps (kernels run per
# inference), distinct kernels, arena bytes, the bytes of all intermediate
# tensors (when the compiler reports them), and the median latency of
# `run --bench ITERS` on MODELS_DIR/MODEL/input_0.npy (or MODEL.input_0.npy).  With --ort DIR
# (the reference tools' directory, holding ort_bench.js and node_modules)
# ONNX Runtime's median for the same input and threads is measured in the
# same run and each latency gets its ratio to it.
# The machine may be shared: compare rows of one run, not across runs.
set -eu
cli=./mlc-onnx
threads=1
iters=5
ort=
while [ $# -gt 0 ]; do
  case $1 in
    -c) cli=$2; shift 2 ;;
    -t) threads=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    --ort) ort=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "pass_effects.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "usage: pass_effects.sh [-c CLI] [-t THREADS] [-n ITERS] [--ort DIR] MODELS_DIR MODEL..." >&2; exit 2; }
dir=$1
shift
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { "$py" -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["latency_ms"]["median"])'; }

echo "| model | passes | steps | kernels | arena bytes | intermediates bytes | ms ($threads thread(s)) |"
echo "|---|---|---|---|---|---|---|"
for m in "$@"; do
  onnx=$dir/$m.onnx
  in=$dir/$m/input_0.npy
  [ -f "$in" ] || in=$dir/$m.input_0.npy
  ortms=
  if [ -n "$ort" ]; then
    ortms=$(cd "$ort" && node ort_bench.js "$onnx" --threads "$threads" --iters 20 --warmup 3 --input "$in" --json |
      "$py" -c 'import json,sys; d=json.load(sys.stdin); print("%.2f" % d["median_ms"])')
    echo "| $m | ONNX Runtime | | | | | $ortms |"
  fi
  for v in "all" "--no-fold" "--no-layout" "--no-fuse" "--no-fold --no-layout --no-fuse"; do
    flags=$v
    [ "$v" = all ] && flags=
    # shellcheck disable=SC2086
    "$cli" compile "$onnx" -o "$tmp/m.so" --no-header $flags 2>"$tmp/log"
    line=$(tail -n 1 "$tmp/log")
    steps=$(echo "$line" | sed -n 's/.*: \([0-9]*\) steps.*/\1/p')
    kernels=$(echo "$line" | sed -n 's/.* \([0-9]*\) kernels.*/\1/p')
    arena=$(echo "$line" | sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p')
    inter=$(echo "$line" | sed -n 's/.*intermediates \([0-9]*\) bytes.*/\1/p')
    ms=$("$cli" run "$tmp/m.so" --input "$in" --bench "$iters" --warmup 1 --threads "$threads" --json | median)
    if [ -n "$ortms" ]; then ms="$ms ($("$py" -c "print('%.1fx' % ($ms / $ortms))"))"; fi
    case $v in
      all) label="all" ;;
      --no-fold) label="no fold" ;;
      --no-layout) label="no layout" ;;
      --no-fuse) label="no fuse" ;;
      *) label="none of the three" ;;
    esac
    echo "| $m | $label | $steps | $kernels | $arena | $inter | $ms |"
  done
done
