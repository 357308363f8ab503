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
    /* an option that does not fit with the others is refused, never dropped (the task would run without it) */
    char big[700];
    snprintf(big, sizeof big, "event=cpu,include=%0590d", 7);
    assert_int_equal(js_task_parse_exec(big, &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long: include=000"));
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

static void test_pprof_task_args(void **state)
{
    /* as the OAP's PprofTaskCommand writes them: Events lower-case, Duration in minutes */
    const char *k[] = {"SerialNumber", "TaskId", "Events", "Duration", "CreateTime", "DumpPeriod"};
    const char *v[] = {"u-1", "1700000000000_c3Zj.1", "cpu", "5", "1700000000000", "0"};
    js_pprof_task t;
    char err[512];
    assert_int_equal(js_pprof_task_from_args(k, v, 6, &t, err, sizeof err), 0);
    assert_string_equal(t.id, "1700000000000_c3Zj.1");
    assert_int_equal(t.event, JS_PPE_CPU);
    assert_int_equal(t.duration_min, 5);
    assert_int_equal(t.create_ms, 1700000000000LL);
    js_pprof_plan p;
    assert_int_equal(js_pprof_task_plan(&t, &p, err, sizeof err), 0);
    assert_int_equal(p.snapshot, 0);
    assert_int_equal(p.cpu, 1);
    assert_int_equal(p.duration_ms, 5 * 60000);
    assert_string_equal(p.cmd, "event=cpu");
    /* cpu, block and mutex need 1..15 minutes, as the Go agent checks */
    const char *v16[] = {"u-1", "7_x", "cpu", "16", "7", "0"};
    assert_int_equal(js_pprof_task_from_args(k, v16, 6, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "Duration must be 1 to 15 minutes, not 16"));
    assert_string_equal(t.id, "7_x"); /* known, so the error can be reported against it */
    const char *v0[] = {"u-1", "7_x", "mutex", "0", "7", "1"};
    assert_int_equal(js_pprof_task_from_args(k, v0, 6, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "not 0"));
    /* block and mutex need DumpPeriod; block's is the shortest wait kept (ns) */
    const char *vb[] = {"u-1", "8_x", "block", "1", "8", "0"};
    assert_int_equal(js_pprof_task_from_args(k, vb, 6, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "DumpPeriod must be greater than 0"));
    const char *vb2[] = {"u-1", "8_x", "block", "1", "8", "2500"};
    assert_int_equal(js_pprof_task_from_args(k, vb2, 6, &t, err, sizeof err), 0);
    assert_int_equal(js_pprof_task_plan(&t, &p, err, sizeof err), 0);
    assert_string_equal(p.cmd, "event=lock,lock=2500");
    /* mutex: contended monitors only */
    const char *vm[] = {"u-1", "9_x", "mutex", "2", "9", "1"};
    assert_int_equal(js_pprof_task_from_args(k, vm, 6, &t, err, sizeof err), 0);
    assert_int_equal(js_pprof_task_plan(&t, &p, err, sizeof err), 0);
    assert_non_null(strstr(p.cmd, "event=lock,lock=0,exclude=jdk.internal.misc.Unsafe.park"));
    /* the snapshots ignore Duration (the UI sends 0) */
    const char *vg[] = {"u-1", "10_x", "goroutine", "0", "10", "0"};
    assert_int_equal(js_pprof_task_from_args(k, vg, 6, &t, err, sizeof err), 0);
    assert_int_equal(js_pprof_task_plan(&t, &p, err, sizeof err), 0);
    assert_int_equal(p.snapshot, 1);
    assert_string_equal(p.cmd, "threaddump");
    const char *vt[] = {"u-1", "11_x", "threadcreate", "0", "11", "0"};
    assert_int_equal(js_pprof_task_from_args(k, vt, 6, &t, err, sizeof err), 0);
    assert_int_equal(js_pprof_task_plan(&t, &p, err, sizeof err), 0);
    assert_string_equal(p.cmd, "threadstarts");
    /* allocs without a Duration: a window of JS_PPROF_DEFAULT_MINUTES, said in the note */
    const char *va[] = {"u-1", "12_x", "allocs", "0", "12", "0"};
    assert_int_equal(js_pprof_task_from_args(k, va, 6, &t, err, sizeof err), 0);
    assert_int_equal(js_pprof_task_plan(&t, &p, err, sizeof err), 0);
    assert_int_equal(p.snapshot, 0);
    assert_int_equal(p.duration_ms, JS_PPROF_DEFAULT_MINUTES * 60000);
    assert_string_equal(p.cmd, "event=alloc");
    assert_non_null(strstr(p.note, "gives no Duration"));
    /* heap: the window's allocation samples whose objects are still alive at its end */
    const char *vh[] = {"u-1", "13_x", "heap", "0", "13", "0"};
    assert_int_equal(js_pprof_task_from_args(k, vh, 6, &t, err, sizeof err), 0);
    assert_int_equal(js_pprof_task_plan(&t, &p, err, sizeof err), 0);
    assert_int_equal(p.snapshot, 0);
    assert_int_equal(p.duration_ms, JS_PPROF_DEFAULT_MINUTES * 60000);
    assert_string_equal(p.cmd, "event=alloc,live");
    /* an event the OAP does not have, no TaskId, no CreateTime */
    const char *vx[] = {"u-1", "14_x", "wall", "1", "14", "0"};
    assert_int_equal(js_pprof_task_from_args(k, vx, 6, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "Events 'wall' is not a pprof event"));
    assert_int_equal(js_pprof_task_from_args(k + 2, v + 2, 4, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "TaskId"));
    assert_int_equal(js_pprof_task_from_args(k, v, 4, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "CreateTime"));
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
    /* a pprof profile costs a few bytes a sample: a 1-minute cpu task at 10 ms fits the smallest uploadmax on two
     * busy CPUs, and 16 busy CPUs at 1 ms for 15 minutes do not fit 256k */
    assert_int_equal(js_plan_interval_pprof(10000000, 2.0, 60, 256u << 10, &est), 10000000);
    iv = js_plan_interval_pprof(1000000, 16.0, 900, 256u << 10, &est);
    assert_true(iv > 1000000);
    assert_true(est <= (256u << 10) * 0.80 + 1);
    /* /proc/PID/stat: the fields after the command name's last ')'; a text that ends there is refused, never read
     * past its end (here: the fields after the terminator must not count) */
    assert_int_equal(js_plan_stat_cpu_ns("42 (a) b) S 1 42 42 0 -1 0 0 0 0 0 250 50 0", 100), 3000000000LL);
    static const char cut[] = "42 (x)\0S 1 42 42 0 -1 0 0 0 0 0 250 50 0";
    assert_int_equal(js_plan_stat_cpu_ns(cut, 100), -1);
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
    /* an entry whose upload failed goes behind the others, so one the backend always refuses holds none up */
    put(dir, "4_refused", 0, 0);
    put(dir, "5_next", 1, 0);
    assert_int_equal(js_spool_next(dir, &e, &fd), 1);
    assert_string_equal(e.id, "4_refused");
    assert_int_equal(js_spool_defer(fd), 0);
    assert_int_equal(js_spool_next(dir, &e, &fd), 1);
    assert_string_equal(e.id, "5_next");
    js_spool_done(&e, fd);
    assert_int_equal(js_spool_next(dir, &e, &fd), 1);
    assert_string_equal(e.id, "4_refused");
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

static void test_spool_kinds(void **state)
{
    /* a pprof task and an async-profiler task of the same id (both are the creation time and the service) wait side
     * by side, and each goes back to its own service */
    char dir[64], err[256];
    make_dir(dir, sizeof dir);
    assert_int_equal(js_spool_init(dir, err, sizeof err), 0);
    put(dir, "5_same", 1, 0);
    js_spool_entry e;
    memset(&e, 0, sizeof e);
    e.kind = JS_SPOOL_PPROF;
    snprintf(e.id, sizeof e.id, "5_same");
    snprintf(e.service, sizeof e.service, "svc");
    snprintf(e.instance, sizeof e.instance, "inst");
    js_spool_pprof_path(dir, e.id, e.instance, e.jfr, sizeof e.jfr);
    assert_non_null(strstr(e.jfr, "/pprof@5_5fsame@inst.pb.gz"));
    int fd = open(e.jfr, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(js_spool_put(dir, &e, err, sizeof err), 0);
    js_spool_entry a, b;
    int fa = -1, fb = -1;
    assert_int_equal(js_spool_next(dir, &a, &fa), 1);
    assert_int_equal(js_spool_next(dir, &b, &fb), 1);
    assert_int_equal(a.kind, JS_SPOOL_JFR);
    assert_int_equal(a.error, 1);
    assert_int_equal(b.kind, JS_SPOOL_PPROF);
    assert_string_equal(b.id, "5_same");
    assert_string_equal(b.jfr, e.jfr);
    js_spool_done(&a, fa);
    js_spool_done(&b, fb);
    assert_int_equal(access(e.jfr, F_OK), -1);
    assert_int_equal(js_spool_next(dir, &a, &fa), 0);
    rmdir(dir);
}

/* The basename of path. */
static const char *base_of(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static void test_spool_names_distinct(void **state)
{
    /* ids a server may choose alike once unsafe characters are replaced, or so that a JFR task's name reads as a pprof
     * task's, still get entries of their own; the longest ids fit a file name */
    static const char *ids[][2] = {{"a/b", "inst"}, {"a_b", "inst"}, {"a_2fb", "inst"}, {"pprof@5", "inst"},
                                   {"5", "inst"}, {"5@inst", ""}, {".x", "inst"}, {"_2ex", "inst"}};
    enum { N = sizeof ids / sizeof ids[0] };
    char paths[2 * N + 2][JS_BACKEND_PATH_MAX + 64];
    int k = 0;
    for (int i = 0; i < N; i++) {
        js_spool_jfr_path("/d", ids[i][0], ids[i][1], paths[k++], sizeof paths[0]);
        js_spool_pprof_path("/d", ids[i][0], ids[i][1], paths[k++], sizeof paths[0]);
    }
    char id[JS_TASK_ID_MAX], inst[JS_BACKEND_NAME_MAX];
    memset(id, '/', sizeof id - 1), id[sizeof id - 1] = 0;
    memset(inst, '%', sizeof inst - 1), inst[sizeof inst - 1] = 0;
    js_spool_jfr_path("/d", id, inst, paths[k++], sizeof paths[0]);
    inst[sizeof inst - 2] = '&';
    js_spool_jfr_path("/d", id, inst, paths[k++], sizeof paths[0]);
    for (int i = 0; i < k; i++) {
        const char *b = base_of(paths[i]);
        if (strlen(b) > 210) fail_msg("entry name of %zu bytes: %s", strlen(b), b);
        if (strpbrk(b, "/%,")) fail_msg("entry name with a character the agent's options treat apart: %s", b);
        if (b[0] == '.') fail_msg("hidden entry name: %s", b);
        for (int j = 0; j < i; j++)
            if (strcmp(paths[i], paths[j]) == 0) fail_msg("entries %d and %d share %s", j, i, paths[i]);
    }
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

/* A clock the test moves, and a profiler whose start takes 7 s of it (a perf_event_open held up by the kernel). */
static long long fake_now_ms = 1000000;
static long long fake_clock(void) { return fake_now_ms; }
static char started_cmd[2048];

static int slow_start(const char *cmd, char *out, size_t outlen)
{
    if (strncmp(cmd, "start,", 6) == 0) {
        snprintf(started_cmd, sizeof started_cmd, "%s", cmd);
        fake_now_ms += 7000;
    }
    snprintf(out, outlen, "profiling started");
    return 0;
}

/* The task's clock starts when its session does: after a start that took 7 s, a 6-s task still ends 6 s later, as
 * the session's own timeout= (the whole duration) counts from its start too. */
static void test_task_clock_starts_with_the_session(void **state)
{
    (void)state;
    js_backend_conf c;
    char err[256];
    assert_int_equal(js_backend_conf_load("backend=oap:11800,service=s,taskdir=/tmp", &c, err, sizeof err), 1);
    static const js_backend_host host = {slow_start, NULL, NULL};
    js_run r;
    memset(&r, 0, sizeof r);
    r.conf = &c;
    r.host = &host;
    r.mono_ms = fake_clock;
    js_sw_task t;
    memset(&t, 0, sizeof t);
    snprintf(t.id, sizeof t.id, "clock-task");
    snprintf(t.exec_args, sizeof t.exec_args, "event=cpu");
    t.duration_s = 6;
    long long asked = fake_now_ms;
    assert_int_equal(js_run_start(&r, &t), 0);
    assert_non_null(strstr(started_cmd, "timeout=6000ms"));
    assert_int_equal(r.start_ms, asked + 7000);
    assert_int_equal(r.end_ms, asked + 7000 + 6000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_task_clock_starts_with_the_session),
        cmocka_unit_test(test_conf_options),
        cmocka_unit_test(test_conf_errors_name_the_option),
        cmocka_unit_test(test_conf_environment),
        cmocka_unit_test(test_task_args),
        cmocka_unit_test(test_exec_args),
        cmocka_unit_test(test_pprof_task_args),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_spool_kinds), cmocka_unit_test(test_spool_names_distinct),
        cmocka_unit_test(test_spool),
        cmocka_unit_test(test_spool_refuses_open_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
