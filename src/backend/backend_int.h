/* backend_int.h - the task client's private parts: tasks and their ExecArgs, the size plan, the
 * recordings waiting in taskdir, and the SkyWalking calls. */
#ifndef JS_BACKEND_INT_H
#define JS_BACKEND_INT_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

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
 * passed-through options, the size cap, the time left of the task (timeout=, so the session ends on time even
 * when this thread is held up in a call; 0: none) and the file. 0, or -1 when it does not fit len bytes. */
int js_task_start_command(const js_task_opts *o, long long interval_ns, uint64_t max_bytes, long long timeout_ms,
                          const char *file, char *cmd, size_t len);

/* ---- pprof_task.c: PprofTaskQuery commands and what serves each event (pure) ---- */

/* The OAP's pprof events (PprofEventType), in its order. */
typedef enum {
    JS_PPE_CPU = 0,
    JS_PPE_HEAP,
    JS_PPE_BLOCK,
    JS_PPE_MUTEX,
    JS_PPE_GOROUTINE,
    JS_PPE_THREADCREATE,
    JS_PPE_ALLOCS,
    JS_PPE_COUNT
} js_pprof_event;

#define JS_PPROF_MAX_MINUTES 15     /* the OAP's and the Go agent's limit for cpu, block and mutex */
#define JS_PPROF_DEFAULT_MINUTES 1  /* allocs (and heap) without a Duration: the window sampled */

/* One PprofTaskQuery command. */
typedef struct {
    char serial[64];
    char id[JS_TASK_ID_MAX];
    long long create_ms;
    char events[32];           /* as sent: "cpu", "heap", ... */
    int event;                 /* js_pprof_event, -1 if not one */
    long long duration_min;    /* Duration (minutes), -1 if absent */
    long long dump_period;     /* DumpPeriod, -1 if absent */
    char invalid[JS_TASK_MSG_MAX]; /* why the command cannot be served ("" if it can) */
} js_pprof_task;

/* Fill t from a PprofTaskQuery's key/value arguments; 0, or -1 with err (no TaskId or CreateTime, an unknown
 * event, a Duration or DumpPeriod the event needs missing or out of range). */
int js_pprof_task_from_args(const char *const *keys, const char *const *vals, size_t n, js_pprof_task *t, char *err,
                            size_t errlen);
/* The lower-case name of event e ("cpu", ...). */
const char *js_pprof_event_name(int e);

/* How a task is served. */
typedef struct {
    int snapshot;              /* 1: one dispatcher command writes the profile at once; 0: a session records */
    char cmd[256];             /* the session's start options (event=..., without interval= and file=), or the
                                * snapshot command (without file=) */
    int cpu;                   /* the session samples CPU: its interval is planned */
    long long duration_ms;     /* how long the session records */
    char note[320];            /* how the JVM serves the event, for the log */
} js_pprof_plan;

/* What serves task t; 0, or -1 with err naming why the JVM cannot serve it (EXECUTION_TASK_ERROR). */
int js_pprof_task_plan(const js_pprof_task *t, js_pprof_plan *p, char *err, size_t errlen);

/* ---- plan.c: a sampling rate whose recording fits the upload limit ---- */

#define JS_PLAN_BYTES_PER_SAMPLE 16.0 /* measured 13-15 per sample on a task upload at 1-2 ms */
#define JS_PLAN_FIXED_BYTES (128u << 10) /* metadata, settings, threads, the stack pool of a busy service */
#define JS_PLAN_BUDGET 0.80            /* share of uploadmax the plan aims at */
#define JS_PLAN_PPROF_BYTES_PER_SAMPLE 3.0 /* pprof after gzip: 0.06 (shallow) to 2.2 (200 frames) measured */
#define JS_PLAN_PPROF_FIXED_BYTES (128u << 10) /* the tables of a busy service's distinct stacks */

/* Process CPU time (user + system) in ns, from /proc/self/stat; -1 if unreadable. */
long long js_plan_process_cpu_ns(void);
/* The same from a /proc/PID/stat text and the clock ticks per second; -1 if malformed or out of range. */
long long js_plan_stat_cpu_ns(const char *stat, long hz);
/* The interval (ns) to record at: requested, or longer when cpus busy CPUs sampled for duration_s
 * would not fit the budget of upload_max. *est gets the expected bytes at that interval. */
long long js_plan_interval(long long requested_ns, double cpus, long long duration_s, uint64_t upload_max,
                           double *est);
/* The same for a pprof profile (bytes per sample and fixed bytes of the format). */
long long js_plan_interval_pprof(long long requested_ns, double cpus, long long duration_s, uint64_t upload_max,
                                 double *est);
/* Busy CPUs of the process since the reading (probe_cpu_ns at probe_at_ns, CLOCK_MONOTONIC ns) when it is 200 ms
 * old or more, else from a 500 ms probe now. */
double js_plan_busy_cpus(long long probe_cpu_ns, long long probe_at_ns, long long now_ns);

/* ---- spool.c: recordings waiting for upload in taskdir ---- */

/* What a pending entry uploads, and through which service. */
typedef enum { JS_SPOOL_JFR = 0, JS_SPOOL_PPROF } js_spool_kind;

typedef struct {
    js_spool_kind kind;                /* AsyncProfilerTask (a JFR recording) or PprofTask (a pprof profile) */
    char id[JS_TASK_ID_MAX];
    char service[JS_BACKEND_NAME_MAX];
    char instance[JS_BACKEND_NAME_MAX];
    int error;                         /* 1: report EXECUTION_TASK_ERROR with message */
    char message[JS_TASK_MSG_MAX];
    char jfr[JS_BACKEND_PATH_MAX];     /* the recording or profile ("" for an error report) */
    char meta[JS_BACKEND_PATH_MAX + 400]; /* this entry's file */
    long long after_ms;                /* not to be uploaded before this time (epoch ms; 0 = now) */
} js_spool_entry;

/* Create taskdir (0700, ours) if needed; 0 or -1 with err. */
int js_spool_init(const char *dir, char *err, size_t errlen);
/* Path of the recording of task id on instance into out. */
void js_spool_jfr_path(const char *dir, const char *id, const char *instance, char *out, size_t outlen);
/* Path of the pprof profile of pprof task id on instance into out. */
void js_spool_pprof_path(const char *dir, const char *id, const char *instance, char *out, size_t outlen);
/* Record a finished task (its recording or its error) as pending; 0 or -1 with err. */
int js_spool_put(const char *dir, const js_spool_entry *e, char *err, size_t errlen);
/* The oldest pending entry not locked by another agent; 1 with e filled and locked (*lockfd), 0 if none. */
int js_spool_next(const char *dir, js_spool_entry *e, int *lockfd);
/* Upload done (or never possible): remove the entry and its recording, release the lock. */
void js_spool_done(js_spool_entry *e, int lockfd);
/* Keep it for later: release the lock only. */
void js_spool_release(int lockfd);
/* Keep it for later, after the others: its time becomes now (the queue is oldest first), then release the lock.
 * 0, or -1 with errno if it could not be moved (it is released all the same, and stays first). */
int js_spool_defer(int lockfd);

/* ---- sw_rpc.c: the SkyWalking calls ---- */

typedef struct {
    const js_backend_conf *conf;
    js_grpc_channel ch;
    long long deadline_ms;
} js_sw_client;

/* Point the client at target i of conf. */
void js_sw_client_target(js_sw_client *s, int i);
/* Pack msg (a protobuf-c message) and call path with it; the response is left in *resp (heap, the caller frees).
 * The gRPC status; err. */
int js_sw_unary(js_sw_client *s, const char *path, const ProtobufCMessage *msg, uint8_t **resp, size_t *resp_len,
                char *err, size_t errlen);
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

/* What differs between the two collect services (AsyncProfilerTask, PprofTask): the messages, equal in layout but
 * distinct types, and what makes a file whole. */
typedef struct {
    const char *path;  /* the collect method */
    const char *what;  /* "recording", "profile": for messages */
    /* The first message (e: its metadata; error: the error text of an error report) or, with e NULL, a content
     * slice, packed into buf; its length (buf NULL: the length it needs), 0 if it does not fit in cap. */
    size_t (*pack)(const js_spool_entry *e, const char *error, int64_t size, const uint8_t *data, size_t len,
                   uint8_t *buf, size_t cap);
    /* The server's answer to the metadata: 0 go ahead, 1 too large, -1 unreadable. */
    int (*answer)(const uint8_t *m, size_t len);
    /* fd (size bytes) holds a whole file of the format; 0, or -1 with why. */
    int (*whole)(int fd, int64_t size, char *why, size_t whylen);
} js_collect_codec;

extern const js_collect_codec js_jfr_codec;   /* sw_rpc.c */
extern const js_collect_codec js_pprof_codec; /* sw_pprof.c */

/* getPprofTaskCommands: up to max PprofTaskQuery tasks into out (*n). The gRPC status; err. */
int js_sw_poll_pprof(js_sw_client *s, long long last_ms, js_pprof_task *out, int max, int *n, char *err,
                     size_t errlen);

/* Outcome of an upload. */
typedef enum { JS_UP_DONE = 0, JS_UP_OVERSIZE, JS_UP_RETRY } js_upload_result;
/* Send a pending entry through its service's collect (AsyncProfilerTask or PprofTask): its recording or profile
 * (an unreadable or incomplete one is reported as an error instead) or its error. *sent gets the content bytes
 * sent. */
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
/* Queue an error report for task id (an async-profiler task). */
void js_run_report_error(const js_backend_conf *c, const char *id, const char *msg);
/* Queue an error report for task id through the service of kind (logged too: the OAP keeps no message). */
void js_run_report(const js_backend_conf *c, js_spool_kind kind, const char *id, const char *msg);
/* Run cmd through the host's dispatcher, the thread attached to the VM unless cmd is status; 0 or -1, the reply
 * (trailing newlines removed) in out. */
int js_run_dispatch(const js_backend_host *h, const char *cmd, char *out, size_t outlen);
/* Stop the task's session, which wrote file; 0 also when it had ended by itself (its timeout=, which a task's
 * session gets so it ends on time when this thread is held up in a call) and file was written. */
int js_run_stop(const js_backend_host *h, const char *file, char *out, size_t outlen);

/* ---- pprof_run.c: one pprof task: a session for its duration, or a snapshot at once ---- */

typedef struct {
    const js_backend_conf *conf;
    const js_backend_host *host;
    long long (*mono_ms)(void);
    long long probe_cpu_ns, probe_at_ns; /* the loop's last CPU reading, for a CPU task's plan */
    int active;                /* a session records for the task */
    js_pprof_task task;
    long long start_ms, end_ms;
    char file[JS_BACKEND_PATH_MAX];
} js_prun;

/* Serve task t: a snapshot is written and queued at once, a session starts (0); a task that cannot be served, or
 * whose session cannot start, is reported (-1). busy names an async-profiler task recording now (NULL if none),
 * which a task that needs a session is reported against, with the seconds it has left. */
int js_prun_take(js_prun *r, const js_pprof_task *t, const char *busy, long long busy_left_s);
/* Stop the session and queue the profile (or the error). vm_exit: as js_run_finish. */
void js_prun_finish(js_prun *r, int vm_exit);

#endif
