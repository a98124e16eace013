/*
** legalize.c: graph op calls -> prim functions (LegalizeOps).
**
** For every MLC_CALL_OP binding: find the op's lowering rule, build its
** compute stages with the te builder over placeholders for the tensor
** arguments, make a prim function, and rewrite the binding into
** call_tir(prim_func, args).  Calls that are identical in op, attributes
** and struct info share one prim function (keyed by a canonical string).
** Scalar constants feeding elementwise and broadcast ops become immediates.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "lower/arith.h"
#include "lower/lower_int.h"

/* ---- the rule table ------------------------------------------------------ */

/* The rule of each op, generated from ops.def's `lower` column: lg_NAME is
** mlc_lg_NAME (declared in lower_int.h from the same column, so a rule
** named there and defined nowhere fails to link); BUILTIN ops become
** run-time built-ins in mlc_lg_builtin and NONE ops have no lowering. */
#define mlc_BUILTIN NULL
#define mlc_NONE NULL
static const mlc_lg_fn rules[MLC_OP_COUNT] = {
#define OP(e, name, pat, mn, mx, inf, lw, ev, dt, at, syn) mlc_##lw,
#include "graph/ops.def"
#undef OP
};
#undef mlc_BUILTIN
#undef mlc_NONE
_Static_assert(sizeof rules / sizeof rules[0] == MLC_OP_COUNT, "one rule entry per op");

mlc_lg_fn mlc_lg_rule(mlc_op op) { return (unsigned)op < MLC_OP_COUNT ? rules[op] : NULL; }

/* ---- helpers for rules --------------------------------------------------- */

mlc_status mlc_lg_error(mlc_lg_call *c, mlc_code code, const char *fmt, ...) {
  char msg[1024], where[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mlc_origin_str(c->binding ? &c->binding->origin : NULL, where, sizeof where);
  return mlc_make_status(code, "%s%slowering %s: %s", where, where[0] ? ": " : "",
                         mlc_op_name[c->op], msg);
}

const mlc_attr *mlc_lg_attr(mlc_lg_call *c, const char *name) {
  return mlc_attrs_find(c->attrs, c->nattrs, name);
}
int64_t mlc_lg_int(mlc_lg_call *c, const char *name, int64_t dflt) {
  return mlc_attrs_int(c->attrs, c->nattrs, name, dflt);
}
double mlc_lg_float(mlc_lg_call *c, const char *name, double dflt) {
  return mlc_attrs_float(c->attrs, c->nattrs, name, dflt);
}

void mlc_lg_mark_syms(const mlc_type *t, unsigned char *bound) {
  for (int d = 0; d < t->rank; d++)
    if (MLC_DIM_IS_SYM(t->dims[d])) bound[MLC_DIM_SYM_ID(t->dims[d])] = 1;
}

/* The scalar var of symbol |id|: its name, or for a derived symbol
** ("(H-1)//2+1") an identifier made of it ("H_1_2_1"). */
static mlc_tir_expr *sym_var(mlc_lg_call *c, int id) {
  if (!c->sym_vars[id]) {
    const char *name = c->gm->syms[id];
    char buf[128];
    if (c->gm->sym_defs[id].op != MLC_SYM_FREE) {
      size_t n = 0;
      for (const char *p = name; *p && n + 1 < sizeof buf; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
        if (ok) buf[n++] = *p;
        else if (n > 0 && buf[n - 1] != '_') buf[n++] = '_';
      }
      while (n > 0 && buf[n - 1] == '_') n--;
      buf[n] = 0;
      if (!n || (buf[0] >= '0' && buf[0] <= '9')) snprintf(buf, sizeof buf, "d%d", id);
      name = buf;
    }
    c->sym_vars[id] = mlc_tir_var_new(c->tm, name, MLC_DTYPE_I64);
  }
  return c->sym_vars[id] ? mlc_tir_ref(c->tm, c->sym_vars[id]) : NULL;
}

/* Dim |v| (known or a symbol) as an expression; see mlc_lg_call.sym_bound. */
static mlc_tir_expr *dim_expr(mlc_lg_call *c, int64_t v) {
  if (!MLC_DIM_IS_SYM(v)) return mlc_tir_i64(c->tm, v);
  int id = MLC_DIM_SYM_ID(v);
  if (id < 0 || id >= c->gm->nsyms) return NULL;
  const mlc_sym_def *def = &c->gm->sym_defs[id];
  if (c->sym_bound && !c->sym_bound[id] && def->op != MLC_SYM_FREE) {
    mlc_tir_expr *a = dim_expr(c, def->a);
    mlc_tir_expr *b = def->b_sym ? dim_expr(c, def->b) : mlc_tir_i64(c->tm, def->b);
    if (!a || !b) return NULL;
    switch (def->op) {
      case MLC_SYM_ADD: return mlc_tir_add(c->tm, a, b);
      case MLC_SYM_MUL: return mlc_tir_mul(c->tm, a, b);
      case MLC_SYM_FLOORDIV: return mlc_tir_binary(c->tm, MLC_TIR_FLOORDIV, a, b);
      case MLC_SYM_MIN: return mlc_tir_min(c->tm, a, b);
      case MLC_SYM_MAX: return mlc_tir_max(c->tm, a, b);
      default: return a; /* CHECK: the runtime checked it */
    }
  }
  return sym_var(c, id);
}

mlc_tir_expr *mlc_lg_dim(mlc_lg_call *c, const mlc_type *t, int d) {
  int64_t v = t->dims[d];
  if (!MLC_DIM_IS_SYM(v)) return mlc_tir_i64(c->tm, v);
  int id = MLC_DIM_SYM_ID(v);
  if (id < 0 || id >= c->gm->nsyms) return NULL;
  if (c->sym_bound) return dim_expr(c, v);
  return sym_var(c, id);
}

mlc_tir_expr **mlc_lg_shape(mlc_lg_call *c, const mlc_type *t) {
  mlc_tir_expr **s = MLC_ARENA_ARRAY(c->tm->arena, (size_t)(t->rank ? t->rank : 1), mlc_tir_expr *);
  if (!s) return NULL;
  for (int d = 0; d < t->rank; d++)
    if (!(s[d] = mlc_lg_dim(c, t, d))) return NULL;
  return s;
}

mlc_tir_expr *mlc_lg_imm(mlc_lg_call *c, mlc_dtype dtype, double v) {
  if (mlc_dtype_is_float(dtype)) return mlc_tir_float(c->tm, dtype, v);
  if (dtype == MLC_DTYPE_BOOL) return mlc_tir_int(c->tm, dtype, v != 0);
  /* as the evaluator converts: truncated, saturated to 64 bits (a double
  ** beyond them is no valid C cast), then wrapped to the dtype */
  if (v != v) v = 0;
  if (dtype == MLC_DTYPE_U64 && v >= 9223372036854775808.0)
    return mlc_tir_int(c->tm, dtype, v >= 18446744073709551616.0 ? -1 : (int64_t)(uint64_t)v);
  if (v >= 9223372036854775808.0) return mlc_tir_int(c->tm, dtype, INT64_MAX);
  if (v < -9223372036854775808.0) return mlc_tir_int(c->tm, dtype, INT64_MIN);
  return mlc_tir_int(c->tm, dtype, (int64_t)v);
}

mlc_tir_expr *mlc_lg_arg_load(mlc_lg_call *c, int i, mlc_tir_expr *const *idx) {
  if (!c->in[i]) return mlc_lg_imm(c, c->arg_types[i].dtype, c->scalar[i]);
  return mlc_te_load(c->b, c->in[i], c->arg_types[i].rank, idx);
}

mlc_tir_expr *mlc_lg_arg_bcast(mlc_lg_call *c, int i, int rank, mlc_tir_expr *const *idx) {
  const mlc_type *t = &c->arg_types[i];
  if (!c->in[i]) return mlc_lg_imm(c, t->dtype, c->scalar[i]);
  mlc_tir_expr *ix[16];
  if (t->rank > 16 || t->rank > rank)
    return mlc_te_fail(c->b, mlc_lg_error(c, MLC_INTERNAL, "argument %d of rank %d read at rank %d", i,
                                          t->rank, rank));
  int off = rank - t->rank;
  /* a dim of extent 1 is read at 0, unless the output's dim is 1 too: then
  ** the index is the output's (the same element), and a consumer reads its
  ** producer through its own iteration variables, as the schedule's
  ** compute_at and reverse_compute_inline of fused kernels need */
  const mlc_type *o = c->nouts > 0 && c->out_types[0].rank == rank ? &c->out_types[0] : NULL;
  for (int d = 0; d < t->rank; d++)
    ix[d] = t->dims[d] == 1 && !(o && o->dims[off + d] == 1) ? mlc_tir_i64(c->tm, 0) : idx[off + d];
  return mlc_te_load(c->b, c->in[i], t->rank, ix);
}

mlc_status mlc_lg_compute(mlc_lg_call *c, int k, const char *name, mlc_te_body_fn fn,
                          mlc_te_tensor **out) {
  const mlc_type *t = &c->out_types[k];
  mlc_tir_expr **shape = mlc_lg_shape(c, t);
  if (!shape) return mlc_oom();
  return mlc_te_compute(c->b, name, t->rank, shape, NULL, fn, c, out);
}

/* ---- checks of model data ------------------------------------------------ */

const char *mlc_lg_onnx_op(mlc_lg_call *c) {
  const char *t = c->binding ? c->binding->origin.op_type : NULL;
  size_t n = t ? strlen(t) : 0;
  int plain = n > 0 && n < 64;
  for (size_t i = 0; plain && i < n; i++)
    plain = (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9') ||
            t[i] == '_';
  return mlc_arena_strdup(c->tm->arena, plain ? t : mlc_op_name[c->op]);
}

mlc_tir_stmt *mlc_lg_assert_range(mlc_lg_call *c, mlc_tir_expr *v, mlc_tir_expr *lo, mlc_tir_expr *hi,
                                  const char *what, const char *where) {
  mlc_tir_module *m = c->tm;
  char msg[256];
  snprintf(msg, sizeof msg, "%s $0 out of range [$1, $2)%s", what, where ? where : "");
  mlc_tir_expr *off = mlc_tir_cast(m, MLC_DTYPE_U64, mlc_tir_sub(m, v, lo));
  mlc_tir_expr *len = mlc_tir_cast(m, MLC_DTYPE_U64, mlc_tir_sub(m, hi, lo));
  mlc_tir_expr *vals[3] = {v, lo, hi};
  return mlc_tir_assert(m, mlc_tir_binary(m, MLC_TIR_LT, off, len), mlc_lg_onnx_op(c), msg, 3, vals);
}

typedef struct ix_check {
  mlc_lg_call *c;
  int arg, axis, nd;
} ix_check;

static mlc_tir_stmt *ix_check_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  ix_check *k = user;
  mlc_lg_call *c = k->c;
  const mlc_type *it = &c->arg_types[k->arg];
  int q = it->rank, n = k->nd ? (int)it->dims[q - 1] : 1;
  mlc_tir_expr *ii[16];
  mlc_tir_stmt *asserts[16];
  if (q > 16 || n > 16) { /* mlc_lg_check_indices rejects these first */
    mlc_te_fail(b, mlc_lg_error(c, MLC_INTERNAL, "indices of rank %d", q));
    return NULL;
  }
  for (int d = 0; d < (k->nd ? q - 1 : q); d++) ii[d] = idx[d];
  for (int t = 0; t < n; t++) {
    int axis = k->axis + (k->nd ? t : 0);
    char where[32];
    if (k->nd) ii[q - 1] = mlc_tir_i64(c->tm, t);
    mlc_tir_expr *v = mlc_tir_cast(c->tm, MLC_DTYPE_I64, mlc_lg_arg_load(c, k->arg, ii));
    mlc_tir_expr *ext = mlc_lg_dim(c, &c->arg_types[0], axis);
    snprintf(where, sizeof where, " on axis %d", axis);
    asserts[t] = mlc_lg_assert_range(c, v, mlc_tir_sub(c->tm, mlc_tir_i64(c->tm, 0), ext), ext, "index", where);
  }
  return mlc_tir_seq(c->tm, n, asserts);
}

mlc_status mlc_lg_check_indices(mlc_lg_call *c, int arg, int axis, int nd) {
  const mlc_type *it = &c->arg_types[arg];
  int q = it->rank;
  if (q > 16 || (nd && (q < 1 || it->dims[q - 1] < 1 || it->dims[q - 1] > 16)))
    return mlc_lg_error(c, MLC_UNIMPLEMENTED, "indices of rank %d", q);
  ix_check k = {c, arg, axis, nd};
  mlc_tir_expr **shape = mlc_lg_shape(c, it);
  if (!shape) return mlc_oom();
  return mlc_te_check(c->b, "T_check_indices", nd ? q - 1 : q, shape, ix_check_body, &k);
}

typedef struct val_check {
  mlc_lg_call *c;
  int arg;
  mlc_tir_expr *lo, *hi;
  const char *what, *where;
} val_check;

static mlc_tir_stmt *val_check_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  val_check *k = user;
  (void)b;
  mlc_tir_expr *v = mlc_tir_cast(k->c->tm, MLC_DTYPE_I64, mlc_lg_arg_load(k->c, k->arg, idx));
  return mlc_lg_assert_range(k->c, v, k->lo, k->hi, k->what, k->where);
}

mlc_status mlc_lg_check_values(mlc_lg_call *c, int arg, mlc_tir_expr *lo, mlc_tir_expr *hi, const char *what,
                               const char *where) {
  const mlc_type *t = &c->arg_types[arg];
  if (t->rank > 16) return mlc_lg_error(c, MLC_UNIMPLEMENTED, "argument %d of rank %d", arg, t->rank);
  val_check k = {c, arg, lo, hi, what, where};
  mlc_tir_expr **shape = mlc_lg_shape(c, t);
  if (!shape || !lo || !hi) return mlc_oom();
  return mlc_te_check(c->b, "T_check_values", t->rank, shape, val_check_body, &k);
}

/* ---- the pass ------------------------------------------------------------ */

/* A scalar constant that may become an immediate: one element, exactly
** representable as a double. */
static int inline_scalar(const mlc_module *gm, const mlc_binding *b, int i, double *out) {
  if (mlc_op_pattern[b->op] > MLC_PATTERN_BROADCAST) return 0;
  const mlc_const *k = mlc_value_const(gm, b->args[i]);
  if (!k || mlc_type_numel(&k->type) != 1) return 0;
  const void *p = k->data;
  switch (k->type.dtype) {
    case MLC_DTYPE_F32: *out = *(const float *)p; return 1;
    case MLC_DTYPE_F64: *out = *(const double *)p; return 1;
    case MLC_DTYPE_I8: *out = *(const int8_t *)p; return 1;
    case MLC_DTYPE_I16: *out = *(const int16_t *)p; return 1;
    case MLC_DTYPE_I32: *out = *(const int32_t *)p; return 1;
    case MLC_DTYPE_U8: *out = *(const uint8_t *)p; return 1;
    case MLC_DTYPE_U16: *out = *(const uint16_t *)p; return 1;
    case MLC_DTYPE_U32: *out = *(const uint32_t *)p; return 1;
    case MLC_DTYPE_BOOL: *out = *(const uint8_t *)p != 0; return 1;
    case MLC_DTYPE_I64: {
      int64_t v = *(const int64_t *)p;
      if (v > (1LL << 53) || v < -(1LL << 53)) return 0;
      *out = (double)v;
      return 1;
    }
    default: return 0; /* f16/bf16/u64: keep as a tensor */
  }
}

static void key_type(const mlc_module *gm, const mlc_type *t, mlc_strbuf *k) {
  mlc_sb_printf(k, "%s[", mlc_dtype_name(t->dtype));
  for (int d = 0; d < t->rank; d++) {
    if (MLC_DIM_IS_SYM(t->dims[d]))
      mlc_sb_printf(k, "%s$,", mlc_module_sym_name(gm, t->dims[d]));
    else
      mlc_sb_printf(k, "%lld,", (long long)t->dims[d]);
  }
  mlc_sb_putc(k, ']');
}

/* Ops whose kernels check model data: their messages name the ONNX op,
** which is then part of the key (Scatter and ScatterElements share an op). */
static const unsigned char checks_data[MLC_OP_COUNT] = {
    [MLC_OP_GATHER] = 1,           [MLC_OP_GATHER_ELEMENTS] = 1, [MLC_OP_GATHER_ND] = 1,
    [MLC_OP_SCATTER_ELEMENTS] = 1, [MLC_OP_SCATTER_ND] = 1,      [MLC_OP_MAX_UNPOOL] = 1,
    [MLC_OP_ROI_ALIGN] = 1,        [MLC_OP_REVERSE_SEQUENCE] = 1, [MLC_OP_CUMSUM] = 1,
};

/* Canonical text of a call: equal keys give equal prim functions. */
static void call_key(const mlc_module *gm, const mlc_binding *b, const int *inl,
                     const double *scalar, mlc_strbuf *k) {
  mlc_sb_printf(k, "%s(", mlc_op_name[b->op]);
  if (checks_data[b->op] && b->origin.op_type) {
    mlc_sb_puts(k, "onnx:");
    mlc_sb_json_str(k, b->origin.op_type);
    mlc_sb_putc(k, ';');
  }
  for (int i = 0; i < b->nargs; i++) {
    if (inl[i]) {
      mlc_sb_puts(k, "imm:");
      mlc_sb_double(k, scalar[i]);
      mlc_sb_putc(k, ':');
    }
    key_type(gm, &b->args[i]->type, k);
    mlc_sb_putc(k, ';');
  }
  mlc_sb_puts(k, ")->");
  for (int i = 0; i < b->nouts; i++) key_type(gm, &b->outs[i]->type, k);
  for (int i = 0; i < b->nattrs; i++) {
    const mlc_attr *a = &b->attrs[i];
    mlc_sb_printf(k, "|%s=", a->name);
    switch (a->kind) {
      case MLC_ATTR_INT: mlc_sb_printf(k, "%lld", (long long)a->i); break;
      case MLC_ATTR_FLOAT: mlc_sb_double(k, a->f); break;
      case MLC_ATTR_STRING: mlc_sb_json_str(k, a->s); break;
      case MLC_ATTR_INTS:
        for (int j = 0; j < a->n; j++) mlc_sb_printf(k, "%lld,", (long long)a->ints[j]);
        break;
      case MLC_ATTR_FLOATS:
        for (int j = 0; j < a->n; j++) {
          mlc_sb_double(k, a->floats[j]);
          mlc_sb_putc(k, ',');
        }
        break;
    }
  }
}

int mlc_lg_inline_scalar(const mlc_module *gm, const mlc_binding *b, int i, double *out) {
  return inline_scalar(gm, b, i, out);
}

void mlc_lg_call_key(const mlc_module *gm, const mlc_binding *b, const int *inl, const double *scalar,
                     mlc_strbuf *k) {
  call_key(gm, b, inl, scalar, k);
}

typedef struct lg_state {
  mlc_module *gm;
  mlc_tir_module *tm;
  mlc_hash by_key;   /* key -> prim func name (arena strings) */
  mlc_hash names;    /* used names */
  mlc_hash next;     /* base name -> int *: the first suffix not known taken */
  int vector_bits;   /* the target's (mlc_lower_options) */
} lg_state;

/* The first of |base|, |base|1, |base|2, ... not in |names| yet, added to
** it.  Names are only ever added, so the search for one base resumes where
** its last one ended (|next|: base -> the first suffix not known taken). */
const char *mlc_lg_fresh_name(mlc_tir_module *tm, mlc_hash *names, mlc_hash *next, const char *base) {
  int *nx = mlc_hash_get(next, base);
  if (!nx) {
    char *key = mlc_arena_strdup(tm->arena, base);
    nx = MLC_ARENA_NEW(tm->arena, int);
    if (!key || !nx || mlc_hash_put(next, key, nx)) return NULL;
  }
  char buf[160];
  int k = *nx;
  for (;; k++) {
    if (k == 0) snprintf(buf, sizeof buf, "%s", base);
    else snprintf(buf, sizeof buf, "%s%d", base, k);
    if (!mlc_hash_get(names, buf)) break;
  }
  *nx = k + 1;
  char *s = mlc_arena_strdup(tm->arena, buf);
  if (s && mlc_hash_put(names, s, s)) return NULL;
  return s;
}

/* ---- pieces of building a kernel, shared with fuse_tir -------------------- */

void mlc_lg_input_name(int i, char *buf, size_t n) {
  if (i < 26)
    snprintf(buf, n, "%c", 'A' + i);
  else
    snprintf(buf, n, "A%d", i);
}

mlc_status mlc_lg_apply_rule(mlc_lg_call *c, mlc_te_tensor **outs) {
  mlc_lg_fn rule = mlc_lg_rule(c->op);
  if (!rule) return mlc_lg_error(c, MLC_UNIMPLEMENTED, "no lowering rule for this op");
  MLC_RETURN_IF_ERROR(rule(c, outs));
  for (int i = 0; i < c->nouts; i++)
    if (!outs[i]) return mlc_lg_error(c, MLC_INTERNAL, "rule produced no output %d", i);
  return NULL;
}

mlc_status mlc_lg_name_error(mlc_lg_call *c, mlc_status s) {
  if (!s || strstr(mlc_status_message(s), "lowering ")) return s;
  mlc_status w = mlc_lg_error(c, mlc_status_code(s), "%s", mlc_status_message(s));
  mlc_status_free(s);
  return w;
}

/* Builds the prim function for |b| named |name|. */
static mlc_status build_func(lg_state *st, mlc_binding *b, const int *inl, const double *scalar,
                             const char *name) {
  mlc_type arg_types[64], out_types[MLC_MAX_OUTS];
  mlc_te_tensor *in[64], *ins[64], *outs[MLC_MAX_OUTS] = {0};
  mlc_tir_var *syms[256] = {0};
  mlc_lg_call c = {st->gm, st->tm, NULL, b->op, b, b->nargs, arg_types, b->attrs, b->nattrs,
                   b->nouts, out_types, in, scalar, syms, name};
  if (!mlc_lg_rule(b->op)) return mlc_lg_error(&c, MLC_UNIMPLEMENTED, "no lowering rule for this op");
  if (b->nargs > 64 || st->gm->nsyms > 256)
    return mlc_lg_error(&c, MLC_UNIMPLEMENTED, "too many arguments or symbolic dims");
  unsigned char bound[256] = {0};
  for (int i = 0; i < b->nargs; i++) arg_types[i] = b->args[i]->type;
  for (int i = 0; i < b->nouts; i++) out_types[i] = b->outs[i]->type;
  for (int i = 0; i < b->nargs; i++)
    if (!inl[i]) mlc_lg_mark_syms(&arg_types[i], bound);
  for (int i = 0; i < b->nouts; i++) mlc_lg_mark_syms(&out_types[i], bound);
  c.sym_bound = bound;
  c.vector_bits = st->vector_bits;
  for (int i = 0; i < b->nargs + b->nouts; i++) {
    mlc_dtype t = i < b->nargs ? arg_types[i].dtype : out_types[i - b->nargs].dtype;
    if (mlc_dtype_size(t) == 0) /* strings have no TIR representation */
      return mlc_lg_error(&c, MLC_UNIMPLEMENTED, "no lowering for %s tensors", mlc_dtype_name(t));
  }

  mlc_status s = mlc_te_builder_create(st->tm, &c.b);
  if (s) return s;
  int nin = 0;
  for (int i = 0; i < b->nargs && !s; i++) {
    in[i] = NULL;
    if (inl[i]) continue;
    char pname[16];
    mlc_lg_input_name(i, pname, sizeof pname);
    mlc_tir_expr **shape = mlc_lg_shape(&c, &arg_types[i]);
    if (!shape) s = mlc_oom();
    else s = mlc_te_placeholder(c.b, pname, arg_types[i].rank, shape, arg_types[i].dtype, &in[i]);
    if (!s) ins[nin++] = in[i];
  }
  if (!s) s = mlc_lg_apply_rule(&c, outs);
  mlc_tir_func *f = NULL;
  if (!s) s = mlc_te_create_prim_func(c.b, name, b->nouts, outs, nin, ins, &f);
  if (!s) s = mlc_tir_module_add(st->tm, f);
  mlc_te_builder_destroy(c.b);
  return mlc_lg_name_error(&c, s);
}

static mlc_status legalize_binding(lg_state *st, mlc_binding *b) {
  int inl[64] = {0};
  double scalar[64] = {0};
  int builtin;
  MLC_RETURN_IF_ERROR(mlc_lg_builtin(st->gm, b, &builtin)); /* run-time shapes */
  if (builtin) return NULL;
  if (b->nargs > 64) return mlc_make_status(MLC_UNIMPLEMENTED, "call with %d arguments", b->nargs);
  int ninl = 0;
  for (int i = 0; i < b->nargs; i++) ninl += inl[i] = inline_scalar(st->gm, b, i, &scalar[i]);
  if (ninl == b->nargs) { /* keep at least one tensor argument */
    inl[0] = 0;
    ninl--;
  }
  mlc_strbuf key = MLC_STRBUF_INIT;
  call_key(st->gm, b, inl, scalar, &key);
  if (key.oom) {
    mlc_sb_fini(&key);
    return mlc_oom();
  }
  const char *name = mlc_hash_get(&st->by_key, mlc_sb_str(&key));
  mlc_status s = NULL;
  if (!name) {
    char base[64];
    snprintf(base, sizeof base, "%s", mlc_op_name[b->op]);
    name = mlc_lg_fresh_name(st->tm, &st->names, &st->next, base);
    char *k = mlc_arena_strdup(st->tm->arena, mlc_sb_str(&key));
    if (!name || !k || mlc_hash_put(&st->by_key, k, (void *)name)) s = mlc_oom();
    if (!s) s = build_func(st, b, inl, scalar, name);
  }
  mlc_sb_fini(&key);
  if (s) return s;
  /* Rewrite in place: call_tir(name, tensor args). */
  mlc_value *args[64];
  int n = 0;
  for (int i = 0; i < b->nargs; i++)
    if (!inl[i]) args[n++] = b->args[i];
  return mlc_binding_set_call(st->gm, b, MLC_CALL_TIR, name, args, n);
}

mlc_status mlc_lower_legalize(mlc_module *gm, mlc_tir_module *tm, const mlc_lower_options *opt) {
  lg_state st = {gm, tm, MLC_HASH_INIT, MLC_HASH_INIT, MLC_HASH_INIT, opt ? opt->vector_bits : 0};
  int first = tm->nfuncs;
  for (int i = 0; i < tm->nfuncs; i++)
    if (mlc_hash_put(&st.names, tm->funcs[i]->name, tm->funcs[i])) return mlc_oom();
  mlc_status s = NULL;
  for (int fi = 0; fi < gm->nfuncs && !s; fi++) {
    mlc_func *f = gm->funcs[fi];
    for (int bi = 0; bi < f->nblocks && !s; bi++)
      for (int k = 0; k < f->blocks[bi].n && !s; k++) {
        mlc_binding *b = f->blocks[bi].bindings[k];
        if (b->kind == MLC_CALL_OP) s = legalize_binding(&st, b);
      }
  }
  mlc_hash_fini(&st.by_key);
  mlc_hash_fini(&st.names);
  mlc_hash_fini(&st.next);
  /* the new prim functions' blocks get their access regions (T.reads / T.writes) */
  for (int i = first; i < tm->nfuncs && !s; i++) s = mlc_tir_func_compute_regions(tm, tm->funcs[i]);
  return s;
}
