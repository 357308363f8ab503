/* test_names.c - the names cache (core/names.h) against a fake JVMTI environment: resolution and
 * formatting, the incremental refresh (only traces published since the cursor cost JVMTI calls),
 * names kept after a class unloads, unresolvable methods counted, compile records loaded and
 * unloaded by code address with kind inference, and no lock held across JVMTI calls. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/names.h"
#include "sample/store.h"

#define UNUSED __attribute__((unused))
#define NMETH 64
#define SLOW_METHOD 63 /* GetMethodDeclaringClass blocks on it while g_hold is set */

/* ---- the fake JVMTI: method k lives in class pkg/C<k/10> (k >= 50: a hidden lambda class) ---- */
static _Atomic int g_calls[NMETH];     /* GetMethodDeclaringClass calls per method */
static _Atomic int g_unloaded[NMETH];  /* 1: the method's class is gone */
static _Atomic long g_live_allocs;     /* JVMTI allocations not yet deallocated */
static _Atomic int g_hold, g_in_slow;

static jmethodID meth(int k)
{
    return (jmethodID)(uintptr_t)(0x7f0000000000ULL + ((uint64_t)k << 16));
}

/* Method index of a fake id, or -1. */
static int index_of(jmethodID id)
{
    uint64_t v = (uint64_t)(uintptr_t)id - 0x7f0000000000ULL;
    int k = (int)(v >> 16);
    return (v & 0xffff) == 0 && k >= 0 && k < NMETH ? k : -1;
}

static char *jvmti_strdup(const char *s)
{
    atomic_fetch_add(&g_live_allocs, 1);
    return strdup(s);
}

static jvmtiError JNICALL fake_declaring_class(jvmtiEnv *env, jmethodID m, jclass *out)
{
    int k = index_of(m);
    if (k < 0) return JVMTI_ERROR_INVALID_METHODID;
    atomic_fetch_add(&g_calls[k], 1);
    if (k == SLOW_METHOD) {
        atomic_store(&g_in_slow, 1);
        while (atomic_load(&g_hold)) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    if (atomic_load(&g_unloaded[k])) return JVMTI_ERROR_INVALID_METHODID;
    *out = (jclass)(uintptr_t)(0x1000 + (k / 10) * 16 + (k >= 50 ? 8 : 0));
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_method_name(jvmtiEnv *env, jmethodID m, char **name, char **sig, char **generic)
{
    int k = index_of(m);
    if (k < 0 || atomic_load(&g_unloaded[k])) return JVMTI_ERROR_INVALID_METHODID;
    char n[32];
    snprintf(n, sizeof n, "m%d", k);
    if (name) *name = jvmti_strdup(n);
    if (sig) *sig = jvmti_strdup(k % 2 ? "(I)J" : "()V");
    if (generic) *generic = NULL;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_class_signature(jvmtiEnv *env, jclass c, char **sig, char **generic)
{
    uintptr_t v = (uintptr_t)c - 0x1000;
    char s[64];
    if (v & 8) snprintf(s, sizeof s, "Lpkg/C%u$$Lambda$7/0x0000000800c01234;", (unsigned)(v / 16));
    else snprintf(s, sizeof s, "Lpkg/C%u;", (unsigned)(v / 16));
    if (sig) *sig = jvmti_strdup(s);
    if (generic) *generic = NULL;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_modifiers(jvmtiEnv *env, jmethodID m, jint *mods)
{
    *mods = 0x0009; /* public static */
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_line_table(jvmtiEnv *env, jmethodID m, jint *count, jvmtiLineNumberEntry **table)
{
    int k = index_of(m);
    if (k < 0) return JVMTI_ERROR_INVALID_METHODID;
    jvmtiLineNumberEntry *t = malloc(2 * sizeof *t);
    atomic_fetch_add(&g_live_allocs, 1);
    t[0] = (jvmtiLineNumberEntry){0, 100 + k};
    t[1] = (jvmtiLineNumberEntry){5, 200 + k};
    *count = 2;
    *table = t;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_deallocate(jvmtiEnv *env, unsigned char *mem)
{
    if (mem) atomic_fetch_sub(&g_live_allocs, 1);
    free(mem);
    return JVMTI_ERROR_NONE;
}

static struct jvmtiInterface_1_ g_fns;
static jvmtiEnv g_env = &g_fns;

static int total_calls(void)
{
    int n = 0;
    for (int k = 0; k < NMETH; k++) n += atomic_load(&g_calls[k]);
    return n;
}

static js_store *g_store;

static int setup(void **state UNUSED)
{
    memset(&g_fns, 0, sizeof g_fns);
    g_fns.GetMethodDeclaringClass = fake_declaring_class;
    g_fns.GetMethodName = fake_method_name;
    g_fns.GetClassSignature = fake_class_signature;
    g_fns.GetMethodModifiers = fake_modifiers;
    g_fns.GetLineNumberTable = fake_line_table;
    g_fns.Deallocate = fake_deallocate;
    for (int k = 0; k < NMETH; k++) atomic_store(&g_calls[k], 0), atomic_store(&g_unloaded[k], 0);
    js_names_clear();
    js_names_init(NULL, &g_env);
    char err[256];
    g_store = js_store_create(4096, 1 << 16, 8192, err, sizeof err);
    assert_non_null(g_store);
    return 0;
}

static int teardown(void **state UNUSED)
{
    js_store_destroy(g_store);
    js_names_clear();
    assert_int_equal(atomic_load(&g_live_allocs), 0); /* every JVMTI allocation given back */
    return 0;
}

/* A stack of Java frames, leaf first: methods ks[0..n) at bci 5 (leaf) and 0 (callers). */
static uint32_t add_stack(const int *ks, int n)
{
    js_raw_frame f[16];
    for (int i = 0; i < n; i++) f[i] = (js_raw_frame){.bci = i == 0 ? 5 : 0, .kind = JS_RF_JAVA, .method = meth(ks[i])};
    uint32_t id = js_store_add(g_store, f, n, 1, 1);
    assert_true(id > 0);
    return id;
}

/* Name of frame i of trace id. */
static js_frame_type name_of(uint32_t id, int i, int lines, int sig, char *buf, size_t len)
{
    int n = 0;
    const js_raw_frame *f = js_store_trace(g_store, id, &n);
    assert_non_null(f);
    return js_names_frame(f, i, n, (lines ? JS_NF_LINES : 0) | (sig ? JS_NF_SIG : 0), buf, len);
}

/* Names, signatures, lines, JFR parts; hidden-class suffix dropped. */
static void test_resolution(void **state UNUSED)
{
    uint32_t id = add_stack((int[]){3, 12, 55}, 3);
    uint32_t cursor = 0;
    js_names_refresh(g_store, &cursor);
    assert_int_equal(cursor, 1);
    char buf[256];
    name_of(id, 0, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C0.m3");
    name_of(id, 0, 1, 1, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C0.m3(I)J:203");
    name_of(id, 1, 1, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C1.m12:112");
    name_of(id, 2, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C5$$Lambda$7.m55");
    char small[6]; /* a name cut short keeps the dotted form */
    name_of(id, 1, 1, 1, small, sizeof small);
    assert_string_equal(small, "pkg.C");
    js_method_parts p;
    assert_int_equal(js_names_method_parts(meth(55), &p), 0);
    assert_string_equal(p.cls, "pkg/C5$$Lambda$7");
    assert_string_equal(p.name, "m55");
    assert_string_equal(p.sig, "(I)J");
    assert_int_equal(p.modifiers, 9);
    assert_int_equal(js_names_line(meth(12), 7), 212);
    assert_int_equal(js_names_line(meth(12), -1), -1);
    assert_int_equal(total_calls(), 3); /* each method resolved once, by the refresh */
}

/* Over the bound, trim forgets every cached method (freeing what JVMTI gave: teardown checks), and a method still
 * loaded is named again when asked; at or under it, nothing is forgotten. */
static void test_trim(void **state UNUSED)
{
    uint32_t id = add_stack((int[]){3, 12, 55}, 3);
    uint32_t cursor = 0;
    js_names_refresh(g_store, &cursor);
    assert_int_equal(js_names_cached(), 3);
    assert_int_equal(js_names_trim(3), 0);
    assert_int_equal(js_names_cached(), 3);
    assert_int_equal(js_names_trim(2), 3);
    assert_int_equal(js_names_cached(), 0);
    char buf[256];
    name_of(id, 1, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C1.m12");
    assert_int_equal(atomic_load(&g_calls[12]), 2); /* resolved again */
}

/* Within a session, over the bound, an age forgets the methods not looked up since the last age: one looked up stays
 * cached (no JVMTI call again), a forgotten live one is named again, an unloaded one sampled before the last age
 * was kept up to it. Under the bound nothing goes. */
static void test_age(void **state UNUSED)
{
    uint32_t id = add_stack((int[]){3, 12, 55}, 3);
    uint32_t cursor = 0;
    js_names_refresh(g_store, &cursor);
    assert_int_equal(js_names_cached(), 3);
    assert_int_equal(js_names_age(2), 0); /* all looked up in this age */
    assert_int_equal(js_names_age(3), 0); /* none since, but not over the bound */
    assert_int_equal(js_names_cached(), 3);
    char buf[256];
    name_of(id, 1, 0, 0, buf, sizeof buf); /* 12 looked up */
    assert_string_equal(buf, "pkg.C1.m12");
    atomic_store(&g_unloaded[55], 1);
    assert_int_equal(js_names_age(2), 2); /* 3 and 55 forgotten, 12 kept */
    assert_int_equal(js_names_cached(), 1);
    name_of(id, 1, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C1.m12");
    assert_int_equal(atomic_load(&g_calls[12]), 1); /* still cached */
    name_of(id, 0, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C0.m3");
    assert_int_equal(atomic_load(&g_calls[3]), 2); /* named again */
    /* A method sampled before an age and its class unloaded after it: still named, the age kept it. */
    uint32_t id2 = add_stack((int[]){20, 21}, 2);
    js_names_refresh(g_store, &cursor);
    assert_int_equal(js_names_age(3), 0); /* 4 cached, over the bound, all looked up in this age */
    atomic_store(&g_unloaded[20], 1);
    name_of(id2, 0, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C2.m20");
    assert_int_equal(js_names_age(1), 3); /* only 20 looked up since */
    assert_int_equal(js_names_cached(), 1);
    /* A touch keeps what it names (the trace's methods), without resolving anything; the store's touch, every trace. */
    js_names_refresh(g_store, &(uint32_t){0}); /* 3, 12, 21 named again; 55 (gone) not nameable */
    assert_int_equal(js_names_unresolved(), 1);
    assert_int_equal(js_names_age(100), 0); /* under the bound: a new age only */
    int before = total_calls();
    js_names_touch((js_raw_frame[]){{.kind = JS_RF_NATIVE, .method = meth(12)}, {.kind = JS_RF_JAVA, .method = meth(3)}}, 2);
    assert_int_equal(js_names_age(2), 3); /* 20, 21 and 55 not looked up since; 12 and 3 stay */
    assert_int_equal(js_names_unresolved(), 0); /* 55 forgotten: no longer counted */
    assert_int_equal(js_names_cached(), 2);
    assert_int_equal(total_calls(), before);
    js_names_refresh(g_store, &(uint32_t){0});
    assert_int_equal(js_names_age(100), 0);
    js_names_touch_store(g_store);
    assert_int_equal(js_names_age(1), 0); /* every method of the store looked up */
}

/* Only traces published since the cursor are looked at; known methods cost no JVMTI call. */
static void test_incremental_cursor(void **state UNUSED)
{
    uint32_t cursor = 0;
    add_stack((int[]){1, 2, 3}, 3);
    add_stack((int[]){1, 2, 4}, 3);
    add_stack((int[]){5, 5, 5, 2}, 4); /* recursion: one method, several frames */
    js_names_refresh(g_store, &cursor);
    assert_int_equal(cursor, 3);
    assert_int_equal(total_calls(), 5);
    js_names_refresh(g_store, &cursor);
    assert_int_equal(total_calls(), 5);
    add_stack((int[]){4, 3, 1}, 3); /* only known methods */
    add_stack((int[]){6, 1}, 2);    /* one new method */
    js_names_refresh(g_store, &cursor);
    assert_int_equal(cursor, 5);
    assert_int_equal(total_calls(), 6);
    assert_int_equal(atomic_load(&g_calls[6]), 1);
    /* A reset store (new generation): the cursor starts over. */
    js_store_reset(g_store);
    add_stack((int[]){7}, 1);
    js_names_refresh(g_store, &cursor);
    assert_int_equal(cursor, 1);
    assert_int_equal(atomic_load(&g_calls[7]), 1);
}

/* Resolved before the class unloads: the name stays. Never resolved: [unloaded_method], counted once. */
static void test_unloaded_methods(void **state UNUSED)
{
    uint32_t cursor = 0;
    uint32_t a = add_stack((int[]){8, 9}, 2);
    js_names_refresh(g_store, &cursor);
    atomic_store(&g_unloaded[8], 1);
    atomic_store(&g_unloaded[10], 1);
    uint32_t b = add_stack((int[]){10, 9}, 2);
    char buf[256];
    name_of(a, 0, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C0.m8");
    assert_int_equal(name_of(b, 0, 0, 0, buf, sizeof buf), JS_FT_ERROR);
    assert_string_equal(buf, "[unloaded_method]");
    assert_int_equal(name_of(b, 0, 0, 0, buf, sizeof buf), JS_FT_ERROR);
    js_names_refresh(g_store, &cursor);
    js_method_parts p;
    assert_int_equal(js_names_method_parts(meth(10), &p), -1);
    assert_int_equal(js_names_unresolved(), 1);
    assert_int_equal(atomic_load(&g_calls[10]), 1); /* known unresolvable: not asked again */
    /* The dump path resolves eagerly what no refresh saw, while it is still valid. */
    uint32_t c = add_stack((int[]){11, 9}, 2);
    name_of(c, 0, 0, 0, buf, sizeof buf);
    assert_string_equal(buf, "pkg.C1.m11");
}

/* Kind of frame i of trace id. */
static js_frame_type kind_of(uint32_t id, int i)
{
    int n = 0;
    const js_raw_frame *f = js_store_trace(g_store, id, &n);
    return js_names_kind(f, i, n);
}

/* Inline facts keyed by compiled code, reference counted; unloading code removes them. */
static void test_compiled_load_unload(void **state UNUSED)
{
    uint32_t id = add_stack((int[]){20, 21, 22}, 3);
    const void *code_a = (const void *)0x10000, *code_b = (const void *)0x20000, *code_c = (const void *)0x30000;
    assert_int_equal(kind_of(id, 0), JS_FT_INTERPRETED);
    js_names_compiled(code_a, meth(21), (jmethodID[]){meth(20), meth(20), meth(21)}, 3);
    assert_int_equal(kind_of(id, 0), JS_FT_INLINED);
    assert_int_equal(kind_of(id, 1), JS_FT_JIT);
    assert_int_equal(kind_of(id, 2), JS_FT_INTERPRETED);
    js_names_compiled(code_b, meth(21), (jmethodID[]){meth(20)}, 1); /* recompiled, same inlining */
    js_names_compiled(code_c, meth(22), NULL, 0);
    assert_int_equal(kind_of(id, 2), JS_FT_JIT);
    js_names_compiled_unload(code_a, meth(21));
    assert_int_equal(kind_of(id, 0), JS_FT_INLINED); /* code_b still inlines it */
    js_names_compiled_unload(code_b, meth(99));      /* not the code at that address: ignored */
    assert_int_equal(kind_of(id, 0), JS_FT_INLINED);
    js_names_compiled_unload(code_b, meth(21));
    assert_int_equal(kind_of(id, 0), JS_FT_INTERPRETED);
    assert_int_equal(kind_of(id, 1), JS_FT_INTERPRETED);
    /* New code at an address whose unload never came replaces the old facts. */
    js_names_compiled(code_c, meth(21), (jmethodID[]){meth(20)}, 1);
    assert_int_equal(kind_of(id, 2), JS_FT_INTERPRETED);
    assert_int_equal(kind_of(id, 0), JS_FT_INLINED);
    char buf[64];
    assert_int_equal(name_of(id, 0, 0, 0, buf, sizeof buf), JS_FT_INLINED);
    js_names_compiled_unload(code_c, meth(21));
    assert_int_equal(name_of(id, 0, 0, 0, buf, sizeof buf), JS_FT_INTERPRETED);
    /* Many load/unload cycles leave nothing behind that changes kinds. */
    for (uintptr_t i = 1; i <= 20000; i++) {
        const void *code = (const void *)(0x100000 + i * 64);
        js_names_compiled(code, meth(21), (jmethodID[]){meth(20), meth(30 + (int)(i % 10))}, 2);
        js_names_compiled_unload(code, meth(21));
    }
    assert_int_equal(kind_of(id, 0), JS_FT_INTERPRETED);
    assert_int_equal(kind_of(id, 1), JS_FT_INTERPRETED);
}

/* A Java native method's frame is typed as a VM stack walker types it: interpreted (the interpreter's native entry)
 * until the VM compiles a native wrapper for it, compiled then; never "Native", which async-profiler's converter
 * reads as a C function (and drops the class). The C frame above it keeps its own kind. */
static void test_native_method_kind(void **state UNUSED)
{
    const void *wrapper = (const void *)0x40000;
    js_raw_frame f[3] = {{.kind = JS_RF_NATIVE_PC, .bci = 0, .method = (void *)0x1234},
                         {.kind = JS_RF_NATIVE, .bci = -1, .method = meth(40)},
                         {.kind = JS_RF_JAVA, .bci = 3, .method = meth(41)}};
    uint8_t kinds[3];
    int32_t lines[3];
    assert_int_equal(js_names_kind(f, 1, 3), JS_FT_INTERPRETED);
    js_names_trace_info(f, 3, kinds, lines);
    assert_int_equal(kinds[1], JS_FT_INTERPRETED);
    js_names_compiled(wrapper, meth(40), NULL, 0);
    assert_int_equal(js_names_kind(f, 1, 3), JS_FT_JIT);
    js_names_trace_info(f, 3, kinds, lines);
    assert_int_equal(kinds[1], JS_FT_JIT);
    assert_int_not_equal(kinds[0], JS_FT_JIT);
    js_names_compiled_unload(wrapper, meth(40));
    assert_int_equal(js_names_kind(f, 1, 3), JS_FT_INTERPRETED);
}

/* js_names_trace_info gives, for a whole trace, what js_names_kind and js_names_line give frame by frame: random
 * deep stacks (recursion over a few methods, or over more than 64 distinct ones, unresolvable ids too), frames of
 * other kinds between Java frames, unknown bcis, and compile facts that inline methods into one another. */
static void test_trace_info_matches_frames(void **state UNUSED)
{
    enum { N = 3000 };
    static js_raw_frame f[N];
    static uint8_t kinds[N];
    static int32_t lines[N];
    uint64_t rnd = 0x9E3779B97F4A7C15ULL;
#define RND() (rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17, rnd)
    for (int k = 0; k < 40; k++) { /* inlining facts over methods 0..79 (64..79 unknown to the fake JVMTI), dense in 0..7 */
        uint64_t range = k < 12 ? 8 : 80;
        jmethodID in[3] = {meth((int)(RND() % range)), meth((int)(RND() % range)), meth((int)(RND() % range))};
        js_names_compiled((const void *)(uintptr_t)(0x50000 + k * 64), meth((int)(RND() % range)), in, 1 + k % 3);
    }
    int seen[8] = {0};
    for (int round = 0; round < 60; round++) {
        int n = 1 + (int)(RND() % N), spread = round % 3 == 0 ? 80 : 2 + round % 5; /* > 64 methods, or recursion */
        for (int i = 0; i < n; i++) {
            uint64_t r = RND();
            int kind = r % 23 == 0 ? JS_RF_NATIVE : r % 29 == 0 ? JS_RF_ERROR : r % 31 == 0 ? JS_RF_NULL_ID : JS_RF_JAVA;
            f[i] = (js_raw_frame){.bci = r % 17 == 0 ? -1 : (int32_t)(r >> 20) % 9, .kind = kind,
                                  .method = kind == JS_RF_ERROR ? NULL : meth((int)((r >> 8) % (uint64_t)spread))};
        }
        js_names_trace_info(f, n, kinds, lines);
        for (int i = 0; i < n; i++) {
            seen[kinds[i] & 7]++;
            if (kinds[i] != (uint8_t)js_names_kind(f, i, n))
                fail_msg("round %d frame %d of %d: kind %d, frame by frame %d", round, i, n, kinds[i], js_names_kind(f, i, n));
            int32_t want = f[i].kind == JS_RF_JAVA ? js_names_line(f[i].method, f[i].bci) : -1;
            if (lines[i] != want) fail_msg("round %d frame %d: line %d, frame by frame %d", round, i, lines[i], want);
        }
    }
#undef RND
    assert_true(seen[JS_FT_INTERPRETED] && seen[JS_FT_JIT] && seen[JS_FT_INLINED]); /* every Java kind was decided */
    for (int k = 0; k < 40; k++) js_names_compiled_unload((const void *)(uintptr_t)(0x50000 + k * 64), NULL);
}

static void *refresher(void *arg UNUSED)
{
    uint32_t cursor = 0;
    js_names_refresh(g_store, &cursor);
    return NULL;
}

typedef struct {
    uint32_t id;
    _Atomic int done;
} side_work;

/* What the JVM's compile callbacks and a dump do while a refresh is inside JVMTI. */
static void *side(void *arg)
{
    side_work *w = arg;
    js_names_compiled((const void *)0x40000, meth(1), (jmethodID[]){meth(2)}, 1);
    js_names_compiled_unload((const void *)0x40000, meth(1));
    char buf[64];
    name_of(w->id, 0, 0, 0, buf, sizeof buf);
    atomic_store(&w->done, strcmp(buf, "pkg.C0.m2") == 0 ? 1 : 2);
    return NULL;
}

/* A refresh blocked in a JVMTI call holds no lock: compile callbacks and dumps go on. */
static void test_no_lock_across_jvmti(void **state UNUSED)
{
    uint32_t cursor = 0;
    side_work w = {add_stack((int[]){2, 1}, 2), 0};
    js_names_refresh(g_store, &cursor); /* m2 and m1 cached */
    add_stack((int[]){SLOW_METHOD, 1}, 2);
    atomic_store(&g_hold, 1);
    atomic_store(&g_in_slow, 0);
    pthread_t r, s;
    assert_int_equal(pthread_create(&r, NULL, refresher, NULL), 0);
    while (!atomic_load(&g_in_slow)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(pthread_create(&s, NULL, side, &w), 0);
    for (int i = 0; i < 2000 && !atomic_load(&w.done); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    int done = atomic_load(&w.done);
    atomic_store(&g_hold, 0);
    pthread_join(r, NULL);
    pthread_join(s, NULL);
    assert_int_equal(done, 1); /* finished while the refresh was still inside JVMTI */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resolution, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_age, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incremental_cursor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unloaded_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compiled_load_unload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_native_method_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_info_matches_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_lock_across_jvmti, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
