/*
** registry.c: the external kernels the dispatcher knows (extern.h).
**
** One static array (STYLE R21): each entry a name, its provider, the
** pattern it implements, the symbol of its run-time wrapper and a match()
** that looks at one call of the graph and, when it takes it, says which
** bindings it replaces and with which arguments.  The providers' matches
** are written on the graph's ops and struct info only; a plugin's
** functions go through one generic match that asks the plugin's supports().
** The runtime's built-ins ("mlc.*") are listed with no match: legalize
** emits them.
*/
#include "config.h"

#include <dlfcn.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "extern/extern.h"
#include "runtime/rt_model.h"

/* ---- providers ---------------------------------------------------------- */

static int configured_openblas(void) {
#ifdef MLC_HAVE_OPENBLAS
  return 1;
#else
  return 0;
#endif
}

static int configured_onednn(void) {
#ifdef MLC_HAVE_ONEDNN
  return 1;
#else
  return 0;
#endif
}

static int configured_cuda(void) {
#ifdef MLC_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

static int always(void) { return 1; }

#ifndef MLC_OPENBLAS_VERSION
#define MLC_OPENBLAS_VERSION "unknown"
#endif
#ifndef MLC_ONEDNN_VERSION
#define MLC_ONEDNN_VERSION "unknown"
#endif

/* OpenBLAS is loaded by its wrapper at run time (dlopen), after it chose
** the CPU's kernels (OPENBLAS_CORETYPE), so the link adds nothing. */
const mlc_extern_provider mlc_extern_provider_openblas = {
    "openblas", "libopenblas.so.0", MLC_OPENBLAS_VERSION, NULL, 1, configured_openblas, NULL, NULL};
const mlc_extern_provider mlc_extern_provider_onednn = {
    "onednn", "libdnnl.so.2", MLC_ONEDNN_VERSION, NULL, 1, configured_onednn, NULL, NULL};
const mlc_extern_provider mlc_extern_provider_mlc = {"mlc", NULL, PACKAGE_VERSION, NULL, 1, always, NULL, NULL};
/* cuBLAS, cuBLASLt and cuDNN (CUDA models) are loaded by their wrappers
** when a call first runs (dlopen), like the driver, so the link adds
** nothing. */
const mlc_extern_provider mlc_extern_provider_cublas = {
    "cublas", "libcublas.so.13", "13", NULL, 1, configured_cuda, NULL, NULL, 1};
const mlc_extern_provider mlc_extern_provider_cublaslt = {
    "cublaslt", "libcublasLt.so.13", "13", NULL, 1, configured_cuda, NULL, NULL, 1};
const mlc_extern_provider mlc_extern_provider_cudnn = {
    "cudnn", "libcudnn.so.9", "9", NULL, 1, configured_cuda, NULL, NULL, 1};

const mlc_extern_provider *mlc_extern_find_provider(const char *name) {
  static const mlc_extern_provider *const all[] = {&mlc_extern_provider_openblas, &mlc_extern_provider_onednn,
                                                   &mlc_extern_provider_cublas, &mlc_extern_provider_cublaslt,
                                                   &mlc_extern_provider_cudnn};
  for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
    if (!strcmp(all[i]->name, name)) return all[i];
  return NULL;
}

/* ---- helpers for matches ------------------------------------------------ */

static int is_f32(const mlc_value *v) { return v->type.dtype == MLC_DTYPE_F32; }

static int push(mlc_extern_match *mt, int64_t v) {
  if (mt->nattrs >= MLC_EXT_MAX_ATTRS) return 0;
  mt->attrs[mt->nattrs++] = v;
  return 1;
}

static int push_arg(mlc_extern_match *mt, mlc_value *v) {
  if (mt->nargs >= MLC_EXT_MAX_ARGS) return 0;
  mt->args[mt->nargs++] = v;
  return 1;
}

/* The bits of the float32 nearest |d|, as an attribute value. */
static int64_t f32_bits(double d) {
  float f = d > FLT_MAX ? FLT_MAX : d < -FLT_MAX ? -FLT_MAX : (float)d;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (int64_t)u;
}

/* Pushes the |n| values of ints attribute |name| of |b| (|dflt| for each
** when absent); 0 when present with another length. */
static int push_ints(mlc_extern_match *mt, const mlc_binding *b, const char *name, int n, int64_t dflt) {
  const mlc_attr *a = mlc_attrs_find(b->attrs, b->nattrs, name);
  if (a && (a->kind != MLC_ATTR_INTS || a->n != n)) return 0;
  for (int i = 0; i < n; i++)
    if (!push(mt, a ? a->ints[i] : dflt)) return 0;
  return 1;
}

mlc_binding *mlc_extern_sole_user(const mlc_extern_site *s, const mlc_value *v) {
  if (v->id < 0 || s->uses[v->id] != 1) return NULL;
  mlc_binding *u = s->user[v->id];
  if (!u || u->kind != MLC_CALL_OP) return NULL;
  for (int r = 0; r < s->f->nrets; r++)
    if (s->f->rets[r] == v) return NULL;
  for (int i = 0; i < s->ntaken; i++)
    if (s->taken[i] == u) return NULL;
  return u;
}

static int absorb(mlc_extern_match *mt, mlc_binding *b) {
  if (mt->nbindings >= MLC_EXT_MAX_ABSORB) return 0;
  mt->bindings[mt->nbindings++] = b;
  return 1;
}

/* ---- matmul ------------------------------------------------------------- */

/* A [..., M, K] x B [..., K, N], float32, both of rank >= 2. */
static int match_matmul(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  (void)k;
  const mlc_binding *b = s->b;
  if (b->op != MLC_OP_MATMUL || b->nargs != 2 || b->nouts != 1) return 0;
  mlc_value *a = b->args[0], *w = b->args[1];
  if (!is_f32(a) || !is_f32(w) || !is_f32(b->outs[0]) || a->type.rank < 2 || w->type.rank < 2) return 0;
  return absorb(mt, s->b) && push_arg(mt, a) && push_arg(mt, w);
}

/*
** matmul as match_matmul takes it, then what cuBLASLt's epilogue applies
** before Y is written, each the only use of the value before it: an add
** of a bias along Y's last axis (N), a float32 constant of shape [N] or [1,
** .., 1, N] whose rank is no higher than Y's (the add's result has Y's
** type), then a relu.  Only what the epilogue computes exactly: an add of
** anything else (a tensor, a bias along M, a non-constant vector) and
** whatever follows it stay for generated code, and so does a GELU written
** out (exporters write ONNX's erf form, x/2 (1 + erf(x / sqrt 2)); the
** epilogue's GELU is the tanh approximation, up to 4.7e-4 away from it).
*/
static int match_matmul_lt(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  if (!match_matmul(k, s, mt)) return 0;
  const mlc_value *y = s->b->outs[0];
  int r = y->type.rank;
  int64_t n = y->type.dims[r - 1];
  mlc_value *cur = s->b->outs[0], *bias = NULL;
  int act = MLC_EXT_ACT_NONE;
  mlc_binding *u = mlc_extern_sole_user(s, cur);
  if (u && u->op == MLC_OP_ADD && u->nargs == 2 && u->nouts == 1 && u->args[0] != u->args[1] && n >= 0) {
    mlc_value *c = u->args[0] == cur ? u->args[1] : u->args[0];
    int ok = c->kind == MLC_VALUE_CONST && is_f32(c) && c->type.rank >= 1 && c->type.rank <= r &&
             c->type.dims[c->type.rank - 1] == n && mlc_type_equal(&u->outs[0]->type, &y->type);
    for (int d = 0; ok && d < c->type.rank - 1; d++) ok = c->type.dims[d] == 1;
    if (ok) {
      if (!absorb(mt, u)) return 0;
      bias = c;
      cur = u->outs[0];
      u = mlc_extern_sole_user(s, cur);
    }
  }
  if (u && u->op == MLC_OP_RELU && u->nargs == 1 && u->nouts == 1) {
    if (!absorb(mt, u)) return 0;
    act = MLC_EXT_ACT_RELU;
  }
  if (bias && !push_arg(mt, bias)) return 0;
  return push(mt, bias != NULL) && push(mt, act);
}

/* ---- conv2d ------------------------------------------------------------- */

/*
** conv(x, w[, bias]) on NCHW float32 with a static weight, then what the
** wrapper applies before writing: an add of a tensor shaped as the output
** (residual) and a relu or clip, each the only use of the value before.
** |depthwise_ok|: whether the provider takes groups == C (one input
** channel per group); |clip_from_zero|: whether a clip it takes must be
** clip(0, max > 0) (cuDNN's clipped relu; another clip stays outside).
*/
static int match_conv_common(const mlc_extern_site *s, mlc_extern_match *mt, int depthwise_ok, int clip_from_zero) {
  mlc_binding *b = s->b;
  if (b->op != MLC_OP_CONV || b->nargs < 2 || b->nargs > 3 || b->nouts != 1) return 0;
  mlc_value *x = b->args[0], *w = b->args[1], *y = b->outs[0];
  if (!is_f32(x) || !is_f32(w) || !is_f32(y) || x->type.rank != 4 || w->type.rank != 4 || y->type.rank != 4)
    return 0;
  if (!mlc_type_is_static(&w->type)) return 0;
  int64_t groups = mlc_attrs_int(b->attrs, b->nattrs, "groups", 1);
  if (groups < 1) return 0;
  if (!depthwise_ok && groups > 1 && w->type.dims[1] == 1) return 0;
  mlc_value *bias = b->nargs == 3 ? b->args[2] : NULL;
  if (bias && (!is_f32(bias) || bias->type.rank != 1)) return 0;
  if (!absorb(mt, b) || !push_arg(mt, x) || !push_arg(mt, w)) return 0;
  if (bias && !push_arg(mt, bias)) return 0;
  /* the epilogue */
  mlc_value *cur = y, *res = NULL;
  int act = MLC_EXT_ACT_NONE;
  double lo = -FLT_MAX, hi = FLT_MAX;
  mlc_binding *u = mlc_extern_sole_user(s, cur);
  if (u && u->op == MLC_OP_ADD && u->nargs == 2 && u->nouts == 1) {
    mlc_value *other = u->args[0] == cur ? u->args[1] : u->args[0];
    if (u->args[0] != u->args[1] && is_f32(other) && mlc_type_equal(&other->type, &y->type) &&
        mlc_type_equal(&u->outs[0]->type, &y->type)) {
      res = other;
      if (!absorb(mt, u)) return 0;
      cur = u->outs[0];
      u = mlc_extern_sole_user(s, cur);
    }
  }
  if (u && u->nargs == 1 && u->nouts == 1 && (u->op == MLC_OP_RELU || u->op == MLC_OP_CLIP)) {
    int take = 1;
    if (u->op == MLC_OP_RELU) {
      act = MLC_EXT_ACT_RELU;
    } else {
      act = MLC_EXT_ACT_CLIP;
      const mlc_attr *a = mlc_attrs_find(u->attrs, u->nattrs, "min");
      const mlc_attr *c = mlc_attrs_find(u->attrs, u->nattrs, "max");
      if ((a && a->kind != MLC_ATTR_FLOAT && a->kind != MLC_ATTR_INT) ||
          (c && c->kind != MLC_ATTR_FLOAT && c->kind != MLC_ATTR_INT))
        return 0;
      if (a) lo = a->kind == MLC_ATTR_FLOAT ? a->f : (double)a->i;
      if (c) hi = c->kind == MLC_ATTR_FLOAT ? c->f : (double)c->i;
      if (clip_from_zero && !(lo == 0.0 && hi > 0.0 && hi < FLT_MAX)) {
        take = 0;
        act = MLC_EXT_ACT_NONE;
        lo = -FLT_MAX;
        hi = FLT_MAX;
      }
    }
    if (take && !absorb(mt, u)) return 0;
  }
  if (res && !push_arg(mt, res)) return 0;
  return push_ints(mt, b, "dilations", 2, 1) && push(mt, groups) && push_ints(mt, b, "pads", 4, 0) &&
         push_ints(mt, b, "strides", 2, 1) && push(mt, bias != NULL) && push(mt, res != NULL) && push(mt, act) &&
         push(mt, f32_bits(lo)) && push(mt, f32_bits(hi)) && push(mt, w->kind == MLC_VALUE_CONST);
}

static int match_conv_blas(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  (void)k;
  return match_conv_common(s, mt, 0, 0);
}

static int match_conv_dnnl(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  (void)k;
  return match_conv_common(s, mt, 1, 0);
}

static int match_conv_cudnn(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  (void)k;
  return match_conv_common(s, mt, 1, 1);
}

/* ---- pooling and softmax (oneDNN) --------------------------------------- */

static int match_pool(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  const mlc_binding *b = s->b;
  mlc_op want = strstr(k->name, "max_pool") ? MLC_OP_MAX_POOL : MLC_OP_AVG_POOL;
  if (b->op != want || b->nargs != 1 || b->nouts != 1) return 0;
  mlc_value *x = b->args[0], *y = b->outs[0];
  if (!is_f32(x) || !is_f32(y) || x->type.rank != 4 || y->type.rank != 4) return 0;
  const mlc_attr *kern = mlc_attrs_find(b->attrs, b->nattrs, "kernel");
  if (!kern || kern->kind != MLC_ATTR_INTS || kern->n != 2) return 0;
  /* ceil_mode's extra end padding counted in the average: not oneDNN's rule */
  if (want == MLC_OP_AVG_POOL && mlc_attrs_int(b->attrs, b->nattrs, "count_include_pad", 0) &&
      mlc_attrs_int(b->attrs, b->nattrs, "ceil_mode", 0))
    return 0;
  /* cuDNN pools without dilation */
  const mlc_attr *dil = mlc_attrs_find(b->attrs, b->nattrs, "dilations");
  if (k->provider->device && dil && dil->kind == MLC_ATTR_INTS)
    for (int i = 0; i < dil->n; i++)
      if (dil->ints[i] != 1) return 0;
  return absorb(mt, s->b) && push_arg(mt, x) && push_ints(mt, b, "kernel", 2, 1) &&
         push_ints(mt, b, "pads", 4, 0) && push_ints(mt, b, "strides", 2, 1) &&
         push_ints(mt, b, "dilations", 2, 1) &&
         push(mt, want == MLC_OP_AVG_POOL ? mlc_attrs_int(b->attrs, b->nattrs, "count_include_pad", 0) : 0);
}

static int match_softmax(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  (void)k;
  const mlc_binding *b = s->b;
  if ((b->op != MLC_OP_SOFTMAX && b->op != MLC_OP_LOG_SOFTMAX) || b->nargs != 1 || b->nouts != 1) return 0;
  mlc_value *x = b->args[0];
  int r = x->type.rank;
  if (!is_f32(x) || !is_f32(b->outs[0]) || r < 1 || r > 6) return 0;
  int64_t axis = mlc_attrs_int(b->attrs, b->nattrs, "axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  return absorb(mt, s->b) && push_arg(mt, x) && push(mt, axis) && push(mt, b->op == MLC_OP_LOG_SOFTMAX);
}

/* ---- plugins ------------------------------------------------------------ */

static int cmp_attr_name(const void *a, const void *b) {
  return strcmp(((const mlc_attr *)a)->name, ((const mlc_attr *)b)->name);
}

/* A plugin function takes every call of its op that its supports() takes
** (NULL: all float32), with the attributes sorted by name as ints. */
static int match_plugin(const mlc_extern_kernel *k, const mlc_extern_site *s, mlc_extern_match *mt) {
  const mlc_binding *b = s->b;
  if (b->op != k->op || b->nouts != 1 || b->nargs + 1 > MLC_EXT_MAX_ARGS) return 0;
  DLTensor t[MLC_EXT_MAX_ARGS];
  int64_t shapes[MLC_EXT_MAX_ARGS][8];
  int all_f32 = 1;
  for (int i = 0; i <= b->nargs; i++) {
    const mlc_value *v = i < b->nargs ? b->args[i] : b->outs[0];
    if (v->type.rank > 8) return 0;
    memset(&t[i], 0, sizeof t[i]);
    t[i].device.device_type = kDLCPU;
    t[i].ndim = v->type.rank;
    int code, bits;
    switch (v->type.dtype) {
      case MLC_DTYPE_F32: code = kDLFloat, bits = 32; break;
      case MLC_DTYPE_F64: code = kDLFloat, bits = 64; break;
      case MLC_DTYPE_I32: code = kDLInt, bits = 32; break;
      case MLC_DTYPE_I64: code = kDLInt, bits = 64; break;
      default: return 0;
    }
    all_f32 &= v->type.dtype == MLC_DTYPE_F32;
    t[i].dtype.code = (uint8_t)code;
    t[i].dtype.bits = (uint8_t)bits;
    t[i].dtype.lanes = 1;
    for (int d = 0; d < v->type.rank; d++) shapes[i][d] = v->type.dims[d] < 0 ? -1 : v->type.dims[d];
    t[i].shape = shapes[i];
  }
  mlc_attr sorted[32];
  int na = b->nattrs;
  if (na > 32) return 0;
  if (na) memcpy(sorted, b->attrs, sizeof sorted[0] * (size_t)na);
  qsort(sorted, (size_t)na, sizeof sorted[0], cmp_attr_name);
  for (int i = 0; i < na; i++) {
    const mlc_attr *a = &sorted[i];
    if (a->kind == MLC_ATTR_INT && !push(mt, a->i)) return 0;
    if (a->kind == MLC_ATTR_FLOAT && !push(mt, f32_bits(a->f))) return 0;
    for (int j = 0; a->kind == MLC_ATTR_INTS && j < a->n; j++)
      if (!push(mt, a->ints[j])) return 0;
  }
  int ok = k->plugin_fn->supports ? k->plugin_fn->supports(t, b->nargs, mt->attrs, mt->nattrs) != 0 : all_f32;
  if (!ok) return 0;
  if (!absorb(mt, s->b)) return 0;
  for (int i = 0; i < b->nargs; i++)
    if (!push_arg(mt, b->args[i])) return 0;
  return 1;
}

/* ---- the registry ------------------------------------------------------- */

#define OB &mlc_extern_provider_openblas
#define DN &mlc_extern_provider_onednn
#define RT &mlc_extern_provider_mlc
#define CB &mlc_extern_provider_cublas
#define LT &mlc_extern_provider_cublaslt
#define CD &mlc_extern_provider_cudnn

/* The built-in kernels, in order of preference within each provider.  The
** runtime's built-ins (runtime/shapefn.c) carry no symbol: the runtime
** resolves "mlc.*" itself. */
const mlc_extern_kernel mlc_extern_builtin_kernels[] = {
    {"openblas.conv2d", OB, "conv2d(+bias)(+add)(+relu|clip), not depthwise", "mlc_ext_openblas_conv2d",
     match_conv_blas, NULL, MLC_OP_CONV},
    {"openblas.matmul", OB, "matmul (batched, broadcast)", "mlc_ext_openblas_matmul", match_matmul, NULL,
     MLC_OP_MATMUL},
    {"onednn.conv2d", DN, "conv2d(+bias)(+add)(+relu|clip)", "mlc_ext_onednn_conv2d", match_conv_dnnl, NULL,
     MLC_OP_CONV},
    {"onednn.matmul", DN, "matmul (batched, broadcast)", "mlc_ext_onednn_matmul", match_matmul, NULL, MLC_OP_MATMUL},
    {"onednn.max_pool2d", DN, "max_pool 2-d", "mlc_ext_onednn_max_pool2d", match_pool, NULL, MLC_OP_MAX_POOL},
    {"onednn.avg_pool2d", DN, "avg_pool 2-d", "mlc_ext_onednn_avg_pool2d", match_pool, NULL, MLC_OP_AVG_POOL},
    {"onednn.softmax", DN, "softmax, log_softmax", "mlc_ext_onednn_softmax", match_softmax, NULL, MLC_OP_SOFTMAX},
    /* CUDA: the same patterns and arguments as oneDNN's (extern/rt_cublas.c, rt_cudnn.c) */
    {"cublas.matmul", CB, "matmul (batched, broadcast)", "mlc_ext_cublas_matmul", match_matmul, NULL, MLC_OP_MATMUL},
    /* extern/rt_cublaslt.c: its own arguments (extern.h) */
    {"cublaslt.matmul", LT, "matmul(+bias along N)(+relu) (batched, broadcast)", "mlc_ext_cublaslt_matmul",
     match_matmul_lt, NULL, MLC_OP_MATMUL},
    {"cudnn.conv2d", CD, "conv2d(+bias)(+add)(+relu|clip)", "mlc_ext_cudnn_conv2d", match_conv_cudnn, NULL,
     MLC_OP_CONV},
    {"cudnn.max_pool2d", CD, "max_pool 2-d", "mlc_ext_cudnn_max_pool2d", match_pool, NULL, MLC_OP_MAX_POOL},
    {"cudnn.avg_pool2d", CD, "avg_pool 2-d", "mlc_ext_cudnn_avg_pool2d", match_pool, NULL, MLC_OP_AVG_POOL},
    {"cudnn.softmax", CD, "softmax, log_softmax", "mlc_ext_cudnn_softmax", match_softmax, NULL, MLC_OP_SOFTMAX},
#define BUILTIN(e, fn, a0, d0, a1, d1) {"mlc." #fn, RT, "run-time shape function", NULL, NULL, NULL, MLC_OP_##e},
#include "runtime/rt_builtins.def"
#undef BUILTIN
    {NULL, NULL, NULL, NULL, NULL, NULL, MLC_OP_COUNT},
};

const mlc_extern_kernel *mlc_extern_find(const char *name) {
  for (const mlc_extern_kernel *k = mlc_extern_builtin_kernels; name && k->name; k++)
    if (!strcmp(k->name, name)) return k;
  return NULL;
}

const mlc_extern_kernel *mlc_extern_lookup(const mlc_extern_options *opt, const char *name) {
  const mlc_extern_kernel *k = mlc_extern_find(name);
  for (int p = 0; !k && opt && p < opt->nplugins; p++)
    for (int i = 0; !k && i < opt->plugins[p]->nkernels; i++)
      if (!strcmp(opt->plugins[p]->kernels[i].name, name)) k = &opt->plugins[p]->kernels[i];
  return k;
}

/* ---- loading a plugin --------------------------------------------------- */

static int good_name(const char *s) {
  if (!s || !*s || strlen(s) > 120) return 0;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
          *p == '.'))
      return 0;
  return 1;
}

void mlc_extern_plugin_free(mlc_extern_plugin_lib *p) {
  if (!p) return;
  mlc_mem_free(p->kernels);
  mlc_mem_free(p->path);
  mlc_mem_free(p->file);
  if (p->handle) dlclose(p->handle);
  mlc_mem_free(p);
}

mlc_status mlc_extern_load_plugin(const char *path, mlc_extern_plugin_lib **out) {
  *out = NULL;
  if (!path || !*path) return mlc_make_status(MLC_INVALID_ARGUMENT, "--extern-lib: no file given");
  /* a name without '/' would be a library search: make it a path */
  char buf[4096];
  snprintf(buf, sizeof buf, "%s%s", strchr(path, '/') ? "" : "./", path);
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  /* the model records this name, and the runtime takes only plain ones */
  if (!mlc_rt_plain_file_name(base))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "extern library %s: its file name must be printable ASCII without spaces", path);
  void *h = dlopen(buf, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    return mlc_make_status(MLC_IO_ERROR, "extern library %s: cannot load it: %s", path, e ? e : "?");
  }
  mlc_extern_plugin_entry entry = NULL;
  void *sym = dlsym(h, MLC_EXTERN_PLUGIN_SYMBOL);
  memcpy(&entry, &sym, sizeof entry);
  const mlc_extern_plugin *t = entry ? entry() : NULL;
  mlc_status s = NULL;
  if (!entry)
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: no %s (see mlc/mlc_extern.h)", path,
                        MLC_EXTERN_PLUGIN_SYMBOL);
  else if (!t)
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: %s returned NULL", path, MLC_EXTERN_PLUGIN_SYMBOL);
  else if (t->abi != MLC_EXTERN_PLUGIN_ABI)
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: plugin ABI %u, this compiler speaks %d", path,
                        t->abi, MLC_EXTERN_PLUGIN_ABI);
  else if (!good_name(t->name) || strchr(t->name, '.') || !strcmp(t->name, "mlc") ||
           mlc_extern_find_provider(t->name))
    s = mlc_make_status(MLC_INVALID_ARGUMENT,
                        "extern library %s: plugin name must be letters, digits and '_', and not a built-in "
                        "provider (mlc, openblas, onednn)",
                        path);
  else if (t->nfns < 0 || t->nfns > 4096 || (t->nfns && !t->fns))
    s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: bad function table (%d functions)", path, t->nfns);
  mlc_extern_plugin_lib *p = NULL;
  if (!s && !(p = mlc_mem_calloc(1, sizeof *p))) s = mlc_oom();
  if (!s && !(p->kernels = mlc_mem_calloc((size_t)t->nfns + 1, sizeof *p->kernels))) s = mlc_oom();
  if (!s && (!(p->path = mlc_mem_strdup(path)) || !(p->file = mlc_mem_strdup(base)))) s = mlc_oom();
  size_t plen = s ? 0 : strlen(t->name);
  for (int i = 0; !s && i < t->nfns; i++) {
    const mlc_extern_fn *fn = &t->fns[i];
    if (!good_name(fn->name) || strncmp(fn->name, t->name, plen) != 0 || fn->name[plen] != '.' || !fn->name[plen + 1])
      s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: function %d: its name must be \"%s.NAME\"", path,
                          i, t->name);
    else if (!fn->fn)
      s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: function %s has no code", path, fn->name);
    else if (!fn->op || mlc_op_from_name(fn->op) == MLC_OP_COUNT)
      s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: function %s: unknown graph op \"%s\"", path,
                          fn->name, fn->op ? fn->op : "(null)");
    for (int j = 0; !s && j < i; j++)
      if (!strcmp(t->fns[j].name, fn->name))
        s = mlc_make_status(MLC_INVALID_ARGUMENT, "extern library %s: function %s registered twice", path, fn->name);
    if (s) break;
    mlc_extern_kernel *k = &p->kernels[p->nkernels++];
    k->name = fn->name;
    k->provider = &p->provider;
    k->pattern = fn->op;
    k->match = match_plugin;
    k->plugin_fn = fn;
    k->op = mlc_op_from_name(fn->op);
  }
  if (s) {
    if (p) p->handle = NULL;
    mlc_extern_plugin_free(p);
    dlclose(h);
    return s;
  }
  p->handle = h;
  p->provider.name = t->name;
  p->provider.library = p->file;
  p->provider.version = p->file;
  p->provider.builtin = 0;
  p->provider.available = always;
  p->provider.plugin_path = p->path;
  p->provider.plugin_file = p->file;
  *out = p;
  return NULL;
}
