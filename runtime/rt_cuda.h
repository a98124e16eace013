/*
** rt_cuda.h: the runtime's CUDA side (runtime/cuda.c), for sessions of a
** model compiled for CUDA (mlc_rt_model_desc.device == kDLCUDA).
**
** model.so links no CUDA library: the driver (libcuda.so.1) is loaded with
** dlopen when the first CUDA session is created, and its functions are
** taken by name.  Without the driver, without a device, or when the
** driver cannot load the model's PTX, session creation fails with an
** error that says which; nothing here aborts.
**
** Each session has its own context reference (the device's primary
** context), one stream on which everything it does runs in order, the
** model's kernels (its PTX loaded as a module), the weights copied to the
** device, and an error word that kernels' checks of model data write.
** Every call below makes the session's context current on the calling
** thread for its duration.
*/
#ifndef MLC_RUNTIME_RT_CUDA_H
#define MLC_RUNTIME_RT_CUDA_H

#include <stddef.h>
#include <stdint.h>

typedef struct mlc_rt_cuda mlc_rt_cuda;

/* Loads the driver (once per process), picks device |device_id|, loads
** |ptx| (NUL-terminated; NULL or "" for a model of library calls alone)
** and copies |weights| (|weights_size| bytes).
** 0, or -1 with the reason in |err|. */
int mlc_rt_cuda_create(int device_id, const char *ptx, const void *weights, uint64_t weights_size,
                       mlc_rt_cuda **out, char *err, size_t errlen);
void mlc_rt_cuda_free(mlc_rt_cuda *c);

/* The last error's text (a CUDA call that failed and what it was doing). */
const char *mlc_rt_cuda_error(const mlc_rt_cuda *c);
/* The weights' device address. */
void *mlc_rt_cuda_weights(const mlc_rt_cuda *c);
/* The session's CUstream. */
void *mlc_rt_cuda_stream(const mlc_rt_cuda *c);

/* Device memory (never NULL on success; |n| may be 0). 0 or -1. */
int mlc_rt_cuda_alloc(mlc_rt_cuda *c, uint64_t n, void **out);
void mlc_rt_cuda_release(mlc_rt_cuda *c, void *p);
/* Copies on the stream (host memory is pageable: the host side of a copy
** may be reused when the call returns). 0 or -1. */
int mlc_rt_cuda_to_device(mlc_rt_cuda *c, void *dst, const void *src, uint64_t n);
int mlc_rt_cuda_to_host(mlc_rt_cuda *c, void *dst, const void *src, uint64_t n);
/* Waits for the stream. 0 or -1. */
int mlc_rt_cuda_sync(mlc_rt_cuda *c);
/* Launches kernel |name| of the model's PTX (found once, then cached by
** the name's address): dims[0..2] grid, dims[3..5] block; the error word
** is appended to |params|.  An empty grid launches nothing.  0 or -1. */
int mlc_rt_cuda_launch(mlc_rt_cuda *c, const char *name, const int64_t *dims, void **params, int32_t nparams);
/* Waits and reads the error word: 0 none, k >= 1 site k failed (its values
** in vals[0..2]; the word is cleared), -1 a CUDA error. */
int64_t mlc_rt_cuda_check(mlc_rt_cuda *c, int64_t *vals);

/*
** A run as a CUDA graph: the launches of one run (kernels, library calls)
** captured from the stream and replayed by one launch, which saves the
** host's per-kernel launch cost.  A graph holds the addresses and shapes
** of its run: the session replays it only while they are the same.
** capture_begin starts recording the stream (nothing launched runs);
** capture_end(keep) stops and, with |keep|, makes the graph (else drops
** what was recorded).  Waits (cuda_check) fail while capturing.
*/
int mlc_rt_cuda_capture_begin(mlc_rt_cuda *c);
int mlc_rt_cuda_capture_end(mlc_rt_cuda *c, int keep);
int mlc_rt_cuda_graph_ready(const mlc_rt_cuda *c);
void mlc_rt_cuda_graph_drop(mlc_rt_cuda *c);
int mlc_rt_cuda_graph_launch(mlc_rt_cuda *c);

#endif /* MLC_RUNTIME_RT_CUDA_H */
