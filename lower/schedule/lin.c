/*
** lin.c: linear forms of index expressions (tensorize_int.h), and
** structural equality of expressions.
**
** A small local reading of affine index arithmetic for blockize and
** tensorize: sums, differences and products by constants are opened up,
** everything else is an atom compared by structure.  Floordiv/floormod
** chains (what fuse produces) stay atoms, so a binding of a fused loop is
** divisible only where its atoms are wholly outside or inside a subtree.
*/
#include <stdint.h>
#include <string.h>

#include "lower/schedule/tensorize_int.h"

static int same_atom(const sch_lin_term *t, const mlc_tir_expr *atom, const mlc_tir_var *var) {
  if (var || t->var) return t->var == var;
  return mlc_tir_expr_equal(t->atom, atom);
}

/* Adds coef * atom to |l|. */
static int add_term(sch_lin *l, const mlc_tir_expr *atom, const mlc_tir_var *var, int64_t coef) {
  if (coef == 0) return 0;
  for (int i = 0; i < l->n; i++)
    if (same_atom(&l->t[i], atom, var)) {
      int64_t c;
      if (__builtin_add_overflow(l->t[i].coef, coef, &c) || c == INT64_MIN) return -1;
      if (c == 0) {
        memmove(&l->t[i], &l->t[i + 1], (size_t)(l->n - i - 1) * sizeof l->t[0]);
        l->n--;
      } else {
        l->t[i].coef = c;
      }
      return 0;
    }
  if (l->n >= SCH_LIN_MAX || coef == INT64_MIN) return -1; /* so that -coef exists */
  l->t[l->n++] = (sch_lin_term){atom, var, coef};
  return 0;
}

int sch_lin_add(sch_lin *a, const sch_lin *b, int64_t scale) {
  int64_t c;
  if (__builtin_mul_overflow(b->c, scale, &c) || __builtin_add_overflow(a->c, c, &a->c)) return -1;
  for (int i = 0; i < b->n; i++) {
    if (__builtin_mul_overflow(b->t[i].coef, scale, &c)) return -1;
    if (add_term(a, b->t[i].atom, b->t[i].var, c)) return -1;
  }
  return 0;
}

/* Adds scale * e to |l|. */
static int lin_acc(sch_lin *l, const mlc_tir_expr *e, int64_t scale) {
  if (!e || !mlc_dtype_is_int(e->dtype)) return -1;
  switch (e->kind) {
    case MLC_TIR_INT_IMM: {
      int64_t c;
      if (__builtin_mul_overflow(e->int_value, scale, &c) || __builtin_add_overflow(l->c, c, &l->c)) return -1;
      return 0;
    }
    case MLC_TIR_VAR_REF: return add_term(l, e, e->var, scale);
    case MLC_TIR_BINARY: {
      const mlc_tir_expr *a = e->bin.a, *b = e->bin.b;
      if (e->bin.op == MLC_TIR_ADD) return lin_acc(l, a, scale) ? -1 : lin_acc(l, b, scale);
      if (e->bin.op == MLC_TIR_SUB) return lin_acc(l, a, scale) ? -1 : lin_acc(l, b, -scale);
      if (e->bin.op == MLC_TIR_MUL) {
        int64_t c;
        if (b->kind == MLC_TIR_INT_IMM)
          return __builtin_mul_overflow(scale, b->int_value, &c) ? -1 : lin_acc(l, a, c);
        if (a->kind == MLC_TIR_INT_IMM)
          return __builtin_mul_overflow(scale, a->int_value, &c) ? -1 : lin_acc(l, b, c);
      }
      return add_term(l, e, NULL, scale);
    }
    case MLC_TIR_FLOAT_IMM:
    case MLC_TIR_NOT:
    case MLC_TIR_SELECT:
    case MLC_TIR_CAST:
    case MLC_TIR_LOAD:
    case MLC_TIR_CALL:
    case MLC_TIR_RAMP:
    case MLC_TIR_BROADCAST:
    case MLC_TIR_REDUCE: return add_term(l, e, NULL, scale);
  }
  return -1;
}

int sch_lin_of(const mlc_tir_expr *e, sch_lin *out) {
  out->n = 0;
  out->c = 0;
  return lin_acc(out, e, 1);
}

int sch_lin_find_use(const sch_lin *l, int n, const mlc_tir_var *const *vars) {
  for (int i = 0; i < l->n; i++)
    for (int k = 0; k < n; k++)
      if (l->t[i].var ? l->t[i].var == vars[k] : mlc_tir_expr_uses_var(l->t[i].atom, vars[k])) return i;
  return -1;
}

int sch_lin_equal(const sch_lin *a, const sch_lin *b) {
  if (a->c != b->c || a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++) {
    int found = 0;
    for (int k = 0; k < b->n && !found; k++)
      found = same_atom(&b->t[k], a->t[i].atom, a->t[i].var) && b->t[k].coef == a->t[i].coef;
    if (!found) return 0;
  }
  return 1;
}

mlc_tir_expr *sch_lin_build(mlc_tir_module *m, const sch_lin *l) {
  /* positive terms first, then the constant when nothing is before it, then
  ** the negative terms, then the constant: 3 - v rather than 0 - v + 3 */
  mlc_tir_expr *r = NULL;
  int c_done = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < l->n; i++) {
      int64_t c = l->t[i].coef; /* never INT64_MIN (add_term) */
      if ((c < 0) != pass) continue;
      mlc_tir_expr *term = mlc_tir_mul(m, mlc_tir_expr_copy(m, l->t[i].atom, NULL), mlc_tir_i64(m, c < 0 ? -c : c));
      if (!term) return NULL;
      if (!r)
        r = c < 0 ? mlc_tir_sub(m, mlc_tir_i64(m, 0), term) : term;
      else
        r = c < 0 ? mlc_tir_sub(m, r, term) : mlc_tir_add(m, r, term);
      if (!r) return NULL;
    }
    if (pass == 0 && !r && l->c != 0) {
      r = mlc_tir_i64(m, l->c);
      c_done = 1;
    }
  }
  if (!r) return mlc_tir_i64(m, l->c);
  if (c_done || l->c == 0) return r;
  if (l->c > 0 || l->c == INT64_MIN) return mlc_tir_add(m, r, mlc_tir_i64(m, l->c));
  return mlc_tir_sub(m, r, mlc_tir_i64(m, -l->c));
}
