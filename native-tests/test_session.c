/* test_session.c - the session state machine through the dispatcher's core (profiler.h): every
 * command in every state, concurrent stops, restart cycles, store rotation that keeps every sample,
 * timeout= and loop=. Real engines (perf_events, or ctimer where it is refused) sample busy threads
 * of this process; a fake walker stands in for AsyncGetCallTrace (there is no JVM here). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/arming.h"
#include "core/profiler.h"
#include "core/status.h"
#include "../src/core/session_int.h"
#include "engine/engine.h"
#include "sample/sampler.h"
#include "sample/stats.h"
#include "sample/threads.h"
#include <fcntl.h>
#include "util/log.h"

#define UNUSED __attribute__((unused))
#define WORKERS 2

static char g_dir[64];
static _Atomic int g_run_workers;
static _Atomic unsigned g_walks;
static _Atomic unsigned g_distinct = 1; /* distinct stacks the fake walker cycles through */
static _Atomic int g_depth = 2;         /* frames per fake stack */
static _Atomic unsigned g_leaf_base;    /* added to the leaf's number: a new base is methods never seen before */
static pthread_t g_workers[WORKERS];
static _Atomic int g_worker_tid[WORKERS];
static _Atomic int g_hold_tid;       /* the walks of this thread wait while it is set */
static _Atomic int g_holding;        /* such a walk is waiting */
static _Atomic int g_held_fd = -1;   /* the held thread's engine handle when its walk began */
static _Atomic int g_fd_open_after = -1; /* 1 if that handle was still open when the walk went on */

static int fake_init(void *vm, char *err, size_t errlen)
{
    return 0;
}

/* A stack of g_depth frames whose leaf cycles through g_distinct methods. */
static int fake_walk(void *uc, js_raw_frame *f, int max)
{
    int tid = (int)syscall(SYS_gettid);
    if (tid == atomic_load(&g_hold_tid)) {
        js_thread *t = js_threads_find(tid);
        int fd = t ? (int)atomic_load(&t->handle) : -1;
        atomic_store(&g_held_fd, fd);
        atomic_store(&g_holding, 1);
        while (atomic_load(&g_hold_tid) == tid) {
        }
        atomic_store(&g_fd_open_after, fd >= 0 && fcntl(fd, F_GETFD) != -1);
        atomic_store(&g_holding, 0);
    }
    unsigned k = atomic_fetch_add(&g_walks, 1) % atomic_load(&g_distinct);
    int depth = atomic_load(&g_depth);
    if (depth > max) depth = max;
    for (int i = 0; i < depth; i++) {
        f[i].bci = i;
        f[i].kind = JS_RF_JAVA;
        f[i].method = (const void *)(uintptr_t)(0x100000 + (i == 0 ? atomic_load(&g_leaf_base) + k : 1000000u + (unsigned)i) * 16u);
    }
    return depth;
}

static const js_walker fake_walker = {"fake", fake_init, fake_walk};

/* A thread known to the core as a Java thread (non-NULL env), busy while a session runs. */
static void *worker(void *arg)
{
    atomic_store(&g_worker_tid[(intptr_t)arg], (int)syscall(SYS_gettid));
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

static int setup(void **state)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/jsampler-session-XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    js_arming_use_walker(&fake_walker);
    char err[128];
    js_log_configure(JS_LOG_WARN, NULL, err, sizeof err); /* one INFO line per session would drown the report */
    atomic_store(&g_run_workers, 1);
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&g_workers[i], NULL, worker, (void *)(intptr_t)i) != 0) return -1;
    return 0;
}

static int teardown(void **state)
{
    atomic_store(&g_run_workers, 0);
    for (int i = 0; i < WORKERS; i++) pthread_join(g_workers[i], NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Run "cmd" (parsed like every entry point's) and return its status; the reply goes to out. */
static js_status run(const char *cmd, char *out, size_t outlen)
{
    js_args a;
    js_args_defaults(&a);
    char err[256];
    if (js_args_parse(cmd, &a, err, sizeof err) != 0) fail_msg("bad test command '%s': %s", cmd, err);
    switch (a.action) {
    case JS_ACTION_START:
    case JS_ACTION_RESUME: return js_profiler_start(&a, out, outlen);
    case JS_ACTION_STOP: return js_profiler_stop(&a, out, outlen);
    case JS_ACTION_DUMP: return js_profiler_dump(&a, out, outlen);
    case JS_ACTION_STATUS: return js_profiler_status(out, outlen);
    default: fail_msg("unexpected command '%s'", cmd);
    }
    return JS_ERR_ARGS;
}

/* Expect status st for cmd, and (if non-NULL) want within the reply. */
static void expect(const char *cmd, js_status st, const char *want)
{
    char out[4096] = "";
    js_status got = run(cmd, out, sizeof out);
    if (got != st || (want && !strstr(out, want)))
        fail_msg("'%s': got %s '%s', want %s containing '%s'", cmd, js_strerror(got), out, js_strerror(st),
                 want ? want : "");
}

/* Sum of the weights of a collapsed file; -1 if it cannot be read. */
static long long collapsed_total(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[8192];
    long long total = 0;
    while (fgets(line, sizeof line, f)) {
        char *sp = strrchr(line, ' ');
        if (sp) total += atoll(sp + 1);
    }
    fclose(f);
    return total;
}

/* Open file descriptors of this process. */
static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Every command in the idle and running states (the dead state is the last test). */
static void test_commands_in_every_state(void **state UNUSED)
{
    char cmd[256];
    expect("stop", JS_ERR_STATE, "not running");
    expect("dump", JS_ERR_STATE, "not running");
    expect("status", JS_OK, "state=idle");
    snprintf(cmd, sizeof cmd, "start,interval=1ms,file=%s/a.collapsed", g_dir);
    expect(cmd, JS_OK, "profiling started");
    expect(cmd, JS_ERR_STATE, "already running");
    expect("status", JS_OK, "state=running");
    sleep_ms(200);
    snprintf(cmd, sizeof cmd, "dump,file=%s/d.collapsed", g_dir);
    expect(cmd, JS_OK, "wrote collapsed profile");
    assert_true(collapsed_total(cmd + strlen("dump,file=")) > 0);
    snprintf(cmd, sizeof cmd, "dump,file=%s/d.jfr", g_dir);
    expect(cmd, JS_ERR_ARGS, "no JFR recording is being written"); /* a text session: dump,jfr has no recording */
    expect("stop", JS_OK, "wrote collapsed profile");
    expect("stop", JS_ERR_STATE, "not running"); /* names no output: nothing to write again */
    expect("status", JS_OK, "state=idle");
    snprintf(cmd, sizeof cmd, "%s/a.collapsed", g_dir);
    long long total = collapsed_total(cmd);
    assert_true(total > 0);
    /* After the end, a stop or dump that says where writes the last session's profile again. */
    snprintf(cmd, sizeof cmd, "stop,file=%s/again.collapsed", g_dir);
    expect(cmd, JS_OK, "wrote collapsed profile");
    assert_int_equal(collapsed_total(cmd + strlen("stop,file=")), total);
    snprintf(cmd, sizeof cmd, "dump,total,file=%s/again-ns.collapsed", g_dir);
    expect(cmd, JS_OK, "ns");
    assert_int_equal(collapsed_total(cmd + strlen("dump,total,file=")), total * 1000000LL);
    snprintf(cmd, sizeof cmd, "dump,file=%s/again.jfr", g_dir);
    expect(cmd, JS_ERR_ARGS, "kept as text only");
}

/* Run verb ("start" or "resume") at 1 ms into g_dir/name for ms, stop, and return the total the file holds. */
static long long session_total(const char *verb, const char *name, int ms)
{
    char cmd[256], path[200];
    snprintf(cmd, sizeof cmd, "%s,interval=1ms,file=%s/%s", verb, g_dir, name);
    expect(cmd, JS_OK, "profiling started");
    sleep_ms(ms);
    expect("stop", JS_OK, "wrote collapsed profile");
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    return collapsed_total(path);
}

/* resume adds to what the last session collected; start begins afresh. */
static void test_resume(void **state UNUSED)
{
    long long first = session_total("start", "r1.collapsed", 200);
    assert_true(first > 0);
    long long both = session_total("resume", "r2.collapsed", 200);
    if (both <= first) fail_msg("resume: %lld samples after resuming, %lld before", both, first);
    if (session_total("start", "r3.collapsed", 50) >= both) fail_msg("start after resume kept the old samples");
}

/* A resume that fails (its JFR file cannot be created) keeps the last session's profile and request: a dump writes
 * it whole, to the kept request's file, and a resume after it still adds to it. */
static void test_failed_resume_keeps_profile(void **state UNUSED)
{
    char cmd[256], path[200];
    long long first = session_total("start", "f1.collapsed", 200);
    assert_true(first > 0);
    snprintf(cmd, sizeof cmd, "resume,interval=1ms,file=%s/f2.collapsed,jfrfile=%s/missing/f2.jfr", g_dir, g_dir);
    expect(cmd, JS_ERR_IO, "missing");
    snprintf(cmd, sizeof cmd, "dump,file=%s/f-kept.collapsed", g_dir);
    expect(cmd, JS_OK, "wrote collapsed profile");
    snprintf(path, sizeof path, "%s/f-kept.collapsed", g_dir);
    assert_int_equal(collapsed_total(path), first);
    snprintf(path, sizeof path, "%s/f1.collapsed", g_dir);
    assert_int_equal(unlink(path), 0);
    expect("dump", JS_OK, "wrote collapsed profile");
    assert_int_equal(collapsed_total(path), first);
    snprintf(path, sizeof path, "%s/f2.collapsed", g_dir);
    assert_true(access(path, F_OK) != 0);
    long long both = session_total("resume", "f3.collapsed", 200);
    if (both <= first) fail_msg("resume after a failed one: %lld samples, %lld before", both, first);
}

/* ... and its file number: after a loop= session, a dump after the failed resume writes the last file's name again,
 * not the first's. */
static void test_failed_resume_keeps_file_number(void **state UNUSED)
{
    char cmd[256], path[200];
    snprintf(cmd, sizeof cmd, "start,interval=1ms,loop=1s,file=%s/n%%n.collapsed", g_dir);
    expect(cmd, JS_OK, "profiling started");
    snprintf(path, sizeof path, "%s/n0.collapsed", g_dir);
    for (int i = 0; i < 200 && access(path, F_OK) != 0; i++) sleep_ms(50); /* the first file, however loaded */
    sleep_ms(300);
    expect("stop", JS_OK, "n1.collapsed");
    snprintf(path, sizeof path, "%s/n1.collapsed", g_dir);
    long long last = collapsed_total(path);
    assert_true(last >= 0);
    snprintf(cmd, sizeof cmd, "resume,interval=1ms,jfrfile=%s/missing/n.jfr", g_dir);
    expect(cmd, JS_ERR_IO, "missing");
    snprintf(path, sizeof path, "%s/n0.collapsed", g_dir);
    long long first = collapsed_total(path);
    expect("dump", JS_OK, "n1.collapsed");
    assert_int_equal(collapsed_total(path), first); /* n0 untouched */
    snprintf(path, sizeof path, "%s/n1.collapsed", g_dir);
    assert_int_equal(collapsed_total(path), last);
}

typedef struct {
    pthread_barrier_t *go;
    js_status st;
} stopper;

static void *stop_thread(void *arg)
{
    stopper *s = arg;
    char cmd[128], out[2048];
    snprintf(cmd, sizeof cmd, "stop"); /* writes the start's file; names none (a stop naming one after the end
                                          * would write the last profile again) */
    pthread_barrier_wait(s->go);
    s->st = run(cmd, out, sizeof out);
    return NULL;
}

/* Two stops racing: exactly one stops, the other is told the profiler is not running. */
static void test_concurrent_stops(void **state UNUSED)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "start,interval=1ms,file=%s/race.collapsed", g_dir);
    for (int round = 0; round < 20; round++) {
        expect(cmd, JS_OK, NULL);
        sleep_ms(20);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        stopper s[2] = {{&go, -1}, {&go, -1}};
        pthread_t t[2];
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, stop_thread, &s[i]);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&go);
        int ok = (s[0].st == JS_OK) + (s[1].st == JS_OK), refused = (s[0].st == JS_ERR_STATE) + (s[1].st == JS_ERR_STATE);
        if (ok != 1 || refused != 1) fail_msg("round %d: statuses %d and %d", round, s[0].st, s[1].st);
    }
}

/* Start/dump/stop cycles leave no file descriptor or thread behind. */
static void test_restart_cycles(void **state UNUSED)
{
    char start[256], dump[256], stop[256];
    snprintf(start, sizeof start, "start,event=%s,interval=1ms,file=%s/c.collapsed", "cpu", g_dir);
    snprintf(dump, sizeof dump, "dump,file=%s/cd.collapsed", g_dir);
    snprintf(stop, sizeof stop, "stop");
    expect(start, JS_OK, NULL); /* the first session creates what later ones reuse */
    expect(stop, JS_OK, NULL);
    int fds = count_fds();
    for (int i = 0; i < 50; i++) {
        if (i % 2) snprintf(start, sizeof start, "start,event=ctimer,interval=1ms,file=%s/c.collapsed", g_dir);
        expect(start, JS_OK, NULL);
        sleep_ms(10);
        expect(dump, JS_OK, NULL);
        expect(stop, JS_OK, NULL);
    }
    assert_int_equal(count_fds(), fds);
}

/* A short-lived thread known to the core: it starts, works a moment and ends. */
static void *short_thread(void *arg)
{
    int tid = (int)syscall(SYS_gettid);
    js_profiler_thread_start(tid, (void *)1, "short", 0);
    volatile uint64_t x = 0;
    for (int i = 0; i < 2000; i++) x += (uint64_t)i;
    js_profiler_thread_end(tid, NULL);
    return NULL;
}

/* Starts short threads one after another until told to stop. */
static void *churner(void *arg)
{
    while (atomic_load((_Atomic int *)arg)) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_thread, NULL) == 0) pthread_join(t, NULL);
    }
    return NULL;
}

/* Sessions started and stopped while threads start and end all the time (300 cycles, or 10 s): after every stop
 * the engine holds no counter and the process has the files it had. A start arms the threads of the table one by one; one that ended
 * between being seen and being armed had its free slot armed (tid 0: perf_event_open then counted the calling
 * thread), a counter no slot held at stop: the perf_event file leak the stress runs found once in ten. */
static void test_cycles_under_thread_churn(void **state UNUSED)
{
    char start[256];
    snprintf(start, sizeof start, "start,event=cpu,interval=1ms,file=%s/churn.collapsed", g_dir);
    expect(start, JS_OK, NULL);
    expect("stop", JS_OK, NULL);
    int fds = count_fds();
    char logpath[128], err[128];
    snprintf(logpath, sizeof logpath, "%s/churn.log", g_dir);
    assert_int_equal(js_log_configure(JS_LOG_WARN, logpath, err, sizeof err), 0); /* a stop's sweep says so there */
    _Atomic int run = 1;
    pthread_t ch[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&ch[i], NULL, churner, &run), 0);
    int leaked = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0, spent = 0; i < 300 && !leaked && spent < 10; i++) { /* the sanitizers' builds: 10 s at most */
        clock_gettime(CLOCK_MONOTONIC, &t1);
        spent = (int)(t1.tv_sec - t0.tv_sec);
        expect(start, JS_OK, NULL);
        expect("stop", JS_OK, NULL);
        if (js_engine_perf_counters_open() != 0) leaked = i + 1;
    }
    atomic_store(&run, 0);
    for (int i = 0; i < 2; i++) pthread_join(ch[i], NULL);
    assert_int_equal(js_log_configure(JS_LOG_WARN, NULL, err, sizeof err), 0);
    if (leaked) fail_msg("cycle %d: %lld counters open after the stop", leaked, js_engine_perf_counters_open());
    assert_int_equal(count_fds(), fds);
    FILE *f = fopen(logpath, "r"); /* and none needed the stop's sweep: every counter was in its slot */
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "held by no thread slot")) fail_msg("a counter escaped its slot: %s", line);
    if (f) fclose(f);
}

/* Sample interval of the rotation test. Under TSan the housekeeper's fold runs many times slower while the
 * handlers do not slow as much, so a round of folding can outlast a whole store at 1 ms on two busy cores;
 * 4 ms keeps the same claim (nothing dropped across rotations) at a load that build can fold in time. */
#ifdef __SANITIZE_THREAD__
#define ROTATION_INTERVAL "4ms"
#else
#define ROTATION_INTERVAL "1ms"
#endif

/* Deep distinct stacks fill the store: it is swapped several times and every sample still reaches the output. */
static void test_rotation_keeps_every_sample(void **state UNUSED)
{
    char cmd[256], out[4096], path[128];
    atomic_store(&g_distinct, 50000);
    atomic_store(&g_depth, 400);
    snprintf(path, sizeof path, "%s/rot.collapsed", g_dir);
    snprintf(cmd, sizeof cmd, "start,interval=" ROTATION_INTERVAL ",jstackdepth=512,file=%s", path);
    expect(cmd, JS_OK, NULL);
    uint64_t rotations = 0;
    for (int i = 0; i < 300 && rotations < 3; i++) { /* up to 30 s: a loaded machine gives the workers less CPU */
        sleep_ms(100);
        run("status", out, sizeof out);
        const char *r = strstr(out, "rotations=");
        rotations = r ? strtoull(r + 10, NULL, 10) : 0;
    }
    expect("stop", JS_OK, NULL);
    atomic_store(&g_distinct, 1);
    atomic_store(&g_depth, 2);
    js_stats_snapshot s;
    js_stats_get(&s);
    if (rotations < 3) fail_msg("only %llu rotations in 30 s", (unsigned long long)rotations);
    assert_int_equal(s.dropped, 0);
    assert_true(s.samples > 0);
    assert_int_equal(collapsed_total(path), (long long)s.weight);
}

/* The names_cached figure of a status reply. */
static unsigned long long names_cached(void)
{
    char out[4096];
    run("status", out, sizeof out);
    const char *c = strstr(out, "names_cached=");
    return c ? strtoull(c + 13, NULL, 10) : 0;
}

/* Within one session the method-name cache stays bounded: over its bound, each store folded forgets the methods not
 * sampled since the fold before (here leaves that never come back, as under class churn); every sample still reaches
 * the profile. */
static void test_names_bounded_within_session(void **state UNUSED)
{
    char cmd[256], path[128];
    const unsigned distinct = 150;
    js_session_names_keep = 100;
    atomic_store(&g_distinct, distinct);
    snprintf(path, sizeof path, "%s/names.collapsed", g_dir);
    snprintf(cmd, sizeof cmd, "start,interval=1ms,file=%s", path);
    expect(cmd, JS_OK, NULL);
    unsigned long long seen = 0, most = 0;
    for (int phase = 1; phase <= 100 && seen < 6 * distinct; phase++) {
        unsigned walks = atomic_load(&g_walks);
        atomic_store(&g_leaf_base, (unsigned)phase * 10000u);
        sleep_ms(150);
        unsigned got = atomic_load(&g_walks) - walks;
        seen += got < distinct ? got : distinct;
        snprintf(cmd, sizeof cmd, "dump,file=%s/names-dump.collapsed", g_dir); /* folds the store */
        expect(cmd, JS_OK, NULL);
        sleep_ms(80); /* a housekeeper round: the age */
        unsigned long long c = names_cached();
        if (c > most) most = c;
    }
    expect("stop", JS_OK, NULL);
    js_session_names_keep = 65536;
    atomic_store(&g_distinct, 1);
    atomic_store(&g_leaf_base, 0);
    js_stats_snapshot s;
    js_stats_get(&s);
    printf("names within a session: %llu leaf methods sampled, at most %llu cached (bound 100)\n", seen, most);
    if (seen < 6 * distinct) fail_msg("only %llu methods sampled in 100 phases", seen);
    if (most > 3 * distinct) fail_msg("%llu methods cached after a fold, over 3 phases' %u", most, 3 * distinct);
    assert_int_equal(collapsed_total(path), (long long)s.weight);
}

/* timeout= ends the session by itself and writes its output. */
static void test_timeout(void **state UNUSED)
{
    char cmd[256], out[2048], path[128];
    snprintf(path, sizeof path, "%s/t.collapsed", g_dir);
    snprintf(cmd, sizeof cmd, "start,interval=1ms,timeout=300ms,file=%s", path);
    expect(cmd, JS_OK, "timeout=300ms");
    int idle = 0;
    for (int i = 0; i < 200 && !idle; i++) {
        sleep_ms(10);
        run("status", out, sizeof out);
        idle = strstr(out, "state=idle") != NULL;
    }
    assert_true(idle);
    assert_true(collapsed_total(path) > 0);
    expect("stop", JS_ERR_STATE, "not running");
}

/* loop=1s writes one file per second, numbered by %n, each with samples. */
static void test_loop(void **state UNUSED)
{
    char cmd[256], path[128];
    snprintf(cmd, sizeof cmd, "start,interval=1ms,loop=1s,file=%s/l-%%n.collapsed", g_dir);
    expect(cmd, JS_OK, "loop=1s");
    sleep_ms(3500);
    expect("stop", JS_OK, NULL);
    for (int n = 0; n <= 3; n++) {
        snprintf(path, sizeof path, "%s/l-%d.collapsed", g_dir, n);
        long long total = collapsed_total(path);
        if (total <= 0) fail_msg("%s: total %lld", path, total);
    }
    snprintf(path, sizeof path, "%s/l-4.collapsed", g_dir);
    assert_int_equal(collapsed_total(path), -1);
}

/* After VM death every command that changes state is refused; status still answers. */
static void *release_hold(void *arg)
{
    struct timespec ts = {0, 300000000L};
    nanosleep(&ts, NULL);
    atomic_store(&g_hold_tid, 0);
    return NULL;
}

/* Start a cpu session and hold worker w inside a walk. The held thread's counter fd; skips when it has none
 * (ctimer fallback). A worker held long is throttled for a while after (the handler's CPU is charged to it). */
static int start_and_hold(const char *file, int w)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "start,event=cpu,interval=1ms,file=%s/%s.collapsed", g_dir, file);
    expect(cmd, JS_OK, NULL);
    atomic_store(&g_hold_tid, atomic_load(&g_worker_tid[w]));
    for (int i = 0; i < 2000 && !atomic_load(&g_holding); i++) sleep_ms(1);
    assert_true(atomic_load(&g_holding));
    int fd = atomic_load(&g_held_fd);
    if (fd < 0 || fcntl(fd, F_GETFD) == -1) { /* not a perf counter (ctimer fallback): nothing to observe */
        atomic_store(&g_hold_tid, 0);
        expect("stop", JS_OK, NULL);
        skip();
    }
    return fd;
}

/* Wait until the held walk went on and its handler left the sampler. */
static void wait_handler_left(void)
{
    for (int i = 0; i < 2000 && atomic_load(&g_holding); i++) sleep_ms(1);
    for (int i = 0; i < 5000 && !js_sampler_idle(); i++) sleep_ms(1);
    assert_true(js_sampler_idle());
}

/* start_and_hold, then stop while held (release frees the walk on its own thread), and wait for the walk to go on. */
static int stop_while_held(const char *file, void *(*release)(void *))
{
    int fd = start_and_hold(file, 0);
    pthread_t rel;
    pthread_create(&rel, NULL, release, NULL);
    expect("stop", JS_OK, NULL);
    pthread_join(rel, NULL);
    wait_handler_left();
    return fd;
}

/* A start while a handler that the last stop gave up on is still inside is refused in one line (that handler still
 * reads the sampler's settings: a new session must not rewrite them under it); once it has left, a start works. */
static void test_start_refused_while_handler_inside(void **state UNUSED)
{
    start_and_hold("inside", 1);
    expect("stop", JS_OK, NULL); /* gives up on the held handler after 1 s */
    assert_true(atomic_load(&g_holding));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "start,event=cpu,interval=1ms,file=%s/refused.collapsed", g_dir);
    char out[4096] = "";
    js_status got = run(cmd, out, sizeof out);
    int still_held = atomic_load(&g_holding);
    atomic_store(&g_hold_tid, 0);
    wait_handler_left();
    assert_true(still_held); /* the refusal was judged while the handler was inside */
    if (got == JS_OK || !strstr(out, "has not returned")) fail_msg("start under a held handler: %s '%s'",
                                                                    js_strerror(got), out);
    snprintf(cmd, sizeof cmd, "start,event=cpu,interval=1ms,file=%s/after-held.collapsed", g_dir);
    expect(cmd, JS_OK, NULL);
    sleep_ms(50);
    expect("stop", JS_OK, NULL);
}

/* A stop while a handler is inside waits for it before releasing any engine handle: the handler's perf counter is
 * still open when it goes on (the handler may still use it: the period, the kernel call chain), and closed after. */
static void test_handles_outlive_handlers(void **state UNUSED)
{
    atomic_store(&g_fd_open_after, -1);
    int fd = stop_while_held("held", release_hold);
    assert_int_equal(atomic_load(&g_fd_open_after), 1);
    assert_int_equal(fcntl(fd, F_GETFD), -1); /* released once no handler could use it */
}

static void *release_hold_late(void *arg)
{
    struct timespec ts = {1, 500000000L}; /* past the stop's 1 s wait for handlers */
    nanosleep(&ts, NULL);
    atomic_store(&g_hold_tid, 0);
    return NULL;
}

/* Open perf_events files of this process. */
static int perf_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char link[64], target[64];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0) continue;
        target[k] = 0;
        n += strcmp(target, "anon_inode:[perf_event]") == 0;
    }
    closedir(d);
    return n;
}

/* A stop that gives up on a handler still inside after its 1 s wait leaves the counters open (the handler may
 * still use them), and the next session's stop, with no handler inside, releases them: no file is lost for good. */
static void test_stuck_handler_handles_released(void **state UNUSED)
{
    stop_while_held("stuck", release_hold_late);
    assert_true(perf_fds() > 0); /* left open by the stop that gave up */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "start,event=cpu,interval=1ms,file=%s/after.collapsed", g_dir);
    expect(cmd, JS_OK, NULL);
    sleep_ms(50);
    expect("stop", JS_OK, NULL);
    assert_int_equal(perf_fds(), 0);
}

static void *hold_session(void *arg)
{
    pthread_mutex_lock(&js_cmd_lock); /* a command that does not come back: a start held up in the kernel */
    js_session_held_by("start");
    atomic_store((_Atomic int *)arg, 1);
    sleep_ms(1500);
    pthread_mutex_unlock(&js_cmd_lock);
    return NULL;
}

/* VM death while a command holds the session: the shutdown waits a bounded time, then lets the JVM exit (nothing
 * changed, logged); with the command done, the next shutdown works. */
static void test_shutdown_gives_up_on_a_held_session(void **state UNUSED)
{
    _Atomic int held = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hold_session, (void *)&held), 0);
    while (!atomic_load(&held)) sleep_ms(1);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(js_profiler_shutdown_wait(200), -1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
    assert_true(ms >= 190 && ms < 1000);
    assert_int_equal(pthread_join(th, NULL), 0);
    expect("status", JS_OK, "state=idle"); /* not dead: the shutdown changed nothing */
}

static long ms_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

/* A command held up (a start in the kernel) holds the others for a bounded time only: they are refused, naming it,
 * and a command whose wait outlasts it runs. */
static void test_commands_wait_a_bounded_time(void **state UNUSED)
{
    _Atomic int held = 0;
    pthread_t th;
    js_session_set_cmd_wait(200);
    assert_int_equal(pthread_create(&th, NULL, hold_session, (void *)&held), 0);
    while (!atomic_load(&held)) sleep_ms(1);
    struct timespec a;
    clock_gettime(CLOCK_MONOTONIC, &a);
    expect("stop", JS_ERR_STATE, "another profiler command (start) has held the session");
    long ms = ms_since(&a);
    assert_true(ms >= 190 && ms < 1000);
    expect("dump", JS_ERR_STATE, "dump not run, try again");
    js_session_set_cmd_wait(5000);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "start,interval=1ms,file=%s/waited.collapsed", g_dir);
    clock_gettime(CLOCK_MONOTONIC, &a);
    expect(cmd, JS_OK, NULL); /* waits out the rest of the 1.5 s hold, then runs */
    assert_true(ms_since(&a) >= 500);
    expect("stop", JS_OK, NULL);
    assert_int_equal(pthread_join(th, NULL), 0);
    js_session_set_cmd_wait(0);
    expect("status", JS_OK, "state=idle");
}

static void test_dead_state(void **state UNUSED)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "start,interval=1ms,file=%s/dead.collapsed", g_dir);
    expect(cmd, JS_OK, NULL);
    sleep_ms(100);
    js_profiler_shutdown();
    assert_true(collapsed_total(cmd + strlen("start,interval=1ms,file=")) > 0);
    expect(cmd, JS_ERR_STATE, "shutting down");
    expect("stop", JS_ERR_STATE, "shutting down");
    expect("dump", JS_ERR_STATE, "shutting down");
    expect("status", JS_OK, "state=dead");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands_in_every_state),
        cmocka_unit_test(test_resume), cmocka_unit_test(test_failed_resume_keeps_profile),
        cmocka_unit_test(test_failed_resume_keeps_file_number),
        cmocka_unit_test(test_names_bounded_within_session),
        cmocka_unit_test(test_concurrent_stops),
        cmocka_unit_test(test_restart_cycles),          cmocka_unit_test(test_rotation_keeps_every_sample),
        cmocka_unit_test(test_cycles_under_thread_churn),
        cmocka_unit_test(test_timeout),                 cmocka_unit_test(test_loop),
        cmocka_unit_test(test_handles_outlive_handlers),
        cmocka_unit_test(test_stuck_handler_handles_released),
        cmocka_unit_test(test_start_refused_while_handler_inside),
        cmocka_unit_test(test_shutdown_gives_up_on_a_held_session),
        cmocka_unit_test(test_commands_wait_a_bounded_time),
        cmocka_unit_test(test_dead_state),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
