/*
** onnx.h: ONNX models as plain C views (boundary of onnx/).
**
** mlc_onnx_load_file reads a .onnx file with the protobuf-c bindings
** generated from the system's onnx.proto, loads tensors kept in external
** data files, checks every size, offset and count, and presents the model as
** the read-only views below.  Nothing outside onnx/ includes the generated
** protobuf header.  Tensor data in the views is decoded into contiguous,
** native little-endian arrays (64-byte aligned) whose size was checked
** against the dims.  All view memory is owned by the mlc_onnx_model.
*/
#ifndef MLC_ONNX_ONNX_H
#define MLC_ONNX_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/dtype.h"
#include "base/status.h"

typedef struct mlc_onnx_model mlc_onnx_model;
typedef struct mlc_onnx_graph mlc_onnx_graph;

/* A TensorProto: an initializer, a Constant's value or a test input. */
typedef struct mlc_onnx_tensor {
  const char *name;       /* "" if unnamed */
  mlc_dtype dtype;        /* MLC_DTYPE_INVALID never appears: unsupported types are errors */
  int onnx_type;          /* the TensorProto.DataType code */
  int rank;
  const int64_t *dims;    /* all >= 0 */
  int64_t numel;          /* product of dims */
  const void *data;       /* numel * dtype size bytes; NULL when numel == 0 or string */
  size_t nbytes;
  const char *const *strings; /* MLC_DTYPE_STRING: numel NUL-terminated strings */
  const size_t *string_lens;  /* their byte lengths (strings may hold NULs) */
} mlc_onnx_tensor;

/* A SparseTensorProto (a Constant's sparse_value): |values| holds the NNZ
** non-zero values, |indices| (INT64) either NNZ linear indices into the
** dense shape or an [NNZ, rank] array of coordinates, as the file gives
** them: the counts of both are checked against each other, the values of
** the indices are not (the frontend checks them when densifying). */
typedef struct mlc_onnx_sparse {
  const mlc_onnx_tensor *values;
  const mlc_onnx_tensor *indices;
  int rank;
  const int64_t *dims;    /* the dense shape, all >= 0 */
} mlc_onnx_sparse;

typedef enum mlc_onnx_attr_type {
  MLC_ONNX_ATTR_UNDEFINED = 0,
  MLC_ONNX_ATTR_FLOAT = 1,
  MLC_ONNX_ATTR_INT = 2,
  MLC_ONNX_ATTR_STRING = 3,
  MLC_ONNX_ATTR_TENSOR = 4,
  MLC_ONNX_ATTR_GRAPH = 5,
  MLC_ONNX_ATTR_FLOATS = 6,
  MLC_ONNX_ATTR_INTS = 7,
  MLC_ONNX_ATTR_STRINGS = 8,
  MLC_ONNX_ATTR_TENSORS = 9,
  MLC_ONNX_ATTR_GRAPHS = 10,
  MLC_ONNX_ATTR_SPARSE_TENSOR = 11,
  MLC_ONNX_ATTR_SPARSE_TENSORS = 12,
  MLC_ONNX_ATTR_TYPE_PROTO = 13,
  MLC_ONNX_ATTR_TYPE_PROTOS = 14
} mlc_onnx_attr_type;

typedef struct mlc_onnx_attr {
  const char *name;
  mlc_onnx_attr_type type;
  float f;
  int64_t i;
  const char *s;          /* STRING: NUL-terminated copy */
  size_t s_len;
  int n;                  /* count of floats / ints / strings / tensors / graphs
                             (1 for TENSOR, SPARSE_TENSOR and GRAPH; SPARSE_TENSORS and
                             TYPE_PROTO(S) carry only this count, no view of the values) */
  const float *floats;
  const int64_t *ints;
  const char *const *strings;
  const mlc_onnx_tensor *t;            /* TENSOR */
  const mlc_onnx_sparse *sp;           /* SPARSE_TENSOR */
  const mlc_onnx_tensor *tensors;      /* TENSORS */
  const mlc_onnx_graph *g;             /* GRAPH */
  const mlc_onnx_graph *const *graphs; /* GRAPHS */
} mlc_onnx_attr;

typedef struct mlc_onnx_node {
  const char *name;       /* "" if unnamed */
  const char *op_type;
  const char *domain;     /* "" for the default ONNX domain */
  int index;              /* position in the graph's node list */
  int ninputs;
  const char *const *inputs;  /* "" marks an omitted optional input */
  int noutputs;
  const char *const *outputs;
  int nattrs;
  const mlc_onnx_attr *attrs;
} mlc_onnx_node;

typedef enum mlc_onnx_value_kind {
  MLC_ONNX_VALUE_TENSOR,
  MLC_ONNX_VALUE_SEQUENCE,
  MLC_ONNX_VALUE_MAP,
  MLC_ONNX_VALUE_OPTIONAL,
  MLC_ONNX_VALUE_SPARSE_TENSOR,
  MLC_ONNX_VALUE_UNKNOWN /* no type given */
} mlc_onnx_value_kind;

typedef struct mlc_onnx_dim {
  int64_t value;          /* >= 0 when known, -1 otherwise */
  const char *param;      /* dim_param, or NULL */
} mlc_onnx_dim;

/* A ValueInfoProto: graph input/output or value_info entry. */
typedef struct mlc_onnx_value_info {
  const char *name;
  mlc_onnx_value_kind kind;
  mlc_dtype dtype;        /* tensor element type (sequence/optional: of the element); INVALID if unknown */
  int onnx_type;          /* TensorProto.DataType code, 0 if unknown */
  int has_shape;          /* 0: shape not given (rank unknown) */
  int rank;
  const mlc_onnx_dim *dims;
} mlc_onnx_value_info;

struct mlc_onnx_graph {
  const char *name;
  int nnodes;
  const mlc_onnx_node *nodes;
  int ninitializers;
  const mlc_onnx_tensor *initializers;
  int ninputs;            /* includes inputs that are also initializers (old opsets) */
  const mlc_onnx_value_info *inputs;
  int noutputs;
  const mlc_onnx_value_info *outputs;
  int nvalue_infos;
  const mlc_onnx_value_info *value_infos;
};

typedef struct mlc_onnx_opset {
  const char *domain;     /* "" or "ai.onnx" for the default domain */
  int64_t version;
} mlc_onnx_opset;

typedef struct mlc_onnx_model_info {
  int64_t ir_version;
  const char *producer_name;
  const char *producer_version;
  const char *domain;
  int64_t model_version;
  const char *doc_string;
  int nopsets;
  const mlc_onnx_opset *opsets;
  const mlc_onnx_graph *graph;
} mlc_onnx_model_info;

/*
** Loads |path|.  External data files are resolved relative to the model's
** folder and must stay inside it.  |out| is transferred to the caller.
** Errors: MLC_IO_ERROR (unreadable), MLC_NOT_FOUND (the model or an
** external data file does not exist), MLC_INVALID_ARGUMENT (malformed, with
** what and where), MLC_UNIMPLEMENTED (valid ONNX this loader does not take),
** MLC_RESOURCE_EXHAUSTED.  The protobuf structs are freed before this
** returns; the model keeps only the views and the tensor data.
*/
MLC_MUST_USE mlc_status mlc_onnx_load_file(const char *path, mlc_onnx_model **out);
/* Loads a model from memory (|data| borrowed); |base_dir| resolves external
** data (NULL: external data is an error). */
MLC_MUST_USE mlc_status mlc_onnx_load_bytes(const void *data, size_t size, const char *base_dir,
                                            mlc_onnx_model **out);
/* Frees the model and all its views. NULL-safe. */
void mlc_onnx_model_destroy(mlc_onnx_model *m);
/* The model's view; borrowed, valid until the model is destroyed. */
const mlc_onnx_model_info *mlc_onnx_model_get_info(const mlc_onnx_model *m);
/* The opset version imported for |domain| ("" = default domain); 0 if none. */
int64_t mlc_onnx_model_opset(const mlc_onnx_model *m, const char *domain);

/*
** Reads a serialized TensorProto (.pb test data) from |path|.  The tensor
** (and its data) is owned by *out_holder, freed with mlc_onnx_tensor_file_free.
*/
typedef struct mlc_onnx_tensor_file mlc_onnx_tensor_file;
MLC_MUST_USE mlc_status mlc_onnx_load_tensor_file(const char *path, mlc_onnx_tensor_file **out_holder,
                                                  const mlc_onnx_tensor **out);
/* The same from memory: |data| borrowed, |base_dir| resolves external data
** (NULL: external data is an error), |name| stands for the file in messages. */
MLC_MUST_USE mlc_status mlc_onnx_load_tensor_bytes(const void *data, size_t size, const char *base_dir,
                                                   const char *name, mlc_onnx_tensor_file **out_holder,
                                                   const mlc_onnx_tensor **out);
void mlc_onnx_tensor_file_free(mlc_onnx_tensor_file *h);

/* The mlc dtype of a TensorProto.DataType code; MLC_DTYPE_INVALID if none. */
mlc_dtype mlc_onnx_dtype(int onnx_type);
/* The ONNX name of a TensorProto.DataType code ("FLOAT", "COMPLEX64", ...). */
const char *mlc_onnx_dtype_name(int onnx_type);
/* "tensor", "sequence", "map", "optional", "sparse_tensor" or "unknown". */
const char *mlc_onnx_value_kind_name(mlc_onnx_value_kind k);
/* Finds an attribute of |n| by name; NULL when absent. */
const mlc_onnx_attr *mlc_onnx_node_attr(const mlc_onnx_node *n, const char *name);

#endif /* MLC_ONNX_ONNX_H */
