/*
** transform_layout.c: sch.transform_layout(block=b, buffer_index=0,
** buffer_kind="write", index_map="lambda n, c, h, w: (n, c // 16, h, w, c % 16)").
**
** The |buffer_index|-th buffer block |b| reads ("read") or writes
** ("write") (access.h: order of first access) takes a new layout: element
** [x0, x1, ...] moves to [f0(x), f1(x), ...] of a buffer whose shape is
** the range of the map over the old shape.  Every load and store of the
** buffer in the function is rewritten to the new indices (simplified with
** the loop and iteration variable domains), block regions of it become the
** whole new buffer.  The buffer keeps its name; an allocation changes in
** place, a parameter changes the function's signature: the caller must
** then pass the data in the new layout (that is how packed weight layouts
** such as OIHW16o are produced ahead of time).
**
** The map is parsed here: "lambda" then the variable names (one per
** dimension of the buffer), ':', then the new indices, a parenthesized
** comma-separated list (or one bare expression): integers, the lambda's
** variables, + - * // % (floor division and modulo), unary minus and
** parentheses, with Python's precedence.
**
** Legality: a known buffer kind, an index in range, a map that parses and
** has one variable per dimension (ARGUMENT); a buffer of constant shape
** (STRUCTURE; no scalar parameter is then bound from it); the map is a
** bijection from the old shape onto the new one: every new index has the
** range [0, E) with E known, the new shape has as many elements as the old
** one (otherwise the layout would need padding, which is refused: c // 16
** over c in [0, 20) needs 32 elements), and the new indices are an affine
** mixed-radix map of the variables (mlc_arith_iter_map) (NOT_AFFINE).
*/
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lower/arith.h"
#include "lower/schedule/access.h"

#define MAX_RANK 32
#define MAX_BUFS 256

/* ---- the index map parser --------------------------------------------------- */

typedef struct lparser {
  mlc_sch *s;
  const char *src, *p;
  int nvars;
  mlc_tir_var *vars[MAX_RANK];
  const char *err; /* the first error (s->arena), NULL while fine */
  int depth;
} lparser;

static void lfail(lparser *lp, const char *what) {
  if (lp->err) return;
  lp->err = mlc_arena_printf(lp->s->arena, "index_map at offset %d: %s", (int)(lp->p - lp->src), what);
  if (!lp->err) lp->err = "index_map: out of memory";
}

static void skip_ws(lparser *lp) {
  while (*lp->p == ' ' || *lp->p == '\t' || *lp->p == '\n' || *lp->p == '\r') lp->p++;
}

static int accept(lparser *lp, const char *tok) {
  skip_ws(lp);
  size_t n = strlen(tok);
  if (strncmp(lp->p, tok, n) != 0) return 0;
  /* '/' alone is not '//' */
  if (tok[0] == '/' && n == 1) return 0;
  lp->p += n;
  return 1;
}

/* An identifier at the cursor (into |buf|), or 0. */
static int ident(lparser *lp, char *buf, size_t cap) {
  skip_ws(lp);
  const char *q = lp->p;
  if (!(isalpha((unsigned char)*q) || *q == '_')) return 0;
  size_t n = 0;
  while (isalnum((unsigned char)q[n]) || q[n] == '_') n++;
  if (n >= cap) {
    lfail(lp, "name too long");
    return 0;
  }
  memcpy(buf, q, n);
  buf[n] = 0;
  lp->p += n;
  return 1;
}

static mlc_tir_expr *lexpr(lparser *lp);

static mlc_tir_expr *latom(lparser *lp) {
  mlc_tir_module *m = lp->s->m;
  skip_ws(lp);
  if (++lp->depth > 64) {
    lfail(lp, "expression nested too deeply");
    return NULL;
  }
  mlc_tir_expr *r = NULL;
  char name[64];
  if (accept(lp, "(")) {
    r = lexpr(lp);
    if (r && !accept(lp, ")")) lfail(lp, "expected ')'");
  } else if (accept(lp, "-")) {
    mlc_tir_expr *a = latom(lp);
    r = a ? mlc_tir_sub(m, mlc_tir_i64(m, 0), a) : NULL;
  } else if (isdigit((unsigned char)*lp->p)) {
    char *end;
    errno = 0;
    long long v = strtoll(lp->p, &end, 10);
    if (errno || isalpha((unsigned char)*end) || *end == '_' || *end == '.') {
      lfail(lp, "bad integer");
      lp->depth--;
      return NULL;
    }
    lp->p = end;
    r = mlc_tir_i64(m, v);
  } else if (ident(lp, name, sizeof name)) {
    for (int i = 0; i < lp->nvars; i++)
      if (strcmp(lp->vars[i]->name, name) == 0) r = mlc_tir_ref(m, lp->vars[i]);
    if (!r) {
      lp->p -= strlen(name); /* the error points at the name */
      lfail(lp, mlc_arena_printf(lp->s->arena, "unknown name %s", name));
    }
  } else {
    lfail(lp, *lp->p ? "expected a number, a variable or '('" : "unexpected end");
  }
  lp->depth--;
  return r;
}

static mlc_tir_expr *lterm(lparser *lp) {
  mlc_tir_module *m = lp->s->m;
  mlc_tir_expr *a = latom(lp);
  while (a && !lp->err) {
    mlc_tir_binop op;
    if (accept(lp, "*"))
      op = MLC_TIR_MUL;
    else if (accept(lp, "//"))
      op = MLC_TIR_FLOORDIV;
    else if (accept(lp, "%"))
      op = MLC_TIR_FLOORMOD;
    else if (skip_ws(lp), *lp->p == '/') {
      lfail(lp, "'/' is not integer division: use '//'");
      return NULL;
    } else
      break;
    mlc_tir_expr *b = latom(lp);
    if (!b) return NULL;
    a = mlc_tir_binary(m, op, a, b);
  }
  return lp->err ? NULL : a;
}

static mlc_tir_expr *lexpr(lparser *lp) {
  mlc_tir_module *m = lp->s->m;
  mlc_tir_expr *a = lterm(lp);
  while (a && !lp->err) {
    mlc_tir_binop op;
    if (accept(lp, "+"))
      op = MLC_TIR_ADD;
    else if (accept(lp, "-"))
      op = MLC_TIR_SUB;
    else
      break;
    mlc_tir_expr *b = lterm(lp);
    if (!b) return NULL;
    a = mlc_tir_binary(m, op, a, b);
  }
  return lp->err ? NULL : a;
}

/* Parses |src|: the variables into lp->vars, the new indices into |outs|
** (room for MAX_RANK); the count, or -1 with lp->err set. */
static int parse_map(lparser *lp, mlc_tir_expr **outs) {
  char name[64];
  if (!ident(lp, name, sizeof name) || strcmp(name, "lambda") != 0) {
    lfail(lp, "expected 'lambda'");
    return -1;
  }
  do {
    if (!ident(lp, name, sizeof name)) {
      lfail(lp, "expected a variable name");
      return -1;
    }
    for (int i = 0; i < lp->nvars; i++)
      if (strcmp(lp->vars[i]->name, name) == 0) {
        lfail(lp, mlc_arena_printf(lp->s->arena, "variable %s named twice", name));
        return -1;
      }
    if (lp->nvars >= MAX_RANK) {
      lfail(lp, "too many variables");
      return -1;
    }
    if (!(lp->vars[lp->nvars++] = mlc_tir_var_new(lp->s->m, name, MLC_DTYPE_I64))) {
      lfail(lp, "out of memory");
      return -1;
    }
  } while (accept(lp, ","));
  if (!accept(lp, ":")) {
    lfail(lp, "expected ':' after the variables");
    return -1;
  }
  int n = 0;
  skip_ws(lp);
  const char *save = lp->p;
  int tuple = 0;
  if (accept(lp, "(")) {
    /* a tuple, unless the parenthesis closes an expression continued after it */
    mlc_tir_expr *e = lexpr(lp);
    if (e && (accept(lp, ",") || (skip_ws(lp), *lp->p == ')'))) {
      tuple = 1;
      outs[n++] = e;
      if (*lp->p != ')') {
        while (!lp->err) {
          skip_ws(lp);
          if (*lp->p == ')') break;
          if (n >= MAX_RANK) {
            lfail(lp, "too many indices");
            return -1;
          }
          if (!(outs[n++] = lexpr(lp))) break;
          if (!accept(lp, ",")) break;
        }
      }
      if (!lp->err && !accept(lp, ")")) lfail(lp, "expected ',' or ')'");
      /* "(c) // 2": one parenthesized expression continued */
      if (!lp->err && n == 1 && (skip_ws(lp), *lp->p)) {
        tuple = 0;
        n = 0;
      }
    }
    if (!tuple) {
      lp->p = save;
      lp->err = NULL;
    }
  }
  if (!tuple) {
    if (!(outs[n++] = lexpr(lp))) return -1;
  }
  skip_ws(lp);
  if (!lp->err && *lp->p) lfail(lp, "unexpected text after the map");
  if (!lp->err && n == 0) lfail(lp, "no indices");
  return lp->err ? -1 : n;
}

/* ---- rewriting -------------------------------------------------------------- */

typedef struct lmap {
  int nvars;
  mlc_tir_var **vars;
  int nout;
  mlc_tir_expr **outs;
  mlc_arith *an; /* every loop and iteration variable bound to its domain */
} lmap;

static mlc_tir_expr **map_indices(void *ctx, mlc_tir_module *m, int n, mlc_tir_expr *const *old) {
  lmap *lm = ctx;
  if (n != lm->nvars) return NULL;
  mlc_tir_subst sub = {n, lm->vars, old, 0, NULL, NULL, 0};
  mlc_tir_expr **r = MLC_ARENA_ARRAY(m->arena, (size_t)lm->nout, mlc_tir_expr *);
  if (!r) return NULL;
  for (int i = 0; i < lm->nout; i++) {
    mlc_tir_expr *e = mlc_tir_expr_copy(m, lm->outs[i], &sub);
    if (!e || !(r[i] = mlc_arith_simplify(lm->an, m, e))) return NULL;
  }
  return r;
}

/* Binds every loop and block iteration variable of |st| to its domain. */
static mlc_status bind_domains(mlc_arith *an, const mlc_tir_stmt *st) {
  if (!st) return NULL;
  switch (st->kind) {
    case MLC_TIR_FOR:
      MLC_RETURN_IF_ERROR(mlc_arith_bind(an, st->loop.var, st->loop.min, st->loop.extent));
      return bind_domains(an, st->loop.body);
    case MLC_TIR_SEQ:
      for (int i = 0; i < st->seq.n; i++) MLC_RETURN_IF_ERROR(bind_domains(an, st->seq.stmts[i]));
      return NULL;
    case MLC_TIR_IF:
      MLC_RETURN_IF_ERROR(bind_domains(an, st->if_.then_s));
      return bind_domains(an, st->if_.else_s);
    case MLC_TIR_ALLOCATE: return bind_domains(an, st->alloc.body);
    case MLC_TIR_BLOCK:
      for (int i = 0; i < st->block.niters; i++) {
        const mlc_tir_iter_var *it = &st->block.iters[i];
        MLC_RETURN_IF_ERROR(mlc_arith_bind(an, it->var, it->min, it->extent));
      }
      MLC_RETURN_IF_ERROR(bind_domains(an, st->block.init));
      return bind_domains(an, st->block.body);
    case MLC_TIR_STORE:
    case MLC_TIR_EVALUATE:
    case MLC_TIR_ASSERT: return NULL;
  }
  return NULL;
}

/* Checks the map over |buf|'s shape and computes the new shape. */
static mlc_status check_map(mlc_sch *s, mlc_arith *an, const mlc_tir_buffer *buf, const char *text, lmap *lm,
                            int64_t *shape) {
  int64_t old_n = 1, new_n = 1;
  for (int d = 0; d < buf->rank; d++) {
    MLC_RETURN_IF_ERROR(mlc_arith_bind_c(an, lm->vars[d], 0, buf->shape[d]->int_value));
    old_n *= buf->shape[d]->int_value;
  }
  for (int i = 0; i < lm->nout; i++) {
    int64_t lo, hi;
    if (!mlc_arith_const_bound(an, lm->outs[i], &lo, &hi))
      return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "new index %d of \"%s\" has no constant range over the shape of %s",
                      i, text, buf->name);
    if (lo != 0)
      return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE,
                      "new index %d of \"%s\" ranges over [%lld, %lld] over the shape of %s: it must start at 0", i,
                      text, (long long)lo, (long long)hi, buf->name);
    shape[i] = hi + 1;
    if (new_n > INT64_MAX / shape[i])
      return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "the new shape of %s is too large", buf->name);
    new_n *= shape[i];
  }
  if (new_n != old_n)
    return sch_fail(s, MLC_SCH_ERR_NOT_AFFINE,
                    "\"%s\" maps the %lld elements of %s onto a shape of %lld elements: not a bijection%s", text,
                    (long long)old_n, buf->name, (long long)new_n,
                    new_n > old_n ? " (the layout would need padding, which is not supported)" : "");
  mlc_tir_module *m = s->m;
  mlc_tir_expr *exts[MAX_RANK];
  for (int i = 0; i < lm->nout; i++)
    if (!(exts[i] = mlc_tir_i64(m, shape[i]))) return mlc_oom();
  mlc_arith_iter_map_result res;
  mlc_status st = mlc_arith_iter_map(an, lm->nout, (const mlc_tir_expr *const *)lm->outs,
                                     (const mlc_tir_expr *const *)exts, lm->nvars,
                                     (const mlc_tir_var *const *)lm->vars, &res);
  if (st && mlc_status_code(st) == MLC_INVALID_ARGUMENT) {
    mlc_status r = sch_fail(s, MLC_SCH_ERR_NOT_AFFINE, "\"%s\" is not a bijective affine map of %s: %s", text,
                            buf->name, mlc_status_message(st));
    mlc_status_free(st);
    return r;
  }
  return st;
}

mlc_status mlc_sch_apply_transform_layout(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *blk;
  int64_t index;
  const char *kind, *text;
  MLC_RETURN_IF_ERROR(sch_arg_block(s, in, "block", &blk));
  MLC_RETURN_IF_ERROR(sch_arg_int(s, in, "buffer_index", &index));
  MLC_RETURN_IF_ERROR(sch_arg_str(s, in, "buffer_kind", &kind));
  MLC_RETURN_IF_ERROR(sch_arg_str(s, in, "index_map", &text));
  mlc_tir_module *m = s->m;
  const char *bd = sch_desc(s, blk);
  int writes = strcmp(kind, "write") == 0;
  if (!writes && strcmp(kind, "read") != 0)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "buffer_kind must be \"read\" or \"write\", not \"%s\"", kind);
  mlc_tir_buffer *bufs[MAX_BUFS];
  int nb = sch_block_buffers(blk, writes, bufs, MAX_BUFS);
  if (nb < 0) return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s accesses more than %d buffers", bd, MAX_BUFS);
  if (index < 0 || index >= nb)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s %s %d buffer%s: no %s buffer %lld", bd, writes ? "writes" : "reads",
                    nb, nb == 1 ? "" : "s", kind, (long long)index);
  mlc_tir_buffer *buf = bufs[index];
  for (int d = 0; d < buf->rank; d++)
    if (buf->shape[d]->kind != MLC_TIR_INT_IMM)
      return sch_fail(s, MLC_SCH_ERR_STRUCTURE, "%s has a symbolic shape: a layout needs a constant one", buf->name);
  int param = -1;
  for (int i = 0; i < s->func->nparams; i++)
    if (s->func->params[i] == buf) param = i;
  mlc_tir_stmt *alloc = param < 0 ? sch_find_alloc(s, buf) : NULL;
  if (param < 0 && !alloc)
    return mlc_make_status(MLC_INTERNAL, "transform_layout: %s is neither a parameter nor allocated", buf->name);

  lparser lp = {s, text, text, 0, {0}, NULL, 0};
  mlc_tir_expr *outs[MAX_RANK];
  int nout = parse_map(&lp, outs);
  if (nout < 0) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s", lp.err ? lp.err : "index_map: out of memory");
  if (lp.nvars != buf->rank)
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "\"%s\" takes %d variable%s, %s has %d dimension%s", text, lp.nvars,
                    lp.nvars == 1 ? "" : "s", buf->name, buf->rank, buf->rank == 1 ? "" : "s");
  lmap lm = {lp.nvars, lp.vars, nout, outs, NULL};
  int64_t shape[MAX_RANK];
  mlc_arith *an = NULL;
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &an));
  mlc_status st = check_map(s, an, buf, text, &lm, shape);
  mlc_arith_destroy(an);
  if (st) return st;

  /* rewrite */
  mlc_tir_buffer *nbuf = mlc_tir_buffer_new_c(m, buf->name, buf->dtype, nout, shape, buf->scope);
  if (!nbuf) return mlc_oom();
  MLC_RETURN_IF_ERROR(mlc_arith_create(mlc_allocator_default(), &lm.an));
  st = bind_domains(lm.an, s->func->body);
  if (!st) st = sch_remap_buffer(s, s->func->body, buf, nbuf, 0, map_indices, &lm);
  mlc_arith_destroy(lm.an);
  if (!st) st = sch_refresh_regions(s, s->func->body, nbuf);
  if (st) return st;
  if (param >= 0)
    s->func->params[param] = nbuf;
  else
    alloc->alloc.buffer = nbuf;
  return NULL;
}

mlc_status mlc_sch_transform_layout(mlc_sch *s, mlc_sch_rv block, int index, const char *kind,
                                    const char *index_map) {
  mlc_sch_arg a[4] = {MLC_SCH_RV_ARG(block), MLC_SCH_INT_ARG(index), MLC_SCH_STR_ARG(kind),
                      MLC_SCH_STR_ARG(index_map)};
  a[0].key = "block";
  a[1].key = "buffer_index";
  a[2].key = "buffer_kind";
  a[3].key = "index_map";
  return mlc_sch_apply(s, MLC_SCH_INST_TRANSFORM_LAYOUT, 4, a, NULL, NULL);
}
