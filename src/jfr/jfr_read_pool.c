/* jfr_read_pool.c - the JFR reader's constant pools: the keyed tables that hold them, and the checkpoint
 * chain that fills them.
 *
 * The chain is walked from the header's checkpoint offset backwards by each checkpoint's delta; each
 * checkpoint must end before the next one in the chain starts, so the walk is finite and reads every byte
 * at most once. Every pool entry goes through the generic decoder (jfr_read_decode.c); only threads, stack
 * traces (with their frames), methods, classes, symbols, frame types and strings are kept, names as
 * references (js_jfrr_nameref) that jfr_read_resolve.c follows.
 */
#include "jfr_read_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmix.h"

/* ---- keyed tables ---------------------------------------------------------------------------------- */

/* Hash slot of key in a table of cap (a power of two) slots. Mixed whole: the keys are the file's, and keys that
 * differ only above bit 43 (k << 44) all fell in one slot of a product's bits 20.., n^2 probes for n of them. */
static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)js_mix64(key) & (cap - 1);
}

/* Rebuilds the slot table of p with cap slots; 0 or -1. */
static int pool_rehash(js_jfrr_pool *p, size_t cap)
{
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *idx = malloc(cap * sizeof *idx);
    if (!keys || !idx) {
        free(keys);
        free(idx);
        return -1;
    }
    memset(idx, 0xff, cap * sizeof *idx);
    for (size_t i = 0; i < p->cap; i++) {
        if (p->idx[i] == JS_JFRR_NONE) continue;
        size_t h = slot_of(p->keys[i], cap);
        for (p->probes++; idx[h] != JS_JFRR_NONE; p->probes++) h = (h + 1) & (cap - 1);
        keys[h] = p->keys[i];
        idx[h] = p->idx[i];
    }
    free(p->keys);
    free(p->idx);
    p->keys = keys;
    p->idx = idx;
    p->cap = cap;
    return 0;
}

/* Record of key, or NULL. */
void *js_jfrr_pool_get(const js_jfrr_pool *p, uint64_t key)
{
    if (!p->cap) return NULL;
    for (size_t h = slot_of(key, p->cap); p->idx[h] != JS_JFRR_NONE; h = (h + 1) & (p->cap - 1))
        if (p->keys[h] == key) return p->recs + (size_t)p->idx[h] * p->size;
    return NULL;
}

/* Record of key, created zeroed when missing (an existing one is reused); NULL without memory. */
static void *js_jfrr_pool_put(js_jfrr_pool *p, uint64_t key)
{
    void *old = js_jfrr_pool_get(p, key);
    if (old) {
        memset(old, 0, p->size);
        return old;
    }
    if ((p->n + 1) * 2 > p->cap &&
        (p->n >= JS_JFRR_NONE - 1 || pool_rehash(p, p->cap ? p->cap * 2 : 256) != 0))
        return NULL;
    if (p->n == p->rcap) {
        size_t rc = p->rcap ? p->rcap * 2 : 64;
        uint8_t *r = realloc(p->recs, rc * p->size);
        if (!r) return NULL;
        p->recs = r;
        p->rcap = rc;
    }
    size_t h = slot_of(key, p->cap);
    for (p->probes++; p->idx[h] != JS_JFRR_NONE; p->probes++) h = (h + 1) & (p->cap - 1);
    p->keys[h] = key;
    p->idx[h] = (uint32_t)p->n;
    void *rec = p->recs + p->n++ * p->size;
    memset(rec, 0, p->size);
    return rec;
}

/* Frees p's memory, keeping its record size (and nothing else: its probes are the caller's to keep). */
void js_jfrr_pool_free(js_jfrr_pool *p)
{
    free(p->keys);
    free(p->idx);
    free(p->recs);
    size_t size = p->size;
    memset(p, 0, sizeof *p);
    p->size = size;
}

/* ---- pools ------------------------------------------------------------------------------------------- */

/* A name reference from captured field i of class cls: a Symbol or String pool key, or inline text. */
static js_jfrr_nameref to_name(const js_jfrr_chunk *k, int32_t cls, int32_t i, const js_jfrr_val *vals)
{
    js_jfrr_nameref n = {0};
    if (cls < 0 || i < 0 || !vals[i].set) return n;
    const js_jfrr_class *c = &k->meta.classes[cls];
    const js_jfrr_field *f = c->prim ? NULL : &k->meta.fields[c->first + (uint32_t)i];
    if (f && f->cp) {
        n.how = f->cls == k->c_sym ? JS_JFRR_NR_SYM : f->cls == k->c_str ? JS_JFRR_NR_STR : JS_JFRR_NR_NONE;
        n.key = vals[i].u;
    } else if (!f ? c->prim == JS_JFRR_P_STRING : (f->cls >= 0 && k->meta.classes[f->cls].prim == JS_JFRR_P_STRING)) {
        n.how = JS_JFRR_NR_TEXT;
        n.s = vals[i].s;
    }
    return n;
}

/* Reads one stack trace entry (frames array decoded inline); 0 or -1. */
static int read_trace(js_jfrr_reader *r, uint64_t key)
{
    js_jfrr_chunk *k = &r->k;
    const js_jfrr_class *c = &k->meta.classes[k->c_trace];
    uint32_t first = (uint32_t)k->nframes, n = 0;
    uint8_t truncated = 0;
    for (uint32_t i = 0; i < c->nfields; i++) {
        const js_jfrr_field *f = &k->meta.fields[c->first + i];
        if ((int32_t)i == k->trace_truncated && !f->array && !f->cp) {
            js_jfrr_val v = {0};
            if (js_jfrr_field_value(&r->cur, &k->meta, f, NULL, &v, 1) != 0) return -1;
            truncated = v.set && v.u != 0;
            continue;
        }
        if ((int32_t)i != k->trace_frames || !f->array || f->cp || f->cls != k->c_frame || f->cls < 0 ||
            k->meta.classes[f->cls].prim != JS_JFRR_P_NONE) {
            if (js_jfrr_field_value(&r->cur, &k->meta, f, NULL, NULL, 1) != 0) return -1;
            continue;
        }
        uint64_t cnt;
        if (js_jfrr_count(&r->cur, &cnt, "stack frame") != 0) return -1;
        if (k->nframes + cnt > JS_JFRR_NONE - 1) return js_jfrr_fail(&r->cur, r->cur.pos, "too many stack frames");
        if (k->nframes + cnt > k->cap_frames) {
            size_t cap = k->cap_frames ? k->cap_frames : 1024;
            while (cap < k->nframes + cnt) cap *= 2;
            js_jfrr_frame_rec *fr = realloc(k->frames, cap * sizeof *fr);
            if (!fr) return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory for stack frames");
            k->frames = fr;
            k->cap_frames = cap;
        }
        for (uint64_t j = 0; j < cnt; j++) {
            js_jfrr_val v[JS_JFRR_CAPTURE];
            if (js_jfrr_decode(&r->cur, &k->meta, k->c_frame, NULL, v, JS_JFRR_CAPTURE) != 0) return -1;
            js_jfrr_frame_rec *fr = &k->frames[k->nframes++];
            fr->method = k->fr_method >= 0 && v[k->fr_method].set ? v[k->fr_method].u : 0;
            fr->line = k->fr_line >= 0 && v[k->fr_line].set ? (int32_t)(uint32_t)v[k->fr_line].u : -1;
            fr->ftype = k->fr_type >= 0 && v[k->fr_type].set ? v[k->fr_type].u : UINT64_MAX;
            fr->pframe = JS_JFRR_NONE;
            n++;
        }
    }
    js_jfrr_trace_rec *t = js_jfrr_pool_put(&k->trace, key);
    if (!t) return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory for stack traces");
    t->first = first;
    t->n = n;
    t->truncated = truncated;
    return 0;
}

/* Reads one pool entry's value of class cls, keeping it when it is of a kept kind; 0 or -1. */
static int read_entry(js_jfrr_reader *r, int32_t cls, uint64_t key)
{
    js_jfrr_chunk *k = &r->k;
    if (cls == k->c_trace) return read_trace(r, key);
    int keep = cls == k->c_sym || cls == k->c_str || cls == k->c_ftype || cls == k->c_cls || cls == k->c_meth ||
               cls == k->c_thread;
    js_jfrr_val v[JS_JFRR_CAPTURE];
    if (js_jfrr_decode(&r->cur, &k->meta, cls, keep ? &k->text : NULL, v, keep ? JS_JFRR_CAPTURE : 0) != 0) return -1;
    if (!keep) return 0;
    js_jfrr_pool *p = cls == k->c_sym ? &k->sym : cls == k->c_str ? &k->str : cls == k->c_ftype ? &k->ftype
            : cls == k->c_cls ? &k->cls : cls == k->c_meth ? &k->meth : &k->thread;
    void *rec = js_jfrr_pool_put(p, key);
    if (!rec) return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory for constant pools");
    if (cls == k->c_thread) {
        js_jfrr_thread_rec *t = rec;
        t->osname = to_name(k, cls, k->th_os, v);
        t->jname = to_name(k, cls, k->th_java, v);
        t->ostid = k->th_ostid >= 0 && v[k->th_ostid].set ? v[k->th_ostid].u : 0;
        t->match = -1;
        t->pframe = JS_JFRR_NONE;
    } else if (cls == k->c_meth) {
        js_jfrr_method_rec *me = rec;
        me->cls = k->meth_type >= 0 && v[k->meth_type].set ? v[k->meth_type].u : 0;
        me->name = to_name(k, cls, k->meth_name, v);
    } else {
        int32_t fi = cls == k->c_sym ? k->sym_s : cls == k->c_ftype ? k->ftype_s : cls == k->c_cls ? k->cls_name : 0;
        ((js_jfrr_name_rec *)rec)->name = to_name(k, cls, fi, v);
    }
    return 0;
}

/* Reads one checkpoint record at chunk offset off; *prev gets the previous one's offset (0 = none). */
static int read_checkpoint(js_jfrr_reader *r, uint64_t base, uint64_t chunk_end, uint64_t off, uint64_t *prev)
{
    js_jfrr_cur *c = &r->cur;
    uint64_t start = base + off, size, type, v, npools, delta;
    uint8_t flags;
    c->pos = start;
    c->end = chunk_end;
    if (js_jfrr_varint(c, &size) != 0) return -1;
    if (size == 0) return js_jfrr_fail(c, start, "zero-size checkpoint record");
    if (size > chunk_end - start) return js_jfrr_fail(c, start, "checkpoint size points past the end of the chunk");
    c->end = start + size;
    if (js_jfrr_varint(c, &type) != 0) return -1;
    if (type != 1)
        return js_jfrr_fail(c, start, "expected a checkpoint (type 1), found type %llu", (unsigned long long)type);
    if (js_jfrr_varint(c, &v) != 0 || js_jfrr_varint(c, &v) != 0) return -1; /* startTicks, duration */
    uint64_t dat = c->pos;
    if (js_jfrr_varint(c, &delta) != 0 || js_jfrr_u8(c, &flags) != 0) return -1;
    if (js_jfrr_count(c, &npools, "pool") != 0) return -1;
    for (uint64_t i = 0; i < npools; i++) {
        uint64_t at = c->pos, tid, n, key;
        if (js_jfrr_varint(c, &tid) != 0 || js_jfrr_count(c, &n, "pool entry") != 0) return -1;
        int32_t cls = js_jfrr_meta_class_id(&r->k.meta, tid);
        if (cls < 0)
            return js_jfrr_fail(c, at, "pool type id %llu is not declared in the metadata", (unsigned long long)tid);
        for (uint64_t j = 0; j < n; j++)
            if (js_jfrr_varint(c, &key) != 0 || read_entry(r, cls, key) != 0) return -1;
    }
    if (c->pos != c->end)
        return js_jfrr_fail(c, c->pos, "checkpoint content ends %llu bytes before its size says",
                            (unsigned long long)(c->end - c->pos));
    *prev = 0;
    if (delta == 0) return 0;
    int64_t d = (int64_t)delta;
    if (d > 0) return js_jfrr_fail(c, dat, "checkpoint delta %lld points forward (the chain would loop)", (long long)d);
    uint64_t back = 0 - delta; /* -d without overflow */
    if (back > off - JS_JFRR_HEADER)
        return js_jfrr_fail(c, dat, "checkpoint delta %lld points before the first record", (long long)d);
    *prev = off - back;
    return 0;
}

/* Walks the checkpoint chain from the header's offset; 0 or -1. */
int js_jfrr_read_pools(js_jfrr_reader *r, uint64_t base, uint64_t chunk_end, uint64_t cp_off)
{
    uint64_t off = cp_off, prev = 0;
    for (;;) {
        if (read_checkpoint(r, base, chunk_end, off, &prev) != 0) return -1;
        if (prev == 0) return 0;
        /* the previous checkpoint must end before this one starts: no overlap, no cycle */
        js_jfrr_cur *c = &r->cur;
        uint64_t size;
        c->pos = base + prev;
        c->end = base + off;
        if (js_jfrr_varint(c, &size) != 0) return -1;
        if (size > off - prev) return js_jfrr_fail(c, base + prev, "checkpoint overlaps the next one in the chain");
        off = prev;
    }
}
