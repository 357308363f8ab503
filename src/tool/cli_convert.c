/* cli_convert.c - jsampler convert: a profile read from one format and written in another.
 *
 * Exit status: 0 success, 1 input/output error (unreadable or malformed input, failed write), 2 usage error
 * (unknown command or option, missing or bad argument, OUTPUT naming the INPUT file), 3 a JFR selection
 * (--event, --thread, --from, --to) that matched no event (nothing is written), each with one line on stderr.
 * Inputs are read by a small table of readers, chosen by magic bytes, then by extension, else the default
 * (collapsed; stdin is sniffed only when it is a regular file); a new input format is one more table row.
 * Options that only some inputs can honour (JFR: --event, --thread, --from, --to; JFR and pprof: --lines,
 * --threads; pprof: --sample-type) are a usage error with any other input.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/args.h"
#include "output/collapsed_read.h"
#include "jfr/jfr_export.h"
#include "jfr/jfr_read.h"
#include "output/output.h"
#include "output/pprof.h"
#include "output/profile.h"
#include "util/safefile.h"
#include "util/version.h"
#include "cli_int.h"

#define READ_NOTHING 1   /* reader_fn: the selection matched no event; err says why */
#define THREADS_LISTED 8 /* thread names named when a --thread pattern matched nothing */
#define ERR_MAX 1024
#define MAGIC_MAX 16

typedef struct {
    const char *input, *output;
    js_out_format format;
    char title[JS_TITLE_MAX];
    int reverse;
    char include[JS_PATTERN_MAX], exclude[JS_PATTERN_MAX];
    int top;
    js_jfr_read_opts jfr; /* --event, --thread, --from, --to, --lines, --threads */
    const char *jfr_opt;  /* the first JFR-only option given, for the error with another input */
    const char *lt_opt;   /* --lines or --threads, if given (JFR and pprof input) */
    const char *st_opt;   /* --sample-type, if given (pprof input) */
    int event_given;      /* --event was given */
    const char *from_arg, *to_arg; /* --from and --to as given, for messages */
    /* what the reader found, for a pprof output */
    const char *read_as;  /* the reader's name */
    int64_t start_ns, end_ns;  /* the time the input covers (ns since the epoch), 0 if not known */
    js_pprof_read_info pprof; /* a pprof input's sample type and period */
} convert_opts;

/* Reads the input into p: 0, -1 with the error in err, or READ_NOTHING with the reason in err. */
typedef int (*reader_fn)(FILE *f, const char *name, convert_opts *o, js_profile *p, char *err, size_t errlen);

enum { OPT_JFR = 1, OPT_LINES = 2, OPT_PPROF = 4 }; /* option groups a reader honours */

typedef struct {
    const char *name;
    const char *exts[4];   /* lowercase extensions without the dot, NULL-terminated */
    const char *magic;     /* leading bytes that identify the format, or NULL */
    size_t magic_len;
    reader_fn read;
    unsigned opts;         /* OPT_* it honours */
} input_reader;

/* Collapsed stacks reader (options other than the common ones do not apply). */
static int read_collapsed(FILE *f, const char *name, convert_opts *o, js_profile *p, char *err, size_t errlen)
{
    return js_collapsed_read(f, name, p, err, errlen);
}

/* pprof reader (gzip-compressed or not): --sample-type, --lines, --threads. */
static int read_pprof(FILE *f, const char *name, convert_opts *o, js_profile *p, char *err, size_t errlen)
{
    js_pprof_read_opts ro = {.sample_type = o->st_opt, .lines = o->jfr.lines, .threads = o->jfr.threads};
    int rc = js_pprof_read_file(f, name, &ro, p, &o->pprof, err, errlen);
    if (rc == 0 && o->pprof.time_ns > 0) o->start_ns = o->pprof.time_ns, o->end_ns = o->pprof.time_ns + o->pprof.duration_ns;
    return rc;
}

/* Appends formatted text to the NUL-terminated buf of cap bytes, cutting it to fit. */
__attribute__((format(printf, 3, 4))) static void appendf(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* Weight of a thread root frame, for sorting. */
typedef struct {
    uint64_t weight;
    uint32_t frame;
} thread_weight;

/* qsort order: heavier first, then by frame index. */
static int by_weight(const void *a, const void *b)
{
    const thread_weight *x = a, *y = b;
    if (x->weight != y->weight) return x->weight < y->weight ? 1 : -1;
    return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* The name inside a thread root "[name tid=N]" (also "[tid=N]" -> "tid=N"): its start in *start, its length. */
static size_t thread_name_len(const char *root, const char **start)
{
    size_t n = strlen(root);
    *start = root;
    if (n < 2 || root[0] != '[' || root[n - 1] != ']') return n;
    const char *tid = NULL;
    for (const char *q = strstr(root, " tid="); q; q = strstr(q + 1, " tid=")) tid = q;
    *start = root + 1;
    return tid ? (size_t)(tid - root - 1) : n - 2;
}

/* The thread names with events of the selected kind (time range kept, thread pattern dropped), most events
 * first, as "a, b, c" (THREADS_LISTED at most, then "and N more") into out; 0 if there are none. */
static int list_threads(FILE *f, const char *name, const convert_opts *o, char *out, size_t outlen)
{
    js_jfr_read_opts ro = o->jfr;
    ro.thread = NULL;
    ro.threads = 1;
    ro.lines = 0;
    js_profile p;
    js_profile_init(&p);
    char err[ERR_MAX];
    thread_weight *tw = NULL;
    size_t nt = 0, distinct = 0;
    out[0] = 0;
    if (js_jfr_read_fd(fileno(f), name, &ro, &p, NULL, err, sizeof err) == 0 && p.nframes &&
        (tw = calloc(p.nframes, sizeof *tw))) {
        for (size_t i = 0; i < p.nstacks; i++)
            if (p.stacks[i].depth && p.frames[p.stacks[i].frames[0]].type == JS_FT_THREAD)
                tw[p.stacks[i].frames[0]].weight += p.stacks[i].weight;
        for (size_t i = 0; i < p.nframes; i++)
            if (tw[i].weight) tw[nt++] = (thread_weight){tw[i].weight, (uint32_t)i};
        qsort(tw, nt, sizeof *tw, by_weight);
        for (size_t i = 0; i < nt; i++) {
            const char *si, *sj;
            size_t li = thread_name_len(p.frames[tw[i].frame].name, &si), j = 0;
            while (j < i && !(thread_name_len(p.frames[tw[j].frame].name, &sj) == li && memcmp(si, sj, li) == 0)) j++;
            if (j < i) continue; /* a name seen already (several threads share it) */
            if (++distinct <= THREADS_LISTED) appendf(out, outlen, "%s%.*s", distinct > 1 ? ", " : "", (int)li, si);
        }
        if (distinct > THREADS_LISTED) appendf(out, outlen, " and %zu more", distinct - THREADS_LISTED);
    }
    free(tw);
    js_profile_free(&p);
    return distinct > 0;
}

/* Why a JFR selection (--event, --thread, --from, --to) kept no event, as one line in err; READ_NOTHING. */
static int explain_nothing(FILE *f, const char *name, const convert_opts *o, const js_jfr_read_stats *st, char *err,
                           size_t errlen)
{
    const char *events = js_jfr_read_kind_events(o->jfr.kind), *kind = js_jfr_read_kind_name(o->jfr.kind);
    if (st->skipped == 0) {
        snprintf(err, errlen, "%s: no %s events in the recording (--event %s%s)%s", name, events, kind,
                 o->event_given ? "" : ", the default",
                 o->jfr.kind == JS_JFR_READ_WALL ? "; a recording whose only sampling event was wall keeps its samples "
                                                   "as jdk.ExecutionSample (what SkyWalking's OAP reads): use --event cpu"
                                                 : "");
        return READ_NOTHING;
    }
    char what[600], why[700] = "";
    snprintf(what, sizeof what, "no %s events", events);
    if (o->jfr.thread) appendf(what, sizeof what, " for thread pattern '%s'", o->jfr.thread);
    if (o->from_arg && o->to_arg) appendf(what, sizeof what, " from --from %s to --to %s", o->from_arg, o->to_arg);
    else if (o->from_arg || o->to_arg)
        appendf(what, sizeof what, " %s %s", o->from_arg ? "at or after --from" : "before --to",
                o->from_arg ? o->from_arg : o->to_arg);
    char names[400];
    if (o->jfr.thread && list_threads(f, name, o, names, sizeof names))
        snprintf(why, sizeof why, "threads %s: %s",
                 o->jfr.has_from || o->jfr.has_to ? "with such events in that range" : "in the recording", names);
    else if (o->jfr.has_from || o->jfr.has_to)
        snprintf(why, sizeof why, "the recording spans 0s to %.3fs, @%lld to @%lld in ms since the epoch; none of "
                 "its %llu such events is in that range", (double)(st->end_ns - st->start_ns) / 1e9,
                 (long long)(st->start_ns / 1000000), (long long)(st->end_ns / 1000000),
                 (unsigned long long)st->skipped);
    else
        snprintf(why, sizeof why, "%llu such events in other threads", (unsigned long long)st->skipped);
    snprintf(err, errlen, "%s: %s (%s)", name, what, why);
    return READ_NOTHING;
}

/* JFR reader: needs a seekable regular file (read by offset, chunk by chunk). A selection that keeps nothing is
 * READ_NOTHING, not an empty profile. */
static int read_jfr(FILE *f, const char *name, convert_opts *o, js_profile *p, char *err, size_t errlen)
{
    js_jfr_read_stats st = {0};
    int rc = js_jfr_read_fd(fileno(f), name, &o->jfr, p, &st, err, errlen);
    o->start_ns = st.start_ns;
    o->end_ns = st.end_ns;
    if (rc == 0 && st.unfinished_at)
        fprintf(stderr, "jsampler: warning: %s: offset %llu: %s; read the %llu complete chunk(s) before it\n", name,
                (unsigned long long)st.unfinished_at,
                st.unfinished_cut ? "the file ends inside its last chunk (the file was truncated, or copied while "
                                    "it was being written)"
                                  : "the last chunk was never finished (the recording was cut, e.g. its JVM was "
                                    "killed)",
                (unsigned long long)st.chunks);
    if (rc == 0 && st.events == 0 && (o->event_given || o->jfr.thread || o->jfr.has_from || o->jfr.has_to))
        return explain_nothing(f, name, o, &st, err, errlen);
    return rc;
}

/* The first row is the default when neither magic nor extension decides. */
static const input_reader readers[] = {
    {"collapsed", {"collapsed", "folded", NULL}, NULL, 0, read_collapsed, 0},
    {"jfr", {"jfr", NULL}, "FLR\0", 4, read_jfr, OPT_JFR | OPT_LINES},
    {"pprof", {"pprof", "pb", "gz", NULL}, "\x1f\x8b", 2, read_pprof, OPT_PPROF | OPT_LINES},
};

/* Appends pattern to a '|'-joined list of at most JS_PATTERN_MAX bytes; 0 or -1 when it would not fit. */
static int add_pattern(char *list, const char *pattern)
{
    size_t have = strlen(list), add = strlen(pattern);
    if (have + (have ? 1 : 0) + add + 1 > JS_PATTERN_MAX) return -1;
    if (have) list[have++] = '|';
    memcpy(list + have, pattern, add + 1);
    return 0;
}

/* Writable format named s (collapsed, flat, tree, html, json, jfr, pprof), or JS_OUT_NONE. */
static js_out_format format_named(const char *s)
{
    static const js_out_format ok[] = {JS_OUT_COLLAPSED, JS_OUT_FLAT, JS_OUT_TREE, JS_OUT_HTML, JS_OUT_JSON_TREE,
                                       JS_OUT_JFR, JS_OUT_PPROF};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(s, js_out_format_name(ok[i])) == 0) return ok[i];
    return JS_OUT_NONE;
}

/* Applies one JFR-only option that takes a value; 0, or an exit code after printing the error. */
static int convert_jfr_opt(convert_opts *o, const char *opt, const char *val)
{
    if (!o->jfr_opt) o->jfr_opt = opt;
    if (strcmp(opt, "--event") == 0) {
        o->event_given = 1;
        if (js_jfr_read_kind_parse(val, &o->jfr.kind) != 0)
            return js_cli_die(CLI_EXIT_USAGE, "convert: unknown event '%s' for --event (cpu, wall, alloc, lock)", val);
    } else if (strcmp(opt, "--thread") == 0) {
        if (!*val) return js_cli_die(CLI_EXIT_USAGE, "convert: --thread needs a non-empty pattern");
        o->jfr.thread = val;
    } else {
        int from = strcmp(opt, "--from") == 0, abs;
        int64_t ns;
        if (js_jfr_read_parse_time(val, &abs, &ns) != 0)
            return js_cli_die(CLI_EXIT_USAGE, "convert: %s needs a time since the recording start (90, 1.5s, 200ms, 2m) or "
                       "@EPOCH_MS, not '%s'", opt, val);
        *(from ? &o->jfr.has_from : &o->jfr.has_to) = 1;
        *(from ? &o->jfr.from_abs : &o->jfr.to_abs) = abs;
        *(from ? &o->jfr.from_ns : &o->jfr.to_ns) = ns;
        *(from ? &o->from_arg : &o->to_arg) = val;
    }
    return 0;
}

/* Applies one option that takes a value; 0, or an exit code after printing the error. */
static int convert_value_opt(convert_opts *o, const char *opt, const char *val)
{
    if (strcmp(opt, "--format") == 0) {
        o->format = format_named(val);
        if (o->format == JS_OUT_NONE)
            return js_cli_die(CLI_EXIT_USAGE, "convert: unknown output format '%s' for %s (collapsed, flat, tree, html, json, "
                       "jfr, pprof)", val, opt);
    } else if (strcmp(opt, "--title") == 0) {
        if (strlen(val) >= sizeof o->title) return js_cli_die(CLI_EXIT_USAGE, "convert: %s value is too long", opt);
        snprintf(o->title, sizeof o->title, "%s", val);
    } else if (strcmp(opt, "--event") == 0 || strcmp(opt, "--thread") == 0 || strcmp(opt, "--from") == 0 ||
               strcmp(opt, "--to") == 0) {
        return convert_jfr_opt(o, opt, val);
    } else if (strcmp(opt, "--sample-type") == 0) {
        if (!*val) return js_cli_die(CLI_EXIT_USAGE, "convert: --sample-type needs a sample type name");
        o->st_opt = val;
    } else if (strcmp(opt, "--include") == 0 || strcmp(opt, "--exclude") == 0) {
        if (add_pattern(opt[2] == 'i' ? o->include : o->exclude, val) != 0)
            return js_cli_die(CLI_EXIT_USAGE, "convert: %s patterns are too long", opt);
    } else {
        char *end;
        errno = 0;
        long n = strtol(val, &end, 10);
        if (errno || end == val || *end || n < 1 || n > 1000000)
            return js_cli_die(CLI_EXIT_USAGE, "convert: %s needs a number from 1 to 1000000, not '%s'", opt, val);
        o->top = (int)n;
    }
    return 0;
}

/* Parses convert's arguments into o; 0, -1 after printing help, or an exit code after printing the error. */
static int convert_parse(int argc, char **argv, convert_opts *o)
{
    static const char *const valued[] = {"--format", "--title", "--include", "--exclude", "--top",
                                         "--event",  "--thread", "--from",   "--to",      "--sample-type"};
    const char *pos[2];
    int npos = 0, opts_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || strcmp(a, "-") == 0) {
            if (npos == 2) return js_cli_die(CLI_EXIT_USAGE, "convert: unexpected argument '%s'", a);
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            opts_done = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return -1;
        if (strcmp(a, "--reverse") == 0) {
            o->reverse = 1;
            continue;
        }
        if (strcmp(a, "--lines") == 0 || strcmp(a, "--threads") == 0) {
            *(a[2] == 'l' ? &o->jfr.lines : &o->jfr.threads) = 1;
            if (!o->lt_opt) o->lt_opt = a;
            continue;
        }
        char opt[32];
        const char *eq = strchr(a, '='), *val = NULL;
        size_t olen = eq ? (size_t)(eq - a) : strlen(a);
        snprintf(opt, sizeof opt, "%.*s", (int)olen, a);
        size_t k = 0;
        while (k < sizeof valued / sizeof valued[0] && (olen != strlen(valued[k]) || strcmp(opt, valued[k]) != 0)) k++;
        if (k == sizeof valued / sizeof valued[0]) return js_cli_die(CLI_EXIT_USAGE, "convert: unknown option '%s'", a);
        if (eq) val = eq + 1;
        else if (i + 1 < argc) val = argv[++i];
        else return js_cli_die(CLI_EXIT_USAGE, "convert: option '%s' needs an argument", a);
        int rc = convert_value_opt(o, valued[k], val);
        if (rc) return rc;
    }
    if (npos < 2) return js_cli_die(CLI_EXIT_USAGE, "convert: missing %s (usage: jsampler convert [OPTIONS] INPUT OUTPUT)",
                             npos ? "OUTPUT" : "INPUT and OUTPUT");
    o->input = pos[0];
    o->output = pos[1];
    if (o->jfr.has_from && o->jfr.has_to && o->jfr.from_abs == o->jfr.to_abs && o->jfr.from_ns >= o->jfr.to_ns)
        return js_cli_die(CLI_EXIT_USAGE, "convert: --from must be before --to");
    return 0;
}

/* 1 if path's extension (case-insensitive) is one of r's. */
static int has_ext(const input_reader *r, const char *path)
{
    const char *base = strrchr(path, '/'), *dot;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base) return 0;
    for (size_t i = 0; i < sizeof r->exts / sizeof r->exts[0] && r->exts[i]; i++)
        if (strcasecmp(dot + 1, r->exts[i]) == 0) return 1;
    return 0;
}

/* The reader for an input: by magic bytes in head, then by extension, else the default. */
static const input_reader *pick_reader(const char *path, const unsigned char *head, size_t nhead)
{
    size_t n = sizeof readers / sizeof readers[0];
    for (size_t i = 0; i < n; i++)
        if (readers[i].magic && nhead >= readers[i].magic_len &&
            memcmp(head, readers[i].magic, readers[i].magic_len) == 0)
            return &readers[i];
    for (size_t i = 0; i < n; i++)
        if (has_ext(&readers[i], path)) return &readers[i];
    return &readers[0];
}

/* Reads the input into p with the matching reader; 0, or CLI_EXIT_IO / CLI_EXIT_USAGE after printing the error. */
static int read_input(const char *path, convert_opts *o, js_profile *p)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *shown = is_stdin ? "stdin" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "r");
    if (!f) return js_cli_die(CLI_EXIT_IO, "cannot read '%s': %s", path, strerror(errno));
    unsigned char head[MAGIC_MAX];
    size_t nhead = 0;
    struct stat sb;
    /* sniff the magic bytes, then start over; stdin only when it is a regular file (a pipe cannot rewind) */
    if (!is_stdin || (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && ftell(f) == 0)) {
        nhead = fread(head, 1, sizeof head, f);
        if (ferror(f) || fseek(f, 0, SEEK_SET) != 0) {
            int e = errno;
            if (!is_stdin) fclose(f);
            return js_cli_die(CLI_EXIT_IO, "cannot read '%s': %s", shown, e ? strerror(e) : "I/O error");
        }
    }
    char err[ERR_MAX] = "";
    const input_reader *r = pick_reader(path, head, nhead);
    const char *bad = o->jfr_opt && !(r->opts & OPT_JFR) ? o->jfr_opt : o->lt_opt && !(r->opts & OPT_LINES) ? o->lt_opt
                      : o->st_opt && !(r->opts & OPT_PPROF) ? "--sample-type" : NULL;
    if (bad) {
        if (!is_stdin) fclose(f);
        return js_cli_die(CLI_EXIT_USAGE, "convert: %s applies to %s input only ('%s' is read as %s)", bad,
                          bad == o->lt_opt ? "JFR and pprof" : bad == o->jfr_opt ? "JFR" : "pprof", shown, r->name);
    }
    o->read_as = r->name;
    int rc = r->read(f, shown, o, p, err, sizeof err);
    if (!is_stdin) fclose(f);
    return rc == 0 ? 0 : js_cli_die(rc == READ_NOTHING ? CLI_EXIT_NOTHING : CLI_EXIT_IO, "%s", err);
}

/* SkyWalking event type of the json output for the selected JFR event kind. */
static const char *json_type(const convert_opts *o)
{
    switch (o->jfr.kind) {
    case JS_JFR_READ_ALLOC: return "OBJECT_ALLOCATION";
    case JS_JFR_READ_LOCK: return "LOCK";
    default: return "EXECUTION_SAMPLE";
    }
}

/* pprof output: the kind of what was read (a JFR event kind, a pprof sample type, else samples), its time. */
static int write_pprof(FILE *f, const js_profile *p, const convert_opts *o, char *err, size_t errlen)
{
    static const js_pprof_kind from_jfr[] = {[JS_JFR_READ_CPU] = JS_PPROF_CPU, [JS_JFR_READ_WALL] = JS_PPROF_WALL,
                                             [JS_JFR_READ_ALLOC] = JS_PPROF_ALLOC, [JS_JFR_READ_LOCK] = JS_PPROF_LOCK};
    js_pprof_opts po = {.kind = JS_PPROF_SAMPLES, .time_ns = o->start_ns, .comment = "jsampler " JS_VERSION,
                        .duration_ns = o->end_ns > o->start_ns ? o->end_ns - o->start_ns : 0};
    if (o->read_as && strcmp(o->read_as, "jfr") == 0) {
        po.kind = from_jfr[o->jfr.kind];
    } else if (o->read_as && strcmp(o->read_as, "pprof") == 0 && strcmp(o->pprof.unit, "count") != 0) {
        po.kind = JS_PPROF_VALUE; /* an amount, not samples: one Sample per stack with its sum */
        po.event = o->pprof.type;
        po.unit = o->pprof.unit;
    }
    js_pprof_stats st;
    int rc = js_write_pprof(f, p, &po, &st, err, errlen);
    if (rc == 0 && st.aggregated == 2)
        fprintf(stderr, "jsampler: warning: one Sample per sample would pass %llu MiB before compression: wrote one "
                "Sample per stack (readers but SkyWalking's OAP read it right)\n", JS_PPROF_SPLIT_MAX >> 20);
    return rc;
}

/* Runs the writer for fmt. */
static int write_format(FILE *f, js_out_format fmt, const js_profile *p, const convert_opts *o, char *err,
                        size_t errlen)
{
    switch (fmt) {
    case JS_OUT_FLAT: return js_write_flat(f, p, o->top, err, errlen);
    case JS_OUT_TREE: return js_write_tree(f, p, err, errlen);
    case JS_OUT_HTML: return js_write_html(f, p, o->reverse, err, errlen);
    case JS_OUT_JSON_TREE: return js_write_json_tree(f, p, json_type(o), err, errlen);
    case JS_OUT_PPROF: return write_pprof(f, p, o, err, errlen);
    default: return js_write_collapsed(f, p, err, errlen);
    }
}

/* Writes p to the output path ('-' = stdout) in fmt; 0, or CLI_EXIT_IO after printing the error. */
static int write_output(const char *path, js_out_format fmt, const js_profile *p, const convert_opts *o)
{
    if (fmt == JS_OUT_JFR) {
        char err[ERR_MAX] = "";
        if (strcmp(path, "-") == 0) return js_cli_die(CLI_EXIT_USAGE, "convert: jfr output needs a file name, not stdout");
        return js_jfr_export(path, p, o->input, NULL, err, sizeof err) == 0 ? 0 : js_cli_die(CLI_EXIT_IO, "%s", err);
    }
    char err[ERR_MAX] = "";
    if (strcmp(path, "-") == 0) {
        int rc = write_format(stdout, fmt, p, o, err, sizeof err);
        if (rc == 0 && fflush(stdout) != 0) snprintf(err, sizeof err, "%s", strerror(errno)), rc = -1;
        return rc == 0 ? 0 : js_cli_die(CLI_EXIT_IO, "cannot write 'stdout': %s", err);
    }
    js_safe_file sf; /* never through a link; a temporary file renamed over the path once complete */
    if (js_safe_open(&sf, "output", path, JS_SAFE_ATOMIC, err, sizeof err) != 0) return js_cli_die(CLI_EXIT_IO, "%s", err);
    FILE *f = fdopen(sf.fd, "w");
    if (!f) {
        js_safe_abort(&sf);
        return js_cli_die(CLI_EXIT_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    int rc = write_format(f, fmt, p, o, err, sizeof err);
    if (fclose(f) != 0 && rc == 0) snprintf(err, sizeof err, "%s", strerror(errno)), rc = -1;
    sf.fd = -1; /* closed with f */
    if (rc != 0) {
        js_safe_abort(&sf);
        return js_cli_die(CLI_EXIT_IO, "cannot write '%s': %s", path, err);
    }
    return js_safe_commit(&sf, err, sizeof err) == 0 ? 0 : js_cli_die(CLI_EXIT_IO, "%s", err);
}

/* 1 if OUTPUT exists and is the INPUT file itself: same device and inode, through links and symbolic links
 * (stdin '-' counts when it is a regular file; stdout '-' never does). */
static int same_file(const char *input, const char *output)
{
    struct stat in, out;
    if (strcmp(output, "-") == 0) return 0;
    if ((strcmp(input, "-") == 0 ? fstat(STDIN_FILENO, &in) : stat(input, &in)) != 0 || !S_ISREG(in.st_mode))
        return 0;
    return stat(output, &out) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

/* jsampler convert [OPTIONS] INPUT OUTPUT (cli_int.h). */
int js_cli_convert(int argc, char **argv)
{
    convert_opts o;
    memset(&o, 0, sizeof o);
    int rc = convert_parse(argc, argv, &o);
    if (rc < 0) {
        js_cli_help(stdout);
        return 0;
    }
    if (rc) return rc;
    js_out_format fmt = o.format;
    if (fmt == JS_OUT_NONE && strcmp(o.output, "-") != 0) fmt = js_out_format_from_path(o.output);
    if (fmt == JS_OUT_NONE) fmt = JS_OUT_COLLAPSED;
    if (format_named(js_out_format_name(fmt)) == JS_OUT_NONE)
        return js_cli_die(CLI_EXIT_USAGE, "convert: cannot write %s output ('%s'); use --format", js_out_format_name(fmt),
                   o.output);
    if (same_file(o.input, o.output))
        return js_cli_die(CLI_EXIT_USAGE, "convert: OUTPUT '%s' is the INPUT file '%s' itself; refusing to overwrite the input "
                   "(choose another OUTPUT)", o.output, strcmp(o.input, "-") == 0 ? "- (stdin)" : o.input);
    js_profile p;
    js_profile_init(&p);
    rc = read_input(o.input, &o, &p);
    if (rc == 0) {
        if (o.title[0]) snprintf(p.title, sizeof p.title, "%s", o.title);
        js_profile_filter(&p, o.include, o.exclude);
        if (js_profile_normalize(&p) != 0) rc = js_cli_die(CLI_EXIT_IO, "out of memory sorting the profile");
    }
    if (rc == 0) rc = write_output(o.output, fmt, &p, &o);
    js_profile_free(&p);
    return rc;
}
