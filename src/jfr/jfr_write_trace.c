/* jfr_write_trace.c - the JFR writer's stack traces within a chunk (see jfr_write_int.h).
 *
 * A producer key new to the chunk is pulled from js_jfr_source.trace once and encoded exactly as its StackTrace
 * entry is written (truncated, count, then per frame method key, line, bci, type), and the content's 64-bit hash
 * looked up among the chunk's distinct stacks: a stack already there (under another producer key: the same stack
 * in another store generation, or native frames that name the same functions) takes its key and writes nothing.
 * Two contents with one hash are taken as one stack, as the call-trace store takes two stacks with one hash
 * (about n^2 / 2^65 for n stacks). A new content gets the next StackTrace key and its entry is queued; queued
 * entries go to the file in a checkpoint of their own once o.trace_buffer bytes wait, the rest in the chunk's last
 * checkpoint. Keys ascend from 1 within a chunk and skip the previous chunk's range, because the JDK's reader
 * keeps the previous chunk's entry for a key it sees again in the next one; they stay small (a few varint bytes in
 * every event).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_write_int.h"
#include "util/hashmix.h"

/* Make room for `more` bytes at the end of buffer *p (length len, capacity *cap); 0 or -1. */
static int room(uint8_t **p, size_t *cap, size_t len, size_t more)
{
    if (len + more <= *cap) return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < len + more) c *= 2;
    uint8_t *q = realloc(*p, c);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* v as a varint at o, the one- and two-byte forms inline (most of a frame's fields); its length. */
static inline size_t var32(uint8_t *o, uint32_t v)
{
    if (v < 0x80) {
        o[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        o[0] = (uint8_t)(v | 0x80);
        o[1] = (uint8_t)(v >> 7);
        return 2;
    }
    return js_jfr_varint(o, v);
}

/* Append frame (method key m, line, bci, type) to the encoded trace, and m to the trace's methods unless memo (a
 * direct-mapped set of recent ones) has it. The buffer has room. */
static void put_frame(js_jfr_writer *w, uint32_t *memo, uint32_t m, int32_t line, int32_t bci, uint8_t type)
{
    uint8_t *o = w->tenc + w->tenc_len;
    size_t n = var32(o, m);
    n += var32(o + n, (uint32_t)line);
    n += var32(o + n, (uint32_t)bci);
    o[n++] = type;
    w->tenc_len += n;
    uint32_t *seen = &memo[(m * 0x9E3779B1u) >> 26]; /* 64 slots */
    if (*seen != m) {
        *seen = m;
        w->tmeth[w->tmeth_n++] = m;
    }
    w->ttypes |= 1u << type;
}

/* 64x64 -> 128-bit multiply, folded. */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Hash of the encoded trace (never 0): 16 bytes per multiply, chained, then the tail and the length. */
static uint64_t content_hash(const uint8_t *p, size_t n)
{
    const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL, k2 = 0x8ebc6af09c88c6e3ULL;
    uint64_t h = k2 ^ (uint64_t)n, a, b;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        memcpy(&a, p + i, 8);
        memcpy(&b, p + i + 8, 8);
        h = mum(a ^ k0 ^ h, b ^ k1);
    }
    a = b = 0;
    memcpy(&a, p + i, n - i < 8 ? n - i : 8);
    if (n - i > 8) memcpy(&b, p + i + 8, n - i - 8);
    h = mum(a ^ k0 ^ h, b ^ k1 ^ (uint64_t)(n - i));
    h = mum(h ^ k2, (uint64_t)n ^ k0);
    return h ? h : 1;
}

/* js_jfrw_method_key from the memo of recent keys when it has it (deep stacks repeat their methods). */
static inline uint32_t method_key_memo(js_jfr_writer *w, uint64_t caller_key)
{
    uint32_t slot = METHOD_MEMO_SLOT(caller_key);
    return w->mmemo_key[slot] == caller_key && w->mmemo_id[slot] ? w->mmemo_id[slot] : js_jfrw_method_key(w, caller_key);
}

/* Pull key's frames from the source and encode them into w->tenc (an unknown trace is one "[unknown]" frame).
 * 0, or -1 out of memory. */
static int pull(js_jfr_writer *w, uint64_t key)
{
    int truncated = 0;
    int n = w->src.trace ? w->src.trace(w->src.ctx, key, w->frames, w->o.max_depth, &truncated) : -1;
    w->st.trace_pulls++;
    if (n > w->o.max_depth) n = w->o.max_depth, truncated = 1;
    if (n < 1) n = 0, truncated = 0;
    size_t need = 1 + VAR_MAX + (size_t)(n ? n : 1) * (3 * VAR_MAX + 1);
    if (room(&w->tenc, &w->tenc_cap, 0, need) != 0) return -1;
    w->tenc[0] = (uint8_t)(truncated != 0);
    w->tenc_len = 1 + js_jfr_varint(w->tenc + 1, (uint64_t)(n ? n : 1));
    w->tmeth_n = 0;
    w->ttypes = 0;
    uint32_t memo[64] = {0};
    if (!n) put_frame(w, memo, PLACEHOLDER_METHOD, 0, -1, 4);
    for (int i = 0; i < n; i++) {
        const js_jfr_frame *f = &w->frames[i];
        put_frame(w, memo, method_key_memo(w, f->method), js_jfrw_line(f->line), f->bci, f->type > 6 ? 4 : f->type);
    }
    return w->err_no ? -1 : 0;
}

/* Slot of hash in the content table (its entry, or the empty slot where it goes). The table is not empty. */
static uint32_t content_slot(const js_jfr_writer *w, uint64_t hash)
{
    uint32_t mask = w->content_cap - 1, i = (uint32_t)hash & mask;
    while (w->content[i].key && w->content[i].hash != hash) i = (i + 1) & mask;
    return i;
}

/* Room for one more content entry (load at most 1/2); 0 or -1. */
static int content_room(js_jfr_writer *w)
{
    if ((uint64_t)(w->content_count + 1) * 2 <= w->content_cap) return 0;
    uint32_t cap = w->content_cap ? w->content_cap * 2 : 1024;
    js_jfrw_content *old = w->content, *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    uint32_t old_cap = w->content_cap;
    w->content = t;
    w->content_cap = cap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].key) w->content[content_slot(w, old[i].hash)] = old[i];
    free(old);
    return 0;
}

/* The key the chunk's next new trace gets. */
static uint32_t next_key(const js_jfr_writer *w)
{
    uint32_t k = w->tkey_next;
    if (w->tkey_skip_lo && k >= w->tkey_skip_lo && k <= w->tkey_skip_hi) k = w->tkey_skip_hi + 1;
    return k;
}

int js_jfrw_trace_resolve(js_jfr_writer *w, uint64_t key, js_jfrw_trace_ref *ref)
{
    uint32_t idx = js_jfr_idmap_find(&w->trace_ids, key);
    ref->fresh = 0;
    ref->bytes = 0;
    ref->hash = 0;
    if (idx) {
        ref->key = w->trace_keys[idx];
        return 0;
    }
    if (pull(w, key) != 0 || content_room(w) != 0) {
        js_jfrw_set_error(w, ENOMEM);
        return -1;
    }
    uint64_t h = content_hash(w->tenc, w->tenc_len);
    const js_jfrw_content *c = &w->content[content_slot(w, h)];
    ref->hash = h;
    if (c->key) {
        ref->key = c->key;
        return 0;
    }
    ref->key = next_key(w);
    if (ref->key >= KEY_LIMIT) {
        js_jfrw_set_error(w, EOVERFLOW);
        return -1;
    }
    uint8_t b[VAR_MAX];
    ref->fresh = 1;
    ref->bytes = js_jfr_varint(b, ref->key) + w->tenc_len;
    return 0;
}

int js_jfrw_trace_take(js_jfr_writer *w, uint64_t key, const js_jfrw_trace_ref *ref, uint64_t ticks)
{
    uint32_t idx = js_jfr_idmap_id(&w->trace_ids, key);
    if (!idx) {
        js_jfrw_set_error(w, ENOMEM);
        return -1;
    }
    if (idx >= w->trace_keys_cap) {
        uint32_t cap = w->trace_keys_cap ? w->trace_keys_cap * 2 : 1024;
        while (cap <= idx) cap *= 2;
        uint32_t *k = realloc(w->trace_keys, (size_t)cap * sizeof *k);
        if (!k) {
            js_jfrw_set_error(w, ENOMEM);
            return -1;
        }
        w->trace_keys = k;
        w->trace_keys_cap = cap;
    }
    w->trace_keys[idx] = ref->key;
    if (!ref->fresh) return 0;
    if (room(&w->tpend, &w->tpend_cap, w->tpend_len, VAR_MAX + w->tenc_len) != 0) {
        js_jfrw_set_error(w, ENOMEM);
        return -1;
    }
    w->tpend_len += js_jfr_varint(w->tpend + w->tpend_len, ref->key);
    memcpy(w->tpend + w->tpend_len, w->tenc, w->tenc_len);
    w->tpend_len += w->tenc_len;
    w->tpend_count++;
    w->content[content_slot(w, ref->hash)] = (js_jfrw_content){ref->hash, ref->key};
    w->content_count++;
    w->tkey_next = ref->key + 1;
    if (!w->tkey_min) w->tkey_min = ref->key;
    w->tkey_max = ref->key;
    for (uint32_t i = 0; i < w->tmeth_n; i++) js_jfrw_ref(w, &w->methods, w->tmeth[i]);
    w->frame_types |= w->ttypes;
    w->st.traces++;
    if (w->tpend_len >= w->o.trace_buffer) js_jfrw_trace_flush(w, ticks);
    return w->err_no ? -1 : 0;
}

int js_jfrw_trace_index_full(const js_jfr_writer *w)
{
    return w->trace_ids.count >= TRACE_INDEX_MAX || w->content_count >= TRACE_INDEX_MAX;
}

/* Append the StackTrace pool of the queued entries (type, count, entries) and empty the queue. */
static void put_pool(js_jfr_writer *w)
{
    js_jfrw_put_var(w, js_jfrw_type(w, JS_JFR_T_STACK_TRACE));
    js_jfrw_put_var(w, w->tpend_count);
    js_jfrw_put_large(w, w->tpend, w->tpend_len);
    if (w->o.max_size) w->reserve -= w->tpend_len < w->reserve ? w->tpend_len : w->reserve;
    w->tpend_len = 0;
    w->tpend_count = 0;
}

void js_jfrw_trace_flush(js_jfr_writer *w, uint64_t ticks)
{
    if (!w->tpend_count || w->err_no) return;
    if (w->o.max_size && js_jfrw_pos(w) + w->reserve + CP_FLUSH_COST > w->o.max_size) return; /* they stay queued */
    uint64_t at = js_jfrw_record_begin(w, 1);
    js_jfrw_put_var(w, js_jfrw_tick(w, ticks));
    js_jfrw_put_var(w, 0);                                             /* duration */
    js_jfrw_put_var(w, w->last_cp ? (uint64_t)(int64_t)(w->last_cp - at) : 0); /* delta to the previous one */
    js_jfrw_put_u8(w, 1);                                              /* type: flush */
    js_jfrw_put_var(w, 1);                                             /* one pool */
    put_pool(w);
    js_jfrw_record_end(w, at);
    w->last_cp = at;
}

int js_jfrw_trace_pool(js_jfr_writer *w)
{
    if (!w->tpend_count) return 0;
    put_pool(w);
    return 1;
}

void js_jfrw_trace_reset(js_jfr_writer *w)
{
    js_jfr_idmap_clear(&w->trace_ids);
    if (w->content) memset(w->content, 0, (size_t)w->content_cap * sizeof *w->content);
    w->content_count = 0;
    w->tpend_len = 0;
    w->tpend_count = 0;
    w->last_cp = 0;
    w->tkey_skip_lo = w->tkey_min;
    w->tkey_skip_hi = w->tkey_max;
    w->tkey_next = 1;
    w->tkey_min = w->tkey_max = 0;
    if ((size_t)w->content_cap * sizeof *w->content > TRACE_KEEP_BYTES) { /* a big chunk's tables are released */
        free(w->content);
        w->content = NULL;
        w->content_cap = 0;
    }
    if ((size_t)w->trace_keys_cap * sizeof *w->trace_keys > TRACE_KEEP_BYTES) {
        free(w->trace_keys);
        w->trace_keys = NULL;
        w->trace_keys_cap = 0;
        js_jfr_idmap_free(&w->trace_ids);
    }
}

void js_jfrw_trace_free(js_jfr_writer *w)
{
    js_jfr_idmap_free(&w->trace_ids);
    free(w->trace_keys);
    free(w->content);
    free(w->tpend);
    free(w->tenc);
    free(w->tmeth);
    w->trace_keys = NULL;
    w->content = NULL;
    w->tpend = w->tenc = NULL;
    w->tmeth = NULL;
    w->trace_keys_cap = w->content_cap = 0;
    w->tpend_cap = w->tenc_cap = 0;
}
