/* engine_wall.c - "wall": every thread sampled whatever its state, running or not. One timer thread
 * ("jsampler-wall") wakes every interval and signals up to WALL_PER_TICK threads of the thread table, in
 * turn, with rt_tgsigqueueinfo: a queued signal whose value carries a tag and the sample's weight, the
 * intervals since that thread was last signalled. So thousands of idle threads cost WALL_PER_TICK signals
 * a tick, and every thread's weights still add up to the wall time it was watched.
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

#include "sample/threads.h"

#define WALL_PER_TICK 16          /* threads signalled per tick */
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
    uint32_t cursor;     /* round-robin position: index in the table's visiting order */
    uint32_t limit;      /* this pass visits indexes in [cursor, limit) */
    int sent, budget;    /* this tick */
} W;

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

/* Visit: skip threads signalled this round; signal this one if the tick's budget allows. */
static void visit(js_thread *t, void *ctx)
{
    uint32_t *index = ctx;
    uint32_t i = (*index)++;
    if (W.sent >= W.budget || i < W.cursor || i >= W.limit) return;
    int tid = atomic_load(&t->tid);
    if (tid <= 0 || tid == W.self_tid || atomic_load(&t->unsampled) || atomic_load(&t->wall_tick) == W.tick) {
        W.cursor = i + 1;
        return;
    }
    uint64_t last = atomic_exchange(&t->wall_tick, W.tick);
    uint64_t w = last && W.tick > last ? W.tick - last : 1;
    if (w > WALL_MAX_WEIGHT) w = WALL_MAX_WEIGHT;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = W.sig;
    si.si_code = SI_QUEUE;
    si.si_pid = W.pid;
    si.si_uid = getuid();
    si.si_value.sival_ptr = (void *)(uintptr_t)(WALL_TAG << WALL_TAG_SHIFT | w);
    if (syscall(SYS_rt_tgsigqueueinfo, W.pid, tid, W.sig, &si) == 0) W.sent++;
    W.cursor = i + 1;
}

static void *wall_main(void *arg)
{
    pthread_setname_np(pthread_self(), "jsampler-wall");
    W.self_tid = (int)syscall(SYS_gettid);
    while (!atomic_load(&W.stop)) {
        sleep_ns(js_jitter_next((uint64_t)W.period_ns, W.jitter));
        if (atomic_load(&W.stop)) break;
        W.tick++;
        W.sent = 0;
        W.budget = WALL_PER_TICK;
        uint32_t index = 0, start = W.cursor;
        W.limit = UINT32_MAX;
        js_threads_foreach(visit, &index);
        if (W.sent < W.budget) { /* the end of the table: go on from the first thread up to where this tick began */
            W.cursor = 0;
            W.limit = start;
            index = 0;
            js_threads_foreach(visit, &index);
        }
    }
    return NULL;
}

static int wall_start(long long interval_ns, int jitter, int signo, char *err, size_t errlen)
{
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
