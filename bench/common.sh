# common.sh: pieces shared by bench/run.sh and bench/kernels.sh (sourced,
# not run).  The sourcing script sets `here` (the bench/ directory) first.
# Env: PYTHON (a Python 3 with onnx and numpy; default /usr/bin/python3).
# shellcheck shell=sh disable=SC2034,SC2154
py=${PYTHON:-/usr/bin/python3}
root=$(cd "$here/.." && pwd)
# the reference tools (ort_bench.js, flops.py, peak_gflops.c, make_models.py)
ref_default=$root/../shared/bench

# default_cli: the mlc-onnx built in the current directory, in-tree or in build/.
default_cli() {
  for c in ./mlc-onnx "$root/mlc-onnx" "$root/build/mlc-onnx"; do
    if [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  echo ./mlc-onnx
}

# abspath PATH: PATH made absolute (its directory must exist).
abspath() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

# seconds CMD...: runs CMD (its output goes to stderr) and prints the
# wall-clock seconds it took; fails when CMD fails.
seconds() {
  "$py" -c 'import subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=sys.stderr).returncode
if rc:
    sys.exit(rc)
print("%.2f" % (time.perf_counter() - t))' "$@"
}

# median: the median of the numbers on stdin (blank when there are none).
median() {
  "$py" -c 'import statistics, sys
v = [float(x) for x in sys.stdin.read().split()]
print("%.3f" % statistics.median(v) if v else "")'
}

# have_openblas: whether libopenblas-dev (cblas.h and -lopenblas) is installed.
have_openblas() { dpkg -l libopenblas-dev 2>/dev/null | grep -q '^ii'; }

# probe_peak TMPDIR REFDIR: measures the machine's FP32 FMA peak with
# REFDIR/peak_gflops.c (hand-written FMA loops; built with cc -O2
# -march=native in TMPDIR).  Sets ncpu, peak1 (GFLOP/s on 1 thread),
# peakn (on one thread per CPU; best of the zmm and ymm loops, best of 5
# repetitions) and peak_line, a line to print; peak1 and peakn stay empty
# when the probe cannot be built.  Without OpenBLAS a stub cblas.h stands
# in for it: only the FMA part is run.
probe_peak() {
  ncpu=$(getconf _NPROCESSORS_ONLN)
  peak1=
  peakn=
  src=$2/peak_gflops.c
  probe=peak_gflops.c
  : >"$1/peak.log"
  if [ ! -f "$src" ] || ! cc -O2 -march=native -o "$1/peak_gflops" "$src" -lopenblas -lpthread 2>>"$1/peak.log"; then
    mkdir -p "$1/stub"
    cat >"$1/stub/cblas.h" <<'EOF'
enum { CblasRowMajor = 101, CblasNoTrans = 111 };
static void cblas_sgemm(int o, int ta, int tb, int m, int n, int k, float al, const float *a, int lda,
                        const float *b, int ldb, float be, float *c, int ldc) {}
static void openblas_set_num_threads(int n) {}
static int openblas_get_num_threads(void) { return 1; }
static const char *openblas_get_config(void) { return "none"; }
static const char *openblas_get_corename(void) { return "none"; }
EOF
    if [ ! -f "$src" ] || ! cc -O2 -march=native -I"$1/stub" -o "$1/peak_gflops" "$src" -lpthread 2>>"$1/peak.log"; then
      # the reference probe is missing or needs AVX-512: ours measures any
      # x86-64 with AVX2
      probe=bench/peak_fma.c
      if ! cc -O2 -o "$1/peak_gflops" "$here/peak_fma.c" -lpthread 2>>"$1/peak.log"; then
        peak_line="machine peak: unknown (neither $src nor bench/peak_fma.c builds here: $(head -n 1 "$1/peak.log"))"
        return 0
      fi
    fi
  fi
  "$1/peak_gflops" 5 fma >"$1/peak.out"
  # FMA zmm  threads=1  best   123.4  median ...
  peak1=$(awk '$1 == "FMA" && $3 == "threads=1" && $5 > b { b = $5 } END { print b }' "$1/peak.out")
  peakn=$(awk -v t="threads=$ncpu" '$1 == "FMA" && $3 == t && $5 > b { b = $5 } END { print b }' "$1/peak.out")
  ghz=$(sed -n 's/^est\. core clock.*median \([0-9.]*\) GHz.*/\1/p' "$1/peak.out")
  # the most CPU that other processes used during one of the probe's loops
  busy=$(awk '$1 == "FMA" { for (i = 1; i < NF; i++) if ($i == "other-procs" && $(i + 1) > b) b = $(i + 1) }
    END { printf "%.1f", b }' "$1/peak.out")
  peak_line="machine peak (FP32 FMA loop, $probe): 1 thread $peak1 GFLOP/s, $ncpu threads $peakn GFLOP/s ($ncpu CPUs, ~$ghz GHz; other processes used up to $busy CPUs meanwhile)"
}

# peak_for THREADS: the peak for THREADS threads (the all-CPU figure scaled
# to min(THREADS, ncpu) CPUs); blank when unknown.
peak_for() {
  if [ -z "$peak1" ]; then echo; return 0; fi
  if [ "$1" -eq 1 ]; then echo "$peak1"; return 0; fi
  awk -v p="$peakn" -v n="$ncpu" -v t="$1" 'BEGIN { if (t > n) t = n; printf "%.1f\n", p / n * t }'
}

# ort_ms MODEL THREADS: ONNX Runtime's median ms of one process, run by the
# reference tools in $ref on $models/MODEL.onnx with its input_0.npy, $iters
# runs (fails when ort_bench.js does not run; its stderr in $tmp/ort.log)
ort_ms() {
  (cd "$ref" && node ort_bench.js "$models/$1.onnx" --threads "$2" --iters "$iters" --warmup 3 \
    --input "$models/$1/input_0.npy" --json 2>"$tmp/ort.log") |
    "$py" -c 'import json, sys; print(json.load(sys.stdin)["median_ms"])' 2>/dev/null
}

# need_models SCRIPT MODEL...: exits 2, naming the first MODEL whose
# $models/MODEL.onnx or $models/MODEL/input_0.npy is missing, with how to
# make them; then makes $models and $ref absolute and creates $tmp, removed
# on exit.
need_models() {
  script=$1
  shift
  for m in "$@"; do
    if [ ! -f "$models/$m.onnx" ] || [ ! -f "$models/$m/input_0.npy" ]; then
      echo "$script: $models/$m.onnx or $models/$m/input_0.npy is missing." >&2
      echo "Generate them with the reference tools (setup.sh installs torch, onnx and onnxruntime-node):" >&2
      echo "  cd $ref && ./setup.sh && /usr/bin/python3 make_models.py --out $models" >&2
      exit 2
    fi
  done
  models=$(cd "$models" && pwd)
  ref=$(cd "$ref" 2>/dev/null && pwd || echo "$ref")
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}
