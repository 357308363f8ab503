/* task_cmd.c - see backend_int.h: AsyncProfilerTaskQuery arguments and the ExecArgs inside them,
 * read the way SkyWalking writes them. Pure. */
#include "backend_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

/* Copy an argument into dst (dstlen bytes); -1 with err if it does not fit. */
static int copy_arg(char *dst, size_t dstlen, const char *key, const char *v, char *err, size_t errlen)
{
    if (strlen(v) >= dstlen) {
        snprintf(err, errlen, "%s longer than %zu characters", key, dstlen - 1);
        return -1;
    }
    snprintf(dst, dstlen, "%s", v);
    return 0;
}

int js_task_from_args(const char *const *keys, const char *const *vals, size_t n, js_sw_task *t, char *err,
                      size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->create_ms = -1;
    t->duration_s = -1;
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i], *v = vals[i] ? vals[i] : "";
        long long x;
        if (strcmp(k, "SerialNumber") == 0) {
            snprintf(t->serial, sizeof t->serial, "%s", v);
        } else if (strcmp(k, "TaskId") == 0) {
            if (copy_arg(t->id, sizeof t->id, k, v, err, errlen) != 0) return -1;
        } else if (strcmp(k, "Duration") == 0) {
            if (js_parse_ll(v, &x) != 0 || x < 0 || x > 86400) {
                snprintf(err, errlen, "Duration '%s' is not a number of seconds", v);
                return -1;
            }
            t->duration_s = (int)x;
        } else if (strcmp(k, "ExecArgs") == 0) {
            if (copy_arg(t->exec_args, sizeof t->exec_args, k, v, err, errlen) != 0) return -1;
        } else if (strcmp(k, "CreateTime") == 0) {
            if (js_parse_ll(v, &x) != 0 || x < 0) {
                snprintf(err, errlen, "CreateTime '%s' is not a time in ms", v);
                return -1;
            }
            t->create_ms = x;
        }
    }
    if (!t->id[0]) {
        snprintf(err, errlen, "the task has no TaskId");
        return -1;
    }
    if (t->create_ms < 0) {
        snprintf(err, errlen, "task %s has no CreateTime", t->id);
        return -1;
    }
    if (t->duration_s <= 0) {
        snprintf(err, errlen, "task %s has no positive Duration", t->id);
        return -1;
    }
    return 0;
}

/* Append text to a list joined by sep; 0, or -1 (list unchanged) when it does not fit. */
static int add(char *list, size_t len, const char *sep, const char *text, size_t n)
{
    size_t o = strlen(list), sl = o ? strlen(sep) : 0;
    if (o + sl + n + 1 > len) return -1;
    memcpy(list + o, sep, sl);
    memcpy(list + o + sl, text, n);
    list[o + sl + n] = 0;
    return 0;
}

static int is_cpu_event(const char *e, size_t n)
{
    return (n == 3 && strncmp(e, "cpu", 3) == 0) || (n == 6 && strncmp(e, "ctimer", 6) == 0) ||
           (n == 6 && strncmp(e, "itimer", 6) == 0);
}

/* A CPU event (first one wins: a recording has one CPU engine), or a note when another one repeats it. */
static void take_event(js_task_opts *o, const char *e, size_t n)
{
    if (!o->event[0]) {
        snprintf(o->event, sizeof o->event, "%.*s", (int)n, e);
    } else if (strlen(o->event) != n || strncmp(o->event, e, n) != 0) {
        char note[96];
        snprintf(note, sizeof note, "%.*s sampled by the %s engine (one CPU engine per recording)", (int)n, e, o->event);
        add(o->notes, sizeof o->notes, ", ", note, strlen(note)); /* a note that does not fit is only not logged */
    }
}

/* A wall, alloc or lock token ("alloc", "alloc=1m", "event=lock"): added to o->kinds as wall[=V] etc. 1 if
 * it was one, -1 if it was one that does not fit, 0 if not. */
static int take_kind(js_task_opts *o, const char *p, size_t n)
{
    static const char *const kinds[] = {"wall", "alloc", "lock"};
    if (n > 6 && strncmp(p, "event=", 6) == 0) p += 6, n -= 6;
    for (size_t i = 0; i < 3; i++) {
        size_t k = strlen(kinds[i]);
        if (n >= k && strncmp(p, kinds[i], k) == 0 && (n == k || p[k] == '='))
            return add(o->kinds, sizeof o->kinds, ",", p, n) == 0 ? 1 : -1;
    }
    return 0;
}

/* Options passed through to the dispatcher as they are (our syntax is async-profiler's). */
static int passes_through(const char *key, size_t k)
{
    static const char *const keys[] = {"jstackdepth", "chunksize", "threads", "include", "exclude", "nojitter", "walker",
                                       "cstack"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i]) == k && strncmp(key, keys[i], k) == 0) return 1;
    return 0;
}

/* One token of ExecArgs; 0, or -1 when jsampler cannot honour it (added to bad) or it does not fit with the
 * others (added to toolong): a task runs with every option it asked for, or not at all. */
static int take_token(js_task_opts *o, const char *p, size_t n, char *bad, size_t badlen, char *toolong,
                      size_t toolonglen)
{
    int kind;
    size_t k = strcspn(p, "=");
    if (k > n) k = n;
    const char *v = p + k + 1;
    size_t vn = k < n ? n - k - 1 : 0;
    char val[256];
    snprintf(val, sizeof val, "%.*s", (int)vn, v);
    if (k == 5 && strncmp(p, "event", 5) == 0 && k < n && is_cpu_event(v, vn)) {
        take_event(o, v, vn);
    } else if (k == n && is_cpu_event(p, n)) {
        take_event(o, p, n);
    } else if ((kind = take_kind(o, p, n)) != 0) {
        if (kind < 0) goto full;
    } else if (k == 8 && strncmp(p, "interval", 8) == 0 && k < n) {
        long long ns = js_parse_duration_ns(val);
        if (ns <= 0) goto bad;
        o->interval_ns = ns;
    } else if (k == 9 && strncmp(p, "chunktime", 9) == 0 && k < n) {
        /* async-profiler reads a bare chunktime as seconds; ours wants the unit */
        char opt[300];
        if (vn > 200) goto bad;
        int digits = vn > 0 && strspn(val, "0123456789") == vn;
        if (js_parse_duration_ns(digits ? strcat(val, "s") : val) <= 0) goto bad;
        snprintf(opt, sizeof opt, "chunktime=%s", val);
        if (add(o->extra, sizeof o->extra, ",", opt, strlen(opt)) != 0) goto full;
    } else if (passes_through(p, k)) {
        if (add(o->extra, sizeof o->extra, ",", p, n) != 0) goto full;
    } else {
        goto bad;
    }
    return 0;
bad:
    add(bad, badlen, ", ", p, n);
    return -1;
full:
    add(toolong, toolonglen, ", ", p, n < 40 ? n : 40);
    return -1;
}

int js_task_parse_exec(const char *exec, js_task_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    char bad[512] = "", toolong[256] = "";
    for (const char *p = exec ? exec : ""; *p;) {
        while (*p == ' ' || *p == ',') p++;
        size_t n = strcspn(p, ",");
        while (n && isspace((unsigned char)p[n - 1])) n--;
        if (n) take_token(o, p, n, bad, sizeof bad, toolong, sizeof toolong);
        p += strcspn(p, ",");
    }
    if (toolong[0] && !bad[0]) {
        snprintf(err, errlen, "ExecArgs '%.200s': too long: %s does not fit with the options before it (at most %zu "
                              "bytes of wall, alloc and lock options and %zu of the others)", exec, toolong,
                 sizeof o->kinds - 1, sizeof o->extra - 1);
        return -1;
    }
    if (bad[0]) {
        snprintf(err, errlen, "ExecArgs '%s': jsampler cannot honour %s (it records cpu, ctimer, itimer, wall, alloc "
                              "and lock; options interval, jstackdepth, chunksize, chunktime, threads, include, "
                              "exclude, cstack)", exec, bad);
        return -1;
    }
    o->timed = 1;
    if (!o->event[0] && o->kinds[0]) {
        /* No execution event: wall (if asked) becomes event= so interval= is its period; else the first kind is
         * event= alone. The kinds stay as options too (their values, if any, count). */
        const char *w = strstr(o->kinds, "wall");
        int wall = w && (w == o->kinds || w[-1] == ',');
        size_t n = strcspn(o->kinds, ",=");
        snprintf(o->event, sizeof o->event, "%.*s", (int)(wall ? 4 : n), wall ? "wall" : o->kinds);
        o->timed = wall;
    }
    if (!o->event[0]) snprintf(o->event, sizeof o->event, "cpu");
    return 0;
}

int js_task_start_command(const js_task_opts *o, long long interval_ns, uint64_t max_bytes, long long timeout_ms,
                          const char *file, char *cmd, size_t len)
{
    char ivopt[48] = "", toopt[48] = "";
    if (o->timed) snprintf(ivopt, sizeof ivopt, ",interval=%lld", interval_ns);
    if (timeout_ms > 0) snprintf(toopt, sizeof toopt, ",timeout=%lldms", timeout_ms);
    int n = snprintf(cmd, len, "start,event=%s%s%s%s,jfrmaxsize=%llu%s,file=%s%s%s", o->event, ivopt,
                     o->kinds[0] ? "," : "", o->kinds, (unsigned long long)max_bytes, toopt, file,
                     o->extra[0] ? "," : "", o->extra);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
