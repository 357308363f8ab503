/* names_kinds.c - the kinds of Java frames (names.h: js_names_compiled, js_names_kind, js_names_trace_kinds):
 * interpreted, JIT-compiled or inlined, from the JVM's CompiledMethodLoad/Unload records.
 *
 * The compile facts: code address -> (root, inlined methods), plus reference-counted (inlinee, root) pairs and per-root
 * counts of loaded code, under `compile_lock`. The JVM's compile callbacks take only that lock, for a few hash
 * operations; it is never held with names.c's method-cache lock.
 */
#include "core/names.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmix.h"

#define INLINE_WINDOW 16  /* callers examined when deciding whether a frame was inlined */
#define MEMO_SLOTS 64     /* a memo of map lookups within one call */
#define DISTINCT_MAX 64   /* Java methods of a trace whose inlining is looked up pairwise */

/* ---- a small open-addressing map with two-word keys (k1 != 0), used for the compile facts ---- */

typedef struct {
    uint64_t k1, k2, v;
} map_slot;

typedef struct {
    map_slot *slots;
    size_t cap, n; /* cap a power of two, load <= 1/2 */
} u2map;

/* Home slot of (k1, k2). */
static size_t map_home(const u2map *m, uint64_t k1, uint64_t k2)
{
    return (size_t)js_mix64(k1 ^ js_mix64(k2 + 0x9E3779B97F4A7C15ULL)) & (m->cap - 1);
}

/* Slot index holding (k1, k2), or the empty slot where it would go. m->cap > 0. */
static size_t map_pos(const u2map *m, uint64_t k1, uint64_t k2)
{
    size_t i = map_home(m, k1, k2);
    while (m->slots[i].k1 && (m->slots[i].k1 != k1 || m->slots[i].k2 != k2)) i = (i + 1) & (m->cap - 1);
    return i;
}

/* Value of (k1, k2) or NULL. */
static uint64_t *map_find(const u2map *m, uint64_t k1, uint64_t k2)
{
    if (!m->cap) return NULL;
    size_t i = map_pos(m, k1, k2);
    return m->slots[i].k1 ? &m->slots[i].v : NULL;
}

/* Double the table; 0 or -1. */
static int map_grow(u2map *m)
{
    u2map g = {calloc(m->cap ? m->cap * 2 : 1024, sizeof(map_slot)), m->cap ? m->cap * 2 : 1024, m->n};
    if (!g.slots) return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].k1) g.slots[map_pos(&g, m->slots[i].k1, m->slots[i].k2)] = m->slots[i];
    free(m->slots);
    *m = g;
    return 0;
}

/* Value slot of (k1, k2), inserted as 0 if absent; NULL on allocation failure. */
static uint64_t *map_get(u2map *m, uint64_t k1, uint64_t k2)
{
    if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0) return NULL;
    size_t i = map_pos(m, k1, k2);
    if (!m->slots[i].k1) {
        m->slots[i] = (map_slot){k1, k2, 0};
        m->n++;
    }
    return &m->slots[i].v;
}

/* Remove (k1, k2) if present, shifting the rest of its cluster back (no tombstones). */
static void map_del(u2map *m, uint64_t k1, uint64_t k2)
{
    if (!m->cap) return;
    size_t mask = m->cap - 1, i = map_pos(m, k1, k2);
    if (!m->slots[i].k1) return;
    m->slots[i].k1 = 0;
    m->n--;
    for (size_t j = (i + 1) & mask; m->slots[j].k1; j = (j + 1) & mask) {
        size_t h = map_home(m, m->slots[j].k1, m->slots[j].k2);
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (stays) continue;
        m->slots[i] = m->slots[j];
        m->slots[j].k1 = 0;
        i = j;
    }
}

/* Add delta to the count of (k1, k2); the key disappears at 0. */
static void map_count(u2map *m, uint64_t k1, uint64_t k2, int delta)
{
    uint64_t *v = delta > 0 ? map_get(m, k1, k2) : map_find(m, k1, k2);
    if (!v) return;
    *v += (uint64_t)(int64_t)delta;
    if (*v == 0 || (int64_t)*v < 0) map_del(m, k1, k2);
}

/* Free the table, leaving it empty and usable. */
static void map_free(u2map *m)
{
    free(m->slots);
    *m = (u2map){NULL, 0, 0};
}

/* ---- state ---- */

typedef struct {
    jmethodID root;
    int n;
    jmethodID inlined[]; /* distinct, != root */
} code_rec;


/* Compile facts, guarded by compile_lock; process-wide, as compiled code is. */
static pthread_mutex_t compile_lock = PTHREAD_MUTEX_INITIALIZER;
static u2map codes;    /* code address -> code_rec* */
static u2map pairs;    /* (inlinee, root) -> number of loaded codes inlining inlinee into root */
static u2map inlinees; /* inlinee -> number of such pairs: a method inlined nowhere needs no look at its callers */
static u2map compiled; /* root -> number of loaded codes compiling it */

/* Drop the facts of one code record. Caller holds compile_lock. */
static void drop_code(const void *code_addr, code_rec *r)
{
    for (int i = 0; i < r->n; i++) {
        map_count(&pairs, (uint64_t)(uintptr_t)r->inlined[i], (uint64_t)(uintptr_t)r->root, -1);
        map_count(&inlinees, (uint64_t)(uintptr_t)r->inlined[i], 0, -1);
    }
    map_count(&compiled, (uint64_t)(uintptr_t)r->root, 0, -1);
    map_del(&codes, (uint64_t)(uintptr_t)code_addr, 0);
}

void js_names_compiled(const void *code_addr, jmethodID root, const jmethodID *inlined, int n)
{
    if (!code_addr || !root) return;
    code_rec *r = malloc(sizeof *r + (size_t)(n > 0 ? n : 0) * sizeof(jmethodID));
    if (!r) return;
    r->root = root;
    r->n = 0;
    for (int i = 0; i < n; i++) {
        int dup = !inlined[i] || inlined[i] == root;
        for (int j = 0; j < r->n && !dup; j++) dup = r->inlined[j] == inlined[i];
        if (!dup) r->inlined[r->n++] = inlined[i];
    }
    code_rec *old = NULL;
    pthread_mutex_lock(&compile_lock);
    uint64_t *v = map_find(&codes, (uint64_t)(uintptr_t)code_addr, 0);
    if (v) { /* the unload of earlier code at this address never came: replace it */
        old = (code_rec *)(uintptr_t)*v;
        drop_code(code_addr, old);
    }
    v = map_get(&codes, (uint64_t)(uintptr_t)code_addr, 0);
    if (v) {
        *v = (uint64_t)(uintptr_t)r;
        for (int i = 0; i < r->n; i++) {
            map_count(&pairs, (uint64_t)(uintptr_t)r->inlined[i], (uint64_t)(uintptr_t)root, 1);
            map_count(&inlinees, (uint64_t)(uintptr_t)r->inlined[i], 0, 1);
        }
        map_count(&compiled, (uint64_t)(uintptr_t)root, 0, 1);
        r = NULL;
    }
    pthread_mutex_unlock(&compile_lock);
    free(old);
    free(r);
}

void js_names_compiled_unload(const void *code_addr, jmethodID root)
{
    if (!code_addr) return;
    code_rec *r = NULL;
    pthread_mutex_lock(&compile_lock);
    uint64_t *v = map_find(&codes, (uint64_t)(uintptr_t)code_addr, 0);
    if (v && (!root || ((code_rec *)(uintptr_t)*v)->root == root)) {
        r = (code_rec *)(uintptr_t)*v;
        drop_code(code_addr, r);
    }
    pthread_mutex_unlock(&compile_lock);
    free(r);
}

/* Kind of the Java frame f[i] given the frames above it (its callers). Takes compile_lock. */
static js_frame_type java_kind(const js_raw_frame *f, int i, int n)
{
    js_frame_type k = JS_FT_INTERPRETED;
    uint64_t m = (uint64_t)(uintptr_t)f[i].method;
    pthread_mutex_lock(&compile_lock);
    for (int j = i + 1; j < n && j <= i + INLINE_WINDOW; j++) {
        if (f[j].kind != JS_RF_JAVA) break;
        if (map_find(&pairs, m, (uint64_t)(uintptr_t)f[j].method)) {
            k = JS_FT_INLINED;
            break;
        }
    }
    if (k != JS_FT_INLINED && map_find(&compiled, m, 0)) k = JS_FT_JIT;
    pthread_mutex_unlock(&compile_lock);
    return k;
}

/* Kind of a Java native method's frame, as a VM stack walker types it: compiled when the VM made a native wrapper
 * for the method (its CompiledMethodLoad came), interpreted otherwise (the interpreter's native entry runs it).
 * Never "Native": in async-profiler's JFR and its converter that type is a C function's, and the class is dropped.
 * Caller holds compile_lock. */
static js_frame_type native_method_kind(const void *method)
{
    return map_find(&compiled, (uint64_t)(uintptr_t)method, 0) ? JS_FT_JIT : JS_FT_INTERPRETED;
}

/* js_names_kind of a frame that is not a Java method's own (JS_RF_JAVA), with compile_lock held. */
static js_frame_type other_kind_locked(const js_raw_frame *f, int i, int n)
{
    return f[i].kind == JS_RF_NATIVE ? native_method_kind(f[i].method) : js_names_kind(f, i, n);
}

js_frame_type js_names_kind(const js_raw_frame *f, int i, int n)
{
    if (f[i].kind == JS_RF_NATIVE) {
        pthread_mutex_lock(&compile_lock);
        js_frame_type k = native_method_kind(f[i].method);
        pthread_mutex_unlock(&compile_lock);
        return k;
    }
    if (f[i].kind == JS_RF_CLASS || f[i].kind == JS_RF_KLASS) return JS_FT_INLINED;
    if (f[i].kind == JS_RF_CPU) return JS_FT_NATIVE; /* as async-profiler types its [CPU-N] frame */
    if (f[i].kind != JS_RF_JAVA) return JS_FT_ERROR;
    return java_kind(f, i, n);
}

/* A memo of map lookups within one call: direct-mapped by the key pair, 0 = empty slot. */
typedef struct {
    uint64_t k1, k2;
    int found;
} memo_ent;

/* Whether map m has (k1, k2), through memo. Caller holds compile_lock. */
static int memo_has(memo_ent *memo, const u2map *m, uint64_t k1, uint64_t k2)
{
    memo_ent *e = &memo[js_mix64(k1 * 31 + k2) & (MEMO_SLOTS - 1)];
    if (e->k1 != k1 || e->k2 != k2) *e = (memo_ent){k1, k2, map_find(m, k1, k2) != NULL};
    return e->found;
}

/* Kinds of f[0..n) as java_kind finds them, when the trace has at most DISTINCT_MAX distinct Java methods: which of
 * them is inlined into which is asked once per pair, then a frame's window of callers is a bit test (kinds[] holds
 * each Java frame's method index until its kind replaces it). 0, or -1 (more methods; kinds[] is scratch then).
 * Caller holds compile_lock. */
static int kinds_by_methods(const js_raw_frame *f, int n, uint8_t *kinds)
{
    const void *ms[DISTINCT_MAX];
    uint8_t tab[DISTINCT_MAX * 4]; /* open addressing over ms: index + 1, 0 = empty */
    int nm = 0;
    memset(tab, 0, sizeof tab);
    for (int i = 0; i < n; i++) {
        __builtin_prefetch(&f[i + 32]); /* the frames were written by another CPU: ask for them ahead */
        if (f[i].kind != JS_RF_JAVA) {
            kinds[i] = (uint8_t)other_kind_locked(f, i, n);
            continue;
        }
        if (i >= 1 && f[i - 1].kind == JS_RF_JAVA && f[i - 1].method == f[i].method) { /* recursion: cheaper */
            kinds[i] = kinds[i - 1];
            continue;
        }
        if (i >= 2 && f[i - 2].kind == JS_RF_JAVA && f[i - 2].method == f[i].method) {
            kinds[i] = kinds[i - 2];
            continue;
        }
        size_t h = (size_t)js_mix64((uint64_t)(uintptr_t)f[i].method) & (sizeof tab - 1);
        while (tab[h] && ms[tab[h] - 1] != f[i].method) h = (h + 1) & (sizeof tab - 1);
        if (!tab[h]) {
            if (nm == DISTINCT_MAX) return -1;
            ms[nm++] = f[i].method;
            tab[h] = (uint8_t)nm;
        }
        kinds[i] = (uint8_t)(tab[h] - 1);
    }
    uint64_t roots[DISTINCT_MAX]; /* bit b of roots[a]: ms[a] is inlined into compiled code of ms[b] */
    uint8_t jit[DISTINCT_MAX];
    for (int a = 0; a < nm; a++) {
        uint64_t m = (uint64_t)(uintptr_t)ms[a];
        roots[a] = 0;
        if (map_find(&inlinees, m, 0))
            for (int b = 0; b < nm; b++)
                if (map_find(&pairs, m, (uint64_t)(uintptr_t)ms[b])) roots[a] |= 1ULL << b;
        jit[a] = map_find(&compiled, m, 0) != NULL;
    }
    for (int i = 0; i < n; i++) {
        if (f[i].kind != JS_RF_JAVA) continue;
        int a = kinds[i];
        js_frame_type k = jit[a] ? JS_FT_JIT : JS_FT_INTERPRETED;
        for (int j = i + 1; roots[a] && j < n && j <= i + INLINE_WINDOW && f[j].kind == JS_RF_JAVA; j++)
            if (roots[a] >> kinds[j] & 1) {
                k = JS_FT_INLINED;
                break;
            }
        kinds[i] = (uint8_t)k;
    }
    return 0;
}

void js_names_trace_kinds(const js_raw_frame *f, int n, uint8_t *kinds)
{
    memo_ent pair_memo[MEMO_SLOTS] = {{0}}, code_memo[MEMO_SLOTS] = {{0}}, inlinee_memo[MEMO_SLOTS] = {{0}};
    pthread_mutex_lock(&compile_lock); /* kinds, as java_kind finds them, with one lock for the trace */
    for (int i = kinds_by_methods(f, n, kinds) == 0 ? n : 0; i < n; i++) {
        if (f[i].kind != JS_RF_JAVA) {
            kinds[i] = (uint8_t)other_kind_locked(f, i, n);
            continue;
        }
        uint64_t m = (uint64_t)(uintptr_t)f[i].method;
        js_frame_type k = JS_FT_INTERPRETED;
        int inlined_somewhere = memo_has(inlinee_memo, &inlinees, m, 0);
        for (int j = i + 1; inlined_somewhere && j < n && j <= i + INLINE_WINDOW && f[j].kind == JS_RF_JAVA; j++)
            if (memo_has(pair_memo, &pairs, m, (uint64_t)(uintptr_t)f[j].method)) {
                k = JS_FT_INLINED;
                break;
            }
        if (k != JS_FT_INLINED && memo_has(code_memo, &compiled, m, 0)) k = JS_FT_JIT;
        kinds[i] = (uint8_t)k;
    }
    pthread_mutex_unlock(&compile_lock);
}

void js_names_compiled_clear(void)
{
    pthread_mutex_lock(&compile_lock);
    for (size_t i = 0; i < codes.cap; i++)
        if (codes.slots[i].k1) free((code_rec *)(uintptr_t)codes.slots[i].v);
    map_free(&codes);
    map_free(&pairs);
    map_free(&inlinees);
    map_free(&compiled);
    pthread_mutex_unlock(&compile_lock);
}
