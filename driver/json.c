/*
** json.c: the strict JSON reader and the escaping writer of json.h.
**
** A recursive-descent parser over a byte range: values nest at most
** MLC_JSON_MAX_DEPTH deep, so a hostile manifest cannot exhaust the stack;
** every node, string and array lives in one arena.  Strings are decoded
** (escapes, surrogate pairs); raw control bytes, \u0000, lone surrogates,
** leading zeros, trailing garbage and unterminated text are errors.  Bytes
** of 0x80 and above are taken as they are (the writer that produced the
** text may have copied a name that is not UTF-8); the writer escapes those
** that are not valid UTF-8.
*/
#include "driver/json.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"

struct mlc_json_doc {
  mlc_arena *arena;
  mlc_json *root;
};

typedef struct parser {
  const char *p, *end, *start;
  mlc_arena *ar;
  const char *err; /* what was expected, or NULL */
  size_t err_at;
} parser;

static int fail(parser *ps, const char *what) {
  if (!ps->err) {
    ps->err = what;
    ps->err_at = (size_t)(ps->p - ps->start);
  }
  return 0;
}

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static int hex4(parser *ps, unsigned *out) {
  if (ps->end - ps->p < 4) return fail(ps, "four hex digits after \\u");
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = *ps->p++;
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return fail(ps, "four hex digits after \\u");
  }
  *out = v;
  return 1;
}

/* Decodes the string at ps->p (at its opening quote) into the arena. */
static int parse_string(parser *ps, const char **out, size_t *out_len) {
  ps->p++; /* the quote */
  /* Decoded text is never longer than the escaped text. */
  const char *q = ps->p;
  while (q < ps->end && *q != '"') q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
  if (q >= ps->end) return fail(ps, "the end of a string");
  char *buf = mlc_arena_alloc(ps->ar, (size_t)(q - ps->p) + 1);
  if (!buf) return fail(ps, "memory");
  size_t n = 0;
  while (*ps->p != '"') {
    unsigned char c = (unsigned char)*ps->p;
    if (c < 0x20) return fail(ps, "no control character in a string");
    if (c != '\\') {
      buf[n++] = (char)c;
      ps->p++;
      continue;
    }
    ps->p++;
    char e = *ps->p++;
    unsigned u;
    switch (e) {
      case '"': buf[n++] = '"'; break;
      case '\\': buf[n++] = '\\'; break;
      case '/': buf[n++] = '/'; break;
      case 'b': buf[n++] = '\b'; break;
      case 'f': buf[n++] = '\f'; break;
      case 'n': buf[n++] = '\n'; break;
      case 'r': buf[n++] = '\r'; break;
      case 't': buf[n++] = '\t'; break;
      case 'u':
        if (!hex4(ps, &u)) return 0;
        if (u == 0) return fail(ps, "no \\u0000 in a string");
        if (u >= 0xdc00 && u <= 0xdfff) return fail(ps, "no lone low surrogate");
        if (u >= 0xd800 && u <= 0xdbff) {
          unsigned lo;
          if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
            return fail(ps, "a low surrogate after a high one");
          ps->p += 2;
          if (!hex4(ps, &lo)) return 0;
          if (lo < 0xdc00 || lo > 0xdfff) return fail(ps, "a low surrogate after a high one");
          u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        }
        /* \uXXXX takes 6 bytes of text and at most 3 decoded (a pair: 12, 4) */
        if (u < 0x80) {
          buf[n++] = (char)u;
        } else if (u < 0x800) {
          buf[n++] = (char)(0xc0 | (u >> 6));
          buf[n++] = (char)(0x80 | (u & 0x3f));
        } else if (u < 0x10000) {
          buf[n++] = (char)(0xe0 | (u >> 12));
          buf[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
          buf[n++] = (char)(0x80 | (u & 0x3f));
        } else {
          buf[n++] = (char)(0xf0 | (u >> 18));
          buf[n++] = (char)(0x80 | ((u >> 12) & 0x3f));
          buf[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
          buf[n++] = (char)(0x80 | (u & 0x3f));
        }
        break;
      default: ps->p--; return fail(ps, "a valid escape");
    }
  }
  ps->p++; /* the closing quote */
  buf[n] = 0;
  *out = buf;
  *out_len = n;
  return 1;
}

static int digits(parser *ps) {
  const char *s = ps->p;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
  return ps->p > s;
}

static int parse_number(parser *ps, mlc_json *v) {
  const char *s = ps->p;
  if (ps->p < ps->end && *ps->p == '-') ps->p++;
  if (ps->p < ps->end && *ps->p == '0') ps->p++;
  else if (!digits(ps)) return fail(ps, "a digit");
  if (ps->p < ps->end && *ps->p == '.') {
    ps->p++;
    if (!digits(ps)) return fail(ps, "a digit after '.'");
  }
  if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
    ps->p++;
    if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
    if (!digits(ps)) return fail(ps, "a digit in the exponent");
  }
  v->kind = MLC_JSON_NUMBER;
  v->text = mlc_arena_strndup(ps->ar, s, (size_t)(ps->p - s));
  return v->text ? 1 : fail(ps, "memory");
}

static int literal(parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return fail(ps, "a value");
  ps->p += n;
  return 1;
}

static mlc_json *parse_value(parser *ps, int depth);

/* Items of an array or object, collected in a growing list then copied. */
typedef struct item_list {
  mlc_json **v;
  const char **k;
  int n, cap;
} item_list;

static int push_item(parser *ps, item_list *l, const char *key, mlc_json *v) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    mlc_json **nv = mlc_arena_array(ps->ar, (size_t)cap, sizeof *nv);
    const char **nk = mlc_arena_array(ps->ar, (size_t)cap, sizeof *nk);
    if (!nv || !nk) return fail(ps, "memory");
    if (l->n) {
      memcpy(nv, l->v, (size_t)l->n * sizeof *nv);
      memcpy(nk, l->k, (size_t)l->n * sizeof *nk);
    }
    l->v = nv;
    l->k = nk;
    l->cap = cap;
  }
  l->v[l->n] = v;
  l->k[l->n] = key;
  l->n++;
  return 1;
}

static int parse_container(parser *ps, mlc_json *v, int depth) {
  int object = *ps->p == '{';
  char close = object ? '}' : ']';
  ps->p++;
  item_list l = {NULL, NULL, 0, 0};
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
  } else {
    for (;;) {
      const char *key = NULL;
      size_t klen;
      skip_ws(ps);
      if (object) {
        if (ps->p >= ps->end || *ps->p != '"') return fail(ps, "a key string");
        if (!parse_string(ps, &key, &klen)) return 0;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') return fail(ps, "':' after a key");
        ps->p++;
      }
      mlc_json *item = parse_value(ps, depth + 1);
      if (!item || !push_item(ps, &l, key, item)) return 0;
      skip_ws(ps);
      if (ps->p < ps->end && *ps->p == ',') {
        ps->p++;
        continue;
      }
      if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        break;
      }
      return fail(ps, object ? "',' or '}'" : "',' or ']'");
    }
  }
  v->kind = object ? MLC_JSON_OBJECT : MLC_JSON_ARRAY;
  v->n = l.n;
  v->items = l.v;
  v->keys = object ? l.k : NULL;
  return 1;
}

static mlc_json *parse_value(parser *ps, int depth) {
  skip_ws(ps);
  if (ps->p < ps->end && (*ps->p == '[' || *ps->p == '{') && depth >= MLC_JSON_MAX_DEPTH) {
    fail(ps, "at most 64 levels of nesting");
    return NULL;
  }
  if (ps->p >= ps->end) {
    fail(ps, "a value");
    return NULL;
  }
  mlc_json *v = mlc_arena_alloc(ps->ar, sizeof *v);
  if (!v) {
    fail(ps, "memory");
    return NULL;
  }
  int ok;
  switch (*ps->p) {
    case '{':
    case '[': ok = parse_container(ps, v, depth); break;
    case '"':
      v->kind = MLC_JSON_STRING;
      ok = parse_string(ps, &v->str, &v->len);
      break;
    case 't':
      v->kind = MLC_JSON_BOOL;
      v->boolean = 1;
      ok = literal(ps, "true");
      break;
    case 'f':
      v->kind = MLC_JSON_BOOL;
      ok = literal(ps, "false");
      break;
    case 'n':
      v->kind = MLC_JSON_NULL;
      ok = literal(ps, "null");
      break;
    default: ok = parse_number(ps, v); break;
  }
  return ok ? v : NULL;
}

mlc_status mlc_json_parse(const char *text, size_t len, mlc_json_doc **out) {
  *out = NULL;
  mlc_json_doc *d = mlc_mem_calloc(1, sizeof *d);
  if (!d || !(d->arena = mlc_arena_create(mlc_allocator_default()))) {
    mlc_mem_free(d);
    return mlc_oom();
  }
  parser ps = {text ? text : "", (text ? text : "") + (text ? len : 0), text ? text : "", d->arena, NULL, 0};
  d->root = parse_value(&ps, 0);
  if (d->root) {
    skip_ws(&ps);
    if (ps.p != ps.end) fail(&ps, "the end of the text");
  }
  if (ps.err) {
    int oom = strcmp(ps.err, "memory") == 0;
    mlc_status s = oom ? mlc_oom()
                       : mlc_make_status(MLC_INVALID_ARGUMENT, "invalid JSON at byte %zu: expected %s",
                                         ps.err_at, ps.err);
    mlc_json_free(d);
    return s;
  }
  *out = d;
  return NULL;
}

const mlc_json *mlc_json_root(const mlc_json_doc *d) { return d ? d->root : NULL; }

void mlc_json_free(mlc_json_doc *d) {
  if (!d) return;
  mlc_arena_destroy(d->arena);
  mlc_mem_free(d);
}

const mlc_json *mlc_json_get(const mlc_json *obj, const char *key) {
  if (!obj || obj->kind != MLC_JSON_OBJECT) return NULL;
  for (int i = obj->n; i-- > 0;)
    if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
  return NULL;
}

int mlc_json_int(const mlc_json *v, int64_t *out) {
  if (!v || v->kind != MLC_JSON_NUMBER || strpbrk(v->text, ".eE")) return 0;
  const char *t = v->text;
  int neg = *t == '-';
  if (neg) t++;
  uint64_t x = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; *t; t++) {
    uint64_t dgt = (uint64_t)(*t - '0');
    if (x > (lim - dgt) / 10) return 0;
    x = x * 10 + dgt;
  }
  *out = neg ? (int64_t)(0 - x) : (int64_t)x;
  return 1;
}

const char *mlc_json_str(const mlc_json *v) { return v && v->kind == MLC_JSON_STRING ? v->str : NULL; }

/* Length of the valid UTF-8 sequence at |s| (|n| bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t k;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) k = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) k = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) k = 4, min = 0x10000;
  else return 0;
  if (n < k) return 0;
  unsigned u = c & (0x7f >> k);
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    u = (u << 6) | (s[i] & 0x3f);
  }
  if (u < min || u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff)) return 0;
  return k;
}

void mlc_json_write_str(mlc_strbuf *b, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  if (!s) n = 0;
  mlc_sb_putc(b, '"');
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    size_t k = utf8_len(p + i, n - i);
    if (c == '"') mlc_sb_puts(b, "\\\"");
    else if (c == '\\') mlc_sb_puts(b, "\\\\");
    else if (c == '\n') mlc_sb_puts(b, "\\n");
    else if (c == '\r') mlc_sb_puts(b, "\\r");
    else if (c == '\t') mlc_sb_puts(b, "\\t");
    else if (c < 0x20 || c == 0x7f || k == 0) mlc_sb_printf(b, "\\u%04x", c);
    else {
      mlc_sb_putn(b, (const char *)p + i, k);
      i += k;
      continue;
    }
    i++;
  }
  mlc_sb_putc(b, '"');
}

void mlc_json_write(mlc_strbuf *b, const mlc_json *v, const char *skip) {
  if (!v) {
    mlc_sb_puts(b, "null");
    return;
  }
  switch (v->kind) {
    case MLC_JSON_NULL: mlc_sb_puts(b, "null"); return;
    case MLC_JSON_BOOL: mlc_sb_puts(b, v->boolean ? "true" : "false"); return;
    case MLC_JSON_NUMBER: mlc_sb_puts(b, v->text); return;
    case MLC_JSON_STRING: mlc_json_write_str(b, v->str, v->len); return;
    case MLC_JSON_ARRAY:
    case MLC_JSON_OBJECT: {
      int object = v->kind == MLC_JSON_OBJECT, first = 1;
      mlc_sb_putc(b, object ? '{' : '[');
      for (int i = 0; i < v->n; i++) {
        if (object && skip && strcmp(v->keys[i], skip) == 0) continue;
        if (!first) mlc_sb_puts(b, ", ");
        first = 0;
        if (object) {
          mlc_json_write_str(b, v->keys[i], strlen(v->keys[i]));
          mlc_sb_puts(b, ": ");
        }
        mlc_json_write(b, v->items[i], NULL);
      }
      mlc_sb_putc(b, object ? '}' : ']');
      return;
    }
  }
}
