/* jfr_parse.h - a minimal JFR reader for the writer's tests, written from the format notes (jfr-format.md),
 * independent of the writer's and the reader's code. It checks what every reader relies on while it parses: chunk
 * headers, records back to back, the checkpoint chain of each chunk (every checkpoint record in it, the last one
 * ending the chunk), no empty pool, each pool key once per chunk, references that resolve, the ExecutionSample
 * layout async-profiler's reader expects, symbol and stack-trace keys disjoint from the previous chunk's, and each
 * distinct stack written once per chunk. Include after <cmocka.h> and "jfr/jfr_meta.h". */
#ifndef JS_JFR_PARSE_H
#define JS_JFR_PARSE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define JP_UNUSED __attribute__((unused))

typedef struct {
    const uint8_t *p;
    size_t end, pos;
} rd;

/* JFR varint: 7 bits per byte for 8 bytes, then a full 9th byte. */
JP_UNUSED static uint64_t jp_rd_var(rd *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 9; i++) {
        assert_true(r->pos < r->end);
        uint8_t b = r->p[r->pos++];
        if (i == 8) return v | (uint64_t)b << 56;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) return v;
    }
    return v;
}

JP_UNUSED static uint8_t jp_rd_u8(rd *r)
{
    assert_true(r->pos < r->end);
    return r->p[r->pos++];
}

/* A string field: encoding 0 (NULL, *len = 0) or 3 (UTF-8; pointer into the file). */
JP_UNUSED static const char *jp_rd_str(rd *r, size_t *len)
{
    uint8_t enc = jp_rd_u8(r);
    *len = 0;
    if (enc == 0) return NULL;
    assert_int_equal(enc, 3);
    *len = (size_t)jp_rd_var(r);
    assert_true(r->pos + *len <= r->end);
    const char *s = (const char *)r->p + r->pos;
    r->pos += *len;
    return s;
}

JP_UNUSED static uint64_t jp_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

enum { P_THREAD, P_STATE, P_TRACE, P_FTYPE, P_METHOD, P_CLASS, P_PACKAGE, P_SYMBOL, P_COUNT };

typedef struct {
    uint64_t key, a, b, c; /* per pool, in wire order: method (class, name, descriptor), class (loader,
                            * name, package), package (name), trace (truncated, depth), thread (osTid,
                            * javaName is null, javaTid) */
    const char *s;
    size_t slen;
} entry;

#define PMAX 4096
typedef struct {
    entry e[P_COUNT][PMAX];
    size_t n[P_COUNT];
    entry frames[PMAX * 4]; /* key = trace, a = method, b = type, c = line */
    size_t nframes;
    uint64_t ev_trace[PMAX * 4]; /* the stack-trace key of each ExecutionSample of the last chunk, in file order */
    size_t nev;
    uint64_t prev_traces[PMAX]; /* previous chunk's stack-trace keys */
    size_t nprevt;
    /* totals over the file */
    int chunks, checkpoints;
    uint64_t samples, settings, recordings, truncated, trace_entries;
    size_t max_symbol, max_depth;
    int null_java_names, long_name_ok, non_ascii_ok, pseudo_ok, unknown_method, unknown_thread;
    uint64_t first_method_name[64]; /* method key -> hash of its name in the first chunk seen */
    uint64_t prev_symbols[PMAX];    /* previous chunk's symbol keys */
    size_t nprev;
} jfr;

JP_UNUSED static entry *jp_find(jfr *j, int pool, uint64_t key)
{
    for (size_t i = 0; i < j->n[pool]; i++)
        if (j->e[pool][i].key == key) return &j->e[pool][i];
    return NULL;
}

/* The type_base the file was written with (js_jfr_options): subtracted from every type id read. */
static uint32_t jp_type_base;

JP_UNUSED static int jp_pool_of(uint64_t type)
{
    type -= jp_type_base;
    switch (type) {
    case JS_JFR_T_THREAD: return P_THREAD;
    case JS_JFR_T_THREAD_STATE: return P_STATE;
    case JS_JFR_T_STACK_TRACE: return P_TRACE;
    case JS_JFR_T_FRAME_TYPE: return P_FTYPE;
    case JS_JFR_T_METHOD: return P_METHOD;
    case JS_JFR_T_CLASS: return P_CLASS;
    case JS_JFR_T_PACKAGE: return P_PACKAGE;
    case JS_JFR_T_SYMBOL: return P_SYMBOL;
    default: fail_msg("unexpected pool type %llu", (unsigned long long)type); return -1;
    }
}

/* One pool entry laid out as jfr-format.md §6 (and our metadata) says. */
JP_UNUSED static void jp_parse_entry(jfr *j, rd *r, int pool)
{
    assert_true(j->n[pool] < PMAX);
    uint64_t key = jp_rd_var(r);
    if (jp_find(j, pool, key)) fail_msg("pool %d: key %llu twice in a chunk", pool, (unsigned long long)key);
    entry *e = &j->e[pool][j->n[pool]++];
    memset(e, 0, sizeof *e);
    e->key = key;
    if (pool != P_STATE && pool != P_FTYPE && pool != P_PACKAGE) {
        assert_true(e->key != 0 && e->key < 0x80000000ULL); /* async-profiler's reader */
    }
    size_t len;
    switch (pool) {
    case P_THREAD:
        e->s = jp_rd_str(r, &e->slen);
        e->a = jp_rd_var(r);
        e->b = jp_rd_str(r, &len) == NULL;
        e->c = jp_rd_var(r);
        j->null_java_names += (int)e->b;
        break;
    case P_STATE: case P_FTYPE: case P_SYMBOL:
        e->s = jp_rd_str(r, &e->slen);
        assert_non_null(e->s);
        break;
    case P_TRACE:
        e->a = jp_rd_u8(r);
        e->b = jp_rd_var(r);
        assert_true(e->b >= 1);
        j->truncated += e->a;
        j->trace_entries++;
        if (e->b > j->max_depth) j->max_depth = (size_t)e->b;
        e->c = 1469598103934665603ULL ^ e->a ^ e->b << 1; /* the content's hash, for the once-per-chunk check */
        for (uint64_t i = 0; i < e->b; i++) {
            assert_true(j->nframes < PMAX * 4);
            entry *f = &j->frames[j->nframes++];
            f->key = e->key;
            f->a = jp_rd_var(r);
            f->c = jp_rd_var(r);     /* line, as its 32-bit varint */
            uint64_t bci = jp_rd_var(r);
            f->b = jp_rd_u8(r);      /* one raw byte for async-profiler */
            assert_true(f->b < 7);
            e->c = (e->c ^ f->a ^ f->c << 21 ^ bci << 42 ^ f->b << 60) * 1099511628211ULL + i;
        }
        break;
    case P_METHOD: case P_CLASS:
        e->a = jp_rd_var(r), e->b = jp_rd_var(r), e->c = jp_rd_var(r);
        jp_rd_var(r);
        assert_true(jp_rd_u8(r) <= 1);
        break;
    case P_PACKAGE:
        e->a = jp_rd_var(r);
        break;
    }
}

/* The checkpoint record at r (after size and type): no empty pool, each pool once, exact size. Returns its delta
 * (to the chunk's previous checkpoint; 0 for the first). */
JP_UNUSED static int64_t jp_parse_checkpoint(jfr *j, rd *r)
{
    int seen[P_COUNT] = {0};
    jp_rd_var(r), jp_rd_var(r);               /* startTime, duration */
    int64_t delta = (int64_t)jp_rd_var(r);
    assert_true(jp_rd_u8(r) <= 1);         /* type */
    uint64_t npools = jp_rd_var(r);
    for (uint64_t i = 0; i < npools; i++) {
        int pool = jp_pool_of(jp_rd_var(r));
        assert_int_equal(seen[pool], 0); /* each pool once */
        seen[pool] = 1;
        uint64_t count = jp_rd_var(r);
        assert_true(count >= 1);         /* jfr print rejects empty pools */
        for (uint64_t k = 0; k < count; k++) jp_parse_entry(j, r, pool);
    }
    assert_int_equal(r->pos, r->end);
    j->checkpoints++;
    return delta;
}

JP_UNUSED static uint64_t jp_hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
    return h;
}

/* Symbol `key`'s string, which must exist. */
JP_UNUSED static const entry *jp_symbol(jfr *j, uint64_t key)
{
    const entry *s = jp_find(j, P_SYMBOL, key);
    if (!s) fail_msg("missing symbol %llu", (unsigned long long)key);
    return s;
}

/* Every reference in the pools resolves; records what the fixture strings became. */
JP_UNUSED static void jp_check_pool_refs(jfr *j)
{
    for (size_t i = 0; i < j->nframes; i++) {
        assert_non_null(jp_find(j, P_METHOD, j->frames[i].a));
        assert_non_null(jp_find(j, P_FTYPE, j->frames[i].b));
    }
    for (size_t i = 0; i < j->n[P_METHOD]; i++) {
        const entry *m = &j->e[P_METHOD][i];
        const entry *c = jp_find(j, P_CLASS, m->a), *name = jp_symbol(j, m->b), *desc = jp_symbol(j, m->c);
        assert_non_null(c);
        assert_true(desc->slen >= 2 && desc->s[0] == '(');
        const entry *cname = jp_symbol(j, c->b);
        if (name->slen == 8190 && memcmp(name->s, "Lx\xc3\xa9", 4) == 0) j->long_name_ok = 1;
        if (name->slen == 11 && memcmp(name->s, "m\xc3\xa9thode_\xce\xbb", 11) == 0) j->non_ascii_ok = 1;
        if (cname->slen == 0 && name->slen == 14 && memcmp(name->s, "[unknown_Java]", 14) == 0) j->pseudo_ok = 1;
        if (cname->slen == 0 && name->slen == 9 && memcmp(name->s, "[unknown]", 9) == 0) j->unknown_method = 1;
        if (m->key < 64) {
            uint64_t h = jp_hash_str(name->s, name->slen);
            if (!j->first_method_name[m->key]) j->first_method_name[m->key] = h;
            assert_true(j->first_method_name[m->key] == h); /* same key, same content in every chunk */
        }
    }
    for (size_t i = 0; i < j->n[P_CLASS]; i++) {
        const entry *c = &j->e[P_CLASS][i];
        assert_int_equal(c->a, 0); /* classLoader: null */
        jp_symbol(j, c->b);
        if (c->c) assert_non_null(jp_find(j, P_PACKAGE, c->c));
    }
    for (size_t i = 0; i < j->n[P_PACKAGE]; i++) jp_symbol(j, j->e[P_PACKAGE][i].a);
    for (size_t i = 0; i < j->n[P_SYMBOL]; i++) {
        if (j->e[P_SYMBOL][i].slen > j->max_symbol) j->max_symbol = j->e[P_SYMBOL][i].slen;
        for (size_t k = 0; k < j->nprev; k++) assert_true(j->prev_symbols[k] != j->e[P_SYMBOL][i].key);
    }
    for (size_t i = 0; i < j->n[P_TRACE]; i++) {
        const entry *t = &j->e[P_TRACE][i];
        for (size_t k = 0; k < i; k++)
            if (j->e[P_TRACE][k].c == t->c) fail_msg("the same stack twice in a chunk (keys %llu and %llu)",
                                                     (unsigned long long)j->e[P_TRACE][k].key, (unsigned long long)t->key);
        for (size_t k = 0; k < j->nprevt; k++) assert_true(j->prev_traces[k] != t->key);
    }
    j->nprevt = j->n[P_TRACE];
    for (size_t i = 0; i < j->nprevt; i++) j->prev_traces[i] = j->e[P_TRACE][i].key;
    for (size_t i = 0; i < j->n[P_THREAD]; i++)
        if (j->e[P_THREAD][i].slen == 9 && memcmp(j->e[P_THREAD][i].s, "[unknown]", 9) == 0) j->unknown_thread = 1;
    j->nprev = j->n[P_SYMBOL];
    for (size_t i = 0; i < j->nprev; i++) j->prev_symbols[i] = j->e[P_SYMBOL][i].key;
}

/* One event record: exactly the declared fields; sample references resolve. */
JP_UNUSED static void jp_parse_event(jfr *j, rd *r, uint64_t type)
{
    type -= jp_type_base;
    if (type == JS_JFR_T_EXECUTION_SAMPLE) {
        jp_rd_var(r); /* startTime */
        assert_non_null(jp_find(j, P_THREAD, jp_rd_var(r)));
        uint64_t trace = jp_rd_var(r);
        assert_non_null(jp_find(j, P_TRACE, trace));
        assert_true(j->nev < PMAX * 4);
        j->ev_trace[j->nev++] = trace;
        assert_non_null(jp_find(j, P_STATE, jp_rd_var(r)));
        assert_int_equal(r->pos, r->end); /* async-profiler reads exactly these 4 fields */
        j->samples++;
    } else if (type == JS_JFR_T_ACTIVE_SETTING) {
        j->settings++;
    } else if (type == JS_JFR_T_ACTIVE_RECORDING) {
        j->recordings++;
    } else {
        fail_msg("unexpected record type %llu", (unsigned long long)type);
    }
}

/* One chunk at file offset `start`; returns its size. */
JP_UNUSED static uint64_t jp_parse_chunk(jfr *j, const uint8_t *f, size_t fsize, size_t start)
{
    const uint8_t *h = f + start;
    assert_true(fsize - start >= 68);
    assert_memory_equal(h, "FLR\0", 4);
    assert_int_equal(h[4] << 8 | h[5], 2); /* major */
    assert_int_equal(h[64], 0);            /* finished */
    uint64_t size = jp_be64(h + 8), cp = jp_be64(h + 16), meta = jp_be64(h + 24);
    assert_true(size <= fsize - start && size > 68);
    assert_int_equal(meta, 68);
    assert_true(cp > meta && cp < size);
    assert_int_equal(jp_be64(h + 56), 1000000000ULL);
    memset(j->n, 0, sizeof j->n);
    j->nframes = 0;
    j->nev = 0;
    uint64_t chain[PMAX];
    size_t nchain = 0;
    for (uint64_t at = cp;;) { /* the chain from the header's checkpoint back to the chunk's first one */
        rd c = {f + start, size, at};
        uint64_t cpsize = jp_rd_var(&c);
        assert_int_equal(jp_rd_var(&c), 1);
        if (at == cp) assert_int_equal(cp + cpsize, size); /* the last checkpoint ends the chunk */
        assert_true(at + cpsize <= size);
        c.end = at + cpsize;
        assert_true(nchain < PMAX);
        chain[nchain++] = at;
        int64_t delta = jp_parse_checkpoint(j, &c);
        if (!delta) break;
        assert_true(delta < 0 && (uint64_t)-delta < at - 68); /* backwards, after the metadata */
        at = (uint64_t)((int64_t)at + delta);
    }
    jp_check_pool_refs(j);
    for (uint64_t off = 68; off < size;) { /* every record, back to back, exactly filling the chunk */
        rd r = {f + start, size, off};
        uint64_t rsize = jp_rd_var(&r), type = jp_rd_var(&r);
        assert_true(rsize > 0 && off + rsize <= size);
        r.end = off + rsize;
        if (type == 0) {
            assert_int_equal(off, 68);
        } else if (type == 1) { /* every checkpoint is in the chain */
            size_t k = 0;
            while (k < nchain && chain[k] != off) k++;
            if (k == nchain) fail_msg("checkpoint at %llu is not in the chain", (unsigned long long)off);
        } else {
            jp_parse_event(j, &r, type);
        }
        off += rsize;
    }
    j->chunks++;
    return size;
}

/* Parse a whole file (heap jfr, caller frees). */
JP_UNUSED static jfr *jp_parse_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    struct stat sb;
    assert_int_equal(fstat(fileno(fp), &sb), 0);
    uint8_t *f = malloc((size_t)sb.st_size + 1);
    assert_non_null(f);
    assert_int_equal(fread(f, 1, (size_t)sb.st_size, fp), (size_t)sb.st_size);
    fclose(fp);
    jfr *j = calloc(1, sizeof *j);
    assert_non_null(j);
    for (size_t off = 0; off < (size_t)sb.st_size;) off += (size_t)jp_parse_chunk(j, f, (size_t)sb.st_size, off);
    free(f);
    return j;
}

#endif
