/* procsample.c - see procsample.h. */
#include "core/procsample.h"

#include "util/monotime.h"
#include "util/safefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STAT_MAX 1024 /* /proc/PID/stat is about 300 bytes; a longer one is cut (its fields are read from the front) */
#define STATUS_MAX 4096

/* What a round keeps of a process for the next: its identity and its CPU time then. */
typedef struct {
    int32_t pid;
    uint64_t start_ticks; /* a new process under a reused pid has another start */
    uint64_t cpu_ticks;
    uint64_t at_ns;
} proc_seen;

struct js_procsampler {
    proc_seen *prev, *cur; /* sorted by pid; JS_PROC_MAX each */
    int nprev;
    int32_t *pids;
    long clk_tck;
    uint64_t boot_ms; /* btime of /proc/stat */
    uint64_t ram_bytes;
};

/* Parse an unsigned decimal at *p (after spaces), moving *p past it; -1 if there is none. */
static int next_u64(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    while (s < end && *s == ' ') s++;
    if (s < end && *s == '-') s++; /* a negative field (priority, nice) is skipped as its magnitude */
    if (s >= end || *s < '0' || *s > '9') return -1;
    uint64_t v = 0;
    for (; s < end && *s >= '0' && *s <= '9'; s++) v = v > UINT64_MAX / 10 - 9 ? UINT64_MAX : v * 10 + (uint64_t)(*s - '0');
    *p = s;
    *out = v;
    return 0;
}

int js_proc_parse_stat(const char *buf, size_t len, js_jfr_process *p, uint64_t *utime, uint64_t *stime,
                       uint64_t *start_ticks, uint64_t *rss_pages)
{
    const char *end = buf + len, *open = memchr(buf, '(', len), *close = NULL;
    for (const char *c = end; c > buf; c--)
        if (c[-1] == ')') { close = c - 1; break; } /* comm may hold ')' itself: the last one ends it */
    if (!open || !close || close < open) return -1;
    const char *s = buf;
    uint64_t v;
    if (next_u64(&s, open, &v) || v == 0 || v > INT32_MAX) return -1;
    p->pid = (int32_t)v;
    size_t n = (size_t)(close - open - 1);
    if (n > sizeof p->name - 1) n = sizeof p->name - 1;
    memcpy(p->name, open + 1, n);
    p->name[n] = 0;
    s = close + 1;
    while (s < end && *s == ' ') s++;
    if (s >= end) return -1;
    p->state = (uint8_t)*s++;
    uint64_t f[25] = {0}; /* f[k] = field k of proc(5), from 4 (ppid) to 24 (rss) */
    for (int k = 4; k <= 24; k++)
        if (next_u64(&s, end, &f[k])) return -1;
    p->ppid = (int32_t)(f[4] > INT32_MAX ? 0 : f[4]);
    p->minor_faults = f[10];
    p->major_faults = f[12];
    *utime = f[14];
    *stime = f[15];
    p->threads = (uint32_t)(f[20] > UINT32_MAX ? UINT32_MAX : f[20]);
    *start_ticks = f[22];
    p->vm_size = f[23];
    *rss_pages = f[24];
    return 0;
}

/* The value of the line of buf that starts with key (a number, kB units applied by the caller); -1 if none. */
static int line_value(const char *buf, size_t len, const char *key, uint64_t *out)
{
    size_t k = strlen(key);
    for (const char *l = buf, *end = buf + len; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        const char *le = nl ? nl : end;
        if ((size_t)(le - l) > k && memcmp(l, key, k) == 0) {
            const char *s = l + k;
            while (s < le && (*s == ' ' || *s == '\t')) s++;
            return next_u64(&s, le, out);
        }
        l = le + 1;
    }
    return -1;
}

void js_proc_parse_status(const char *buf, size_t len, js_jfr_process *p)
{
    uint64_t v;
    if (line_value(buf, len, "Uid:", &v) == 0) p->uid = (uint32_t)v;
    uint64_t *kb[] = {&p->vm_size, &p->vm_rss, &p->rss_anon, &p->rss_files, &p->rss_shmem};
    const char *keys[] = {"VmSize:", "VmRSS:", "RssAnon:", "RssFile:", "RssShmem:"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (line_value(buf, len, keys[i], &v) == 0) *kb[i] = v > UINT64_MAX / 1024 ? UINT64_MAX : v * 1024;
}

void js_proc_parse_io(const char *buf, size_t len, js_jfr_process *p)
{
    uint64_t v;
    if (line_value(buf, len, "read_bytes:", &v) == 0) p->io_read = v;
    if (line_value(buf, len, "write_bytes:", &v) == 0) p->io_write = v;
}

void js_proc_parse_cmdline(const char *buf, size_t len, js_jfr_process *p)
{
    size_t n = len < sizeof p->cmdline - 1 ? len : sizeof p->cmdline - 1;
    for (size_t i = 0; i < n; i++) p->cmdline[i] = buf[i] ? buf[i] : ' ';
    while (n > 0 && p->cmdline[n - 1] == ' ') n--;
    p->cmdline[n] = 0;
}

/* btime of /proc/stat in ms since the epoch, or 0. */
static uint64_t boot_ms(void)
{
    return (uint64_t)js_boot_time() * 1000;
}

js_procsampler *js_procsampler_create(void)
{
    js_procsampler *ps = calloc(1, sizeof *ps);
    if (!ps) return NULL;
    ps->prev = calloc(JS_PROC_MAX, sizeof *ps->prev);
    ps->cur = calloc(JS_PROC_MAX, sizeof *ps->cur);
    ps->pids = calloc(JS_PROC_MAX, sizeof *ps->pids);
    if (!ps->prev || !ps->cur || !ps->pids) {
        js_procsampler_free(ps);
        return NULL;
    }
    ps->clk_tck = sysconf(_SC_CLK_TCK);
    if (ps->clk_tck <= 0) ps->clk_tck = 100;
    ps->boot_ms = boot_ms();
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    ps->ram_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    return ps;
}

void js_procsampler_free(js_procsampler *ps)
{
    if (!ps) return;
    free(ps->prev);
    free(ps->cur);
    free(ps->pids);
    free(ps);
}

static int cmp_pid(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The pids of /proc, sorted; their count. */
static int list_pids(js_procsampler *ps)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int n = 0;
    for (struct dirent *de; n < JS_PROC_MAX && (de = readdir(d)) != NULL;) {
        char *e;
        long pid = strtol(de->d_name, &e, 10);
        if (!*e && pid > 0 && pid <= INT32_MAX) ps->pids[n++] = (int32_t)pid;
    }
    closedir(d);
    qsort(ps->pids, (size_t)n, sizeof *ps->pids, cmp_pid);
    return n;
}

/* The previous round's record of pid, or NULL. */
static const proc_seen *seen_before(const js_procsampler *ps, int32_t pid)
{
    int lo = 0, hi = ps->nprev - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (ps->prev[mid].pid == pid) return &ps->prev[mid];
        if (ps->prev[mid].pid < pid) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

/* Read the files of a process worth reporting into p. */
static void read_details(int32_t pid, js_jfr_process *p)
{
    char path[64], buf[STATUS_MAX];
    ssize_t n;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if ((n = js_read_small(path, buf, sizeof buf)) > 0) js_proc_parse_status(buf, (size_t)n, p);
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    if ((n = js_read_small(path, buf, sizeof buf)) > 0) js_proc_parse_io(buf, (size_t)n, p);
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    if ((n = js_read_small(path, buf, sizeof p->cmdline)) > 0) js_proc_parse_cmdline(buf, (size_t)n, p);
}

int js_procsampler_round(js_procsampler *ps, uint64_t start_ns, void (*emit)(void *ctx, const js_jfr_process *p),
                         void *ctx)
{
    int npids = list_pids(ps), ncur = 0, read = 0;
    js_jfr_process *p = malloc(sizeof *p);
    if (!p) return 0;
    for (int i = 0; i < npids && js_mono_ns() - start_ns < JS_PROC_ROUND_NS; i++) {
        char path[64], buf[STAT_MAX];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)ps->pids[i]);
        ssize_t n = js_read_small(path, buf, sizeof buf);
        uint64_t at = js_mono_ns(), ut, st, start, rss;
        memset(p, 0, sizeof *p);
        if (n <= 0 || js_proc_parse_stat(buf, (size_t)n, p, &ut, &st, &start, &rss) != 0) continue;
        read++;
        proc_seen *s = &ps->cur[ncur++];
        *s = (proc_seen){p->pid, start, ut + st, at};
        const proc_seen *was = seen_before(ps, p->pid);
        if (!was || was->start_ticks != start || at <= was->at_ns || s->cpu_ticks < was->cpu_ticks) continue;
        p->cpu_fraction = (float)((double)(s->cpu_ticks - was->cpu_ticks) / (double)ps->clk_tck /
                                  ((double)(at - was->at_ns) / 1e9));
        p->vm_rss = rss * (uint64_t)sysconf(_SC_PAGESIZE);
        if (p->cpu_fraction < JS_PROC_MIN_FRACTION && (double)p->vm_rss < JS_PROC_MIN_FRACTION * (double)ps->ram_bytes)
            continue;
        p->cpu_user = (float)ut / (float)ps->clk_tck;
        p->cpu_system = (float)st / (float)ps->clk_tck;
        p->start_ms = ps->boot_ms + start * 1000 / (uint64_t)ps->clk_tck;
        read_details(p->pid, p);
        emit(ctx, p);
    }
    free(p);
    proc_seen *t = ps->prev; /* the processes read this round are the next round's baseline */
    ps->prev = ps->cur;
    ps->cur = t;
    ps->nprev = ncur;
    return read;
}
