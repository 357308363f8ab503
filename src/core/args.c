/* args.c - see args.h. Pure functions: no I/O, no globals. */
#include "core/args.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKEN_MAX 2048

void js_args_defaults(js_args *a)
{
    memset(a, 0, sizeof *a);
    a->event = JS_EV_CPU;
    a->interval_ns = JS_DEFAULT_INTERVAL_NS;
    a->jitter = 1;
    a->jstackdepth = JS_DEFAULT_JSTACKDEPTH;
    a->loglevel = JS_LOG_INFO;
    a->lock_ns = -1;
    a->target_cpu = -1;
    a->cstack = JS_CSTACK_FP; /* native frames: about 0.4 us a sample (docs/BENCHMARKS.md) */
}

/* Every event= name, in js_event order. */
static const char *const event_names[] = {"cpu",         "ctimer",           "itimer",         "wall",
                                          "cpu-clock",   "task-clock",       "page-faults",    "context-switches",
                                          "cpu-migrations", "cycles",        "instructions",   "cache-references",
                                          "cache-misses", "branch-instructions", "branch-misses", "tracepoint",
                                          "function", "none"};

const char *js_event_name(js_event e)
{
    return (unsigned)e <= JS_EV_NONE ? event_names[e] : "?";
}

int js_event_is_count(js_event e)
{
    return e >= JS_EV_PAGE_FAULTS && e < JS_EV_NONE;
}

long long js_event_default_count(js_event e)
{
    switch (e) {
    case JS_EV_PAGE_FAULTS: return 1000;
    case JS_EV_CONTEXT_SWITCHES: return 10;
    case JS_EV_CPU_MIGRATIONS: return 1;
    case JS_EV_TRACEPOINT: return 1;
    case JS_EV_FUNCTION: return 1;
    default: return js_event_is_count(e) ? 1000000 : 0; /* hardware counters: a million events */
    }
}

const char *js_kind_name(const js_args *a, js_kind k)
{
    static const char *const names[] = {"cpu", "wall", "alloc", "lock"};
    if (k == JS_KIND_EXEC)
        return a->event == JS_EV_TRACEPOINT || a->event == JS_EV_FUNCTION ? a->tracepoint : js_event_name(a->event);
    return (unsigned)k < JS_KINDS ? names[k] : "?";
}

int js_kind_on(const js_args *a, js_kind k)
{
    switch (k) {
    case JS_KIND_EXEC: return a->event != JS_EV_NONE && a->event != JS_EV_WALL;
    case JS_KIND_WALL: return a->wall_ns > 0;
    case JS_KIND_ALLOC: return a->alloc_bytes > 0;
    case JS_KIND_LOCK: return a->lock_ns >= 0;
    default: return 0;
    }
}

unsigned js_kinds(const js_args *a, int *count)
{
    unsigned set = 0;
    int n = 0;
    for (int k = 0; k < JS_KINDS; k++)
        if (js_kind_on(a, (js_kind)k)) set |= 1u << k, n++;
    if (count) *count = n;
    return set;
}

const char *js_loglevel_name(js_loglevel l)
{
    static const char *const names[] = {"debug", "info", "warn", "error", "none"};
    return (unsigned)l <= JS_LOG_NONE ? names[l] : "?";
}

/* async-profiler's options that jsampler does not offer, each with the reason given when it is asked for. */
static const struct {
    const char *key, *why;
} unsupported_opts[] = {
    {"nativemem", "native memory (malloc) profiling is not offered"},
    {"nofree", "native memory (malloc) profiling is not offered"},
    {"nativelock", "native (pthread) lock profiling is not offered"},
    {"trace", "Java method tracing is not offered"},
    {"nobatch", "wall samples are one event each already (jdk.ExecutionSample alone, profiler.WallClockSample beside "
                "another event)"},
    {"sched", "scheduling-policy root frames are not offered"},
    {"signal", "the signals are chosen at start (SIGPROF for cpu, a free real-time signal for wall) and logged"},
    {"memlimit", "the call-trace stores have a fixed size and are rotated when half full (see README, Memory)"},
    {"mcache", "method names are cached for the life of the process"},
    {"server", "there is no HTTP control server: use jsampler's CLI, jcmd or the Java API"},
    {"width", "the flame graph fits its window"},
    {"height", "the flame graph fits its window"},
    {"minwidth", "the flame graph hides no frame"},
    {"otlp", "OTLP output is not offered; pprof is (file=profile.pb.gz)"},
    {"metrics", "Prometheus metrics are not offered; status gives the counters"},
};

const char *js_args_unsupported(const char *key)
{
    for (size_t i = 0; i < sizeof unsupported_opts / sizeof unsupported_opts[0]; i++)
        if (strcmp(key, unsupported_opts[i].key) == 0) return unsupported_opts[i].why;
    return NULL;
}

/* Parse a positive decimal int within [lo, hi]; -1 if malformed. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* Copy value into dst (cap bytes); -1 if empty or too long. */
static int copy_value(char *dst, size_t cap, const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n >= cap) return -1;
    memcpy(dst, v, n + 1);
    return 0;
}

/* Append a pattern to a '|'-joined list; -1 if empty or too long. */
static int append_pattern(char *dst, size_t cap, const char *v)
{
    size_t have = strlen(dst), n = strlen(v);
    if (n == 0 || have + (have ? 1 : 0) + n + 1 > cap) return -1;
    if (have) dst[have++] = '|';
    memcpy(dst + have, v, n + 1);
    return 0;
}

static int set_action(js_args *a, js_action act, const char *key, char *err, size_t errlen)
{
    if (a->action != JS_ACTION_NONE && a->action != act) {
        snprintf(err, errlen, "conflicting commands: '%s' given with another command", key);
        return -1;
    }
    a->action = act;
    return 0;
}

static int set_format(js_args *a, js_out_format f, const char *key, char *err, size_t errlen)
{
    if (a->format != JS_OUT_NONE && a->format != f) {
        snprintf(err, errlen, "conflicting output formats: '%s' given with another format", key);
        return -1;
    }
    a->format = f;
    return 0;
}

#define TRACEPOINT_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"

static int parse_event(js_args *a, const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "alloc") == 0 || strcmp(v, "lock") == 0) { /* event=alloc: that event alone, no sampling */
        a->event = JS_EV_NONE;
        a->event_set = 1;
        if (v[0] == 'a' && !a->alloc_bytes) a->alloc_bytes = JS_DEFAULT_ALLOC_BYTES;
        if (v[0] == 'l' && a->lock_ns < 0) a->lock_ns = JS_DEFAULT_LOCK_NS;
        return 0;
    }
    for (int e = 0; e < JS_EV_TRACEPOINT; e++) {
        if (strcmp(v, event_names[e]) == 0) {
            a->event = (js_event)e;
            a->event_set = 1;
            return 0;
        }
    }
    const char *colon = strchr(v, ':');
    int reserved = !strcmp(v, "tracepoint") || !strcmp(v, "function") || !strcmp(v, "none"); /* js_event names */
    if (strstr(v, "::") || (v[0] && !reserved && !colon && strspn(v, TRACEPOINT_CHARS) == strlen(v) && !strchr(v, '-'))) {
        /* a native function (C, or C++ without its parameter list): resolved when sampling starts */
        size_t n = strlen(v);
        if (n >= sizeof a->tracepoint || strspn(v, TRACEPOINT_CHARS ":~") != n) {
            snprintf(err, errlen, "option 'event=%s': a native function is named by letters, digits, '_' and '::' "
                     "(e.g. malloc, G1CollectedHeap::humongous_obj_allocate)", v);
            return -1;
        }
        memcpy(a->tracepoint, v, n + 1);
        a->event = JS_EV_FUNCTION;
        a->event_set = 1;
        return 0;
    }
    if (colon) { /* a tracepoint, CATEGORY:NAME as tracefs lists them */
        size_t n = strlen(v), c = (size_t)(colon - v);
        if (c == 0 || c + 1 == n || n >= sizeof a->tracepoint || strspn(v, TRACEPOINT_CHARS) != c ||
            strspn(colon + 1, TRACEPOINT_CHARS) != n - c - 1) {
            snprintf(err, errlen, "option 'event=%s': a tracepoint is CATEGORY:NAME of letters, digits, '_' and '-' "
                     "(e.g. sched:sched_switch, syscalls:sys_enter_read)", v);
            return -1;
        }
        memcpy(a->tracepoint, v, n + 1);
        a->event = JS_EV_TRACEPOINT;
        a->event_set = 1;
        return 0;
    }
    snprintf(err, errlen, "option 'event=%s': unknown event (events: cpu, ctimer, itimer, wall, alloc, lock, "
             "cpu-clock, task-clock, page-faults, context-switches, cpu-migrations, and the hardware counters "
             "cycles, instructions, cache-references, cache-misses, branch-instructions, branch-misses; or a kernel "
             "tracepoint CATEGORY:NAME, or a native function such as malloc or G1CollectedHeap::humongous_obj_allocate; "
             "Java methods are not traced)", v);
    return -1;
}

/* Resolve what depends on event= once every option is read: the unit of interval=, wall's default interval. */
static int finish(js_args *a, char *err, size_t errlen)
{
    const char *v = a->interval_raw;
    if (a->live && !a->alloc_bytes) a->alloc_bytes = JS_DEFAULT_ALLOC_BYTES; /* live is about allocations */
    if (a->all_flag) { /* all: cpu, wall, alloc, lock (and proc with a JFR output), each at its default unless given */
        if (!a->wall_set) a->wall_ns = JS_DEFAULT_WALL_NS;
        if (!a->alloc_set) a->alloc_bytes = JS_DEFAULT_ALLOC_BYTES;
        if (!a->lock_set && a->lock_ns < 0) a->lock_ns = JS_DEFAULT_LOCK_NS;
        if (!a->proc_set) a->proc_ns = JS_DEFAULT_PROC_NS; /* where the output is JFR (session_io.c) */
    }
    if (a->tlab && !a->alloc_bytes) {
        snprintf(err, errlen, "option 'tlab': takes allocations, which this command does not record (add event=alloc "
                 "or alloc=)");
        return -1;
    }
    if (a->tlab && a->live) {
        snprintf(err, errlen, "option 'live': needs allocations sampled through JVMTI; 'tlab' takes them from the "
                 "VM's TLAB events, which keep no object");
        return -1;
    }
    /* As async-profiler: without event=, cpu is sampled only when no other event is asked for (alloc=, lock= or
     * wall= alone record that alone), or with all. */
    if (!a->event_set && !a->all_flag && (a->alloc_bytes || a->lock_ns >= 0 || a->wall_ns)) a->event = JS_EV_NONE;
    if ((a->record_cpu || a->target_cpu >= 0 || a->alluser) &&
        (a->event == JS_EV_CTIMER || a->event == JS_EV_ITIMER || a->event == JS_EV_WALL || a->event == JS_EV_NONE)) {
        snprintf(err, errlen, "option '%s': needs a perf_events event (cpu, cpu-clock, page-faults, a tracepoint, ...); "
                 "event=%s samples by %s", a->record_cpu ? "record-cpu" : a->target_cpu >= 0 ? "target-cpu" : "alluser",
                 js_event_name(a->event), a->event == JS_EV_NONE ? "no signal" : "timers, which know no CPU or mode");
        return -1;
    }
    if (a->proc_set && a->proc_ns && (a->action == JS_ACTION_START || a->action == JS_ACTION_RESUME) && js_args_output_format(a, a->file) != JS_OUT_JFR &&
        !a->jfrfile[0]) { /* async-profiler's words, which its tools look for */
        snprintf(err, errlen, "option 'proc': Process sampling requires JFR output format (file=NAME.jfr, jfr or jfrfile=)");
        return -1;
    }
    if (a->jfrsync[0] && js_args_output_format(a, a->file) != JS_OUT_JFR && !a->jfrfile[0]) {
        snprintf(err, errlen, "option 'jfrsync': needs a JFR output (file=NAME.jfr, jfr or jfrfile=)");
        return -1;
    }
    if (a->ttsp && (a->begin[0] || a->end[0])) { /* async-profiler's words */
        snprintf(err, errlen, "option 'ttsp': begin and end must both be empty when ttsp is set");
        return -1;
    }
    if (a->ttsp) { /* time to safepoint: from the VM's safepoint request until every thread stopped */
        snprintf(a->begin, sizeof a->begin, "SafepointSynchronize::begin");
        snprintf(a->end, sizeof a->end, "RuntimeService::record_safepoint_synchronized");
    }
    if (a->end[0] && !a->begin[0]) {
        snprintf(err, errlen, "option 'end=%s': needs begin= (the window opens there)", a->end);
        return -1;
    }
    if (a->jfrsync[0] && a->loop_ns) {
        snprintf(err, errlen, "option 'jfrsync': not offered with loop= (one JDK recording joins one file)");
        return -1;
    }
    if (!strcmp(v, "0")) v = ""; /* interval=0: the event's default */
    if (a->event == JS_EV_WALL && !a->wall_ns) a->wall_ns = JS_DEFAULT_WALL_NS;
    if (js_event_is_count(a->event)) a->interval_ns = js_event_default_count(a->event);
    if (!v[0]) return 0;
    const char *why = NULL;
    if (js_event_is_count(a->event)) {
        uint64_t n = js_parse_size(v);
        if (n < 1 || n > 1000000000ULL || strpbrk(v, "kKmMgG")) why = "expected a count of events 1..1000000000";
        else a->interval_ns = (long long)n;
    } else if (a->event == JS_EV_NONE && a->alloc_bytes && a->lock_ns < 0) { /* event=alloc,interval=BYTES */
        a->alloc_bytes = js_parse_size(v);
        if (!a->alloc_bytes) why = "expected a size in bytes, like 512k, for event=alloc";
    } else if (a->event == JS_EV_NONE && a->lock_ns >= 0 && !a->alloc_bytes) { /* event=lock,interval=DURATION */
        a->lock_ns = js_parse_duration_ns(v);
        if (a->lock_ns < 0 || a->lock_ns > JS_HOUR_NS) why = "expected a duration, like 10us, for event=lock";
    } else {
        long long ns = js_parse_duration_ns(v);
        if (ns <= 0 || ns > JS_HOUR_NS) why = "expected a duration up to 1h, like 10ms, 500us, 1s or a number of ns";
        else if (ns < JS_MIN_INTERVAL_NS) a->interval_ns = JS_MIN_INTERVAL_NS, a->interval_clamped = 1;
        else a->interval_ns = ns, a->interval_clamped = 0;
        if (a->event == JS_EV_WALL && !why) a->wall_ns = a->interval_ns;
    }
    if (why) {
        snprintf(err, errlen, "option 'interval=%s': %s", v, why);
        return -1;
    }
    return 0;
}

static int parse_loglevel(js_args *a, const char *v)
{
    for (int l = JS_LOG_DEBUG; l <= JS_LOG_NONE; l++) {
        if (strcasecmp(v, js_loglevel_name((js_loglevel)l)) == 0) {
            a->loglevel = (js_loglevel)l;
            a->loglevel_set = 1;
            return 0;
        }
    }
    return -1;
}

/* Options that take no value. Returns 1 if key is one, 0 if not, -1 on error. */
static int parse_flag(js_args *a, const char *key, const char *val, char *err, size_t errlen)
{
    static const struct { const char *name; js_action act; } actions[] = {
        {"start", JS_ACTION_START},   {"stop", JS_ACTION_STOP},         {"dump", JS_ACTION_DUMP},
        {"status", JS_ACTION_STATUS}, {"version", JS_ACTION_VERSION},   {"resume", JS_ACTION_RESUME},
        {"list", JS_ACTION_LIST},     {"threaddump", JS_ACTION_THREADDUMP}, {"threadstarts", JS_ACTION_THREADSTARTS}};
    static const struct { const char *name; js_out_format f; } formats[] = {
        {"collapsed", JS_OUT_COLLAPSED}, {"html", JS_OUT_HTML}, {"flamegraph", JS_OUT_HTML}, {"tree", JS_OUT_TREE},
        {"jfr", JS_OUT_JFR}, {"pprof", JS_OUT_PPROF}};
    int *flag = NULL;
    if (strcmp(key, "threads") == 0) flag = &a->threads;
    else if (strcmp(key, "lines") == 0) flag = &a->lines;
    else if (strcmp(key, "sig") == 0) flag = &a->sig;
    else if (strcmp(key, "reverse") == 0 || strcmp(key, "inverted") == 0) flag = &a->reverse;
    else if (strcmp(key, "nojitter") == 0) flag = &a->nojitter_flag;
    else if (strcmp(key, "simple") == 0) flag = &a->simple;
    else if (strcmp(key, "ann") == 0) flag = &a->ann;
    else if (strcmp(key, "lib") == 0) flag = &a->libnames;
    else if (strcmp(key, "quiet") == 0) flag = &a->quiet;
    else if (strcmp(key, "live") == 0) flag = &a->live;
    else if (strcmp(key, "tlab") == 0) flag = &a->tlab;
    else if (strcmp(key, "norm") == 0) flag = &a->norm;
    else if (strcmp(key, "all") == 0) flag = &a->all_flag;
    else if (strcmp(key, "nostop") == 0) flag = &a->nostop;
    else if (strcmp(key, "ttsp") == 0) flag = &a->ttsp;
    else if (strcmp(key, "dot") == 0) flag = &a->dot_flag;
    else if (strcmp(key, "total") == 0) flag = &a->total_flag;
    else if (strcmp(key, "samples") == 0) flag = &a->samples_flag;
    else if (strcmp(key, "filter") == 0 && !val) flag = &a->thread_filter;
    else if (strcmp(key, "record-cpu") == 0) flag = &a->record_cpu;
    else if (strcmp(key, "alluser") == 0) flag = &a->alluser;
    else if (strcmp(key, "fdtransfer") == 0) flag = &a->fdtransfer;
    int is_action = -1, is_format = -1;
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (strcmp(key, actions[i].name) == 0) is_action = (int)i;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(key, formats[i].name) == 0) is_format = (int)i;
    if (!flag && is_action < 0 && is_format < 0) return 0;
    if (val) {
        snprintf(err, errlen, "option '%s=%s': '%s' takes no value", key, val, key);
        return -1;
    }
    if (flag) *flag = 1;
    if (flag == &a->nojitter_flag) a->jitter = 0;
    if (flag == &a->dot_flag) a->names = JS_NAMES_DOTS;
    if ((flag == &a->total_flag || flag == &a->samples_flag) && a->total_flag && a->samples_flag) {
        snprintf(err, errlen, "options 'total' and 'samples' ask for different counters: give one");
        return -1;
    }
    if (flag == &a->total_flag) a->counter = JS_COUNTER_TOTAL;
    if (flag == &a->samples_flag) a->counter = JS_COUNTER_SAMPLES;
    if (is_action >= 0 && set_action(a, actions[is_action].act, key, err, errlen)) return -1;
    if (is_format >= 0 && set_format(a, formats[is_format].f, key, err, errlen)) return -1;
    return 1;
}

/* A duration as timeout=, loop= and chunktime= take it: a bare number is seconds (as async-profiler reads them),
 * else js_parse_duration_ns; -1 if malformed. */
static long long parse_seconds(const char *v)
{
    if (v[0] && strspn(v, "0123456789") == strlen(v)) {
        if (strlen(v) > 7) return -1;
        return atoll(v) * 1000000000LL;
    }
    return js_parse_duration_ns(v);
}

/* Options of the form key=value (flat's value is optional). */
static int parse_keyval(js_args *a, const char *key, const char *v, char *err, size_t errlen)
{
    const char *why = NULL;
    const char *unsupported = js_args_unsupported(key);
    if (unsupported) {
        snprintf(err, errlen, "option '%s': not supported: %s", key, unsupported);
        return -1;
    }
    if (strcmp(key, "alloc") == 0) { /* 0 or no value: the default interval */
        a->alloc_bytes = v && strcmp(v, "0") ? js_parse_size(v) : JS_DEFAULT_ALLOC_BYTES;
        if (!a->alloc_bytes || a->alloc_bytes > (1ull << 40)) why = "expected a size in bytes, like 512k or 1m";
        a->alloc_set = 1;
    } else if (strcmp(key, "lock") == 0) {
        a->lock_ns = v ? js_parse_duration_ns(v) : JS_DEFAULT_LOCK_NS;
        if (a->lock_ns < 0 || a->lock_ns > JS_HOUR_NS) why = "expected a duration, like 10us or 1ms";
        a->lock_set = 1;
    } else if (strcmp(key, "wall") == 0) { /* 0 or no value: the default interval */
        a->wall_ns = v && strcmp(v, "0") ? js_parse_duration_ns(v) : JS_DEFAULT_WALL_NS;
        if (a->wall_ns < 1000000LL || a->wall_ns > JS_HOUR_NS) why = "expected a duration of at least 1ms, like 50ms";
        a->wall_set = 1;
    } else if (strcmp(key, "flat") == 0 || strcmp(key, "traces") == 0) {
        if (set_format(a, key[0] == 'f' ? JS_OUT_FLAT : JS_OUT_TRACES, key, err, errlen)) return -1;
        if (v && strcmp(v, "0") && parse_int(v, 1, 100000, &a->flat_top)) why = "expected a number of rows 1..100000";
    } else if (strcmp(key, "proc") == 0) { /* seconds between readings; no value: 30 s; 0: off */
        a->proc_ns = !v ? JS_DEFAULT_PROC_NS : strcmp(v, "0") ? parse_seconds(v) : 0;
        if (a->proc_ns < 0 || (a->proc_ns && a->proc_ns < 1000000000LL) || a->proc_ns > JS_HOUR_NS)
            why = "expected a period of at least 1s and at most 1h, like 1 or 30s (0: off)";
        a->proc_set = 1;
    } else if (strcmp(key, "jfrsync") == 0) { /* a configuration name or a .jfc path; no value: default */
        if (copy_value(a->jfrsync, sizeof a->jfrsync, v ? v : "default") || strchr(a->jfrsync, '+'))
            why = "expected a JFR configuration name (default, profile) or a .jfc file, under 256 bytes";
    } else if (!v) {
        snprintf(err, errlen, "unknown option '%s'", key);
        return -1;
    } else if (strcmp(key, "event") == 0) {
        return parse_event(a, v, err, errlen);
    } else if (strcmp(key, "interval") == 0) {
        if (copy_value(a->interval_raw, sizeof a->interval_raw, v)) why = "expected a duration, size or count";
    } else if (strcmp(key, "begin") == 0 || strcmp(key, "end") == 0) { /* a native function, as event= names one */
        char *to = key[0] == 'b' ? a->begin : a->end;
        if (copy_value(to, sizeof a->begin, v) || strspn(v, TRACEPOINT_CHARS ":~") != strlen(v))
            why = "expected a native function's name (letters, digits, '_' and '::')";
    } else if (strcmp(key, "features") == 0) { /* async-profiler's walk features, '+'-joined (its CLI's commas) */
        for (const char *f = v; *f && !why;) {
            size_t k = strcspn(f, "+");
            if (k == 6 && !strncmp(f, "vtable", 6)) a->feat_vtable = 1;
            else if (k == 8 && !strncmp(f, "comptask", 8)) a->feat_comptask = 1;
            else why = "not supported: of async-profiler's features (vtable, comptask, pcaddr, mixed, stats, probesp, "
                       "vmx) jsampler offers vtable and comptask; its default walker recovers the walks "
                       "AsyncGetCallTrace gives up on (walker=)";
            f += k + (f[k] == '+');
        }
    } else if (strcmp(key, "jfropts") == 0) { /* 1 system info, 2 properties, 4 libraries, 8 CPU load, 16 heap */
        if (strcmp(v, "mem") == 0) why = "not supported: the recording is streamed to its file, chunk by chunk";
        else if (parse_int(v, 0, 31, &a->jfropts)) why = "expected async-profiler's bits 0..31";
    } else if (strcmp(key, "target-cpu") == 0) {
        if (parse_int(v, 0, 4095, &a->target_cpu)) why = "expected a CPU number 0..4095";
    } else if (strcmp(key, "jstackdepth") == 0) { /* N, or N/M: a stack deeper than N keeps its top M frames */
        char n[16];
        const char *slash = strchr(v, '/');
        size_t k = slash ? (size_t)(slash - v) : strlen(v);
        snprintf(n, sizeof n, "%.*s", (int)(k < sizeof n ? k : sizeof n - 1), v);
        a->jstackkeep = 0;
        if (k >= sizeof n || parse_int(n, 1, JS_MAX_JSTACKDEPTH, &a->jstackdepth) ||
            (slash && parse_int(slash + 1, 1, a->jstackdepth, &a->jstackkeep)))
            why = "expected a depth 1..8192, or N/M with M <= N";
    } else if (strcmp(key, "walker") == 0) {
        if (strcmp(v, "recover") == 0) a->walker = JS_WALKER_RECOVER;
        else if (strcmp(v, "agct") == 0) a->walker = JS_WALKER_AGCT;
        else why = "expected recover or agct";
    } else if (strcmp(key, "cstack") == 0) {
        if (strcmp(v, "fp") == 0) a->cstack = JS_CSTACK_FP;
        else if (strcmp(v, "dwarf") == 0 || strcmp(v, "vm") == 0) a->cstack = JS_CSTACK_DWARF; /* vm: the same frames */
        else if (strcmp(v, "no") == 0) a->cstack = JS_CSTACK_NO;
        else if (strcmp(v, "vmx") == 0) a->cstack = JS_CSTACK_DWARF, a->cstack_vmx = 1; /* said at start */
        else if (strcmp(v, "lbr") == 0)
            why = "not supported: jsampler walks native frames by frame pointers (fp), DWARF tables (dwarf, vm) or "
                  "not at all (no)";
        else why = "expected fp, dwarf, vm or no";
    } else if (strcmp(key, "file") == 0) {
        if (copy_value(a->file, sizeof a->file, v)) why = "expected a non-empty path under 1024 bytes";
    } else if (strcmp(key, "title") == 0) { /* "&#44;" stands for a comma, which cannot pass in an option */
        if (copy_value(a->title, sizeof a->title, v)) why = "expected a non-empty title under 256 bytes";
        for (char *c; (c = strstr(a->title, "&#44;")) != NULL;) memmove(c + 1, c + 5, strlen(c + 5) + 1), *c = ',';
    } else if (strcmp(key, "filter") == 0) {
        if (strspn(v, "0123456789-;,") == strlen(v))
            why = "thread id filters are not offered: filter= takes thread name patterns ('*' and '?' globs), and "
                  "filter alone samples the threads the Java API adds";
        else if (append_pattern(a->filter, sizeof a->filter, v)) why = "expected a thread name pattern; all under 1024 bytes";
    } else if (strcmp(key, "include") == 0) {
        if (append_pattern(a->include, sizeof a->include, v)) why = "expected a pattern; all under 1024 bytes";
    } else if (strcmp(key, "exclude") == 0) {
        if (append_pattern(a->exclude, sizeof a->exclude, v)) why = "expected a pattern; all under 1024 bytes";
    } else if (strcmp(key, "jfrfile") == 0) {
        if (copy_value(a->jfrfile, sizeof a->jfrfile, v)) why = "expected a non-empty path under 1024 bytes";
    } else if (strcmp(key, "chunksize") == 0) {
        a->chunk_size = js_parse_size(v);
        if (a->chunk_size < 65536) why = "expected a size of at least 64k, like 10m or 1048576";
    } else if (strcmp(key, "chunktime") == 0) {
        a->chunk_time_ns = parse_seconds(v);
        if (a->chunk_time_ns < 1000000000LL || a->chunk_time_ns > JS_HOUR_NS) why = "expected a duration of at least 1s and at most 1h, like 60s";
    } else if (strcmp(key, "jfrmaxsize") == 0) {
        a->jfr_max_size = js_parse_size(v);
        if (a->jfr_max_size < 65536) why = "expected a size of at least 64k, like 30m";
    } else if (strcmp(key, "timeout") == 0) {
        a->timeout_ns = parse_seconds(v);
        if (a->timeout_ns < 1000000LL) why = "expected a duration of at least 1ms and at most 30 days, like 30s or 2h";
    } else if (strcmp(key, "loop") == 0) {
        a->loop_ns = parse_seconds(v);
        if (a->loop_ns < 1000000000LL) why = "expected a duration of at least 1s and at most 30 days, like 10m";
    } else if (strcmp(key, "log") == 0) {
        if (copy_value(a->log, sizeof a->log, v)) why = "expected a non-empty path under 1024 bytes";
    } else if (strcmp(key, "loglevel") == 0) {
        if (parse_loglevel(a, v)) why = "expected debug, info, warn, error or none";
    } else if (strcmp(key, "clock") == 0) { /* JFR times are CLOCK_MONOTONIC */
        if (strcmp(v, "monotonic") != 0)
            why = "not supported: JFR event times are CLOCK_MONOTONIC (clock=monotonic); the TSC is not read";
    } else {
        snprintf(err, errlen, "unknown option '%s'", key);
        return -1;
    }
    if (why) {
        snprintf(err, errlen, "option '%s=%s': %s", key, v ? v : "", why);
        return -1;
    }
    return 0;
}

int js_args_parse(const char *cmd, js_args *a, char *err, size_t errlen)
{
    if (!cmd) return 0;
    const char *p = cmd;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char tok[TOKEN_MAX];
        if (n >= sizeof tok) {
            snprintf(err, errlen, "option '%.40s...': longer than %d bytes", p, TOKEN_MAX - 1);
            return -1;
        }
        memcpy(tok, p, n);
        tok[n] = 0;
        p += n + (end ? 1 : 0);
        if (n == 0) continue;
        char *eq = strchr(tok, '=');
        const char *val = NULL;
        if (eq) *eq = 0, val = eq + 1;
        if (tok[0] == 0) {
            snprintf(err, errlen, "option '=%s': missing option name", val);
            return -1;
        }
        int rc = parse_flag(a, tok, val, err, errlen);
        if (rc < 0) return -1;
        if (rc == 0 && parse_keyval(a, tok, val, err, errlen)) return -1;
    }
    return finish(a, err, errlen);
}

int js_expand_path(const char *pattern, int pid, long long epoch_sec, char *out, size_t outlen)
{
    return js_expand_path_seq(pattern, pid, epoch_sec, 0, out, outlen);
}

int js_expand_path_seq(const char *pattern, int pid, long long epoch_sec, unsigned seq, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[64];
        const char *add = piece;
        if (*p == '%' && p[1] == 'p') {
            snprintf(piece, sizeof piece, "%d", pid);
            p++;
        } else if (*p == '%' && p[1] == 't') {
            time_t t = (time_t)epoch_sec;
            struct tm tm;
            localtime_r(&t, &tm);
            strftime(piece, sizeof piece, "%Y%m%d-%H%M%S", &tm);
            p++;
        } else if (*p == '%' && p[1] == 'n') {
            snprintf(piece, sizeof piece, "%u", seq);
            p++;
        } else if (*p == '%' && p[1] == '%') {
            add = "%";
            p++;
        } else {
            piece[0] = *p;
            piece[1] = 0;
        }
        size_t n = strlen(add);
        if (o + n >= outlen) return -1;
        memcpy(out + o, add, n);
        o += n;
    }
    if (outlen == 0) return -1;
    out[o] = 0;
    return 0;
}

int js_args_jfr_path(const js_args *a, int pid, long long epoch_sec, char *out, size_t outlen)
{
    const char *pattern = "";
    if (a->file[0] && js_args_output_format(a, a->file) == JS_OUT_JFR) pattern = a->file;
    else if (a->jfrfile[0]) pattern = a->jfrfile;
    return js_expand_path(pattern, pid, epoch_sec, out, outlen);
}

js_out_format js_args_output_format(const js_args *a, const char *path)
{
    if (a->format != JS_OUT_NONE) return a->format;
    js_out_format f = path && *path ? js_out_format_from_path(path) : JS_OUT_NONE;
    return f != JS_OUT_NONE ? f : JS_OUT_COLLAPSED;
}
