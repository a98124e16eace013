/*
** print.c: the graph IR as text.
**
** mlc_graph_print writes a module in a TVMScript-like form:
**
**   # symbolic dims: n
**   # constants: 2 (392.5 KiB)
**   #   c0 "fc1.weight": R.Tensor((784, 128), "float32")
**   @I.ir_module
**   class Module:
**       @R.function
**       def main(x: R.Tensor((n, 784), "float32")) -> R.Tensor((n, 128), "float32"):
**           with R.dataflow():
**               lv0: R.Tensor((n, 128), "float32") = R.matmul(x, c0)  # MatMul "fc1"
**               gv: R.Tensor((n, 128), "float32") = R.relu(lv0)
**               R.output(gv)
**           return gv
**
** Naming is deterministic, so the text can be compared with golden files:
** parameters keep their source name reduced to [A-Za-z0-9_] and made unique;
** values a function returns are gv (or gv0, gv1, ... when there are several,
** in return order); other binding outputs are lv0, lv1, ... in print order;
** constants are c<index>, except small ones (at most 8 elements) that are
** printed inline as R.const(value, "dtype").  Attributes follow the args as
** keyword arguments.  Broken IR prints too (the verifier's messages rely on
** it): a value no binding of the function defines prints as undef<id>.
**
** mlc_graph_print_dot writes one function as a Graphviz digraph.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "graph/graph_int.h"

/* Constants with at most this many elements print inline as R.const(...). */
#define INLINE_CONST_MAX 8

/* ---- scalars -------------------------------------------------------------- */

/* A float in the shortest form (at least 6 significant digits, as
** mlc_sb_double, so 10 prints as "10") that reads back as the same float. */
static void put_float(mlc_strbuf *b, float v) {
  if (isnan(v)) {
    mlc_sb_puts(b, "nan");
    return;
  }
  if (isinf(v)) {
    mlc_sb_puts(b, v < 0 ? "-inf" : "inf");
    return;
  }
  char tmp[40];
  for (int prec = 6; prec <= 9; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, (double)v);
    if (strtof(tmp, NULL) == v) break;
  }
  mlc_sb_puts(b, tmp);
}

/* Element |i| of constant data of dtype |dt|. */
static void put_elem(mlc_strbuf *b, mlc_dtype dt, const void *data, int64_t i) {
  const unsigned char *p = (const unsigned char *)data + (size_t)i * mlc_dtype_size(dt);
  switch (dt) {
    case MLC_DTYPE_F32: { float v; memcpy(&v, p, 4); put_float(b, v); break; }
    case MLC_DTYPE_F64: { double v; memcpy(&v, p, 8); mlc_sb_double(b, v); break; }
    case MLC_DTYPE_F16: { uint16_t v; memcpy(&v, p, 2); put_float(b, mlc_f16_to_f32(v)); break; }
    case MLC_DTYPE_BF16: { uint16_t v; memcpy(&v, p, 2); put_float(b, mlc_bf16_to_f32(v)); break; }
    case MLC_DTYPE_I8: { int8_t v; memcpy(&v, p, 1); mlc_sb_printf(b, "%d", v); break; }
    case MLC_DTYPE_I16: { int16_t v; memcpy(&v, p, 2); mlc_sb_printf(b, "%d", v); break; }
    case MLC_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); mlc_sb_printf(b, "%ld", (long)v); break; }
    case MLC_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); mlc_sb_printf(b, "%lld", (long long)v); break; }
    case MLC_DTYPE_U8: mlc_sb_printf(b, "%u", (unsigned)p[0]); break;
    case MLC_DTYPE_U16: { uint16_t v; memcpy(&v, p, 2); mlc_sb_printf(b, "%u", (unsigned)v); break; }
    case MLC_DTYPE_U32: { uint32_t v; memcpy(&v, p, 4); mlc_sb_printf(b, "%lu", (unsigned long)v); break; }
    case MLC_DTYPE_U64: { uint64_t v; memcpy(&v, p, 8); mlc_sb_printf(b, "%llu", (unsigned long long)v); break; }
    case MLC_DTYPE_BOOL: mlc_sb_puts(b, p[0] ? "True" : "False"); break;
    case MLC_DTYPE_STRING:
    case MLC_DTYPE_INVALID:
    case MLC_DTYPE_COUNT: mlc_sb_puts(b, "?"); break;
  }
}

/* Nested list of the elements of axes |axis|.. starting at element *i. */
static void put_nested(mlc_strbuf *b, const mlc_type *t, const void *data, int axis, int64_t *i) {
  if (axis == t->rank) {
    put_elem(b, t->dtype, data, (*i)++);
    return;
  }
  mlc_sb_putc(b, '[');
  for (int64_t k = 0; k < t->dims[axis]; k++) {
    if (k) mlc_sb_puts(b, ", ");
    put_nested(b, t, data, axis + 1, i);
  }
  mlc_sb_putc(b, ']');
}

/* Whether constant |c| prints inline. */
static int const_inline(const mlc_const *c) {
  int64_t n = mlc_type_numel(&c->type);
  if (n < 0 || n > INLINE_CONST_MAX || !c->data) return 0;
  if (n == 0 && c->type.rank > 0) return 0; /* [] would lose the shape */
  if (c->type.dtype == MLC_DTYPE_STRING || mlc_dtype_size(c->type.dtype) == 0) return 0;
  return c->nbytes == (size_t)n * mlc_dtype_size(c->type.dtype);
}

/* ---- types and attributes --------------------------------------------------- */

static void put_dim(const mlc_module *m, int64_t d, mlc_strbuf *b) {
  if (!MLC_DIM_IS_SYM(d))
    mlc_sb_printf(b, "%lld", (long long)d);
  else if (m)
    mlc_sb_puts(b, mlc_module_sym_name(m, d));
  else
    mlc_sb_printf(b, "s%d", MLC_DIM_SYM_ID(d));
}

/* "(n, 3, 224, 224)", "(5,)" or "()". */
static void put_shape(const mlc_module *m, const mlc_type *t, mlc_strbuf *b) {
  mlc_sb_putc(b, '(');
  for (int i = 0; i < t->rank; i++) {
    if (i) mlc_sb_puts(b, ", ");
    put_dim(m, t->dims ? t->dims[i] : 0, b);
  }
  if (t->rank == 1) mlc_sb_putc(b, ',');
  mlc_sb_putc(b, ')');
}

/* Appends |t| (borrowed) to |b|; |m| (borrowed, may be NULL) names symbols. */
void mlc_graph_print_type(const mlc_module *m, const mlc_type *t, mlc_strbuf *b) {
  mlc_sb_puts(b, "R.Tensor(");
  put_shape(m, t, b);
  mlc_sb_printf(b, ", \"%s\")", mlc_dtype_name(t->dtype));
}

/* "R.Tensor(...)" for one type, "R.Tuple(T1, T2)" for several. */
static void put_types(const mlc_module *m, mlc_value *const *vs, int n, mlc_strbuf *b) {
  if (n == 1 && vs[0]) {
    mlc_graph_print_type(m, &vs[0]->type, b);
    return;
  }
  mlc_sb_puts(b, "R.Tuple(");
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_puts(b, ", ");
    if (vs[i])
      mlc_graph_print_type(m, &vs[i]->type, b);
    else
      mlc_sb_puts(b, "None");
  }
  mlc_sb_putc(b, ')');
}

static void put_attr(const mlc_module *m, const mlc_attr *a, mlc_strbuf *b) {
  mlc_sb_printf(b, "%s=", a->name ? a->name : "?");
  /* Shape attributes (reshape, broadcast_to, resize) may hold symbolic dims. */
  if (a->kind == MLC_ATTR_INTS && a->name &&
      (strcmp(a->name, "shape") == 0 || strcmp(a->name, "dims") == 0 || strcmp(a->name, "sizes") == 0)) {
    mlc_sb_putc(b, '[');
    for (int i = 0; i < a->n; i++) {
      if (i) mlc_sb_puts(b, ", ");
      put_dim(m, a->ints[i], b);
    }
    mlc_sb_putc(b, ']');
    return;
  }
  switch (a->kind) {
    case MLC_ATTR_INT:
      /* Dtype attributes (cast) hold an mlc_dtype: print its name. */
      if (a->name && strcmp(a->name, "dtype") == 0 && a->i > 0 && a->i < MLC_DTYPE_COUNT)
        mlc_sb_printf(b, "\"%s\"", mlc_dtype_name((mlc_dtype)a->i));
      else
        mlc_sb_printf(b, "%lld", (long long)a->i);
      break;
    case MLC_ATTR_FLOAT: mlc_sb_double(b, a->f); break;
    case MLC_ATTR_STRING: mlc_sb_json_str(b, a->s); break;
    case MLC_ATTR_INTS:
      mlc_sb_putc(b, '[');
      for (int i = 0; i < a->n; i++) mlc_sb_printf(b, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
      mlc_sb_putc(b, ']');
      break;
    case MLC_ATTR_FLOATS:
      mlc_sb_putc(b, '[');
      for (int i = 0; i < a->n; i++) {
        if (i) mlc_sb_puts(b, ", ");
        mlc_sb_double(b, a->floats[i]);
      }
      mlc_sb_putc(b, ']');
      break;
  }
}

/* ---- value names -------------------------------------------------------------- */

typedef struct printer {
  const mlc_module *m;
  mlc_strbuf *b;
  mlc_arena *ar;
  int nids;            /* size of the per-value arrays */
  const char **names;  /* by value id: name within the current function */
  int *defblock;       /* by value id: block index + 1 of the defining binding */
  char *escapes;       /* by value id: used outside its block */
} printer;

static const char *const reserved[] = {
    "R", "I", "T", "cls", "Module", "None", "True", "False", "and", "as", "assert", "async",
    "await", "break", "class", "continue", "def", "del", "elif", "else", "except", "finally",
    "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield", NULL};

/* Whether |s| could clash with a generated name (lv3, gv, gv1, c0) or Python. */
static int is_reserved(const char *s) {
  for (int i = 0; reserved[i]; i++)
    if (strcmp(s, reserved[i]) == 0) return 1;
  const char *d = NULL;
  if (strncmp(s, "lv", 2) == 0 || strncmp(s, "gv", 2) == 0)
    d = s + 2;
  else if (s[0] == 'c')
    d = s + 1;
  if (!d) return 0;
  if (!*d) return s[0] == 'g'; /* "gv" */
  for (; *d; d++)
    if (*d < '0' || *d > '9') return 0;
  return 1;
}

/* The parameter |name| reduced to an identifier, unique among |taken|. */
static const char *param_name(printer *p, const char *name, int index, const char **taken,
                              int ntaken) {
  const char *base;
  if (!name || !*name) {
    base = mlc_arena_printf(p->ar, "p%d", index);
  } else {
    size_t n = strlen(name);
    char *s = mlc_arena_alloc(p->ar, n + 3);
    if (!s) return "p";
    size_t k = 0;
    if (name[0] >= '0' && name[0] <= '9') s[k++] = '_';
    for (size_t i = 0; i < n; i++) {
      char c = name[i];
      int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      s[k++] = ok ? c : '_';
    }
    if (is_reserved(s)) s[k++] = '_';
    s[k] = 0;
    base = s;
  }
  if (!base) return "p";
  const char *cand = base;
  for (int suffix = 1;; suffix++) {
    int clash = 0;
    for (int i = 0; i < ntaken && !clash; i++) clash = strcmp(taken[i], cand) == 0;
    if (!clash) return cand;
    cand = mlc_arena_printf(p->ar, "%s_%d", base, suffix);
    if (!cand) return base;
  }
}

static int valid_id(const printer *p, const mlc_value *v) { return v && v->id >= 0 && v->id < p->nids; }

/* Names the params, returned values and binding outputs of |f|. */
static void name_values(printer *p, const mlc_func *f) {
  memset(p->names, 0, sizeof *p->names * (size_t)p->nids);
  const char **taken = MLC_ARENA_ARRAY(p->ar, (size_t)(f->nparams ? f->nparams : 1), const char *);
  if (!taken) return;
  for (int i = 0; i < f->nparams; i++) {
    const mlc_value *v = f->params[i];
    taken[i] = param_name(p, v ? v->name : NULL, i, taken, i);
    if (valid_id(p, v) && !p->names[v->id]) p->names[v->id] = taken[i];
  }
  /* Values returned: gv, or gv0, gv1, ... by first occurrence. */
  static const char pending[] = "";
  int nret = 0, k = 0;
  for (int i = 0; i < f->nrets; i++) {
    const mlc_value *v = f->rets[i];
    if (!valid_id(p, v) || v->kind != MLC_VALUE_VAR || p->names[v->id]) continue;
    p->names[v->id] = pending;
    nret++;
  }
  for (int i = 0; i < f->nrets; i++) {
    const mlc_value *v = f->rets[i];
    if (!valid_id(p, v) || p->names[v->id] != pending) continue;
    p->names[v->id] = nret == 1 ? "gv" : mlc_arena_printf(p->ar, "gv%d", k++);
  }
  int lv = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      const mlc_binding *bd = f->blocks[bi].bindings[j];
      if (!bd) continue;
      for (int o = 0; o < bd->nouts; o++) {
        const mlc_value *v = bd->outs ? bd->outs[o] : NULL;
        if (valid_id(p, v) && !p->names[v->id]) p->names[v->id] = mlc_arena_printf(p->ar, "lv%d", lv++);
      }
    }
}

/* A value as an expression. */
static void put_value(printer *p, const mlc_value *v) {
  mlc_strbuf *b = p->b;
  if (!v) {
    mlc_sb_puts(b, "None");
    return;
  }
  if (v->kind == MLC_VALUE_CONST) {
    const mlc_const *c = mlc_value_const(p->m, v);
    if (c && const_inline(c)) {
      int64_t i = 0;
      mlc_sb_puts(b, "R.const(");
      put_nested(b, &c->type, c->data, 0, &i);
      mlc_sb_printf(b, ", \"%s\")", mlc_dtype_name(c->type.dtype));
    } else {
      mlc_sb_printf(b, "c%d", v->const_index);
    }
    return;
  }
  if (valid_id(p, v) && p->names[v->id])
    mlc_sb_puts(b, p->names[v->id]);
  else
    mlc_sb_printf(b, "undef%d", v->id);
}

/* ---- module text ------------------------------------------------------------ */

static void put_size(mlc_strbuf *b, double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    u++;
  }
  if (u == 0)
    mlc_sb_printf(b, "%.0f B", bytes);
  else
    mlc_sb_printf(b, "%.1f %s", bytes, units[u]);
}

static void put_header(const mlc_module *m, mlc_strbuf *b) {
  if (m->nsyms > 0) {
    mlc_sb_puts(b, "# symbolic dims: ");
    for (int i = 0; i < m->nsyms; i++) mlc_sb_printf(b, "%s%s", i ? ", " : "", m->syms[i]);
    mlc_sb_putc(b, '\n');
  }
  if (m->nconsts > 0) {
    double total = 0;
    for (int i = 0; i < m->nconsts; i++) total += (double)m->consts[i].nbytes;
    mlc_sb_printf(b, "# constants: %d (", m->nconsts);
    put_size(b, total);
    mlc_sb_puts(b, ")\n");
    for (int i = 0; i < m->nconsts; i++) {
      const mlc_const *c = &m->consts[i];
      mlc_sb_printf(b, "#   c%d", i);
      if (c->name) {
        mlc_sb_putc(b, ' ');
        mlc_sb_json_str(b, c->name);
      }
      mlc_sb_puts(b, ": ");
      mlc_graph_print_type(m, &c->type, b);
      mlc_sb_putc(b, '\n');
    }
  }
}

static void put_origin(const mlc_origin *o, mlc_strbuf *b) {
  if (!o->op_type) return;
  mlc_sb_printf(b, "  # %s", o->op_type);
  if (o->node && *o->node) {
    mlc_sb_putc(b, ' ');
    mlc_sb_json_str(b, o->node);
  }
}

static void put_args(printer *p, const mlc_binding *bd) {
  for (int i = 0; i < bd->nargs; i++) {
    if (i) mlc_sb_puts(p->b, ", ");
    put_value(p, bd->args ? bd->args[i] : NULL);
  }
}

static void put_attrs(printer *p, const mlc_binding *bd) {
  for (int i = 0; bd->attrs && i < bd->nattrs; i++) {
    mlc_sb_puts(p->b, ", ");
    put_attr(p->m, &bd->attrs[i], p->b);
  }
}

static void put_binding(printer *p, const mlc_binding *bd, int indent) {
  mlc_strbuf *b = p->b;
  mlc_sb_printf(b, "%*s", indent, "");
  if (bd->nouts == 1 && bd->outs) {
    put_value(p, bd->outs[0]);
  } else {
    mlc_sb_putc(b, '(');
    for (int i = 0; bd->outs && i < bd->nouts; i++) {
      if (i) mlc_sb_puts(b, ", ");
      put_value(p, bd->outs[i]);
    }
    mlc_sb_putc(b, ')');
  }
  mlc_sb_puts(b, ": ");
  if (bd->outs)
    put_types(p->m, bd->outs, bd->nouts, b);
  else
    mlc_sb_puts(b, "R.Tuple()");
  mlc_sb_puts(b, " = ");
  switch (bd->kind) {
    case MLC_CALL_OP:
      if ((unsigned)bd->op < MLC_OP_COUNT)
        mlc_sb_printf(b, "R.%s(", mlc_op_name[bd->op]);
      else
        mlc_sb_printf(b, "R.invalid_op_%d(", (int)bd->op);
      put_args(p, bd);
      put_attrs(p, bd);
      mlc_sb_putc(b, ')');
      break;
    case MLC_CALL_TIR:
    case MLC_CALL_DPS_PACKED:
      if (bd->kind == MLC_CALL_TIR) {
        mlc_sb_printf(b, "R.call_tir(cls.%s, (", bd->callee ? bd->callee : "?");
      } else {
        mlc_sb_puts(b, "R.call_dps_packed(");
        mlc_sb_json_str(b, bd->callee);
        mlc_sb_puts(b, ", (");
      }
      put_args(p, bd);
      mlc_sb_puts(b, bd->nargs == 1 ? ",), out_sinfo=" : "), out_sinfo=");
      if (bd->nouts == 1 && bd->outs && bd->outs[0]) {
        mlc_graph_print_type(p->m, &bd->outs[0]->type, b);
      } else {
        mlc_sb_putc(b, '[');
        for (int i = 0; bd->outs && i < bd->nouts; i++) {
          if (i) mlc_sb_puts(b, ", ");
          if (bd->outs[i]) mlc_graph_print_type(p->m, &bd->outs[i]->type, b);
        }
        mlc_sb_putc(b, ']');
      }
      put_attrs(p, bd);
      mlc_sb_putc(b, ')');
      break;
    case MLC_CALL_FUNC:
      mlc_sb_printf(b, "cls.%s(", bd->callee ? bd->callee : "?");
      put_args(p, bd);
      mlc_sb_putc(b, ')');
      break;
    default:
      mlc_sb_printf(b, "R.invalid_call_%d()", (int)bd->kind);
  }
  put_origin(&bd->origin, b);
  if (bd->ncovered > 0) {
    mlc_sb_puts(b, "  # covers");
    for (int i = 0; i < bd->ncovered; i++) {
      mlc_sb_puts(b, i ? ", " : " ");
      mlc_sb_puts(b, bd->covered[i].op_type ? bd->covered[i].op_type : "?");
      if (bd->covered[i].node && *bd->covered[i].node) {
        mlc_sb_putc(b, ' ');
        mlc_sb_json_str(b, bd->covered[i].node);
      }
    }
  }
  mlc_sb_putc(b, '\n');
}

/* Marks binding outputs used outside their block (for R.output). */
static void find_escapes(printer *p, const mlc_func *f) {
  memset(p->defblock, 0, sizeof *p->defblock * (size_t)p->nids);
  memset(p->escapes, 0, (size_t)p->nids);
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      const mlc_binding *bd = f->blocks[bi].bindings[j];
      for (int o = 0; bd && bd->outs && o < bd->nouts; o++)
        if (valid_id(p, bd->outs[o])) p->defblock[bd->outs[o]->id] = bi + 1;
    }
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      const mlc_binding *bd = f->blocks[bi].bindings[j];
      for (int a = 0; bd && bd->args && a < bd->nargs; a++) {
        const mlc_value *v = bd->args[a];
        if (valid_id(p, v) && p->defblock[v->id] && p->defblock[v->id] != bi + 1) p->escapes[v->id] = 1;
      }
    }
  for (int i = 0; i < f->nrets; i++)
    if (valid_id(p, f->rets[i])) p->escapes[f->rets[i]->id] = 1;
}

static void put_block(printer *p, const mlc_block *blk) {
  mlc_strbuf *b = p->b;
  if (blk->n == 0) return;
  int indent = 8;
  if (blk->dataflow) {
    mlc_sb_puts(b, "        with R.dataflow():\n");
    indent = 12;
  }
  for (int j = 0; j < blk->n; j++)
    if (blk->bindings[j])
      put_binding(p, blk->bindings[j], indent);
    else
      mlc_sb_printf(b, "%*s# (null binding)\n", indent, "");
  if (!blk->dataflow) return;
  mlc_sb_puts(b, "            R.output(");
  int k = 0;
  for (int j = 0; j < blk->n; j++) {
    const mlc_binding *bd = blk->bindings[j];
    for (int o = 0; bd && bd->outs && o < bd->nouts; o++) {
      const mlc_value *v = bd->outs[o];
      if (!valid_id(p, v) || !p->escapes[v->id]) continue;
      p->escapes[v->id] = 0; /* list once */
      if (k++) mlc_sb_puts(b, ", ");
      put_value(p, v);
    }
  }
  mlc_sb_puts(b, ")\n");
}

static void put_func(printer *p, const mlc_func *f) {
  mlc_strbuf *b = p->b;
  name_values(p, f);
  find_escapes(p, f);
  mlc_sb_printf(b, "    @R.function%s\n    def %s(", f->primitive ? "(private=True)" : "", f->name ? f->name : "?");
  for (int i = 0; i < f->nparams; i++) {
    if (i) mlc_sb_puts(b, ", ");
    put_value(p, f->params[i]);
    mlc_sb_puts(b, ": ");
    if (f->params[i]) mlc_graph_print_type(p->m, &f->params[i]->type, b);
  }
  mlc_sb_puts(b, ") -> ");
  put_types(p->m, f->rets, f->nrets, b);
  mlc_sb_puts(b, ":\n");
  if (f->primitive) mlc_sb_puts(b, "        R.func_attr({\"Primitive\": 1})\n");
  for (int i = 0; i < f->nparams; i++) /* inputs with a default (not Relax: a comment) */
    if (mlc_func_param_default(f, i)) {
      mlc_sb_puts(b, "        # default of ");
      put_value(p, f->params[i]);
      mlc_sb_puts(b, ": ");
      put_value(p, mlc_func_param_default(f, i));
      mlc_sb_putc(b, '\n');
    }
  for (int bi = 0; bi < f->nblocks; bi++) put_block(p, &f->blocks[bi]);
  mlc_sb_puts(b, "        return ");
  if (f->nrets != 1) mlc_sb_putc(b, '(');
  for (int i = 0; i < f->nrets; i++) {
    if (i) mlc_sb_puts(b, ", ");
    put_value(p, f->rets[i]);
  }
  if (f->nrets != 1) mlc_sb_putc(b, ')');
  mlc_sb_putc(b, '\n');
}

/* Sets up the scratch state; 0 ok, -1 out of memory (|b| is marked). */
static int printer_init(printer *p, const mlc_module *m, mlc_strbuf *b) {
  memset(p, 0, sizeof *p);
  p->m = m;
  p->b = b;
  p->nids = m->next_value_id > 0 ? m->next_value_id : 1;
  p->ar = mlc_arena_create(m->alloc);
  if (p->ar) {
    p->names = MLC_ARENA_ARRAY(p->ar, (size_t)p->nids, const char *);
    p->defblock = MLC_ARENA_ARRAY(p->ar, (size_t)p->nids, int);
    p->escapes = MLC_ARENA_ARRAY(p->ar, (size_t)p->nids, char);
  }
  if (!p->ar || !p->names || !p->defblock || !p->escapes) {
    mlc_arena_destroy(p->ar);
    b->oom = 1;
    return -1;
  }
  return 0;
}

/* Appends the text of |m| (borrowed) to |b|; out of memory sets b->oom. */
void mlc_graph_print(const mlc_module *m, mlc_strbuf *b) {
  printer p;
  if (printer_init(&p, m, b)) return;
  put_header(m, b);
  mlc_sb_puts(b, "@I.ir_module\nclass Module:\n");
  if (m->nfuncs == 0) mlc_sb_puts(b, "    pass\n");
  for (int i = 0; i < m->nfuncs; i++) {
    if (i) mlc_sb_putc(b, '\n');
    put_func(&p, m->funcs[i]);
  }
  if (m->prims && m->prims_print) {
    mlc_sb_puts(b, "\n# prim functions of the module (TensorIR)\n");
    m->prims_print(m->prims, b);
  }
  if (mlc_arena_oom(p.ar)) b->oom = 1;
  mlc_arena_destroy(p.ar);
}

/* ---- Graphviz --------------------------------------------------------------- */

/* Text inside a dot "..." string: quotes and backslashes escaped. */
static void dot_text(mlc_strbuf *b, const char *s) {
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') mlc_sb_putc(b, '\\');
    if (*s == '\n')
      mlc_sb_puts(b, "\\n");
    else
      mlc_sb_putc(b, *s);
  }
}

/* "(n, 784) float32" */
static void dot_type(const mlc_module *m, const mlc_type *t, mlc_strbuf *b) {
  mlc_strbuf tmp = MLC_STRBUF_INIT;
  put_shape(m, t, &tmp);
  mlc_sb_printf(&tmp, " %s", mlc_dtype_name(t->dtype));
  dot_text(b, mlc_sb_str(&tmp));
  if (tmp.oom) b->oom = 1;
  mlc_sb_fini(&tmp);
}

/* Appends a Graphviz digraph of |f| (borrowed, a function of |m|) to |b|. */
void mlc_graph_print_dot(const mlc_module *m, const mlc_func *f, mlc_strbuf *b) {
  printer p;
  if (printer_init(&p, m, b)) return;
  name_values(&p, f);
  /* defblock[id] here: index + 1 of the binding (over all blocks) defining id. */
  memset(p.defblock, 0, sizeof *p.defblock * (size_t)p.nids);
  int nb = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++, nb++) {
      const mlc_binding *bd = f->blocks[bi].bindings[j];
      for (int o = 0; bd && bd->outs && o < bd->nouts; o++)
        if (valid_id(&p, bd->outs[o])) p.defblock[bd->outs[o]->id] = nb + 1;
    }
  char *const_used = MLC_ARENA_ARRAY(p.ar, (size_t)(m->nconsts ? m->nconsts : 1), char);
  int *param_index = MLC_ARENA_ARRAY(p.ar, (size_t)p.nids, int);
  if (!const_used || !param_index) {
    b->oom = 1;
    mlc_arena_destroy(p.ar);
    return;
  }
  for (int i = 0; i < f->nparams; i++)
    if (valid_id(&p, f->params[i])) param_index[f->params[i]->id] = i + 1;

  mlc_sb_puts(b, "digraph \"");
  dot_text(b, f->name);
  mlc_sb_puts(b, "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n");
  for (int i = 0; i < f->nparams; i++) {
    const mlc_value *v = f->params[i];
    if (!v) continue;
    mlc_sb_printf(b, "  p%d [shape=ellipse, label=\"", i);
    dot_text(b, valid_id(&p, v) ? p.names[v->id] : "?");
    mlc_sb_puts(b, "\\n");
    dot_type(m, &v->type, b);
    mlc_sb_puts(b, "\"];\n");
  }
  /* Constants used by the function, in table order. */
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      const mlc_binding *bd = f->blocks[bi].bindings[j];
      for (int a = 0; bd && bd->args && a < bd->nargs; a++)
        if (mlc_value_const(m, bd->args[a])) const_used[bd->args[a]->const_index] = 1;
    }
  for (int i = 0; i < f->nrets; i++)
    if (f->rets[i] && mlc_value_const(m, f->rets[i])) const_used[f->rets[i]->const_index] = 1;
  for (int i = 0; i < m->nconsts; i++) {
    if (!const_used[i]) continue;
    const mlc_const *c = &m->consts[i];
    mlc_sb_printf(b, "  c%d [shape=box, label=\"c%d", i, i);
    if (c->name) {
      mlc_sb_puts(b, " ");
      dot_text(b, c->name);
    }
    mlc_sb_puts(b, "\\n");
    dot_type(m, &c->type, b);
    mlc_sb_puts(b, "\"];\n");
  }
  /* Op nodes and the edges into them. */
  nb = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++, nb++) {
      const mlc_binding *bd = f->blocks[bi].bindings[j];
      if (!bd) continue;
      mlc_sb_printf(b, "  b%d [shape=box, style=rounded, label=\"", nb);
      if (bd->kind == MLC_CALL_OP) {
        dot_text(b, (unsigned)bd->op < MLC_OP_COUNT ? mlc_op_name[bd->op] : "?");
      } else {
        dot_text(b, bd->kind == MLC_CALL_TIR ? "call_tir " : "call_dps_packed ");
        dot_text(b, bd->callee);
      }
      for (int o = 0; bd->outs && o < bd->nouts; o++) {
        if (!bd->outs[o]) continue;
        mlc_sb_puts(b, "\\n");
        dot_type(m, &bd->outs[o]->type, b);
      }
      mlc_sb_puts(b, "\"];\n");
    }
  /* Edges: from the param, constant or defining binding of each arg. */
  nb = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++, nb++) {
      const mlc_binding *bd = f->blocks[bi].bindings[j];
      for (int a = 0; bd && bd->args && a < bd->nargs; a++) {
        const mlc_value *v = bd->args[a];
        if (!v) continue;
        if (v->kind == MLC_VALUE_CONST && mlc_value_const(m, v)) {
          mlc_sb_printf(b, "  c%d -> b%d;\n", v->const_index, nb);
        } else if (valid_id(&p, v) && v->kind == MLC_VALUE_PARAM && param_index[v->id]) {
          mlc_sb_printf(b, "  p%d -> b%d;\n", param_index[v->id] - 1, nb);
        } else if (valid_id(&p, v) && v->kind == MLC_VALUE_VAR && p.defblock[v->id]) {
          mlc_sb_printf(b, "  b%d -> b%d", p.defblock[v->id] - 1, nb);
          if (v->def && v->def->nouts > 1) mlc_sb_printf(b, " [label=\"%d\"]", v->def_output);
          mlc_sb_puts(b, ";\n");
        }
      }
    }
  /* Outputs. */
  for (int i = 0; i < f->nrets; i++) {
    const mlc_value *v = f->rets[i];
    if (!v) continue;
    mlc_sb_printf(b, "  out%d [shape=ellipse, style=bold, label=\"output %d\\n", i, i);
    dot_type(m, &v->type, b);
    mlc_sb_puts(b, "\"];\n");
    if (v->kind == MLC_VALUE_CONST && mlc_value_const(m, v))
      mlc_sb_printf(b, "  c%d -> out%d;\n", v->const_index, i);
    else if (valid_id(&p, v) && v->kind == MLC_VALUE_PARAM && param_index[v->id])
      mlc_sb_printf(b, "  p%d -> out%d;\n", param_index[v->id] - 1, i);
    else if (valid_id(&p, v) && v->kind == MLC_VALUE_VAR && p.defblock[v->id]) {
      mlc_sb_printf(b, "  b%d -> out%d", p.defblock[v->id] - 1, i);
      if (v->def && v->def->nouts > 1) mlc_sb_printf(b, " [label=\"%d\"]", v->def_output);
      mlc_sb_puts(b, ";\n");
    }
  }
  mlc_sb_puts(b, "}\n");
  if (mlc_arena_oom(p.ar)) b->oom = 1;
  mlc_arena_destroy(p.ar);
}
