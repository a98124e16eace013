/*
** infer.c: the tensors of the Open Inference Protocol (KServe v2).
**
** A request is JSON:
**   {"id": "...", "parameters": {"binary_data_output": bool},
**    "inputs": [{"name", "datatype", "shape": [..], "data": [..] |
**                "parameters": {"binary_data_size": BYTES}}],
**    "outputs": [{"name", "parameters": {"binary_data": bool}}]}
** "data" is row-major, flat or nested.  With the binary tensor extension
** the body is that JSON (Inference-Header-Content-Length bytes) followed by
** the raw little-endian bytes of the inputs that give binary_data_size, in
** the order they are listed.  The answer has the same form:
**   {"model_name", "model_version": "1", "id", "outputs": [{"name",
**    "datatype", "shape", "data" | "parameters": {"binary_data_size"}}]}
**
** Everything in a request is checked against the model's signature before
** any memory is sized from it: a tensor's byte size is computed from its
** shape only after the data it brings has been counted, so a huge declared
** shape is a 400, never a huge allocation.
*/
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "serve/serve_int.h"

#ifndef DL_BOOL
#define DL_BOOL 6
#endif

#define MAX_RANK 8
/* Nesting of "data" arrays accepted (a tensor has at most MAX_RANK axes). */
#define MAX_NEST (MAX_RANK + 1)

static const struct {
  const char *name;
  uint8_t code, bits;
} dtypes[] = {
    {"BOOL", DL_BOOL, 8},   {"UINT8", kDLUInt, 8},  {"UINT16", kDLUInt, 16}, {"UINT32", kDLUInt, 32},
    {"UINT64", kDLUInt, 64}, {"INT8", kDLInt, 8},    {"INT16", kDLInt, 16},   {"INT32", kDLInt, 32},
    {"INT64", kDLInt, 64},  {"FP16", kDLFloat, 16}, {"FP32", kDLFloat, 32},  {"FP64", kDLFloat, 64},
    {"BF16", kDLBfloat, 16},
};

const char *srv_dtype_name(DLDataType t) {
  if (t.lanes != 1) return NULL;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].code == t.code && dtypes[i].bits == t.bits) return dtypes[i].name;
  return NULL;
}

/* ---- responses --------------------------------------------------------- */

void srv_response_error(srv_response *r, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  srv_response_verror(r, status, fmt, ap);
  va_end(ap);
}

void srv_response_verror(srv_response *r, int status, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  free(r->body);
  free(r->error);
  memset(r, 0, sizeof *r);
  r->status = status;
  r->error = strdup(msg);
  json_t *j = json_pack("{s:s}", "error", msg);
  r->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  if (!r->body) { /* out of memory (or a message that is not UTF-8) */
    r->body = strdup("{\"error\":\"out of memory\"}");
    if (r->status < 500) r->status = 500;
  }
  r->len = r->body ? strlen(r->body) : 0;
}

void srv_response_json(srv_response *r, int status, json_t *json) {
  char *text = json ? json_dumps(json, JSON_COMPACT) : NULL;
  json_decref(json);
  if (!text) {
    srv_response_error(r, 500, "out of memory building the answer");
    return;
  }
  free(r->body);
  free(r->error);
  memset(r, 0, sizeof *r);
  r->status = status;
  r->body = text;
  r->len = strlen(text);
}

/* ---- float16 / bfloat16 ------------------------------------------------ */

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: renormalize */
      int e = -1;
      do {
        e++;
        man <<= 1;
      } while (!(man & 1024));
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 1023) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Round to nearest even, overflow to infinity, NaN kept NaN. */
static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x47800000u) return (uint16_t)(sign | 0x7c00u); /* >= 65536: inf */
  if (ax < 0x38800000u) {                                   /* below the normal range */
    if (ax < 0x33000000u) return (uint16_t)sign;            /* < 2^-25: zero */
    uint32_t e = ax >> 23, man = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; /* to units of 2^-24 */
    uint32_t v = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (v & 1))) v++;
    return (uint16_t)(sign | v);
  }
  uint32_t v = ((ax >> 13) - (112u << 10)), rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1))) v++;
  return (uint16_t)(sign | v);
}

static float bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

/* ---- requests ---------------------------------------------------------- */

void srv_job_free(srv_job *job) {
  if (!job) return;
  if (job->inputs)
    for (int i = 0; i < job->ninputs; i++) free(job->inputs[i].t.data);
  free(job->inputs);
  free(job->outputs);
  free(job->id);
  free(job->resp.body);
  free(job->resp.error);
  free(job);
}

/* Counts the numbers (leaves) of a flat or nested "data" array; -1 past
** MAX_NEST levels. */
static long long count_leaves(const json_t *a, int depth) {
  if (!json_is_array(a)) return 1;
  if (depth >= MAX_NEST) return -1;
  long long n = 0;
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    long long k = count_leaves(v, depth + 1);
    if (k < 0) return -1;
    n += k;
  }
  return n;
}

typedef struct conv {
  DLDataType dt;
  char *out;
  size_t pos;
  const char *bad; /* why the first bad element is bad */
} conv;

static void put_elem(conv *c, const json_t *v) {
  size_t es = c->dt.bits / 8;
  char *dst = c->out + c->pos * es;
  c->pos++;
  if (c->bad) return;
  if (c->dt.code == DL_BOOL) {
    if (json_is_boolean(v)) *(uint8_t *)dst = json_is_true(v);
    else if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
      *(uint8_t *)dst = (uint8_t)json_integer_value(v);
    else c->bad = "BOOL data must be true or false";
    return;
  }
  if (c->dt.code == kDLFloat || c->dt.code == kDLBfloat) {
    if (!json_is_number(v)) {
      c->bad = "floating-point data must be numbers";
      return;
    }
    double d = json_number_value(v);
    if (c->dt.bits == 64) {
      memcpy(dst, &d, 8);
    } else {
      float f = (float)d;
      if (c->dt.bits == 32) memcpy(dst, &f, 4);
      else {
        uint16_t h = c->dt.code == kDLBfloat ? float_to_bf16(f) : float_to_half(f);
        memcpy(dst, &h, 2);
      }
    }
    return;
  }
  if (!json_is_integer(v)) {
    c->bad = "integer data must be whole numbers";
    return;
  }
  long long x = json_integer_value(v);
  int bits = c->dt.bits;
  if (c->dt.code == kDLInt) {
    long long lo = bits == 64 ? INT64_MIN : -(1LL << (bits - 1)), hi = bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1;
    if (x < lo || x > hi) {
      c->bad = "a value is out of the datatype's range";
      return;
    }
  } else if (x < 0 || (bits < 64 && (unsigned long long)x >> bits)) {
    c->bad = "a value is out of the datatype's range";
    return;
  }
  switch (bits) {
  case 8: { uint8_t u = (uint8_t)x; memcpy(dst, &u, 1); break; }
  case 16: { uint16_t u = (uint16_t)x; memcpy(dst, &u, 2); break; }
  case 32: { uint32_t u = (uint32_t)x; memcpy(dst, &u, 4); break; }
  default: { uint64_t u = (uint64_t)x; memcpy(dst, &u, 8); break; }
  }
}

static void put_all(conv *c, const json_t *a) {
  if (!json_is_array(a)) {
    put_elem(c, a);
    return;
  }
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) put_all(c, v);
}

static void *alloc_data(size_t nbytes) {
  size_t n = (nbytes + 63) & ~(size_t)63;
  return aligned_alloc(64, n ? n : 64);
}

static int get_bool_param(const json_t *obj, const char *key) {
  const json_t *p = json_object_get(obj, "parameters");
  const json_t *v = json_is_object(p) ? json_object_get(p, key) : NULL;
  return json_is_true(v);
}

#define BAD(...) do { srv_response_error(resp, 400, __VA_ARGS__); goto fail; } while (0)

srv_job *srv_infer_parse(const mlc_model *m, const char *body, size_t len, long long header_len,
                         srv_response *resp) {
  json_t *root = NULL;
  srv_job *job = calloc(1, sizeof *job);
  int nin = mlc_model_num_inputs(m), nout = mlc_model_num_outputs(m);
  char *given = calloc((size_t)(nin > 0 ? nin : 1), 1);
  if (!job || !given) {
    srv_response_error(resp, 500, "out of memory");
    goto fail;
  }
  job->ninputs = nin;
  job->inputs = calloc((size_t)(nin > 0 ? nin : 1), sizeof *job->inputs);
  if (!job->inputs) {
    srv_response_error(resp, 500, "out of memory");
    goto fail;
  }
  if (header_len < 0) BAD("Inference-Header-Content-Length is not a byte count");
  if ((unsigned long long)header_len > len)
    BAD("Inference-Header-Content-Length (%lld) is longer than the body (%zu bytes)", header_len, len);
  size_t jlen = header_len > 0 ? (size_t)header_len : len;
  json_error_t jerr;
  root = json_loadb(body, jlen, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) BAD("malformed JSON (line %d, column %d): %s", jerr.line, jerr.column, jerr.text);
  if (!json_is_object(root)) BAD("the request must be a JSON object");

  json_t *id = json_object_get(root, "id");
  if (id) {
    if (!json_is_string(id)) BAD("\"id\" must be a string");
    if (!(job->id = strdup(json_string_value(id)))) BAD("out of memory");
  }
  json_t *params = json_object_get(root, "parameters");
  if (params && !json_is_object(params)) BAD("\"parameters\" must be an object");
  job->all_binary = get_bool_param(root, "binary_data_output");

  json_t *inputs = json_object_get(root, "inputs");
  if (!json_is_array(inputs)) BAD("\"inputs\" must be an array of tensors");
  size_t off = jlen; /* where the next binary input starts */
  size_t k;
  json_t *in;
  json_array_foreach(inputs, k, in) {
    if (!json_is_object(in)) BAD("inputs[%zu] is not an object", k);
    json_t *jname = json_object_get(in, "name");
    if (!json_is_string(jname)) BAD("inputs[%zu] has no \"name\" string", k);
    const char *name = json_string_value(jname);
    int32_t idx = mlc_model_input_index(m, name);
    if (idx < 0) BAD("the model has no input \"%s\"", name);
    if (given[idx]) BAD("input \"%s\" is given twice", name);
    given[idx] = 1;
    DLDataType dt = mlc_model_input_dtype(m, idx);
    const char *want = srv_dtype_name(dt);
    if (!want) {
      srv_response_error(resp, 500, "input \"%s\" has a datatype this server cannot carry", name);
      goto fail;
    }
    json_t *jdt = json_object_get(in, "datatype");
    if (!json_is_string(jdt)) BAD("input \"%s\" has no \"datatype\" string", name);
    if (strcmp(json_string_value(jdt), want) != 0)
      BAD("input \"%s\": datatype %s, but the model takes %s", name, json_string_value(jdt), want);
    json_t *jshape = json_object_get(in, "shape");
    if (!json_is_array(jshape)) BAD("input \"%s\" has no \"shape\" array", name);
    int32_t rank = mlc_model_input_ndim(m, idx);
    if ((int32_t)json_array_size(jshape) != rank)
      BAD("input \"%s\": shape of rank %zu, but the model takes rank %d", name, json_array_size(jshape), (int)rank);
    if (rank > MAX_RANK) {
      srv_response_error(resp, 500, "input \"%s\" has more than %d dimensions", name, MAX_RANK);
      goto fail;
    }
    srv_tensor *t = &job->inputs[idx];
    t->index = idx;
    unsigned long long count = 1;
    int overflow = 0;
    for (int32_t d = 0; d < rank; d++) {
      json_t *v = json_array_get(jshape, (size_t)d);
      if (!json_is_integer(v) || json_integer_value(v) < 0)
        BAD("input \"%s\": shape[%d] is not a non-negative integer", name, (int)d);
      long long n = json_integer_value(v);
      int64_t want_d = mlc_model_input_dim(m, idx, d);
      if (want_d >= 0 && n != want_d)
        BAD("input \"%s\": shape[%d] is %lld, but the model takes %lld", name, (int)d, n, (long long)want_d);
      t->shape[d] = n;
      if (n && count > (1ULL << 62) / (unsigned long long)n) overflow = 1;
      else count *= (unsigned long long)n;
    }
    size_t es = dt.bits / 8;
    json_t *data = json_object_get(in, "data");
    json_t *ip = json_object_get(in, "parameters");
    json_t *bsize = json_is_object(ip) ? json_object_get(ip, "binary_data_size") : NULL;
    if (bsize) {
      if (data) BAD("input \"%s\" has both \"data\" and binary_data_size", name);
      if (header_len <= 0)
        BAD("input \"%s\" gives binary_data_size without an Inference-Header-Content-Length header", name);
      if (!json_is_integer(bsize) || json_integer_value(bsize) < 0)
        BAD("input \"%s\": binary_data_size is not a byte count", name);
      unsigned long long nb = (unsigned long long)json_integer_value(bsize);
      if (overflow || count > (unsigned long long)(len / es + 1) || nb != count * es)
        BAD("input \"%s\": binary_data_size %llu does not match its shape (%s)", name, nb,
            overflow ? "too large" : "expected shape x element size");
      if (nb > len - off)
        BAD("input \"%s\": its %llu bytes of binary data run past the end of the body (%zu left): truncated?",
            name, nb, len - off);
      if (!(t->t.data = alloc_data((size_t)nb))) {
        srv_response_error(resp, 500, "out of memory");
        goto fail;
      }
      memcpy(t->t.data, body + off, (size_t)nb);
      off += (size_t)nb;
    } else {
      if (!json_is_array(data)) BAD("input \"%s\" has no \"data\" array (nor binary_data_size)", name);
      long long leaves = count_leaves(data, 0);
      if (leaves < 0) BAD("input \"%s\": \"data\" is nested deeper than the tensor's rank", name);
      if (overflow || (unsigned long long)leaves != count)
        BAD("input \"%s\": \"data\" holds %lld values, its shape %s", name, leaves,
            overflow ? "is too large" : "asks for another count");
      if (!(t->t.data = alloc_data((size_t)count * es))) {
        srv_response_error(resp, 500, "out of memory");
        goto fail;
      }
      conv c = {dt, t->t.data, 0, NULL};
      put_all(&c, data);
      if (c.bad) BAD("input \"%s\": %s", name, c.bad);
    }
    t->t.device = (DLDevice){kDLCPU, 0};
    t->t.ndim = rank;
    t->t.dtype = dt;
    t->t.shape = t->shape;
  }
  for (int32_t i = 0; i < nin; i++)
    if (!given[i]) BAD("input \"%s\" is missing", mlc_model_input_name(m, i));
  if (header_len > 0 && off != len)
    BAD("%zu bytes of binary data are left over after the inputs that asked for them", len - off);

  json_t *outputs = json_object_get(root, "outputs");
  if (outputs) {
    if (!json_is_array(outputs)) BAD("\"outputs\" must be an array");
    size_t no = json_array_size(outputs);
    if (no > (size_t)nout) BAD("\"outputs\" asks for %zu outputs; the model has %d", no, (int)nout);
    job->outputs = calloc(no ? no : 1, sizeof *job->outputs);
    if (!job->outputs) BAD("out of memory");
    json_t *o;
    json_array_foreach(outputs, k, o) {
      json_t *jn = json_is_object(o) ? json_object_get(o, "name") : NULL;
      if (!json_is_string(jn)) BAD("outputs[%zu] has no \"name\" string", k);
      int32_t idx = mlc_model_output_index(m, json_string_value(jn));
      if (idx < 0) BAD("the model has no output \"%s\"", json_string_value(jn));
      for (size_t j = 0; j < k; j++)
        if (job->outputs[j].index == idx) BAD("output \"%s\" is asked for twice", json_string_value(jn));
      job->outputs[k].index = idx;
      job->outputs[k].binary = job->all_binary || get_bool_param(o, "binary_data");
    }
    job->noutputs = (int)no;
  }
  json_decref(root);
  free(given);
  return job;
fail:
  json_decref(root);
  free(given);
  srv_job_free(job);
  return NULL;
}

int srv_job_batchable(const srv_job *a, const srv_job *b) {
  if (a->ninputs != b->ninputs) return 0;
  for (int i = 0; i < a->ninputs; i++) {
    const DLTensor *x = &a->inputs[i].t, *y = &b->inputs[i].t;
    if (x->ndim != y->ndim || x->ndim < 1) return 0;
    for (int d = 1; d < x->ndim; d++)
      if (x->shape[d] != y->shape[d]) return 0;
  }
  return 1;
}

/* ---- running and answering --------------------------------------------- */

static int64_t numel(const DLTensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

/* The JSON value of element |i| of |t|; NULL (with *|why|) when it has none. */
static json_t *elem_json(const DLTensor *t, int64_t i, const char **why) {
  const char *p = (const char *)t->data + (size_t)i * (t->dtype.bits / 8);
  DLDataType dt = t->dtype;
  if (dt.code == DL_BOOL) return json_boolean(*(const uint8_t *)p != 0);
  if (dt.code == kDLFloat || dt.code == kDLBfloat) {
    double d;
    if (dt.bits == 64) memcpy(&d, p, 8);
    else if (dt.bits == 32) {
      float f;
      memcpy(&f, p, 4);
      d = f;
    } else {
      uint16_t h;
      memcpy(&h, p, 2);
      d = dt.code == kDLBfloat ? bf16_to_float(h) : half_to_float(h);
    }
    if (!isfinite(d)) {
      *why = "holds NaN or infinity, which JSON cannot carry: ask for it as binary data "
             "(\"parameters\": {\"binary_data\": true})";
      return NULL;
    }
    return json_real(d);
  }
  if (dt.code == kDLInt) {
    switch (dt.bits) {
    case 8: { int8_t v; memcpy(&v, p, 1); return json_integer(v); }
    case 16: { int16_t v; memcpy(&v, p, 2); return json_integer(v); }
    case 32: { int32_t v; memcpy(&v, p, 4); return json_integer(v); }
    default: { int64_t v; memcpy(&v, p, 8); return json_integer(v); }
    }
  }
  switch (dt.bits) {
  case 8: return json_integer(*(const uint8_t *)p);
  case 16: { uint16_t v; memcpy(&v, p, 2); return json_integer(v); }
  case 32: { uint32_t v; memcpy(&v, p, 4); return json_integer(v); }
  default: {
    uint64_t v;
    memcpy(&v, p, 8);
    if (v > INT64_MAX) {
      *why = "holds a UINT64 value above 2^63-1, which JSON numbers here cannot carry: ask for it as binary data";
      return NULL;
    }
    return json_integer((json_int_t)v);
  }
  }
}

/* Builds |job|'s answer from |outs| (one view per model output). */
static void answer(srv_job *job, const mlc_model *m, const char *name, const DLTensor *outs) {
  srv_response *r = &job->resp;
  int nout = mlc_model_num_outputs(m);
  int n = job->noutputs ? job->noutputs : nout;
  json_t *root = json_pack("{s:s,s:s}", "model_name", name, "model_version", "1");
  json_t *arr = json_array();
  size_t binbytes = 0;
  int prec = 9;
  if (!root || !arr || json_object_set_new(root, "outputs", arr)) goto oom;
  if (job->id && json_object_set_new(root, "id", json_string(job->id))) goto oom;
  for (int k = 0; k < n; k++) {
    int idx = job->noutputs ? job->outputs[k].index : k;
    int binary = job->noutputs ? job->outputs[k].binary : job->all_binary;
    const DLTensor *t = &outs[idx];
    const char *dtn = srv_dtype_name(t->dtype);
    if (!dtn) {
      srv_response_error(r, 500, "output \"%s\" has a datatype this server cannot carry",
                         mlc_model_output_name(m, idx));
      json_decref(root);
      return;
    }
    json_t *o = json_pack("{s:s,s:s}", "name", mlc_model_output_name(m, idx), "datatype", dtn);
    json_t *shape = json_array();
    if (!o || !shape || json_array_append_new(arr, o) || json_object_set_new(o, "shape", shape)) goto oom;
    for (int d = 0; d < t->ndim; d++)
      if (json_array_append_new(shape, json_integer(t->shape[d]))) goto oom;
    int64_t cnt = numel(t);
    if (binary) {
      size_t nb = (size_t)cnt * (t->dtype.bits / 8);
      if (json_object_set_new(o, "parameters", json_pack("{s:I}", "binary_data_size", (json_int_t)nb))) goto oom;
      binbytes += nb;
      continue;
    }
    if (t->dtype.code == kDLFloat && t->dtype.bits == 64) prec = 17;
    json_t *data = json_array();
    if (!data || json_object_set_new(o, "data", data)) goto oom;
    for (int64_t i = 0; i < cnt; i++) {
      const char *why = NULL;
      json_t *v = elem_json(t, i, &why);
      if (!v && why) {
        srv_response_error(r, 500, "output \"%s\" %s", mlc_model_output_name(m, idx), why);
        json_decref(root);
        return;
      }
      if (json_array_append_new(data, v)) goto oom;
    }
  }
  char *head = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(prec));
  json_decref(root);
  root = NULL;
  if (!head) goto oom;
  size_t hl = strlen(head);
  if (!binbytes) {
    free(r->body);
    free(r->error);
    memset(r, 0, sizeof *r);
    r->status = 200;
    r->body = head;
    r->len = hl;
    return;
  }
  char *buf = malloc(hl + binbytes);
  if (!buf) {
    free(head);
    goto oom;
  }
  memcpy(buf, head, hl);
  free(head);
  size_t off = hl;
  for (int k = 0; k < n; k++) {
    int idx = job->noutputs ? job->outputs[k].index : k;
    int binary = job->noutputs ? job->outputs[k].binary : job->all_binary;
    if (!binary) continue;
    size_t nb = (size_t)numel(&outs[idx]) * (outs[idx].dtype.bits / 8);
    if (nb) memcpy(buf + off, outs[idx].data, nb);
    off += nb;
  }
  free(r->body);
  free(r->error);
  memset(r, 0, sizeof *r);
  r->status = 200;
  r->body = buf;
  r->len = off;
  r->header_len = hl;
  return;
oom:
  json_decref(root);
  srv_response_error(r, 500, "out of memory building the answer");
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fail_all(srv_job **jobs, int n, int status, const char *msg) {
  for (int j = 0; j < n; j++) srv_response_error(&jobs[j]->resp, status, "%s", msg);
}

void srv_infer_run(const mlc_model *m, mlc_session *s, const char *name, srv_job **jobs, int n,
                   srv_metrics *metrics) {
  int nin = mlc_model_num_inputs(m), nout = mlc_model_num_outputs(m);
  void **joined = NULL;
  DLTensor *views = calloc((size_t)(nout > 0 ? nout : 1), sizeof *views);
  int64_t *vshapes = calloc((size_t)(nout > 0 ? nout : 1) * MAX_RANK, sizeof *vshapes);
  char msg[1200];
  if (!views || !vshapes) {
    fail_all(jobs, n, 500, "out of memory");
    goto done;
  }
  if (n > 1 && !(joined = calloc((size_t)(nin > 0 ? nin : 1), sizeof *joined))) {
    fail_all(jobs, n, 500, "out of memory");
    goto done;
  }
  /* Bind the inputs: a job's own tensors, or the jobs' rows one after the other. */
  for (int i = 0; i < nin; i++) {
    DLTensor t = jobs[0]->inputs[i].t;
    int64_t shape[MAX_RANK];
    if (n > 1) {
      memcpy(shape, t.shape, sizeof(int64_t) * (size_t)t.ndim);
      size_t row = (size_t)(t.shape[0] ? numel(&t) / t.shape[0] : 0) * (t.dtype.bits / 8), off = 0;
      int64_t rows = 0;
      for (int j = 0; j < n; j++) rows += jobs[j]->inputs[i].t.shape[0];
      shape[0] = rows;
      if (!(joined[i] = alloc_data((size_t)rows * row))) {
        fail_all(jobs, n, 500, "out of memory");
        goto done;
      }
      for (int j = 0; j < n; j++) {
        size_t nb = (size_t)jobs[j]->inputs[i].t.shape[0] * row;
        if (nb) memcpy((char *)joined[i] + off, jobs[j]->inputs[i].t.data, nb);
        off += nb;
      }
      t.data = joined[i];
      t.shape = shape;
    }
    mlc_rt_status st = mlc_session_set_input(s, i, &t);
    if (st != MLC_RT_OK) {
      snprintf(msg, sizeof msg, "%s", mlc_session_last_error(s));
      fail_all(jobs, n, st == MLC_RT_INVALID_ARGUMENT ? 400 : 500, msg);
      goto done;
    }
  }
  double t0 = now_s();
  mlc_rt_status st = mlc_session_run(s);
  if (metrics) srv_metrics_infer(metrics, n, now_s() - t0);
  if (st != MLC_RT_OK) {
    snprintf(msg, sizeof msg, "%s", mlc_session_last_error(s));
    fail_all(jobs, n, st == MLC_RT_INVALID_ARGUMENT ? 400 : 500, msg);
    goto done;
  }
  const DLTensor *outs[64];
  const DLTensor **op = nout <= 64 ? outs : calloc((size_t)nout, sizeof *op);
  if (!op) {
    fail_all(jobs, n, 500, "out of memory");
    goto done;
  }
  for (int k = 0; k < nout; k++) {
    if (mlc_session_get_output(s, k, &op[k]) != MLC_RT_OK) {
      snprintf(msg, sizeof msg, "%s", mlc_session_last_error(s));
      fail_all(jobs, n, 500, msg);
      if (op != outs) free(op);
      goto done;
    }
    if (op[k]->ndim > MAX_RANK) {
      fail_all(jobs, n, 500, "an output has more dimensions than this server carries");
      if (op != outs) free(op);
      goto done;
    }
  }
  /* Each job's answer reads its own rows of every output. */
  int64_t row0 = 0;
  for (int j = 0; j < n; j++) {
    int64_t rows = jobs[j]->inputs[0].t.shape[0];
    int ok = 1;
    for (int k = 0; k < nout; k++) {
      views[k] = *op[k];
      if (n > 1) {
        int64_t total = 0;
        for (int q = 0; q < n; q++) total += jobs[q]->inputs[0].t.shape[0];
        if (op[k]->ndim < 1 || op[k]->shape[0] != total) {
          ok = 0;
          break;
        }
        int64_t *sh = vshapes + k * MAX_RANK;
        memcpy(sh, op[k]->shape, sizeof(int64_t) * (size_t)op[k]->ndim);
        sh[0] = rows;
        size_t row = (size_t)(total ? numel(op[k]) / total : 0) * (op[k]->dtype.bits / 8);
        views[k].data = (char *)op[k]->data + (size_t)row0 * row;
        views[k].shape = sh;
      }
    }
    if (ok) answer(jobs[j], m, name, views);
    else srv_response_error(&jobs[j]->resp, 500, "batched run: an output's first dimension is not the batch");
    row0 += rows;
  }
  if (op != outs) free(op);
done:
  if (joined)
    for (int i = 0; i < nin; i++) free(joined[i]);
  free(joined);
  free(views);
  free(vshapes);
}

/* ---- metadata ---------------------------------------------------------- */

static json_t *tensor_meta(const char *name, DLDataType dt, int32_t rank, const mlc_model *m, int32_t i,
                           int output) {
  const char *dtn = srv_dtype_name(dt);
  json_t *o = json_pack("{s:s,s:s}", "name", name ? name : "", "datatype", dtn ? dtn : "UNKNOWN");
  json_t *shape = json_array();
  if (!o || !shape || json_object_set_new(o, "shape", shape)) {
    json_decref(o);
    return NULL;
  }
  for (int32_t d = 0; d < rank; d++) {
    int64_t n = output ? mlc_model_output_dim(m, i, d) : mlc_model_input_dim(m, i, d);
    json_array_append_new(shape, json_integer(n >= 0 ? n : -1));
  }
  return o;
}

json_t *srv_model_metadata(const mlc_model *m, const char *name) {
  json_t *root = json_pack("{s:s,s:[s],s:s}", "name", name, "versions", "1", "platform", "mlc-onnx");
  json_t *ins = json_array(), *outs = json_array();
  if (!root || !ins || !outs || json_object_set_new(root, "inputs", ins) || json_object_set_new(root, "outputs", outs)) {
    json_decref(root);
    return NULL;
  }
  for (int32_t i = 0; i < mlc_model_num_inputs(m); i++)
    json_array_append_new(ins, tensor_meta(mlc_model_input_name(m, i), mlc_model_input_dtype(m, i),
                                           mlc_model_input_ndim(m, i), m, i, 0));
  for (int32_t i = 0; i < mlc_model_num_outputs(m); i++)
    json_array_append_new(outs, tensor_meta(mlc_model_output_name(m, i), mlc_model_output_dtype(m, i),
                                            mlc_model_output_ndim(m, i), m, i, 1));
  return root;
}
