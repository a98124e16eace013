/*
** dispatch.c: the dispatch pass (extern.h): which calls go to an external
** library and which stay for generated code.
**
** For each op call of a graph function, in order, the candidates are the
** kernels of the allowed providers (in the order the options list them)
** whose match() takes the call; at most one per provider.  Without the
** auto choice the first candidate wins, unless it is a built-in kernel and
** a later built-in one takes more bindings (more of the call's epilogue:
** cublaslt.matmul's bias and relu beside cublas.matmul's matmul alone):
** then the one that takes the most, the earliest among equals, since a
** fused epilogue saves a kernel and a pass over the output.  (The CPU
** libraries take the same epilogues where they take a call, so for them
** the list's order decides; a plugin listed first always wins.)  With
** the auto choice the generated kernel and each candidate are timed for
** that call's exact shapes (through the driver's measure function, which
** compiles and runs them) and the fastest wins; times are cached in a file
** keyed by the call's op, shapes, attributes, target and the library's
** version, so a second compile measures nothing.
**
** A winning kernel replaces the bindings its match took (the op and the
** epilogue it absorbs) by one call_dps_packed binding in place of the
** last of them, with the match's arguments and its ints as attribute
** "args"; the binding keeps the op's origin and covers the absorbed
** nodes.  Every decision is recorded in the options for the manifest.
*/
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "extern/extern.h"

/* ---- the timing cache --------------------------------------------------- */

/*
** A text file, one entry per line: "KEY\tSECONDS\n", KEY the call's key
** and the candidate ("generated" or a kernel name with its library
** version).  Read whole the first time the pass runs with the options,
** kept with them (so a second run of the pass in one compile measures
** nothing, cache file or not), appended to as new times are measured; a
** line that does not parse is ignored.
*/
typedef struct mlc_extern_times {
  char **keys;
  double *secs;
  int n, cap;
} tcache;

void mlc_extern_options_release(mlc_extern_options *o) {
  tcache *c = o->times;
  for (int i = 0; c && i < c->n; i++) mlc_mem_free(c->keys[i]);
  if (c) {
    mlc_mem_free(c->keys);
    mlc_mem_free(c->secs);
    mlc_mem_free(c);
  }
  o->times = NULL;
}

static int tcache_add(tcache *c, const char *key, double s) {
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 64;
    char **k = mlc_mem_realloc(c->keys, sizeof *k * (size_t)cap);
    if (!k) return 0;
    c->keys = k;
    double *v = mlc_mem_realloc(c->secs, sizeof *v * (size_t)cap);
    if (!v) return 0;
    c->secs = v;
    c->cap = cap;
  }
  if (!(c->keys[c->n] = mlc_mem_strdup(key))) return 0;
  c->secs[c->n++] = s;
  return 1;
}

static double tcache_get(const tcache *c, const char *key) {
  for (int i = c->n - 1; i >= 0; i--)
    if (!strcmp(c->keys[i], key)) return c->secs[i];
  return -1;
}

static void tcache_load(tcache *c, const char *path) {
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[2048];
  while (fgets(line, sizeof line, f)) {
    char *tab = strrchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    char *end;
    double s = strtod(tab + 1, &end);
    if (end == tab + 1 || s <= 0) continue;
    if (!tcache_add(c, line, s)) break;
  }
  fclose(f);
}

static void tcache_append(const char *path, const char *key, double s) {
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  fprintf(f, "%s\t%.9g\n", key, s);
  fclose(f);
}

/* ---- describing a call -------------------------------------------------- */

/* A shape as "1x64xN": a symbolic dim by its name from the model, any
** byte of it but a letter, digit or '_' written \xNN (the text goes into
** the timing cache's lines). */
static void put_shape(mlc_strbuf *b, const mlc_module *m, const mlc_type *t) {
  for (int d = 0; d < t->rank; d++) {
    if (d) mlc_sb_putc(b, 'x');
    if (t->dims[d] >= 0) {
      mlc_sb_printf(b, "%lld", (long long)t->dims[d]);
      continue;
    }
    const char *name = mlc_module_sym_name(m, t->dims[d]);
    for (const unsigned char *c = (const unsigned char *)(name ? name : "?"); *c; c++)
      if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '?')
        mlc_sb_putc(b, (char)*c);
      else
        mlc_sb_printf(b, "\\x%02x", *c);
  }
  if (!t->rank) mlc_sb_puts(b, "scalar");
}

/* "1x64x56x56 * 64x64x3x3" : the shapes of the matched op's arguments. */
static char *call_shape(mlc_module *m, const mlc_binding *b) {
  mlc_strbuf sb = MLC_STRBUF_INIT;
  for (int i = 0; i < b->nargs; i++) {
    if (i) mlc_sb_puts(&sb, " * ");
    put_shape(&sb, m, &b->args[i]->type);
  }
  char *r = sb.oom ? NULL : mlc_arena_strdup(m->arena, mlc_sb_str(&sb));
  mlc_sb_fini(&sb);
  return r;
}

/* The cache key of a call: every op of the match, the arguments' shapes
** and dtypes, the match's ints, the target. */
static void call_key(mlc_strbuf *b, mlc_module *m, const mlc_extern_match *mt, const char *target) {
  for (int i = 0; i < mt->nbindings; i++) mlc_sb_printf(b, "%s%s", i ? "+" : "", mlc_op_name[mt->bindings[i]->op]);
  for (int i = 0; i < mt->nargs; i++) {
    mlc_sb_printf(b, " %s:", mlc_dtype_name(mt->args[i]->type.dtype));
    put_shape(b, m, &mt->args[i]->type);
  }
  mlc_sb_puts(b, " [");
  for (int i = 0; i < mt->nattrs; i++) mlc_sb_printf(b, "%s%lld", i ? "," : "", (long long)mt->attrs[i]);
  mlc_sb_printf(b, "] %s", target ? target : "host");
}

/* ---- rewriting ---------------------------------------------------------- */

/* Replaces the match's bindings by one call of |k|; the first binding
** (the op) is removed later (*|dead| list), the others too but the last,
** which becomes the call. */
static mlc_status rewrite(mlc_module *m, const mlc_extern_kernel *k, const mlc_extern_match *mt,
                          mlc_binding **dead, int *ndead) {
  mlc_binding *last = mt->bindings[mt->nbindings - 1], *first = mt->bindings[0];
  mlc_origin origin = first->origin;
  if (mt->nbindings > 1) {
    /* the nodes of every binding, read before |last| gets its list */
    const mlc_origin *nodes[MLC_EXT_MAX_ABSORB];
    int n[MLC_EXT_MAX_ABSORB];
    for (int i = 0; i < mt->nbindings; i++) nodes[i] = mlc_binding_nodes(mt->bindings[i], &n[i]);
    mlc_origin lastn[16];
    int nl = n[mt->nbindings - 1] < 16 ? n[mt->nbindings - 1] : 16;
    memcpy(lastn, nodes[mt->nbindings - 1], sizeof lastn[0] * (size_t)nl);
    nodes[mt->nbindings - 1] = lastn;
    n[mt->nbindings - 1] = nl;
    last->ncovered = 0;
    for (int i = 0; i < mt->nbindings; i++)
      for (int j = 0; j < n[i]; j++) MLC_RETURN_IF_ERROR(mlc_binding_add_covered(m, last, &nodes[i][j]));
  }
  mlc_attr a = mlc_attr_ints("args", mt->attrs, mt->nattrs);
  MLC_RETURN_IF_ERROR(mlc_binding_set_attrs(m, last, mt->nattrs ? &a : NULL, mt->nattrs ? 1 : 0));
  MLC_RETURN_IF_ERROR(mlc_binding_set_call(m, last, MLC_CALL_DPS_PACKED, k->name, mt->args, mt->nargs));
  last->origin = origin;
  for (int i = 0; i < mt->nbindings - 1; i++) dead[(*ndead)++] = mt->bindings[i];
  return NULL;
}

static void remove_dead(mlc_func *f, mlc_binding **dead, int ndead) {
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = f->blocks[bi].n - 1; j >= 0; j--)
      for (int d = 0; d < ndead; d++)
        if (f->blocks[bi].bindings[j] == dead[d]) {
          mlc_func_remove_binding(f, bi, j);
          break;
        }
  mlc_func_compact(f);
}

/* ---- the pass ----------------------------------------------------------- */

typedef struct cand {
  const mlc_extern_kernel *k; /* NULL: generated */
  mlc_extern_match mt;
  double secs;
} cand;

/* Extends |mt| by the elementwise or broadcast ops that each use only the
** value before them, up to MLC_EXT_MAX_ABSORB bindings in all. */
static void with_epilogue(const mlc_extern_site *s, mlc_extern_match *mt) {
  while (mt->nbindings < MLC_EXT_MAX_ABSORB) {
    const mlc_binding *last = mt->bindings[mt->nbindings - 1];
    mlc_binding *u = last->nouts == 1 ? mlc_extern_sole_user(s, last->outs[0]) : NULL;
    if (!u || u->nouts != 1 || u->pattern > MLC_PATTERN_BROADCAST) return;
    mt->bindings[mt->nbindings++] = u;
  }
}

/* The allowed kernels that take |s|->b, at most one per provider, into
** |c| (after the generated one at c[0]); their count. */
static int candidates(const mlc_extern_options *o, const mlc_extern_site *s, cand *c, int max) {
  int n = 0;
  for (int p = 0; p < o->nproviders && n < max; p++) {
    const mlc_extern_provider *pv = o->providers[p];
    const mlc_extern_kernel *list = mlc_extern_builtin_kernels;
    int count = -1;
    for (int q = 0; q < o->nplugins; q++)
      if (&o->plugins[q]->provider == pv) list = o->plugins[q]->kernels, count = o->plugins[q]->nkernels;
    for (int i = 0; count < 0 ? list[i].name != NULL : i < count; i++) {
      const mlc_extern_kernel *k = &list[i];
      if (k->provider != pv || !k->match) continue;
      memset(&c[n].mt, 0, sizeof c[n].mt);
      if (!k->match(k, s, &c[n].mt) || c[n].mt.nbindings < 1) continue;
      c[n].k = k;
      c[n].secs = -1;
      n++;
      break;
    }
  }
  return n;
}

/* A time as the cache file gives it back. */
static double rounded(double s) {
  char txt[32];
  snprintf(txt, sizeof txt, "%.9g", s);
  return strtod(txt, NULL);
}

/* Times |c| (cache first); its seconds, < 0 when it cannot be timed.  For
** generated code also *|convert| (the cache keeps it under the key with
** " convert" added; a time of 0 is kept as 1e-12). */
static double timed(mlc_extern_options *o, mlc_module *m, tcache *tc, cand *c, const mlc_extern_match *key_mt,
                    double *convert, FILE *log) {
  mlc_strbuf key = MLC_STRBUF_INIT, ckey = MLC_STRBUF_INIT;
  call_key(&key, m, key_mt, o->target_key);
  if (c->k) mlc_sb_printf(&key, " %s@%s", c->k->name, c->k->provider->version ? c->k->provider->version : "");
  else mlc_sb_puts(&key, " generated@" PACKAGE_VERSION);
  mlc_sb_printf(&ckey, "%s convert", mlc_sb_str(&key));
  if (key.oom || ckey.oom) {
    mlc_sb_fini(&key);
    mlc_sb_fini(&ckey);
    return -1;
  }
  double s = tcache_get(tc, mlc_sb_str(&key)), cv = tcache_get(tc, mlc_sb_str(&ckey));
  if ((s <= 0 || (!c->k && cv <= 0)) && o->measure) {
    char why[256] = "";
    cv = 0;
    s = o->measure(o->measure_user, m, c->k, c->k ? &c->mt : key_mt, &cv, why, sizeof why);
    if (s > 0) {
      s = rounded(s);
      cv = rounded(cv > 1e-12 ? cv : 1e-12);
      tcache_add(tc, mlc_sb_str(&key), s);
      tcache_append(o->cache_path, mlc_sb_str(&key), s);
      if (!c->k) {
        tcache_add(tc, mlc_sb_str(&ckey), cv);
        tcache_append(o->cache_path, mlc_sb_str(&ckey), cv);
      }
    } else if (log) {
      fprintf(log, "extern: cannot time %s: %s\n", c->k ? c->k->name : "generated code", why);
    }
  }
  if (convert) *convert = cv > 1e-12 ? cv : 0;
  mlc_sb_fini(&key);
  mlc_sb_fini(&ckey);
  return s;
}

static mlc_status record(mlc_module *m, mlc_extern_options *o, const mlc_binding *b, const cand *c, int nc,
                         int chosen, const char *why, double convert) {
  mlc_extern_choice *ch = MLC_ARENA_ARRAY(m->arena, (size_t)o->nchoices + 1, mlc_extern_choice);
  if (!ch) return mlc_oom();
  if (o->nchoices) memcpy(ch, o->choices, sizeof *ch * (size_t)o->nchoices);
  mlc_extern_choice *e = &ch[o->nchoices];
  memset(e, 0, sizeof *e);
  e->node = mlc_arena_strdup(m->arena, b->origin.node ? b->origin.node : "");
  e->op = mlc_op_name[b->op];
  e->shape = call_shape(m, b);
  e->chosen = c[chosen].k ? c[chosen].k->name : "generated";
  e->why = why;
  e->convert = convert;
  for (int i = 0; i < nc && i < 4; i++) {
    e->cand[i] = c[i].k ? c[i].k->name : "generated";
    e->seconds[i] = c[i].secs;
  }
  e->ncand = nc < 4 ? nc : 4;
  if (!e->node || !e->shape || mlc_arena_oom(m->arena)) return mlc_oom();
  o->choices = ch;
  o->nchoices++;
  return NULL;
}

/* Dispatches the calls of |f|; progress and failed timings to |log| (the
** pass manager's, NULL: quiet). */
static mlc_status dispatch_func(mlc_module *m, mlc_func *f, mlc_extern_options *o, tcache *tc, FILE *log) {
  int *uses = NULL;
  MLC_RETURN_IF_ERROR(mlc_module_use_counts(m, &uses));
  int nvals = m->next_value_id, nb = 0;
  for (int bi = 0; bi < f->nblocks; bi++) nb += f->blocks[bi].n;
  mlc_binding **user = mlc_mem_calloc((size_t)nvals + 1, sizeof *user);
  mlc_binding **dead = mlc_mem_calloc((size_t)nb * MLC_EXT_MAX_ABSORB + 1, sizeof *dead);
  mlc_status s = NULL;
  int ndead = 0, done = 0, total = 0;
  if (!user || !dead) {
    s = mlc_oom();
    goto out;
  }
  for (int bi = 0; bi < f->nblocks; bi++)
    for (int j = 0; j < f->blocks[bi].n; j++) {
      mlc_binding *b = f->blocks[bi].bindings[j];
      for (int a = 0; a < b->nargs; a++)
        if (b->args[a]->id >= 0 && b->args[a]->id < nvals) user[b->args[a]->id] = b;
    }
  for (int bi = 0; bi < f->nblocks && !s; bi++)
    for (int j = 0; j < f->blocks[bi].n && !s; j++) {
      mlc_binding *b = f->blocks[bi].bindings[j];
      if (b->kind != MLC_CALL_OP) continue;
      int absorbed = 0;
      for (int d = 0; d < ndead && !absorbed; d++) absorbed = dead[d] == b;
      if (absorbed) continue;
      mlc_extern_site site = {m, f, b, uses, user, dead, ndead};
      cand c[1 + 8];
      c[0].k = NULL;
      c[0].secs = -1;
      int nc = 1 + candidates(o, &site, c + 1, 8);
      if (nc == 1) continue;
      total++;
      int best = 1;
      double conv_secs = 0;
      const char *why = "first allowed library that takes it";
      for (int i = 2; !o->auto_choice && c[1].k->provider->builtin && i < nc; i++)
        if (c[i].k->provider->builtin && c[i].mt.nbindings > c[best].mt.nbindings) best = i;
      if (best != 1) why = "fuses more of its epilogue than the first allowed library";
      if (o->auto_choice) {
        /* every candidate is timed on the same probe: the bindings the
        ** first library takes and the elementwise ops that follow them
        ** (generated code fuses those into the op; after a library call
        ** they are a kernel of their own), and the probe is the cache key */
        mlc_extern_match op_only = c[1].mt;
        with_epilogue(&site, &op_only);
        if (log) {
          char *shape = call_shape(m, b);
          fprintf(log, "extern: timing %s %s (%d candidates)\n", mlc_op_name[b->op], shape ? shape : "", nc);
        }
        /* a library call amid generated code also pays the layout
        ** conversions the generated kernel does not need in the model */
        double convert = 0;
        c[0].secs = timed(o, m, tc, &c[0], &op_only, &convert, log);
        for (int i = 1; i < nc; i++) {
          c[i].secs = timed(o, m, tc, &c[i], &op_only, NULL, log);
          if (c[i].secs > 0) c[i].secs += convert;
        }
        conv_secs = convert;
        best = -1;
        for (int i = 0; i < nc; i++)
          if (c[i].secs > 0 && (best < 0 || c[i].secs < c[best].secs)) best = i;
        if (best < 0) {
          best = 0;
          why = "not measurable: generated code kept";
        } else {
          why = "measured fastest";
        }
      }
      s = record(m, o, b, c, nc, best, why, conv_secs);
      if (!s && c[best].k) {
        s = rewrite(m, c[best].k, &c[best].mt, dead, &ndead);
        done++;
      }
    }
  if (!s && ndead) remove_dead(f, dead, ndead);
  if (!s && log && total)
    fprintf(log, "extern: %d of %d matched calls in %s go to external libraries\n", done, total, f->name);
out:
  mlc_mem_free(user);
  mlc_mem_free(dead);
  if (uses) mlc_free(m->alloc, uses, sizeof *uses * (size_t)nvals);
  return s;
}

mlc_status mlc_pass_dispatch(mlc_module *m, const mlc_pass_ctx *ctx) {
  mlc_extern_options *o = ctx && ctx->opt ? ctx->opt->ext : NULL;
  if (!o || o->nproviders == 0) return NULL;
  for (int p = 0; p < o->nproviders; p++)
    if (!o->providers[p]->available())
      return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern %s: this build has no %s", o->providers[p]->name,
                             o->providers[p]->name);
  if (o->auto_choice && !o->times) {
    if (!(o->times = mlc_mem_calloc(1, sizeof *o->times))) return mlc_oom();
    tcache_load(o->times, o->cache_path);
  }
  tcache none = {NULL, NULL, 0, 0};
  mlc_status s = NULL;
  for (int i = 0; i < m->nfuncs && !s; i++)
    if (!m->funcs[i]->primitive) s = dispatch_func(m, m->funcs[i], o, o->times ? o->times : &none, ctx->log);
  return s;
}
