/* pprof_read.c - see pprof.h: the pprof reader's input and tables.
 *
 * The input is inflated as a stream into a window; the Profile's top-level fields are read one at a time (a
 * varint tag, then the field: a length-delimited one is copied whole into a buffer of at most
 * JS_PPROF_FIELD_MAX bytes) and each message is unpacked by protobuf-c through an allocator that counts and caps
 * what it holds. Tables keep only what resolution needs; samples are summed per distinct (location ids, labels)
 * as they come, and a Sample whose bytes equal the one before it is summed without being unpacked again (one
 * Sample per sample repeats them).
 */
#include "pprof_read_int.h"

#include <stdlib.h>
#include <string.h>

#include "pprof_int.h"

#define IO_BUF (256u << 10)
#define UNPACK_MAX (128u << 20) /* what protobuf-c may hold for one message */
#define PREV_MAX 4096           /* a Sample up to this size is remembered for the next one */

/* ---- the input stream ---- */

/* Reads up to n raw (compressed) bytes into buf; their number, 0 at the end, -1 on an I/O error. */
static long raw_read(js_pprofr *r, unsigned char *buf, size_t n)
{
    if (r->mem) {
        size_t k = r->mem_len - r->mem_pos < n ? r->mem_len - r->mem_pos : n;
        memcpy(buf, r->mem + r->mem_pos, k);
        r->mem_pos += k;
        return (long)k;
    }
    size_t k = fread(buf, 1, n, r->f);
    return ferror(r->f) ? -1 : (long)k;
}

/* Refills the window after the bytes in it were read; 1 with bytes, 0 at the end of the input, -1 on error. */
static int refill(js_pprofr *r)
{
    r->base += r->len;
    r->pos = r->len = 0;
    uint64_t max = r->o->max_bytes ? r->o->max_bytes : JS_PPROF_READ_MAX;
    if (r->base >= max)
        return js_pprofr_fail(r, r->base, "the profile is larger than %llu bytes decompressed (a gzip bomb?); not "
                              "read further", (unsigned long long)max);
    if (!r->gz) {
        long k = raw_read(r, r->win, r->io_cap);
        if (k < 0) return js_pprofr_fail(r, r->base, "read error");
        r->len = (size_t)k;
        if (r->base + r->len > max) r->len = (size_t)(max - r->base);
        return k > 0;
    }
    while (r->len == 0) {
        if (r->z.avail_in == 0 && !r->in_eof) {
            long k = raw_read(r, r->in, r->io_cap);
            if (k < 0) return js_pprofr_fail(r, r->base, "read error");
            r->in_eof = k == 0;
            r->z.next_in = r->in;
            r->z.avail_in = (uInt)k;
        }
        if (r->gz_end) { /* a member ended: another may follow (as gzip concatenates them), else the input ends */
            if (r->z.avail_in == 0 && r->in_eof) return 0;
            if (r->z.avail_in < 2 && !r->in_eof) { /* keep the byte, read more behind it */
                memmove(r->in, r->z.next_in, r->z.avail_in);
                long k = raw_read(r, r->in + r->z.avail_in, r->io_cap - r->z.avail_in);
                if (k < 0) return js_pprofr_fail(r, r->base, "read error");
                r->in_eof = k == 0;
                r->z.next_in = r->in;
                r->z.avail_in += (uInt)k;
                continue;
            }
            if (r->z.avail_in < 2 || r->z.next_in[0] != 0x1f || r->z.next_in[1] != 0x8b)
                return js_pprofr_fail(r, r->base, "bytes after the end of the gzip stream");
            if (inflateReset(&r->z) != Z_OK) return js_pprofr_fail(r, r->base, "gzip reset failed");
            r->gz_end = 0;
        }
        r->z.next_out = r->win;
        r->z.avail_out = r->io_cap;
        int rc = inflate(&r->z, Z_NO_FLUSH);
        r->len = r->io_cap - r->z.avail_out;
        if (rc == Z_STREAM_END) r->gz_end = 1;
        else if (rc == Z_BUF_ERROR && r->in_eof && r->z.avail_in == 0)
            return js_pprofr_fail(r, r->base + r->len, "the gzip stream is cut short");
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            return js_pprofr_fail(r, r->base + r->len, "corrupt gzip data (%s)", r->z.msg ? r->z.msg : "zlib error");
    }
    if (r->base + r->len > max) r->len = (size_t)(max - r->base);
    return 1;
}

/* The next byte in *b; 1, 0 at the end of the input, -1 on error. */
static int next_byte(js_pprofr *r, unsigned char *b)
{
    if (r->pos == r->len) {
        int rc = refill(r);
        if (rc <= 0) return rc;
    }
    *b = r->win[r->pos++];
    return 1;
}

/* A varint of the stream; 1, 0 at the end of the input before its first byte, -1 on error or a cut varint. */
static int stream_varint(js_pprofr *r, uint64_t *v)
{
    uint64_t off = r->base + r->pos, x = 0;
    for (int i = 0; i < 10; i++) {
        unsigned char b;
        int rc = next_byte(r, &b);
        if (rc < 0) return -1;
        if (rc == 0) return i == 0 ? 0 : js_pprofr_fail(r, off, "the profile ends inside a varint");
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return js_pprofr_fail(r, off, "a varint longer than 10 bytes");
}

/* Makes r->field hold at least need bytes, doubling, never past most; 0, or -1. */
static int field_room(js_pprofr *r, size_t need, size_t most, uint64_t off)
{
    if (need <= r->cap_field) return 0;
    size_t cap = r->cap_field ? r->cap_field : 4096;
    while (cap < need) cap = cap > most / 2 ? most : cap * 2;
    unsigned char *b = realloc(r->field, cap);
    if (!b) return js_pprofr_fail(r, off, "out of memory for a field of %zu bytes", most);
    r->field = b;
    r->cap_field = cap;
    return 0;
}

/* Reads n bytes of the stream into r->field, grown as the bytes come (a field's stated size alone, which a
 * crafted file sets, allocates nothing); 0, or -1 on error or the end of the input. */
static int stream_bytes(js_pprofr *r, size_t n)
{
    uint64_t off = r->base + r->pos;
    for (size_t got = 0; got < n;) {
        if (r->pos == r->len) {
            int rc = refill(r);
            if (rc < 0) return -1;
            if (rc == 0) return js_pprofr_fail(r, off, "the profile ends inside a field of %zu bytes", n);
        }
        size_t take = r->len - r->pos < n - got ? r->len - r->pos : n - got;
        if (field_room(r, got + take, n, off) != 0) return -1;
        memcpy(r->field + got, r->win + r->pos, take);
        r->pos += take;
        got += take;
    }
    return 0;
}

/* Skips n bytes of the stream; 0, or -1. */
static int stream_skip(js_pprofr *r, uint64_t n)
{
    uint64_t off = r->base + r->pos;
    while (n) {
        if (r->pos == r->len) {
            int rc = refill(r);
            if (rc < 0) return -1;
            if (rc == 0) return js_pprofr_fail(r, off, "the profile ends inside a field");
        }
        size_t take = (uint64_t)(r->len - r->pos) < n ? r->len - r->pos : (size_t)n;
        r->pos += take;
        n -= take;
    }
    return 0;
}

/* ---- protobuf-c, through an allocator that counts ---- */

/* malloc with a size header, refused past UNPACK_MAX held. */
static void *counted_alloc(void *data, size_t size)
{
    js_pprofr *r = data;
    if (size > UNPACK_MAX - r->alloc_used) return NULL;
    size_t *b = malloc(size + 16);
    if (!b) return NULL;
    b[0] = size;
    r->alloc_used += size;
    return (char *)b + 16;
}

/* free of a counted_alloc block. */
static void counted_free(void *data, void *p)
{
    js_pprofr *r = data;
    if (!p) return;
    size_t *b = (size_t *)((char *)p - 16);
    r->alloc_used -= b[0];
    free(b);
}

/* Unpacks the field just read as a message of descriptor d; NULL after setting the error. */
static ProtobufCMessage *unpack(js_pprofr *r, const ProtobufCMessageDescriptor *d, size_t n, uint64_t off,
                                const char *what)
{
    ProtobufCAllocator a = {counted_alloc, counted_free, r};
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &a, n, r->field);
    if (!m) js_pprofr_fail(r, off, "malformed %s (%zu bytes)", what, n);
    return m;
}

/* Frees an unpacked message. */
static void unpacked_free(js_pprofr *r, ProtobufCMessage *m)
{
    ProtobufCAllocator a = {counted_alloc, counted_free, r};
    protobuf_c_message_free_unpacked(m, &a);
}

/* ---- the fields ---- */

/* Hash of a sample's key: its location ids and labels. */
static uint64_t agg_hash(const uint64_t *ids, size_t n, const js_pprofr_label *lab, size_t nl)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t i = 0; i < n; i++) h = (h ^ ids[i]) * 0xbf58476d1ce4e5b9ull, h ^= h >> 31;
    for (size_t i = 0; i < nl; i++)
        h = (h ^ (uint64_t)lab[i].key ^ (uint64_t)lab[i].str << 20 ^ (uint64_t)lab[i].num << 40) * 0x94d049bb133111ebull,
        h ^= h >> 29;
    return h;
}

/* 1 if aggregate a has these ids and labels. */
static int agg_equal(const js_pprofr *r, const js_pprofr_agg *a, const uint64_t *ids, size_t n,
                     const js_pprofr_label *lab, size_t nl)
{
    return a->nids == n && a->nlabels == nl && (n == 0 || memcmp(r->ids + a->ids, ids, n * sizeof *ids) == 0) &&
           (nl == 0 || memcmp(r->labs + a->labels, lab, nl * sizeof *lab) == 0);
}

/* Rebuilds the aggregate slots with cap entries; 0 or -1. */
static int agg_rehash(js_pprofr *r, size_t cap)
{
    uint32_t *sl = calloc(cap, sizeof *sl);
    if (!sl) return js_pprofr_fail(r, r->base + r->pos, "out of memory for %zu distinct stacks", r->naggs);
    for (size_t i = 0; i < r->naggs; i++) {
        size_t h = (size_t)r->aggs[i].hash & (cap - 1);
        while (sl[h]) h = (h + 1) & (cap - 1);
        sl[h] = (uint32_t)i + 1;
    }
    free(r->agg_slots);
    r->agg_slots = sl;
    r->nagg_slots = cap;
    return 0;
}

/* Adds values v[0..nv) to the aggregate agg; -1 if the sample has another number of values. */
static int agg_add_values(js_pprofr *r, size_t agg, const int64_t *v, size_t nv, uint64_t off)
{
    js_pprofr_agg *a = &r->aggs[agg];
    if (a->nvals != nv) return js_pprofr_fail(r, off, "a sample with %zu values after one with %u", nv, a->nvals);
    for (size_t i = 0; i < nv; i++) {
        int64_t *s = &r->vals[a->vals + i];
        *s = v[i] > 0 && *s > INT64_MAX - v[i] ? INT64_MAX : v[i] < 0 && *s < INT64_MIN - v[i] ? INT64_MIN : *s + v[i];
    }
    a->messages++;
    return 0;
}

/* Sums one Sample into its aggregate (created if new); its index in *agg. 0, or -1. */
static int add_sample(js_pprofr *r, const pb_sample *s, uint64_t off, size_t *agg)
{
    if (s->n_value > JS_PPROF_MAX_TYPES) return js_pprofr_fail(r, off, "a sample with %zu values", s->n_value);
    if (s->n_location_id > JS_PPROF_MAX_DEPTH)
        return js_pprofr_fail(r, off, "a sample with %zu locations (at most %d)", s->n_location_id, JS_PPROF_MAX_DEPTH);
    js_pprofr_label lab[JS_PPROFR_MAX_LABELS];
    size_t nl = 0;
    for (size_t i = 0; r->o->threads && i < s->n_label && nl < JS_PPROFR_MAX_LABELS; i++)
        lab[nl++] = (js_pprofr_label){s->label[i]->key, s->label[i]->str, s->label[i]->num};
    uint64_t h = agg_hash(s->location_id, s->n_location_id, lab, nl);
    if ((r->naggs + 1) * 2 > r->nagg_slots && agg_rehash(r, r->nagg_slots ? r->nagg_slots * 2 : 1024) != 0) return -1;
    size_t slot = (size_t)h & (r->nagg_slots - 1);
    for (; r->agg_slots[slot]; slot = (slot + 1) & (r->nagg_slots - 1)) {
        size_t i = r->agg_slots[slot] - 1;
        if (r->aggs[i].hash == h && agg_equal(r, &r->aggs[i], s->location_id, s->n_location_id, lab, nl)) {
            *agg = i;
            return agg_add_values(r, i, s->value, s->n_value, off);
        }
    }
    if (r->nids + s->n_location_id > JS_PPROFR_MAX_IDS)
        return js_pprofr_fail(r, off, "the distinct stacks hold more than %u locations", JS_PPROFR_MAX_IDS);
    if (js_pprofr_grow(r, (void **)&r->aggs, r->naggs, &r->cap_aggs, sizeof *r->aggs, JS_PPROF_MAX_TABLE,
                       "distinct stacks") != 0)
        return -1;
    while (r->nids + s->n_location_id > r->cap_ids)
        if (js_pprofr_grow(r, (void **)&r->ids, r->cap_ids, &r->cap_ids, sizeof *r->ids, JS_PPROFR_MAX_IDS,
                           "locations in stacks") != 0)
            return -1;
    while (r->nvals + s->n_value > r->cap_vals)
        if (js_pprofr_grow(r, (void **)&r->vals, r->cap_vals, &r->cap_vals, sizeof *r->vals,
                           (size_t)JS_PPROF_MAX_TABLE * JS_PPROF_MAX_TYPES, "values") != 0)
            return -1;
    while (r->nlabs + nl > r->cap_labs)
        if (js_pprofr_grow(r, (void **)&r->labs, r->cap_labs, &r->cap_labs, sizeof *r->labs,
                           (size_t)JS_PPROF_MAX_TABLE * JS_PPROFR_MAX_LABELS, "labels") != 0)
            return -1;
    js_pprofr_agg *a = &r->aggs[r->naggs];
    *a = (js_pprofr_agg){.ids = r->nids, .vals = r->nvals, .off = off, .nids = (uint32_t)s->n_location_id,
                         .nvals = (uint32_t)s->n_value, .labels = (uint32_t)r->nlabs, .nlabels = (uint32_t)nl,
                         .hash = h, .messages = 1};
    if (s->n_location_id) memcpy(r->ids + r->nids, s->location_id, s->n_location_id * sizeof *r->ids);
    if (s->n_value) memcpy(r->vals + r->nvals, s->value, s->n_value * sizeof *r->vals);
    if (nl) memcpy(r->labs + r->nlabs, lab, nl * sizeof *lab);
    r->nids += s->n_location_id;
    r->nvals += s->n_value;
    r->nlabs += nl;
    r->agg_slots[slot] = (uint32_t)r->naggs + 1;
    *agg = r->naggs++;
    return 0;
}

/* Field 2: a Sample; one whose bytes equal the last one's is summed into its aggregate. 0, or -1. */
static int read_sample(js_pprofr *r, size_t n, uint64_t off)
{
    r->messages++;
    if (r->nprev && n == r->nprev && memcmp(r->field, r->prev, n) == 0)
        return agg_add_values(r, r->prev_agg, r->prev_vals, r->prev_nvals, off);
    pb_sample *s = (pb_sample *)unpack(r, &perftools__profiles__sample__descriptor, n, off, "sample");
    if (!s) return -1;
    size_t agg = 0;
    int rc = add_sample(r, s, off, &agg);
    r->nprev = 0;
    if (rc == 0 && n && n <= PREV_MAX && (r->prev || (r->prev = malloc(PREV_MAX)))) { /* remember it */
        memcpy(r->prev, r->field, n);
        if (s->n_value) memcpy(r->prev_vals, s->value, s->n_value * sizeof *s->value);
        r->prev_nvals = s->n_value;
        r->nprev = n;
        r->prev_agg = agg;
    }
    unpacked_free(r, &s->base);
    return rc;
}

/* Field 1 or 11: a ValueType into *type, *unit. 0, or -1. */
static int read_value_type(js_pprofr *r, size_t n, uint64_t off, int64_t *type, int64_t *unit)
{
    pb_value_type *v = (pb_value_type *)unpack(r, &perftools__profiles__value_type__descriptor, n, off, "value type");
    if (!v) return -1;
    *type = v->type;
    *unit = v->unit;
    unpacked_free(r, &v->base);
    return 0;
}

/* Field 3: a Mapping (its id and file). 0, or -1. */
static int read_mapping(js_pprofr *r, size_t n, uint64_t off)
{
    if (js_pprofr_grow(r, (void **)&r->maps, r->nmaps, &r->cap_maps, sizeof *r->maps, JS_PPROF_MAX_TABLE,
                       "mappings") != 0)
        return -1;
    pb_mapping *m = (pb_mapping *)unpack(r, &perftools__profiles__mapping__descriptor, n, off, "mapping");
    if (!m) return -1;
    r->maps[r->nmaps++] = (js_pprofr_mapping){m->id, off, m->filename};
    unpacked_free(r, &m->base);
    return 0;
}

/* Field 4: a Location and its lines. 0, or -1. */
static int read_location(js_pprofr *r, size_t n, uint64_t off)
{
    if (js_pprofr_grow(r, (void **)&r->locs, r->nlocs, &r->cap_locs, sizeof *r->locs, JS_PPROF_MAX_TABLE,
                       "locations") != 0)
        return -1;
    pb_location *l = (pb_location *)unpack(r, &perftools__profiles__location__descriptor, n, off, "location");
    if (!l) return -1;
    int rc = 0;
    if (l->n_line > JS_PPROF_MAX_DEPTH)
        rc = js_pprofr_fail(r, off, "a location with %zu lines (at most %d)", l->n_line, JS_PPROF_MAX_DEPTH);
    for (size_t i = 0; rc == 0 && i < l->n_line; i++) {
        rc = js_pprofr_grow(r, (void **)&r->lines, r->nlines, &r->cap_lines, sizeof *r->lines, JS_PPROFR_MAX_IDS,
                            "lines");
        if (rc == 0) r->lines[r->nlines++] = (js_pprofr_line){l->line[i]->function_id, l->line[i]->line};
    }
    if (rc == 0)
        r->locs[r->nlocs++] = (js_pprofr_location){l->id, l->mapping_id, l->address, off,
                                                   (uint32_t)(r->nlines - l->n_line), (uint32_t)l->n_line, 0,
                                                   UINT32_MAX};
    unpacked_free(r, &l->base);
    return rc;
}

/* Field 5: a Function (its id, name and file). 0, or -1. */
static int read_function(js_pprofr *r, size_t n, uint64_t off)
{
    if (js_pprofr_grow(r, (void **)&r->fns, r->nfns, &r->cap_fns, sizeof *r->fns, JS_PPROF_MAX_TABLE,
                       "functions") != 0)
        return -1;
    pb_function *f = (pb_function *)unpack(r, &perftools__profiles__function__descriptor, n, off, "function");
    if (!f) return -1;
    r->fns[r->nfns++] = (js_pprofr_function){f->id, off, f->name, f->filename};
    unpacked_free(r, &f->base);
    return 0;
}

/* Field 6: one string of the table, its bytes as they are. 0, or -1. */
static int read_string(js_pprofr *r, size_t n, uint64_t off)
{
    if (js_pprofr_grow(r, (void **)&r->str_off, r->nstr, &r->cap_str, sizeof *r->str_off, JS_PPROF_MAX_TABLE,
                       "strings") != 0)
        return -1;
    if (n > JS_PPROFR_MAX_STRBYTES - r->nstrbytes)
        return js_pprofr_fail(r, off, "the strings take more than %u MiB", JS_PPROFR_MAX_STRBYTES >> 20);
    if (r->nstrbytes + n > r->cap_strbytes) {
        size_t cap = r->cap_strbytes ? r->cap_strbytes : 65536;
        while (cap < r->nstrbytes + n) cap *= 2;
        char *b = realloc(r->strbytes, cap);
        if (!b) return js_pprofr_fail(r, off, "out of memory for the strings");
        r->strbytes = b;
        r->cap_strbytes = cap;
    }
    if (n) memcpy(r->strbytes + r->nstrbytes, r->field, n);
    r->str_off[r->nstr++] = r->nstrbytes;
    r->nstrbytes += n;
    return 0;
}

/* A length-delimited top-level field of n bytes at off. 0, or -1. */
static int read_field(js_pprofr *r, uint64_t field, uint64_t n, uint64_t off)
{
    if (field > 6 && field != 11) return stream_skip(r, n); /* comments and fields to come */
    if (n > JS_PPROF_FIELD_MAX)
        return js_pprofr_fail(r, off, "field %llu of %llu bytes (at most %u)", (unsigned long long)field,
                              (unsigned long long)n, JS_PPROF_FIELD_MAX);
    if (stream_bytes(r, (size_t)n) != 0) return -1;
    switch (field) {
    case 1:
        if (r->ntypes == JS_PPROF_MAX_TYPES) return js_pprofr_fail(r, off, "more than %d sample types", JS_PPROF_MAX_TYPES);
        if (read_value_type(r, (size_t)n, off, &r->types[r->ntypes].type, &r->types[r->ntypes].unit) != 0) return -1;
        r->ntypes++;
        return 0;
    case 2: return read_sample(r, (size_t)n, off);
    case 3: return read_mapping(r, (size_t)n, off);
    case 4: return read_location(r, (size_t)n, off);
    case 5: return read_function(r, (size_t)n, off);
    case 6: return read_string(r, (size_t)n, off);
    default: return read_value_type(r, (size_t)n, off, &r->period_type, &r->period_unit);
    }
}

/* Reads every top-level field of the Profile. 0, or -1. */
static int read_fields(js_pprofr *r)
{
    for (;;) {
        uint64_t off = r->base + r->pos, tag, v;
        int rc = stream_varint(r, &tag);
        if (rc <= 0) return rc;
        uint64_t field = tag >> 3;
        if (field == 0 || field > 536870911) return js_pprofr_fail(r, off, "field number %llu", (unsigned long long)field);
        switch (tag & 7) {
        case 0:
            if ((rc = stream_varint(r, &v)) != 1) return rc < 0 ? -1 : js_pprofr_fail(r, off, "the profile ends in a field");
            if (field == 9) r->time_ns = (int64_t)v;
            else if (field == 10) r->duration_ns = (int64_t)v;
            else if (field == 12) r->period = (int64_t)v;
            else if (field == 14) r->default_type = (int64_t)v;
            break;
        case 1:
            if (stream_skip(r, 8) != 0) return -1;
            break;
        case 2:
            if ((rc = stream_varint(r, &v)) != 1) return rc < 0 ? -1 : js_pprofr_fail(r, off, "the profile ends in a field");
            if (read_field(r, field, v, off) != 0) return -1;
            break;
        case 5:
            if (stream_skip(r, 4) != 0) return -1;
            break;
        default:
            return js_pprofr_fail(r, off, "wire type %u in field %llu: not a pprof profile", (unsigned)(tag & 7),
                                  (unsigned long long)field);
        }
    }
}

/* Frees what the reader owns. */
static void reader_free(js_pprofr *r)
{
    if (r->z_open) inflateEnd(&r->z);
    free(r->in);
    free(r->win);
    free(r->field);
    free(r->maps);
    free(r->locs);
    free(r->lines);
    free(r->fns);
    free(r->str_off);
    free(r->strbytes);
    free(r->aggs);
    free(r->agg_slots);
    free(r->ids);
    free(r->vals);
    free(r->labs);
    free(r->prev);
    free(r->lframes);
    free(r->stack);
}

/* Reads the input set up in r (file or memory) into p. */
static int read_profile(js_pprofr *r, js_profile *p, js_pprof_read_info *info)
{
    static const js_pprof_read_opts defaults;
    if (!r->o) r->o = &defaults;
    int rc = -1;
    unsigned char head[2];
    /* An input in memory smaller than the buffers needs buffers no larger than itself (at least 4 KiB: a gzip
     * input's window holds what it inflates to, in as many refills as that takes). */
    r->io_cap = r->mem && r->mem_len < IO_BUF ? (r->mem_len > 4096 ? r->mem_len : 4096) : IO_BUF;
    r->in = malloc(r->io_cap);
    r->win = malloc(r->io_cap);
    if (!r->in || !r->win) {
        js_pprofr_fail(r, 0, "out of memory");
        goto done;
    }
    /* gzip or not: look at the first two bytes, then hand them to whichever stream reads them */
    long k = raw_read(r, head, 2);
    if (k < 0) {
        js_pprofr_fail(r, 0, "read error");
        goto done;
    }
    if (k == 2 && head[0] == 0x1f && head[1] == 0x8b) {
        if (inflateInit2(&r->z, 15 + 16) != Z_OK) {
            js_pprofr_fail(r, 0, "out of memory starting gzip");
            goto done;
        }
        r->z_open = r->gz = 1;
        memcpy(r->in, head, 2);
        r->z.next_in = r->in;
        r->z.avail_in = 2;
    } else {
        memcpy(r->win, head, (size_t)k);
        r->len = (size_t)k;
        if (k == 0) {
            js_pprofr_fail(r, 0, "empty input: not a pprof profile");
            goto done;
        }
    }
    if (read_fields(r) == 0) rc = js_pprofr_resolve(r, p, info);
    if (rc == 0 && info) {
        info->messages = r->messages;
        info->bytes = r->base + r->len;
        info->gzip = r->gz;
    }
done:
    reader_free(r);
    return rc;
}

int js_pprof_read_file(FILE *f, const char *name, const js_pprof_read_opts *o, js_profile *p,
                       js_pprof_read_info *info, char *err, size_t errlen)
{
    js_pprofr *r = calloc(1, sizeof *r);
    if (!r) return snprintf(err, errlen, "%s: out of memory", name), -1;
    *r = (js_pprofr){.name = name, .o = o, .err = err, .errlen = errlen, .f = f};
    int rc = read_profile(r, p, info);
    free(r);
    return rc;
}

int js_pprof_read_mem(const void *data, size_t len, const char *name, const js_pprof_read_opts *o, js_profile *p,
                      js_pprof_read_info *info, char *err, size_t errlen)
{
    js_pprofr *r = calloc(1, sizeof *r);
    if (!r) return snprintf(err, errlen, "%s: out of memory", name), -1;
    *r = (js_pprofr){.name = name, .o = o, .err = err, .errlen = errlen, .mem = data ? data : "", .mem_len = len};
    int rc = read_profile(r, p, info);
    free(r);
    return rc;
}
