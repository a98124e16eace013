/*
** plugin.c: the plugin libraries a model's external steps name
** (mlc/mlc_extern.h), found and resolved when the model is opened.
**
** A plugin is named in the description by its file name only (the decoder
** refuses a '/').  It is looked for, in order: already loaded in the
** process (the model was linked against it, or the program loaded it), in
** each directory of MLC_EXTERN_LIB_PATH (colon-separated), and in the
** directory of the model.so itself.  Its table (mlc_extern_plugin_v1) is
** checked, and each extern of the model that names the plugin is resolved
** to the function registered under its name.  Failures are load errors
** that name the model, the plugin, the places tried and the function.
*/
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

#define MODEL_NAME(d) ((d)->name ? (d)->name : "?")

/* dlopen of |dir|/|file|; NULL when |dir| is empty or the path too long. */
static void *open_in(const char *dir, size_t dirlen, const char *file) {
  char path[4096];
  if (dirlen == 0 || dirlen + strlen(file) + 2 > sizeof path) return NULL;
  memcpy(path, dir, dirlen);
  path[dirlen] = '/';
  strcpy(path + dirlen + 1, file);
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* The plugin |file|: a handle, or NULL with the places tried in |tried|. */
static void *find_plugin(const char *file, char *tried, size_t triedlen) {
  void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (h) return h;
  snprintf(tried, triedlen, "not loaded in the process");
  const char *path = getenv("MLC_EXTERN_LIB_PATH");
  if (path && *path) {
    size_t n = strlen(tried);
    snprintf(tried + n, triedlen - n, ", not in MLC_EXTERN_LIB_PATH (%s)", path);
    for (const char *p = path; *p;) {
      const char *e = strchr(p, ':');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      if ((h = open_in(p, len, file))) return h;
      p += len;
      if (*p == ':') p++;
    }
  } else {
    size_t n = strlen(tried);
    snprintf(tried + n, triedlen - n, ", MLC_EXTERN_LIB_PATH not set");
  }
  Dl_info info;
  if (dladdr((void *)&mlc_rt_plugins_load, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    size_t len = slash ? (size_t)(slash - info.dli_fname) : 0;
    if (slash && len == 0) len = 1; /* the root directory */
    if ((h = open_in(slash ? info.dli_fname : ".", slash ? len : 1, file))) return h;
    size_t n = strlen(tried);
    snprintf(tried + n, triedlen - n, ", not next to the model (%.*s)", (int)(slash ? len : 1),
             slash ? info.dli_fname : ".");
  }
  return NULL;
}

mlc_rt_status mlc_rt_plugins_load(const mlc_rt_model_desc *d, void **handles, mlc_kernel_fn *fns, char *err,
                                  size_t errlen) {
  for (int32_t p = 0; p < d->nplugins; p++) {
    const char *file = d->plugins[p];
    const char *first = "?";
    for (int32_t i = 0; i < d->nexterns; i++)
      if (d->externs[i].plugin && !strcmp(d->externs[i].plugin, file)) {
        first = d->externs[i].name;
        break;
      }
    char tried[1024];
    void *h = find_plugin(file, tried, sizeof tried);
    if (!h) {
      const char *why = dlerror();
      return mlc_rt_errorf(err, errlen, MLC_RT_NOT_FOUND,
                           "model \"%s\": plugin %s (for %s) cannot be loaded: %s%s%s", MODEL_NAME(d), file,
                           first, tried, why ? "; last error: " : "", why ? why : "");
    }
    handles[p] = h;
    void *sym = dlsym(h, MLC_EXTERN_PLUGIN_SYMBOL);
    mlc_extern_plugin_entry entry = NULL;
    memcpy(&entry, &sym, sizeof entry);
    const mlc_extern_plugin *t = entry ? entry() : NULL;
    if (!t || t->abi != MLC_EXTERN_PLUGIN_ABI || t->nfns < 0 || (t->nfns > 0 && !t->fns))
      return mlc_rt_errorf(err, errlen, MLC_RT_INVALID_ARGUMENT,
                           "model \"%s\": plugin %s: %s", MODEL_NAME(d), file,
                           !entry ? "no " MLC_EXTERN_PLUGIN_SYMBOL
                           : !t   ? MLC_EXTERN_PLUGIN_SYMBOL " returned NULL"
                                  : "its table has another ABI or a bad function count");
    for (int32_t i = 0; i < d->nexterns; i++) {
      if (!d->externs[i].plugin || strcmp(d->externs[i].plugin, file)) continue;
      fns[i] = NULL;
      for (int32_t k = 0; k < t->nfns && !fns[i]; k++)
        if (t->fns[k].name && t->fns[k].fn && !strcmp(t->fns[k].name, d->externs[i].name)) fns[i] = t->fns[k].fn;
      if (!fns[i])
        return mlc_rt_errorf(err, errlen, MLC_RT_NOT_FOUND, "model \"%s\": plugin %s has no function %s",
                             MODEL_NAME(d), file, d->externs[i].name);
    }
  }
  return MLC_RT_OK;
}

void mlc_rt_plugins_close(void **handles, int32_t n) {
  for (int32_t i = 0; handles && i < n; i++)
    if (handles[i]) dlclose(handles[i]);
}
