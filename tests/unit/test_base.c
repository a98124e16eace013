/*
** test_base.c: CUnit suites for base/ (status, arena, strbuf, hash, dtype).
*/
#include <string.h>

#include "base/arena.h"
#include "base/dtype.h"
#include "base/half.h"
#include "base/hash.h"
#include "base/sha256.h"
#include "base/status.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "tests/testutil.h"

static void test_status(void) {
  mlc_status s = mlc_make_status(MLC_INVALID_ARGUMENT, "Conv: kernel rank %d != %d", 3, 2);
  CU_ASSERT_EQUAL(mlc_status_code(s), MLC_INVALID_ARGUMENT);
  CU_ASSERT_STRING_EQUAL(mlc_status_message(s), "Conv: kernel rank 3 != 2");
  s = mlc_status_annotate(s, "node \"%s\"", "c1");
  CU_ASSERT_STRING_EQUAL(mlc_status_message(s), "node \"c1\": Conv: kernel rank 3 != 2");
  CU_ASSERT_PTR_NOT_NULL(strstr(mlc_status_where(s), "test_base.c"));
  mlc_status_free(s);
  CU_ASSERT_EQUAL(mlc_status_code(NULL), MLC_OK);
  CU_ASSERT_STRING_EQUAL(mlc_status_message(NULL), "");
  mlc_status_free(NULL);
  CU_ASSERT_STRING_EQUAL(mlc_code_name(MLC_UNIMPLEMENTED), "UNIMPLEMENTED");
}

static void test_arena(void) {
  mlc_arena *a = mlc_arena_create(mlc_allocator_default());
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  char *s = mlc_arena_strdup(a, "hello");
  CU_ASSERT(s && strcmp(s, "hello") == 0);
  CU_ASSERT_EQUAL(((uintptr_t)mlc_arena_alloc(a, 3)) % 16, 0);
  mlc_arena_mark m = mlc_arena_get_mark(a);
  size_t used = mlc_arena_used(a);
  for (int i = 0; i < 100; i++) CU_ASSERT_PTR_NOT_NULL(mlc_arena_alloc(a, 10000));
  mlc_arena_reset(a, m);
  CU_ASSERT_EQUAL(mlc_arena_used(a), used);
  CU_ASSERT(s && strcmp(s, "hello") == 0);
  CU_ASSERT_PTR_NULL(mlc_arena_array(a, SIZE_MAX / 2, 4));
  CU_ASSERT(mlc_arena_oom(a));
  char *p = mlc_arena_printf(a, "%d-%s", 7, "x");
  CU_ASSERT(p && strcmp(p, "7-x") == 0);
  mlc_arena_destroy(a);
  mlc_arena_destroy(NULL);
}

static void test_strbuf(void) {
  mlc_strbuf b = MLC_STRBUF_INIT;
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&b), "");
  mlc_sb_printf(&b, "%s=%d", "a", 1);
  mlc_sb_putc(&b, ' ');
  mlc_sb_json_str(&b, "q\"\n\x01");
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&b), "a=1 \"q\\\"\\n\\u0001\"");
  mlc_sb_fini(&b);
  mlc_sb_double(&b, 0.1);
  mlc_sb_putc(&b, ' ');
  mlc_sb_double(&b, 1e-7);
  mlc_sb_putc(&b, ' ');
  mlc_sb_double(&b, -2.0);
  CU_ASSERT_STRING_EQUAL(mlc_sb_str(&b), "0.1 1e-07 -2");
  mlc_sb_fini(&b);
}

static void test_hash(void) {
  mlc_hash h = MLC_HASH_INIT;
  char keys[200][8];
  for (int i = 0; i < 200; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    CU_ASSERT_EQUAL(mlc_hash_put(&h, keys[i], (void *)(intptr_t)(i + 1)), 0);
  }
  CU_ASSERT_EQUAL(h.len, 200);
  for (int i = 0; i < 200; i++) CU_ASSERT_EQUAL((intptr_t)mlc_hash_get(&h, keys[i]), i + 1);
  CU_ASSERT_PTR_NULL(mlc_hash_get(&h, "missing"));
  mlc_hash_put(&h, keys[5], NULL);
  CU_ASSERT_EQUAL(h.len, 200);
  mlc_hash_fini(&h);
}

static void test_vec(void) {
  MLC_VEC(int) v = {0};
  for (int i = 0; i < 1000; i++) CU_ASSERT_EQUAL(mlc_vec_push(&v, i), 0);
  CU_ASSERT_EQUAL(v.len, 1000);
  CU_ASSERT(v.len == 1000 && v.data[999] == 999);
  mlc_vec_free(&v);
}

static void test_dtype(void) {
  CU_ASSERT_EQUAL(mlc_dtype_size(MLC_DTYPE_F32), 4);
  CU_ASSERT_EQUAL(mlc_dtype_size(MLC_DTYPE_BOOL), 1);
  CU_ASSERT_STRING_EQUAL(mlc_dtype_name(MLC_DTYPE_BF16), "bfloat16");
  CU_ASSERT_EQUAL(mlc_dtype_from_name("uint16"), MLC_DTYPE_U16);
  CU_ASSERT_EQUAL(mlc_dtype_from_name("nope"), MLC_DTYPE_INVALID);
  CU_ASSERT(mlc_dtype_is_float(MLC_DTYPE_F16));
  CU_ASSERT(!mlc_dtype_is_signed(MLC_DTYPE_U8));
  CU_ASSERT_STRING_EQUAL(mlc_dtype_name((mlc_dtype)99), "invalid");
}

static void test_sha256(void) {
  char hex[65];
  mlc_sha256_hex("", 0, hex);
  CU_ASSERT_STRING_EQUAL(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  mlc_sha256_hex("abc", 3, hex);
  CU_ASSERT_STRING_EQUAL(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  mlc_sha256_hex(m, strlen(m), hex);
  CU_ASSERT_STRING_EQUAL(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_half(void) {
  /* float16: exact values, rounding to nearest even, overflow, subnormals. */
  CU_ASSERT_EQUAL(mlc_f32_to_f16(1.0f), 0x3c00);
  CU_ASSERT_EQUAL(mlc_f32_to_f16(-2.0f), 0xc000);
  CU_ASSERT_EQUAL(mlc_f32_to_f16(65504.0f), 0x7bff);
  CU_ASSERT_EQUAL(mlc_f32_to_f16(65520.0f), 0x7c00);                  /* tie rounds up to inf */
  CU_ASSERT_EQUAL(mlc_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);           /* tie to even (down) */
  CU_ASSERT_EQUAL(mlc_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);       /* tie to even (up) */
  CU_ASSERT_EQUAL(mlc_f32_to_f16(0x1p-24f), 0x0001);                  /* smallest subnormal */
  CU_ASSERT_EQUAL(mlc_f32_to_f16(0x1p-25f), 0x0000);                  /* tie to even: zero */
  CU_ASSERT_EQUAL(mlc_f32_to_f16(-0.0f), 0x8000);
  CU_ASSERT_EQUAL(mlc_f32_to_f16(__builtin_inff()), 0x7c00);
  CU_ASSERT_EQUAL(mlc_f32_to_f16(__builtin_nanf("")) & 0x7e00, 0x7e00); /* quiet NaN */
  CU_ASSERT(mlc_f16_to_f32(0x3555) == 0x1.554p-2f);
  CU_ASSERT(mlc_f16_to_f32(0x0001) == 0x1p-24f);
  CU_ASSERT(mlc_f16_to_f32(0x83ff) == -0x3ffp-24f);
  CU_ASSERT(mlc_f16_to_f32(0xfc00) == -__builtin_inff());
  float n = mlc_f16_to_f32(0x7e00);
  CU_ASSERT(n != n);
  for (uint32_t h = 0; h < 0x10000; h++) /* every non-NaN half round-trips */
    if ((h & 0x7fff) <= 0x7c00 && mlc_f32_to_f16(mlc_f16_to_f32((uint16_t)h)) != h) {
      CU_FAIL("float16 round trip");
      break;
    }
  /* bfloat16 */
  CU_ASSERT_EQUAL(mlc_f32_to_bf16(1.0f), 0x3f80);
  CU_ASSERT_EQUAL(mlc_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);           /* tie to even (down) */
  CU_ASSERT_EQUAL(mlc_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);       /* tie to even (up) */
  CU_ASSERT_EQUAL(mlc_f32_to_bf16(-__builtin_inff()), 0xff80);
  CU_ASSERT_EQUAL(mlc_f32_to_bf16(__builtin_nanf("")) & 0x7fc0, 0x7fc0);
  CU_ASSERT(mlc_bf16_to_f32(0x4049) == 3.140625f);
  n = mlc_bf16_to_f32(0x7fc1);
  CU_ASSERT(n != n);
}

static CU_TestInfo tests[] = {
    {"sha256", test_sha256},
    {"status", test_status}, {"arena", test_arena}, {"strbuf", test_strbuf},
    {"hash", test_hash},     {"vec", test_vec},     {"dtype", test_dtype},
    {"half", test_half},
    CU_TEST_INFO_NULL};

static void reg(void) { mlc_test_add_suite("base", tests); }

int main(void) {
  const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_test_main("test_base", fns);
}
