/* dump.c - see dump.h. */
#include "core/dump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fold.h"
#include "output/output.h"
#include "output/pprof.h"
#include "util/log.h"
#include "util/version.h"

/* The pprof profile of kind m->kind: its sample types and period from the session's options. */
static int write_pprof(FILE *f, const js_profile *p, const js_args *a, const js_dump_meta *m, char *err,
                       size_t errlen)
{
    js_pprof_opts o = {.kind = JS_PPROF_CPU, .time_ns = m->start_ns, .duration_ns = m->duration_ns,
                       .comment = "jsampler " JS_VERSION};
    switch (m->kind) {
    case JS_KIND_WALL: o.kind = JS_PPROF_WALL, o.period = a->wall_ns; break;
    case JS_KIND_ALLOC: o.kind = JS_PPROF_ALLOC, o.period = (int64_t)a->alloc_bytes; break;
    case JS_KIND_LOCK: o.kind = JS_PPROF_LOCK; break;
    default: /* the execution event: CPU time, or a count of events (perf counters, tracepoints) */
        o.period = a->interval_ns;
        if (js_event_is_count(a->event)) o.kind = JS_PPROF_EVENTS, o.event = js_kind_name(a, JS_KIND_EXEC);
    }
    js_pprof_stats st;
    int rc = js_write_pprof(f, p, &o, &st, err, errlen);
    if (rc == 0 && st.aggregated == 2)
        js_warn("pprof: one Sample per sample would pass %llu MiB before compression: wrote one Sample per stack "
                "with its sums (the SkyWalking OAP counts those as one sample each)", JS_PPROF_SPLIT_MAX >> 20);
    return rc;
}

/* Run the writer for fmt. */
static int write_format(FILE *f, js_out_format fmt, const js_profile *p, const js_args *a, const js_dump_meta *m,
                        char *err, size_t errlen)
{
    switch (fmt) {
    case JS_OUT_FLAT: return js_write_flat(f, p, a->flat_top, err, errlen);
    case JS_OUT_TRACES: return js_write_traces(f, p, a->flat_top, err, errlen);
    case JS_OUT_TREE: return js_write_tree(f, p, err, errlen);
    case JS_OUT_HTML: return js_write_html(f, p, a->reverse, err, errlen);
    case JS_OUT_COLLAPSED: return js_write_collapsed(f, p, err, errlen);
    case JS_OUT_PPROF: return write_pprof(f, p, a, m, err, errlen);
    default: snprintf(err, errlen, "output format %s is not supported by the agent", js_out_format_name(fmt)); return -1;
    }
}

/* Why opening an output failed with errno e, in words a user acts on. */
static const char *open_error(int e)
{
    if (e == ELOOP) return "it is a symbolic link (not followed)";
    if (e == EISDIR) return "it is a directory";
    return strerror(e);
}

/* Open path as every output is created: never through a symbolic link, a new file 0600. FILE* or NULL. */
static FILE *open_output(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

/* Open path (the caller's capture stream, else stdout, if empty), write, flush, close: every failure names the
 * path. */
static int write_file(const char *path, js_out_format fmt, const js_profile *p, const js_args *a,
                      const js_dump_meta *m, char *err, size_t errlen)
{
    FILE *out = a->capture ? (FILE *)a->capture : stdout;
    const char *shown = path[0] ? path : a->capture ? "the caller" : "stdout";
    FILE *f = path[0] ? open_output(path) : out;
    if (!f) {
        snprintf(err, errlen, "cannot write output '%s': %s", shown, open_error(errno));
        return -1;
    }
    char why[512] = "";
    int rc = write_format(f, fmt, p, a, m, why, sizeof why);
    if (rc == 0 && fflush(f) != 0) snprintf(why, sizeof why, "%s", strerror(errno)), rc = -1;
    if (f != out && fclose(f) != 0 && rc == 0) snprintf(why, sizeof why, "%s", strerror(errno)), rc = -1;
    if (rc != 0) snprintf(err, errlen, "cannot write output '%s': %s", shown, why);
    return rc;
}

int js_dump_check_output(const char *pattern, char *err, size_t errlen)
{
    char path[JS_PATH_MAX], dir[JS_PATH_MAX];
    if (!pattern[0]) return 0;
    if (js_expand_path(pattern, (int)getpid(), (long long)time(NULL), path, sizeof path) != 0) {
        snprintf(err, errlen, "output path '%s' is too long after expansion", pattern);
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "cannot write output '%s': it is a symbolic link (not followed)", path);
        return -1;
    }
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write output '%s': it is a directory", path);
        return -1;
    }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write output '%s': directory '%s' does not exist", path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "cannot write output '%s': directory '%s' is not writable (%s)", path, dir,
                 strerror(errno));
        return -1;
    }
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
        snprintf(err, errlen, "cannot write output '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* What the stacks of p (of kind k) count, as a's counter asks (see js_counter): the weights are replaced, the total
 * and the unit follow. */
static void count_as(js_profile *p, const js_args *a, js_kind k)
{
    const char *unit = "samples";
    uint64_t scale = 1; /* weight -> total */
    int counts = 0;     /* the events instead of the weight */
    if (k == JS_KIND_ALLOC || k == JS_KIND_LOCK) {
        counts = a->counter == JS_COUNTER_SAMPLES;
        if (!counts) unit = k == JS_KIND_ALLOC ? "bytes" : "ns";
    } else if (a->counter == JS_COUNTER_TOTAL) {
        scale = (uint64_t)(k == JS_KIND_WALL ? a->wall_ns : a->interval_ns);
        unit = k == JS_KIND_EXEC && js_event_is_count(a->event) ? "events" : "ns";
    }
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    if (!counts && scale == 1) return;
    uint64_t total = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        js_pstack *s = &p->stacks[i];
        s->weight = counts ? (s->count ? s->count : s->weight) : s->weight * scale;
        total += s->weight;
    }
    p->total = total;
}

/* How Java frames are written in fmt: as async-profiler writes them (the class with slashes in collapsed stacks,
 * trees and flame graphs; dots in flat and traces; a hidden class's address after a '/'), or dotted everywhere as the
 * names are resolved (dot: "Foo$$Lambda.0x12.run", as JFR readers show them); simple names; kinds (ann) in the text
 * formats that have no colours. pprof keeps its own naming. */
static unsigned java_style(const js_args *a, js_out_format fmt)
{
    if (fmt == JS_OUT_PPROF) return 0;
    unsigned style = a->names == JS_NAMES_DOTS ? 0 : JS_JN_HIDDEN;
    if (a->names == JS_NAMES_ASPROF && (fmt == JS_OUT_COLLAPSED || fmt == JS_OUT_TREE || fmt == JS_OUT_HTML))
        style |= JS_JN_SLASHES;
    if (a->simple) style |= JS_JN_SIMPLE;
    if (a->norm) style |= JS_JN_NORM;
    if (a->ann && (fmt == JS_OUT_COLLAPSED || fmt == JS_OUT_FLAT || fmt == JS_OUT_TRACES)) style |= JS_JN_ANN;
    return style;
}

int js_dump_write_profile(const js_profile *src, const js_args *a, const js_dump_meta *m, char *msg, size_t msglen)
{
    static const js_dump_meta exec = {JS_KIND_EXEC, 0, 0};
    if (!m) m = &exec;
    char path[JS_PATH_MAX] = "";
    if (a->file[0] && js_expand_path(a->file, (int)getpid(), (long long)time(NULL), path, sizeof path) != 0) {
        snprintf(msg, msglen, "output path '%s' is too long after expansion", a->file);
        return -1;
    }
    js_out_format fmt = js_args_output_format(a, path);
    js_profile p;
    js_profile_init(&p);
    char err[1024] = "";
    int rc = js_fold_copy(&p, src);
    if (rc != 0) snprintf(err, sizeof err, "out of memory building the profile");
    if (rc == 0) {
        static const char *const titles[JS_KINDS] = {"jsampler CPU profile", "jsampler wall-clock profile",
                                                     "jsampler allocation profile", "jsampler lock profile"};
        int k = m->kind >= 0 && m->kind < JS_KINDS ? (int)m->kind : 0;
        snprintf(p.title, sizeof p.title, "%s", a->title[0] ? a->title : titles[k]);
        count_as(&p, a, m->kind); /* the unit follows: samples, ns, bytes, events */
        uint64_t before = p.total;
        js_profile_filter(&p, a->include, a->exclude);
        if (before && !p.total)
            js_warn("include/exclude left 0 of %llu %s (include='%s' exclude='%s'): the output is empty",
                    (unsigned long long)before, p.unit, a->include, a->exclude);
        if (js_profile_java_names(&p, java_style(a, fmt)) != 0) rc = -1;
        if (rc == 0) rc = js_profile_normalize(&p);
        if (rc != 0) snprintf(err, sizeof err, "out of memory sorting the profile");
    }
    if (rc == 0) rc = write_file(path, fmt, &p, a, m, err, sizeof err);
    if (rc == 0)
        js_debug("output %s: %zu distinct frames, %zu stacks, %llu %s", path[0] ? path : "stdout", p.nframes,
                 p.nstacks, (unsigned long long)p.total, p.unit);
    if (rc == 0)
        snprintf(msg, msglen, "wrote %s profile (%llu %s, %zu stacks) to %s", js_out_format_name(fmt),
                 (unsigned long long)p.total, p.unit, p.nstacks, path[0] ? path : a->capture ? "the caller" : "stdout");
    else
        snprintf(msg, msglen, "%s", err);
    js_profile_free(&p);
    return rc;
}
