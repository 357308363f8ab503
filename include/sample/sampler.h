/* sampler.h - the profiling signal handler: engine check -> stack walk -> store.
 *
 * The handler is async-signal-safe: no malloc, no locks that block, no stdio, no JVMTI/JNI;
 * errno is preserved. It writes only into memory prepared by js_sampler_arm. Its settings
 * are process-wide because a signal handler has no context argument.
 *
 * Handshakes (both Dekker-style, sequentially consistent on both sides):
 * - arm/disarm: a handler counts itself in, then checks `armed`; disarm clears `armed`, then
 *   waits for the count to reach zero. Either the handler sees disarmed or disarm sees it inside.
 * - store swap: a handler counts itself into the current store's slot, then re-reads which slot
 *   is current; the swapper publishes the new slot, then waits for the old slot's count to drain.
 * A wait that times out (a handler stuck inside, e.g. a stopped thread) is reported, and the
 * caller must then abandon - never reuse or free - the memory that handler may still write.
 *
 * Self-limiting cost: each thread's cpu handlers are timed in the thread's own CPU time (preemption by other
 * processes or the hypervisor does not count) and may use at most a fifth of it on average; a sample past that
 * budget is not walked but kept under a "[throttled]" pseudo-frame with its weight (never moved to another stack)
 * and counted as throttled, so a deep stack at a short interval cannot livelock a thread in its signal handler.
 *
 * Signals that are not ours (the engine's weight is 0) are passed to the handler installed
 * before ours, if there was one; a default or ignored disposition is left alone (counted).
 */
#ifndef JS_SAMPLER_H
#define JS_SAMPLER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "sample/evring.h"
#include "sample/native_walk.h"
#include "sample/store.h"
#include "sample/threads.h"
#include "sample/walker.h"

/* Signal-safe: the weight of a signal for thread t (NULL if the thread is unknown), 0 if the signal is not ours.
 * Supplied by the sampling engine (engine.h). */
typedef uint64_t (*js_weight_fn)(const siginfo_t *si, js_thread *t);

/* One source of profiling signals in a session (cpu and wall may run together): its weight function and
 * the kind (JS_SK_*) of its samples. The handler asks each in turn; the first non-zero weight wins. For JS_SK_WALL
 * the weight function only tells that the signal is ours: the sample's weight is what the wall engine added to
 * the thread's wall_due (threads.h), taken by the handler. */
/* Signal-safe: kernel frames of the thread's last event (engine.h's kernel_stack), or NULL. */
typedef int (*js_kstack_fn)(intptr_t handle, uintptr_t *ips, int max);

typedef struct {
    js_weight_fn weight;
    int kind;
    js_kstack_fn kstack; /* with cstack: the kernel part of a sample's stack, or NULL */
} js_signal_source;
#define JS_SAMPLER_MAX_SOURCES 2

/* Store pair keys carry the sample's kind above the thread serial: kind << JS_SAMPLER_KIND_SHIFT | serial
 * (serials are taken modulo 2^28 there). */
#define JS_SAMPLER_KIND_SHIFT 28
#define JS_SAMPLER_SERIAL_MASK ((1u << JS_SAMPLER_KIND_SHIFT) - 1)

/* An event a VM callback reports (alloc, lock) rather than a signal: its kind, weight and details. */
typedef struct {
    int kind;          /* JS_SK_ALLOC or JS_SK_LOCK */
    uint64_t weight;   /* bytes, ns */
    uint64_t value;    /* see js_ring_event */
    uint32_t cls;      /* class id */
    uint8_t sub;       /* JS_LOCK_* */
    uint8_t absolute;  /* park: value is a deadline in ms since the epoch, not a timeout */
    uint64_t ticks;    /* CLOCK_MONOTONIC ns of the event */
} js_sample_info;

/* Bits of a streamed event's trace key: (store generation mod 64) << JS_SAMPLER_GEN_SHIFT | trace
 * id. Trace ids fit below the shift (JS_STORE_MAX_TRACES = 2^24), keys stay within 31 bits. */
#define JS_SAMPLER_GEN_SHIFT 25
#define JS_SAMPLER_GEN_MASK 63u

/* Pick a free profiling signal (SIGPROF, SIGVTALRM, SIGRTMIN+6, SIGRTMIN+7: the first with no
 * handler) and install the handler; when every one is taken, share SIGPROF with its owner. itimer
 * needs SIGPROF to itself (want_sigprof_only). Returns the signal, or -1 with err. Idempotent. */
int js_sampler_install(int want_sigprof_only, char *err, size_t errlen);
/* 1 if the installed signal is shared with a handler installed before ours. */
int js_sampler_shared(void);
/* Begin accepting samples of the nsrc signal sources (0 for a session of VM events only), walked by
 * walker, into store, walking up to depth frames; each stored sample is also appended to ring when it is
 * not NULL (streamed outputs). interval_ns is the engines' shortest mean period (the throttle's
 * yardstick). 0, or -1 with err; -1 also when a handler that the last disarm gave up on is still inside after
 * a further 1 s (its settings are not rewritten under it). */
int js_sampler_arm(const js_signal_source *src, int nsrc, const js_walker *w, js_store *s, js_evring *ring,
                   int depth, long long interval_ns, char *err, size_t errlen);
/* Wall engine, normal thread: credit weight once more to the stack of t's last wall sample, for a thread that has
 * not run since (its stack cannot have changed), without signalling it. 0, or -1 when there is no such sample in
 * the current store (the caller then signals the thread). */
int js_sampler_repeat_wall(js_thread *t, uint64_t weight, uint64_t ticks);
/* Record an event a VM callback saw on thread tid, with its stack frames[0..n) (leaf first), into the
 * current store and ring, as the handler does with a sample; normal threads only (never a handler). 0, or
 * -1 if not armed or dropped (counted). Lock-free: takes part in the same handshakes as the handler. */
int js_sampler_record(const js_raw_frame *frames, int n, int tid, const js_sample_info *info);
/* Signal-safe (tlab.h's SIGTRAP hook): an allocation seen at ucontext uc of the calling thread, of the class at
 * klass (a Klass*), outside a TLAB or in a new one, of size bytes, standing for w bytes: its stack (walked as a
 * signal sample's, the VM's frames above its allocation entry dropped) under a JS_RF_KLASS frame, stored and
 * streamed as a JS_SK_ALLOC event. Counted as stored or dropped. */
void js_sampler_trap_alloc(void *uc, const void *klass, int outside, uint64_t size, uint64_t w);
/* Walk native frames too with w (cstack=fp|dwarf, prepared), from the next sample on; NULL turns it off. */
void js_sampler_set_cstack(const js_native_walker *w);
/* record-cpu: each cpu (JS_SK_EXEC) sample ends with a JS_RF_CPU root frame: fixed_cpu when it is >= 0 (the
 * counters count only on that CPU, target-cpu=, so every overflow happened there even if the thread moved before
 * the signal came), else the CPU its handler runs on. Set before js_sampler_arm, like the walker. */
void js_sampler_set_record_cpu(int on, int fixed_cpu);
/* Make next the store handlers write to and return the previous one once no handler is inside
 * it; NULL if a handler is still inside after 1 s (the old store must then be abandoned). */
js_store *js_sampler_swap_store(js_store *next);
/* Stop accepting samples and wait (bounded, 1 s) until no handler is inside; returns handlers still
 * inside after the wait (0 normally). When non-zero, the stores and ring last armed must be
 * abandoned; the frame buffers are abandoned by the sampler itself (the next arm maps new ones). */
int js_sampler_disarm(void);
/* 1 if no handler is inside at this instant: every handler that was inside at an earlier disarm has left. */
int js_sampler_idle(void);
/* Restore the previous signal disposition (agent unload). */
void js_sampler_uninstall(void);

#endif
