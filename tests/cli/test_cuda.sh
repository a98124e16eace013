#!/bin/sh
# test_cuda.sh: the CUDA target where there is no GPU (as in CI).
#
# The bundled models compile with --target cuda (generated kernels, and
# with cuBLAS/cuBLASLt/cuDNN); the PTX the compiler writes (--dump-ir's
# 21_device.ptx) is accepted by CUDA's own assembler, ptxas, for the
# default architecture and for -arch=sm_90; the GPU schedule binds loops to
# blockIdx/threadIdx; inspect shows the device kernels and the library
# calls; a CUDA model run where no driver is (or where the driver finds no
# device: a stand-in libcuda.so.1 built here) is a clear error naming the
# cause, never a crash; wrong target or --extern combinations are errors;
# a large matmul's shared-memory tiles (PTX, and the schedule on the CPU);
# warp shuffles in the row reductions.
# Env: MLC_CLI, MLC_SRCDIR, MLC_BUILDDIR.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:-.}
build=${MLC_BUILDDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() { echo "test_cuda: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
cuda=$(sed -n 's/^#define MLC_CUDA_HOME "\(.*\)"$/\1/p' "$build/config.h" 2>/dev/null)
if [ -z "$cuda" ] || [ ! -f "$cuda/nvvm/libdevice/libdevice.10.bc" ]; then
  echo "test_cuda: skipped (this build found no CUDA)"; exit 77
fi
ptxas=$cuda/bin/ptxas

# 1. compile, check the PTX with ptxas, for each bundled model
for m in mlp cnn encoder; do
  for arch in "" sm_90; do
    t="cuda${arch:+ -arch=$arch}"
    d=$tmp/$m.${arch:-default}
    if ! "$cli" compile "$src/models/$m.onnx" -o "$d.so" --target "$t" --dump-ir "$d.ir" >"$d.log" 2>&1; then
      fail "$m ($t): compile failed: $(tail -2 "$d.log")"; continue
    fi
    ok
    if [ ! -s "$d.ir/21_device.ptx" ]; then fail "$m ($t): no PTX dumped"; continue; fi
    grep -q "^.target ${arch:-sm_75}" "$d.ir/21_device.ptx" && ok || fail "$m ($t): PTX not for ${arch:-sm_75}"
    if [ -x "$ptxas" ]; then
      if "$ptxas" -arch="${arch:-sm_75}" "$d.ir/21_device.ptx" -o "$d.cubin" 2>"$d.ptxas"; then ok
      else fail "$m ($t): ptxas rejects the PTX: $(head -3 "$d.ptxas")"; fi
    fi
    grep -q 'T.thread_binding.*blockIdx.x' "$d.ir/15_schedule.after.txt" && ok || fail "$m ($t): no loop bound to blockIdx.x"
  done
done

# 2. inspect shows device kernels; library calls with --extern cublas,cudnn
m=$tmp/cnn.default.so
if [ -f "$m" ]; then
  "$cli" inspect "$m" >"$tmp/inspect.txt" 2>&1 && grep -qi cuda "$tmp/inspect.txt" && ok ||
    fail "inspect of a CUDA model does not say cuda: $(head -5 "$tmp/inspect.txt")"
fi
if grep -q 'MLC_HAVE_CUDA 1' "$build/config.h"; then
  if "$cli" compile "$src/models/cnn.onnx" -o "$tmp/cnn.lib.so" --target cuda --extern cublas,cudnn >"$tmp/lib.log" 2>&1; then
    "$cli" inspect "$tmp/cnn.lib.so" >"$tmp/lib.txt" 2>&1
    grep -q 'cudnn.conv2d' "$tmp/lib.txt" && ok || fail "no cudnn.conv2d call in: $(grep -i extern "$tmp/lib.txt" | head -3)"
  else
    fail "--extern cublas,cudnn: $(tail -2 "$tmp/lib.log")"
  fi
  # the MLP's matmuls both have a bias: cuBLASLt's
  "$cli" compile "$src/models/mlp.onnx" -o "$tmp/mlp.auto.so" --target cuda --extern auto >"$tmp/auto.log" 2>&1 &&
    "$cli" inspect "$tmp/mlp.auto.so" 2>&1 | grep -q 'cublaslt.matmul' && ok || fail "--extern auto on cuda takes no cuBLASLt call"
fi

# 2b. cuBLASLt: with --extern cublaslt the encoder's matmuls take their
# bias adds along N and relu and nothing else (the residual adds stay),
# the PTX of the rest passes ptxas, and the model still links libc and
# libm alone; with cublas,cublaslt the matmuls without a bias go to cuBLAS
if grep -q 'MLC_HAVE_CUDA 1' "$build/config.h"; then
  d=$tmp/enc.lt
  if "$cli" compile "$src/models/encoder.onnx" -o "$d.so" --target cuda --extern cublaslt --dump-ir "$d.ir" \
      >"$d.log" 2>&1; then
    ok
    "$cli" inspect "$d.so" >"$d.txt" 2>&1
    # steps: "N    cublaslt.matmul: "node" (Op), ..." with the nodes each covers
    steps=$(grep -E '^  [0-9]+ +cublaslt\.matmul:' "$d.txt")
    [ "$(printf '%s\n' "$steps" | grep -c .)" -eq 8 ] && ok || fail "encoder --extern cublaslt: not 8 cublaslt calls: $steps"
    printf '%s\n' "$steps" | grep -q '"ffn.fc1/MatMul" (MatMul), "ffn.fc1/Add" (Add), "ffn/Relu" (Relu)$' && ok ||
      fail "ffn.fc1 does not take its bias and relu: $(printf '%s\n' "$steps" | grep fc1)"
    printf '%s\n' "$steps" | grep -q '"attn.q/MatMul" (MatMul), "attn.q/Add" (Add)$' && ok ||
      fail "attn.q does not take its bias: $(printf '%s\n' "$steps" | grep attn.q)"
    printf '%s\n' "$steps" | grep -q '"attn/scores/MatMul" (MatMul)$' && ok || fail "scores: $(printf '%s\n' "$steps" | grep scores)"
    # the residual adds (a tensor, not a bias) stay generated
    printf '%s\n' "$steps" | grep -q 'res[12]/Add' && fail "a residual add went into a cublaslt call: $steps" || ok
    grep -E '^  [0-9]+ +fused.*"res1/Add"' "$d.txt" >/dev/null && ok || fail "res1/Add is in no generated kernel"
    # the dumped graph: A, W, the bias constant, and has_bias 1, act relu
    grep -q 'call_dps_packed("cublaslt.matmul", (lv[0-9]*, c[0-9]*, c[0-9]*), out_sinfo=R.Tensor((1, 16, 64), "float32"), args=\[1, 1\])' \
      "$d.ir/07_dispatch.after.txt" && ok || fail "no cublaslt call with bias and relu in the dumped graph"
    if [ -x "$ptxas" ]; then
      "$ptxas" -arch=sm_75 "$d.ir/21_device.ptx" -o "$d.cubin" 2>"$d.ptxas" && ok ||
        fail "encoder --extern cublaslt: ptxas rejects the PTX: $(head -3 "$d.ptxas")"
    fi
    if command -v ldd >/dev/null; then
      extra=$(ldd "$d.so" | awk '{print $1}' | grep -vE '^(linux-vdso|/lib.*ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|libasan|libubsan|libstdc\+\+|libgcc_s|librt\.so)' | tr '\n' ' ')
      [ -z "$extra" ] && ok || fail "encoder --extern cublaslt links more than libc, libm, pthreads: $extra"
    fi
    grep -q '"library": "libcublasLt.so.13"' "$d.txt" && ok || fail "inspect does not name libcublasLt.so.13"
  else
    fail "--extern cublaslt: $(tail -2 "$d.log")"
  fi
  # cuBLAS listed first: the matmuls without a bias stay cuBLAS's
  if "$cli" compile "$src/models/encoder.onnx" -o "$tmp/enc.3.so" --target cuda --extern cublas,cublaslt,cudnn \
      >"$tmp/enc.3.log" 2>&1; then
    "$cli" inspect "$tmp/enc.3.so" >"$tmp/enc.3.txt" 2>&1
    grep -q 'matmul "ffn.fc1/MatMul" .* -> cublaslt.matmul (fuses more' "$tmp/enc.3.txt" && ok ||
      fail "cublas,cublaslt: fc1 not to cublaslt: $(grep fc1/MatMul "$tmp/enc.3.txt" | head -2)"
    grep -q 'matmul "attn/scores/MatMul" .* -> cublas.matmul ' "$tmp/enc.3.txt" && ok ||
      fail "cublas,cublaslt: scores not to cublas: $(grep scores "$tmp/enc.3.txt" | head -2)"
    grep -q 'cudnn.softmax' "$tmp/enc.3.txt" && ok || fail "cublas,cublaslt,cudnn: no cudnn.softmax"
  else
    fail "--extern cublas,cublaslt,cudnn: $(tail -2 "$tmp/enc.3.log")"
  fi
fi

# 3. running without a GPU: a clear error, exit 1, no crash
m=$tmp/mlp.default.so
"$cli" run "$m" >"$tmp/run.out" 2>&1; rc=$?
[ "$rc" -eq 1 ] && grep -q 'libcuda.so.1' "$tmp/run.out" && ok || fail "run without a driver: rc $rc: $(tail -2 "$tmp/run.out")"
# a driver that finds no device
cat >"$tmp/fakecuda.c" <<'CEOF'
typedef int R;
R cuInit(unsigned f) { (void)f; return 100; }
R cuGetErrorName(R r, const char **s) { *s = r == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR"; return 0; }
R cuGetErrorString(R r, const char **s) { *s = r == 100 ? "no CUDA-capable device is detected" : "error"; return 0; }
#define STUB(n) R n(void) { return 999; }
STUB(cuDeviceGetCount) STUB(cuDeviceGet) STUB(cuDeviceGetName) STUB(cuDevicePrimaryCtxRetain)
STUB(cuDevicePrimaryCtxRelease_v2) STUB(cuCtxPushCurrent_v2) STUB(cuCtxPopCurrent_v2) STUB(cuStreamCreate)
STUB(cuStreamDestroy_v2) STUB(cuStreamSynchronize) STUB(cuModuleLoadDataEx) STUB(cuModuleUnload)
STUB(cuModuleGetFunction) STUB(cuMemAlloc_v2) STUB(cuMemFree_v2) STUB(cuMemcpyHtoDAsync_v2)
STUB(cuMemcpyDtoHAsync_v2) STUB(cuMemsetD8Async) STUB(cuLaunchKernel) STUB(cuStreamBeginCapture_v2)
STUB(cuStreamEndCapture) STUB(cuGraphInstantiateWithFlags) STUB(cuGraphLaunch) STUB(cuGraphExecDestroy)
STUB(cuGraphDestroy)
CEOF
if ${CC:-cc} -shared -fPIC -o "$tmp/libcuda.so.1" "$tmp/fakecuda.c" 2>"$tmp/cc.log"; then
  LD_LIBRARY_PATH=$tmp "$cli" run "$m" >"$tmp/run2.out" 2>&1; rc=$?
  [ "$rc" -eq 1 ] && grep -q 'no CUDA device' "$tmp/run2.out" && ok ||
    fail "run with a driver that finds no device: rc $rc: $(tail -2 "$tmp/run2.out")"
  # --extern auto where the driver finds no GPU: the rule, nothing timed
  if grep -q 'MLC_HAVE_CUDA 1' "$build/config.h"; then
    LD_LIBRARY_PATH=$tmp "$cli" compile "$src/models/cnn.onnx" -o "$tmp/cnn.auto.so" --target cuda --extern auto \
      >"$tmp/auto2.log" 2>&1 && "$cli" inspect "$tmp/cnn.auto.so" >"$tmp/auto2.txt" 2>&1
    # the CNN's one matmul, its classifier's Gemm, has a bias: cuBLASLt's
    grep -q 'cublaslt.matmul' "$tmp/auto2.txt" && ! grep -q 'cudnn\.' "$tmp/auto2.txt" && ! grep -q 'auto: choosing' "$tmp/auto2.log" &&
      ok || fail "auto without a GPU: $(tail -2 "$tmp/auto2.log")"
    # the encoder's: cuBLASLt's with a bias, cuBLAS's without
    LD_LIBRARY_PATH=$tmp "$cli" compile "$src/models/encoder.onnx" -o "$tmp/enc.auto.so" --target cuda --extern auto \
      >"$tmp/auto3.log" 2>&1 && "$cli" inspect "$tmp/enc.auto.so" >"$tmp/auto3.txt" 2>&1
    grep -q 'matmul "ffn.fc1/MatMul" .* -> cublaslt.matmul' "$tmp/auto3.txt" &&
      grep -q 'matmul "attn/scores/MatMul" .* -> cublas.matmul' "$tmp/auto3.txt" && ok ||
      fail "auto without a GPU, encoder: $(grep -- '->' "$tmp/auto3.txt" | head -3)"
  fi
fi

# 4. errors: unknown architecture, CPU libraries for cuda, cuda libraries for the CPU
"$cli" compile "$src/models/mlp.onnx" -o "$tmp/x.so" --target "cuda -arch=sm_12" >"$tmp/e1" 2>&1
[ $? -ne 0 ] && grep -q 'sm_12' "$tmp/e1" && grep -q 'sm_90' "$tmp/e1" && ok || fail "bad -arch: $(tail -1 "$tmp/e1")"
if grep -q 'MLC_HAVE_OPENBLAS 1' "$build/config.h"; then
  "$cli" compile "$src/models/mlp.onnx" -o "$tmp/x.so" --target cuda --extern openblas >"$tmp/e2" 2>&1
  [ $? -ne 0 ] && grep -q 'serves the CPU' "$tmp/e2" && ok || fail "openblas for cuda: $(tail -1 "$tmp/e2")"
fi
if grep -q 'MLC_HAVE_CUDA 1' "$build/config.h"; then
  "$cli" compile "$src/models/mlp.onnx" -o "$tmp/x.so" --extern cublas >"$tmp/e3" 2>&1
  [ $? -ne 0 ] && grep -q 'serves the cuda' "$tmp/e3" && ok || fail "cublas for the CPU: $(tail -1 "$tmp/e3")"
  "$cli" compile "$src/models/mlp.onnx" -o "$tmp/x.so" --extern cublaslt >"$tmp/e4" 2>&1
  [ $? -eq 1 ] && grep -q 'cublaslt serves the cuda' "$tmp/e4" && ok || fail "cublaslt for the CPU: $(tail -1 "$tmp/e4")"
fi

# 5. shared-memory tiles (rule G7): a matmul large enough for them stages
# its operands' panels in shared memory between barriers; the PTX holds
# them (ld.shared, bar.sync) and ptxas accepts it; the same schedule run
# on the CPU (MLC_GPU_SCHEDULE_ON_CPU=1) gives the CPU build's outputs
py=${PYTHON_ONNX:-/usr/bin/python3}
if "$py" -c 'import onnx, numpy' 2>/dev/null; then
  "$py" - "$tmp" <<'PY' || fail "making the matmul models"
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
F, out = TensorProto.FLOAT, sys.argv[1]
rng = np.random.default_rng(1)
def save(name, nodes, ins, outs, consts):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, F, s) for n, s in ins],
                          [helper.make_tensor_value_info(n, F, s) for n, s in outs],
                          [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "%s/%s.onnx" % (out, name))
save("rows", [helper.make_node("Softmax", ["x"], ["y"], axis=-1),
             helper.make_node("ReduceMean", ["y"], ["z"], axes=[-1], keepdims=1)],
     [("x", [8, 64, 256])], [("z", [8, 64, 1])], {})
save("mm", [helper.make_node("MatMul", ["a", "b"], ["c"])], [("a", [1024, 512]), ("b", [512, 1024])],
     [("c", [1024, 1024])], {})
save("mbr", [helper.make_node("MatMul", ["x", "W"], ["y"]), helper.make_node("Add", ["y", "b"], ["z"]),
             helper.make_node("Relu", ["z"], ["o"])], [("x", [512, 128])], [("o", [512, 1024])],
     {"W": rng.standard_normal((128, 1024)).astype(np.float32), "b": rng.standard_normal(1024).astype(np.float32)})
PY
  d=$tmp/mm.sm90
  if "$cli" compile "$tmp/mm.onnx" -o "$d.so" --target "cuda -arch=sm_90" --extern none --dump-ir "$d.ir" >"$d.log" 2>&1; then
    [ "$(grep -c 'scope="shared"' "$d.ir/12_lowered.tir.txt")" -eq 2 ] && ok ||
      fail "mm for cuda: not two shared buffers in the lowered TIR"
    [ "$(grep -c 'T.sync_threads()' "$d.ir/12_lowered.tir.txt")" -eq 2 ] && ok || fail "mm for cuda: not two barriers"
    grep -q 'ld.shared' "$d.ir/21_device.ptx" && grep -q 'bar.sync' "$d.ir/21_device.ptx" && ok ||
      fail "mm for cuda: no ld.shared / bar.sync in the PTX"
    # a row of B's panel: vector loads, aligned (the index a multiple of 4)
    grep -q 'ld.shared.v4.f32' "$d.ir/21_device.ptx" && ok || fail "mm for cuda: no ld.shared.v4 in the PTX"
    if [ -x "$ptxas" ]; then
      "$ptxas" -arch=sm_90 -v "$d.ir/21_device.ptx" -o "$d.cubin" >"$d.ptxas" 2>&1 && grep -q 'bytes smem' "$d.ptxas" &&
        ok || fail "mm for cuda: ptxas: $(head -3 "$d.ptxas")"
    fi
  else
    fail "mm for cuda: compile failed: $(tail -2 "$d.log")"
  fi
  # row reductions (softmax's max and sum, a mean) combine their lanes'
  # partial results with warp shuffles, in the kernel that computes them
  d=$tmp/rows
  if "$cli" compile "$tmp/rows.onnx" -o "$d.so" --target cuda --extern none --dump-ir "$d.ir" >"$d.log" 2>&1; then
    [ "$(grep -c 'T.warp_sum\|T.warp_max' "$d.ir/16_lower_tir.after.txt")" -eq 3 ] && ok ||
      fail "rows for cuda: not three warp reductions in the lowered TIR"
    grep -q 'shfl.sync.bfly' "$d.ir/21_device.ptx" && ok || fail "rows for cuda: no warp shuffle in the PTX"
    if [ -x "$ptxas" ]; then
      "$ptxas" -arch=sm_75 "$d.ir/21_device.ptx" -o "$d.cubin" 2>"$d.ptxas" && ok || fail "rows: ptxas: $(head -3 "$d.ptxas")"
    fi
  else
    fail "rows for cuda: compile failed: $(tail -2 "$d.log")"
  fi
  for m in mm mbr rows; do
    if MLC_GPU_SCHEDULE_ON_CPU=1 "$cli" compile "$tmp/$m.onnx" -o "$tmp/$m.gpu.so" -q --dump-ir "$tmp/$m.gpu.ir" 2>"$tmp/$m.err" &&
        "$cli" compile "$tmp/$m.onnx" -o "$tmp/$m.cpu.so" -q 2>>"$tmp/$m.err" &&
        "$cli" run "$tmp/$m.gpu.so" --seed 3 --output-dir "$tmp/$m.gpu.out" >/dev/null 2>>"$tmp/$m.err" &&
        "$cli" run "$tmp/$m.cpu.so" --seed 3 --output-dir "$tmp/$m.cpu.out" >/dev/null 2>>"$tmp/$m.err"; then
      [ "$m" = rows ] || grep -q 'scope="shared"' "$tmp/$m.gpu.ir/12_lowered.tir.txt" && ok ||
        fail "$m: the GPU schedule has no shared tiles"
      "$py" -c "import numpy as np, sys
a, b = np.load('$tmp/$m.gpu.out/output_0.npy'), np.load('$tmp/$m.cpu.out/output_0.npy')
sys.exit(0 if a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-4) else 1)" && ok ||
        fail "$m: the shared-memory schedule on the CPU differs from the CPU build"
    else
      fail "$m: $(tail -2 "$tmp/$m.err")"
    fi
  done
fi
finish
