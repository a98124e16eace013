/*
** half.c: float16 / bfloat16 <-> float32 conversions of half.h, done on the
** bit patterns (no floating-point environment dependence).
*/
#include "base/half.h"

#include <string.h>

static float bits_f32(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

float mlc_f16_to_f32(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return bits_f32(s | 0x7f800000 | (m << 13));
  if (e) return bits_f32(s | ((e + 112) << 23) | (m << 13));
  float f = (float)m * 0x1p-24f; /* zero or subnormal: m * 2^-24, exact */
  return s ? -f : f;
}

/* Keeps the top bits of |m| above |shift|, rounding to nearest even. */
static uint32_t round_shift(uint32_t m, int shift) {
  uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return r + (rem > half || (rem == half && (r & 1)));
}

uint16_t mlc_f32_to_f16(float f) {
  uint32_t x = f32_bits(f), e = (x >> 23) & 0xff, m = x & 0x7fffff;
  uint16_t s = (uint16_t)((x >> 16) & 0x8000);
  int he = (int)e - 127 + 15;
  if (e == 0xff) return (uint16_t)(s | 0x7c00 | (m ? 0x200 | (m >> 13) : 0));
  if (he >= 0x1f) return (uint16_t)(s | 0x7c00);
  if (he <= 0) /* subnormal half (or zero) */
    return (uint16_t)(s | (he < -10 ? 0 : round_shift(m | 0x800000, 14 - he)));
  /* A carry out of the mantissa bumps the exponent, up to infinity. */
  return (uint16_t)(s | round_shift(((uint32_t)he << 23) | m, 13));
}

float mlc_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t mlc_f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
