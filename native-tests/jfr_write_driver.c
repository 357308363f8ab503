/* jfr_write_driver.c - writes JFR files with known content through jfr_write.h, for
 * jfr_tool_check.sh, which checks them with the JDK's `jfr` tool.
 *
 *   jfr_write_driver single|multi|capped OUT.jfr EXPECT.json
 *   jfr_write_driver bench OUT.jfr EVENTS STACKS      prints "events bytes bytes/event"
 *
 * EXPECT.json lists what the file must contain: per (thread, stack) event counts with every frame
 * as [class (internal form), method, descriptor, line (0 = none), bci, frame type], the settings, the event and
 * chunk totals. Counts are taken from the writer's own accounting of what it wrote vs dropped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jfr/jfr_write.h"

#define NTRACES 6
#define NTHREADS 4
#define MAXF 8
#define LONG_REPEAT 5000

typedef struct {
    uint64_t key;
    const char *cls, *name, *sig;
} fx_method;

typedef struct {
    uint64_t method;
    int32_t line, bci;
    uint8_t type;
} fx_frame;

static char long_name[2 + 2 * LONG_REPEAT + 1]; /* "Lx" + "é" x 5000: over the 8191-byte cap */

static const fx_method methods[] = {
    {101, "java/lang/Thread", "run", "()V"},
    {102, "com/example/App", "main", "([Ljava/lang/String;)V"},
    {103, "com/example/App", "compute", "(I)J"},
    {104, "com/example/\xc3\x9cn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9", "m\xc3\xa9" "thode_\xce\xbb", "()V"},
    {105, "com/example/Long", long_name, "()V"},
    {106, "", "[unknown_Java]", ""},
    {107, "Default", "run", "()V"},
    {108, "java/lang/Object", "wait", "(J)V"},
};
#define NMETHODS (sizeof methods / sizeof methods[0])

/* Traces 1..NTRACES, leaf first; trace 6 is unknown to the source (the writer writes "[unknown]"). */
static const fx_frame traces[NTRACES][MAXF] = {
    {{103, 42, 7, 1}, {102, 10, 3, 0}, {101, 5, 0, 2}},
    {{104, 1, 0, 6}, {102, 11, 4, 0}, {101, 5, 0, 1}},
    {{106, -1, -1, 4}, {101, 5, 0, 1}},
    {{105, 100000, 65535, 1}, {107, -1, -1, 0}},
    {{108, -1, -1, 3}, {103, 43, 9, 1}, {102, 12, 5, 0}},
    {{0}},
};

static const js_jfr_thread threads[NTHREADS] = {
    {"main", 1000, "main", 1},
    {"worker-1", 1001, "pool-1-thread-1", 22},
    {"GC Thread#0", 1002, NULL, 0},
    {NULL, 0, NULL, 0}, /* unknown to the source */
};

static const js_jfr_setting settings[] = {{"event", "cpu"}, {"interval", "10000000"}, {"jstackdepth", "2048"}};

/* Frames in a trace (0 = unknown). */
static int trace_len(uint32_t id)
{
    int n = 0;
    while (n < MAXF && traces[id - 1][n].method) n++;
    return n;
}

/* Trace keys: 1..NTRACES, and in mode "flushed" also aliases id + k * NTRACES (k = 1..3) of the same stacks. */
static int src_trace(void *ctx, uint64_t key, js_jfr_frame *out, int max, int *truncated)
{
    uint32_t id = key >= 1 && key <= 4 * NTRACES ? (uint32_t)(key - 1) % NTRACES + 1 : 0;
    int n = id ? trace_len(id) : 0;
    if (n == 0) return -1;
    *truncated = n > max;
    if (n > max) n = max;
    for (int i = 0; i < n; i++) {
        const fx_frame *f = &traces[id - 1][i];
        out[i] = (js_jfr_frame){f->method, f->line, f->bci, f->type};
    }
    return n;
}

static int src_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].key == key) {
            *out = (js_jfr_method){methods[i].cls, methods[i].name, methods[i].sig, 9, 0};
            return 0;
        }
    return -1;
}

static int src_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    if (id < 1 || id > NTHREADS || !threads[id - 1].os_name) return -1;
    *out = threads[id - 1];
    return 0;
}

/* ---- bench source: STACKS traces of depth 20 over 200 methods ---- */

static int bench_trace(void *ctx, uint64_t id, js_jfr_frame *out, int max, int *truncated)
{
    int n = 20 < max ? 20 : max;
    *truncated = 0;
    for (int i = 0; i < n; i++)
        out[i] = (js_jfr_frame){1000 + (id * 7 + (uint32_t)i * 13) % 200, 10 + i, i, (uint8_t)(i ? 0 : 1)};
    return n;
}

static int bench_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    static char name[32];
    snprintf(name, sizeof name, "method%llu", (unsigned long long)key);
    *out = (js_jfr_method){"org/bench/Worker", name, "()V", 1, 0};
    return 0;
}

static int bench_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    *out = (js_jfr_thread){"bench", id, "bench", id};
    return 0;
}

/* Print s as a JSON string. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* The method name the file must show: cut to 8191 bytes at a UTF-8 boundary. */
static void expected_name(const char *s, char *out, size_t outlen)
{
    size_t n = strlen(s);
    if (n > 8191) {
        n = 8191;
        while ((s[n] & 0xC0) == 0x80) n--;
    }
    snprintf(out, outlen, "%.*s", (int)n, s);
}

/* One expected frame as [class, method, descriptor, line, bci, type]. */
static void json_frame(FILE *f, const fx_frame *fr)
{
    static const char *const types[] = {"Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel",
                                        "C1 compiled"};
    static char name[9000];
    const fx_method *m = NULL;
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].key == fr->method) m = &methods[i];
    expected_name(m->name, name, sizeof name);
    fputc('[', f);
    json_str(f, m->cls);
    fputc(',', f);
    json_str(f, name);
    fputc(',', f);
    json_str(f, m->sig[0] ? m->sig : "()L;");
    fprintf(f, ",%d,%d,\"%s\"]", fr->line > 0 ? fr->line : 0, fr->bci, types[fr->type]); /* no line: 0 */
}

/* The expectation file: per (thread, trace) counts, settings, totals. */
static int write_expect(const char *path, uint64_t counts[NTHREADS][NTRACES], const js_jfr_stats *st,
                        uint64_t max_size)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"events\": %llu, \"dropped\": %llu, \"chunks\": %llu, \"max_size\": %llu, \"settings\": [",
            (unsigned long long)st->events, (unsigned long long)st->dropped_by_cap, (unsigned long long)st->chunks,
            (unsigned long long)max_size);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        fprintf(f, "%s[", i ? "," : "");
        json_str(f, settings[i].name);
        fputc(',', f);
        json_str(f, settings[i].value);
        fputc(']', f);
    }
    fprintf(f, "],\n\"stacks\": [");
    int first = 1;
    for (int t = 0; t < NTHREADS; t++)
        for (int s = 0; s < NTRACES; s++) {
            if (!counts[t][s]) continue;
            fprintf(f, "%s\n{\"thread\": ", first ? "" : ",");
            first = 0;
            json_str(f, threads[t].os_name ? (threads[t].java_name ? threads[t].java_name : threads[t].os_name)
                                           : "[unknown]");
            fprintf(f, ", \"count\": %llu, \"frames\": [", (unsigned long long)counts[t][s]);
            int n = trace_len((uint32_t)s + 1);
            for (int i = 0; i < n; i++) {
                if (i) fputc(',', f);
                json_frame(f, &traces[s][i]);
            }
            if (!n) fprintf(f, "[\"\",\"[unknown]\",\"()L;\",0,-1,\"C++\"]");
            fprintf(f, "]}");
        }
    fprintf(f, "\n]}\n");
    return fclose(f);
}

/* Write a recording of `n` samples in the given mode; the expectation goes to expect. */
static int run(const char *mode, const char *out, const char *expect)
{
    js_jfr_options o = {0};
    o.recording_name = "driver";
    o.settings = settings;
    o.nsettings = sizeof settings / sizeof settings[0];
    int n = 600;
    if (strcmp(mode, "multi") == 0) o.chunk_size = 16384, n = 6000;
    if (strcmp(mode, "capped") == 0) o.max_size = 40000, n = 5000;
    int aliases = strcmp(mode, "flushed") == 0; /* several keys per stack, each new stack in a checkpoint of its own */
    if (aliases) o.chunk_size = 65536, o.trace_buffer = 1, n = 6000;
    js_jfr_source src = {NULL, src_trace, src_method, src_thread};
    char err[512];
    uint64_t t0 = 1000000000000ULL, counts[NTHREADS][NTRACES] = {{0}};
    js_jfr_writer *w = js_jfr_open(out, &o, &src, t0, err, sizeof err);
    if (!w) return fprintf(stderr, "%s\n", err), 1;
    for (int i = 0; i < n; i++) {
        uint32_t trace = 1 + (uint32_t)(i * 7 + i / 5) % NTRACES, thread = 1 + (uint32_t)(i * 3 + i / 7) % NTHREADS;
        uint32_t weight = 1 + (uint32_t)i % 3;
        js_jfr_stats before, after;
        js_jfr_get_stats(w, &before);
        uint64_t ticks = t0 + (uint64_t)i * 1000000;
        uint64_t key = trace + (aliases ? (uint64_t)(i / 11 % 4) * NTRACES : 0);
        if (js_jfr_execution_sample(w, ticks, thread, key, JS_JFR_STATE_RUNNABLE, weight, err, sizeof err) != 0 ||
            js_jfr_maybe_rotate(w, ticks, err, sizeof err) != 0)
            return fprintf(stderr, "%s\n", err), 1;
        js_jfr_get_stats(w, &after);
        counts[thread - 1][trace - 1] += after.events - before.events;
    }
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    if (js_jfr_close(w, t0 + (uint64_t)n * 1000000, err, sizeof err) != 0) return fprintf(stderr, "%s\n", err), 1;
    return write_expect(expect, counts, &st, o.max_size) != 0;
}

/* Bench: `events` weight-1 samples over `stacks` traces; prints the bytes per event. */
static int bench(const char *out, long events, long stacks)
{
    js_jfr_source src = {NULL, bench_trace, bench_method, bench_thread};
    js_jfr_options o = {0};
    char err[512];
    uint64_t t0 = 5000000000000ULL;
    js_jfr_writer *w = js_jfr_open(out, &o, &src, t0, err, sizeof err);
    if (!w) return fprintf(stderr, "%s\n", err), 1;
    for (long i = 0; i < events; i++)
        if (js_jfr_execution_sample(w, t0 + (uint64_t)i * 10000000, 1 + (uint32_t)(i % 8), 1 + (uint32_t)(i % stacks),
                                    JS_JFR_STATE_RUNNABLE, 1, err, sizeof err) != 0)
            return fprintf(stderr, "%s\n", err), 1;
    if (js_jfr_close(w, t0 + (uint64_t)events * 10000000, err, sizeof err) != 0)
        return fprintf(stderr, "%s\n", err), 1;
    struct stat sb;
    if (stat(out, &sb) != 0) return 1;
    printf("%ld events, %lld bytes, %.2f bytes/event\n", events, (long long)sb.st_size,
           (double)sb.st_size / (double)events);
    return 0;
}

int main(int argc, char **argv)
{
    memcpy(long_name, "Lx", 2);
    for (int i = 0; i < LONG_REPEAT; i++) memcpy(long_name + 2 + 2 * i, "\xc3\xa9", 2);
    if (argc == 5 && strcmp(argv[1], "bench") == 0) return bench(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc != 4 || (strcmp(argv[1], "single") && strcmp(argv[1], "multi") && strcmp(argv[1], "capped") &&
                      strcmp(argv[1], "flushed"))) {
        fprintf(stderr, "usage: %s single|multi|capped|flushed OUT.jfr EXPECT.json | bench OUT.jfr EVENTS STACKS\n",
                argv[0]);
        return 2;
    }
    return run(argv[1], argv[2], argv[3]);
}
