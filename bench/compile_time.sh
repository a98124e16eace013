#!/bin/sh
# compile_time.sh: per-stage compile times of generated chain models.
#
#   bench/compile_time.sh [-c CLI] [-k "KINDS"] [-n "SIZES"] [--link]
#
# For each kind (make_chain.py: relu, mixed, kernels, wide; default "relu
# mixed") and node count (default "1000 10000 100000 200000") it generates
# the model, compiles it with `mlc-onnx compile -v` and prints one row of CPU
# times in milliseconds (the machine may be shared: CPU time is steadier than
# wall-clock time).  The C compiler that links model.so is replaced by a stub,
# so "archive" is the archiver's own work and "total" everything up to the
# link; with --link the real link is timed too, in column "link" (archive
# with the C compiler, children's CPU time included).
# Env: PYTHON (a Python 3 with onnx and numpy; default /usr/bin/python3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cli=./mlc-onnx
kinds="relu mixed"
sizes="1000 10000 100000 200000"
link=0
while [ $# -gt 0 ]; do
  case $1 in
    -c) cli=$2; shift 2 ;;
    -k) kinds=$2; shift 2 ;;
    -n) sizes=$2; shift 2 ;;
    --link) link=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compile_time.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\n: > model.so\n' > "$tmp/stubcc"
chmod +x "$tmp/stubcc"

# cpu KEY FILE: the CPU milliseconds of the -v line for step KEY (summed over repeats).
cpu() { awk -v k="$1" '
  { line = $0; sub(/^ +/, "", line) }
  index(line, k) == 1 && match(line, /\(cpu +[0-9.]+ ms\)/) {
    v = substr(line, RSTART, RLENGTH); gsub(/[^0-9.]/, "", v); s += v; found = 1 }
  END { if (found) printf "%.0f", s; else printf "-" }' "$2"; }

printf '%-8s %8s %7s %7s %7s %7s %8s %7s %8s %8s %8s' kind nodes load import passes legalize plan_mem codegen archive total kernels
[ $link -eq 1 ] && printf ' %8s' link
printf '\n'
for k in $kinds; do
  for n in $sizes; do
    m=$tmp/$k-$n.onnx
    "$py" "$here/make_chain.py" "$k" "$n" "$m"
    MLC_CC=$tmp/stubcc "$cli" compile "$m" -o "$tmp/m.so" --no-header -v 2>"$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
    total=0
    for s in setup load import 'graph passes' outputs legalize schedule plan_memory codegen archive; do
      v=$(cpu "$s" "$tmp/log"); [ "$v" = - ] || total=$((total + v))
    done
    nk=$(sed -n 's/.*steps, \([0-9]*\) kernels.*/\1/p' "$tmp/log")
    printf '%-8s %8s %7s %7s %7s %7s %8s %7s %8s %8s %8s' "$k" "$n" "$(cpu load "$tmp/log")" \
      "$(cpu import "$tmp/log")" "$(cpu 'graph passes' "$tmp/log")" \
      "$(( $(cpu legalize "$tmp/log") + $(cpu schedule "$tmp/log") ))" "$(cpu plan_memory "$tmp/log")" \
      "$(cpu codegen "$tmp/log")" "$(cpu archive "$tmp/log")" "$total" "$nk"
    if [ $link -eq 1 ]; then
      "$cli" compile "$m" -o "$tmp/m.so" --no-header -v 2>"$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
      printf ' %8s' "$(cpu archive "$tmp/log")"
    fi
    printf '\n'
    rm -f "$m" "$tmp/m.so"
  done
done
