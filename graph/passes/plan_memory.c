/*
** plan_memory.c: static memory planning by liveness (StaticPlanBlockMemory).
**
** Every intermediate value (a binding output that the function does not
** return) gets a storage id; values whose lifetimes do not overlap share a
** storage.  A value is live from the binding that defines it to the last
** binding that reads it.  A binding's outputs are placed before its dead
** inputs are released, so no kernel ever writes over one of its own inputs.
** A storage is sized for its largest value (at run time, when symbolic dims
** are bound), so when choosing a free storage for a value of known size the
** pass takes the smallest one that is large enough (best fit), else the
** largest one.  Returned values get no storage: they live in the output
** buffers the runtime owns.
*/
#include <stdlib.h>
#include <string.h>

#include "graph/pass.h"

typedef struct storage {
  int64_t bytes; /* largest static size seen; -1 if some value is symbolic */
  int free;
} storage;

static int64_t value_bytes(const mlc_value *v) {
  int64_t n = mlc_type_numel(&v->type);
  if (n < 0) return -1;
  return n * (int64_t)mlc_dtype_size(v->type.dtype);
}

/* Picks a free storage for |need| bytes (-1: unknown), or -1 for a new one. */
static int pick(const storage *st, int n, int64_t need) {
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (!st[i].free) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    int64_t a = st[i].bytes, b = st[best].bytes;
    int fits_a = need >= 0 && a >= need, fits_b = need >= 0 && b >= need;
    if (fits_a != fits_b) {
      if (fits_a) best = i;
    } else if (fits_a ? a < b : a > b) {
      best = i;
    }
  }
  return best;
}

static mlc_status plan_func(mlc_module *m, mlc_func *f) {
  int nv = m->next_value_id;
  int *last_use = mlc_mem_alloc(sizeof(int) * (size_t)(nv ? nv : 1));
  char *is_ret = mlc_mem_calloc((size_t)(nv ? nv : 1), 1);
  char *released = mlc_mem_calloc((size_t)(nv ? nv : 1), 1);
  storage *st = NULL;
  int nst = 0, cap = 0;
  mlc_status s = NULL;
  if (!last_use || !is_ret || !released) {
    s = mlc_oom();
    goto done;
  }
  for (int i = 0; i < nv; i++) last_use[i] = -1;
  for (int i = 0; i < f->nrets; i++) is_ret[f->rets[i]->id] = 1;
  int pos = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, pos++) {
      mlc_binding *b = f->blocks[bi].bindings[k];
      for (int a = 0; a < b->nargs; a++) last_use[b->args[a]->id] = pos;
    }
  pos = 0;
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int k = 0; k < f->blocks[bi].n; k++, pos++) {
      mlc_binding *b = f->blocks[bi].bindings[k];
      for (int o = 0; o < b->nouts; o++) {
        mlc_value *v = b->outs[o];
        v->storage = -1;
        if (is_ret[v->id]) continue;
        int64_t need = value_bytes(v);
        int id = pick(st, nst, need);
        if (id < 0) {
          if (nst == cap) {
            cap = cap ? cap * 2 : 16;
            storage *ns = mlc_mem_realloc(st, sizeof *st * (size_t)cap);
            if (!ns) {
              s = mlc_oom();
              goto done;
            }
            st = ns;
          }
          id = nst++;
          st[id].bytes = 0;
        }
        st[id].free = 0;
        if (need < 0 || st[id].bytes < 0)
          st[id].bytes = -1;
        else if (need > st[id].bytes)
          st[id].bytes = need;
        v->storage = id;
      }
      /* Release the inputs whose last use this was, then dead outputs. */
      for (int a = 0; a < b->nargs; a++) {
        mlc_value *v = b->args[a];
        if (v->kind == MLC_VALUE_VAR && v->storage >= 0 && last_use[v->id] == pos &&
            !released[v->id]) {
          released[v->id] = 1;
          st[v->storage].free = 1;
        }
      }
      for (int o = 0; o < b->nouts; o++) {
        mlc_value *v = b->outs[o];
        if (v->storage >= 0 && last_use[v->id] < 0) {
          released[v->id] = 1;
          st[v->storage].free = 1;
        }
      }
    }
  f->nstorages = nst;
done:
  mlc_mem_free(last_use);
  mlc_mem_free(is_ret);
  mlc_mem_free(released);
  mlc_mem_free(st);
  return s;
}

mlc_status mlc_pass_plan_memory(mlc_module *m, const mlc_pass_ctx *ctx) {
  (void)ctx;
  for (int i = 0; i < m->nfuncs; i++) MLC_RETURN_IF_ERROR(plan_func(m, m->funcs[i]));
  return NULL;
}
