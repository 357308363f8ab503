/* sampler.c - see sampler.h. */
#include "sample/sampler.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample/safe_fmt.h"

#include "sample/stats.h"

/* Frame buffers claimed by handlers with a non-blocking try-lock; a handler that finds every
 * buffer busy drops its sample (counted). */
#define STRIPES 16

/* Process-wide handler state (a signal handler has no context pointer). */
static struct {
    _Atomic int armed;
    _Atomic int inside;
    js_weight_fn weight;
    const js_walker *walker;
    js_store *store;
    js_evring *ring; /* streamed events (JFR), or NULL */
    int depth;
    int signo;
    struct sigaction old;
    js_raw_frame *buffers; /* STRIPES * depth frames, mmapped once */
    size_t buffers_bytes;
    _Atomic int busy[STRIPES];
} S;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Claim a free frame buffer, starting at a tid-dependent stripe; -1 if all are busy. */
static int claim_stripe(int tid)
{
    for (int i = 0; i < STRIPES; i++) {
        int k = (tid + i) % STRIPES, expected = 0;
        if (atomic_compare_exchange_strong_explicit(&S.busy[k], &expected, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            return k;
    }
    return -1;
}

/* Walk the interrupted thread into buf; on failure one pseudo-frame naming the error. */
static int walk(void *uc, js_raw_frame *buf)
{
    int n = S.walker->walk(uc, buf, S.depth);
    if (n > 0) return n;
    js_stats_walk_error(n);
    buf[0].bci = n;
    buf[0].kind = JS_RF_ERROR;
    buf[0].method = NULL;
    return 1;
}

static void handler(int signo, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    atomic_fetch_add_explicit(&S.inside, 1, memory_order_acq_rel);
    if (!atomic_load_explicit(&S.armed, memory_order_acquire)) goto out;
    uint64_t t0 = now_ns();
    int tid = (int)syscall(SYS_gettid);
    js_thread *t = js_threads_find(tid);
    uint64_t w = S.weight(si, t ? atomic_load_explicit(&t->handle, memory_order_relaxed) : -1);
    if (w == 0) {
        js_stats_foreign_signal();
        goto out;
    }
    int k = claim_stripe(tid);
    if (k < 0) {
        js_stats_dropped(w);
        goto out;
    }
    js_raw_frame *buf = S.buffers + (size_t)k * (size_t)S.depth;
    int n = walk(uc, buf);
    uint32_t serial = t ? atomic_load_explicit(&t->serial, memory_order_relaxed) : 0;
    uint32_t id = js_store_add(S.store, buf, n, serial, w);
    atomic_store_explicit(&S.busy[k], 0, memory_order_release);
    if (id) {
        js_stats_sample(w);
        if (S.ring) {
            js_ring_event ev = {t0, id, serial, (uint32_t)(w > UINT32_MAX ? UINT32_MAX : w), 0};
            js_evring_put(S.ring, k, &ev);
        }
    } else {
        js_stats_dropped(w);
    }
    js_stats_handler_ns(now_ns() - t0);
out:
    atomic_fetch_sub_explicit(&S.inside, 1, memory_order_acq_rel);
    errno = saved_errno;
}

/* 1 if sig has no handler or ours. */
static int signal_free(int signo)
{
    struct sigaction cur;
    if (sigaction(signo, NULL, &cur) != 0) return 0;
    if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN)) return 1;
    return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == handler;
}

int js_sampler_install(int want_sigprof_only, char *err, size_t errlen)
{
    if (S.signo) {
        if (want_sigprof_only && S.signo != SIGPROF) {
            js_safe_fmt(err, errlen, "SIGPROF is owned by another handler (jsampler uses signal %d)", S.signo);
            return -1;
        }
        return S.signo;
    }
    const int candidates[] = {SIGPROF, SIGVTALRM, SIGRTMIN + 6, SIGRTMIN + 7};
    int n = want_sigprof_only ? 1 : (int)(sizeof candidates / sizeof candidates[0]);
    int chosen = -1;
    for (int i = 0; i < n && chosen < 0; i++)
        if (signal_free(candidates[i])) chosen = candidates[i];
    if (chosen < 0) {
        js_safe_fmt(err, errlen, want_sigprof_only ? "SIGPROF is owned by another handler"
                                                : "no free profiling signal (SIGPROF, SIGVTALRM, SIGRTMIN+6/7 taken)");
        return -1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < (int)(sizeof candidates / sizeof candidates[0]); i++) sigaddset(&sa.sa_mask, candidates[i]);
    if (sigaction(chosen, &sa, &S.old) != 0) {
        js_safe_fmt(err, errlen, "sigaction(%d): %s", chosen, js_safe_errstr(errno));
        return -1;
    }
    S.signo = chosen;
    return chosen;
}

int js_sampler_arm(js_weight_fn weight, const js_walker *w, js_store *s, js_evring *ring, int depth, char *err,
                   size_t errlen)
{
    size_t need = (size_t)STRIPES * (size_t)depth * sizeof(js_raw_frame);
    if (need > S.buffers_bytes) {
        if (S.buffers) munmap(S.buffers, S.buffers_bytes);
        S.buffers = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (S.buffers == MAP_FAILED) {
            S.buffers = NULL;
            S.buffers_bytes = 0;
            js_safe_fmt(err, errlen, "cannot reserve %zu bytes of frame buffers: %s", need, js_safe_errstr(errno));
            return -1;
        }
        S.buffers_bytes = need;
    }
    S.weight = weight;
    S.walker = w;
    S.store = s;
    S.ring = ring;
    S.depth = depth;
    atomic_store_explicit(&S.armed, 1, memory_order_release);
    return 0;
}

int js_sampler_disarm(void)
{
    atomic_store_explicit(&S.armed, 0, memory_order_release);
    for (int i = 0; i < 1000 && atomic_load(&S.inside) > 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return atomic_load(&S.inside);
}

void js_sampler_uninstall(void)
{
    if (!S.signo) return;
    sigaction(S.signo, &S.old, NULL);
    S.signo = 0;
}
