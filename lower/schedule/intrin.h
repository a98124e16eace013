/*
** intrin.h: tensor intrinsics, the micro-kernels that tensorize places.
**
** A tensor intrinsic is a name and two prim functions over the same buffer
** parameters (same count, dtypes and constant shapes, in order):
**
**   - the description: the computation the intrinsic performs over small
**     buffers, written as loops around one block, e.g. for
**     "avx512_fma_f32x16" (A: (1,), B: (16,), C: (16,))
**
**       for j in range(16):
**           with T.block("update"):
**               vj = T.axis.spatial(16, j)
**               C[vj] = C[vj] + A[0] * B[vj]
**
**     tensorize matches a block's body against it;
**   - the implementation: TIR that replaces a matched block's body, with
**     each parameter bound to the region of the buffer the block uses (the
**     buffer and a base offset per dimension), written so that codegen
**     makes it fast: a T.vectorized loop of 16 float32 lanes becomes one
**     AVX-512 FMA once the vectorize pass makes it explicit.
**
** The registry is a static table; each intrinsic's functions are built on
** demand in the caller's module.
*/
#ifndef MLC_LOWER_SCHEDULE_INTRIN_H
#define MLC_LOWER_SCHEDULE_INTRIN_H

#include "base/status.h"
#include "lower/tir.h"

typedef struct mlc_sch_intrin {
  const char *name;
  const char *summary; /* one line: what it computes */
  /* Builds the description and the implementation in |m| (borrowed by the
  ** caller, in |m|'s arena, not added to it). */
  mlc_status (*build)(mlc_tir_module *m, mlc_tir_func **desc, mlc_tir_func **impl);
} mlc_sch_intrin;

/* The registered intrinsics: mlc_sch_intrin_at(0 .. count-1) (static storage). */
int mlc_sch_intrin_count(void);
const mlc_sch_intrin *mlc_sch_intrin_at(int i);
/* The intrinsic named |name|, or NULL. */
const mlc_sch_intrin *mlc_sch_intrin_find(const char *name);

/*
** Builds |in|'s description and implementation in |m| (*|desc|, *|impl|
** borrowed, in |m|'s arena) and checks that they fit together: the same
** parameters (count, dtypes, constant shapes), a description that is
** loops around one block and accesses every parameter, an implementation
** without blocks.  Errors: INTERNAL naming the intrinsic and what is
** wrong, RESOURCE_EXHAUSTED on out-of-memory.
*/
MLC_MUST_USE mlc_status mlc_sch_intrin_build(mlc_tir_module *m, const mlc_sch_intrin *in, mlc_tir_func **desc,
                                             mlc_tir_func **impl);

#endif /* MLC_LOWER_SCHEDULE_INTRIN_H */
