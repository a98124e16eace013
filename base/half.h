/*
** half.h: float16 (IEEE binary16) and bfloat16 conversions to and from
** float32, on raw 16-bit patterns.
**
** Narrowing rounds to nearest even; infinities stay infinite, values too large
** overflow to infinity, float16 subnormals are produced and read exactly, and
** NaNs stay NaN (quiet, sign and top payload bits kept).  All four take and
** return plain values: nothing is borrowed or transferred.
*/
#ifndef MLC_BASE_HALF_H
#define MLC_BASE_HALF_H

#include <stdint.h>

/* The float32 value of the float16 bit pattern |h| (exact). */
float mlc_f16_to_f32(uint16_t h);
/* The float16 bit pattern nearest to |f| (ties to even). */
uint16_t mlc_f32_to_f16(float f);
/* The float32 value of the bfloat16 bit pattern |h| (exact). */
float mlc_bf16_to_f32(uint16_t h);
/* The bfloat16 bit pattern nearest to |f| (ties to even). */
uint16_t mlc_f32_to_bf16(float f);

#endif /* MLC_BASE_HALF_H */
