/* engine_perf.c - "cpu": one perf_events software cpu-clock counter per thread, its overflow
 * signal sent to exactly that thread (F_SETOWN_EX + F_OWNER_TID). Counters stay enabled; the
 * kernel's hrtimer makes the period exact in thread CPU time. With jitter, each overflow sets the
 * next period (PERF_EVENT_IOC_PERIOD, taken at the next hrtimer restart).
 *
 * Each counter is a file descriptor. The counters take at most FD_SHARE_NUM/FD_SHARE_DEN of the
 * process's open-file limit (RLIMIT_NOFILE, soft), and never bring the process, with the files it had
 * open at start, past FD_CEIL_NUM/FD_CEIL_DEN of it: the JVM and the application keep the rest. Past that (or when
 * the kernel says EMFILE/ENFILE) a thread of a CPU-time counter (cpu-clock, task-clock) gets ctimer's
 * per-thread CPU timer instead (its handle tagged CTIMER_TAG), which uses no file; one line says so.
 */
#include "engine/engine.h"
#include "engine/jitter.h"
#include "engine_int.h"
#include "perf_ring_int.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <linux/hw_breakpoint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KSTACK_MAX 32 /* kernel frames kept per sample (the sysctl allows 127) */
#define FD_SHARE_NUM 1 /* counters take at most half of RLIMIT_NOFILE ... */
#define FD_SHARE_DEN 2
#define FD_CEIL_NUM 3 /* ... and never bring the process past three quarters of it */
#define FD_CEIL_DEN 4
#define CTIMER_TAG ((intptr_t)1 << 40) /* a handle that is a CPU timer, not a perf fd */

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
static int target_cpu = -1; /* target-cpu=: the one CPU the counters count on, -1 = all */
static int user_only;       /* alluser: kernel mode never counted */
static long long fd_budget = -1;  /* counters this session may open (-1: no limit) */
static _Atomic long long fds_open; /* counters open now */
static _Atomic int fell_back;      /* a thread got a CPU timer for want of a file: said once a session */
static long long fd_limit, fd_used_at_start;

/* Every counter open, by file number: the thread it counts (its tid), 0 when none. It lets a stop find a counter
 * that no thread slot holds any more (js_engine_perf_close_escaped), which must never happen but once did, so
 * that no file outlives the session whatever the path. Files past REG_MAX are not registered. Process-wide, as
 * the files are. */
#define REG_MAX 65536
static _Atomic int reg_tid[REG_MAX];

/* Notes fd as open for tid (tid 0: closed). */
static void reg_set(int fd, int tid)
{
    if (fd >= 0 && fd < REG_MAX) atomic_store(&reg_tid[fd], tid);
}

/* Open a disabled cpu-clock counter for tid; fd or -errno. */
static int open_counter(int tid, int excl_kernel)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = ev_type;
    a.config = ev_config;
    if (ev_type == PERF_TYPE_BREAKPOINT) { /* a native function's calls: config is its address */
        a.config = 0;
        a.bp_type = HW_BREAKPOINT_X;
        a.bp_addr = ev_config;
        a.bp_len = sizeof(long);
    }
    a.sample_period = (uint64_t)period_ns;
    a.disabled = 1;
    a.exclude_kernel = excl_kernel ? 1 : 0;
    a.exclude_hv = 1;
    if (kernel_stacks && !excl_kernel) { /* the kernel part of the stack, into the counter's ring */
        a.sample_type = PERF_SAMPLE_CALLCHAIN;
        a.exclude_callchain_user = 1;
        a.sample_max_stack = KSTACK_MAX;
    }
    long fd = syscall(SYS_perf_event_open, &a, tid, target_cpu, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

long long js_engine_perf_counters_open(void)
{
    return atomic_load(&fds_open);
}

void js_engine_perf_scope(int cpu, int user)
{
    target_cpu = cpu;
    user_only = user;
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

/* Files open in this process now (-1 if /proc cannot say). */
static long long open_files(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    long long n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* The counters this session may open under RLIMIT_NOFILE (-1: unlimited). */
static void plan_fds(void)
{
    struct rlimit rl;
    fd_budget = -1;
    fd_limit = fd_used_at_start = 0;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
    long long used = open_files();
    fd_limit = (long long)rl.rlim_cur;
    fd_used_at_start = used < 0 ? 0 : used;
    long long share = fd_limit * FD_SHARE_NUM / FD_SHARE_DEN, ceil = fd_limit * FD_CEIL_NUM / FD_CEIL_DEN - fd_used_at_start;
    fd_budget = share < ceil ? share : ceil;
    if (fd_budget < 0) fd_budget = 0;
}

/* 1 if the counter is of CPU time, which ctimer measures as well. */
static int cpu_time_counter(void)
{
    return ev_type == PERF_TYPE_SOFTWARE && (ev_config == PERF_COUNT_SW_CPU_CLOCK || ev_config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Probe with a counter on the calling thread: decides exclude_kernel and whether perf works. */
static int perf_start(long long interval_ns, int jitter, int signo, char *err, size_t errlen)
{
    period_ns = interval_ns;
    jitter_on = jitter;
    sig = signo;
    js_ctimer_setup(interval_ns, jitter, signo); /* for threads past the file budget */
    atomic_store(&fell_back, 0);
    plan_fds();
    exclude_kernel = user_only;
    if (user_only && ev_needs_kernel) {
        snprintf(err, errlen, "event %s happens in the kernel: with alluser nothing would be counted", ev_name);
        return -1;
    }
    int fd = open_counter(0, exclude_kernel);
    if (target_cpu >= 0 && (fd == -EINVAL || fd == -ENODEV || fd == -ENXIO)) {
        snprintf(err, errlen, "target-cpu=%d: no such CPU here (perf_event_open says %s; CPUs 0..%ld are online)",
                 target_cpu, strerror(-fd), sysconf(_SC_NPROCESSORS_ONLN) - 1);
        return -1;
    }
    if (!exclude_kernel && (fd == -EACCES || fd == -EPERM)) {
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

/* A thread the file budget leaves without a counter: a CPU timer when the counter is of CPU time (one line the
 * first time), else no sampling (err). why: the reason. */
static int without_file(int tid, _Atomic intptr_t *handle, const char *why, char *err, size_t errlen)
{
    int first = !atomic_exchange(&fell_back, 1);
    if (!cpu_time_counter() || target_cpu >= 0 || user_only) { /* a CPU timer counts on every CPU, in every mode */
        if (first)
            js_warn("%s: %s; threads started from now on are not sampled (only CPU-time counters on every CPU and "
                    "in every mode can fall back to ctimer)", ev_name, why);
        snprintf(err, errlen, "%s: %s", ev_name, why);
        return -1;
    }
    if (first)
        js_warn("cpu: %s; threads started from now on are sampled by ctimer (a per-thread CPU timer, which needs "
                "no file)", why);
    return js_ctimer_attach(tid, handle, CTIMER_TAG, err, errlen);
}

static int perf_thread_start(int tid, _Atomic intptr_t *handle, char *err, size_t errlen)
{
    char why[256];
    if (tid <= 0) { /* perf_event_open would take 0 as the calling thread, whichever it is */
        snprintf(err, errlen, "no thread to count (tid %d)", tid);
        return -1;
    }
    if (fd_budget >= 0 && atomic_load(&fds_open) >= fd_budget) {
        snprintf(why, sizeof why, "%lld perf_events counters are open, the share of the open-file limit the profiler takes "
                 "(RLIMIT_NOFILE %lld, %lld files open at start)", fd_budget, fd_limit, fd_used_at_start);
        return without_file(tid, handle, why, err, errlen);
    }
    int fd = open_counter(tid, exclude_kernel);
    if (fd == -EMFILE || fd == -ENFILE) {
        snprintf(why, sizeof why, "perf_event_open(tid %d): %s", tid, strerror(-fd));
        return without_file(tid, handle, why, err, errlen);
    }
    if (fd < 0) {
        snprintf(err, errlen, "perf_event_open(tid %d): %s", tid, strerror(-fd));
        return -1;
    }
    atomic_fetch_add(&fds_open, 1);
    reg_set(fd, tid); /* > 0: refused above otherwise */
    struct f_owner_ex owner = {F_OWNER_TID, tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, sig) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0) {
        snprintf(err, errlen, "fcntl on perf counter of tid %d: %s", tid, strerror(errno));
        reg_set(fd, 0);
        close(fd);
        atomic_fetch_sub(&fds_open, 1);
        return -1;
    }
    if (kernel_stacks && !exclude_kernel) js_perf_ring_attach(fd); /* without it: no kernel frames, samples still */
    atomic_store(handle, fd);
    if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
        snprintf(err, errlen, "enabling perf counter of tid %d: %s", tid, strerror(errno));
        atomic_store(handle, -1);
        js_perf_ring_detach(fd);
        reg_set(fd, 0);
        close(fd);
        atomic_fetch_sub(&fds_open, 1);
        return -1;
    }
    return 0;
}

/* No new overflow; the fd stays valid for a handler still running. */
static void perf_thread_pause(_Atomic intptr_t *handle)
{
    intptr_t h = atomic_load(handle);
    if (h >= 0 && (h & CTIMER_TAG)) js_ctimer_pause(handle, CTIMER_TAG);
    else if (h >= 0) ioctl((int)h, PERF_EVENT_IOC_DISABLE, 0);
}

/* Disable first so no new overflow is raised, then forget the fd, then close it. */
static void perf_thread_stop(_Atomic intptr_t *handle)
{
    intptr_t h = atomic_load(handle);
    if (h >= 0 && (h & CTIMER_TAG)) {
        js_ctimer_detach(handle, CTIMER_TAG);
        return;
    }
    int fd = (int)atomic_exchange(handle, -1);
    if (fd < 0) return;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    js_perf_ring_detach(fd);
    reg_set(fd, 0);
    close(fd);
    atomic_fetch_sub(&fds_open, 1);
}

int js_engine_perf_close_escaped(char *tids, size_t len)
{
    int n = 0;
    size_t used = 0;
    if (len) tids[0] = 0;
    for (int fd = 0; fd < REG_MAX && atomic_load(&fds_open) > 0; fd++) {
        int tid = atomic_exchange(&reg_tid[fd], 0);
        if (!tid) continue;
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        js_perf_ring_detach(fd);
        close(fd);
        atomic_fetch_sub(&fds_open, 1);
        if (used < len) {
            int k = snprintf(tids + used, len - used, "%s%d", n ? "," : "", tid);
            used += k > 0 ? (size_t)k : 0;
        }
        n++;
    }
    return n;
}

/* Signal-safe: the kernel frames of this thread's last overflow. */
static int perf_kernel_stack(intptr_t handle, uintptr_t *ips, int max)
{
    return handle >= 0 && !(handle & CTIMER_TAG) ? js_perf_ring_kernel_ips((int)handle, ips, max) : 0;
}

/* Ours if the kernel raised it (si_code > 0) for this thread's current counter, or if it is the CPU timer of a
 * thread that has one instead. With jitter, every JS_JITTER_RUN-th sample of a counter's thread draws its next
 * period (see the top of the file). */
static uint64_t perf_weight(const siginfo_t *si, js_thread *t)
{
    intptr_t handle = t ? atomic_load_explicit(&t->handle, memory_order_relaxed) : -1;
    if (handle >= 0 && (handle & CTIMER_TAG)) return js_ctimer_weight(si, (int)(handle & ~CTIMER_TAG), &t->engine_countdown);
    if (si->si_code <= 0 || handle < 0) return 0;
    if (si->si_fd != (int)handle) return 0;
    if (jitter_on && js_jitter_due(&t->engine_countdown)) {
        uint64_t next = js_jitter_next((uint64_t)period_ns, 1);
        ioctl((int)handle, PERF_EVENT_IOC_PERIOD, &next);
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
