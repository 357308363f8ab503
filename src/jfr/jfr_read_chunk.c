/* jfr_read_chunk.c - the JFR reader's chunk loop: the chunks of the input one after another, each read on
 * its own.
 *
 * Per chunk: header checks; metadata (jfr_meta_read.c); roles (the classes and fields this reader needs,
 * found by name, and the selected event types); the checkpoint chain (jfr_read_pool.c); then every record
 * from offset 68 to the chunk end, decoding only the selected events (jfr_read_event.c); then the
 * aggregates are resolved into the profile (jfr_read_resolve.c) and everything per chunk is freed.
 */
#include "jfr_read_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- roles ------------------------------------------------------------------------------------------- */

/* The event types of each kind, and the fields their weight and class come from. */
static const struct {
    const char *name;
    js_jfr_read_kind kind;
    uint8_t ev;
    const char *weight, *weight2, *cls;
} event_types[] = {
    {"jdk.ExecutionSample", JS_JFR_READ_CPU, JS_JFRR_EV_PLAIN, NULL, NULL, NULL},
    {"jdk.NativeMethodSample", JS_JFR_READ_CPU, JS_JFRR_EV_PLAIN, NULL, NULL, NULL},
    {"profiler.WallClockSample", JS_JFR_READ_WALL, JS_JFRR_EV_WALL, "samples", NULL, NULL},
    {"jdk.ObjectAllocationInNewTLAB", JS_JFR_READ_ALLOC, JS_JFRR_EV_TLAB, "tlabSize", "allocationSize", "objectClass"},
    {"jdk.ObjectAllocationOutsideTLAB", JS_JFR_READ_ALLOC, JS_JFRR_EV_OUTSIDE, "allocationSize", NULL, "objectClass"},
    {"jdk.ObjectAllocationSample", JS_JFR_READ_ALLOC, JS_JFRR_EV_ASAMPLE, "weight", NULL, "objectClass"},
    {"jdk.JavaMonitorEnter", JS_JFR_READ_LOCK, JS_JFRR_EV_LOCK, "duration", NULL, "monitorClass"},
    {"jdk.ThreadPark", JS_JFR_READ_LOCK, JS_JFRR_EV_LOCK, "duration", NULL, "parkedClass"},
};

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
static void find_roles(js_jfrr_chunk *k, js_jfr_read_kind kind)
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
    k->trace_truncated = js_jfrr_meta_field(m, k->c_trace, "truncated");
    k->fr_method = field2(m, k->c_frame, "method", NULL);
    k->fr_line = field2(m, k->c_frame, "lineNumber", NULL);
    k->fr_type = field2(m, k->c_frame, "type", NULL);
    k->nev = 0;
    for (size_t i = 0; i < sizeof event_types / sizeof event_types[0]; i++) {
        int32_t c = event_types[i].kind == kind ? js_jfrr_meta_class(m, event_types[i].name) : -1;
        if (c < 0 || m->classes[c].id <= 1 || k->nev == JS_JFRR_MAX_EVENT_TYPES)
            continue; /* ids 0, 1: metadata, pools */
        js_jfrr_event_slot *e = &k->ev[k->nev++];
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

/* ---- chunks ------------------------------------------------------------------------------------------ */

/* Resets the chunk state, freeing what it holds; the pools' probes are added up in k->probes, which stays. */
void js_jfrr_chunk_free(js_jfrr_chunk *k)
{
    js_jfrr_meta_free(&k->meta);
    free(k->text.buf);
    js_jfrr_pool *pools[] = {&k->sym, &k->str, &k->ftype, &k->cls, &k->meth, &k->thread, &k->trace};
    uint64_t probes = k->probes;
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
        probes += pools[i]->probes;
        js_jfrr_pool_free(pools[i]);
    }
    free(k->frames);
    free(k->agg);
    memset(k, 0, sizeof *k);
    k->probes = probes;
    k->sym.size = k->str.size = k->ftype.size = k->cls.size = sizeof(js_jfrr_name_rec);
    k->meth.size = sizeof(js_jfrr_method_rec);
    k->thread.size = sizeof(js_jfrr_thread_rec);
    k->trace.size = sizeof(js_jfrr_trace_rec);
}

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
    if (v < JS_JFRR_HEADER || v >= size)
        return js_jfrr_fail(c, hdr_off, "%s offset %llu points %s", what, (unsigned long long)v,
                            v < JS_JFRR_HEADER ? "into the chunk header" : "past the end of the chunk");
    return 0;
}

/* Reads and checks the chunk header at base; *size, *cp, *meta get the chunk size and record offsets.
 * 0, -1, or for a chunk after the first that the file does not hold complete (see jfr_read.h, "Cut
 * recordings"; nothing else is read): 1 if its size is still 0 (never finished), 2 if the file ends
 * before the chunk does (its header, or the size it gives, runs past the end of the file). */
static int read_header(js_jfrr_reader *r, uint64_t base, uint64_t *size, uint64_t *cp, uint64_t *meta)
{
    js_jfrr_cur *c = &r->cur;
    uint8_t h[JS_JFRR_HEADER];
    uint64_t left = c->fsize - base;
    size_t got = left < JS_JFRR_HEADER ? (size_t)left : JS_JFRR_HEADER;
    errno = 0;
    if (c->read_at(c->ctx, base, h, got) != 0)
        return js_jfrr_fail(c, base, "read error: %s", errno ? strerror(errno) : "short read");
    if (left < JS_JFRR_HEADER) {
        if (base > 0 && memcmp(h, "FLR", got < 4 ? got : 4) == 0) return 2; /* cut inside a chunk header */
        return js_jfrr_fail(c, base, "%s (%llu bytes) is too short for a chunk header",
                            base ? "the rest of the file" : "the file", (unsigned long long)left);
    }
    if (memcmp(h, "FLR", 4) != 0)
        return js_jfrr_fail(c, base, base ? "bytes after the last chunk are not a JFR chunk (bad magic)"
                                          : "not a JFR file (bad magic)");
    unsigned major = (unsigned)be(h + 4, 2), minor = (unsigned)be(h + 6, 2);
    if (major != 1 && major != 2) return js_jfrr_fail(c, base + 4, "unsupported JFR version %u.%u", major, minor);
    *size = be(h + 8, 8);
    if (*size == 0 && base > 0) return 1;
    if (*size < JS_JFRR_HEADER)
        return js_jfrr_fail(c, base + 8, "chunk size %llu is smaller than the chunk header", (unsigned long long)*size);
    if (*size > left && base > 0) return 2;
    if (*size > left)
        return js_jfrr_fail(c, base + 8, "chunk size %llu points past the end of the file (%llu bytes left)",
                            (unsigned long long)*size, (unsigned long long)left);
    *cp = be(h + 16, 8);
    *meta = be(h + 24, 8);
    if (check_offset(c, base + 16, *cp, *size, "checkpoint") != 0 ||
        check_offset(c, base + 24, *meta, *size, "metadata") != 0)
        return -1;
    r->k.start_nanos = be(h + 32, 8);
    r->k.duration_nanos = be(h + 40, 8);
    r->k.start_ticks = be(h + 48, 8);
    r->k.tps = be(h + 56, 8);
    if (r->k.tps == 0) return js_jfrr_fail(c, base + 56, "ticks per second is 0");
    return 0;
}

/* Reads the metadata record at chunk offset off; 0 or -1. */
static int read_meta(js_jfrr_reader *r, uint64_t base, uint64_t end, uint64_t off)
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
static void set_range(js_jfrr_reader *r)
{
    const js_jfr_read_opts *o = r->o;
    r->rec_start = (int64_t)r->k.start_nanos;
    r->from = o->from_abs ? (__int128)o->from_ns : (__int128)r->rec_start + o->from_ns;
    r->to = o->to_abs ? (__int128)o->to_ns : (__int128)r->rec_start + o->to_ns;
}

/* Reads every chunk of the input into the profile; 0 or -1. */
int js_jfrr_read_chunks(js_jfrr_reader *r)
{
    js_jfrr_cur *c = &r->cur;
    if (c->fsize == 0) return js_jfrr_fail(c, 0, "empty file: not a JFR recording");
    for (uint64_t base = 0; base < c->fsize;) {
        uint64_t size = 0, cp = 0, meta = 0;
        js_jfrr_chunk_free(&r->k);
        int h = read_header(r, base, &size, &cp, &meta);
        if (h < 0) return -1;
        if (h > 0) {
            r->st.unfinished_at = base;
            r->st.unfinished_cut = h == 2;
            break;
        }
        if (r->st.chunks == 0) set_range(r);
        if (read_meta(r, base, base + size, meta) != 0) return -1;
        find_roles(&r->k, r->o->kind);
        if (js_jfrr_read_pools(r, base, base + size, cp) != 0 || js_jfrr_read_events(r, base, base + size) != 0 ||
            js_jfrr_resolve_chunk(r) != 0)
            return -1;
        r->st.chunks++;
        if (r->st.chunks == 1) r->st.start_ns = r->st.end_ns = (int64_t)r->k.start_nanos;
        int64_t end = (int64_t)(r->k.start_nanos + r->k.duration_nanos);
        if (end > r->st.end_ns) r->st.end_ns = end;
        base += size;
    }
    return 0;
}
