/*
** rt_blob.h: the model description (rt_model.h) as data: a serialized,
** relocation-free blob, its encoder (used by the compiler and by tests) and
** its decoder (used by the runtime inside a model.so, by the loader before
** it dlopens one, and by inspect).  libc only.
**
** A model.so carries the blob in its own ELF section, MLC_RT_BLOB_SECTION
** (allocated, read-only), behind the hidden symbol mlc_model_blob, and a
** table of the model's functions, mlc_model_kernels; steps and externs name
** a function by its index in that table.  Nothing in the blob is code or a
** pointer, so a description from a stranger's file is read, never run.
**
** Layout (little-endian; every offset is a byte offset from the blob's
** start, every table is an array of fixed-size records, every string an
** offset into the string table where a NUL ends it):
**
**   header (MLC_RT_BLOB_HEADER_SIZE bytes)
**      0  magic       8 bytes, MLC_RT_BLOB_MAGIC
**      8  u32 version MLC_RT_DESC_VERSION
**     12  u32 kernel_abi (MLC_RT_ABI_VERSION of rt_abi.h)
**     16  u32 header_size, 20 u32 total_size (the blob's bytes)
**     24  u32 nfns    entries of the function table the indices refer to
**     28  u32 name    string; 32 u32 manifest: string, or MLC_RT_BLOB_NONE
**     36  u32 nstorages
**     40  u64 weights_size
**     48  ten (u32 count, u32 offset) pairs, the tables in this order:
**         syms     40 bytes: u32 name string, u32 requirement string
**                  (CHECK symbols) or MLC_RT_BLOB_NONE, i32 op (enum
**                  mlc_rt_sym_op), i32 b_sym, i64 a, i64 b, i64 bound
**         tensors  24 bytes: u8 code, u8 bits, u16 lanes, i32 ndim,
**                  i32 storage, u32 first dim, i64 loc
**         dims     i64
**         inputs   16 bytes: u32 name string, i32 tensor, i64 default:
**                  the byte offset of the input's default value in the
**                  weights, or -1 (all ones) when it has none
**         outputs  8 bytes: u32 name string, i32 tensor
**         steps    24 bytes: i32 kind, u32 name string, u32 label string,
**                  i32 function index (-1 unless a kernel step),
**                  u32 nargs, u32 first arg
**         args     16 bytes: i32 kind, u32 zero, i64 value
**         externs  12 bytes: u32 name string, i32 function index (-1 for
**                  a plugin's), u32 plugin string (its file name) or
**                  MLC_RT_BLOB_NONE
**         kernels  u32 string (kernel names, for inspect)
**         strings  count = bytes of the string table
**    128  u32 device  where the model runs: kDLCPU, or kDLCUDA (its tensors
**                     live in device memory; its kernels launch the
**                     device code of mlc_model_devcode)
**    132  u32 zero
**
** The decoder checks the magic, the version, every count and offset (each
** table inside the blob), every string (inside the string table and
** NUL-terminated there), every dims and args range and every function
** index; the model's meaning (symbols bound, storages in range, ...) is
** checked by mlc_rt_model_open as for any description.
*/
#ifndef MLC_RUNTIME_RT_BLOB_H
#define MLC_RUNTIME_RT_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "mlc/mlc_runtime.h"
#include "runtime/rt_model.h"

#define MLC_RT_BLOB_MAGIC "\177MLCDESC"
#define MLC_RT_BLOB_HEADER_SIZE 136
#define MLC_RT_BLOB_NONE 0xffffffffu
/* The ELF section a model.so keeps its blob in. */
#define MLC_RT_BLOB_SECTION ".mlc_model"

/*
** The symbols a model.so defines (hidden) for its runtime: the blob, its
** size, and the function table (|mlc_model_nkernels| entries).
*/
extern const uint8_t mlc_model_blob[] __attribute__((visibility("hidden")));
extern const uint64_t mlc_model_blob_size __attribute__((visibility("hidden")));
extern const mlc_kernel_fn mlc_model_kernels[] __attribute__((visibility("hidden")));
extern const int32_t mlc_model_nkernels __attribute__((visibility("hidden")));
/* The weights, 64-byte aligned (mlc_rt_model_desc.weights_size bytes). */
extern const uint8_t mlc_weights_blob[] __attribute__((visibility("hidden")));
/* A CUDA model's device code: PTX text, |mlc_model_devcode_size| bytes and
** a NUL (size 0 for a CPU model). */
extern const char mlc_model_devcode[] __attribute__((visibility("hidden")));
extern const uint64_t mlc_model_devcode_size __attribute__((visibility("hidden")));

/*
** Encodes |d| (borrowed) into a new blob: *|out| (*|out_size| bytes) is
** transferred to the caller (free with free()).  Steps and externs name
** their function by |kernel|, an index below |nfns|; the |fn| pointers and
** |weights| are ignored.  On failure (a negative count, a missing table or
** string, an index out of range, a blob over 4 GiB, no memory) returns
** MLC_RT_INVALID_ARGUMENT or MLC_RT_OUT_OF_MEMORY with the reason in |err|.
*/
mlc_rt_status mlc_rt_desc_encode(const mlc_rt_allocator *a, const mlc_rt_model_desc *d, int32_t nfns, uint8_t **out,
                                 size_t *out_size, char *err, size_t errlen);

/*
** Decodes the blob |data| (|n| bytes; any bytes at all) into a new
** description allocated from |a| (NULL: the C library), *|out| transferred
** (free with mlc_rt_desc_free, which uses the same allocator); it holds
** copies of everything and refers to nothing in |data|.  |fns| (may be
** NULL: functions left NULL, as for inspect) is the function table of
** |nfns| entries the steps' indices are resolved in; it must then match the
** blob's count.  |weights| (may be NULL) becomes the description's weights.
** Errors: MLC_RT_ABI_MISMATCH for another version, MLC_RT_INVALID_ARGUMENT
** for anything malformed, MLC_RT_OUT_OF_MEMORY; the reason goes to |err|.
*/
mlc_rt_status mlc_rt_desc_decode(const mlc_rt_allocator *a, const uint8_t *data, size_t n, const mlc_kernel_fn *fns,
                                 int32_t nfns, const uint8_t *weights, mlc_rt_model_desc **out,
                                 char *err, size_t errlen);

/* Frees a description from mlc_rt_desc_decode (NULL-safe). */
void mlc_rt_desc_free(mlc_rt_model_desc *d);

#endif /* MLC_RUNTIME_RT_BLOB_H */
