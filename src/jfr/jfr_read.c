/* jfr_read.c - the JFR reader's API (see jfr_read.h): the entry points over a file or over memory, the
 * input sources they read through, and the parsing of event kinds and --from/--to times.
 *
 * A read allocates its state and one read window, then runs the chunk loop (jfr_read_chunk.c). The reader's
 * internals are declared in jfr_read_int.h.
 */
#include "jfr_read_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- option parsing ---------------------------------------------------------------------------------- */

static const char *const kind_names[] = {"cpu", "wall", "alloc", "lock"};

/* Parses an event kind name; 0 or -1. */
int js_jfr_read_kind_parse(const char *s, js_jfr_read_kind *out)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (s && strcmp(s, kind_names[i]) == 0) {
            *out = (js_jfr_read_kind)i;
            return 0;
        }
    return -1;
}

/* Name of a kind; "unknown" when out of range. */
const char *js_jfr_read_kind_name(js_jfr_read_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "unknown";
}

/* The JFR event types of a kind, as one phrase; "events" when out of range. */
const char *js_jfr_read_kind_events(js_jfr_read_kind k)
{
    static const char *const events[] = {
        "jdk.ExecutionSample or jdk.NativeMethodSample", "profiler.WallClockSample",
        "jdk.ObjectAllocationInNewTLAB, jdk.ObjectAllocationOutsideTLAB or jdk.ObjectAllocationSample",
        "jdk.JavaMonitorEnter or jdk.ThreadPark"};
    return (unsigned)k < sizeof events / sizeof events[0] ? events[k] : "events";
}

/* Parses "@MS" (absolute) or a decimal duration with an optional unit (default seconds), in exact integer
 * arithmetic (fraction digits past the 18th are ignored); 0 or -1. */
int js_jfr_read_parse_time(const char *s, int *absolute, int64_t *ns)
{
    static const struct {
        const char *unit;
        int64_t mult;
    } units[] = {{"", 1000000000}, {"s", 1000000000}, {"ns", 1},           {"us", 1000},
                 {"ms", 1000000},  {"m", 60000000000}, {"h", 3600000000000}};
    if (!s) return -1;
    *absolute = s[0] == '@';
    const char *p = s + *absolute;
    size_t digits = strspn(p, "0123456789"), frac = p[digits] == '.' ? strspn(p + digits + 1, "0123456789") : 0;
    if (digits + frac == 0 || digits > 19 || (*absolute && p[digits] == '.')) return -1;
    const char *unit = p + digits + (p[digits] == '.' ? 1 + frac : 0);
    int64_t mult = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(unit, units[i].unit) == 0) mult = units[i].mult;
    if (*absolute) mult = *unit ? 0 : 1000000;
    if (mult == 0) return -1;
    __int128 whole = 0, part = 0, scale = 1;
    for (size_t i = 0; i < digits; i++) whole = whole * 10 + (p[i] - '0');
    for (size_t i = 0; i < frac && i < 18; i++, scale *= 10) part = part * 10 + (p[digits + 1 + i] - '0');
    __int128 v = whole * mult + (part * mult + scale / 2) / scale;
    if (v > INT64_MAX) return -1;
    *ns = (int64_t)v;
    return 0;
}

/* ---- input sources ----------------------------------------------------------------------------------- */

/* The context of each source: a file descriptor, or bytes in memory. */
typedef struct {
    int fd;
} js_jfrr_fd_src;
typedef struct {
    const uint8_t *data;
    size_t len;
} js_jfrr_mem_src;

/* pread loop over a file; 0 or -1. */
static int js_jfrr_fd_read_at(void *ctx, uint64_t off, void *buf, size_t n)
{
    int fd = ((js_jfrr_fd_src *)ctx)->fd;
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Copy out of a memory buffer; 0 or -1 when out of range. */
static int js_jfrr_mem_read_at(void *ctx, uint64_t off, void *buf, size_t n)
{
    const js_jfrr_mem_src *m = ctx;
    if (off > m->len || n > m->len - off) return -1;
    memcpy(buf, m->data + off, n);
    return 0;
}

/* ---- API --------------------------------------------------------------------------------------------- */

/* The profile's unit per kind. */
static const char *const kind_units[] = {"samples", "samples", "bytes", "ns"};

/* Runs the reader over a source of size bytes. */
static int run(js_jfrr_read_at fn, void *ctx, uint64_t size, const char *name, const js_jfr_read_opts *o,
               js_profile *p, js_jfr_read_stats *stats, char *err, size_t errlen)
{
    static const js_jfr_read_opts defaults;
    if (err && errlen) err[0] = 0;
    if (!o) o = &defaults;
    js_jfrr_reader *r = calloc(1, sizeof *r);
    size_t wcap = size < JS_JFRR_WINDOW ? (size_t)size + 16 : JS_JFRR_WINDOW;
    uint8_t *win = malloc(wcap);
    int rc = -1;
    if (!r || !win || (unsigned)o->kind > JS_JFR_READ_LOCK) {
        if (err && errlen) snprintf(err, errlen, "%s: %s", name, r && win ? "bad options" : "out of memory");
        goto out;
    }
    r->cur = (js_jfrr_cur){
        .read_at = fn, .ctx = ctx, .fsize = size, .win = win, .wcap = wcap, .name = name, .err = err, .errlen = errlen};
    r->o = o;
    r->p = p;
    r->norm_mark = JS_JFRR_MIN_NORMALIZE + p->nstacks;
    js_jfrr_chunk_free(&r->k);
    snprintf(p->unit, sizeof p->unit, "%s", kind_units[o->kind]);
    rc = js_jfrr_read_chunks(r);
    js_jfrr_chunk_free(&r->k);
    r->st.pool_probes = r->k.probes;
    if (stats) *stats = r->st;
out:
    if (r) free(r->scratch);
    free(r);
    free(win);
    return rc;
}

/* Reads the JFR file fd (seekable) into p; 0 or -1. */
int js_jfr_read_fd(int fd, const char *name, const js_jfr_read_opts *o, js_profile *p, js_jfr_read_stats *stats,
                   char *err, size_t errlen)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (err && errlen) snprintf(err, errlen, "%s: JFR input must be a regular file", name);
        return -1;
    }
    js_jfrr_fd_src src = {fd};
    return run(js_jfrr_fd_read_at, &src, (uint64_t)sb.st_size, name, o, p, stats, err, errlen);
}

/* Reads a JFR recording held in memory into p; 0 or -1. */
int js_jfr_read_mem(const void *data, size_t len, const char *name, const js_jfr_read_opts *o, js_profile *p,
                    js_jfr_read_stats *stats, char *err, size_t errlen)
{
    js_jfrr_mem_src src = {data, len};
    return run(js_jfrr_mem_read_at, &src, len, name, o, p, stats, err, errlen);
}
