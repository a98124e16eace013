/*
** schedule_default.c: the default CPU schedule (rules, no search), written
** as schedule primitives so that every kernel's schedule is a trace.
**
** Each stage te produced is a perfect nest of serial loops (spatial axes
** outside, reduce axes inside) around one block.
**
** T. Register tiles.  A reduction whose one store's last index is a
**    spatial loop of a multiple of 16 (or 8) float32 lanes gets an output
**    tile held in vector registers across the whole reduction: rows (a
**    spatial loop the vector operand does not use: a conv's output width,
**    a matmul's rows) by columns (a loop the broadcast operand does not
**    use: more lanes of a matmul, output channel chunks of a blocked
**    conv), at most 24 accumulators on AVX-512 (12 on AVX2), sized for
**    the fewest loads per FMA (tile_stage, mlc_tile_sizes).  Lanes beyond
**    one vector are the columns; with nothing broadcast (a depthwise
**    conv's 16c block on 8-lane targets) their vectors are an outer loop
**    of tiles, output pixels the rows.  Its loops go
**    innermost, under the reduce loops,
**    unrolled and the lanes vectorized, so that every reduction step is
**    rows x columns FMAs on one broadcast per row and one vector load per
**    column (the micro-kernel of BLIS or oneDNN's brgemm).  The epilogue
**    moves under the tile's outer loops (reverse_compute_at) and reads the
**    tile while it is still in registers; the accumulator buffer compacts
**    to the tile (lower/pass_compact.c), which LLVM keeps in registers.
**    A tile that writes the function's result itself (a matmul with no
**    epilogue) first gets a local cache of it (cache_write), whose copy
**    back is then its epilogue.
**    A padded copy of the input (conv2d_nchwc's T_pad) is made under the
**    same outer loops (compute_at), of the rows and columns the tile
**    reads.  The columns' outer loop goes inside the other outer loops
**    when the vector operands fit in half of L2, else outermost.
**    Reduction blocks (8-lane targets, as BLIS blocks its k): when what
**    one column panel reads (the broadcast operand whole and the panel's
**    vector operands: a 1x1 conv's input of 1024 channels at 14x14 and
**    its 16 channels of weights) does not fit in TILE_CACHE_BYTES, the
**    input is read again from beyond L2 for every panel (an input that
**    fits in half of it is not what overflows: the panel's weights are,
**    for the panel blocks in L2 below).  The outermost
**    reduce loop is then split into the fewest blocks whose share fits in
**    half of it, the blocks' loop outermost, when the re-reads saved
**    ((panels - 1) x the input) outweigh the partial sums' traffic (the
**    accumulator buffer, whole, written and read once more per block):
**    the tile then adds to the accumulator buffer in memory, its init a
**    nest of its own before the blocks, the epilogue a nest after them,
**    and rule 2 runs the loops inside a block in parallel.
**    Panel blocks (8-lane targets, as BLIS sizes its k for L1): when a
**    column panel's vector operands (a 3x3 conv's 16 output channels of
**    weights over 512 input channels: 288 KB) do not fit in
**    TILE_PANEL_BYTES, each row block of the panel reads them again from
**    L2.  The outermost reduce loop (what reduction blocks left of it) is
**    split again into the fewest blocks whose share fits, the blocks'
**    loop just outside the row loops: each block's weights then serve
**    every row block from L1.  Only where the panels alone are enough
**    chunks to run in parallel (rule 2 stops at the blocks' loop: 32, or
**    16 for a tile of at most 2 rows, which reads the most weights per
**    FMA; the columns' outer loop counts as panels too) and the
**    partial sums' traffic (the panel's accumulators, loaded and stored
**    once per block) is less than the re-reads saved; the epilogue goes
**    under the panel's loop, after its last block.
**    Else the same split keeps a panel in L2: above TILE_L2_PANEL_BYTES
**    (256 KB, half of a Zen 3's L2) every row block reads the panel from
**    L3 or memory again, so it is split into the fewest blocks of at most
**    that, where there are 8 panels or more.  The 3x3 convs of 256
**    channels at 14x14 and of 512 at 7x7 (panels of 288 and 576 KB),
**    whose reduction blocks they replace, measured on a Zen 3 in
**    ResNet-18 and ResNet-50 (interleaved, min / median): 0.98 / 0.99 at
**    1 thread, 0.97-0.99 / 0.96-0.99 at 2; alone, the 7x7 one 0.91-0.93.
**    A machine of more than 8 threads runs such a conv on 8 of them.
**
**      for n, K_o, oh, ow_o:                   (parallel, rule 2)
**        for K_i, ow_i, k: acc[K_i, ow_i, k] = 0
**        for C, kh, kw, c:                     (reduction)
**          for K_i (unroll), ow_i (unroll), k (vector):
**            acc[K_i, ow_i, k] += x[.., ow*s + kw, c] * w[K, C, kh, kw, c, k]
**        for K_i, ow_i, k: y[..] = relu(acc[K_i, ow_i, k] + bias[K, k])
**
** Rules 1 and 2 cover the stages rule T does not tile:
**
** 1. Vectors.  When the block stores one element whose last index is a
**    spatial iteration variable bound to a loop of constant extent E >= 4
**    (or of a symbolic extent) with only reduce loops inside it, that loop
**    becomes a vector loop: it is split by V lanes (the largest divisor of
**    E from 4 to the vector width, else the width with a predicate for the
**    tail, as for a symbolic E; no split when E fits one vector), the lanes loop goes innermost (sch.reorder, past
**    the reduce loops), the reduction's init gets loops of its own before
**    the reduce loops (sch.decompose_reduction) and both lanes loops are
**    vectorized.  A conv then accumulates a row of output pixels in one
**    vector per filter tap, a matmul a row of columns per k.  A reduction
**    that makes one row (a matrix-vector product) streams it instead, in
**    chunks of whole vectors (stream_rows).
** 2. Threads.  When the nest does enough work to be worth the thread
**    pool's hand-off, the outermost spatial loop whose extent is large
**    enough to split (or symbolic) becomes a parallel loop (sch.parallel),
**    so that a batch-1 conv parallelizes over its channels.  When that
**    loop has few iterations (a blocked conv's K/16), the spatial loops
**    inside it are fused with it first (sch.fuse), up to 64 chunks.  Loops
**    bound to a reduce iteration variable never run in parallel.  A block
**    rule T tiled marks that loop, its panels' loop, "software_prefetch"
**    with its vector operand (a conv's weights): lowering then fetches the
**    next panel's weights while a panel is computed (pass_prefetch.c).
**    In a model, each layer's weights come from memory, and without it the
**    first row block of each panel waits for them: resnet50 at 1 thread
**    0.95x, resnet18 0.96x (2 threads, where a panel's chunk rarely holds
**    the next panel: 0.97-1.00x).
**
** Before them, two rules for kernels of several stages (fuse_tir's fused
** groups, and ops that lower to several stages):
**
** F1. Inline.  A spatial stage (no reduction) writing a scratch buffer that
**     exactly one other stage reads is inlined into it (sch.compute_inline):
**     a bias add and a relu after a conv become one stage reading the
**     conv's result; a scale before a softmax is folded into its loads.
**     A stage read by several stages stays (inlining would compute it
**     once per reader).
** F2. Epilogue.  The one spatial consumer E of a reduction R (the
**     epilogue of a conv or matmul: bias, relu, residual add, after F1) is
**     folded into R where legal (sch.reverse_compute_inline), else moved
**     under R's loop just outside R's innermost spatial loop
**     (sch.reverse_compute_at): E then reads R's row of results while it
**     is still in cache, and lowering's compaction shrinks R's scratch
**     buffer to that row (on the stack, one per thread).  Only an E that
**     reads R's results through its own iteration variables moves: one
**     that broadcasts them (a layer norm's subtraction of the row's mean)
**     stays after R, whose reduction rule R then vectorizes.
**
**     for c, h:                         for c, h:
**       for w, rc, kh, kw: conv[..]        for w, rc, kh, kw: conv[..] = ...
**     for c, h, w: y = relu(conv + b)      for w: y = relu(conv[..] + b)
**
**     Rules 1 and 2 then apply to R and E where they sit (E's vector loop
**     is its own; the parallel loop of R also runs E).
**     A padded copy (a select) that a reduction reads is not inlined: its
**     bounds test would run in the reduction's innermost loop.
** A primitive that refuses a step of F1 or F2 is skipped; one that refuses
** a step of rule T or 1 (its legality check is the judge) makes the
** function fall back to the rules without T, then to F1, F2 and 2 alone.
**
** Decisions (tuning, lower.h: mlc_lower_tuning).  The rules' parameters
** are decision points (decide): rule T's tile (rows x columns, encoded
** rows * 100 + columns), its columns' loop inside or outermost, its reduction blocks, the padded
** copy per tile or not, its innermost reduce loop unrolled by 2, 4 or 8
** (default: not split; on 8-lane targets the largest); rule 1's lanes, and
** one row streamed or not; rule R's partial results; rule 2's
** chunk count.  Without tuning each takes its default silently; with it,
** each is a recorded sample_categorical whose candidate 0 is the default.
**
**     F1 and F2 before (a conv with bias and relu fused), after:
**
**       conv = T.alloc_buffer((1, 16, 12, 12))   conv = T.alloc_buffer(...)
**       T_add = T.alloc_buffer((1, 16, 12, 12))  for i0, i1, i2:
**       block conv (reduction)                       for i3, rc, rk0, rk1:
**       block T_add = conv + bias                        block conv
**       block T_relu = max(T_add, 0)                 for ax0: block T_relu =
**                                                         max(conv + bias, 0)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sha256.h"
#include "lower/lower.h"
#include "lower/schedule/schedule.h"
#include "lower/tir_visit.h"

/* Work below this many innermost iterations stays serial. */
#define PARALLEL_MIN_WORK 32768
/* Smallest extent worth splitting across threads. */
#define PARALLEL_MIN_EXTENT 2
/* Parallel loops with fewer iterations than this fuse with the loops
** inside them (load balance on any thread count). */
#define PARALLEL_MIN_CHUNKS 64

/* ---- decisions ------------------------------------------------------------ */

/*
** The value of a decision point among |n| |candidates| (the default first):
** candidates[0] without tuning (nothing recorded); with tuning, the
** candidates without repeats as a sample_categorical (the default twice
** as likely when drawn), its decision forced by opt->tune when given.
*/
static mlc_status decide(mlc_sch *s, const mlc_lower_options *opt, int n, const int64_t *candidates, int64_t *out) {
  mlc_lower_tuning *t = opt ? opt->tune : NULL;
  *out = candidates[0];
  if (!t || n < 2 || t->ndecisions >= MLC_LOWER_MAX_DECISIONS) return NULL;
  int64_t c[MLC_LOWER_MAX_CANDIDATES];
  double p[MLC_LOWER_MAX_CANDIDATES];
  int m = 0;
  for (int i = 0; i < n && m < MLC_LOWER_MAX_CANDIDATES; i++) {
    int dup = 0;
    for (int j = 0; j < m && !dup; j++) dup = c[j] == candidates[i];
    if (dup) continue;
    p[m] = m == 0 ? 2.0 : 1.0;
    c[m++] = candidates[i];
  }
  if (m < 2) return NULL;
  int k = t->ndecisions;
  int64_t d = k < t->nforced && t->forced && t->forced[k] >= 0 ? t->forced[k] % m : -1;
  mlc_sch_rv v;
  MLC_RETURN_IF_ERROR(mlc_sch_sample_categorical(s, m, c, p, d >= 0 ? &d : NULL, &v));
  int64_t val = mlc_sch_rv_int(s, v);
  int idx = 0;
  for (int j = 0; j < m; j++)
    if (c[j] == val) idx = j;
  t->decisions[k] = idx;
  t->ncandidates[k] = m;
  t->ndecisions++;
  *out = val;
  return NULL;
}

static int64_t const_extent(const mlc_tir_expr *e) {
  return e && e->kind == MLC_TIR_INT_IMM ? e->int_value : -1;
}

/* A constant that symbolic extent |e| is a multiple of: c of "x * c"
** (conv2d_nchwc's accumulator width rounded up to the tile's rows), else 1. */
static int64_t extent_multiple(const mlc_tir_expr *e) {
  if (!e || e->kind != MLC_TIR_BINARY || e->bin.op != MLC_TIR_MUL) return 1;
  int64_t a = const_extent(e->bin.a), b = const_extent(e->bin.b);
  return b > 0 ? b : a > 0 ? a : 1;
}

/* Rows assumed for a tile's symbolic row loop (conv2d_nchwc's lowering
** rounds its accumulator's width up to the rows it gives). */
#define TILE_NOMINAL_ROWS 64

/* Nonzero if a reduce iter var of |blk| is bound through loop variable |v|. */
static int binds_reduce(const mlc_tir_stmt *blk, const mlc_tir_var *v) {
  for (int i = 0; i < blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &blk->block.iters[i];
    if (it->kind == MLC_TIR_ITER_REDUCE && it->binding && mlc_tir_expr_uses_var(it->binding, v)) return 1;
  }
  return 0;
}

/* Widest vector, in bytes (AVX-512). */
#define VECTOR_BYTES 64
/* Smallest loop worth a vector. */
#define VECTOR_MIN_EXTENT 4

/* The iteration variable that the last index of |blk|'s one store is,
** when it is a spatial one bound to a loop variable; else NULL. */
static const mlc_tir_iter_var *vector_iter(const mlc_tir_stmt *blk) {
  const mlc_tir_stmt *st = blk->block.body;
  if (!st || st->kind != MLC_TIR_STORE || st->store.n < 1 || blk->block.predicate) return NULL;
  const mlc_tir_expr *last = st->store.indices[st->store.n - 1];
  if (last->kind != MLC_TIR_VAR_REF) return NULL;
  for (int i = 0; i < blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &blk->block.iters[i];
    if (it->var == last->var)
      return it->kind == MLC_TIR_ITER_SPATIAL && it->binding && it->binding->kind == MLC_TIR_VAR_REF ? it : NULL;
  }
  return NULL;
}

/* The product of the constant extents of the first |p| |loops|; -1 when
** one is symbolic or the product overflows. */
static int64_t loops_product(mlc_sch *s, const mlc_sch_rv *loops, int p) {
  int64_t r = 1;
  for (int i = 0; i < p && r > 0; i++) {
    int64_t e = const_extent(mlc_sch_rv_stmt(s, loops[i])->loop.extent);
    r = e < 0 || (e > 0 && r > INT64_MAX / e) ? -1 : r * e;
  }
  return r;
}

/*
** Rule 1, one row streamed.  A reduction that makes a single row (every
** spatial loop outside its lanes loop has extent 1: a matrix-vector
** product x [1, K] @ w [K, N], as a classifier's, or a column sum) would
** otherwise walk its whole reduction once per vector of lanes, reading one
** vector of w per k, rows of w apart: every row of w in pieces, scattered,
** in a kernel whose time is that of reading w once.  Here the lanes loop
** is split into about STREAM_CHUNKS chunks of whole vectors (the last
** under a predicate when they do not divide it) and each chunk's
** reduction goes outside its vectors:
**
**   for j_o in 8:                       (parallel, rule 2)
**     for j_i, lanes: acc[j] = 0
**     for k:
**       for j_i, lanes (vector):        acc: a chunk, in L1
**         acc[j] += x[k] * w[k, j]
**
** so that each row of w is read in runs of a chunk's width, each element
** once.  Decision: streamed (default) or rule 1's vectors.
*/
#define STREAM_CHUNKS 8
#define STREAM_MIN_VECTORS 4

/* Splits |lanes| (constant extent |e|) for rule 1's one streamed row when
** the decision takes it: *|chunk| the loop of a chunk's vectors, *|vec|
** the lanes; *|streamed| 0 when it does not. */
static mlc_status stream_rows(mlc_sch *s, mlc_sch_rv lanes, int64_t e, const mlc_lower_options *opt,
                              int *streamed, mlc_sch_rv *chunk, mlc_sch_rv *vec) {
  int64_t v = mlc_tile_limits_for(opt ? opt->vector_bits : 0).lanes;
  *streamed = 0;
  while (v > VECTOR_MIN_EXTENT && e % v) v /= 2; /* whole vectors */
  if (e % v || e < 2 * STREAM_MIN_VECTORS * v) return NULL;
  int64_t cand[2] = {1, 0}, stream;
  MLC_RETURN_IF_ERROR(decide(s, opt, 2, cand, &stream));
  if (!stream) return NULL;
  int64_t vecs = e / v, per = (vecs + STREAM_CHUNKS - 1) / STREAM_CHUNKS;
  if (per < STREAM_MIN_VECTORS) per = STREAM_MIN_VECTORS;
  /* the vectors first, then the chunks of them: a predicate, if any, is
  ** on whole vectors (a test outside the vector, not a mask in it) */
  mlc_sch_rv vs[2], parts[2];
  mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(v)}, g[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(per)};
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, lanes, 2, f, vs));
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, vs[0], 2, g, parts));
  *chunk = parts[1];
  *vec = vs[1];
  *streamed = 1;
  return NULL;
}

/* Rule 1 for one stage block.  A refusal of a primitive is returned as is. */
static mlc_status vectorize_stage(mlc_sch *s, mlc_sch_rv block, const mlc_lower_options *opt) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  const mlc_tir_iter_var *it = blk && blk->block.niters ? vector_iter(blk) : NULL;
  if (!it) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  int p = -1;
  for (int i = 0; i < n; i++)
    if (mlc_sch_rv_stmt(s, loops[i])->loop.var == it->binding->var) p = i;
  if (p < 0) return NULL;
  const mlc_tir_stmt *lp = mlc_sch_rv_stmt(s, loops[p]);
  int64_t e = const_extent(lp->loop.extent);
  /* a symbolic extent (a sequence length): vectors of the full width, the
  ** last one under the split's predicate */
  if ((e >= 0 && e < VECTOR_MIN_EXTENT) || lp->loop.kind != MLC_TIR_FOR_SERIAL || !mlc_tir_is_const(lp->loop.min, 0))
    return NULL;
  for (int i = p + 1; i < n; i++) /* only reduce loops inside */
    if (!binds_reduce(blk, mlc_sch_rv_stmt(s, loops[i])->loop.var)) return NULL;
  size_t esize = mlc_dtype_size(blk->block.body->store.buffer->dtype);
  int64_t width = esize >= 8 ? VECTOR_BYTES / 8 : 16;
  mlc_sch_rv lanes = loops[p], chunk = 0;
  int streamed = 0, symbolic = e < 0;
  if (p + 1 < n && blk->block.init && esize == 4 && e > 0 && loops_product(s, loops, p) == 1)
    MLC_RETURN_IF_ERROR(stream_rows(s, loops[p], e, opt, &streamed, &chunk, &lanes));
  if (!streamed && (symbolic || e > width)) {
    int64_t v = width;
    for (int64_t d = width; !symbolic && d >= VECTOR_MIN_EXTENT; d--)
      if (e % d == 0) {
        v = d;
        break;
      }
    /* decision: the lanes (other divisors, half the width) */
    int64_t cand[MLC_LOWER_MAX_CANDIDATES] = {v};
    int nc = 1;
    for (int64_t d = width; d >= VECTOR_MIN_EXTENT && nc < 6; d--)
      if (e % d == 0 || d == width / 2) cand[nc++] = d;
    MLC_RETURN_IF_ERROR(decide(s, opt, nc, cand, &v));
    mlc_sch_rv parts[2];
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(v)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], 2, f, parts));
    lanes = parts[1];
  }
  if (p + 1 < n) {
    mlc_sch_rv order[MLC_SCH_MAX_OUTS];
    int k = 0;
    for (int i = p + 1; i < n; i++) order[k++] = loops[i];
    if (streamed) order[k++] = chunk;
    order[k++] = lanes;
    MLC_RETURN_IF_ERROR(mlc_sch_reorder(s, k, order));
    if (blk->block.init) {
      mlc_sch_rv init, iloops[MLC_SCH_MAX_OUTS];
      int ni = 0;
      MLC_RETURN_IF_ERROR(mlc_sch_decompose_reduction(s, block, loops[p + 1], &init));
      MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, init, MLC_SCH_MAX_OUTS, iloops, &ni));
      if (ni > 0) MLC_RETURN_IF_ERROR(mlc_sch_vectorize(s, iloops[ni - 1]));
    }
  }
  return mlc_sch_vectorize(s, lanes);
}

/* Rule 2 for |block|: its parallel loop in *|par| (*|has_par| 1), made
** or found; *|has_par| 0 when it has none. */
static mlc_status parallel_stage(mlc_sch *s, mlc_sch_rv block, const mlc_lower_options *opt, mlc_sch_rv *par,
                                 int *has_par) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0 || (opt && opt->no_parallel)) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  int64_t work = 1;
  int symbolic = 0;
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    /* already scheduled (the loop it shares with its init block) */
    if (l->loop.kind == MLC_TIR_FOR_PARALLEL) {
      *par = loops[i];
      *has_par = 1;
      return NULL;
    }
    int64_t e = const_extent(l->loop.extent);
    if (e < 0)
      symbolic = 1;
    else if (e > 0 && work < INT64_MAX / e)
      work *= e;
  }
  if (!symbolic && work < PARALLEL_MIN_WORK) return NULL;
  for (int i = 0, lead = 1; i < n; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    /* a reduction in blocks (rule T) runs the loops inside a block in
    ** parallel */
    if (lead && binds_reduce(blk, l->loop.var) && l->loop.kind == MLC_TIR_FOR_SERIAL) continue;
    lead = 0;
    if (binds_reduce(blk, l->loop.var) || l->loop.kind != MLC_TIR_FOR_SERIAL) return NULL;
    int64_t e = const_extent(l->loop.extent);
    if (e >= 0 && e < PARALLEL_MIN_EXTENT) continue;
    /* Too few chunks to share well (a blocked conv's K/16 = 4): fuse the
    ** spatial loops inside it until there are enough, as far as they are
    ** a perfect nest (sch.fuse refuses otherwise; the loop then runs in
    ** parallel alone). */
    /* A symbolic extent (a batch, an image's height) counts as 1: it may
    ** be, so the loops inside join it as well. */
    int j = i;
    int64_t chunks = e < 0 ? 1 : e, want = PARALLEL_MIN_CHUNKS;
    /* decision: the chunks wanted (1: no fuse) */
    if (i + 2 < n && (e < 0 || e < 4 * PARALLEL_MIN_CHUNKS)) {
      int64_t cand[4] = {PARALLEL_MIN_CHUNKS, PARALLEL_MIN_CHUNKS / 4, PARALLEL_MIN_CHUNKS * 4, 1};
      MLC_RETURN_IF_ERROR(decide(s, opt, 4, cand, &want));
    }
    while (chunks < want && j + 1 < n) {
      const mlc_tir_stmt *nx = mlc_sch_rv_stmt(s, loops[j + 1]);
      int64_t ne = const_extent(nx->loop.extent);
      if (ne == 0 || binds_reduce(blk, nx->loop.var) || nx->loop.kind != MLC_TIR_FOR_SERIAL) break;
      /* never the vector loop or what rule 1 put inside the reduction */
      if (j + 1 == n - 1) break;
      chunks *= ne < 0 ? 1 : ne;
      j++;
    }
    /* fewer loops when the fuse refuses (a symbolic outer loop: until one
    ** is taken, as its own extent may be 1) */
    for (; j > i; j = e < 0 ? j - 1 : i) {
      /* the grain: the iterations of the loops fused inside the first,
      ** so that the runtime may keep each of its iterations on one thread
      ** (a conv's output-channel panel, whose weights one thread then
      ** streams alone) */
      int64_t grain = 1;
      for (int k = i + 1; k <= j && grain > 0; k++) {
        int64_t ke = const_extent(mlc_sch_rv_stmt(s, loops[k])->loop.extent);
        grain = ke > 0 && grain <= INT64_MAX / ke ? grain * ke : 0;
      }
      mlc_sch_rv fused;
      mlc_status st = mlc_sch_fuse(s, j - i + 1, &loops[i], &fused);
      if (!st) {
        MLC_RETURN_IF_ERROR(mlc_sch_parallel(s, fused));
        *par = fused;
        *has_par = 1;
        if (e > 1 && grain > 1)
          return mlc_sch_annotate(s, fused, "parallel_grain", MLC_SCH_INT_ARG(grain));
        return NULL;
      }
      if (mlc_sch_last_error(s) == MLC_SCH_OK) return st; /* not a refusal: out of memory */
      mlc_status_free(st);
    }
    *par = loops[i];
    *has_par = 1;
    return mlc_sch_parallel(s, loops[i]);
  }
  return NULL;
}

/* Rule 2, and a tiled block's "software_prefetch" (tile_reduction) moved
** to its parallel loop, the loop over its panels; dropped where it has
** none (a kernel too small to share out, whose operand is small too). */
static mlc_status schedule_stage(mlc_sch *s, mlc_sch_rv block, const mlc_lower_options *opt) {
  mlc_sch_rv par = 0;
  int has_par = 0;
  MLC_RETURN_IF_ERROR(parallel_stage(s, block, opt, &par, &has_par));
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  const mlc_tir_attr *a = blk ? mlc_tir_stmt_annot(blk, "software_prefetch") : NULL;
  if (!a || a->kind != MLC_TIR_ATTR_STR) return NULL;
  if (has_par) MLC_RETURN_IF_ERROR(mlc_sch_annotate(s, par, "software_prefetch", MLC_SCH_STR_ARG(a->s)));
  return mlc_sch_unannotate(s, block, "software_prefetch");
}

/* ---- rules F1 and F2: stages of one kernel together ---------------------- */

static int is_reduction(const mlc_tir_stmt *blk) {
  if (blk->block.init) return 1;
  for (int i = 0; i < blk->block.niters; i++)
    if (blk->block.iters[i].kind == MLC_TIR_ITER_REDUCE) return 1;
  return 0;
}

/* Nonzero when |buf| is a parameter of |f| (an input or output). */
static int is_param(const mlc_tir_func *f, const mlc_tir_buffer *buf) {
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i] == buf) return 1;
  return 0;
}

/* The buffer the one store of |blk| writes (NULL for another body). */
static const mlc_tir_buffer *stored(const mlc_tir_stmt *blk) {
  const mlc_tir_stmt *b = blk->block.body;
  return b && b->kind == MLC_TIR_STORE ? b->store.buffer : NULL;
}

/* A scratch stage whose value is a select (conv2d_nchwc's padded copy of
** its input), when |blk| is one: a reduction reading it keeps it (rule F1)
** and makes it per tile (rule T). */
static int is_padded_copy(const mlc_sch *s, const mlc_tir_stmt *blk) {
  return blk && blk->block.niters > 0 && !is_reduction(blk) && stored(blk) &&
         !is_param(mlc_sch_func(s), stored(blk)) && blk->block.body->store.value->kind == MLC_TIR_SELECT;
}

/* Runs a step that may be refused: a refusal (the schedule is unchanged)
** gives 0, success 1, any other error stays in *|st|. */
static int attempt(mlc_sch *s, mlc_status r, mlc_status *st) {
  if (!r) return 1;
  if (mlc_sch_last_error(s) != MLC_SCH_OK) {
    mlc_status_free(r);
    return 0;
  }
  *st = r;
  return 0;
}

/* Rule F1 over the blocks |blocks| (root children, program order). */
static mlc_status inline_stages(mlc_sch *s, int n, const mlc_sch_rv *blocks, int *changed) {
  mlc_status st = NULL;
  const mlc_tir_func *f = mlc_sch_func(s);
  for (int i = 0; i < n && !st; i++) {
    const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, blocks[i]);
    if (!blk || blk->block.niters == 0 || is_reduction(blk) || !stored(blk) || is_param(f, stored(blk))) continue;
    mlc_sch_rv cons[MLC_SCH_MAX_OUTS];
    int nc = 0;
    MLC_RETURN_IF_ERROR(mlc_sch_get_consumers(s, blocks[i], MLC_SCH_MAX_OUTS, cons, &nc));
    if (nc != 1) continue;
    /* a padded copy (a select) read by a reduction stays: inlined, it puts
    ** a bounds test in the reduction's innermost loop */
    const mlc_tir_stmt *cb = mlc_sch_rv_stmt(s, cons[0]);
    if (cb && is_reduction(cb) && is_padded_copy(s, blk)) continue;
    *changed |= attempt(s, mlc_sch_compute_inline(s, blocks[i]), &st);
  }
  return st;
}

/* Whether every load of |b| in the block |blk| indexes each dimension by
** an iteration variable of |blk| (an elementwise epilogue, not a consumer
** that broadcasts |b|, as a layer norm reads its mean along the row). */
typedef struct {
  const mlc_tir_stmt *blk;
  const mlc_tir_buffer *b;
  int bad;
} iter_reads;

static int iter_reads_pre(void *ctx, const mlc_tir_expr *e) {
  iter_reads *r = ctx;
  if (e->kind != MLC_TIR_LOAD || e->load.buffer != r->b) return MLC_TIR_VISIT_CONTINUE;
  for (int d = 0; d < e->load.n && !r->bad; d++) {
    r->bad = mlc_tir_block_iter_index(r->blk, e->load.indices[d]) < 0;
  }
  return r->bad ? MLC_TIR_VISIT_STOP : MLC_TIR_VISIT_SKIP;
}

static int reads_elementwise(const mlc_tir_stmt *blk, const mlc_tir_buffer *b) {
  iter_reads r = {blk, b, 0};
  mlc_tir_visitor v = {.ctx = &r, .pre_expr = iter_reads_pre};
  if (blk->block.body) mlc_tir_visit_stmt(&v, blk->block.body);
  return !r.bad;
}

/* Rule F2 for the reduction |r|. */
static mlc_status epilogue(mlc_sch *s, mlc_sch_rv r, int *changed) {
  mlc_status st = NULL;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, r);
  if (!blk || !is_reduction(blk) || !stored(blk)) return NULL;
  mlc_sch_rv cons[MLC_SCH_MAX_OUTS], loops[MLC_SCH_MAX_OUTS];
  int nc = 0, nl = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_get_consumers(s, r, MLC_SCH_MAX_OUTS, cons, &nc));
  if (nc != 1) return NULL;
  const mlc_tir_stmt *e = mlc_sch_rv_stmt(s, cons[0]);
  if (!e || e->block.niters == 0 || is_reduction(e) || !stored(e)) return NULL;
  if (attempt(s, mlc_sch_reverse_compute_inline(s, cons[0]), &st) || st) {
    *changed = 1;
    return st;
  }
  /* the loop outside R's innermost spatial loop */
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, r, MLC_SCH_MAX_OUTS, loops, &nl));
  int last = -1, at = -1;
  for (int i = 0; i < nl; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    if (binds_reduce(blk, l->loop.var)) continue;
    at = last;
    last = i;
  }
  if (at < 0 || mlc_sch_rv_stmt(s, loops[at])->loop.kind != MLC_TIR_FOR_SERIAL) return NULL;
  /* a consumer that broadcasts R's results stays after R, where rule R
  ** vectorizes R's reduction (under R's row loop it would be a scalar sum) */
  if (!reads_elementwise(e, stored(blk))) return NULL;
  *changed |= attempt(s, mlc_sch_reverse_compute_at(s, cons[0], loops[at], 0), &st);
  return st;
}

/* ---- rule T: register tiles for a reduction ------------------------------ */

/* Vector operands up to this size stay in cache (half of a 1 MiB L2). */
#define TILE_CACHE_BYTES (512 * 1024)
/* A column panel's vector operands up to this size stay in L1 (32 KiB). */
#define TILE_PANEL_BYTES (16 * 1024)
/* ... and up to this size in L2, beside the input rows that stream
** through it (half of the 512 KiB L2 of an AVX2 Zen 3). */
#define TILE_L2_PANEL_BYTES (256 * 1024)
/* The fewest panels split that way: the chunks of their parallel loop. */
#define TILE_L2_PANELS_MIN (PARALLEL_MIN_CHUNKS / 8)

typedef struct {
  const mlc_tir_buffer *acc;
  int n;
  const mlc_tir_expr *loads[8];
} tile_loads;

static int collect_load(void *ctx, const mlc_tir_expr *e) {
  tile_loads *t = ctx;
  if (e->kind != MLC_TIR_LOAD || e->load.buffer == t->acc) return MLC_TIR_VISIT_CONTINUE;
  if (t->n == (int)(sizeof t->loads / sizeof t->loads[0])) {
    t->n++; /* too many: no tile */
    return MLC_TIR_VISIT_STOP;
  }
  t->loads[t->n++] = e;
  return MLC_TIR_VISIT_SKIP;
}

/* Nonzero when some load of |t| that uses (|vec|) or does not use (!|vec|)
** |lanes| does not use |v|: that operand is reused across |v|'s tile. */
static int reused_across(const tile_loads *t, const mlc_tir_var *lanes, int vec, const mlc_tir_var *v) {
  for (int k = 0; k < t->n; k++)
    if (!!mlc_tir_expr_uses_var(t->loads[k], lanes) == vec && !mlc_tir_expr_uses_var(t->loads[k], v)) return 1;
  return 0;
}

/* The spatial iteration variable of |blk| bound to exactly loop var |v|. */
static const mlc_tir_var *iter_of_loop(const mlc_tir_stmt *blk, const mlc_tir_var *v) {
  for (int i = 0; i < blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &blk->block.iters[i];
    if (it->kind == MLC_TIR_ITER_SPATIAL && it->binding && it->binding->kind == MLC_TIR_VAR_REF &&
        it->binding->var == v)
      return it->var;
  }
  return NULL;
}

/*
** Rule T for the reduction block |block|: an output tile held in vector
** registers across the whole reduction.  Applies to a perfect nest of
** serial loops of constant extent, spatial loops outside the reduce ones,
** whose one store's last index is a spatial loop of a multiple of |width|
** lanes.  Of the other spatial loops, the tile takes
**
**   rows:    the innermost loop that a vector operand (one indexed by the
**            lanes) does not use: that vector is loaded once per
**            reduction step and used by every row (a conv's output
**            width; a matmul's rows);
**   columns: a loop that a scalar operand (one not indexed by the lanes)
**            does not use: that scalar is broadcast once and used by every
**            column (a matmul's lanes beyond the first vector; a blocked
**            conv's output channel chunks);
**
** sized by mlc_tile_sizes (graph.h).  The loops become: the outer spatial
** loops, the reduce loops, then the column, row and lanes loops of the
** tile (tile_reduction unrolls the first two and vectorizes the last).
** out->at is the innermost outer spatial loop (where the epilogue goes;
** has_at 0 when none), out->inner the tile's loops; out->tiled stays 0
** when the rule does not apply (nothing changed).
*/
typedef struct {
  int tiled;
  mlc_sch_rv at;   /* innermost loop outside the tile (valid when has_at) */
  int has_at;
  mlc_sch_rv reduce0; /* outermost reduce loop */
  mlc_sch_rv reduce1; /* innermost reduce loop */
  mlc_sch_rv inner[3]; /* columns (when any), rows (when any), lanes */
  int ninner;
  int blocked; /* the reduction in blocks: reduce0 is the outermost loop */
  mlc_sch_rv panel_at; /* panel blocks only: the loop outside them (valid when has_panel_at) */
  int has_panel_at;
} tile_result;

/* The bytes of |b|; INT64_MAX when unknown or too many. */
static int64_t buffer_bytes(const mlc_tir_buffer *b) {
  int64_t bytes = (int64_t)mlc_dtype_size(b->dtype);
  for (int d = 0; d < b->rank; d++) {
    int64_t e = const_extent(b->shape[d]);
    if (e < 0 || (e > 0 && bytes > INT64_MAX / e)) return INT64_MAX;
    bytes *= e;
  }
  return bytes;
}

/* The bytes of the buffers that |t|'s vector operands (|vec|: the loads
** that use |lanes|, a conv's weights) or its broadcast operands (a conv's
** input) read. */
static int64_t operand_bytes(const tile_loads *t, const mlc_tir_var *lanes, int vec) {
  int64_t total = 0;
  for (int k = 0; k < t->n; k++) {
    if (!!mlc_tir_expr_uses_var(t->loads[k], lanes) != vec) continue;
    int64_t bytes = buffer_bytes(t->loads[k]->load.buffer);
    total = total > INT64_MAX - bytes ? INT64_MAX : total + bytes;
  }
  return total;
}

/* The loads of |blk|'s body other than of the buffer it stores (at most
** 8; more: tl->n > 8). */
static void block_loads(const mlc_tir_stmt *blk, tile_loads *tl) {
  memset(tl, 0, sizeof *tl);
  tl->acc = stored(blk);
  mlc_tir_visitor v = {0};
  v.ctx = tl;
  v.pre_expr = collect_load;
  if (blk->block.body) mlc_tir_visit_stmt(&v, blk->block.body);
}

/* The name of the parameter that |blk|'s one vector operand reads (the
** one load that uses the lanes of its store: a conv's weights, a matmul's
** B), or NULL. */
static const char *vector_operand(const mlc_tir_func *f, const mlc_tir_stmt *blk) {
  const mlc_tir_iter_var *lanes = vector_iter(blk);
  tile_loads tl;
  const mlc_tir_buffer *b = NULL;
  if (!lanes) return NULL;
  block_loads(blk, &tl);
  if (tl.n > (int)(sizeof tl.loads / sizeof tl.loads[0])) return NULL;
  for (int k = 0; k < tl.n; k++) {
    if (!mlc_tir_expr_uses_var(tl.loads[k], lanes->var)) continue;
    if (b && b != tl.loads[k]->load.buffer) return NULL;
    b = tl.loads[k]->load.buffer;
  }
  return b && is_param(f, b) ? b->name : NULL;
}

/* Nonzero when handles |a| and |b| name the same loop (handles from
** different lookups differ). */
static int same_loop(const mlc_sch *s, mlc_sch_rv a, mlc_sch_rv b) {
  return mlc_sch_rv_stmt(s, a)->loop.var == mlc_sch_rv_stmt(s, b)->loop.var;
}

/* The panel blocks of a reduce loop of |rest| iterations over a panel of
** |bytes| (its vector operands) for blocks of at most |limit|: the fewest
** that divide |rest| and fit, where the partial sums' traffic (the
** panel's accumulators of |acc| bytes, loaded and stored once per block)
** is less than the re-reads saved (|rowpasses| - 1 of the panel); else 1. */
static int64_t panel_blocks(int64_t bytes, int64_t rest, int64_t limit, int64_t acc, int64_t rowpasses) {
  int64_t pb = 1;
  if (bytes <= limit) return 1;
  while (++pb < rest && (rest % pb || bytes / pb > limit)) {}
  return rest % pb || 2 * acc * pb / (rowpasses - 1) >= bytes ? 1 : pb;
}

static mlc_status tile_stage(mlc_sch *s, mlc_sch_rv block, const mlc_lower_options *opt, tile_result *out) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  memset(out, 0, sizeof *out);
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || !blk->block.init || blk->block.niters == 0) return NULL;
  const mlc_tir_iter_var *vit = vector_iter(blk);
  if (!vit) return NULL;
  const mlc_tir_stmt *st = blk->block.body;
  if (mlc_dtype_size(st->store.buffer->dtype) != 4) return NULL;
  mlc_tile_limits lim = mlc_tile_limits_for(opt ? opt->vector_bits : 0);
  int64_t width = lim.lanes;
  tile_loads tl = {.acc = st->store.buffer};
  mlc_tir_visitor vis = {.ctx = &tl, .pre_expr = collect_load};
  mlc_tir_visit_expr(&vis, st->store.value);
  if (tl.n < 2 || tl.n > (int)(sizeof tl.loads / sizeof tl.loads[0])) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  int p = -1, r0 = -1;
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    int red = binds_reduce(blk, l->loop.var);
    int64_t e = const_extent(l->loop.extent);
    /* symbolic extents: spatial loops only (the lanes' must be known) */
    if (l->loop.kind != MLC_TIR_FOR_SERIAL || e == 0 || (e < 0 && (red || l->loop.var == vit->binding->var)) ||
        !mlc_tir_is_const(l->loop.min, 0))
      return NULL;
    if (red && r0 < 0) r0 = i;
    if (!red && r0 >= 0) return NULL; /* a spatial loop inside the reduction */
    if (l->loop.var == vit->binding->var) p = i;
  }
  if (p < 0 || r0 < 0 || p > r0) return NULL;
  int64_t lanes_e = const_extent(mlc_sch_rv_stmt(s, loops[p])->loop.extent);
  if (lanes_e % width && lanes_e % (width / 2) == 0) width /= 2; /* NCHW8c: half vectors */
  if (lanes_e % width) return NULL;
  /* candidates, innermost first */
  int row = -1, col = -1;
  for (int i = r0 - 1; i >= 0; i--) {
    int64_t e = const_extent(mlc_sch_rv_stmt(s, loops[i])->loop.extent);
    if (i == p || (e >= 0 && e < 2)) continue;
    const mlc_tir_var *iv = iter_of_loop(blk, mlc_sch_rv_stmt(s, loops[i])->loop.var);
    if (!iv) continue;
    if (row < 0 && reused_across(&tl, vit->var, 1, iv))
      row = i;
    else if (col < 0 && reused_across(&tl, vit->var, 0, iv))
      col = i;
  }
  /* lanes beyond one vector are the best columns: contiguous loads */
  int lanes_cols = lanes_e > width && reused_across(&tl, vit->var, 0, vit->var);
  /* else, with nothing broadcast (a depthwise conv's 16c block on 8-lane
  ** targets), the vectors of the lanes are an outer loop of tiles */
  int lanes_outer = lanes_e > width && !lanes_cols;
  const mlc_tir_expr *row_ext = row >= 0 ? mlc_sch_rv_stmt(s, loops[row])->loop.extent : NULL;
  int64_t rows = row >= 0 ? const_extent(row_ext) : 1;
  if (rows < 0) rows = TILE_NOMINAL_ROWS;
  int64_t cols = lanes_cols ? lanes_e / width : col >= 0 ? const_extent(mlc_sch_rv_stmt(s, loops[col])->loop.extent) : 1;
  if (cols < 0) cols = 1; /* a symbolic column loop is not tiled */
  int64_t tr, tc;
  mlc_tile_sizes(rows, cols, &lim, &tr, &tc);
  int64_t row_div = rows; /* what the rows of a tile must divide */
  if (row_ext && const_extent(row_ext) < 0) {
    /* whole tiles only: tr must divide the symbolic extent, no bounds test
    ** in the micro-kernel */
    int64_t m = extent_multiple(row_ext);
    while (tr > 1 && m % tr) tr--;
    row_div = m;
  }
  if (tr * tc < 2) return NULL;
  /* decision: the tile (rows * 100 + columns), the best of the others by
  ** mlc_tile_score */
  {
    int64_t cand[MLC_LOWER_MAX_CANDIDATES] = {tr * 100 + tc};
    double score[MLC_LOWER_MAX_CANDIDATES] = {1e9};
    int nc = 1;
    for (int64_t c = 1; c <= lim.max_cols && c <= cols; c++)
      for (int64_t r = 1; cols % c == 0 && r * c <= lim.max_acc && r <= row_div; r++) {
        if (row_div % r || r * c < 2 || (r == tr && c == tc)) continue;
        double sc = mlc_tile_score(r, c);
        int at = nc;
        while (at > 1 && score[at - 1] < sc) at--;
        if (at >= MLC_LOWER_MAX_CANDIDATES) continue;
        if (nc < MLC_LOWER_MAX_CANDIDATES) nc++;
        memmove(&cand[at + 1], &cand[at], (size_t)(nc - 1 - at) * sizeof cand[0]);
        memmove(&score[at + 1], &score[at], (size_t)(nc - 1 - at) * sizeof score[0]);
        cand[at] = r * 100 + c;
        score[at] = sc;
      }
    int64_t v;
    MLC_RETURN_IF_ERROR(decide(s, opt, nc, cand, &v));
    tr = v / 100;
    tc = v % 100;
  }
  /* split: lanes, columns, rows (handles of the loops not split stay) */
  mlc_sch_rv lanes_i = loops[p], col_i = 0, row_i = 0, col_o = 0, parts[3];
  int has_col = 0, has_row = tr > 1;
  if (lanes_outer) {
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(width)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], 2, f, parts));
    lanes_i = parts[1];
  }
  if (lanes_cols) {
    mlc_sch_arg f[3] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(tc), MLC_SCH_INT_ARG(width)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], tc > 1 ? 3 : 2, tc > 1 ? f : (mlc_sch_arg[]){f[0], f[2]}, parts));
    lanes_i = parts[tc > 1 ? 2 : 1];
    if (tc > 1) col_o = parts[0], col_i = parts[1], has_col = 1;
  } else if (tc > 1) {
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(tc)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[col], 2, f, parts));
    col_o = parts[0], col_i = parts[1], has_col = 1;
  }
  if (has_row) {
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(tr)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[row], 2, f, parts));
    row_i = parts[1];
  }
  /* the new order: the outer spatial loops, the reduce loops, then
  ** columns, rows, lanes.  Of the outer loops, the columns' one goes
  ** innermost when the vector operands (a conv's weights, a matmul's B)
  ** fit in TILE_CACHE_BYTES: every row block then reads them from cache
  ** and the broadcast operand (the input) is read once; else outermost,
  ** so that each column panel stays in cache over all rows and the
  ** broadcast operand is read once per panel. */
  int64_t w_bytes = operand_bytes(&tl, vit->var, 1);
  int cols_inner = has_col && w_bytes <= TILE_CACHE_BYTES;
  if (has_col) { /* decision: the columns' outer loop inside or outermost */
    int64_t cand[2] = {cols_inner, !cols_inner}, v;
    MLC_RETURN_IF_ERROR(decide(s, opt, 2, cand, &v));
    cols_inner = (int)v;
  }
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  blk = mlc_sch_rv_stmt(s, block);
  /* reduction blocks: the outermost reduce loop split in kblocks, its
  ** outer loop outermost; panel blocks: split again in pblocks, its outer
  ** loop just outside the row loops */
  int64_t kblocks = 1, pblocks = 1;
  mlc_sch_rv kb_o = 0, pb_o = 0;
  /* the outer loops in their new order (the columns' one outermost or
  ** innermost); the panel blocks go before outer[prow] */
  mlc_sch_rv outer[MLC_SCH_MAX_OUTS];
  int nouter = 0, prow = -1;
  if (has_col && !cols_inner) outer[nouter++] = col_o;
  for (int i = 0; i < n; i++) {
    int in_tile = same_loop(s, loops[i], lanes_i) || (has_col && same_loop(s, loops[i], col_i)) ||
                  (has_row && same_loop(s, loops[i], row_i));
    if (in_tile || binds_reduce(blk, mlc_sch_rv_stmt(s, loops[i])->loop.var) ||
        (has_col && same_loop(s, loops[i], col_o)))
      continue;
    outer[nouter++] = loops[i];
  }
  if (cols_inner) outer[nouter++] = col_o;
  {
    int kr = -1;
    for (int i = 0; i < n && kr < 0; i++)
      if (binds_reduce(blk, mlc_sch_rv_stmt(s, loops[i])->loop.var)) kr = i;
    int64_t e0 = kr >= 0 ? const_extent(mlc_sch_rv_stmt(s, loops[kr])->loop.extent) : -1;
    int64_t in = operand_bytes(&tl, vit->var, 0), w = w_bytes;
    int64_t acc = buffer_bytes(st->store.buffer), passes = 1, rowpasses = 1, ppasses = 1;
    for (int i = 0; i < nouter; i++) { /* the column panels and the row blocks of each */
      const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, outer[i]);
      const mlc_tir_var *iv = iter_of_loop(blk, l->loop.var);
      int64_t e = const_extent(l->loop.extent);
      /* the columns' outer loop (split, so bound to no iteration
      ** variable alone) is a panel loop */
      int col_loop = has_col && outer[i] == col_o;
      if ((!iv && !col_loop) || e < 2) continue;
      if (col_loop || !reused_across(&tl, vit->var, 1, iv)) {
        if (col_loop) { if (ppasses < INT64_MAX / e) ppasses *= e; }
        else if (passes < INT64_MAX / e) passes *= e;
        prow = -1; /* a panel loop inside the rows: no panel blocks */
        rowpasses = 1;
      } else {
        if (prow < 0) prow = i;
        if (rowpasses < INT64_MAX / e) rowpasses *= e;
      }
    }
    int64_t set = in < INT64_MAX - w / passes ? in + w / passes : INT64_MAX, d = 1;
    /* an input that fits in half of it is not what overflows: the panel's
    ** vector operands are, and panel blocks in L2 (below) keep those
    ** where there are enough panels for them */
    if (in <= TILE_CACHE_BYTES / 2 && !lanes_outer && prow >= 0 && rowpasses > 1 &&
        passes * ppasses >= TILE_L2_PANELS_MIN)
      set = in;
    if (lim.lanes < 16 && e0 > 1 && in < INT64_MAX && acc < INT64_MAX / 4 && set > TILE_CACHE_BYTES) {
      while (++d < e0 && (e0 % d || set / d > TILE_CACHE_BYTES / 2)) {}
      /* the input's re-reads saved against the partial sums' traffic */
      if (e0 % d || (passes - 1) * (in / 4) <= (d + 1) * (acc / 2)) d = 1;
    }
    /* decision: the blocks (1: none; else 2) */
    int64_t cand[2] = {d, d > 1 ? 1 : 2};
    if (e0 > 1 && e0 % cand[1] == 0)
      MLC_RETURN_IF_ERROR(decide(s, opt, 2, cand, &kblocks));
    else
      kblocks = d;
    /* panel blocks: a column panel's vector operands (a conv's 16 output
    ** channels of weights), read again from L2 by every row block of the
    ** panel, stay in L1 when split in blocks of TILE_PANEL_BYTES, where
    ** the accumulators' traffic (the panel's partial sums, loaded and
    ** stored once per block) is less than the re-reads saved, and the
    ** panels alone are enough chunks to run in parallel: 32, or 16 for a
    ** tile of at most 2 rows, which loads a weight vector for every 2
    ** FMAs or fewer (measured on AVX2 at 1 and 2 threads: SqueezeNet's
    ** 1x1 conv to 1000 channels, 25 panels of a 2 x 5 tile, 0.86x and
    ** 0.80x; the 3x3 convs of 256 channels at 14x14 in ResNet-18, 16
    ** panels of 5 x 2, 1.02-1.07x, so not those) */
    int64_t rest = e0 > 1 ? e0 / kblocks : 0, pb = 1;
    int64_t panel = w < INT64_MAX ? w / (passes * ppasses) / kblocks : INT64_MAX;
    int64_t acc_panel = acc < INT64_MAX ? acc / (passes * ppasses) : INT64_MAX;
    int splittable = lim.lanes < 16 && !lanes_outer && prow >= 0 && rowpasses > 1 && rest > 1 &&
                     panel < INT64_MAX && acc_panel < INT64_MAX / 2 / rest;
    if (splittable && passes * ppasses >= (tr <= 2 ? PARALLEL_MIN_CHUNKS / 4 : PARALLEL_MIN_CHUNKS / 2))
      pb = panel_blocks(panel, rest, TILE_PANEL_BYTES, acc_panel, rowpasses);
    /* else panel blocks in L2: a panel of more than TILE_L2_PANEL_BYTES
    ** does not stay in L2 from one row block to the next, so every row
    ** block reads it from L3 or memory; split in the fewest blocks that
    ** do, where the panels are enough chunks for a few threads */
    if (pb == 1 && splittable && passes * ppasses >= TILE_L2_PANELS_MIN)
      pb = panel_blocks(panel, rest, TILE_L2_PANEL_BYTES, acc_panel, rowpasses);
    /* decision: the panel blocks (1: none; else 2) */
    int64_t pc[2] = {pb, pb > 1 ? 1 : 2};
    if (prow >= 0 && rest > 1 && rest % pc[1] == 0)
      MLC_RETURN_IF_ERROR(decide(s, opt, 2, pc, &pblocks));
    else
      pblocks = pb;
    if (kblocks > 1 || pblocks > 1) {
      mlc_sch_rv kp[3];
      mlc_sch_arg f[3];
      int nf = 0;
      if (kblocks > 1) f[nf++] = MLC_SCH_INT_ARG(kblocks);
      if (pblocks > 1) f[nf++] = MLC_SCH_INT_ARG(pblocks);
      f[nf++] = MLC_SCH_NONE_ARG;
      MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[kr], nf, f, kp));
      if (kblocks > 1) kb_o = kp[0];
      if (pblocks > 1) pb_o = kp[kblocks > 1];
      MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
      for (int i = 0; i < nouter; i++) /* the handles of this lookup */
        for (int j = 0; j < n; j++)
          if (!(has_col && outer[i] == col_o) && same_loop(s, loops[j], outer[i])) outer[i] = loops[j];
    }
  }
  mlc_sch_rv order[MLC_SCH_MAX_OUTS];
  int k = 0, red0 = -1;
  if (kblocks > 1) order[k++] = kb_o, red0 = 0;
  for (int i = 0; i < nouter; i++) {
    if (pblocks > 1 && i == prow) {
      if (red0 < 0) red0 = k;
      out->has_panel_at = i > 0 && kblocks == 1;
      if (i > 0) out->panel_at = outer[i - 1];
      order[k++] = pb_o;
    }
    order[k++] = outer[i];
  }
  int last_outer = k - 1;
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    if (binds_reduce(blk, l->loop.var) && !(kblocks > 1 && same_loop(s, loops[i], kb_o)) &&
        !(pblocks > 1 && same_loop(s, loops[i], pb_o))) {
      if (red0 < 0) red0 = k;
      order[k++] = loops[i];
    }
  }
  if (has_col) order[k++] = col_i;
  if (has_row) order[k++] = row_i;
  order[k++] = lanes_i;
  MLC_RETURN_IF_ERROR(mlc_sch_reorder(s, k, order));
  out->tiled = 1;
  out->blocked = kblocks > 1 || pblocks > 1;
  out->reduce0 = order[red0];
  out->reduce1 = order[k - 2 - has_col - has_row];
  out->has_at = last_outer >= 0;
  if (out->has_at) out->at = order[last_outer];
  if (has_col) out->inner[out->ninner++] = col_i;
  if (has_row) out->inner[out->ninner++] = row_i;
  out->inner[out->ninner++] = lanes_i;
  return NULL;
}

/* Unrolls all loops of |block| inside |at| but the innermost, which it
** vectorizes (split by |width| first when longer); refusals are skipped. */
static mlc_status unroll_tile_nest(mlc_sch *s, mlc_sch_rv block, const mlc_sch_rv *at, int64_t width) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0, from = 0;
  mlc_status st = NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  if (at) {
    from = -1;
    for (int i = 0; i < n; i++)
      if (same_loop(s, loops[i], *at)) from = i + 1;
    if (from < 0) return NULL;
  }
  if (from >= n) return NULL;
  const mlc_tir_stmt *last = mlc_sch_rv_stmt(s, loops[n - 1]);
  int64_t e = const_extent(last->loop.extent);
  if (e > width && e % width == 0) {
    mlc_sch_rv parts[2];
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(width)};
    if (!attempt(s, mlc_sch_split(s, loops[n - 1], 2, f, parts), &st)) return st;
    loops[n - 1] = parts[0];
    loops[n++] = parts[1];
  }
  for (int i = from; i < n - 1 && !st; i++) attempt(s, mlc_sch_unroll(s, loops[i]), &st);
  if (!st) attempt(s, mlc_sch_vectorize(s, loops[n - 1]), &st);
  return st;
}

/* Vectorizes the innermost loop of |block| (split by |width| first when
** longer); a refusal is skipped. */
static mlc_status vectorize_innermost(mlc_sch *s, mlc_sch_rv block, int64_t width) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  mlc_status st = NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  if (n == 0) return NULL;
  mlc_sch_rv v = loops[n - 1];
  int64_t e = const_extent(mlc_sch_rv_stmt(s, v)->loop.extent);
  if (e > width && e % width == 0) {
    mlc_sch_rv parts[2];
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(width)};
    if (!attempt(s, mlc_sch_split(s, v, 2, f, parts), &st)) return st;
    v = parts[1];
  }
  attempt(s, mlc_sch_vectorize(s, v), &st);
  return st;
}

/*
** A padded copy made per tile is made again for every iteration of the
** tile's outer loops that its reader does not index by: a conv's output
** channel chunks outside the tile read the same input rows.  Above
** PAD_COPY_MAX_REPEATS copies of each element it is made whole, before the
** conv.  Measured on an AVX2 host (16-lane channel blocks in 8-lane
** vectors, tiles of one channel chunk): the 3x3 convs of resnet50, 4 to 32
** copies per tile, ran 9-23% faster with the whole copy, and the tuner
** chose it for every one of them.  On targets of 16 lanes the tile spans
** channel chunks and the copy per tile was measured as good or better
** (mainly for the depthwise convs), so they keep it; the tuner may still
** choose otherwise.  On 8-lane targets a copy whose rows are not whole
** vectors (the stem's 3 input channels) is made whole too: per tile it
** copies one element at a time, the windows' overlap again for every tile
** (the stems of ResNet-18/50, SqueezeNet and MobileNetV2 in 0.69-0.92x
** the time, the whole copy included).
*/
#define PAD_COPY_MAX_REPEATS 8

static int load_of(void *ctx, const mlc_tir_expr *e) {
  tile_loads *t = ctx;
  if (e->kind != MLC_TIR_LOAD || e->load.buffer != t->acc) return MLC_TIR_VISIT_CONTINUE;
  if (t->n < (int)(sizeof t->loads / sizeof t->loads[0])) t->loads[t->n++] = e;
  return MLC_TIR_VISIT_SKIP;
}

/* The times a copy of buffer |pb| made under loop |at| would copy each
** element |block| reads from it into *|out|: the product of the extents of
** the loops down to |at| that no index of those reads depends on. */
static mlc_status copy_repeats(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv at, const mlc_tir_buffer *pb, int64_t *out) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  *out = 1;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!pb || !blk || !blk->block.body || blk->block.body->kind != MLC_TIR_STORE) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  tile_loads tl = {.acc = pb};
  mlc_tir_visitor vis = {.ctx = &tl, .pre_expr = load_of};
  mlc_tir_visit_expr(&vis, blk->block.body->store.value);
  if (tl.n == 0) return NULL;
  int64_t repeats = 1;
  for (int i = 0; i < n; i++) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[i]);
    int used = 0;
    for (int j = 0; j < blk->block.niters && !used; j++) {
      const mlc_tir_iter_var *it = &blk->block.iters[j];
      if (!it->binding || !mlc_tir_expr_uses_var(it->binding, l->loop.var)) continue;
      for (int k = 0; k < tl.n && !used; k++) used = mlc_tir_expr_uses_var(tl.loads[k], it->var);
    }
    if (!used) {
      int64_t e = const_extent(l->loop.extent);
      repeats *= e > 0 ? e : PAD_COPY_MAX_REPEATS;
      if (repeats >= PAD_COPY_MAX_REPEATS) break;
    }
    if (same_loop(s, loops[i], at)) break;
  }
  *out = repeats;
  return NULL;
}

/* Rule T and what follows it for the reduction |r|: the tile, its
** epilogue under the tile's outer loops, the init decomposed. */
static mlc_status tile_reduction(mlc_sch *s, mlc_sch_rv r, const mlc_lower_options *opt, int *tiled) {
  tile_result t;
  mlc_status st = NULL;
  *tiled = 0;
  mlc_sch_rv cons[MLC_SCH_MAX_OUTS], init;
  int nc = 0;
  const char *panel_operand = NULL;
  const mlc_tir_stmt *blk0 = mlc_sch_rv_stmt(s, r);
  if (blk0) panel_operand = vector_operand(mlc_sch_func(s), blk0);
  MLC_RETURN_IF_ERROR(tile_stage(s, r, opt, &t));
  if (!t.tiled) return NULL;
  /* a tile that writes the function's result itself (a matmul with no
  ** epilogue) accumulates in a local cache (cache_write) instead, copied
  ** back under the tile's loops as its epilogue: the tile then stays in
  ** registers, not in the result's memory at every step */
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, r);
  if (blk && stored(blk) && is_param(mlc_sch_func(s), stored(blk)) && !t.blocked) {
    attempt(s, mlc_sch_cache_write(s, r, 0, "local", NULL), &st);
    if (st) return st;
  }
  *tiled = 1;
  MLC_RETURN_IF_ERROR(mlc_sch_get_consumers(s, r, MLC_SCH_MAX_OUTS, cons, &nc));
  int moved = 0, moved_panel = 0;
  if (nc == 1 && (t.has_at || t.has_panel_at) && (!t.blocked || t.has_panel_at)) {
    const mlc_tir_stmt *e = mlc_sch_rv_stmt(s, cons[0]);
    /* blocked: after the panel's last block, while its sums are in cache */
    if (e && e->block.niters > 0 && !is_reduction(e) && stored(e))
      *(t.blocked ? &moved_panel : &moved) =
          attempt(s, mlc_sch_reverse_compute_at(s, cons[0], t.blocked ? t.panel_at : t.at, 0), &st);
    if (st) return st;
  }
  int64_t lanes = mlc_tile_limits_for(opt ? opt->vector_bits : 0).lanes;
  /* the padded copy of the input (rule F1 kept it) is made per tile, of
  ** the rows and columns the tile reads, where it stays in cache */
  mlc_sch_rv prods[MLC_SCH_MAX_OUTS];
  int np = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_get_producers(s, r, MLC_SCH_MAX_OUTS, prods, &np));
  for (int i = 0; i < np && t.has_at && !t.blocked && !st; i++) {
    if (!is_padded_copy(s, mlc_sch_rv_stmt(s, prods[i]))) continue;
    /* decision: per tile, or whole before (when per tile would copy each
    ** element many times) */
    int64_t reps = 1, per_tile;
    const mlc_tir_buffer *pb = stored(mlc_sch_rv_stmt(s, prods[i]));
    if (lanes < 16)
      MLC_RETURN_IF_ERROR(copy_repeats(s, r, t.at, pb, &reps));
    /* rows not of whole half vectors (a stem's 3 input channels): per
    ** tile, a copy element by element, its overlapping windows again */
    if (lanes < 16 && pb && pb->rank > 0 && const_extent(pb->shape[pb->rank - 1]) % (lanes / 2) != 0)
      reps = PAD_COPY_MAX_REPEATS;
    int64_t cand[2] = {reps < PAD_COPY_MAX_REPEATS, reps >= PAD_COPY_MAX_REPEATS};
    MLC_RETURN_IF_ERROR(decide(s, opt, 2, cand, &per_tile));
    if (per_tile) attempt(s, mlc_sch_compute_at(s, prods[i], t.at, 0), &st);
  }
  if (st) return st;
  MLC_RETURN_IF_ERROR(mlc_sch_decompose_reduction(s, r, t.reduce0, &init));
  if (!t.blocked) MLC_RETURN_IF_ERROR(unroll_tile_nest(s, init, t.has_at ? &t.at : NULL, lanes));
  if (t.has_panel_at) MLC_RETURN_IF_ERROR(vectorize_innermost(s, init, lanes));
  if (moved_panel) MLC_RETURN_IF_ERROR(vectorize_innermost(s, cons[0], lanes));
  for (int i = 0; i + 1 < t.ninner; i++) MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, t.inner[i]));
  MLC_RETURN_IF_ERROR(mlc_sch_vectorize(s, t.inner[t.ninner - 1]));
  if (moved) MLC_RETURN_IF_ERROR(unroll_tile_nest(s, cons[0], &t.at, lanes));
  /* decision: the innermost reduce loop unrolled by 1 (not split), 2, 4 or 8
  ** (default 1, on 8-lane targets the largest) */
  int64_t e = const_extent(mlc_sch_rv_stmt(s, t.reduce1)->loop.extent), cand[4] = {1}, u;
  int nu = 1;
  for (int64_t f = 2; f <= 8; f *= 2)
    if (e > f && e % f == 0) cand[nu++] = f;
  /* 8-lane targets: the largest factor first (measured on AVX2: the
  ** encoder's matmuls 1.2x faster unrolled by 8, the convs alike) */
  if (lanes < 16 && nu > 1) {
    int64_t largest = cand[nu - 1];
    cand[nu - 1] = cand[0];
    cand[0] = largest;
  }
  MLC_RETURN_IF_ERROR(decide(s, opt, nu, cand, &u));
  if (u > 1) {
    mlc_sch_rv parts[2];
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(u)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, t.reduce1, 2, f, parts));
    MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, parts[1]));
  }
  /* the panel loop (rule 2's parallel loop) prefetches the next panel's
  ** block of the vector operand (pass_prefetch.c) */
  if (panel_operand)
    MLC_RETURN_IF_ERROR(mlc_sch_annotate(s, r, "software_prefetch", MLC_SCH_STR_ARG(panel_operand)));
  return NULL;
}

/*
** Rule R.  A reduction along the contiguous axis (a row's max or sum in a
** softmax or a layer norm: its one reduce loop innermost and the last index
** of a load, at least 64 iterations, a multiple of 16) is factored
** (rfactor, the lanes last in the partial results) into 16 partial
** reductions that rule 1 then computes as one vector, and a write-back that
** sums the 16: the row is read with vector loads instead of one element
** at a time.
*/
#define RFACTOR_LANES 16

/* Whether the reduction of |blk| (reduce variable |kv|) runs along the
** contiguous axis of what it reads: the last index of its loads that vary
** with both the reduction and an output (not a matrix-vector product's
** vector) is the reduce variable's (any load's, when none varies with
** both). */
static int reduce_is_contiguous(const mlc_tir_stmt *blk, const mlc_tir_var *kv) {
  tile_loads tl;
  block_loads(blk, &tl);
  int rows = 1, any = 0, last_k = 0;
  for (int l = 0; kv && l < tl.n && l < 8; l++) {
    const mlc_tir_expr *ld = tl.loads[l];
    if (ld->load.n < 1) continue; /* a scalar (CumSum's axis): read along nothing */
    int uses_k = 0, uses_sp = 0, lk = mlc_tir_expr_uses_var(ld->load.indices[ld->load.n - 1], kv);
    for (int d = 0; d < ld->load.n; d++) {
      uses_k |= mlc_tir_expr_uses_var(ld->load.indices[d], kv);
      for (int i = 0; i < blk->block.niters; i++)
        if (blk->block.iters[i].kind == MLC_TIR_ITER_SPATIAL && const_extent(blk->block.iters[i].extent) != 1)
          uses_sp |= mlc_tir_expr_uses_var(ld->load.indices[d], blk->block.iters[i].var);
    }
    last_k |= lk;
    if (!uses_k || !uses_sp) continue;
    any = 1;
    rows &= lk; /* every such load reads along k: a matmul's B[k, j] does not */
  }
  return any ? rows : last_k;
}

static mlc_status rfactor_cpu_reduction(mlc_sch *s, mlc_sch_rv block, const mlc_lower_options *opt, int *factored) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0, p = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0 || !blk->block.init || !stored(blk)) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  while (p < n && !binds_reduce(blk, mlc_sch_rv_stmt(s, loops[p])->loop.var)) p++;
  if (p != n - 1 || mlc_sch_rv_stmt(s, loops[p])->loop.kind != MLC_TIR_FOR_SERIAL) return NULL;
  int64_t k = const_extent(mlc_sch_rv_stmt(s, loops[p])->loop.extent);
  if (k < 64 || k % RFACTOR_LANES) return NULL;
  const mlc_tir_var *kv = NULL;
  for (int i = 0; i < blk->block.niters; i++)
    if (blk->block.iters[i].kind == MLC_TIR_ITER_REDUCE) kv = blk->block.iters[i].var;
  if (!kv || !reduce_is_contiguous(blk, kv)) return NULL;
  /* decision: the partial results (16, 8, 32) */
  int64_t cand[3] = {RFACTOR_LANES, RFACTOR_LANES / 2, RFACTOR_LANES * 2}, lanes;
  MLC_RETURN_IF_ERROR(decide(s, opt, k % (RFACTOR_LANES * 2) == 0 ? 3 : 2, cand, &lanes));
  mlc_sch_rv parts[2];
  mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(lanes)};
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], 2, f, parts));
  MLC_RETURN_IF_ERROR(mlc_sch_rfactor(s, parts[1], stored(blk)->rank, NULL));
  *factored = 1;
  return NULL;
}

/* Applies the rules (rule 1 only with |vectors|) to a new schedule of |f|. */
static mlc_status apply_rules(mlc_tir_module *tm, mlc_tir_func *f, const mlc_lower_options *opt, int vectors,
                              int tiles, mlc_sch **out) {
  mlc_sch_rv blocks[MLC_SCH_MAX_OUTS];
  int n = 0;
  if (opt && opt->tune) opt->tune->ndecisions = 0; /* a fallback decides anew */
  MLC_RETURN_IF_ERROR(mlc_sch_create(tm, f, opt && opt->tune ? opt->tune->seed : 0, out));
  mlc_status st = mlc_sch_get_child_blocks(*out, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  int changed = 0;
  if (!st && n > 1) st = inline_stages(*out, n, blocks, &changed);
  if (!st && changed) st = mlc_sch_get_child_blocks(*out, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  for (int i = 0, moved = 0, tiled = 0; !st && i < n; i++) {
    if (tiles) st = tile_reduction(*out, blocks[i], opt, &tiled);
    if (tiled) changed = 1;
    if (!st && !tiled && n > 1) st = epilogue(*out, blocks[i], &moved);
    changed |= moved;
  }
  if (!st && changed) st = mlc_sch_get_child_blocks(*out, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  /* rule R: row reductions as vectors of partial results */
  int factored = 0;
  for (int i = 0; !st && vectors && i < n; i++) attempt(*out, rfactor_cpu_reduction(*out, blocks[i], opt, &factored), &st);
  if (!st && factored) st = mlc_sch_get_child_blocks(*out, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  /* every block, an epilogue under its reduction's loops too */
  for (int i = 0; !st && vectors && i < n; i++) st = vectorize_stage(*out, blocks[i], opt);
  for (int i = 0; !st && i < n; i++) st = schedule_stage(*out, blocks[i], opt);
  return st;
}

/* The number of leading serial loops of |loops| (|n|, around |blk|) that
** bind no reduce iteration variable of |blk|: its outputs' loops. */
static int spatial_prefix(mlc_sch *s, const mlc_tir_stmt *blk, const mlc_sch_rv *loops, int n) {
  int p = 0;
  while (p < n) {
    const mlc_tir_stmt *l = mlc_sch_rv_stmt(s, loops[p]);
    if (l->loop.kind != MLC_TIR_FOR_SERIAL || binds_reduce(blk, l->loop.var)) break;
    p++;
  }
  return p;
}

/* ---- the GPU schedule ------------------------------------------------------
**
** G1. Rule F1, and of rule F2 only reverse_compute_inline: each stage
**     left is a kernel of its own (a launch), so an epilogue either folds
**     into its reduction or runs as the next kernel.
** G2. Threads.  The leading spatial loops of each stage (those outside
**     its first loop bound to a reduce iteration variable) are fused into
**     one loop, split by GPU_THREADS and bound to blockIdx.x and
**     threadIdx.x: one thread per output element, consecutive threads on
**     consecutive elements of the row-major output (coalesced stores), the
**     reduction serial in each thread.  A stage with no spatial loop runs
**     on one thread (codegen launches any unbound statement that way).
*/
#define GPU_THREADS 256
/* Outputs a thread of a reduction computes (rule G3), at most. */
#define GPU_TILE 8
/* Threads a tiled reduction keeps at least: a GPU of 132 multiprocessors
** holds 270K resident threads; with fewer than a quarter of that, a tile
** costs more in parallelism than it saves in loads (an H200 ran resnet50's
** 7x7 layers 5x slower with 8 channels per thread). */
#define GPU_MIN_THREADS 65536

/*
** G3. Register tiles.  A reduction whose leading spatial loops include one
**     besides the innermost (a matmul's rows, a convolution's output
**     channels) of a constant extent divisible by 4 has that loop split by
**     8 (or 4) and the 8 moved inside the reduce loops, unrolled, its init
**     separated (decompose_reduction): each thread then keeps 8
**     accumulators in registers across the reduction and reads each value
**     of the operand that loop does not index once for 8 outputs (4 or 2,
**     or none, so that GPU_MIN_THREADS threads remain: at batch 1 a
**     convolution's small layers need every thread they have).  When
**     the innermost spatial loop (a matmul's columns, a convolution's
**     output width) has at least 128 iterations, 4 consecutive of them
**     join the tile (8 x 4 accumulators: 32 FMAs for 12 loads); else
**     consecutive threads write consecutive elements.  The accumulators
**     are a local copy of the tile (cache_write "local", written back under
**     the tile's loop by reverse_compute_at), which lowering compacts to
**     the tile and LLVM keeps in registers.
*/
static mlc_status tile_gpu_reduction(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv *wb_out) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0, p = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0 || !blk->block.init) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  p = spatial_prefix(s, blk, loops, n);
  if (p < 1 || p == n) return NULL; /* no spatial loop, or no reduction */
  /* the tile: as large as keeps GPU_MIN_THREADS threads busy */
  int64_t outputs = loops_product(s, loops, p);
  /* which loop: one that the loads varying across a warp (those indexed
  ** by the innermost spatial loop, whose threads are consecutive) do not
  ** index, so the tile reuses them (a convolution's output channels, a
  ** matmul's rows: not its batch, not an output row of the convolution) */
  tile_loads tl;
  block_loads(blk, &tl);
  const mlc_tir_var *lane = iter_of_loop(blk, mlc_sch_rv_stmt(s, loops[p - 1])->loop.var);
  int best = -1;
  int64_t t = 1;
  static const int64_t tiles[] = {GPU_TILE, 4, 2};
  for (int c = 0; c < 3 && best < 0 && lane && tl.n <= 8; c++) {
    int64_t best_e = 0;
    if (outputs / tiles[c] < GPU_MIN_THREADS) continue;
    for (int i = 0; i < p - 1; i++) {
      int64_t e = const_extent(mlc_sch_rv_stmt(s, loops[i])->loop.extent);
      const mlc_tir_var *it = iter_of_loop(blk, mlc_sch_rv_stmt(s, loops[i])->loop.var);
      int reuse = it != NULL;
      for (int l = 0; reuse && l < tl.n; l++) {
        int uses_lane = 0, uses_it = 0;
        for (int d = 0; d < tl.loads[l]->load.n; d++) {
          uses_lane |= mlc_tir_expr_uses_var(tl.loads[l]->load.indices[d], lane);
          uses_it |= mlc_tir_expr_uses_var(tl.loads[l]->load.indices[d], it);
        }
        if (uses_lane && uses_it) reuse = 0;
      }
      if (reuse && e >= tiles[c] && e % tiles[c] == 0 && e > best_e) best = i, best_e = e;
    }
    if (best >= 0) t = tiles[c];
  }
  /* the innermost spatial loop by 4 too when threads enough remain: 4
  ** consecutive outputs per thread, 8 x 4 accumulators */
  int64_t ie = const_extent(mlc_sch_rv_stmt(s, loops[p - 1])->loop.extent);
  int inner = best >= 0 && ie >= 4 * 32 && ie % 4 == 0 && outputs / (t * 4) >= GPU_MIN_THREADS;
  mlc_sch_rv parts[2], iparts[2];
  if (best >= 0) {
    mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(t)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[best], 2, f, parts));
    if (inner) {
      mlc_sch_arg g[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(4)};
      MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p - 1], 2, g, iparts));
    }
    /* the spatial loops after it, the reduce loops, then the tile */
    mlc_sch_rv order[MLC_SCH_MAX_OUTS];
    int k = 0;
    for (int i = best + 1; i < n; i++) order[k++] = inner && i == p - 1 ? iparts[0] : loops[i];
    order[k++] = parts[1];
    if (inner) order[k++] = iparts[1];
    MLC_RETURN_IF_ERROR(mlc_sch_reorder(s, k, order));
  }
  /* the accumulators: a local copy of the tile, written back after the
  ** reduction (lowering compacts it to the tile: registers) */
  mlc_sch_rv at = inner ? iparts[0] : loops[p - 1], wb, init, il[MLC_SCH_MAX_OUTS];
  int ni = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_cache_write(s, block, 0, "local", &wb));
  MLC_RETURN_IF_ERROR(mlc_sch_reverse_compute_at(s, wb, at, 0));
  *wb_out = wb;
  MLC_RETURN_IF_ERROR(mlc_sch_decompose_reduction(s, block, loops[p], &init));
  /* every loop of the tile unrolled: in the init, the write-back, the update */
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, init, MLC_SCH_MAX_OUTS, il, &ni));
  for (int i = ni - 1; i >= 0 && !same_loop(s, il[i], at); i--) MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, il[i]));
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, wb, MLC_SCH_MAX_OUTS, il, &ni));
  for (int i = ni - 1; i >= 0 && !same_loop(s, il[i], at); i--) MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, il[i]));
  if (inner) MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, iparts[1]));
  return best >= 0 ? mlc_sch_unroll(s, parts[1]) : NULL;
}

/*
** G7. Shared-memory tiles.  A matmul-like reduction (one reduce loop k,
**     innermost; spatial loops [batch...,] i, j; two operands, one indexed
**     by i and k but not j, the other by j and k but not i) whose extents
**     divide a tile of BM x BN outputs and BK terms (128 x 128 x 16, else
**     64 x 64 x 16), with at least GPU_SMEM_MIN_BLOCKS tiles, runs one
**     thread block of 16 x 16 threads per tile:
**       - the k loop is split by BK; per chunk the block's threads copy the
**         A[BM, BK] and B[BK, BN] panels into shared buffers together
**         (cache_read "shared" + compute_at, the copy's loops fused and
**         bound to threadIdx: consecutive threads, consecutive elements);
**       - each thread keeps a (BM / 16) x (BN / 16) tile of consecutive
**         rows and columns in registers (the regions of compute_at and
**         reverse_compute_at are ranges, so no interleaving) and reads both
**         operands from shared memory, BM / 16 scalar loads of A's panel
**         and a vector load of BN / 16 consecutive elements of B's (its
**         loop vectorized; codegen proves the alignment) for (BM / 16)
**         (BN / 16) FMAs (an H200 ran sgemm 4096^3 at 33.3 TFLOP/s with
**         scalar loads and BK 8, 34.8 with vector loads, 38.8 with BK 16;
**         cuBLAS 50.2);
**       - the write-back takes the epilogue (G4).
**     Lowering places the barriers (thread_sync) and the shared buffers.
**     Run serially (the GPU schedule on the CPU), each thread's copy loop,
**     bound to threadIdx but a whole loop there, copies the whole panel
**     itself before its FMAs read it: the same results, the barriers
**     nothing to wait for.
*/
#define GPU_SMEM_SIDE 16
#define GPU_SMEM_MIN_BLOCKS 128

typedef struct read_order {
  const mlc_tir_buffer *out, *want;
  const mlc_tir_buffer *seen[16];
  int n, index;
} read_order;

static int read_order_load(void *ctx, const mlc_tir_expr *e) {
  read_order *r = ctx;
  if (e->kind != MLC_TIR_LOAD || e->load.buffer == r->out || r->index >= 0) return MLC_TIR_VISIT_CONTINUE;
  for (int i = 0; i < r->n; i++)
    if (r->seen[i] == e->load.buffer) return MLC_TIR_VISIT_CONTINUE;
  if (e->load.buffer == r->want) r->index = r->n;
  if (r->n == 16) return MLC_TIR_VISIT_STOP;
  r->seen[r->n++] = e->load.buffer;
  return MLC_TIR_VISIT_CONTINUE;
}

/* The read_buffer_index of |buf| in reduction |blk| (schedule.h: the
** init's reads first, the accumulator not counted), or -1. */
static int read_index(const mlc_tir_stmt *blk, const mlc_tir_buffer *buf) {
  read_order r = {stored(blk), buf, {0}, 0, -1};
  mlc_tir_visitor v = {0};
  v.ctx = &r;
  v.pre_expr = read_order_load;
  mlc_tir_visit_stmt(&v, blk->block.init);
  mlc_tir_visit_stmt(&v, blk->block.body);
  return r.index;
}

static mlc_status shared_gpu_matmul(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv *wb_out) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0 || !blk->block.init || !stored(blk)) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  int p = spatial_prefix(s, blk, loops, n);
  if (p < 2 || n != p + 1 || p + 4 > MLC_SCH_MAX_OUTS) return NULL;
  int64_t m = const_extent(mlc_sch_rv_stmt(s, loops[p - 2])->loop.extent);
  int64_t nn = const_extent(mlc_sch_rv_stmt(s, loops[p - 1])->loop.extent);
  int64_t k = const_extent(mlc_sch_rv_stmt(s, loops[p])->loop.extent);
  int64_t batch = loops_product(s, loops, p - 2);
  if (m < 1 || nn < 1 || k < 1 || batch < 1) return NULL;
  const mlc_tir_var *vi = iter_of_loop(blk, mlc_sch_rv_stmt(s, loops[p - 2])->loop.var);
  const mlc_tir_var *vj = iter_of_loop(blk, mlc_sch_rv_stmt(s, loops[p - 1])->loop.var);
  const mlc_tir_var *vk = NULL;
  for (int i = 0; i < blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &blk->block.iters[i];
    if (it->kind == MLC_TIR_ITER_REDUCE && it->binding && it->binding->kind == MLC_TIR_VAR_REF &&
        it->binding->var == mlc_sch_rv_stmt(s, loops[p])->loop.var)
      vk = it->var;
  }
  if (!vi || !vj || !vk) return NULL;
  /* the operands: A (i, k) and B (k, j), in the block's order of reads */
  tile_loads tl;
  block_loads(blk, &tl);
  if (tl.n != 2 || tl.loads[0]->load.buffer == tl.loads[1]->load.buffer) return NULL;
  int a = -1, b = -1;
  for (int l = 0; l < 2; l++) {
    const mlc_tir_expr *ld = tl.loads[l];
    int ui = 0, uj = 0, uk = 0;
    for (int d = 0; d < ld->load.n; d++) {
      ui |= mlc_tir_expr_uses_var(ld->load.indices[d], vi);
      uj |= mlc_tir_expr_uses_var(ld->load.indices[d], vj);
      uk |= mlc_tir_expr_uses_var(ld->load.indices[d], vk);
    }
    if (ui && uk && !uj) a = l;
    else if (uj && uk && !ui) b = l;
  }
  if (a < 0 || b < 0) return NULL;
  /* the tile: the largest that leaves GPU_SMEM_MIN_BLOCKS blocks */
  static const int64_t tiles[][3] = {{128, 128, 16}, {64, 64, 16}};
  int t = -1;
  for (int c = 0; c < 2 && t < 0; c++)
    if (m % tiles[c][0] == 0 && nn % tiles[c][1] == 0 && k % tiles[c][2] == 0 &&
        batch * (m / tiles[c][0]) * (nn / tiles[c][1]) >= GPU_SMEM_MIN_BLOCKS)
      t = c;
  if (t < 0) return NULL;
  int64_t bm = tiles[t][0], bn = tiles[t][1], bk = tiles[t][2];
  mlc_sch_rv ip[3], jp[3], kp[2], order[MLC_SCH_MAX_OUTS], bx, tx, wb, init, cl[MLC_SCH_MAX_OUTS];
  mlc_sch_arg fi[3] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(GPU_SMEM_SIDE), MLC_SCH_INT_ARG(bm / GPU_SMEM_SIDE)};
  mlc_sch_arg fj[3] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(GPU_SMEM_SIDE), MLC_SCH_INT_ARG(bn / GPU_SMEM_SIDE)};
  mlc_sch_arg fk[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(bk)};
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p - 2], 3, fi, ip));
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p - 1], 3, fj, jp));
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], 2, fk, kp));
  /* [batch...,] bi, bj, ty, tx, ko, ki, i, j */
  int no = 0;
  for (int i = 0; i < p - 2; i++) order[no++] = loops[i];
  order[no++] = ip[0], order[no++] = jp[0], order[no++] = ip[1], order[no++] = jp[1];
  order[no++] = kp[0], order[no++] = kp[1], order[no++] = ip[2], order[no++] = jp[2];
  MLC_RETURN_IF_ERROR(mlc_sch_reorder(s, no, order));
  /* the accumulators in registers, written back by each thread (before
  ** the fusions: the write-back's region is a range of each loop) */
  MLC_RETURN_IF_ERROR(mlc_sch_cache_write(s, block, 0, "local", &wb));
  MLC_RETURN_IF_ERROR(mlc_sch_reverse_compute_at(s, wb, jp[1], 0));
  *wb_out = wb;
  MLC_RETURN_IF_ERROR(mlc_sch_fuse(s, p, order, &bx));
  MLC_RETURN_IF_ERROR(mlc_sch_fuse(s, 2, order + p, &tx));
  MLC_RETURN_IF_ERROR(mlc_sch_bind(s, bx, "blockIdx.x"));
  MLC_RETURN_IF_ERROR(mlc_sch_bind(s, tx, "threadIdx.x"));
  /* the panels in shared memory, fetched by all the block's threads */
  mlc_sch_rv copies[2];
  int reads[2] = {read_index(blk, tl.loads[a]->load.buffer), read_index(blk, tl.loads[b]->load.buffer)};
  if (reads[0] < 0 || reads[1] < 0) return NULL;
  for (int r = 0; r < 2; r++) {
    MLC_RETURN_IF_ERROR(mlc_sch_cache_read(s, block, reads[r], "shared", &copies[r]));
    MLC_RETURN_IF_ERROR(mlc_sch_compute_at(s, copies[r], kp[0], 0));
  }
  MLC_RETURN_IF_ERROR(mlc_sch_decompose_reduction(s, block, kp[0], &init));
  for (int r = 0; r < 2; r++) {
    mlc_sch_rv c = copies[r], f, parts[2];
    int nc = 0;
    MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, c, MLC_SCH_MAX_OUTS, cl, &nc));
    if (nc < 4) return NULL; /* bx, tx, ko and the panel's */
    MLC_RETURN_IF_ERROR(mlc_sch_fuse(s, nc - 3, cl + 3, &f));
    mlc_sch_arg ff[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(GPU_SMEM_SIDE * GPU_SMEM_SIDE)};
    MLC_RETURN_IF_ERROR(mlc_sch_split(s, f, 2, ff, parts));
    MLC_RETURN_IF_ERROR(mlc_sch_bind(s, parts[1], "threadIdx.x"));
    MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, parts[0]));
  }
  /* every loop inside a thread unrolled: the init, the update, the write-back */
  MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, kp[1]));
  MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, ip[2]));
  MLC_RETURN_IF_ERROR(mlc_sch_vectorize(s, jp[2]));
  mlc_sch_rv *which[2] = {&init, &wb};
  for (int w = 0; w < 2; w++) {
    int ni = 0;
    MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, *which[w], MLC_SCH_MAX_OUTS, cl, &ni));
    for (int i = ni - 1; i >= 0 && !same_loop(s, cl[i], tx); i--) MLC_RETURN_IF_ERROR(mlc_sch_unroll(s, cl[i]));
  }
  return NULL;
}

/*
** G5. Cross-thread reductions.  A reduction with fewer than
** GPU_MIN_THREADS / 4 outputs and one reduce loop of at least 128
** iterations, a multiple of 32 (a layer norm's or softmax's rows, a
** matrix-vector product, a global pooling), is factored (rfactor) into 32
** partial reductions per output, which threads compute side by side, and a
** write-back that sums the 32.  The reduce loop is split so that the 32
** threads of an output read consecutive elements when the reduce axis is
** the contiguous one (rows: k = ko * 32 + ki), and whole chunks each when
** the outputs are (a matrix-vector product: k = ki * (K / 32) + ko, the
** outputs' loop innermost among the bound ones).
*/
#define GPU_RFACTOR 32

/* Outputs of a warp reduction per thread block (one warp each). */
#define GPU_WARPS 8

/*
** G5 for rows: the 32 partial results of an output are a warp's, its
** lanes side by side: the write-back's loop over them is bound to
** threadIdx.x (a cross-thread reduction, which the GPU lowering computes
** with shuffles), its outputs' loop to threadIdx.y and blockIdx.x (up to
** GPU_WARPS outputs per block), and the partial stage goes under the
** output's loop (compute_at), its lanes bound to threadIdx.x, each lane's
** partial result accumulated in a register (cache_write "local", the copy
** under the output's loop, the partial stage under the copy's lane).
** |block| combines, |rf| computes the partial results, |p| outputs' loops.
*/
static mlc_status warp_reduction(mlc_sch *s, mlc_sch_rv block, mlc_sch_rv rf, int p) {
  mlc_sch_rv cl[MLC_SCH_MAX_OUTS], o, parts[2], wb;
  int n = 0;
  /* each lane's partial result in a register, then stored for the write-back */
  MLC_RETURN_IF_ERROR(mlc_sch_cache_write(s, rf, 0, "local", &wb));
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, cl, &n));
  if (n != p + 1) return NULL;
  o = cl[0];
  if (p > 1) MLC_RETURN_IF_ERROR(mlc_sch_fuse(s, p, cl, &o));
  int64_t e = const_extent(mlc_sch_rv_stmt(s, o)->loop.extent), w = GPU_WARPS;
  while (w > 1 && e % w) w /= 2;
  mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(w)};
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, o, 2, f, parts));
  MLC_RETURN_IF_ERROR(mlc_sch_bind(s, parts[0], "blockIdx.x"));
  MLC_RETURN_IF_ERROR(mlc_sch_bind(s, parts[1], "threadIdx.y"));
  MLC_RETURN_IF_ERROR(mlc_sch_bind(s, cl[p], "threadIdx.x"));
  /* the partial results of the block's outputs under its output's loop,
  ** one per lane, each lane's computed in its iteration */
  MLC_RETURN_IF_ERROR(mlc_sch_compute_at(s, wb, parts[1], 0));
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, wb, MLC_SCH_MAX_OUTS, cl, &n));
  if (n != 3) return NULL; /* blockIdx, threadIdx.y, the lanes */
  MLC_RETURN_IF_ERROR(mlc_sch_bind(s, cl[2], "threadIdx.x"));
  return mlc_sch_compute_at(s, rf, cl[2], 0);
}

static mlc_status rfactor_gpu_reduction(mlc_sch *s, mlc_sch_rv block) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0, p = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0 || !blk->block.init) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  p = spatial_prefix(s, blk, loops, n);
  if (p != n - 1) return NULL; /* one reduce loop, innermost */
  int64_t outputs = loops_product(s, loops, p);
  int64_t k = const_extent(mlc_sch_rv_stmt(s, loops[p])->loop.extent);
  if (outputs < 1 || outputs >= GPU_MIN_THREADS / 4 || k < 128 || k % GPU_RFACTOR) return NULL;
  /* is the reduce axis the contiguous one? */
  const mlc_tir_var *kv = NULL;
  for (int i = 0; i < blk->block.niters; i++)
    if (blk->block.iters[i].kind == MLC_TIR_ITER_REDUCE) kv = blk->block.iters[i].var;
  int rows = !kv || reduce_is_contiguous(blk, kv);
  mlc_sch_rv parts[2], rf;
  mlc_sch_arg f[2] = {rows ? MLC_SCH_NONE_ARG : MLC_SCH_INT_ARG(GPU_RFACTOR),
                      rows ? MLC_SCH_INT_ARG(GPU_RFACTOR) : MLC_SCH_NONE_ARG};
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], 2, f, parts));
  mlc_sch_rv lanes = rows ? parts[1] : parts[0], rest = rows ? parts[0] : parts[1];
  MLC_RETURN_IF_ERROR(mlc_sch_rfactor(s, lanes, 0, &rf));
  if (rows) return warp_reduction(s, block, rf, p);
  /* the partial sums: the lanes beside the outputs' loops (outside the
  ** rest of the reduction), innermost for rows, outermost otherwise */
  mlc_sch_rv order[MLC_SCH_MAX_OUTS];
  int no = 0;
  if (!rows) order[no++] = lanes;
  for (int i = 0; i < p; i++) order[no++] = loops[i];
  if (rows) order[no++] = lanes;
  order[no++] = rest;
  return mlc_sch_reorder(s, no, order);
}

/*
** G6. Split reductions.  A reduction that still has fewer than
** GPU_MIN_THREADS outputs and at least 512 iterations of reduction (a
** convolution's 7x7 layers at batch 1: 25088 outputs of 4608 terms) is
** factored along chunks of its outermost reduce loop (2 to 32 of them, the
** fewest that make GPU_MIN_THREADS partial results): each chunk's partial
** sums are outputs of their own, computed side by side, and the write-back
** adds the chunks (and takes the epilogue).
*/
static mlc_status split_gpu_reduction(mlc_sch *s, mlc_sch_rv block) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0, p = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0 || !blk->block.init) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  p = spatial_prefix(s, blk, loops, n);
  if (p < 1 || p == n) return NULL;
  for (int i = p; i < n; i++) /* only reduce loops inside */
    if (!binds_reduce(blk, mlc_sch_rv_stmt(s, loops[i])->loop.var)) return NULL;
  int64_t outputs = loops_product(s, loops, p), terms = 1, c = const_extent(mlc_sch_rv_stmt(s, loops[p])->loop.extent);
  for (int i = p; i < n && terms > 0; i++) {
    int64_t e = const_extent(mlc_sch_rv_stmt(s, loops[i])->loop.extent);
    terms = e < 0 ? -1 : terms * e;
  }
  if (outputs < 1 || outputs >= GPU_MIN_THREADS || terms < 512 || c < 2) return NULL;
  int64_t r = 2;
  while (r < GPU_RFACTOR && outputs * r < GPU_MIN_THREADS) r *= 2;
  while (r > 1 && c % r) r /= 2;
  if (r < 2) return NULL;
  mlc_sch_rv parts[2], rf;
  mlc_sch_arg f[2] = {MLC_SCH_INT_ARG(r), MLC_SCH_NONE_ARG};
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, loops[p], 2, f, parts));
  MLC_RETURN_IF_ERROR(mlc_sch_rfactor(s, parts[0], 0, &rf));
  /* the chunks outermost among the outputs' loops */
  mlc_sch_rv order[MLC_SCH_MAX_OUTS];
  int no = 0;
  order[no++] = parts[0];
  for (int i = 0; i < p; i++) order[no++] = loops[i];
  order[no++] = parts[1];
  return mlc_sch_reorder(s, no, order);
}

static mlc_status bind_stage(mlc_sch *s, mlc_sch_rv block) {
  mlc_sch_rv loops[MLC_SCH_MAX_OUTS];
  int n = 0, p = 0;
  const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, block);
  if (!blk || blk->block.niters == 0) return NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_get_loops(s, block, MLC_SCH_MAX_OUTS, loops, &n));
  p = spatial_prefix(s, blk, loops, n);
  if (p == 0) return NULL;
  mlc_sch_rv fused = loops[0];
  if (p > 1) MLC_RETURN_IF_ERROR(mlc_sch_fuse(s, p, loops, &fused));
  int64_t e = const_extent(mlc_sch_rv_stmt(s, fused)->loop.extent);
  int64_t threads = e >= 1 && e < GPU_THREADS ? e : GPU_THREADS;
  mlc_sch_rv parts[2];
  mlc_sch_arg f[2] = {MLC_SCH_NONE_ARG, MLC_SCH_INT_ARG(threads)};
  MLC_RETURN_IF_ERROR(mlc_sch_split(s, fused, 2, f, parts));
  MLC_RETURN_IF_ERROR(mlc_sch_bind(s, parts[0], "blockIdx.x"));
  return mlc_sch_bind(s, parts[1], "threadIdx.x");
}

static mlc_status apply_gpu_rules(mlc_tir_module *tm, mlc_tir_func *f, mlc_sch **out) {
  mlc_sch_rv blocks[MLC_SCH_MAX_OUTS];
  int n = 0, changed = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_create(tm, f, 0, out));
  mlc_sch *s = *out;
  mlc_status st = mlc_sch_get_child_blocks(s, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  if (!st && n > 1) st = inline_stages(s, n, blocks, &changed);
  if (!st && changed) st = mlc_sch_get_child_blocks(s, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  for (int i = 0; !st && n > 1 && i < n; i++) {
    const mlc_tir_stmt *blk = mlc_sch_rv_stmt(s, blocks[i]);
    mlc_sch_rv cons[MLC_SCH_MAX_OUTS];
    int nc = 0;
    if (!blk || !is_reduction(blk) || !stored(blk)) continue;
    if ((st = mlc_sch_get_consumers(s, blocks[i], MLC_SCH_MAX_OUTS, cons, &nc)) || nc != 1) continue;
    const mlc_tir_stmt *e = mlc_sch_rv_stmt(s, cons[0]);
    if (!e || e->block.niters == 0 || is_reduction(e) || !stored(e)) continue;
    if (attempt(s, mlc_sch_reverse_compute_inline(s, cons[0]), &st)) {
      if ((st = mlc_sch_get_child_blocks(s, 0, MLC_SCH_MAX_OUTS, blocks, &n))) break;
      i = -1;
    }
  }
  /* G5 for the reductions of few outputs, G3 where legal (a refusal
  ** leaves the stage as it was), then G2 */
  for (int i = 0; !st && i < n; i++) {
    attempt(s, rfactor_gpu_reduction(s, blocks[i]), &st);
    if (!st) attempt(s, split_gpu_reduction(s, blocks[i]), &st);
  }
  /* the factored reductions' partial stages are tiled too */
  if (!st) st = mlc_sch_get_child_blocks(s, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  for (int i = 0; !st && i < n; i++) {
    mlc_sch_rv wb = -1;
    /* G7, else G3 */
    attempt(s, shared_gpu_matmul(s, blocks[i], &wb), &st);
    if (!st && wb < 0 && !attempt(s, tile_gpu_reduction(s, blocks[i], &wb), &st)) continue;
    if (st || wb < 0) continue;
    /* G4. The epilogue (bias, residual add, relu: the one elementwise
    ** consumer) folds into the write-back of the tile, so it runs on the
    ** accumulators in registers, in the reduction's kernel */
    mlc_sch_rv cons[MLC_SCH_MAX_OUTS];
    int nc = 0;
    if ((st = mlc_sch_get_consumers(s, wb, MLC_SCH_MAX_OUTS, cons, &nc)) || nc != 1) continue;
    const mlc_tir_stmt *e = mlc_sch_rv_stmt(s, cons[0]);
    if (e && e->block.niters > 0 && !is_reduction(e) && stored(e))
      attempt(s, mlc_sch_reverse_compute_inline(s, cons[0]), &st);
  }
  if (!st) st = mlc_sch_get_child_blocks(s, 0, MLC_SCH_MAX_OUTS, blocks, &n);
  for (int i = 0; !st && i < n; i++) st = bind_stage(s, blocks[i]);
  return st;
}

/* The rules' schedule of a copy of |f| in |tm|: *|out| the schedule. */
static mlc_status schedule_copy(mlc_tir_module *tm, const mlc_tir_func *f, const mlc_lower_options *opt, mlc_sch **out) {
  mlc_sch *s = NULL;
  int vectors = !(opt && opt->no_vectorize);
  int gpu = opt && opt->device >= 1;
  mlc_tir_func *fm = (mlc_tir_func *)f; /* mlc_sch_create copies it */
  mlc_status st = gpu ? apply_gpu_rules(tm, fm, &s) : apply_rules(tm, fm, opt, vectors, vectors, &s);
  /* a refusal: without tiles, then threads only */
  for (int level = vectors; !gpu && st && s && mlc_sch_last_error(s) != MLC_SCH_OK && level > 0; level--) {
    mlc_status_free(st);
    mlc_sch_destroy(s);
    s = NULL;
    st = apply_rules(tm, fm, opt, level - 1, 0, &s);
  }
  if (st) {
    mlc_sch_destroy(s);
    return mlc_status_annotate(st, "default schedule of %s", f->name);
  }
  *out = s;
  return NULL;
}

static mlc_status trace_text(const mlc_sch *s, char **trace) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_sch_print_trace(s, &b);
  *trace = b.oom ? NULL : mlc_mem_strdup(b.len ? mlc_sb_str(&b) : "");
  mlc_sb_fini(&b);
  return *trace ? NULL : mlc_oom();
}

mlc_status mlc_lower_schedule_func(mlc_tir_module *tm, const mlc_tir_func *f, const mlc_lower_options *opt,
                                   mlc_tir_func **out, char **trace) {
  mlc_sch *s = NULL;
  if (trace) *trace = NULL;
  MLC_RETURN_IF_ERROR(schedule_copy(tm, f, opt, &s));
  *out = mlc_sch_func(s);
  mlc_status st = trace ? trace_text(s, trace) : NULL;
  mlc_sch_destroy(s);
  return st;
}

mlc_status mlc_lower_replay_trace(mlc_tir_module *tm, const mlc_tir_func *f, const char *trace, mlc_tir_func **out) {
  mlc_sch *s = NULL;
  MLC_RETURN_IF_ERROR(mlc_sch_create(tm, f, 0, &s));
  mlc_status st = mlc_sch_apply_trace(s, trace, strlen(trace), "tuned trace");
  if (!st) *out = mlc_sch_func(s);
  mlc_sch_destroy(s);
  return st;
}

void mlc_lower_func_key(const mlc_tir_func *f, char hex[17]) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_func(f, &b);
  mlc_sha256 c;
  unsigned char d[32];
  mlc_sha256_init(&c);
  /* the text without the function's own name (its symbol holds it too) */
  const char *p = mlc_sb_str(&b), *name = f->name ? f->name : "";
  size_t nl = strlen(name);
  while (*p) {
    const char *q = nl ? strstr(p, name) : NULL;
    if (!q) {
      mlc_sha256_update(&c, p, strlen(p));
      break;
    }
    mlc_sha256_update(&c, p, (size_t)(q - p));
    p = q + nl;
  }
  mlc_sha256_final(&c, d);
  mlc_sb_fini(&b);
  for (int i = 0; i < 8; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* Schedules |f| of |tm| (its tuned trace from opt->tuned when it has one,
** else the rules); its scheduled copy replaces it; the trace to *|trace|,
** *|tuned| and *|why| as mlc_lower_traces says. */
static mlc_status schedule_func(mlc_tir_module *tm, mlc_tir_func *f, const mlc_lower_options *opt, char **trace,
                                int *tuned, char **why) {
  mlc_sch *s = NULL;
  mlc_status st = NULL;
  const char *tt = opt && opt->tuned ? opt->tuned(opt->tuned_user, f) : NULL;
  if (tt) {
    st = mlc_sch_create(tm, f, 0, &s);
    if (!st) st = mlc_sch_apply_trace(s, tt, strlen(tt), "tuned trace");
    if (st && s) { /* the rules instead */
      if (why) *why = mlc_mem_strdup(mlc_status_message(st));
      mlc_status_free(st);
      st = NULL;
      mlc_sch_destroy(s);
      s = NULL;
      if (tuned) *tuned = -1;
    } else if (!st && tuned) {
      *tuned = 1;
    }
    if (st) return st;
  }
  if (!s) {
    mlc_lower_options o = opt ? *opt : (mlc_lower_options){0};
    o.tune = NULL;
    MLC_RETURN_IF_ERROR(schedule_copy(tm, f, &o, &s));
  }
  st = mlc_tir_module_replace(tm, f, mlc_sch_func(s));
  if (!st && trace) st = trace_text(s, trace);
  if (st) st = mlc_status_annotate(st, "default schedule of %s", f->name);
  mlc_sch_destroy(s);
  return st;
}

mlc_status mlc_lower_default_schedule(mlc_tir_module *tm, const mlc_lower_options *opt, mlc_lower_traces *traces) {
  if (traces) {
    memset(traces, 0, sizeof *traces);
    size_t n = tm->nfuncs ? (size_t)tm->nfuncs : 1;
    traces->text = mlc_mem_calloc(n, sizeof *traces->text);
    traces->before = mlc_mem_calloc(n, sizeof *traces->before);
    traces->tuned = mlc_mem_calloc(n, sizeof *traces->tuned);
    traces->why = mlc_mem_calloc(n, sizeof *traces->why);
    traces->n = tm->nfuncs;
    if (!traces->text || !traces->before || !traces->tuned || !traces->why) return mlc_oom();
  }
  for (int i = 0; i < tm->nfuncs; i++) {
    if (traces) traces->before[i] = tm->funcs[i];
    MLC_RETURN_IF_ERROR(schedule_func(tm, tm->funcs[i], opt, traces ? &traces->text[i] : NULL,
                                      traces ? &traces->tuned[i] : NULL, traces ? &traces->why[i] : NULL));
  }
  return NULL;
}

void mlc_lower_traces_free(mlc_lower_traces *t) {
  if (!t) return;
  for (int i = 0; i < t->n; i++) {
    if (t->text) mlc_mem_free(t->text[i]);
    if (t->why) mlc_mem_free(t->why[i]);
  }
  mlc_mem_free(t->text);
  mlc_mem_free(t->before);
  mlc_mem_free(t->tuned);
  mlc_mem_free(t->why);
  memset(t, 0, sizeof *t);
}
