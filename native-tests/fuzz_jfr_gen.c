/* fuzz_jfr_gen.c - libFuzzer target for the JFR reader on recordings built from the fuzzer's bytes (make fuzz-jfr;
 * docs/FUZZING.md).
 *
 * The input is not a file but a recipe: it picks class ids, the order and presence of fields (the reader finds
 * them by name), the encoding of every string (3 UTF-8, 4 UTF-16 units, 5 Latin-1, 2 a String pool reference,
 * null, empty) and its length (up to three times the reader's 8192-byte cap, in runs of one- and two-byte
 * characters; four such long strings per recording at most), how many symbols, classes, methods, threads and stack traces the pools hold and in how many
 * chained checkpoints, padded or minimal record sizes, one or two chunks (and an unfinished one after them),
 * and the events of every kind the reader knows with their threads, stacks, classes and weights. So every
 * input is a well-formed recording that gets past every structural check, with the reader's string arena
 * filled to every level: what fuzz_jfr_read's byte mutations rarely reach.
 *
 * Because the recording is valid, the reader must read it (one event kind per input, picked by its first byte),
 * and the generator knows what it holds: the events read and the total weight of the kind must be exactly those
 * written (jfr_read.h's weights: 1 per cpu sample,
 * `samples` per wall sample, tlabSize or allocationSize or weight per allocation, duration in ns per lock).
 */
#include "fuzz_util.h"

#include "jfr/jfr_read.h"
#include "output/profile.h"

#define NAME_CAP 8192 /* the reader's cap on a kept string */

/* ---- output buffer ----------------------------------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} gb;

/* The generator's own code needs no coverage feedback: its byte loops go uninstrumented (clang; libFuzzer's
 * comparison tracing took most of the target's time in them). */
#if defined(__clang__)
#define NO_COV __attribute__((no_sanitize("coverage")))
#else
#define NO_COV
#endif

/* Makes room for n more bytes. */
NO_COV static void room(gb *b, size_t n)
{
    if (b->n + n <= b->cap) return;
    while (b->n + n > b->cap) b->cap = b->cap ? b->cap * 2 : 4096;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
}

/* Appends n bytes. */
NO_COV static void put(gb *b, const void *d, size_t n)
{
    room(b, n);
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}

/* Appends one byte. */
NO_COV static void u8(gb *b, uint8_t v)
{
    room(b, 1);
    b->p[b->n++] = v;
}

/* Appends a varint of exactly k bytes (1..9; the value must fit). */
NO_COV static void var_k(gb *b, uint64_t v, int k)
{
    room(b, (size_t)k);
    for (int i = 0; i + 1 < k; i++, v >>= 7) b->p[b->n++] = (uint8_t)(v | 0x80);
    b->p[b->n++] = (uint8_t)v;
}

/* Bytes of the minimal varint of v. */
NO_COV static int var_len(uint64_t v)
{
    int n = 1;
    while (n < 9 && v >= 0x80) v >>= 7, n++;
    return n;
}

/* Appends the minimal varint of v. */
NO_COV static void var(gb *b, uint64_t v)
{
    var_k(b, v, var_len(v));
}

/* Appends v as a varint, sometimes padded (as writers do to patch values in place). */
static void var_any(gb *b, fz_in *in, uint64_t v)
{
    int k = var_len(v);
    if (fz_chance(in, 20)) k = k < 5 ? 5 : 9;
    var_k(b, v, k);
}

/* Appends a record: its size (counting itself; minimal, 5 or 9 bytes) then the payload. */
static void record(gb *out, fz_in *in, const gb *pay)
{
    unsigned how = fz_u8(in) % 3;
    int k = how == 0 ? 5 : how == 1 ? 9 : 1;
    while (k < 9 && (pay->n + (size_t)k) >> (7 * k)) k++;
    var_k(out, pay->n + (size_t)k, k);
    put(out, pay->p, pay->n);
}

/* ---- strings ----------------------------------------------------------------------------------------- */

/* Appends text (ASCII) in encoding 3, 4 or 5, picked by the input. */
static void name_str(gb *b, fz_in *in, const char *text)
{
    size_t n = strlen(text);
    uint8_t enc = (uint8_t)(3 + fz_u8(in) % 3);
    u8(b, enc);
    var(b, n);
    for (size_t i = 0; i < n; i++) {
        if (enc == 4) var(b, (uint8_t)text[i]);
        else u8(b, (uint8_t)text[i]);
    }
}

static uint64_t rng;

/* A pseudo-random number (xorshift64*), for long strings (their bytes would use up the input). */
NO_COV static uint64_t rnd(void)
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* Appends n characters of encoding enc, in runs of run one-byte (ASCII) and two-byte (>= 0x80) ones, starting
 * with the two-byte ones when high; UTF-16 units include surrogates. */
NO_COV static void long_chars(gb *b, uint8_t enc, size_t n, size_t run, int high)
{
    room(b, 3 * n);
    for (size_t i = 0; i < n; i++) {
        if (i && i % run == 0) high = !high;
        uint64_t r = rnd();
        if (enc == 4) var(b, high ? (r % 7 == 0 ? 0xd800 + r % 0x800 : 0x80 + r % 0xff80) : 'A' + r % 26);
        else b->p[b->n++] = high ? (uint8_t)(0x80 + r % 0x80) : (uint8_t)('a' + r % 26);
    }
}

/* Long strings still allowed in the recording being built: reading them is most of an input's time, and a few
 * are enough to meet the arena at every fill level (the short ones fill it). */
#define LONGS_PER_RECORDING 4
static int longs_left;

/* Appends a string value picked by the input: null, empty, a String pool reference (when refs, keys 1..nstr),
 * or encoding 3, 4 or 5 of a short text from the input or a long one in runs of one- and two-byte characters. */
static void any_str(gb *b, fz_in *in, int refs, uint64_t nstr)
{
    unsigned form = fz_u8(in) % 32;
    if (form == 0) return u8(b, 0);
    if (form == 1) return u8(b, 1);
    if (form == 2 && refs) {
        u8(b, 2);
        return var(b, fz_range(in, 0, nstr + 1));
    }
    uint8_t enc = (uint8_t)(3 + fz_u8(in) % 3);
    if (form < 30 || longs_left == 0) { /* short, its bytes from the input */
        size_t n;
        const uint8_t *p = fz_take(in, 40, &n);
        u8(b, enc);
        var(b, n);
        for (size_t i = 0; i < n; i++) {
            if (enc == 4) var(b, p[i] | (i % 5 == 4 ? (uint64_t)p[i] << 8 : 0)); /* some wide units */
            else u8(b, p[i]);
        }
        return;
    }
    static const size_t lens[] = {NAME_CAP / 2, NAME_CAP / 2 + 1, NAME_CAP - 1, NAME_CAP, NAME_CAP + 1,
                                  NAME_CAP + NAME_CAP / 2, 2 * NAME_CAP + 1};
    size_t n = fz_chance(in, 128) ? lens[fz_u8(in) % 7] : (size_t)fz_range(in, 0, 3 * NAME_CAP);
    size_t run = 1 + (size_t)fz_range(in, 0, fz_chance(in, 128) ? 7 : 2 * NAME_CAP);
    rng = fz_bits(in, 4) * 2 + 1;
    int high = fz_u8(in) & 1;
    u8(b, enc);
    var(b, n);
    long_chars(b, enc, n, run, high);
    longs_left--;
}

/* ---- metadata ---------------------------------------------------------------------------------------- */

enum { K_LONG, K_INT, K_BOOL, K_FLOAT, K_DOUBLE, K_BYTE, K_STRING, K_SYMBOL, K_CLASS, K_METHOD, K_FRAME, K_TRACE,
       K_FTYPE, K_THREAD, K_STATE, K_EXEC, K_NATIVE, K_WALL, K_TLAB, K_OUTSIDE, K_ASAMPLE, K_MONITOR, K_PARK,
       K_OTHER, NK };

typedef struct {
    const char *name;
    int type, cp, array;
} fdef;

typedef struct {
    const char *name;
    int simple;
    fdef f[9];
} cdef;

#define TIME {"startTime", K_LONG, 0, 0}
#define EVT(t) {"eventThread", K_THREAD, 1, 0}, {"stackTrace", K_TRACE, 1, 0}
static const cdef classes[NK] = {
    [K_LONG] = {"long", 0, {{0}}},
    [K_INT] = {"int", 0, {{0}}},
    [K_BOOL] = {"boolean", 0, {{0}}},
    [K_FLOAT] = {"float", 0, {{0}}},
    [K_DOUBLE] = {"double", 0, {{0}}},
    [K_BYTE] = {"byte", 0, {{0}}},
    [K_STRING] = {"java.lang.String", 0, {{0}}},
    [K_SYMBOL] = {"jdk.types.Symbol", 1, {{"string", K_STRING, 0, 0}}},
    [K_CLASS] = {"java.lang.Class", 0,
                 {{"classLoader", K_LONG, 0, 0}, {"name", K_SYMBOL, 1, 0}, {"modifiers", K_INT, 0, 0},
                  {"hidden", K_BOOL, 0, 0}}},
    [K_METHOD] = {"jdk.types.Method", 0,
                  {{"type", K_CLASS, 1, 0}, {"name", K_SYMBOL, 1, 0}, {"descriptor", K_SYMBOL, 1, 0},
                   {"modifiers", K_INT, 0, 0}, {"hidden", K_BOOL, 0, 0}}},
    [K_FRAME] = {"jdk.types.StackFrame", 0,
                 {{"method", K_METHOD, 1, 0}, {"lineNumber", K_INT, 0, 0}, {"bytecodeIndex", K_INT, 0, 0},
                  {"type", K_FTYPE, 1, 0}}},
    [K_TRACE] = {"jdk.types.StackTrace", 0, {{"truncated", K_BOOL, 0, 0}, {"frames", K_FRAME, 0, 1}}},
    [K_FTYPE] = {"jdk.types.FrameType", 1, {{"description", K_STRING, 0, 0}}},
    [K_THREAD] = {"java.lang.Thread", 0,
                  {{"osName", K_STRING, 0, 0}, {"osThreadId", K_LONG, 0, 0}, {"javaName", K_STRING, 0, 0},
                   {"javaThreadId", K_LONG, 0, 0}, {"virtual", K_BOOL, 0, 0}}},
    [K_STATE] = {"jdk.types.ThreadState", 1, {{"name", K_STRING, 0, 0}}},
    [K_EXEC] = {"jdk.ExecutionSample", 0,
                {TIME, {"sampledThread", K_THREAD, 1, 0}, {"stackTrace", K_TRACE, 1, 0}, {"state", K_STATE, 1, 0}}},
    [K_NATIVE] = {"jdk.NativeMethodSample", 0,
                  {TIME, {"sampledThread", K_THREAD, 1, 0}, {"stackTrace", K_TRACE, 1, 0}, {"state", K_STATE, 1, 0}}},
    [K_WALL] = {"profiler.WallClockSample", 0,
                {TIME, {"sampledThread", K_THREAD, 1, 0}, {"stackTrace", K_TRACE, 1, 0}, {"state", K_STATE, 1, 0},
                 {"samples", K_INT, 0, 0}, {"timeSpan", K_LONG, 0, 0}}},
    [K_TLAB] = {"jdk.ObjectAllocationInNewTLAB", 0,
                {TIME, EVT(0), {"objectClass", K_CLASS, 1, 0}, {"allocationSize", K_LONG, 0, 0},
                 {"tlabSize", K_LONG, 0, 0}}},
    [K_OUTSIDE] = {"jdk.ObjectAllocationOutsideTLAB", 0,
                   {TIME, EVT(0), {"objectClass", K_CLASS, 1, 0}, {"allocationSize", K_LONG, 0, 0}}},
    [K_ASAMPLE] = {"jdk.ObjectAllocationSample", 0,
                   {TIME, EVT(0), {"objectClass", K_CLASS, 1, 0}, {"weight", K_LONG, 0, 0}}},
    [K_MONITOR] = {"jdk.JavaMonitorEnter", 0,
                   {TIME, {"duration", K_LONG, 0, 0}, EVT(0), {"monitorClass", K_CLASS, 1, 0},
                    {"previousOwner", K_THREAD, 1, 0}, {"address", K_LONG, 0, 0}}},
    [K_PARK] = {"jdk.ThreadPark", 0,
                {TIME, {"duration", K_LONG, 0, 0}, EVT(0), {"parkedClass", K_CLASS, 1, 0}, {"timeout", K_LONG, 0, 0},
                 {"until", K_LONG, 0, 0}, {"address", K_LONG, 0, 0}}},
    [K_OTHER] = {"jdk.CPULoad", 0,
                 {TIME, {"jvmUser", K_FLOAT, 0, 0}, {"load", K_DOUBLE, 0, 0}, {"note", K_STRING, 0, 0},
                  {"b", K_BYTE, 0, 0}, {"ids", K_INT, 0, 1}}},
};

/* One chunk's layout: class ids, and each class's fields in wire order (indexes into classes[].f). */
typedef struct {
    uint64_t id[NK];
    int order[NK][9], nf[NK];
    const char *strs[256];
    int nstrs;
} layout;

/* Strings already in the table, by pointer (literals are merged; each class id is one buffer), in a small hash
 * whose slots count only for the current generation: a search by strcmp, hooked by libFuzzer, took a third of the
 * target's time. Equal texts from different pointers would only repeat a string, which the format allows. */
static struct {
    const char *p;
    uint32_t idx, gen;
} stab[512];
static uint32_t sgen;

/* Index of s in the metadata string table, added when new. */
static uint64_t sidx(layout *l, const char *s)
{
    size_t h = (size_t)(((uintptr_t)s >> 3) * 0x9e3779b97f4a7c15ull >> 55);
    while (stab[h].gen == sgen && stab[h].p != s) h = (h + 1) & 511;
    if (stab[h].gen == sgen) return stab[h].idx;
    stab[h].p = s, stab[h].gen = sgen, stab[h].idx = (uint32_t)l->nstrs;
    l->strs[l->nstrs] = s;
    return (uint64_t)l->nstrs++;
}

/* Picks ids and field orders: events may lose a field or have them shuffled (found by name, never by place). */
static void plan(layout *l, fz_in *in)
{
    uint64_t base = fz_chance(in, 64) ? fz_bits(in, 4) : 2 + fz_range(in, 0, 200);
    uint64_t step = 1 + fz_range(in, 0, 3);
    for (int k = 0; k < NK; k++) {
        l->id[k] = base + step * (uint64_t)(k < K_EXEC ? K_EXEC - 1 - k : k); /* events above the others */
        int n = 0;
        while (n < 9 && classes[k].f[n].name) n++;
        for (int i = 0; i < n; i++) l->order[k][i] = i;
        l->nf[k] = n;
        if (k >= K_EXEC && n > 1 && fz_chance(in, 40)) { /* shuffle */
            for (int i = n - 1; i > 0; i--) {
                int j = (int)fz_range(in, 0, (uint64_t)i), t = l->order[k][i];
                l->order[k][i] = l->order[k][j], l->order[k][j] = t;
            }
        }
        if (k >= K_EXEC && n > 1 && fz_chance(in, 24)) { /* one field left out */
            int drop = (int)fz_range(in, 0, (uint64_t)n - 1);
            memmove(&l->order[k][drop], &l->order[k][drop + 1], (size_t)(n - drop - 1) * sizeof(int));
            l->nf[k] = n - 1;
        }
    }
}

/* 1 if class k keeps field named name. */
static int has(const layout *l, int k, const char *name)
{
    for (int i = 0; i < l->nf[k]; i++)
        if (strcmp(classes[k].f[l->order[k][i]].name, name) == 0) return 1;
    return 0;
}

/* The metadata record. */
static void metadata(gb *out, fz_in *in, layout *l)
{
    gb tree = {0}, pay = {0};
    char ids[NK][24];
    for (int k = 0; k < NK; k++) snprintf(ids[k], sizeof ids[k], "%llu", (unsigned long long)l->id[k]);
    l->nstrs = 0;
    sgen++;
    var(&tree, sidx(l, "root")), var(&tree, 0), var(&tree, 2);
    var(&tree, sidx(l, "metadata")), var(&tree, 0), var(&tree, NK);
    for (int k = 0; k < NK; k++) {
        int ev = k >= K_EXEC;
        var(&tree, sidx(l, "class"));
        var(&tree, 2 + (uint64_t)ev + (uint64_t)classes[k].simple);
        var(&tree, sidx(l, "name")), var(&tree, sidx(l, classes[k].name));
        var(&tree, sidx(l, "id")), var(&tree, sidx(l, ids[k]));
        if (ev) var(&tree, sidx(l, "superType")), var(&tree, sidx(l, "jdk.jfr.Event"));
        if (classes[k].simple) var(&tree, sidx(l, "simpleType")), var(&tree, sidx(l, "true"));
        var(&tree, (uint64_t)l->nf[k]);
        for (int i = 0; i < l->nf[k]; i++) {
            const fdef *f = &classes[k].f[l->order[k][i]];
            var(&tree, sidx(l, "field"));
            var(&tree, 2 + (uint64_t)f->cp + (uint64_t)f->array);
            var(&tree, sidx(l, "name")), var(&tree, sidx(l, f->name));
            var(&tree, sidx(l, "class")), var(&tree, sidx(l, ids[f->type]));
            if (f->cp) var(&tree, sidx(l, "constantPool")), var(&tree, sidx(l, "true"));
            if (f->array) var(&tree, sidx(l, "dimension")), var(&tree, sidx(l, "1"));
            var(&tree, 0);
        }
    }
    var(&tree, sidx(l, "region")), var(&tree, 2);
    var(&tree, sidx(l, "locale")), var(&tree, sidx(l, "en_US"));
    var(&tree, sidx(l, "gmtOffset")), var(&tree, sidx(l, "0"));
    var(&tree, 0);
    var(&pay, 0), var(&pay, 0), var(&pay, 0), var(&pay, 0x7fffffff);
    var(&pay, (uint64_t)l->nstrs);
    for (int i = 0; i < l->nstrs; i++) name_str(&pay, in, l->strs[i]);
    put(&pay, tree.p, tree.n);
    record(out, in, &pay);
    free(tree.p);
    free(pay.p);
}

/* ---- pools ------------------------------------------------------------------------------------------- */

/* Sizes of the pools (keys 1..n; references may point past them: missing entries are allowed). */
typedef struct {
    uint64_t sym, str, cls, meth, trace, thread, ftype;
} sizes;

/* A pool key: mostly an existing one, sometimes 0 or one past the end. */
static uint64_t key(fz_in *in, uint64_t n)
{
    return fz_chance(in, 16) ? fz_range(in, 0, 1000) : fz_range(in, 1, n ? n : 1);
}

/* Appends one field value of class k (not a pool reference), nested as the metadata says. */
static void value(gb *b, fz_in *in, const layout *l, int k, const sizes *z);

/* Appends the fields of class k in its wire order. */
static void fields(gb *b, fz_in *in, const layout *l, int k, const sizes *z)
{
    for (int i = 0; i < l->nf[k]; i++) {
        const fdef *f = &classes[k].f[l->order[k][i]];
        uint64_t n = f->array ? fz_range(in, 0, k == K_TRACE ? 24 : 3) : 1;
        if (f->array) var(b, n);
        for (uint64_t j = 0; j < n; j++) {
            if (!f->cp) {
                value(b, in, l, f->type, z);
                continue;
            }
            uint64_t pool = f->type == K_SYMBOL ? z->sym : f->type == K_CLASS ? z->cls : f->type == K_METHOD ? z->meth
                          : f->type == K_TRACE ? z->trace : f->type == K_THREAD ? z->thread : z->ftype;
            var_any(b, in, key(in, pool));
        }
    }
}

static void value(gb *b, fz_in *in, const layout *l, int k, const sizes *z)
{
    switch (k) {
    case K_LONG: return var_any(b, in, fz_chance(in, 32) ? fz_bits(in, 8) : fz_range(in, 0, 100000));
    case K_INT: return var_any(b, in, fz_chance(in, 32) ? (uint32_t)fz_bits(in, 4) : fz_range(in, 0, 5000));
    case K_BOOL:
    case K_BYTE: return u8(b, fz_u8(in));
    case K_FLOAT: return put(b, "\x3f\x80\x00\x00", 4);
    case K_DOUBLE: return put(b, "\x40\x09\x21\xfb\x54\x44\x2d\x18", 8);
    case K_STRING: return any_str(b, in, 1, z->str);
    default: return fields(b, in, l, k, z);
    }
}

/* Appends one pool of class k with n entries (keys 1..n, in order or not). */
static void pool(gb *b, fz_in *in, const layout *l, int k, uint64_t n, const sizes *z)
{
    static const char *const ftypes[] = {"Interpreted", "JIT compiled", "Inlined", "Native",
                                         "C++",         "Kernel",       "C1 compiled"};
    var(b, l->id[k]);
    var(b, n);
    for (uint64_t i = 1; i <= n; i++) {
        var_any(b, in, fz_chance(in, 8) ? fz_range(in, 1, n) : i); /* a repeated key replaces the entry */
        if (k == K_STRING) any_str(b, in, 0, 0);
        else if (k == K_FTYPE && !fz_chance(in, 24)) name_str(b, in, ftypes[(i - 1) % 7]);
        else value(b, in, l, k, z);
    }
}

/* ---- events and the expected totals -------------------------------------------------------------------- */

typedef struct {
    uint64_t events[4], total[4]; /* per kind: cpu, wall, alloc, lock */
} expect;

/* A Java long as a size: negative counts as 0. */
static uint64_t non_negative(uint64_t v)
{
    return (int64_t)v < 0 ? 0 : v;
}

/* Appends one event of class k (fields in the layout's order) and adds what it weighs to e. */
static void event(gb *out, fz_in *in, const layout *l, int k, const sizes *z, uint64_t tps, expect *e)
{
    gb pay = {0};
    var(&pay, l->id[k]);
    uint64_t samples = 1, alloc = 0, tlab = 0, weight = 0, duration = 0;
    for (int i = 0; i < l->nf[k]; i++) {
        const fdef *f = &classes[k].f[l->order[k][i]];
        if (f->cp) {
            uint64_t pool = f->type == K_THREAD ? z->thread : f->type == K_TRACE ? z->trace : f->type == K_CLASS
                          ? z->cls : 2;
            var_any(&pay, in, key(in, pool));
            continue;
        }
        if (f->type != K_LONG && f->type != K_INT) {
            value(&pay, in, l, f->type, z);
            continue;
        }
        uint64_t v = fz_chance(in, 16) ? fz_bits(in, 8) : fz_range(in, 0, 1 << 20);
        if (f->type == K_INT) v = (uint32_t)v;
        var_any(&pay, in, v);
        const char *n = f->name;
        if (!strcmp(n, "samples")) samples = (int32_t)(uint32_t)v < 0 ? 0 : (uint32_t)v;
        else if (!strcmp(n, "allocationSize")) alloc = non_negative(v);
        else if (!strcmp(n, "tlabSize")) tlab = non_negative(v);
        else if (!strcmp(n, "weight")) weight = non_negative(v);
        else if (!strcmp(n, "duration")) duration = v;
    }
    if (fz_chance(in, 16)) put(&pay, "\0\0\0", 3); /* trailing bytes inside an event are skipped */
    record(out, in, &pay);
    free(pay.p);
    int kind = k == K_EXEC || k == K_NATIVE    ? 0
               : k == K_WALL                   ? 1
               : k >= K_TLAB && k <= K_ASAMPLE ? 2
               : k == K_OTHER                  ? -1
                                               : 3;
    if (kind < 0) return;
    uint64_t w = 1;
    if (kind == 1) w = has(l, k, "samples") ? samples : 1;
    if (k == K_TLAB) w = tlab ? tlab : alloc;
    if (k == K_OUTSIDE) w = alloc;
    if (k == K_ASAMPLE) w = weight;
    if (kind == 3) {
        __int128 ns = (int64_t)duration <= 0 ? 0 : (__int128)duration * 1000000000 / (__int128)tps;
        w = ns > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
    }
    e->events[kind]++;
    e->total[kind] = e->total[kind] + w < e->total[kind] ? UINT64_MAX : e->total[kind] + w;
}

/* ---- chunks ------------------------------------------------------------------------------------------ */

/* Writes v big-endian in 8 bytes at p. */
static void be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

/* Appends one chunk: header, metadata and events in some order, the pools over 1-3 chained checkpoints. */
static void chunk(gb *out, fz_in *in, expect *e)
{
    layout l;
    plan(&l, in);
    sizes z = {fz_range(in, 0, 48), fz_range(in, 0, 8), fz_range(in, 0, 12), fz_range(in, 0, 24),
               fz_range(in, 0, 16), fz_range(in, 0, 6), fz_range(in, 0, 9)};
    uint64_t tps = fz_chance(in, 32) ? 1 + fz_bits(in, 8) % UINT64_MAX : 1000000000;
    size_t base = out->n;
    uint8_t hdr[68] = {'F', 'L', 'R', 0, 0, (uint8_t)(1 + (fz_u8(in) & 1)), 0, 1};
    put(out, hdr, sizeof hdr);
    int meta_first = fz_u8(in) & 1, ncp = 1 + (int)fz_range(in, 0, 2);
    size_t meta = 0, cp[3] = {0};
    if (meta_first) meta = out->n - base, metadata(out, in, &l);
    /* pools, spread over the checkpoints; events between them */
    const int kinds[] = {K_STRING, K_SYMBOL, K_FTYPE, K_CLASS, K_METHOD, K_TRACE, K_THREAD, K_STATE, K_OTHER};
    const uint64_t counts[] = {z.str, z.sym, z.ftype, z.cls, z.meth, z.trace, z.thread, 2, fz_range(in, 0, 2)};
    for (int c = 0; c < ncp; c++) {
        uint64_t nev = fz_range(in, 0, 40);
        for (uint64_t i = 0; i < nev; i++) event(out, in, &l, K_EXEC + (int)fz_range(in, 0, K_OTHER - K_EXEC), &z,
                                                  tps, e);
        gb pay = {0}, pools = {0};
        uint64_t npools = 0;
        for (int p = 0; p < 9; p++) {
            if ((unsigned)p % (unsigned)ncp != (unsigned)c || (!counts[p] && !fz_chance(in, 16))) continue;
            pool(&pools, in, &l, kinds[p], counts[p], &z);
            npools++;
        }
        cp[c] = out->n - base;
        var(&pay, 1), var(&pay, 0), var(&pay, 0);
        var_k(&pay, c ? (uint64_t)-(int64_t)(cp[c] - cp[c - 1]) : 0, c ? 9 : 1 + (fz_u8(in) & 1) * 8);
        u8(&pay, fz_u8(in) & 0xf);
        var(&pay, npools);
        put(&pay, pools.p, pools.n);
        record(out, in, &pay);
        free(pay.p);
        free(pools.p);
    }
    uint64_t nev = fz_range(in, 0, 60);
    for (uint64_t i = 0; i < nev; i++) event(out, in, &l, K_EXEC + (int)fz_range(in, 0, K_OTHER - K_EXEC), &z, tps, e);
    if (!meta_first) meta = out->n - base, metadata(out, in, &l);
    uint8_t *h = out->p + base;
    be64(h + 8, out->n - base);
    be64(h + 16, cp[ncp - 1]);
    be64(h + 24, meta);
    be64(h + 32, 1700000000000000000ull);
    be64(h + 40, 1000000000ull);
    be64(h + 48, fz_bits(in, 4));
    be64(h + 56, tps);
}

/* libFuzzer entry point: build, read one kind, compare with what was written. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    static gb rec; /* kept from input to input: its pages stay mapped */
    rec.n = 0;
    longs_left = LONGS_PER_RECORDING;
    expect e = {{0}, {0}};
    uint8_t first = fz_u8(&in);
    int nchunks = 1 + (first & 1), kind = (first >> 1) & 3; /* one kind read per input: four times the inputs */
    for (int c = 0; c < nchunks; c++) chunk(&rec, &in, &e);
    size_t unfinished = 0;
    if (fz_chance(&in, 24)) { /* a chunk a killed writer left with size 0 */
        uint8_t hdr[68] = {'F', 'L', 'R', 0, 0, 2, 0, 1};
        unfinished = rec.n;
        put(&rec, hdr, sizeof hdr);
    }
    {
        js_jfr_read_opts o = {.kind = (js_jfr_read_kind)kind, .threads = (first >> 3) & 1, .lines = (first >> 4) & 1};
        js_profile p;
        js_profile_init(&p);
        js_jfr_read_stats st;
        char err[512] = "";
        int rc = js_jfr_read_mem(rec.p, rec.n, "gen", &o, &p, &st, err, sizeof err);
        FZ_CHECK(rc == 0, "a well-formed recording was refused: %s", err);
        FZ_CHECK(st.chunks == (uint64_t)nchunks, "%llu chunks read of %d", (unsigned long long)st.chunks, nchunks);
        FZ_CHECK(st.unfinished_at == unfinished, "unfinished chunk at %llu, written at %zu",
                 (unsigned long long)st.unfinished_at, unfinished);
        FZ_CHECK(st.events == e.events[kind], "kind %d: %llu events read, %llu written", kind,
                 (unsigned long long)st.events, (unsigned long long)e.events[kind]);
        FZ_CHECK(p.total == e.total[kind], "kind %d: total %llu, written %llu", kind, (unsigned long long)p.total,
                 (unsigned long long)e.total[kind]);
        for (size_t i = 0; i < p.nframes; i++) /* class + '.' + method, each cut at the cap, and ":LINE" */
            FZ_CHECK(strlen(p.frames[i].name) <= 2 * NAME_CAP + 16, "frame name of %zu bytes",
                     strlen(p.frames[i].name));
        js_profile_free(&p);
    }
    return 0;
}
