/*
** graph_lit.h: literals for building graph IR in tests (types, argument
** and attribute lists, origins), shared by the graph unit tests.
*/
#ifndef MLC_TESTS_GRAPH_LIT_H
#define MLC_TESTS_GRAPH_LIT_H

#include "graph/graph.h"

/* A type literal whose dims live in the enclosing block. */
#define TY(dt, ...)                                                                           \
  ((mlc_type){MLC_DTYPE_##dt, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
              (const int64_t[]){__VA_ARGS__}})
#define TY0(dt) ((mlc_type){MLC_DTYPE_##dt, 0, NULL})
/* An argument list: the array and its count. */
#define ARGS(...) \
  (mlc_value *[]){__VA_ARGS__}, (int)(sizeof((mlc_value *[]){__VA_ARGS__}) / sizeof(mlc_value *))
/* An attribute list: the array and its count. */
#define ATTRS(...) \
  (mlc_attr[]){__VA_ARGS__}, (int)(sizeof((mlc_attr[]){__VA_ARGS__}) / sizeof(mlc_attr))
#define NOATTRS NULL, 0
#define ORG(op_type, node) (&(mlc_origin){(node), (op_type), 13, -1})
#define INTS(name, ...) \
  mlc_attr_ints((name), (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define FLOATS(name, ...) \
  mlc_attr_floats((name), (double[]){__VA_ARGS__}, (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)))
#define TRY(expr) MLC_RETURN_IF_ERROR(expr)

#endif /* MLC_TESTS_GRAPH_LIT_H */
