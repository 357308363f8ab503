/* fuzz_jfr_read.c - libFuzzer target for the JFR reader on whole files (make fuzz-jfr; docs/FUZZING.md).
 *
 * Each input is a recording read from memory once, with an option set picked by its size (event kind, thread
 * roots, lines, a thread glob, a time range), then written as JSON and collapsed output to /dev/null.
 * Invariants beyond the sanitizers: a failed read's message is one line "fuzz: offset N: ..."; a successful
 * read's total is the sum of its stacks; and a sample profile that small enough survives the round trip
 * jfr_export.h promises: written as JFR and read back, it gives the same stacks.
 *
 * Seeds (native-tests/fuzz-corpus/jfr_read): whole recordings of the JDK 17 and 25 (every event kind the reader
 * knows), of the agent's writer and of the test encoders, small enough to mutate. Random byte mutations rarely
 * get past a record's size or reach a string of a kept pool, so a custom mutator keeps the structure: it splits
 * the file into chunks and records, changes one record (libFuzzer's own mutations inside it; a long string of
 * any encoding and length around the 8192-byte cap put in or over a string; a number turned to an edge value;
 * a record dropped, repeated or moved; header fields), and writes the records back with their sizes, the
 * header's size and offsets and the checkpoint deltas made right. Inputs it cannot split are mutated as bytes.
 */
#include "fuzz_util.h"

#include <unistd.h>

#include "jfr/jfr_export.h"
#include "jfr/jfr_read.h"
#include "output/output.h"
#include "output/profile.h"

#define ROUND_TRIP_MAX 2000 /* samples exported per round trip (one event each) */
#define NAME_CAP 8192       /* the reader's cap on a kept string (JS_JFRR_NAME_MAX) */

static FILE *sink;
static char export_path[64];

/* Opens the output sink and names a scratch file for the round trip. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    sink = fopen("/dev/null", "w");
    snprintf(export_path, sizeof export_path, "/tmp/fuzz-jfr-read-%d.jfr", (int)getpid());
    return 0;
}

/* The profile as collapsed text (normalised first; stacks of weight 0 left out: the export writes one event per
 * unit of weight, so they have none); caller frees. */
static char *collapsed_text(js_profile *p)
{
    char *buf = NULL, err[256];
    size_t len = 0;
    FZ_CHECK(js_profile_normalize(p) == 0, "normalize");
    size_t n = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        if (p->stacks[i].weight) p->stacks[n++] = p->stacks[i];
        else free(p->stacks[i].frames);
    }
    p->nstacks = n;
    FILE *f = open_memstream(&buf, &len);
    FZ_CHECK(f && js_write_collapsed(f, p, err, sizeof err) == 0, "collapsed: %s", err);
    fclose(f);
    return buf;
}

/* Writes a sample profile as JFR and reads it back with the same options: the same stacks must come back. */
static void round_trip(js_profile *p, const js_jfr_read_opts *o)
{
    char err[512] = "";
    uint64_t events = 0;
    FZ_CHECK(js_jfr_export(export_path, p, "fuzz", &events, err, sizeof err) == 0, "export: %s", err);
    FZ_CHECK(events == p->total, "%llu events for %llu samples", (unsigned long long)events,
             (unsigned long long)p->total);
    FILE *f = fopen(export_path, "rb");
    FZ_CHECK(f != NULL, "reopen");
    js_profile q;
    js_profile_init(&q);
    js_jfr_read_opts o2 = *o;
    o2.kind = JS_JFR_READ_CPU; /* every sample is written as a jdk.ExecutionSample */
    o2.has_from = o2.has_to = 0; /* exported events carry the writing time, not the recording's */
    o2.thread = NULL;
    int rc = js_jfr_read_fd(fileno(f), "export", &o2, &q, NULL, err, sizeof err);
    fclose(f);
    FZ_CHECK(rc == 0, "reading the export back: %s", err);
    char *a = collapsed_text(p), *b = collapsed_text(&q);
    size_t d = 0;
    while (a[d] && a[d] == b[d]) d++;
    FZ_CHECK(strcmp(a, b) == 0, "round trip changed the stacks (from byte %zu: %02x, %02x):\n--- read\n%s--- exported "
             "and read back\n%s", d, (unsigned char)a[d], (unsigned char)b[d], a, b);
    free(a);
    free(b);
    js_profile_free(&q);
}

/* 1 if p has a stack jfr_export.h does not promise to bring back as it was: one under the reader's "[unknown
 * thread]" root (an event without a thread; the writer has none, so the export names a thread), one without
 * frames but its thread root and "[truncated]" mark (given an "[unknown]" frame), or a frame name within a character
 * of the length the reader keeps of one string (split at another '.', its class part could be cut when read back;
 * and the reader cuts UTF-16 strings up to 3 bytes shorter than UTF-8 and Latin-1 ones, to a whole character). */
static int export_changes(const js_profile *p)
{
    for (size_t i = 0; i < p->nframes; i++)
        if (strlen(p->frames[i].name) > NAME_CAP - 4) return 1;
    for (size_t i = 0; i < p->nstacks; i++) {
        const js_pstack *st = &p->stacks[i];
        uint32_t d = 0;
        if (d < st->depth && p->frames[st->frames[d]].type == JS_FT_THREAD) {
            if (strcmp(p->frames[st->frames[d]].name, "[unknown thread]") == 0) return 1;
            d++;
        }
        if (d < st->depth && strcmp(p->frames[st->frames[d]].name, JS_TRUNCATED_FRAME) == 0) d++;
        if (d == st->depth) return 1;
    }
    return 0;
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned pick = (unsigned)(size % 16);
    js_jfr_read_opts o = {.kind = (js_jfr_read_kind)(pick % 4), .threads = (pick / 4) & 1, .lines = (pick / 8) & 1};
    if (o.kind == JS_JFR_READ_ALLOC) o.thread = pick & 4 ? "m*" : "main";
    if (o.kind == JS_JFR_READ_LOCK) o.has_from = o.has_to = 1, o.from_ns = 1000, o.to_ns = 4000000000;
    js_profile p;
    js_profile_init(&p);
    char err[512] = "";
    int rc = js_jfr_read_mem(data, size, "fuzz", &o, &p, NULL, err, sizeof err);
    FZ_CHECK(rc == 0 || (rc == -1 && strncmp(err, "fuzz: offset ", 13) == 0 && !strchr(err, '\n')),
             "rc %d, message '%s'", rc, err);
    if (rc == 0) {
        uint64_t sum = 0;
        for (size_t i = 0; i < p.nstacks; i++) sum = js_weight_add(sum, p.stacks[i].weight);
        FZ_CHECK(sum == p.total, "total %llu, stacks sum to %llu", (unsigned long long)p.total,
                 (unsigned long long)sum);
        js_write_json_tree(sink, &p, o.kind == JS_JFR_READ_ALLOC ? "OBJECT_ALLOCATION" : NULL, err, sizeof err);
        js_write_collapsed(sink, &p, err, sizeof err);
        if ((o.kind == JS_JFR_READ_CPU || o.kind == JS_JFR_READ_WALL) && p.total && p.total <= ROUND_TRIP_MAX &&
            !o.has_from && !export_changes(&p))
            round_trip(&p, &o);
    }
    js_profile_free(&p);
    return 0;
}

#ifdef JS_FUZZ_LIBFUZZER
/* ---- the structure-keeping mutator ------------------------------------------------------------------- */

#define HDR 68
#define MAX_CHUNKS 8
#define MAX_RECS 8192

typedef struct {
    const uint8_t *pay; /* payload: type id and fields */
    size_t len, hdr;    /* payload bytes; bytes of the size varint as found (kept when the new size fits) */
    size_t old_off;     /* chunk-relative offset in the input */
    size_t new_off;
} rec;

typedef struct {
    const uint8_t *head; /* 68 header bytes */
    int size_ok;         /* the header's size was the chunk's length */
    rec *recs;
    size_t n;
} chunk;

static uint64_t rng;

/* The next pseudo-random number (xorshift64*). */
static uint64_t rnd(void)
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* A number below n (0 when n is 0). */
static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* Big-endian 8 bytes. */
static uint64_t be64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | b[i];
    return v;
}

/* Writes v big-endian in 8 bytes. */
static void put_be64(uint8_t *b, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) b[i] = (uint8_t)v;
}

/* Reads a varint at p (at most n bytes); its byte count, 0 if it does not end there. */
static size_t get_var(const uint8_t *p, size_t n, uint64_t *v)
{
    uint64_t r = 0;
    for (size_t i = 0; i < n && i < 9; i++) {
        if (i == 8) {
            *v = r | (uint64_t)p[8] << 56;
            return 9;
        }
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

/* Writes v as a varint of exactly k bytes (padded; k = 9 holds any value); 0 if it does not fit. */
static int put_var_k(uint8_t *p, uint64_t v, size_t k)
{
    if (k < 9 && k * 7 < 64 && v >> (7 * k)) return 0;
    for (size_t i = 0; i + 1 < k; i++, v >>= 7) p[i] = (uint8_t)(v | 0x80);
    p[k - 1] = (uint8_t)v;
    return 1;
}

/* Bytes of the minimal varint of v. */
static size_t var_len(uint64_t v)
{
    size_t n = 1;
    while (n < 9 && v >= 0x80) v >>= 7, n++;
    return n;
}

/* Splits in into chunks and records; the count of chunks (0 if it does not look like JFR); *tail_at gets where
 * the bytes no chunk holds start. */
static size_t split(const uint8_t *in, size_t size, chunk *ch, size_t *tail_at)
{
    size_t nch = 0, base = 0;
    while (nch < MAX_CHUNKS && size - base >= HDR && memcmp(in + base, "FLR", 4) == 0) {
        uint64_t csize = be64(in + base + 8);
        size_t end = csize >= HDR && csize <= size - base ? base + (size_t)csize : size;
        chunk *c = &ch[nch];
        c->head = in + base;
        c->size_ok = end - base == csize;
        c->n = 0;
        size_t pos = base + HDR;
        while (pos < end && c->n < MAX_RECS) {
            uint64_t rs;
            size_t h = get_var(in + pos, end - pos, &rs);
            if (!h || rs <= h || rs > end - pos) break;
            c->recs[c->n++] = (rec){in + pos + h, (size_t)rs - h, h, pos - base, 0};
            pos += (size_t)rs;
        }
        nch++;
        base = pos;
        if (pos < end || !c->size_ok) break; /* records that do not add up: the rest is kept as bytes */
    }
    *tail_at = base;
    return nch;
}

/* A string of encoding 3, 4 or 5 and a length around the reader's cap, with runs of one- and two-byte
 * characters, written to out (room for cap bytes); its size, 0 if it does not fit. */
static size_t long_string(uint8_t *out, size_t cap)
{
    static const size_t lens[] = {0, 1, 127, 128, NAME_CAP / 2, NAME_CAP / 2 + 1, NAME_CAP - 1, NAME_CAP,
                                  NAME_CAP + 1, NAME_CAP + NAME_CAP / 2, 2 * NAME_CAP + 3};
    uint8_t enc = (uint8_t)(3 + below(3));
    size_t n = rnd() & 1 ? lens[below(sizeof lens / sizeof lens[0])] : below(3 * NAME_CAP);
    size_t run = 1 + below(rnd() & 1 ? 8 : 2 * NAME_CAP), o = 0;
    if (cap < 10 + 3 * n) return 0;
    out[o++] = enc;
    o += put_var_k(out + o, n, var_len(n)) ? var_len(n) : 0;
    int high = (int)(rnd() & 1);
    for (size_t i = 0; i < n; i++) {
        if (i % run == 0 && rnd() % 3 == 0) high = !high;
        if (enc == 4) { /* UTF-16 units: ASCII, 3-byte ones, and surrogates (paired or not) */
            uint64_t u = high ? (rnd() % 5 == 0 ? 0xd800 + below(0x800) : 0x80 + below(0xff80)) : 0x41 + below(26);
            o += put_var_k(out + o, u, var_len(u)) ? var_len(u) : 0;
        } else if (enc == 5) {
            out[o++] = high ? (uint8_t)(0x80 + below(0x80)) : (uint8_t)('A' + below(26));
        } else {
            out[o++] = high ? (uint8_t)(0x80 | below(0x80)) : (uint8_t)('a' + below(26)); /* invalid UTF-8 too */
        }
    }
    return o;
}

/* Size of a plausible string (encoding 3, 4 or 5, its length fitting) at p (n bytes), 0 if none starts there. */
static size_t string_at(const uint8_t *p, size_t n)
{
    uint64_t len;
    size_t h;
    if (n < 2 || p[0] < 3 || p[0] > 5 || !(h = get_var(p + 1, n - 1, &len))) return 0;
    if (p[0] != 4) return len <= n - 1 - h ? 1 + h + (size_t)len : 0;
    size_t o = 1 + h;
    for (uint64_t i = 0; i < len; i++) {
        uint64_t u;
        size_t k = get_var(p + o, n - o, &u);
        if (!k) return 0;
        o += k;
    }
    return o;
}

/* Changes payload buf (len bytes, room for cap) in place; its new length. */
static size_t mutate_payload(uint8_t *buf, size_t len, size_t cap, const chunk *ch, size_t nch)
{
    size_t op = below(10), pos = len ? below(len + 1) : 0;
    if (op <= 3 || len == 0) return LLVMFuzzerMutate(buf, len, cap);
    if (op <= 6) { /* a long string: over the first plausible string from pos, else put in at pos */
        size_t at = pos, old = 0;
        for (; at < len && at < pos + 64 && !(old = string_at(buf + at, len - at)); at++) {
        }
        if (!old) at = pos;
        static uint8_t s[3 * (3 * NAME_CAP) + 16];
        size_t sn = long_string(s, sizeof s);
        if (!sn || len - old + sn > cap) return len;
        memmove(buf + at + sn, buf + at + old, len - at - old);
        memcpy(buf + at, s, sn);
        return len - old + sn;
    }
    if (op == 7) { /* a number (count, key, size, time) turned to an edge value, same width when it fits */
        static const uint64_t edges[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x3fff, 0x4000, 0x7fffffff, 0x80000000ull,
                                         0xffffffffull, 0x100000000ull, 1ull << 62, INT64_MAX, 1ull << 63, UINT64_MAX};
        uint64_t old, v = edges[below(sizeof edges / sizeof edges[0])];
        size_t k = get_var(buf + pos, len - pos, &old);
        if (!k) return len;
        size_t nk = put_var_k(buf + pos, v, k) ? k : var_len(v);
        if (nk == k) return len;
        if (len - k + nk > cap) return len;
        memmove(buf + pos + nk, buf + pos + k, len - pos - k);
        put_var_k(buf + pos, v, nk);
        return len - k + nk;
    }
    /* bytes of another record spliced in at pos (pool entries of one checkpoint put in another, and so on) */
    const chunk *c = &ch[below(nch)];
    if (!c->n) return len;
    const rec *from = &c->recs[below(c->n)];
    size_t start = below(from->len + 1), n = below(from->len - start + 1);
    if (len + n > cap) return len;
    memmove(buf + pos + n, buf + pos, len - pos);
    memcpy(buf + pos, from->pay + start, n);
    return len + n;
}

/* Lays chunk c out from out_at: record offsets and size varint widths; the chunk's new length. */
static size_t layout(chunk *c)
{
    size_t off = HDR;
    for (size_t i = 0; i < c->n; i++) {
        rec *r = &c->recs[i];
        size_t k = r->hdr;
        uint8_t tmp[9];
        if (!put_var_k(tmp, r->len + k, k))
            for (k = 1; !put_var_k(tmp, r->len + k, k) || var_len(r->len + k) != k; k++) {
            }
        r->hdr = k;
        r->new_off = off;
        off += k + r->len;
    }
    return off;
}

/* New offset of the record that was at old (chunk-relative), or (size_t)-1. */
static size_t moved(const chunk *c, uint64_t old)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->recs[i].old_off == old) return c->recs[i].new_off;
    return (size_t)-1;
}

/* Writes chunk c at out (room checked by the caller): header with size and offsets, records with their sizes
 * and the checkpoint deltas pointing at the same records as before. */
static void emit(const chunk *c, size_t clen, uint8_t *out)
{
    memcpy(out, c->head, HDR);
    if (c->size_ok) put_be64(out + 8, clen);
    for (int f = 16; f <= 24; f += 8) {
        size_t to = moved(c, be64(c->head + f));
        if (to != (size_t)-1) put_be64(out + f, to);
    }
    for (size_t i = 0; i < c->n; i++) {
        const rec *r = &c->recs[i];
        uint8_t *p = out + r->new_off;
        put_var_k(p, r->len + r->hdr, r->hdr);
        memcpy(p + r->hdr, r->pay, r->len);
        /* a checkpoint: type 1, startTicks, duration, then its delta (negative: nine bytes) */
        uint64_t v[4];
        size_t o = r->hdr, k = 0;
        for (int j = 0; j < 4 && (k = get_var(p + o, r->hdr + r->len - o, &v[j])) != 0; j++) o += j < 3 ? k : 0;
        if (!k || v[0] != 1 || k != 9 || v[3] == 0) continue;
        size_t to = moved(c, r->old_off + v[3]); /* wraps back: the delta is negative */
        if (to != (size_t)-1) put_var_k(p + o, (uint64_t)to - r->new_off, 9);
    }
}

/* libFuzzer's custom mutator: see the file comment. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    static rec recs[MAX_CHUNKS][MAX_RECS];
    static chunk ch[MAX_CHUNKS];
    rng = seed * 0x9e3779b97f4a7c15ull + 1;
    if (size < HDR || below(8) == 0) return LLVMFuzzerMutate(data, size, max_size);
    uint8_t *in = malloc(size), *pay = malloc(max_size);
    if (!in || !pay) abort();
    memcpy(in, data, size);
    for (size_t i = 0; i < MAX_CHUNKS; i++) ch[i].recs = recs[i];
    size_t tail_at, nch = split(in, size, ch, &tail_at), out = size;
    if (nch == 0 || ch[0].n == 0) {
        out = LLVMFuzzerMutate(data, size, max_size);
        goto done;
    }
    chunk *c = &ch[below(nch)];
    size_t op = below(16);
    if (c->n == 0) op = 3;
    if (op == 0 && c->n > 1) { /* drop a record */
        size_t i = below(c->n);
        memmove(c->recs + i, c->recs + i + 1, (c->n - i - 1) * sizeof *c->recs);
        c->n--;
    } else if (op == 1 && c->n < MAX_RECS) { /* repeat one after another (old_off kept: deltas find the first) */
        size_t i = below(c->n), j = below(c->n + 1);
        rec r = c->recs[i];
        r.old_off = (size_t)-2;
        memmove(c->recs + j + 1, c->recs + j, (c->n - j) * sizeof *c->recs);
        c->recs[j] = r;
        c->n++;
    } else if (op == 2 && c->n > 1) { /* swap two */
        size_t i = below(c->n), j = below(c->n);
        rec t = c->recs[i];
        c->recs[i] = c->recs[j];
        c->recs[j] = t;
    } else if (op == 3) { /* header fields after the offsets: times, ticks per second, flags */
        uint8_t *h = (uint8_t *)(uintptr_t)c->head;
        LLVMFuzzerMutate(h + 32, HDR - 32, HDR - 32);
    } else { /* inside one record */
        rec *r = &c->recs[below(c->n)];
        size_t room = max_size > size ? max_size - size + r->len : r->len;
        memcpy(pay, r->pay, r->len);
        r->len = mutate_payload(pay, r->len, room, ch, nch);
        r->pay = pay;
    }
    size_t total = 0, clen[MAX_CHUNKS];
    for (size_t i = 0; i < nch; i++) total += clen[i] = layout(&ch[i]);
    if (total + (size - tail_at) > max_size) {
        out = LLVMFuzzerMutate(data, size, max_size);
        goto done;
    }
    size_t o = 0;
    for (size_t i = 0; i < nch; i++) {
        emit(&ch[i], clen[i], data + o);
        o += clen[i];
    }
    memcpy(data + o, in + tail_at, size - tail_at);
    out = o + size - tail_at;
done:
    free(in);
    free(pay);
    return out;
}
#endif
