/* names.c - see names.h. */
#include "core/names.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/walker.h"

#define MAX_LINES 65536 /* line-table entries kept per method */

typedef struct {
    jmethodID id;
    char *name; /* "pkg.Class.method", NULL if unresolvable */
    char *sig;
    char *cls;   /* declaring class, internal form "pkg/Class" */
    char *mname; /* method name alone */
    jint modifiers;
    jvmtiLineNumberEntry *lines;
    jint nlines;
    int compiled;
} method_entry;

typedef struct {
    jmethodID inlinee, root;
} inline_pair;

/* Process-wide cache guarded by lock: JVMTI ids are process-wide too. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static jvmtiEnv *jv;
static JavaVM *jvm;
static method_entry *methods;
static size_t nmethods, cap_methods; /* open addressing, cap power of two */
static inline_pair *inlines;
static size_t ninlines, cap_inlines;

static size_t hash_ptr(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 29));
}

/* Grow an open-addressing table to keep load <= 1/2; 0 or -1 on allocation failure. */
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

/* Entry for id, created empty if missing; NULL on allocation failure. Caller holds lock. */
static method_entry *entry(jmethodID id)
{
    if ((nmethods + 1) * 2 > cap_methods && grow_methods() != 0) return NULL;
    size_t j = hash_ptr(id) & (cap_methods - 1);
    while (methods[j].id && methods[j].id != id) j = (j + 1) & (cap_methods - 1);
    if (!methods[j].id) {
        methods[j].id = id;
        nmethods++;
    }
    return &methods[j];
}

static int grow_inlines(void)
{
    size_t cap = cap_inlines ? cap_inlines * 2 : 4096;
    inline_pair *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < cap_inlines; i++) {
        if (!inlines[i].inlinee) continue;
        size_t j = hash_ptr((char *)inlines[i].inlinee + (uintptr_t)inlines[i].root * 31) & (cap - 1);
        while (t[j].inlinee) j = (j + 1) & (cap - 1);
        t[j] = inlines[i];
    }
    free(inlines);
    inlines = t;
    cap_inlines = cap;
    return 0;
}

/* Find (or with add, insert) the pair; 1 if present/inserted. Caller holds lock. */
static int inline_pair_op(jmethodID inlinee, jmethodID root, int add)
{
    if (add && (ninlines + 1) * 2 > cap_inlines && grow_inlines() != 0) return 0;
    if (!cap_inlines) return 0;
    size_t j = hash_ptr((char *)inlinee + (uintptr_t)root * 31) & (cap_inlines - 1);
    while (inlines[j].inlinee) {
        if (inlines[j].inlinee == inlinee && inlines[j].root == root) return 1;
        j = (j + 1) & (cap_inlines - 1);
    }
    if (!add) return 0;
    inlines[j].inlinee = inlinee;
    inlines[j].root = root;
    ninlines++;
    return 1;
}

void js_names_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    jvm = vm;
    jv = jvmti;
}

/* "Ljava/lang/String;" -> "java.lang.String"; hidden-class suffix "/0x..." dropped. */
static void class_name(const char *sig, char *out, size_t len)
{
    const char *s = sig;
    if (*s == 'L') s++;
    size_t o = 0;
    for (; *s && *s != ';' && o + 1 < len; s++) {
        if (s[0] == '/' && s[1] == '0' && s[2] == 'x') break;
        out[o++] = *s == '/' ? '.' : *s;
    }
    out[o] = 0;
}

/* "Ljava/lang/String;" -> "java/lang/String" (JFR's internal form); hidden-class suffix dropped. */
static void internal_name(const char *sig, char *out, size_t len)
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

/* Fill e through JVMTI. Caller holds lock. */
static void resolve(method_entry *e)
{
    if (e->name || !jv) return;
    jclass cls = NULL;
    char *mname = NULL, *msig = NULL, *csig = NULL;
    if ((*jv)->GetMethodDeclaringClass(jv, e->id, &cls) != JVMTI_ERROR_NONE) return;
    if ((*jv)->GetMethodName(jv, e->id, &mname, &msig, NULL) == JVMTI_ERROR_NONE &&
        (*jv)->GetClassSignature(jv, cls, &csig, NULL) == JVMTI_ERROR_NONE) {
        char cname[512];
        class_name(csig, cname, sizeof cname);
        size_t n = strlen(cname) + strlen(mname) + 2;
        e->name = malloc(n);
        if (e->name) snprintf(e->name, n, "%s.%s", cname, mname);
        e->sig = strdup(msig);
        e->mname = strdup(mname);
        internal_name(csig, cname, sizeof cname);
        e->cls = strdup(cname);
        if ((*jv)->GetMethodModifiers(jv, e->id, &e->modifiers) != JVMTI_ERROR_NONE) e->modifiers = 0;
        jvmtiLineNumberEntry *tab = NULL;
        jint cnt = 0;
        if ((*jv)->GetLineNumberTable(jv, e->id, &cnt, &tab) == JVMTI_ERROR_NONE && cnt > 0) {
            if (cnt > MAX_LINES) cnt = MAX_LINES;
            e->lines = malloc((size_t)cnt * sizeof *tab);
            if (e->lines) {
                memcpy(e->lines, tab, (size_t)cnt * sizeof *tab);
                e->nlines = cnt;
            }
            (*jv)->Deallocate(jv, (unsigned char *)tab);
        }
    }
    if (mname) (*jv)->Deallocate(jv, (unsigned char *)mname);
    if (msig) (*jv)->Deallocate(jv, (unsigned char *)msig);
    if (csig) (*jv)->Deallocate(jv, (unsigned char *)csig);
    JNIEnv *env = NULL;
    if (cls && jvm && (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_6) == JNI_OK) (*env)->DeleteLocalRef(env, cls);
}

typedef struct {
    const js_store *s;
} refresh_ctx;

static int refresh_pair(uint32_t trace, uint32_t thread, uint64_t weight, void *ctx)
{
    refresh_ctx *c = ctx;
    int n;
    const js_raw_frame *f = js_store_trace(c->s, trace, &n);
    for (int i = 0; f && i < n; i++) {
        if (f[i].kind != JS_RF_JAVA && f[i].kind != JS_RF_NATIVE) continue;
        method_entry *e = entry((jmethodID)f[i].method);
        if (e) resolve(e);
    }
    return 0;
}

void js_names_refresh(const js_store *s)
{
    refresh_ctx c = {s};
    pthread_mutex_lock(&lock);
    js_store_foreach_pair(s, refresh_pair, &c);
    pthread_mutex_unlock(&lock);
}

void js_names_compiled(jmethodID root, const jmethodID *inlined, int n)
{
    pthread_mutex_lock(&lock);
    method_entry *e = entry(root);
    if (e) e->compiled = 1;
    for (int i = 0; i < n; i++)
        if (inlined[i] && inlined[i] != root) inline_pair_op(inlined[i], root, 1);
    pthread_mutex_unlock(&lock);
}

/* Source line for bci from the cached table, or 0. */
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

/* Kind of a Java frame given the frames above it (callers). Caller holds lock. */
static js_frame_type java_kind(const js_raw_frame *f, int i, int n, const method_entry *e)
{
    for (int j = i + 1; j < n && j <= i + 16; j++) {
        if (f[j].kind != JS_RF_JAVA) break;
        if (inline_pair_op((jmethodID)f[i].method, (jmethodID)f[j].method, 0)) return JS_FT_INLINED;
    }
    return e && e->compiled ? JS_FT_JIT : JS_FT_INTERPRETED;
}

int js_names_method_parts(const void *method, js_method_parts *out)
{
    pthread_mutex_lock(&lock);
    method_entry *e = entry((jmethodID)method);
    if (e) resolve(e);
    int ok = e && e->name && e->cls && e->mname;
    if (ok) {
        snprintf(out->cls, sizeof out->cls, "%s", e->cls);
        snprintf(out->name, sizeof out->name, "%s", e->mname);
        snprintf(out->sig, sizeof out->sig, "%s", e->sig ? e->sig : "");
        out->modifiers = (int)e->modifiers;
    }
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}

int js_names_line(const void *method, int bci)
{
    if (bci < 0) return -1;
    pthread_mutex_lock(&lock);
    method_entry *e = entry((jmethodID)method);
    if (e) resolve(e);
    int line = e && e->nlines ? line_of(e, bci) : 0;
    pthread_mutex_unlock(&lock);
    return line > 0 ? line : -1;
}

js_frame_type js_names_kind(const js_raw_frame *f, int i, int n)
{
    if (f[i].kind == JS_RF_NATIVE) return JS_FT_NATIVE;
    if (f[i].kind != JS_RF_JAVA) return JS_FT_ERROR;
    pthread_mutex_lock(&lock);
    method_entry *e = entry((jmethodID)f[i].method);
    js_frame_type k = java_kind(f, i, n, e);
    pthread_mutex_unlock(&lock);
    return k;
}

js_frame_type js_names_frame(const js_raw_frame *f, int i, int n, int lines, int sig, char *buf, size_t len)
{
    const js_raw_frame *fr = &f[i];
    if (fr->kind == JS_RF_ERROR) {
        snprintf(buf, len, "%s", js_walk_error_name(fr->bci));
        return JS_FT_ERROR;
    }
    if (fr->kind == JS_RF_NULL_ID) {
        snprintf(buf, len, "[unknown_method]");
        return JS_FT_ERROR;
    }
    pthread_mutex_lock(&lock);
    method_entry *e = entry((jmethodID)fr->method);
    if (e) resolve(e);
    js_frame_type kind = fr->kind == JS_RF_NATIVE ? JS_FT_NATIVE : java_kind(f, i, n, e);
    if (!e || !e->name) {
        snprintf(buf, len, "[unloaded_method]");
        kind = JS_FT_ERROR;
    } else {
        int o = snprintf(buf, len, "%s%s", e->name, sig && e->sig ? e->sig : "");
        if (lines && fr->bci >= 0 && o > 0 && (size_t)o < len) {
            int line = line_of(e, fr->bci);
            if (line > 0) snprintf(buf + o, len - (size_t)o, ":%d", line);
        }
    }
    pthread_mutex_unlock(&lock);
    return kind;
}

void js_names_clear(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < cap_methods; i++) {
        free(methods[i].name);
        free(methods[i].sig);
        free(methods[i].cls);
        free(methods[i].mname);
        free(methods[i].lines);
    }
    free(methods);
    free(inlines);
    methods = NULL;
    inlines = NULL;
    nmethods = cap_methods = ninlines = cap_inlines = 0;
    pthread_mutex_unlock(&lock);
}
