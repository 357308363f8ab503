/* budget.h - how much of a thread's CPU its cpu-sample handlers may use (signal-safe).
 *
 * Each thread earns credit at 1/JS_BUDGET_QUIET_FACTOR of its CPU time outside handlers, capped at one sampling
 * interval or JS_BUDGET_MIN_CAP_NS, whichever is more; each handler pays what it cost. A sample that finds the credit
 * spent is not walked (the caller stores it as throttled). Only the thread's own handlers touch its budget (our
 * signals are masked while one runs), so the fields need no locking.
 *
 * The thread's CPU clock is a system call (0.2-1.5 us on these VMs, a tenth of a short handler), so it is read only
 * where the answer depends on it: at a handler's start when the credit is below the cap less a
 * 1/JS_BUDGET_UNREAD_PART of it (or the thread is new, or its last handler was long); at its end when the
 * handler was long on the clock. A short handler is charged its time on the clock, an upper bound of its CPU time;
 * a long one whose start was not read is charged as a short one (its clock time may be a stalled vCPU's
 * milliseconds: charged whole, they throttled the samples after it) and makes the next handler read the clock.
 * So the credit a burst can draw on is the cap less one such part at most, as when every handler read the clock.
 * A long handler that follows short ones pays at most half the cap: its CPU time can be a stalled vCPU's too (the
 * VM charges the host's time to whatever thread ran; one handler of 52 ms throttled 87 samples after it), while
 * handlers costly on the whole are long one after another, and from the second on they pay in full.
 */
#ifndef JS_BUDGET_H
#define JS_BUDGET_H

#include <stdint.h>

#include "sample/threads.h"

/* A thread's cpu handlers may use at most 1/(1+JS_BUDGET_QUIET_FACTOR) of its CPU time. */
#define JS_BUDGET_QUIET_FACTOR 4
/* The credit's cap is one sampling interval, and never below this: a burst the budget absorbs. On a VM the thread's
 * CPU clock jumps by up to 1.5 ms at once (measured: time the host took, charged to whatever ran), and a thread's
 * first handlers are cold; a cap of one 1 ms interval turned one such handler into throttled samples. */
#define JS_BUDGET_MIN_CAP_NS 4000000LL
/* The credit unread handlers may spend before a handler reads the clock: 1/16 of the cap (250 us of a 4 ms cap,
 * the credit one 1 ms interval earns). */
#define JS_BUDGET_UNREAD_PART 16
/* A handler is short if it took at most 1/16 of the interval on the clock, and never more than this. */
#define JS_BUDGET_SHORT_MAX_NS 50000ULL

typedef struct {
    uint64_t cpu0; /* the thread's CPU time at the handler's start, if read */
    int read;      /* 1 if cpu0 was read */
} js_budget_mark;

/* At the start of a cpu handler of thread t sampling every interval_ns: 1 if its credit is spent and the sample must
 * not be walked (the budget is settled then, nothing is charged), else 0; fills m for js_budget_charge. */
int js_budget_enter(js_thread *t, long long interval_ns, js_budget_mark *m);
/* At the end of a walked sample's handler that ran clock_ns on the monotonic clock since js_budget_enter. */
void js_budget_charge(js_thread *t, long long interval_ns, const js_budget_mark *m, uint64_t clock_ns);
/* Forget thread t's budget: its next handler starts with a full credit (slot reuse, tests). */
void js_budget_reset(js_thread *t);

#endif
