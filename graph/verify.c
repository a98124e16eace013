/*
** verify.c: the graph IR's invariants (STYLE R18).
**
** mlc_graph_verify checks, for every function of a module:
**   - SSA: every binding output is a VAR defined exactly once, and its
**     def/def_output point back at the binding and position;
**   - scoping: every arg and returned value is a parameter of the function,
**     a constant of the module (index in range, type as in the table) or an
**     output of an earlier binding of the same function;
**   - calls: op codes in range, arg counts within the op table's bounds,
**     attributes named in the op's schema (ops.def) with an accepted kind,
**     callee names on call_tir / call_dps_packed;
**   - struct info: for op calls, inference re-run on the args gives the
**     outputs' types; every type has a valid dtype, rank and symbols;
**   - symbol scope: every symbol in an output's type is bound by a dim of
**     a parameter or defined by an earlier define_dims (which defines each
**     of its symbols once, and only fresh ones), or is one of the symbols
**     of a cf_end_if's or cf_loop_end's own outputs (bound when it runs),
**     or is derived from such symbols ((H - 2) // 2 + 1 of a bound H);
**   - primitive functions (fused groups): they hold only op calls, are not
**     main, and are called only by MLC_CALL_FUNC bindings of other
**     functions (never through call_tir or call_dps_packed);
** and for the constant table: data present and nbytes = numel * dtype size.
** Problems are collected (up to a limit) and returned as one MLC_INTERNAL
** status whose message names the function, binding index, op and problem.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_int.h"

/* Problems listed in one status before the rest are only counted. */
#define MAX_REPORTED 8

typedef struct verifier {
  const mlc_module *m;
  mlc_strbuf msg;
  int nproblems;
  /* by value id: stamp of the function that defines it, and where */
  int *stamp;
  int *pos; /* -1: parameter; k: output of binding k */
  int nids;
  unsigned char *bound; /* by symbol id: bound in the function being checked */
} verifier;

static void problem(verifier *vf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(verifier *vf, const char *fmt, ...) {
  if (vf->nproblems++ >= MAX_REPORTED) return;
  va_list ap;
  va_start(ap, fmt);
  mlc_sb_puts(&vf->msg, "\n  ");
  mlc_sb_vprintf(&vf->msg, fmt, ap);
  va_end(ap);
}

/* "function \"main\", binding 3 (relu)" into |buf|. */
static const char *where(const mlc_func *f, int k, const mlc_binding *b, char *buf, size_t size) {
  const char *what = "?";
  if (b && b->kind == MLC_CALL_OP)
    what = (unsigned)b->op < MLC_OP_COUNT ? mlc_op_name[b->op] : "invalid op";
  else if (b && (b->kind == MLC_CALL_TIR || b->kind == MLC_CALL_DPS_PACKED || b->kind == MLC_CALL_FUNC))
    what = b->callee ? b->callee
                     : (b->kind == MLC_CALL_TIR ? "call_tir" : b->kind == MLC_CALL_FUNC ? "call" : "call_dps_packed");
  char org[300] = "";
  if (b && b->origin.op_type) {
    char tmp[280];
    snprintf(org, sizeof org, ", %s", mlc_origin_str(&b->origin, tmp, sizeof tmp));
  }
  snprintf(buf, size, "function \"%s\", binding %d (%s%s)", f->name ? f->name : "?", k, what, org);
  return buf;
}

static int check_type(verifier *vf, const mlc_type *t, const char *ctx) {
  const mlc_module *m = vf->m;
  if ((unsigned)t->dtype >= MLC_DTYPE_COUNT || t->dtype == MLC_DTYPE_INVALID) {
    problem(vf, "%s: invalid dtype %d", ctx, (int)t->dtype);
    return 0;
  }
  if (t->rank < 0 || (t->rank > 0 && !t->dims)) {
    problem(vf, "%s: bad rank %d", ctx, t->rank);
    return 0;
  }
  for (int i = 0; i < t->rank; i++)
    if (MLC_DIM_IS_SYM(t->dims[i]) && MLC_DIM_SYM_ID(t->dims[i]) >= m->nsyms) {
      problem(vf, "%s: dim %d is an unknown symbol (id %d)", ctx, i, MLC_DIM_SYM_ID(t->dims[i]));
      return 0;
    }
  return 1;
}

static int valid_id(const verifier *vf, const mlc_value *v) { return v->id >= 0 && v->id < vf->nids; }

/*
** Checks a use of |v| in function number |fi| at binding |k| (INT32_MAX for
** the return).  |ctx| names the place.  Returns 1 when usable.
*/
static int check_use(verifier *vf, int fi, int k, const mlc_value *v, const char *ctx) {
  const mlc_module *m = vf->m;
  if (!v) {
    problem(vf, "%s: missing (NULL) value", ctx);
    return 0;
  }
  if (!valid_id(vf, v)) {
    problem(vf, "%s: value id %d out of range", ctx, v->id);
    return 0;
  }
  switch (v->kind) {
    case MLC_VALUE_CONST:
      if (v->const_index < 0 || v->const_index >= m->nconsts) {
        problem(vf, "%s: constant index %d out of range (module has %d constants)", ctx,
                v->const_index, m->nconsts);
        return 0;
      }
      if (!mlc_type_equal(&v->type, &m->consts[v->const_index].type)) {
        problem(vf, "%s: constant c%d's value type differs from the constant table's", ctx,
                v->const_index);
        return 0;
      }
      return 1;
    case MLC_VALUE_PARAM:
      if (vf->stamp[v->id] != fi + 1 || vf->pos[v->id] != -1) {
        problem(vf, "%s: value %d is not a parameter of this function", ctx, v->id);
        return 0;
      }
      return 1;
    case MLC_VALUE_VAR:
      if (vf->stamp[v->id] != fi + 1) {
        problem(vf, "%s: value %d is not defined in this function", ctx, v->id);
        return 0;
      }
      if (vf->pos[v->id] >= k) {
        problem(vf, "%s: value %d is used before its definition (binding %d)", ctx, v->id,
                vf->pos[v->id]);
        return 0;
      }
      return 1;
  }
  problem(vf, "%s: value %d has invalid kind %d", ctx, v->id, (int)v->kind);
  return 0;
}

/* Whether inferred dim |got| stands for |want|: equal, or a symbol that the
** inference made fresh (id >= |nsyms0|) where the IR has a symbol. */
static int dims_match(int64_t want, int64_t got, int nsyms0) {
  if (want == got) return 1;
  return MLC_DIM_IS_SYM(want) && MLC_DIM_IS_SYM(got) && MLC_DIM_SYM_ID(got) >= nsyms0;
}

static void type_str(const mlc_module *m, const mlc_type *t, char *buf, size_t size) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_graph_print_type(m, t, &b);
  snprintf(buf, size, "%s", mlc_sb_str(&b));
  mlc_sb_fini(&b);
}

/* Re-runs inference for an op call and compares with its outputs' types. */
static void check_infer(verifier *vf, const mlc_binding *b, const char *ctx) {
  mlc_module *m = (mlc_module *)vf->m; /* inference may intern fresh symbols */
  int nsyms0 = m->nsyms;
  mlc_call_info ci = {m, b->op, b->nargs, b->args, b->nattrs, b->attrs, &b->origin};
  mlc_type types[MLC_MAX_OUTS];
  int n = 1;
  mlc_status s = mlc_graph_infer(&ci, types, &n);
  if (s) {
    problem(vf, "%s: inference fails on the args: %s", ctx, mlc_status_message(s));
    mlc_status_free(s);
  } else if (n != b->nouts) {
    problem(vf, "%s: inference gives %d outputs, the binding has %d", ctx, n, b->nouts);
  } else {
    for (int i = 0; i < n; i++) {
      const mlc_type *want = &b->outs[i]->type, *got = &types[i];
      int same = want->dtype == got->dtype && want->rank == got->rank;
      for (int d = 0; same && d < want->rank; d++) same = dims_match(want->dims[d], got->dims[d], nsyms0);
      if (!same) {
        char w[256], g[256];
        type_str(m, want, w, sizeof w);
        type_str(m, got, g, sizeof g);
        problem(vf, "%s: output %d has type %s but inference gives %s", ctx, i, w, g);
      }
    }
  }
  /* Drop symbols the re-inference made: the module is left as it was. */
  m->nsyms = nsyms0;
}

static void check_binding(verifier *vf, const mlc_func *f, int fi, int k, const mlc_binding *b) {
  char ctx[512];
  if (!b) {
    problem(vf, "function \"%s\", binding %d: NULL binding", f->name ? f->name : "?", k);
    return;
  }
  where(f, k, b, ctx, sizeof ctx);
  int ok = 1;
  switch (b->kind) {
    case MLC_CALL_OP:
      if ((unsigned)b->op >= MLC_OP_COUNT) {
        problem(vf, "%s: op code %d out of range", ctx, (int)b->op);
        ok = 0;
      } else {
        int mn = mlc_op_min_args[b->op], mx = mlc_op_max_args[b->op];
        if (b->nargs < mn || (mx >= 0 && b->nargs > mx)) {
          if (mx < 0)
            problem(vf, "%s: %d args, the op takes at least %d", ctx, b->nargs, mn);
          else if (mn == mx)
            problem(vf, "%s: %d args, the op takes %d", ctx, b->nargs, mn);
          else
            problem(vf, "%s: %d args, the op takes %d to %d", ctx, b->nargs, mn, mx);
          ok = 0;
        }
        char amsg[160];
        if (mlc_op_check_attrs(b->op, b->attrs, b->nattrs, amsg, sizeof amsg))
          problem(vf, "%s: %s (schema: \"%s\")", ctx, amsg, mlc_op_attr_schema[b->op]);
      }
      break;
    case MLC_CALL_TIR:
    case MLC_CALL_DPS_PACKED: {
      const mlc_func *g = b->callee ? mlc_module_func(vf->m, b->callee) : NULL;
      if (!b->callee || !*b->callee) {
        problem(vf, "%s: no callee name", ctx);
        ok = 0;
      } else if (g && g->primitive) {
        problem(vf, "%s: calls the primitive function \"%s\" with %s; it is called with a function call", ctx,
                g->name, b->kind == MLC_CALL_TIR ? "call_tir" : "call_dps_packed");
        ok = 0;
      }
      break;
    }
    case MLC_CALL_FUNC: {
      const mlc_func *g = b->callee ? mlc_module_func(vf->m, b->callee) : NULL;
      if (!g) {
        problem(vf, "%s: calls \"%s\", which is not a function of the module", ctx,
                b->callee ? b->callee : "");
        ok = 0;
      } else if (g == f) {
        problem(vf, "%s: calls its own function", ctx);
        ok = 0;
      } else if (g->nparams != b->nargs || g->nrets != b->nouts) {
        problem(vf, "%s: %d args and %d outputs, \"%s\" takes %d and returns %d", ctx, b->nargs, b->nouts,
                g->name, g->nparams, g->nrets);
        ok = 0;
      } else {
        for (int i = 0; i < b->nargs; i++)
          if (b->args[i] && g->params[i] && !mlc_type_equal(&b->args[i]->type, &g->params[i]->type)) {
            problem(vf, "%s: arg %d's type differs from parameter %d of \"%s\"", ctx, i, i, g->name);
            ok = 0;
          }
        for (int i = 0; b->outs && i < b->nouts; i++)
          if (b->outs[i] && g->rets[i] && !mlc_type_equal(&b->outs[i]->type, &g->rets[i]->type)) {
            problem(vf, "%s: output %d's type differs from what \"%s\" returns", ctx, i, g->name);
            ok = 0;
          }
      }
      break;
    }
    default:
      problem(vf, "%s: invalid call kind %d", ctx, (int)b->kind);
      ok = 0;
  }
  if (b->nargs < 0 || (b->nargs > 0 && !b->args)) {
    problem(vf, "%s: bad arg list (%d args)", ctx, b->nargs);
    ok = 0;
  } else {
    for (int i = 0; i < b->nargs; i++) {
      char actx[600];
      snprintf(actx, sizeof actx, "%s, arg %d", ctx, i);
      if (!check_use(vf, fi, k, b->args[i], actx)) ok = 0;
    }
  }
  if (b->nattrs < 0 || (b->nattrs > 0 && !b->attrs)) {
    problem(vf, "%s: bad attribute list (%d attrs)", ctx, b->nattrs);
    ok = 0;
  }
  for (int i = 0; ok && i < b->nattrs; i++)
    if (!b->attrs[i].name) {
      problem(vf, "%s: attribute %d has no name", ctx, i);
      ok = 0;
    }
  /* Outputs were checked (SSA) when the function's definitions were
  ** collected; here only their types. */
  for (int i = 0; b->outs && i < b->nouts; i++) {
    char octx[600];
    snprintf(octx, sizeof octx, "%s, output %d", ctx, i);
    if (!b->outs[i] || !check_type(vf, &b->outs[i]->type, octx)) ok = 0;
  }
  if (!b->outs || b->nouts < 1 || b->nouts > MLC_MAX_OUTS) ok = 0;
  if (ok && b->kind == MLC_CALL_OP) check_infer(vf, b, ctx);
}

/* Records where each value of |f| is defined, checking SSA. */
static void collect_defs(verifier *vf, const mlc_func *f, int fi) {
  const char *fname = f->name ? f->name : "?";
  if (f->mod != vf->m) problem(vf, "function \"%s\": belongs to another module", fname);
  for (int i = 0; i < f->nparams; i++) {
    const mlc_value *v = f->params[i];
    char ctx[300];
    snprintf(ctx, sizeof ctx, "function \"%s\", param %d", fname, i);
    if (!v) {
      problem(vf, "%s: NULL", ctx);
      continue;
    }
    if (!valid_id(vf, v)) {
      problem(vf, "%s: value id %d out of range", ctx, v->id);
      continue;
    }
    if (v->kind != MLC_VALUE_PARAM) problem(vf, "%s: value %d is not a PARAM value", ctx, v->id);
    if (vf->stamp[v->id] == fi + 1) problem(vf, "%s: value %d is a parameter twice", ctx, v->id);
    check_type(vf, &v->type, ctx);
    const mlc_value *def = mlc_func_param_default(f, i);
    if (def && (def->kind != MLC_VALUE_CONST || !mlc_value_const(vf->m, def) ||
                !mlc_type_equal(&def->type, &v->type) || !mlc_type_is_static(&def->type)))
      problem(vf, "%s: its default is not a static constant of its type", ctx);
    vf->stamp[v->id] = fi + 1;
    vf->pos[v->id] = -1;
  }
  int k = 0;
  for (int bi = 0; bi < f->nblocks; bi++) {
    const mlc_block *blk = &f->blocks[bi];
    for (int j = 0; j < blk->n; j++, k++) {
      const mlc_binding *b = blk->bindings[j];
      if (!b) continue;
      char ctx[512];
      where(f, k, b, ctx, sizeof ctx);
      if (b->nouts < 1 || b->nouts > MLC_MAX_OUTS || !b->outs) {
        problem(vf, "%s: bad output count %d", ctx, b->nouts);
        continue;
      }
      for (int o = 0; o < b->nouts; o++) {
        const mlc_value *v = b->outs[o];
        if (!v) {
          problem(vf, "%s: output %d is NULL", ctx, o);
          continue;
        }
        if (!valid_id(vf, v)) {
          problem(vf, "%s: output %d: value id %d out of range", ctx, o, v->id);
          continue;
        }
        if (v->kind != MLC_VALUE_VAR)
          problem(vf, "%s: output %d (value %d) is not a VAR value", ctx, o, v->id);
        else if (v->def != b || v->def_output != o)
          problem(vf, "%s: output %d (value %d): def/def_output do not point back here", ctx, o,
                  v->id);
        if (vf->stamp[v->id] == fi + 1)
          problem(vf, "%s: output %d (value %d) is already defined (%s %d): not SSA", ctx, o, v->id,
                  vf->pos[v->id] < 0 ? "param" : "binding", vf->pos[v->id]);
        vf->stamp[v->id] = fi + 1;
        vf->pos[v->id] = k;
      }
    }
  }
}

/* Marks the symbols of |t| bound (parameters). */
static void bind_type_syms(verifier *vf, const mlc_type *t) {
  for (int i = 0; t->dims && i < t->rank; i++)
    if (MLC_DIM_IS_SYM(t->dims[i]) && MLC_DIM_SYM_ID(t->dims[i]) < vf->m->nsyms)
      vf->bound[MLC_DIM_SYM_ID(t->dims[i])] = 1;
}

/* Whether symbol |id| has a value here: bound, or derived from symbols
** that have one (a derived symbol's operands are earlier symbols, so the
** walk ends; an operand that is not one counts as unbound). */
static int sym_known(const verifier *vf, int id, int depth) {
  if (id < 0 || id >= vf->m->nsyms) return 0;
  if (vf->bound[id]) return 1;
  const mlc_sym_def *d = vf->m->sym_defs ? &vf->m->sym_defs[id] : NULL;
  if (!d || d->op == MLC_SYM_FREE || depth > vf->m->nsyms) return 0;
  if (!MLC_DIM_IS_SYM(d->a) || MLC_DIM_SYM_ID(d->a) >= id || !sym_known(vf, MLC_DIM_SYM_ID(d->a), depth + 1))
    return 0;
  return !d->b_sym ||
         (MLC_DIM_IS_SYM(d->b) && MLC_DIM_SYM_ID(d->b) < id && sym_known(vf, MLC_DIM_SYM_ID(d->b), depth + 1));
}

/* Symbol scope of binding |k|: its outputs use bound symbols only (or
** symbols derived from bound ones); a define_dims then binds its attr
** dims' symbols. */
static void check_scope(verifier *vf, const mlc_func *f, int k, const mlc_binding *b) {
  char ctx[512];
  if (!b || !b->outs) return;
  /* the end of a run-time If or Loop binds the fresh symbols of its outputs
  ** (also once legalized: the call keeps its op) */
  if (b->op == MLC_OP_CF_END_IF || b->op == MLC_OP_CF_LOOP_END)
    for (int o = 0; o < b->nouts; o++)
      if (b->outs[o]) bind_type_syms(vf, &b->outs[o]->type);
  for (int o = 0; o < b->nouts; o++) {
    const mlc_type *t = b->outs[o] ? &b->outs[o]->type : NULL;
    for (int i = 0; t && t->dims && i < t->rank; i++) {
      int64_t d = t->dims[i];
      if (!MLC_DIM_IS_SYM(d) || MLC_DIM_SYM_ID(d) >= vf->m->nsyms || sym_known(vf, MLC_DIM_SYM_ID(d), 0))
        continue;
      problem(vf, "%s, output %d: dim %d is symbol %s, which no parameter binds, no earlier "
                  "define_dims defines and no bound symbols derive",
              where(f, k, b, ctx, sizeof ctx), o, i, mlc_module_sym_name(vf->m, d));
    }
  }
  if (b->op != MLC_OP_DEFINE_DIMS) return; /* also once legalized: the call keeps its op */
  const mlc_attr *a = mlc_attrs_find(b->attrs, b->nattrs, "dims");
  for (int i = 0; a && a->kind == MLC_ATTR_INTS && i < a->n; i++) {
    int64_t d = a->ints[i];
    if (!MLC_DIM_IS_SYM(d) || MLC_DIM_SYM_ID(d) >= vf->m->nsyms) continue;
    if (vf->bound[MLC_DIM_SYM_ID(d)])
      problem(vf, "%s: symbol %s is already bound (define_dims defines fresh symbols only)",
              where(f, k, b, ctx, sizeof ctx), mlc_module_sym_name(vf->m, d));
    vf->bound[MLC_DIM_SYM_ID(d)] = 1;
  }
}

/* A primitive function holds op calls only and is not the entry. */
static void check_primitive(verifier *vf, const mlc_func *f) {
  const char *fname = f->name ? f->name : "?";
  if (!strcmp(fname, "main")) problem(vf, "function \"main\": the entry cannot be primitive");
  int k = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++, k++) {
      const mlc_binding *b = f->blocks[bi].bindings[j];
      char ctx[512];
      if (b && b->kind != MLC_CALL_OP)
        problem(vf, "%s: a primitive function holds op calls only", where(f, k, b, ctx, sizeof ctx));
    }
}

static void check_func(verifier *vf, const mlc_func *f, int fi) {
  collect_defs(vf, f, fi);
  if (f->primitive) check_primitive(vf, f);
  if (vf->bound) {
    memset(vf->bound, 0, (size_t)vf->m->nsyms);
    for (int i = 0; i < f->nparams; i++)
      if (f->params[i]) bind_type_syms(vf, &f->params[i]->type);
  }
  int k = 0;
  for (int bi = 0; bi < f->nblocks; bi++) {
    const mlc_block *blk = &f->blocks[bi];
    if (blk->n > 0 && !blk->bindings) {
      problem(vf, "function \"%s\", block %d: no binding array", f->name ? f->name : "?", bi);
      continue;
    }
    for (int j = 0; j < blk->n; j++, k++) {
      check_binding(vf, f, fi, k, blk->bindings[j]);
      if (vf->bound) check_scope(vf, f, k, blk->bindings[j]);
    }
  }
  for (int i = 0; i < f->nrets; i++) {
    char ctx[300];
    snprintf(ctx, sizeof ctx, "function \"%s\", return value %d", f->name ? f->name : "?", i);
    check_use(vf, fi, 0x7fffffff, f->rets[i], ctx);
  }
}

static void check_consts(verifier *vf) {
  const mlc_module *m = vf->m;
  for (int i = 0; i < m->nconsts; i++) {
    const mlc_const *c = &m->consts[i];
    char ctx[300];
    snprintf(ctx, sizeof ctx, "constant c%d \"%s\"", i, c->name ? c->name : "");
    if (!check_type(vf, &c->type, ctx)) continue;
    int64_t n = mlc_type_numel(&c->type);
    size_t want;
    if (n < 0 || c->type.dtype == MLC_DTYPE_STRING ||
        mlc_mul_size((size_t)n, mlc_dtype_size(c->type.dtype), &want)) {
      problem(vf, "%s: type is not static or has no byte size", ctx);
      continue;
    }
    if (want != c->nbytes)
      problem(vf, "%s: %zu bytes of data, the type needs %zu", ctx, c->nbytes, want);
    if (!c->data) problem(vf, "%s: no data", ctx);
  }
}

/* Checks |m| (borrowed; left unchanged).  NULL when valid, else an
** MLC_INTERNAL status listing the problems (transferred to the caller). */
mlc_status mlc_graph_verify(const mlc_module *m) {
  verifier vf;
  memset(&vf, 0, sizeof vf);
  vf.m = m;
  vf.nids = m->next_value_id > 0 ? m->next_value_id : 1;
  vf.stamp = mlc_calloc(m->alloc, (size_t)vf.nids, sizeof *vf.stamp);
  vf.pos = mlc_calloc(m->alloc, (size_t)vf.nids, sizeof *vf.pos);
  vf.bound = mlc_calloc(m->alloc, (size_t)m->nsyms + 1, 1);
  if (!vf.stamp || !vf.pos || !vf.bound) {
    mlc_free(m->alloc, vf.bound, (size_t)m->nsyms + 1);
    mlc_free(m->alloc, vf.stamp, sizeof *vf.stamp * (size_t)vf.nids);
    mlc_free(m->alloc, vf.pos, sizeof *vf.pos * (size_t)vf.nids);
    return mlc_oom();
  }
  check_consts(&vf);
  for (int i = 0; i < m->nfuncs; i++) {
    if (!m->funcs[i]) {
      problem(&vf, "function %d is NULL", i);
      continue;
    }
    /* the name index (mlc_module_func) holds one function per name */
    if (m->funcs[i]->name && mlc_module_func(m, m->funcs[i]->name) != m->funcs[i])
      problem(&vf, "function \"%s\" is defined twice, or missing from the module's name index",
              m->funcs[i]->name);
    check_func(&vf, m->funcs[i], i);
  }
  mlc_free(m->alloc, vf.stamp, sizeof *vf.stamp * (size_t)vf.nids);
  mlc_free(m->alloc, vf.pos, sizeof *vf.pos * (size_t)vf.nids);
  mlc_free(m->alloc, vf.bound, (size_t)m->nsyms + 1);
  mlc_status s = NULL;
  if (vf.nproblems) {
    if (vf.nproblems > MAX_REPORTED)
      mlc_sb_printf(&vf.msg, "\n  (and %d more)", vf.nproblems - MAX_REPORTED);
    s = mlc_make_status(MLC_INTERNAL, "graph verify: %d problem%s:%s", vf.nproblems,
                        vf.nproblems == 1 ? "" : "s", mlc_sb_str(&vf.msg));
  }
  mlc_sb_fini(&vf.msg);
  return s;
}
