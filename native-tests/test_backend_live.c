/* test_backend_live.c - the SkyWalking calls in C against a real gRPC server: the grpcio test backend
 * (java-test-harness/backend/oap.py) as a child process. keepAlive and properties, a poll before and after a task is
 * created (lastCommandTime), an upload of 5 MiB in 1 MiB slices checked byte for byte by the server's sha256, an
 * error report with its message, a recording the server refuses as too large, a wrong token, and calls made while
 * spinning threads crowd out the caller (where libcurl 7.88 lost whole answers to requests of unknown size), and the
 * client's loop polling on time while the wall clock is stepped back. Skipped, with a message, when Debian's python3
 * has no grpcio (make deps installs it). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "../src/backend/backend_int.h"

#define PY "/usr/bin/python3"

/* The wall clock as this process's code reads it, ahead of the kernel's by realtime_ahead_s: what a clock stepped
 * back by that much right after a deadline was computed from it looks like (the timed waits of the kernel go by its
 * own clock). This definition replaces libc's for the code linked into this test. */
static volatile int realtime_ahead_s;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    int rc = (int)syscall(SYS_clock_gettime, id, ts);
    if (rc == 0 && id == CLOCK_REALTIME) ts->tv_sec += realtime_ahead_s;
    return rc;
}

typedef struct {
    pid_t pid;
    int port, admin;
    char dir[64];
} server;

/* Start oap.py with extra options; 0, or -1 if it did not come up. */
static int server_start(server *s, const char *extra)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/jsampler-live-XXXXXX");
    if (!mkdtemp(s->dir)) return -1;
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "exec " PY " java-test-harness/backend/oap.py --port 0 --admin-port 0 --gen build/backend-gen "
             "--store %s/store --ready-file %s/ready %s >/dev/null 2>%s/oap.log",
             s->dir, s->dir, extra, s->dir);
    s->pid = fork();
    if (s->pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    char ready[128];
    snprintf(ready, sizeof ready, "%s/ready", s->dir);
    for (int i = 0; i < 300; i++) {
        FILE *f = fopen(ready, "r");
        if (f) {
            int ok = fscanf(f, "READY grpc=%d admin=%d", &s->port, &s->admin) == 2;
            fclose(f);
            if (ok) return 0;
        }
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) return -1;
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void server_stop(server *s)
{
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", s->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
}

typedef struct {
    char *buf;
    size_t len;
} text;

static size_t take(char *p, size_t size, size_t n, void *ud)
{
    text *t = ud;
    char *b = realloc(t->buf, t->len + size * n + 1);
    if (!b) return 0;
    memcpy(b + t->len, p, size * n);
    t->buf = b;
    t->len += size * n;
    b[t->len] = 0;
    return size * n;
}

/* GET or (body != NULL) POST to the admin interface; the reply (heap). */
static char *admin(const server *s, const char *path, const char *body)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->admin, path);
    CURL *c = curl_easy_init();
    text t = {NULL, 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    assert_non_null(t.buf);
    return t.buf;
}

static js_backend_conf conf;
static server srv;

static void client(js_sw_client *cli, const server *s, const char *token)
{
    memset(&conf, 0, sizeof conf);
    snprintf(conf.targets[0], sizeof conf.targets[0], "127.0.0.1:%d", s->port);
    conf.ntargets = 1;
    snprintf(conf.service, sizeof conf.service, "live-svc");
    snprintf(conf.instance, sizeof conf.instance, "live-1");
    snprintf(conf.token, sizeof conf.token, "%s", token);
    memset(cli, 0, sizeof *cli);
    cli->conf = &conf;
    js_sw_client_target(cli, 0);
}

/* A pending entry whose recording is size bytes: the JFR magic, then a pattern. */
static void entry(js_spool_entry *e, const char *id, size_t size, const char *dir)
{
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", id);
    snprintf(e->service, sizeof e->service, "live-svc");
    snprintf(e->instance, sizeof e->instance, "live-1");
    snprintf(e->jfr, sizeof e->jfr, "%s/rec.jfr", dir);
    FILE *f = fopen(e->jfr, "w");
    assert_non_null(f);
    fwrite("FLR\0", 1, 4, f);
    for (size_t i = 4; i < size; i++) fputc((int)((i * 2654435761u) >> 13) & 0xff, f);
    fclose(f);
}

/* A pending error report for task id. */
static void error_entry(js_spool_entry *e, const char *id, const char *message)
{
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", id);
    snprintf(e->service, sizeof e->service, "live-svc");
    snprintf(e->instance, sizeof e->instance, "live-1");
    e->error = 1;
    snprintf(e->message, sizeof e->message, "%s", message);
}

/* The task id from POST /tasks. */
static void new_task(const server *s, char *id, size_t len)
{
    char *r = admin(s, "/tasks", "{\"service\":\"live-svc\",\"duration\":7,\"execArgs\":\"interval=5ms\",\"force\":true}");
    char *p = strstr(r, "\"id\": \"");
    assert_non_null(p);
    p += 7;
    snprintf(id, len, "%.*s", (int)strcspn(p, "\""), p);
    free(r);
}

static void test_heartbeat_and_poll(void **state)
{
    js_sw_client cli;
    client(&cli, &srv, "");
    char err[256];
    assert_int_equal(js_sw_heartbeat(&cli, 0, err, sizeof err), JS_GRPC_OK);
    assert_int_equal(js_sw_heartbeat(&cli, 1, err, sizeof err), JS_GRPC_OK);
    char *inst = admin(&srv, "/instances", NULL);
    assert_non_null(strstr(inst, "\"live-1\""));
    assert_non_null(strstr(inst, "\"language\": \"java\""));
    free(inst);
    js_sw_task t[4];
    int n = -1;
    assert_int_equal(js_sw_poll(&cli, -1, t, 4, &n, err, sizeof err), JS_GRPC_OK);
    assert_int_equal(n, 0);
    char id[128];
    new_task(&srv, id, sizeof id);
    assert_int_equal(js_sw_poll(&cli, -1, t, 4, &n, err, sizeof err), JS_GRPC_OK);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].id, id);
    assert_int_equal(t[0].duration_s, 7);
    assert_string_equal(t[0].exec_args, "event=cpu,interval=5ms");
    assert_string_equal(t[0].invalid, "");
    assert_int_equal(js_sw_poll(&cli, t[0].create_ms, t, 4, &n, err, sizeof err), JS_GRPC_OK);
    assert_int_equal(n, 0); /* lastCommandTime: the task is not sent again */
}

static void test_upload_5mib(void **state)
{
    js_sw_client cli;
    client(&cli, &srv, "");
    char id[128], err[512];
    new_task(&srv, id, sizeof id);
    js_spool_entry e;
    entry(&e, id, (5u << 20) + 12345, srv.dir);
    uint64_t sent = 0;
    struct timespec c0, c1, w0, w1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &w0);
    assert_int_equal(js_sw_upload(&cli, &e, &sent, err, sizeof err), JS_UP_DONE);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    assert_int_equal(sent, (5u << 20) + 12345);
    double cpu = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
    double wall = (w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) / 1e9;
    fprintf(stderr, "   5 MiB upload: %.3f s wall, %.3f s CPU on the uploading thread\n", wall, cpu);
    char sha[200];
    snprintf(sha, sizeof sha, "sha256sum %s > %s/sha", e.jfr, srv.dir);
    assert_int_equal(system(sha), 0);
    snprintf(sha, sizeof sha, "%s/sha", srv.dir);
    FILE *f = fopen(sha, "r");
    char digest[65] = "";
    assert_int_equal(fscanf(f, "%64s", digest), 1);
    fclose(f);
    char *ups = admin(&srv, "/uploads", NULL);
    assert_non_null(strstr(ups, digest)); /* the server holds exactly these bytes */
    free(ups);
}

static void test_error_report(void **state)
{
    js_sw_client cli;
    client(&cli, &srv, "");
    char id[128], err[512], path[200];
    new_task(&srv, id, sizeof id);
    js_spool_entry e;
    error_entry(&e, id, "cannot honour alloc");
    uint64_t sent;
    assert_int_equal(js_sw_upload(&cli, &e, &sent, err, sizeof err), JS_UP_DONE);
    snprintf(path, sizeof path, "/tasks/%s/progress", id);
    char *p = admin(&srv, path, NULL);
    assert_non_null(strstr(p, "EXECUTION_TASK_ERROR"));
    assert_non_null(strstr(p, "cannot honour alloc"));
    free(p);
}

static void test_oversize_and_token(void **state)
{
    server small;
    assert_int_equal(server_start(&small, "--jfr-max-size 1000 --token s3cret"), 0);
    js_sw_client cli;
    char id[128], err[512];
    new_task(&small, id, sizeof id);
    js_spool_entry e;
    entry(&e, id, 5000, small.dir);
    uint64_t sent = 1;
    client(&cli, &small, "wrong");
    assert_int_equal(js_sw_heartbeat(&cli, 0, err, sizeof err), JS_GRPC_PERMISSION_DENIED);
    /* libcurl 7.88 loses a refusal that arrives with the stream's reset while the request is open (grpc.h): the
     * upload ends at its deadline, shortened here, and is left for a retry. */
    cli.deadline_ms = 2000;
    assert_int_equal(js_sw_upload(&cli, &e, &sent, err, sizeof err), JS_UP_RETRY);
    client(&cli, &small, "s3cret");
    assert_int_equal(js_sw_upload(&cli, &e, &sent, err, sizeof err), JS_UP_OVERSIZE);
    assert_int_equal(sent, 0); /* nothing sent after the refusal */
    server_stop(&small);
}

static volatile int spinning;

static void *spin(void *arg)
{
    (void)arg;
    while (spinning) {
    }
    return NULL;
}

/* Heartbeats, polls and error reports while three spinning threads keep the caller waiting for a CPU, so the
 * server's whole answer is often buffered before libcurl ends the request: every call must see its answer. */
static void test_calls_while_crowded(void **state)
{
    js_sw_client cli;
    client(&cli, &srv, "");
    char id[128], err[512];
    new_task(&srv, id, sizeof id);
    js_spool_entry e;
    error_entry(&e, id, "crowded");
    pthread_t t[3];
    spinning = 1;
    for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&t[i], NULL, spin, NULL), 0);
    int failed = 0, calls = 0;
    char first[512] = "";
    for (int i = 0; i < 60; i++) { /* before the fix about 1 call in 80 failed here */
        js_sw_task tasks[4];
        int n, st[3];
        uint64_t sent;
        st[0] = js_sw_heartbeat(&cli, 0, err, sizeof err);
        if (st[0] != JS_GRPC_OK && !first[0]) snprintf(first, sizeof first, "heartbeat: %s", err);
        st[1] = js_sw_poll(&cli, -1, tasks, 4, &n, err, sizeof err);
        if (st[1] != JS_GRPC_OK && !first[0]) snprintf(first, sizeof first, "poll: %s", err);
        st[2] = js_sw_upload(&cli, &e, &sent, err, sizeof err) == JS_UP_DONE ? JS_GRPC_OK : JS_GRPC_UNAVAILABLE;
        if (st[2] != JS_GRPC_OK && !first[0]) snprintf(first, sizeof first, "error report: %s", err);
        for (int k = 0; k < 3; k++) failed += st[k] != JS_GRPC_OK;
        calls += 3;
    }
    spinning = 0;
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    fprintf(stderr, "   crowded: %d of %d calls failed%s%s\n", failed, calls, first[0] ? "; first: " : "", first);
    assert_int_equal(failed, 0);
}

static int host_execute(const char *cmd, char *out, size_t outlen)
{
    snprintf(out, outlen, "no profiler in this test");
    return -1;
}

static int host_vm_enter(void)
{
    return -1;
}

static void host_vm_leave(void)
{
}

/* The polls the server counted for instance inst (-1 if it has not seen it). */
static int polls_of(const server *s, const char *inst)
{
    char *r = admin(s, "/instances", NULL), key[128];
    snprintf(key, sizeof key, "\"instance\": \"%s\"", inst);
    char *p = strstr(r, key), *q = p ? strstr(p, "\"polls\": ") : NULL;
    int n = q ? atoi(q + 9) : -1;
    free(r);
    return n;
}

/* The task client's loop (run last: one client per process) polls every poll= period while the wall clock is
 * stepped back: its waits are timed by the monotonic clock. Timed by the wall clock, the first wait would last
 * the 30 s of the step. */
static void test_loop_polls_through_clock_step(void **state)
{
    js_backend_conf c;
    char err[256], dir[64];
    snprintf(dir, sizeof dir, "/tmp/jsampler-clock-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char opts[256];
    snprintf(opts, sizeof opts, "backend=127.0.0.1:%d,service=live-svc,instance=clock-1,poll=1s,taskdir=%s/tasks",
             srv.port, dir);
    assert_int_equal(js_backend_conf_load(opts, &c, err, sizeof err), 1);
    static const js_backend_host host = {host_execute, host_vm_enter, host_vm_leave};
    realtime_ahead_s = 30;
    assert_int_equal(js_backend_start(&c, &host, err, sizeof err), 0);
    struct timespec nap = {4, 500000000L};
    nanosleep(&nap, NULL);
    int polls = polls_of(&srv, "clock-1");
    js_backend_shutdown();
    realtime_ahead_s = 0;
    fprintf(stderr, "   polls in 4.5 s at poll=1s with the wall clock stepped back 30 s: %d\n", polls);
    assert_true(polls >= 3);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    if (system(PY " -c 'import grpc, grpc_tools' 2>/dev/null") != 0) {
        printf("SKIP test_backend_live: " PY " has no grpcio (make deps installs python3-grpcio)\n");
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    char err[256];
    if (js_grpc_global_init(err, sizeof err) != 0 || server_start(&srv, "") != 0) {
        fprintf(stderr, "test_backend_live: the test backend did not start\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heartbeat_and_poll),
        cmocka_unit_test(test_upload_5mib),
        cmocka_unit_test(test_error_report),
        cmocka_unit_test(test_oversize_and_token),
        cmocka_unit_test(test_calls_while_crowded),
        cmocka_unit_test(test_loop_polls_through_clock_step),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    server_stop(&srv);
    return rc;
}
