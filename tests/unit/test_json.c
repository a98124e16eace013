/*
** test_json.c: the JSON reader and writer inspect uses on a model's
** manifest (driver/json.h): what it accepts, decodes and writes back, and
** what it refuses (with the byte offset), including nesting deeper than
** the limit and text cut anywhere.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "driver/json.h"
#include "tests/testutil.h"

/* Parses |text| and writes it back (skipping |skip|): the output, or NULL
** when parsing failed. */
static char *roundtrip(const char *text, const char *skip) {
  mlc_json_doc *d = NULL;
  mlc_status s = mlc_json_parse(text, strlen(text), &d);
  if (s) {
    mlc_status_free(s);
    return NULL;
  }
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_json_write(&b, mlc_json_root(d), skip);
  mlc_json_free(d);
  char *out = strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return out;
}

static void expect_roundtrip(const char *text, const char *skip, const char *want) {
  char *got = roundtrip(text, skip);
  if (!got || strcmp(got, want) != 0) fprintf(stderr, "\n%s -> %s, want %s\n", text, got ? got : "(error)", want);
  CU_ASSERT(got && strcmp(got, want) == 0);
  free(got);
}

static void test_accepts(void) {
  expect_roundtrip(" {\"a\" :1,\"b\":[true,false,null,-0.5e+3,\"x\"],\"c\":{}} ", NULL,
                   "{\"a\": 1, \"b\": [true, false, null, -0.5e+3, \"x\"], \"c\": {}}");
  expect_roundtrip("{\"plan\": [1, 2], \"k\": \"v\"}", "plan", "{\"k\": \"v\"}");
  expect_roundtrip("[{\"plan\": 1}]", "plan", "[{\"plan\": 1}]"); /* only the top level */
  /* escapes decode; the writer escapes again */
  expect_roundtrip("\"q\\\" b\\\\ n\\n t\\t \\u00e9 \\ud83d\\ude00 \\/\"", NULL,
                   "\"q\\\" b\\\\ n\\n t\\t \xc3\xa9 \xf0\x9f\x98\x80 /\"");
  /* bytes that are not UTF-8 come out as \u00XX: the output is valid UTF-8 */
  expect_roundtrip("\"a\xff\xc3(\"", NULL, "\"a\\u00ff\\u00c3(\"");
  mlc_json_doc *d = NULL;
  const char *t = "{\"n\": 9223372036854775807, \"m\": -9223372036854775808, \"big\": 9223372036854775808, "
                  "\"f\": 1.0, \"s\": \"x\", \"s\": \"y\"}";
  if (MLC_TEST_OK(mlc_json_parse(t, strlen(t), &d))) {
    const mlc_json *r = mlc_json_root(d);
    int64_t v = 0;
    CU_ASSERT(mlc_json_int(mlc_json_get(r, "n"), &v) && v == INT64_MAX);
    CU_ASSERT(mlc_json_int(mlc_json_get(r, "m"), &v) && v == INT64_MIN);
    CU_ASSERT(!mlc_json_int(mlc_json_get(r, "big"), &v));
    CU_ASSERT(!mlc_json_int(mlc_json_get(r, "f"), &v));
    CU_ASSERT(!mlc_json_int(mlc_json_get(r, "s"), &v));
    CU_ASSERT(!mlc_json_int(mlc_json_get(r, "absent"), &v));
    CU_ASSERT_STRING_EQUAL(mlc_json_str(mlc_json_get(r, "s")), "y"); /* the last one */
    CU_ASSERT_PTR_NULL(mlc_json_str(mlc_json_get(r, "n")));
    CU_ASSERT_PTR_NULL(mlc_json_get(mlc_json_get(r, "s"), "x")); /* not an object */
  }
  mlc_json_free(d);
}

static void expect_refused(const char *text, size_t len, const char *sub) {
  mlc_json_doc *d = (mlc_json_doc *)1;
  MLC_TEST_ERR(mlc_json_parse(text, len, &d), MLC_INVALID_ARGUMENT, sub);
  CU_ASSERT_PTR_NULL(d);
}

static void test_refuses(void) {
  expect_refused("", 0, "byte 0: expected a value");
  expect_refused("{\"a\": 1,}", 9, "byte 8: expected a key string");
  expect_refused("[1 2]", 5, "byte 3: expected ',' or ']'");
  expect_refused("{\"a\" 1}", 7, "':' after a key");
  expect_refused("01", 2, "the end of the text");
  expect_refused("1.", 2, "a digit after '.'");
  expect_refused("-", 1, "a digit");
  expect_refused("tru", 3, "a value");
  expect_refused("\"abc", 4, "the end of a string");
  expect_refused("\"a\nb\"", 5, "no control character");
  expect_refused("\"\\u0000\"", 8, "\\u0000");
  expect_refused("\"\\ud800\"", 8, "low surrogate");
  expect_refused("\"\\udc00\"", 8, "lone low surrogate");
  expect_refused("\"\\x41\"", 6, "a valid escape");
  expect_refused("\"\\u12G4\"", 8, "four hex digits");
  expect_refused("{} {}", 5, "the end of the text");
  expect_refused("[1]\0", 4, "the end of the text"); /* a NUL after the value */
  /* nesting: 64 levels are fine, 65 are not, and 100000 do not exhaust the stack */
  enum { DEEP = 100000 };
  char *deep = malloc(2 * DEEP + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
  for (int n = 64; n <= 65; n++) {
    memset(deep, '[', (size_t)n);
    memset(deep + n, ']', (size_t)n);
    mlc_json_doc *d = NULL;
    mlc_status s = mlc_json_parse(deep, 2 * (size_t)n, &d);
    CU_ASSERT(n == 64 ? s == NULL : s != NULL);
    if (s) CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_message(s), "at most 64 levels"));
    mlc_status_free(s);
    mlc_json_free(d);
  }
  memset(deep, '[', DEEP);
  memset(deep + DEEP, ']', DEEP);
  expect_refused(deep, 2 * DEEP, "at most 64 levels");
  free(deep);
  /* cut anywhere: an error, never a crash (the sanitizer build checks reads) */
  const char *doc = "{\"a\": [1, -2.5e3, \"x\\u00e9\\ud83d\\ude00\", {\"b\": null}], \"c\": true}";
  size_t n = strlen(doc);
  int bad = 0;
  for (size_t len = 0; len < n; len++) {
    char *cut = malloc(len + 1);
    memcpy(cut, doc, len); /* not NUL-terminated where it matters: |len| bytes */
    mlc_json_doc *d = NULL;
    mlc_status s = mlc_json_parse(cut, len, &d);
    bad += s == NULL;
    mlc_status_free(s);
    mlc_json_free(d);
    free(cut);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* A manifest as compile writes it, with odd node names. */
static const char manifest[] =
    "{\"compiler\": \"mlc-onnx 0.1.0\", \"model\": \"m.onnx\", \"arena_bytes\": 3072, "
    "\"intermediate_bytes\": 9216, \"steps\": 2, \"kernels\": [\"relu\", \"fused_add_exp\"], "
    "\"extern_calls\": [], \"plan\": [{\"kernel\": \"relu\", \"nodes\": [{\"name\": \"q\\\"uote\\n\", "
    "\"op_type\": \"Relu\"}]}, {\"kernel\": \"fused_add_exp\", \"nodes\": [{\"name\": \"caf\u00e9 \xff\", "
    "\"op_type\": \"Add\"}, {\"name\": \"\\u0001\", \"op_type\": \"Exp\"}]}]}";

static char *write_doc(const mlc_json_doc *d) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  mlc_json_write(&b, mlc_json_root(d), NULL);
  char *out = b.oom ? NULL : strdup(mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return out;
}

/* |text| parsed and written again, or NULL when it does not parse. */
static char *rewrite(const char *text) {
  mlc_json_doc *d = NULL;
  mlc_status s = mlc_json_parse(text, strlen(text), &d);
  char *out = s ? NULL : write_doc(d);
  mlc_status_free(s);
  mlc_json_free(d);
  return out;
}

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
    mlc_json_doc *d = NULL;
    mlc_status s = mlc_json_parse(buf, len, &d);
    if (s) {
      bad += mlc_status_code(s) != MLC_INVALID_ARGUMENT;
      mlc_status_free(s);
      continue;
    }
    parsed++;
    /* written, it parses; written again, it is the same (a byte that is
    ** not UTF-8 becomes a code point the first time) */
    char *w1 = write_doc(d), *w2 = w1 ? rewrite(w1) : NULL, *w3 = w2 ? rewrite(w2) : NULL;
    if (!w3 || strcmp(w2, w3) != 0) {
      fprintf(stderr, "\n%.*s\n-> %s\n-> %s\n", (int)len, buf, w1 ? w1 : "?", w2 ? w2 : "(refused)");
      bad++;
    }
    free(w1);
    free(w2);
    free(w3);
    mlc_json_free(d);
  }
#undef RNG
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(parsed > 100); /* some edits keep it valid (inside strings, digits) */
  free(buf);
}

static void register_suites(void) {
  static const CU_TestInfo tests[] = {{"accepts", test_accepts}, {"refuses", test_refuses},
                                      {"mutations", test_mutations}, CU_TEST_INFO_NULL};
  mlc_test_add_suite("json", tests);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_suites, NULL};
  return mlc_test_main("test_json", fns);
}
