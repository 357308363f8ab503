/* fuzz_util.h - what the libFuzzer targets (native-tests/fuzz_*.c) share: a reader that turns the fuzzer's
 * bytes into choices (numbers in a range, strings, byte runs; zeros once the input is used up, so every input
 * is a complete recipe), and the invariant check that aborts with one line.
 *
 * Each target also builds without libFuzzer into a native test that replays its committed corpus
 * (native-tests/replay_main.c); JS_FUZZ_LIBFUZZER is defined only in the libFuzzer build.
 */
#ifndef JS_FUZZ_UTIL_H
#define JS_FUZZ_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's entry points (the replay main calls the first two). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Aborts with "invariant: WHY" on stderr when cond is false (the fuzzer keeps the input). */
#define FZ_CHECK(cond, ...)                                                                                            \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "invariant %s failed (%s:%d): ", #cond, __FILE__, __LINE__);                               \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

/* The fuzzer's bytes, consumed front to back. */
typedef struct {
    const uint8_t *p;
    size_t n;
} fz_in;

/* One byte; 0 once the input is used up. */
static inline uint8_t fz_u8(fz_in *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

/* A little-endian number of nbytes bytes (1..8). */
static inline uint64_t fz_bits(fz_in *in, int nbytes)
{
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++) v |= (uint64_t)fz_u8(in) << (8 * i);
    return v;
}

/* A number in [lo, hi] (as few bytes as the range needs). */
static inline uint64_t fz_range(fz_in *in, uint64_t lo, uint64_t hi)
{
    uint64_t span = hi - lo, v = 0;
    if (span == 0) return lo;
    for (uint64_t s = span; s; s >>= 8) v = v << 8 | fz_u8(in);
    return span == UINT64_MAX ? v : lo + v % (span + 1);
}

/* 1 with a chance of about num/256. */
static inline int fz_chance(fz_in *in, unsigned num)
{
    return fz_u8(in) < num;
}

/* Up to max bytes of the input taken as they are (length first); *len gets the count. */
static inline const uint8_t *fz_take(fz_in *in, size_t max, size_t *len)
{
    size_t n = (size_t)fz_range(in, 0, max);
    if (n > in->n) n = in->n;
    const uint8_t *p = in->p;
    in->p += n;
    in->n -= n;
    *len = n;
    return p;
}

/* A NUL-terminated copy of up to max bytes of the input (NUL bytes kept out); caller frees. */
static inline char *fz_string(fz_in *in, size_t max)
{
    size_t n;
    const uint8_t *p = fz_take(in, max, &n);
    char *s = malloc(n + 1);
    if (!s) abort();
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i]) s[o++] = (char)p[i];
    s[o] = 0;
    return s;
}

/* A NUL-terminated copy of data (size bytes, NULs kept: the text ends at the first); caller frees. */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* 1 if s is NUL-terminated within its n-byte buffer. */
static inline int fz_fits(const char *s, size_t n)
{
    return memchr(s, 0, n) != NULL;
}

/* 1 if s (len bytes) has a control character below 0x20 other than tab. */
static inline int fz_has_ctl(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 && s[i] != '\t') return 1;
    return 0;
}

#endif
