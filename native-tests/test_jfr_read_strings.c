/* test_jfr_read_strings.c - long strings in the JFR reader: every encoding (3 UTF-8, 4 UTF-16 units, 5 Latin-1) is
 * kept up to 8192 bytes of UTF-8 (JS_JFRR_NAME_MAX), cut on a character boundary and never written past that,
 * whatever the mix of one- and two-byte characters and however full the reader's string arena already is; and a
 * Symbol pool whose keys differ only in their high bits costs the pool's table about one probe an entry.
 *
 * Each recording is built here byte by byte: one chunk whose Symbol pool holds a filler string (to bring the
 * arena near its end), the method name under test and, when asked, more symbols under chosen keys; one
 * jdk.ExecutionSample of a one-frame stack "App.NAME".
 * With JFR_TEST_SEEDS=DIR set, the recordings are also written to DIR (fuzzing seeds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr/jfr_read.h"
#include "output/profile.h"

#define NAME_MAX_BYTES 8192 /* JS_JFRR_NAME_MAX */

/* ---- a minimal encoder ------------------------------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} buf;

/* Appends n bytes. */
static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        while (b->n + n > b->cap) b->cap = b->cap ? b->cap * 2 : 1024;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

/* Appends one byte. */
static void u8(buf *b, uint8_t v)
{
    put(b, &v, 1);
}

/* Appends a LEB128 varint. */
static void var(buf *b, uint64_t v)
{
    for (int i = 0; i < 8 && v >= 0x80; i++, v >>= 7) u8(b, (uint8_t)(v | 0x80));
    u8(b, (uint8_t)v);
}

/* Appends a UTF-8 (encoding 3) string. */
static void str3(buf *b, const char *s)
{
    u8(b, 3);
    var(b, strlen(s));
    put(b, s, strlen(s));
}

/* Appends a record: a 5-byte padded size (counting itself), then the payload. */
static void record(buf *out, const buf *pay)
{
    uint64_t size = pay->n + 5;
    for (int i = 0; i < 4; i++, size >>= 7) u8(out, (uint8_t)(size | 0x80));
    u8(out, (uint8_t)size);
    put(out, pay->p, pay->n);
}

/* Class ids: any will do; kept away from 0 and 1 (the metadata and checkpoint records). */
enum { ID_LONG = 20, ID_INT, ID_BOOL, ID_STRING, ID_SYMBOL, ID_CLASS, ID_METHOD, ID_FRAME, ID_TRACE, ID_EXEC };

static const char *const strings[] = {
    "root", "metadata", "region", "class", "field", "name", "id", "constantPool", "true", "dimension", "1",
    "long", "int", "boolean", "java.lang.String", "jdk.types.Symbol", "java.lang.Class", "jdk.types.Method",
    "jdk.types.StackFrame", "jdk.types.StackTrace", "jdk.ExecutionSample", "string", "type", "method", "lineNumber",
    "truncated", "frames", "startTime", "stackTrace", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29",
};

/* Index of s in strings. */
static uint64_t si(const char *s)
{
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if (strcmp(strings[i], s) == 0) return i;
    fail_msg("no string '%s'", s);
    return 0;
}

/* A field element: name, type id, constantPool, array. */
static void field(buf *t, const char *name, const char *type, int cp, int array)
{
    var(t, si("field"));
    var(t, 2 + (uint64_t)cp + (uint64_t)array);
    var(t, si("name")), var(t, si(name));
    var(t, si("class")), var(t, si(type));
    if (cp) var(t, si("constantPool")), var(t, si("true"));
    if (array) var(t, si("dimension")), var(t, si("1"));
    var(t, 0);
}

/* A class element header (name, id) and its field count. */
static void klass(buf *t, const char *name, const char *id, int nfields)
{
    var(t, si("class"));
    var(t, 2);
    var(t, si("name")), var(t, si(name));
    var(t, si("id")), var(t, si(id));
    var(t, (uint64_t)nfields);
}

/* The metadata record. */
static void metadata(buf *out)
{
    buf t = {0}, pay = {0};
    var(&t, si("root")), var(&t, 0), var(&t, 2);
    var(&t, si("metadata")), var(&t, 0), var(&t, 10);
    klass(&t, "long", "20", 0);
    klass(&t, "int", "21", 0);
    klass(&t, "boolean", "22", 0);
    klass(&t, "java.lang.String", "23", 0);
    klass(&t, "jdk.types.Symbol", "24", 1), field(&t, "string", "23", 0, 0);
    klass(&t, "java.lang.Class", "25", 1), field(&t, "name", "24", 1, 0);
    klass(&t, "jdk.types.Method", "26", 2), field(&t, "type", "25", 1, 0), field(&t, "name", "24", 1, 0);
    klass(&t, "jdk.types.StackFrame", "27", 2), field(&t, "method", "26", 1, 0), field(&t, "lineNumber", "21", 0, 0);
    klass(&t, "jdk.types.StackTrace", "28", 2), field(&t, "truncated", "22", 0, 0), field(&t, "frames", "27", 0, 1);
    klass(&t, "jdk.ExecutionSample", "29", 2), field(&t, "startTime", "20", 0, 0);
    field(&t, "stackTrace", "28", 1, 0);
    var(&t, si("region")), var(&t, 0), var(&t, 0);
    var(&pay, 0), var(&pay, 0), var(&pay, 0), var(&pay, 1); /* type 0, startTicks, duration, metadataId */
    var(&pay, sizeof strings / sizeof strings[0]);
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) str3(&pay, strings[i]);
    put(&pay, t.p, t.n);
    record(out, &pay);
    free(t.p);
    free(pay.p);
}

/* A recording whose only stack is "App.NAME", NAME being the string enc_name (encoding byte included) kept in
 * the Symbol pool after a filler string of filler ASCII bytes, then `spread` more symbols keyed (i + 1) << 44. */
static buf recording_spread(const buf *enc_name, size_t filler, uint64_t spread)
{
    buf b = {0}, pay = {0};
    uint8_t hdr[68] = {'F', 'L', 'R', 0, 0, 2, 0, 0};
    put(&b, hdr, sizeof hdr);
    size_t meta = b.n;
    metadata(&b);
    var(&pay, ID_EXEC), var(&pay, 100), var(&pay, 1); /* startTime, stack trace 1 */
    record(&b, &pay);
    pay.n = 0;
    size_t cp = b.n;
    var(&pay, 1), var(&pay, 0), var(&pay, 0), var(&pay, 0), u8(&pay, 0); /* type, ticks, duration, delta, flags */
    var(&pay, 4);                                                         /* pools */
    var(&pay, ID_SYMBOL), var(&pay, 3 + spread);
    char *fill = malloc(filler + 1);
    assert_non_null(fill);
    memset(fill, 'f', filler);
    fill[filler] = 0;
    var(&pay, 9), str3(&pay, fill);
    free(fill);
    var(&pay, 1), str3(&pay, "App");
    var(&pay, 2), put(&pay, enc_name->p, enc_name->n);
    for (uint64_t i = 0; i < spread; i++) var(&pay, (i + 1) << 44), str3(&pay, "s");
    var(&pay, ID_CLASS), var(&pay, 1), var(&pay, 1), var(&pay, 1);              /* class 1: symbol 1 */
    var(&pay, ID_METHOD), var(&pay, 1), var(&pay, 1), var(&pay, 1), var(&pay, 2); /* method 1: class 1, symbol 2 */
    var(&pay, ID_TRACE), var(&pay, 1), var(&pay, 1), u8(&pay, 0), var(&pay, 1);  /* trace 1: one frame */
    var(&pay, 1), var(&pay, 7);                                                 /* method 1, line 7 */
    record(&b, &pay);
    free(pay.p);
    uint64_t v[7] = {b.n, cp, meta, 1700000000000000000ull, 1000000000ull, 0, 1000000000ull};
    for (int f = 0; f < 7; f++)
        for (int i = 0; i < 8; i++) b.p[8 + 8 * f + i] = (uint8_t)(v[f] >> (56 - 8 * i));
    return b;
}

static buf recording(const buf *enc_name, size_t filler)
{
    return recording_spread(enc_name, filler, 0);
}

/* Writes b to $JFR_TEST_SEEDS/name when set. */
static void maybe_seed(const buf *b, const char *name)
{
    const char *dir = getenv("JFR_TEST_SEEDS");
    if (!dir) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b->p, 1, b->n, f), b->n);
    assert_int_equal(fclose(f), 0);
}

/* Reads rec and asserts that its one stack is exactly "App." + want, with weight 1; its stats in st (or NULL). */
static void expect_name_stats(const buf *rec, const char *want, js_jfr_read_stats *st)
{
    js_profile p;
    js_profile_init(&p);
    char err[512] = "";
    int rc = js_jfr_read_mem(rec->p, rec->n, "t.jfr", NULL, &p, st, err, sizeof err);
    if (rc) print_error("read failed: %s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(p.total, 1);
    assert_int_equal(p.nstacks, 1);
    assert_int_equal(p.stacks[0].depth, 1);
    const char *got = p.frames[p.stacks[0].frames[0]].name;
    assert_int_equal(strncmp(got, "App.", 4), 0);
    assert_int_equal(strlen(got + 4), strlen(want)); /* the length first: a clearer failure than a long diff */
    assert_string_equal(got + 4, want);
    js_profile_free(&p);
}

static void expect_name(const buf *rec, const char *want)
{
    expect_name_stats(rec, want, NULL);
}

/* n copies of the bytes s into out (NUL-terminated by the caller's room). */
static size_t fill(char *out, const char *s, size_t n)
{
    size_t k = strlen(s);
    for (size_t i = 0; i < n; i++) memcpy(out + i * k, s, k);
    return n * k;
}

/* Latin-1 (encoding 5): a character >= 0x80 takes two UTF-8 bytes; the cut is at 8192 bytes of UTF-8 whatever
 * comes after a run of them (before the fix, the ASCII after 4096 two-byte characters was written past the
 * promised room: 12288 bytes, over the arena's end when it was nearly full). */
static void test_latin1(void **state)
{
    static const struct {
        size_t high, ascii, filler;
        const char *seed;
    } cases[] = {
        {4096, 4096, 6000, "latin1-8192-high-then-ascii.jfr"}, /* the review's case, arena nearly full */
        {4096, 4096, 0, NULL},
        {4095, 10, 6000, NULL}, /* one two-byte character short: two ASCII bytes still fit */
        {0, 9000, 6000, NULL},
        {8200, 0, 3000, NULL},
        {1, 8191, 6000, NULL}, /* the two-byte character first: 8190 ASCII fit after it */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].high + cases[c].ascii;
        buf name = {0};
        u8(&name, 5);
        var(&name, n);
        uint8_t *raw = malloc(n);
        assert_non_null(raw);
        memset(raw, 0xe9, cases[c].high);
        memset(raw + cases[c].high, 'A', cases[c].ascii);
        put(&name, raw, n);
        free(raw);
        /* expected: 2 bytes per high character, 1 per ASCII, stopping where the next one would pass 8192 */
        char *want = malloc(NAME_MAX_BYTES + 1);
        assert_non_null(want);
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
            int hi = i < cases[c].high;
            if (o + (hi ? 2u : 1u) > NAME_MAX_BYTES) break;
            o += hi ? fill(want + o, "\xc3\xa9", 1) : fill(want + o, "A", 1);
        }
        want[o] = 0;
        buf rec = recording(&name, cases[c].filler);
        if (cases[c].seed) maybe_seed(&rec, cases[c].seed);
        expect_name(&rec, want);
        free(want);
        free(rec.p);
        free(name.p);
    }
}

/* UTF-8 (encoding 3) and UTF-16 units (encoding 4): cut at 8192 bytes, never inside a character. */
static void test_utf8_utf16(void **state)
{
    char *want = malloc(NAME_MAX_BYTES + 1);
    assert_non_null(want);
    for (int enc = 3; enc <= 4; enc++) {
        buf name = {0};
        u8(&name, (uint8_t)enc);
        var(&name, enc == 3 ? 3 * 3000 : 3000);
        for (int i = 0; i < 3000; i++) {
            if (enc == 3) put(&name, "\xe2\x82\xac", 3); /* U+20AC, three bytes */
            else var(&name, 0x20ac);
        }
        want[fill(want, "\xe2\x82\xac", 2730)] = 0; /* 8190 bytes: the 2731st would pass 8192 */
        buf rec = recording(&name, 6000);
        maybe_seed(&rec, enc == 3 ? "utf8-long.jfr" : "utf16-long.jfr");
        expect_name(&rec, want);
        free(rec.p);
        free(name.p);
    }
    free(want);
}

/* 20,000 symbols whose keys differ only above bit 43: the pool's table places them in about one probe each (72,767
 * with its rehashes). Before the keys were mixed whole (FUZZING.md, finding 9), the slot came from a product's bits
 * 20 and up, the same for every such key: one run of 20,000 slots, 378,909,131 probes (measured with that slot
 * function put back). */
static void test_pool_keys_spread(void **state)
{
    buf name = {0};
    str3(&name, "spread");
    buf rec = recording_spread(&name, 10, 20000);
    js_jfr_read_stats st;
    expect_name_stats(&rec, "spread", &st);
    if (st.pool_probes > 200000) fail_msg("%llu probes for about 20,000 pool entries", (unsigned long long)st.pool_probes);
    assert_true(st.pool_probes >= 20000); /* every entry was placed */
    free(rec.p);
    free(name.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latin1),
        cmocka_unit_test(test_utf8_utf16),
        cmocka_unit_test(test_pool_keys_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
