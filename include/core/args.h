/* args.h - parse one command string ("start,event=cpu,interval=1ms,file=p.html") into a request.
 *
 * Every entry point (-agentpath, attach, Java API, backend task) speaks this one syntax:
 * comma-separated, async-profiler's words. Parsing is pure (no I/O, no globals): an unknown
 * or malformed option yields -1 and one line naming it in err.
 */
#ifndef JS_ARGS_H
#define JS_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include "output/format.h"
#include "util/log.h"
#include "util/units.h"

#define JS_PATH_MAX 1024
#define JS_PATTERN_MAX 1024
#define JS_TITLE_MAX 256
#define JS_TRACEPOINT_MAX 128

#define JS_DEFAULT_INTERVAL_NS 10000000LL  /* 10 ms */
#define JS_MIN_INTERVAL_NS 100000LL        /* 100 us floor: protects the JVM */
#define JS_HOUR_NS 3600000000000LL
#define JS_MAX_DURATION_NS JS_UNITS_MAX_NS /* longest duration any option takes */
#define JS_DEFAULT_JSTACKDEPTH 2048
#define JS_MAX_JSTACKDEPTH 8192

typedef enum {
    JS_ACTION_NONE = 0,
    JS_ACTION_START,
    JS_ACTION_STOP,
    JS_ACTION_DUMP,
    JS_ACTION_STATUS,
    JS_ACTION_VERSION,
    JS_ACTION_RESUME,       /* start, keeping what the last session collected (its text profiles) */
    JS_ACTION_LIST,         /* the events this agent offers */
    JS_ACTION_THREADDUMP,   /* one sample per live Java thread, now (core/snapshot.h) */
    JS_ACTION_THREADSTARTS  /* the stacks that started threads since start-up (core/snapshot.h); the last action
                             * (fuzz_args checks the range) */
} js_action;

/* The execution-sampling event (event=): what makes a thread's stack be sampled. cpu prefers perf_events and
 * falls back to ctimer, then itimer; the perf events after it are exactly that perf_events counter (interval
 * is then a count of events for page-faults, context-switches, cpu-migrations and the hardware counters,
 * ns of CPU time for task-clock and cpu-clock). JS_EV_NONE: event=alloc or event=lock alone. */
typedef enum {
    JS_EV_CPU = 0,
    JS_EV_CTIMER,
    JS_EV_ITIMER,
    JS_EV_WALL,
    JS_EV_CPU_CLOCK,
    JS_EV_TASK_CLOCK,
    JS_EV_PAGE_FAULTS,
    JS_EV_CONTEXT_SWITCHES,
    JS_EV_CPU_MIGRATIONS,
    JS_EV_CYCLES,
    JS_EV_INSTRUCTIONS,
    JS_EV_CACHE_REFERENCES,
    JS_EV_CACHE_MISSES,
    JS_EV_BRANCH_INSTRUCTIONS,
    JS_EV_BRANCH_MISSES,
    JS_EV_TRACEPOINT, /* a kernel tracepoint, event=CATEGORY:NAME (js_args.tracepoint) */
    JS_EV_FUNCTION,   /* a native function's calls: a hardware breakpoint at its address, event=NAME (js_args.tracepoint) */
    JS_EV_NONE
} js_event;

#define JS_DEFAULT_WALL_NS 50000000LL    /* wall: 50 ms */
#define JS_DEFAULT_PROC_NS 30000000000LL /* proc: 30 s */
#define JS_DEFAULT_ALLOC_BYTES (512u << 10) /* alloc: one sample per 512 KiB allocated (per thread, mean) */
#define JS_DEFAULT_LOCK_NS 10000LL       /* lock: waits of 10 us and more */

/* What a profile's weights are about; a session has one of each at most, written to the text output named with
 * %e = js_kind_name (or one JFR recording). */
typedef enum { JS_KIND_EXEC = 0, JS_KIND_WALL, JS_KIND_ALLOC, JS_KIND_LOCK, JS_KINDS } js_kind;

/* Native frames (cstack=): none, by frame pointers (the default for the signal events), or by DWARF unwind tables
 * (libunwind; also what cstack=vm asks for). */
typedef enum { JS_CSTACK_NO = 0, JS_CSTACK_FP, JS_CSTACK_DWARF } js_cstack;

/* What a text profile counts (samples / total): the default is samples for cpu and wall, bytes for alloc, ns for
 * lock; samples counts events everywhere, total the event's unit everywhere (ns of CPU or wall time, bytes, ns). */
typedef enum { JS_COUNTER_DEFAULT = 0, JS_COUNTER_SAMPLES, JS_COUNTER_TOTAL } js_counter;

/* How Java frames are named in text outputs: as async-profiler writes them (slashes in collapsed, tree and html,
 * dots in flat and traces), or dotted everywhere (dot). */
typedef enum { JS_NAMES_ASPROF = 0, JS_NAMES_DOTS } js_names_style;

/* Stack walker (walker=): AsyncGetCallTrace with recovery (default), or AsyncGetCallTrace alone. */
typedef enum { JS_WALKER_RECOVER = 0, JS_WALKER_AGCT } js_walker_kind;

typedef struct {
    js_action action;
    js_event event;              /* execution sampling, JS_EV_NONE for none */
    int event_set;               /* event= was given (no silent fallback from an explicit ctimer/itimer) */
    long long interval_ns;       /* after clamping to the floor; a count for the counting perf events */
    long long wall_ns;           /* wall-clock sampling interval (event=wall or wall=), 0 = off */
    uint64_t alloc_bytes;        /* allocation sampling interval (event=alloc or alloc=), 0 = off */
    long long lock_ns;           /* lock wait threshold (event=lock or lock=), -1 = off */
    char interval_raw[32];       /* interval= as given: its unit depends on event=, resolved at the end */
    int interval_clamped;        /* 1 if the requested interval was raised to the floor */
    int jitter;                  /* randomise each period around interval (default; nojitter turns it off) */
    int nojitter_flag;           /* nojitter was given */
    int all_flag, dot_flag, total_flag, samples_flag; /* those words were given */
    int alloc_set, lock_set, wall_set; /* alloc=, lock=, wall= were given */
    int jstackdepth;
    int jstackkeep;              /* jstackdepth=N/M: a stack deeper than N keeps its top M frames; 0 = N */
    js_walker_kind walker;
    js_cstack cstack;
    char begin[JS_TRACEPOINT_MAX], end[JS_TRACEPOINT_MAX]; /* begin=/end= (ttsp sets both): the window's functions */
    int nostop;                  /* nostop: windows are recorded, samples kept outside them too */
    int ttsp;                    /* ttsp was given */
    int cstack_vmx;
    int feat_vtable, feat_comptask; /* features=vtable: receiver classes under vtable/itable stubs; comptask: the
                                     * method a JIT compiler thread compiles */              /* cstack=vmx was asked for: walked as vm (dwarf), said in one line at start */
    char tracepoint[JS_TRACEPOINT_MAX]; /* CATEGORY:NAME of event= for JS_EV_TRACEPOINT, the function's name for JS_EV_FUNCTION */
    char file[JS_PATH_MAX];      /* as given, %p/%t not yet expanded */
    js_out_format format;        /* JS_OUT_NONE: from file extension, else collapsed */
    int flat_top;                /* N of flat[=N] or traces[=N] */
    js_counter counter;          /* samples / total */
    js_names_style names;        /* dot */
    int simple;                  /* simple class names (no package) */
    int norm;                    /* hidden classes without their address */
    int ann;                     /* frame kinds as name suffixes: _[j] _[i] _[0] _[1] */
    int libnames;                /* lib: native frames as library`symbol */
    int quiet;                   /* no "profiling started/stopped" log lines */
    int live;                    /* alloc text outputs keep the samples whose objects are still alive */
    int tlab;                    /* tlab: allocations from the VM's TLAB events (new TLAB, outside TLAB), not JVMTI */
    int thread_filter;           /* filter (no value): only threads added through the Java API are sampled */
    int threads;
    int record_cpu;              /* record-cpu: a perf_events sample gets the CPU it was taken on as its root frame */
    int target_cpu;              /* target-cpu=N: perf_events counters count only while on CPU N; -1 = every CPU */
    int alluser;                 /* alluser: perf_events count user mode only (time in the kernel is not sampled) */
    int fdtransfer;              /* fdtransfer: asked for; the agent opens its counters itself or refuses */
    int lines;
    int sig;
    int reverse;
    char title[JS_TITLE_MAX];
    char include[JS_PATTERN_MAX]; /* '|'-joined patterns */
    char exclude[JS_PATTERN_MAX];
    char filter[JS_PATTERN_MAX];  /* '|'-joined thread name patterns: only those threads are sampled (filter=) */
    char jfrfile[JS_PATH_MAX];   /* JFR recording written beside file= (jfrfile=) */
    uint64_t chunk_size;         /* JFR chunk size in bytes (chunksize=), 0 = writer default */
    long long chunk_time_ns;     /* JFR chunk duration (chunktime=), 0 = none */
    uint64_t jfr_max_size;       /* cap on the JFR file (jfrmaxsize=), 0 = none */
    long long timeout_ns;        /* stop by itself after this long (timeout=), 0 = never */
    long long loop_ns;           /* continuous: a new output file every period (loop=), 0 = one output */
    long long proc_ns;           /* proc[=N]: other processes read from /proc every N (JFR only), 0 = off */
    int proc_set;                /* proc was given (all turns it on only for a JFR output) */
    char jfrsync[256];           /* jfrsync[=CONFIG]: a JDK Flight Recording of that configuration joins the JFR output */
    int jfropts;                 /* jfropts=N: async-profiler's bits for events its chunk leaves out (ours writes none) */
    char log[JS_PATH_MAX];
    js_loglevel loglevel;
    int loglevel_set;
    void *capture;               /* not parsed: a FILE* an in-process caller (Java or C API) gives, where a text output
                                  * without file= is written instead of the JVM's stdout */
} js_args;

/* Fill a with defaults (no action, cpu, 10 ms, depth 2048, loglevel info). */
void js_args_defaults(js_args *a);
/* Parse cmd (may be NULL or empty) into a; 0 on success, -1 with one line in err. */
int js_args_parse(const char *cmd, js_args *a, char *err, size_t errlen);
/* Path the JFR recording goes to after %p/%t expansion, or "" if none: file= when its format is
 * JFR, else jfrfile=. -1 if too long. */
int js_args_jfr_path(const js_args *a, int pid, long long epoch_sec, char *out, size_t outlen);
/* Expand %p (pid), %t (YYYYMMDD-HHMMSS), %n (seq, the loop= file number) and %% in pattern; other
 * '%' sequences stay as they are. -1 if out would overflow. */
int js_expand_path_seq(const char *pattern, int pid, long long epoch_sec, unsigned seq, char *out, size_t outlen);
/* js_expand_path_seq with seq 0. */
int js_expand_path(const char *pattern, int pid, long long epoch_sec, char *out, size_t outlen);
/* Output format: explicit flag, else from the extension, else collapsed. */
js_out_format js_args_output_format(const js_args *a, const char *path);
const char *js_event_name(js_event e);
/* 1 if the event is a perf_events counter counted in events (interval = a count, not ns). */
int js_event_is_count(js_event e);
/* Default interval of a counting event: page-faults 1000, context-switches 10, cpu-migrations 1, hardware
 * counters 1000000 (0 for the others). */
long long js_event_default_count(js_event e);
/* Name of kind k in a's session, as %e expands it: the execution event's name, "wall", "alloc", "lock". */
const char *js_kind_name(const js_args *a, js_kind k);
/* 1 if a's session records kind k. */
int js_kind_on(const js_args *a, js_kind k);
/* The kinds a's session records, as a bit set (1 << kind), and their number. */
unsigned js_kinds(const js_args *a, int *count);
const char *js_loglevel_name(js_loglevel l);
/* Why an option async-profiler has is not offered, or NULL if key is not one of those. */
const char *js_args_unsupported(const char *key);

#endif
