/* procsample.h - proc=N: what /proc says of the machine's busy or large processes, every N seconds, as
 * async-profiler's profiler.ProcessSample events in the JFR recording.
 *
 * A round reads /proc/PID/stat of every process (at most JS_PROC_MAX, and stops after JS_PROC_ROUND_NS); a process
 * seen for the first time only gives the baseline of its CPU time, so a process is reported from its second round
 * on, and only when it used at least 5% of one CPU since the round before or holds at least 5% of the machine's
 * RAM; only those get their status, io and cmdline files read. Normal threads only (the JFR writer's).
 */
#ifndef JS_PROCSAMPLE_H
#define JS_PROCSAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include "jfr/jfr_write.h"

#define JS_PROC_MAX 5000                 /* processes read per round */
#define JS_PROC_ROUND_NS 900000000ULL    /* a round gives up after this long */
#define JS_PROC_MIN_FRACTION 0.05        /* of one CPU, or of RAM, for a process to be reported */

typedef struct js_procsampler js_procsampler;

/* A sampler with no history; NULL if out of memory. */
js_procsampler *js_procsampler_create(void);
void js_procsampler_free(js_procsampler *ps);
/* One round at now_ns (CLOCK_MONOTONIC): emit(ctx, p) for each process reported. Returns the processes read. */
int js_procsampler_round(js_procsampler *ps, uint64_t now_ns, void (*emit)(void *ctx, const js_jfr_process *p),
                         void *ctx);

/* The parsers, over untrusted text (also fuzzed). /proc/PID/stat: pid, comm, state, ppid, faults, threads, sizes into
 * p; the CPU times and start time in clock ticks into the rest. 0, or -1 if malformed. */
int js_proc_parse_stat(const char *buf, size_t len, js_jfr_process *p, uint64_t *utime, uint64_t *stime,
                       uint64_t *start_ticks, uint64_t *rss_pages);
/* /proc/PID/status (Uid, VmSize, VmRSS, RssAnon, RssFile, RssShmem) and /proc/PID/io (read_bytes, write_bytes): the
 * lines found are stored, the others left as they were. */
void js_proc_parse_status(const char *buf, size_t len, js_jfr_process *p);
void js_proc_parse_io(const char *buf, size_t len, js_jfr_process *p);
/* /proc/PID/cmdline: arguments joined by single spaces into p->cmdline (cut), trailing spaces dropped. */
void js_proc_parse_cmdline(const char *buf, size_t len, js_jfr_process *p);

#endif
