/* budget.c - see budget.h. */
#include "sample/budget.h"

#include <stdatomic.h>
#include <time.h>

#define RLX memory_order_relaxed

/* The calling thread's CPU time in ns (a system call, signal-safe); 0 if it cannot be read. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int64_t cap_of(long long interval_ns)
{
    return interval_ns > JS_BUDGET_MIN_CAP_NS ? interval_ns : JS_BUDGET_MIN_CAP_NS;
}

/* A handler at most this long on the clock is charged that time unread (1/16 of the interval: a preempted one
 * is then overcharged by little next to the credit one interval earns, a quarter of it). */
static uint64_t short_of(long long interval_ns)
{
    uint64_t s = interval_ns > 0 ? (uint64_t)interval_ns / 16 : 0;
    return s < JS_BUDGET_SHORT_MAX_NS ? s : JS_BUDGET_SHORT_MAX_NS;
}

/* Settle t's credit at its CPU time now: the credit earned since the last settlement (CPU time outside the
 * handlers charged since, which were charged unread), capped. The credit then. */
static int64_t settle(js_thread *t, int64_t cap, uint64_t now)
{
    uint64_t last = atomic_load_explicit(&t->handler_cpu_ns, RLX);
    int64_t credit = atomic_load_explicit(&t->handler_credit_ns, RLX);
    if (last == 0) {
        credit = cap; /* not settled yet: a thread starts with the cap */
    } else if (now > last) {
        uint64_t outside = now - last, paid = atomic_load_explicit(&t->handler_pending_ns, RLX);
        credit += (int64_t)((outside > paid ? outside - paid : 0) / JS_BUDGET_QUIET_FACTOR);
    }
    if (credit > cap) credit = cap;
    atomic_store_explicit(&t->handler_credit_ns, credit, RLX);
    atomic_store_explicit(&t->handler_cpu_ns, now, RLX);
    atomic_store_explicit(&t->handler_pending_ns, 0, RLX);
    return credit;
}

int js_budget_enter(js_thread *t, long long interval_ns, js_budget_mark *m)
{
    int64_t cap = cap_of(interval_ns);
    m->read = atomic_load_explicit(&t->handler_cpu_ns, RLX) == 0 ||
              atomic_load_explicit(&t->handler_credit_ns, RLX) < cap - cap / JS_BUDGET_UNREAD_PART ||
              atomic_load_explicit(&t->handler_read_next, RLX);
    if (!m->read) return 0; /* nearly the whole cap left before this settlement's earnings: not spent either way */
    m->cpu0 = thread_cpu_ns();
    return settle(t, cap, m->cpu0) < 0;
}

void js_budget_charge(js_thread *t, long long interval_ns, const js_budget_mark *m, uint64_t clock_ns)
{
    uint64_t shrt = short_of(interval_ns);
    int64_t credit = atomic_load_explicit(&t->handler_credit_ns, RLX);
    if (clock_ns > shrt && m->read) { /* long, start known: its CPU time exactly, and settled at its end */
        uint64_t cpu1 = thread_cpu_ns();
        uint64_t cost = cpu1 > m->cpu0 ? cpu1 - m->cpu0 : 0;
        /* the first long one after short ones pays at most half the cap: a stalled vCPU's time, which the VM charges
         * to the thread's CPU clock, then costs no throttled samples; a second long one in a row pays in full */
        uint64_t half = (uint64_t)cap_of(interval_ns) / 2;
        if (cost > half && !atomic_load_explicit(&t->handler_read_next, RLX)) cost = half;
        atomic_store_explicit(&t->handler_credit_ns, credit - (int64_t)cost, RLX);
        if (cpu1) atomic_store_explicit(&t->handler_cpu_ns, cpu1, RLX);
        atomic_store_explicit(&t->handler_read_next, cost > shrt, RLX); /* preempted, not costly: unread again */
        return;
    }
    /* Short: its clock time. Long with its start unread (preempted, a stalled vCPU, or the stack got deep): its CPU
     * time is unknown, and its clock time may be milliseconds the thread did not run, so it pays no more than a
     * short one and the next handler reads the clock (a deep stack then pays its CPU time from the next sample on). */
    uint64_t cost = clock_ns > shrt ? shrt : clock_ns;
    atomic_store_explicit(&t->handler_credit_ns, credit - (int64_t)cost, RLX);
    atomic_fetch_add_explicit(&t->handler_pending_ns, cost, RLX);
    atomic_store_explicit(&t->handler_read_next, clock_ns > shrt, RLX);
}

void js_budget_reset(js_thread *t)
{
    atomic_store_explicit(&t->handler_cpu_ns, 0, RLX);
    atomic_store_explicit(&t->handler_credit_ns, 0, RLX);
    atomic_store_explicit(&t->handler_pending_ns, 0, RLX);
    atomic_store_explicit(&t->handler_read_next, 0, RLX);
}
