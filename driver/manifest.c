/*
** manifest.c: the manifest reader (jansson) and the JSON string writer
** inspect uses; see manifest.h.
**
** jansson parses (json_loadb with JSON_REJECT_DUPLICATES, without
** JSON_ALLOW_NUL: a manifest holds no NUL) and refuses control bytes in
** strings, invalid UTF-8 and more than its own fixed depth; this file
** adds the limit of MLC_MANIFEST_MAX_DEPTH levels (on the parsed tree),
** the root being an object, and messages that name the byte.
*/
#include "driver/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when |v| (at nesting level |depth|, the root 0) holds a container at
** level MLC_MANIFEST_MAX_DEPTH or deeper.  Recursion is bounded by
** jansson's own depth limit. */
static int too_deep(const json_t *v, int depth) {
  if (!json_is_object(v) && !json_is_array(v)) return 0;
  if (depth >= MLC_MANIFEST_MAX_DEPTH) return 1;
  if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++)
      if (too_deep(json_array_get(v, i), depth + 1)) return 1;
    return 0;
  }
  const char *key;
  json_t *item;
  json_object_foreach((json_t *)v, key, item) {
    if (too_deep(item, depth + 1)) return 1;
  }
  return 0;
}

/* Offset of the '[' or '{' that opens level MLC_MANIFEST_MAX_DEPTH in
** |text|, skipping strings; |len| when there is none.  Only called on text
** jansson read correctly up to that bracket. */
static size_t deep_offset(const char *text, size_t len) {
  int depth = 0, in_str = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_str) {
      if (c == '\\') i++;
      else if (c == '"') in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == '[' || c == '{') {
      if (depth == MLC_MANIFEST_MAX_DEPTH) return i;
      depth++;
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return len;
}

/* jansson's message, in printable ASCII: bytes of the input it quotes are
** shown as \xNN when they are not; its "unexpected newline" (a raw newline
** in a string) said as the control character it is. */
static mlc_status syntax_error(const json_error_t *e) {
  mlc_strbuf m = MLC_STRBUF_INIT;
  const char *t = e->text;
  if (strncmp(t, "unexpected newline", 18) == 0) {
    mlc_sb_puts(&m, "control character 0xa");
    t += 18;
  }
  for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
    if (*p < 0x20 || *p >= 0x7f) mlc_sb_printf(&m, "\\x%02x", *p);
    else mlc_sb_putc(&m, (char)*p);
  }
  mlc_status s = m.oom ? mlc_oom()
                       : mlc_make_status(MLC_INVALID_ARGUMENT, "invalid JSON at byte %d: %s",
                                         e->position, mlc_sb_str(&m));
  mlc_sb_fini(&m);
  return s;
}

mlc_status mlc_manifest_parse(const char *text, size_t len, json_t **out) {
  *out = NULL;
  json_error_t e;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
  if (!root) {
    switch (json_error_code(&e)) {
      case json_error_out_of_memory: return mlc_oom();
      case json_error_stack_overflow: break;
      default: return syntax_error(&e);
    }
  } else if (!json_is_object(root)) {
    json_decref(root);
    return mlc_make_status(MLC_INVALID_ARGUMENT, "invalid JSON at byte 0: the manifest is not an object");
  } else if (!too_deep(root, 0)) {
    *out = root;
    return NULL;
  }
  json_decref(root);
  return mlc_make_status(MLC_INVALID_ARGUMENT, "invalid JSON at byte %zu: at most %d levels of nesting",
                         deep_offset(text, len), MLC_MANIFEST_MAX_DEPTH);
}

void mlc_manifest_write(mlc_strbuf *b, const json_t *v, const char *skip) {
  if (!v) {
    mlc_sb_puts(b, "null");
    return;
  }
  json_t *shown = NULL;
  if (skip && json_is_object(v) && json_object_get(v, skip)) {
    /* a shallow copy without |skip|: the items are shared, not copied */
    shown = json_copy((json_t *)v);
    if (!shown || json_object_del(shown, skip) != 0) {
      json_decref(shown);
      b->oom = 1;
      return;
    }
    v = shown;
  }
  char *text = json_dumps(v, JSON_ENCODE_ANY);
  if (text) mlc_sb_puts(b, text);
  else b->oom = 1;
  free(text);
  json_decref(shown);
}

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

void mlc_json_write_bytes(mlc_strbuf *b, const char *s, size_t n) {
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
