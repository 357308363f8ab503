/* names.c - see names.h.
 *
 * Two independent caches, each behind its own mutex, never nested:
 *  - methods: jmethodID -> names and line table. Filled by resolve_now(), which looks the id up
 *    under `lock`, calls JVMTI without any lock, and publishes the result under `lock`.
 *  - compile facts: code address -> (root, inlined methods), plus reference-counted
 *    (inlinee, root) pairs and per-root counts of loaded code, under `compile_lock`. The JVM's compile
 *    callbacks take only `compile_lock`, for a few hash operations.
 */
#include "core/names.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/classes.h"
#include "core/symbols.h"
#include "sample/walker.h"
#include "util/hashmix.h"

#define MAX_LINES 65536   /* line-table entries kept per method */
#define INLINE_WINDOW 16  /* callers examined when deciding whether a frame was inlined */

enum { M_PENDING = 0, M_RESOLVED = 1, M_FAILED = 2 };

typedef struct {
    jmethodID id;
    int state;  /* M_*: PENDING = queued by a refresh, not yet resolved */
    char *name; /* "pkg.Class.method" */
    char *sig;
    char *cls;   /* declaring class, internal form "pkg/Class" */
    char *mname; /* method name alone */
    jint modifiers;
    jvmtiLineNumberEntry *lines;
    jint nlines;
} method_entry;

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

/* Process-wide: JVMTI ids and compiled code are process-wide too. */
static jvmtiEnv *jv;
static JavaVM *jvm;
/* Method cache, guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static method_entry *methods;
static size_t nmethods, cap_methods; /* open addressing, cap power of two */
static uint64_t unresolved;          /* distinct methods marked M_FAILED */
/* Compile facts, guarded by compile_lock. */
static pthread_mutex_t compile_lock = PTHREAD_MUTEX_INITIALIZER;
static u2map codes;    /* code address -> code_rec* */
static u2map pairs;    /* (inlinee, root) -> number of loaded codes inlining inlinee into root */
static u2map inlinees; /* inlinee -> number of such pairs: a method inlined nowhere needs no look at its callers */
static u2map compiled; /* root -> number of loaded codes compiling it */

/* Hash of a jmethodID. */
static size_t hash_ptr(const void *p)
{
    return (size_t)js_mix64((uint64_t)(uintptr_t)p);
}

/* Grow the method table to keep load <= 1/2; 0 or -1 on allocation failure. Caller holds lock. */
static int grow_methods(void)
{
    size_t cap = cap_methods ? cap_methods * 2 : 4096;
    method_entry *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < cap_methods; i++) {
        if (!methods[i].id) continue;
        size_t j = hash_ptr(methods[i].id) & (cap - 1);
        while (t[j].id) j = (j + 1) & (cap - 1);
        t[j] = methods[i];
    }
    free(methods);
    methods = t;
    cap_methods = cap;
    return 0;
}

/* Entry of id or NULL. Caller holds lock; the pointer is valid until the lock is dropped. */
static method_entry *lookup(jmethodID id)
{
    if (!cap_methods || !id) return NULL;
    size_t j = hash_ptr(id) & (cap_methods - 1);
    while (methods[j].id && methods[j].id != id) j = (j + 1) & (cap_methods - 1);
    return methods[j].id ? &methods[j] : NULL;
}

/* Entry of id, created M_PENDING if missing (*created = 1); NULL on allocation failure. Caller holds lock. */
static method_entry *entry(jmethodID id, int *created)
{
    *created = 0;
    method_entry *e = lookup(id);
    if (e || !id) return e;
    if ((nmethods + 1) * 2 > cap_methods && grow_methods() != 0) return NULL;
    size_t j = hash_ptr(id) & (cap_methods - 1);
    while (methods[j].id) j = (j + 1) & (cap_methods - 1);
    memset(&methods[j], 0, sizeof methods[j]);
    methods[j].id = id;
    nmethods++;
    *created = 1;
    return &methods[j];
}

/* Free the strings and line table of e (not e itself). */
static void free_fields(method_entry *e)
{
    free(e->name);
    free(e->sig);
    free(e->cls);
    free(e->mname);
    free(e->lines);
}

void js_names_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    jvm = vm;
    jv = jvmti;
}

/* "Ljava/lang/String;" -> "java.lang.String" (dots) or "java/lang/String" (JFR's internal form);
 * a hidden class's "/0x..." suffix is dropped. */
static void class_name(const char *sig, int dots, char *out, size_t len)
{
    const char *s = sig;
    if (*s == 'L') s++;
    size_t o = 0;
    for (; *s && *s != ';' && o + 1 < len; s++) {
        if (s[0] == '/' && s[1] == '0' && s[2] == 'x') break;
        out[o++] = dots && *s == '/' ? '.' : *s;
    }
    out[o] = 0;
}

/* Fill out (zeroed first) for id through JVMTI; 0, or -1 if JVMTI does not know the method. No lock held. */
static int jvmti_resolve(jmethodID id, method_entry *out)
{
    memset(out, 0, sizeof *out);
    if (!jv) return -1;
    jclass cls = NULL;
    char *mname = NULL, *msig = NULL, *csig = NULL;
    if ((*jv)->GetMethodDeclaringClass(jv, id, &cls) != JVMTI_ERROR_NONE) return -1;
    int rc = -1;
    if ((*jv)->GetMethodName(jv, id, &mname, &msig, NULL) == JVMTI_ERROR_NONE &&
        (*jv)->GetClassSignature(jv, cls, &csig, NULL) == JVMTI_ERROR_NONE) {
        char cname[512];
        class_name(csig, 1, cname, sizeof cname);
        size_t n = strlen(cname) + strlen(mname) + 2;
        out->name = malloc(n);
        if (out->name) snprintf(out->name, n, "%s.%s", cname, mname);
        out->sig = strdup(msig);
        out->mname = strdup(mname);
        class_name(csig, 0, cname, sizeof cname);
        out->cls = strdup(cname);
        if ((*jv)->GetMethodModifiers(jv, id, &out->modifiers) != JVMTI_ERROR_NONE) out->modifiers = 0;
        jvmtiLineNumberEntry *tab = NULL;
        jint cnt = 0;
        if ((*jv)->GetLineNumberTable(jv, id, &cnt, &tab) == JVMTI_ERROR_NONE && tab) {
            if (cnt > MAX_LINES) cnt = MAX_LINES;
            out->lines = cnt > 0 ? malloc((size_t)cnt * sizeof *tab) : NULL;
            if (out->lines) {
                memcpy(out->lines, tab, (size_t)cnt * sizeof *tab);
                out->nlines = cnt;
            }
            (*jv)->Deallocate(jv, (unsigned char *)tab);
        }
        if (out->name && out->sig && out->mname && out->cls) {
            rc = 0;
        } else {
            free_fields(out);
            memset(out, 0, sizeof *out);
        }
    }
    if (mname) (*jv)->Deallocate(jv, (unsigned char *)mname);
    if (msig) (*jv)->Deallocate(jv, (unsigned char *)msig);
    if (csig) (*jv)->Deallocate(jv, (unsigned char *)csig);
    JNIEnv *env = NULL;
    if (cls && jvm && (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_6) == JNI_OK) (*env)->DeleteLocalRef(env, cls);
    return rc;
}

/* Store the outcome of resolving id (res owned by the cache afterwards, or freed). */
static void publish(jmethodID id, method_entry *res, int ok)
{
    pthread_mutex_lock(&lock);
    int created;
    method_entry *e = entry(id, &created);
    if (!e || e->state == M_RESOLVED || !ok) {
        free_fields(res);
        if (e && !ok && e->state != M_RESOLVED && e->state != M_FAILED) {
            e->state = M_FAILED;
            unresolved++;
        }
    } else {
        if (e->state == M_FAILED) unresolved--; /* a later attempt succeeded */
        *e = *res;
        e->id = id;
        e->state = M_RESOLVED;
    }
    pthread_mutex_unlock(&lock);
}

/* Resolve id now unless it is resolved or known to be unresolvable. Takes lock only briefly. */
static void resolve_now(jmethodID id)
{
    if (!id) return;
    pthread_mutex_lock(&lock);
    method_entry *e = lookup(id);
    int state = e ? e->state : M_PENDING;
    pthread_mutex_unlock(&lock);
    if (state != M_PENDING) return;
    method_entry res;
    int ok = jvmti_resolve(id, &res) == 0;
    publish(id, &res, ok);
}

/* Queue the methods of one trace that the cache has never seen (marks them M_PENDING). Caller holds lock. */
static int queue_trace(const js_raw_frame *f, int n, jmethodID **todo, size_t *ntodo, size_t *cap)
{
    const void *prev = NULL;
    for (int i = 0; i < n; i++) {
        if ((f[i].kind != JS_RF_JAVA && f[i].kind != JS_RF_NATIVE) || f[i].method == prev) continue;
        prev = f[i].method;
        int created;
        method_entry *e = entry((jmethodID)f[i].method, &created);
        if (!e) return -1;
        if (!created) continue;
        if (*ntodo == *cap) {
            size_t c = *cap ? *cap * 2 : 256;
            jmethodID *t = realloc(*todo, c * sizeof *t);
            if (!t) return -1; /* the entry stays M_PENDING: resolved on first use */
            *todo = t;
            *cap = c;
        }
        (*todo)[(*ntodo)++] = (jmethodID)f[i].method;
    }
    return 0;
}

void js_names_refresh(const js_store *s, uint32_t *cursor)
{
    uint32_t count = js_store_trace_count(s);
    if (*cursor > count) *cursor = 0; /* a new store generation */
    jmethodID *todo = NULL;
    size_t ntodo = 0, cap = 0;
    while (*cursor < count) {
        uint32_t id = js_store_trace_id_at(s, *cursor);
        int n = 0;
        const js_raw_frame *f = id ? js_store_trace(s, id, &n) : NULL;
        if (!f) break; /* not fully published yet: next time */
        pthread_mutex_lock(&lock);
        int rc = queue_trace(f, n, &todo, &ntodo, &cap);
        pthread_mutex_unlock(&lock);
        if (rc != 0) break;
        (*cursor)++;
    }
    for (size_t i = 0; i < ntodo; i++) {
        method_entry res;
        int ok = jvmti_resolve(todo[i], &res) == 0;
        publish(todo[i], &res, ok);
    }
    free(todo);
}

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

/* Source line for bci from a line table, or 0. */
static int line_of(const method_entry *e, int bci)
{
    int line = 0;
    jlocation best = -1;
    for (jint i = 0; i < e->nlines; i++)
        if (e->lines[i].start_location <= bci && e->lines[i].start_location > best) {
            best = e->lines[i].start_location;
            line = e->lines[i].line_number;
        }
    return line;
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

int js_names_method_parts(const void *method, js_method_parts *out)
{
    resolve_now((jmethodID)method);
    pthread_mutex_lock(&lock);
    method_entry *e = lookup((jmethodID)method);
    int ok = e && e->state == M_RESOLVED;
    if (ok) {
        snprintf(out->cls, sizeof out->cls, "%s", e->cls);
        snprintf(out->name, sizeof out->name, "%s", e->mname);
        snprintf(out->sig, sizeof out->sig, "%s", e->sig);
        out->modifiers = (int)e->modifiers;
    }
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}

int js_names_line(const void *method, int bci)
{
    if (bci < 0) return -1;
    resolve_now((jmethodID)method);
    pthread_mutex_lock(&lock);
    method_entry *e = lookup((jmethodID)method);
    int line = e && e->state == M_RESOLVED ? line_of(e, bci) : 0;
    pthread_mutex_unlock(&lock);
    return line > 0 ? line : -1;
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
#define MEMO_SLOTS 64
#define DISTINCT_MAX 64 /* Java methods of a trace whose inlining is looked up pairwise */
#define TODO_MAX 256 /* unresolved methods of one trace resolved at a time, before its lines are read */
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

/* Line of a Java frame from a resolved entry, or -1. Caller holds lock. */
static int32_t frame_line(const js_raw_frame *f)
{
    method_entry *e = lookup((jmethodID)f->method);
    int line = e && e->state == M_RESOLVED ? line_of(e, f->bci) : 0;
    return line > 0 ? line : -1;
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

void js_names_trace_info(const js_raw_frame *f, int n, uint8_t *kinds, int32_t *lines)
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
    /* Lines: methods the cache has not resolved are resolved first (JVMTI without a lock), then one lock for all. */
    const void *done[MEMO_SLOTS] = {0}; /* methods seen resolved (or failed) */
    for (int i = 0; i < n;) { /* in batches of TODO_MAX */
        const void *todo[TODO_MAX];
        int ntodo = 0;
        pthread_mutex_lock(&lock);
        for (; i < n && ntodo < TODO_MAX; i++) {
            if (f[i].kind != JS_RF_JAVA || f[i].bci < 0) continue;
            if ((i >= 1 && f[i - 1].kind == JS_RF_JAVA && f[i - 1].bci >= 0 && f[i - 1].method == f[i].method) ||
                (i >= 2 && f[i - 2].kind == JS_RF_JAVA && f[i - 2].bci >= 0 && f[i - 2].method == f[i].method))
                continue; /* looked at just before */
            const void **known = &done[js_mix64((uint64_t)(uintptr_t)f[i].method) & (MEMO_SLOTS - 1)];
            if (*known == f[i].method) continue;
            method_entry *e = lookup((jmethodID)f[i].method);
            if (e && e->state != M_PENDING) {
                *known = f[i].method;
                continue;
            }
            int queued = 0;
            for (int k = ntodo - 1; k >= 0 && k >= ntodo - 8 && !queued; k--) queued = todo[k] == f[i].method;
            if (!queued) todo[ntodo++] = f[i].method;
        }
        pthread_mutex_unlock(&lock);
        for (int k = 0; k < ntodo; k++) resolve_now((jmethodID)todo[k]);
    }
    struct {
        const void *method;
        int32_t bci, line;
    } line_memo[MEMO_SLOTS] = {{0}}; /* deep stacks repeat their frames: one lookup for each distinct one */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) {
        lines[i] = -1;
        if (f[i].kind != JS_RF_JAVA || f[i].bci < 0) continue;
        if (i >= 2 && f[i - 2].kind == JS_RF_JAVA && f[i - 2].method == f[i].method && f[i - 2].bci == f[i].bci) {
            lines[i] = lines[i - 2]; /* recursion repeats frames */
            continue;
        }
        uint64_t h = js_mix64((uint64_t)(uintptr_t)f[i].method ^ (uint64_t)(uint32_t)f[i].bci << 48);
        __typeof__(line_memo[0]) *e = &line_memo[h & (MEMO_SLOTS - 1)];
        if (e->method != f[i].method || e->bci != f[i].bci) {
            e->method = f[i].method;
            e->bci = f[i].bci;
            e->line = frame_line(&f[i]);
        }
        lines[i] = e->line;
    }
    pthread_mutex_unlock(&lock);
}

js_frame_type js_names_frame(const js_raw_frame *f, int i, int n, unsigned flags, char *buf, size_t len)
{
    int lines = flags & JS_NF_LINES, sig = flags & JS_NF_SIG;
    const js_raw_frame *fr = &f[i];
    if (fr->kind == JS_RF_ERROR) {
        snprintf(buf, len, "%s", js_walk_error_name(fr->bci));
        return JS_FT_ERROR;
    }
    if (fr->kind == JS_RF_NULL_ID) {
        snprintf(buf, len, "[unknown_method]");
        return JS_FT_ERROR;
    }
    if (fr->kind == JS_RF_CPU) {
        snprintf(buf, len, "[CPU-%d]", fr->bci);
        return JS_FT_NATIVE;
    }
    if (fr->kind == JS_RF_NATIVE_PC) { /* a return address is named by its call instruction */
        js_symbol_info info;
        js_symbols_name((uintptr_t)fr->method - (fr->bci ? 1 : 0), buf, len, &info);
        if (!sig && !info.kernel && buf[0] != '[') js_symbols_cut_arguments(buf); /* C++: no parameter list */
        if ((flags & JS_NF_LIB) && info.lib[0] && buf[0] != '[') { /* "libjvm.so`JVM_DefineClass" */
            size_t k = strlen(info.lib), b = strlen(buf);
            if (k + 1 + b < len) memmove(buf + k + 1, buf, b + 1), memcpy(buf, info.lib, k), buf[k] = '`';
        }
        return info.kernel ? JS_FT_KERNEL : info.in_jvm && !info.no_symbol ? JS_FT_CPP : JS_FT_NATIVE;
    }
    if (fr->kind == JS_RF_KLASS) { /* a call's receiver (features=vtable) or a tlab sample's class, as
                                    * async-profiler names them */
        if (js_names_klass(fr->method, buf, len) != 0) snprintf(buf, len, "[unknown_class]");
        size_t o = strlen(buf);
        snprintf(buf + o, len - o, fr->bci == JS_KLASS_OUTSIDE_TLAB ? "_[k]" : "_[i]");
        return JS_FT_INLINED;
    }
    if (fr->kind == JS_RF_CLASS) { /* as the converter names it from JFR: "java.lang.String_[i]" */
        size_t o;
        if (js_classes_java((uint32_t)(uintptr_t)fr->method, buf, len) != 0) snprintf(buf, len, "[unknown_class]");
        o = strlen(buf);
        snprintf(buf + o, len - o, "_[i]");
        return JS_FT_INLINED;
    }
    js_frame_type kind = js_names_kind(f, i, n);
    resolve_now((jmethodID)fr->method);
    pthread_mutex_lock(&lock);
    method_entry *e = lookup((jmethodID)fr->method);
    if (!e || e->state != M_RESOLVED) {
        snprintf(buf, len, "[unloaded_method]");
        kind = JS_FT_ERROR;
    } else {
        int o = snprintf(buf, len, "%s%s", e->name, sig ? e->sig : "");
        if (lines && fr->bci >= 0 && o > 0 && (size_t)o < len) {
            int line = line_of(e, fr->bci);
            if (line > 0) snprintf(buf + o, len - (size_t)o, ":%d", line);
        }
    }
    pthread_mutex_unlock(&lock);
    return kind;
}

uint64_t js_names_unresolved(void)
{
    pthread_mutex_lock(&lock);
    uint64_t n = unresolved;
    pthread_mutex_unlock(&lock);
    return n;
}

uint64_t js_names_cached(void)
{
    pthread_mutex_lock(&lock);
    uint64_t n = nmethods;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Forget every cached method. Caller holds lock. */
static void forget_methods(void)
{
    for (size_t i = 0; i < cap_methods; i++) free_fields(&methods[i]);
    free(methods);
    methods = NULL;
    nmethods = cap_methods = 0;
}

uint64_t js_names_trim(uint64_t keep)
{
    pthread_mutex_lock(&lock);
    uint64_t n = nmethods > keep ? nmethods : 0;
    if (n) forget_methods();
    pthread_mutex_unlock(&lock);
    return n;
}

void js_names_clear(void)
{
    pthread_mutex_lock(&lock);
    forget_methods();
    unresolved = 0;
    pthread_mutex_unlock(&lock);
    js_names_compiled_clear();
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
