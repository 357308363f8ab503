/* jfr_read.h - read JFR recordings (the JDK's own, async-profiler's, jsampler's) into a js_profile.
 *
 * Streaming: the file is read chunk by chunk through a bounded window (pread), never slurped. Per chunk:
 * the header, the metadata event (types and fields found by name, never by id, so JDK 17, JDK 25 and
 * other writers all work), every pool in the checkpoint chain (decoded generically by the metadata; only
 * threads, stack traces, methods, classes, symbols, frame types and strings are kept), then the events of
 * the selected kind, aggregated per (stack trace, thread, leaf class) and resolved into the profile at
 * chunk end. Memory: one chunk's pools and aggregates plus the profile, which is merged as it grows.
 *
 * Events per kind (weights):
 *   cpu   jdk.ExecutionSample, jdk.NativeMethodSample           1 per event            unit "samples"
 *   wall  profiler.WallClockSample                              field `samples`, else 1 unit "samples"
 *   alloc jdk.ObjectAllocationInNewTLAB                         tlabSize, else allocationSize
 *         jdk.ObjectAllocationOutsideTLAB                       allocationSize
 *         jdk.ObjectAllocationSample                            weight                 unit "bytes"
 *   lock  jdk.JavaMonitorEnter, jdk.ThreadPark                  duration in ns         unit "ns"
 *
 * Frames, root first: optional thread root "[name tid=N]" (type thread; name = Java name, else OS name;
 * N = OS thread id), the stack's frames from the outermost caller to the leaf, and for alloc and lock
 * events the class involved as a leaf frame named like async-profiler's collapsed output: the Java class
 * name plus "_[i]" (type inlined: allocation in a new TLAB, or the monitor/parked class of a lock event)
 * or "_[k]" (type kernel: allocation outside a TLAB or a jdk.ObjectAllocationSample), e.g.
 * "java.lang.String_[i]", "byte[]_[k]". A method frame is "pkg.Class.method" (class name with '/' -> '.',
 * a hidden-class suffix from "/0x" or "+0x" on dropped, as the agent does); a method whose class has no
 * name is named by the method name alone (of type error when it is bracketed, "[unknown_Java]": the
 * pseudo frames profilers write); --lines appends ":LINE" when the line is known (> 0). Frame
 * types come from the FrameType pool's description ("Interpreted", "JIT compiled", "Inlined", "Native",
 * "C++", "Kernel", "C1 compiled"); a missing or unknown one counts as JIT. A method missing from its pool
 * (or its name) is "[unknown_method]" (type error); an event whose stack trace is missing has no stack frames.
 *
 * Time: an event's time is its chunk's startNanos + (ticks - startTicks) * 1e9 / ticksPerSecond; the
 * recording starts at the first chunk's startNanos. A range keeps events with from <= time < to.
 *
 * Errors: -1 and one line "NAME: offset N: what" (N = absolute byte offset in the file) for every
 * malformed input (bad magic, unknown major version, sizes or offsets past the end or backwards, cyclic
 * checkpoint chains, nesting too deep, counts larger than the bytes left, zero-size records, unknown
 * string encodings); no allocation is larger than what the bytes left could hold.
 *
 * Cut recordings: a chunk after the first that the file does not hold complete is left out, and reading
 * stops there and succeeds with what the complete chunks before it hold; stats->unfinished_at gives its
 * offset. Two cases: its header still says size 0 (a writer never finished it: the process was killed
 * while it wrote it; unfinished_cut = 0), or the file ends before the chunk does (the header, or the
 * size it gives, runs past the end of the file: a copy taken while it was written, or a truncated file;
 * unfinished_cut = 1). Bytes after the last chunk that do not start like a chunk ("FLR") are still an
 * error. An unfinished or cut first chunk has nothing complete to read and is an error.
 *
 * The reader's own files (src/jfr_read*.c, src/jfr_meta_read*.c) share the internal jfr_read_int.h.
 */
#ifndef JS_JFR_READ_H
#define JS_JFR_READ_H

#include <stddef.h>
#include <stdint.h>
#include "output/profile.h"

typedef enum { JS_JFR_READ_CPU = 0, JS_JFR_READ_WALL, JS_JFR_READ_ALLOC, JS_JFR_READ_LOCK } js_jfr_read_kind;

typedef struct {
    js_jfr_read_kind kind;
    const char *thread;  /* keep only threads whose name matches: a glob if it has '*' or '?', else a
                          * substring; NULL or "" = all threads */
    int has_from, has_to;
    int from_abs, to_abs; /* 1: the value is ns since the epoch; 0: ns since the recording start */
    int64_t from_ns, to_ns;
    int lines;            /* append ":LINE" to method frames */
    int threads;          /* add a "[name tid=N]" root frame per thread */
} js_jfr_read_opts;

typedef struct {
    uint64_t chunks;  /* chunks read */
    uint64_t events;  /* events of the selected kind kept (after the thread and time filters) */
    uint64_t skipped; /* events of the selected kind dropped by the thread or time filter */
    uint64_t unfinished_at; /* offset of an unfinished last chunk that was left out, 0 if none */
    int unfinished_cut;     /* 1: that chunk runs past the end of the file; 0: its size was still 0 */
    int64_t start_ns, end_ns; /* the chunks read span [start_ns, end_ns), ns since the epoch (their headers'
                               * start and duration); 0, 0 when no chunk was read */
    uint64_t pool_probes;     /* slots looked at to place constant pool entries: about one an entry, whatever keys
                               * the file chose (a crafted file must not make the tables quadratic) */
} js_jfr_read_stats;

/* Reads the JFR recording in the seekable file fd (from offset 0 to its size) into p, which must be
 * initialised; name is used in messages. stats may be NULL. 0, or -1 with one line in err. */
int js_jfr_read_fd(int fd, const char *name, const js_jfr_read_opts *o, js_profile *p, js_jfr_read_stats *stats,
                   char *err, size_t errlen);
/* Same for a recording held in memory (tests, fuzzing). */
int js_jfr_read_mem(const void *data, size_t len, const char *name, const js_jfr_read_opts *o, js_profile *p,
                    js_jfr_read_stats *stats, char *err, size_t errlen);
/* Parses an event kind name ("cpu", "wall", "alloc", "lock"); 0, or -1 if unknown. */
int js_jfr_read_kind_parse(const char *s, js_jfr_read_kind *out);
/* Name of a kind ("cpu", ...). */
const char *js_jfr_read_kind_name(js_jfr_read_kind k);
/* The JFR event types a kind reads, for messages ("jdk.ExecutionSample or jdk.NativeMethodSample"). */
const char *js_jfr_read_kind_events(js_jfr_read_kind k);
/* Parses a --from/--to value: "@MS" = absolute, milliseconds since the epoch; else a duration since the
 * recording start, a decimal number with an optional unit ns, us, ms, s (default), m, h ("90", "1.5s",
 * "200ms", "2m"). 0, or -1 if malformed or out of range. */
int js_jfr_read_parse_time(const char *s, int *absolute, int64_t *ns);

#endif
