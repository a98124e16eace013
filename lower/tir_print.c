/*
** tir_print.c: TVMScript-like text for TIR modules, functions, statements
** and expressions (format in tir.h).
**
** Output is deterministic: it depends only on the tree.  Names come from the
** variables and buffers; where a name would shadow a different variable (or
** buffer) of the same name that is still in scope, a suffix _1, _2, ... is
** added, in order of definition.
*/
#include <math.h>
#include <string.h>

#include "base/arena.h"
#include "base/vec.h"
#include "lower/tir.h"

typedef struct binding {
  const void *key; /* mlc_tir_var* or mlc_tir_buffer* */
  const char *name;
} binding;

typedef struct printer {
  mlc_strbuf *out;
  mlc_arena *names; /* suffixed names; NULL when out of memory */
  MLC_VEC(binding) scope;
} printer;

/* ---- names ---------------------------------------------------------------- */

static const char *lookup(const printer *p, const void *key, const char *fallback) {
  for (size_t i = p->scope.len; i-- > 0;)
    if (p->scope.data[i].key == key) return p->scope.data[i].name;
  return fallback;
}

static int name_taken(const printer *p, const char *name, const void *key) {
  for (size_t i = p->scope.len; i-- > 0;)
    if (p->scope.data[i].key != key && strcmp(p->scope.data[i].name, name) == 0) return 1;
  return 0;
}

/* Brings |key| into scope under |base| (suffixed when taken). */
static const char *define(printer *p, const void *key, const char *base) {
  const char *name = base;
  if (name_taken(p, base, key) && p->names) {
    for (int k = 1; k < 1000000; k++) {
      char *cand = mlc_arena_printf(p->names, "%s_%d", base, k);
      if (!cand) break;
      if (!name_taken(p, cand, key)) {
        name = cand;
        break;
      }
    }
  }
  binding b = {key, name};
  if (mlc_vec_push(&p->scope, b)) p->out->oom = 1;
  return name;
}

static void pop_to(printer *p, size_t mark) {
  if (p->scope.len > mark) p->scope.len = mark;
}

static const char *var_name(const printer *p, const mlc_tir_var *v) { return lookup(p, v, v->name); }
static const char *buf_name(const printer *p, const mlc_tir_buffer *b) { return lookup(p, b, b->name); }

static void indent(printer *p, int n) {
  for (int i = 0; i < n; i++) mlc_sb_puts(p->out, "    ");
}

/* ---- expressions ------------------------------------------------------------ */

/* Python precedences. */
enum { P_OR = 1, P_AND = 2, P_NOT = 3, P_CMP = 4, P_ADD = 6, P_MUL = 7, P_UNARY = 8, P_ATOM = 10 };

static void pexpr(printer *p, const mlc_tir_expr *e, int min_prec);

static int binop_prec(mlc_tir_binop op, mlc_dtype t) {
  switch (op) {
    case MLC_TIR_ADD:
    case MLC_TIR_SUB: return P_ADD;
    case MLC_TIR_MUL:
    case MLC_TIR_DIV:
    case MLC_TIR_FLOORDIV:
    case MLC_TIR_FLOORMOD: return P_MUL;
    case MLC_TIR_EQ:
    case MLC_TIR_NE:
    case MLC_TIR_LT:
    case MLC_TIR_LE:
    case MLC_TIR_GT:
    case MLC_TIR_GE: return P_CMP;
    case MLC_TIR_AND: return t == MLC_DTYPE_BOOL ? P_AND : P_ATOM;
    case MLC_TIR_OR: return t == MLC_DTYPE_BOOL ? P_OR : P_ATOM;
    default: return P_ATOM; /* printed as a call */
  }
}

static int expr_prec(const mlc_tir_expr *e) {
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
      return (e->dtype == MLC_DTYPE_I64 && e->int_value < 0) ? P_UNARY : P_ATOM;
    case MLC_TIR_BINARY: return binop_prec(e->bin.op, e->bin.a->dtype);
    case MLC_TIR_NOT: return e->dtype == MLC_DTYPE_BOOL ? P_NOT : P_ATOM;
    default: return P_ATOM;
  }
}

static void pfloat(printer *p, mlc_dtype t, double v) {
  mlc_sb_printf(p->out, "T.%s(", mlc_dtype_name(t));
  if (isnan(v)) mlc_sb_puts(p->out, "\"nan\"");
  else if (isinf(v)) mlc_sb_puts(p->out, v > 0 ? "\"inf\"" : "\"-inf\"");
  else mlc_sb_double(p->out, v);
  mlc_sb_putc(p->out, ')');
}

static void pint(printer *p, mlc_dtype t, int64_t v) {
  if (t == MLC_DTYPE_I64) mlc_sb_printf(p->out, "%lld", (long long)v);
  else if (t == MLC_DTYPE_BOOL) mlc_sb_puts(p->out, v ? "True" : "False");
  else if (t == MLC_DTYPE_U64) mlc_sb_printf(p->out, "T.uint64(%llu)", (unsigned long long)v);
  else mlc_sb_printf(p->out, "T.%s(%lld)", mlc_dtype_name(t), (long long)v);
}

static void pargs(printer *p, int n, mlc_tir_expr *const *args) {
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_puts(p->out, ", ");
    pexpr(p, args[i], 0);
  }
}

static void pindices(printer *p, const mlc_tir_buffer *b, int n, mlc_tir_expr *const *idx) {
  mlc_sb_printf(p->out, "%s[", buf_name(p, b));
  if (n == 0) mlc_sb_puts(p->out, "()");
  pargs(p, n, idx);
  mlc_sb_putc(p->out, ']');
}

static void pexpr(printer *p, const mlc_tir_expr *e, int min_prec) {
  if (!e) {
    mlc_sb_puts(p->out, "<null>");
    return;
  }
  int prec = expr_prec(e);
  int paren = prec < min_prec;
  if (paren) mlc_sb_putc(p->out, '(');
  switch (e->kind) {
    case MLC_TIR_INT_IMM: pint(p, e->dtype, e->int_value); break;
    case MLC_TIR_FLOAT_IMM: pfloat(p, e->dtype, e->float_value); break;
    case MLC_TIR_VAR_REF: mlc_sb_puts(p->out, var_name(p, e->var)); break;
    case MLC_TIR_BINARY: {
      mlc_tir_binop op = e->bin.op;
      if (prec == P_ATOM) {
        const char *fn = mlc_tir_binop_name(op);
        if (op == MLC_TIR_AND) fn = "T.bitwise_and";
        else if (op == MLC_TIR_OR) fn = "T.bitwise_or";
        mlc_sb_printf(p->out, "%s(", fn);
        pexpr(p, e->bin.a, 0);
        mlc_sb_puts(p->out, ", ");
        pexpr(p, e->bin.b, 0);
        mlc_sb_putc(p->out, ')');
      } else {
        /* left-associative; comparisons do not chain */
        pexpr(p, e->bin.a, prec == P_CMP ? prec + 1 : prec);
        mlc_sb_printf(p->out, " %s ", mlc_tir_binop_name(op));
        pexpr(p, e->bin.b, prec + 1);
      }
      break;
    }
    case MLC_TIR_NOT:
      if (e->dtype == MLC_DTYPE_BOOL) {
        mlc_sb_puts(p->out, "not ");
        pexpr(p, e->un.a, P_NOT);
      } else {
        mlc_sb_puts(p->out, "T.bitwise_not(");
        pexpr(p, e->un.a, 0);
        mlc_sb_putc(p->out, ')');
      }
      break;
    case MLC_TIR_SELECT:
      mlc_sb_puts(p->out, "T.if_then_else(");
      pexpr(p, e->select.c, 0);
      mlc_sb_puts(p->out, ", ");
      pexpr(p, e->select.t, 0);
      mlc_sb_puts(p->out, ", ");
      pexpr(p, e->select.f, 0);
      mlc_sb_putc(p->out, ')');
      break;
    case MLC_TIR_CAST: {
      char t[32];
      mlc_sb_printf(p->out, "T.Cast(\"%s\", ", mlc_tir_dtype_str(e->dtype, e->lanes, t, sizeof t));
      pexpr(p, e->un.a, 0);
      mlc_sb_putc(p->out, ')');
      break;
    }
    case MLC_TIR_LOAD: pindices(p, e->load.buffer, e->load.n, e->load.indices); break;
    case MLC_TIR_CALL:
      mlc_sb_printf(p->out, "T.%s(", mlc_tir_intrin_name(e->call.op));
      pargs(p, e->call.n, e->call.args);
      mlc_sb_putc(p->out, ')');
      break;
    case MLC_TIR_REDUCE: {
      size_t mark = p->scope.len;
      mlc_sb_printf(p->out, "T.%s(", mlc_tir_reduce_op_name(e->reduce.op));
      for (int i = 0; i < e->reduce.naxes; i++) define(p, e->reduce.axes[i].var, e->reduce.axes[i].var->name);
      pexpr(p, e->reduce.source, 0);
      mlc_sb_puts(p->out, ", axis=[");
      for (int i = 0; i < e->reduce.naxes; i++) {
        const mlc_tir_iter_var *a = &e->reduce.axes[i];
        if (i) mlc_sb_puts(p->out, ", ");
        mlc_sb_printf(p->out, "%s(", var_name(p, a->var));
        if (!mlc_tir_is_const(a->min, 0)) {
          pexpr(p, a->min, 0);
          mlc_sb_puts(p->out, ", ");
        }
        pexpr(p, a->extent, 0);
        mlc_sb_putc(p->out, ')');
      }
      mlc_sb_puts(p->out, "])");
      pop_to(p, mark);
      break;
    }
    case MLC_TIR_RAMP:
      mlc_sb_puts(p->out, "T.Ramp(");
      pexpr(p, e->ramp.base, 0);
      mlc_sb_puts(p->out, ", ");
      pexpr(p, e->ramp.stride, 0);
      mlc_sb_printf(p->out, ", %d)", e->lanes);
      break;
    case MLC_TIR_BROADCAST:
      mlc_sb_puts(p->out, "T.Broadcast(");
      pexpr(p, e->un.a, 0);
      mlc_sb_printf(p->out, ", %d)", e->lanes);
      break;
  }
  if (paren) mlc_sb_putc(p->out, ')');
}

/* ---- statements ------------------------------------------------------------- */

static void pstmt(printer *p, const mlc_tir_stmt *s, int ind);

/* "ext" when min is 0, else "min, min + ext" (folded when constant). */
static void prange(printer *p, const mlc_tir_expr *mn, const mlc_tir_expr *ext) {
  if (mlc_tir_is_const(mn, 0)) {
    pexpr(p, ext, 0);
    return;
  }
  pexpr(p, mn, 0);
  mlc_sb_puts(p->out, ", ");
  if (mn->kind == MLC_TIR_INT_IMM && ext->kind == MLC_TIR_INT_IMM && mn->dtype == ext->dtype) {
    pint(p, ext->dtype, (int64_t)((uint64_t)mn->int_value + (uint64_t)ext->int_value));
  } else {
    pexpr(p, mn, P_ADD);
    mlc_sb_puts(p->out, " + ");
    pexpr(p, ext, P_ADD + 1);
  }
}

static int is_grid_loop(const mlc_tir_stmt *s) {
  return s && s->kind == MLC_TIR_FOR && s->loop.kind == MLC_TIR_FOR_SERIAL && s->loop.nannots == 0 &&
         mlc_tir_is_const(s->loop.min, 0);
}

/* An attribute value: "string", True / False, an integer, a float (always
** with a '.' or an exponent, so it reads back as a float). */
static void pattr_value(printer *p, const mlc_tir_attr *a) {
  switch (a->kind) {
    case MLC_TIR_ATTR_STR: mlc_sb_json_str(p->out, a->s ? a->s : ""); break;
    case MLC_TIR_ATTR_BOOL: mlc_sb_puts(p->out, a->i ? "True" : "False"); break;
    case MLC_TIR_ATTR_INT: mlc_sb_printf(p->out, "%lld", (long long)a->i); break;
    case MLC_TIR_ATTR_FLOAT: {
      if (isnan(a->f) || isinf(a->f)) {
        mlc_sb_printf(p->out, "T.float64(\"%s\")", isnan(a->f) ? "nan" : a->f > 0 ? "inf" : "-inf");
        break;
      }
      size_t at = p->out->len;
      mlc_sb_double(p->out, a->f);
      if (!p->out->oom && !strpbrk(p->out->data + at, ".eE")) mlc_sb_puts(p->out, ".0");
      break;
    }
  }
}

/* {"key": value, ...} of annotations. */
static void pannots(printer *p, int n, const mlc_tir_attr *a) {
  mlc_sb_putc(p->out, '{');
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_puts(p->out, ", ");
    mlc_sb_json_str(p->out, a[i].key);
    mlc_sb_puts(p->out, ": ");
    pattr_value(p, &a[i]);
  }
  mlc_sb_putc(p->out, '}');
}

static void pfor(printer *p, const mlc_tir_stmt *s, int ind) {
  size_t mark = p->scope.len;
  /* Perfectly nested serial loops from 0 whose extents do not use the
  ** chain's variables print as one T.grid. */
  const mlc_tir_stmt *chain[64];
  int n = 0;
  for (const mlc_tir_stmt *c = s; is_grid_loop(c) && n < 64; c = c->loop.body) {
    int dep = 0;
    for (int i = 0; i < n; i++)
      if (mlc_tir_expr_uses_var(c->loop.extent, chain[i]->loop.var)) dep = 1;
    if (dep) break;
    chain[n++] = c;
  }
  indent(p, ind);
  if (n >= 2) {
    mlc_sb_puts(p->out, "for ");
    for (int i = 0; i < n; i++) {
      if (i) mlc_sb_puts(p->out, ", ");
      mlc_sb_puts(p->out, define(p, chain[i]->loop.var, chain[i]->loop.var->name));
    }
    mlc_sb_puts(p->out, " in T.grid(");
    for (int i = 0; i < n; i++) {
      if (i) mlc_sb_puts(p->out, ", ");
      pexpr(p, chain[i]->loop.extent, 0);
    }
    mlc_sb_puts(p->out, "):\n");
    pstmt(p, chain[n - 1]->loop.body, ind + 1);
    pop_to(p, mark);
    return;
  }
  /* the range reads the enclosing scope; a shadowing loop variable gets a
  ** suffix, so defining it first does not change how the range prints */
  const char *name = define(p, s->loop.var, s->loop.var->name);
  mlc_sb_printf(p->out, "for %s in ", name);
  switch (s->loop.kind) {
    case MLC_TIR_FOR_SERIAL: mlc_sb_puts(p->out, s->loop.nannots ? "T.serial(" : "range("); break;
    case MLC_TIR_FOR_PARALLEL:
    case MLC_TIR_FOR_VECTORIZED:
    case MLC_TIR_FOR_UNROLLED:
    case MLC_TIR_FOR_THREAD_BINDING:
      mlc_sb_printf(p->out, "T.%s(", mlc_tir_for_kind_name(s->loop.kind));
      break;
  }
  prange(p, s->loop.min, s->loop.extent);
  if (s->loop.kind == MLC_TIR_FOR_THREAD_BINDING) {
    mlc_sb_puts(p->out, ", thread=");
    mlc_sb_json_str(p->out, s->loop.thread ? s->loop.thread : "");
  }
  if (s->loop.nannots) {
    mlc_sb_puts(p->out, ", annotations=");
    pannots(p, s->loop.nannots, s->loop.annots);
  }
  mlc_sb_puts(p->out, "):\n");
  pstmt(p, s->loop.body, ind + 1);
  pop_to(p, mark);
}

static void pregions(printer *p, const char *what, int n, const mlc_tir_region *r, int ind) {
  indent(p, ind);
  mlc_sb_printf(p->out, "T.%s(", what);
  for (int i = 0; i < n; i++) {
    if (i) mlc_sb_puts(p->out, ", ");
    mlc_sb_printf(p->out, "%s[", buf_name(p, r[i].buffer));
    for (int d = 0; d < r[i].n; d++) {
      if (d) mlc_sb_puts(p->out, ", ");
      pexpr(p, r[i].min[d], 0);
      if (!mlc_tir_is_const(r[i].extent[d], 1)) {
        mlc_sb_putc(p->out, ':');
        if (r[i].min[d]->kind == MLC_TIR_INT_IMM && r[i].extent[d]->kind == MLC_TIR_INT_IMM) {
          pint(p, r[i].extent[d]->dtype,
               (int64_t)((uint64_t)r[i].min[d]->int_value + (uint64_t)r[i].extent[d]->int_value));
        } else {
          pexpr(p, r[i].min[d], P_ADD);
          mlc_sb_puts(p->out, " + ");
          pexpr(p, r[i].extent[d], P_ADD + 1);
        }
      }
    }
    mlc_sb_putc(p->out, ']');
  }
  mlc_sb_puts(p->out, ")\n");
}

static void pblock(printer *p, const mlc_tir_stmt *s, int ind) {
  size_t mark = p->scope.len;
  indent(p, ind);
  mlc_sb_puts(p->out, "with T.block(");
  mlc_sb_json_str(p->out, s->block.name);
  mlc_sb_puts(p->out, "):\n");
  for (int i = 0; i < s->block.niters; i++) {
    const mlc_tir_iter_var *it = &s->block.iters[i];
    indent(p, ind + 1);
    mlc_sb_printf(p->out, "%s = T.axis.%s(", define(p, it->var, it->var->name),
                  it->kind == MLC_TIR_ITER_REDUCE ? "reduce" : "spatial");
    if (mlc_tir_is_const(it->min, 0)) {
      pexpr(p, it->extent, 0);
    } else {
      mlc_sb_putc(p->out, '(');
      prange(p, it->min, it->extent);
      mlc_sb_putc(p->out, ')');
    }
    mlc_sb_puts(p->out, ", ");
    pexpr(p, it->binding, 0);
    mlc_sb_puts(p->out, ")\n");
  }
  if (s->block.predicate) {
    indent(p, ind + 1);
    mlc_sb_puts(p->out, "T.where(");
    pexpr(p, s->block.predicate, 0);
    mlc_sb_puts(p->out, ")\n");
  }
  if (s->block.nreads || s->block.nwrites) {
    pregions(p, "reads", s->block.nreads, s->block.reads, ind + 1);
    pregions(p, "writes", s->block.nwrites, s->block.writes, ind + 1);
  }
  if (s->block.nannots) {
    indent(p, ind + 1);
    mlc_sb_puts(p->out, "T.block_attr(");
    pannots(p, s->block.nannots, s->block.annots);
    mlc_sb_puts(p->out, ")\n");
  }
  if (s->block.init) {
    indent(p, ind + 1);
    mlc_sb_puts(p->out, "with T.init():\n");
    pstmt(p, s->block.init, ind + 2);
  }
  pstmt(p, s->block.body, ind + 1);
  pop_to(p, mark);
}

static void pshape(printer *p, int rank, mlc_tir_expr *const *shape) {
  mlc_sb_putc(p->out, '(');
  pargs(p, rank, shape);
  if (rank == 1) mlc_sb_putc(p->out, ',');
  mlc_sb_putc(p->out, ')');
}

static void pstmt(printer *p, const mlc_tir_stmt *s, int ind) {
  if (!s) {
    indent(p, ind);
    mlc_sb_puts(p->out, "<null>\n");
    return;
  }
  switch (s->kind) {
    case MLC_TIR_FOR: pfor(p, s, ind); break;
    case MLC_TIR_SEQ:
      if (s->seq.n == 0) {
        indent(p, ind);
        mlc_sb_puts(p->out, "T.evaluate(0)\n");
      }
      for (int i = 0; i < s->seq.n; i++) pstmt(p, s->seq.stmts[i], ind);
      break;
    case MLC_TIR_STORE:
      indent(p, ind);
      pindices(p, s->store.buffer, s->store.n, s->store.indices);
      mlc_sb_puts(p->out, " = ");
      pexpr(p, s->store.value, 0);
      mlc_sb_putc(p->out, '\n');
      break;
    case MLC_TIR_IF:
      indent(p, ind);
      mlc_sb_puts(p->out, "if ");
      pexpr(p, s->if_.cond, 0);
      mlc_sb_puts(p->out, ":\n");
      pstmt(p, s->if_.then_s, ind + 1);
      if (s->if_.else_s) {
        indent(p, ind);
        mlc_sb_puts(p->out, "else:\n");
        pstmt(p, s->if_.else_s, ind + 1);
      }
      break;
    case MLC_TIR_ALLOCATE: {
      const mlc_tir_buffer *b = s->alloc.buffer;
      size_t mark = p->scope.len;
      indent(p, ind);
      mlc_strbuf *out = p->out;
      const char *name = define(p, b, b->name);
      mlc_sb_printf(out, "%s = T.alloc_buffer(", name);
      pshape(p, b->rank, b->shape);
      mlc_sb_printf(out, ", \"%s\"", mlc_dtype_name(b->dtype));
      if (b->scope == MLC_TIR_SCOPE_LOCAL) mlc_sb_puts(out, ", scope=\"local\"");
      if (b->scope == MLC_TIR_SCOPE_SHARED) mlc_sb_puts(out, ", scope=\"shared\"");
      mlc_sb_puts(out, ")\n");
      pstmt(p, s->alloc.body, ind);
      pop_to(p, mark);
      break;
    }
    case MLC_TIR_EVALUATE:
      indent(p, ind);
      mlc_sb_puts(p->out, "T.evaluate(");
      pexpr(p, s->eval.value, 0);
      mlc_sb_puts(p->out, ")\n");
      break;
    case MLC_TIR_BLOCK: pblock(p, s, ind); break;
    case MLC_TIR_ASSERT:
      indent(p, ind);
      mlc_sb_puts(p->out, "assert ");
      pexpr(p, s->assert_.cond, 0);
      mlc_sb_puts(p->out, ", (");
      mlc_sb_json_str(p->out, s->assert_.op);
      mlc_sb_puts(p->out, ", ");
      mlc_sb_json_str(p->out, s->assert_.msg);
      for (int i = 0; i < s->assert_.nvals; i++) {
        mlc_sb_puts(p->out, ", ");
        pexpr(p, s->assert_.vals[i], 0);
      }
      mlc_sb_puts(p->out, ")\n");
      break;
  }
}

/* ---- functions ---------------------------------------------------------------- */

static int shape_uses_vars(const mlc_tir_buffer *b) {
  for (int i = 0; i < b->rank; i++)
    if (b->shape[i]->kind != MLC_TIR_INT_IMM) return 1;
  return 0;
}

static void pfunc(printer *p, const mlc_tir_func *f) {
  mlc_strbuf *out = p->out;
  size_t mark = p->scope.len;
  const char *pnames[256];
  int np = f->nparams < 256 ? f->nparams : 256;
  mlc_sb_puts(out, "@T.prim_func\ndef ");
  mlc_sb_puts(out, f->name);
  mlc_sb_putc(out, '(');
  for (int i = 0; i < np; i++) {
    const mlc_tir_buffer *b = f->params[i];
    pnames[i] = define(p, b, b->name);
    if (i) mlc_sb_puts(out, ", ");
    if (shape_uses_vars(b)) {
      mlc_sb_printf(out, "var_%s: T.handle", pnames[i]);
    } else {
      mlc_sb_printf(out, "%s: T.Buffer(", pnames[i]);
      pshape(p, b->rank, b->shape);
      mlc_sb_printf(out, ", \"%s\")", mlc_dtype_name(b->dtype));
    }
  }
  mlc_sb_puts(out, "):\n");
  if (f->nattrs) {
    indent(p, 1);
    mlc_sb_puts(out, "T.func_attr({");
    for (int i = 0; i < f->nattrs; i++) {
      const mlc_tir_attr *a = &f->attrs[i];
      if (i) mlc_sb_puts(out, ", ");
      mlc_sb_json_str(out, a->key);
      mlc_sb_puts(out, ": ");
      pattr_value(p, a);
    }
    mlc_sb_puts(out, "})\n");
  }
  for (int i = 0; i < f->nscalars; i++) {
    const mlc_tir_scalar_param *sp = &f->scalars[i];
    indent(p, 1);
    mlc_sb_printf(out, "%s = T.%s()", define(p, sp->var, sp->var->name), mlc_dtype_name(sp->var->dtype));
    if (sp->param >= 0 && sp->param < np)
      mlc_sb_printf(out, "  # %s.shape[%d]", pnames[sp->param], sp->dim);
    mlc_sb_putc(out, '\n');
  }
  for (int i = 0; i < np; i++) {
    const mlc_tir_buffer *b = f->params[i];
    if (!shape_uses_vars(b)) continue;
    indent(p, 1);
    mlc_sb_printf(out, "%s = T.match_buffer(var_%s, ", pnames[i], pnames[i]);
    pshape(p, b->rank, b->shape);
    mlc_sb_printf(out, ", \"%s\")\n", mlc_dtype_name(b->dtype));
  }
  for (int i = 0; i < f->nviews; i++) {
    const mlc_tir_buffer *b = f->views[i];
    indent(p, 1);
    mlc_sb_printf(out, "%s = T.Buffer(", define(p, b, b->name));
    pshape(p, b->rank, b->shape);
    mlc_sb_printf(out, ", \"%s\", data=%s.data)\n", mlc_dtype_name(b->dtype),
                  b->view_of ? buf_name(p, b->view_of) : "?");
  }
  pstmt(p, f->body, 1);
  pop_to(p, mark);
}

/* ---- entry points --------------------------------------------------------------- */

static void printer_init(printer *p, mlc_strbuf *out) {
  memset(p, 0, sizeof *p);
  p->out = out;
  p->names = mlc_arena_create(mlc_allocator_default());
  if (!p->names) out->oom = 1;
}

static void printer_fini(printer *p) {
  if (p->names && mlc_arena_oom(p->names)) p->out->oom = 1;
  mlc_arena_destroy(p->names);
  mlc_vec_free(&p->scope);
}

void mlc_tir_print_module(const mlc_tir_module *m, mlc_strbuf *out) {
  for (int i = 0; i < m->nfuncs; i++) {
    if (i) mlc_sb_putc(out, '\n');
    mlc_tir_print_func(m->funcs[i], out);
  }
}

void mlc_tir_print_func(const mlc_tir_func *f, mlc_strbuf *out) {
  printer p;
  printer_init(&p, out);
  pfunc(&p, f);
  printer_fini(&p);
}

void mlc_tir_print_stmt(const mlc_tir_stmt *s, int ind, mlc_strbuf *out) {
  printer p;
  printer_init(&p, out);
  pstmt(&p, s, ind);
  printer_fini(&p);
}

void mlc_tir_print_expr(const mlc_tir_expr *e, mlc_strbuf *out) {
  printer p;
  printer_init(&p, out);
  pexpr(&p, e, 0);
  printer_fini(&p);
}
