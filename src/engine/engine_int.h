/* engine_int.h - what engines of this layer share: the per-thread CPU timer of ctimer, which the cpu engine
 * also uses for the threads it cannot give a perf_events counter (the open-file limit).
 *
 * A handle made here is the timer id or'ed with a tag the caller chooses (0 for ctimer itself), so one engine
 * can tell its two kinds of handle apart; the tag is stored before the timer is armed, as engine.h requires.
 */
#ifndef JS_ENGINE_INT_H
#define JS_ENGINE_INT_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Settings of the timers made from now on: mean period, jitter, signal. */
void js_ctimer_setup(long long interval_ns, int jitter, int signo);
/* A CPU timer of thread tid, its id | tag published in *handle before it is armed; 0, or -1 with err. */
int js_ctimer_attach(int tid, _Atomic intptr_t *handle, intptr_t tag, char *err, size_t errlen);
/* Disarm the timer (no more expiries); the handle stays valid for a handler still running. */
void js_ctimer_pause(_Atomic intptr_t *handle, intptr_t tag);
/* Take the handle out (-1 after) and delete its timer. */
void js_ctimer_detach(_Atomic intptr_t *handle, intptr_t tag);
/* Signal-safe: the weight of si for the timer id (tag removed), 0 if the signal is not that timer's. With jitter,
 * *countdown (the thread's signals to its next period draw) is counted down, and a draw made when it is 0. */
uint64_t js_ctimer_weight(const siginfo_t *si, int timerid, _Atomic uint32_t *countdown);

#endif
