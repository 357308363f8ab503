/* jfr_stream.c - see jfr_stream.h. */
#include "core/jfr_stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "jfr/jfr_write.h"
#include "util/log.h"
#include "core/classes.h"
#include "core/names.h"
#include "core/symbols.h"
#include "sample/walker.h"
#include "core/thread_names.h"
#include "sample/threads.h"
#include "sample/sampler.h"
#include "sample/walker.h"

#define RING_STRIPES 16
#define RING_PER_STRIPE 8192 /* 16 x 8192 events: over 6 s of 100 us samples on 2 CPUs between drains */
#define DRAIN_MS 20
#define UNKNOWN_THREAD_KEY 0x7ffffffeu /* samples of threads the registry never saw */
#define PSEUDO_KEY (1ULL << 62)        /* method keys of pseudo frames: PSEUDO_KEY | code */
#define NATIVE_KEY (1ULL << 61)        /* method keys of native functions: NATIVE_KEY | the symbol's address (48 bits, */
#define KERNEL_BIT (1ULL << 60)        /* and KERNEL_BIT for a kernel address, sign-extended back when named) */
#define ADDR_BITS 0xffffffffffffULL
#define NULL_ID_CODE 0x100000000ULL    /* "[unknown_method]": a Java frame without a jmethodID */
#define MAX_SETTINGS 16
#define DEFAULT_CHUNK_TIME_NS (60ULL * 1000000000ULL) /* a killed JVM loses at most the last minute */

/* One recording per process (the handler that feeds it is process-wide); guarded by the
 * profiler's session lock for start/stop, owned by the writer thread in between. */
static struct {
    JavaVM *vm;
    const js_store *stores[2]; /* the session's two stores: events name their trace as gen << shift | id */
    js_evring *ring; /* created once, reused by later recordings (replaced if abandoned) */
    pthread_mutex_t lock; /* drains and writer calls: the writer thread, rotations and stop */
    int active;
    js_jfr_writer *w;
    pthread_t thread;
    int thread_started;
    _Atomic int stop;
    int failed;
    char error[512];
    char path[JS_PATH_MAX];
    js_method_parts parts;   /* scratch returned to the writer by source_method */
    char pseudo_name[64];    /* scratch for pseudo frames */
    char thread_name[JS_THREAD_NAME_MAX];
    char class_name[1024];   /* scratch for alloc and lock events' class */
    char native_name[1024];  /* scratch for native frames */
    int exec_on;             /* the session samples an execution event: wall goes to profiler.WallClockSample */
    long long wall_ns;
    js_jfr_setting settings[MAX_SETTINGS];
    char values[MAX_SETTINGS][64];
} J = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* CLOCK_MONOTONIC in ns: the clock the handler stamps events with. */
static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The store an event's trace key belongs to (its generation bits), or NULL. */
static const js_store *store_of(uint32_t key)
{
    uint32_t gen = key >> JS_SAMPLER_GEN_SHIFT;
    for (int i = 0; i < 2; i++)
        if (J.stores[i] && (js_store_gen(J.stores[i]) & JS_SAMPLER_GEN_MASK) == gen) return J.stores[i];
    return NULL;
}

/* Frames of a stored trace for the writer, leaf first. */
static int source_trace(void *ctx, uint32_t id, js_jfr_frame *out, int max, int *truncated)
{
    int n;
    const js_store *s = store_of(id);
    const js_raw_frame *f = s ? js_store_trace(s, id & ((1u << JS_SAMPLER_GEN_SHIFT) - 1), &n) : NULL;
    if (!f) return -1;
    if (n > 0 && f[0].kind == JS_RF_CLASS) f++, n--; /* alloc, lock: the class is the event's field, not a frame */
    if (n <= 0) return -1;
    *truncated = n > max;
    if (n > max) n = max;
    if (n > 1 && f[n - 1].kind == JS_RF_ERROR && f[n - 1].bci == JS_WALK_TRUNCATED) { /* cut at jstackdepth */
        n--;
        *truncated = 1;
    }
    for (int i = 0; i < n; i++) {
        js_jfr_frame *o = &out[i];
        o->line = -1;
        o->bci = -1;
        if (f[i].kind == JS_RF_JAVA || f[i].kind == JS_RF_NATIVE) {
            o->method = (uint64_t)(uintptr_t)f[i].method;
            o->type = (uint8_t)js_names_kind(f, i, n);
            if (f[i].kind == JS_RF_JAVA && f[i].bci >= 0) {
                o->bci = f[i].bci;
                o->line = js_names_line(f[i].method, f[i].bci);
            }
        } else if (f[i].kind == JS_RF_NATIVE_PC) { /* keyed by its symbol, so one function is one method */
            js_symbol_info info;
            js_symbols_name((uintptr_t)f[i].method - (f[i].bci ? 1 : 0), J.native_name, sizeof J.native_name, &info);
            o->method = NATIVE_KEY | (info.kernel ? KERNEL_BIT : 0) | (info.start & ADDR_BITS);
            o->type = info.kernel ? JS_FT_KERNEL : info.in_jvm ? JS_FT_CPP : JS_FT_NATIVE;
        } else {
            o->method = PSEUDO_KEY | (f[i].kind == JS_RF_ERROR ? (uint64_t)(uint32_t)f[i].bci : NULL_ID_CODE);
            o->type = JS_FT_CPP;
        }
    }
    return n;
}

/* Name parts of a method key for the writer; pseudo frames get an empty class. */
static int source_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    memset(out, 0, sizeof *out);
    if (key & PSEUDO_KEY) {
        uint64_t code = key & ~PSEUDO_KEY;
        snprintf(J.pseudo_name, sizeof J.pseudo_name, "%s",
                 code == NULL_ID_CODE ? "[unknown_method]" : js_walk_error_name((int)(uint32_t)code));
        out->class_name = "";
        out->name = J.pseudo_name;
        out->descriptor = "";
        return 0;
    }
    if ((key & (PSEUDO_KEY | NATIVE_KEY)) == NATIVE_KEY) {
        uint64_t addr = (key & ADDR_BITS) | (key & KERNEL_BIT ? ~ADDR_BITS : 0);
        js_symbols_name((uintptr_t)addr, J.native_name, sizeof J.native_name, NULL);
        out->class_name = "";
        out->name = J.native_name;
        out->descriptor = "";
        return 0;
    }
    if (js_names_method_parts((const void *)(uintptr_t)key, &J.parts) != 0) {
        out->class_name = "";
        out->name = "[unloaded_method]";
        out->descriptor = "";
        return 0;
    }
    out->class_name = J.parts.cls;
    out->name = J.parts.name;
    out->descriptor = J.parts.sig;
    out->modifiers = J.parts.modifiers;
    return 0;
}

/* Thread description for the writer: Java threads carry their Java name and id. */
static int source_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    int tid = 0;
    int64_t jtid = 0;
    memset(out, 0, sizeof *out);
    if (id == UNKNOWN_THREAD_KEY || js_threads_info(id, J.thread_name, sizeof J.thread_name, &tid, &jtid) != 0)
        snprintf(J.thread_name, sizeof J.thread_name, "[unknown thread]");
    out->os_name = J.thread_name;
    out->os_tid = (uint64_t)tid;
    out->java_name = jtid > 0 ? J.thread_name : NULL;
    out->java_tid = jtid > 0 ? (uint64_t)jtid : 0;
    return 0;
}

static const js_jfr_source source = {NULL, source_trace, source_method, source_thread};

/* Record the first failure; later ones are consequences. */
static void fail(const char *why)
{
    if (J.failed) return;
    J.failed = 1;
    snprintf(J.error, sizeof J.error, "%s", why);
    js_error("JFR recording stopped: %s", why);
}

/* Thread state of a wall sample: running, or from the leaf frame of a thread waiting in a system call
 * (sleeping, waiting, parked, in native code, else blocked in the VM, most often on a monitor). */
static uint32_t wall_state(const js_ring_event *e)
{
    if (e->state != JS_WS_SYSCALL) return JS_JFR_STATE_RUNNABLE;
    int n;
    const js_store *s = store_of(e->trace);
    const js_raw_frame *f = s ? js_store_trace(s, e->trace & ((1u << JS_SAMPLER_GEN_SHIFT) - 1), &n) : NULL;
    int i = 0;
    while (f && i < n && f[i].kind == JS_RF_NATIVE_PC) i++; /* cstack: the libc and kernel frames of the call */
    if (!f || i == n) return f && i ? JS_JFR_STATE_IN_NATIVE : JS_JFR_STATE_RUNNABLE;
    if (f[i].kind != JS_RF_JAVA && f[i].kind != JS_RF_NATIVE) return JS_JFR_STATE_RUNNABLE;
    if (js_names_method_parts(f[i].method, &J.parts) != 0) return JS_JFR_STATE_RUNNABLE;
    const char *c = J.parts.cls, *m = J.parts.name;
    if (strcmp(c, "java/lang/Thread") == 0 && strncmp(m, "sleep", 5) == 0) return JS_JFR_STATE_SLEEPING;
    if (strcmp(c, "java/lang/Object") == 0 && strncmp(m, "wait", 4) == 0) return JS_JFR_STATE_IN_OBJECT_WAIT;
    if (strcmp(c, "jdk/internal/misc/Unsafe") == 0 && strcmp(m, "park") == 0) return JS_JFR_STATE_PARKED;
    if (f[i].kind == JS_RF_NATIVE) return JS_JFR_STATE_IN_NATIVE;
    return JS_JFR_STATE_BLOCKED;
}

/* One drained event into the writer, as its kind's JFR event. */
static void write_event(const js_ring_event *e, void *ctx)
{
    if (J.failed) return;
    char err[512];
    uint32_t thread = e->thread ? e->thread : UNKNOWN_THREAD_KEY;
    uint32_t weight = (uint32_t)(e->weight > UINT32_MAX ? UINT32_MAX : e->weight);
    int rc;
    if (e->kind == JS_SK_EXEC || (e->kind == JS_SK_WALL && !J.exec_on)) {
        uint32_t state = e->kind == JS_SK_WALL ? wall_state(e) : JS_JFR_STATE_RUNNABLE;
        rc = js_jfr_execution_sample(J.w, e->ticks, thread, e->trace, state, weight, err, sizeof err);
    } else {
        js_jfr_event ev = {.ticks = e->ticks, .thread = thread, .trace = e->trace, .timeout = INT64_MIN,
                           .until = INT64_MIN};
        if (e->cls && js_classes_internal(e->cls, J.class_name, sizeof J.class_name) == 0) ev.class_name = J.class_name;
        if (e->kind == JS_SK_WALL) {
            ev.type = JS_JFR_EV_WALL;
            ev.state = wall_state(e);
            ev.weight = e->weight;
            ev.span = e->weight * (uint64_t)J.wall_ns;
        } else if (e->kind == JS_SK_ALLOC) {
            ev.type = JS_JFR_EV_ALLOC;
            ev.size = e->value;
            ev.weight = e->weight;
        } else if (e->sub == JS_LOCK_PARK) {
            ev.type = JS_JFR_EV_PARK;
            ev.duration = e->weight;
            if (e->state) ev.until = (int64_t)e->value; /* a deadline in ms since the epoch */
            else ev.timeout = (int64_t)e->value;
        } else {
            ev.type = JS_JFR_EV_MONITOR;
            ev.duration = e->weight;
        }
        rc = js_jfr_write_event(J.w, &ev, err, sizeof err);
    }
    if (rc != 0) fail(err);
}

/* Drain the ring and rotate the chunk when due. */
static void pump(void)
{
    pthread_mutex_lock(&J.lock);
    if (J.w) {
        js_evring_drain(J.ring, write_event, NULL);
        char err[512];
        if (!J.failed && js_jfr_maybe_rotate(J.w, mono_ns(), err, sizeof err) != 0) fail(err);
    }
    pthread_mutex_unlock(&J.lock);
}

/* Writer thread: attached to the VM (names come through JVMTI), pumps until told to stop. */
static void *writer_main(void *arg)
{
    JNIEnv *env = NULL;
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler jfr writer", NULL};
    int attached = J.vm && (*J.vm)->AttachCurrentThreadAsDaemon(J.vm, (void **)&env, &aa) == JNI_OK;
    pthread_setname_np(pthread_self(), "jsampler-jfr");
    while (!atomic_load(&J.stop)) {
        struct timespec ts = {0, DRAIN_MS * 1000000L};
        nanosleep(&ts, NULL);
        pump();
    }
    if (attached) (*J.vm)->DetachCurrentThread(J.vm);
    return NULL;
}

/* Settings written as jdk.ActiveSetting: what the user asked for and what runs. */
static int fill_settings(const js_args *a)
{
    int n = 0;
#define SET(k, ...) (J.settings[n].name = (k), snprintf(J.values[n], sizeof J.values[n], __VA_ARGS__), \
                     J.settings[n].value = J.values[n], n++)
    char events[64] = "";
    for (int k = 0; k < JS_KINDS; k++)
        if (js_kind_on(a, (js_kind)k))
            snprintf(events + strlen(events), sizeof events - strlen(events), "%s%s", events[0] ? "," : "",
                     js_kind_name(a, (js_kind)k));
    SET("event", "%s", events);
    if (a->wall_ns) SET("wall", "%lld", a->wall_ns);
    if (a->alloc_bytes) SET("alloc", "%llu", (unsigned long long)a->alloc_bytes);
    if (a->lock_ns >= 0) SET("lock", "%lld", a->lock_ns);
    SET("interval", "%lld", a->interval_ns);
    SET("jstackdepth", "%d", a->jstackdepth);
    SET("chunksize", "%llu", (unsigned long long)a->chunk_size);
    SET("chunktime", "%lld", a->chunk_time_ns);
    SET("jfrmaxsize", "%llu", (unsigned long long)a->jfr_max_size);
#undef SET
    return n;
}

int js_jfr_stream_start(JavaVM *vm, const char *path, const js_args *a, const js_store *s0, const js_store *s1,
                        char *err, size_t errlen)
{
    if (J.active) {
        snprintf(err, errlen, "a JFR recording is already being written");
        return -1;
    }
    if (!J.ring && !(J.ring = js_evring_create(RING_STRIPES, RING_PER_STRIPE, err, errlen))) return -1;
    J.failed = 1; /* discard anything a previous recording left behind */
    js_evring_drain(J.ring, write_event, NULL);
    js_jfr_options o;
    memset(&o, 0, sizeof o);
    o.chunk_size = a->chunk_size;
    o.chunk_time_ns = a->chunk_time_ns ? (uint64_t)a->chunk_time_ns : DEFAULT_CHUNK_TIME_NS;
    o.max_size = a->jfr_max_size;
    o.max_depth = a->jstackdepth;
    o.recording_name = "jsampler";
    o.nsettings = fill_settings(a);
    o.settings = J.settings;
    J.vm = vm;
    J.exec_on = js_kind_on(a, JS_KIND_EXEC);
    J.wall_ns = a->wall_ns;
    J.stores[0] = s0;
    J.stores[1] = s1;
    J.failed = 0;
    J.error[0] = 0;
    snprintf(J.path, sizeof J.path, "%s", path);
    J.w = js_jfr_open(path, &o, &source, mono_ns(), err, errlen);
    if (!J.w) return -1;
    atomic_store(&J.stop, 0);
    J.thread_started = pthread_create(&J.thread, NULL, writer_main, NULL) == 0;
    if (!J.thread_started) js_warn("JFR writer thread not started; events are written at stop");
    J.active = 1;
    return 0;
}

void js_jfr_stream_flush(void)
{
    if (J.active) pump();
}

js_evring *js_jfr_stream_ring(void)
{
    return J.active ? J.ring : NULL;
}

int js_jfr_stream_stop(int abandon_ring, char *msg, size_t msglen)
{
    if (!J.active) {
        snprintf(msg, msglen, "no JFR recording is being written");
        return -1;
    }
    atomic_store(&J.stop, 1);
    if (J.thread_started) pthread_join(J.thread, NULL);
    J.thread_started = 0;
    pthread_mutex_lock(&J.lock);
    if (abandon_ring) J.ring = NULL; /* a handler may still hold a stripe: never drain or reuse it */
    else js_evring_drain(J.ring, write_event, NULL); /* after a failure this only empties the ring */
    js_jfr_stats st;
    js_jfr_get_stats(J.w, &st);
    char err[512] = "";
    int rc = js_jfr_close(J.w, mono_ns(), err, sizeof err);
    J.w = NULL;
    J.active = 0;
    pthread_mutex_unlock(&J.lock);
    if (rc != 0) fail(err);
    uint64_t lost = J.ring ? js_evring_dropped(J.ring) : 0;
    if (J.failed) {
        snprintf(msg, msglen, "JFR recording '%s' is incomplete: %s", J.path, J.error);
        return -1;
    }
    struct stat sb;
    long long bytes = stat(J.path, &sb) == 0 ? (long long)sb.st_size : -1;
    snprintf(msg, msglen, "wrote JFR recording (%llu events, %lld bytes; %llu events over jfrmaxsize, %llu lost to "
             "full buffers) to %s", (unsigned long long)st.events, bytes, (unsigned long long)st.dropped_by_cap,
             (unsigned long long)lost, J.path);
    return 0;
}
