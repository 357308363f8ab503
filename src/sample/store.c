/* store.c - see store.h. Open addressing over one anonymous mapping:
 * [header][trace slots][pair slots][frame arena]. Pages are touched only when used.
 */
#include "sample/store.h"

#include <errno.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "sample/safe_fmt.h"

#include "util/hashmix.h"

#define MAX_PROBES 256

typedef struct {
    _Atomic uint64_t hash; /* 0 = empty */
    _Atomic uint32_t ready; /* 1 once off/nframes are published */
    uint32_t nframes;
    uint64_t off;
} trace_slot;

typedef struct {
    _Atomic uint64_t key; /* trace id << 32 | thread; 0 = empty */
    _Atomic uint64_t weight;
    _Atomic uint64_t count; /* samples added (each js_store_add or js_store_add_again is one) */
} pair_slot;

struct js_store {
    size_t map_bytes;
    uint32_t trace_mask, pair_mask;
    uint64_t arena_cap;
    trace_slot *traces;
    _Atomic uint32_t *journal; /* trace ids in publication order (js_store_trace_id_at) */
    pair_slot *pairs;
    js_raw_frame *arena;
    _Atomic uint64_t arena_used;
    _Atomic uint32_t ntraces;
    _Atomic uint64_t dropped, total;
    _Atomic uint64_t pair_dropped; /* weight kept as a trace (streamed) but not aggregated: pair table full */
    _Atomic uint32_t npairs;
    _Atomic uint32_t gen;
};

/* Smallest power of two >= v (v >= 1). */
static uint64_t pow2_at_least(uint64_t v)
{
    uint64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* One frame into a hash lane: the 128-bit product of (lane ^ method) and (bci, kind), folded to 64 bits, each side
 * offset by a constant so that neither is zero for real frames. One multiply a frame. */
static inline uint64_t lane_step(uint64_t h, const js_raw_frame *f)
{
    __uint128_t r = (__uint128_t)(h ^ (uint64_t)(uintptr_t)f->method ^ 0xa0761d6478bd642fULL) *
                    (((uint64_t)(uint32_t)f->bci | (uint64_t)(uint32_t)f->kind << 32) ^ 0xe7037ed1a0b428dbULL);
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Hash of a frame list; never 0. The trace table knows a stack by this hash alone, so it must take every frame,
 * its place and the length; and it is paid on every sample, so deep stacks must not make it slow: frames go round
 * four independent lanes (a multiply does not wait for the one before), which are mixed together at the end
 * (2.5 us for 2,000 frames here, against 21 us for two full mixing rounds a frame). */
static uint64_t hash_frames(const js_raw_frame *f, int n)
{
    uint64_t h[4] = {0x9E3779B97F4A7C15ULL ^ (uint64_t)n, 0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL,
                     0xA4093822299F31D0ULL};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        h[0] = lane_step(h[0], &f[i]);
        h[1] = lane_step(h[1], &f[i + 1]);
        h[2] = lane_step(h[2], &f[i + 2]);
        h[3] = lane_step(h[3], &f[i + 3]);
    }
    for (int l = 1; i < n; i++, l++) h[l] = lane_step(h[l], &f[i]); /* the last 0-3 frames: lanes 1.. (not 0) */
    uint64_t r = js_mix64(h[0] ^ js_mix64(h[1] ^ js_mix64(h[2] ^ js_mix64(h[3]))));
    return r ? r : 1;
}

js_store *js_store_create(uint32_t max_traces, uint64_t max_frames, uint32_t max_pairs, char *err, size_t errlen)
{
    if (max_traces > JS_STORE_MAX_TRACES || max_pairs > JS_STORE_MAX_PAIRS || max_frames > JS_STORE_MAX_FRAMES) {
        js_safe_fmt(err, errlen, "call-trace store too large: %u traces, %llu frames, %u pairs (limits %u, %llu, %u)",
                 max_traces, (unsigned long long)max_frames, max_pairs, JS_STORE_MAX_TRACES,
                 (unsigned long long)JS_STORE_MAX_FRAMES, JS_STORE_MAX_PAIRS);
        return NULL;
    }
    uint64_t nt = pow2_at_least(max_traces ? max_traces : 1), np = pow2_at_least(max_pairs ? max_pairs : 1);
    size_t page = 4096;
    size_t hdr = round_up(sizeof(js_store), page);
    size_t tbytes = round_up(nt * sizeof(trace_slot), page);
    size_t jbytes = round_up(nt * sizeof(uint32_t), page);
    size_t pbytes = round_up(np * sizeof(pair_slot), page);
    size_t abytes = round_up(max_frames * sizeof(js_raw_frame), page);
    size_t total = hdr + tbytes + jbytes + pbytes + abytes;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        js_safe_fmt(err, errlen, "cannot reserve %zu bytes for the call-trace store: %s", total, js_safe_errstr(errno));
        return NULL;
    }
    js_store *s = m;
    s->map_bytes = total;
    s->trace_mask = (uint32_t)(nt - 1);
    s->pair_mask = (uint32_t)(np - 1);
    s->arena_cap = max_frames;
    s->traces = (trace_slot *)((char *)m + hdr);
    s->journal = (_Atomic uint32_t *)((char *)m + hdr + tbytes);
    s->pairs = (pair_slot *)((char *)m + hdr + tbytes + jbytes);
    s->arena = (js_raw_frame *)((char *)m + hdr + tbytes + jbytes + pbytes);
    return s;
}

void js_store_destroy(js_store *s)
{
    if (s) munmap(s, s->map_bytes);
}

/* Reserve n arena frames at *off; false (nothing taken) when they do not fit. Signal-safe. */
static bool arena_reserve(js_store *s, uint64_t n, uint64_t *off)
{
    uint64_t cur = atomic_load_explicit(&s->arena_used, memory_order_relaxed);
    do {
        if (cur + n > s->arena_cap) return false;
    } while (!atomic_compare_exchange_weak_explicit(&s->arena_used, &cur, cur + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    *off = cur;
    return true;
}

/* Find or insert the trace; returns its id (slot + 1) or 0 when full. Signal-safe. */
static uint32_t trace_id(js_store *s, const js_raw_frame *frames, int n)
{
    uint64_t h = hash_frames(frames, n);
    uint32_t i = (uint32_t)h & s->trace_mask;
    uint32_t probes = s->trace_mask + 1 < MAX_PROBES ? s->trace_mask + 1 : MAX_PROBES;
    for (uint32_t p = 0; p < probes; p++, i = (i + 1) & s->trace_mask) {
        trace_slot *t = &s->traces[i];
        uint64_t cur = atomic_load_explicit(&t->hash, memory_order_acquire);
        if (cur == h) return i + 1;
        if (cur != 0) continue;
        uint64_t off;
        if (!arena_reserve(s, (uint64_t)n, &off)) return 0;
        memcpy(&s->arena[off], frames, (size_t)n * sizeof *frames);
        uint64_t expected = 0;
        if (atomic_compare_exchange_strong_explicit(&t->hash, &expected, h, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            t->off = off;
            t->nframes = (uint32_t)n;
            atomic_store_explicit(&t->ready, 1, memory_order_release);
            uint32_t seq = atomic_fetch_add_explicit(&s->ntraces, 1, memory_order_relaxed);
            atomic_store_explicit(&s->journal[seq], i + 1, memory_order_release);
            return i + 1;
        }
        if (expected == h) return i + 1; /* lost the race to the same trace: arena bytes wasted */
    }
    return 0;
}

/* Add weight and one sample to the (trace, thread) pair; 0 on success, -1 when full. Signal-safe. */
static int pair_add(js_store *s, uint32_t trace, uint32_t thread, uint64_t weight)
{
    uint64_t key = ((uint64_t)trace << 32) | thread;
    uint32_t i = (uint32_t)js_mix64(key) & s->pair_mask;
    uint32_t probes = s->pair_mask + 1 < MAX_PROBES ? s->pair_mask + 1 : MAX_PROBES;
    for (uint32_t p = 0; p < probes; p++, i = (i + 1) & s->pair_mask) {
        pair_slot *e = &s->pairs[i];
        uint64_t cur = atomic_load_explicit(&e->key, memory_order_acquire);
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(&e->key, &expected, key, memory_order_acq_rel,
                                                        memory_order_acquire)) {
                cur = key;
                atomic_fetch_add_explicit(&s->npairs, 1, memory_order_relaxed);
            }
            else
                cur = expected;
        }
        if (cur == key) {
            atomic_fetch_add_explicit(&e->weight, weight, memory_order_relaxed);
            atomic_fetch_add_explicit(&e->count, 1, memory_order_relaxed);
            return 0;
        }
    }
    return -1;
}

uint32_t js_store_add(js_store *s, const js_raw_frame *frames, int n, uint32_t thread, uint64_t weight)
{
    if (n <= 0) return 0;
    uint32_t id = trace_id(s, frames, n);
    if (id == 0) {
        atomic_fetch_add_explicit(&s->dropped, 1, memory_order_relaxed);
        return 0;
    }
    /* The trace is stored, so a streamed event can still name it; only the aggregate misses it. */
    if (pair_add(s, id, thread, weight) != 0) atomic_fetch_add_explicit(&s->pair_dropped, weight, memory_order_relaxed);
    else atomic_fetch_add_explicit(&s->total, weight, memory_order_relaxed);
    return id;
}

int js_store_add_again(js_store *s, uint32_t id, uint32_t thread, uint64_t weight)
{
    if (id == 0 || id - 1 > s->trace_mask || !atomic_load_explicit(&s->traces[id - 1].ready, memory_order_acquire))
        return -1;
    if (pair_add(s, id, thread, weight) != 0) atomic_fetch_add_explicit(&s->pair_dropped, weight, memory_order_relaxed);
    else atomic_fetch_add_explicit(&s->total, weight, memory_order_relaxed);
    return 0;
}

void js_store_reset(js_store *s)
{
    size_t hdr = (size_t)((char *)s->traces - (char *)s);
    /* Anonymous private pages read back as zeros after MADV_DONTNEED: memory is returned too. */
    madvise((char *)s + hdr, s->map_bytes - hdr, MADV_DONTNEED);
    atomic_store(&s->arena_used, 0);
    atomic_store(&s->ntraces, 0);
    atomic_store(&s->dropped, 0);
    atomic_store(&s->total, 0);
    atomic_store(&s->pair_dropped, 0);
    atomic_store(&s->npairs, 0);
}

uint64_t js_store_dropped(const js_store *s)
{
    return atomic_load(&((js_store *)s)->dropped);
}

uint64_t js_store_total_weight(const js_store *s)
{
    return atomic_load(&((js_store *)s)->total);
}

uint32_t js_store_trace_count(const js_store *s)
{
    return atomic_load(&((js_store *)s)->ntraces);
}

const js_raw_frame *js_store_trace(const js_store *s, uint32_t id, int *n)
{
    if (id == 0 || id > s->trace_mask + 1) return NULL;
    trace_slot *t = &s->traces[id - 1];
    if (!atomic_load_explicit(&t->ready, memory_order_acquire)) return NULL;
    *n = (int)t->nframes;
    return &s->arena[t->off];
}

uint64_t js_store_trace_hash(const js_store *s, uint32_t id)
{
    if (id == 0 || id > s->trace_mask + 1) return 0;
    trace_slot *t = &s->traces[id - 1];
    if (!atomic_load_explicit(&t->ready, memory_order_acquire)) return 0;
    return atomic_load_explicit(&t->hash, memory_order_relaxed);
}

int js_store_foreach_pair_counted(const js_store *s, js_pair_counted_fn fn, void *ctx)
{
    for (uint64_t i = 0; i <= s->pair_mask; i++) {
        pair_slot *e = &s->pairs[i];
        uint64_t key = atomic_load_explicit(&e->key, memory_order_acquire);
        uint64_t w = atomic_load_explicit(&e->weight, memory_order_relaxed);
        uint64_t c = atomic_load_explicit(&e->count, memory_order_relaxed);
        if (!key || !w) continue;
        int n;
        if (!js_store_trace(s, (uint32_t)(key >> 32), &n)) continue;
        int rc = fn((uint32_t)(key >> 32), (uint32_t)key, w, c, ctx);
        if (rc) return rc;
    }
    return 0;
}

typedef struct {
    js_pair_fn fn;
    void *ctx;
} uncounted;

/* js_pair_counted_fn that hands a pair to a js_pair_fn without its count. */
static int drop_count(uint32_t trace, uint32_t thread, uint64_t weight, uint64_t count, void *ctx)
{
    uncounted *u = ctx;
    return u->fn(trace, thread, weight, u->ctx);
}

int js_store_foreach_pair(const js_store *s, js_pair_fn fn, void *ctx)
{
    uncounted u = {fn, ctx};
    return js_store_foreach_pair_counted(s, drop_count, &u);
}

uint32_t js_store_trace_id_at(const js_store *s, uint32_t seq)
{
    if (seq > s->trace_mask) return 0;
    return atomic_load_explicit(&((js_store *)s)->journal[seq], memory_order_acquire);
}

void js_store_set_gen(js_store *s, uint32_t gen)
{
    atomic_store_explicit(&s->gen, gen, memory_order_release);
}

uint32_t js_store_gen(const js_store *s)
{
    return atomic_load_explicit(&((js_store *)s)->gen, memory_order_acquire);
}

void js_store_usage(const js_store *s, js_store_fill *f)
{
    js_store *m = (js_store *)s;
    f->traces = atomic_load(&m->ntraces);
    f->max_traces = m->trace_mask + 1;
    f->frames = atomic_load(&m->arena_used);
    f->max_frames = m->arena_cap;
    f->pairs = atomic_load(&m->npairs);
    f->max_pairs = m->pair_mask + 1;
    f->dropped = atomic_load(&m->dropped);
    f->pair_dropped_weight = atomic_load(&m->pair_dropped);
}

size_t js_store_reserved_bytes(const js_store *s)
{
    return s->map_bytes;
}
