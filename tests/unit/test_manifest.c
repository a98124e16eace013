/*
** test_manifest.c: how inspect reads a model's manifest (driver/manifest.h,
** jansson underneath): what it accepts and writes back, what it refuses
** (with the byte offset and a message in printable ASCII), nesting deeper
** than the limit, text cut anywhere, random edits of a real manifest, and
** the string writer for bytes that are not UTF-8.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "driver/manifest.h"
#include "tests/testutil.h"

static char *write_doc(const json_t *d) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_manifest_write(&b, d, NULL);
  char *out = b.oom ? NULL : strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return out;
}

/* Parses |text| and writes it back (skipping |skip|): the output, or NULL
** when parsing failed. */
static char *roundtrip(const char *text, const char *skip) {
  json_t *d = NULL;
  mlc_status s = mlc_manifest_parse(text, strlen(text), &d);
  if (s) {
    mlc_status_free(s);
    return NULL;
  }
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_manifest_write(&b, d, skip);
  json_decref(d);
  char *out = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return out;
}

/* |text| parsed and written again, or NULL when it does not parse. */
static char *rewrite(const char *text) { return roundtrip(text, NULL); }

static void expect_roundtrip(const char *text, const char *skip, const char *want) {
  char *got = roundtrip(text, skip);
  if (!got || strcmp(got, want) != 0) fprintf(stderr, "\n%s -> %s, want %s\n", text, got ? got : "(error)", want);
  CU_ASSERT(got && strcmp(got, want) == 0);
  free(got);
}

static void test_accepts(void) {
  expect_roundtrip(" {\"a\" :1,\"b\":[true,false,null,-5,\"x\"],\"c\":{}} ", NULL,
                   "{\"a\": 1, \"b\": [true, false, null, -5, \"x\"], \"c\": {}}");
  expect_roundtrip("{\"plan\": [1, 2], \"k\": \"v\"}", "plan", "{\"k\": \"v\"}");
  expect_roundtrip("{\"k\": [{\"plan\": 1}]}", "plan", "{\"k\": [{\"plan\": 1}]}"); /* only the top level */
  expect_roundtrip("{\"k\": 1}", "plan", "{\"k\": 1}");                                 /* nothing to skip */
  /* escapes decode; the writer escapes again, UTF-8 as it is */
  expect_roundtrip("{\"s\": \"q\\\" b\\\\ n\\n t\\t \\u00e9 \\ud83d\\ude00 \\/ \\u0001\"}", NULL,
                   "{\"s\": \"q\\\" b\\\\ n\\n t\\t \xc3\xa9 \xf0\x9f\x98\x80 / \\u0001\"}");
  json_t *d = NULL;
  const char *t = "{\"n\": 9223372036854775807, \"m\": -9223372036854775808, \"f\": 1.0, \"s\": \"x\"}";
  if (MLC_TEST_OK(mlc_manifest_parse(t, strlen(t), &d))) {
    CU_ASSERT(json_integer_value(json_object_get(d, "n")) == INT64_MAX);
    CU_ASSERT(json_integer_value(json_object_get(d, "m")) == INT64_MIN);
    CU_ASSERT(json_is_real(json_object_get(d, "f")));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(d, "s")), "x");
  }
  json_decref(d);
}

/* 1 when |m| holds only printable ASCII. */
static int printable(const char *m) {
  for (; *m; m++)
    if ((unsigned char)*m < 0x20 || (unsigned char)*m >= 0x7f) return 0;
  return 1;
}

static void expect_refused(const char *text, size_t len, const char *sub) {
  json_t *d = (json_t *)1;
  mlc_status s = mlc_manifest_parse(text, len, &d);
  if (s && !printable(mlc_status_message(s))) {
    fprintf(stderr, "\nnot printable: %s\n", mlc_status_message(s));
    CU_FAIL("message not printable ASCII");
  }
  MLC_TEST_ERR(s, MLC_INVALID_ARGUMENT, sub);
  CU_ASSERT_PTR_NULL(d);
}

static void test_refuses(void) {
  expect_refused("", 0, "invalid JSON at byte 0: ");
  expect_refused("{\"a\": 1,}", 9, "invalid JSON at byte ");
  expect_refused("{\"a\": [1 2]}", 12, "invalid JSON at byte 10: ']' expected");
  expect_refused("{\"a\": 1, \"a\": 2}", 16, "duplicate object key");
  expect_refused("{\"a\": \"x\x01y\"}", 12, "at byte 8: control character 0x1");
  expect_refused("{\"a\": \"x\ny\"}", 12, "at byte 8: control character 0xa");
  expect_refused("{\"a\": \"\\u0000\"}", 15, "\\u0000 is not allowed");
  expect_refused("{\"a\": \"\xff\"}", 10, "unable to decode byte 0xff");
  expect_refused("{\"a\": \"\\ud800\"}", 15, "invalid JSON at byte ");
  expect_refused("{} {}", 5, "end of file expected");
  expect_refused("{}\0", 3, "invalid JSON at byte "); /* a NUL after the value */
  expect_refused("[1]", 3, "at byte 0: the manifest is not an object");
  expect_refused("5", 1, "invalid JSON at byte ");
  /* a byte of the text that jansson quotes is shown as \xNN */
  expect_refused("{\"a\": \x01}", 8, "\\x01");
  /* nesting: 64 levels are fine, 65 are not (at the byte of the 65th
  ** bracket), and 100000 do not exhaust the stack */
  enum { DEEP = 100000 };
  char *deep = malloc(2 * DEEP + 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
  for (int n = 64; n <= 65; n++) {
    memset(deep, '{', 1); /* the root, then n - 1 arrays inside */
    memcpy(deep + 1, "\"a\": ", 5);
    memset(deep + 6, '[', (size_t)n - 1);
    memset(deep + 6 + n - 1, ']', (size_t)n - 1);
    deep[6 + 2 * (n - 1)] = '}';
    json_t *d = NULL;
    mlc_status s = mlc_manifest_parse(deep, 7 + 2 * (size_t)(n - 1), &d);
    CU_ASSERT(n == 64 ? s == NULL : s != NULL);
    if (s) CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "at byte 69: at most 64 levels"));
    mlc_status_free(s);
    json_decref(d);
  }
  memset(deep, '[', DEEP);
  memset(deep + DEEP, ']', DEEP);
  expect_refused(deep, 2 * DEEP, "invalid JSON at byte 64: at most 64 levels");
  deep[0] = '{';
  memcpy(deep + 1, "\"k\": ", 5);
  expect_refused(deep, 2 * DEEP, "invalid JSON at byte 69: at most 64 levels");
  free(deep);
  /* cut anywhere: an error, never a crash (the sanitizer build checks reads) */
  const char *doc = "{\"a\": [1, -2.5e3, \"x\\u00e9\\ud83d\\ude00\", {\"b\": null}], \"c\": true}";
  size_t n = strlen(doc);
  int bad = 0;
  for (size_t len = 0; len < n; len++) {
    char *cut = malloc(len + 1);
    memcpy(cut, doc, len); /* not NUL-terminated where it matters: |len| bytes */
    json_t *d = NULL;
    mlc_status s = mlc_manifest_parse(cut, len, &d);
    bad += s == NULL || strncmp(mlc_status_message(s), "invalid JSON at byte ", 21) != 0;
    mlc_status_free(s);
    json_decref(d);
    free(cut);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* The writer of strings inspect takes from the model description (not
** parsed JSON): escaped, and valid UTF-8 whatever the bytes. */
static void test_write_bytes(void) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_json_write_bytes(&b, "a\xff\xc3(\"\\\n\x01\x7f\xc3\xa9", 11);
  mlc_sb_putc(&b, ' ');
  mlc_json_write_bytes(&b, NULL, 5);
  mlc_sb_putc(&b, ' ');
  mlc_json_write_bytes(&b, "\xed\xa0\x80\xf4\x90\x80\x80", 7); /* a surrogate; past U+10FFFF */
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&b), "\"a\\u00ff\\u00c3(\\\"\\\\\\n\\u0001\\u007f\xc3\xa9\" \"\" "
                                          "\"\\u00ed\\u00a0\\u0080\\u00f4\\u0090\\u0080\\u0080\"");
  /* what it writes parses back */
  char *text = malloc(b.len + 16);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  snprintf(text, b.len + 16, "{\"s\": [%s]}", mlc_sb_str(&b));
  for (char *p = text; *p; p++)
    if (*p == ' ' && p[-1] == '"' && p[1] == '"') *p = ',';
  json_t *d = NULL;
  if (MLC_TEST_OK(mlc_manifest_parse(text, strlen(text), &d)))
    CU_ASSERT_EQUAL(json_array_size(json_object_get(d, "s")), 3);
  json_decref(d);
  free(text);
  mlc_sb_fini(&b);
}

/* A manifest as compile writes it, with odd node names. */
static const char manifest[] =
    "{\"compiler\": \"mlc-onnx 0.1.0\", \"model\": \"m.onnx\", \"arena_bytes\": 3072, "
    "\"intermediate_bytes\": 9216, \"steps\": 2, \"kernels\": [\"relu\", \"fused_add_exp\"], "
    "\"extern_calls\": [], \"plan\": [{\"kernel\": \"relu\", \"nodes\": [{\"name\": \"q\\\"uote\\n\", "
    "\"op_type\": \"Relu\"}]}, {\"kernel\": \"fused_add_exp\", \"nodes\": [{\"name\": \"caf\u00e9 \\u00ff\", "
    "\"op_type\": \"Add\"}, {\"name\": \"\\u0001\", \"op_type\": \"Exp\"}]}]}";

/* Thousands of random edits of a manifest (bytes replaced, inserted,
** deleted): each parses or is refused, never a crash or a leak (the
** sanitizer build checks), and what parses writes back as JSON that
** parses again, and writes the same from then on. */
static void test_mutations(void) {
  size_t n = sizeof manifest - 1;
  char *buf = malloc(n + 64);
  CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
  static const char alphabet[] = "{}[]\",:\\u0123456789abcdefe+-.tnfl \n\x01\x7f\xc3\xff";
  uint32_t seed = 99;
#define RNG() (seed = seed * 1664525u + 1013904223u, seed >> 8)
  int parsed = 0, bad = 0;
  for (int iter = 0; iter < 5000; iter++) {
    memcpy(buf, manifest, n);
    size_t len = n;
    for (int e = 0, ne = 1 + (int)(RNG() % 3); e < ne; e++) {
      size_t at = RNG() % len;
      char c = alphabet[RNG() % (sizeof alphabet - 1)];
      switch (RNG() % 3) {
        case 0: buf[at] = c; break;
        case 1: memmove(buf + at + 1, buf + at, len - at), buf[at] = c, len++; break;
        default: memmove(buf + at, buf + at + 1, len - at - 1), len--; break;
      }
    }
    json_t *d = NULL;
    mlc_status s = mlc_manifest_parse(buf, len, &d);
    if (s) {
      bad += mlc_status_code(s) != MLC_INVALID_ARGUMENT || !printable(mlc_status_message(s)) || d;
      mlc_status_free(s);
      continue;
    }
    parsed++;
    /* written, it parses; written again, it is the same */
    char *w1 = write_doc(d), *w2 = w1 ? rewrite(w1) : NULL, *w3 = w2 ? rewrite(w2) : NULL;
    if (!w3 || strcmp(w2, w3) != 0) {
      fprintf(stderr, "\n%.*s\n-> %s\n-> %s\n", (int)len, buf, w1 ? w1 : "?", w2 ? w2 : "(refused)");
      bad++;
    }
    free(w1);
    free(w2);
    free(w3);
    json_decref(d);
  }
#undef RNG
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(parsed > 100); /* some edits keep it valid (inside strings, digits) */
  free(buf);
}

static void register_suites(void) {
  static const CU_TestInfo tests[] = {{"accepts", test_accepts},         {"refuses", test_refuses},
                                      {"write_bytes", test_write_bytes}, {"mutations", test_mutations},
                                      CU_TEST_INFO_NULL};
  mlc_test_add_suite("manifest", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_manifest", fns);
}
