/*
** target.c: the target registry, the host target and --target parsing
** (target.h).  The CPU lists are those of LLVM 19 (llc -mcpu=help).
*/
#include "codegen/target.h"
#include "base/alloc.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- x86_64 ------------------------------------------------------------- */

static const char *const x86_arches[] = {"x86_64", "amd64", NULL};

static const char *const x86_cpus[] = {
    "alderlake", "amdfam10", "arrowlake", "arrowlake-s", "arrowlake_s", "athlon", "athlon-4",
    "athlon-fx", "athlon-mp", "athlon-tbird", "athlon-xp", "athlon64", "athlon64-sse3", "atom",
    "atom_sse4_2", "atom_sse4_2_movbe", "barcelona", "bdver1", "bdver2", "bdver3", "bdver4",
    "bonnell", "broadwell", "btver1", "btver2", "c3", "c3-2", "cannonlake", "cascadelake",
    "clearwaterforest", "cooperlake", "core-avx-i", "core-avx2", "core2", "core_2_duo_sse4_1",
    "core_2_duo_ssse3", "core_2nd_gen_avx", "core_3rd_gen_avx", "core_4th_gen_avx",
    "core_4th_gen_avx_tsx", "core_5th_gen_avx", "core_5th_gen_avx_tsx", "core_aes_pclmulqdq",
    "core_i7_sse4_2", "corei7", "corei7-avx", "emeraldrapids", "generic", "geode", "goldmont",
    "goldmont-plus", "goldmont_plus", "gracemont", "grandridge", "graniterapids",
    "graniterapids-d", "graniterapids_d", "haswell", "i386", "i486", "i586", "i686",
    "icelake-client", "icelake-server", "icelake_client", "icelake_server", "ivybridge", "k6",
    "k6-2", "k6-3", "k8", "k8-sse3", "knl", "knm", "lakemont", "lunarlake", "meteorlake",
    "mic_avx512", "nehalem", "nocona", "opteron", "opteron-sse3", "pantherlake", "penryn",
    "pentium", "pentium-m", "pentium-mmx", "pentium2", "pentium3", "pentium3m", "pentium4",
    "pentium4m", "pentium_4", "pentium_4_sse3", "pentium_ii", "pentium_iii",
    "pentium_iii_no_xmm_regs", "pentium_m", "pentium_mmx", "pentium_pro", "pentiumpro",
    "prescott", "raptorlake", "rocketlake", "sandybridge", "sapphirerapids", "sierraforest",
    "silvermont", "skx", "skylake", "skylake-avx512", "skylake_avx512", "slm", "tigerlake",
    "tremont", "westmere", "winchip-c6", "winchip2", "x86-64", "x86-64-v2", "x86-64-v3",
    "x86-64-v4", "yonah", "znver1", "znver2", "znver3", "znver4", "znver5", NULL};

/* CPUs with AVX-512F, and with AVX (256-bit vectors). */
static const char *const x86_avx512[] = {
    "cannonlake", "cascadelake", "cooperlake", "emeraldrapids", "graniterapids", "graniterapids-d",
    "graniterapids_d", "icelake-client", "icelake-server", "icelake_client", "icelake_server",
    "knl", "knm", "mic_avx512", "rocketlake", "sapphirerapids", "skx", "skylake-avx512",
    "skylake_avx512", "tigerlake", "x86-64-v4", "znver4", "znver5", NULL};
static const char *const x86_avx[] = {
    "alderlake", "arrowlake", "arrowlake-s", "arrowlake_s", "bdver1", "bdver2", "bdver3", "bdver4",
    "broadwell", "btver2", "clearwaterforest", "core-avx-i", "core-avx2", "core_2nd_gen_avx",
    "core_3rd_gen_avx", "core_4th_gen_avx", "core_4th_gen_avx_tsx", "core_5th_gen_avx",
    "core_5th_gen_avx_tsx", "corei7-avx", "gracemont", "grandridge", "haswell", "ivybridge",
    "lunarlake", "meteorlake", "pantherlake", "raptorlake", "sandybridge", "sierraforest",
    "skylake", "x86-64-v3", "znver1", "znver2", "znver3", NULL};

static int in_list(const char *const *list, const char *s) {
  for (; *list; list++)
    if (strcmp(*list, s) == 0) return 1;
  return 0;
}

/* Nonzero if the comma-separated |features| contain exactly |f| ("+avx2"). */
static int has_feature(const char *features, const char *f) {
  size_t n = strlen(f);
  for (const char *p = features; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && memcmp(p, f, n) == 0) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

static unsigned x86_vector_bits(const char *cpu, const char *features) {
  unsigned bits = in_list(x86_avx512, cpu) ? 512 : in_list(x86_avx, cpu) ? 256 : 128;
  if (has_feature(features, "-avx")) return 128;
  if (has_feature(features, "+avx512f")) return 512;
  if (has_feature(features, "-avx512f") && bits > 256) bits = 256;
  if ((has_feature(features, "+avx") || has_feature(features, "+avx2")) && bits < 256) bits = 256;
  return bits;
}

static const mlc_target_kind x86_64_kind = {"x86_64", x86_arches, x86_cpus, x86_vector_bits};

/* ---- aarch64 ------------------------------------------------------------ */

static const char *const a64_arches[] = {"aarch64", "arm64", NULL};

static const char *const a64_cpus[] = {
    "a64fx", "ampere1", "ampere1a", "ampere1b", "apple-a10", "apple-a11", "apple-a12",
    "apple-a13", "apple-a14", "apple-a15", "apple-a16", "apple-a17", "apple-a7", "apple-m4",
    "carmel", "cortex-a34", "cortex-a35", "cortex-a510", "cortex-a520", "cortex-a520ae",
    "cortex-a53", "cortex-a55", "cortex-a57", "cortex-a65", "cortex-a65ae", "cortex-a710",
    "cortex-a715", "cortex-a72", "cortex-a720", "cortex-a720ae", "cortex-a725", "cortex-a73",
    "cortex-a75", "cortex-a76", "cortex-a76ae", "cortex-a77", "cortex-a78", "cortex-a78ae",
    "cortex-a78c", "cortex-r82", "cortex-r82ae", "cortex-x1", "cortex-x1c", "cortex-x2",
    "cortex-x3", "cortex-x4", "cortex-x925", "exynos-m3", "exynos-m4", "exynos-m5", "falkor",
    "generic", "kryo", "neoverse-512tvb", "neoverse-e1", "neoverse-n1", "neoverse-n2",
    "neoverse-n3", "neoverse-v1", "neoverse-v2", "neoverse-v3", "neoverse-v3ae", "oryon-1",
    "saphira", "thunderx", "thunderx2t99", "thunderx3t110", "thunderxt81", "thunderxt83",
    "thunderxt88", "tsv110", NULL};

static unsigned a64_vector_bits(const char *cpu, const char *features) {
  (void)cpu;
  (void)features;
  return 128; /* NEON; SVE widths are left to LLVM */
}

static const mlc_target_kind aarch64_kind = {"aarch64", a64_arches, a64_cpus, a64_vector_bits};

const mlc_target_kind *const mlc_target_kinds[] = {&x86_64_kind, &aarch64_kind, NULL};

/* ---- construction -------------------------------------------------------- */

static const mlc_target_kind *kind_of_triple(const char *triple) {
  size_t n = strcspn(triple, "-");
  for (int i = 0; mlc_target_kinds[i]; i++)
    for (const char *const *a = mlc_target_kinds[i]->arches; *a; a++)
      if (strlen(*a) == n && memcmp(*a, triple, n) == 0) return mlc_target_kinds[i];
  return NULL;
}

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = mlc_mem_alloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void mlc_target_destroy(mlc_target *t) {
  if (!t) return;
  mlc_mem_free((char *)t->spec);
  mlc_mem_free((char *)t->triple);
  mlc_mem_free((char *)t->cpu);
  mlc_mem_free((char *)t->features);
  mlc_mem_free((char *)t->device_arch);
  mlc_mem_free(t);
}

static mlc_status make_target(const char *spec, const char *triple, const char *cpu, const char *features,
                              mlc_target **out) {
  const mlc_target_kind *k = kind_of_triple(triple);
  if (!k)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "target \"%s\": unsupported architecture in triple \"%s\"",
                           spec, triple);
  mlc_target *t = mlc_mem_calloc(1, sizeof *t);
  if (!t) return mlc_oom();
  t->name = "llvm";
  t->spec = dup(spec);
  t->triple = dup(triple);
  t->cpu = dup(cpu);
  t->features = dup(features);
  t->kind = k;
  if (!t->spec || !t->triple || !t->cpu || !t->features) {
    mlc_target_destroy(t);
    return mlc_oom();
  }
  t->vector_bits = k->vector_bits(cpu, features);
  *out = t;
  return NULL;
}

mlc_status mlc_target_host(mlc_target **out) {
  *out = NULL;
  char *tr = LLVMGetDefaultTargetTriple();
  char *triple = tr ? LLVMNormalizeTargetTriple(tr) : NULL;
  char *cpu = LLVMGetHostCPUName();
  char *feat = LLVMGetHostCPUFeatures();
  mlc_status st;
  if (!triple || !cpu || !feat) st = mlc_oom();
  else st = make_target("llvm", triple, cpu, feat, out);
  LLVMDisposeMessage(tr);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  return st;
}

/* Checks "+a,-b" syntax. */
static int valid_features(const char *f) {
  if (!*f) return 1;
  for (const char *p = f; *p;) {
    if (*p != '+' && *p != '-') return 0;
    p++;
    size_t n = strcspn(p, ",");
    if (n == 0) return 0;
    p += n;
    if (*p == ',') {
      p++;
      if (!*p) return 0;
    }
  }
  return 1;
}

static void suggest(mlc_strbuf *b, const char *const *cpus, const char *bad) {
  /* names sharing the first three letters, to help with typos */
  int n = 0;
  for (const char *const *c = cpus; *c; c++)
    if (strncmp(*c, bad, 3) == 0) {
      mlc_sb_printf(b, "%s%s", n++ ? ", " : "; did you mean one of: ", *c);
      if (n == 12) break;
    }
}

/* ---- CUDA ---------------------------------------------------------------- */

/* sm_75 (Turing) is the oldest architecture CUDA 13 supports. */
const char *const mlc_cuda_archs[] = {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", NULL};

/* "cuda [-arch=sm_XX]": the host for the launching code, PTX for the GPU. */
static mlc_status parse_cuda(const char *spec, mlc_target **out) {
  char *s = dup(spec);
  if (!s) return mlc_oom();
  const char *arch = mlc_cuda_archs[0];
  mlc_status st = NULL;
  int first = 1;
  for (char *save = NULL, *tok = strtok_r(s, " \t", &save); tok && !st; tok = strtok_r(NULL, " \t", &save)) {
    if (first) {
      first = 0;
      continue;
    }
    if (strncmp(tok, "-arch=", 6) == 0 && in_list(mlc_cuda_archs, tok + 6)) {
      arch = tok + 6;
    } else if (strncmp(tok, "-arch=", 6) == 0) {
      mlc_strbuf b = MLC_STRBUF_INIT;
      for (int i = 0; mlc_cuda_archs[i]; i++) mlc_sb_printf(&b, "%s%s", i ? ", " : "", mlc_cuda_archs[i]);
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "target \"%s\": unknown GPU architecture \"%s\" (known: %s)", spec,
                           tok + 6, mlc_sb_str(&b));
      mlc_sb_fini(&b);
    } else {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "target \"%s\": unknown option \"%s\" (expected -arch=sm_XX)", spec,
                           tok);
    }
  }
  mlc_target *t = NULL;
  if (!st) st = mlc_target_host(&t);
  if (!st) {
    char canon[64];
    snprintf(canon, sizeof canon, "cuda -arch=%s", arch);
    mlc_mem_free((char *)t->spec);
    t->spec = dup(canon);
    t->name = "cuda";
    t->device = MLC_TARGET_CUDA;
    t->device_arch = dup(arch);
    if (!t->spec || !t->device_arch) st = mlc_oom();
  }
  mlc_mem_free(s);
  if (st) {
    mlc_target_destroy(t);
    return st;
  }
  *out = t;
  return NULL;
}

mlc_status mlc_target_parse(const char *spec, mlc_target **out) {
  *out = NULL;
  if (!spec) return mlc_make_status(MLC_INVALID_ARGUMENT, "target: missing target string");
  char *s = dup(spec);
  if (!s) return mlc_oom();
  char *cpu = NULL, *attr = NULL, *triple = NULL;
  mlc_status st = NULL;
  int first = 1;
  for (char *save = NULL, *tok = strtok_r(s, " \t", &save); tok && !st; tok = strtok_r(NULL, " \t", &save)) {
    if (first) {
      first = 0;
      if (strcmp(tok, "llvm") == 0) continue;
      if (strcmp(tok, "cuda") == 0) {
        mlc_mem_free(s);
        return parse_cuda(spec, out);
      }
      st = mlc_make_status(MLC_INVALID_ARGUMENT,
                           "target \"%s\": unknown target kind \"%s\" (expected llvm or cuda)", spec, tok);
      break;
    }
    if (strncmp(tok, "-mcpu=", 6) == 0) cpu = tok + 6;
    else if (strncmp(tok, "-mattr=", 7) == 0) attr = tok + 7;
    else if (strncmp(tok, "-mtriple=", 9) == 0) triple = tok + 9;
    else
      st = mlc_make_status(MLC_INVALID_ARGUMENT,
                           "target \"%s\": unknown option \"%s\" (expected -mcpu=, -mattr= or -mtriple=)", spec, tok);
  }
  if (!st && first) st = mlc_make_status(MLC_INVALID_ARGUMENT, "target: empty target string");
  if (!st && cpu && !*cpu) st = mlc_make_status(MLC_INVALID_ARGUMENT, "target \"%s\": empty -mcpu=", spec);
  if (!st && triple && !*triple) st = mlc_make_status(MLC_INVALID_ARGUMENT, "target \"%s\": empty -mtriple=", spec);
  if (!st && attr && !valid_features(attr))
    st = mlc_make_status(MLC_INVALID_ARGUMENT,
                         "target \"%s\": bad -mattr=%s (expected +feature or -feature, comma-separated)", spec, attr);
  if (st) {
    mlc_mem_free(s);
    return st;
  }
  if (!cpu && !attr && !triple) {
    mlc_mem_free(s);
    return mlc_target_host(out);
  }
  mlc_target *host = NULL;
  st = mlc_target_host(&host);
  if (!st) {
    char *ntriple = triple ? LLVMNormalizeTargetTriple(triple) : NULL;
    const char *tr = ntriple ? ntriple : host->triple;
    const mlc_target_kind *k = kind_of_triple(tr);
    int native = !cpu || strcmp(cpu, "native") == 0;
    const char *c = native ? (triple && k != host->kind ? "generic" : host->cpu) : cpu;
    if (!k) {
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "target \"%s\": unsupported architecture in triple \"%s\"", spec, tr);
    } else if (!native && !in_list(k->cpus, c)) {
      mlc_strbuf b = MLC_STRBUF_INIT;
      suggest(&b, k->cpus, c);
      st = mlc_make_status(MLC_INVALID_ARGUMENT, "target \"%s\": unknown CPU \"%s\" for %s%s", spec, c, k->name,
                           mlc_sb_str(&b));
      mlc_sb_fini(&b);
    } else {
      /* host features only with the host CPU; -mattr adds to or removes from them */
      const char *base = (native && k == host->kind) ? host->features : "";
      mlc_strbuf f = MLC_STRBUF_INIT;
      mlc_sb_puts(&f, base);
      if (attr && *attr) mlc_sb_printf(&f, "%s%s", f.len ? "," : "", attr);
      mlc_strbuf canon = MLC_STRBUF_INIT;
      mlc_sb_puts(&canon, "llvm");
      if (triple) mlc_sb_printf(&canon, " -mtriple=%s", tr);
      if (cpu) mlc_sb_printf(&canon, " -mcpu=%s", cpu);
      if (attr) mlc_sb_printf(&canon, " -mattr=%s", attr);
      if (f.oom || canon.oom) st = mlc_oom();
      else st = make_target(mlc_sb_str(&canon), tr, c, mlc_sb_str(&f), out);
      mlc_sb_fini(&f);
      mlc_sb_fini(&canon);
    }
    LLVMDisposeMessage(ntriple);
  }
  mlc_target_destroy(host);
  mlc_mem_free(s);
  return st;
}

void mlc_target_describe(const mlc_target *t, mlc_strbuf *out) {
  if (t->device == MLC_TARGET_CUDA)
    mlc_sb_printf(out, "cuda -arch=%s (PTX), host ", t->device_arch);
  mlc_sb_printf(out, "llvm -mtriple=%s -mcpu=%s (%s, vector %u bits)", t->triple, t->cpu, t->kind->name,
                t->vector_bits);
}
