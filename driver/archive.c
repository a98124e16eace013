/*
** archive.c: the archiver (TVM's export_library).
**
**   model.o     the model description of runtime/rt_model.h, built as
**               structs (tensors, storages, steps, I/O names, symbolic
**               dims, manifest) and encoded as the blob of
**               runtime/rt_blob.h, in its own section, plus the table of
**               the kernels the steps name by index; emitted through LLVM
**               (codegen.h) as data, so no name from the model is ever
**               compiled, assembled or parsed as code
**   weights.bin the constants, each 64-byte aligned, embedded read-only by
**   weights.S   an .incbin (fixed text, fixed file name)
**   rt.a        the runtime archive embedded in the compiler (rtblob.S)
**
** linked with the kernels' object into one model.so that exports only
** mlc_model_entry_v1.  Everything is written in a scratch directory with
** fixed names, so the same inputs give a byte-identical model.so.
**
** model.h names the inputs and outputs in a comment; every name there is
** escaped (comment_str) and every identifier sanitized.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/outfile.h"
#include "base/strbuf.h"
#include "codegen/codegen.h"
#include "driver/driver_int.h"
#include "extern/extern.h"
#include "lower/lower.h"
#include "runtime/rt_blob.h"

extern const char mlc_drv_rt_archive[], mlc_drv_rt_archive_end[];

extern char **environ;

mlc_status mlc_drv_write_file(const char *path, const void *data, size_t n) {
  return mlc_out_write_file(path, data, n, 0);
}

/* The last |max| bytes of the file open at |fd|, NUL-terminated; NULL when
** it cannot be read. */
static char *read_tail(int fd, size_t max) {
  struct stat st;
  if (fstat(fd, &st) != 0) return NULL;
  off_t start = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
  char *buf = mlc_mem_calloc(max + 1, 1);
  if (!buf) return NULL;
  ssize_t got = pread(fd, buf, max, start);
  buf[got > 0 ? got : 0] = 0;
  return buf;
}

/* The file actions that start the child in |cwd|.  With glibc's
** posix_spawn_file_actions_addchdir_np the child changes directory itself;
** otherwise the command runs as `sh -c 'cd -- "$0" && exec "$@"' CWD ARGV...`
** (|argv| and |cwd| are arguments, never parsed as shell text).  Either way
** this process's working directory, shared by all its threads, never
** changes.  *|out_argv| is |argv| or |shv| (room for |nsh| pointers). */
static int spawn_in(posix_spawn_file_actions_t *fa, const char *const *argv, const char *cwd,
                    const char **shv, size_t nsh, const char *const **out_argv) {
  *out_argv = argv;
  if (!cwd) return 0;
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCHDIR_NP
  (void)shv;
  (void)nsh;
  return posix_spawn_file_actions_addchdir_np(fa, cwd);
#else
  (void)fa;
  size_t n = 0;
  while (argv[n]) n++;
  if (n + 5 > nsh) return E2BIG;
  shv[0] = "/bin/sh";
  shv[1] = "-c";
  shv[2] = "cd -- \"$0\" && exec \"$@\"";
  shv[3] = cwd;
  for (size_t i = 0; i <= n; i++) shv[4 + i] = argv[i];
  *out_argv = shv;
  return 0;
#endif
}

mlc_status mlc_drv_spawn(const char *const *argv, const char *cwd, const char *log_path) {
  /* The log: created here (never through a link; not inherited by other
  ** children), the child's stdout and stderr. */
  int log = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log < 0) return mlc_make_status(MLC_IO_ERROR, "cannot create %s: %s", log_path, strerror(errno));
  posix_spawn_file_actions_t fa;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc != 0) {
    close(log);
    return mlc_make_status(MLC_RESOURCE_EXHAUSTED, "cannot run %s: %s", argv[0], strerror(rc));
  }
  const char *shv[72];
  const char *const *av = argv;
  if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, log, 1);
  if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, log, 2);
  if (!rc) rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (!rc) rc = spawn_in(&fa, argv, cwd, shv, sizeof shv / sizeof shv[0], &av);
  pid_t pid;
  if (!rc) rc = posix_spawnp(&pid, av[0], &fa, NULL, (char *const *)av, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    close(log);
    return mlc_make_status(MLC_NOT_FOUND, "cannot run %s: %s (set MLC_CC to a C compiler)", argv[0],
                           strerror(rc));
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) {
      int e = errno;
      close(log);
      return mlc_make_status(MLC_INTERNAL, "waitpid: %s", strerror(e));
    }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    close(log);
    return NULL;
  }
  char *tail = read_tail(log, 2000);
  close(log);
  mlc_status s;
  if (av != argv && WIFEXITED(st) && WEXITSTATUS(st) == 127) /* the shell found no argv[0] */
    s = mlc_make_status(MLC_NOT_FOUND, "cannot run %s: %s(set MLC_CC to a C compiler)", argv[0], tail ? tail : "");
  else
    s = mlc_make_status(MLC_INTERNAL, "%s failed (%s %d):\n%s", argv[0], WIFEXITED(st) ? "exit status" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), tail ? tail : "");
  mlc_mem_free(tail);
  return s;
}

/* ---- the description ---------------------------------------------------- */

/* DLPack dtype code/bits of |t|. */
static void dl_dtype(mlc_dtype t, int *code, int *bits) {
  *bits = (int)mlc_dtype_size(t) * 8;
  switch (t) {
    case MLC_DTYPE_F32: case MLC_DTYPE_F64: case MLC_DTYPE_F16: *code = 2; break; /* kDLFloat */
    case MLC_DTYPE_BF16: *code = 4; break;                                         /* kDLBfloat */
    case MLC_DTYPE_I8: case MLC_DTYPE_I16: case MLC_DTYPE_I32: case MLC_DTYPE_I64: *code = 0; break;
    case MLC_DTYPE_BOOL: *code = 6; *bits = 8; break;                             /* kDLBool */
    default: *code = 1; break;                                                    /* kDLUInt */
  }
}

typedef struct tensor_ref {
  const mlc_value *v;
  int storage; /* enum mlc_rt_storage */
  int64_t loc;
} tensor_ref;

#define MAX_EXT_FNS 64

typedef struct desc_state {
  const mlc_module *gm;
  const mlc_func *fn;
  tensor_ref *t;
  int nt;
  int *id_of; /* value id -> tensor id, -1 */
  int64_t *const_off; /* const index -> weights offset, -1 */
  int *const_order;   /* constants in offset order */
  int nconst;
  uint64_t weights_size;
  /* the external functions the steps call (not the runtime's "mlc.*") */
  const mlc_extern_kernel *ext[MAX_EXT_FNS];
  int next;
  const char *ext_syms[MAX_EXT_FNS]; /* wrappers, after the kernels in the function table */
  int nsyms;
  const mlc_extern_provider *providers[MAX_EXT_FNS]; /* whose archives are linked */
  int nproviders;
  const mlc_extern_plugin_lib *plugins[MAX_EXT_FNS];
  int nplugins;
  int *partner; /* by step: the partner of a control flow marker (cf_partners) */
} desc_state;

static int tensor_id(desc_state *d, const mlc_value *v) { return d->id_of[v->id]; }

static void add_tensor(desc_state *d, const mlc_value *v, int storage, int64_t loc) {
  if (d->id_of[v->id] >= 0) return;
  d->id_of[v->id] = d->nt;
  d->t[d->nt].v = v;
  d->t[d->nt].storage = storage;
  d->t[d->nt].loc = loc;
  d->nt++;
}

/* The weights offset of constant |v|, placed (64-byte aligned) at its
** first use. */
static int64_t weight_offset(desc_state *d, const mlc_value *v) {
  if (d->const_off[v->const_index] < 0) {
    const mlc_const *c = mlc_value_const(d->gm, v);
    d->weights_size = (d->weights_size + 63) & ~(uint64_t)63;
    d->const_off[v->const_index] = (int64_t)d->weights_size;
    d->const_order[d->nconst++] = v->const_index;
    d->weights_size += c->nbytes ? c->nbytes : 1; /* distinct offsets */
  }
  return d->const_off[v->const_index];
}

static void add_arg(desc_state *d, const mlc_value *v) {
  if (v->kind == MLC_VALUE_CONST) add_tensor(d, v, 2, weight_offset(d, v));
}

static const char *value_name(const mlc_value *v, char *buf, size_t n) {
  if (v->name) return v->name;
  snprintf(buf, n, "v%d", v->id);
  return buf;
}

/* The step kind of a run-time control flow marker (ops.def), or -1. */
static int cf_step_kind(mlc_op op) {
  switch (op) {
    case MLC_OP_CF_IF: return MLC_RT_STEP_IF;
    case MLC_OP_CF_ELSE: return MLC_RT_STEP_ELSE;
    case MLC_OP_CF_END_IF: return MLC_RT_STEP_END_IF;
    case MLC_OP_CF_LOOP: return MLC_RT_STEP_LOOP;
    case MLC_OP_CF_LOOP_END: return MLC_RT_STEP_LOOP_END;
    default: return -1;
  }
}

/*
** Pairs the control flow markers of |fn| by step index into d->partner
** (|nsteps| entries): cf_if -> its cf_else, cf_else -> its cf_end_if,
** cf_loop -> its cf_loop_end, cf_loop_end -> its cf_loop; -1 elsewhere.
** Regions nest; a marker out of place is an internal error.
*/
static mlc_status cf_partners(desc_state *d, int nsteps) {
  const mlc_func *fn = d->fn;
  int *stack = mlc_mem_calloc((size_t)nsteps + 1, sizeof *stack), top = 0, ns = 0;
  mlc_status s = NULL;
  d->partner = mlc_mem_calloc((size_t)nsteps + 1, sizeof *d->partner);
  if (!stack || !d->partner) {
    mlc_mem_free(stack);
    return mlc_oom();
  }
  for (int bi = 0; bi < fn->nblocks && !s; bi++)
    for (int k = 0; k < fn->blocks[bi].n && !s; k++, ns++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      int cf = bd->kind == MLC_CALL_DPS_PACKED ? cf_step_kind(bd->op) : -1;
      d->partner[ns] = -1;
      int open = top > 0 ? stack[top - 1] : -1;
      if (cf == MLC_RT_STEP_IF || cf == MLC_RT_STEP_LOOP) {
        stack[top++] = ns;
      } else if (cf == MLC_RT_STEP_ELSE || cf == MLC_RT_STEP_END_IF || cf == MLC_RT_STEP_LOOP_END) {
        if (open < 0) {
          s = mlc_make_status(MLC_INTERNAL, "control flow marker %d (step %d) closes no region", cf, ns);
          break;
        }
        d->partner[open] = ns;
        if (cf == MLC_RT_STEP_LOOP_END) d->partner[ns] = open;
        top--;
        if (cf == MLC_RT_STEP_ELSE) stack[top++] = ns;
      }
    }
  if (!s && top > 0) s = mlc_make_status(MLC_INTERNAL, "control flow region at step %d is not closed", stack[top - 1]);
  mlc_mem_free(stack);
  return s;
}

/* Every step: its kind, kernel index, arguments (tensor args then outputs; a
** runtime built-in ("mlc.*") takes its int attributes as trailing
** immediates; "mlc.define_dims" becomes a BIND_SYMS step: vector, copy,
** offset, then a symbol or extent per dim).  With |steps| NULL, only counts
** the arguments into *|nargs|. */
static void build_steps(desc_state *d, const char **kernels, int nk, mlc_rt_step_desc *steps,
                        mlc_rt_arg_desc *args, int64_t *nargs) {
  const mlc_func *fn = d->fn;
  int64_t na = 0;
  int ns = 0;
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++, ns++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      int64_t first = na;
#define ARG(kd, v)                                             \
  do {                                                         \
    if (args) args[na] = (mlc_rt_arg_desc){(kd), (int64_t)(v)}; \
    na++;                                                      \
  } while (0)
      for (int j = 0; j < bd->nargs; j++) ARG(MLC_RT_ARG_TENSOR, tensor_id(d, bd->args[j]));
      for (int j = 0; j < bd->nouts; j++) ARG(MLC_RT_ARG_TENSOR, tensor_id(d, bd->outs[j]));
      int kind = MLC_RT_STEP_KERNEL, cf = bd->kind == MLC_CALL_DPS_PACKED ? cf_step_kind(bd->op) : -1;
      if (cf >= 0) {
        /* run-time control flow: the step of the partner marker, and for a
        ** loop's end the number of carried values (rt_model.h) */
        kind = cf;
        if (cf != MLC_RT_STEP_END_IF) ARG(MLC_RT_ARG_IMM, d->partner[ns]);
        if (cf == MLC_RT_STEP_LOOP_END) ARG(MLC_RT_ARG_IMM, mlc_attrs_int(bd->attrs, bd->nattrs, "ncarry", 0));
      } else if (bd->kind == MLC_CALL_DPS_PACKED && strcmp(bd->callee, MLC_LOWER_BIND_SYMS) == 0) {
        kind = MLC_RT_STEP_BIND_SYMS;
        const mlc_attr *dims = mlc_attrs_find(bd->attrs, bd->nattrs, "dims");
        ARG(MLC_RT_ARG_IMM, mlc_attrs_int(bd->attrs, bd->nattrs, "offset", 0));
        for (int j = 0; dims && dims->kind == MLC_ATTR_INTS && j < dims->n; j++) {
          int64_t v = dims->ints[j];
          if (MLC_DIM_IS_SYM(v)) ARG(MLC_RT_ARG_SYM, MLC_DIM_SYM_ID(v));
          else ARG(MLC_RT_ARG_IMM, v);
        }
      } else if (bd->kind == MLC_CALL_DPS_PACKED) {
        kind = MLC_RT_STEP_EXTERN;
        if (strncmp(bd->callee, "mlc.", 4) == 0) {
          for (int j = 0; j < bd->nattrs; j++)
            if (bd->attrs[j].kind == MLC_ATTR_INT) ARG(MLC_RT_ARG_IMM, bd->attrs[j].i);
        } else {
          /* an external library's call: the dispatcher's "args" (extern.h) */
          const mlc_attr *xa = mlc_attrs_find(bd->attrs, bd->nattrs, "args");
          for (int j = 0; xa && xa->kind == MLC_ATTR_INTS && j < xa->n; j++) ARG(MLC_RT_ARG_IMM, xa->ints[j]);
        }
      }
#undef ARG
      if (!steps) continue;
      mlc_rt_step_desc *st = &steps[ns];
      st->kind = kind;
      st->name = bd->callee;
      st->fn = NULL;
      st->label = bd->origin.node ? bd->origin.node : "";
      st->nargs = (int32_t)(na - first);
      st->args = args + first;
      st->kernel = -1;
      for (int j = 0; kind == MLC_RT_STEP_KERNEL && j < nk; j++)
        if (strcmp(kernels[j], bd->callee) == 0) st->kernel = j;
    }
  *nargs = na;
}

/*
** The description of rt_model.h as structs (never text), encoded into the
** blob of rt_blob.h: *|out_blob| (*|out_size| bytes) transferred (mlc_mem_free()).
** The kernels, in first-use order, go to *|out_kernels| (|*out_nk| names,
** transferred; the names are borrowed from the module).
*/
static mlc_status build_desc(desc_state *d, const mlc_drv_archive_args *a, uint8_t **out_blob,
                             size_t *out_size, const char ***out_kernels, int *out_nk) {
  const mlc_module *gm = d->gm;
  const mlc_func *fn = d->fn;
  *out_blob = NULL;
  *out_kernels = NULL;
  int nk = 0, nsteps = 0;
  for (int bi = 0; bi < fn->nblocks; bi++) nsteps += fn->blocks[bi].n;
  const char **kernels = mlc_mem_calloc((size_t)nsteps + 1, sizeof *kernels);
  mlc_rt_tensor_desc *tensors = mlc_mem_calloc((size_t)d->nt + 1, sizeof *tensors);
  mlc_rt_io_desc *io = mlc_mem_calloc((size_t)fn->nparams + (size_t)fn->nrets + 1, sizeof *io);
  char (*io_names)[32] = mlc_mem_calloc((size_t)fn->nparams + (size_t)fn->nrets + 1, sizeof *io_names);
  mlc_rt_step_desc *steps = mlc_mem_calloc((size_t)nsteps + 1, sizeof *steps);
  mlc_rt_arg_desc *args = NULL;
  mlc_rt_sym_def *symdefs = NULL;
  mlc_status s = NULL;
  if (!kernels || !tensors || !io || !io_names || !steps) {
    s = mlc_oom();
    goto done;
  }
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      if (bd->kind != MLC_CALL_TIR) continue;
      int seen = 0;
      for (int j = 0; j < nk && !seen; j++) seen = strcmp(kernels[j], bd->callee) == 0;
      if (!seen) kernels[nk++] = bd->callee;
    }
  for (int i = 0; i < d->nt; i++) {
    const mlc_type *t = &d->t[i].v->type;
    int code, bits;
    dl_dtype(t->dtype, &code, &bits);
    tensors[i].dtype.code = (uint8_t)code;
    tensors[i].dtype.bits = (uint8_t)bits;
    tensors[i].dtype.lanes = 1;
    tensors[i].ndim = t->rank;
    tensors[i].dims = t->rank ? t->dims : NULL;
    tensors[i].storage = d->t[i].storage;
    tensors[i].loc = d->t[i].loc;
  }
  for (int i = 0; i < fn->nparams + fn->nrets; i++) {
    const mlc_value *v = i < fn->nparams ? fn->params[i] : fn->rets[i - fn->nparams];
    io[i].name = value_name(v, io_names[i], sizeof io_names[i]);
    io[i].tensor = tensor_id(d, v);
    const mlc_value *def = i < fn->nparams ? mlc_func_param_default(fn, i) : NULL;
    if (def) { /* its data placed by mlc_drv_archive */
      io[i].has_default = 1;
      io[i].default_loc = d->const_off[def->const_index];
    }
  }
  if ((s = cf_partners(d, nsteps))) goto done;
  int64_t nargs = 0;
  build_steps(d, kernels, nk, NULL, NULL, &nargs);
  args = mlc_mem_calloc((size_t)nargs + 1, sizeof *args);
  if (!args) {
    s = mlc_oom();
    goto done;
  }
  build_steps(d, kernels, nk, steps, args, &nargs);
  mlc_rt_model_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.abi_version = MLC_RT_DESC_VERSION;
  desc.kernel_abi = MLC_RT_ABI_VERSION;
  desc.name = a->model_name;
  desc.manifest = a->manifest_json;
  desc.nsyms = gm->nsyms;
  desc.sym_names = (const char *const *)gm->syms;
  symdefs = mlc_mem_calloc((size_t)gm->nsyms + 1, sizeof *symdefs);
  if (!symdefs) {
    s = mlc_oom();
    goto done;
  }
  for (int k = 0; k < gm->nsyms; k++) { /* dims encode symbols as -1 - index */
    const mlc_sym_def *g = &gm->sym_defs[k];
    symdefs[k].op = (int32_t)g->op;
    symdefs[k].b_sym = g->b_sym;
    symdefs[k].a = g->op == MLC_SYM_FREE ? 0 : MLC_DIM_SYM_ID(g->a);
    symdefs[k].b = g->b_sym ? MLC_DIM_SYM_ID(g->b) : g->b;
    symdefs[k].where = g->op == MLC_SYM_CHECK ? g->where : NULL;
    symdefs[k].bound = g->op == MLC_SYM_FREE ? g->bound : 0;
  }
  desc.sym_defs = symdefs;
  desc.ntensors = d->nt;
  desc.tensors = tensors;
  desc.ninputs = fn->nparams;
  desc.inputs = io;
  desc.noutputs = fn->nrets;
  desc.outputs = io + fn->nparams;
  desc.nstorages = fn->nstorages;
  desc.nsteps = nsteps;
  desc.steps = steps;
  desc.nkernels = nk;
  desc.kernel_names = kernels;
  mlc_rt_extern_desc exts[MAX_EXT_FNS];
  for (int i = 0; i < d->next; i++) {
    const mlc_extern_kernel *k = d->ext[i];
    exts[i].name = k->name;
    exts[i].fn = NULL;
    exts[i].kernel = -1;
    exts[i].plugin = NULL;
    for (int j = 0; k->symbol && j < d->nsyms; j++)
      if (!strcmp(d->ext_syms[j], k->symbol)) exts[i].kernel = nk + j;
    for (int j = 0; !k->symbol && j < d->nplugins; j++)
      if (&d->plugins[j]->provider == k->provider) exts[i].plugin = d->plugins[j]->file;
  }
  desc.nexterns = d->next;
  desc.externs = d->next ? exts : NULL;
  desc.weights_size = d->weights_size;
  desc.device = a->target && a->target->device == MLC_TARGET_CUDA ? kDLCUDA : kDLCPU;
  char err[256];
  mlc_allocator da = mlc_allocator_default();
  mlc_rt_allocator rta = {da.self, da.realloc}; /* the blob is freed with mlc_mem_free */
  mlc_rt_status st = mlc_rt_desc_encode(&rta, &desc, nk + d->nsyms, out_blob, out_size, err, sizeof err);
  if (st == MLC_RT_OUT_OF_MEMORY) s = mlc_oom();
  else if (st != MLC_RT_OK) s = mlc_make_status(MLC_INTERNAL, "model description: %s", err);
done:
  mlc_mem_free(tensors);
  mlc_mem_free(io);
  mlc_mem_free(io_names);
  mlc_mem_free(steps);
  mlc_mem_free(args);
  mlc_mem_free(symdefs);
  mlc_mem_free(d->partner);
  d->partner = NULL;
  if (s) mlc_mem_free(kernels);
  else {
    *out_kernels = kernels;
    *out_nk = nk;
  }
  return s;
}

static mlc_status write_weights(desc_state *d, const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) return mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", path, strerror(errno));
  static const char zeros[64];
  uint64_t pos = 0;
  int bad = 0;
  for (int k = 0; k < d->nconst && !bad; k++) {
    const mlc_const *c = &d->gm->consts[d->const_order[k]];
    uint64_t off = (uint64_t)d->const_off[d->const_order[k]];
    while (pos < off) {
      size_t n = off - pos > 64 ? 64 : (size_t)(off - pos);
      bad |= fwrite(zeros, 1, n, f) != n;
      pos += n;
    }
    if (c->nbytes) bad |= fwrite(c->data, 1, c->nbytes, f) != c->nbytes;
    else bad |= fwrite(zeros, 1, 1, f) != 1;
    pos += c->nbytes ? c->nbytes : 1;
  }
  bad |= fwrite(zeros, 1, 64, f) != 64; /* never empty; room for alignment */
  if (fclose(f) != 0) bad = 1;
  return bad ? mlc_make_status(MLC_IO_ERROR, "cannot write %s", path) : NULL;
}

static const char weights_s[] =
    "  .section .rodata.mlc_weights, \"a\"\n"
    "  .balign 64\n"
    "  .globl mlc_weights_blob\n"
    "  .hidden mlc_weights_blob\n"
    "mlc_weights_blob:\n"
    "  .incbin \"weights.bin\"\n"
    "  .section .note.GNU-stack, \"\", @progbits\n";

static const char model_map[] = "{\n  global:\n    mlc_model_entry_v1;\n  local:\n    *;\n};\n";

/* Longest part of a name model.h shows. */
#define MODEL_H_NAME_MAX 120

/*
** |s| as a string that is safe in a C comment (in quotes when |quote|):
** printable ASCII as is, except '\\', '"' (when quoted), '*' (so neither
** a comment's end nor its start can form) and a '?' after a '?' (no
** trigraph), which are escaped, as are control and non-ASCII bytes (\n,
** \t, \xHH); a name longer than MODEL_H_NAME_MAX bytes is cut and marked
** with its length.
*/
static void comment_str(mlc_strbuf *b, const char *s, int quote) {
  size_t n = strlen(s);
  if (quote) mlc_sb_putc(b, '"');
  for (size_t i = 0; i < n && i < MODEL_H_NAME_MAX; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c == '"' && quote) || c == '\\') mlc_sb_printf(b, "\\%c", c);
    else if (c == '\n') mlc_sb_puts(b, "\\n");
    else if (c == '\t') mlc_sb_puts(b, "\\t");
    else if (c < 0x20 || c >= 0x7f || c == '*' || (c == '?' && i > 0 && s[i - 1] == '?'))
      mlc_sb_printf(b, "\\x%02x", c);
    else mlc_sb_putc(b, (char)c);
  }
  if (quote) mlc_sb_putc(b, '"');
  if (n > MODEL_H_NAME_MAX) mlc_sb_printf(b, "... (%zu bytes)", n);
}

static mlc_status write_model_h(const mlc_drv_archive_args *a) {
  const mlc_func *fn = a->fn;
  mlc_strbuf b = MLC_STRBUF_INIT;
  char guard[128], nb[32];
  size_t k = 0;
  for (const char *p = a->model_name; *p && k < sizeof guard - 16; p++)
    guard[k++] = (*p >= 'a' && *p <= 'z') ? (char)(*p - 32) : ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_';
  guard[k] = 0;
  mlc_sb_puts(&b, "/*\n** Interface of the compiled model ");
  comment_str(&b, a->model_name, 1);
  mlc_sb_puts(&b, " (mlc-onnx " PACKAGE_VERSION ").\n**\n");
  mlc_sb_puts(&b, "** Load it with mlc_model_load(\"<path>.so\", ...) from mlc/mlc_runtime.h, or\n"
                  "** link the .so and call mlc_model_open_entry(mlc_model_entry_v1(), ...).\n"
                  "** Names are quoted with C escapes; mlc_model_input_name() and\n"
                  "** mlc_model_output_name() give them exactly.  An input with a default\n"
                  "** (an ONNX input that is also an initializer) need not be set: a run\n"
                  "** uses the default until mlc_session_set_input() sets it, and passing\n"
                  "** NULL there restores the default.\n**\n");
  for (int io = 0; io < 2; io++) {
    int n = io ? fn->nrets : fn->nparams;
    mlc_sb_printf(&b, "** %s:\n", io ? "Outputs" : "Inputs");
    for (int i = 0; i < n; i++) {
      const mlc_value *v = io ? fn->rets[i] : fn->params[i];
      mlc_strbuf ty = MLC_STRBUF_INIT;
      mlc_graph_print_type(a->gm, &v->type, &ty);
      mlc_sb_printf(&b, "**   %d ", i);
      comment_str(&b, value_name(v, nb, sizeof nb), 1);
      mlc_sb_puts(&b, ": ");
      comment_str(&b, mlc_sb_str(&ty), 0);
      if (!io && mlc_func_param_default(fn, i)) mlc_sb_puts(&b, "  (has a default: optional)");
      mlc_sb_putc(&b, '\n');
      mlc_sb_fini(&ty);
    }
  }
  mlc_sb_printf(&b, "*/\n#ifndef MLC_MODEL_%s_H\n#define MLC_MODEL_%s_H\n\n#include \"mlc/mlc_runtime.h\"\n\n",
                guard, guard);
  mlc_sb_printf(&b, "#define MLC_MODEL_%s_NUM_INPUTS %d\n#define MLC_MODEL_%s_NUM_OUTPUTS %d\n\n", guard,
                fn->nparams, guard, fn->nrets);
  mlc_sb_puts(&b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
                  "/* The entry the .so exports (for programs that link it directly). */\n"
                  "const mlc_rt_entry *mlc_model_entry_v1(void);\n"
                  "#ifdef __cplusplus\n}\n#endif\n\n");
  mlc_sb_printf(&b, "#endif /* MLC_MODEL_%s_H */\n", guard);
  mlc_status s = b.oom ? mlc_oom() : mlc_drv_write_file(a->out_h, b.data, b.len);
  mlc_sb_fini(&b);
  return s;
}

/* Copies the linked library |from| to the output |to| (mode 0755 less the
** umask), through a temporary file renamed over |to|. */
static mlc_status copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY | O_CLOEXEC);
  if (in < 0) return mlc_make_status(MLC_IO_ERROR, "cannot read %s: %s", from, strerror(errno));
  mlc_outfile out;
  mlc_status s = mlc_out_open(&out, to, MLC_OUT_EXEC);
  char buf[1 << 16];
  while (!s) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) s = mlc_make_status(MLC_IO_ERROR, "cannot read %s: %s", from, strerror(errno));
    if (n <= 0) break;
    s = mlc_out_write(&out, buf, (size_t)n);
  }
  close(in);
  if (s) {
    mlc_out_abort(&out);
    return s;
  }
  return mlc_out_commit(&out);
}

int64_t mlc_drv_arena_bytes(const mlc_func *fn) {
  int64_t *sizes = mlc_mem_calloc((size_t)fn->nstorages + 1, sizeof *sizes), arena = 0;
  if (!sizes) return -1;
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      for (int j = 0; j < bd->nouts; j++) {
        const mlc_value *v = bd->outs[j];
        if (v->storage < 0 || v->storage >= fn->nstorages) continue;
        int64_t n = mlc_type_numel_bound(fn->mod, &v->type); /* symbolic: at the bounds */
        int64_t bytes = n < 0 ? -1 : n * (int64_t)mlc_dtype_size(v->type.dtype);
        if (bytes < 0 || sizes[v->storage] < 0)
          sizes[v->storage] = -1;
        else if (bytes > sizes[v->storage])
          sizes[v->storage] = bytes;
      }
    }
  for (int i = 0; i < fn->nstorages && arena >= 0; i++)
    arena = sizes[i] < 0 ? -1 : arena + ((sizes[i] + 63) & ~(int64_t)63);
  mlc_mem_free(sizes);
  return arena;
}

/* ---- external functions -------------------------------------------------- */

extern const char mlc_drv_ext_openblas[], mlc_drv_ext_openblas_end[];
extern const char mlc_drv_ext_onednn[], mlc_drv_ext_onednn_end[];
extern const char mlc_drv_ext_cublas[], mlc_drv_ext_cublas_end[];
extern const char mlc_drv_ext_cublaslt[], mlc_drv_ext_cublaslt_end[];
extern const char mlc_drv_ext_cudnn[], mlc_drv_ext_cudnn_end[];

/* The run-time archive of built-in provider |p| embedded in the compiler:
** 1 and *|out| set (start, end) when there is one. */
static int provider_blob(const mlc_extern_provider *p, const char *out[2]) {
  const char *b = NULL, *e = NULL;
#ifdef MLC_HAVE_OPENBLAS
  if (p == &mlc_extern_provider_openblas) b = mlc_drv_ext_openblas, e = mlc_drv_ext_openblas_end;
#endif
#ifdef MLC_HAVE_ONEDNN
  if (p == &mlc_extern_provider_onednn) b = mlc_drv_ext_onednn, e = mlc_drv_ext_onednn_end;
#endif
#ifdef MLC_HAVE_CUDA
  if (p == &mlc_extern_provider_cublas) b = mlc_drv_ext_cublas, e = mlc_drv_ext_cublas_end;
  if (p == &mlc_extern_provider_cublaslt) b = mlc_drv_ext_cublaslt, e = mlc_drv_ext_cublaslt_end;
  if (p == &mlc_extern_provider_cudnn) b = mlc_drv_ext_cudnn, e = mlc_drv_ext_cudnn_end;
#endif
  if (!b) return 0;
  if (out) out[0] = b, out[1] = e;
  return 1;
}

/* The external functions the steps call (the runtime's "mlc.*" aside),
** their wrappers' symbols, providers and plugins, into |d|. */
static mlc_status collect_externs(desc_state *d, const mlc_drv_archive_args *a) {
  const mlc_func *fn = d->fn;
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      if (bd->kind != MLC_CALL_DPS_PACKED || !strncmp(bd->callee, "mlc.", 4)) continue;
      const mlc_extern_kernel *ek = mlc_extern_lookup(a->ext, bd->callee);
      if (!ek)
        return mlc_make_status(MLC_INTERNAL, "step %d calls \"%s\", which no library or plugin provides", k,
                               bd->callee);
      int seen = 0;
      for (int i = 0; i < d->next && !seen; i++) seen = d->ext[i] == ek;
      if (seen) continue;
      if (d->next >= MAX_EXT_FNS)
        return mlc_make_status(MLC_UNIMPLEMENTED, "more than %d distinct external functions", MAX_EXT_FNS);
      d->ext[d->next++] = ek;
      const mlc_extern_provider *pv = ek->provider;
      if (ek->symbol) {
        if (!provider_blob(pv, NULL))
          return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: this build has no %s", ek->name, pv->name);
        d->ext_syms[d->nsyms++] = ek->symbol;
        int have = 0;
        for (int i = 0; i < d->nproviders && !have; i++) have = d->providers[i] == pv;
        if (!have) d->providers[d->nproviders++] = pv;
      } else if (ek->plugin_fn) {
        const mlc_extern_plugin_lib *pl = NULL;
        for (int i = 0; a->ext && i < a->ext->nplugins; i++)
          if (&a->ext->plugins[i]->provider == pv) pl = a->ext->plugins[i];
        if (!pl) return mlc_make_status(MLC_INTERNAL, "%s: its plugin is not loaded", ek->name);
        int have = 0;
        for (int i = 0; i < d->nplugins && !have; i++) have = d->plugins[i] == pl;
        if (!have) d->plugins[d->nplugins++] = pl;
      } else {
        return mlc_make_status(MLC_INTERNAL, "%s has no function to link", ek->name);
      }
    }
  return NULL;
}

/* Writes ext_PROVIDER.a for each provider whose wrappers are linked. */
static mlc_status write_ext_archives(const desc_state *d, const char *workdir) {
  for (int i = 0; i < d->nproviders; i++) {
    const char *blob[2];
    if (!provider_blob(d->providers[i], blob)) continue;
    char p[4200];
    snprintf(p, sizeof p, "%s/ext_%s.a", workdir, d->providers[i]->name);
    MLC_RETURN_IF_ERROR(mlc_drv_write_file(p, blob[0], (size_t)(blob[1] - blob[0])));
  }
  return NULL;
}

mlc_status mlc_drv_archive(const mlc_drv_archive_args *a) {
  const mlc_module *gm = a->gm;
  const mlc_func *fn = a->fn;
  desc_state d;
  memset(&d, 0, sizeof d);
  d.gm = gm;
  d.fn = fn;
  uint8_t *blob = NULL;
  size_t blob_size = 0;
  const char **kernels = NULL;
  char **syms = NULL;
  int nk = 0;
  int nv = gm->next_value_id;
  d.t = mlc_mem_calloc((size_t)nv + 1, sizeof *d.t);
  d.id_of = mlc_mem_alloc(sizeof(int) * ((size_t)nv + 1));
  d.const_off = mlc_mem_alloc(sizeof(int64_t) * ((size_t)gm->nconsts + 1));
  d.const_order = mlc_mem_alloc(sizeof(int) * ((size_t)gm->nconsts + 1));
  mlc_status s = NULL;
  if (!d.t || !d.id_of || !d.const_off || !d.const_order) {
    s = mlc_oom();
    goto done;
  }
  for (int i = 0; i < nv; i++) d.id_of[i] = -1;
  for (int i = 0; i < gm->nconsts; i++) d.const_off[i] = -1;
  /* Tensor ids: inputs, outputs, then constants and intermediates in use order. */
  for (int i = 0; i < fn->nparams; i++) {
    add_tensor(&d, fn->params[i], 0, i);
    const mlc_value *def = mlc_func_param_default(fn, i);
    if (!def) continue;
    /* an input's default: its data in the weights (the input stays an input) */
    if (def->kind != MLC_VALUE_CONST || !mlc_type_equal(&def->type, &fn->params[i]->type) ||
        !mlc_type_is_static(&def->type)) {
      s = mlc_make_status(MLC_INTERNAL, "input %d: its default is not a static constant of its type", i);
      goto done;
    }
    weight_offset(&d, def);
  }
  for (int i = 0; i < fn->nrets; i++) {
    if (fn->rets[i]->kind != MLC_VALUE_VAR || d.id_of[fn->rets[i]->id] >= 0) {
      s = mlc_make_status(MLC_INTERNAL, "output %d is not a distinct computed value", i);
      goto done;
    }
    add_tensor(&d, fn->rets[i], 1, i);
  }
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      if (bd->kind == MLC_CALL_OP) {
        s = mlc_make_status(MLC_INTERNAL, "binding %d was not lowered", k);
        goto done;
      }
      for (int j = 0; j < bd->nargs; j++) add_arg(&d, bd->args[j]);
      for (int j = 0; j < bd->nouts; j++) {
        const mlc_value *v = bd->outs[j];
        if (d.id_of[v->id] >= 0) continue; /* an output */
        if (v->storage < 0 || v->storage >= fn->nstorages) {
          s = mlc_make_status(MLC_INTERNAL, "value %d has no storage (plan_memory not run?)", v->id);
          goto done;
        }
        add_tensor(&d, v, 3, v->storage);
      }
    }
  int64_t arena = mlc_drv_arena_bytes(fn);
  if (a->out_arena_bytes) *a->out_arena_bytes = arena;
  /* Every argument must be known by now (params, consts, earlier outputs). */
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      for (int j = 0; j < bd->nargs; j++)
        if (d.id_of[bd->args[j]->id] < 0) {
          s = mlc_make_status(MLC_INTERNAL, "argument %d of binding %d is undefined", j, k);
          goto done;
        }
    }

  if ((s = collect_externs(&d, a))) goto done;

  char p[4096];
  /* The description as a blob and the kernels' table, in model.o. */
  if ((s = build_desc(&d, a, &blob, &blob_size, &kernels, &nk))) goto done;
  syms = mlc_mem_calloc((size_t)nk + (size_t)d.nsyms + 1, sizeof *syms);
  if (!syms) {
    s = mlc_oom();
    goto done;
  }
  for (int i = 0; i < nk; i++) {
    size_t len = strlen(MLC_DRV_KERNEL_PREFIX) + strlen(kernels[i]) + 1;
    if (!(syms[i] = mlc_mem_alloc(len))) {
      s = mlc_oom();
      goto done;
    }
    snprintf(syms[i], len, MLC_DRV_KERNEL_PREFIX "%s", kernels[i]);
  }
  for (int i = 0; i < d.nsyms; i++)
    if (!(syms[nk + i] = mlc_mem_strdup(d.ext_syms[i]))) {
      s = mlc_oom();
      goto done;
    }
  snprintf(p, sizeof p, "%s/model.o", a->workdir);
  if ((s = mlc_cg_build_model_object(a->target, blob, blob_size, a->devcode, a->devcode ? a->devcode_size : 0,
                                     (const char *const *)syms, nk + d.nsyms, p)))
    goto done;
  if ((s = write_ext_archives(&d, a->workdir))) goto done;
  snprintf(p, sizeof p, "%s/weights.bin", a->workdir);
  if ((s = write_weights(&d, p))) goto done;
  snprintf(p, sizeof p, "%s/weights.S", a->workdir);
  if ((s = mlc_drv_write_file(p, weights_s, sizeof weights_s - 1))) goto done;
  snprintf(p, sizeof p, "%s/model.map", a->workdir);
  if ((s = mlc_drv_write_file(p, model_map, sizeof model_map - 1))) goto done;
  snprintf(p, sizeof p, "%s/rt.a", a->workdir);
  if ((s = mlc_drv_write_file(p, mlc_drv_rt_archive, (size_t)(mlc_drv_rt_archive_end - mlc_drv_rt_archive))))
    goto done;
  {
    const char *cc = getenv("MLC_CC");
    if (!cc || !*cc) cc = MLC_MODEL_CC;
    char kobj[4096];
    snprintf(kobj, sizeof kobj, "%s", a->kernels_obj);
    const char *argv[40 + 8 * MAX_EXT_FNS];
    char extra[MAX_EXT_FNS][4200];
    int nextra = 0;
    int n = 0;
    argv[n++] = cc;
    argv[n++] = "-shared";
    argv[n++] = "-fPIC";
    argv[n++] = "-O2";
    argv[n++] = "-fvisibility=hidden";
    argv[n++] = "-o";
    argv[n++] = "model.so";
    argv[n++] = "model.o";
    argv[n++] = "weights.S";
    argv[n++] = kobj;
    for (int i = 0; i < d.nproviders; i++) {
      if (!provider_blob(d.providers[i], NULL)) continue;
      snprintf(extra[nextra], sizeof extra[nextra], "ext_%s.a", d.providers[i]->name);
      argv[n++] = extra[nextra++];
    }
    argv[n++] = "rt.a";
    argv[n++] = "-Wl,-u,mlc_model_entry_v1";
    argv[n++] = "-Wl,--version-script=model.map";
    argv[n++] = "-Wl,-z,noexecstack";
#ifdef MLC_MODEL_SAN_FLAGS
    argv[n++] = MLC_MODEL_SAN_FLAGS;
#endif
    for (int i = 0; i < d.nproviders; i++)
      if (d.providers[i]->ldflags) argv[n++] = d.providers[i]->ldflags;
    for (int i = 0; a->link_plugins && i < d.nplugins; i++) {
      /* the plugin itself, found again next to where it was given */
      const char *path = d.plugins[i]->path;
      char dir[4096];
      snprintf(dir, sizeof dir, "%s", path);
      char *sl = strrchr(dir, '/');
      if (sl) *sl = 0;
      else snprintf(dir, sizeof dir, ".");
      char absdir[4096];
      if (!realpath(dir, absdir)) snprintf(absdir, sizeof absdir, "%s", dir);
      /* by file name (-l:FILE), so the dependency is recorded under the
      ** name the runtime looks for, kept even though no symbol of it is
      ** referenced, and found again through the run path */
      argv[n++] = "-Xlinker"; /* not -Wl, which would split a path at its commas */
      argv[n++] = "-rpath";
      argv[n++] = "-Xlinker";
      snprintf(extra[nextra], sizeof extra[nextra], "%s", absdir);
      argv[n++] = extra[nextra++];
      snprintf(extra[nextra], sizeof extra[nextra], "-L%s", absdir);
      argv[n++] = extra[nextra++];
      argv[n++] = "-Wl,--push-state,--no-as-needed";
      snprintf(extra[nextra], sizeof extra[nextra], "-l:%s", d.plugins[i]->file);
      argv[n++] = extra[nextra++];
      argv[n++] = "-Wl,--pop-state";
    }
    argv[n++] = "-lm";
    argv[n++] = "-lpthread";
    argv[n++] = "-ldl";
    argv[n] = NULL;
    snprintf(p, sizeof p, "%s/link.log", a->workdir);
    if ((s = mlc_drv_spawn(argv, a->workdir, p))) {
      s = mlc_status_annotate(s, "linking %s", a->out_so);
      goto done;
    }
  }
  snprintf(p, sizeof p, "%s/model.so", a->workdir);
  if ((s = copy_file(p, a->out_so))) goto done;
  if (a->out_h) s = write_model_h(a);
done:
  for (int i = 0; syms && i < nk + d.nsyms; i++) mlc_mem_free(syms[i]);
  mlc_mem_free(syms);
  mlc_mem_free(kernels);
  mlc_mem_free(blob);
  mlc_mem_free(d.t);
  mlc_mem_free(d.id_of);
  mlc_mem_free(d.const_off);
  mlc_mem_free(d.const_order);
  return s;
}
