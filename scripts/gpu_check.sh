#!/bin/bash
# gpu_check.sh: the whole GPU check of the CUDA target, in two halves.
#
#   scripts/gpu_check.sh prepare MODELS OUT   (here: needs mlc-onnx and mlc-run built)
#       compiles MODELS/{resnet50,mobilenet_v2,encoder}.onnx for --target cuda
#       four ways (generated kernels only: --extern none; cuBLAS/cuDNN:
#       --extern cublas,cudnn; --extern auto; cuBLASLt/cuDNN: --extern
#       cublaslt,cudnn, variant "lt", whose matmuls take their bias add and
#       relu), a small MLP of float32 matmuls with a bias (+ relu) made here
#       (ltmlp: Gemm and batched MatMul, reference output from numpy) two
#       ways (none; lt, checked here to be all cublaslt.matmul calls with
#       their epilogues), and a 4096^3 matmul two ways, and puts into OUT
#       the models, their reference inputs and outputs (MODELS/NAME/
#       input_0.npy, output_0.npy: ONNX Runtime on the CPU), what `mlc-onnx
#       inspect` says of each, and the deploy-side runner mlc-run.  Files
#       over SPLIT_MB (default 48) are cut into parts NAME.part-aa, -ab, ...
#       that `run` joins again, so that OUT can travel in pieces where a
#       transfer is limited.  GPU_CHECK_MODELS (default "resnet50
#       mobilenet_v2 encoder") picks the models.  Also the matmul kernels'
#       checks: matmul+bias+relu, a batched matmul, a Gemm with transB and
#       bias, a 1024^3 matmul (generated kernels, the shared-memory tiles;
#       matmul+bias+relu and the Gemm also as variant lt, --extern
#       cublaslt), with their constant weights as .npy.
#   scripts/gpu_check.sh run OUT [RUNS]       (the GPU machine: libc, python3 with numpy)
#       points the runtime at the CUDA libraries found there (the driver's
#       libcuda.so.1, cuBLAS, cuBLASLt and cuDNN from the Python packages
#       nvidia-* or CUDA's own lib64), runs each model on its reference
#       input with mlc-run, checks the output against the reference (max
#       |err| <= 1e-4 + 1e-3 |ref|, as tests/large_models.sh), times RUNS
#       runs (default 50) and prints one table, then generated vs cuBLAS
#       sgemm 4096^3 in TFLOP/s, each checked against NumPy on seeded random
#       inputs, as are the matmul kernels.  Exit 0 when every output
#       matched.
#   scripts/gpu_check.sh prepare-auto MODELS OUT   (here)
#   scripts/gpu_check.sh run-auto OUT              (the GPU machine)
#       --extern auto measured on a GPU, where it is compiled: prepare-auto
#       packs the compiler and the shared libraries it loads (not the C
#       library's, nor libstdc++, which the GPU machine has newer; ICU's
#       data as a stub: LLVM links libxml2, which links ICU, and neither is
#       used) into OUT/compiler.tar.xz, about 40 MB, with
#       MODELS/encoder.onnx, its reference input and output and mlc-run;
#       run-auto unpacks it, compiles the encoder there with --extern auto
#       (each matmul and the softmax timed generated, cuBLAS, cuBLASLt,
#       cuDNN; then the model with the libraries and without), again from
#       the cache of times, and runs and checks the result.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
# The directories of the CUDA libraries found here (the Python packages
# nvidia-*, CUDA's own lib64), for LD_LIBRARY_PATH.
cuda_libs() {
  local libs
  libs=$("${PYTHON:-python3}" - <<'PY' 2>/dev/null
import glob, os, site, sys
dirs = set()
for base in site.getsitepackages() + [site.getusersitepackages()]:
    for pat in ("nvidia/*/lib", "nvidia/*/lib64", "nvidia/cu*/lib"):
        for d in glob.glob(os.path.join(base, pat)):
            if glob.glob(os.path.join(d, "libcublas*.so*")) or glob.glob(os.path.join(d, "libcudnn*.so*")):
                dirs.add(d)
print(":".join(sorted(dirs)))
PY
)
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [ -d "$d" ] && libs="$libs:$d"; done
  echo "${libs#:}"
}
# A libtool wrapper script is not the program: the real one in .libs/.
real_prog() {
  local d b
  d=$(dirname "$1"); b=$(basename "$1")
  if [ -x "$d/.libs/$b" ]; then echo "$d/.libs/$b"; else echo "$1"; fi
}
case "$mode" in
prepare-auto)
  models=${2:?usage: gpu_check.sh prepare-auto MODELS OUT}
  out=${3:?usage: gpu_check.sh prepare-auto MODELS OUT}
  cli=${MLC_CLI:-$here/build/mlc-onnx}
  runner=${MLC_RUN:-$here/build/mlc-run}
  mkdir -p "$out" || exit 1
  cli=$(real_prog "$cli"); runner=$(real_prog "$runner")
  pack=$(mktemp -d) || exit 1
  trap 'rm -rf "$pack"' EXIT
  mkdir -p "$pack/lib" && cp "$cli" "$pack/mlc-onnx" || exit 1
  for lib in $(LD_LIBRARY_PATH="$(dirname "$cli")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$cli" |
               awk '$3 ~ /^\// {print $3}' | sort -u); do
    case $(basename "$lib") in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libgcc_s.so.*|libstdc++.so.*|ld-linux*) ;;
      libicudata.so.*) v=${lib##*.so.}
        printf 'char icudt%s_dat[64];\n' "${v%%.*}" | ${CC:-cc} -shared -fPIC -x c - -o "$pack/lib/$(basename "$lib")" \
          -Wl,-soname,"$(basename "$lib")" || exit 1 ;;
      *) cp -L "$lib" "$pack/lib/" || exit 1 ;;
    esac
  done
  LD_LIBRARY_PATH="$pack/lib" "$pack/mlc-onnx" --version >/dev/null || { echo "gpu_check: the packed compiler does not start" >&2; exit 1; }
  echo "packing the compiler (xz, a few minutes)"
  tar cf - -C "$pack" mlc-onnx lib | xz -T0 -9 >"$out/compiler.tar.xz" || exit 1
  cp "$models/encoder.onnx" "$out/" && cp "$models/encoder/input_0.npy" "$out/encoder.input.npy" &&
    cp "$models/encoder/output_0.npy" "$out/encoder.ref.npy" && cp "$runner" "$out/mlc-run" || exit 1
  ls -la "$out"
  ;;
run-auto)
  dir=${2:?usage: gpu_check.sh run-auto OUT}
  py=${PYTHON:-python3}
  cd "$dir" || exit 1
  rm -rf compiler && mkdir compiler && tar xJf compiler.tar.xz -C compiler || exit 1
  export LD_LIBRARY_PATH="$PWD/compiler/lib:$(cuda_libs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  chmod +x ./mlc-run ./compiler/mlc-onnx
  rm -f auto.cache
  for round in 1 2; do # measured, then from the cache of times
    s=$(date +%s%N)
    ./compiler/mlc-onnx compile encoder.onnx -o encoder.auto.so --target cuda --extern auto --extern-cache auto.cache \
      -v >"compile.$round.log" 2>&1 || { echo "compile failed: $(tail -3 "compile.$round.log")"; exit 1; }
    echo "compile $round ($([ "$round" = 1 ] && echo "times measured" || echo "times from the cache")):" \
      "$(( ($(date +%s%N) - s) / 1000000 )) ms"
  done
  grep -E '^ *auto: ' compile.1.log
  ./compiler/mlc-onnx inspect encoder.auto.so | sed -n '/^dispatch/,/^steps/p' | sed '$d'
  rm -rf out.auto
  ./mlc-run encoder.auto.so --input encoder.input.npy --output-dir out.auto --bench 200 --json >run.auto.json \
    2>run.auto.err || { echo "run failed: $(tail -1 run.auto.err)"; exit 1; }
  "$py" - <<'PY'
import json, sys, numpy as np
a, e = np.load("out.auto/output_0.npy"), np.load("encoder.ref.npy")
ok = a.shape == e.shape and np.allclose(a, e, rtol=1e-3, atol=1e-4)
ms = json.load(open("run.auto.json"))["latency_ms"]["median"]
print("encoder, --extern auto measured on this GPU: median %.4f ms, max |err| %.3g, %s"
      % (ms, float(np.max(np.abs(a - e))) if a.shape == e.shape else float("inf"), "PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
  ;;
prepare)
  models=${2:?usage: gpu_check.sh prepare MODELS OUT}
  out=${3:?usage: gpu_check.sh prepare MODELS OUT}
  cli=${MLC_CLI:-$here/build/mlc-onnx}
  runner=${MLC_RUN:-$here/build/mlc-run}
  py=${PYTHON_ONNX:-/usr/bin/python3}
  mkdir -p "$out" || exit 1
  for f in "$cli" "$runner"; do [ -x "$f" ] || { echo "gpu_check: $f is not built" >&2; exit 1; }; done
  cp "$(real_prog "$runner")" "$out/mlc-run" || exit 1
  "$py" - "$out/sgemm.onnx" <<'PY' || exit 1
import sys, onnx
from onnx import helper, TensorProto
n = 4096
g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "sgemm",
                      [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n]),
                       helper.make_tensor_value_info("b", TensorProto.FLOAT, [n, n])],
                      [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
  # ltmlp: x [2, 8, 64] -> MatMul + Add [96] + Relu -> MatMul + Add [1, 33]
  # -> Reshape [16, 33] -> Gemm (transB, C [40]) + Relu -> y [16, 40];
  # its output computed by numpy in float64
  "$py" - "$out" <<'PY' || exit 1
import os, sys
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
rng = np.random.default_rng(20240611)
def w(*shape):
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
w1, b1 = w(64, 96), rng.standard_normal(96).astype(np.float32)
w2, b2 = w(96, 33), rng.standard_normal((1, 33)).astype(np.float32)
w3, b3 = w(40, 33), rng.standard_normal(40).astype(np.float32)
shape = np.array([16, 33], dtype=np.int64)
inits = [numpy_helper.from_array(a, n) for a, n in
         ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3, "w3"), (b3, "b3"), (shape, "shape"))]
nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1/MatMul"),
         helper.make_node("Add", ["m1", "b1"], ["a1"], name="fc1/Add"),
         helper.make_node("Relu", ["a1"], ["h1"], name="fc1/Relu"),
         helper.make_node("MatMul", ["h1", "w2"], ["m2"], name="fc2/MatMul"),
         helper.make_node("Add", ["b2", "m2"], ["h2"], name="fc2/Add"),
         helper.make_node("Reshape", ["h2", "shape"], ["r"], name="flat"),
         helper.make_node("Gemm", ["r", "w3", "b3"], ["g"], name="fc3/Gemm", transB=1),
         helper.make_node("Relu", ["g"], ["y"], name="fc3/Relu")]
g = helper.make_graph(nodes, "ltmlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 40])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "ltmlp.onnx"))
x = rng.standard_normal((2, 8, 64)).astype(np.float32)
f = lambda a: a.astype(np.float64)
h1 = np.maximum(f(x) @ f(w1) + f(b1), 0)
h2 = (h1 @ f(w2) + f(b2)).reshape(16, 33)
y = np.maximum(h2 @ f(w3).T + f(b3), 0)
np.save(os.path.join(out, "ltmlp.input.npy"), x)
np.save(os.path.join(out, "ltmlp.ref.npy"), y.astype(np.float32))
PY
  fail=0
  build() { # NAME ONNX VARIANT EXTERN
    if "$cli" compile "$2" -o "$out/$1.$3.so" --target cuda --extern "$4" >"$out/$1.$3.log" 2>&1; then
      "$cli" inspect "$out/$1.$3.so" >"$out/$1.$3.inspect.txt" 2>&1
      rm -f "$out/$1.$3.h" "$out/$1.$3.log"
    else
      echo "gpu_check: compiling $1 ($3) failed:" >&2; tail -3 "$out/$1.$3.log" >&2; fail=1
    fi
  }
  "$py" - "$out" <<'PY' || exit 1
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(7)
F = TensorProto.FLOAT
def save(name, nodes, ins, outs, consts):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, F, s) for n, s in ins],
                          [helper.make_tensor_value_info(n, F, s) for n, s in outs],
                          [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "%s/%s.onnx" % (out, name))
    for k, v in consts.items(): np.save("%s/%s.%s.npy" % (out, name, k), v)
r = lambda *s: rng.standard_normal(s).astype(np.float32)
save("mm_bias_relu", [helper.make_node("MatMul", ["x", "W"], ["y"]), helper.make_node("Add", ["y", "b"], ["z"]),
                      helper.make_node("Relu", ["z"], ["out"])], [("x", [512, 256])], [("out", [512, 1024])],
     {"W": r(256, 1024), "b": r(1024)})
save("bmm", [helper.make_node("MatMul", ["a", "b"], ["c"])], [("a", [8, 256, 128]), ("b", [8, 128, 512])],
     [("c", [8, 256, 512])], {})
save("gemm_tb", [helper.make_node("Gemm", ["a", "B", "C"], ["y"], transB=1)], [("a", [1024, 512])],
     [("y", [1024, 1024])], {"B": r(1024, 512), "C": r(1024)})
save("mm1024", [helper.make_node("MatMul", ["a", "b"], ["c"])], [("a", [1024, 1024]), ("b", [1024, 1024])],
     [("c", [1024, 1024])], {})
PY
  for m in mm_bias_relu bmm gemm_tb mm1024; do
    build "$m" "$out/$m.onnx" generated none
    case $m in mm_bias_relu | gemm_tb) # cuBLASLt with the bias (and relu): one call, nothing else
      build "$m" "$out/$m.onnx" lt cublaslt
      grep -q '^steps (1):' "$out/$m.lt.inspect.txt" 2>/dev/null &&
        grep -qE '^  0 +cublaslt\.matmul:' "$out/$m.lt.inspect.txt" ||
        { echo "gpu_check: $m (lt) is not one cublaslt.matmul call" >&2; fail=1; } ;;
    esac
    rm -f "$out/$m.onnx"
  done
  for m in ${GPU_CHECK_MODELS:-resnet50 mobilenet_v2 encoder}; do
    [ -f "$models/$m.onnx" ] || { echo "gpu_check: no $models/$m.onnx" >&2; fail=1; continue; }
    cp "$models/$m/input_0.npy" "$out/$m.input.npy" && cp "$models/$m/output_0.npy" "$out/$m.ref.npy" || fail=1
    build "$m" "$models/$m.onnx" generated none
    build "$m" "$models/$m.onnx" library cublas,cudnn
    build "$m" "$models/$m.onnx" auto auto
    build "$m" "$models/$m.onnx" lt cublaslt,cudnn
  done
  build ltmlp "$out/ltmlp.onnx" generated none
  build ltmlp "$out/ltmlp.onnx" lt cublaslt
  # what the GPU checks of ltmlp's lt variant: each matmul a cublaslt call
  # with its bias add (and relu)
  for want in '"fc1/MatMul" (MatMul), "fc1/Add" (Add), "fc1/Relu" (Relu)' '"fc2/MatMul" (MatMul), "fc2/Add" (Add)$' \
      '"fc3/Gemm" (Gemm), "fc3/Relu" (Relu)'; do
    grep -E '^  [0-9]+ +cublaslt\.matmul:' "$out/ltmlp.lt.inspect.txt" 2>/dev/null | grep -q "$want" ||
      { echo "gpu_check: ltmlp (lt) has no cublaslt.matmul step with $want" >&2; fail=1; }
  done
  build sgemm "$out/sgemm.onnx" generated none
  build sgemm "$out/sgemm.onnx" library cublas
  rm -f "$out/sgemm.onnx" "$out/ltmlp.onnx"
  for f in "$out"/*.so; do
    if [ "$(stat -c %s "$f")" -gt $(( ${SPLIT_MB:-48} * 1048576 )) ]; then
      split -b "${SPLIT_MB:-48}M" "$f" "$f.part-" && rm -f "$f"
    fi
  done
  ls -la "$out"
  exit $fail
  ;;
run)
  dir=${2:?usage: gpu_check.sh run OUT [RUNS]}
  runs=${3:-50}
  py=${PYTHON:-python3}
  cd "$dir" || exit 1
  for p in *.so.part-aa; do # join what travelled in parts
    [ -e "$p" ] || continue
    so=${p%.part-aa}; cat "$so".part-* >"$so" && rm -f "$so".part-*
  done
  export LD_LIBRARY_PATH="$(cuda_libs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "CUDA libraries from: $LD_LIBRARY_PATH"
  chmod +x ./mlc-run
  pass=0; fail=0
  printf '%-14s %-10s %12s %12s  %s\n' model variant median_ms max_abs_err result
  for m in resnet50 mobilenet_v2 encoder ltmlp; do
    variants="generated library auto lt"
    [ "$m" = ltmlp ] && variants="generated lt"
    for v in $variants; do
      so=$m.$v.so
      [ -f "$m.ref.npy" ] || continue # not prepared (GPU_CHECK_MODELS)
      [ -f "$so" ] || { printf '%-14s %-10s %12s %12s  %s\n' "$m" "$v" - - MISSING; fail=$((fail + 1)); continue; }
      rm -rf "out.$m.$v"
      if ! ./mlc-run "$so" --input "$m.input.npy" --output-dir "out.$m.$v" --bench "$runs" --json \
          >"run.$m.$v.json" 2>"run.$m.$v.err"; then
        printf '%-14s %-10s %12s %12s  %s\n' "$m" "$v" - - "RUN FAILED: $(tail -1 "run.$m.$v.err")"
        fail=$((fail + 1)); continue
      fi
      res=$("$py" - "$m" "$v" <<'PY'
import json, sys, numpy as np
m, v = sys.argv[1], sys.argv[2]
a = np.load("out.%s.%s/output_0.npy" % (m, v)); e = np.load("%s.ref.npy" % m)
ok = a.shape == e.shape and np.allclose(a, e, rtol=1e-3, atol=1e-4)
err = float(np.max(np.abs(a.astype(np.float64) - e))) if a.shape == e.shape else float("inf")
ms = json.load(open("run.%s.%s.json" % (m, v)))["latency_ms"]["median"]
print("%.3f %.3g %s" % (ms, err, "PASS" if ok else "FAIL"))
PY
)
      set -- $res
      printf '%-14s %-10s %12s %12s  %s\n' "$m" "$v" "${1:--}" "${2:--}" "${3:-FAIL}"
      [ "${3:-}" = PASS ] && pass=$((pass + 1)) || fail=$((fail + 1))
    done
  done
  # the matmul kernels, on seeded inputs against NumPy (float64)
  for mv in mm_bias_relu.generated mm_bias_relu.lt bmm.generated gemm_tb.generated gemm_tb.lt mm1024.generated; do
    m=${mv%.*} v=${mv#*.}
    so=$m.$v.so
    [ -f "$so" ] || continue
    res=$("$py" - "$m" "$v" <<'PY'
import json, subprocess, sys, numpy as np
m, var = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)
r = lambda *s: rng.standard_normal(s).astype(np.float32)
c = lambda k: np.load("%s.%s.npy" % (m, k)).astype(np.float64)
if m == "mm_bias_relu":
    ins = {"x": r(512, 256)}; ref = np.maximum(ins["x"] @ c("W") + c("b"), 0)
elif m == "bmm":
    ins = {"a": r(8, 256, 128), "b": r(8, 128, 512)}; ref = ins["a"].astype(np.float64) @ ins["b"]
elif m == "gemm_tb":
    ins = {"a": r(1024, 512)}; ref = ins["a"].astype(np.float64) @ c("B").T + c("C")
else:
    ins = {"a": r(1024, 1024), "b": r(1024, 1024)}; ref = ins["a"].astype(np.float64) @ ins["b"]
args = ["./mlc-run", "%s.%s.so" % (m, var), "--output-dir", "out.%s.%s" % (m, var), "--bench", "20", "--json"]
for k, v in ins.items():
    np.save("in.%s.%s.npy" % (m, k), v); args += ["--input", "%s=in.%s.%s.npy" % (k, m, k)]
p = subprocess.run(args, capture_output=True, text=True)
if p.returncode:
    print("- - RUN-FAILED:%s" % (p.stderr.strip().splitlines() or ["?"])[-1].replace(" ", "_")); sys.exit()
a = np.load("out.%s.%s/output_0.npy" % (m, var))
err = float(np.max(np.abs(a - ref))) if a.shape == ref.shape else float("inf")
ok = a.shape == ref.shape and np.allclose(a, ref, rtol=1e-3, atol=1e-3)
print("%.3f %.3g %s" % (json.loads(p.stdout)["latency_ms"]["median"], err, "PASS" if ok else "FAIL"))
PY
)
    set -- $res
    printf '%-14s %-10s %12s %12s  %s\n' "$m" "$v" "${1:--}" "${2:--}" "${3:-FAIL}"
    [ "${3:-}" = PASS ] && pass=$((pass + 1)) || fail=$((fail + 1))
  done
  # sgemm 4096^3: checked on seeded inputs, then timed
  "$py" -c "import numpy as np; g = np.random.default_rng(5)
a = g.standard_normal((4096, 4096), dtype=np.float32); b = g.standard_normal((4096, 4096), dtype=np.float32)
np.save('in.sgemm.a.npy', a); np.save('in.sgemm.b.npy', b); np.save('sgemm.ref.npy', a @ b)"
  for v in generated library; do
    so=sgemm.$v.so
    [ -f "$so" ] || continue
    rm -rf "out.sgemm.$v"
    if ./mlc-run "$so" --input a=in.sgemm.a.npy --input b=in.sgemm.b.npy --output-dir "out.sgemm.$v" \
        >/dev/null 2>"run.sgemm.$v.err" &&
        "$py" -c "import numpy as np, sys; a = np.load('out.sgemm.$v/output_0.npy'); e = np.load('sgemm.ref.npy')
print('sgemm 4096^3 %-10s max |err| %.3g' % ('$v', float(np.max(np.abs(a - e)))))
sys.exit(0 if np.allclose(a, e, rtol=1e-3, atol=1e-3) else 1)"; then
      pass=$((pass + 1))
    else
      echo "sgemm 4096^3 $v: WRONG OR FAILED: $(tail -1 "run.sgemm.$v.err")"; fail=$((fail + 1))
    fi
  done
  for v in generated library; do
    so=sgemm.$v.so
    [ -f "$so" ] || continue
    # --profile times each step alone (the stream waited for after it): the
    # matmul without the copies of its 64 MiB inputs and output
    if ./mlc-run "$so" --bench 20 --profile --json >"run.sgemm.$v.json" 2>"run.sgemm.$v.err"; then
      "$py" - "$v" <<'PY'
import json, sys
j = json.load(open("run.sgemm.%s.json" % sys.argv[1]))
ms = sum(p["ms"] for p in j["profile"])
print("sgemm 4096^3 %-10s %9.3f ms %8.2f TFLOP/s (%s; end to end with copies %.3f ms)"
      % (sys.argv[1], ms, 2 * 4096**3 / (ms * 1e-3) / 1e12, ", ".join(p["function"] for p in j["profile"]),
         j["latency_ms"]["median"]))
PY
    else
      echo "sgemm 4096^3 $v: RUN FAILED: $(tail -1 "run.sgemm.$v.err")"
    fi
  done
  echo "gpu_check: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  ;;
*)
  sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
