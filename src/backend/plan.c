/* plan.c - see backend_int.h: a sampling interval whose recording fits the upload limit. */
#include "backend_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROBE_MS 500 /* CPU probe when no earlier reading is at hand */

long long js_plan_process_cpu_ns(void)
{
    FILE *f = fopen("/proc/self/stat", "re");
    if (!f) return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return js_plan_stat_cpu_ns(buf, sysconf(_SC_CLK_TCK));
}

long long js_plan_stat_cpu_ns(const char *stat, long hz)
{
    const char *p = strrchr(stat, ')'); /* the command name may hold spaces and parentheses */
    unsigned long long ut = 0, st = 0;
    if (!p || !p[1] || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    if (hz <= 0) hz = 100;
    unsigned long long ticks = ut + st < ut ? ULLONG_MAX : ut + st, per = 1000000000ULL / (unsigned long long)hz;
    return per && ticks > (unsigned long long)LLONG_MAX / per ? -1 : (long long)(ticks * per);
}

/* The interval for a format of per_sample bytes a sample and fixed bytes. */
static long long plan(long long requested_ns, double cpus, long long duration_s, uint64_t upload_max, double *est,
                      double per_sample, double fixed)
{
    if (cpus < 0.05) cpus = 0.05; /* an idle probe says little about the task: assume some work */
    double budget = (double)upload_max * JS_PLAN_BUDGET - fixed;
    if (budget < (double)upload_max * 0.25) budget = (double)upload_max * 0.25;
    double cpu_ns = cpus * (double)duration_s * 1e9; /* CPU time the recording will sample */
    long long iv = requested_ns;
    double need = cpu_ns * per_sample / budget; /* the interval at which it just fits */
    if ((double)iv < need) {
        iv = (long long)need;
        iv = (iv + 99999) / 100000 * 100000; /* whole tenths of a millisecond, rounded up */
    }
    if (est) *est = fixed + cpu_ns / (double)iv * per_sample;
    return iv;
}

long long js_plan_interval(long long requested_ns, double cpus, long long duration_s, uint64_t upload_max, double *est)
{
    return plan(requested_ns, cpus, duration_s, upload_max, est, JS_PLAN_BYTES_PER_SAMPLE, JS_PLAN_FIXED_BYTES);
}

long long js_plan_interval_pprof(long long requested_ns, double cpus, long long duration_s, uint64_t upload_max,
                                 double *est)
{
    return plan(requested_ns, cpus, duration_s, upload_max, est, JS_PLAN_PPROF_BYTES_PER_SAMPLE,
                JS_PLAN_PPROF_FIXED_BYTES);
}

double js_plan_busy_cpus(long long probe_cpu_ns, long long probe_at_ns, long long now_ns)
{
    long long cpu = js_plan_process_cpu_ns();
    if (probe_at_ns && now_ns - probe_at_ns >= 200000000LL && cpu >= probe_cpu_ns)
        return (double)(cpu - probe_cpu_ns) / (double)(now_ns - probe_at_ns);
    struct timespec ts = {0, PROBE_MS * 1000000L};
    nanosleep(&ts, NULL);
    long long cpu2 = js_plan_process_cpu_ns();
    return cpu < 0 || cpu2 < cpu ? 1.0 : (double)(cpu2 - cpu) / (PROBE_MS * 1e6);
}
