/* pprof.h - profiles in the pprof format (perftools.profiles.Profile, gzip-compressed), written and read.
 *
 * Writer. A js_profile becomes a gzip-compressed Profile message (protobuf-c, proto/pprof/profile.proto):
 *   - sample types and period by kind (js_pprof_kind): two values per sample, a count and an amount;
 *   - one Sample message per sample: the SkyWalking OAP's pprof tree adds 1 per Sample message and never reads
 *     Sample.value, so a Sample per distinct stack would make it show stacks, not samples. For cpu, wall and
 *     events a sample is one unit of weight (value [1, period]); for alloc, live and lock one event of the
 *     stack's count (value [1, its share of the weight]; the weight is split exactly). Equal messages follow
 *     each other, which gzip shrinks to a few bits each. Above JS_PPROF_SPLIT_MAX bytes of messages (or when
 *     asked) one Sample per stack carries the sums instead (js_pprof_stats.aggregated says so);
 *   - locations and functions numbered 1..N in table order (the OAP finds them by position, id - 1);
 *   - a Java frame "pkg.Class.method:LINE" is function "pkg.Class.method" (file "pkg/Class.java", derived from
 *     the class name: the JVM's SourceFile attribute is not read) at line LINE (0 without `lines`);
 *   - each frame kind has its own mapping, named by js_pprof_kind_mapping ("[jit]", "[native]",
 *     "[kernel.kallsyms]", ...): that is how native and kernel frames are marked, and how the reader gets the
 *     kinds back;
 *   - a thread root frame "[name tid=N]" becomes the sample's labels thread=name and thread_id=N.
 *
 * Reader. Reads such a profile back, and the profiles Go's runtime/pprof, `go tool pprof -proto` and other
 * writers make, into a js_profile. Input is untrusted: the file is inflated as a stream (gzip, or an
 * uncompressed Profile), at most JS_PPROF_READ_MAX bytes of it; each top-level field is read whole (at most
 * JS_PPROF_FIELD_MAX bytes) and unpacked with protobuf-c through a counting allocator; samples are aggregated
 * per distinct (locations, thread) as they come, so memory grows with the distinct content, not with the number
 * of samples, and each table has a cap (JS_PPROF_MAX_*). Every malformed input is -1 with one line
 * "NAME: offset N: what" (N: the byte of the decompressed stream).
 *   - the sample type: JS_PPROF_READ opts sample_type by name ("cpu", "alloc_space", ...), else the profile's
 *     default_sample_type, else its last; stacks whose value is 0 or less are left out; a stack's count is its
 *     value of the first type counted in "count" (the samples behind a cpu time, the objects behind bytes);
 *   - names: a location's lines from the caller (the last) to the innermost (the first), each the function's
 *     name, ":LINE" appended with lines; a location without lines is "[file]" of its mapping, else its address;
 *   - kinds: this writer's mappings give them back; otherwise "[kernel.kallsyms]" / "[vdso]" mappings are
 *     kernel, a function file ending in .java, .kt, .scala, .groovy or .clj is a Java frame (JIT), other files
 *     are native, and names without a file are guessed as collapsed input is (collapsed_read.h);
 *   - units: "count" becomes "samples", "nanoseconds" "ns", others are kept.
 * Not for signal context.
 */
#ifndef JS_PPROF_H
#define JS_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "output/profile.h"

#define JS_PPROF_SPLIT_MAX (1ull << 30)  /* raw bytes of one-Sample-per-sample messages before aggregating */
#define JS_PPROF_READ_MAX (2ull << 30)   /* decompressed bytes read at most (a gzip bomb ends there) */
#define JS_PPROF_FIELD_MAX (16u << 20)   /* bytes of one top-level field (a Sample, a Location, a string) */
#define JS_PPROF_MAX_TYPES 32            /* sample types */
#define JS_PPROF_MAX_TABLE (1u << 22)    /* locations, functions, mappings, strings, distinct stacks: each */
#define JS_PPROF_MAX_DEPTH 65536         /* frames of one stack, inlined lines included */

/* What the weights of a profile are; the sample types, period and message split follow from it. */
typedef enum {
    JS_PPROF_SAMPLES = 0, /* samples/count only (a collapsed profile: what a sample was is not known) */
    JS_PPROF_CPU,         /* samples/count, cpu/nanoseconds; period cpu/nanoseconds */
    JS_PPROF_WALL,        /* samples/count, wall/nanoseconds; period wall/nanoseconds */
    JS_PPROF_EVENTS,      /* samples/count, EVENT/events (a perf counter, a tracepoint); period EVENT/events */
    JS_PPROF_ALLOC,       /* alloc_objects/count, alloc_space/bytes (count = sampled allocations); period space/bytes */
    JS_PPROF_LIVE,        /* inuse_objects/count, inuse_space/bytes; period space/bytes */
    JS_PPROF_LOCK,        /* contentions/count, delay/nanoseconds; period contentions/count, 1 */
    JS_PPROF_VALUE,       /* one value, type and unit as given (a pprof profile read back): one Sample per stack */
    JS_PPROF_THREADS,     /* threads/count: a thread snapshot (a thread dump, thread starts), one Sample per thread */
    JS_PPROF_KINDS
} js_pprof_kind;

typedef struct {
    js_pprof_kind kind;
    const char *event;   /* JS_PPROF_EVENTS: the event's name (NULL: "events"); JS_PPROF_VALUE: the type */
    const char *unit;    /* JS_PPROF_VALUE: the unit (NULL: "count") */
    int64_t period;      /* the sampling interval in the amount's unit (ns, bytes, events); 0 = not known, and then
                          * cpu, wall and events write their count only */
    int64_t time_ns;     /* when the profile started, ns since the epoch; 0 = not known */
    int64_t duration_ns; /* 0 = not known */
    int aggregate;       /* 1: one Sample per stack (smaller; every reader but the OAP reads it right) */
    int level;           /* gzip level 1..9; 0 = 6 */
    const char *comment; /* NULL, or free text for the profile's comment */
} js_pprof_opts;

typedef struct {
    uint64_t samples;  /* Sample messages written */
    uint64_t raw;      /* bytes of the Profile message before compression */
    int aggregated;    /* 0: one Sample per sample; 1: asked for; 2: past JS_PPROF_SPLIT_MAX */
} js_pprof_stats;

/* Writes p to f as a gzip-compressed pprof Profile; st may be NULL. 0, or -1 with one line in err. */
int js_write_pprof(FILE *f, const js_profile *p, const js_pprof_opts *o, js_pprof_stats *st, char *err,
                   size_t errlen);
/* The mapping name that marks frames of kind t ("[jit]", "[kernel.kallsyms]", ...). */
const char *js_pprof_kind_mapping(js_frame_type t);

typedef struct {
    const char *sample_type; /* NULL: the default (see above) */
    int lines;               /* append ":LINE" (line > 0) to every frame */
    int threads;             /* a "[name tid=N]" root per thread label */
    uint64_t max_bytes;      /* decompressed bytes read at most; 0 = JS_PPROF_READ_MAX */
} js_pprof_read_opts;

typedef struct {
    char type[64], unit[64];   /* the sample type read */
    char types[512];           /* every sample type, "samples/count, cpu/nanoseconds" */
    char period_type[64], period_unit[64];
    int64_t period, time_ns, duration_ns;
    uint64_t messages;         /* Sample messages read */
    uint64_t bytes;            /* decompressed bytes read */
    int gzip;                  /* the input was gzip-compressed */
} js_pprof_read_info;

/* Reads the pprof profile in f (from its current position to its end) into p, which must be initialised; name is
 * used in messages; info may be NULL. 0, or -1 with one line in err. */
int js_pprof_read_file(FILE *f, const char *name, const js_pprof_read_opts *o, js_profile *p,
                       js_pprof_read_info *info, char *err, size_t errlen);
/* The same for a profile held in memory (tests, fuzzing). */
int js_pprof_read_mem(const void *data, size_t len, const char *name, const js_pprof_read_opts *o, js_profile *p,
                      js_pprof_read_info *info, char *err, size_t errlen);

#endif
