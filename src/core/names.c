/* names.c - see names.h.
 *
 * The method cache: jmethodID -> names and line table. Filled by resolve_now(), which looks the id up under `lock`,
 * calls JVMTI without any lock, and publishes the result under `lock`. The frames' kinds come from the compile facts
 * of names_kinds.c, behind a lock of their own; the two locks are never nested.
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

enum { M_PENDING = 0, M_RESOLVED = 1, M_FAILED = 2 };

/* One line-table entry: where a source line's bytecode starts (a method's bytecode is under 64 KiB). */
typedef struct {
    uint32_t start;
    int32_t line;
} line_entry;

/* What a resolved method holds, in one block: the header, nlines line entries, then the declaring class in internal
 * form ("pkg/Class"), the method name and the descriptor, each NUL-terminated. The Java name ("pkg.Class.method") is
 * made from the first two when asked for. One block and a 24-byte slot a method: a long run holds up to 65,536
 * methods, and four strings, JVMTI's 16-byte line entries and a 72-byte slot took a third more (docs/BENCHMARKS.md). */
typedef struct {
    uint32_t nlines, mname_at, sig_at; /* offsets into the strings */
    jint modifiers;
    line_entry lines[]; /* then the strings */
} method_blob;

typedef struct {
    jmethodID id;
    method_blob *blob; /* M_RESOLVED only */
    int state;         /* M_*: PENDING = queued by a refresh, not yet resolved */
    uint32_t used;     /* the age (js_names_age) it was last looked up in */
} method_entry;

/* The strings of a blob: class, method name, descriptor. */
static const char *blob_cls(const method_blob *b)
{
    return (const char *)&b->lines[b->nlines];
}

static const char *blob_mname(const method_blob *b)
{
    return blob_cls(b) + b->mname_at;
}

static const char *blob_sig(const method_blob *b)
{
    return blob_cls(b) + b->sig_at;
}

/* ---- state ---- */

/* Process-wide: JVMTI ids are process-wide too. */
static jvmtiEnv *jv;
static JavaVM *jvm;
/* Method cache, guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static method_entry *methods;
static size_t nmethods, cap_methods; /* open addressing, cap power of two */
static uint64_t unresolved;          /* distinct methods marked M_FAILED */
static uint32_t age;                 /* js_names_age calls so far: what an entry's used is counted in */

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
    if (!methods[j].id) return NULL;
    methods[j].used = age;
    return &methods[j];
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
    methods[j].used = age;
    nmethods++;
    *created = 1;
    return &methods[j];
}

/* Free what e holds (not e itself). */
static void free_fields(method_entry *e)
{
    free(e->blob);
    e->blob = NULL;
}

void js_names_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    jvm = vm;
    jv = jvmti;
}

/* "Ljava/lang/String;" -> "java/lang/String" (the internal form; java_name() makes the dotted one); a hidden
 * class's "/0x..." suffix is dropped. */
static void class_name(const char *sig, char *out, size_t len)
{
    const char *s = sig;
    if (*s == 'L') s++;
    size_t o = 0;
    for (; *s && *s != ';' && o + 1 < len; s++) {
        if (s[0] == '/' && s[1] == '0' && s[2] == 'x') break;
        out[o++] = *s;
    }
    out[o] = 0;
}

/* The block of a method: class (internal form), name, descriptor, modifiers and up to MAX_LINES of tab; NULL if out
 * of memory. */
static method_blob *make_blob(const char *cls, const char *mname, const char *sig, jint modifiers,
                              const jvmtiLineNumberEntry *tab, jint cnt)
{
    size_t nlines = cnt > 0 ? (size_t)(cnt > MAX_LINES ? MAX_LINES : cnt) : 0;
    size_t lc = strlen(cls) + 1, lm = strlen(mname) + 1, ls = strlen(sig) + 1;
    method_blob *b = malloc(sizeof *b + nlines * sizeof(line_entry) + lc + lm + ls);
    if (!b) return NULL;
    b->nlines = (uint32_t)nlines;
    b->mname_at = (uint32_t)lc;
    b->sig_at = (uint32_t)(lc + lm);
    b->modifiers = modifiers;
    for (size_t i = 0; i < nlines; i++) {
        b->lines[i].start = tab[i].start_location < 0 ? 0 : tab[i].start_location > UINT32_MAX ? UINT32_MAX
                                                                                               : (uint32_t)tab[i].start_location;
        b->lines[i].line = tab[i].line_number;
    }
    char *str = (char *)&b->lines[nlines];
    memcpy(str, cls, lc);
    memcpy(str + lc, mname, lm);
    memcpy(str + lc + lm, sig, ls);
    return b;
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
        class_name(csig, cname, sizeof cname);
        jint modifiers = 0;
        if ((*jv)->GetMethodModifiers(jv, id, &modifiers) != JVMTI_ERROR_NONE) modifiers = 0;
        jvmtiLineNumberEntry *tab = NULL;
        jint cnt = 0;
        if ((*jv)->GetLineNumberTable(jv, id, &cnt, &tab) != JVMTI_ERROR_NONE || !tab) cnt = 0;
        out->blob = make_blob(cname, mname, msig, modifiers, tab, cnt);
        if (tab) (*jv)->Deallocate(jv, (unsigned char *)tab);
        rc = out->blob ? 0 : -1;
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
        e->used = age;
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

/* Source line for bci from a resolved method's line table, or 0. */
static int line_of(const method_entry *e, int bci)
{
    const method_blob *b = e->blob;
    int line = 0;
    int64_t best = -1;
    for (uint32_t i = 0; i < b->nlines; i++)
        if ((int64_t)b->lines[i].start <= bci && (int64_t)b->lines[i].start > best) {
            best = b->lines[i].start;
            line = b->lines[i].line;
        }
    return line;
}

/* "pkg.Class.method" of a resolved method into buf (snprintf's contract); the length it needed. */
static int java_name(const method_entry *e, char *buf, size_t len)
{
    const char *c = blob_cls(e->blob);
    int n = snprintf(buf, len, "%s.%s", c, blob_mname(e->blob));
    size_t lc = strlen(c);
    for (size_t i = 0; i < lc && i + 1 < len; i++)
        if (buf[i] == '/') buf[i] = '.';
    return n;
}

int js_names_method_parts(const void *method, js_method_parts *out)
{
    resolve_now((jmethodID)method);
    pthread_mutex_lock(&lock);
    method_entry *e = lookup((jmethodID)method);
    int ok = e && e->state == M_RESOLVED;
    if (ok) {
        snprintf(out->cls, sizeof out->cls, "%s", blob_cls(e->blob));
        snprintf(out->name, sizeof out->name, "%s", blob_mname(e->blob));
        snprintf(out->sig, sizeof out->sig, "%s", blob_sig(e->blob));
        out->modifiers = (int)e->blob->modifiers;
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

#define MEMO_SLOTS 64 /* memos of one trace's methods and lines: direct-mapped, 0 = empty slot */
#define TODO_MAX 256 /* unresolved methods of one trace resolved at a time, before its lines are read */

/* Line of a Java frame from a resolved entry, or -1. Caller holds lock. */
static int32_t frame_line(const js_raw_frame *f)
{
    method_entry *e = lookup((jmethodID)f->method);
    int line = e && e->state == M_RESOLVED ? line_of(e, f->bci) : 0;
    return line > 0 ? line : -1;
}

void js_names_trace_info(const js_raw_frame *f, int n, uint8_t *kinds, int32_t *lines)
{
    js_names_trace_kinds(f, n, kinds);
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
        int o = java_name(e, buf, len);
        if (sig && o >= 0 && (size_t)o < len) o += snprintf(buf + o, len - (size_t)o, "%s", blob_sig(e->blob));
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
    unresolved = 0; /* it counts the cached ones */
}

uint64_t js_names_trim(uint64_t keep)
{
    pthread_mutex_lock(&lock);
    uint64_t n = nmethods > keep ? nmethods : 0;
    if (n) forget_methods();
    pthread_mutex_unlock(&lock);
    return n;
}

void js_names_touch(const js_raw_frame *f, int n)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++)
        if ((f[i].kind == JS_RF_JAVA || f[i].kind == JS_RF_NATIVE) && (i == 0 || f[i].method != f[i - 1].method))
            lookup((jmethodID)f[i].method);
    pthread_mutex_unlock(&lock);
}

void js_names_touch_store(const js_store *s)
{
    uint32_t count = s ? js_store_trace_count(s) : 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = js_store_trace_id_at(s, i);
        int n = 0;
        const js_raw_frame *f = id ? js_store_trace(s, id, &n) : NULL;
        if (f) js_names_touch(f, n);
    }
}

/* Keep only the entries looked up in the current age (and those a refresh is resolving) in a table sized for them;
 * the count forgotten, 0 if the new table cannot be allocated. Caller holds lock. */
static uint64_t keep_recent(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < cap_methods; i++)
        if (methods[i].id && (methods[i].used == age || methods[i].state == M_PENDING)) kept++;
    size_t cap = 4096;
    while (cap < kept * 2 + 2) cap *= 2;
    method_entry *t = calloc(cap, sizeof *t);
    if (!t) return 0;
    uint64_t forgot = 0;
    for (size_t i = 0; i < cap_methods; i++) {
        method_entry *e = &methods[i];
        if (!e->id) continue;
        if (e->used != age && e->state != M_PENDING) {
            if (e->state == M_FAILED) unresolved--; /* counted again if it is sampled again */
            free_fields(e);
            forgot++;
            continue;
        }
        size_t j = hash_ptr(e->id) & (cap - 1);
        while (t[j].id) j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(methods);
    methods = t;
    cap_methods = cap;
    nmethods = kept;
    return forgot;
}

uint64_t js_names_age(uint64_t keep)
{
    pthread_mutex_lock(&lock);
    uint64_t forgot = nmethods > keep ? keep_recent() : 0;
    age++;
    pthread_mutex_unlock(&lock);
    return forgot;
}

void js_names_clear(void)
{
    pthread_mutex_lock(&lock);
    forget_methods();
    unresolved = 0;
    pthread_mutex_unlock(&lock);
    js_names_compiled_clear();
}
