/* jfr_export.c - see jfr_export.h. A js_jfr_source over a js_profile: trace id = stack index + 1, method key =
 * frame index + 1, thread id = 2 + index of the thread root in a table built once (1 = "unknown").
 */
#include "jfr/jfr_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr/jfr_write.h"
#include "util/monotime.h"

#define UNKNOWN_THREAD 1
#define WEIGHT_STEP 1000 /* events per js_jfr_execution_sample call (the writer's cap) */

typedef struct {
    char *s;
    size_t cap;
} scratch;

typedef struct {
    const js_profile *p;
    uint32_t *thread_of;   /* per frame index: thread id of a thread-root frame, 0 otherwise */
    uint32_t *roots;       /* thread id - 2 -> frame index of the thread root */
    uint32_t nroots;
    scratch mname, tname; /* the last method's and the last thread's split name */
} export_ctx;

/* 1 if t is a Java frame type (its name is "pkg.Class.method[:LINE]"). */
static int is_java(uint8_t t)
{
    return t == JS_FT_INTERPRETED || t == JS_FT_JIT || t == JS_FT_INLINED || t == JS_FT_C1;
}

/* Length of name without a trailing ":LINE" (digits), and the line in *line (-1 if none). */
static size_t strip_line(const char *name, int32_t *line)
{
    size_t n = strlen(name), i = n;
    *line = -1;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
    if (i == n || i < 2 || name[i - 1] != ':' || n - i > 9) return n;
    *line = (int32_t)strtol(name + i, NULL, 10);
    return i - 1;
}

/* Copies s[0..n) into b, NUL-terminated; the copy, or NULL without memory. */
static char *scratch_copy(scratch *b, const char *s, size_t n)
{
    if (n + 1 > b->cap) {
        size_t cap = (n + 1) * 2;
        char *m = realloc(b->s, cap);
        if (!m) return NULL;
        b->s = m;
        b->cap = cap;
    }
    memcpy(b->s, s, n);
    b->s[n] = 0;
    return b->s;
}

/* 1 if the frame is the "[truncated]" marker a stack cut at jstackdepth starts with. */
static int is_truncation(const js_pframe *pf)
{
    return pf->type == JS_FT_ERROR && strcmp(pf->name, JS_TRUNCATED_FRAME) == 0;
}

/* Source: frames of stack id - 1, leaf first, without its thread root. */
static int src_trace(void *ctx, uint64_t id, js_jfr_frame *out, int max, int *truncated)
{
    export_ctx *c = ctx;
    if (id == 0 || id > c->p->nstacks) return -1;
    const js_pstack *st = &c->p->stacks[id - 1];
    uint32_t first = st->depth > 0 && c->p->frames[st->frames[0]].type == JS_FT_THREAD;
    int n = 0;
    *truncated = 0;
    if (first < st->depth && is_truncation(&c->p->frames[st->frames[first]])) { /* root marker: the flag instead */
        first++;
        *truncated = 1;
    }
    for (uint32_t i = st->depth; i > first; i--) {
        if (n == max) {
            *truncated = 1;
            break;
        }
        uint32_t f = st->frames[i - 1];
        const js_pframe *pf = &c->p->frames[f];
        int32_t line = -1;
        if (is_java(pf->type)) strip_line(pf->name, &line);
        out[n++] = (js_jfr_frame){.method = (uint64_t)f + 1, .line = line, .bci = -1, .type = pf->type};
    }
    return n > 0 ? n : -1;
}

/* Source: class and method name of frame key - 1 (see the naming rules in jfr_export.h). */
static int src_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    export_ctx *c = ctx;
    if (key == 0 || key > c->p->nframes) return -1;
    const js_pframe *pf = &c->p->frames[key - 1];
    int32_t line;
    size_t n = is_java(pf->type) ? strip_line(pf->name, &line) : strlen(pf->name);
    char *s = scratch_copy(&c->mname, pf->name, n);
    if (!s) return -1;
    char *dot = is_java(pf->type) ? strrchr(s, '.') : NULL;
    memset(out, 0, sizeof *out);
    out->descriptor = "";
    out->modifiers = 1; /* public */
    if (!dot || dot == s || !dot[1]) {
        out->class_name = "";
        out->name = s;
        return 0;
    }
    *dot = 0;
    for (char *q = s; *q; q++) /* package dots become '/'; a hidden class's ".0x..." suffix stays as written */
        if (*q == '.' && strncmp(q + 1, "0x", 2) != 0) *q = '/';
    out->class_name = s;
    out->name = dot + 1;
    return 0;
}

/* Source: the thread of id (1 = "[unknown]", else the thread root "[name tid=N]" it was made from). */
static int src_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    export_ctx *c = ctx;
    memset(out, 0, sizeof *out);
    if (id == UNKNOWN_THREAD || id < 2 || id - 2 >= c->nroots) {
        out->os_name = "unknown";
        return 0;
    }
    const char *name = c->p->frames[c->roots[id - 2]].name; /* "[...]" */
    size_t n = strlen(name);
    const char *tid = NULL; /* the last "tid=": names may hold one too */
    for (const char *q = strstr(name, "tid="); q; q = strstr(q + 1, "tid=")) tid = q;
    size_t end = tid ? (size_t)(tid - name) : n - 1; /* "[name tid=" or "[tid=" */
    if (tid && end > 1 && name[end - 1] == ' ') end--;
    char *s = scratch_copy(&c->tname, name + 1, end > 1 ? end - 1 : 0);
    if (!s) return -1;
    out->os_name = s;
    out->java_name = s[0] ? s : NULL;
    out->os_tid = tid ? strtoull(tid + 4, NULL, 10) : 0;
    return 0;
}

/* Numbers the profile's thread roots; 0 or -1 without memory. */
static int index_threads(export_ctx *c)
{
    const js_profile *p = c->p;
    c->thread_of = calloc(p->nframes ? p->nframes : 1, sizeof *c->thread_of);
    c->roots = malloc((p->nframes ? p->nframes : 1) * sizeof *c->roots);
    if (!c->thread_of || !c->roots) return -1;
    for (size_t i = 0; i < p->nstacks; i++) {
        const js_pstack *st = &p->stacks[i];
        if (st->depth == 0) continue;
        uint32_t f = st->frames[0];
        if (p->frames[f].type != JS_FT_THREAD || c->thread_of[f]) continue;
        if (c->nroots >= 0x7FFFFFF0u) return -1;
        c->roots[c->nroots] = f;
        c->thread_of[f] = 2 + c->nroots++;
    }
    return 0;
}

/* Thread id of stack st. */
static uint32_t thread_of_stack(const export_ctx *c, const js_pstack *st)
{
    if (st->depth == 0) return UNKNOWN_THREAD;
    uint32_t t = c->thread_of[st->frames[0]];
    return t ? t : UNKNOWN_THREAD;
}

/* Writes every stack's weight as events; 0 or -1 with err set. */
static int write_events(js_jfr_writer *w, const export_ctx *c, uint64_t t0, uint64_t *events, char *err,
                        size_t errlen)
{
    uint64_t tick = t0;
    for (size_t i = 0; i < c->p->nstacks; i++) {
        const js_pstack *st = &c->p->stacks[i];
        uint32_t thread = thread_of_stack(c, st);
        for (uint64_t left = st->weight; left > 0;) {
            uint32_t n = left > WEIGHT_STEP ? WEIGHT_STEP : (uint32_t)left;
            if (js_jfr_execution_sample(w, tick, thread, (uint32_t)i + 1, JS_JFR_STATE_DEFAULT, n, err, errlen) != 0)
                return -1;
            tick += n;
            left -= n;
            *events += n;
        }
    }
    return 0;
}

int js_jfr_export(const char *path, const js_profile *p, const char *source, uint64_t *events, char *err,
                  size_t errlen)
{
    if (p->unit[0] && strcmp(p->unit, "samples") != 0) {
        snprintf(err, errlen, "JFR output holds execution samples; this profile is weighted in %s", p->unit);
        return -1;
    }
    if (p->total > JS_JFR_EXPORT_MAX_EVENTS) {
        snprintf(err, errlen, "JFR output: %llu samples, one event of ~12 bytes each, are over the limit of %llu",
                 (unsigned long long)p->total, (unsigned long long)JS_JFR_EXPORT_MAX_EVENTS);
        return -1;
    }
    if (p->nstacks >= 0x7FFFFFFFu) {
        snprintf(err, errlen, "JFR output: too many stacks (%zu)", p->nstacks);
        return -1;
    }
    export_ctx c = {.p = p};
    uint64_t n = 0;
    int rc = -1;
    if (index_threads(&c) != 0) {
        snprintf(err, errlen, "out of memory indexing threads for JFR output");
        goto out;
    }
    js_jfr_setting set[] = {{"source", source ? source : "profile"}, {"converter", "jsampler convert"}};
    js_jfr_options o = {.recording_name = "jsampler", .settings = set, .nsettings = 2};
    js_jfr_source src = {.ctx = &c, .trace = src_trace, .method = src_method, .thread = src_thread};
    uint64_t t0 = js_mono_ns();
    js_jfr_writer *w = js_jfr_open(path, &o, &src, t0, err, errlen);
    if (!w) goto out;
    rc = write_events(w, &c, t0, &n, err, errlen);
    char cerr[256] = "";
    if (js_jfr_close(w, t0 + n + 1, cerr, sizeof cerr) != 0 && rc == 0) {
        snprintf(err, errlen, "%s", cerr);
        rc = -1;
    }
out:
    if (events) *events = n;
    free(c.thread_of);
    free(c.roots);
    free(c.mname.s);
    free(c.tname.s);
    return rc;
}
