/* arming.c - see arming.h. */
#include "core/arming.h"
#include "core/symbols.h"
#include "core/vmflags.h"
#include "sample/trap.h"
#include "sample/walk_features.h"
#include "sample/walk_vmx.h"
#include "sample/vmlayout.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/native_prep.h"
#include "core/thread_names.h"
#include "output/profile.h"
#include "engine/engine.h"
#include "sample/native_objects.h"
#include "sample/sampler.h"
#include "sample/threads.h"
#include "sample/walker.h"
#include "util/log.h"

/* Engine attachment is process-wide like the thread table it works on. The lock guards `engine`
 * and per-thread attach/detach; it is held for one thread's attach at a time, and across a stop's bounded
 * wait for the handlers (so no thread is attached meanwhile), never across I/O of outputs or name resolution. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const js_engine *engine;  /* running engine, NULL when idle */
static _Atomic int attach_wanted; /* the running engine attaches to each thread (engine->per_thread): read unlocked */
static int failures;
static int attached; /* threads the per-thread engine was attached to since start, under lock */
static char first_failure[256];
static int rescan_gen;           /* rescan generation, under lock */
static const js_walker *walker;          /* the walker of the running session (set by js_arming_start) */
static const js_walker *walker_override; /* tests: replaces the walker= choice (js_arming_use_walker) */
static void *java_vm;            /* the JavaVM the walker asks for JNIEnvs (js_arming_init) */
static char filter[JS_PATTERN_MAX]; /* filter= of the running session ('|'-joined thread name globs), under lock */
/* Handles a stop forgot because a handler was still inside (forget_cb), with the engine that opened each: released
 * by a later start or stop once no handler is inside (reap_graves), so a handler preempted past the stop's wait costs
 * the process its counters' files only until then. Under lock; past GRAVE_MAX a handle stays open (counted). */
#define GRAVE_MAX 4096
static struct {
    const js_engine *e;
    _Atomic intptr_t h;
} grave[GRAVE_MAX];
static int ngrave;

#define FILTERED 3 /* js_thread.unsampled: the thread's name does not match filter= */

/* 1 if a thread named name is left out by filter= (never a thread without a name). Caller holds lock. */
static int filtered_out(const char *name)
{
    if (!filter[0] || !name || !name[0]) return 0;
    char pat[JS_PATTERN_MAX];
    snprintf(pat, sizeof pat, "%s", filter);
    for (char *save = NULL, *p = strtok_r(pat, "|", &save); p; p = strtok_r(NULL, "|", &save))
        if (js_glob_match(p, name)) return 0;
    return 1;
}

/* The walker of a process without a JVM: no thread has Java frames; each sample is its native stack alone. */
static int no_java_init(void *vm, char *err, size_t errlen)
{
    return 0;
}

/* Signal-safe: nothing to walk. */
static int no_java_walk(void *ucontext, js_raw_frame *frames, int max)
{
    return JS_WALK_NO_ENV;
}

static const js_walker no_java_walker = {"none", no_java_init, no_java_walk};

/* The threads the Java API added (filter without a value): only those are sampled. Under lock. */
#define API_TIDS_MAX 4096
static int api_filter;
static int api_tids[API_TIDS_MAX];
static int api_ntids;

/* Index of tid in api_tids, or -1. Caller holds lock. */
static int api_find(int tid)
{
    for (int i = 0; i < api_ntids; i++)
        if (api_tids[i] == tid) return i;
    return -1;
}

/* Mark t left out (or not) by filter= for the name it has, or by the Java API's set. Caller holds lock. */
static void apply_filter(js_thread *t, const char *name)
{
    int cur = atomic_load(&t->unsampled);
    if (cur != 0 && cur != FILTERED) return; /* the profiler's own threads, non-Java threads under wall: kept so */
    int out = api_filter ? api_find(atomic_load(&t->tid)) < 0 : filtered_out(name);
    atomic_store(&t->unsampled, out ? FILTERED : 0);
}

/* Attach the running engine to one slot if not yet done. Caller holds lock. */
static void arm_thread(js_thread *t)
{
    if (!engine || !engine->per_thread || atomic_load(&t->unsampled) == FILTERED) return;
    /* A slot released since it was seen (arm_cb takes the lock per slot, after the walk over the table saw it) is
     * left alone: armed with tid 0, perf_event_open would count the calling thread, in a free slot no stop visits
     * (the perf_event file the stress runs found open, one run in ten). Releases hold the lock as well. */
    int tid = atomic_load(&t->tid);
    if (tid <= 0) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&t->armed, &expected, 1)) return;
    char err[256], comm[JS_THREAD_NAME_MAX];
    if (engine->thread_start(tid, &t->handle, err, sizeof err) != 0) {
        atomic_store(&t->armed, 0);
        if (js_threads_comm(tid, comm, sizeof comm) != 0) js_threads_release(t); /* it ended meanwhile */
        else if (failures++ == 0) snprintf(first_failure, sizeof first_failure, "%s", err);
    } else {
        attached++;
    }
}

/* Detach the engine from one slot. Caller holds lock. */
static void disarm_thread(js_thread *t)
{
    int expected = 1;
    if (engine && engine->per_thread && atomic_compare_exchange_strong(&t->armed, &expected, 0))
        engine->thread_stop(&t->handle);
}

/* Apply filter= to a thread known before the session, by the name recorded for it. Caller holds lock. */
static void filter_cb(js_thread *t, void *ctx)
{
    char name[JS_THREAD_NAME_MAX] = "";
    int tid;
    int64_t jtid;
    if (js_threads_info(atomic_load(&t->serial), name, sizeof name, &tid, &jtid) == 0) apply_filter(t, name);
}

static void arm_cb(js_thread *t, void *ctx)
{
    pthread_mutex_lock(&lock);
    arm_thread(t);
    pthread_mutex_unlock(&lock);
}

static void disarm_cb(js_thread *t, void *ctx)
{
    disarm_thread(t);
}

/* Stop one thread's counter or timer raising signals, its handle kept. Caller holds lock. */
static void pause_cb(js_thread *t, void *ctx)
{
    if (engine && engine->per_thread && engine->thread_pause && atomic_load(&t->armed))
        engine->thread_pause(&t->handle);
}

/* Take a thread's handle off it without releasing it (a handler stuck in the sampler may still use it): kept for
 * reap_graves. Caller holds lock. */
static void forget_cb(js_thread *t, void *ctx)
{
    int expected = 1;
    if (atomic_compare_exchange_strong(&t->armed, &expected, 0)) {
        intptr_t h = atomic_exchange(&t->handle, -1);
        if (h >= 0 && engine && engine->per_thread && ngrave < GRAVE_MAX) {
            grave[ngrave].e = engine;
            atomic_store(&grave[ngrave++].h, h);
        }
        (*(int *)ctx)++;
    }
}

/* Release the handles forgotten by earlier stops if no handler is inside the sampler now (the one that was has
 * left; any that enters later finds its thread's handle gone). Returns how many were released. Caller holds lock. */
static int reap_graves(void)
{
    if (!ngrave || !js_sampler_idle()) return 0;
    int n = ngrave;
    for (int i = 0; i < n; i++) grave[i].e->thread_stop(&grave[i].h);
    ngrave = 0;
    return n;
}

/* Release the slot of a thread that is gone. */
static void sweep_cb(js_thread *t, void *ctx)
{
    int gen = *(int *)ctx;
    if (atomic_load(&t->seen) == gen) return;
    char comm[JS_THREAD_NAME_MAX];
    int tid = atomic_load(&t->tid);
    if (tid <= 0 || js_threads_comm(tid, comm, sizeof comm) == 0) return; /* still alive */
    pthread_mutex_lock(&lock);
    if (atomic_load(&t->tid) == tid) {
        disarm_thread(t);
        js_threads_release(t);
    }
    pthread_mutex_unlock(&lock);
}

void js_arming_rescan(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    pthread_mutex_lock(&lock);
    int gen = ++rescan_gen;
    pthread_mutex_unlock(&lock);
    struct dirent *e;
    int found = 0, added = 0;
    while ((e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        if (tid <= 0) continue;
        js_thread *t = js_threads_find(tid);
        if (t && atomic_load(&t->armed) == atomic_load(&attach_wanted)) { /* known and attached: nothing to do */
            found++;
            atomic_store(&t->seen, gen);
            continue;
        }
        /* A thread new to the table: its name is read once (a file read per thread is what a rescan of
         * thousands of threads would cost every round otherwise). */
        char comm[JS_THREAD_NAME_MAX] = "";
        int named = !t && js_threads_comm(tid, comm, sizeof comm) == 0;
        pthread_mutex_lock(&lock);
        int created;
        t = js_threads_claim(tid, &created);
        if (t) {
            found++;
            added += created;
            atomic_store(&t->seen, gen);
            if (created && named) js_threads_set_name(atomic_load(&t->serial), tid, comm);
            if (created && named && strncmp(comm, "jsampler", 8) == 0) atomic_store(&t->unsampled, 1); /* ours */
            if (created && named) apply_filter(t, comm);
            arm_thread(t);
        }
        pthread_mutex_unlock(&lock);
    }
    closedir(d);
    js_threads_foreach(sweep_cb, &gen);
    if (added) js_debug("thread rescan: %d threads, %d new", found, added);
}

/* The perf_events counter of each explicit perf event (js_event order from JS_EV_CPU_CLOCK on). */
static const struct {
    uint32_t type;
    uint64_t config;
} perf_events[] = {
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},        {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},      {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},   {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},     {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},     {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES}};

static const js_engine *wall_engine; /* the wall engine when it runs beside (or instead of) the engine above */
static const js_native_walker *_Atomic native; /* cstack= walker of the running session, or NULL */

/* Try one execution engine: signal, handler, process-wide start. */
static int try_engine(const js_engine *e, const js_args *a, js_arming_info *info, char *err, size_t errlen)
{
    int signo = js_sampler_install(e == &js_engine_itimer, err, errlen);
    if (signo < 0) return -1;
    /* The engine's settings are in place before the handler may read them; no thread is attached yet. */
    if (e->start(a->interval_ns, a->jitter, signo, err, errlen) != 0) return -1;
    info->engine = e->name;
    info->description = e->description;
    info->signo = signo;
    return 0;
}

/* The perf_events id of tracepoint "CATEGORY:NAME" from tracefs (the first of its places that is mounted): the id,
 * or -1 with err. */
static long long tracepoint_id(const char *tp, char *err, size_t errlen)
{
    static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    const char *colon = strchr(tp, ':');
    for (size_t i = 0; colon && i < sizeof roots / sizeof roots[0]; i++) {
        char path[JS_TRACEPOINT_MAX + 64];
        snprintf(path, sizeof path, "%s/events", roots[i]);
        if (access(path, F_OK) != 0) continue; /* not mounted there */
        snprintf(path, sizeof path, "%s/events/%.*s/%s/id", roots[i], (int)(colon - tp), tp, colon + 1);
        FILE *f = fopen(path, "r");
        int e = errno;
        long long id = -1;
        if (f && fscanf(f, "%lld", &id) != 1) id = -1;
        if (f) fclose(f);
        if (id >= 0) return id;
        if (!f && (e == EACCES || e == EPERM))
            snprintf(err, errlen, "event %s: reading tracepoint ids from %s needs root (or CAP_PERFMON and a "
                     "readable tracefs)", tp, roots[i]);
        else
            snprintf(err, errlen, "event %s: no such tracepoint in %s/available_events", tp, roots[i]);
        return -1;
    }
    snprintf(err, errlen, "event %s: tracefs is not mounted (as root: mount -t tracefs nodev /sys/kernel/tracing)",
             tp);
    return -1;
}

/* features=vtable,comptask for the handlers; comptask's compiler entry functions found by name (C1's, C2's). */
static void set_features(const js_args *a)
{
    static const char *const names[] = {"Compiler::compile_method", "C2Compiler::compile_method"};
    uintptr_t entries[2][2];
    int n = 0;
    char why[256];
    if ((a->feat_vtable || a->feat_comptask || a->cstack_vmx) && !js_vm.ok && js_vmlayout_init(why, sizeof why) != 0)
        js_warn("HotSpot's tables are not understood (%s): features= and cstack=vmx add nothing", why);
    for (size_t i = 0; a->feat_comptask && i < sizeof names / sizeof names[0]; i++) {
        size_t size = 0;
        uintptr_t at = js_symbols_find_sized(names[i], &size);
        if (at && size) entries[n][0] = at, entries[n][1] = at + size, n++;
    }
    if (a->feat_comptask && !n) js_warn("features=comptask: the JIT compilers' entry functions are not found in libjvm");
    int ccp = 0, coh = 0, vtable = a->feat_vtable;
    if (vtable && (js_vmflag_bool("UseCompressedClassPointers", &ccp) != 0 || !ccp ||
                   (js_vmflag_bool("UseCompactObjectHeaders", &coh) == 0 && coh))) {
        js_warn("features=vtable: receiver classes are read only with compressed class pointers and classic object "
                "headers, which this JVM does not use; vtable stubs show without them");
        vtable = 0;
    }
    js_features_set(vtable, a->feat_comptask, (const uintptr_t(*)[2])entries, n);
    size_t helper_size = 0; /* cstack=vmx: the VM's frames where it calls Java, found from JavaCalls::call_helper */
    uintptr_t helper = a->cstack_vmx ? js_symbols_find_sized("JavaCalls::call_helper", &helper_size) : 0;
    if (a->cstack_vmx && !(helper && helper_size))
        js_warn("cstack=vmx: JavaCalls::call_helper is not found in libjvm; the VM's frames between Java frames are left out");
    js_vmx_set(a->cstack_vmx && helper && helper_size, helper, helper + helper_size);
}

/* begin=/end=: the functions' code as it was; one line if a trap handler kept their pages writable. */
static void disarm_window(void)
{
    if (js_trap_disarm() != 0)
        js_warn("begin/end: a breakpoint's signal handler was still at work 1 s after the window was disarmed; the "
                "functions' code is put back, their pages left writable");
}

/* begin=/end= (ttsp): the breakpoints that open and close the profiling window. 0, or -1 with err. */
static int arm_window(const js_args *a, char *err, size_t errlen)
{
    uintptr_t begin = js_symbols_find(a->begin), end = a->end[0] ? js_symbols_find(a->end) : 0;
    if (!begin || (a->end[0] && !end)) {
        snprintf(err, errlen, "option '%s=%s': no native function of that name in this process", begin ? "end" : "begin",
                 begin ? a->end : a->begin);
        return -1;
    }
    return js_trap_arm(begin, end, a->nostop, err, errlen);
}

/* Start the exact perf counter (type, config) named name: no fallback. NULL with err. */
static const js_engine *start_counter(const js_args *a, uint32_t type, uint64_t config, const char *name,
                                      js_arming_info *info, char *err, size_t errlen)
{
    js_engine_perf_select(type, config, name);
    if (try_engine(&js_engine_perf, a, info, err, errlen) != 0) return NULL;
    snprintf(info->engine_buf, sizeof info->engine_buf, "%s", name); /* name may not outlive the call */
    info->engine = info->engine_buf;
    snprintf(info->desc_buf, sizeof info->desc_buf, "perf_events %s", name);
    info->description = info->desc_buf;
    return &js_engine_perf;
}

/* Start the execution engine a asks for, falling back from cpu to ctimer to itimer. NULL with err. */
static const js_engine *start_exec(const js_args *a, js_arming_info *info, char *err, size_t errlen)
{
    if (a->event == JS_EV_CTIMER) return try_engine(&js_engine_ctimer, a, info, err, errlen) ? NULL : &js_engine_ctimer;
    if (a->event == JS_EV_ITIMER) {
        if (try_engine(&js_engine_itimer, a, info, err, errlen) != 0) return NULL;
        snprintf(info->why, sizeof info->why, "itimer chosen: process-wide, loses periods below the 4 ms tick");
        return &js_engine_itimer;
    }
    if (a->event == JS_EV_TRACEPOINT) {
        long long id = tracepoint_id(a->tracepoint, err, errlen);
        return id < 0 ? NULL : start_counter(a, PERF_TYPE_TRACEPOINT, (uint64_t)id, a->tracepoint, info, err, errlen);
    }
    if (a->event == JS_EV_FUNCTION) { /* calls of a native function: a hardware breakpoint on its first instruction */
        uintptr_t at = js_symbols_find(a->tracepoint);
        if (!at) {
            snprintf(err, errlen, "event %s: no native function of that name in this process", a->tracepoint);
            return NULL;
        }
        char gerr[128];
        if (js_trap_guard_hw(at, gerr, sizeof gerr) != 0) { /* no breakpoint whose stray trap would end the JVM */
            snprintf(err, errlen, "event %s: %s", a->tracepoint, gerr);
            return NULL;
        }
        return start_counter(a, PERF_TYPE_BREAKPOINT, at, a->tracepoint, info, err, errlen);
    }
    if (a->event >= JS_EV_CPU_CLOCK && a->event < JS_EV_TRACEPOINT) { /* exactly that counter: no fallback */
        int i = a->event - JS_EV_CPU_CLOCK;
        return start_counter(a, perf_events[i].type, perf_events[i].config, js_event_name(a->event), info, err,
                             errlen);
    }
    js_engine_perf_select(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock");
    char perr[256], cerr[256], ierr[256];
    if (try_engine(&js_engine_perf, a, info, perr, sizeof perr) == 0) return &js_engine_perf;
    if (a->record_cpu || a->target_cpu >= 0 || a->alluser || a->fdtransfer) { /* only perf_events can do what they ask */
        snprintf(err, errlen, "%s needs perf_events, which this JVM may not use: %s",
                 a->record_cpu ? "record-cpu" : a->target_cpu >= 0 ? "target-cpu" : a->alluser ? "alluser" : "fdtransfer",
                 perr);
        return NULL;
    }
    if (try_engine(&js_engine_ctimer, a, info, cerr, sizeof cerr) == 0) {
        snprintf(info->why, sizeof info->why, "perf_events refused (%s); fell back to ctimer", perr);
        return &js_engine_ctimer;
    }
    if (try_engine(&js_engine_itimer, a, info, ierr, sizeof ierr) == 0) {
        snprintf(info->why, sizeof info->why, "perf_events refused (%s), ctimer failed (%s); fell back to "
                 "itimer, which is process-wide and inaccurate", perr, cerr);
        return &js_engine_itimer;
    }
    snprintf(err, errlen, "no sampling engine could start: perf_events: %s; ctimer: %s; itimer: %s", perr, cerr, ierr);
    return NULL;
}

int js_arming_start(const js_args *a, js_store *store, js_evring *ring, js_arming_info *info, char *err,
                    size_t errlen)
{
    memset(info, 0, sizeof *info);
    info->engine = "none";
    info->description = "no signals (VM events only)";
    pthread_mutex_lock(&lock);
    int reaped = reap_graves();
    pthread_mutex_unlock(&lock);
    if (reaped) js_info("%d per-thread counters or timers left open by an earlier stop released", reaped);
    char werr[256] = "";
    walker = walker_override               ? walker_override
             : !java_vm                    ? &no_java_walker
             : a->walker == JS_WALKER_AGCT ? &js_walker_agct
                                           : &js_walker_recover;
    if (walker->init(java_vm, werr, sizeof werr) != 0) {
        snprintf(err, errlen, "%s", werr);
        return -1;
    }
    if (werr[0]) snprintf(info->walker_note, sizeof info->walker_note, "%s", werr);
    const js_native_walker *nw = a->cstack == JS_CSTACK_FP ? &js_native_fp
                                 : a->cstack == JS_CSTACK_DWARF ? &js_native_dwarf : NULL;
    if (nw && js_native_prepare(nw, err, errlen) != 0) return -1;
    if (nw == &js_native_dwarf) {
        int unw, all;
        size_t bytes;
        js_nobj_counts(&unw, &all, &bytes);
        snprintf(info->native_note, sizeof info->native_note, "cstack=dwarf: unwind tables of %d of %d code "
                 "segments copied (%.1f MB)", unw, all, (double)bytes / (1 << 20));
    }
    js_signal_source src[JS_SAMPLER_MAX_SOURCES];
    int nsrc = 0;
    const js_engine *e = NULL;
    if (js_kind_on(a, JS_KIND_EXEC)) {
        js_engine_perf_kernel_stacks(nw != NULL && !a->alluser);
        js_engine_perf_scope(a->target_cpu, a->alluser);
        if (!(e = start_exec(a, info, err, errlen))) return -1;
        src[nsrc++] = (js_signal_source){e->sample_weight, JS_SK_EXEC, e->kernel_stack};
    }
    int wall_signo = -1;
    if (a->wall_ns > 0) {
        if ((wall_signo = js_sampler_install(0, err, errlen)) < 0) {
            if (e) e->stop();
            return -1;
        }
        src[nsrc++] = (js_signal_source){js_engine_wall.sample_weight, JS_SK_WALL, NULL};
        if (!e) info->engine = "wall", info->description = js_engine_wall.description, info->signo = wall_signo;
    }
    js_sampler_set_cstack(nw);
    js_sampler_set_record_cpu(a->record_cpu && e == &js_engine_perf, a->target_cpu);
    set_features(a);
    atomic_store(&native, nw);
    long long yardstick = e && !js_event_is_count(a->event) ? a->interval_ns : a->wall_ns;
    if (js_sampler_arm(src, nsrc, walker, store, ring, a->jstackdepth, yardstick, err, errlen) != 0) {
        if (e) e->stop();
        return -1;
    }
    if (a->begin[0] && arm_window(a, err, errlen) != 0) { /* before the first signal is sent: no sample outside it */
        js_sampler_disarm();
        if (e) e->stop();
        return -1;
    }
    /* The wall timer starts once the handler accepts its signals. */
    if (a->wall_ns > 0 && js_engine_wall.start(a->wall_ns, a->jitter, wall_signo, err, errlen) != 0) {
        disarm_window(); /* begin=/end=: the functions' code as it was */
        js_sampler_disarm();
        if (e) e->stop();
        return -1;
    }
    if (a->fdtransfer && !a->quiet) /* async-profiler's helper passes counters to a target that may not open them */
        js_info("fdtransfer: nothing to transfer: %s", e == &js_engine_perf ? "this JVM opened its perf_events "
                "counters itself" : "this session's sampling opens no perf_events counter");
    info->shared_signal = nsrc ? js_sampler_shared() : 0;
    pthread_mutex_lock(&lock);
    snprintf(filter, sizeof filter, "%s", a->filter);
    if (a->action != JS_ACTION_RESUME) api_ntids = 0; /* a new session starts with no thread added */
    api_filter = a->thread_filter;
    js_threads_foreach(filter_cb, NULL);
    engine = e;
    atomic_store(&attach_wanted, e && e->per_thread);
    wall_engine = a->wall_ns > 0 ? &js_engine_wall : NULL;
    failures = 0;
    attached = 0;
    first_failure[0] = 0;
    pthread_mutex_unlock(&lock);
    js_arming_rescan(); /* drops slots of threads that ended while idle, attaches the live ones */
    js_threads_foreach(arm_cb, NULL);
    return 0;
}

int js_arming_stop(void)
{
    disarm_window(); /* the functions' code as it was, first */
    pthread_mutex_lock(&lock);
    const js_engine *e = engine, *wall = wall_engine;
    atomic_store(&attach_wanted, 0);
    if (wall) wall->stop(); /* its thread takes no lock of ours */
    js_threads_foreach(pause_cb, NULL);
    int left = js_sampler_disarm(), leaked = 0, reaped = 0;
    if (!left) js_threads_foreach(disarm_cb, NULL);
    else js_threads_foreach(forget_cb, &leaked);
    engine = NULL;
    wall_engine = NULL;
    atomic_store(&native, NULL);
    if (!left) reaped = reap_graves();
    char tids[128];
    int escaped = !left && !ngrave && e == &js_engine_perf ? js_engine_perf_close_escaped(tids, sizeof tids) : 0;
    pthread_mutex_unlock(&lock);
    if (escaped) /* every slot's counter is closed by now, and no handler is inside: these had no slot */
        js_warn("%d perf_events counters were held by no thread slot at stop (threads %s): closed", escaped, tids);
    if (leaked)
        js_warn("%d per-thread counters or timers left open: a signal handler was still running (released by a later "
                "start or stop)", leaked);
    if (reaped) js_info("%d per-thread counters or timers left open by an earlier stop released", reaped);
    if (e) e->stop();
    return left;
}

void js_arming_refresh_native(void)
{
    const js_native_walker *nw = atomic_load(&native);
    char err[256];
    if (nw && js_native_prepare(nw, err, sizeof err) != 0) js_debug("%s", err);
}

void js_arming_init(void *vm)
{
    java_vm = vm;
}

void js_arming_use_walker(const js_walker *w)
{
    walker_override = w;
}

int js_arming_failures(char *first, size_t len)
{
    pthread_mutex_lock(&lock);
    int n = failures;
    snprintf(first, len, "%s", first_failure);
    pthread_mutex_unlock(&lock);
    return n;
}

int js_arming_attached(void)
{
    pthread_mutex_lock(&lock);
    int n = attached;
    pthread_mutex_unlock(&lock);
    return n;
}

void js_arming_thread_start(int tid, void *env, const char *name, int64_t java_tid)
{
    pthread_mutex_lock(&lock);
    int created;
    js_thread *t = js_threads_claim(tid, &created);
    if (t) {
        uint32_t serial = atomic_load(&t->serial);
        if (atomic_load(&t->unsampled) == 2) atomic_store(&t->unsampled, 0); /* a native thread attached to the VM */
        apply_filter(t, name);
        js_threads_set_name(serial, tid, name);
        js_threads_set_java_id(serial, java_tid);
        arm_thread(t);
    }
    pthread_mutex_unlock(&lock);
}

void js_arming_thread_end(int tid)
{
    pthread_mutex_lock(&lock);
    js_thread *t = js_threads_find(tid);
    if (t) {
        disarm_thread(t);
        js_threads_release(t);
    }
    pthread_mutex_unlock(&lock);
}

/* js_arming_filter_java_thread: the slot whose Java thread id is ctx's. */
typedef struct {
    int64_t java_tid;
    int tid;
} java_find;

static void java_find_cb(js_thread *t, void *ctx)
{
    java_find *k = ctx;
    char name[8];
    int tid;
    int64_t jtid = 0;
    if (!k->tid && js_threads_info(atomic_load(&t->serial), name, sizeof name, &tid, &jtid) == 0 && jtid == k->java_tid)
        k->tid = tid;
}

/* Take a running thread's counter or timer off it (a filter change, from another thread): its own signal handler may be
 * using the handle this moment, so it stops raising signals and is kept for reap_graves, not released at once (its
 * file number, reused, would take the handler's ioctl). Caller holds lock. */
static void disarm_live_thread(js_thread *t)
{
    if (!engine || !engine->per_thread || !atomic_load(&t->armed)) return;
    if (engine->thread_pause) engine->thread_pause(&t->handle);
    int n = 0;
    forget_cb(t, &n);
    reap_graves();
}

int js_arming_filter_thread(int tid, int64_t java_tid, int add)
{
    if (!tid) {
        java_find k = {java_tid, 0};
        js_threads_foreach(java_find_cb, &k);
        if (!(tid = k.tid)) return -1;
    }
    pthread_mutex_lock(&lock);
    int i = api_find(tid), rc = 0;
    if (add && i < 0 && api_ntids < API_TIDS_MAX) api_tids[api_ntids++] = tid;
    else if (add && i < 0) rc = -1;
    else if (!add && i >= 0) api_tids[i] = api_tids[--api_ntids];
    js_thread *t = api_filter ? js_threads_find(tid) : NULL;
    if (t) {
        apply_filter(t, "");
        if (atomic_load(&t->unsampled) == FILTERED) disarm_live_thread(t);
        else arm_thread(t);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
