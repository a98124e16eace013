/*
** entry.c: the one symbol a model.so exports, mlc_model_entry_v1, and the
** table (rt_entry.h) behind it.
**
** The table's functions are the runtime's own (model.c, session.c), bound
** to the model's description, which the compiler emits as hidden symbols in
** the same shared object (rt_blob.h): the blob, decoded when the model is
** opened, the table of the kernels its steps name by index, and the
** weights.  So model.so = generated kernels + description blob + weights +
** libmlcrt objects, and the loader reaches this model's runtime only
** through this table.
*/
#include "config.h"
#include "runtime/rt_blob.h"
#include "runtime/rt_int.h"

static mlc_rt_status open_model_with(const mlc_rt_allocator *a, mlc_rt_model **out, char *err,
                                     size_t errlen) {
  if (out) *out = NULL;
  mlc_rt_model_desc *d = NULL;
  mlc_rt_status st = mlc_rt_desc_decode(a, mlc_model_blob, (size_t)mlc_model_blob_size, mlc_model_kernels,
                                        mlc_model_nkernels, mlc_weights_blob, &d, err, errlen);
  if (st != MLC_RT_OK) return st;
  st = mlc_rt_model_open_with(d, a, out, err, errlen);
  if (st != MLC_RT_OK) {
    mlc_rt_desc_free(d);
    return st;
  }
  (*out)->owned_desc = d;
  (*out)->devcode = mlc_model_devcode_size ? mlc_model_devcode : NULL;
  return MLC_RT_OK;
}

static mlc_rt_status open_model(mlc_rt_model **out, char *err, size_t errlen) {
  return open_model_with(NULL, out, err, errlen);
}

static const mlc_rt_entry entry_v1 = {
    .abi_version = MLC_RT_ENTRY_VERSION,
    .size = sizeof(mlc_rt_entry),
    .blob = mlc_model_blob,
    .model_open = open_model,
    .model_close = mlc_rt_model_close,
    .model_name = mlc_rt_model_name,
    .model_manifest = mlc_rt_model_manifest,
    .model_num_io = mlc_rt_model_num_io,
    .model_io_name = mlc_rt_model_io_name,
    .model_io_dtype = mlc_rt_model_io_dtype,
    .model_io_ndim = mlc_rt_model_io_ndim,
    .model_io_dim = mlc_rt_model_io_dim,
    .model_io_dim_name = mlc_rt_model_io_dim_name,
    .model_num_symbols = mlc_rt_model_num_symbols,
    .model_symbol_name = mlc_rt_model_symbol_name,
    .session_create = mlc_rt_session_create,
    .session_free = mlc_rt_session_free,
    .session_set_input = mlc_rt_session_set_input,
    .session_set_input_by_name = mlc_rt_session_set_input_by_name,
    .session_run = mlc_rt_session_run,
    .session_get_output = mlc_rt_session_get_output,
    .session_last_error = mlc_rt_session_last_error,
    .model_open_with = open_model_with,
    .session_set_profiling = mlc_rt_session_set_profiling,
    .session_profile = mlc_rt_session_profile,
    .session_get_output_device = mlc_rt_session_get_output_device,
    .model_input_has_default = mlc_rt_model_input_has_default,
};

MLC_API const mlc_rt_entry *mlc_model_entry_v1(void) { return &entry_v1; }
