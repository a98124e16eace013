/*
** sha256.h: SHA-256 (FIPS 180-4), for the model hash in a compiled model's
** manifest.
*/
#ifndef MLC_BASE_SHA256_H
#define MLC_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct mlc_sha256 {
  uint32_t h[8];
  uint64_t len; /* bytes hashed so far */
  uint8_t buf[64];
  size_t nbuf;
} mlc_sha256;

void mlc_sha256_init(mlc_sha256 *c);
void mlc_sha256_update(mlc_sha256 *c, const void *data, size_t n);
/* Writes the 32-byte digest to |out|. */
void mlc_sha256_final(mlc_sha256 *c, uint8_t out[32]);
/* Lower-case hex digest of |n| bytes at |data| into |hex| (65 bytes). */
void mlc_sha256_hex(const void *data, size_t n, char hex[65]);

#endif /* MLC_BASE_SHA256_H */
