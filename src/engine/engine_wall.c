/* engine_wall.c - "wall": every thread sampled whatever its state, running or not. One timer thread
 * ("jsampler-wall") wakes every interval and looks at up to WALL_VISITS_PER_TICK threads of the thread table in
 * turn, signalling at most WALL_PER_TICK of them with rt_tgsigqueueinfo: a queued signal whose value carries a tag
 * and the sample's weight, the ticks since that thread was last looked at. So every thread's weights add up to
 * the wall time it was watched, and a tick's work is bounded however many threads there are. A thread that has
 * not run since its last sample (its CPU time grew by less than WALL_IDLE_NS: the end of that handler) cannot
 * have another stack: its last sample is credited again without a signal (js_sampler_repeat_wall), a clock read
 * instead of waking it, so idle threads cost next to nothing.
 */
#include "engine/engine.h"
#include "engine/jitter.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample/sampler.h"
#include "sample/threads.h"

#define WALL_PER_TICK 16          /* threads signalled per tick */
#define WALL_VISITS_PER_TICK 32   /* threads looked at per tick (a CPU-clock read each) */
#define WALL_SLOTS_PER_TICK JS_THREADS_MAX /* table slots passed per tick at most: one round of the table */
#define WALL_IDLE_NS 20000        /* CPU time a thread may gain after its handler and still count as not run */
#define WALL_TAG 0x5741ULL        /* "WA": the upper 16 bits of a wall signal's value */
#define WALL_TAG_SHIFT 48
#define WALL_MAX_WEIGHT 0xFFFFFFFFULL

/* The running engine (one per process, like the handler it feeds). */
static struct {
    long long period_ns;
    int jitter, sig, pid, self_tid;
    pthread_t thread;
    int running;
    _Atomic int stop;
    uint64_t tick;       /* timer thread only */
    uint32_t cursor;     /* round-robin position: the next slot of the thread table */
    int sent, visited;   /* this tick: signals sent, threads looked at */
    uint64_t repeated;   /* samples credited again without a signal */
} W;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CPU time of thread tid (its per-thread CPU clock); UINT64_MAX/2 if unreadable (never "idle"). */
static uint64_t thread_cpu_ns(int tid)
{
    struct timespec ts;
    if (clock_gettime((clockid_t)((~(unsigned)tid << 3) | 6), &ts) != 0) return UINT64_MAX / 2;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleep ns on CLOCK_MONOTONIC, in steps of at most 50 ms so stop is seen soon. */
static void sleep_ns(uint64_t ns)
{
    while (ns && !atomic_load(&W.stop)) {
        uint64_t step = ns > 50000000ULL ? 50000000ULL : ns;
        struct timespec ts = {(time_t)(step / 1000000000ULL), (long)(step % 1000000000ULL)};
        nanosleep(&ts, NULL);
        ns -= step;
    }
}

/* Look at thread t: credit its last sample again if it has not run since, else signal it. */
static void visit(js_thread *t)
{
    int tid = atomic_load(&t->tid);
    if (tid <= 0 || tid == W.self_tid || atomic_load(&t->wall_tick) == W.tick) return;
    if (atomic_load(&t->unsampled)) { /* left out: if it is taken in later, its weight starts from now */
        atomic_store(&t->wall_tick, W.tick);
        return;
    }
    uint64_t last = atomic_exchange(&t->wall_tick, W.tick);
    uint64_t w = last && W.tick > last ? W.tick - last : 1;
    if (w > WALL_MAX_WEIGHT) w = WALL_MAX_WEIGHT;
    W.visited++;
    /* A thread that has not run since its last sample still has that stack: credit it again, no signal. */
    if (atomic_load(&t->wall_key) && thread_cpu_ns(tid) - atomic_load(&t->wall_cpu_ns) < WALL_IDLE_NS &&
        js_sampler_repeat_wall(t, w, now_ns()) == 0) {
        W.repeated++;
        return;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = W.sig;
    si.si_code = SI_QUEUE;
    si.si_pid = W.pid;
    si.si_uid = getuid();
    si.si_value.sival_ptr = (void *)(uintptr_t)(WALL_TAG << WALL_TAG_SHIFT | w);
    if (syscall(SYS_rt_tgsigqueueinfo, W.pid, tid, W.sig, &si) == 0) W.sent++;
}

/* One tick: from where the last tick stopped, look at threads in table order until WALL_PER_TICK have been
 * signalled, WALL_VISITS_PER_TICK looked at, or WALL_SLOTS_PER_TICK slots passed (bounded work per tick, however
 * large the table). */
static void tick(void)
{
    W.sent = W.visited = 0;
    for (int k = 0; k < WALL_SLOTS_PER_TICK && W.sent < WALL_PER_TICK && W.visited < WALL_VISITS_PER_TICK; k++) {
        js_thread *t = js_threads_slot(W.cursor++);
        if (t) visit(t);
    }
}

static void *wall_main(void *arg)
{
    pthread_setname_np(pthread_self(), "jsampler-wall");
    W.self_tid = (int)syscall(SYS_gettid);
    while (!atomic_load(&W.stop)) {
        sleep_ns(js_jitter_next((uint64_t)W.period_ns, W.jitter));
        if (atomic_load(&W.stop)) break;
        W.tick++;
        tick();
    }
    return NULL;
}

/* Forget a thread's last wall sample: it belongs to an earlier session's stores. */
static void forget(js_thread *t, void *ctx)
{
    atomic_store(&t->wall_key, 0);
    atomic_store(&t->wall_tick, 0);
}

static int wall_start(long long interval_ns, int jitter, int signo, char *err, size_t errlen)
{
    js_threads_foreach(forget, NULL);
    W.period_ns = interval_ns;
    W.jitter = jitter;
    W.sig = signo;
    W.pid = getpid();
    W.tick = 1;
    W.cursor = 0;
    atomic_store(&W.stop, 0);
    int e = pthread_create(&W.thread, NULL, wall_main, NULL);
    if (e != 0) {
        snprintf(err, errlen, "cannot start the wall-clock timer thread: %s", strerror(e));
        return -1;
    }
    W.running = 1;
    return 0;
}

static void wall_stop(void)
{
    if (!W.running) return;
    atomic_store(&W.stop, 1);
    pthread_join(W.thread, NULL);
    W.running = 0;
}

/* Ours if queued by this process with the wall tag; the weight is in the value. */
static uint64_t wall_weight(const siginfo_t *si, intptr_t handle)
{
    if (si->si_code != SI_QUEUE || si->si_pid != W.pid) return 0;
    uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
    if (v >> WALL_TAG_SHIFT != WALL_TAG) return 0;
    return v & WALL_MAX_WEIGHT;
}

const js_engine js_engine_wall = {
    .name = "wall",
    .description = "wall clock (a timer thread signals each thread in turn)",
    .per_thread = 0,
    .start = wall_start,
    .stop = wall_stop,
    .thread_start = NULL,
    .thread_stop = NULL,
    .sample_weight = wall_weight,
};
