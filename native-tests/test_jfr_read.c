/* test_jfr_read.c - the JFR reader (src/jfr_read*.c, src/jfr_meta_read*.c) and the JSON tree writer.
 *
 * The recordings are built here byte by byte by a tiny encoder (independent of the project's JFR writer):
 * one chunk = header, metadata (class ids offset by a per-chunk base, so nothing can rely on fixed ids),
 * events of every kind the reader knows plus one to skip, and two chained checkpoints whose pools use every
 * string encoding, nested structs, arrays and pool references. Fault switches break one thing at a time;
 * each malformed input must fail with "NAME: offset N: phrase" at the expected offset. Also: multi-chunk
 * files, filters, the JSON tree (exact text, escaping, allocation split) and a replay of the fuzzing corpus
 * and crash reproducers (native-tests/fuzz-corpus/jfr_read*), which must read or fail cleanly.
 *
 * With JFR_TEST_SEEDS=DIR set, the valid built files are also written to DIR (the fuzzer's seeds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jfr/jfr_read.h"
#include "jfr/jfr_write.h"
#include "output/output.h"
#include "output/profile.h"
#include "testutil.h"

/* ---- a tiny JFR encoder ------------------------------------------------------------------------------ */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} tb;

/* Appends n bytes. */
static void tb_put(tb *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}

/* Appends one byte. */
static void tb_u8(tb *b, uint8_t v)
{
    tb_put(b, &v, 1);
}

/* Bytes of the minimal varint of v. */
static size_t var_len(uint64_t v)
{
    size_t n = 1;
    while (n < 9 && v >= 0x80) v >>= 7, n++;
    return n;
}

/* Appends the minimal LEB128 varint of v (9 bytes at most, the 9th carrying 8 bits). */
static void tb_var(tb *b, uint64_t v)
{
    for (size_t i = 0; i < 8 && v >= 0x80; i++, v >>= 7) tb_u8(b, (uint8_t)(v | 0x80));
    tb_u8(b, (uint8_t)v);
}

/* Appends v as a padded varint of exactly 9 bytes (patchable in place). */
static void tb_var9(tb *b, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 7) tb_u8(b, (uint8_t)(v | 0x80));
    tb_u8(b, (uint8_t)v);
}

/* Writes v as a padded 9-byte varint at b->p[at]. */
static void patch_var9(tb *b, size_t at, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 7) b->p[at + i] = (uint8_t)(v | 0x80);
    b->p[at + 8] = (uint8_t)v;
}

/* Appends a string in encoding 3 (UTF-8); NULL is encoding 0. */
static void tb_str(tb *b, const char *s)
{
    if (!s) {
        tb_u8(b, 0);
        return;
    }
    tb_u8(b, 3);
    tb_var(b, strlen(s));
    tb_put(b, s, strlen(s));
}

/* Writes v big-endian in n bytes at b->p[at]. */
static void patch_be(tb *b, size_t at, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8) b->p[at + (size_t)i] = (uint8_t)v;
}

/* Appends a record: payload prefixed by its size (which counts itself) as a 9-byte padded varint. */
static void tb_rec(tb *out, const tb *payload)
{
    tb_var9(out, payload->n + 9);
    tb_put(out, payload->p, payload->n);
}

/* Appends a record with the smallest size varint. */
static void tb_rec_small(tb *out, const tb *payload)
{
    size_t s = 1;
    while (var_len(payload->n + s) != s) s++;
    tb_var(out, payload->n + s);
    tb_put(out, payload->p, payload->n);
}

/* Releases b. */
static void tb_free(tb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- the test recording's metadata ------------------------------------------------------------------- */

enum {
    C_LONG, C_INT, C_BOOL, C_STRING, C_FLOAT, C_DOUBLE, C_BYTE, C_THREAD, C_CLASS, C_PACKAGE, C_SYMBOL, C_FTYPE,
    C_TSTATE, C_TRACE, C_FRAME, C_METHOD, C_EXEC, C_WALL, C_TLAB, C_OUTSIDE, C_ASAMPLE, C_MONITOR, C_PARK,
    C_CPULOAD, C_BLOB, C_INNER, C_REC, C_EMPTY, NCLS
};

typedef struct {
    const char *name;
    int type;
    int cp, array;
} tfield;

typedef struct {
    const char *name, *super;
    int simple;
    tfield f[9];
} tclass;

#define EV "jdk.jfr.Event"
#define START {"startTime", C_LONG, 0, 0}
static const tclass classes[NCLS] = {
    [C_LONG] = {"long", NULL, 0, {{0}}},
    [C_INT] = {"int", NULL, 0, {{0}}},
    [C_BOOL] = {"boolean", NULL, 0, {{0}}},
    [C_STRING] = {"java.lang.String", NULL, 0, {{0}}},
    [C_FLOAT] = {"float", NULL, 0, {{0}}},
    [C_DOUBLE] = {"double", NULL, 0, {{0}}},
    [C_BYTE] = {"byte", NULL, 0, {{0}}},
    [C_THREAD] = {"java.lang.Thread", NULL, 0,
                  {{"osName", C_STRING, 0, 0}, {"osThreadId", C_LONG, 0, 0}, {"javaName", C_STRING, 0, 0},
                   {"javaThreadId", C_LONG, 0, 0}}},
    [C_CLASS] = {"java.lang.Class", NULL, 0,
                 {{"name", C_SYMBOL, 1, 0}, {"package", C_PACKAGE, 1, 0}, {"modifiers", C_INT, 0, 0},
                  {"hidden", C_BOOL, 0, 0}}},
    [C_PACKAGE] = {"jdk.types.Package", NULL, 0, {{"name", C_SYMBOL, 1, 0}}},
    [C_SYMBOL] = {"jdk.types.Symbol", NULL, 1, {{"string", C_STRING, 0, 0}}},
    [C_FTYPE] = {"jdk.types.FrameType", NULL, 1, {{"description", C_STRING, 0, 0}}},
    [C_TSTATE] = {"jdk.types.ThreadState", NULL, 1, {{"name", C_STRING, 0, 0}}},
    [C_TRACE] = {"jdk.types.StackTrace", NULL, 0, {{"truncated", C_BOOL, 0, 0}, {"frames", C_FRAME, 0, 1}}},
    [C_FRAME] = {"jdk.types.StackFrame", NULL, 0,
                 {{"method", C_METHOD, 1, 0}, {"lineNumber", C_INT, 0, 0}, {"bytecodeIndex", C_INT, 0, 0},
                  {"type", C_FTYPE, 1, 0}}},
    [C_METHOD] = {"jdk.types.Method", NULL, 0,
                  {{"type", C_CLASS, 1, 0}, {"name", C_SYMBOL, 1, 0}, {"descriptor", C_SYMBOL, 1, 0},
                   {"modifiers", C_INT, 0, 0}, {"hidden", C_BOOL, 0, 0}}},
    [C_EXEC] = {"jdk.ExecutionSample", EV, 0,
                {START, {"sampledThread", C_THREAD, 1, 0}, {"stackTrace", C_TRACE, 1, 0}, {"state", C_TSTATE, 1, 0}}},
    [C_WALL] = {"profiler.WallClockSample", EV, 0,
                {START, {"sampledThread", C_THREAD, 1, 0}, {"stackTrace", C_TRACE, 1, 0}, {"state", C_TSTATE, 1, 0},
                 {"samples", C_INT, 0, 0}, {"timeSpan", C_LONG, 0, 0}}},
    [C_TLAB] = {"jdk.ObjectAllocationInNewTLAB", EV, 0,
                {START, {"eventThread", C_THREAD, 1, 0}, {"stackTrace", C_TRACE, 1, 0},
                 {"objectClass", C_CLASS, 1, 0}, {"allocationSize", C_LONG, 0, 0}, {"tlabSize", C_LONG, 0, 0}}},
    [C_OUTSIDE] = {"jdk.ObjectAllocationOutsideTLAB", EV, 0,
                   {START, {"eventThread", C_THREAD, 1, 0}, {"stackTrace", C_TRACE, 1, 0},
                    {"objectClass", C_CLASS, 1, 0}, {"allocationSize", C_LONG, 0, 0}}},
    [C_ASAMPLE] = {"jdk.ObjectAllocationSample", EV, 0,
                   {START, {"eventThread", C_THREAD, 1, 0}, {"stackTrace", C_TRACE, 1, 0},
                    {"objectClass", C_CLASS, 1, 0}, {"weight", C_LONG, 0, 0}}},
    [C_MONITOR] = {"jdk.JavaMonitorEnter", EV, 0,
                   {START, {"duration", C_LONG, 0, 0}, {"eventThread", C_THREAD, 1, 0}, {"stackTrace", C_TRACE, 1, 0},
                    {"monitorClass", C_CLASS, 1, 0}, {"previousOwner", C_THREAD, 1, 0}, {"address", C_LONG, 0, 0}}},
    [C_PARK] = {"jdk.ThreadPark", EV, 0,
                {START, {"duration", C_LONG, 0, 0}, {"eventThread", C_THREAD, 1, 0}, {"stackTrace", C_TRACE, 1, 0},
                 {"parkedClass", C_CLASS, 1, 0}, {"timeout", C_LONG, 0, 0}, {"until", C_LONG, 0, 0},
                 {"address", C_LONG, 0, 0}}},
    [C_CPULOAD] = {"jdk.CPULoad", EV, 0,
                   {START, {"jvmUser", C_FLOAT, 0, 0}, {"jvmSystem", C_FLOAT, 0, 0}, {"machineTotal", C_FLOAT, 0, 0}}},
    [C_BLOB] = {"test.Blob", NULL, 0,
                {{"s", C_STRING, 0, 0}, {"d", C_DOUBLE, 0, 0}, {"f", C_FLOAT, 0, 0}, {"b", C_BYTE, 0, 0},
                 {"arr", C_INT, 0, 1}, {"inner", C_INNER, 0, 0}, {"syms", C_SYMBOL, 1, 1}, {"inners", C_INNER, 0, 1},
                 {"flag", C_BOOL, 0, 0}}},
    [C_INNER] = {"test.Inner", NULL, 0, {{"x", C_LONG, 0, 0}, {"name", C_STRING, 0, 0}}},
    [C_REC] = {"test.Rec", NULL, 0, {{"v", C_INT, 0, 0}, {"next", C_REC, 0, 0}}},
    [C_EMPTY] = {"test.Empty", NULL, 0, {{0}}},
};

/* Faults the builder can inject, one at a time. */
enum {
    F_NONE, F_DEEP_META, F_HUGE_STRINGS, F_BAD_ENCODING, F_HUGE_POOL, F_HUGE_ARRAY, F_UNDECLARED_POOL, F_REC_TYPE,
    F_EMPTY_TYPE, F_CP_TRAILING, F_ZERO_EVENT, F_EVENT_PAST_END, F_EVENT_CUT, F_META_STRING_REF
};

typedef struct {
    uint64_t id_base; /* class i has id id_base + 3 * i */
    int fault;
} tspec;

typedef struct {
    tb b;
    size_t meta, cp_a, cp_b, delta_b, delta_a, fault_at; /* chunk-relative offsets */
} tchunk;

#define TPS 1000000ull                     /* ticks per second: 1 tick = 1 us */
#define START_NANOS 1700000000000000000ull /* 2023-11-14 */
#define START_TICKS 5000000ull

/* Class id of class index c. */
static uint64_t cid(const tspec *s, int c)
{
    return s->id_base + 3 * (uint64_t)c;
}

typedef struct {
    char *s[256];
    int n;
} strtab;

/* Index of s in the string table, added when new. */
static uint64_t st_idx(strtab *t, const char *s)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->s[i], s) == 0) return (uint64_t)i;
    assert_true(t->n < 256);
    t->s[t->n] = strdup(s);
    return (uint64_t)t->n++;
}

/* Appends an element header: name and attributes (key/value pairs, NULL-terminated). */
static void el(tb *t, strtab *st, const char *name, const char *const *attrs)
{
    int n = 0;
    while (attrs && attrs[2 * n]) n++;
    tb_var(t, st_idx(st, name));
    tb_var(t, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        tb_var(t, st_idx(st, attrs[2 * i]));
        tb_var(t, st_idx(st, attrs[2 * i + 1]));
    }
}

/* Appends one class element with its field children. */
static void el_class(tb *t, strtab *st, const tspec *s, int c)
{
    const tclass *k = &classes[c];
    char id[32];
    snprintf(id, sizeof id, "%llu", (unsigned long long)cid(s, c));
    const char *attrs[9] = {"name", k->name, "id", id, NULL, NULL, NULL, NULL, NULL};
    int a = 4;
    if (k->super) attrs[a++] = "superType", attrs[a++] = k->super;
    if (k->simple) attrs[a++] = "simpleType", attrs[a++] = "true";
    el(t, st, "class", attrs);
    int nf = 0;
    while (nf < 9 && k->f[nf].name) nf++;
    tb_var(t, (uint64_t)nf);
    for (int i = 0; i < nf; i++) {
        char ty[32];
        snprintf(ty, sizeof ty, "%llu", (unsigned long long)cid(s, k->f[i].type));
        const char *fa[9] = {"name", k->f[i].name, "class", ty, NULL, NULL, NULL, NULL, NULL};
        int b = 4;
        if (k->f[i].cp) fa[b++] = "constantPool", fa[b++] = "true";
        if (k->f[i].array) fa[b++] = "dimension", fa[b++] = "1";
        el(t, st, "field", fa);
        tb_var(t, 0);
    }
}

/* The metadata record (size, type 0, payload); *fault_at gets the string count's offset in out. */
static void build_meta(tb *out, const tspec *s, size_t *fault_at)
{
    strtab st = {0};
    tb tree = {0}, pay = {0};
    el(&tree, &st, "root", NULL);
    tb_var(&tree, 2);
    el(&tree, &st, "metadata", NULL);
    tb_var(&tree, NCLS);
    for (int c = 0; c < NCLS; c++) el_class(&tree, &st, s, c);
    const char *region[] = {"locale", "en_US", "gmtOffset", "0", NULL};
    el(&tree, &st, "region", region);
    int deep = s->fault == F_DEEP_META ? 20 : 0;
    tb_var(&tree, deep ? 1 : 0);
    for (int i = 0; i < deep; i++) {
        el(&tree, &st, "x", NULL);
        tb_var(&tree, i + 1 < deep ? 1 : 0);
    }
    tb_var(&pay, 0);                  /* type 0 */
    tb_var(&pay, START_TICKS);        /* startTicks */
    tb_var(&pay, 0);                  /* duration */
    tb_var(&pay, 1 + s->id_base);     /* metadataId */
    *fault_at = out->n + 9 + pay.n;
    tb_var(&pay, s->fault == F_HUGE_STRINGS ? 0xffffffffull : (uint64_t)st.n + (s->fault == F_META_STRING_REF));
    if (s->fault == F_META_STRING_REF) *fault_at = out->n + 9 + pay.n;
    if (s->fault == F_META_STRING_REF) tb_put(&pay, "\x02\x07", 2); /* shifts every index: fails first */
    for (int i = 0; i < st.n; i++) {
        if (i % 3 == 1) { /* also encoding 4 (UTF-16 units), as HotSpot writes its metadata */
            size_t n = strlen(st.s[i]);
            tb_u8(&pay, 4);
            tb_var(&pay, n);
            for (size_t j = 0; j < n; j++) tb_var(&pay, (uint8_t)st.s[i][j]);
        } else {
            tb_str(&pay, st.s[i]);
        }
        free(st.s[i]);
    }
    tb_put(&pay, tree.p, tree.n);
    tb_rec(out, &pay);
    tb_free(&tree);
    tb_free(&pay);
}

/* Appends a string in encoding 4 (UTF-16 units, each a varint) from a list of units. */
static void str16(tb *b, const uint16_t *u, size_t n)
{
    tb_u8(b, 4);
    tb_var(b, n);
    for (size_t i = 0; i < n; i++) tb_var(b, u[i]);
}

/* Appends a string in encoding 5 (Latin-1 bytes). */
static void str_latin1(tb *b, const char *s)
{
    tb_u8(b, 5);
    tb_var(b, strlen(s));
    tb_put(b, s, strlen(s));
}

/* Symbols (keys 1..): written in encodings 3, 4, 5 and 2 (a java.lang.String pool reference). */
static void pool_symbols(tb *p, const tspec *s, size_t *fault_at, size_t base)
{
    static const uint16_t compute[] = {'c', 'o', 'm', 'p', 'u', 't', 'e'};
    static const uint16_t emoji[] = {'e', 0xd83d, 0xde00}; /* "e" U+1F600 */
    tb_var(p, cid(s, C_SYMBOL));
    tb_var(p, 11);
    tb_var(p, 11), tb_str(p, "[unknown_Java]");
    tb_var(p, 1), tb_str(p, "com/example/App");
    tb_var(p, 2), tb_str(p, "java/lang/Thread");
    tb_var(p, 3), tb_str(p, "java/lang/String");
    tb_var(p, 4), tb_str(p, "[B");
    tb_var(p, 5), str_latin1(p, "main");
    tb_var(p, 6), str16(p, compute, 7);
    tb_var(p, 7), tb_u8(p, 2), tb_var(p, 77); /* "run", from the String pool */
    tb_var(p, 8), str_latin1(p, "gr\xf6\xdf" "e");
    tb_var(p, 9), str16(p, emoji, 3);
    tb_var(p, 10);
    *fault_at = base + p->n;
    if (s->fault == F_BAD_ENCODING) tb_u8(p, 7), tb_var(p, 0);
    else tb_str(p, "()V");
}

/* The first checkpoint's pools: test.Blob, java.lang.String, Symbol, FrameType. */
static void pools_a(tb *p, const tspec *s, size_t *fault_at, size_t base)
{
    /* test.Blob: every field kind and string encoding, nested structs, arrays */
    tb_var(p, cid(s, C_BLOB));
    if (s->fault == F_HUGE_POOL) *fault_at = base + p->n;
    tb_var(p, s->fault == F_HUGE_POOL ? 0xffffffffffull : 2);
    for (int e = 0; e < 2; e++) {
        tb_var(p, 100 + (uint64_t)e);
        if (e == 0) tb_u8(p, 1); /* "" */
        else tb_u8(p, 2), tb_var(p, 77);
        tb_put(p, "\x40\x09\x21\xfb\x54\x44\x2d\x18", 8); /* double */
        tb_put(p, "\x3f\x80\x00\x00", 4);                 /* float */
        tb_u8(p, 0xff);                                   /* byte */
        if (s->fault == F_HUGE_ARRAY && e == 1) *fault_at = base + p->n;
        tb_var(p, s->fault == F_HUGE_ARRAY && e == 1 ? 1000000 : 3);
        tb_var(p, 1), tb_var(p, 0xffffffffull), tb_var(p, 300);
        tb_var(p, 42), tb_u8(p, 0); /* inner: x, name null */
        tb_var(p, 2), tb_var(p, 1), tb_var(p, 2); /* syms */
        tb_var(p, 1), tb_var(p, 7), str_latin1(p, "x"); /* inners */
        tb_u8(p, 1);
    }
    tb_var(p, cid(s, C_STRING));
    tb_var(p, 1);
    tb_var(p, 77), tb_str(p, "run");
    size_t sym_at;
    pool_symbols(p, s, &sym_at, base);
    if (s->fault == F_BAD_ENCODING) *fault_at = sym_at;
    tb_var(p, cid(s, C_FTYPE));
    tb_var(p, 5);
    tb_var(p, 10), tb_str(p, "Inlined");
    tb_var(p, 11), tb_str(p, "JIT compiled");
    tb_var(p, 12), tb_str(p, "Interpreted");
    tb_var(p, 13), tb_str(p, "Native");
    tb_var(p, 14), tb_str(p, "C1 compiled");
}

/* One stack frame: method key, line, bci, frame type key. */
static void frame(tb *p, uint64_t m, int32_t line, uint64_t type)
{
    tb_var(p, m);
    tb_var(p, (uint32_t)line);
    tb_var(p, 0);
    tb_var(p, type);
}

/* The second checkpoint's pools: threads, classes, packages, methods, stack traces, thread states. */
static void pools_b(tb *p, const tspec *s, size_t *fault_at, size_t base)
{
    tb_var(p, cid(s, C_THREAD));
    tb_var(p, 3);
    tb_var(p, 1), tb_str(p, "main-os"), tb_var(p, 1001), tb_str(p, "main"), tb_var(p, 1);
    tb_var(p, 2), tb_str(p, "worker-os"), tb_var(p, 1002), tb_str(p, "worker-1"), tb_var(p, 2);
    tb_var(p, 3), tb_str(p, "GC Thread#0"), tb_var(p, 1003), tb_str(p, NULL), tb_var(p, 0);
    tb_var(p, cid(s, C_CLASS));
    tb_var(p, 4);
    for (uint64_t k = 1; k <= 4; k++) tb_var(p, k), tb_var(p, k), tb_var(p, 1), tb_var(p, 1), tb_u8(p, 0);
    tb_var(p, cid(s, C_PACKAGE));
    tb_var(p, 1);
    tb_var(p, 1), tb_var(p, 1);
    tb_var(p, cid(s, C_METHOD));
    tb_var(p, 6);
    /* key, class, name symbol */
    static const uint64_t meth[6][3] = {{1, 1, 5}, {2, 1, 6}, {3, 2, 7}, {4, 1, 8}, {5, 1, 9}, {6, 0, 11}};
    for (int i = 0; i < 6; i++) {
        tb_var(p, meth[i][0]), tb_var(p, meth[i][1]), tb_var(p, meth[i][2]), tb_var(p, 10), tb_var(p, 1);
        tb_u8(p, 0);
    }
    tb_var(p, cid(s, C_TRACE));
    tb_var(p, 4);
    tb_var(p, 4), tb_u8(p, 0), tb_var(p, 1); /* a profiler's pseudo frame: no class, bracketed name */
    frame(p, 6, -1, 13);
    tb_var(p, 1), tb_u8(p, 0), tb_var(p, 3); /* compute <- main <- run, leaf first */
    frame(p, 2, 42, 11), frame(p, 1, 10, 12), frame(p, 3, -1, 10);
    tb_var(p, 2), tb_u8(p, 0), tb_var(p, 2);
    frame(p, 1, 11, 12), frame(p, 3, 0, 10); /* no line: 0 as most producers write it, -1 as HotSpot does */
    tb_var(p, 3), tb_u8(p, 1), tb_var(p, 3); /* truncated: read with a "[truncated]" root frame */
    frame(p, 5, 1, 14), frame(p, 4, 2, 13), frame(p, 3, -1, 10);
    tb_var(p, cid(s, C_TSTATE));
    tb_var(p, 1);
    tb_var(p, 5), tb_str(p, "STATE_RUNNABLE");
    *fault_at = base + p->n;
    if (s->fault == F_UNDECLARED_POOL) tb_var(p, 999), tb_var(p, 1), tb_var(p, 1), tb_var(p, 1);
    if (s->fault == F_REC_TYPE) { /* test.Rec nests itself: 40 levels */
        tb_var(p, cid(s, C_REC)), tb_var(p, 1), tb_var(p, 1);
        for (int i = 0; i < 40; i++) tb_var(p, (uint64_t)i);
    }
    if (s->fault == F_EMPTY_TYPE) tb_var(p, cid(s, C_EMPTY)), tb_var(p, 1), tb_var(p, 1);
}

/* A checkpoint record: startTicks, duration, delta (9 bytes, patchable), flags, pools. Returns delta's offset. */
static size_t checkpoint(tb *out, const tb *pools, int npools, size_t extra)
{
    tb pay = {0};
    tb_var(&pay, 1);
    tb_var(&pay, START_TICKS);
    tb_var(&pay, 0);
    size_t delta_at = out->n + 9 + pay.n;
    tb_var9(&pay, 0);
    tb_u8(&pay, 0);
    tb_var(&pay, (uint64_t)npools);
    tb_put(&pay, pools->p, pools->n);
    for (size_t i = 0; i < extra; i++) tb_u8(&pay, 0);
    tb_rec(out, &pay);
    tb_free(&pay);
    return delta_at;
}

/* One event record from a list of values: type, then varints (startTime relative to START_TICKS first). */
static void event(tb *out, const tspec *s, int c, int n, ...)
{
    tb pay = {0};
    va_list ap;
    va_start(ap, n);
    tb_var(&pay, cid(s, c));
    tb_var(&pay, START_TICKS + va_arg(ap, uint64_t));
    for (int i = 1; i < n; i++) tb_var(&pay, va_arg(ap, uint64_t));
    va_end(ap);
    if (c == C_CPULOAD) tb_put(&pay, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    if (c == C_WALL) tb_put(&pay, "\0\0\0", 3); /* trailing bytes inside the event are tolerated */
    tb_rec_small(out, &pay);
    tb_free(&pay);
}

#define U(x) ((uint64_t)(x))

/* The events: cpu 7 (one with a missing stack), wall 2, alloc 4, lock 3, one CPULoad to skip. */
static void events(tb *o, const tspec *s)
{
    event(o, s, C_EXEC, 4, U(100000), U(1), U(1), U(5));
    event(o, s, C_CPULOAD, 1, U(150000));
    event(o, s, C_EXEC, 4, U(200000), U(1), U(1), U(5));
    event(o, s, C_EXEC, 4, U(1500000), U(1), U(1), U(5));
    event(o, s, C_EXEC, 4, U(2500000), U(2), U(2), U(5));
    event(o, s, C_EXEC, 4, U(3500000), U(2), U(2), U(5));
    event(o, s, C_EXEC, 4, U(3600000), U(3), U(1), U(5));
    event(o, s, C_EXEC, 4, U(3700000), U(2), U(99), U(5));
    event(o, s, C_WALL, 6, U(1000), U(2), U(2), U(5), U(5), U(50));
    event(o, s, C_WALL, 6, U(2000), U(1), U(3), U(5), U(7), U(50));
    event(o, s, C_TLAB, 6, U(3000), U(1), U(1), U(3), U(24), U(1000));
    event(o, s, C_TLAB, 6, U(3100), U(1), U(1), U(3), U(48), U(0));
    event(o, s, C_OUTSIDE, 5, U(3200), U(2), U(2), U(4), U(5000));
    event(o, s, C_ASAMPLE, 5, U(3300), U(1), U(2), U(4), U(700));
    event(o, s, C_MONITOR, 7, U(4000), U(250), U(1), U(1), U(2), U(0), U(0));
    event(o, s, C_PARK, 8, U(5000), U(1000), U(2), U(2), U(0), U(0), U(0), U(0));
    event(o, s, C_PARK, 8, U(5100), U(1), U(3), U(4), U(0), U(0), U(0), U(0));
}

/* Builds one chunk: header, metadata, events, checkpoint A, checkpoint B (header -> B -> A). */
static void build_chunk(tchunk *k, const tspec *s)
{
    memset(k, 0, sizeof *k);
    tb *b = &k->b;
    uint8_t hdr[68] = {'F', 'L', 'R', 0, 0, 2, 0, 1};
    tb_put(b, hdr, sizeof hdr);
    k->meta = b->n;
    size_t meta_fault;
    build_meta(b, s, &meta_fault);
    if (s->fault == F_HUGE_STRINGS || s->fault == F_META_STRING_REF) k->fault_at = meta_fault;
    events(b, s);
    if (s->fault == F_ZERO_EVENT) k->fault_at = b->n, tb_u8(b, 0);
    if (s->fault == F_EVENT_PAST_END) k->fault_at = b->n, tb_var(b, 100000), tb_var(b, cid(s, C_EXEC));
    if (s->fault == F_EVENT_CUT) k->fault_at = b->n, tb_u8(b, 4), tb_var(b, cid(s, C_EXEC)), tb_u8(b, 0x85);
    tb pa = {0}, pb = {0};
    size_t pa_at = b->n + 9 + 1 + var_len(START_TICKS) + 1 + 9 + 1 + 1, b_fault = 0; /* where pools_a lands */
    pools_a(&pa, s, &k->fault_at, pa_at);
    k->cp_a = b->n;
    k->delta_a = checkpoint(b, &pa, 4, 0);
    pools_b(&pb, s, &b_fault, b->n + 9 + 1 + var_len(START_TICKS) + 1 + 9 + 1 + 1);
    if (s->fault == F_UNDECLARED_POOL) k->fault_at = b_fault;
    int nb = 6 + (s->fault == F_UNDECLARED_POOL || s->fault == F_REC_TYPE || s->fault == F_EMPTY_TYPE);
    k->cp_b = b->n;
    k->delta_b = checkpoint(b, &pb, nb, s->fault == F_CP_TRAILING ? 3 : 0);
    patch_var9(b, k->delta_b, (uint64_t)-(int64_t)(k->cp_b - k->cp_a));
    tb_free(&pa);
    tb_free(&pb);
    patch_be(b, 8, b->n, 8);
    patch_be(b, 16, k->cp_b, 8);
    patch_be(b, 24, k->meta, 8);
    patch_be(b, 32, START_NANOS, 8);
    patch_be(b, 40, 6000000000ull, 8);
    patch_be(b, 48, START_TICKS, 8);
    patch_be(b, 56, TPS, 8);
}

/* ---- helpers ----------------------------------------------------------------------------------------- */

/* Reads buf into p (initialised here) with options o (NULL = cpu); the reader's code, err filled. */
static int read_buf(const tb *b, const js_jfr_read_opts *o, js_profile *p, js_jfr_read_stats *st, char *err,
                    size_t errlen)
{
    js_profile_init(p);
    err[0] = 0;
    return js_jfr_read_mem(b->p, b->n, "t.jfr", o, p, st, err, errlen);
}

/* The profile as sorted collapsed text (names, root first), after normalising. */
static char *collapsed(js_profile *p)
{
    assert_int_equal(js_profile_normalize(p), 0);
    return tu_stacks(p);
}

/* Asserts that b reads into exactly the collapsed text want (with total weight total) under o. */
static void expect_stacks(const tb *b, const js_jfr_read_opts *o, const char *want, uint64_t total)
{
    js_profile p;
    char err[512];
    int rc = read_buf(b, o, &p, NULL, err, sizeof err);
    if (rc) print_error("read failed: %s\n", err);
    assert_int_equal(rc, 0);
    char *got = collapsed(&p);
    tu_assert_text(got, want);
    assert_int_equal(p.total, total);
    free(got);
    js_profile_free(&p);
}

/* Asserts that b fails with an error containing "t.jfr: offset OFF: " and phrase. */
static void expect_error(const tb *b, uint64_t off, const char *phrase)
{
    js_profile p;
    char err[512], want[64];
    int rc = read_buf(b, NULL, &p, NULL, err, sizeof err);
    snprintf(want, sizeof want, "t.jfr: offset %llu: ", (unsigned long long)off);
    if (rc != -1 || !strstr(err, want) || !strstr(err, phrase))
        print_error("want '%s...%s', got rc %d '%s'\n", want, phrase, rc, err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, phrase));
    assert_null(strchr(err, '\n'));
    js_profile_free(&p);
}

/* Builds a chunk with fault f. */
static tchunk chunk_with(int f)
{
    tspec s = {100, f};
    tchunk k;
    build_chunk(&k, &s);
    return k;
}

/* Writes b to dir/name when JFR_TEST_SEEDS is set (fuzzing seeds). */
static void maybe_seed(const tb *b, const char *name)
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

#define STACK1 "java.lang.Thread.run;com.example.App.main;com.example.App.compute"
#define STACK2 "java.lang.Thread.run;com.example.App.main"

/* ---- valid input ------------------------------------------------------------------------------------- */

/* cpu: stacks root first, names from every string encoding, weights, and the missing stack in the total. */
static void test_cpu(void **state)
{
    tchunk k = chunk_with(F_NONE);
    maybe_seed(&k.b, "valid-one-chunk.jfr");
    expect_stacks(&k.b, NULL, " 1\n" STACK2 " 2\n" STACK1 " 4\n", 7); /* " 1": the missing stack */
    js_profile p;
    js_jfr_read_stats st;
    char err[512];
    assert_int_equal(read_buf(&k.b, NULL, &p, &st, err, sizeof err), 0);
    assert_int_equal(st.chunks, 1);
    assert_int_equal(st.events, 7);
    assert_string_equal(p.unit, "samples");
    /* frame types come from the FrameType descriptions, not from their keys */
    static const struct {
        const char *name;
        js_frame_type t;
    } want[] = {{"com.example.App.compute", JS_FT_JIT}, {"com.example.App.main", JS_FT_INTERPRETED},
                {"java.lang.Thread.run", JS_FT_INLINED}};
    for (size_t i = 0; i < 3; i++) {
        size_t f = 0;
        while (f < p.nframes && strcmp(p.frames[f].name, want[i].name) != 0) f++;
        assert_true(f < p.nframes);
        assert_int_equal(p.frames[f].type, want[i].t);
    }
    js_profile_free(&p);
    tb_free(&k.b);
}

/* --threads adds "[name tid=N]" roots (Java name, else OS name); --lines appends ":LINE" when known. */
static void test_threads_lines(void **state)
{
    tchunk k = chunk_with(F_NONE);
    js_jfr_read_opts o = {.threads = 1};
    expect_stacks(&k.b, &o,
                  "[GC Thread#0 tid=1003];" STACK1 " 1\n"
                  "[main tid=1001];" STACK1 " 3\n"
                  "[worker-1 tid=1002] 1\n"
                  "[worker-1 tid=1002];" STACK2 " 2\n",
                  7);
    js_jfr_read_opts l = {.lines = 1};
    expect_stacks(&k.b, &l,
                  " 1\n"
                  "java.lang.Thread.run;com.example.App.main:10;com.example.App.compute:42 4\n"
                  "java.lang.Thread.run;com.example.App.main:11 2\n",
                  7);
    tb_free(&k.b);
}

/* wall, alloc and lock: weights, class leaf frames and their types, units. */
static void test_other_events(void **state)
{
    tchunk k = chunk_with(F_NONE);
    js_jfr_read_opts w = {.kind = JS_JFR_READ_WALL};
    expect_stacks(&k.b, &w,
                  "[truncated];java.lang.Thread.run;com.example.App.gr\xc3\xb6\xc3\x9f"
                  "e;com.example.App.e\xf0\x9f\x98\x80 7\n" STACK2 " 5\n",
                  12);
    js_jfr_read_opts a = {.kind = JS_JFR_READ_ALLOC};
    expect_stacks(&k.b, &a, STACK2 ";byte[]_[k] 5700\n" STACK1 ";java.lang.String_[i] 1048\n", 6748);
    js_jfr_read_opts l = {.kind = JS_JFR_READ_LOCK};
    expect_stacks(&k.b, &l, "[unknown_Java] 1000\n" STACK2 " 1000000\n" STACK1 ";java.lang.Thread_[i] 250000\n",
                  1251000);
    js_profile p;
    char err[512];
    assert_int_equal(read_buf(&k.b, &a, &p, NULL, err, sizeof err), 0);
    assert_string_equal(p.unit, "bytes");
    for (size_t f = 0; f < p.nframes; f++) {
        if (strcmp(p.frames[f].name, "byte[]_[k]") == 0) assert_int_equal(p.frames[f].type, JS_FT_KERNEL);
        if (strcmp(p.frames[f].name, "java.lang.String_[i]") == 0) assert_int_equal(p.frames[f].type, JS_FT_INLINED);
    }
    js_profile_free(&p);
    assert_int_equal(read_buf(&k.b, &w, &p, NULL, err, sizeof err), 0);
    for (size_t f = 0; f < p.nframes; f++) {
        if (strstr(p.frames[f].name, "gr")) assert_int_equal(p.frames[f].type, JS_FT_NATIVE);
        if (strstr(p.frames[f].name, "App.e")) assert_int_equal(p.frames[f].type, JS_FT_C1);
    }
    js_profile_free(&p);
    assert_int_equal(read_buf(&k.b, &l, &p, NULL, err, sizeof err), 0);
    assert_string_equal(p.unit, "ns");
    for (size_t f = 0; f < p.nframes; f++) /* a method without a class and a bracketed name: error kind */
        if (strcmp(p.frames[f].name, "[unknown_Java]") == 0) assert_int_equal(p.frames[f].type, JS_FT_ERROR);
    js_profile_free(&p);
    tb_free(&k.b);
}

/* Thread filter (substring, glob) and time range (relative, with units, absolute). */
static void test_filters(void **state)
{
    tchunk k = chunk_with(F_NONE);
    js_jfr_read_opts sub = {.thread = "work"};
    expect_stacks(&k.b, &sub, " 1\n" STACK2 " 2\n", 3);
    js_jfr_read_opts glob = {.thread = "m?in"};
    expect_stacks(&k.b, &glob, STACK1 " 3\n", 3);
    js_jfr_read_opts none = {.thread = "nobody"};
    expect_stacks(&k.b, &none, "", 0);
    js_jfr_read_opts range = {0};
    int abs;
    assert_int_equal(js_jfr_read_parse_time("1s", &abs, &range.from_ns), 0);
    assert_int_equal(abs, 0);
    assert_int_equal(js_jfr_read_parse_time("3000ms", &abs, &range.to_ns), 0);
    range.has_from = range.has_to = 1;
    expect_stacks(&k.b, &range, STACK2 " 1\n" STACK1 " 1\n", 2);
    js_jfr_read_opts absr = {.has_from = 1, .from_abs = 1};
    char at[64];
    snprintf(at, sizeof at, "@%llu", (unsigned long long)(START_NANOS / 1000000 + 3550));
    assert_int_equal(js_jfr_read_parse_time(at, &abs, &absr.from_ns), 0);
    assert_int_equal(abs, 1);
    expect_stacks(&k.b, &absr, " 1\n" STACK1 " 1\n", 2);
    js_jfr_read_stats st;
    js_profile p;
    char err[512];
    assert_int_equal(read_buf(&k.b, &range, &p, &st, err, sizeof err), 0);
    assert_int_equal(st.events, 2);
    assert_int_equal(st.skipped, 5);
    js_profile_free(&p);
    tb_free(&k.b);
}

/* Option parsing helpers. */
static void test_parse(void **state)
{
    int abs;
    int64_t ns;
    static const struct {
        const char *s;
        int abs;
        int64_t ns;
    } ok[] = {{"90", 0, 90000000000}, {"1.5s", 0, 1500000000}, {"200ms", 0, 200000000}, {"2m", 0, 120000000000},
              {"1h", 0, 3600000000000}, {"7us", 0, 7000}, {"12ns", 0, 12}, {".5", 0, 500000000},
              {"@1700000000123", 1, 1700000000123000000}, {"0.000000001", 0, 1}, {"1.0000000005", 0, 1000000001},
              {"2.5m", 0, 150000000000}, {"9223372036.854775807", 0, INT64_MAX}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(js_jfr_read_parse_time(ok[i].s, &abs, &ns), 0);
        assert_int_equal(abs, ok[i].abs);
        assert_int_equal(ns, ok[i].ns);
    }
    static const char *const bad[] = {"", "s", "-1", "1x", "1.5.2", "@1.5", "@", "@1s", "inf", "1e3", "99999999999h",
                                      "0x10", "9223372037", "@9223372036855", "99999999999999999999999", " 1", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(js_jfr_read_parse_time(bad[i], &abs, &ns), -1);
    js_jfr_read_kind kd;
    assert_int_equal(js_jfr_read_kind_parse("lock", &kd), 0);
    assert_int_equal(kd, JS_JFR_READ_LOCK);
    assert_string_equal(js_jfr_read_kind_name(kd), "lock");
    assert_int_equal(js_jfr_read_kind_parse("LOCK", &kd), -1);
}

/* Two chunks with different class ids (and a padded-size metadata): read back to back, weights add up. */
static void test_multi_chunk(void **state)
{
    tspec s1 = {100, F_NONE}, s2 = {5000, F_NONE};
    tchunk a, b;
    build_chunk(&a, &s1);
    build_chunk(&b, &s2);
    tb both = {0};
    tb_put(&both, a.b.p, a.b.n);
    tb_put(&both, b.b.p, b.b.n);
    maybe_seed(&both, "valid-two-chunks.jfr");
    expect_stacks(&both, NULL, " 2\n" STACK2 " 4\n" STACK1 " 8\n", 14);
    js_jfr_read_opts l = {.kind = JS_JFR_READ_LOCK, .threads = 1};
    expect_stacks(&both, &l,
                  "[GC Thread#0 tid=1003];[unknown_Java] 2000\n[main tid=1001];" STACK1
                  ";java.lang.Thread_[i] 500000\n[worker-1 tid=1002];" STACK2 " 2000000\n",
                  2502000);
    js_profile p;
    js_jfr_read_stats st;
    char err[512];
    assert_int_equal(read_buf(&both, NULL, &p, &st, err, sizeof err), 0);
    assert_int_equal(st.chunks, 2);
    /* trailing bytes after the last chunk: the start of a third chunk is a cut recording (test_cut_chunk), junk is an error */
    tb_put(&both, "FLR\0", 4);
    js_profile_free(&p);
    assert_int_equal(read_buf(&both, NULL, &p, &st, err, sizeof err), 0);
    assert_int_equal(st.chunks, 2);
    assert_int_equal(st.unfinished_at, a.b.n + b.b.n);
    both.n -= 4;
    js_profile_free(&p);
    tb_put(&both, "JUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNKJUNK", 72);
    expect_error(&both, a.b.n + b.b.n, "not a JFR chunk (bad magic)");
    tb_put(&both, "JUNK", 4);
    both.n = a.b.n + b.b.n + 3; /* 3 bytes that do not start a chunk */
    expect_error(&both, a.b.n + b.b.n, "too short for a chunk header");
    tb_free(&a.b);
    tb_free(&b.b);
    tb_free(&both);
}

/* A recording cut while its writer was in a chunk (the process killed): that chunk's header still says size 0.
 * After complete chunks it is left out and the rest reads; as the first chunk it is an error. A truncated
 * copy (the size says more than is there) is read the same way (more in test_cut_chunk). */
static void test_unfinished_chunk(void **state)
{
    tspec s1 = {100, F_NONE}, s2 = {5000, F_NONE};
    tchunk a, b;
    build_chunk(&a, &s1);
    build_chunk(&b, &s2);
    tb cut = {0};
    tb_put(&cut, a.b.p, a.b.n);
    tb_put(&cut, b.b.p, b.b.n);
    memset(cut.p + a.b.n + 8, 0, 24); /* the second chunk in progress: size, checkpoint and metadata offsets 0 */
    maybe_seed(&cut, "valid-unfinished-last-chunk.jfr");
    expect_stacks(&cut, NULL, " 1\n" STACK2 " 2\n" STACK1 " 4\n", 7); /* the first chunk alone */
    js_profile p;
    js_jfr_read_stats st;
    char err[512];
    assert_int_equal(read_buf(&cut, NULL, &p, &st, err, sizeof err), 0);
    assert_int_equal(st.chunks, 1);
    assert_int_equal(st.unfinished_at, a.b.n);
    js_profile_free(&p);

    tb first = {0};
    tb_put(&first, b.b.p, b.b.n);
    memset(first.p + 8, 0, 24);
    expect_error(&first, 8, "smaller than the chunk header");

    assert_int_equal(st.unfinished_cut, 0);
    cut.n -= 10; /* second chunk's size restored but its bytes cut short */
    memcpy(cut.p + a.b.n + 8, b.b.p + 8, 24);
    expect_stacks(&cut, NULL, " 1\n" STACK2 " 2\n" STACK1 " 4\n", 7);
    assert_int_equal(read_buf(&cut, NULL, &p, &st, err, sizeof err), 0);
    assert_int_equal(st.unfinished_at, a.b.n);
    assert_int_equal(st.unfinished_cut, 1);
    js_profile_free(&p);
    tb cut1 = {b.b.p, b.b.n - 10, b.b.n - 10}; /* a cut first chunk is an error */
    expect_error(&cut1, 8, "past the end of the file");
    tb_free(&a.b);
    tb_free(&b.b);
    tb_free(&cut);
    tb_free(&first);
}

/* ---- a recording cut inside its third chunk (made by the project's writer) ------------------------------ */

/* Writer source: trace id has one frame, method id; every thread is "main". */
static int cut_trace(void *ctx, uint64_t id, js_jfr_frame *out, int max, int *truncated)
{
    *truncated = 0;
    out[0] = (js_jfr_frame){id, -1, -1, 1};
    return 1;
}

static int cut_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    static const char *const names[] = {"zero", "one", "two", "three"};
    *out = (js_jfr_method){"Cut", names[key & 3], "()V", 1, 0};
    return 0;
}

static int cut_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    *out = (js_jfr_thread){"main", 1, "main", 1};
    return 0;
}

/* Big-endian 64-bit value at p. */
static uint64_t be64_at(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* A file of 4 chunks (weights 2 of Cut.one, 3 of Cut.two, then 5 and 7 of Cut.three) cut anywhere inside its third
 * chunk - in its header, right after it, in its records, one byte short - or with a third chunk whose size runs
 * past the end: the first two chunks read, one unfinished chunk is reported. A cut first chunk is an error. */
static void test_cut_chunk(void **state)
{
    char path[] = "/tmp/test_jfr_cutXXXXXX", err[512];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    static const js_jfr_source src = {NULL, cut_trace, cut_method, cut_thread};
    js_jfr_options o = {.chunk_time_ns = 1000};
    const uint64_t t0 = 5000000000ULL;
    js_jfr_writer *w = js_jfr_open(path, &o, &src, t0, err, sizeof err);
    assert_non_null(w);
    static const uint32_t trace[4] = {1, 2, 3, 3}, weight[4] = {2, 3, 5, 7};
    for (int c = 0; c < 4; c++) {
        uint64_t t = t0 + (uint64_t)c * 10000;
        assert_int_equal(js_jfr_execution_sample(w, t + 1, 1, trace[c], JS_JFR_STATE_RUNNABLE, weight[c], err, sizeof err), 0);
        if (c < 3) assert_int_equal(js_jfr_maybe_rotate(w, t + 5000, err, sizeof err), 0);
    }
    assert_int_equal(js_jfr_close(w, t0 + 50000, err, sizeof err), 0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    tb file = {0};
    uint8_t buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) tb_put(&file, buf, n);
    fclose(f);
    unlink(path);
    size_t base[5] = {0};
    for (int c = 0; c < 4; c++) base[c + 1] = base[c] + (size_t)be64_at(file.p + base[c] + 8);
    assert_int_equal(base[4], file.n);
    expect_stacks(&file, NULL, "Cut.one 2\nCut.three 12\nCut.two 3\n", 17);

    size_t len3 = base[3] - base[2];
    size_t cuts[] = {1, 3, 4, 10, 67, 68, 69, len3 / 2, len3 - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        tb cut = {file.p, base[2] + cuts[i], base[2] + cuts[i]};
        js_profile p;
        js_jfr_read_stats st;
        int rc = read_buf(&cut, NULL, &p, &st, err, sizeof err);
        if (rc) print_error("cut at %zu of chunk 3: %s\n", cuts[i], err);
        assert_int_equal(rc, 0);
        assert_int_equal(st.chunks, 2);
        assert_int_equal(st.unfinished_at, base[2]);
        assert_int_equal(st.unfinished_cut, 1);
        assert_true(st.start_ns > 0 && st.end_ns >= st.start_ns + 10000); /* two chunks of 5000 and 10000 ns */
        char *got = collapsed(&p);
        tu_assert_text(got, "Cut.one 2\nCut.two 3\n");
        free(got);
        js_profile_free(&p);
    }
    /* the whole file, but the third chunk's size says more than the file holds */
    tb big = {0};
    tb_put(&big, file.p, file.n);
    patch_be(&big, base[2] + 8, file.n, 8);
    expect_stacks(&big, NULL, "Cut.one 2\nCut.two 3\n", 5);
    /* the first chunk cut: an error, wherever */
    tb first = {file.p, base[1] - 1, base[1] - 1};
    expect_error(&first, 8, "points past the end of the file");
    first.n = 30;
    expect_error(&first, 0, "too short for a chunk header");
    tb_free(&big);
    tb_free(&file);
}

/* The fd entry point: a real file reads; a pipe is refused. */
static void test_fd(void **state)
{
    tchunk k = chunk_with(F_NONE);
    char path[] = "/tmp/test_jfr_readXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, k.b.p, k.b.n), (ssize_t)k.b.n);
    js_profile p;
    js_profile_init(&p);
    char err[512];
    assert_int_equal(js_jfr_read_fd(fd, path, NULL, &p, NULL, err, sizeof err), 0);
    assert_int_equal(p.total, 7);
    js_profile_free(&p);
    close(fd);
    unlink(path);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    js_profile_init(&p);
    assert_int_equal(js_jfr_read_fd(pfd[0], "pipe", NULL, &p, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "pipe: JFR input must be a regular file"));
    close(pfd[0]);
    close(pfd[1]);
    js_profile_free(&p);
    tb_free(&k.b);
}

/* ---- malformed input --------------------------------------------------------------------------------- */

/* Header faults: magic, version, sizes and offsets. */
static void test_bad_header(void **state)
{
    tchunk k = chunk_with(F_NONE);
    tb b = {0};
    tb_put(&b, k.b.p, k.b.n);
    expect_error(&(tb){0}, 0, "empty file");
    b.p[1] = 'X';
    expect_error(&b, 0, "not a JFR file (bad magic)");
    b.p[1] = 'L';
    b.p[5] = 3;
    expect_error(&b, 4, "unsupported JFR version 3.1");
    b.p[5] = 2;
    tb cut = {b.p, 40, 40};
    expect_error(&cut, 0, "the file (40 bytes) is too short for a chunk header");
    cut.n = 300;
    expect_error(&cut, 8, "points past the end of the file");
    patch_be(&b, 8, 10, 8);
    expect_error(&b, 8, "chunk size 10 is smaller than the chunk header");
    patch_be(&b, 8, b.n, 8);
    patch_be(&b, 24, b.n + 5, 8);
    expect_error(&b, 24, "metadata offset");
    expect_error(&b, 24, "points past the end of the chunk");
    patch_be(&b, 24, 20, 8);
    expect_error(&b, 24, "points into the chunk header");
    patch_be(&b, 24, 0, 8);
    expect_error(&b, 24, "metadata offset is 0");
    patch_be(&b, 24, k.meta, 8);
    patch_be(&b, 16, 0, 8);
    expect_error(&b, 16, "checkpoint offset is 0");
    patch_be(&b, 16, k.cp_b, 8);
    patch_be(&b, 56, 0, 8);
    expect_error(&b, 56, "ticks per second is 0");
    patch_be(&b, 56, TPS, 8);
    patch_be(&b, 24, k.cp_a, 8);
    expect_error(&b, k.cp_a, "expected the metadata event (type 0), found type 1");
    patch_be(&b, 24, k.meta, 8);
    patch_be(&b, 16, k.meta, 8);
    expect_error(&b, k.meta, "expected a checkpoint (type 1), found type 0");
    patch_be(&b, 16, k.cp_b, 8);
    expect_stacks(&b, NULL, " 1\n" STACK2 " 2\n" STACK1 " 4\n", 7); /* restored */
    tb_free(&b);
    tb_free(&k.b);
}

/* Checkpoint faults: size past the chunk, deltas forward / before the start / overlapping, size mismatch. */
static void test_bad_checkpoints(void **state)
{
    tchunk k = chunk_with(F_NONE);
    tb *b = &k.b;
    patch_var9(b, k.cp_b, b->n);
    expect_error(b, k.cp_b, "checkpoint size points past the end of the chunk");
    patch_var9(b, k.cp_b, b->n - k.cp_b);
    patch_var9(b, k.delta_b, 5);
    expect_error(b, k.delta_b, "checkpoint delta 5 points forward (the chain would loop)");
    patch_var9(b, k.delta_b, 0); /* B -> B would loop: 0 ends the chain instead, so A's pools are missing */
    expect_stacks(b, NULL,
                  " 1\n[unknown_method];[unknown_method] 2\n[unknown_method];[unknown_method];[unknown_method] 4\n", 7);
    patch_var9(b, k.delta_b, (uint64_t)-(int64_t)k.cp_b);
    expect_error(b, k.delta_b, "points before the first record");
    patch_var9(b, k.delta_b, (uint64_t)-(int64_t)(k.cp_b - k.cp_a));
    patch_var9(b, k.delta_a, (uint64_t)(k.cp_b - k.cp_a)); /* A -> B: a cycle */
    expect_error(b, k.delta_a, "points forward");
    patch_var9(b, k.delta_a, 0);
    patch_var9(b, k.cp_a, k.cp_b - k.cp_a + 1); /* A would run into B */
    expect_error(b, k.cp_a, "checkpoint overlaps the next one in the chain");
    patch_var9(b, k.cp_a, k.cp_b - k.cp_a);
    expect_stacks(b, NULL, " 1\n" STACK2 " 2\n" STACK1 " 4\n", 7);
    tb_free(b);
    tchunk t = chunk_with(F_CP_TRAILING);
    expect_error(&t.b, t.b.n - 3, "checkpoint content ends 3 bytes before its size says");
    tb_free(&t.b);
}

/* Metadata faults: nesting, huge string count, a pool reference in the string table. */
static void test_bad_metadata(void **state)
{
    tchunk k = chunk_with(F_DEEP_META);
    js_profile p;
    char err[512];
    assert_int_equal(read_buf(&k.b, NULL, &p, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "metadata element nesting too deep"));
    assert_non_null(strstr(err, "t.jfr: offset "));
    js_profile_free(&p);
    tb_free(&k.b);
    k = chunk_with(F_HUGE_STRINGS);
    expect_error(&k.b, k.fault_at, "metadata string count 4294967295 is larger than the");
    tb_free(&k.b);
    k = chunk_with(F_META_STRING_REF);
    expect_error(&k.b, k.fault_at, "metadata string is a constant-pool reference");
    tb_free(&k.b);
}

/* Pool faults: bad string encoding, huge counts, undeclared type, self-nesting type, field-less type. */
static void test_bad_pools(void **state)
{
    tchunk k = chunk_with(F_BAD_ENCODING);
    expect_error(&k.b, k.fault_at, "unknown string encoding 7");
    tb_free(&k.b);
    k = chunk_with(F_HUGE_ARRAY);
    expect_error(&k.b, k.fault_at, "array count 1000000 is larger than the");
    tb_free(&k.b);
    k = chunk_with(F_HUGE_POOL);
    expect_error(&k.b, k.fault_at, "pool entry count 1099511627775 is larger than the");
    tb_free(&k.b);
    k = chunk_with(F_UNDECLARED_POOL);
    expect_error(&k.b, k.fault_at, "pool type id 999 is not declared in the metadata");
    tb_free(&k.b);
    k = chunk_with(F_REC_TYPE);
    js_profile p;
    char err[512];
    assert_int_equal(read_buf(&k.b, NULL, &p, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "types nested too deep"));
    js_profile_free(&p);
    tb_free(&k.b);
    k = chunk_with(F_EMPTY_TYPE);
    expect_error(&k.b, k.b.n, "type 'test.Empty' has no fields and is not a primitive");
    tb_free(&k.b);
}

/* Record faults: zero size, size past the chunk, a value running past its record. */
static void test_bad_records(void **state)
{
    tchunk k = chunk_with(F_ZERO_EVENT);
    expect_error(&k.b, k.fault_at, "zero-size record");
    tb_free(&k.b);
    k = chunk_with(F_EVENT_PAST_END);
    expect_error(&k.b, k.fault_at, "record size 100000 points past the end of the chunk");
    tb_free(&k.b);
    k = chunk_with(F_EVENT_CUT);
    size_t type_len = var_len(cid(&(tspec){100, 0}, C_EXEC));
    expect_error(&k.b, k.fault_at + 1 + type_len, "value runs past the end of the record");
    tb_free(&k.b);
}

/* Every truncation of a valid file fails cleanly (or reads, for the full length) - no crash, no leak. */
static void test_truncations(void **state)
{
    tchunk k = chunk_with(F_NONE);
    for (size_t n = 0; n < k.b.n; n++) {
        tb cut = {k.b.p, n, n};
        js_profile p;
        char err[512];
        assert_int_equal(read_buf(&cut, NULL, &p, NULL, err, sizeof err), -1);
        assert_non_null(strstr(err, "t.jfr: offset "));
        js_profile_free(&p);
    }
    /* and every single-byte corruption reads or fails cleanly */
    for (size_t i = 0; i < k.b.n; i++) {
        uint8_t old = k.b.p[i];
        k.b.p[i] ^= 0x5a;
        js_profile p;
        char err[512];
        int rc = read_buf(&k.b, NULL, &p, NULL, err, sizeof err);
        assert_true(rc == 0 || (rc == -1 && strstr(err, "t.jfr: offset ")));
        js_profile_free(&p);
        k.b.p[i] = old;
    }
    tb_free(&k.b);
}

/* ---- the fuzzing corpus and crash reproducers --------------------------------------------------------- */

/* Reads every file of the directory next to this source: seeds must read or fail cleanly, as must crashes. */
static void replay_dir(const char *sub)
{
    char dir[1024];
    const char *slash = strrchr(__FILE__, '/');
    snprintf(dir, sizeof dir, "%.*sfuzz-corpus/%s", slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__, sub);
    DIR *d = opendir(dir);
    if (!d) return; /* no corpus checked out */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        for (int kind = 0; kind <= JS_JFR_READ_LOCK; kind++) {
            /* the option sets native-tests/fuzz_jfr_read.c uses */
            js_jfr_read_opts o = {.kind = (js_jfr_read_kind)kind, .threads = 1, .lines = kind & 1,
                                  .thread = kind == JS_JFR_READ_ALLOC ? "m*" : NULL};
            if (kind == JS_JFR_READ_LOCK) o.has_from = o.has_to = 1, o.from_ns = 1000, o.to_ns = 4000000000;
            js_profile p;
            js_profile_init(&p);
            char err[512] = "";
            int rc = js_jfr_read_fd(fd, e->d_name, &o, &p, NULL, err, sizeof err);
            int clean = rc == 0 || (rc == -1 && strstr(err, ": offset ") && !strchr(err, '\n'));
            if (!clean) print_error("%s: %s\n", path, err);
            assert_true(clean);
            js_profile_free(&p);
        }
        close(fd);
    }
    closedir(d);
}

/* Seeds and crash reproducers found by fuzzing read or fail with a clean error. */
static void test_corpus_replay(void **state)
{
    replay_dir("jfr_read");
    replay_dir("jfr_read-crashes");
}

/* ---- JSON tree --------------------------------------------------------------------------------------- */

/* The JSON tree writer's output for p and type. */
static char *json_of(const js_profile *p, const char *type)
{
    tu_out o;
    char err[256] = "";
    tu_open(&o);
    int rc = js_write_json_tree(o.f, p, type, err, sizeof err);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    return tu_text(&o);
}

/* ids in preorder, parentIds, totals, selfs, children by total then name, root "all" with parentId -1. */
static void test_json_tree(void **state)
{
    js_profile p;
    tu_profile(&p, "a;b 3\na;c 2\nd 1\na 4\n");
    assert_int_equal(js_profile_add(&p, NULL, 0, 5), 0); /* a stack without frames: the root's self */
    char *got = json_of(&p, NULL);
    tu_assert_text(got, "{\"trees\":[{\"type\":\"EXECUTION_SAMPLE\",\"unit\":\"samples\",\"elements\":[\n"
                        "{\"id\":\"0\",\"parentId\":\"-1\",\"codeSignature\":\"all\",\"total\":15,\"self\":5},\n"
                        "{\"id\":\"1\",\"parentId\":\"0\",\"codeSignature\":\"a\",\"total\":9,\"self\":4},\n"
                        "{\"id\":\"2\",\"parentId\":\"1\",\"codeSignature\":\"b\",\"total\":3,\"self\":3},\n"
                        "{\"id\":\"3\",\"parentId\":\"1\",\"codeSignature\":\"c\",\"total\":2,\"self\":2},\n"
                        "{\"id\":\"4\",\"parentId\":\"0\",\"codeSignature\":\"d\",\"total\":1,\"self\":1}\n"
                        "]}]}\n");
    free(got);
    js_profile_free(&p);
    /* an empty profile: the root alone */
    js_profile_init(&p);
    got = json_of(&p, "LOCK");
    tu_assert_text(got, "{\"trees\":[{\"type\":\"LOCK\",\"unit\":\"samples\",\"elements\":[\n"
                        "{\"id\":\"0\",\"parentId\":\"-1\",\"codeSignature\":\"all\",\"total\":0,\"self\":0}\n]}]}\n");
    free(got);
    js_profile_free(&p);
}

/* Names are escaped for JSON; invalid UTF-8 becomes \ufffd; same names of different types are one node. */
static void test_json_escaping(void **state)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t f[3];
    f[0] = js_profile_frame(&p, "q\"b\\s/\n\r\t\x01\x7f", JS_FT_JIT);
    f[1] = js_profile_frame(&p, "\xc3\xa9\xff\xed\xa0\x80\xf0\x9f\x98\x80<>", JS_FT_JIT);
    f[2] = js_profile_frame(&p, "\xc3\xa9\xff\xed\xa0\x80\xf0\x9f\x98\x80<>", JS_FT_INTERPRETED);
    uint32_t s1[2] = {f[0], f[1]}, s2[2] = {f[0], f[2]};
    assert_int_equal(js_profile_add(&p, s1, 2, 1), 0);
    assert_int_equal(js_profile_add(&p, s2, 2, 2), 0);
    char *got = json_of(&p, "EXECUTION_SAMPLE");
    tu_assert_text(got, "{\"trees\":[{\"type\":\"EXECUTION_SAMPLE\",\"unit\":\"samples\",\"elements\":[\n"
                        "{\"id\":\"0\",\"parentId\":\"-1\",\"codeSignature\":\"all\",\"total\":3,\"self\":0},\n"
                        "{\"id\":\"1\",\"parentId\":\"0\",\"codeSignature\":\"q\\\"b\\\\s/\\n\\r\\t\\u0001\\u007f\","
                        "\"total\":3,\"self\":0},\n"
                        "{\"id\":\"2\",\"parentId\":\"1\",\"codeSignature\":\"\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd"
                        "\xf0\x9f\x98\x80<>\",\"total\":3,\"self\":3}\n"
                        "]}]}\n");
    free(got);
    js_profile_free(&p);
}

/* "OBJECT_ALLOCATION" splits by the leaf frame: kernel -> OUTSIDE_TLAB, the rest -> IN_NEW_TLAB. */
static void test_json_alloc(void **state)
{
    tchunk k = chunk_with(F_NONE);
    js_jfr_read_opts a = {.kind = JS_JFR_READ_ALLOC};
    js_profile p;
    char err[512];
    assert_int_equal(read_buf(&k.b, &a, &p, NULL, err, sizeof err), 0);
    assert_int_equal(js_profile_normalize(&p), 0);
    char *got = json_of(&p, "OBJECT_ALLOCATION");
    const char *want =
        "{\"trees\":[{\"type\":\"OBJECT_ALLOCATION_IN_NEW_TLAB\",\"unit\":\"bytes\",\"elements\":[\n"
        "{\"id\":\"0\",\"parentId\":\"-1\",\"codeSignature\":\"all\",\"total\":1048,\"self\":0},\n"
        "{\"id\":\"1\",\"parentId\":\"0\",\"codeSignature\":\"java.lang.Thread.run\",\"total\":1048,\"self\":0},\n"
        "{\"id\":\"2\",\"parentId\":\"1\",\"codeSignature\":\"com.example.App.main\",\"total\":1048,\"self\":0},\n"
        "{\"id\":\"3\",\"parentId\":\"2\",\"codeSignature\":\"com.example.App.compute\",\"total\":1048,\"self\":0},\n"
        "{\"id\":\"4\",\"parentId\":\"3\",\"codeSignature\":\"java.lang.String_[i]\",\"total\":1048,\"self\":1048}\n"
        "]},\n"
        "{\"type\":\"OBJECT_ALLOCATION_OUTSIDE_TLAB\",\"unit\":\"bytes\",\"elements\":[\n"
        "{\"id\":\"0\",\"parentId\":\"-1\",\"codeSignature\":\"all\",\"total\":5700,\"self\":0},\n"
        "{\"id\":\"1\",\"parentId\":\"0\",\"codeSignature\":\"java.lang.Thread.run\",\"total\":5700,\"self\":0},\n"
        "{\"id\":\"2\",\"parentId\":\"1\",\"codeSignature\":\"com.example.App.main\",\"total\":5700,\"self\":0},\n"
        "{\"id\":\"3\",\"parentId\":\"2\",\"codeSignature\":\"byte[]_[k]\",\"total\":5700,\"self\":5700}\n"
        "]}]}\n";
    tu_assert_text(got, want);
    free(got);
    js_profile_free(&p);
    tb_free(&k.b);
}

/* Write errors are reported. */
static void test_json_write_error(void **state)
{
    js_profile p;
    tu_profile(&p, "a;b 1\n");
    FILE *f = fopen("/dev/full", "w");
    assert_non_null(f);
    char err[256] = "";
    assert_int_equal(js_write_json_tree(f, &p, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "json output: write error"));
    fclose(f);
    js_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu),
        cmocka_unit_test(test_threads_lines),
        cmocka_unit_test(test_other_events),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_multi_chunk),
        cmocka_unit_test(test_unfinished_chunk),
        cmocka_unit_test(test_cut_chunk),
        cmocka_unit_test(test_fd),
        cmocka_unit_test(test_bad_header),
        cmocka_unit_test(test_bad_checkpoints),
        cmocka_unit_test(test_bad_metadata),
        cmocka_unit_test(test_bad_pools),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_corpus_replay),
        cmocka_unit_test(test_json_tree),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_json_alloc),
        cmocka_unit_test(test_json_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
