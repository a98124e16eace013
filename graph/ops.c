/*
** ops.c: the tables generated from graph/ops.def (names, pattern kinds,
** argument counts, synopses, dtype classes, rule and evaluator names,
** attribute schemas) and the readers of the attribute schema.
**
** A schema is the text of the row's `attrs` column, entries separated by
** spaces: "alpha:f=0.01 axes:I mode:s=constant".  It is parsed where it is
** read (a few dozen characters; no state), so the table stays plain
** constant data.  The lowering and evaluation dispatch tables are generated
** beside their functions (lower/legalize.c, graph/eval.c); the inference
** table in graph.c.
*/
#include <stdlib.h>
#include <string.h>

#include "graph/graph_int.h"

/* ---- op tables (from ops.def) ------------------------------------------- */

#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) +1
enum { OPS_IN_TABLE = 0
#include "graph/ops.def"
};
#undef OP
_Static_assert((int)OPS_IN_TABLE == (int)MLC_OP_COUNT, "ops.def rows and enum mlc_op differ");

const char *const mlc_op_name[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) name,
#include "graph/ops.def"
#undef OP
};
const mlc_pattern mlc_op_pattern[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) MLC_PATTERN_##pat,
#include "graph/ops.def"
#undef OP
};
const char *const mlc_op_synopsis[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) syn,
#include "graph/ops.def"
#undef OP
};
const int mlc_op_min_args[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) mn,
#include "graph/ops.def"
#undef OP
};
const int mlc_op_max_args[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) mx,
#include "graph/ops.def"
#undef OP
};
const mlc_dtype_class mlc_op_dtypes[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) MLC_DCLASS_##dt,
#include "graph/ops.def"
#undef OP
};
const char *const mlc_op_rule_name[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) #lw,
#include "graph/ops.def"
#undef OP
};
const char *const mlc_op_eval_name[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) #ev,
#include "graph/ops.def"
#undef OP
};
const char *const mlc_op_attr_schema[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) at,
#include "graph/ops.def"
#undef OP
};

mlc_op mlc_op_from_name(const char *name) {
  for (int i = 0; i < MLC_OP_COUNT; i++)
    if (strcmp(mlc_op_name[i], name) == 0) return (mlc_op)i;
  return MLC_OP_COUNT;
}

/* ---- dtype classes ------------------------------------------------------ */

int mlc_dtype_class_has(mlc_dtype_class k, mlc_dtype t) {
  switch (k) {
  case MLC_DCLASS_DATA: return 1;
  case MLC_DCLASS_ANY: return t != MLC_DTYPE_STRING;
  case MLC_DCLASS_NUM: return mlc_dtype_is_float(t) || mlc_dtype_is_int(t);
  case MLC_DCLASS_FLOAT: return mlc_dtype_is_float(t);
  case MLC_DCLASS_INT: return mlc_dtype_is_int(t);
  case MLC_DCLASS_BOOL: return t == MLC_DTYPE_BOOL;
  case MLC_DCLASS_INDEX: return t == MLC_DTYPE_I32 || t == MLC_DTYPE_I64;
  }
  return 0;
}

const char *mlc_dtype_class_text(mlc_dtype_class k) {
  switch (k) {
  case MLC_DCLASS_DATA: return "any type";
  case MLC_DCLASS_ANY: return "a non-string type";
  case MLC_DCLASS_NUM: return "a numeric type";
  case MLC_DCLASS_FLOAT: return "a floating-point type";
  case MLC_DCLASS_INT: return "an integer type";
  case MLC_DCLASS_BOOL: return "bool";
  case MLC_DCLASS_INDEX: return "int32 or int64";
  }
  return "?";
}

/* ---- attribute schemas -------------------------------------------------- */

/* Parses the entry at *|p| into |out| and moves *|p| past it: 1 on an
** entry, 0 at the end, -1 when malformed. */
static int next_spec(const char **p, mlc_attr_spec *out) {
  const char *s = *p;
  while (*s == ' ') s++;
  if (!*s) return 0;
  size_t n = strcspn(s, ":= ");
  if (n == 0 || n >= sizeof out->name || s[n] != ':') return -1;
  memcpy(out->name, s, n);
  out->name[n] = 0;
  s += n + 1;
  if (!*s || !strchr("ifsIF", *s)) return -1;
  out->kind = *s++;
  out->has_default = 0;
  out->dflt = 0;
  if (*s == '=') {
    const char *v = ++s;
    size_t len = strcspn(v, " ");
    if (len == 0) return -1;
    if (out->kind == 'i' || out->kind == 'f') {
      char *end;
      out->dflt = strtod(v, &end);
      if (end != v + len) return -1;
    } else if (out->kind != 's') {
      return -1; /* lists have no default */
    }
    out->has_default = 1;
    s = v + len;
  }
  if (*s && *s != ' ') return -1;
  *p = s;
  return 1;
}

int mlc_op_attr_spec(mlc_op op, const char *name, mlc_attr_spec *out) {
  if ((unsigned)op >= MLC_OP_COUNT) return 0;
  const char *p = mlc_op_attr_schema[op];
  while (next_spec(&p, out) > 0)
    if (strcmp(out->name, name) == 0) return 1;
  return 0;
}

int mlc_attr_spec_accepts(const mlc_attr_spec *spec, const mlc_attr *a) {
  switch (a->kind) {
  case MLC_ATTR_INT: return spec->kind == 'i' || spec->kind == 'f';
  case MLC_ATTR_FLOAT: return spec->kind == 'f';
  case MLC_ATTR_STRING: return spec->kind == 's';
  /* an empty list carries no element type */
  case MLC_ATTR_INTS: return spec->kind == 'I' || (spec->kind == 'F' && a->n == 0);
  case MLC_ATTR_FLOATS: return spec->kind == 'F' || (spec->kind == 'I' && a->n == 0);
  }
  return 0;
}

int64_t mlc_op_attr_int(mlc_op op, const mlc_attr *attrs, int n, const char *name) {
  const mlc_attr *a = mlc_attrs_find(attrs, n, name);
  if (a && a->kind == MLC_ATTR_INT) return a->i;
  mlc_attr_spec sp;
  return mlc_op_attr_spec(op, name, &sp) && sp.has_default ? (int64_t)sp.dflt : 0;
}

double mlc_op_attr_float(mlc_op op, const mlc_attr *attrs, int n, const char *name) {
  const mlc_attr *a = mlc_attrs_find(attrs, n, name);
  if (a && a->kind == MLC_ATTR_INT) return (double)a->i;
  if (a && a->kind == MLC_ATTR_FLOAT) return a->f;
  mlc_attr_spec sp;
  return mlc_op_attr_spec(op, name, &sp) && sp.has_default ? sp.dflt : 0;
}

static const char *kind_text(mlc_attr_kind k) {
  switch (k) {
  case MLC_ATTR_INT: return "an int";
  case MLC_ATTR_FLOAT: return "a float";
  case MLC_ATTR_STRING: return "a string";
  case MLC_ATTR_INTS: return "a list of ints";
  case MLC_ATTR_FLOATS: return "a list of floats";
  }
  return "?";
}

int mlc_op_check_attrs(mlc_op op, const mlc_attr *attrs, int n, char *msg, size_t size) {
  for (int i = 0; i < n; i++) {
    mlc_attr_spec sp;
    const char *name = attrs[i].name ? attrs[i].name : "(null)";
    if (!mlc_op_attr_spec(op, name, &sp)) {
      snprintf(msg, size, "unknown attribute %s", name);
      return -1;
    }
    if (!mlc_attr_spec_accepts(&sp, &attrs[i])) {
      snprintf(msg, size, "attribute %s is %s, expected kind %c", name, kind_text(attrs[i].kind), sp.kind);
      return -1;
    }
    for (int j = 0; j < i; j++)
      if (attrs[j].name && strcmp(attrs[j].name, name) == 0) {
        snprintf(msg, size, "attribute %s is repeated", name);
        return -1;
      }
  }
  return 0;
}

int mlc_op_schema_ok(mlc_op op) {
  if ((unsigned)op >= MLC_OP_COUNT || !mlc_op_attr_schema[op]) return 0;
  const char *p = mlc_op_attr_schema[op];
  mlc_attr_spec sp, seen;
  int r;
  while ((r = next_spec(&p, &sp)) > 0) {
    /* each name once: the first lookup must find this very entry */
    const char *q = mlc_op_attr_schema[op];
    while (next_spec(&q, &seen) > 0 && strcmp(seen.name, sp.name) != 0) {
    }
    if (q != p) return 0;
  }
  return r == 0;
}
