#!/bin/sh
# tune.sh: what `mlc-onnx tune` gains, per model, beside ONNX Runtime.
#
#   bench/tune.sh [-c CLI] [--ort DIR] [--models DIR] [--logs DIR] [-n ITERS] [-r ROUNDS]
#                 [--reuse] [-- TUNE-OPTIONS...] [MODEL...]
#
# For each MODEL (default: resnet18 resnet50 mobilenet_v2 squeezenet1_1
# encoder): tunes it into LOGS/MODEL.tune (--logs, default a temporary
# directory; an existing log is resumed) with TUNE-OPTIONS (default
# `--budget 5m`), timing the run, unless --reuse is given and the log
# exists; then compiles it twice, with its default schedules and with the
# log, and times ONNX Runtime, the default build and the tuned build
# interleaved at 1 thread (the tuner measures at 1 thread by default):
# ROUNDS rounds (default 5) of the three, each a fresh process timing ITERS
# runs (default 20).  A latency is the median of its rounds' medians.
# Prints a markdown table: model, tuning time, trials in the log, ORT ms,
# default ms, tuned ms, default/tuned and tuned/ORT (medians of each
# round's ratio: a round's runs are close in time, so a machine that
# changes speed between rounds moves both sides), the number of rounds in
# which the tuned build was the faster of the two, and the cost model's
# ranking quality from the tuner's summary (share of measured pairs it
# ordered right).  Also checks each tuned build's output against the
# model's reference output (MODELS/MODEL/output_0.npy, ONNX Runtime's):
# the `matches` column.
# A report: the exit status says only whether it ran, not how fast.
# Env: PYTHON (a Python 3 with onnx and numpy; default /usr/bin/python3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
. "$here/common.sh"
cli=$(default_cli)
ref=$ref_default
models=$root/../shared/bench/work/models
logs=
iters=20
rounds=5
reuse=0
while [ $# -gt 0 ]; do
  case $1 in
    -c) cli=$2; shift 2 ;;
    --ort) ref=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    --reuse) reuse=1; shift ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "tune.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
# the tuner's options: up to the first argument that is not one
topts=
while [ $# -gt 0 ]; do
  case $1 in
    --budget|--trials|--threads|--seed|--jobs|--min-ms|--repeats|--timeout|--target) topts="$topts $1 $2"; shift 2 ;;
    -*) echo "tune.sh: unknown tune option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -n "$topts" ] || topts="--budget 5m"
[ $# -gt 0 ] || set -- resnet18 resnet50 mobilenet_v2 squeezenet1_1 encoder
[ "$rounds" -ge 1 ] || { echo "tune.sh: -r wants at least 1 round" >&2; exit 2; }
need_models tune.sh "$@"
[ -n "$logs" ] || logs=$tmp/logs
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)

# our_ms SO MODEL: the library's median ms of one process, 1 thread
our_ms() {
  "$cli" run "$1" --input "$models/$2/input_0.npy" --bench "$iters" --warmup 2 --threads 1 --json |
    "$py" -c 'import json, sys; print(json.load(sys.stdin)["latency_ms"]["median"])'
}

use_ort=1
[ -f "$ref/ort_bench.js" ] || { use_ort=0; echo "note: no $ref/ort_bench.js: ORT columns left empty" >&2; }

echo "tuner options:$topts; $rounds rounds of $iters runs, 1 thread"
echo
echo "| model | tuning | trials | ORT ms | default ms | tuned ms | default/tuned | tuned/ORT | tuned faster | matches | model's pairs right |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for m in "$@"; do
  log=$logs/$m.tune
  took="(reused)"
  if [ "$reuse" = 0 ] || [ ! -s "$log" ]; then
    # shellcheck disable=SC2086
    took=$(seconds "$cli" tune "$models/$m.onnx" -o "$log" $topts 2>"$logs/$m.tune.err")s
  fi
  pairs=$(sed -n 's/.*measurements, over the \([0-9]*\) rounds.*: \([0-9]*%\) of \([0-9]*\) pairs.*/\2 of \3/p' \
    "$logs/$m.tune.err" 2>/dev/null | tail -n 1)
  trials=$(wc -l <"$log")
  "$cli" compile "$models/$m.onnx" -o "$tmp/$m.default.so" -q
  "$cli" compile "$models/$m.onnx" -o "$tmp/$m.tuned.so" --tune-log "$log" -q
  match=
  if [ -f "$models/$m/output_0.npy" ]; then
    "$cli" run "$tmp/$m.tuned.so" --input "$models/$m/input_0.npy" --output-dir "$tmp/$m.out" >/dev/null
    match=$("$py" -c 'import sys, numpy as np
a = np.load(sys.argv[1]); e = np.load(sys.argv[2])
ok = a.shape == e.shape and np.allclose(a, e, rtol=1e-3, atol=1e-4)
print("yes (max err %.1e)" % float(np.abs(a - e).max()) if ok else "NO")' "$tmp/$m.out/output_0.npy" "$models/$m/output_0.npy")
  fi
  : >"$tmp/ort.ms"
  : >"$tmp/def.ms"
  : >"$tmp/tun.ms"
  : >"$tmp/gain"
  : >"$tmp/vsort"
  wins=0
  r=0
  while [ "$r" -lt "$rounds" ]; do
    if [ "$use_ort" = 1 ] && ! ort_ms "$m" 1 >>"$tmp/ort.ms"; then
      use_ort=0
      echo "note: ort_bench.js failed, ORT columns left empty from here" >&2
    fi
    d=$(our_ms "$tmp/$m.default.so" "$m")
    u=$(our_ms "$tmp/$m.tuned.so" "$m")
    echo "$d" >>"$tmp/def.ms"
    echo "$u" >>"$tmp/tun.ms"
    awk -v d="$d" -v u="$u" 'BEGIN { print d / u }' >>"$tmp/gain"
    o=$(tail -n 1 "$tmp/ort.ms")
    [ -z "$o" ] || awk -v o="$o" -v u="$u" 'BEGIN { print u / o }' >>"$tmp/vsort"
    wins=$(awk -v w="$wins" -v d="$d" -v u="$u" 'BEGIN { print w + (u < d) }')
    r=$((r + 1))
  done
  ort=$(median <"$tmp/ort.ms")
  def=$(median <"$tmp/def.ms")
  tun=$(median <"$tmp/tun.ms")
  gain=$(median <"$tmp/gain")
  vsort=$(median <"$tmp/vsort")
  awk -v m="$m" -v took="$took" -v n="$trials" -v o="$ort" -v d="$def" -v u="$tun" -v w="$wins" -v r="$rounds" \
    -v mt="$match" -v pairs="$pairs" -v g="$gain" -v v="$vsort" 'BEGIN {
    printf "| %s | %s | %d | %s | %.3f | %.3f | %.3f | %s | %d of %d | %s | %s |\n", m, took, n,
      o != "" ? sprintf("%.3f", o) : "", d, u, g, v != "" ? sprintf("%.2f", v) : "", w, r, mt, pairs
  }'
done
