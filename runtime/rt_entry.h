/*
** rt_entry.h: the table a model.so exports, between the loader (loader.c,
** linked into user programs) and the runtime inside the model (entry.c).
**
** mlc_model_entry_v1() returns one static mlc_rt_entry.  The loader checks
** |abi_version| and |size| and then calls only through these pointers, so a
** loader and a model built at different times agree on nothing but this
** struct.  Add fields only at the end and bump MLC_RT_ENTRY_VERSION when an
** existing field changes meaning.  The runtime's handles (mlc_rt_model,
** mlc_rt_session) are opaque here; the loader wraps them in the public
** mlc_model / mlc_session.
**
** Conventions: handles passed in may be NULL (functions then fail or return
** the documented neutral value); error text goes to (err, errlen) or to the
** session's own message.
*/
#ifndef MLC_RUNTIME_RT_ENTRY_H
#define MLC_RUNTIME_RT_ENTRY_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "mlc/mlc_runtime.h"

#define MLC_RT_ENTRY_VERSION 2

struct mlc_rt_model_desc;
typedef struct mlc_rt_model mlc_rt_model;
typedef struct mlc_rt_session mlc_rt_session;

struct mlc_rt_entry {
  uint32_t abi_version; /* MLC_RT_ENTRY_VERSION */
  uint32_t size;        /* sizeof(mlc_rt_entry) as the model was built */
  /* The serialized description (rt_blob.h; its header holds its size),
  ** for tools built from the same tree, which decode it with
  ** mlc_rt_desc_decode; the loader never reads it. */
  const uint8_t *blob;

  /* Validates the description, resolves externs; *out transferred. */
  mlc_rt_status (*model_open)(mlc_rt_model **out, char *err, size_t errlen);
  void (*model_close)(mlc_rt_model *m);
  const char *(*model_name)(const mlc_rt_model *m);
  const char *(*model_manifest)(const mlc_rt_model *m);
  int32_t (*model_num_io)(const mlc_rt_model *m, int output);
  const char *(*model_io_name)(const mlc_rt_model *m, int output, int32_t i);
  DLDataType (*model_io_dtype)(const mlc_rt_model *m, int output, int32_t i);
  int32_t (*model_io_ndim)(const mlc_rt_model *m, int output, int32_t i);
  int64_t (*model_io_dim)(const mlc_rt_model *m, int output, int32_t i, int32_t d);
  const char *(*model_io_dim_name)(const mlc_rt_model *m, int output, int32_t i, int32_t d);
  int32_t (*model_num_symbols)(const mlc_rt_model *m);
  const char *(*model_symbol_name)(const mlc_rt_model *m, int32_t k);

  /* |num_threads| as in mlc_session_options; *out transferred. */
  mlc_rt_status (*session_create)(const mlc_rt_model *m, int32_t num_threads,
                                  mlc_rt_session **out, char *err, size_t errlen);
  void (*session_free)(mlc_rt_session *s);
  mlc_rt_status (*session_set_input)(mlc_rt_session *s, int32_t index, const DLTensor *t);
  mlc_rt_status (*session_set_input_by_name)(mlc_rt_session *s, const char *name,
                                             const DLTensor *t);
  mlc_rt_status (*session_run)(mlc_rt_session *s);
  mlc_rt_status (*session_get_output)(mlc_rt_session *s, int32_t index, const DLTensor **out);
  const char *(*session_last_error)(const mlc_rt_session *s);

  /* As model_open, allocating the model and its sessions through |a|
  ** (copied; NULL = the C library). */
  mlc_rt_status (*model_open_with)(const mlc_rt_allocator *a, mlc_rt_model **out, char *err,
                                   size_t errlen);

  /* Appended later: a table whose |size| ends before them lacks them
  ** (MLC_RT_ENTRY_MIN_SIZE is what the loader requires). */
  mlc_rt_status (*session_set_profiling)(mlc_rt_session *s, int enable);
  int32_t (*session_profile)(const mlc_rt_session *s, int32_t i, const char **name, const char **node,
                             double *ms);
  mlc_rt_status (*session_get_output_device)(mlc_rt_session *s, int32_t index, const DLTensor **out);
  int32_t (*model_input_has_default)(const mlc_rt_model *m, int32_t i);
};

/* The smallest table a loader accepts: up to model_open_with. */
#define MLC_RT_ENTRY_MIN_SIZE (offsetof(mlc_rt_entry, model_open_with) + sizeof(void (*)(void)))

/*
** The entry table behind |m| (loader side), for tools that want the raw
** description; NULL for NULL.  Borrowed from the model.
*/
const mlc_rt_entry *mlc_rt_model_entry_of(const mlc_model *m);

#endif /* MLC_RUNTIME_RT_ENTRY_H */
