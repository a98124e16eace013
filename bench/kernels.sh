#!/bin/sh
# kernels.sh: GFLOP/s of single generated kernels beside OpenBLAS sgemm.
#
#   bench/kernels.sh [-c CLI] [--ort DIR] [--models DIR] [-n ITERS]
#
# Builds one-node ONNX models (bench/kernel_models.py): MatMul 1024^3 and
# 2048^3 (B an initializer) and each distinct Conv layer of resnet50
# (MODELS/resnet50.onnx, --models default ../shared/bench/work/models from
# the project root; weights and bias initializers, input 1xCxHxW), compiles
# each with CLI and times `run --bench --profile` on 1 thread (at least
# ITERS runs, default 10, more for small kernels): the model's median, and
# the kernel alone, its steps but the layout transforms around it (a conv's
# model converts NCHW to the blocked layout and back, which at 56x56 takes
# as long as a 1x1 conv; in a whole model they run once, at its ends; the
# profile's mean per run).  Beside it,
# OpenBLAS cblas_sgemm of the same GEMM (M = K_out, N = OH*OW, K = C*kh*kw
# for a conv: the im2col GEMM without the im2col; M x N x K for a matmul)
# on 1 thread with OPENBLAS_CORETYPE=SkylakeX on a CPU with AVX-512 (its
# AVX-512 kernels; override in the environment; elsewhere OpenBLAS's own pick),
# best of 5 (bench/sgemm_ref.c, needs libopenblas-dev; without it that
# column stays empty).  Prints the machine's 1-thread FP32 FMA peak (the
# reference tools' peak_gflops.c, --ort DIR, default ../shared/bench) and a
# markdown table: kernel (a conv's count in resnet50 in parentheses), shape,
# the model's GFLOP/s, the kernel's alone, OpenBLAS GFLOP/s, kernel/OpenBLAS,
# kernel/peak.
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
while [ $# -gt 0 ]; do
  case $1 in
    -c) cli=$2; shift 2 ;;
    --ort) ref=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "kernels.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ ! -f "$models/resnet50.onnx" ]; then
  echo "kernels.sh: $models/resnet50.onnx is missing." >&2
  echo "Generate it with the reference tools (setup.sh installs torch, onnx and onnxruntime-node):" >&2
  echo "  cd $ref && ./setup.sh && /usr/bin/python3 make_models.py --only resnet50 --out $models" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

blas=
if ! have_openblas; then
  echo "note: libopenblas-dev is not installed (apt-get install libopenblas-dev): no OpenBLAS column" >&2
elif cc -O2 -o "$tmp/sgemm_ref" "$here/sgemm_ref.c" -lopenblas 2>"$tmp/cc.log"; then
  blas=$tmp/sgemm_ref
else
  echo "note: bench/sgemm_ref.c does not build, no OpenBLAS column: $(head -n 1 "$tmp/cc.log")" >&2
fi

probe_peak "$tmp" "$ref"
echo "$peak_line"
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q '^flags.* avx512f' /proc/cpuinfo 2>/dev/null; then
  OPENBLAS_CORETYPE=SkylakeX
  export OPENBLAS_CORETYPE
fi
[ -z "$blas" ] || echo "OpenBLAS: 1 thread, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(its own choice)}"
echo

"$py" "$here/kernel_models.py" "$tmp" "$models/resnet50.onnx" >"$tmp/kernels.tsv"
echo "| kernel | shape | model GFLOP/s | kernel GFLOP/s | OpenBLAS GFLOP/s | kernel/OpenBLAS | kernel/peak |"
echo "|---|---|---|---|---|---|---|"
tab=$(printf '\t')
while IFS=$tab read -r stem kernel shape m n k flop; do
  "$cli" compile "$tmp/$stem.onnx" -o "$tmp/$stem.so" --no-header -q </dev/null
  runs=$(awk -v f="$flop" -v n="$iters" 'BEGIN { r = int(1e10 / f); if (r > 100) r = 100; print (r > n ? r : n) }')
  # the model's median, and the profile's steps but the layout transforms
  set -- $("$cli" run "$tmp/$stem.so" --bench "$runs" --warmup 1 --threads 1 --profile --json </dev/null |
    "$py" -c 'import json, sys
r = json.load(sys.stdin)
k = sum(p["ms"] for p in r["profile"] if not p["function"].startswith("layout_transform"))
print(r["latency_ms"]["median"], k)')
  ms=$1 kms=$2
  ref_rate=
  [ -z "$blas" ] || ref_rate=$(OPENBLAS_NUM_THREADS=1 \
    "$blas" "$m" "$n" "$k" </dev/null)
  awk -v kernel="$kernel" -v shape="$shape" -v m="$m" -v n="$n" -v k="$k" -v f="$flop" -v ms="$ms" \
    -v kms="$kms" -v b="$ref_rate" -v p="$peak1" 'BEGIN {
    rate = f / ms / 1e6; krate = f / kms / 1e6
    printf "| %s | %s (GEMM %dx%dx%d) | %.1f | %.1f | %s | %s | %s |\n", kernel, shape, m, n, k, rate, krate, b,
      b != "" ? sprintf("%.2f", krate / b) : "", p != "" ? sprintf("%.1f %%", 100 * krate / p) : ""
  }'
done <"$tmp/kernels.tsv"
