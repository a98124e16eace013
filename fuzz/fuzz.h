/*
** fuzz.h: the entry every target of fuzz/ defines.
**
** libFuzzer (-fsanitize=fuzzer) calls it once per input; replay.c calls it
** once per file in the normal and sanitizer builds, so that the seed
** corpora and the regression cases run under make check as well.
*/
#ifndef MLC_FUZZ_FUZZ_H
#define MLC_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input (|data|, |size| bytes, borrowed); always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* MLC_FUZZ_FUZZ_H */
