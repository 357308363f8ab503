/* engine_wall.c - "wall": every thread sampled whatever its state, running or not. One timer thread
 * ("jsampler-wall") wakes every interval and looks at up to WALL_VISITS_PER_TICK threads of the thread table in
 * turn, signalling at most WALL_PER_TICK of them with rt_tgsigqueueinfo: a queued signal whose value carries a tag
 * and the sample's weight, the ticks since that thread was last looked at. So every thread's weights add up to
 * the wall time it was watched, and a tick's work is bounded however many threads there are.
 *
 * Idle threads cost next to nothing: a thread whose last sample caught it blocked in a system call (a sleep, a
 * wait, a read) and that has not been woken since is still there, with the same stack, and its last sample is
 * credited again without a signal (js_sampler_repeat_wall). "Not woken since" is known exactly, not guessed from a
 * small CPU time: the scheduler's switch-in count of the thread (schedcount.h) is the one its sample's handler read,
 * or its CPU clock has not moved at all since the engine last found it so. A sample of a running thread is never
 * credited again: a thread can leave that stack for a long sleep in a few microseconds of CPU.
 */
#include "engine/engine.h"
#include "engine/jitter.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample/sampler.h"
#include "sample/schedcount.h"
#include "sample/threads.h"
#include "util/monotime.h"

#define WALL_PER_TICK 16          /* threads signalled per tick */
#define WALL_VISITS_PER_TICK 32   /* threads looked at per tick (a CPU-clock read each) */
#define WALL_SLOTS_PER_TICK JS_THREADS_MAX /* table slots passed per tick at most: one round of the table */
#define WALL_TAG 0x5741ULL        /* "WA": the upper 16 bits of a wall signal's value */
#define WALL_TAG_SHIFT 48
#define WALL_MAX_WEIGHT 0xFFFFFFFFULL
#define WALL_SLICE_NS 100000      /* the timer thread's time slice: the shortest the kernel grants (0.1 ms) */

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
    _Atomic uint64_t sent_total; /* signals sent since start (read by the session's stop line) */
} W;

/* CPU time of thread tid (its per-thread CPU clock); 0 if unreadable. */
static uint64_t thread_cpu_ns(int tid)
{
    struct timespec ts;
    if (clock_gettime((clockid_t)((~(unsigned)tid << 3) | 6), &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleep until CLOCK_MONOTONIC time `until`, in steps of at most 50 ms so stop is seen soon. */
static void sleep_until(uint64_t until)
{
    for (uint64_t now = js_mono_ns(); now < until && !atomic_load(&W.stop); now = js_mono_ns()) {
        uint64_t step = until - now > 50000000ULL ? now + 50000000ULL : until;
        struct timespec ts = {(time_t)(step / 1000000000ULL), (long)(step % 1000000000ULL)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

/* 1 if thread tid (slot t) has stayed blocked where its last wall sample caught it, so that sample may be credited
 * again: it has not been switched in since that sample's handler read its count, or its CPU time has not moved since
 * the last time this found it so (a clock read instead of a /proc read). */
static int still_blocked(js_thread *t, int tid)
{
    uint64_t cpu = thread_cpu_ns(tid), seen = atomic_load(&t->wall_cpu_ns);
    if (!cpu) return 0;
    if (cpu == seen) return 1;
    uint64_t sw = atomic_load(&t->wall_switches);
    if (!sw || js_sched_switch_ins(tid) != sw) return 0;
    atomic_store(&t->wall_cpu_ns, cpu); /* its CPU time now stays put until it is woken */
    return 1;
}

/* Look at thread t: credit its last sample again if it has stayed blocked since, else signal it. */
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
    uint32_t key = atomic_load(&t->wall_key);
    if (key && still_blocked(t, tid)) {
        if (key == JS_WALL_KEY_NOTHING) return; /* blocked without Java frames: nothing to sample */
        if (js_sampler_repeat_wall(t, w, js_mono_ns()) == 0) {
            W.repeated++;
            return;
        }
    }
    /* The weight waits in the slot for the handler, which takes it all. While it waits, a signal is on its way (a
     * thread starved of CPU, or blocking the signal): the weight adds up for that one and no other is sent. (The kernel
     * would merge a second SIGPROF, but a real-time signal, chosen when another profiler has SIGPROF, queues: one a
     * tick, up to the pending signals all the user's processes may have.) */
    if (atomic_fetch_add(&t->wall_due, w) != 0) return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = W.sig;
    si.si_code = SI_QUEUE;
    si.si_pid = W.pid;
    si.si_uid = getuid();
    si.si_value.sival_ptr = (void *)(uintptr_t)(WALL_TAG << WALL_TAG_SHIFT);
    if (syscall(SYS_rt_tgsigqueueinfo, W.pid, tid, W.sig, &si) == 0) W.sent++, atomic_fetch_add(&W.sent_total, 1);
    else atomic_store(&t->wall_due, 0); /* none on its way (the thread ended, or the queue is full): the next tick's */
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

/* The calling thread asks the scheduler for the shortest time slice (EEVDF's custom slices, Linux 6.12 and later;
 * an older kernel ignores it for ordinary threads). A waking thread with a short slice gets the CPU at once instead of
 * waiting for the running thread's slice to end, so ticks stay on time on busy CPUs: a late tick would find a thread
 * that was computing at the tick's time already asleep (its computing is what delayed the tick), and wall profiles of a
 * loaded machine would blame sleeping for time spent computing. No privilege is needed; a refusal changes nothing. */
static void ask_short_slices(void)
{
    struct { /* struct sched_attr, first version (48 bytes) */
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.policy = SCHED_OTHER;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0); /* the thread's own, kept as it is */
    if (nice == -1 && errno != 0) return;
    a.nice = nice;
    a.runtime = WALL_SLICE_NS;
    (void)syscall(SYS_sched_setattr, 0, &a, 0);
}

static void *wall_main(void *arg)
{
    pthread_setname_np(pthread_self(), "jsampler-wall");
    W.self_tid = (int)syscall(SYS_gettid);
    ask_short_slices();
    /* Ticks keep to their schedule: one that came late does not push the later ones back (the rate, and so each
     * sample's weight in time, stay what the interval says); one that fell a whole period behind starts afresh. */
    uint64_t next = js_mono_ns();
    while (!atomic_load(&W.stop)) {
        next += js_jitter_next((uint64_t)W.period_ns, W.jitter);
        sleep_until(next);
        if (atomic_load(&W.stop)) break;
        uint64_t now = js_mono_ns();
        if (now > next + (uint64_t)W.period_ns) next = now;
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
    atomic_store(&t->wall_due, 0);
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
    atomic_store(&W.sent_total, 0);
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

uint64_t js_engine_wall_signals(void)
{
    return atomic_load(&W.sent_total);
}

/* 1 if queued by this process with the wall tag, else 0 (the weight waits in the thread's slot: sampler.h). */
static uint64_t wall_weight(const siginfo_t *si, js_thread *t)
{
    if (si->si_code != SI_QUEUE || si->si_pid != W.pid) return 0;
    return (uint64_t)(uintptr_t)si->si_value.sival_ptr >> WALL_TAG_SHIFT == WALL_TAG;
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
