/* hashmix.h - integer mixers for the open-addressing tables (store, JFR pools).
 *
 * Pure functions, no state: safe in a signal handler. Good avalanche for keys that differ in few bits
 * (pointers, small ids), which the tables then mask to a power-of-two size.
 */
#ifndef JS_HASHMIX_H
#define JS_HASHMIX_H

#include <stdint.h>

/* 64-bit finaliser (MurmurHash3 fmix64). */
static inline uint64_t js_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* 32-bit integer mix (lowbias32). */
static inline uint32_t js_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

#endif
