/* engine_perf.c - "cpu": one perf_events software cpu-clock counter per thread, its overflow
 * signal sent to exactly that thread (F_SETOWN_EX + F_OWNER_TID). Counters stay enabled; the
 * kernel's hrtimer makes the period exact in thread CPU time. With jitter, each overflow sets the
 * next period (PERF_EVENT_IOC_PERIOD, taken at the next hrtimer restart).
 */
#include "engine/engine.h"
#include "engine/jitter.h"
#include "perf_ring_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KSTACK_MAX 32 /* kernel frames kept per sample (the sysctl allows 127) */

/* Settings of the running engine (one per process, read by the handler). */
static _Atomic long long period_ns; /* read by handlers: atomic */
static uint32_t ev_type = PERF_TYPE_SOFTWARE; /* the counter: cpu-clock unless js_engine_perf_select chose another */
static uint64_t ev_config = PERF_COUNT_SW_CPU_CLOCK;
static const char *ev_name = "cpu-clock";
static int ev_needs_kernel;                   /* counts only in kernel mode (context-switches, tracepoints) */
static int kernel_stacks;                     /* record each overflow's kernel call chain (cstack, kernel allowed) */
static _Atomic int jitter_on;
static int sig;
static int exclude_kernel;

/* Open a disabled cpu-clock counter for tid; fd or -errno. */
static int open_counter(int tid, int excl_kernel)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = ev_type;
    a.config = ev_config;
    a.sample_period = (uint64_t)period_ns;
    a.disabled = 1;
    a.exclude_kernel = excl_kernel ? 1 : 0;
    a.exclude_hv = 1;
    if (kernel_stacks && !excl_kernel) { /* the kernel part of the stack, into the counter's ring */
        a.sample_type = PERF_SAMPLE_CALLCHAIN;
        a.exclude_callchain_user = 1;
        a.sample_max_stack = KSTACK_MAX;
    }
    long fd = syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

void js_engine_perf_kernel_stacks(int on)
{
    kernel_stacks = on;
}

void js_engine_perf_select(uint32_t type, uint64_t config, const char *name)
{
    ev_type = type;
    ev_config = config;
    ev_name = name;
    ev_needs_kernel = type == PERF_TYPE_TRACEPOINT || (type == PERF_TYPE_SOFTWARE && config == PERF_COUNT_SW_CONTEXT_SWITCHES);
}

/* Probe with a counter on the calling thread: decides exclude_kernel and whether perf works. */
static int perf_start(long long interval_ns, int jitter, int signo, char *err, size_t errlen)
{
    period_ns = interval_ns;
    jitter_on = jitter;
    sig = signo;
    exclude_kernel = 0;
    int fd = open_counter(0, 0);
    if (fd == -EACCES || fd == -EPERM) {
        exclude_kernel = 1;
        fd = open_counter(0, 1);
    }
    if (fd < 0 && ev_type != PERF_TYPE_SOFTWARE && (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV)) {
        snprintf(err, errlen, "event %s: this machine has no hardware performance counters (no PMU: "
                 "perf_event_open says %s; virtual machines often have none); use a software event instead: cpu "
                 "(cpu-clock), task-clock, page-faults, context-switches or cpu-migrations", ev_name, strerror(-fd));
        return -1;
    }
    if (fd < 0) {
        snprintf(err, errlen, "perf_event_open(%s): %s", ev_name, strerror(-fd));
        return -1;
    }
    close(fd);
    if (exclude_kernel && ev_needs_kernel) {
        snprintf(err, errlen, "event %s: it happens in the kernel, and this process may only count "
                 "user-mode events (kernel.perf_event_paranoid > 1 without CAP_PERFMON)", ev_name);
        return -1;
    }
    return 0;
}

static void perf_stop(void)
{
}

static int perf_thread_start(int tid, _Atomic intptr_t *handle, char *err, size_t errlen)
{
    int fd = open_counter(tid, exclude_kernel);
    if (fd < 0) {
        snprintf(err, errlen, "perf_event_open(tid %d): %s", tid, strerror(-fd));
        return -1;
    }
    struct f_owner_ex owner = {F_OWNER_TID, tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, sig) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0) {
        snprintf(err, errlen, "fcntl on perf counter of tid %d: %s", tid, strerror(errno));
        close(fd);
        return -1;
    }
    if (kernel_stacks && !exclude_kernel) js_perf_ring_attach(fd); /* without it: no kernel frames, samples still */
    atomic_store(handle, fd);
    if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
        snprintf(err, errlen, "enabling perf counter of tid %d: %s", tid, strerror(errno));
        atomic_store(handle, -1);
        js_perf_ring_detach(fd);
        close(fd);
        return -1;
    }
    return 0;
}

/* No new overflow; the fd stays valid for a handler still running. */
static void perf_thread_pause(_Atomic intptr_t *handle)
{
    int fd = (int)atomic_load(handle);
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

/* Disable first so no new overflow is raised, then forget the fd, then close it. */
static void perf_thread_stop(_Atomic intptr_t *handle)
{
    int fd = (int)atomic_exchange(handle, -1);
    if (fd < 0) return;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    js_perf_ring_detach(fd);
    close(fd);
}

/* Signal-safe: the kernel frames of this thread's last overflow. */
static int perf_kernel_stack(intptr_t handle, uintptr_t *ips, int max)
{
    return handle >= 0 ? js_perf_ring_kernel_ips((int)handle, ips, max) : 0;
}

/* Ours if the kernel raised it (si_code > 0) for this thread's current counter. With jitter, every
 * JS_JITTER_RUN-th sample of a thread draws its next period (see the top of the file). */
static uint64_t perf_weight(const siginfo_t *si, js_thread *t)
{
    intptr_t handle = t ? atomic_load_explicit(&t->handle, memory_order_relaxed) : -1;
    if (si->si_code <= 0 || handle < 0) return 0;
    if (si->si_fd != (int)handle) return 0;
    if (jitter_on) {
        uint32_t left = atomic_load_explicit(&t->engine_countdown, memory_order_relaxed);
        if (left == 0) {
            uint64_t next = js_jitter_next((uint64_t)period_ns, 1);
            ioctl((int)handle, PERF_EVENT_IOC_PERIOD, &next);
            left = JS_JITTER_RUN;
        }
        atomic_store_explicit(&t->engine_countdown, left - 1, memory_order_relaxed);
    }
    return 1;
}

const js_engine js_engine_perf = {
    .name = "cpu",
    .description = "perf_events cpu-clock",
    .per_thread = 1,
    .start = perf_start,
    .stop = perf_stop,
    .thread_start = perf_thread_start,
    .thread_pause = perf_thread_pause,
    .thread_stop = perf_thread_stop,
    .sample_weight = perf_weight,
    .kernel_stack = perf_kernel_stack,
};
