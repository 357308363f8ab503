/* jfr_read.c - see jfr_read.h. The chunk loop, the pools this reader keeps, event aggregation and resolution
 * into the profile. The cursor, strings, metadata and the generic decoder are in jfr_meta_read.c.
 *
 * Per chunk: header checks; metadata; roles (the classes and fields this reader needs, found by name);
 * the checkpoint chain from the header's offset backwards (each checkpoint must end before the next one
 * in the chain starts, so the walk is finite and reads every byte at most once); then every record from
 * offset 68 to the chunk end, decoding only the selected events; then the aggregates are resolved into
 * the profile and everything per chunk is freed.
 */
#define JS_JFR_READ_INTERNAL
#include "jfr_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HEADER 68
#define NONE UINT32_MAX
#define NAME_BUF (2 * JS_JFRR_NAME_MAX + 64)
#define MIN_NORMALIZE 4096
#define MAX_EVENT_TYPES 8
#define MAX_NAME_HOPS 4

/* ---- pool records ----------------------------------------------------------------------------------- */

enum { NR_NONE = 0, NR_TEXT, NR_SYM, NR_STR };
typedef struct {
    uint8_t how;
    uint64_t key;
    js_jfrr_str s;
} nameref;

typedef struct {
    nameref name;
} name_rec; /* Symbol, java.lang.String, FrameType entries; java.lang.Class */
typedef struct {
    uint64_t cls;
    nameref name;
} method_rec;
typedef struct {
    nameref jname, osname;
    uint64_t ostid;
    int8_t match; /* thread filter: -1 not yet known */
    uint32_t pframe;
} thread_rec;
typedef struct {
    uint32_t first, n;
} trace_rec;
typedef struct {
    uint64_t method, ftype;
    int32_t line;
    uint32_t pframe; /* resolved profile frame, NONE until needed */
} frame_rec;

/* ---- per-chunk state --------------------------------------------------------------------------------- */

enum { EV_PLAIN, EV_WALL, EV_TLAB, EV_OUTSIDE, EV_ASAMPLE, EV_LOCK };

static const struct {
    const char *name;
    js_jfr_read_kind kind;
    uint8_t ev;
    const char *weight, *weight2, *cls;
} event_types[] = {
    {"jdk.ExecutionSample", JS_JFR_READ_CPU, EV_PLAIN, NULL, NULL, NULL},
    {"jdk.NativeMethodSample", JS_JFR_READ_CPU, EV_PLAIN, NULL, NULL, NULL},
    {"profiler.WallClockSample", JS_JFR_READ_WALL, EV_WALL, "samples", NULL, NULL},
    {"jdk.ObjectAllocationInNewTLAB", JS_JFR_READ_ALLOC, EV_TLAB, "tlabSize", "allocationSize", "objectClass"},
    {"jdk.ObjectAllocationOutsideTLAB", JS_JFR_READ_ALLOC, EV_OUTSIDE, "allocationSize", NULL, "objectClass"},
    {"jdk.ObjectAllocationSample", JS_JFR_READ_ALLOC, EV_ASAMPLE, "weight", NULL, "objectClass"},
    {"jdk.JavaMonitorEnter", JS_JFR_READ_LOCK, EV_LOCK, "duration", NULL, "monitorClass"},
    {"jdk.ThreadPark", JS_JFR_READ_LOCK, EV_LOCK, "duration", NULL, "parkedClass"},
};

typedef struct {
    uint64_t id;
    int32_t cls;
    uint8_t ev;
    int32_t time, thread, stack, weight, weight2, klass; /* field indexes, -1 = absent */
} event_slot;

typedef struct {
    uint64_t trace, thread, cls, weight, n;
    uint8_t flag, used;
} agg_ent;

typedef struct {
    js_jfrr_meta meta;
    js_jfrr_arena text;
    js_jfrr_pool sym, str, ftype, cls, meth, thread, trace;
    frame_rec *frames;
    size_t nframes, cap_frames;
    agg_ent *agg;
    size_t nagg, cap_agg;
    /* roles: class indexes and field indexes, -1 when absent */
    int32_t c_sym, c_str, c_ftype, c_cls, c_meth, c_thread, c_trace, c_frame;
    int32_t sym_s, ftype_s, cls_name, meth_type, meth_name, th_os, th_ostid, th_java, trace_frames;
    int32_t fr_method, fr_line, fr_type;
    event_slot ev[MAX_EVENT_TYPES];
    int nev;
    uint64_t start_nanos, start_ticks, tps;
} chunk;

typedef struct {
    js_jfrr_cur cur;
    const js_jfr_read_opts *o;
    js_profile *p;
    js_jfr_read_stats st;
    chunk k;
    int64_t rec_start;
    __int128 from, to;
    uint32_t *scratch;
    size_t cap_scratch;
    size_t norm_mark;
    char name[NAME_BUF];
} reader;

/* Resets the chunk state, freeing what it holds. */
static void chunk_free(chunk *k)
{
    js_jfrr_meta_free(&k->meta);
    free(k->text.buf);
    js_jfrr_pool *pools[] = {&k->sym, &k->str, &k->ftype, &k->cls, &k->meth, &k->thread, &k->trace};
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) js_jfrr_pool_free(pools[i]);
    free(k->frames);
    free(k->agg);
    memset(k, 0, sizeof *k);
    k->sym.size = k->str.size = k->ftype.size = k->cls.size = sizeof(name_rec);
    k->meth.size = sizeof(method_rec);
    k->thread.size = sizeof(thread_rec);
    k->trace.size = sizeof(trace_rec);
}

/* Field index of cls's field named a, else b (may be NULL), else -1. */
static int32_t field2(const js_jfrr_meta *m, int32_t cls, const char *a, const char *b)
{
    int32_t i = js_jfrr_meta_field(m, cls, a);
    if (i < 0 && b) i = js_jfrr_meta_field(m, cls, b);
    return i < JS_JFRR_CAPTURE ? i : -1;
}

/* The single-string field of a simple type: the field named name, else field 0 of a one-field class. */
static int32_t text_field(const js_jfrr_meta *m, int32_t cls, const char *name)
{
    int32_t i = field2(m, cls, name, NULL);
    if (i < 0 && cls >= 0 && m->classes[cls].nfields == 1) i = 0;
    return i;
}

/* Finds the classes and fields this reader uses, and the selected event types. */
static void find_roles(chunk *k, js_jfr_read_kind kind)
{
    const js_jfrr_meta *m = &k->meta;
    k->c_sym = js_jfrr_meta_class(m, "jdk.types.Symbol");
    k->c_str = js_jfrr_meta_class(m, "java.lang.String");
    k->c_ftype = js_jfrr_meta_class(m, "jdk.types.FrameType");
    k->c_cls = js_jfrr_meta_class(m, "java.lang.Class");
    k->c_meth = js_jfrr_meta_class(m, "jdk.types.Method");
    k->c_thread = js_jfrr_meta_class(m, "java.lang.Thread");
    k->c_trace = js_jfrr_meta_class(m, "jdk.types.StackTrace");
    k->c_frame = js_jfrr_meta_class(m, "jdk.types.StackFrame");
    k->sym_s = text_field(m, k->c_sym, "string");
    k->ftype_s = text_field(m, k->c_ftype, "description");
    k->cls_name = field2(m, k->c_cls, "name", NULL);
    k->meth_type = field2(m, k->c_meth, "type", NULL);
    k->meth_name = field2(m, k->c_meth, "name", NULL);
    k->th_os = field2(m, k->c_thread, "osName", NULL);
    k->th_ostid = field2(m, k->c_thread, "osThreadId", NULL);
    k->th_java = field2(m, k->c_thread, "javaName", NULL);
    k->trace_frames = js_jfrr_meta_field(m, k->c_trace, "frames");
    k->fr_method = field2(m, k->c_frame, "method", NULL);
    k->fr_line = field2(m, k->c_frame, "lineNumber", NULL);
    k->fr_type = field2(m, k->c_frame, "type", NULL);
    k->nev = 0;
    for (size_t i = 0; i < sizeof event_types / sizeof event_types[0]; i++) {
        int32_t c = event_types[i].kind == kind ? js_jfrr_meta_class(m, event_types[i].name) : -1;
        if (c < 0 || m->classes[c].id <= 1 || k->nev == MAX_EVENT_TYPES) continue; /* ids 0, 1: metadata, pools */
        event_slot *e = &k->ev[k->nev++];
        e->id = m->classes[c].id;
        e->cls = c;
        e->ev = event_types[i].ev;
        e->time = field2(m, c, "startTime", NULL);
        e->thread = field2(m, c, "sampledThread", "eventThread");
        e->stack = field2(m, c, "stackTrace", NULL);
        e->weight = event_types[i].weight ? field2(m, c, event_types[i].weight, NULL) : -1;
        e->weight2 = event_types[i].weight2 ? field2(m, c, event_types[i].weight2, NULL) : -1;
        e->klass = event_types[i].cls ? field2(m, c, event_types[i].cls, NULL) : -1;
    }
}

/* ---- pools ------------------------------------------------------------------------------------------- */

/* A name reference from captured field i of class cls: a Symbol or String pool key, or inline text. */
static nameref to_name(const chunk *k, int32_t cls, int32_t i, const js_jfrr_val *vals)
{
    nameref n = {0};
    if (cls < 0 || i < 0 || !vals[i].set) return n;
    const js_jfrr_class *c = &k->meta.classes[cls];
    const js_jfrr_field *f = c->prim ? NULL : &k->meta.fields[c->first + (uint32_t)i];
    if (f && f->cp) {
        n.how = f->cls == k->c_sym ? NR_SYM : f->cls == k->c_str ? NR_STR : NR_NONE;
        n.key = vals[i].u;
    } else if (!f ? c->prim == JS_JFRR_P_STRING : (f->cls >= 0 && k->meta.classes[f->cls].prim == JS_JFRR_P_STRING)) {
        n.how = NR_TEXT;
        n.s = vals[i].s;
    }
    return n;
}

/* Text a name reference resolves to ("" when it does not). */
static const char *resolve(const chunk *k, nameref n)
{
    for (int hop = 0; hop < MAX_NAME_HOPS; hop++) {
        const name_rec *r = NULL;
        if (n.how == NR_TEXT && n.s.kind == JS_JFRR_S_TEXT) return js_jfrr_text(&k->text, &n.s);
        if (n.how == NR_TEXT && n.s.kind == JS_JFRR_S_REF) r = js_jfrr_pool_get(&k->str, n.s.key);
        else if (n.how == NR_SYM) r = js_jfrr_pool_get(&k->sym, n.key);
        else if (n.how == NR_STR) r = js_jfrr_pool_get(&k->str, n.key);
        if (!r) return "";
        n = r->name;
    }
    return "";
}

/* Reads one stack trace entry (frames array decoded inline); 0 or -1. */
static int read_trace(reader *r, uint64_t key)
{
    chunk *k = &r->k;
    const js_jfrr_class *c = &k->meta.classes[k->c_trace];
    uint32_t first = (uint32_t)k->nframes, n = 0;
    for (uint32_t i = 0; i < c->nfields; i++) {
        const js_jfrr_field *f = &k->meta.fields[c->first + i];
        if ((int32_t)i != k->trace_frames || !f->array || f->cp || f->cls != k->c_frame || f->cls < 0 ||
            k->meta.classes[f->cls].prim != JS_JFRR_P_NONE) {
            if (js_jfrr_field_value(&r->cur, &k->meta, f, NULL, NULL, 1) != 0) return -1;
            continue;
        }
        uint64_t cnt;
        if (js_jfrr_count(&r->cur, &cnt, "stack frame") != 0) return -1;
        if (k->nframes + cnt > NONE - 1) return js_jfrr_fail(&r->cur, r->cur.pos, "too many stack frames");
        if (k->nframes + cnt > k->cap_frames) {
            size_t cap = k->cap_frames ? k->cap_frames : 1024;
            while (cap < k->nframes + cnt) cap *= 2;
            frame_rec *fr = realloc(k->frames, cap * sizeof *fr);
            if (!fr) return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory for stack frames");
            k->frames = fr;
            k->cap_frames = cap;
        }
        for (uint64_t j = 0; j < cnt; j++) {
            js_jfrr_val v[JS_JFRR_CAPTURE];
            if (js_jfrr_decode(&r->cur, &k->meta, k->c_frame, NULL, v, JS_JFRR_CAPTURE) != 0) return -1;
            frame_rec *fr = &k->frames[k->nframes++];
            fr->method = k->fr_method >= 0 && v[k->fr_method].set ? v[k->fr_method].u : 0;
            fr->line = k->fr_line >= 0 && v[k->fr_line].set ? (int32_t)(uint32_t)v[k->fr_line].u : -1;
            fr->ftype = k->fr_type >= 0 && v[k->fr_type].set ? v[k->fr_type].u : UINT64_MAX;
            fr->pframe = NONE;
            n++;
        }
    }
    trace_rec *t = js_jfrr_pool_put(&k->trace, key);
    if (!t) return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory for stack traces");
    t->first = first;
    t->n = n;
    return 0;
}

/* Reads one pool entry's value of class cls, keeping it when it is of a kept kind; 0 or -1. */
static int read_entry(reader *r, int32_t cls, uint64_t key)
{
    chunk *k = &r->k;
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
        thread_rec *t = rec;
        t->osname = to_name(k, cls, k->th_os, v);
        t->jname = to_name(k, cls, k->th_java, v);
        t->ostid = k->th_ostid >= 0 && v[k->th_ostid].set ? v[k->th_ostid].u : 0;
        t->match = -1;
        t->pframe = NONE;
    } else if (cls == k->c_meth) {
        method_rec *me = rec;
        me->cls = k->meth_type >= 0 && v[k->meth_type].set ? v[k->meth_type].u : 0;
        me->name = to_name(k, cls, k->meth_name, v);
    } else {
        int32_t fi = cls == k->c_sym ? k->sym_s : cls == k->c_ftype ? k->ftype_s : cls == k->c_cls ? k->cls_name : 0;
        ((name_rec *)rec)->name = to_name(k, cls, fi, v);
    }
    return 0;
}

/* Reads one checkpoint record at chunk offset off; *prev gets the previous one's offset (0 = none). */
static int read_checkpoint(reader *r, uint64_t base, uint64_t chunk_end, uint64_t off, uint64_t *prev)
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
    if (back > off - HEADER)
        return js_jfrr_fail(c, dat, "checkpoint delta %lld points before the first record", (long long)d);
    *prev = off - back;
    return 0;
}

/* Walks the checkpoint chain from the header's offset; 0 or -1. */
static int read_pools(reader *r, uint64_t base, uint64_t chunk_end, uint64_t cp_off)
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

/* ---- events ------------------------------------------------------------------------------------------ */

/* a + b, saturating. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* A Java long read as a size or count: negative values count as 0. */
static uint64_t non_negative(uint64_t v)
{
    return (int64_t)v < 0 ? 0 : v;
}

/* Hash slot of an aggregation key in a table of cap (a power of two) slots. */
static size_t agg_slot(const agg_ent *e, size_t cap)
{
    uint64_t h = e->trace * 0x9e3779b97f4a7c15ull ^ e->thread * 0xc2b2ae3d27d4eb4full ^ e->cls * 0x165667b19e3779f9ull;
    h ^= e->flag;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* Rebuilds the aggregation table with cap slots; 0 or -1. */
static int agg_rehash(chunk *k, size_t cap)
{
    agg_ent *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < k->cap_agg; i++) {
        if (!k->agg[i].used) continue;
        size_t h = agg_slot(&k->agg[i], cap);
        while (t[h].used) h = (h + 1) & (cap - 1);
        t[h] = k->agg[i];
    }
    free(k->agg);
    k->agg = t;
    k->cap_agg = cap;
    return 0;
}

/* Adds one event's weight under (trace, thread, class, flag); 0 or -1 without memory. */
static int agg_add(reader *r, const agg_ent *key, uint64_t w)
{
    chunk *k = &r->k;
    if ((k->nagg + 1) * 2 > k->cap_agg && agg_rehash(k, k->cap_agg ? k->cap_agg * 2 : 1024) != 0)
        return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory aggregating events");
    size_t h = agg_slot(key, k->cap_agg);
    for (; k->agg[h].used; h = (h + 1) & (k->cap_agg - 1)) {
        agg_ent *e = &k->agg[h];
        if (e->trace == key->trace && e->thread == key->thread && e->cls == key->cls && e->flag == key->flag) {
            e->weight = sat_add(e->weight, w);
            e->n++;
            return 0;
        }
    }
    k->agg[h] = *key;
    k->agg[h].weight = w;
    k->agg[h].n = 1;
    k->agg[h].used = 1;
    k->nagg++;
    return 0;
}

/* ns since the epoch of a tick value, on the chunk's time base. */
static __int128 event_time(const chunk *k, uint64_t ticks)
{
    return (__int128)k->start_nanos + (__int128)(int64_t)(ticks - k->start_ticks) * 1000000000 / (__int128)k->tps;
}

/* A duration in ticks as ns (negative = 0, saturating). */
static uint64_t ticks_to_ns(const chunk *k, uint64_t ticks)
{
    if ((int64_t)ticks <= 0) return 0;
    __int128 ns = (__int128)ticks * 1000000000 / (__int128)k->tps;
    return ns > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* Captured value of field i, or 0. */
static uint64_t val_of(const js_jfrr_val *v, int32_t i)
{
    return i >= 0 && v[i].set ? v[i].u : 0;
}

/* The `samples` int of a wall-clock event (negative = 0). */
static uint64_t wall_samples(uint64_t v)
{
    int32_t n = (int32_t)(uint32_t)v;
    return n < 0 ? 0 : (uint64_t)n;
}

/* Decodes one selected event and aggregates it (unless outside the time range); 0 or -1. */
static int read_event(reader *r, const event_slot *e)
{
    chunk *k = &r->k;
    js_jfrr_val v[JS_JFRR_CAPTURE];
    if (js_jfrr_decode(&r->cur, &k->meta, e->cls, NULL, v, JS_JFRR_CAPTURE) != 0) return -1;
    if (r->o->has_from || r->o->has_to) {
        __int128 t = event_time(k, val_of(v, e->time));
        if ((r->o->has_from && t < r->from) || (r->o->has_to && t >= r->to)) {
            r->st.skipped++;
            return 0;
        }
    }
    agg_ent key = {.trace = val_of(v, e->stack), .thread = val_of(v, e->thread), .cls = val_of(v, e->klass)};
    uint64_t w = 1;
    switch (e->ev) {
    case EV_WALL: w = e->weight >= 0 && v[e->weight].set ? wall_samples(v[e->weight].u) : 1; break;
    case EV_TLAB: w = non_negative(val_of(v, e->weight)) ? non_negative(val_of(v, e->weight))
                                                         : non_negative(val_of(v, e->weight2)); break;
    case EV_OUTSIDE:
    case EV_ASAMPLE: w = non_negative(val_of(v, e->weight)); break;
    case EV_LOCK: w = ticks_to_ns(k, val_of(v, e->weight)); break;
    default: break;
    }
    key.flag = e->ev == EV_OUTSIDE || e->ev == EV_ASAMPLE ? 'k' : 'i';
    return agg_add(r, &key, w);
}

/* Reads every record of the chunk from its first one, decoding the selected events; 0 or -1. */
static int read_events(reader *r, uint64_t base, uint64_t end)
{
    js_jfrr_cur *c = &r->cur;
    for (uint64_t pos = base + HEADER; pos < end;) {
        uint64_t size, type;
        c->pos = pos;
        c->end = end;
        if (js_jfrr_varint(c, &size) != 0) return -1;
        if (size == 0) return js_jfrr_fail(c, pos, "zero-size record");
        if (size > end - pos)
            return js_jfrr_fail(c, pos, "record size %llu points past the end of the chunk", (unsigned long long)size);
        c->end = pos + size;
        if (js_jfrr_varint(c, &type) != 0) return -1;
        for (int i = 0; i < r->k.nev; i++)
            if (r->k.ev[i].id == type) {
                if (read_event(r, &r->k.ev[i]) != 0) return -1;
                break;
            }
        pos += size;
    }
    return 0;
}

/* ---- resolution into the profile --------------------------------------------------------------------- */

/* js_frame_type of a FrameType pool key, by its description; JIT when unknown. */
static js_frame_type frame_type(const chunk *k, uint64_t key)
{
    static const struct {
        const char *desc;
        js_frame_type t;
    } types[] = {
        {"Interpreted", JS_FT_INTERPRETED}, {"JIT compiled", JS_FT_JIT}, {"Inlined", JS_FT_INLINED},
        {"Native", JS_FT_NATIVE},           {"C++", JS_FT_CPP},          {"Kernel", JS_FT_KERNEL},
        {"C1 compiled", JS_FT_C1},
    };
    const name_rec *n = js_jfrr_pool_get(&k->ftype, key);
    const char *d = n ? resolve(k, n->name) : "";
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(d, types[i].desc) == 0) return types[i].t;
    return JS_FT_JIT;
}

/* Profile frame of one stack frame (named and interned on first use); NONE without memory. */
static uint32_t frame_index(reader *r, frame_rec *fr)
{
    if (fr->pframe != NONE) return fr->pframe;
    const chunk *k = &r->k;
    const method_rec *me = js_jfrr_pool_get(&k->meth, fr->method);
    js_frame_type t = frame_type(k, fr->ftype);
    size_t o = 0;
    r->name[0] = 0;
    const char *mn = me ? resolve(k, me->name) : "";
    if (!*mn) {
        t = JS_FT_ERROR;
        js_jfrr_append(r->name, &o, NAME_BUF, "[unknown_method]", 16);
    } else {
        const name_rec *cl = js_jfrr_pool_get(&k->cls, me->cls);
        const char *cn = cl ? resolve(k, cl->name) : "";
        if (!*cn && mn[0] == '[' && mn[strlen(mn) - 1] == ']') t = JS_FT_ERROR; /* a profiler's pseudo frame */
        js_jfrr_put_class(r->name, &o, NAME_BUF, cn);
        if (o) js_jfrr_append(r->name, &o, NAME_BUF, ".", 1);
        js_jfrr_append(r->name, &o, NAME_BUF, mn, strlen(mn));
        if (r->o->lines && fr->line > 0) {
            char line[16];
            js_jfrr_append(r->name, &o, NAME_BUF, line, (size_t)snprintf(line, sizeof line, ":%d", fr->line));
        }
    }
    fr->pframe = js_profile_frame(r->p, r->name, t);
    return fr->pframe;
}

/* A thread's name: its Java name, else its OS name ("" when unknown). */
static const char *thread_name(const chunk *k, const thread_rec *t)
{
    const char *n = t ? resolve(k, t->jname) : "";
    return n[0] || !t ? n : resolve(k, t->osname);
}

/* 1 if the thread passes the thread filter (a glob with '*' or '?', else a substring). */
static int thread_ok(reader *r, thread_rec *t)
{
    const char *pat = r->o->thread;
    if (!pat || !*pat) return 1;
    if (t && t->match >= 0) return t->match;
    const char *n = thread_name(&r->k, t);
    int m = strpbrk(pat, "*?") ? js_glob_match(pat, n) : strstr(n, pat) != NULL;
    if (t) t->match = (int8_t)m;
    return m;
}

/* Profile frame "[name tid=N]" of a thread (t may be NULL); NONE without memory. */
static uint32_t thread_frame(reader *r, thread_rec *t)
{
    if (t && t->pframe != NONE) return t->pframe;
    const char *n = thread_name(&r->k, t);
    if (!t) snprintf(r->name, NAME_BUF, "[unknown thread]");
    else if (n[0]) snprintf(r->name, NAME_BUF, "[%.*s tid=%llu]", JS_JFRR_NAME_MAX, n, (unsigned long long)t->ostid);
    else snprintf(r->name, NAME_BUF, "[tid=%llu]", (unsigned long long)t->ostid);
    uint32_t f = js_profile_frame(r->p, r->name, JS_FT_THREAD);
    if (t) t->pframe = f;
    return f;
}

/* Profile frame of an allocated or locked class ("java.lang.String_[i]"); NONE if unnamed or no memory. */
static uint32_t class_frame(reader *r, uint64_t key, uint8_t flag)
{
    const name_rec *cl = js_jfrr_pool_get(&r->k.cls, key);
    const char *cn = cl ? resolve(&r->k, cl->name) : "";
    size_t o = 0;
    r->name[0] = 0;
    js_jfrr_put_class(r->name, &o, NAME_BUF, cn);
    if (!o) return NONE;
    js_jfrr_append(r->name, &o, NAME_BUF, flag == 'k' ? "_[k]" : "_[i]", 4);
    return js_profile_frame(r->p, r->name, flag == 'k' ? JS_FT_KERNEL : JS_FT_INLINED);
}

/* Makes room for n frame indexes in the scratch stack; 0 or -1. */
static int scratch_room(reader *r, size_t n)
{
    if (n <= r->cap_scratch) return 0;
    size_t cap = r->cap_scratch ? r->cap_scratch : 256;
    while (cap < n) cap *= 2;
    uint32_t *s = realloc(r->scratch, cap * sizeof *s);
    if (!s) return -1;
    r->scratch = s;
    r->cap_scratch = cap;
    return 0;
}

/* Adds one aggregate as a profile stack, root first; 0, 1 if filtered out, or -1 without memory. */
static int add_stack(reader *r, const agg_ent *a)
{
    chunk *k = &r->k;
    thread_rec *t = js_jfrr_pool_get(&k->thread, a->thread);
    if (!thread_ok(r, t)) return 1;
    const trace_rec *tr = js_jfrr_pool_get(&k->trace, a->trace);
    uint32_t n = tr ? tr->n : 0, d = 0;
    if (scratch_room(r, (size_t)n + 2) != 0) return -1;
    if (r->o->threads) r->scratch[d++] = thread_frame(r, t);
    for (uint32_t j = n; j-- > 0;) r->scratch[d++] = frame_index(r, &k->frames[tr->first + j]);
    if (a->cls) {
        uint32_t f = class_frame(r, a->cls, a->flag);
        if (f != NONE) r->scratch[d++] = f;
    }
    for (uint32_t i = 0; i < d; i++)
        if (r->scratch[i] == NONE) return -1;
    return js_profile_add(r->p, r->scratch, d, a->weight);
}

/* Resolves the chunk's aggregates into the profile, merging it when it has grown; 0 or -1. */
static int resolve_chunk(reader *r)
{
    chunk *k = &r->k;
    for (size_t i = 0; i < k->cap_agg; i++) {
        if (!k->agg[i].used) continue;
        int rc = add_stack(r, &k->agg[i]);
        if (rc < 0) return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory building the profile");
        if (rc) r->st.skipped += k->agg[i].n;
        else r->st.events += k->agg[i].n;
    }
    if (r->p->nstacks > r->norm_mark) {
        if (js_profile_normalize(r->p) != 0)
            return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory merging the profile");
        r->norm_mark = r->p->nstacks * 2 > MIN_NORMALIZE ? r->p->nstacks * 2 : MIN_NORMALIZE;
    }
    return 0;
}

/* ---- chunks ------------------------------------------------------------------------------------------ */

/* Big-endian integer of n bytes. */
static uint64_t be(const uint8_t *b, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | b[i];
    return v;
}

/* Checks an offset field of the header (at hdr_off) against the chunk size; 0 or -1. */
static int check_offset(js_jfrr_cur *c, uint64_t hdr_off, uint64_t v, uint64_t size, const char *what)
{
    if (v == 0) return js_jfrr_fail(c, hdr_off, "%s offset is 0 (unfinished recording?)", what);
    if (v < HEADER || v >= size)
        return js_jfrr_fail(c, hdr_off, "%s offset %llu points %s", what, (unsigned long long)v,
                            v < HEADER ? "into the chunk header" : "past the end of the chunk");
    return 0;
}

/* Reads and checks the chunk header at base; *size, *cp, *meta get the chunk size and record offsets. */
static int read_header(reader *r, uint64_t base, uint64_t *size, uint64_t *cp, uint64_t *meta)
{
    js_jfrr_cur *c = &r->cur;
    uint8_t h[HEADER];
    uint64_t left = c->fsize - base;
    if (left < HEADER)
        return js_jfrr_fail(c, base, "%s (%llu bytes) is too short for a chunk header",
                            base ? "the rest of the file" : "the file", (unsigned long long)left);
    errno = 0;
    if (c->read_at(c->ctx, base, h, HEADER) != 0)
        return js_jfrr_fail(c, base, "read error: %s", errno ? strerror(errno) : "short read");
    if (memcmp(h, "FLR", 4) != 0)
        return js_jfrr_fail(c, base, base ? "bytes after the last chunk are not a JFR chunk (bad magic)"
                                          : "not a JFR file (bad magic)");
    unsigned major = (unsigned)be(h + 4, 2), minor = (unsigned)be(h + 6, 2);
    if (major != 1 && major != 2) return js_jfrr_fail(c, base + 4, "unsupported JFR version %u.%u", major, minor);
    *size = be(h + 8, 8);
    if (*size < HEADER)
        return js_jfrr_fail(c, base + 8, "chunk size %llu is smaller than the chunk header", (unsigned long long)*size);
    if (*size > left)
        return js_jfrr_fail(c, base + 8, "chunk size %llu points past the end of the file (%llu bytes left)",
                            (unsigned long long)*size, (unsigned long long)left);
    *cp = be(h + 16, 8);
    *meta = be(h + 24, 8);
    if (check_offset(c, base + 16, *cp, *size, "checkpoint") != 0 ||
        check_offset(c, base + 24, *meta, *size, "metadata") != 0)
        return -1;
    r->k.start_nanos = be(h + 32, 8);
    r->k.start_ticks = be(h + 48, 8);
    r->k.tps = be(h + 56, 8);
    if (r->k.tps == 0) return js_jfrr_fail(c, base + 56, "ticks per second is 0");
    return 0;
}

/* Reads the metadata record at chunk offset off; 0 or -1. */
static int read_meta(reader *r, uint64_t base, uint64_t end, uint64_t off)
{
    js_jfrr_cur *c = &r->cur;
    uint64_t start = base + off, size, type;
    c->pos = start;
    c->end = end;
    if (js_jfrr_varint(c, &size) != 0) return -1;
    if (size == 0) return js_jfrr_fail(c, start, "zero-size metadata record");
    if (size > end - start) return js_jfrr_fail(c, start, "metadata size points past the end of the chunk");
    if (size > JS_JFRR_META_MAX)
        return js_jfrr_fail(c, start, "metadata event of %llu bytes is too large", (unsigned long long)size);
    c->end = start + size;
    if (js_jfrr_varint(c, &type) != 0) return -1;
    if (type != 0)
        return js_jfrr_fail(c, start, "expected the metadata event (type 0), found type %llu",
                            (unsigned long long)type);
    return js_jfrr_meta_parse(c, &r->k.meta);
}

/* Sets the time range from the options once the recording start is known. */
static void set_range(reader *r)
{
    const js_jfr_read_opts *o = r->o;
    r->rec_start = (int64_t)r->k.start_nanos;
    r->from = o->from_abs ? (__int128)o->from_ns : (__int128)r->rec_start + o->from_ns;
    r->to = o->to_abs ? (__int128)o->to_ns : (__int128)r->rec_start + o->to_ns;
}

/* Reads every chunk of the input into the profile; 0 or -1. */
static int read_chunks(reader *r)
{
    js_jfrr_cur *c = &r->cur;
    if (c->fsize == 0) return js_jfrr_fail(c, 0, "empty file: not a JFR recording");
    for (uint64_t base = 0; base < c->fsize;) {
        uint64_t size = 0, cp = 0, meta = 0;
        chunk_free(&r->k);
        if (read_header(r, base, &size, &cp, &meta) != 0) return -1;
        if (r->st.chunks == 0) set_range(r);
        if (read_meta(r, base, base + size, meta) != 0) return -1;
        find_roles(&r->k, r->o->kind);
        if (read_pools(r, base, base + size, cp) != 0 || read_events(r, base, base + size) != 0 ||
            resolve_chunk(r) != 0)
            return -1;
        r->st.chunks++;
        base += size;
    }
    return 0;
}

static const char *const kind_units[] = {"samples", "samples", "bytes", "ns"};

/* ---- API --------------------------------------------------------------------------------------------- */

/* Runs the reader over a source of size bytes. */
static int run(js_jfrr_read_at fn, void *ctx, uint64_t size, const char *name, const js_jfr_read_opts *o,
               js_profile *p, js_jfr_read_stats *stats, char *err, size_t errlen)
{
    static const js_jfr_read_opts defaults;
    if (err && errlen) err[0] = 0;
    if (!o) o = &defaults;
    reader *r = calloc(1, sizeof *r);
    size_t wcap = size < JS_JFRR_WINDOW ? (size_t)size + 16 : JS_JFRR_WINDOW;
    uint8_t *win = malloc(wcap);
    int rc = -1;
    if (!r || !win || (unsigned)o->kind > JS_JFR_READ_LOCK) {
        if (err && errlen) snprintf(err, errlen, "%s: %s", name, r && win ? "bad options" : "out of memory");
        goto out;
    }
    r->cur = (js_jfrr_cur){
        .read_at = fn, .ctx = ctx, .fsize = size, .win = win, .wcap = wcap, .name = name, .err = err, .errlen = errlen};
    r->o = o;
    r->p = p;
    r->norm_mark = MIN_NORMALIZE + p->nstacks;
    chunk_free(&r->k);
    snprintf(p->unit, sizeof p->unit, "%s", kind_units[o->kind]);
    rc = read_chunks(r);
    chunk_free(&r->k);
    if (stats) *stats = r->st;
out:
    if (r) free(r->scratch);
    free(r);
    free(win);
    return rc;
}

/* Reads the JFR file fd (seekable) into p; 0 or -1. */
int js_jfr_read_fd(int fd, const char *name, const js_jfr_read_opts *o, js_profile *p, js_jfr_read_stats *stats,
                   char *err, size_t errlen)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (err && errlen) snprintf(err, errlen, "%s: JFR input must be a regular file", name);
        return -1;
    }
    js_jfrr_fd_src src = {fd};
    return run(js_jfrr_fd_read_at, &src, (uint64_t)sb.st_size, name, o, p, stats, err, errlen);
}

/* Reads a JFR recording held in memory into p; 0 or -1. */
int js_jfr_read_mem(const void *data, size_t len, const char *name, const js_jfr_read_opts *o, js_profile *p,
                    js_jfr_read_stats *stats, char *err, size_t errlen)
{
    js_jfrr_mem_src src = {data, len};
    return run(js_jfrr_mem_read_at, &src, len, name, o, p, stats, err, errlen);
}
