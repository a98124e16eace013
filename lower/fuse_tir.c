/*
** fuse_tir.c: every call of a primitive graph function (a fused group)
** becomes call_tir of one prim function (FuseTIR).
**
** fuse_ops leaves each group of op calls as a graph function marked
** primitive, called from main:
**
**   def fused_conv_add_relu(x, b):          # primitive
**       y = R.conv(x, W)                    # W: a module constant
**       z = R.add(y, b)
**       r = R.relu(z)
**       return r
**   main: r = cls.fused_conv_add_relu(x, b)       covered: conv1, add1, relu1
**
** fuse_tir runs each member's lowering rule (the rules legalization uses,
** lower/lower_int.h) in order on one te builder: a member reads the
** placeholders of the function's parameters, a placeholder for each tensor
** constant it reads (passed as an extra trailing argument of the call), the
** compute stages of earlier members, and scalar constants as immediates, as
** legalization inlines them.  The stages of the returned values are the
** prim function's outputs; the others become scratch buffers (the default
** schedule inlines or moves them next to their consumers):
**
**   main: r = R.call_tir(cls.fused_conv_add_relu, (x, b, W))
**
**   @T.prim_func fused_conv_add_relu(A, B, C, T_relu):
**       conv = T.alloc_buffer(...); T_add = T.alloc_buffer(...)
**       block conv ... block T_add ... block T_relu
**
** Symbolic dims share one table of scalar variables across the members.
** The binding keeps its |covered| nodes; its |pattern| becomes the
** highest pattern of its members (memory planning's in-place decisions).
** Calls whose members agree in op, attributes, types, inlined immediates
** and wiring (which parameter, constant or earlier output each argument
** is, which values are returned) share one prim function.  The primitive
** functions leave the module once no call of them remains.  Errors name
** the fused function and the member's node and op.
**
** The prim functions are added to the module's prim functions
** (mlc_lower_prims), owned by the module.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "graph/pass.h"
#include "lower/arith.h"
#include "lower/lower.h"
#include "lower/lower_int.h"

#define MAX_ARGS 64

/* Where a member's argument comes from. */
typedef enum src_kind { SRC_IMM, SRC_PARAM, SRC_CONST, SRC_MEMBER } src_kind;

typedef struct ft_state {
  mlc_module *gm;
  mlc_tir_module *tm;
  mlc_hash by_key; /* key -> prim func name (arena strings) */
  mlc_hash names;  /* prim function names in use */
  mlc_hash next;   /* base name -> the first suffix not known taken */
  int vector_bits; /* the target's (0: 512) */
  /* by value id, for the call being lowered (group's param_of, const_of,
  ** member_of): made once for the pass, all zero between calls, so that
  ** a model of thousands of fused calls does not take thousands of them */
  int *param_of, *const_of, *member_of;
} ft_state;

/* One fused call being lowered: the group's members and the wiring of
** their arguments. */
typedef struct group {
  mlc_func *g;
  int nmembers;
  mlc_binding **members;
  int ninl;             /* total argument slots */
  int *inl;             /* [member arg slot]: 1 inlined scalar */
  double *scalar;       /* [slot] */
  int *slot;            /* [member]: first slot of its args */
  int nconsts;
  mlc_value **consts;   /* tensor constants read, in order of first use */
  int *param_of;        /* [value id]: parameter index + 1, 0 if none */
  int *const_of;        /* [value id]: constant ordinal + 1 */
  int *member_of;       /* [value id]: defining member + 1 */
} group;

static mlc_status group_error(const group *gr, mlc_status s) {
  return mlc_status_annotate(s, "fuse_tir: fused function \"%s\"", gr->g->name);
}

static mlc_status member_error(const group *gr, const mlc_binding *b, const char *fmt, const char *what) {
  char where[512], msg[768];
  mlc_origin_str(&b->origin, where, sizeof where);
  snprintf(msg, sizeof msg, fmt, what);
  return mlc_make_status(MLC_INVALID_ARGUMENT, "fuse_tir: fused function \"%s\": %s%s%s: %s", gr->g->name,
                         where, where[0] ? ": " : "", b->kind == MLC_CALL_OP ? mlc_op_name[b->op] : "call", msg);
}

/* Collects the members of |gr->g| and the source of every argument. */
static mlc_status collect(ft_state *st, group *gr) {
  mlc_module *gm = st->gm;
  mlc_func *g = gr->g;
  mlc_arena *a = gm->arena;
  int n = 0, slots = 0;
  for (int bi = 0; bi < g->nblocks; bi++) n += g->blocks[bi].n;
  gr->members = MLC_ARENA_ARRAY(a, (size_t)(n ? n : 1), mlc_binding *);
  gr->slot = MLC_ARENA_ARRAY(a, (size_t)(n ? n : 1), int);
  gr->param_of = st->param_of;
  gr->const_of = st->const_of;
  gr->member_of = st->member_of;
  if (!gr->members || !gr->slot) return mlc_oom();
  if (n == 0)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "fuse_tir: fused function \"%s\" has no op calls", g->name);
  for (int bi = 0; bi < g->nblocks; bi++)
    for (int k = 0; k < g->blocks[bi].n; k++) {
      mlc_binding *b = g->blocks[bi].bindings[k];
      if (b->kind != MLC_CALL_OP)
        return member_error(gr, b, "%s", "a fused function holds only op calls");
      if (b->nargs > MAX_ARGS) return member_error(gr, b, "%s", "too many arguments");
      if (!mlc_lg_rule(b->op)) return member_error(gr, b, "%s", "no lowering rule for this op");
      gr->slot[gr->nmembers] = slots;
      gr->members[gr->nmembers++] = b;
      slots += b->nargs;
    }
  gr->ninl = slots;
  gr->inl = MLC_ARENA_ARRAY(a, (size_t)(slots ? slots : 1), int);
  gr->scalar = MLC_ARENA_ARRAY(a, (size_t)(slots ? slots : 1), double);
  gr->consts = MLC_ARENA_ARRAY(a, (size_t)(slots ? slots : 1), mlc_value *);
  if (!gr->inl || !gr->scalar || !gr->consts) return mlc_oom();
  for (int i = 0; i < g->nparams; i++) gr->param_of[g->params[i]->id] = i + 1;
  for (int j = 0; j < gr->nmembers; j++) {
    mlc_binding *b = gr->members[j];
    int *inl = gr->inl + gr->slot[j], ninl = 0;
    double *scalar = gr->scalar + gr->slot[j];
    for (int i = 0; i < b->nargs; i++) {
      mlc_value *v = b->args[i];
      inl[i] = v->kind == MLC_VALUE_CONST && mlc_lg_inline_scalar(gm, b, i, &scalar[i]);
      ninl += inl[i];
      if (v->kind == MLC_VALUE_VAR && !gr->member_of[v->id])
        return member_error(gr, b, "argument %s is defined outside the fused function", v->name ? v->name : "?");
      if (v->kind == MLC_VALUE_PARAM && !gr->param_of[v->id])
        return member_error(gr, b, "argument %s is no parameter of the fused function", v->name ? v->name : "?");
    }
    if (ninl == b->nargs && b->nargs > 0) inl[0] = 0; /* keep one tensor argument, as legalize does */
    for (int i = 0; i < b->nargs; i++) {
      mlc_value *v = b->args[i];
      if (v->kind == MLC_VALUE_CONST && !inl[i] && !gr->const_of[v->id]) {
        gr->consts[gr->nconsts++] = v;
        gr->const_of[v->id] = gr->nconsts;
      }
    }
    for (int o = 0; o < b->nouts; o++) gr->member_of[b->outs[o]->id] = j + 1;
  }
  for (int i = 0; i < g->nrets; i++) {
    mlc_value *v = g->rets[i];
    if (v->kind == MLC_VALUE_VAR && !gr->member_of[v->id])
      return mlc_make_status(MLC_INVALID_ARGUMENT, "fuse_tir: fused function \"%s\": returned value %d is not "
                             "computed by it", g->name, i);
  }
  return NULL;
}

static void key_type(const mlc_module *gm, const mlc_type *t, mlc_strbuf *k) {
  mlc_sb_printf(k, "%s[", mlc_dtype_name(t->dtype));
  for (int d = 0; d < t->rank; d++) {
    if (MLC_DIM_IS_SYM(t->dims[d])) mlc_sb_printf(k, "%s$,", mlc_module_sym_name(gm, t->dims[d]));
    else mlc_sb_printf(k, "%lld,", (long long)t->dims[d]);
  }
  mlc_sb_putc(k, ']');
}

/* The source of value |v| in the key: p<param>, k<constant>, m<member>.<output>. */
static void key_src(const group *gr, const mlc_value *v, mlc_strbuf *k) {
  if (gr->param_of[v->id]) mlc_sb_printf(k, "p%d", gr->param_of[v->id] - 1);
  else if (gr->const_of[v->id]) mlc_sb_printf(k, "k%d", gr->const_of[v->id] - 1);
  else if (gr->member_of[v->id]) mlc_sb_printf(k, "m%d.%d", gr->member_of[v->id] - 1, v->def_output);
  else mlc_sb_puts(k, "?");
}

/* Canonical text of the group: equal keys give equal prim functions. */
static void group_key(const ft_state *st, const group *gr, mlc_strbuf *k) {
  mlc_sb_puts(k, "fused(");
  for (int i = 0; i < gr->g->nparams; i++) {
    key_type(st->gm, &gr->g->params[i]->type, k);
    mlc_sb_putc(k, ',');
  }
  mlc_sb_puts(k, "){");
  for (int j = 0; j < gr->nmembers; j++) {
    const mlc_binding *b = gr->members[j];
    mlc_lg_call_key(st->gm, b, gr->inl + gr->slot[j], gr->scalar + gr->slot[j], k);
    mlc_sb_putc(k, '<');
    for (int i = 0; i < b->nargs; i++) {
      if (gr->inl[gr->slot[j] + i]) mlc_sb_puts(k, "imm");
      else key_src(gr, b->args[i], k);
      mlc_sb_putc(k, ',');
    }
    mlc_sb_puts(k, ">;");
  }
  mlc_sb_puts(k, "}->");
  for (int i = 0; i < gr->g->nrets; i++) {
    key_src(gr, gr->g->rets[i], k);
    mlc_sb_putc(k, ',');
  }
}

/* A copy stage of |t| (a returned value that is a placeholder, or a stage
** returned twice): the prim function's outputs are distinct stages. */
typedef struct copy_ctx {
  mlc_te_tensor *src;
} copy_ctx;

static mlc_tir_expr *copy_body(mlc_te_builder *b, mlc_tir_expr *const *idx, void *user) {
  copy_ctx *c = user;
  return mlc_te_load(b, c->src, c->src->rank, idx);
}

/* Builds the prim function of |gr| named |name|. */
static mlc_status build_group(ft_state *st, group *gr, const char *name) {
  mlc_module *gm = st->gm;
  mlc_func *g = gr->g;
  size_t nv = (size_t)gm->next_value_id;
  int nin = g->nparams + gr->nconsts;
  mlc_te_tensor **val = mlc_mem_calloc(nv ? nv : 1, sizeof *val);
  mlc_te_tensor **ins = mlc_mem_calloc((size_t)nin + 1, sizeof *ins);
  mlc_te_tensor **outs = mlc_mem_calloc((size_t)g->nrets + 1, sizeof *outs);
  mlc_tir_var **syms = mlc_mem_calloc((size_t)gm->nsyms + 1, sizeof *syms);
  unsigned char *bound = mlc_mem_calloc((size_t)gm->nsyms + 1, 1);
  mlc_te_builder *tb = NULL;
  mlc_status s = NULL;
  if (!val || !ins || !outs || !syms || !bound) s = mlc_oom();
  for (int i = 0; !s && i < nin; i++)
    mlc_lg_mark_syms(&(i < g->nparams ? g->params[i] : gr->consts[i - g->nparams])->type, bound);
  for (int i = 0; !s && i < g->nrets; i++) mlc_lg_mark_syms(&g->rets[i]->type, bound);
  if (!s) s = mlc_te_builder_create(st->tm, &tb);
  if (!s) mlc_te_unique_names(tb);
  /* placeholders: the parameters, then the tensor constants */
  for (int i = 0; i < nin && !s; i++) {
    mlc_value *v = i < g->nparams ? g->params[i] : gr->consts[i - g->nparams];
    mlc_lg_call c = {gm,   st->tm, tb,   MLC_OP_COPY, NULL, 0,     NULL, NULL, 0,
                     0,    NULL,   NULL, NULL,        syms, name, bound, st->vector_bits};
    char pname[16];
    mlc_lg_input_name(i, pname, sizeof pname);
    if (mlc_dtype_size(v->type.dtype) == 0) {
      s = mlc_make_status(MLC_UNIMPLEMENTED, "fuse_tir: fused function \"%s\": no lowering for %s tensors",
                          g->name, mlc_dtype_name(v->type.dtype));
      break;
    }
    mlc_tir_expr **shape = mlc_lg_shape(&c, &v->type);
    if (!shape) s = mlc_oom();
    else s = mlc_te_placeholder(tb, pname, v->type.rank, shape, v->type.dtype, &ins[i]);
    if (!s) val[v->id] = ins[i];
  }
  /* the members, in order */
  for (int j = 0; j < gr->nmembers && !s; j++) {
    mlc_binding *b = gr->members[j];
    mlc_type arg_types[MAX_ARGS], out_types[MLC_MAX_OUTS];
    mlc_te_tensor *in[MAX_ARGS], *mo[MLC_MAX_OUTS] = {0};
    const int *inl = gr->inl + gr->slot[j];
    mlc_lg_call c = {gm, st->tm, tb, b->op, b, b->nargs, arg_types, b->attrs, b->nattrs,
                     b->nouts, out_types, in, gr->scalar + gr->slot[j], syms, name, bound, st->vector_bits};
    for (int i = 0; i < b->nargs; i++) {
      arg_types[i] = b->args[i]->type;
      in[i] = inl[i] ? NULL : val[b->args[i]->id];
      if (!inl[i] && !in[i]) s = mlc_lg_error(&c, MLC_INTERNAL, "argument %d has no tensor", i);
    }
    for (int i = 0; i < b->nouts && !s; i++) {
      out_types[i] = b->outs[i]->type;
      if (mlc_dtype_size(out_types[i].dtype) == 0)
        s = mlc_lg_error(&c, MLC_UNIMPLEMENTED, "no lowering for %s tensors", mlc_dtype_name(out_types[i].dtype));
    }
    if (!s) s = mlc_lg_apply_rule(&c, mo);
    for (int i = 0; i < b->nouts && !s; i++) val[b->outs[i]->id] = mo[i];
    s = mlc_lg_name_error(&c, s);
  }
  /* the outputs: distinct compute stages */
  for (int i = 0; i < g->nrets && !s; i++) {
    mlc_te_tensor *t = val[g->rets[i]->id];
    int dup = !t || !t->is_compute;
    for (int k = 0; k < i && !dup; k++) dup = outs[k] == t;
    if (t && dup) {
      copy_ctx cc = {t};
      s = mlc_te_compute(tb, "T_copy", t->rank, t->shape, NULL, copy_body, &cc, &t);
    }
    if (!s && !t) s = mlc_make_status(MLC_INTERNAL, "returned value %d has no tensor", i);
    outs[i] = t;
  }
  mlc_tir_func *f = NULL;
  if (!s) s = mlc_te_create_prim_func(tb, name, g->nrets, outs, nin, ins, &f);
  if (!s) s = mlc_tir_module_add(st->tm, f);
  if (!s) s = mlc_tir_func_compute_regions(st->tm, f);
  mlc_te_builder_destroy(tb);
  mlc_mem_free(val);
  mlc_mem_free(ins);
  mlc_mem_free(outs);
  mlc_mem_free(syms);
  mlc_mem_free(bound);
  return s ? group_error(gr, s) : NULL;
}

/* Lowers the call |b| of primitive function |g| (the group |gr|). */
static mlc_status lower_call(ft_state *st, mlc_binding *b, mlc_func *g, group *grp) {
  group gr;
  memset(&gr, 0, sizeof gr);
  gr.g = g;
  mlc_status cs = collect(st, &gr);
  *grp = gr;
  if (cs) return cs;
  if (b->nargs != g->nparams || b->nouts != g->nrets)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "fuse_tir: call of fused function \"%s\" with %d arguments and "
                           "%d outputs, it has %d parameters and returns %d values", g->name, b->nargs, b->nouts,
                           g->nparams, g->nrets);
  mlc_strbuf key = MLC_STRBUF_INIT;
  group_key(st, &gr, &key);
  if (key.oom) {
    mlc_sb_fini(&key);
    return mlc_oom();
  }
  mlc_status s = NULL;
  const char *name = mlc_hash_get(&st->by_key, mlc_sb_str(&key));
  if (!name) {
    name = mlc_lg_fresh_name(st->tm, &st->names, &st->next, g->name);
    char *k = mlc_arena_strdup(st->tm->arena, mlc_sb_str(&key));
    if (!name || !k || mlc_hash_put(&st->by_key, k, (void *)name)) s = mlc_oom();
    if (!s) s = build_group(st, &gr, name);
  }
  mlc_sb_fini(&key);
  if (s) return s;
  /* call_tir(name, args + constants); the highest pattern of the members */
  int n = b->nargs + gr.nconsts;
  mlc_value **args = MLC_ARENA_ARRAY(st->gm->arena, (size_t)n + 1, mlc_value *);
  if (!args) return mlc_oom();
  for (int i = 0; i < b->nargs; i++) args[i] = b->args[i];
  for (int i = 0; i < gr.nconsts; i++) args[b->nargs + i] = gr.consts[i];
  mlc_pattern pat = MLC_PATTERN_ELEMWISE;
  for (int j = 0; j < gr.nmembers; j++)
    if (gr.members[j]->pattern > pat) pat = gr.members[j]->pattern;
  MLC_RETURN_IF_ERROR(mlc_binding_set_call(st->gm, b, MLC_CALL_TIR, name, args, n));
  b->pattern = pat;
  return NULL;
}

/* lower_call, then the entries of the state's by-value arrays that the
** group set back to zero. */
static mlc_status fuse_call(ft_state *st, mlc_binding *b, mlc_func *g) {
  group gr;
  mlc_status s = lower_call(st, b, g, &gr);
  for (int i = 0; i < g->nparams; i++) st->param_of[g->params[i]->id] = 0;
  for (int i = 0; i < gr.nconsts; i++) st->const_of[gr.consts[i]->id] = 0;
  for (int j = 0; j < gr.nmembers; j++)
    for (int o = 0; o < gr.members[j]->nouts; o++)
      if (gr.members[j]->outs && gr.members[j]->outs[o]) st->member_of[gr.members[j]->outs[o]->id] = 0;
  return s;
}

/* The names of the functions some binding calls, into |called| (the
** bindings' own strings, borrowed); -1 out of memory. */
static int called_names(const mlc_module *m, mlc_hash *called) {
  for (int fi = 0; fi < m->nfuncs; fi++)
    for (int bi = 0; bi < m->funcs[fi]->nblocks; bi++)
      for (int k = 0; k < m->funcs[fi]->blocks[bi].n; k++) {
        const mlc_binding *b = m->funcs[fi]->blocks[bi].bindings[k];
        if (b->kind == MLC_CALL_FUNC && b->callee && mlc_hash_put(called, b->callee, (void *)b)) return -1;
      }
  return 0;
}

mlc_status mlc_lower_pass_fuse_tir(mlc_module *m, const mlc_pass_ctx *ctx) {
  int any = 0;
  for (int i = 0; i < m->nfuncs; i++) any |= m->funcs[i]->primitive;
  if (!any) return NULL;
  mlc_tir_module *tm;
  MLC_RETURN_IF_ERROR(mlc_lower_prims(m, &tm));
  ft_state st = {m, tm, MLC_HASH_INIT, MLC_HASH_INIT, MLC_HASH_INIT, ctx && ctx->opt ? ctx->opt->vector_bits : 0,
                 NULL, NULL, NULL};
  size_t nv = m->next_value_id > 0 ? (size_t)m->next_value_id : 1;
  st.param_of = mlc_mem_calloc(nv, sizeof(int));
  st.const_of = mlc_mem_calloc(nv, sizeof(int));
  st.member_of = mlc_mem_calloc(nv, sizeof(int));
  mlc_status s = st.param_of && st.const_of && st.member_of ? NULL : mlc_oom();
  for (int i = 0; i < tm->nfuncs && !s; i++)
    if (mlc_hash_put(&st.names, tm->funcs[i]->name, tm->funcs[i])) s = mlc_oom();
  for (int fi = 0; fi < m->nfuncs && !s; fi++) {
    mlc_func *f = m->funcs[fi];
    if (f->primitive) continue;
    for (int bi = 0; bi < f->nblocks && !s; bi++)
      for (int k = 0; k < f->blocks[bi].n && !s; k++) {
        mlc_binding *b = f->blocks[bi].bindings[k];
        mlc_func *g = b->kind == MLC_CALL_FUNC && b->callee ? mlc_module_func(m, b->callee) : NULL;
        if (g && g->primitive) s = fuse_call(&st, b, g);
      }
  }
  mlc_hash_fini(&st.by_key);
  mlc_hash_fini(&st.names);
  mlc_hash_fini(&st.next);
  mlc_mem_free(st.param_of);
  mlc_mem_free(st.const_of);
  mlc_mem_free(st.member_of);
  /* the primitive functions no call uses any more leave the module */
  mlc_hash called = MLC_HASH_INIT;
  if (!s && called_names(m, &called)) s = mlc_oom();
  for (int i = m->nfuncs; i-- > 0 && !s;)
    if (m->funcs[i]->primitive && !mlc_hash_get(&called, m->funcs[i]->name)) mlc_module_remove_func(m, m->funcs[i]);
  mlc_hash_fini(&called);
  return s;
}
