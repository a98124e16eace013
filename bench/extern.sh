#!/bin/sh
# extern.sh: latency with generated code only, with each external library,
# with the auto choice, and ONNX Runtime, interleaved.
#
#   bench/extern.sh [-c CLI] [--ort DIR] [--models DIR] [-n ITERS] [-r ROUNDS]
#                   [--cache FILE] [--choices] [MODEL...]
#
# Compiles each MODEL (default: resnet50 mobilenet_v2 encoder) from
# MODELS/MODEL.onnx four times: --extern none (generated code only),
# openblas, onednn and auto (each library the build has; auto times the
# candidates of every op at compile time, cached in --cache FILE, default a
# fresh file in the scratch directory, so its compile time includes the
# measurements), printing each compile time.  Then, for 1 and 2 threads,
# ROUNDS rounds (default 3) of ONNX Runtime and the four libraries in turn,
# each a fresh process timing ITERS runs (default 10) after a warm-up; a
# latency is the median of its rounds' medians.  Prints one markdown table
# per model: threads, ORT ms, then each variant's ms and its ratio to ORT.
# --choices: also auto's decision per op (inspect's extern_choices: the
# candidates' measured ms and the winner).  Outputs are not checked here
# (tests/e2e/test_extern_e2e and tests/large_models.sh do).
# The other options as in bench/run.sh.  A report: the exit status says
# only whether it ran.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
. "$here/common.sh"
cli=$(default_cli)
ref=$ref_default
models=$root/../shared/bench/work/models
iters=10
rounds=3
cache=
choices=0
while [ $# -gt 0 ]; do
  case $1 in
    -c) cli=$2; shift 2 ;;
    --ort) ref=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --choices) choices=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "extern.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- resnet50 mobilenet_v2 encoder
[ "$rounds" -ge 1 ] || { echo "extern.sh: -r wants at least 1 round" >&2; exit 2; }
need_models extern.sh "$@"
[ -n "$cache" ] || cache=$tmp/extern-times.txt

variants="none openblas onednn auto"

# our_ms MODEL VARIANT THREADS
our_ms() {
  "$cli" run "$tmp/$1.$2.so" --input "$models/$1/input_0.npy" --bench "$iters" --warmup 1 \
    --threads "$3" --json | "$py" -c 'import json, sys; print(json.load(sys.stdin)["latency_ms"]["median"])'
}

use_ort=1
[ -f "$ref/ort_bench.js" ] || { use_ort=0; echo "note: no $ref/ort_bench.js: ORT columns left empty" >&2; }

echo "| model | variant | compile s | external calls |"
echo "|---|---|---|---|"
for m in "$@"; do
  for v in $variants; do
    if ! s=$(seconds "$cli" compile "$models/$m.onnx" -o "$tmp/$m.$v.so" --no-header -q --extern "$v" \
      --extern-cache "$cache" 2>"$tmp/compile.log"); then
      echo "| $m | $v | failed: $(tail -n 1 "$tmp/compile.log") | |"
      continue
    fi
    n=$("$cli" inspect "$tmp/$m.$v.so" --json | "$py" -c 'import json, sys
d = json.load(sys.stdin)
calls = d["extern_calls"]
by = {}
for c in calls:
    by[c["function"]] = by.get(c["function"], 0) + 1
print(", ".join("%s x%d" % (k, n) for k, n in sorted(by.items())) or "none")')
    echo "| $m | $v | $s | $n |"
  done
done
echo

for m in "$@"; do
  echo "$m:"
  echo
  printf "| threads | ORT ms |"
  for v in $variants; do printf " %s ms | /ORT |" "$v"; done
  echo
  printf "|---|---|"
  for v in $variants; do printf -- "---|---|"; done
  echo
  for t in 1 2; do
    : >"$tmp/ort.ms"
    for v in $variants; do : >"$tmp/$v.ms"; done
    r=0
    while [ "$r" -lt "$rounds" ]; do
      if [ "$use_ort" = 1 ] && ! ort_ms "$m" "$t" >>"$tmp/ort.ms"; then
        use_ort=0
        echo "note: ort_bench.js failed, ORT columns left empty from here" >&2
      fi
      for v in $variants; do
        [ -f "$tmp/$m.$v.so" ] && our_ms "$m" "$v" "$t" >>"$tmp/$v.ms"
      done
      r=$((r + 1))
    done
    ort=$(median <"$tmp/ort.ms")
    printf "| %d | %s |" "$t" "$ort"
    for v in $variants; do
      u=$(median <"$tmp/$v.ms")
      awk -v o="$ort" -v u="$u" 'BEGIN {
        if (u == "") { printf " | |"; exit }
        printf " %.2f | %s |", u, o != "" ? sprintf("%.2f", u / o) : ""
      }'
    done
    echo
  done
  echo
  if [ "$choices" = 1 ] && [ -f "$tmp/$m.auto.so" ]; then
    echo "auto's choices for $m (measured ms per candidate):"
    echo
    "$cli" inspect "$tmp/$m.auto.so" --json | "$py" -c 'import json, sys
d = json.load(sys.stdin)
ch = d["manifest"].get("extern_choices", [])
print("| op | node | shape | candidates (ms) | chosen |")
print("|---|---|---|---|---|")
for c in ch:
    cands = ", ".join("%s %s" % (x["kernel"], "%.3f" % x["ms"] if x["ms"] is not None else "-") for x in c["candidates"])
    print("| %s | %s | %s | %s | %s |" % (c["op"], c["node"], c["shape"], cands, c["chosen"]))'
    echo
  fi
done
