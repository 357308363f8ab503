/* dump.c - see dump.h. */
#include "core/dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fold.h"
#include "output/output.h"
#include "output/pprof.h"
#include "util/log.h"
#include "util/safefile.h"
#include "util/version.h"

/* The pprof profile of kind m->kind: its sample types and period from the session's options. */
static int write_pprof(FILE *f, const js_profile *p, const js_args *a, const js_dump_meta *m, char *err,
                       size_t errlen)
{
    js_pprof_opts o = {.kind = JS_PPROF_CPU, .time_ns = m->start_ns, .duration_ns = m->duration_ns,
                       .comment = "jsampler " JS_VERSION};
    switch (m->snapshot ? JS_KINDS : m->kind) {
    case JS_KINDS: o.kind = JS_PPROF_THREADS; break;
    case JS_KIND_WALL: o.kind = JS_PPROF_WALL, o.period = a->wall_ns; break;
    case JS_KIND_ALLOC:
        o.kind = a->live ? JS_PPROF_LIVE : JS_PPROF_ALLOC, o.period = (int64_t)a->alloc_bytes;
        break;
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

/* Create path as every output is (util/safefile.h: a temporary file renamed over the path once complete), or write
 * to the caller's capture stream (else stdout) if path is empty; write, flush, close: every failure names the path. */
static int write_file(const char *path, js_out_format fmt, const js_profile *p, const js_args *a,
                      const js_dump_meta *m, char *err, size_t errlen)
{
    if (!path[0]) {
        FILE *out = a->capture ? (FILE *)a->capture : stdout;
        const char *shown = a->capture ? "the caller" : "stdout";
        char why[512] = "";
        int rc = write_format(out, fmt, p, a, m, why, sizeof why);
        if (rc == 0 && fflush(out) != 0) snprintf(why, sizeof why, "%s", strerror(errno)), rc = -1;
        if (rc != 0) snprintf(err, errlen, "cannot write output '%s': %s", shown, why);
        return rc;
    }
    js_safe_file sf;
    if (js_safe_open(&sf, "output", path, JS_SAFE_ATOMIC, err, errlen) != 0) return -1;
    FILE *f = fdopen(sf.fd, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write output '%s': %s", path, strerror(errno));
        js_safe_abort(&sf);
        return -1;
    }
    char why[512] = "";
    int rc = write_format(f, fmt, p, a, m, why, sizeof why);
    if (rc == 0 && fflush(f) != 0) snprintf(why, sizeof why, "%s", strerror(errno)), rc = -1;
    if (fclose(f) != 0 && rc == 0) snprintf(why, sizeof why, "%s", strerror(errno)), rc = -1;
    sf.fd = -1; /* closed with f */
    if (rc != 0) {
        snprintf(err, errlen, "cannot write output '%s': %s", path, why);
        js_safe_abort(&sf);
        return -1;
    }
    return js_safe_commit(&sf, err, errlen);
}

int js_dump_check_output(const char *pattern, char *err, size_t errlen)
{
    char path[JS_PATH_MAX];
    if (!pattern[0]) return 0;
    if (js_expand_path(pattern, (int)getpid(), (long long)time(NULL), path, sizeof path) != 0) {
        snprintf(err, errlen, "output path '%s' is too long after expansion", pattern);
        return -1;
    }
    return js_safe_check("output", path, err, errlen);
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
    static const js_dump_meta exec = {JS_KIND_EXEC, 0, 0, NULL};
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
        snprintf(p.title, sizeof p.title, "%s", a->title[0] ? a->title : m->snapshot ? m->snapshot : titles[k]);
        if (m->snapshot) snprintf(p.unit, sizeof p.unit, "threads"); /* a thread snapshot counts threads */
        else count_as(&p, a, m->kind); /* the unit follows: samples, ns, bytes, events */
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
