/* test_backend.c - the task client's pure parts: its options (from the agent's string and from SW_AGENT_*),
 * the AsyncProfilerTaskQuery arguments and the ExecArgs the SkyWalking UI writes, the size plan, and the
 * recordings waiting in taskdir (order, locks between agents, delayed entries). The loop against a real
 * gRPC backend and real JVMs is in java-test-harness/backend (make backend-test). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "../src/backend/backend_int.h"

static void clear_env(void)
{
    unsetenv("SW_AGENT_NAME");
    unsetenv("SW_AGENT_INSTANCE_NAME");
    unsetenv("SW_AGENT_COLLECTOR_BACKEND_SERVICES");
    unsetenv("SW_AGENT_AUTHENTICATION");
}

static void test_split(void **state)
{
    char cmd[256], b[256];
    js_backend_split("start,backend=h:1,event=cpu,service=s,tls,file=p.jfr,token=x", cmd, sizeof cmd, b, sizeof b);
    assert_string_equal(cmd, "start,event=cpu,file=p.jfr");
    assert_string_equal(b, "backend=h:1,service=s,tls,token=x");
}

static void test_conf_options(void **state)
{
    clear_env();
    js_backend_conf c;
    char err[256];
    assert_int_equal(js_backend_conf_load("start,event=cpu", &c, err, sizeof err), 0); /* no backend: none */
    assert_int_equal(js_backend_conf_load("backend=oap:11800;oap2:11801,service=checkout,poll=5s,uploadmax=1m", &c, err,
                                          sizeof err), 1);
    assert_int_equal(c.ntargets, 2);
    assert_string_equal(c.targets[1], "oap2:11801");
    assert_string_equal(c.service, "checkout");
    assert_int_equal(c.poll_ms, 5000);
    assert_int_equal(c.upload_max, 1 << 20);
    char inst[64];
    snprintf(inst, sizeof inst, "%d@", (int)getpid());
    assert_int_equal(strncmp(c.instance, inst, strlen(inst)), 0); /* default <pid>@<hostname> */
    assert_non_null(strstr(c.taskdir, "jsampler-tasks-"));
    assert_int_equal(c.tls, 0);
}

static void test_conf_errors_name_the_option(void **state)
{
    clear_env();
    js_backend_conf c;
    char err[256];
    assert_int_equal(js_backend_conf_load("backend=oap,service=s", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "option 'backend=oap'"));
    assert_int_equal(js_backend_conf_load("backend=oap:1", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "service="));
    assert_int_equal(js_backend_conf_load("service=s", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "backend=HOST:PORT"));
    assert_int_equal(js_backend_conf_load("backend=h:1,service=s,poll=10ms", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "option 'poll=10ms'"));
    assert_int_equal(js_backend_conf_load("backend=h:1,service=s,uploadmax=1k", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "option 'uploadmax=1k'"));
    assert_int_equal(js_backend_conf_load("backend=h:1,service=s,tls=yes", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "option 'tls' takes no value"));
}

static void test_conf_environment(void **state)
{
    clear_env();
    setenv("SW_AGENT_NAME", "envsvc", 1);
    setenv("SW_AGENT_COLLECTOR_BACKEND_SERVICES", "a:11800,b:11800", 1);
    setenv("SW_AGENT_AUTHENTICATION", "secret", 1);
    setenv("SW_AGENT_INSTANCE_NAME", "envinst", 1);
    js_backend_conf c;
    char err[256];
    /* A SkyWalking environment asks for nothing: without 'backend' no client, whatever the variables say. */
    assert_int_equal(js_backend_conf_load("", &c, err, sizeof err), 0);
    assert_int_equal(js_backend_conf_load("start,event=cpu", &c, err, sizeof err), 0);
    /* 'backend' alone: every default from the variables. */
    assert_int_equal(js_backend_conf_load("backend", &c, err, sizeof err), 1);
    assert_string_equal(c.service, "envsvc");
    assert_string_equal(c.instance, "envinst");
    assert_string_equal(c.token, "secret");
    assert_int_equal(c.ntargets, 2);
    assert_string_equal(c.targets[1], "b:11800");
    assert_int_equal(js_backend_conf_load("backend,service=opt,cafile=/x/ca.pem", &c, err, sizeof err), 1); /* options win */
    assert_string_equal(c.service, "opt");
    assert_int_equal(c.tls, 1);
    assert_int_equal(js_backend_conf_load("backend=h:1", &c, err, sizeof err), 1);
    assert_int_equal(c.ntargets, 1);
    assert_string_equal(c.targets[0], "h:1");
    assert_string_equal(c.service, "envsvc"); /* SW_AGENT_NAME is service='s default */
    /* Other client options without 'backend' ask for nothing they can have: named. */
    assert_int_equal(js_backend_conf_load("service=x", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "option 'backend' missing"));
    /* A bad variable matters only where it is used. */
    setenv("SW_AGENT_COLLECTOR_BACKEND_SERVICES", "nohost", 1);
    assert_int_equal(js_backend_conf_load("", &c, err, sizeof err), 0);
    assert_int_equal(js_backend_conf_load("backend=h:1", &c, err, sizeof err), 1);
    assert_int_equal(js_backend_conf_load("backend", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "SW_AGENT_COLLECTOR_BACKEND_SERVICES"));
    setenv("SW_AGENT_NAME", "bad\x01name", 1);
    assert_int_equal(js_backend_conf_load("", &c, err, sizeof err), 0);
    assert_int_equal(js_backend_conf_load("backend=h:1,service=ok", &c, err, sizeof err), 1);
    assert_string_equal(c.service, "ok");
    assert_int_equal(js_backend_conf_load("backend=h:1", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "SW_AGENT_NAME"));
    /* Only the collector set (no name): nothing asked, nothing refused; asked, the missing service is named. */
    clear_env();
    setenv("SW_AGENT_COLLECTOR_BACKEND_SERVICES", "a:11800", 1);
    assert_int_equal(js_backend_conf_load("", &c, err, sizeof err), 0);
    assert_int_equal(js_backend_conf_load("backend", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "service="));
    /* 'backend' alone with no variable: the address is missing, and said so. */
    clear_env();
    assert_int_equal(js_backend_conf_load("backend,service=s", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "SW_AGENT_COLLECTOR_BACKEND_SERVICES"));
    setenv("SW_AGENT_NAME", "only-name", 1); /* a SkyWalking environment without a collector: no client, no error */
    assert_int_equal(js_backend_conf_load("", &c, err, sizeof err), 0);
    clear_env();
}

static void test_task_args(void **state)
{
    const char *k[] = {"SerialNumber", "TaskId", "Duration", "ExecArgs", "CreateTime"};
    const char *v[] = {"u-1", "1700000000000_c3Zj.1", "60", "event=cpu,interval=5ms", "1700000000000"};
    js_sw_task t;
    char err[256];
    assert_int_equal(js_task_from_args(k, v, 5, &t, err, sizeof err), 0);
    assert_string_equal(t.id, "1700000000000_c3Zj.1");
    assert_int_equal(t.duration_s, 60);
    assert_int_equal(t.create_ms, 1700000000000LL);
    assert_string_equal(t.exec_args, "event=cpu,interval=5ms");
    const char *bad[] = {"u-1", "id", "sixty", "", "1"};
    assert_int_equal(js_task_from_args(k, bad, 5, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "Duration 'sixty'"));
    assert_string_equal(t.id, "id"); /* known, so the error can be reported against it */
    assert_int_equal(js_task_from_args(k, v, 1, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "TaskId"));
}

static void test_exec_args(void **state)
{
    js_task_opts o;
    char err[512];
    assert_int_equal(js_task_parse_exec("event=cpu", &o, err, sizeof err), 0);
    assert_string_equal(o.event, "cpu");
    assert_int_equal(o.interval_ns, 0);
    assert_int_equal(js_task_parse_exec("event=ctimer,interval=5ms,jstackdepth=100,chunktime=60,chunksize=10m", &o, err,
                                        sizeof err), 0);
    assert_string_equal(o.event, "ctimer");
    assert_int_equal(o.interval_ns, 5000000);
    assert_string_equal(o.extra, "jstackdepth=100,chunktime=60s,chunksize=10m"); /* bare chunktime: seconds */
    assert_int_equal(js_task_parse_exec("event=cpu,ctimer, interval=1000000", &o, err, sizeof err), 0);
    assert_string_equal(o.event, "cpu");
    assert_int_equal(o.interval_ns, 1000000); /* bare interval: ns, as async-profiler reads it */
    assert_non_null(strstr(o.notes, "ctimer sampled by the cpu engine"));
    /* several events, as the SkyWalking UI writes them: the execution event, the others as options */
    assert_int_equal(js_task_parse_exec("event=cpu,alloc,lock=10us,interval=5ms", &o, err, sizeof err), 0);
    assert_string_equal(o.event, "cpu");
    assert_string_equal(o.kinds, "alloc,lock=10us");
    assert_int_equal(o.timed, 1);
    assert_int_equal(js_task_parse_exec("event=alloc,lock,wall", &o, err, sizeof err), 0);
    assert_string_equal(o.event, "wall"); /* wall samples threads: it keeps interval= */
    assert_int_equal(o.timed, 1);
    assert_int_equal(js_task_parse_exec("event=lock,alloc=1m", &o, err, sizeof err), 0);
    assert_string_equal(o.event, "lock");
    assert_string_equal(o.kinds, "lock,alloc=1m");
    assert_int_equal(o.timed, 0); /* no interval= for locks and allocations: it would be their threshold */
    assert_int_equal(js_task_parse_exec("alloc=2m", &o, err, sizeof err), 0);
    assert_string_equal(o.event, "alloc");
    assert_string_equal(o.kinds, "alloc=2m");
    /* what cannot be honoured is named, all of it, and nothing starts */
    assert_int_equal(js_task_parse_exec("event=cpu,cstack=dwarf", &o, err, sizeof err), 0);
    assert_string_equal(o.extra, "cstack=dwarf"); /* the dispatcher judges the value */
    assert_int_equal(js_task_parse_exec("event=cpu,alloc,ttsp,interval=5ms,file=/etc/x", &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot honour ttsp, file=/etc/x"));
    assert_int_equal(js_task_parse_exec("interval=fast", &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "interval=fast"));
}

static void test_plan(void **state)
{
    double est;
    /* an idle-ish service at 10 ms: nothing to change */
    assert_int_equal(js_plan_interval(10000000, 0.5, 60, 30u << 20, &est), 10000000);
    /* 16 busy CPUs for 10 minutes at 1 ms would be 9.6M samples: the plan lengthens the interval to fit */
    long long iv = js_plan_interval(1000000, 16.0, 600, 30u << 20, &est);
    assert_true(iv > 1000000);
    assert_true(est <= (30u << 20) * JS_PLAN_BUDGET + 1);
    assert_int_equal(iv % 100000, 0);
    /* the same at 2 busy CPUs needs a shorter interval than at 16 */
    assert_true(js_plan_interval(1000000, 2.0, 600, 30u << 20, NULL) < iv);
    assert_true(js_plan_process_cpu_ns() >= 0);
}

/* A fresh private taskdir under /tmp. */
static void make_dir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/jsampler-test-spool-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void put(const char *dir, const char *id, int error, long long after)
{
    js_spool_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.id, sizeof e.id, "%s", id);
    snprintf(e.service, sizeof e.service, "svc");
    snprintf(e.instance, sizeof e.instance, "inst");
    e.error = error;
    snprintf(e.message, sizeof e.message, "line one\nline two");
    if (!error) {
        js_spool_jfr_path(dir, id, "inst", e.jfr, sizeof e.jfr);
        int fd = open(e.jfr, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    e.after_ms = after;
    char err[256];
    assert_int_equal(js_spool_put(dir, &e, err, sizeof err), 0);
    struct timespec ts = {0, 20000000}; /* distinct mtimes: the queue is oldest first */
    nanosleep(&ts, NULL);
}

static void test_spool(void **state)
{
    char dir[64], err[256];
    make_dir(dir, sizeof dir);
    assert_int_equal(js_spool_init(dir, err, sizeof err), 0);
    put(dir, "1_c3Zj/x.1", 0, 0); /* '/' from base64 must not make a path */
    put(dir, "2_err", 1, 0);
    js_spool_entry e;
    int fd = -1;
    assert_int_equal(js_spool_next(dir, &e, &fd), 1);
    assert_string_equal(e.id, "1_c3Zj/x.1");
    assert_null(strstr(e.jfr + strlen(dir) + 1, "/"));
    assert_int_equal(e.error, 0);
    /* another agent sharing the taskdir skips the entry this one holds */
    js_spool_entry e2;
    int fd2 = -1;
    assert_int_equal(js_spool_next(dir, &e2, &fd2), 1);
    assert_string_equal(e2.id, "2_err");
    assert_int_equal(e2.error, 1);
    assert_string_equal(e2.message, "line one line two");
    js_spool_release(fd2);
    js_spool_done(&e, fd);
    assert_int_equal(access(e.jfr, F_OK), -1);
    assert_int_equal(js_spool_next(dir, &e, &fd), 1);
    assert_string_equal(e.id, "2_err");
    js_spool_done(&e, fd);
    assert_int_equal(js_spool_next(dir, &e, &fd), 0);
    /* an entry whose recording may still be written waits */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    put(dir, "3_later", 0, (long long)now.tv_sec * 1000 + 60000);
    assert_int_equal(js_spool_next(dir, &e, &fd), 0);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_spool_refuses_open_dir(void **state)
{
    char dir[64], err[256];
    make_dir(dir, sizeof dir);
    chmod(dir, 0777);
    assert_int_equal(js_spool_init(dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "not be writable by others"));
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_conf_options),
        cmocka_unit_test(test_conf_errors_name_the_option),
        cmocka_unit_test(test_conf_environment),
        cmocka_unit_test(test_task_args),
        cmocka_unit_test(test_exec_args),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_spool),
        cmocka_unit_test(test_spool_refuses_open_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
