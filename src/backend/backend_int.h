/* backend_int.h - the task client's private parts: tasks and their ExecArgs, the size plan, the
 * recordings waiting in taskdir, and the SkyWalking calls. */
#ifndef JS_BACKEND_INT_H
#define JS_BACKEND_INT_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "backend/grpc.h"

#define JS_TASK_ID_MAX 128
#define JS_TASK_MAX_DURATION_S 1200 /* the SkyWalking Java agent's asyncprofiler.max_duration */
#define JS_TASK_MSG_MAX 512

/* One AsyncProfilerTaskQuery command. */
typedef struct {
    char serial[64];
    char id[JS_TASK_ID_MAX];
    long long create_ms;
    int duration_s;            /* as sent (clamped when run) */
    char exec_args[1024];
    char invalid[JS_TASK_MSG_MAX]; /* why the command could not be read ("" if it could) */
} js_sw_task;

/* ---- task_cmd.c: commands and ExecArgs (pure) ---- */

/* Fill t from a command's key/value arguments; 0, or -1 with err (missing TaskId, bad number). */
int js_task_from_args(const char *const *keys, const char *const *vals, size_t n, js_sw_task *t, char *err,
                      size_t errlen);

/* What ExecArgs asks of jsampler. */
typedef struct {
    char event[16];            /* the start command's event=: cpu, ctimer, itimer, else wall, alloc or lock */
    int timed;                 /* interval= applies: an execution event, or wall alone */
    long long interval_ns;     /* 0 = the default */
    char kinds[64];            /* wall[=], alloc[=], lock[=] tokens beside event= (',' joined) */
    char extra[512];           /* options passed through as they are (jstackdepth=, chunksize=, ...) */
    char notes[256];           /* what was accepted with a caveat, for the log */
} js_task_opts;

/* Read ExecArgs the way the SkyWalking UI writes them ("event=cpu,alloc,interval=5ms"). 0, or -1 with
 * err naming every token jsampler cannot honour. */
int js_task_parse_exec(const char *exec, js_task_opts *o, char *err, size_t errlen);
/* The dispatcher's start command of one recording segment: o's event, interval (when timed), kinds and
 * passed-through options, the size cap and the file. 0, or -1 when it does not fit len bytes. */
int js_task_start_command(const js_task_opts *o, long long interval_ns, uint64_t max_bytes, const char *file,
                          char *cmd, size_t len);

/* ---- plan.c: a sampling rate whose recording fits the upload limit ---- */

#define JS_PLAN_BYTES_PER_SAMPLE 16.0 /* measured 13-15 per sample on a task upload at 1-2 ms */
#define JS_PLAN_FIXED_BYTES (128u << 10) /* metadata, settings, threads, the stack pool of a busy service */
#define JS_PLAN_BUDGET 0.80            /* share of uploadmax the plan aims at */

/* Process CPU time (user + system) in ns, from /proc/self/stat; -1 if unreadable. */
long long js_plan_process_cpu_ns(void);
/* The same from a /proc/PID/stat text and the clock ticks per second; -1 if malformed or out of range. */
long long js_plan_stat_cpu_ns(const char *stat, long hz);
/* The interval (ns) to record at: requested, or longer when cpus busy CPUs sampled for duration_s
 * would not fit the budget of upload_max. *est gets the expected bytes at that interval. */
long long js_plan_interval(long long requested_ns, double cpus, long long duration_s, uint64_t upload_max,
                           double *est);

/* ---- spool.c: recordings waiting for upload in taskdir ---- */

typedef struct {
    char id[JS_TASK_ID_MAX];
    char service[JS_BACKEND_NAME_MAX];
    char instance[JS_BACKEND_NAME_MAX];
    int error;                         /* 1: report EXECUTION_TASK_ERROR with message */
    char message[JS_TASK_MSG_MAX];
    char jfr[JS_BACKEND_PATH_MAX];     /* the recording ("" for an error report) */
    char meta[JS_BACKEND_PATH_MAX + 400]; /* this entry's file */
    long long after_ms;                /* not to be uploaded before this time (epoch ms; 0 = now) */
} js_spool_entry;

/* Create taskdir (0700, ours) if needed; 0 or -1 with err. */
int js_spool_init(const char *dir, char *err, size_t errlen);
/* Path of the recording of task id on instance into out. */
void js_spool_jfr_path(const char *dir, const char *id, const char *instance, char *out, size_t outlen);
/* Record a finished task (its recording or its error) as pending; 0 or -1 with err. */
int js_spool_put(const char *dir, const js_spool_entry *e, char *err, size_t errlen);
/* The oldest pending entry not locked by another agent; 1 with e filled and locked (*lockfd), 0 if none. */
int js_spool_next(const char *dir, js_spool_entry *e, int *lockfd);
/* Upload done (or never possible): remove the entry and its recording, release the lock. */
void js_spool_done(js_spool_entry *e, int lockfd);
/* Keep it for later: release the lock only. */
void js_spool_release(int lockfd);

/* ---- sw_rpc.c: the SkyWalking calls ---- */

typedef struct {
    const js_backend_conf *conf;
    js_grpc_channel ch;
    long long deadline_ms;
} js_sw_client;

/* Point the client at target i of conf. */
void js_sw_client_target(js_sw_client *s, int i);
/* keepAlive (properties 0) or reportInstanceProperties (1). The gRPC status; err. */
int js_sw_heartbeat(js_sw_client *s, int properties, char *err, size_t errlen);
/* getAsyncProfilerTaskCommands: up to max tasks into out (*n). The gRPC status; err. */
int js_sw_poll(js_sw_client *s, long long last_ms, js_sw_task *out, int max, int *n, char *err, size_t errlen);
/* The tasks of a getAsyncProfilerTaskCommands answer (a packed Commands message): its AsyncProfilerTaskQuery
 * commands read into out, up to max (*n; one that cannot be read has t->invalid set), the other commands
 * ignored. 0, or -1 with err when the bytes are not a Commands message. */
int js_sw_read_commands(const uint8_t *msg, size_t len, js_sw_task *out, int max, int *n, char *err, size_t errlen);
/* What the answer to an upload's metadata says: 1 the server refuses the recording as too large
 * (TERMINATED_BY_OVERSIZE), 0 go on, -1 not an AsyncProfilerCollectionResponse message. */
int js_sw_read_collect_answer(const uint8_t *msg, size_t len);

/* Outcome of an upload. */
typedef enum { JS_UP_DONE = 0, JS_UP_OVERSIZE, JS_UP_RETRY } js_upload_result;
/* Send a pending entry through collect: its recording (an unreadable one is reported as an error
 * instead) or its error. *sent gets the content bytes sent. */
js_upload_result js_sw_upload(js_sw_client *s, const js_spool_entry *e, uint64_t *sent, char *err, size_t errlen);

/* ---- task_run.c: one task's recording ---- */

#define JS_RUN_MAX_SEGMENTS 3 /* the plan and up to two re-plans */

typedef struct {
    const js_backend_conf *conf;
    const js_backend_host *host;
    long long (*mono_ms)(void);
    long long probe_cpu_ns, probe_at_ns; /* the loop's last CPU reading, for the plan */
    int active, stopped;
    js_sw_task task;
    js_task_opts opts;
    int duration_s;
    long long start_ms, end_ms, seg_start_ms;
    long long interval_ns;
    double cpus;
    int nseg, replans;
    long long win_ms, win_samples; /* start of the growth window of the current segment */
    double rate;                   /* the current segment's recent samples per ms */
    char jfr[JS_BACKEND_PATH_MAX];
    char seg_path[JS_RUN_MAX_SEGMENTS][JS_BACKEND_PATH_MAX + 8];
} js_run;

/* Start task t (ExecArgs read, rate planned); 0, or -1 after leaving an error report. */
int js_run_start(js_run *r, const js_sw_task *t);
/* While it runs: a recording growing past the plan continues at a longer interval. */
void js_run_check(js_run *r);
/* Stop it and queue the recording (or the error) for upload. vm_exit: the JVM is going down; the
 * profiler's shutdown writes the file, which is queued to wait a little. */
void js_run_finish(js_run *r, int vm_exit);
/* Queue an error report for task id. */
void js_run_report_error(const js_backend_conf *c, const char *id, const char *msg);

#endif
