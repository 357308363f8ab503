/* threads.h - registry of the process's threads, as the sampler sees them.
 *
 * A fixed table of slots keyed by OS tid, open addressing with linear probing. js_threads_find
 * is async-signal-safe (lock-free probing); claim/release run on normal threads (JVMTI
 * callbacks, the housekeeping rescan) and are serialised among themselves by a spin flag.
 * Released slots do not accumulate: a deleted slot whose successor is empty becomes empty
 * itself (repeated backwards), so a miss stops at the end of its cluster instead of scanning
 * the table, however many threads have come and gone. Each slot carries a serial number that
 * never repeats, so samples stay attributed to the right thread even after its tid is reused,
 * and names recorded by serial outlive the thread.
 */
#ifndef JS_THREADS_H
#define JS_THREADS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define JS_THREADS_MAX 16384 /* slots; threads beyond this are not sampled (counted) */
#define JS_WALL_KEY_NOTHING 0xFFFFFFFFu /* wall_key of a thread blocked without Java frames (never a trace key) */

typedef struct {
    _Atomic int tid;            /* 0 free, -1 deleted, else OS tid */
    _Atomic uint32_t serial;    /* unique per registration, > 0 */
    _Atomic int armed;          /* engine attached (perf counter / timer) */
    _Atomic intptr_t handle;    /* engine's per-thread handle: perf fd, kernel timer id; -1 none */
    _Atomic uint32_t engine_countdown; /* the engine's own per-thread count (cpu, ctimer: samples to its next period draw) */
    _Atomic int seen;           /* rescan mark */
    _Atomic uint64_t handler_cpu_ns; /* handler budget (budget.h): the thread's CPU time when it was last settled, 0 */
    _Atomic int64_t handler_credit_ns; /* CPU time its handlers may still use */
    _Atomic uint64_t handler_pending_ns; /* handlers charged since the last settlement without a CPU clock read */
    _Atomic int handler_read_next;   /* 1: its next handler reads the CPU clock (the last one was long) */
    _Atomic uint64_t wall_tick;      /* wall engine: its tick when the thread was last visited, 0 never */
    _Atomic uint64_t wall_due;       /* ticks its next wall signal's sample stands for (signals do not carry it: a
                                      * second SIGPROF sent while one is pending is lost, its weight must not be) */
    _Atomic uint32_t wall_key;       /* the trace key of its last wall sample if that sample may be credited again
                                      * while the thread stays blocked (generation | id), JS_WALL_KEY_NOTHING if
                                      * it was blocked without Java frames (nothing to credit or sample), else 0 */
    _Atomic uint32_t wall_gen;       /* the full generation of the store that holds it */
    _Atomic uint16_t wall_state;     /* that sample's state */
    _Atomic uint64_t wall_switches;  /* the thread's switch-in count in that sample's handler (schedcount.h) */
    _Atomic uint64_t wall_cpu_ns;    /* its CPU time when the wall engine last found it still blocked there, 0 */
    _Atomic int unsampled;           /* the profiler's own thread, or excluded by filter=: wall skips it */
    _Atomic uintptr_t self;          /* pthread_self() of the thread a handler last found here by gettid, 0 (the
                                      * sampler's tid cache trusts a cached tid only if its slot names the caller) */
} js_thread;

/* Empty the table (no handler may be running). */
void js_threads_reset(void);
/* Signal-safe: the slot of tid, or NULL. */
js_thread *js_threads_find(int tid);
/* Find or create the slot of tid; *created set to 1 if new (with a serial never used before).
 * NULL if the table is full. */
js_thread *js_threads_claim(int tid, int *created);
/* Free the slot (its engine handle must already be released). */
void js_threads_release(js_thread *t);
/* The slot at index i (mod JS_THREADS_MAX) if it holds a live thread, else NULL (normal threads only). */
js_thread *js_threads_slot(uint32_t i);
/* Visit every live slot (normal threads only). */
void js_threads_foreach(void (*fn)(js_thread *t, void *ctx), void *ctx);
/* Slots a js_threads_find(tid) examines right now (tests and diagnostics; normal threads). */
int js_threads_probe_len(int tid);

#endif
