#!/bin/sh
# test_schedule_rules.sh: default CPU schedule rules on small models, each
# compiled for an AVX2 target (llvm -mcpu=znver3: 8-lane vectors, whose
# code runs on AVX-512 hosts too) and for the host, its outputs checked
# against numpy's (tests/schedule_rules/make_models.py):
#   - a classifier's matrix-vector product (1 x 96 @ 96 x 1000) gets a
#     register tile of one row and 5 vectors (rule T) on 8-lane targets,
#     where 5 columns are allowed, its weight packed in blocks of the
#     tile's 40 columns (alter_layout); on AVX-512 (compiled only, for
#     llvm -mcpu=znver4) it streams its weight by rows (rule 1): the
#     columns in 8 chunks of 16 vectors of 8 lanes, the reduction outside
#     each chunk's vectors; so does one of 88 columns (11 vectors, no tile
#     of whole columns) on AVX2;
#   - a 1x1 conv whose input (1024 channels at 14x14) does not fit in L2
#     with a panel's weights is reduced in blocks on 8-lane targets (rule
#     T): the input channel chunks' loop split in 4, its outer loop
#     outermost, the loops inside it in parallel, the epilogue after;
#   - a parallel loop that fuses loops carries its grain (the iterations
#     of the loops inside the first), and runs right on 2 and 3 threads;
#   - a 3x3 conv of 512 output channels at 7x7, whose panels' weights
#     (72 KB each) do not fit in L1, is reduced in panel blocks on 8-lane
#     targets (rule T): the input channel chunks' loop split in 8 blocks
#     of 9 KB, its outer loop inside the panels' (parallel) loop and
#     outside the row blocks, the epilogue after each panel; so is a 1x1
#     conv to 1000 channels at 13x13, whose tiles of 2 rows allow as few
#     as 16 panels (25 of 5 chunks of 8 channels; 2 blocks of 13 KB),
#     its rows 14 wide reading the input in place (the extra column the
#     last one again);
#   - a 3x3 conv of 256 channels at 14x14, whose panels' weights (288 KB
#     each, 8 panels) do not stay in L2 beside the input rows, is reduced
#     in 2 panel blocks of 144 KB on 8-lane targets (rule T), not in
#     reduction blocks: its input (278 KB padded) fits in half of L2;
#     one of 512 channels to 128 at 7x7 (4 panels of 576 KB, too few for
#     that) keeps 4 reduction blocks;
#   - a 3x3 conv at 13x13 is computed 15 columns wide on 8-lane targets,
#     tiles of 5 columns by the block's 2 vectors (13 has no tile of 2
#     vectors of its own; 14 would tile as 7 x 1);
#   - in 32-channel blocks on 8-lane targets a 3x3 conv at 28x28 is
#     computed 30 columns wide in tiles of 3 x 4 vectors; convs at 7x7
#     tile their 49 pixels flattened as 17 x 3 (3 x 4 tiles): a 1x1 conv
#     reading its input in place, a strided one through a flat copy of
#     the pixels its stride picks, a
#     3x3 conv of stride 2 reading its padded copy at each pixel's row and
#     column; a 1x1 conv to 1024 channels at 7x7 flat in panel blocks, its
#     epilogue under the panels' loop reading the flat accumulator;
#   - a layer norm's two row means are vectorized (rule R), the
#     subtraction that broadcasts the first along the row stays after it
#     (rule F2 moves only elementwise epilogues);
#   - convs of a symbolic batch on static images (run with 2) give
#     numpy's outputs, rows and flat (a 3x3 conv through its padded copy,
#     a 1x1 conv reading its input in place);
#   - a stem conv (3 input channels) makes its padded copy whole, before
#     the conv, on 8-lane targets: per tile it would copy element by
#     element;
#   - a matmul whose result is the function's own (no epilogue) tiles in a
#     local accumulator (cache_write), copied back after each tile;
#   - a depthwise conv in 16-channel blocks gets a register tile on 8-lane
#     targets (rule T): the block's two vectors an outer loop, output
#     pixels the tile's rows, the padded copy made per tile.
# Env: MLC_CLI, MLC_SRCDIR, PYTHON_ONNX.
set -u
cli=${MLC_CLI:?}
src=${MLC_SRCDIR:?}
py=${PYTHON_ONNX:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
  echo "SKIP: no onnx/numpy in $py"
  echo "test_schedule_rules.sh: 0 passed, 0 failed"
  exit 0
fi
"$py" "$src/tests/schedule_rules/make_models.py" "$tmp" || { echo "FAIL: make_models.py"; exit 1; }

# close OUT.npy REF.npy: rtol 1e-3, atol 1e-4
close() {
  "$py" -c 'import sys, numpy as np; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); sys.exit(0 if a.shape==e.shape and np.allclose(a,e,rtol=1e-3,atol=1e-4) else 1)' "$1" "$2"
}
# build MODEL TAG [compile options]: compile with --dump-ir, run, compare
build() {
  m=$1; t=$2; shift 2
  if ! "$cli" compile "$tmp/$m.onnx" -o "$tmp/$m.$t.so" -q --dump-ir "$tmp/d.$m.$t" "$@" 2>"$tmp/err"; then
    fail "$m ($t): compile"; head -5 "$tmp/err"; return 1
  fi
  if ! "$cli" run "$tmp/$m.$t.so" --input "$tmp/${m}_x.npy" --output-dir "$tmp/o.$m.$t" >/dev/null 2>"$tmp/err"; then
    fail "$m ($t): run"; head -5 "$tmp/err"; return 1
  fi
  close "$tmp/o.$m.$t/output_0.npy" "$tmp/${m}_ref.npy" && ok || fail "$m ($t): output differs from numpy's"
}
trace() { cat "$tmp/d.$1.$2/11_schedule/$3.trace" 2>/dev/null; }
# run_threads MODEL T: the AVX2 build of MODEL on T threads gives numpy's outputs
run_threads() {
  if "$cli" run "$tmp/$1.avx2.so" --threads "$2" --input "$tmp/$1_x.npy" --output-dir "$tmp/o.$1.t$2" >/dev/null 2>"$tmp/err"; then
    close "$tmp/o.$1.t$2/output_0.npy" "$tmp/$1_ref.npy" && ok || fail "$1 (avx2, $2 threads): output differs from numpy's"
  else
    fail "$1 (avx2, $2 threads): run"; head -5 "$tmp/err"
  fi
}
# panel_blocks MODEL BLOCKS PANELS INNER LINES: the AVX2 conv of MODEL splits
# its reduction in BLOCKS panel blocks; in its lowered code the blocks' loop
# (the loops INNER) is inside the panels' parallel loop of PANELS
# iterations, and the epilogue under it (within LINES lines); sets $low
panel_blocks() {
  tr=$(trace "$1" avx2 fused_conv2d_nchwc_relu)
  echo "$tr" | grep -q "factors=\\[$2, None\\]" && echo "$tr" | grep -q 'sch.reverse_compute_at' && ok ||
    fail "$1 (avx2): no panel blocks, or the epilogue not under the panels: $tr"
  low=$(awk '/mlc_k_fused_conv2d_nchwc_relu"/,/^@T.prim_func/' "$tmp/d.$1.avx2/16_lower_tir.after.txt" 2>/dev/null)
  par="for oc_chunk in T.parallel($3, annotations={\"software_prefetch\": \"B\"})"
  echo "$low" | grep -F -A4 "$par" | grep -q "$4" && ok ||
    fail "$1 (avx2): the blocks' loop is not inside the panels' and outside the rows: $(echo "$low" | grep -A4 'T.parallel')"
  echo "$low" | grep -F -A"$5" "$par" | grep -q 'T.max' && ok ||
    fail "$1 (avx2): the epilogue is not under the panels' loop"
}

for t in avx2 host; do
  if [ $t = avx2 ]; then set -- --target "llvm -mcpu=znver3"; else set --; fi
  build gemv $t "$@"
  build gemv88 $t "$@"
  build dwconv $t "$@"
  build kblocks $t "$@"
  build pblocks $t "$@"
  build pblocks1k $t "$@"
  build pblocksl2 $t "$@"
  build kblocksfew $t "$@"
  build width13 $t "$@"
  build block32 $t "$@"
  build flat7 $t "$@"
  build flat7s2 $t "$@"
  build flat3s2 $t "$@"
  build flatpb $t "$@"
  build layernorm $t "$@"
  build batchn $t "$@"
  build batchnflat $t "$@"
  build batchndirect $t "$@"
  build stem $t "$@"
  build matmul $t "$@"
  # the tile accumulates in a local buffer, not in the result
  low=$(awk '/mlc_k_matmul_packed"/,/^@T.prim_func/' "$tmp/d.matmul.$t/16_lower_tir.after.txt" 2>/dev/null)
  echo "$low" | grep -q 'T_matmul_packed_local = T.alloc_buffer' &&
    ! echo "$low" | grep -q 'T_matmul_packed_1\[[^]]*\] = T_matmul_packed_1\[' && ok ||
    fail "matmul ($t): the tile accumulates in the result: $(echo "$low" | grep -m 2 'T_matmul_packed')"
done

# the matrix-vector products, AVX2: 1000 lanes as a tile of 5 vectors of 8,
# the weight packed in blocks of the tile's 40 columns (each tile's read
# contiguous); 88 lanes streamed: vectors of 8, chunks of 4, the reduce
# loop k moved outside the chunk's vectors
tr=$(trace gemv avx2 fused_matmul_packed_add)
echo "$tr" | grep -q 'factors=\[None, 5, 8\]' && ok || fail "gemv (avx2): no tile of 5 vectors of 8 lanes: $tr"
grep -q 'B: T.Buffer((25, 96, 40), "float32")' "$tmp/d.gemv.avx2/11_schedule/fused_matmul_packed_add.tir" && ok ||
  fail "gemv (avx2): the weight is not packed in 25 blocks of 40 columns: $(grep -m1 'def ' "$tmp/d.gemv.avx2/11_schedule/fused_matmul_packed_add.tir")"
# a matrix-vector product reads each panel's weights once: its panel loop
# is marked, but lowering adds no prefetch
low=$(awk '/mlc_k_fused_matmul_packed_add"/,/^@T.prim_func/' "$tmp/d.gemv.avx2/16_lower_tir.after.txt" 2>/dev/null)
echo "$low" | grep -q 'T.parallel(25, annotations={"software_prefetch": "B"})' && ! echo "$low" | grep -q 'T.prefetch' && ok ||
  fail "gemv (avx2): no mark on the panel loop, or prefetches of weights read once: $(echo "$low" | grep -e T.parallel -e prefetch)"
tr=$(trace gemv88 avx2 fused_matmul_add)
echo "$tr" | grep -q 'factors=\[None, 8\]' && echo "$tr" | grep -q 'factors=\[None, 4\]' && ok ||
  fail "gemv88 (avx2): no split into chunks of 4 vectors of 8 lanes: $tr"
low=$(awk '/mlc_k_fused_matmul_add"/,/^@T.prim_func/' "$tmp/d.gemv88.avx2/16_lower_tir.after.txt" 2>/dev/null)
echo "$low" | grep -q 'for k, [a-z0-9_]* in T.grid(96, 4)' && ok ||
  fail "gemv88 (avx2): the reduction is not outside each chunk's vectors: $(echo "$low" | grep 'for k')"
# AVX-512 (compiled, not run): 1000 lanes streamed, 8 chunks in parallel
if "$cli" compile "$tmp/gemv.onnx" -o "$tmp/gemv.avx512.so" -q --target "llvm -mcpu=znver4" --dump-ir "$tmp/d.gemv.avx512" 2>"$tmp/err"; then
  tr=$(trace gemv avx512 fused_matmul_add)
  echo "$tr" | grep -q 'factors=\[None, 8\]' && echo "$tr" | grep -q 'factors=\[None, 16\]' && ok ||
    fail "gemv (avx512): no split into chunks of 16 vectors of 8 lanes: $tr"
  low=$(awk '/mlc_k_fused_matmul_add"/,/^@T.prim_func/' "$tmp/d.gemv.avx512/16_lower_tir.after.txt" 2>/dev/null)
  echo "$low" | grep -q 'T.parallel(8)' && ok || fail "gemv (avx512): the 8 chunks are not the parallel loop"
  echo "$low" | grep -q 'for k, [a-z0-9_]* in T.grid(96, 16)' && ok ||
    fail "gemv (avx512): the reduction is not outside each chunk's vectors: $(echo "$low" | grep 'for k')"
else
  fail "gemv (avx512): compile"; head -5 "$tmp/err"
fi

# the 1x1 conv, AVX2: 64 input chunks in 4 blocks of 16, the blocks'
# loop outermost with a parallel loop inside it, then the epilogue
tr=$(trace kblocks avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[4, None\]' && ok || fail "kblocks (avx2): no reduction blocks: $tr"
low=$(awk '/mlc_k_fused_conv2d_nchwc_relu"/,/^@T.prim_func/' "$tmp/d.kblocks.avx2/16_lower_tir.after.txt" 2>/dev/null)
echo "$low" | grep -A1 'for rco_0 in range(4)' | grep -q 'T.parallel' && ok ||
  fail "kblocks (avx2): the blocks' loop is not outermost with a parallel loop inside: $(echo "$low" | grep -A1 'rco_0')"
# the parallel loops that fuse loops carry their grain (the iterations of
# the loops inside the first): the conv's 2 panels of 66 flat tiles, and
# the input's layout transform, 32 channel chunks of 14 rows; at 2 and 3
# threads (chunks of whole rows of chunks) the outputs are numpy's
low=$(cat "$tmp/d.kblocks.avx2/16_lower_tir.after.txt" 2>/dev/null)
echo "$low" | grep -q 'T.parallel(448, annotations={"parallel_grain": 14})' &&
  echo "$low" | grep -q 'T.parallel(132, annotations={"parallel_grain": 66, "software_prefetch": "B"})' && ok ||
  fail "kblocks (avx2): the parallel loops have no grain: $(echo "$low" | grep 'T.parallel')"
# the conv's panel loop prefetches the next panel's weights (in the
# thread's own chunk of the loop), spread over its 66 flat tiles; the
# outputs at 2 and 3 threads below come from that code
low=$(awk '/mlc_k_fused_conv2d_nchwc_relu"/,/^@T.prim_func/' "$tmp/d.kblocks.avx2/16_lower_tir.after.txt" 2>/dev/null)
echo "$low" | grep -q 'if oc_chunk_pq_fused + 66 < T.loop_end(oc_chunk_pq_fused):' &&
  echo "$low" | grep -q 'T.evaluate(T.prefetch(B_1\[' && ok ||
  fail "kblocks (avx2): no prefetch of the next panel's weights: $(echo "$low" | grep -e prefetch -e loop_end)"
for th in 2 3; do run_threads kblocks $th; done

# the 3x3 conv, AVX2: 4 input chunks (of 32 channels) in 4 blocks inside
# the panels' parallel loop, the epilogue under it
panel_blocks pblocks 4 33 'for rco_0, oh, ow_0' 12

# the 1x1 conv at 7x7 to 1024 channels, AVX2: flat (17 x 3), 32 panels of
# 32 channels, each panel's 8 input chunks in 2 blocks (16 KB of weights)
# inside the panels' parallel loop and outside the pixels, the epilogue
# under it, reading the flat accumulator
panel_blocks flatpb 2 32 'for rco_0, pq, ' 12
echo "$low" | grep -q 'if oc_chunk + 1 < T.loop_end(oc_chunk):' && ok ||
  fail "flatpb (avx2): no prefetch of the next panel's weights: $(echo "$low" | grep -e prefetch -e loop_end)"
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((1, 32, 17, 3, 32)' "$tmp/d.flatpb.avx2/11_schedule/fused_conv2d_nchwc_relu.tir" && ok ||
  fail "flatpb (avx2): the accumulator is not flat, 17 x 3: $(grep alloc_buffer "$tmp/d.flatpb.avx2/11_schedule/fused_conv2d_nchwc_relu.tir")"

# the 3x3 conv at 14x14, AVX2: its 8 input chunks in 2 blocks inside the
# panels' parallel loop and outside the flat tiles, the epilogue under
# it; right at 2 threads
panel_blocks pblocksl2 2 8 'for rco_0, pq, ' 16
run_threads pblocksl2 2
# the 3x3 conv of 4 panels, AVX2: its 16 input chunks in 4 reduction
# blocks, the blocks' loop outermost with a parallel loop inside it
tr=$(trace kblocksfew avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[4, None\]' && ok || fail "kblocksfew (avx2): no reduction blocks: $tr"
low=$(awk '/mlc_k_fused_conv2d_nchwc_relu"/,/^@T.prim_func/' "$tmp/d.kblocksfew.avx2/16_lower_tir.after.txt" 2>/dev/null)
echo "$low" | grep -A1 'for rco_0 in range(4)' | grep -q 'T.parallel' && ok ||
  fail "kblocksfew (avx2): the blocks' loop is not outermost with a parallel loop inside: $(echo "$low" | grep -A1 'rco_0')"

tr=$(trace pblocks1k avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[None, 2\]' && echo "$tr" | grep -q 'factors=\[5, None\]' &&
  echo "$tr" | grep -q 'sch.reverse_compute_at' && ok || fail "pblocks1k (avx2): no panel blocks for a tile of 2 rows: $tr"
# its rows are 14 wide: the extra column reads the input's last again,
# with no padded copy
tir="$tmp/d.pblocks1k.avx2/11_schedule/fused_conv2d_nchwc_relu.tir"
! grep -q 'T_pad' "$tir" && grep -q 'T.min(vow, 12)' "$tir" && ok ||
  fail "pblocks1k (avx2): the input is copied, or its columns not clamped: $(grep -e alloc_buffer -e 'T.min' "$tir")"

# the conv at 13x13, AVX2: 15 columns, tiles of 5 x 2 vectors of 8
tr=$(trace width13 avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[None, 2, 8\]' && echo "$tr" | grep -q 'factors=\[None, 5\]' && ok ||
  fail "width13 (avx2): no 5 x 2 tile: $tr"
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((1, 3, 13, 15, 16)' "$tmp/d.width13.avx2/11_schedule/fused_conv2d_nchwc_relu.tir" && ok ||
  fail "width13 (avx2): the accumulator is not 15 wide"

# the conv of 64 channels, AVX2: blocks of 32 channels, 30 columns, tiles
# of 3 x 4 vectors of 8
tr=$(trace block32 avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[None, 4, 8\]' && echo "$tr" | grep -q 'factors=\[None, 3\]' && ok ||
  fail "block32 (avx2): no 3 x 4 tile: $tr"
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((1, 2, 28, 30, 32)' "$tmp/d.block32.avx2/11_schedule/fused_conv2d_nchwc_relu.tir" && ok ||
  fail "block32 (avx2): the accumulator is not 30 wide in blocks of 32"

# the 1x1 conv at 7x7, AVX2: the 49 pixels flat in 17 x 3, tiles of 3 x 4
# vectors, the input read in place (the last tile's extra pixels repeat
# the last pixel), the output read back per pixel
tr=$(trace flat7 avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[None, 4, 8\]' && echo "$tr" | grep -q 'factors=\[None, 3\]' && ok ||
  fail "flat7 (avx2): no 3 x 4 tile: $tr"
tir="$tmp/d.flat7.avx2/11_schedule/fused_conv2d_nchwc_relu.tir"
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((1, 4, 17, 3, 32)' "$tir" && ! grep -q 'T_pad' "$tir" &&
  grep -q 'T.min(vpq \* 3 + vpt, 48)' "$tir" && ok ||
  fail "flat7 (avx2): the accumulator is not 17 x 3 pixels, or the input is copied: $(grep -e alloc_buffer -e 'T.min' "$tir")"
# strided, the copy holds the pixels the stride picks
tir="$tmp/d.flat7s2.avx2/11_schedule/fused_conv2d_nchwc_relu.tir"
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((1, 4, 17, 3, 32)' "$tir" &&
  grep -q 'T_pad = T.alloc_buffer((1, 2, 17, 3, 32)' "$tir" && ok ||
  fail "flat7s2 (avx2): the accumulator and the input copy are not 17 x 3 pixels: $(grep alloc_buffer "$tir")"
# the 3x3 conv of stride 2, AVX2: flat, 3 x 4 tiles, reading the padded
# copy (one row more than the border gives) at the pixel's row and column
tr=$(trace flat3s2 avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[None, 4, 8\]' && echo "$tr" | grep -q 'factors=\[None, 3\]' && ok ||
  fail "flat3s2 (avx2): no 3 x 4 tile: $tr"
tir="$tmp/d.flat3s2.avx2/11_schedule/fused_conv2d_nchwc_relu.tir"
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((1, 2, 17, 3, 32)' "$tir" &&
  grep -q 'T_pad = T.alloc_buffer((1, 2, 17, 16, 32)' "$tir" && ok ||
  fail "flat3s2 (avx2): not flat, or the padded copy lacks the last tile's row: $(grep alloc_buffer "$tir")"
# on AVX-512 (16 lanes, compiled only) the output's rows as before
if "$cli" compile "$tmp/flat7.onnx" -o "$tmp/flat7.avx512.so" -q --target "llvm -mcpu=znver4" \
     --dump-ir "$tmp/d.flat7.avx512" 2>"$tmp/err"; then
  grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((1, 8, 7, 7, 16)' "$tmp/d.flat7.avx512/11_schedule/fused_conv2d_nchwc_relu.tir" && ok ||
    fail "flat7 (avx512): flat: $(grep alloc_buffer "$tmp/d.flat7.avx512/11_schedule/fused_conv2d_nchwc_relu.tir")"
else
  fail "flat7 (avx512): compile"; head -5 "$tmp/err"
fi

# the layer norm, AVX2: both row means vectorized (rule R's rfactor), the
# subtraction that reads the first along the row not moved under its row
# loop (there the mean would be a scalar sum)
tr=$(trace layernorm avx2 fused_mean_subtract_power_mean_add_sqrt_divide_multiply_add)
[ "$(echo "$tr" | grep -c 'sch.rfactor')" -eq 2 ] && ! echo "$tr" | grep -q 'sch.reverse_compute_at' && ok ||
  fail "layernorm (avx2): a row mean is not vectorized: $tr"

# the batch of N images, AVX2: the 7x7 conv flat
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((N, 2, 17, 3, 32)' "$tmp/d.batchnflat.avx2/11_schedule/fused_conv2d_nchwc_relu.tir" && ok ||
  fail "batchnflat (avx2): not flat: $(grep alloc_buffer "$tmp/d.batchnflat.avx2/11_schedule/fused_conv2d_nchwc_relu.tir")"

tir="$tmp/d.batchndirect.avx2/11_schedule/fused_conv2d_nchwc_relu.tir"
grep -q 'T_conv2d_nchwc_acc = T.alloc_buffer((N, 2, 66, 3, 32)' "$tir" && ! grep -q 'T_pad' "$tir" && ok ||
  fail "batchndirect (avx2): not flat, or the input is copied: $(grep alloc_buffer "$tir")"

# the stem, AVX2: a register tile, the padded copy not under its loops
tr=$(trace stem avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'sch.unroll' && ! echo "$tr" | grep -q 'sch.compute_at' && ok ||
  fail "stem (avx2): the padded copy is made per tile: $tr"

# the depthwise conv, AVX2: the 32c block split in 4 vectors, a tile of
# output pixels (unrolled), the padded copy under the tile's loops
tr=$(trace dwconv avx2 fused_conv2d_nchwc_relu)
echo "$tr" | grep -q 'factors=\[None, 8\]' && echo "$tr" | grep -q 'sch.unroll' && ok ||
  fail "dwconv (avx2): no register tile: $tr"
echo "$tr" | grep -q 'sch.compute_at' && ok || fail "dwconv (avx2): the padded copy is not made per tile: $tr"

echo "test_schedule_rules.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
