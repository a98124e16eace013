/*
** tir_verify.c: the TIR well-formedness checker (rules in tir.h).
**
** One walk over a function with a scope of defined variables and buffers.
** Every problem is recorded (up to a limit) and returned in one status, one
** line per problem, each naming the function, the enclosing block and the
** offending node as the printer shows it.
*/
#include <string.h>

#include "base/vec.h"
#include "lower/tir.h"

#define MAX_ERRORS 32
#define NODE_CHARS 100

typedef struct verifier {
  const mlc_tir_func *f;
  MLC_VEC(const mlc_tir_var *) vars;       /* defined, innermost last */
  MLC_VEC(const mlc_tir_buffer *) bufs;    /* parameters and live allocations */
  const mlc_tir_stmt *block;               /* innermost block, or NULL */
  int in_parallel;
  int in_init;
  int mask_lanes; /* lanes of the innermost vector if condition, or 0 */
  int nerrors;
  mlc_strbuf msg;
  int oom;
} verifier;

/* ---- reporting ---------------------------------------------------------- */

static void node_text(mlc_strbuf *b, const mlc_tir_expr *e, const mlc_tir_stmt *s) {
  mlc_strbuf t = MLC_STRBUF_INIT;
  if (e) {
    mlc_tir_print_expr(e, &t);
  } else if (s) {
    switch (s->kind) {
      case MLC_TIR_FOR: mlc_sb_printf(&t, "for %s", s->loop.var ? s->loop.var->name : "?"); break;
      case MLC_TIR_BLOCK: mlc_sb_printf(&t, "block \"%s\"", s->block.name); break;
      case MLC_TIR_ALLOCATE: mlc_sb_printf(&t, "alloc_buffer %s", s->alloc.buffer->name); break;
      case MLC_TIR_IF: mlc_sb_puts(&t, "if "); mlc_tir_print_expr(s->if_.cond, &t); break;
      default: mlc_tir_print_stmt(s, 0, &t); break;
    }
  }
  const char *str = mlc_sb_str(&t);
  size_t n = strlen(str);
  while (n && str[n - 1] == '\n') n--;
  const char *nl = memchr(str, '\n', n);
  if (nl) n = (size_t)(nl - str);
  if (n > NODE_CHARS) {
    mlc_sb_putn(b, str, NODE_CHARS);
    mlc_sb_puts(b, "...");
  } else {
    mlc_sb_putn(b, str, n);
  }
  mlc_sb_fini(&t);
}

static void report(verifier *v, const mlc_tir_expr *e, const mlc_tir_stmt *s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(verifier *v, const mlc_tir_expr *e, const mlc_tir_stmt *s, const char *fmt, ...) {
  if (v->nerrors++ >= MAX_ERRORS) return;
  mlc_strbuf *b = &v->msg;
  if (b->len) mlc_sb_putc(b, '\n');
  mlc_sb_printf(b, "prim func \"%s\": ", v->f->name);
  if (v->block) mlc_sb_printf(b, "block \"%s\": ", v->block->block.name);
  if (s && s->origin) mlc_sb_printf(b, "(from node \"%s\") ", s->origin);
  if (s) {
    node_text(b, NULL, s);
    mlc_sb_puts(b, ": ");
  }
  if (e) {
    mlc_sb_puts(b, s ? "in " : "");
    node_text(b, e, NULL);
    mlc_sb_puts(b, ": ");
  }
  va_list ap;
  va_start(ap, fmt);
  mlc_sb_vprintf(b, fmt, ap);
  va_end(ap);
}

/* ---- scopes --------------------------------------------------------------- */

static int var_defined(const verifier *v, const mlc_tir_var *x) {
  for (size_t i = v->vars.len; i-- > 0;)
    if (v->vars.data[i] == x) return 1;
  return 0;
}

static int buf_defined(const verifier *v, const mlc_tir_buffer *b) {
  for (size_t i = v->bufs.len; i-- > 0;)
    if (v->bufs.data[i] == b) return 1;
  return 0;
}

static void def_var(verifier *v, const mlc_tir_var *x, const mlc_tir_stmt *s) {
  if (!x) {
    report(v, NULL, s, "missing variable");
    return;
  }
  if (var_defined(v, x)) report(v, NULL, s, "variable %s is defined again while in scope", x->name);
  if (mlc_vec_push(&v->vars, x)) v->oom = 1;
}

/* ---- expressions --------------------------------------------------------------- */

static int is_intlike(mlc_dtype t) { return mlc_dtype_is_int(t) || t == MLC_DTYPE_BOOL; }
static int valid_dtype(mlc_dtype t) { return t > MLC_DTYPE_INVALID && t < MLC_DTYPE_COUNT && t != MLC_DTYPE_STRING; }

static void vexpr(verifier *v, const mlc_tir_expr *e, const mlc_tir_stmt *s);

/* Reports |e| (checked already) when it is a vector; |what| names its role. */
static void need_scalar(verifier *v, const mlc_tir_expr *e, const mlc_tir_stmt *s, const char *what) {
  if (e && e->lanes != 1) report(v, e, s, "%s is a vector of %d lanes, not a scalar", what, e->lanes);
}

/* The lanes of indices |idx| (the common lanes of the vector ones, 1 if
** none); reports vector indices of different lanes. */
static int index_lanes(verifier *v, int n, mlc_tir_expr *const *idx, const mlc_tir_expr *e,
                       const mlc_tir_stmt *s) {
  int lanes = 1;
  for (int i = 0; i < n; i++) {
    if (!idx[i] || idx[i]->lanes == 1) continue;
    if (lanes != 1 && idx[i]->lanes != lanes)
      report(v, e, s, "vector indices of %d and %d lanes", lanes, idx[i]->lanes);
    else lanes = idx[i]->lanes;
  }
  return lanes;
}

static void vindices(verifier *v, const mlc_tir_buffer *b, int n, mlc_tir_expr *const *idx,
                     const mlc_tir_expr *e, const mlc_tir_stmt *s) {
  if (!buf_defined(v, b))
    report(v, e, s, "buffer %s is neither a parameter nor allocated here", b->name);
  if (n != b->rank)
    report(v, e, s, "%d indices for buffer %s of rank %d", n, b->name, b->rank);
  for (int i = 0; i < n; i++) {
    if (!idx[i]) {
      report(v, e, s, "missing index");
      continue;
    }
    vexpr(v, idx[i], s);
    if (!mlc_dtype_is_int(idx[i]->dtype))
      report(v, idx[i], s, "index of %s has dtype %s, not an integer", b->name, mlc_dtype_name(idx[i]->dtype));
  }
}

static void vexpr(verifier *v, const mlc_tir_expr *e, const mlc_tir_stmt *s) {
  if (!e) {
    report(v, NULL, s, "missing expression");
    return;
  }
  if (!valid_dtype(e->dtype)) report(v, e, s, "invalid dtype");
  if (e->lanes < 1 || e->lanes > MLC_TIR_MAX_LANES)
    report(v, e, s, "%d lanes (1 to %d)", e->lanes, MLC_TIR_MAX_LANES);
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
      if (!is_intlike(e->dtype)) report(v, e, s, "integer constant of dtype %s", mlc_dtype_name(e->dtype));
      break;
    case MLC_TIR_FLOAT_IMM:
      if (!mlc_dtype_is_float(e->dtype)) report(v, e, s, "float constant of dtype %s", mlc_dtype_name(e->dtype));
      break;
    case MLC_TIR_VAR_REF:
      if (e->lanes != 1) report(v, e, s, "reference to a variable with %d lanes", e->lanes);
      if (!e->var) {
        report(v, e, s, "missing variable");
        break;
      }
      if (!var_defined(v, e->var)) report(v, e, s, "variable %s is used before its definition", e->var->name);
      if (e->var->dtype != e->dtype) report(v, e, s, "reference to %s has the wrong dtype", e->var->name);
      break;
    case MLC_TIR_BINARY: {
      const mlc_tir_expr *a = e->bin.a, *b = e->bin.b;
      vexpr(v, a, s);
      vexpr(v, b, s);
      if (!a || !b) break;
      mlc_tir_binop op = e->bin.op;
      if ((unsigned)op >= MLC_TIR_BINOP_COUNT) {
        report(v, e, s, "unknown binary op");
        break;
      }
      if (a->dtype != b->dtype) {
        report(v, e, s, "operands of %s have dtypes %s and %s", mlc_tir_binop_name(op),
               mlc_dtype_name(a->dtype), mlc_dtype_name(b->dtype));
        break;
      }
      if (a->lanes != b->lanes || e->lanes != a->lanes) {
        report(v, e, s, "operands of %s have %d and %d lanes", mlc_tir_binop_name(op), a->lanes, b->lanes);
        break;
      }
      int cmp = op >= MLC_TIR_EQ && op <= MLC_TIR_GE;
      if (e->dtype != (cmp ? MLC_DTYPE_BOOL : a->dtype))
        report(v, e, s, "result dtype %s does not follow from its operands", mlc_dtype_name(e->dtype));
      if (op == MLC_TIR_DIV && !mlc_dtype_is_float(a->dtype))
        report(v, e, s, "'/' on %s (integers use floordiv or truncdiv)", mlc_dtype_name(a->dtype));
      if (op == MLC_TIR_AND || op == MLC_TIR_OR) {
        if (!is_intlike(a->dtype)) report(v, e, s, "%s on %s", mlc_tir_binop_name(op), mlc_dtype_name(a->dtype));
      } else if (!cmp && a->dtype == MLC_DTYPE_BOOL) {
        report(v, e, s, "arithmetic %s on bool", mlc_tir_binop_name(op));
      }
      break;
    }
    case MLC_TIR_NOT:
      vexpr(v, e->un.a, s);
      if (e->un.a && (!is_intlike(e->un.a->dtype) || e->un.a->dtype != e->dtype))
        report(v, e, s, "not of %s", mlc_dtype_name(e->un.a->dtype));
      if (e->un.a && e->un.a->lanes != e->lanes) report(v, e, s, "lanes %d of its operand's %d", e->lanes, e->un.a->lanes);
      break;
    case MLC_TIR_SELECT:
      vexpr(v, e->select.c, s);
      vexpr(v, e->select.t, s);
      vexpr(v, e->select.f, s);
      if (e->select.c && e->select.c->dtype != MLC_DTYPE_BOOL)
        report(v, e, s, "condition has dtype %s, not bool", mlc_dtype_name(e->select.c->dtype));
      if (e->select.t && e->select.f &&
          (e->select.t->dtype != e->select.f->dtype || e->select.t->dtype != e->dtype))
        report(v, e, s, "arms have dtypes %s and %s", mlc_dtype_name(e->select.t->dtype),
               mlc_dtype_name(e->select.f->dtype));
      if (e->select.c && e->select.t && e->select.f &&
          (e->select.c->lanes != e->lanes || e->select.t->lanes != e->lanes || e->select.f->lanes != e->lanes))
        report(v, e, s, "condition and arms have %d, %d and %d lanes", e->select.c->lanes, e->select.t->lanes,
               e->select.f->lanes);
      break;
    case MLC_TIR_CAST:
      vexpr(v, e->un.a, s);
      if (e->un.a && e->un.a->lanes != e->lanes) report(v, e, s, "lanes %d of its operand's %d", e->lanes, e->un.a->lanes);
      break;
    case MLC_TIR_LOAD:
      if (!e->load.buffer) {
        report(v, e, s, "load without a buffer");
        break;
      }
      vindices(v, e->load.buffer, e->load.n, e->load.indices, e, s);
      {
        int il = index_lanes(v, e->load.n, e->load.indices, e, s);
        if (il != e->lanes) report(v, e, s, "a load of %d lanes at indices of %d", e->lanes, il);
      }
      if (e->dtype != e->load.buffer->dtype)
        report(v, e, s, "load of dtype %s from a %s buffer", mlc_dtype_name(e->dtype),
               mlc_dtype_name(e->load.buffer->dtype));
      break;
    case MLC_TIR_CALL: {
      mlc_tir_intrin op = e->call.op;
      if ((unsigned)op >= MLC_TIR_INTRIN_COUNT) {
        report(v, e, s, "unknown intrinsic");
        break;
      }
      if (e->call.n != mlc_tir_intrin_nargs(op))
        report(v, e, s, "%s takes %d arguments, not %d", mlc_tir_intrin_name(op), mlc_tir_intrin_nargs(op),
               e->call.n);
      if (op == MLC_TIR_INTRIN_SYNC_THREADS && (e->dtype != MLC_DTYPE_I32 || e->lanes != 1))
        report(v, e, s, "sync_threads is a scalar int32");
      if (op == MLC_TIR_INTRIN_LOOP_END) {
        const mlc_tir_expr *a = e->call.n == 1 ? e->call.args[0] : NULL;
        if (a && (a->kind != MLC_TIR_VAR_REF || !mlc_dtype_is_int(a->dtype) || e->dtype != a->dtype || e->lanes != 1))
          report(v, e, s, "loop_end of anything but a loop variable");
        if (a) vexpr(v, a, s);
        break;
      }
      if (op == MLC_TIR_INTRIN_PREFETCH) {
        const mlc_tir_expr *a = e->call.n == 1 ? e->call.args[0] : NULL;
        if (e->dtype != MLC_DTYPE_I32 || e->lanes != 1) report(v, e, s, "prefetch is a scalar int32");
        if (a && (a->kind != MLC_TIR_LOAD || a->lanes != 1)) report(v, e, s, "prefetch of anything but a scalar load");
        if (a) vexpr(v, a, s);
        break;
      }
      for (int i = 0; i < e->call.n; i++) {
        const mlc_tir_expr *a = e->call.args[i];
        vexpr(v, a, s);
        if (!a) continue;
        if (a->dtype != e->call.args[0]->dtype) report(v, e, s, "arguments of different dtypes");
        if (a->lanes != e->lanes) report(v, e, s, "an argument of %d lanes in a call of %d", a->lanes, e->lanes);
        if (!mlc_dtype_is_float(a->dtype) && !(op == MLC_TIR_INTRIN_ABS && mlc_dtype_is_int(a->dtype)))
          report(v, e, s, "%s of %s", mlc_tir_intrin_name(op), mlc_dtype_name(a->dtype));
      }
      break;
    }
    case MLC_TIR_REDUCE:
      report(v, e, s, "a te reduction is left in a prim func");
      break;
    case MLC_TIR_RAMP: {
      const mlc_tir_expr *b = e->ramp.base, *st = e->ramp.stride;
      vexpr(v, b, s);
      vexpr(v, st, s);
      if (e->lanes < 2) report(v, e, s, "a ramp of %d lanes", e->lanes);
      if (!b || !st) break;
      if (b->lanes != 1 || st->lanes != 1) report(v, e, s, "ramp base and stride must be scalars");
      if (!mlc_dtype_is_int(b->dtype) || b->dtype != st->dtype || e->dtype != b->dtype)
        report(v, e, s, "ramp of %s by %s (one integer dtype)", mlc_dtype_name(b->dtype), mlc_dtype_name(st->dtype));
      break;
    }
    case MLC_TIR_BROADCAST:
      vexpr(v, e->un.a, s);
      if (e->lanes < 2) report(v, e, s, "a broadcast of %d lanes", e->lanes);
      if (!e->un.a) break;
      if (e->un.a->lanes != 1) report(v, e, s, "broadcast of a vector");
      if (e->un.a->dtype != e->dtype) report(v, e, s, "broadcast of %s as %s", mlc_dtype_name(e->un.a->dtype), mlc_dtype_name(e->dtype));
      break;
  }
}

/* Nonzero if |e| uses a reduce iteration variable of |blk|. */
static const mlc_tir_var *uses_reduce_var(const mlc_tir_stmt *blk, const mlc_tir_expr *e) {
  for (int i = 0; i < blk->block.niters; i++) {
    const mlc_tir_iter_var *it = &blk->block.iters[i];
    if (it->kind == MLC_TIR_ITER_REDUCE && mlc_tir_expr_uses_var(e, it->var)) return it->var;
  }
  return NULL;
}

/* ---- statements ------------------------------------------------------------------ */

static void vstmt(verifier *v, const mlc_tir_stmt *s);

static void vregion(verifier *v, const mlc_tir_stmt *s, const mlc_tir_region *r) {
  if (!r->buffer) {
    report(v, NULL, s, "region without a buffer");
    return;
  }
  if (!buf_defined(v, r->buffer)) report(v, NULL, s, "region of unknown buffer %s", r->buffer->name);
  if (r->n != r->buffer->rank)
    report(v, NULL, s, "region of %s has %d dimensions, the buffer %d", r->buffer->name, r->n, r->buffer->rank);
  for (int d = 0; d < r->n; d++) {
    vexpr(v, r->min[d], s);
    vexpr(v, r->extent[d], s);
  }
}

static void vblock(verifier *v, const mlc_tir_stmt *s) {
  size_t mark = v->vars.len;
  int nreduce = 0;
  for (int i = 0; i < s->block.niters; i++) {
    const mlc_tir_iter_var *it = &s->block.iters[i];
    vexpr(v, it->min, s);
    vexpr(v, it->extent, s);
    vexpr(v, it->binding, s);
    need_scalar(v, it->min, s, "iter var domain");
    need_scalar(v, it->extent, s, "iter var domain");
    need_scalar(v, it->binding, s, "iter var binding");
    if (it->min && !mlc_dtype_is_int(it->min->dtype)) report(v, it->min, s, "iter var domain is not an integer");
    if (it->extent && !mlc_dtype_is_int(it->extent->dtype))
      report(v, it->extent, s, "iter var domain is not an integer");
    if (it->binding && !mlc_dtype_is_int(it->binding->dtype))
      report(v, it->binding, s, "iter var binding is not an integer");
    if (it->kind == MLC_TIR_ITER_REDUCE) nreduce++;
    else if (it->kind != MLC_TIR_ITER_SPATIAL) report(v, NULL, s, "iter var of unknown kind");
  }
  for (int i = 0; i < s->block.niters; i++) {
    const mlc_tir_var *x = s->block.iters[i].var;
    def_var(v, x, s);
    if (x && !mlc_dtype_is_int(x->dtype)) report(v, NULL, s, "iter var %s is not an integer", x->name);
  }
  const mlc_tir_stmt *outer = v->block;
  if (s->block.init && nreduce == 0) report(v, NULL, s, "T.init() in a block without reduce iter vars");
  v->block = s;
  if (s->block.predicate) {
    vexpr(v, s->block.predicate, s);
    need_scalar(v, s->block.predicate, s, "predicate");
    if (s->block.predicate->dtype != MLC_DTYPE_BOOL) report(v, s->block.predicate, s, "predicate is not bool");
  }
  for (int i = 0; i < s->block.nreads; i++) vregion(v, s, &s->block.reads[i]);
  for (int i = 0; i < s->block.nwrites; i++) {
    vregion(v, s, &s->block.writes[i]);
    for (int d = 0; d < s->block.writes[i].n; d++) {
      const mlc_tir_var *x = uses_reduce_var(s, s->block.writes[i].min[d]);
      if (x) report(v, NULL, s, "write region of %s uses reduce iter var %s", s->block.writes[i].buffer->name, x->name);
    }
  }
  if (s->block.init) {
    v->in_init = 1;
    vstmt(v, s->block.init);
    v->in_init = 0;
  }
  vstmt(v, s->block.body);
  v->block = outer;
  v->vars.len = mark;
}

static void vstmt(verifier *v, const mlc_tir_stmt *s) {
  if (!s) {
    report(v, NULL, NULL, "missing statement");
    return;
  }
  if (v->mask_lanes && s->kind != MLC_TIR_SEQ && s->kind != MLC_TIR_STORE && s->kind != MLC_TIR_IF &&
      s->kind != MLC_TIR_EVALUATE)
    report(v, NULL, s, "not a store, evaluate or if under a vector condition");
  switch (s->kind) {
    case MLC_TIR_FOR: {
      vexpr(v, s->loop.min, s);
      vexpr(v, s->loop.extent, s);
      need_scalar(v, s->loop.min, s, "loop start");
      need_scalar(v, s->loop.extent, s, "loop extent");
      if (s->loop.min && !mlc_dtype_is_int(s->loop.min->dtype)) report(v, s->loop.min, s, "loop start is not an integer");
      if (s->loop.extent && !mlc_dtype_is_int(s->loop.extent->dtype))
        report(v, s->loop.extent, s, "loop extent is not an integer");
      if (s->loop.var && !mlc_dtype_is_int(s->loop.var->dtype)) report(v, NULL, s, "loop variable is not an integer");
      if (s->loop.var && s->loop.min && s->loop.var->dtype != s->loop.min->dtype)
        report(v, NULL, s, "loop variable and bounds have different dtypes");
      int par = s->loop.kind == MLC_TIR_FOR_PARALLEL;
      if ((unsigned)s->loop.kind > MLC_TIR_FOR_THREAD_BINDING) report(v, NULL, s, "unknown loop kind");
      if (par && v->in_parallel) report(v, NULL, s, "parallel loop nested in a parallel loop");
      if (s->loop.kind == MLC_TIR_FOR_THREAD_BINDING && (!s->loop.thread || !s->loop.thread[0]))
        report(v, NULL, s, "thread binding without a thread tag");
      size_t mark = v->vars.len;
      def_var(v, s->loop.var, s);
      int save = v->in_parallel;
      v->in_parallel |= par;
      vstmt(v, s->loop.body);
      v->in_parallel = save;
      v->vars.len = mark;
      break;
    }
    case MLC_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) vstmt(v, s->seq.stmts[i]);
      break;
    case MLC_TIR_STORE: {
      const mlc_tir_buffer *b = s->store.buffer;
      if (!b) {
        report(v, NULL, s, "store without a buffer");
        break;
      }
      vindices(v, b, s->store.n, s->store.indices, NULL, s);
      vexpr(v, s->store.value, s);
      int il = index_lanes(v, s->store.n, s->store.indices, NULL, s);
      if (s->store.value && s->store.value->lanes != il)
        report(v, NULL, s, "stores a value of %d lanes at indices of %d", s->store.value->lanes, il);
      if (v->mask_lanes && il != v->mask_lanes)
        report(v, NULL, s, "a store of %d lanes under a condition of %d", il, v->mask_lanes);
      if (s->store.value && s->store.value->dtype != b->dtype)
        report(v, NULL, s, "stores %s into a %s buffer", mlc_dtype_name(s->store.value->dtype), mlc_dtype_name(b->dtype));
      if (v->block)
        for (int i = 0; i < s->store.n; i++) {
          const mlc_tir_var *x = s->store.indices[i] ? uses_reduce_var(v->block, s->store.indices[i]) : NULL;
          if (x) {
            report(v, NULL, s, "reduce iter var %s indexes the written buffer %s%s", x->name, b->name,
                   v->in_init ? " (in T.init)" : "");
            break;
          }
        }
      break;
    }
    case MLC_TIR_IF: {
      vexpr(v, s->if_.cond, s);
      if (s->if_.cond && s->if_.cond->dtype != MLC_DTYPE_BOOL)
        report(v, s->if_.cond, s, "condition has dtype %s, not bool", mlc_dtype_name(s->if_.cond->dtype));
      int save = v->mask_lanes;
      if (s->if_.cond && s->if_.cond->lanes != 1) {
        if (save && s->if_.cond->lanes != save)
          report(v, s->if_.cond, s, "a condition of %d lanes under one of %d", s->if_.cond->lanes, save);
        v->mask_lanes = s->if_.cond->lanes;
      }
      vstmt(v, s->if_.then_s);
      if (s->if_.else_s) vstmt(v, s->if_.else_s);
      v->mask_lanes = save;
      break;
    }
    case MLC_TIR_ALLOCATE: {
      const mlc_tir_buffer *b = s->alloc.buffer;
      if (!b) {
        report(v, NULL, s, "allocation without a buffer");
        break;
      }
      if (buf_defined(v, b)) report(v, NULL, s, "buffer %s is already defined here", b->name);
      if (!valid_dtype(b->dtype) || mlc_dtype_size(b->dtype) == 0) report(v, NULL, s, "buffer of invalid dtype");
      for (int i = 0; i < b->rank; i++) {
        vexpr(v, b->shape[i], s);
        need_scalar(v, b->shape[i], s, "extent");
        if (b->shape[i] && !mlc_dtype_is_int(b->shape[i]->dtype)) report(v, b->shape[i], s, "extent is not an integer");
      }
      size_t mark = v->bufs.len;
      if (mlc_vec_push(&v->bufs, b)) v->oom = 1;
      vstmt(v, s->alloc.body);
      v->bufs.len = mark;
      break;
    }
    case MLC_TIR_EVALUATE: vexpr(v, s->eval.value, s); break;
    case MLC_TIR_BLOCK: vblock(v, s); break;
    case MLC_TIR_ASSERT:
      vexpr(v, s->assert_.cond, s);
      need_scalar(v, s->assert_.cond, s, "assert condition");
      if (s->assert_.cond && s->assert_.cond->dtype != MLC_DTYPE_BOOL)
        report(v, s->assert_.cond, s, "condition has dtype %s, not bool", mlc_dtype_name(s->assert_.cond->dtype));
      if (!s->assert_.op || !s->assert_.msg) report(v, NULL, s, "assert without an op or a message");
      if (s->assert_.nvals < 0 || s->assert_.nvals > MLC_TIR_ASSERT_MAX_VALS) {
        report(v, NULL, s, "assert reports %d values (at most %d)", s->assert_.nvals, MLC_TIR_ASSERT_MAX_VALS);
        break;
      }
      for (int i = 0; i < s->assert_.nvals; i++) {
        vexpr(v, s->assert_.vals[i], s);
        need_scalar(v, s->assert_.vals[i], s, "reported value");
        if (s->assert_.vals[i] && !mlc_dtype_is_int(s->assert_.vals[i]->dtype))
          report(v, s->assert_.vals[i], s, "reported value is not an integer");
      }
      break;
  }
}

/* ---- entry points ------------------------------------------------------------------ */

mlc_status mlc_tir_verify_func(const mlc_tir_func *f) {
  if (!f) return mlc_make_status(MLC_INVALID_ARGUMENT, "prim func missing (out of memory while building?)");
  verifier v;
  memset(&v, 0, sizeof v);
  v.f = f;
  for (int i = 0; i < f->nscalars; i++) {
    const mlc_tir_scalar_param *sp = &f->scalars[i];
    if (!sp->var) {
      report(&v, NULL, NULL, "missing scalar parameter");
      continue;
    }
    if (sp->var->dtype != MLC_DTYPE_I64) report(&v, NULL, NULL, "scalar %s is not int64", sp->var->name);
    if (sp->param < 0 || sp->param >= f->nparams || sp->dim < 0 || sp->dim >= f->params[sp->param]->rank)
      report(&v, NULL, NULL, "scalar %s is bound to shape[%d] of param %d, which does not exist", sp->var->name,
             sp->dim, sp->param);
    if (var_defined(&v, sp->var)) report(&v, NULL, NULL, "scalar %s is bound twice", sp->var->name);
    if (mlc_vec_push(&v.vars, sp->var)) v.oom = 1;
  }
  for (int i = 0; i < f->nparams; i++) {
    const mlc_tir_buffer *b = f->params[i];
    if (buf_defined(&v, b)) report(&v, NULL, NULL, "parameter %s appears twice", b->name);
    if (!valid_dtype(b->dtype) || mlc_dtype_size(b->dtype) == 0)
      report(&v, NULL, NULL, "parameter %s has an invalid dtype", b->name);
    if (b->scope != MLC_TIR_SCOPE_GLOBAL) report(&v, NULL, NULL, "parameter %s is not a global buffer", b->name);
    for (int d = 0; d < b->rank; d++) {
      vexpr(&v, b->shape[d], NULL);
      need_scalar(&v, b->shape[d], NULL, "extent");
      if (b->shape[d] && !mlc_dtype_is_int(b->shape[d]->dtype))
        report(&v, b->shape[d], NULL, "extent of %s is not an integer", b->name);
      if (b->shape[d] && mlc_tir_expr_has_load(b->shape[d]))
        report(&v, b->shape[d], NULL, "extent of %s reads a buffer", b->name);
    }
    if (mlc_vec_push(&v.bufs, b)) v.oom = 1;
  }
  for (int i = 0; i < f->nviews; i++) {
    const mlc_tir_buffer *b = f->views[i];
    if (!b) {
      report(&v, NULL, NULL, "missing view");
      continue;
    }
    int of_param = 0;
    for (int k = 0; k < f->nparams; k++)
      if (b->view_of && b->view_of == f->params[k]) of_param = 1;
    if (!of_param) report(&v, NULL, NULL, "view %s is not a view of a parameter", b->name);
    else if (b->dtype != b->view_of->dtype) report(&v, NULL, NULL, "view %s has another dtype than its parameter", b->name);
    if (buf_defined(&v, b)) report(&v, NULL, NULL, "view %s is declared twice", b->name);
    for (int d = 0; d < b->rank; d++) {
      vexpr(&v, b->shape[d], NULL);
      if (b->shape[d] && !mlc_dtype_is_int(b->shape[d]->dtype))
        report(&v, b->shape[d], NULL, "extent of %s is not an integer", b->name);
    }
    if (mlc_vec_push(&v.bufs, b)) v.oom = 1;
  }
  vstmt(&v, f->body);
  mlc_status st = NULL;
  if (v.oom || v.msg.oom) {
    st = mlc_oom();
  } else if (v.nerrors) {
    if (v.nerrors > MAX_ERRORS) mlc_sb_printf(&v.msg, "\n(%d more problems)", v.nerrors - MAX_ERRORS);
    st = mlc_make_status(MLC_INVALID_ARGUMENT, "%s", mlc_sb_str(&v.msg));
  }
  mlc_vec_free(&v.vars);
  mlc_vec_free(&v.bufs);
  mlc_sb_fini(&v.msg);
  return st;
}

mlc_status mlc_tir_verify_module(const mlc_tir_module *m) {
  if (mlc_tir_module_oom(m)) return mlc_make_status(MLC_RESOURCE_EXHAUSTED, "TIR module: out of memory while building");
  for (int i = 0; i < m->nfuncs; i++) MLC_RETURN_IF_ERROR(mlc_tir_verify_func(m->funcs[i]));
  return NULL;
}
