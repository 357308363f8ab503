/* snapshot.c - see snapshot.h. */
#include "core/snapshot.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dump.h"
#include "core/fold.h"
#include "core/names.h"
#include "sample/walker.h"
#include "util/hashmix.h"
#include "util/log.h"

#define NAME_MAX_LEN 1024
#define INDEX_SLOTS (JS_STARTS_MAX_STACKS * 2) /* open addressing, power of two */

/* One distinct stack that started threads: its frames (leaf first) in the arena, and how many it started. */
typedef struct {
    uint64_t hash;
    uint32_t off, n;
    uint64_t count;
} start_stack;

/* Process-wide like the JVMTI environment; the table of thread starts lives as long as the VM. */
static struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    _Atomic int traced;
    pthread_mutex_t lock;       /* the table below; held for a lookup or an insert, never across JVMTI */
    start_stack *stacks;        /* JS_STARTS_MAX_STACKS, allocated at the first start */
    uint32_t nstacks;
    uint32_t *index;            /* INDEX_SLOTS: stack number + 1, 0 empty */
    js_raw_frame *frames;       /* the arena, grown up to JS_STARTS_MAX_FRAMES */
    size_t nframes, cap_frames;
    uint64_t early, dropped;    /* starts before the live phase; starts past the caps */
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

void js_snapshot_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    S.vm = vm;
    S.jvmti = jvmti;
}

void js_snapshot_starts_traced(void)
{
    atomic_store(&S.traced, 1);
}

static int64_t epoch_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Raw frames (leaf first) of a JVMTI stack of count frames, depth at most: a stack cut there gets the truncated
 * pseudo-frame, an empty one [no_Java_frame]. Their number. */
static int raw_of(const jvmtiFrameInfo *fi, int count, int depth, js_raw_frame *raw)
{
    int n = 0;
    for (int i = 0; i < count && i < depth; i++)
        raw[n++] = (js_raw_frame){.bci = fi[i].location >= 0 ? (int32_t)fi[i].location : -1,
                                  .kind = fi[i].location >= 0 ? JS_RF_JAVA : JS_RF_NATIVE,
                                  .method = fi[i].method};
    if (count > depth) raw[n++] = (js_raw_frame){.bci = JS_WALK_TRUNCATED, .kind = JS_RF_ERROR, .method = NULL};
    if (!n) raw[n++] = (js_raw_frame){.bci = JS_WALK_NO_JAVA_FRAME, .kind = JS_RF_ERROR, .method = NULL};
    return n;
}

/* Add one stack (raw leaf first, n frames) to p with weight w, root first, under root (NULL: none); 0 or -1. */
static int add_stack(js_profile *p, const js_args *a, const char *root, const js_raw_frame *raw, int n, uint64_t w,
                     uint32_t *ids)
{
    char name[NAME_MAX_LEN];
    uint32_t d = 0;
    if (root) ids[d++] = js_profile_frame(p, root, JS_FT_THREAD);
    for (int i = n - 1; i >= 0; i--) {
        js_frame_type t = js_names_frame(raw, i, n, a->lines, a->sig, name, sizeof name);
        ids[d++] = js_profile_frame(p, name, t);
    }
    for (uint32_t i = 0; i < d; i++)
        if (ids[i] == UINT32_MAX) return -1;
    return js_profile_add_n(p, ids, d, w, w);
}

/* Java name of thread into buf ("" if it has none). */
static void thread_name(JNIEnv *env, jthread thread, char *buf, size_t len)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    buf[0] = 0;
    if ((*S.jvmti)->GetThreadInfo(S.jvmti, thread, &info) != JVMTI_ERROR_NONE) return;
    if (info.name) snprintf(buf, len, "%s", info.name);
    (*S.jvmti)->Deallocate(S.jvmti, (unsigned char *)info.name);
    if (env && info.thread_group) (*env)->DeleteLocalRef(env, info.thread_group);
    if (env && info.context_class_loader) (*env)->DeleteLocalRef(env, info.context_class_loader);
}

/* Write p as a's output, titled what; out gets the writer's line. */
static js_status write_out(js_profile *p, const js_args *a, const char *what, char *out, size_t outlen)
{
    js_dump_meta m = {JS_KIND_EXEC, epoch_ns(), 0, what};
    return js_dump_write_profile(p, a, &m, out, outlen) == 0 ? JS_OK : JS_ERR_IO;
}

js_status js_snapshot_threads(const js_args *a, char *out, size_t outlen)
{
    if (!S.jvmti) {
        snprintf(out, outlen, "threaddump needs the JVM (JVMTI), which this process does not have");
        return JS_ERR_UNSUPPORTED;
    }
    JNIEnv *env = NULL;
    if ((*S.vm)->GetEnv(S.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) env = NULL;
    int depth = a->jstackdepth;
    jvmtiStackInfo *si = NULL;
    jint n = 0;
    jvmtiError e = (*S.jvmti)->GetAllStackTraces(S.jvmti, depth + 1, &si, &n);
    if (e != JVMTI_ERROR_NONE) {
        snprintf(out, outlen, "threaddump: the JVM refused GetAllStackTraces (JVMTI error %d)", (int)e);
        return JS_ERR_STATE;
    }
    js_raw_frame *raw = malloc(((size_t)depth + 2) * sizeof *raw);
    uint32_t *ids = malloc(((size_t)depth + 3) * sizeof *ids);
    js_profile p;
    js_profile_init(&p);
    int rc = raw && ids ? 0 : -1;
    jint threads = 0;
    for (jint i = 0; i < n; i++) {
        char name[256], root[300];
        thread_name(env, si[i].thread, name, sizeof name);
        /* the agent's own threads, attached to the VM only to run its work */
        int ours = strncmp(name, "jsampler ", 9) == 0 && si[i].frame_count == 0;
        if (rc == 0 && !ours) {
            int nr = raw_of(si[i].frame_buffer, si[i].frame_count, depth, raw);
            snprintf(root, sizeof root, "[%s]", name[0] ? name : "unnamed thread");
            rc = add_stack(&p, a, a->threads ? root : NULL, raw, nr, 1, ids);
            threads++;
        }
        if (env && si[i].thread) (*env)->DeleteLocalRef(env, si[i].thread);
    }
    (*S.jvmti)->Deallocate(S.jvmti, (unsigned char *)si);
    free(raw);
    free(ids);
    js_status st = JS_ERR_IO;
    if (rc != 0) snprintf(out, outlen, "threaddump: out of memory building the profile");
    else st = write_out(&p, a, "jsampler thread dump", out, outlen);
    js_profile_free(&p);
    if (st == JS_OK) js_debug("threaddump: %d threads", (int)threads);
    return st;
}

static uint64_t hash_frames(const js_raw_frame *raw, int n)
{
    uint64_t h = (uint64_t)n;
    for (int i = 0; i < n; i++)
        h = js_mix64(h ^ (uint64_t)(uintptr_t)raw[i].method ^ ((uint64_t)(uint32_t)raw[i].bci << 32));
    return h;
}

/* The table's memory, at the first start; 0 or -1. Caller holds S.lock. */
static int table_ready(void)
{
    if (S.stacks) return 0;
    S.stacks = calloc(JS_STARTS_MAX_STACKS, sizeof *S.stacks);
    S.index = calloc(INDEX_SLOTS, sizeof *S.index);
    if (S.stacks && S.index) return 0;
    free(S.stacks);
    free(S.index);
    S.stacks = NULL;
    S.index = NULL;
    return -1;
}

/* Room for n more frames in the arena; 0 or -1 (past the cap, or no memory). Caller holds S.lock. */
static int arena_room(size_t n)
{
    if (S.nframes + n <= S.cap_frames) return 0;
    if (S.nframes + n > JS_STARTS_MAX_FRAMES) return -1;
    size_t cap = S.cap_frames ? S.cap_frames * 2 : 4096;
    while (cap < S.nframes + n) cap *= 2;
    if (cap > JS_STARTS_MAX_FRAMES) cap = JS_STARTS_MAX_FRAMES;
    js_raw_frame *f = realloc(S.frames, cap * sizeof *f);
    if (!f) return -1;
    S.frames = f;
    S.cap_frames = cap;
    return 0;
}

/* Count one start of stack raw (n frames); 1 if the stack is new, 0 if known, -1 if it could not be kept. */
static int count_start(const js_raw_frame *raw, int n)
{
    uint64_t h = hash_frames(raw, n);
    int rc = -1;
    pthread_mutex_lock(&S.lock);
    if (table_ready() == 0) {
        uint32_t slot = (uint32_t)h & (INDEX_SLOTS - 1);
        for (;; slot = (slot + 1) & (INDEX_SLOTS - 1)) {
            uint32_t k = S.index[slot];
            if (!k) break;
            start_stack *st = &S.stacks[k - 1];
            if (st->hash == h && st->n == (uint32_t)n &&
                memcmp(&S.frames[st->off], raw, (size_t)n * sizeof *raw) == 0) {
                st->count++;
                rc = 0;
                break;
            }
        }
        if (rc != 0 && S.nstacks < JS_STARTS_MAX_STACKS && arena_room((size_t)n) == 0) {
            start_stack *st = &S.stacks[S.nstacks];
            *st = (start_stack){h, (uint32_t)S.nframes, (uint32_t)n, 1};
            memcpy(&S.frames[S.nframes], raw, (size_t)n * sizeof *raw);
            S.nframes += (size_t)n;
            S.index[slot] = ++S.nstacks;
            rc = 1;
        }
    }
    if (rc < 0) S.dropped++;
    pthread_mutex_unlock(&S.lock);
    return rc;
}

void js_snapshot_thread_started(void)
{
    /* on the heap: Thread.start may be called with little native stack left */
    jvmtiFrameInfo *fi = malloc((JS_STARTS_DEPTH + 1) * sizeof *fi);
    js_raw_frame *raw = malloc((JS_STARTS_DEPTH + 1) * sizeof *raw);
    jint count = 0;
    if (!fi || !raw) {
        pthread_mutex_lock(&S.lock);
        S.dropped++;
        pthread_mutex_unlock(&S.lock);
    } else if (!S.jvmti ||
               (*S.jvmti)->GetStackTrace(S.jvmti, NULL, 0, JS_STARTS_DEPTH + 1, fi, &count) != JVMTI_ERROR_NONE) {
        pthread_mutex_lock(&S.lock); /* before the live phase: no stacks yet */
        S.early++;
        pthread_mutex_unlock(&S.lock);
    } else {
        int n = raw_of(fi, count, JS_STARTS_DEPTH, raw);
        if (count_start(raw, n) == 1) { /* a new stack: its names, while its classes are surely alive */
            char name[NAME_MAX_LEN];
            for (int i = 0; i < n; i++) js_names_frame(raw, i, n, 0, 0, name, sizeof name);
        }
    }
    free(fi);
    free(raw);
}

js_status js_snapshot_thread_starts(const js_args *a, char *out, size_t outlen)
{
    if (!atomic_load(&S.traced)) {
        snprintf(out, outlen, "threadstarts: thread starts are traced only when the agent is loaded at start-up "
                              "(-agentpath) with a backend: the JVM binds Thread.start0 once, while it starts");
        return JS_ERR_UNSUPPORTED;
    }
    /* a copy of the table, named without the lock (naming calls JVMTI): starts go on meanwhile */
    pthread_mutex_lock(&S.lock);
    uint32_t nstacks = S.nstacks;
    size_t nframes = S.nframes;
    uint64_t early = S.early, dropped = S.dropped;
    start_stack *stacks = malloc((nstacks ? nstacks : 1) * sizeof *stacks);
    js_raw_frame *frames = malloc((nframes ? nframes : 1) * sizeof *frames);
    if (stacks && frames) {
        if (nstacks) memcpy(stacks, S.stacks, nstacks * sizeof *stacks);
        if (nframes) memcpy(frames, S.frames, nframes * sizeof *frames);
    }
    pthread_mutex_unlock(&S.lock);
    js_profile p;
    js_profile_init(&p);
    uint32_t *ids = malloc((JS_STARTS_DEPTH + 3) * sizeof *ids);
    int rc = ids && stacks && frames ? 0 : -1;
    uint64_t total = early + dropped;
    for (uint32_t i = 0; i < nstacks && rc == 0; i++) {
        rc = add_stack(&p, a, NULL, &frames[stacks[i].off], (int)stacks[i].n, stacks[i].count, ids);
        total += stacks[i].count;
    }
    free(ids);
    free(stacks);
    free(frames);
    if (rc == 0) rc = js_fold_pseudo(&p, "[started before the VM's live phase]", early);
    if (rc == 0) rc = js_fold_pseudo(&p, "[dropped: thread start table full]", dropped);
    js_status st = JS_ERR_IO;
    if (rc != 0) snprintf(out, outlen, "threadstarts: out of memory building the profile");
    else st = write_out(&p, a, "jsampler thread starts", out, outlen);
    js_profile_free(&p);
    if (st == JS_OK) js_debug("threadstarts: %llu threads started", (unsigned long long)total);
    return st;
}
