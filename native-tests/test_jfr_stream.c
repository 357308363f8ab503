/* test_jfr_stream.c - the agent's JFR stream (core/jfr_stream.h) under the conditions that broke it: a trace id
 * reused by a store 64 rotations later within one chunk, a producer stalled inside the event ring, ring drops
 * counted per recording; and, through whole sessions (real engines sampling busy threads of this process, a fake
 * walker and a fake JVMTI for names), collapsed output and JFR recording written side by side give the same
 * profile stack for stack: across many store rotations of deep stacks, per loop= file, and across a store
 * abandoned by a thread stalled inside it. A stall is a thread that faults on a guard page inside the section under
 * test; its SIGSEGV handler holds it there until the test lets it go. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/args.h"
#include "core/arming.h"
#include "core/jfr_stream.h"
#include "core/names.h"
#include "core/profiler.h"
#include "jfr/jfr_read.h"
#include "output/collapsed_read.h"
#include "output/output.h"
#include "sample/sampler.h"
#include "sample/store.h"
#include "util/log.h"
#include "../src/core/session_int.h"

#define UNUSED __attribute__((unused))
#define WORKERS 2
#define METHOD_BASE 0x7e0000000000ULL

static char g_dir[64];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- a fake JVMTI: method k (id METHOD_BASE + k * 16) is pkg/C<k % 16>.m<k>, lines 100 + k % 900 (bci < 5)
 * and 200 + k % 900 ---- */

static jmethodID meth(uint32_t k)
{
    return (jmethodID)(uintptr_t)(METHOD_BASE + (uint64_t)k * 16);
}

static long index_of(jmethodID m)
{
    uint64_t v = (uint64_t)(uintptr_t)m - METHOD_BASE;
    return v % 16 == 0 && v < (1ULL << 32) ? (long)(v / 16) : -1;
}

static _Atomic long g_gone_from, g_gone_to; /* methods [from, to) have had their classes unloaded */

/* Method index of m, or -1 if JVMTI does not know it (never, or no more). */
static long known(jmethodID m)
{
    long k = index_of(m);
    return k >= atomic_load(&g_gone_from) && k < atomic_load(&g_gone_to) ? -1 : k;
}

static jvmtiError JNICALL fake_declaring_class(jvmtiEnv *env, jmethodID m, jclass *out)
{
    long k = known(m);
    if (k < 0) return JVMTI_ERROR_INVALID_METHODID;
    *out = (jclass)(uintptr_t)(0x1000 + (k % 16) * 16);
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_method_name(jvmtiEnv *env, jmethodID m, char **name, char **sig, char **generic)
{
    long k = known(m);
    if (k < 0) return JVMTI_ERROR_INVALID_METHODID;
    char n[32];
    snprintf(n, sizeof n, "m%ld", k);
    if (name) *name = strdup(n);
    if (sig) *sig = strdup("()V");
    if (generic) *generic = NULL;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_class_signature(jvmtiEnv *env, jclass c, char **sig, char **generic)
{
    char s[32];
    snprintf(s, sizeof s, "Lpkg/C%u;", (unsigned)(((uintptr_t)c - 0x1000) / 16));
    if (sig) *sig = strdup(s);
    if (generic) *generic = NULL;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_modifiers(jvmtiEnv *env, jmethodID m, jint *mods)
{
    *mods = 0x0009;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_line_table(jvmtiEnv *env, jmethodID m, jint *count, jvmtiLineNumberEntry **table)
{
    long k = known(m);
    if (k < 0) return JVMTI_ERROR_INVALID_METHODID;
    jvmtiLineNumberEntry *t = malloc(2 * sizeof *t);
    t[0] = (jvmtiLineNumberEntry){0, (jint)(100 + k % 900)};
    t[1] = (jvmtiLineNumberEntry){5, (jint)(200 + k % 900)};
    *count = 2;
    *table = t;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_deallocate(jvmtiEnv *env, unsigned char *mem)
{
    free(mem);
    return JVMTI_ERROR_NONE;
}

static struct jvmtiInterface_1_ g_fns;
static jvmtiEnv g_env = &g_fns;

/* ---- a fake walker: deep stacks, recursion over two methods in a pattern that changes with every walk (so
 * nearly every stack is new and the stores rotate), and a leaf among g_leaves methods ---- */

static _Atomic unsigned g_walks;
static _Atomic int g_depth = 3;
static _Atomic unsigned g_leaves = 4;
static _Atomic unsigned g_leaf_base; /* leaves are methods 100 + g_leaf_base + (0 .. g_leaves) */

static int fake_init(void *vm, char *err, size_t errlen)
{
    return 0;
}

static int fake_walk(void *uc, js_raw_frame *f, int max)
{
    unsigned w = atomic_fetch_add(&g_walks, 1);
    int depth = atomic_load(&g_depth);
    if (depth > max) depth = max;
    uint64_t pattern = (uint64_t)w * 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < depth; i++) {
        uint32_t k = i == 0 ? 100 + atomic_load(&g_leaf_base) + w % atomic_load(&g_leaves)
                            : i == depth - 1 ? 1 : 10 + (uint32_t)(pattern >> (i % 61) & 1);
        f[i] = (js_raw_frame){.bci = i % 7, .kind = JS_RF_JAVA, .method = meth(k)};
        if (i == 0 && atomic_load(&g_leaf_base) && k % 2) /* churn: half of the leaves are Java native methods */
            f[i] = (js_raw_frame){.bci = -1, .kind = JS_RF_NATIVE, .method = meth(k)};
    }
    return depth;
}

static const js_walker fake_walker = {"fake", fake_init, fake_walk};

/* ---- busy threads known to the core as Java threads ---- */

static _Atomic int g_run_workers;
static pthread_t g_workers[WORKERS];

static void *worker(void *arg)
{
    js_profiler_thread_start((int)syscall(SYS_gettid), (void *)1, "worker", 0);
    volatile uint64_t x = 0;
    while (atomic_load(&g_run_workers)) {
        if (!js_profiler_running()) { /* nothing samples it between sessions: it waits instead of burning CPU */
            usleep(1000);
            continue;
        }
        for (int i = 0; i < 100000; i++) x += (uint64_t)i * 2654435761u;
    }
    js_profiler_thread_end((int)syscall(SYS_gettid), NULL);
    return NULL;
}

/* ---- stalls: a thread faults on a guard page and its SIGSEGV handler keeps it there until released ---- */

static char *g_guard;              /* the guard page (PROT_NONE while a stall is armed) */
static _Atomic int g_stalled, g_release;
static struct sigaction g_old_segv;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    char *a = si->si_addr;
    if (!g_guard || a < g_guard || a >= g_guard + 4096) { /* not ours: the default action */
        sigaction(SIGSEGV, &g_old_segv, NULL);
        return;
    }
    atomic_store(&g_stalled, 1);
    while (!atomic_load(&g_release)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    mprotect(g_guard, 4096, PROT_READ | PROT_WRITE); /* the faulting access is retried and goes on */
}

/* Two pages: the first readable, the second the guard; returns the first. */
static char *arm_stall(void)
{
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    g_guard = m + 4096;
    assert_int_equal(mprotect(g_guard, 4096, PROT_NONE), 0);
    atomic_store(&g_stalled, 0);
    atomic_store(&g_release, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &g_old_segv), 0);
    return m;
}

/* Wait (up to 5 s) until the stalled thread sits in the handler. */
static void wait_stalled(void)
{
    for (int i = 0; i < 5000 && !atomic_load(&g_stalled); i++) sleep_ms(1);
    assert_true(atomic_load(&g_stalled));
}

/* ---- profiles ---- */

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted collapsed lines of p (heap, caller frees). */
static char *sorted_text(js_profile *p)
{
    char *buf = NULL, err[256];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(js_profile_normalize(p), 0);
    assert_int_equal(js_write_collapsed(f, p, err, sizeof err), 0);
    fclose(f);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += buf[i] == '\n';
    char **lines = calloc(n + 1, sizeof *lines), *save = NULL;
    size_t k = 0;
    for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) lines[k++] = l;
    qsort(lines, k, sizeof *lines, cmp_lines);
    size_t total = 0;
    for (size_t i = 0; i < k; i++) total += strlen(lines[i]) + 1;
    char *out = calloc(total + 1, 1), *o = out;
    for (size_t i = 0; i < k; i++) o = stpcpy(stpcpy(o, lines[i]), "\n");
    free(lines);
    free(buf);
    return out;
}

/* Total weight of collapsed text. */
static uint64_t text_total(const char *t)
{
    uint64_t sum = 0;
    for (const char *l = t; *l;) {
        const char *end = strchr(l, '\n'), *sp = end;
        if (!end) end = sp = l + strlen(l);
        while (sp > l && sp[-1] != ' ') sp--; /* the count after the line's last space */
        sum += strtoull(sp, NULL, 10);
        l = *end ? end + 1 : end;
    }
    return sum;
}

/* The cpu samples of a JFR recording as sorted collapsed lines, read as jsampler convert reads them. */
static char *jfr_text(const char *path)
{
    js_profile p;
    js_profile_init(&p);
    js_jfr_read_opts o = {.kind = JS_JFR_READ_CPU};
    char err[512];
    int fd = open(path, O_RDONLY);
    if (fd < 0) fail_msg("%s: cannot open", path);
    if (js_jfr_read_fd(fd, path, &o, &p, NULL, err, sizeof err) != 0) fail_msg("%s", err);
    close(fd);
    char *t = sorted_text(&p);
    js_profile_free(&p);
    return t;
}

/* A collapsed file's stacks as sorted collapsed lines. */
static char *collapsed_text(const char *path)
{
    js_profile p;
    js_profile_init(&p);
    char err[512];
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("%s: cannot open", path);
    if (js_collapsed_read(f, path, &p, err, sizeof err) != 0) fail_msg("%s", err);
    fclose(f);
    char *t = sorted_text(&p);
    js_profile_free(&p);
    return t;
}

/* The sessions below name Java frames as a JFR reader does (dot) and take no native frames (cstack=no: the fake
 * walker's native pcs are in this program, which is not what is tested here). */

/* The collapsed file and the JFR recording hold the same stacks with the same weights; returns the total. */
static uint64_t same_profile(const char *collapsed, const char *jfr)
{
    char *a = collapsed_text(collapsed), *b = jfr_text(jfr);
    if (strcmp(a, b) != 0) {
        if (getenv("JFR_STREAM_DIFF")) { /* both sides in files, for a closer look */
            char p1[256], p2[256];
            snprintf(p1, sizeof p1, "%s.sorted", collapsed);
            snprintf(p2, sizeof p2, "%s.sorted", jfr);
            FILE *f1 = fopen(p1, "w"), *f2 = fopen(p2, "w");
            if (f1) fputs(a, f1), fclose(f1);
            if (f2) fputs(b, f2), fclose(f2);
        }
        size_t i = 0;
        while (a[i] && a[i] == b[i]) i++;
        while (i > 0 && a[i - 1] != '\n') i--;
        fail_msg("%s and %s differ (totals %llu and %llu); first difference:\n  %.300s\nvs\n  %.300s", collapsed, jfr,
                 (unsigned long long)text_total(a), (unsigned long long)text_total(b), a + i, b + i);
    }
    uint64_t total = text_total(a);
    free(a);
    free(b);
    return total;
}

/* ---- sessions ---- */

static js_status run_cmd(const char *cmd, char *out, size_t outlen)
{
    js_args a;
    js_args_defaults(&a);
    char err[256];
    if (js_args_parse(cmd, &a, err, sizeof err) != 0) fail_msg("bad test command '%s': %s", cmd, err);
    switch (a.action) {
    case JS_ACTION_START: return js_profiler_start(&a, out, outlen);
    case JS_ACTION_STOP: return js_profiler_stop(&a, out, outlen);
    case JS_ACTION_DUMP: return js_profiler_dump(&a, out, outlen);
    case JS_ACTION_STATUS: return js_profiler_status(out, outlen);
    default: fail_msg("unexpected command '%s'", cmd);
    }
    return JS_ERR_ARGS;
}

static void expect_ok(const char *cmd, char *out, size_t outlen)
{
    js_status st = run_cmd(cmd, out, outlen);
    if (st != JS_OK) fail_msg("'%s': %s '%s'", cmd, js_strerror(st), out);
}

/* The session's store rotations so far. */
static uint64_t rotations(void)
{
    char out[4096];
    run_cmd("status", out, sizeof out);
    const char *r = strstr(out, "rotations=");
    return r ? strtoull(r + 10, NULL, 10) : 0;
}

/* Deep stacks that rotate the stores many times: collapsed and JFR outputs of the run are the same profile. */
static void test_rotations_same_profile(void **state UNUSED)
{
    char cmd[512], out[4096], col[128], jfr[128];
    snprintf(col, sizeof col, "%s/rot.collapsed", g_dir);
    snprintf(jfr, sizeof jfr, "%s/rot.jfr", g_dir);
    atomic_store(&g_depth, 400);
    atomic_store(&g_leaves, 1000);
    snprintf(cmd, sizeof cmd, "start,interval=1ms,jstackdepth=512,dot,cstack=no,file=%s,jfrfile=%s", col, jfr);
    expect_ok(cmd, out, sizeof out);
    for (int i = 0; i < 300 && rotations() < 6; i++) sleep_ms(100);
    uint64_t r = rotations();
    expect_ok("stop", out, sizeof out);
    if (r < 6) fail_msg("only %llu rotations in 30 s", (unsigned long long)r);
    assert_non_null(strstr(out, " 0 lost to full buffers"));
    assert_true(same_profile(col, jfr) > 0);
}

/* loop=: every collapsed file and the JFR file of the same number hold the same profile; no sample falls between
 * two JFR files. */
static void test_loop_files_same_profile(void **state UNUSED)
{
    char cmd[512], out[4096], col[128], jfr[128];
    atomic_store(&g_depth, 50);
    atomic_store(&g_leaves, 200);
    snprintf(cmd, sizeof cmd, "start,interval=1ms,dot,cstack=no,loop=1s,file=%s/l%%n.collapsed,jfrfile=%s/l%%n.jfr", g_dir, g_dir);
    expect_ok(cmd, out, sizeof out);
    sleep_ms(3500);
    expect_ok("stop", out, sizeof out);
    int files = 0;
    for (int n = 0; n < 100; n++) {
        snprintf(col, sizeof col, "%s/l%d.collapsed", g_dir, n);
        snprintf(jfr, sizeof jfr, "%s/l%d.jfr", g_dir, n);
        if (access(col, F_OK) != 0) break;
        assert_true(same_profile(col, jfr) > 0);
        files++;
    }
    if (files < 3) fail_msg("%d loop files", files);
}

/* The cached-names figure of the session's status. */
static unsigned long long names_cached(void)
{
    char out[4096];
    run_cmd("status", out, sizeof out);
    const char *c = strstr(out, "names_cached=");
    return c ? strtoull(c + 13, NULL, 10) : 0;
}

/* Class churn within one session, over the name cache's bound: each phase samples leaves never seen before, whose
 * classes unload once the phase is over and its samples had time to be named. The cache, aged at chunk ends and
 * folds, stays bounded, and every frame of every output is still named: nothing a JFR chunk or a fold had yet to
 * write was forgotten. opts: the session's outputs (%s: this test's directory); dumps: the commands that end each
 * phase, so that a JFR chunk ends and the store is folded or written however few samples a loaded machine's workers
 * take ("rotate": the store's rotation, as when it fills), and stop the command that ends the session (%s: this
 * test's directory). The names of the stacks still in the store are kept, whatever their age: the bound is checked
 * only if bounded (the phases rotate the store). Fails if the cache held over three
 * phases' leaves. */
static void churn_session(const char *opts, const char *const *dumps, const char *stop, int bounded)
{
    enum { LEAVES = 150, SEEN = 5 * LEAVES, MOST = 3 * LEAVES + 3 };
    char cmd[512], out[4096];
    js_session_names_keep = 100;
    atomic_store(&g_depth, 200); /* 2,000 traces fill a store: it rotates (folds) within a second on a quiet machine */
    atomic_store(&g_leaves, LEAVES);
    snprintf(out, sizeof out, opts, g_dir, g_dir);
    snprintf(cmd, sizeof cmd, "start,interval=1ms,dot,cstack=no,chunksize=64k,%s", out);
    expect_ok(cmd, out, sizeof out);
    unsigned long long most = 0, seen = 0;
    for (unsigned phase = 1; phase <= 60 && seen < SEEN; phase++) {
        unsigned walks = atomic_load(&g_walks);
        atomic_store(&g_leaf_base, phase * 1000);
        sleep_ms(400);
        unsigned got = atomic_load(&g_walks) - walks;
        seen += got < LEAVES ? got : LEAVES;
        /* The phases before were last sampled 400 ms ago, named since: their classes unload. */
        atomic_store(&g_gone_from, 100);
        atomic_store(&g_gone_to, 100 + phase * 1000);
        for (int i = 0; dumps[i]; i++) {
            if (strcmp(dumps[i], "rotate") == 0) { /* as when the store fills: its stacks go to the recording */
                pthread_mutex_lock(&js_cmd_lock);
                int rc = js_session_rotate(out, sizeof out);
                pthread_mutex_unlock(&js_cmd_lock);
                if (rc != 0) fail_msg("rotate: %s", out);
                continue;
            }
            snprintf(cmd, sizeof cmd, dumps[i], g_dir);
            expect_ok(cmd, out, sizeof out);
        }
        sleep_ms(80); /* the housekeeper ages the cache within a round */
        unsigned long long c = names_cached();
        if (c > most) most = c;
    }
    snprintf(cmd, sizeof cmd, stop, g_dir);
    expect_ok(cmd, out, sizeof out);
    atomic_store(&g_gone_to, 0);
    atomic_store(&g_leaf_base, 0);
    js_session_names_keep = 65536;
    printf("names within a session (%s): %llu leaves sampled, at most %llu names cached (bound 100)\n", opts, seen,
           most);
    if (seen < SEEN) fail_msg("only %llu leaves sampled in 60 phases", seen);
    if (bounded && most > MOST) fail_msg("%llu names cached, over three phases' leaves", most);
}

/* No frame of the profile text went unnamed. */
static void all_named(const char *what, const char *text)
{
    const char *bad = strstr(text, "[unloaded_method]");
    if (!bad) bad = strstr(text, "[unknown");
    if (bad) fail_msg("%s: a frame lost its name: %.200s", what, bad);
}

static void test_names_aged_within_session(void **state UNUSED)
{
    char col[128], jfr[128];
    snprintf(col, sizeof col, "%s/age.collapsed", g_dir);
    snprintf(jfr, sizeof jfr, "%s/age.jfr", g_dir);
    churn_session("file=%s/age.collapsed,jfrfile=%s/age.jfr", (const char *[]){"dump", "dump,file=%s/age.jfr", NULL},
                  "stop", 1);
    char *text = collapsed_text(col);
    all_named("collapsed beside JFR", text);
    free(text);
    assert_true(same_profile(col, jfr) > 0);
    snprintf(jfr, sizeof jfr, "%s/age-only.jfr", g_dir);
    churn_session("file=%s/age-only.jfr%.0s", (const char *[]){"rotate", "dump", NULL}, "stop", 1);
    text = jfr_text(jfr);
    all_named("JFR alone", text);
    assert_true(text_total(text) > 0);
    free(text);
    /* No rotation asked for: the store keeps stacks of phases long gone, which the stop writes as text. */
    snprintf(jfr, sizeof jfr, "%s/age-stop.jfr", g_dir);
    churn_session("file=%s/age-stop.jfr%.0s", (const char *[]){"dump", NULL}, "stop,file=%s/age-stop.collapsed", 0);
    text = jfr_text(jfr);
    all_named("JFR alone, not rotated", text);
    free(text);
    snprintf(col, sizeof col, "%s/age-stop.collapsed", g_dir);
    text = collapsed_text(col);
    all_named("text at the stop of a JFR session", text);
    assert_true(text_total(text) > 0);
    free(text);
}

/* A thread recording an event (the path of VM callbacks) stalls inside the store: the rotation that swaps the store
 * out gives up after 1 s and abandons it. Its samples still go to both outputs; the stores made after it are
 * known to the JFR stream; the stalled sample, let go later, is in neither and counted by the stream. */
static void *stalled_record(void *frames)
{
    js_sample_info info = {.kind = JS_SK_EXEC, .weight = 1, .ticks = 1};
    js_sampler_record(frames, 8192 / (int)sizeof(js_raw_frame), (int)syscall(SYS_gettid), &info);
    return NULL;
}

static void test_abandoned_store_same_profile(void **state UNUSED)
{
    char cmd[512], out[4096], col[128], jfr[128], dump[256];
    snprintf(col, sizeof col, "%s/ab.collapsed", g_dir);
    snprintf(jfr, sizeof jfr, "%s/ab.jfr", g_dir);
    snprintf(dump, sizeof dump, "dump,dot,file=%s/ab-dump.collapsed", g_dir);
    atomic_store(&g_depth, 30);
    atomic_store(&g_leaves, 50);
    snprintf(cmd, sizeof cmd, "start,interval=1ms,dot,cstack=no,file=%s,jfrfile=%s", col, jfr);
    expect_ok(cmd, out, sizeof out);
    sleep_ms(200);
    js_raw_frame *frames = (js_raw_frame *)(void *)arm_stall(); /* 512 frames, the last 256 on the guard page */
    for (int i = 0; i < 256; i++) frames[i] = (js_raw_frame){.bci = 1, .kind = JS_RF_JAVA, .method = meth(7)};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stalled_record, frames), 0);
    wait_stalled();
    expect_ok(dump, out, sizeof out); /* the rotation of a dump waits 1 s for the stalled thread, then abandons */
    atomic_store(&g_release, 1);
    pthread_join(t, NULL);
    sleep_ms(200);                    /* samples in the other store */
    expect_ok(dump, out, sizeof out); /* a new store takes the abandoned one's place */
    sleep_ms(200);                    /* samples in that new store */
    expect_ok(dump, out, sizeof out);
    sleep_ms(100);
    expect_ok("stop", out, sizeof out);
    sigaction(SIGSEGV, &g_old_segv, NULL);
    if (!strstr(out, ", 1 of a store already emptied or abandoned")) fail_msg("stop said: %s", out);
    assert_true(same_profile(col, jfr) > 0);
    munmap(frames, 8192);
    g_guard = NULL;
}

/* ---- the stream alone, over stores and events made here ---- */

/* Start a recording to path over stores a and b. */
static void stream_start(const char *path, js_store *a, js_store *b)
{
    js_args args;
    js_args_defaults(&args);
    char err[512];
    if (js_jfr_stream_start(NULL, path, &args, a, b, err, sizeof err) != 0) fail_msg("%s", err);
}

/* An execution event for trace id of a store whose generation is gen, as the handler streams it. */
static js_ring_event exec_event(uint32_t gen, uint32_t id, uint64_t ticks)
{
    js_ring_event e;
    memset(&e, 0, sizeof e);
    e.ticks = ticks;
    e.weight = 1;
    e.trace = (gen & JS_SAMPLER_GEN_MASK) << JS_SAMPLER_GEN_SHIFT | id;
    e.kind = JS_SK_EXEC;
    return e;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Within one chunk, a store 64 rotations after another has the same generation bits; a new stack that lands in the
 * slot an earlier stack had there gets the same 32-bit trace id. The recording must still show each event's own
 * stack. */
static void test_trace_id_reused_64_rotations_later(void **state UNUSED)
{
    char err[256], path[128];
    js_store *st[2], *scratch;
    for (int i = 0; i < 2; i++) assert_non_null(st[i] = js_store_create(1u << 15, 1u << 16, 1u << 16, err, sizeof err));
    assert_non_null(scratch = js_store_create(1u << 15, 1u << 16, 1u << 16, err, sizeof err));
    js_raw_frame first = {.bci = 1, .kind = JS_RF_JAVA, .method = meth(1)}, other = first;
    uint32_t id = js_store_add(st[0], &first, 1, 1, 1), k = 2;
    for (;; k++) { /* another one-frame stack whose home slot is the same: it lands there in an empty store */
        other.method = meth(k);
        if (js_store_add(scratch, &other, 1, 1, 1) == id) {
            js_store_reset(scratch);
            if (js_store_add(scratch, &other, 1, 1, 1) == id) break;
        }
        if (k % 8192 == 0) js_store_reset(scratch);
        assert_true(k < 4000000);
    }
    js_store_destroy(scratch);
    snprintf(path, sizeof path, "%s/reuse.jfr", g_dir);
    js_store_set_gen(st[0], 1);
    stream_start(path, st[0], st[1]);
    js_evring *ring = js_jfr_stream_ring();
    js_ring_event e = exec_event(1, id, now_ns());
    assert_int_equal(js_evring_put(ring, 0, &e), 0);
    int active = 0;
    for (uint32_t gen = 2; gen <= 65; gen++) { /* 64 rotations, as the session makes them */
        js_store_set_gen(st[1 - active], gen);
        js_jfr_stream_flush();
        js_store_reset(st[active]);
        active = 1 - active;
    }
    assert_int_equal(js_store_gen(st[active]) & JS_SAMPLER_GEN_MASK, 1);
    assert_int_equal(js_store_add(st[active], &other, 1, 1, 1), id); /* the same slot, so the same trace id */
    e = exec_event(65, id, now_ns());
    assert_int_equal(js_evring_put(ring, 0, &e), 0);
    char msg[1024];
    assert_int_equal(js_jfr_stream_stop(0, msg, sizeof msg), 0);
    char *got = jfr_text(path), a[64], b[64], want[128];
    snprintf(a, sizeof a, "pkg.C1.m1 1\n");
    snprintf(b, sizeof b, "pkg.C%u.m%u 1\n", k % 16, k);
    snprintf(want, sizeof want, "%s%s", strcmp(a, b) < 0 ? a : b, strcmp(a, b) < 0 ? b : a);
    assert_string_equal(got, want);
    free(got);
    for (int i = 0; i < 2; i++) js_store_destroy(st[i]);
}

/* Events dropped because the ring was full are reported with the recording they were lost from, not again with
 * the next one. */
static void test_lost_events_per_recording(void **state UNUSED)
{
    char err[256], path[128], msg[1024];
    js_store *s = js_store_create(1024, 4096, 4096, err, sizeof err);
    assert_non_null(s);
    js_raw_frame f = {.bci = 0, .kind = JS_RF_JAVA, .method = meth(3)};
    js_store_set_gen(s, 1);
    uint32_t id = js_store_add(s, &f, 1, 1, 1);
    for (int rec = 0; rec < 2; rec++) {
        snprintf(path, sizeof path, "%s/lost%d.jfr", g_dir, rec);
        stream_start(path, s, NULL);
        js_evring *ring = js_jfr_stream_ring();
        js_ring_event e = exec_event(1, id, now_ns());
        int refused = 0;
        for (long i = 0; i < (rec == 0 ? 20000000L : 10) && !(rec == 0 && refused > 0); i++)
            refused += js_evring_put(ring, (int)i, &e) != 0; /* the first recording fills the ring */
        assert_true(rec == 1 || refused > 0);
        assert_int_equal(js_jfr_stream_stop(0, msg, sizeof msg), 0);
        char want[64];
        snprintf(want, sizeof want, " %d lost to full buffers", refused);
        if (!strstr(msg, want)) fail_msg("recording %d: '%s', want '%s'", rec, msg, want);
    }
    js_store_destroy(s);
}

static void *stalled_put(void *ev)
{
    js_evring_put(js_jfr_stream_ring(), 0, ev);
    return NULL;
}

static void *stopper(void *msg)
{
    js_jfr_stream_stop(0, msg, 1024);
    return NULL;
}

/* A producer stalled inside the ring (a stopped thread in a signal handler) must not stall the writer or stop:
 * stop returns after the bounded wait with the file complete, and the ring is left to the producer. */
static void test_stalled_producer_does_not_stall_stop(void **state UNUSED)
{
    char err[256], path[128], msg[1024] = "";
    js_store *s = js_store_create(1024, 4096, 4096, err, sizeof err);
    js_raw_frame f = {.bci = 0, .kind = JS_RF_JAVA, .method = meth(5)};
    js_store_set_gen(s, 1);
    uint32_t id = js_store_add(s, &f, 1, 1, 1);
    snprintf(path, sizeof path, "%s/stall.jfr", g_dir);
    stream_start(path, s, NULL);
    js_ring_event e = exec_event(1, id, now_ns());
    for (int i = 1; i < 16; i++) assert_int_equal(js_evring_put(js_jfr_stream_ring(), i, &e), 0);
    char *page = arm_stall();
    js_ring_event *guarded = (js_ring_event *)(void *)(g_guard - sizeof e / 2); /* straddles into the guard page */
    memcpy(guarded, &e, sizeof e / 2);
    pthread_t producer, stop;
    assert_int_equal(pthread_create(&producer, NULL, stalled_put, guarded), 0);
    wait_stalled();
    sleep_ms(100); /* the writer thread drains (or tries to) meanwhile */
    assert_int_equal(pthread_create(&stop, NULL, stopper, msg), 0);
    int returned = 0;
    for (int i = 0; i < 5000 && !returned; i++) {
        sleep_ms(1);
        returned = strstr(msg, "JFR") != NULL;
    }
    if (!returned) fail_msg("stop did not return within 5 s while a producer holds a stripe of the ring");
    pthread_join(stop, NULL);
    atomic_store(&g_release, 1);
    pthread_join(producer, NULL);
    sigaction(SIGSEGV, &g_old_segv, NULL);
    assert_non_null(strstr(msg, "wrote JFR recording (15 events"));
    char *got = jfr_text(path);
    assert_string_equal(got, "pkg.C5.m5 15\n");
    free(got);
    munmap(page, 8192);
    g_guard = NULL;
    js_store_destroy(s);
}

/* ---- setup ---- */

/* After a test of the stream alone: a recording a failed test left open is closed, so the next one can start. */
static int stream_cleanup(void **state)
{
    char msg[1024];
    js_jfr_stream_stop(0, msg, sizeof msg);
    return 0;
}

static int setup(void **state)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/jsampler-jfrstream-XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    memset(&g_fns, 0, sizeof g_fns);
    g_fns.GetMethodDeclaringClass = fake_declaring_class;
    g_fns.GetMethodName = fake_method_name;
    g_fns.GetClassSignature = fake_class_signature;
    g_fns.GetMethodModifiers = fake_modifiers;
    g_fns.GetLineNumberTable = fake_line_table;
    g_fns.Deallocate = fake_deallocate;
    js_names_init(NULL, &g_env);
    js_arming_use_walker(&fake_walker);
    char err[128];
    js_log_configure(JS_LOG_WARN, NULL, err, sizeof err);
    atomic_store(&g_run_workers, 1);
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&g_workers[i], NULL, worker, NULL) != 0) return -1;
    return 0;
}

static int teardown(void **state)
{
    atomic_store(&g_run_workers, 0);
    for (int i = 0; i < WORKERS; i++) pthread_join(g_workers[i], NULL);
    if (getenv("JFR_STREAM_DIFF")) return 0; /* the files stay */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_trace_id_reused_64_rotations_later, stream_cleanup),
        cmocka_unit_test_teardown(test_lost_events_per_recording, stream_cleanup),
        cmocka_unit_test_teardown(test_stalled_producer_does_not_stall_stop, stream_cleanup),
        cmocka_unit_test(test_rotations_same_profile),
        cmocka_unit_test(test_loop_files_same_profile),
        cmocka_unit_test(test_names_aged_within_session),
        cmocka_unit_test(test_abandoned_store_same_profile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
