/*
** target.h: code generation targets (STYLE R21).
**
** A target says which machine code to produce: an LLVM triple, a CPU and
** its feature string (LLVM's "+avx2,-avx512f" form), and the vector width
** vectorized loops are given.  Targets come from the host (LLVM's view of
** the machine it runs on: AVX-512 where present) or from a --target string:
**
**   llvm                          the host
**   llvm -mcpu=znver4             the host's triple, another CPU
**   llvm -mcpu=NAME -mattr=+avx2  ... with features added or removed
**   llvm -mtriple=T -mcpu=NAME    another triple (its backend must be in LLVM)
**   cuda                          NVIDIA GPUs through CUDA: kernels as PTX for
**                                 sm_75 (the driver compiles it for any newer GPU)
**   cuda -arch=sm_90              PTX for that architecture and newer
**
** A CUDA target is two machines: the GPU, whose kernels are PTX, and the
** host that launches them (the host's triple, CPU and features below).
**
** The CPU name is checked against the list of its architecture kind (the
** CPUs LLVM 19 knows), so a typo is an error instead of LLVM's silent
** fallback to a generic CPU.  Architecture kinds are a static registry.
*/
#ifndef MLC_CODEGEN_TARGET_H
#define MLC_CODEGEN_TARGET_H

#include "base/status.h"
#include "base/strbuf.h"

/* An architecture the code generator knows. */
typedef struct mlc_target_kind {
  const char *name;          /* "x86_64" */
  const char *const *arches; /* triple prefixes, NULL-terminated: "x86_64", "amd64" */
  const char *const *cpus;   /* known -mcpu names, NULL-terminated */
  /* Widest vector register, in bits, of |cpu| with |features| applied. */
  unsigned (*vector_bits)(const char *cpu, const char *features);
} mlc_target_kind;

/* NULL-terminated registry: x86_64, aarch64. */
extern const mlc_target_kind *const mlc_target_kinds[];

typedef struct mlc_target {
  const char *name;     /* "llvm" */
  const char *spec;     /* the canonical target string, e.g. "llvm -mcpu=znver4" */
  const char *triple;   /* e.g. "x86_64-pc-linux-gnu" */
  const char *cpu;      /* e.g. "znver4" */
  const char *features; /* LLVM feature string, may be "" */
  unsigned vector_bits; /* 128, 256, 512 */
  const mlc_target_kind *kind;
  int device;              /* MLC_TARGET_CPU, or MLC_TARGET_CUDA */
  const char *device_arch; /* CUDA: the GPU architecture, e.g. "sm_75"; else NULL */
} mlc_target;

enum { MLC_TARGET_CPU = 0, MLC_TARGET_CUDA = 1 };

/* The GPU architectures a CUDA target may name (-arch=), NULL-terminated;
** the first is the default. */
extern const char *const mlc_cuda_archs[];

/* The machine this runs on.  *|out| transferred (mlc_target_destroy). */
MLC_MUST_USE mlc_status mlc_target_host(mlc_target **out);
/* Parses |spec| (grammar above).  Unknown options, CPUs or architectures are
** INVALID_ARGUMENT errors that name the bad part.
** |spec| borrowed; *|out| transferred. */
MLC_MUST_USE mlc_status mlc_target_parse(const char *spec, mlc_target **out);
/* NULL-safe. */
void mlc_target_destroy(mlc_target *t);
/* Appends "llvm -mtriple=... -mcpu=... (vector 512 bits)" to |out|. */
void mlc_target_describe(const mlc_target *t, mlc_strbuf *out);

#endif /* MLC_CODEGEN_TARGET_H */
