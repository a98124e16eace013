/*
** fuzz_so.c: libFuzzer target for what the loader and `inspect model.so`
** read from a compiled model before anything of it runs: the ELF checks
** and the description blob (runtime/rt_so.h, runtime/rt_blob.h).
**
** An input that starts with the ELF magic is checked as a whole model.so
** (mlc_rt_so_check_mem, the check mlc_model_load makes before dlopen);
** any other input is decoded as a description blob alone
** (mlc_rt_desc_decode), so mutations reach the decoder without having to
** keep an ELF file valid.  A description that decodes is walked: every
** table entry and string it points to is read, so ASan reports one that
** points outside its copy.  Its manifest goes through the reader inspect
** uses (driver/manifest.h, jansson): refused with a message, or written
** back as JSON that reads again.
*/
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "driver/manifest.h"
#include "fuzz/fuzz.h"
#include "runtime/rt_blob.h"
#include "runtime/rt_so.h"

static size_t walk_str(const char *s) { return s ? strlen(s) : 0; }

static void walk(const mlc_rt_model_desc *d) {
  volatile size_t sink = walk_str(d->name) + walk_str(d->manifest);
  for (int32_t i = 0; i < d->nsyms; i++) sink += walk_str(d->sym_names[i]);
  for (int32_t i = 0; i < d->ntensors; i++) {
    const mlc_rt_tensor_desc *t = &d->tensors[i];
    for (int32_t k = 0; k < t->ndim; k++) sink += (size_t)t->dims[k];
  }
  for (int32_t i = 0; i < d->ninputs; i++) sink += walk_str(d->inputs[i].name);
  for (int32_t i = 0; i < d->noutputs; i++) sink += walk_str(d->outputs[i].name);
  for (int32_t i = 0; i < d->nsteps; i++) {
    const mlc_rt_step_desc *st = &d->steps[i];
    sink += walk_str(st->name) + walk_str(st->label);
    for (int32_t a = 0; a < st->nargs; a++) sink += (size_t)st->args[a].value;
  }
  for (int32_t i = 0; i < d->nexterns; i++) sink += walk_str(d->externs[i].name);
  for (int32_t i = 0; i < d->nkernels; i++) sink += walk_str(d->kernel_names[i]);
  (void)sink;
}

static void check_manifest(const char *text) {
  if (!text) return;
  json_t *doc = NULL;
  mlc_status s = mlc_manifest_parse(text, strlen(text), &doc);
  if (s) {
    if (doc || !*mlc_status_message(s)) __builtin_trap();
    mlc_status_free(s);
    return;
  }
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_manifest_write(&b, doc, "plan");
  json_t *again = NULL;
  s = b.oom ? NULL : mlc_manifest_parse(mlc_sb_str(&b), b.len, &again);
  if (s && mlc_status_code(s) != MLC_RESOURCE_EXHAUSTED) __builtin_trap();
  mlc_status_free(s);
  json_decref(again);
  mlc_sb_fini(&b);
  json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[512];
  err[0] = 0;
  mlc_rt_model_desc *d = NULL;
  mlc_rt_status st;
  if (size >= 4 && memcmp(data, "\177ELF", 4) == 0)
    st = mlc_rt_so_check_mem(NULL, data, size, &d, err, sizeof err);
  else
    st = mlc_rt_desc_decode(NULL, data, size, NULL, 0, NULL, &d, err, sizeof err);
  if (st != MLC_RT_OK) {
    /* A refusal leaves no description and always says why. */
    if (d || !err[0]) __builtin_trap();
    return 0;
  }
  if (!d) __builtin_trap();
  walk(d);
  check_manifest(d->manifest);
  mlc_rt_desc_free(d);
  return 0;
}
