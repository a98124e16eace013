/*
** onnx_int.h: private interface of onnx/ (for the loader's own .c files only).
**
** The loader works in three steps.  onnx_io.c reads a file (or takes bytes),
** checks the nesting depth of the protobuf wire format against the message
** descriptors, and unpacks it with protobuf-c using an allocator that hands
** out 64-byte aligned blocks, so that a raw_data buffer can be adopted as
** tensor data without a copy.  onnx_tensor.c turns TensorProtos into
** mlc_onnx_tensor views (dtype, dims, every data source, external files).
** onnx_model.c builds the graph, node, attribute and value-info views.
**
** All view memory lives in one arena; tensor data buffers are kept in a list
** and freed one by one.  Both are owned by an mlc_onnx_ctx, which a model or
** a tensor file holds.
*/
#ifndef MLC_ONNX_ONNX_INT_H
#define MLC_ONNX_ONNX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

/* Files over this size are refused: protobuf's own limit is 2 GiB. */
#define MLC_ONNX_MAX_FILE ((uint64_t)2 << 30)
/* Deepest nesting of GRAPH/GRAPHS attributes (the main graph is depth 0). */
#define MLC_ONNX_MAX_GRAPH_DEPTH 64
/* Deepest nesting of protobuf messages accepted before unpacking (protobuf-c
** unpacks recursively, so this bounds its stack use). */
#define MLC_ONNX_MAX_WIRE_DEPTH 256
/* Alignment of every tensor data buffer. */
#define MLC_ONNX_ALIGN 64

/* One tensor data buffer owned by a context (a list kept in the arena). */
typedef struct mlc_onnx_buf {
  struct mlc_onnx_buf *next;
  void *p;
} mlc_onnx_buf;

/* What a model or a tensor file owns, and what loading needs. */
typedef struct mlc_onnx_ctx {
  mlc_arena *arena;     /* views, names, dims, strings */
  mlc_onnx_buf *bufs;   /* tensor data, freed with mlc_onnx_aligned_free */
  char *base_dir;       /* folder for external data (arena); NULL: none allowed */
  char *base_real;      /* realpath of base_dir, resolved on first use (arena) */
} mlc_onnx_ctx;

/* ---- onnx_io.c ------------------------------------------------------------ */

/* A fresh context; |base_dir| is copied (NULL allowed).  NULL when out of memory. */
mlc_onnx_ctx *mlc_onnx_ctx_create(const char *base_dir);
/* Frees the arena and every buffer.  NULL-safe. */
void mlc_onnx_ctx_destroy(mlc_onnx_ctx *c);

/* |size| bytes aligned to MLC_ONNX_ALIGN (size 0 gives a valid 1-byte block);
** NULL when out of memory.  Freed with mlc_onnx_aligned_free. */
void *mlc_onnx_aligned_alloc(size_t size);
void mlc_onnx_aligned_free(void *p);
/* Hands |p| (from mlc_onnx_aligned_alloc) to |c|, which frees it with itself.
** On failure (out of memory) |p| is freed and an error returned. */
MLC_MUST_USE mlc_status mlc_onnx_ctx_own(mlc_onnx_ctx *c, void *p);

/* The protobuf-c allocator whose blocks of 64 bytes or more are aligned to
** MLC_ONNX_ALIGN; all blocks are released with mlc_onnx_aligned_free. */
extern ProtobufCAllocator mlc_onnx_pb_allocator;

/*
** Reads the regular file |path| whole into *out_data (transferred, free with
** mlc_onnx_aligned_free) and *out_size.  Refuses what is not a regular file
** and files over MLC_ONNX_MAX_FILE.  |what| names the file in messages.
*/
MLC_MUST_USE mlc_status mlc_onnx_read_file(const char *path, const char *what, void **out_data,
                                           size_t *out_size);

/*
** Unpacks |size| bytes at |data| (borrowed) as a message of |desc| after
** checking the wire format's nesting depth.  *out is transferred; free it
** with protobuf_c_message_free_unpacked(.., &mlc_onnx_pb_allocator).
** |what| ("ONNX model") and |hint| ("an ONNX file") go into the messages.
*/
MLC_MUST_USE mlc_status mlc_onnx_unpack(const ProtobufCMessageDescriptor *desc, const void *data,
                                        size_t size, const char *what, const char *hint,
                                        ProtobufCMessage **out);

/* The folder part of |path| ("." when it has none), in |c|'s arena. */
char *mlc_onnx_dirname(mlc_onnx_ctx *c, const char *path);

/*
** Opens the external data file |location| (as written in the model) inside
** |c|'s base folder: refuses absolute paths, ".." components and anything
** whose real path leaves the folder.  On success *out_fd is an open file
** descriptor (transferred) of a regular file of *out_size bytes.  Messages
** start with |what| (e.g. 'initializer "w"').
*/
MLC_MUST_USE mlc_status mlc_onnx_open_external(mlc_onnx_ctx *c, const char *what,
                                               const char *location, int *out_fd,
                                               uint64_t *out_size);
/* Reads exactly |n| bytes at |offset| of |fd| into |dst|. */
MLC_MUST_USE mlc_status mlc_onnx_pread_all(int fd, void *dst, size_t n, uint64_t offset,
                                           const char *what, const char *location);

/* ---- onnx_tensor.c -------------------------------------------------------- */

/*
** Fills |out| from |tp| (borrowed; its raw_data block may be adopted, in
** which case tp->raw_data is cleared).  Checks dtype, dims, the element
** count and that data comes from exactly one source of the right size;
** decodes it into an aligned native array owned by |c|.  Messages start with
** |what|, e.g. 'initializer "w"'.
*/
MLC_MUST_USE mlc_status mlc_onnx_tensor_build(mlc_onnx_ctx *c, Onnx__TensorProto *tp,
                                              const char *what, mlc_onnx_tensor *out);

/* "(2, 3)" for |rank| |dims| into |buf| of |n| bytes; returns buf. */
const char *mlc_onnx_shape_str(char *buf, size_t n, const int64_t *dims, size_t rank);

#endif /* MLC_ONNX_ONNX_INT_H */
