/* jfr_stream.c - see jfr_stream.h. */
#include "core/jfr_stream.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "jfr/jfr_write.h"
#include "util/log.h"
#include "core/classes.h"
#include "core/names.h"
#include "core/procsample.h"
#include "core/symbols.h"
#include "core/thread_names.h"
#include "sample/threads.h"
#include "sample/trap.h"
#include "sample/sampler.h"
#include "sample/walker.h"
#include "util/monotime.h"

#define RING_STRIPES 16
#define RING_PER_STRIPE 8192 /* 16 x 8192 events: over 6 s of 100 us samples on 2 CPUs between drains */
#define DRAIN_MS 20
#define UNKNOWN_THREAD_KEY 0x7ffffffeu /* samples of threads the registry never saw */
#define PSEUDO_KEY (1ULL << 62)        /* method keys of pseudo frames: PSEUDO_KEY | code */
#define NATIVE_KEY (1ULL << 61)        /* method keys of native functions: NATIVE_KEY | the symbol's address (48 bits, */
#define KERNEL_BIT (1ULL << 60)        /* and KERNEL_BIT for a kernel address, sign-extended back when named) */
#define ADDR_BITS 0xffffffffffffULL
#define NOSYM_BIT (1ULL << 59)         /* with NATIVE_KEY: the library at that address, no symbol of it ("[libz.so.1]") */
#define NULL_ID_CODE 0x100000000ULL    /* "[unknown_method]": a Java frame without a jmethodID */
#define KLASS_KEY (1ULL << 58)       /* features=vtable: KLASS_KEY | a receiver's Klass* (48 bits), named as its class */
#define CPU_CODE 0x200000000ULL        /* record-cpu: CPU_CODE | cpu, named "CPU-N" as async-profiler names it in JFR */
#define MAX_SETTINGS 16
#define ROTATE_CHECK_EVENTS 256 /* a chunk's size is checked this often within a drain, not only after it */
#define SLOT_MASK ((1u << JS_SAMPLER_GEN_SHIFT) - 1)
#define WAIT_NS 1000000000ULL /* drains that must take everything wait this long for a producer inside the ring */
#define PUBLISH_WAIT_NS 1000000ULL /* an event may name a trace its storing handler has not yet published */
#define UNPUBLISHED_KEY 1 /* ... and past that wait it is one unknown stack (store hashes of real stacks are random) */
#define DEFAULT_CHUNK_TIME_NS (60ULL * 1000000000ULL) /* a killed JVM loses at most the last minute */

/* One recording per process (the handler that feeds it is process-wide); guarded by the
 * profiler's session lock for start/stop, owned by the writer thread in between. */
static struct {
    JavaVM *vm;
    const js_store *stores[2]; /* the session's live stores (js_jfr_stream_stores): events name a trace in them */
    js_evring *ring; /* created once, reused by later recordings (replaced if abandoned) */
    pthread_mutex_t lock; /* drains and writer calls: the writer thread, rotations and stop */
    int active;
    js_jfr_writer *w;
    js_jfr_writer *prev;     /* while the next loop= file begins: the file before, for events of older stores */
    uint32_t boundary;       /* ... the first store generation of the new file */
    pthread_t thread;
    int thread_started;
    _Atomic int stop;
    int failed;
    char error[512];
    char path[JS_PATH_MAX], prev_path[JS_PATH_MAX];
    uint64_t dropped0, prev_dropped0; /* the ring's drops when the file (and the one before) began */
    uint64_t gone, prev_gone;         /* events whose stack was no longer in a store, per file */
    unsigned since_rotate_check;      /* events written since the chunk size was last checked (ROTATE_CHECK_EVENTS) */
    const js_store *ev_store;        /* the event being written: source_trace answers from it */
    uint32_t ev_slot;
    uint8_t kinds[JS_MAX_JSTACKDEPTH + 1]; /* scratch: the frame kinds and lines of the trace pulled */
    int32_t lines[JS_MAX_JSTACKDEPTH + 1];
    js_method_parts parts;   /* scratch returned to the writer by source_method */
    char pseudo_name[64];    /* scratch for pseudo frames */
    char thread_name[JS_THREAD_NAME_MAX];
    char class_name[1024];   /* scratch for alloc and lock events' class */
    char native_name[1024];  /* scratch for native frames */
    int exec_on;             /* the session samples an execution event: wall goes to profiler.WallClockSample */
    long long wall_ns;
    uint64_t proc_ns, proc_next; /* proc=: readings every proc_ns, the next at proc_next (writer thread) */
    js_procsampler *procs;
    js_jfr_setting settings[MAX_SETTINGS];
    char values[MAX_SETTINGS][64];
    _Atomic uint64_t chunks_ended; /* chunks ended within a file (their names written): js_jfr_stream_chunks_ended */
} J = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Chunks w has begun. */
static uint64_t chunks_of(const js_jfr_writer *w)
{
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    return st.chunks;
}

/* End w's chunk if its size or time is due; 0, or -1 with err. J.lock held. */
static int rotate_if_due(js_jfr_writer *w, char *err, size_t errlen)
{
    uint64_t before = chunks_of(w);
    if (js_jfr_maybe_rotate(w, js_mono_ns(), err, errlen) != 0) return -1;
    if (chunks_of(w) != before && !J.prev) atomic_fetch_add(&J.chunks_ended, 1); /* loop= files: their own trim */
    return 0;
}

uint64_t js_jfr_stream_chunks_ended(void)
{
    return atomic_load(&J.chunks_ended);
}

/* The live store an event's trace is in: by its full generation, or by the generation bits of its trace id when
 * the producer gave none. NULL if the stream no longer knows that store (abandoned). */
static const js_store *store_of(const js_ring_event *e)
{
    for (int i = 0; i < 2; i++) {
        const js_store *s = J.stores[i];
        if (!s) continue;
        uint32_t g = js_store_gen(s);
        if (e->gen ? g == e->gen : (g & JS_SAMPLER_GEN_MASK) == e->trace >> JS_SAMPLER_GEN_SHIFT) return s;
    }
    return NULL;
}

/* Frames of the trace of the event being written (key is its hash), leaf first. */
static int source_trace(void *ctx, uint64_t key, js_jfr_frame *out, int max, int *truncated)
{
    int n;
    const js_store *s = J.ev_store;
    const js_raw_frame *f = s && js_store_trace_hash(s, J.ev_slot) == key ? js_store_trace(s, J.ev_slot, &n) : NULL;
    if (!f) return -1;
    if (n > 0 && (f[0].kind == JS_RF_CLASS || (f[0].kind == JS_RF_KLASS && f[0].bci != JS_KLASS_RECEIVER)))
        f++, n--; /* alloc (tlab's too), lock: the class is the event's field, not a frame */
    if (n <= 0) return -1;
    *truncated = n > max;
    if (n > max) n = max;
    if (n > 1 && f[n - 1].kind == JS_RF_ERROR && f[n - 1].bci == JS_WALK_TRUNCATED) { /* cut at jstackdepth */
        n--;
        *truncated = 1;
    }
    js_names_trace_info(f, n, J.kinds, J.lines);
    js_names_touch(f, n); /* its methods' names are written at the chunk's end: not forgotten before (names.h) */
    for (int i = 0; i < n; i++) {
        js_jfr_frame *o = &out[i];
        o->line = -1;
        o->bci = -1;
        if (f[i].kind == JS_RF_JAVA || f[i].kind == JS_RF_NATIVE) {
            o->method = (uint64_t)(uintptr_t)f[i].method;
            o->type = J.kinds[i];
            if (f[i].kind == JS_RF_JAVA && f[i].bci >= 0) {
                o->bci = f[i].bci;
                o->line = J.lines[i];
            }
        } else if (f[i].kind == JS_RF_NATIVE_PC) { /* keyed by its symbol, so one function is one method */
            js_symbol_info info;
            js_symbols_name((uintptr_t)f[i].method - (f[i].bci ? 1 : 0), J.native_name, sizeof J.native_name, &info);
            o->method = NATIVE_KEY | (info.kernel ? KERNEL_BIT : 0) | (info.no_symbol ? NOSYM_BIT : 0) |
                        (info.start & ADDR_BITS);
            o->type = info.kernel ? JS_FT_KERNEL : info.in_jvm && !info.no_symbol ? JS_FT_CPP : JS_FT_NATIVE;
        } else if (f[i].kind == JS_RF_CPU) {
            o->method = PSEUDO_KEY | CPU_CODE | (uint64_t)(uint16_t)f[i].bci;
            o->type = JS_FT_NATIVE;
        } else if (f[i].kind == JS_RF_KLASS) {
            o->method = KLASS_KEY | ((uintptr_t)f[i].method & ADDR_BITS);
            o->type = JS_FT_INLINED;
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
        if (code & CPU_CODE)
            snprintf(J.pseudo_name, sizeof J.pseudo_name, "CPU-%d", (int)(int16_t)(uint16_t)code);
        else
            snprintf(J.pseudo_name, sizeof J.pseudo_name, "%s",
                     code == NULL_ID_CODE ? "[unknown_method]" : js_walk_error_name((int)(uint32_t)code));
        out->class_name = "";
        out->name = J.pseudo_name;
        out->descriptor = "";
        return 0;
    }
    if ((key & (PSEUDO_KEY | NATIVE_KEY | KLASS_KEY)) == KLASS_KEY) { /* a receiver's class, as a frame */
        if (js_names_klass((const void *)(uintptr_t)(key & ADDR_BITS), J.native_name, sizeof J.native_name) != 0)
            snprintf(J.native_name, sizeof J.native_name, "[unknown_class]");
        out->class_name = "";
        out->name = J.native_name;
        out->descriptor = "";
        return 0;
    }
    if ((key & (PSEUDO_KEY | NATIVE_KEY)) == NATIVE_KEY) {
        uint64_t addr = (key & ADDR_BITS) | (key & KERNEL_BIT ? ~ADDR_BITS : 0);
        js_symbol_info info;
        js_symbols_name((uintptr_t)addr, J.native_name, sizeof J.native_name, &info);
        if (!info.kernel) js_symbols_cut_arguments(J.native_name); /* C++ names as async-profiler writes them in JFR */
        if ((key & NOSYM_BIT) && info.lib[0]) /* the object's start may be its first symbol's address too */
            snprintf(J.native_name, sizeof J.native_name, "[%s]", info.lib);
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

/* Thread state of a wall sample, as async-profiler writes it (its converter's --state filter and readers of its
 * recordings know these two): STATE_RUNNABLE while running, STATE_SLEEPING while blocked in a system call, whatever
 * the wait (sleep, Object.wait, park, a monitor, I/O: the stack's leaf frames show which). */
static uint32_t wall_state(const js_ring_event *e, const js_store *s)
{
    (void)s;
    return e->state == JS_WS_SYSCALL ? JS_JFR_STATE_SLEEPING : JS_JFR_STATE_RUNNABLE;
}

/* The trace key of the event's stack (its hash in the store), with J.ev_store and J.ev_slot set for source_trace; 0
 * if the store is gone or was emptied since (the event is then counted, not written). A trace its storing handler
 * has not yet published is waited for briefly; past that it is written as an unknown stack. */
static uint64_t trace_key(const js_ring_event *e, const js_store **store)
{
    const js_store *s = store_of(e);
    uint32_t slot = e->trace & SLOT_MASK;
    uint64_t h = s ? js_store_trace_hash(s, slot) : 0;
    J.ev_store = s;
    J.ev_slot = slot;
    *store = s;
    if (!h) return 0;
    int n;
    for (uint64_t t0 = js_mono_ns(); !js_store_trace(s, slot, &n) && js_mono_ns() - t0 < PUBLISH_WAIT_NS;) sched_yield();
    return js_store_trace(s, slot, &n) ? h : UNPUBLISHED_KEY;
}

/* One drained event into the writer, as its kind's JFR event: the file before a loop= switch takes the events of
 * the stores before it. */
static void write_event(const js_ring_event *e, void *ctx)
{
    if (J.failed) return;
    const js_store *s;
    uint64_t key = trace_key(e, &s);
    int to_prev = J.prev && s && (int32_t)(js_store_gen(s) - J.boundary) < 0;
    if (!key) {
        if (to_prev) J.prev_gone++;
        else J.gone++;
        return;
    }
    js_jfr_writer *w = to_prev ? J.prev : J.w;
    char err[512];
    uint32_t thread = e->thread ? e->thread : UNKNOWN_THREAD_KEY;
    uint32_t weight = (uint32_t)(e->weight > UINT32_MAX ? UINT32_MAX : e->weight);
    int rc;
    if (e->kind == JS_SK_EXEC || (e->kind == JS_SK_WALL && !J.exec_on)) {
        uint32_t state = e->kind == JS_SK_WALL ? wall_state(e, s) : JS_JFR_STATE_DEFAULT;
        rc = js_jfr_execution_sample(w, e->ticks, thread, key, state, weight, err, sizeof err);
    } else {
        js_jfr_event ev = {.ticks = e->ticks, .thread = thread, .trace = key, .timeout = INT64_MIN, .until = INT64_MIN};
        if (e->cls && js_classes_internal(e->cls, J.class_name, sizeof J.class_name) == 0) ev.class_name = J.class_name;
        if (e->kind == JS_SK_WALL) {
            ev.type = JS_JFR_EV_WALL;
            ev.state = wall_state(e, s);
            ev.weight = e->weight;
            ev.span = e->weight * (uint64_t)J.wall_ns;
        } else if (e->kind == JS_SK_ALLOC) {
            ev.type = e->sub == JS_ALLOC_OUTSIDE ? JS_JFR_EV_ALLOC_OUTSIDE : JS_JFR_EV_ALLOC;
            ev.size = e->value;
            ev.weight = e->weight;
            int n = 0;
            const js_raw_frame *f = e->sub != JS_ALLOC_SAMPLED && s ? js_store_trace(s, J.ev_slot, &n) : NULL;
            if (f && n > 0 && f[0].kind == JS_RF_KLASS && f[0].bci != JS_KLASS_RECEIVER && /* tlab: the leaf */
                js_names_klass_internal(f[0].method, J.class_name, sizeof J.class_name) == 0)
                ev.class_name = J.class_name;
        } else if (e->sub == JS_LOCK_PARK) {
            ev.type = JS_JFR_EV_PARK;
            ev.duration = e->weight;
            if (e->state) ev.until = (int64_t)e->value; /* a deadline in ms since the epoch */
            else ev.timeout = (int64_t)e->value;
        } else {
            ev.type = JS_JFR_EV_MONITOR;
            ev.duration = e->weight;
        }
        rc = js_jfr_write_event(w, &ev, err, sizeof err);
    }
    if (rc != 0) fail(err);
    else if (w == J.w && ++J.since_rotate_check >= ROTATE_CHECK_EVENTS) { /* a burst of new stacks within one drain */
        J.since_rotate_check = 0;
        if (rotate_if_due(w, err, sizeof err) != 0) fail(err);
    }
}

/* begin=/end=: the windows closed since the last drain, as profiler.Window events. J.lock held. */
static void write_windows(void)
{
    js_trap_window win[64];
    for (int n; !J.failed && (n = js_trap_take(win, 64)) > 0;) {
        for (int i = 0; i < n && !J.failed; i++) {
            js_thread *t = js_threads_find(win[i].tid);
            uint32_t serial = t ? atomic_load(&t->serial) : 0;
            char err[512];
            if (js_jfr_window(J.w, win[i].start_ns, win[i].end_ns, serial ? serial : UNKNOWN_THREAD_KEY, err,
                              sizeof err) != 0)
                fail(err);
        }
    }
}

/* Drain the ring (stripes a producer holds are left for the next time) and rotate the chunk when due. */
static void pump(void)
{
    pthread_mutex_lock(&J.lock);
    if (J.w) {
        write_windows();
        js_evring_drain(J.ring, write_event, NULL, 0, NULL);
        char err[512];
        if (!J.failed && rotate_if_due(J.w, err, sizeof err) != 0) fail(err);
    }
    pthread_mutex_unlock(&J.lock);
}

/* One process of a proc= round into the recording. */
static void write_process(void *ctx, const js_jfr_process *p)
{
    (void)ctx;
    char err[512];
    pthread_mutex_lock(&J.lock);
    if (J.w && !J.failed && js_jfr_process_sample(J.w, js_mono_ns(), p, err, sizeof err) != 0) fail(err);
    pthread_mutex_unlock(&J.lock);
}

/* proc=: a round of /proc when due. Readings fall in the middle of each period (the first, a baseline, half a
 * period after the start), so a recording of k whole periods holds k readings whatever the stop's delay. */
static void sample_processes(void)
{
    uint64_t now = js_mono_ns();
    if (!J.procs || now < J.proc_next) return;
    js_procsampler_round(J.procs, now, write_process, NULL);
    J.proc_next += J.proc_ns;
    if (J.proc_next <= js_mono_ns()) J.proc_next = js_mono_ns() + J.proc_ns; /* a round longer than a period */
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
        sample_processes();
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
    if (a->proc_ns) SET("proc", "%lld", a->proc_ns / 1000000000LL);
    SET("clock", "monotonic"); /* event ticks: CLOCK_MONOTONIC ns (async-profiler's converter reads this setting) */
    if (a->jfrsync[0]) SET("jfrsync", "%s", a->jfrsync);
#undef SET
    return n;
}

/* Open path as a writer with the session's options; NULL with err. */
static js_jfr_writer *open_file(const char *path, const js_args *a, char *err, size_t errlen)
{
    js_jfr_options o;
    memset(&o, 0, sizeof o);
    o.chunk_size = a->chunk_size;
    o.chunk_time_ns = a->chunk_time_ns ? (uint64_t)a->chunk_time_ns : DEFAULT_CHUNK_TIME_NS;
    o.max_size = a->jfr_max_size;
    o.max_depth = a->jstackdepth;
    o.recording_name = "jsampler";
    o.type_base = a->jfrsync[0] ? JS_JFR_TYPE_BASE_MAX : 0; /* above the JDK's ids, whose chunks lead the file */
    o.nsettings = fill_settings(a);
    o.settings = J.settings;
    return js_jfr_open(path, &o, &source, js_mono_ns(), err, errlen);
}

int js_jfr_stream_start(JavaVM *vm, const char *path, const js_args *a, const js_store *s0, const js_store *s1,
                        char *err, size_t errlen)
{
    if (J.active) {
        snprintf(err, errlen, "a JFR recording is already being written");
        return -1;
    }
    if (!J.ring && !(J.ring = js_evring_create(RING_STRIPES, RING_PER_STRIPE, err, errlen))) return -1;
    J.failed = 1; /* discard anything an earlier session left behind (a recording that failed mid-way) */
    js_evring_drain(J.ring, write_event, NULL, 0, NULL);
    J.vm = vm;
    J.exec_on = js_kind_on(a, JS_KIND_EXEC);
    J.wall_ns = a->wall_ns;
    pthread_mutex_lock(&J.lock);
    J.stores[0] = s0;
    J.stores[1] = s1;
    pthread_mutex_unlock(&J.lock);
    J.failed = 0;
    J.error[0] = 0;
    J.gone = 0;
    J.dropped0 = js_evring_dropped(J.ring);
    snprintf(J.path, sizeof J.path, "%s", path);
    J.w = open_file(path, a, err, errlen);
    if (!J.w) return -1;
    J.proc_ns = (uint64_t)a->proc_ns;
    J.proc_next = js_mono_ns() + J.proc_ns / 2;
    js_procsampler_free(J.procs);
    J.procs = NULL;
    if (J.proc_ns && !(J.procs = js_procsampler_create()))
        js_warn("proc: no memory for the process table; no profiler.ProcessSample events");
    atomic_store(&J.stop, 0);
    J.thread_started = pthread_create(&J.thread, NULL, writer_main, NULL) == 0;
    if (!J.thread_started) js_warn("JFR writer thread not started; events are written at stop");
    J.active = 1;
    return 0;
}

void js_jfr_stream_stores(const js_store *s0, const js_store *s1)
{
    pthread_mutex_lock(&J.lock);
    J.stores[0] = s0;
    J.stores[1] = s1;
    pthread_mutex_unlock(&J.lock);
}

void js_jfr_stream_flush(void)
{
    if (!J.active) return;
    pthread_mutex_lock(&J.lock);
    unsigned held = 0;
    js_evring_drain(J.ring, write_event, NULL, WAIT_NS, &held);
    if (held) js_warn("JFR: %u event buffer(s) held by a stalled signal handler for 1 s; their events are written later, "
                      "without the stacks of a store emptied meanwhile", held);
    pthread_mutex_unlock(&J.lock);
}

int js_jfr_stream_dump(const char *file, char *msg, size_t msglen)
{
    if (!J.active) {
        snprintf(msg, msglen, "no JFR recording is being written");
        return -1;
    }
    if (file && strcmp(file, J.path) != 0) {
        snprintf(msg, msglen, "dump,jfr: the session's recording is %s; another file is not written", J.path);
        return -1;
    }
    js_jfr_stream_flush();
    pthread_mutex_lock(&J.lock);
    char err[512] = "";
    uint64_t before = chunks_of(J.w);
    int rc = J.failed ? -1 : js_jfr_end_chunk(J.w, js_mono_ns(), err, sizeof err);
    if (rc != 0 && !J.failed) fail(err);
    if (rc == 0 && chunks_of(J.w) != before) atomic_fetch_add(&J.chunks_ended, 1);
    js_jfr_stats st;
    js_jfr_get_stats(J.w, &st);
    if (rc == 0)
        snprintf(msg, msglen, "JFR recording complete up to now in %s (%llu events, %llu chunks)", J.path,
                 (unsigned long long)st.events, (unsigned long long)st.chunks);
    else snprintf(msg, msglen, "%s", J.error[0] ? J.error : err);
    pthread_mutex_unlock(&J.lock);
    return rc;
}

js_evring *js_jfr_stream_ring(void)
{
    return J.active ? J.ring : NULL;
}

/* The stop line of a file closed after `events` events and `capped` over jfrmaxsize, `lost` and `gone` events. */
static void report(char *msg, size_t msglen, const char *path, const js_jfr_stats *st, uint64_t lost, uint64_t gone)
{
    struct stat sb;
    long long bytes = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
    char extra[96] = "";
    if (gone) snprintf(extra, sizeof extra, ", %llu of a store already emptied or abandoned", (unsigned long long)gone);
    snprintf(msg, msglen, "wrote JFR recording (%llu events, %lld bytes; %llu events over jfrmaxsize, %llu lost to "
             "full buffers%s) to %s", (unsigned long long)st->events, bytes, (unsigned long long)st->dropped_by_cap,
             (unsigned long long)lost, extra, path);
}

/* Close writer w of path (J.lock held); 0, or -1 with the failure recorded. */
static int close_file(js_jfr_writer *w, const char *path, uint64_t lost, uint64_t gone, char *msg, size_t msglen)
{
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    char err[512] = "";
    if (js_jfr_close(w, js_mono_ns(), err, sizeof err) != 0) fail(err);
    if (J.failed) {
        snprintf(msg, msglen, "JFR recording '%s' is incomplete: %s", path, J.error);
        return -1;
    }
    report(msg, msglen, path, &st, lost, gone);
    return 0;
}

int js_jfr_stream_switch(const char *path, const js_args *a, uint32_t boundary, char *err, size_t errlen)
{
    if (!J.active || J.prev) {
        snprintf(err, errlen, J.active ? "a JFR file switch is already under way" : "no JFR recording is being written");
        return -1;
    }
    js_jfr_writer *next = open_file(path, a, err, errlen);
    if (!next) return -1;
    pthread_mutex_lock(&J.lock);
    J.prev = J.w;
    J.w = next;
    J.boundary = boundary;
    snprintf(J.prev_path, sizeof J.prev_path, "%s", J.path);
    snprintf(J.path, sizeof J.path, "%s", path);
    J.prev_gone = J.gone;
    J.gone = 0;
    J.prev_dropped0 = J.dropped0;
    J.dropped0 = js_evring_dropped(J.ring);
    pthread_mutex_unlock(&J.lock);
    return 0;
}

int js_jfr_stream_end_switch(char *msg, size_t msglen)
{
    if (!J.active || !J.prev) {
        snprintf(msg, msglen, "no JFR file switch is under way");
        return -1;
    }
    pthread_mutex_lock(&J.lock);
    js_evring_drain(J.ring, write_event, NULL, WAIT_NS, NULL);
    js_jfr_writer *w = J.prev;
    J.prev = NULL;
    int rc = close_file(w, J.prev_path, J.dropped0 - J.prev_dropped0, J.prev_gone, msg, msglen);
    pthread_mutex_unlock(&J.lock);
    return rc;
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
    js_procsampler_free(J.procs);
    J.procs = NULL;
    pthread_mutex_lock(&J.lock);
    /* Everything buffered is written (after a failure this only empties the ring); a stripe a stalled handler holds
     * is left to it, and so is the whole ring then: it is never drained or reused again. */
    unsigned held = 0;
    if (J.w && !J.failed) write_windows();
    js_evring_drain(J.ring, write_event, NULL, abandon_ring ? 0 : WAIT_NS, &held);
    uint64_t lost = js_evring_dropped(J.ring) - J.dropped0;
    if (abandon_ring || held) J.ring = NULL;
    char prev_msg[1024] = "";
    int rc = 0;
    if (J.prev) { /* a switch left unfinished */
        rc = close_file(J.prev, J.prev_path, 0, J.prev_gone, prev_msg, sizeof prev_msg);
        J.prev = NULL;
    }
    rc |= close_file(J.w, J.path, lost, J.gone, msg, msglen);
    J.w = NULL;
    J.active = 0;
    pthread_mutex_unlock(&J.lock);
    if (prev_msg[0]) js_info("%s", prev_msg);
    return rc;
}
