/*
** state.c: the schedule state: the working copy of the function, the
** handle table, navigation in the statement tree, argument access for the
** primitives, and the lookups (get_block, get_loops, ...).
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "lower/schedule/sched_int.h"

static const char *const error_names[] = {
    "ok",
#define X(e, d) d,
    MLC_SCH_ERRORS(X)
#undef X
};

const char *mlc_sch_error_name(mlc_sch_error e) {
  return (unsigned)e < MLC_SCH_ERR_COUNT ? error_names[e] : "?";
}

/* ---- create / destroy -------------------------------------------------------- */

mlc_status mlc_sch_create(mlc_tir_module *m, const mlc_tir_func *f, uint64_t seed, mlc_sch **out) {
  *out = NULL;
  if (!m || !f) return mlc_make_status(MLC_INVALID_ARGUMENT, "schedule: no function");
  mlc_sch *s = mlc_mem_calloc(1, sizeof *s);
  if (!s) return mlc_oom();
  s->m = m;
  s->arena = mlc_arena_create(mlc_allocator_default());
  s->rng = seed ^ 0x9e3779b97f4a7c15ull;
  if (!s->arena) {
    mlc_mem_free(s);
    return mlc_oom();
  }
  mlc_tir_stmt *body = mlc_tir_stmt_copy(m, f->body, NULL);
  mlc_tir_func *g = body ? mlc_tir_func_new(m, f->name, f->nparams, f->params, body) : NULL;
  mlc_status st = g ? NULL : mlc_oom();
  for (int i = 0; !st && i < f->nscalars; i++)
    st = mlc_tir_func_add_scalar(m, g, f->scalars[i].var, f->scalars[i].param, f->scalars[i].dim);
  for (int i = 0; !st && i < f->nviews; i++) st = mlc_tir_func_add_view(m, g, f->views[i]);
  for (int i = 0; !st && i < f->nattrs; i++) {
    const mlc_tir_attr *a = &f->attrs[i];
    switch (a->kind) {
      case MLC_TIR_ATTR_STR: st = mlc_tir_func_set_attr_str(m, g, a->key, a->s); break;
      case MLC_TIR_ATTR_INT: st = mlc_tir_func_set_attr_int(m, g, a->key, a->i); break;
      case MLC_TIR_ATTR_BOOL: st = mlc_tir_func_set_attr_bool(m, g, a->key, (int)a->i); break;
      case MLC_TIR_ATTR_FLOAT: /* annotations only: no function has one */
        st = mlc_make_status(MLC_INVALID_ARGUMENT, "schedule: float function attribute %s", a->key);
        break;
    }
  }
  if (st) {
    mlc_sch_destroy(s);
    return st;
  }
  s->func = g;
  *out = s;
  return NULL;
}

void mlc_sch_destroy(mlc_sch *s) {
  if (!s) return;
  mlc_mem_free(s->rvs);
  mlc_mem_free(s->trace);
  mlc_arena_destroy(s->arena);
  mlc_mem_free(s);
}

mlc_tir_func *mlc_sch_func(const mlc_sch *s) { return s->func; }
mlc_tir_module *mlc_sch_module(const mlc_sch *s) { return s->m; }
mlc_sch_error mlc_sch_last_error(const mlc_sch *s) { return s->last_error; }

static const sch_entry *entry(const mlc_sch *s, mlc_sch_rv rv) {
  return rv > 0 && rv < s->nrvs ? &s->rvs[rv] : NULL;
}

mlc_sch_rv_kind mlc_sch_rv_kind_of(const mlc_sch *s, mlc_sch_rv rv) {
  const sch_entry *e = entry(s, rv);
  return e ? e->kind : MLC_SCH_RV_NONE;
}
mlc_tir_stmt *mlc_sch_rv_stmt(const mlc_sch *s, mlc_sch_rv rv) {
  const sch_entry *e = entry(s, rv);
  return e ? e->stmt : NULL;
}
int64_t mlc_sch_rv_int(const mlc_sch *s, mlc_sch_rv rv) {
  const sch_entry *e = entry(s, rv);
  return e ? e->value : 0;
}

/* ---- errors ---------------------------------------------------------------- */

mlc_status sch_fail(mlc_sch *s, mlc_sch_error cls, const char *fmt, ...) {
  s->last_error = cls;
  va_list ap;
  va_start(ap, fmt);
  mlc_status st = mlc_status_makev_(__FILE__, __LINE__, MLC_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return st;
}

const char *sch_desc(mlc_sch *s, const mlc_tir_stmt *st) {
  const char *r = NULL;
  if (!st) return "(none)";
  if (st->kind == MLC_TIR_FOR)
    r = mlc_arena_printf(s->arena, "loop %s", st->loop.var->name);
  else if (st->kind == MLC_TIR_BLOCK)
    r = mlc_arena_printf(s->arena, "block \"%s\"", st->block.name);
  else
    r = "statement";
  return r ? r : "?";
}

const char *sch_expr_str(mlc_sch *s, const mlc_tir_expr *e) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_tir_print_expr(e, &b);
  const char *r = b.oom ? NULL : mlc_arena_strdup(s->arena, b.len ? mlc_sb_str(&b) : "");
  mlc_sb_fini(&b);
  return r ? r : "?";
}

/* ---- handles --------------------------------------------------------------- */

static mlc_sch_rv add_entry(mlc_sch *s, sch_entry e) {
  if (s->nrvs == 0) s->nrvs = 1; /* handle 0 is "none" */
  if (s->nrvs >= s->cap_rvs) {
    int cap = s->cap_rvs ? s->cap_rvs * 2 : 64;
    sch_entry *n = mlc_mem_realloc(s->rvs, (size_t)cap * sizeof *n);
    if (!n) return 0;
    s->rvs = n;
    s->cap_rvs = cap;
  }
  s->rvs[s->nrvs] = e;
  return s->nrvs++;
}

mlc_sch_rv sch_new_rv(mlc_sch *s, mlc_sch_rv_kind kind, mlc_tir_stmt *st) {
  sch_entry e = {kind, st, 0, SCH_LOC_LOOP, NULL};
  return add_entry(s, e);
}
mlc_sch_rv sch_new_int_rv(mlc_sch *s, int64_t v) {
  sch_entry e = {MLC_SCH_RV_INT, NULL, v, SCH_LOC_LOOP, NULL};
  return add_entry(s, e);
}
mlc_sch_rv sch_new_location_rv(mlc_sch *s, sch_loc loc) {
  sch_entry e = {MLC_SCH_RV_LOOP, NULL, 0, loc, NULL};
  return add_entry(s, e);
}

mlc_status sch_out(mlc_sch *s, mlc_sch_inst *in, mlc_sch_rv rv) {
  (void)s;
  if (!rv) return mlc_oom();
  if (in->nouts >= MLC_SCH_MAX_OUTS)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "more than %d outputs", MLC_SCH_MAX_OUTS);
  in->outs[in->nouts++] = rv;
  return NULL;
}

mlc_status sch_out_stmt(mlc_sch *s, mlc_sch_inst *in, mlc_sch_rv_kind kind, mlc_tir_stmt *st) {
  return sch_out(s, in, sch_new_rv(s, kind, st));
}

void sch_retire(mlc_sch *s, const mlc_tir_stmt *st) {
  for (int i = 1; i < s->nrvs; i++)
    if (s->rvs[i].stmt == st) {
      s->rvs[i].stmt = NULL;
      s->rvs[i].retired_by = s->cur_prim ? s->cur_prim : "a primitive";
    }
}

void sch_repoint(mlc_sch *s, const mlc_tir_stmt *old, mlc_tir_stmt *repl) {
  for (int i = 1; i < s->nrvs; i++)
    if (s->rvs[i].stmt == old) s->rvs[i].stmt = repl;
}

/* ---- arguments ------------------------------------------------------------- */

const mlc_sch_arg *sch_arg(const mlc_sch_inst *in, const char *key) {
  for (int i = 0; i < in->nargs; i++)
    if (in->args[i].key && strcmp(in->args[i].key, key) == 0) return &in->args[i];
  return NULL;
}

static mlc_status missing(mlc_sch *s, const char *key) {
  return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "missing argument %s", key);
}

static mlc_status item_stmt(mlc_sch *s, const mlc_sch_arg *a, const char *what, mlc_sch_rv_kind kind,
                            mlc_tir_stmt **out) {
  const char *kname = kind == MLC_SCH_RV_BLOCK ? "block" : "loop";
  if (a->kind != MLC_SCH_ARG_RV) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s must be a %s handle", what, kname);
  const sch_entry *e = entry(s, a->rv);
  if (!e) return sch_fail(s, MLC_SCH_ERR_HANDLE, "%s: unknown handle %d", what, a->rv);
  if (e->kind != kind)
    return sch_fail(s, MLC_SCH_ERR_HANDLE, "%s: handle %d is not a %s", what, a->rv, kname);
  if (e->retired_by)
    return sch_fail(s, MLC_SCH_ERR_HANDLE, "%s: the %s of handle %d was removed by %s", what, kname, a->rv,
                    e->retired_by);
  if (!e->stmt)
    return sch_fail(s, MLC_SCH_ERR_HANDLE, "%s: handle %d is the location \"%s\", not a loop", what, a->rv,
                    e->loc == SCH_LOC_ROOT ? "root" : "inline");
  *out = e->stmt;
  return NULL;
}

mlc_status sch_item_block(mlc_sch *s, const mlc_sch_arg *a, const char *what, mlc_tir_stmt **out) {
  return item_stmt(s, a, what, MLC_SCH_RV_BLOCK, out);
}
mlc_status sch_item_loop(mlc_sch *s, const mlc_sch_arg *a, const char *what, mlc_tir_stmt **out) {
  return item_stmt(s, a, what, MLC_SCH_RV_LOOP, out);
}

mlc_status sch_item_int(mlc_sch *s, const mlc_sch_arg *a, const char *what, int64_t *out) {
  if (a->kind == MLC_SCH_ARG_INT) {
    *out = a->i;
    return NULL;
  }
  if (a->kind == MLC_SCH_ARG_RV) {
    const sch_entry *e = entry(s, a->rv);
    if (!e || e->kind != MLC_SCH_RV_INT)
      return sch_fail(s, MLC_SCH_ERR_HANDLE, "%s: handle %d is not a sampled integer", what, a->rv);
    *out = e->value;
    return NULL;
  }
  return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s must be an integer", what);
}

mlc_status sch_arg_block(mlc_sch *s, const mlc_sch_inst *in, const char *key, mlc_tir_stmt **out) {
  const mlc_sch_arg *a = sch_arg(in, key);
  return a ? sch_item_block(s, a, key, out) : missing(s, key);
}
mlc_status sch_arg_loop(mlc_sch *s, const mlc_sch_inst *in, const char *key, mlc_tir_stmt **out) {
  const mlc_sch_arg *a = sch_arg(in, key);
  return a ? sch_item_loop(s, a, key, out) : missing(s, key);
}
mlc_status sch_arg_int(mlc_sch *s, const mlc_sch_inst *in, const char *key, int64_t *out) {
  const mlc_sch_arg *a = sch_arg(in, key);
  return a ? sch_item_int(s, a, key, out) : missing(s, key);
}
mlc_status sch_arg_int_opt(mlc_sch *s, const mlc_sch_inst *in, const char *key, int64_t dflt, int64_t *out) {
  const mlc_sch_arg *a = sch_arg(in, key);
  if (!a || a->kind == MLC_SCH_ARG_NONE) {
    *out = dflt;
    return NULL;
  }
  return sch_item_int(s, a, key, out);
}
mlc_status sch_arg_str(mlc_sch *s, const mlc_sch_inst *in, const char *key, const char **out) {
  const mlc_sch_arg *a = sch_arg(in, key);
  if (!a) return missing(s, key);
  if (a->kind != MLC_SCH_ARG_STR || !a->s) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s must be a string", key);
  *out = a->s;
  return NULL;
}
mlc_status sch_arg_list(mlc_sch *s, const mlc_sch_inst *in, const char *key, const mlc_sch_arg **out) {
  const mlc_sch_arg *a = sch_arg(in, key);
  if (!a) return missing(s, key);
  if (a->kind != MLC_SCH_ARG_LIST) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s must be a list", key);
  *out = a;
  return NULL;
}

mlc_status sch_arg_location(mlc_sch *s, const mlc_sch_inst *in, const char *key, mlc_tir_stmt **out,
                            sch_loc *loc) {
  const mlc_sch_arg *a = sch_arg(in, key);
  if (!a) return missing(s, key);
  if (a->kind == MLC_SCH_ARG_RV) {
    const sch_entry *e = entry(s, a->rv);
    if (e && e->kind == MLC_SCH_RV_LOOP && !e->stmt && !e->retired_by) {
      *out = NULL;
      *loc = e->loc;
      return NULL;
    }
  }
  MLC_RETURN_IF_ERROR(sch_item_loop(s, a, key, out));
  *loc = SCH_LOC_LOOP;
  return NULL;
}

/* ---- the tree -------------------------------------------------------------- */

static mlc_tir_stmt **find_slot(mlc_tir_stmt **slot, mlc_tir_stmt *parent, const mlc_tir_stmt *target,
                                mlc_tir_stmt **par_out) {
  mlc_tir_stmt *st = *slot;
  if (!st) return NULL;
  if (st == target) {
    if (par_out) *par_out = parent;
    return slot;
  }
  mlc_tir_stmt **r = NULL;
  switch (st->kind) {
    case MLC_TIR_FOR: return find_slot(&st->loop.body, st, target, par_out);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n && !r; i++) r = find_slot(&st->seq.stmts[i], st, target, par_out);
      return r;
    case MLC_TIR_IF:
      r = find_slot(&st->if_.then_s, st, target, par_out);
      return r ? r : find_slot(&st->if_.else_s, st, target, par_out);
    case MLC_TIR_ALLOCATE: return find_slot(&st->alloc.body, st, target, par_out);
    case MLC_TIR_BLOCK:
      r = find_slot(&st->block.init, st, target, par_out);
      return r ? r : find_slot(&st->block.body, st, target, par_out);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

mlc_tir_stmt **sch_slot(mlc_sch *s, const mlc_tir_stmt *target, mlc_tir_stmt **parent) {
  return find_slot(&s->func->body, NULL, target, parent);
}

static int find_path(mlc_tir_stmt *st, const mlc_tir_stmt *target, mlc_tir_stmt **path, int depth, int max) {
  if (!st) return -1;
  if (depth >= max) return -1;
  path[depth] = st;
  if (st == target) return depth + 1;
  int r = -1;
  switch (st->kind) {
    case MLC_TIR_FOR: return find_path(st->loop.body, target, path, depth + 1, max);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n && r < 0; i++) r = find_path(st->seq.stmts[i], target, path, depth + 1, max);
      return r;
    case MLC_TIR_IF:
      r = find_path(st->if_.then_s, target, path, depth + 1, max);
      return r >= 0 ? r : find_path(st->if_.else_s, target, path, depth + 1, max);
    case MLC_TIR_ALLOCATE: return find_path(st->alloc.body, target, path, depth + 1, max);
    case MLC_TIR_BLOCK:
      r = find_path(st->block.init, target, path, depth + 1, max);
      return r >= 0 ? r : find_path(st->block.body, target, path, depth + 1, max);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return -1;
  }
  return -1;
}

int sch_path(mlc_sch *s, const mlc_tir_stmt *target, mlc_tir_stmt **path, int max) {
  return find_path(s->func->body, target, path, 0, max);
}

#define MAX_DEPTH 512

int sch_loops_above(mlc_sch *s, const mlc_tir_stmt *st, mlc_tir_stmt **loops, int max) {
  mlc_tir_stmt *path[MAX_DEPTH];
  int n = sch_path(s, st, path, MAX_DEPTH);
  if (n < 0) return -1;
  int start = 0;
  for (int i = n - 2; i >= 0; i--)
    if (path[i]->kind == MLC_TIR_BLOCK) {
      start = i + 1;
      break;
    }
  int k = 0;
  for (int i = start; i < n - 1; i++)
    if (path[i]->kind == MLC_TIR_FOR) {
      if (k >= max) return -1;
      loops[k++] = path[i];
    }
  return k;
}

mlc_tir_stmt *sch_scope(mlc_sch *s, const mlc_tir_stmt *st) {
  mlc_tir_stmt *path[MAX_DEPTH];
  int n = sch_path(s, st, path, MAX_DEPTH);
  for (int i = n - 2; i >= 0; i--)
    if (path[i]->kind == MLC_TIR_BLOCK) return path[i];
  return NULL;
}

mlc_status sch_replace(mlc_sch *s, mlc_tir_stmt *old, mlc_tir_stmt *repl) {
  if (!repl) return mlc_oom();
  mlc_tir_stmt *parent = NULL;
  mlc_tir_stmt **slot = sch_slot(s, old, &parent);
  if (!slot) return mlc_make_status(MLC_INTERNAL, "schedule: statement not in the function");
  if (parent && parent->kind == MLC_TIR_SEQ && repl->kind == MLC_TIR_SEQ) {
    int at = (int)(slot - parent->seq.stmts);
    int n = parent->seq.n - 1 + repl->seq.n;
    mlc_tir_stmt **v = MLC_ARENA_ARRAY(s->m->arena, (size_t)n, mlc_tir_stmt *);
    if (!v) return mlc_oom();
    int k = 0;
    for (int i = 0; i < at; i++) v[k++] = parent->seq.stmts[i];
    for (int i = 0; i < repl->seq.n; i++) v[k++] = repl->seq.stmts[i];
    for (int i = at + 1; i < parent->seq.n; i++) v[k++] = parent->seq.stmts[i];
    parent->seq.stmts = v;
    parent->seq.n = n;
    return NULL;
  }
  *slot = repl;
  return NULL;
}

static int child_blocks(const mlc_tir_stmt *st, mlc_tir_stmt **out, int max, int k) {
  if (!st || k < 0) return k;
  switch (st->kind) {
    case MLC_TIR_BLOCK:
      if (k >= max) return -1;
      out[k] = (mlc_tir_stmt *)st;
      return k + 1;
    case MLC_TIR_FOR: return child_blocks(st->loop.body, out, max, k);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) k = child_blocks(st->seq.stmts[i], out, max, k);
      return k;
    case MLC_TIR_IF: return child_blocks(st->if_.else_s, out, max, child_blocks(st->if_.then_s, out, max, k));
    case MLC_TIR_ALLOCATE: return child_blocks(st->alloc.body, out, max, k);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return k;
  }
  return k;
}

int sch_child_blocks(const mlc_tir_stmt *st, mlc_tir_stmt **out, int max) {
  if (st && st->kind == MLC_TIR_BLOCK) {
    int k = child_blocks(st->block.init, out, max, 0);
    return child_blocks(st->block.body, out, max, k);
  }
  return child_blocks(st, out, max, 0);
}

static int expr_loads(const mlc_tir_expr *e, const mlc_tir_buffer *b) {
  if (!e) return 0;
  switch (e->kind) {
    case MLC_TIR_INT_IMM:
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_VAR_REF: return 0;
    case MLC_TIR_BINARY: return expr_loads(e->bin.a, b) || expr_loads(e->bin.b, b);
    case MLC_TIR_NOT:
    case MLC_TIR_CAST:
    case MLC_TIR_BROADCAST: return expr_loads(e->un.a, b);
    case MLC_TIR_RAMP: return expr_loads(e->ramp.base, b) || expr_loads(e->ramp.stride, b);
    case MLC_TIR_SELECT:
      return expr_loads(e->select.c, b) || expr_loads(e->select.t, b) || expr_loads(e->select.f, b);
    case MLC_TIR_LOAD:
      if (e->load.buffer == b) return 1;
      for (int i = 0; i < e->load.n; i++)
        if (expr_loads(e->load.indices[i], b)) return 1;
      return 0;
    case MLC_TIR_CALL:
      for (int i = 0; i < e->call.n; i++)
        if (expr_loads(e->call.args[i], b)) return 1;
      return 0;
    case MLC_TIR_REDUCE: return expr_loads(e->reduce.source, b);
  }
  return 0;
}

/* |mode| 0: stores to b; 1: loads from b. */
static int stmt_access(const mlc_tir_stmt *st, const mlc_tir_buffer *b, int mode) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_FOR:
      return (mode && (expr_loads(st->loop.min, b) || expr_loads(st->loop.extent, b))) ||
             stmt_access(st->loop.body, b, mode);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (stmt_access(st->seq.stmts[i], b, mode)) return 1;
      return 0;
    case MLC_TIR_STORE:
      if (!mode) return st->store.buffer == b;
      for (int i = 0; i < st->store.n; i++)
        if (expr_loads(st->store.indices[i], b)) return 1;
      return expr_loads(st->store.value, b);
    case MLC_TIR_IF:
      return (mode && expr_loads(st->if_.cond, b)) || stmt_access(st->if_.then_s, b, mode) ||
             stmt_access(st->if_.else_s, b, mode);
    case MLC_TIR_ALLOCATE: return stmt_access(st->alloc.body, b, mode);
    case MLC_TIR_EVALUATE: return mode && expr_loads(st->eval.value, b);
    case MLC_TIR_BLOCK:
      if (mode) {
        for (int i = 0; i < st->block.niters; i++)
          if (expr_loads(st->block.iters[i].binding, b)) return 1;
        if (expr_loads(st->block.predicate, b)) return 1;
      }
      return stmt_access(st->block.init, b, mode) || stmt_access(st->block.body, b, mode);
    case MLC_TIR_ASSERT:
      if (!mode) return 0;
      if (expr_loads(st->assert_.cond, b)) return 1;
      for (int i = 0; i < st->assert_.nvals; i++)
        if (expr_loads(st->assert_.vals[i], b)) return 1;
      return 0;
  }
  return 0;
}

int sch_block_writes(const mlc_tir_stmt *blk, const mlc_tir_buffer *b) { return stmt_access(blk, b, 0); }
int sch_block_reads(const mlc_tir_stmt *blk, const mlc_tir_buffer *b) { return stmt_access(blk, b, 1); }

int sch_contains(const mlc_tir_stmt *st, const mlc_tir_stmt *target) {
  mlc_tir_stmt *path[MAX_DEPTH];
  return st && find_path((mlc_tir_stmt *)st, target, path, 0, MAX_DEPTH) >= 0;
}

static int name_used(const mlc_tir_stmt *st, const char *name) {
  if (!st) return 0;
  switch (st->kind) {
    case MLC_TIR_BLOCK:
      return strcmp(st->block.name, name) == 0 || name_used(st->block.init, name) ||
             name_used(st->block.body, name);
    case MLC_TIR_FOR: return name_used(st->loop.body, name);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++)
        if (name_used(st->seq.stmts[i], name)) return 1;
      return 0;
    case MLC_TIR_IF: return name_used(st->if_.then_s, name) || name_used(st->if_.else_s, name);
    case MLC_TIR_ALLOCATE: return name_used(st->alloc.body, name);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return 0;
  }
  return 0;
}

const char *sch_unique_block_name(mlc_sch *s, const char *base) {
  if (!name_used(s->func->body, base)) return mlc_arena_strdup(s->m->arena, base);
  for (int i = 1; i < 1000000; i++) {
    const char *n = mlc_arena_printf(s->m->arena, "%s_%d", base, i);
    if (!n || !name_used(s->func->body, n)) return n;
  }
  return NULL;
}

mlc_status sch_add_alloc(mlc_sch *s, mlc_tir_buffer *b) {
  mlc_tir_stmt *a = mlc_tir_allocate(s->m, b, s->func->body);
  if (!a) return mlc_oom();
  s->func->body = a;
  return NULL;
}

uint64_t sch_rand(mlc_sch *s) {
  uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* ---- lookups ----------------------------------------------------------------- */

static int find_blocks(mlc_tir_stmt *st, const char *name, mlc_tir_stmt **out, int k) {
  if (!st) return k;
  switch (st->kind) {
    case MLC_TIR_BLOCK:
      if (strcmp(st->block.name, name) == 0) {
        if (k < 2) out[k] = st;
        k++;
      }
      return find_blocks(st->block.body, name, out, find_blocks(st->block.init, name, out, k));
    case MLC_TIR_FOR: return find_blocks(st->loop.body, name, out, k);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) k = find_blocks(st->seq.stmts[i], name, out, k);
      return k;
    case MLC_TIR_IF: return find_blocks(st->if_.else_s, name, out, find_blocks(st->if_.then_s, name, out, k));
    case MLC_TIR_ALLOCATE: return find_blocks(st->alloc.body, name, out, k);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return k;
  }
  return k;
}

mlc_status mlc_sch_apply_get_block(mlc_sch *s, mlc_sch_inst *in) {
  const char *name;
  MLC_RETURN_IF_ERROR(sch_arg_str(s, in, "name", &name));
  mlc_tir_stmt *found[2];
  int n = find_blocks(s->func->body, name, found, 0);
  if (n == 0) return sch_fail(s, MLC_SCH_ERR_NOT_FOUND, "no block named \"%s\" in %s", name, s->func->name);
  if (n > 1)
    return sch_fail(s, MLC_SCH_ERR_AMBIGUOUS, "%d blocks are named \"%s\" in %s", n, name, s->func->name);
  return sch_out_stmt(s, in, MLC_SCH_RV_BLOCK, found[0]);
}

mlc_status mlc_sch_apply_get_loops(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk, *loops[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &blk));
  int n = sch_loops_above(s, blk, loops, MLC_SCH_MAX_OUTS);
  if (n < 0)
    return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d loops around %s", MLC_SCH_MAX_OUTS, sch_desc(s, blk));
  for (int i = 0; i < n; i++) MLC_RETURN_IF_ERROR(sch_out_stmt(s, in, MLC_SCH_RV_LOOP, loops[i]));
  return NULL;
}

mlc_status mlc_sch_apply_get_child_blocks(mlc_sch *s, mlc_sch_inst *in) {
  const mlc_sch_arg *a = sch_arg(in, "parent");
  mlc_tir_stmt *parent = s->func->body, *blocks[MLC_SCH_MAX_OUTS];
  if (a && a->kind != MLC_SCH_ARG_NONE) {
    mlc_sch_rv_kind k = mlc_sch_rv_kind_of(s, a->kind == MLC_SCH_ARG_RV ? a->rv : 0);
    if (k == MLC_SCH_RV_BLOCK)
      MLC_RETURN_IF_ERROR(sch_item_block(s, a, "parent", &parent));
    else
      MLC_RETURN_IF_ERROR(sch_item_loop(s, a, "parent", &parent));
  }
  int n = sch_child_blocks(parent, blocks, MLC_SCH_MAX_OUTS);
  if (n < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than %d child blocks", MLC_SCH_MAX_OUTS);
  for (int i = 0; i < n; i++) MLC_RETURN_IF_ERROR(sch_out_stmt(s, in, MLC_SCH_RV_BLOCK, blocks[i]));
  return NULL;
}

/* Buffers |blk| writes: the parameters and allocations it stores to. */
static int buffers_of(mlc_sch *s, const mlc_tir_stmt *st, mlc_tir_buffer **out, int max, int k) {
  /* Collects the function's parameters and every allocated buffer. */
  if (!st) return k;
  (void)s;
  switch (st->kind) {
    case MLC_TIR_ALLOCATE:
      if (k < max) out[k++] = st->alloc.buffer;
      return buffers_of(s, st->alloc.body, out, max, k);
    case MLC_TIR_FOR: return buffers_of(s, st->loop.body, out, max, k);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) k = buffers_of(s, st->seq.stmts[i], out, max, k);
      return k;
    case MLC_TIR_IF: return buffers_of(s, st->if_.else_s, out, max, buffers_of(s, st->if_.then_s, out, max, k));
    case MLC_TIR_BLOCK: return buffers_of(s, st->block.body, out, max, buffers_of(s, st->block.init, out, max, k));
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return k;
  }
  return k;
}

/* Nonzero if |p| writes a buffer that |c| reads. */
static int feeds(mlc_sch *s, const mlc_tir_stmt *p, const mlc_tir_stmt *c) {
  mlc_tir_buffer *bufs[1024];
  int n = 0;
  for (int i = 0; i < s->func->nparams && n < 1024; i++) bufs[n++] = s->func->params[i];
  n = buffers_of(s, s->func->body, bufs, 1024, n);
  for (int i = 0; i < n; i++)
    if (sch_block_writes(p, bufs[i]) && sch_block_reads(c, bufs[i])) return 1;
  return 0;
}

static mlc_status producers_consumers(mlc_sch *s, mlc_sch_inst *in, int consumers) {
  mlc_tir_stmt *blk, *blocks[1024];
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &blk));
  mlc_tir_stmt *scope = sch_scope(s, blk);
  int n = sch_child_blocks(scope ? scope : s->func->body, blocks, 1024);
  if (n < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "more than 1024 blocks in one scope");
  int at = -1;
  for (int i = 0; i < n; i++)
    if (blocks[i] == blk) at = i;
  for (int i = 0; i < n; i++) {
    if (i == at) continue;
    int hit = consumers ? i > at && feeds(s, blk, blocks[i]) : i < at && feeds(s, blocks[i], blk);
    if (hit) MLC_RETURN_IF_ERROR(sch_out_stmt(s, in, MLC_SCH_RV_BLOCK, blocks[i]));
  }
  return NULL;
}

mlc_status mlc_sch_apply_get_producers(mlc_sch *s, mlc_sch_inst *in) { return producers_consumers(s, in, 0); }
mlc_status mlc_sch_apply_get_consumers(mlc_sch *s, mlc_sch_inst *in) { return producers_consumers(s, in, 1); }

/* ---- typed entry points of the lookups ---------------------------------------- */

static mlc_status copy_outs(const mlc_sch_rv *outs, int nouts, int max, mlc_sch_rv *out, int *n) {
  if (nouts > max) return mlc_make_status(MLC_OUT_OF_RANGE, "schedule: %d results, room for %d", nouts, max);
  memcpy(out, outs, (size_t)nouts * sizeof *out);
  *n = nouts;
  return NULL;
}

mlc_status mlc_sch_get_block(mlc_sch *s, const char *name, mlc_sch_rv *out) {
  mlc_sch_arg a[] = {MLC_SCH_STR_ARG(name)};
  a[0].key = "name";
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, MLC_SCH_INST_GET_BLOCK, 1, a, outs, NULL));
  *out = outs[0];
  return NULL;
}

static mlc_status list_lookup(mlc_sch *s, mlc_sch_inst_kind k, const char *key, mlc_sch_rv rv, int max,
                              mlc_sch_rv *out, int *n) {
  mlc_sch_arg a[] = {rv ? MLC_SCH_RV_ARG(rv) : MLC_SCH_NONE_ARG};
  a[0].key = key;
  mlc_sch_rv outs[MLC_SCH_MAX_OUTS];
  int nouts = 0;
  MLC_RETURN_IF_ERROR(mlc_sch_apply(s, k, 1, a, outs, &nouts));
  return copy_outs(outs, nouts, max, out, n);
}

mlc_status mlc_sch_get_loops(mlc_sch *s, mlc_sch_rv block, int max, mlc_sch_rv *out, int *n) {
  return list_lookup(s, MLC_SCH_INST_GET_LOOPS, "block", block, max, out, n);
}
mlc_status mlc_sch_get_child_blocks(mlc_sch *s, mlc_sch_rv parent, int max, mlc_sch_rv *out, int *n) {
  return list_lookup(s, MLC_SCH_INST_GET_CHILD_BLOCKS, "parent", parent, max, out, n);
}
mlc_status mlc_sch_get_producers(mlc_sch *s, mlc_sch_rv block, int max, mlc_sch_rv *out, int *n) {
  return list_lookup(s, MLC_SCH_INST_GET_PRODUCERS, "block", block, max, out, n);
}
mlc_status mlc_sch_get_consumers(mlc_sch *s, mlc_sch_rv block, int max, mlc_sch_rv *out, int *n) {
  return list_lookup(s, MLC_SCH_INST_GET_CONSUMERS, "block", block, max, out, n);
}
