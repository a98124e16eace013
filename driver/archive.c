/*
** archive.c: the archiver (TVM's export_library).
**
**   desc.c      the model description of runtime/rt_model.h as static data:
**               tensors, storages, steps calling the kernels, I/O names,
**               symbolic dims, manifest
**   weights.bin the constants, each 64-byte aligned, embedded read-only by
**   weights.S   an .incbin
**   rt.a        the runtime archive embedded in the compiler (rtblob.S)
**
** linked with the kernels' object into one model.so that exports only
** mlc_model_entry_v1.  Everything is written in a scratch directory with
** fixed names, so the same inputs give a byte-identical model.so.
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

#include "base/strbuf.h"
#include "driver/driver_int.h"
#include "lower/lower.h"

extern const char mlc_drv_rt_archive[], mlc_drv_rt_archive_end[];
extern const char mlc_drv_rt_abi_h[], mlc_drv_rt_abi_h_end[];
extern const char mlc_drv_rt_model_h[], mlc_drv_rt_model_h_end[];

extern char **environ;

mlc_status mlc_drv_write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", path, strerror(errno));
  size_t w = n ? fwrite(data, 1, n, f) : 0;
  int bad = w != n;
  if (fclose(f) != 0) bad = 1;
  return bad ? mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", path, strerror(errno)) : NULL;
}

static char *read_tail(const char *path, size_t max) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  long start = size > (long)max ? size - (long)max : 0;
  fseek(f, start, SEEK_SET);
  char *buf = mlc_mem_calloc(max + 1, 1);
  if (buf && fread(buf, 1, max, f) == 0) buf[0] = 0;
  fclose(f);
  return buf;
}

mlc_status mlc_drv_spawn(const char *const *argv, const char *cwd, const char *log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  char *old = NULL;
  if (cwd) { /* posix_spawn has no portable chdir action: switch around the call */
    old = getcwd(NULL, 0);
    if (!old || chdir(cwd) != 0) {
      mlc_mem_free(old);
      posix_spawn_file_actions_destroy(&fa);
      return mlc_make_status(MLC_IO_ERROR, "cannot enter %s: %s", cwd, strerror(errno));
    }
  }
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  if (old) {
    if (chdir(old) != 0) rc = rc ? rc : errno;
    mlc_mem_free(old);
  }
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return mlc_make_status(MLC_NOT_FOUND, "cannot run %s: %s (set MLC_CC to a C compiler)", argv[0],
                           strerror(rc));
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return mlc_make_status(MLC_INTERNAL, "waitpid: %s", strerror(errno));
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return NULL;
  char *tail = read_tail(log_path, 2000);
  mlc_status s = mlc_make_status(MLC_INTERNAL, "%s failed (%s %d):\n%s", argv[0],
                                 WIFEXITED(st) ? "exit status" : "signal",
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

static void c_string(mlc_strbuf *b, const char *s) {
  mlc_sb_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      mlc_sb_printf(b, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f || *p == '?')
      mlc_sb_printf(b, "\\%03o", *p);
    else
      mlc_sb_putc(b, (char)*p);
  }
  mlc_sb_putc(b, '"');
}

typedef struct tensor_ref {
  const mlc_value *v;
  int storage; /* enum mlc_rt_storage */
  int64_t loc;
} tensor_ref;

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

static void add_arg(desc_state *d, const mlc_value *v) {
  if (v->kind == MLC_VALUE_CONST && d->const_off[v->const_index] < 0) {
    const mlc_const *c = mlc_value_const(d->gm, v);
    d->weights_size = (d->weights_size + 63) & ~(uint64_t)63;
    d->const_off[v->const_index] = (int64_t)d->weights_size;
    d->const_order[d->nconst++] = v->const_index;
    d->weights_size += c->nbytes ? c->nbytes : 1; /* distinct offsets */
  }
  if (v->kind == MLC_VALUE_CONST) add_tensor(d, v, 2, d->const_off[v->const_index]);
}

static const char *value_name(const mlc_value *v, char *buf, size_t n) {
  if (v->name) return v->name;
  snprintf(buf, n, "v%d", v->id);
  return buf;
}

static mlc_status write_desc(desc_state *d, const mlc_drv_archive_args *a, const char *path) {
  const mlc_module *gm = d->gm;
  const mlc_func *fn = d->fn;
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_sb_puts(&b, "/* Model description generated by mlc-onnx " PACKAGE_VERSION ". */\n");
  mlc_sb_puts(&b, "#include \"runtime/rt_model.h\"\n\n");
  mlc_sb_puts(&b, "extern const uint8_t mlc_weights_blob[] __attribute__((visibility(\"hidden\")));\n");
  /* kernel declarations, once each */
  int nk = 0, cap = 0;
  for (int bi = 0; bi < fn->nblocks; bi++) cap += fn->blocks[bi].n;
  const char **kernels = mlc_mem_calloc((size_t)cap + 1, sizeof(char *));
  if (!kernels) return mlc_oom();
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      if (bd->kind != MLC_CALL_TIR) continue;
      int seen = 0;
      for (int j = 0; j < nk; j++) seen |= strcmp(kernels[j], bd->callee) == 0;
      if (seen) continue;
      kernels[nk++] = bd->callee;
      mlc_sb_printf(&b, "extern int " MLC_DRV_KERNEL_PREFIX "%s(void **, const int32_t *, int32_t, mlc_rt_ctx *) __attribute__((visibility(\"hidden\")));\n", bd->callee);
    }
  mlc_sb_puts(&b, "\n");
  /* dims */
  char nb[32];
  for (int i = 0; i < d->nt; i++) {
    const mlc_type *t = &d->t[i].v->type;
    if (t->rank == 0) continue;
    mlc_sb_printf(&b, "static const int64_t d%d[] = {", i);
    for (int k = 0; k < t->rank; k++) mlc_sb_printf(&b, "%s%lld", k ? ", " : "", (long long)t->dims[k]);
    mlc_sb_puts(&b, "};\n");
  }
  mlc_sb_puts(&b, "\nstatic const mlc_rt_tensor_desc tensors[] = {\n");
  for (int i = 0; i < d->nt; i++) {
    const mlc_type *t = &d->t[i].v->type;
    int code, bits;
    dl_dtype(t->dtype, &code, &bits);
    mlc_sb_printf(&b, "  {{%d, %d, 1}, %d, ", code, bits, t->rank);
    if (t->rank)
      mlc_sb_printf(&b, "d%d", i);
    else
      mlc_sb_puts(&b, "0");
    mlc_sb_printf(&b, ", %d, %lld}, /* %s */\n", d->t[i].storage, (long long)d->t[i].loc,
                  value_name(d->t[i].v, nb, sizeof nb));
  }
  mlc_sb_puts(&b, "};\n\nstatic const mlc_rt_io_desc inputs[] = {\n");
  for (int i = 0; i < fn->nparams; i++) {
    mlc_sb_puts(&b, "  {");
    c_string(&b, value_name(fn->params[i], nb, sizeof nb));
    mlc_sb_printf(&b, ", %d},\n", tensor_id(d, fn->params[i]));
  }
  if (!fn->nparams) mlc_sb_puts(&b, "  {0, 0},\n");
  mlc_sb_puts(&b, "};\n\nstatic const mlc_rt_io_desc outputs[] = {\n");
  for (int i = 0; i < fn->nrets; i++) {
    mlc_sb_puts(&b, "  {");
    c_string(&b, value_name(fn->rets[i], nb, sizeof nb));
    mlc_sb_printf(&b, ", %d},\n", tensor_id(d, fn->rets[i]));
  }
  mlc_sb_puts(&b, "};\n\n");
  /* steps: tensor args then outputs; a runtime built-in ("mlc.*") takes its
  ** int attributes as trailing immediates; "mlc.define_dims" becomes a
  ** BIND_SYMS step (vector, copy, offset, then a symbol or extent per dim) */
  int ns = 0;
  int *nargs_of = mlc_mem_calloc((size_t)cap + 1, sizeof(int));
  if (!nargs_of) {
    mlc_mem_free(kernels);
    mlc_sb_fini(&b);
    return mlc_oom();
  }
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++, ns++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      int na = 0;
      mlc_sb_printf(&b, "static const mlc_rt_arg_desc a%d[] = {", ns);
      for (int j = 0; j < bd->nargs; j++, na++) mlc_sb_printf(&b, "{0, %d}, ", tensor_id(d, bd->args[j]));
      for (int j = 0; j < bd->nouts; j++, na++) mlc_sb_printf(&b, "{0, %d}, ", tensor_id(d, bd->outs[j]));
      if (bd->kind == MLC_CALL_DPS_PACKED && strcmp(bd->callee, MLC_LOWER_BIND_SYMS) == 0) {
        const mlc_attr *dims = mlc_attrs_find(bd->attrs, bd->nattrs, "dims");
        mlc_sb_printf(&b, "{2, %lld}, ", (long long)mlc_attrs_int(bd->attrs, bd->nattrs, "offset", 0));
        na++;
        for (int j = 0; dims && dims->kind == MLC_ATTR_INTS && j < dims->n; j++, na++) {
          int64_t v = dims->ints[j];
          if (MLC_DIM_IS_SYM(v)) mlc_sb_printf(&b, "{1, %d}, ", MLC_DIM_SYM_ID(v));
          else mlc_sb_printf(&b, "{2, %lld}, ", (long long)v);
        }
      } else if (bd->kind == MLC_CALL_DPS_PACKED && strncmp(bd->callee, "mlc.", 4) == 0) {
        for (int j = 0; j < bd->nattrs; j++)
          if (bd->attrs[j].kind == MLC_ATTR_INT) {
            mlc_sb_printf(&b, "{2, %lld}, ", (long long)bd->attrs[j].i);
            na++;
          }
      }
      nargs_of[ns] = na;
      mlc_sb_puts(&b, "};\n");
    }
  mlc_sb_puts(&b, "\nstatic const mlc_rt_step_desc steps[] = {\n");
  ns = 0;
  for (int bi = 0; bi < fn->nblocks; bi++)
    for (int k = 0; k < fn->blocks[bi].n; k++, ns++) {
      const mlc_binding *bd = fn->blocks[bi].bindings[k];
      int ext = bd->kind == MLC_CALL_DPS_PACKED;
      if (ext && strcmp(bd->callee, MLC_LOWER_BIND_SYMS) == 0) ext = 2; /* MLC_RT_STEP_BIND_SYMS */
      mlc_sb_printf(&b, "  {%d, ", ext);
      c_string(&b, bd->callee);
      if (ext)
        mlc_sb_puts(&b, ", 0, ");
      else
        mlc_sb_printf(&b, ", " MLC_DRV_KERNEL_PREFIX "%s, ", bd->callee);
      c_string(&b, bd->origin.node ? bd->origin.node : "");
      mlc_sb_printf(&b, ", %d, a%d},\n", nargs_of[ns], ns);
    }
  mlc_mem_free(nargs_of);
  mlc_sb_puts(&b, "};\n\nstatic const char *const sym_names[] = {");
  for (int i = 0; i < gm->nsyms; i++) {
    c_string(&b, gm->syms[i]);
    mlc_sb_puts(&b, ", ");
  }
  mlc_sb_puts(&b, "0};\n\nstatic const char *const kernel_names[] = {");
  for (int i = 0; i < nk; i++) {
    c_string(&b, kernels[i]);
    mlc_sb_puts(&b, ", ");
  }
  mlc_sb_puts(&b, "0};\n\nconst mlc_rt_model_desc mlc_model_desc = {\n");
  mlc_sb_puts(&b, "  MLC_RT_DESC_VERSION, MLC_RT_ABI_VERSION,\n  ");
  c_string(&b, a->model_name);
  mlc_sb_puts(&b, ",\n  ");
  c_string(&b, a->manifest_json);
  mlc_sb_printf(&b, ",\n  %d, sym_names,\n  %d, tensors,\n  %d, inputs,\n  %d, outputs,\n  %d,\n"
                    "  %d, steps,\n  0, 0,\n  %d, kernel_names,\n  mlc_weights_blob, %lluu\n};\n",
                gm->nsyms, d->nt, fn->nparams, fn->nrets, fn->nstorages, ns, nk,
                (unsigned long long)d->weights_size);
  mlc_mem_free(kernels);
  if (b.oom) {
    mlc_sb_fini(&b);
    return mlc_oom();
  }
  mlc_status s = mlc_drv_write_file(path, b.data, b.len);
  mlc_sb_fini(&b);
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

static mlc_status write_model_h(const mlc_drv_archive_args *a) {
  const mlc_func *fn = a->fn;
  mlc_strbuf b = MLC_STRBUF_INIT;
  char guard[128], nb[32];
  size_t k = 0;
  for (const char *p = a->model_name; *p && k < sizeof guard - 16; p++)
    guard[k++] = (*p >= 'a' && *p <= 'z') ? (char)(*p - 32) : ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_';
  guard[k] = 0;
  mlc_sb_printf(&b, "/*\n** %s.h: interface of the compiled model \"%s\" (mlc-onnx %s).\n**\n",
                a->model_name, a->model_name, PACKAGE_VERSION);
  mlc_sb_puts(&b, "** Load it with mlc_model_load(\"<path>.so\", ...) from mlc/mlc_runtime.h, or\n"
                  "** link the .so and call mlc_model_open_entry(mlc_model_entry_v1(), ...).\n**\n");
  for (int io = 0; io < 2; io++) {
    int n = io ? fn->nrets : fn->nparams;
    mlc_sb_printf(&b, "** %s:\n", io ? "Outputs" : "Inputs");
    for (int i = 0; i < n; i++) {
      const mlc_value *v = io ? fn->rets[i] : fn->params[i];
      mlc_strbuf ty = MLC_STRBUF_INIT;
      mlc_graph_print_type(a->gm, &v->type, &ty);
      mlc_sb_printf(&b, "**   %d %s: %s\n", i, value_name(v, nb, sizeof nb), mlc_sb_str(&ty));
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

static mlc_status copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in) return mlc_make_status(MLC_IO_ERROR, "cannot read %s: %s", from, strerror(errno));
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", to, (long)getpid());
  FILE *out = fopen(tmp, "wb");
  if (!out) {
    fclose(in);
    return mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", to, strerror(errno));
  }
  char buf[1 << 16];
  size_t n;
  int bad = 0;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) bad |= fwrite(buf, 1, n, out) != n;
  fclose(in);
  if (fclose(out) != 0) bad = 1;
  if (bad || rename(tmp, to) != 0) {
    int e = errno;
    unlink(tmp);
    return mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", to, strerror(e));
  }
  chmod(to, 0755);
  return NULL;
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
        int64_t n = mlc_type_numel(&v->type);
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

mlc_status mlc_drv_archive(const mlc_drv_archive_args *a) {
  const mlc_module *gm = a->gm;
  const mlc_func *fn = a->fn;
  desc_state d = {gm, fn, NULL, 0, NULL, NULL, NULL, 0, 0};
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
  for (int i = 0; i < fn->nparams; i++) add_tensor(&d, fn->params[i], 0, i);
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

  char p[4096];
  snprintf(p, sizeof p, "%s/desc.c", a->workdir);
  if ((s = write_desc(&d, a, p))) goto done;
  snprintf(p, sizeof p, "%s/weights.bin", a->workdir);
  if ((s = write_weights(&d, p))) goto done;
  snprintf(p, sizeof p, "%s/weights.S", a->workdir);
  if ((s = mlc_drv_write_file(p, weights_s, sizeof weights_s - 1))) goto done;
  snprintf(p, sizeof p, "%s/model.map", a->workdir);
  if ((s = mlc_drv_write_file(p, model_map, sizeof model_map - 1))) goto done;
  snprintf(p, sizeof p, "%s/rt.a", a->workdir);
  if ((s = mlc_drv_write_file(p, mlc_drv_rt_archive, (size_t)(mlc_drv_rt_archive_end - mlc_drv_rt_archive))))
    goto done;
  snprintf(p, sizeof p, "%s/runtime", a->workdir);
  if (mkdir(p, 0755) != 0 && errno != EEXIST) {
    s = mlc_make_status(MLC_IO_ERROR, "cannot create %s: %s", p, strerror(errno));
    goto done;
  }
  snprintf(p, sizeof p, "%s/runtime/rt_abi.h", a->workdir);
  if ((s = mlc_drv_write_file(p, mlc_drv_rt_abi_h, (size_t)(mlc_drv_rt_abi_h_end - mlc_drv_rt_abi_h)))) goto done;
  snprintf(p, sizeof p, "%s/runtime/rt_model.h", a->workdir);
  if ((s = mlc_drv_write_file(p, mlc_drv_rt_model_h, (size_t)(mlc_drv_rt_model_h_end - mlc_drv_rt_model_h))))
    goto done;
  {
    const char *cc = getenv("MLC_CC");
    if (!cc || !*cc) cc = MLC_MODEL_CC;
    char kobj[4096];
    snprintf(kobj, sizeof kobj, "%s", a->kernels_obj);
    const char *argv[40];
    int n = 0;
    argv[n++] = cc;
    argv[n++] = "-shared";
    argv[n++] = "-fPIC";
    argv[n++] = "-O2";
    argv[n++] = "-fvisibility=hidden";
    argv[n++] = "-I.";
    argv[n++] = "-o";
    argv[n++] = "model.so";
    argv[n++] = "desc.c";
    argv[n++] = "weights.S";
    argv[n++] = kobj;
    argv[n++] = "rt.a";
    argv[n++] = "-Wl,-u,mlc_model_entry_v1";
    argv[n++] = "-Wl,--version-script=model.map";
    argv[n++] = "-Wl,-z,noexecstack";
#ifdef MLC_MODEL_SAN_FLAGS
    argv[n++] = MLC_MODEL_SAN_FLAGS;
#endif
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
  mlc_mem_free(d.t);
  mlc_mem_free(d.id_of);
  mlc_mem_free(d.const_off);
  mlc_mem_free(d.const_order);
  return s;
}
