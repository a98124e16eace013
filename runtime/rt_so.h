/*
** rt_so.h: checking a model.so from its bytes, without loading it.
**
** The loader runs this before dlopen and inspect instead of dlopen: the
** file must be an ELF64 shared object for this host (class, byte order,
** machine, ET_DYN), its program and section header tables must lie inside
** the file, every segment's file range too (so a truncated file is an
** error here, never a SIGBUS inside dlopen), and it must hold exactly one
** model description section (rt_blob.h) that decodes.  Every read is
** bounds-checked: any bytes at all give a status, never a crash.  libc only.
*/
#ifndef MLC_RUNTIME_RT_SO_H
#define MLC_RUNTIME_RT_SO_H

#include <stddef.h>
#include <stdint.h>

#include "mlc/mlc_runtime.h"
#include "runtime/rt_model.h"

/*
** Checks the shared object |data| (|n| bytes, borrowed; any bytes) as
** above, allocating from |a| (NULL: the C library).  On success, when |out_desc| is not NULL, *|out_desc| is its
** decoded description (functions NULL, no weights; transferred, free with
** mlc_rt_desc_free).  On failure the reason goes to |err| (|errlen| bytes)
** and the status is MLC_RT_INVALID_ARGUMENT (not a valid model file),
** MLC_RT_ABI_MISMATCH (a description of another version) or
** MLC_RT_OUT_OF_MEMORY.  This is the entry point fuzzers drive.
*/
mlc_rt_status mlc_rt_so_check_mem(const mlc_rt_allocator *a, const uint8_t *data, size_t n, mlc_rt_model_desc **out_desc,
                                  char *err, size_t errlen);

/*
** The same for the file at |path| (borrowed), read with pread (only the
** headers and the description section are read); messages do not repeat
** |path|, the caller names it.  A file that cannot be opened is
** MLC_RT_NOT_FOUND (absent) or MLC_RT_INVALID_ARGUMENT.
*/
mlc_rt_status mlc_rt_so_check_file(const mlc_rt_allocator *a, const char *path, mlc_rt_model_desc **out_desc, char *err,
                                   size_t errlen);

#endif /* MLC_RUNTIME_RT_SO_H */
