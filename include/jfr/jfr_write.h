/* jfr_write.h - JFR recording writer: chunks, metadata, constant pools, sample events.
 *
 * One writer thread owns a js_jfr_writer (not thread-safe, never from a signal handler).
 * Events are encoded as they arrive and written through a bounded buffer; each chunk ends with
 * one checkpoint holding every pool entry its events referenced, then its header is patched, so
 * every finished chunk is complete on disk before the next one starts. What the pools hold is
 * pulled through a js_jfr_source (a table of function pointers the producer fills: the agent from
 * its store and name cache, tests from fixtures):
 *   - stack traces eagerly: an event names its stack by the producer's 64-bit key, which must mean
 *     the same frames wherever it appears in a chunk (the agent uses the store's hash of the frames).
 *     The frames are asked for once per key and chunk, inside the js_jfr_execution_sample or
 *     js_jfr_write_event call that first names the key in that chunk, and encoded at once; so once
 *     that call returns the producer may forget the key. The writer identifies stacks by content:
 *     keys that give the same frames share one StackTrace entry, and the file's StackTrace keys are
 *     the writer's own (small, and never those of the previous chunk: the JDK's reader keeps the
 *     previous chunk's entry for a key it sees again). The frames, their types and lines, are those
 *     the source gave for the key's first event in the chunk: a method compiled later in the chunk
 *     keeps the type it had then.
 *   - methods and threads lazily, at chunk end: method keys must stay valid (same key = same
 *     method) for the writer's life, thread ids until the chunk that references them ends.
 * Method, class and thread keys stay stable across chunks (same key = same content). A chunk writes
 * each distinct stack once: encoded entries wait in memory up to 1 MiB (trace_buffer), then go to the file in a
 * checkpoint of their own inside the chunk (chained to the chunk's last checkpoint, as HotSpot
 * chains its own). Memory: those entries, per-chunk sets of referenced ids and an index of the
 * chunk's stacks (a chunk is due for rotation once it has seen 128 Ki keys or stacks, so the index
 * stays within about 7 MiB between calls of js_jfr_maybe_rotate), plus maps sized by distinct
 * methods, classes and threads; nothing grows with the number of events. Line numbers: -1 (any
 * negative) on input is "unknown"; the file gets 0 for it, as other JFR producers write. Errors: -1
 * and one line in err.
 */
#ifndef JS_JFR_WRITE_H
#define JS_JFR_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* Thread states written in the ThreadState pool (HotSpot's JVMTI-bit keys). A CPU sample takes no thread state:
 * it is written as STATE_DEFAULT (key 0, as async-profiler writes it, whose converter counts an execution sample as
 * CPU by that name and as wall by any other; HotSpot's key 0, NEW, is never a sampled thread's state). */
#define JS_JFR_STATE_DEFAULT 0
#define JS_JFR_STATE_RUNNABLE 5
#define JS_JFR_STATE_SLEEPING 225
#define JS_JFR_STATE_PARKED 657
#define JS_JFR_STATE_IN_OBJECT_WAIT 401
#define JS_JFR_STATE_BLOCKED 1025
#define JS_JFR_STATE_IN_NATIVE 4194309 /* JVMTI_THREAD_STATE_IN_NATIVE | RUNNABLE: a native method in a system call */

typedef struct {
    uint64_t method; /* caller's method key, non-zero; equal keys = same method */
    int32_t line;    /* -1 unknown (written as 0, "no line") */
    int32_t bci;     /* -1 unknown */
    uint8_t type;    /* js_frame_type 0..6 (Interpreted, JIT compiled, Inlined, Native, C++, Kernel, C1) */
} js_jfr_frame;

typedef struct {
    const char *class_name; /* internal form: "java/util/HashMap$Node"; "" for pseudo frames */
    const char *name;       /* method name */
    const char *descriptor; /* JVM signature "(I)V", or "" (written as "()L;", like async-profiler) */
    int32_t modifiers;
    int hidden;
} js_jfr_method;

typedef struct {
    const char *os_name;
    uint64_t os_tid;
    const char *java_name; /* NULL for a thread the JVM does not know */
    uint64_t java_tid;     /* 0 if unknown */
} js_jfr_thread;

/* What the writer asks the producer: trace when an event first names a trace key in the chunk,
 * method and thread at chunk end. Strings returned must stay valid until the next call on the same
 * source. Each returns 0, or -1 if the id is unknown (the writer then writes a placeholder entry
 * such as "[unknown]" so no event is left dangling). */
typedef struct {
    void *ctx;
    /* Frames of the stack of trace key `key`, leaf first, into out[0..max); *truncated = 1 if cut at
     * max. Returns the frame count (>= 1) or -1. Called at most once per key and chunk, and only from
     * within the js_jfr_execution_sample or js_jfr_write_event call whose event names key (so a
     * producer may answer from the event in hand). */
    int (*trace)(void *ctx, uint64_t key, js_jfr_frame *out, int max, int *truncated);
    int (*method)(void *ctx, uint64_t key, js_jfr_method *out);
    int (*thread)(void *ctx, uint32_t id, js_jfr_thread *out);
} js_jfr_source;

typedef struct {
    const char *name, *value;
} js_jfr_setting;

#define JS_JFR_TYPE_BASE_MAX 16000

typedef struct {
    uint64_t chunk_size;    /* start a new chunk past this many bytes (written, plus the stack traces
                             * waiting in memory); 0 = 64 MiB */
    uint64_t chunk_time_ns; /* start a new chunk after this long; 0 = never */
    uint64_t max_size;      /* stop writing events once the file would pass this; 0 = no cap. From the
                             * first event that would not fit (pool entries included), events are
                             * counted in dropped_by_cap and no chunk is started; the file stays
                             * complete. A cap below one empty chunk (about 3 KB) still writes it. */
    int max_depth;          /* frames asked of source->trace; 0 = 2048 */
    uint32_t trace_buffer;  /* bytes of encoded stack traces held before they are written in a checkpoint
                             * of their own within the chunk; 0 = 1 MiB */
    uint32_t type_base;     /* added to every type id of the file (0: ours as jfr_meta.h lists them; at most
                             * JS_JFR_TYPE_BASE_MAX, so that every id takes at most 2 varint bytes). A chunk that joins
                             * a JDK recording (jfrsync) takes ids above the JDK's: its tools (jfr print --events, jfr
                             * summary) cache what they know of a type by id, file-wide */
    const char *recording_name;              /* jdk.ActiveRecording name */
    const js_jfr_setting *settings; int nsettings; /* written as jdk.ActiveSetting in every chunk */
} js_jfr_options;

typedef struct {
    uint64_t events, dropped_by_cap, chunks, bytes;
    uint64_t traces;      /* StackTrace entries written (one per distinct stack and chunk) */
    uint64_t trace_pulls; /* calls of source->trace (one per trace key and chunk) */
} js_jfr_stats;

typedef struct js_jfr_writer js_jfr_writer;

/* Create (truncate) path and start the first chunk. The file is opened with O_NOFOLLOW and mode
 * 0600 (for a new file): a symbolic link at path is an error ("... it is a symbolic link (not
 * followed)"), never a way to overwrite its target. start_ticks is the CLOCK_MONOTONIC ns the
 * recording starts at; all event ticks use that clock (ticksPerSecond = 1e9). */
js_jfr_writer *js_jfr_open(const char *path, const js_jfr_options *o, const js_jfr_source *src, uint64_t start_ticks,
                           char *err, size_t errlen);
/* Append `weight` jdk.ExecutionSample events (capped at 1000) for thread id, trace key, state key.
 * If the trace key is new to the current chunk, its frames are pulled through source->trace and
 * encoded now: once this returns, the producer may forget the key. Thread ids must be in
 * 1..2^31-1, trace keys non-zero (else -1, "invalid JFR sample"). Events over max_size are
 * dropped and counted, still returning 0; -1 means a write error ("cannot write JFR 'PATH': why"),
 * after which every call fails the same way and only js_jfr_close remains to be called. */
int js_jfr_execution_sample(js_jfr_writer *w, uint64_t ticks, uint32_t thread, uint64_t trace, uint32_t state,
                            uint32_t weight, char *err, size_t errlen);
/* The other events a profiler writes (jdk.ExecutionSample keeps js_jfr_execution_sample). Field layouts are
 * the JDK's and async-profiler 3.0's (the OAP reads them by position). */
typedef enum {
    JS_JFR_EV_ALLOC = 1,   /* jdk.ObjectAllocationInNewTLAB: allocationSize = size, tlabSize = weight */
    JS_JFR_EV_MONITOR,     /* jdk.JavaMonitorEnter: duration, monitorClass; no previous owner, address 0 */
    JS_JFR_EV_PARK,        /* jdk.ThreadPark: duration, parkedClass, timeout (ns) or until (ms since the epoch) */
    JS_JFR_EV_WALL,        /* profiler.WallClockSample: state, samples = weight, timeSpan = span */
    JS_JFR_EV_ALLOC_OUTSIDE /* jdk.ObjectAllocationOutsideTLAB: allocationSize = weight (the bytes it stands for) */
} js_jfr_event_type;

typedef struct {
    js_jfr_event_type type;
    uint64_t ticks;         /* start (CLOCK_MONOTONIC ns) */
    uint64_t duration;      /* monitor, park: ns */
    uint32_t thread;        /* as for js_jfr_execution_sample */
    uint64_t trace;         /* trace key, as for js_jfr_execution_sample */
    uint32_t state;         /* wall: thread state key */
    const char *class_name; /* alloc, monitor, park: internal name ("java/lang/Object", "[B"), or NULL for none */
    uint64_t size, weight;  /* alloc: the object's size and the bytes the sample stands for; wall: samples */
    int64_t timeout, until; /* park; INT64_MIN for none */
    uint64_t span;          /* wall: ns the sample stands for */
} js_jfr_event;

/* Append one event of a type above (trace handling, thread and trace ranges, max_size and errors as for
 * js_jfr_execution_sample). */
int js_jfr_write_event(js_jfr_writer *w, const js_jfr_event *e, char *err, size_t errlen);
/* One process as /proc shows it (async-profiler's profiler.ProcessSample, field for field). */
typedef struct {
    int32_t pid, ppid;
    char name[17];          /* comm */
    char cmdline[2048];     /* arguments joined by spaces, cut */
    uint32_t uid;
    uint8_t state;          /* 'R', 'S', 'D', ... */
    uint64_t start_ms;      /* process start, ms since the epoch */
    float cpu_user, cpu_system; /* CPU seconds since the process started */
    float cpu_fraction;     /* CPU seconds per second over the last period (1.0 = one CPU) */
    uint32_t threads;
    uint64_t vm_size, vm_rss, rss_anon, rss_files, rss_shmem; /* bytes */
    uint64_t minor_faults, major_faults;
    uint64_t io_read, io_write; /* bytes read from and written to storage */
} js_jfr_process;

/* Append one profiler.ProcessSample at ticks (no thread, no stack; max_size and errors as above). */
int js_jfr_process_sample(js_jfr_writer *w, uint64_t ticks, const js_jfr_process *p, char *err, size_t errlen);
/* Finish the current chunk and start a new one if chunk_size or chunk_time is reached (only when
 * the chunk holds an event, and never once max_size was reached). */
int js_jfr_maybe_rotate(js_jfr_writer *w, uint64_t now_ticks, char *err, size_t errlen);
/* Append one profiler.Window (begin=/end=): from start to end (CLOCK_MONOTONIC ns), closed by thread id (as for
 * js_jfr_execution_sample). max_size and errors as above. */
int js_jfr_window(js_jfr_writer *w, uint64_t start, uint64_t end, uint32_t thread, char *err, size_t errlen);
/* Finish the current chunk now and start a new one (a dump: the file is complete up to here), when the chunk holds an
 * event and max_size leaves room for another. */
int js_jfr_end_chunk(js_jfr_writer *w, uint64_t now_ticks, char *err, size_t errlen);
/* Finish the last chunk, close the file, free w (also on error; NULL is a no-op). */
int js_jfr_close(js_jfr_writer *w, uint64_t end_ticks, char *err, size_t errlen);
/* Counters so far. */
void js_jfr_get_stats(const js_jfr_writer *w, js_jfr_stats *st);

#endif
