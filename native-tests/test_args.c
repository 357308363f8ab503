/* test_args.c - the option parser (args.h): every option, every error, durations, %p/%t
 * expansion and output-format resolution. Errors must be -1 plus one line naming the option. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/args.h"
#include "output/output.h"

#define UNUSED __attribute__((unused))
#define ERRLEN 4096

static js_args A;
static char ERR[ERRLEN];

/* Defaults, then parse cmd into A; the error buffer is cleared first. */
static int parse(const char *cmd)
{
    js_args_defaults(&A);
    memset(ERR, 0, sizeof ERR);
    return js_args_parse(cmd, &A, ERR, sizeof ERR);
}

/* Parse cmd and require success (prints the error otherwise). */
static void parse_ok(const char *cmd)
{
    int rc = parse(cmd);
    if (rc != 0) print_error("'%.60s' failed: %.160s\n", cmd ? cmd : "(null)", ERR);
    assert_int_equal(rc, 0);
}

/* Parse cmd and require -1 with exactly one non-empty line containing needle. */
static void expect_error(const char *cmd, const char *needle)
{
    int rc = parse(cmd);
    if (rc != -1) print_error("'%.80s' was accepted (rc %d)\n", cmd, rc);
    assert_int_equal(rc, -1);
    if (!strstr(ERR, needle)) print_error("error '%s' does not name '%s'\n", ERR, needle);
    assert_non_null(strstr(ERR, needle));
    assert_null(strchr(ERR, '\n'));
}

/* pre + n copies of c + post, in a static buffer (reused by the next call). */
static const char *rep(const char *pre, char c, size_t n, const char *post)
{
    static char buf[8192];
    size_t a = strlen(pre), b = strlen(post);
    assert_true(a + n + b < sizeof buf);
    memcpy(buf, pre, a);
    memset(buf + a, c, n);
    memcpy(buf + a + n, post, b + 1);
    return buf;
}

/* Defaults are exactly: no action, cpu (not explicit), 10 ms, depth 2048, info, all else off. */
static void test_defaults(void **state UNUSED)
{
    js_args_defaults(&A);
    assert_int_equal(A.action, JS_ACTION_NONE);
    assert_int_equal(A.event, JS_EV_CPU);
    assert_int_equal(A.event_set, 0);
    assert_int_equal(A.interval_ns, 10000000LL);
    assert_int_equal(A.interval_clamped, 0);
    assert_int_equal(A.jstackdepth, 2048);
    assert_int_equal(A.format, JS_OUT_NONE);
    assert_int_equal(A.flat_top, 0);
    assert_int_equal(A.threads + A.lines + A.sig + A.reverse, 0);
    assert_string_equal(A.file, "");
    assert_string_equal(A.title, "");
    assert_string_equal(A.include, "");
    assert_string_equal(A.exclude, "");
    assert_string_equal(A.log, "");
    assert_int_equal(A.loglevel, JS_LOG_INFO);
    assert_int_equal(A.loglevel_set, 0);
}

/* NULL, empty and comma-only commands succeed and leave the defaults untouched. */
static void test_null_empty_and_commas(void **state UNUSED)
{
    js_args def;
    js_args_defaults(&def);
    const char *cmds[] = {NULL, "", ",", ",,,"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        parse_ok(cmds[i]);
        assert_memory_equal(&A, &def, sizeof def);
    }
}

/* Each command word sets its action; repeating the same one is not a conflict. */
static void test_actions(void **state UNUSED)
{
    static const struct { const char *cmd; js_action act; } t[] = {
        {"start", JS_ACTION_START},   {"stop", JS_ACTION_STOP},         {"dump", JS_ACTION_DUMP},
        {"status", JS_ACTION_STATUS}, {"version", JS_ACTION_VERSION},   {"start,start", JS_ACTION_START},
        {"threaddump,file=t.pb.gz", JS_ACTION_THREADDUMP}, {"threadstarts,lines", JS_ACTION_THREADSTARTS}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        parse_ok(t[i].cmd);
        assert_int_equal(A.action, t[i].act);
    }
}

/* event=cpu|ctimer|itimer selects the engine and marks it explicit; names round-trip. */
static void test_events(void **state UNUSED)
{
    static const struct { const char *cmd; js_event ev; } t[] = {
        {"event=cpu", JS_EV_CPU}, {"event=ctimer", JS_EV_CTIMER}, {"start,event=itimer", JS_EV_ITIMER}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        parse_ok(t[i].cmd);
        assert_int_equal(A.event, t[i].ev);
        assert_int_equal(A.event_set, 1);
        assert_string_equal(js_event_name(t[i].ev), strchr(t[i].cmd, '=') + 1);
    }
}

/* interval= accepts ns/us/ms/s and bare ns, exactly converted and not clamped above the floor. */
static void test_interval_units(void **state UNUSED)
{
    static const struct { const char *cmd; long long ns; } t[] = {
        {"interval=10ms", 10000000LL}, {"interval=500us", 500000LL},        {"interval=1s", 1000000000LL},
        {"interval=250000", 250000LL}, {"interval=250000ns", 250000LL},     {"interval=100us", 100000LL},
        {"interval=3600s", 3600000000000LL}, {"interval=7ms,interval=20ms", 20000000LL}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        parse_ok(t[i].cmd);
        assert_int_equal(A.interval_ns, t[i].ns);
        assert_int_equal(A.interval_clamped, 0);
    }
}

/* Intervals under 100 us are raised to exactly 100 us and flagged; a later valid one clears the flag. */
static void test_interval_clamp(void **state UNUSED)
{
    const char *low[] = {"interval=50us", "interval=99999", "interval=1ns", "interval=99us"};
    for (size_t i = 0; i < sizeof low / sizeof low[0]; i++) {
        parse_ok(low[i]);
        assert_int_equal(A.interval_ns, JS_MIN_INTERVAL_NS);
        assert_int_equal(A.interval_clamped, 1);
    }
    parse_ok("interval=50us,interval=2ms");
    assert_int_equal(A.interval_ns, 2000000LL);
    assert_int_equal(A.interval_clamped, 0);
}

/* file=, title= and log= are copied verbatim (a value may itself contain '='). */
static void test_string_options(void **state UNUSED)
{
    parse_ok("file=/tmp/p-%p-%t.html,title=My App a=b,log=/var/log/js.log");
    assert_string_equal(A.file, "/tmp/p-%p-%t.html");
    assert_string_equal(A.title, "My App a=b");
    assert_string_equal(A.log, "/var/log/js.log");
    parse_ok("file=x,file=y");
    assert_string_equal(A.file, "y");
}

/* Each format word selects its format; flat=N sets the row count; html+flamegraph agree. */
static void test_formats(void **state UNUSED)
{
    static const struct { const char *cmd; js_out_format f; int top; } t[] = {
        {"collapsed", JS_OUT_COLLAPSED, 0}, {"flat", JS_OUT_FLAT, 0},       {"flat=25", JS_OUT_FLAT, 25},
        {"flat=1", JS_OUT_FLAT, 1},         {"flat=100000", JS_OUT_FLAT, 100000},
        {"html", JS_OUT_HTML, 0},           {"flamegraph", JS_OUT_HTML, 0}, {"tree", JS_OUT_TREE, 0},
        {"html,flamegraph", JS_OUT_HTML, 0}, {"flat=5,flat", JS_OUT_FLAT, 5}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        parse_ok(t[i].cmd);
        assert_int_equal(A.format, t[i].f);
        assert_int_equal(A.flat_top, t[i].top);
    }
}

/* jstackdepth= accepts exactly 1..8192. */
static void test_jstackdepth(void **state UNUSED)
{
    parse_ok("jstackdepth=1");
    assert_int_equal(A.jstackdepth, 1);
    parse_ok("jstackdepth=8192");
    assert_int_equal(A.jstackdepth, 8192);
    parse_ok("jstackdepth=300");
    assert_int_equal(A.jstackdepth, 300);
}

/* threads, lines, sig, reverse each set only their own flag. */
static void test_boolean_flags(void **state UNUSED)
{
    parse_ok("threads");
    assert_true(A.threads == 1 && A.lines == 0 && A.sig == 0 && A.reverse == 0);
    parse_ok("lines");
    assert_true(A.threads == 0 && A.lines == 1 && A.sig == 0 && A.reverse == 0);
    parse_ok("sig");
    assert_true(A.threads == 0 && A.lines == 0 && A.sig == 1 && A.reverse == 0);
    parse_ok("reverse");
    assert_true(A.threads == 0 && A.lines == 0 && A.sig == 0 && A.reverse == 1);
}

/* Repeated include=/exclude= are '|'-joined in order, independently. */
static void test_include_exclude_join(void **state UNUSED)
{
    parse_ok("include=com.a.*,exclude=java.*,include=Foo.bar,include=x");
    assert_string_equal(A.include, "com.a.*|Foo.bar|x");
    assert_string_equal(A.exclude, "java.*");
    /* two 511-byte patterns + '|' fill the 1024-byte buffer exactly */
    char cmd[2200];
    char half[512];
    memcpy(half, rep("", 'p', 511, ""), 512);
    snprintf(cmd, sizeof cmd, "exclude=%s,exclude=%s", half, half);
    parse_ok(cmd);
    assert_int_equal(strlen(A.exclude), 1023);
    assert_int_equal(A.exclude[511], '|');
}

/* loglevel= accepts every level name in any case and marks it explicit. */
static void test_loglevel(void **state UNUSED)
{
    static const struct { const char *cmd; js_loglevel l; } t[] = {
        {"loglevel=debug", JS_LOG_DEBUG}, {"loglevel=DEBUG", JS_LOG_DEBUG}, {"loglevel=Info", JS_LOG_INFO},
        {"loglevel=wArN", JS_LOG_WARN},   {"loglevel=error", JS_LOG_ERROR}, {"loglevel=ERROR", JS_LOG_ERROR},
        {"loglevel=none", JS_LOG_NONE},   {"loglevel=NONE", JS_LOG_NONE}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        parse_ok(t[i].cmd);
        assert_int_equal(A.loglevel, t[i].l);
        assert_int_equal(A.loglevel_set, 1);
    }
    assert_string_equal(js_loglevel_name(JS_LOG_WARN), "warn");
    assert_string_equal(js_loglevel_name((js_loglevel)99), "?");
}

/* Empty tokens between commas are skipped; a full realistic command sets every field. */
static void test_empty_tokens_and_full_command(void **state UNUSED)
{
    parse_ok("start,,event=cpu");
    assert_int_equal(A.action, JS_ACTION_START);
    assert_int_equal(A.event_set, 1);
    parse_ok(",start,,event=ctimer,interval=1ms,jstackdepth=64,file=out.html,html,threads,lines,sig,"
             "reverse,title=T,include=a,exclude=b,log=l.txt,loglevel=warn,");
    assert_int_equal(A.action, JS_ACTION_START);
    assert_int_equal(A.event, JS_EV_CTIMER);
    assert_int_equal(A.interval_ns, 1000000LL);
    assert_int_equal(A.jstackdepth, 64);
    assert_string_equal(A.file, "out.html");
    assert_int_equal(A.format, JS_OUT_HTML);
    assert_int_equal(A.threads + A.lines + A.sig + A.reverse, 4);
    assert_string_equal(A.title, "T");
    assert_string_equal(A.include, "a");
    assert_string_equal(A.exclude, "b");
    assert_string_equal(A.log, "l.txt");
    assert_int_equal(A.loglevel, JS_LOG_WARN);
}

/* Unknown options, with or without a value, are rejected by name. */
static void test_err_unknown_option(void **state UNUSED)
{
    expect_error("start,bogus", "'bogus'");
    expect_error("bogus=1", "'bogus'");
    expect_error("Start", "'Start'");
    expect_error("interval_ns=5", "'interval_ns'");
}

/* Unknown events are rejected naming event=VALUE and listing the events there are. */
static void test_err_events(void **state UNUSED)
{
    expect_error("event=cpu-clok", "'event=cpu-clok'");
    assert_non_null(strstr(ERR, "wall, alloc, lock"));
    expect_error("event=", "'event='");
    expect_error("event=java.util.Properties.getProperty", "Java methods are not traced");
    expect_error("event=a::b(int)", "'event=a::b(int)'");
    expect_error("alloc=12q", "'alloc=12q'");
    expect_error("lock=abc", "'lock=abc'");
    expect_error("wall=100us", "'wall=100us'");
    expect_error("event=page-faults,interval=10ms", "'interval=10ms'");
    expect_error("event=alloc,interval=x", "'interval=x'");
}

/* Every event name parses and round-trips (tracepoints are CATEGORY:NAME, below); hardware counters are accepted by name (refused at start where
 * the machine has none); wall, alloc and lock are kinds beside the execution event. */
static void test_event_kinds(void **state UNUSED)
{
    parse_ok("event=G1CollectedHeap::humongous_obj_allocate"); /* native functions: resolved when sampling starts */
    assert_int_equal(A.event, JS_EV_FUNCTION);
    assert_string_equal(A.tracepoint, "G1CollectedHeap::humongous_obj_allocate");
    assert_int_equal(A.interval_ns, 1); /* every call */
    assert_string_equal(js_kind_name(&A, JS_KIND_EXEC), "G1CollectedHeap::humongous_obj_allocate");
    parse_ok("event=malloc,interval=100");
    assert_int_equal(A.event, JS_EV_FUNCTION);
    assert_int_equal(A.interval_ns, 100);
    for (int e = 0; e < JS_EV_TRACEPOINT; e++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "event=%s", js_event_name((js_event)e));
        parse_ok(cmd);
        assert_int_equal(A.event, e);
        assert_int_equal(js_kind_on(&A, JS_KIND_EXEC), e != JS_EV_WALL);
    }
    int n;
    parse_ok("event=cpu,alloc,lock");
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_EXEC | 1u << JS_KIND_ALLOC | 1u << JS_KIND_LOCK);
    assert_int_equal(n, 3);
    assert_int_equal(A.alloc_bytes, JS_DEFAULT_ALLOC_BYTES);
    assert_int_equal(A.lock_ns, JS_DEFAULT_LOCK_NS);
    assert_int_equal(A.wall_ns, 0);
    parse_ok("event=wall");
    assert_int_equal(A.wall_ns, JS_DEFAULT_WALL_NS);
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_WALL);
    assert_string_equal(js_kind_name(&A, JS_KIND_WALL), "wall");
    parse_ok("interval=20ms,event=wall");
    assert_int_equal(A.wall_ns, 20000000LL);
    parse_ok("event=cpu,wall=100ms,alloc=1m,lock=1ms");
    assert_int_equal(A.wall_ns, 100000000LL);
    assert_int_equal(A.alloc_bytes, 1u << 20);
    assert_int_equal(A.lock_ns, 1000000LL);
    assert_int_equal(A.interval_ns, JS_DEFAULT_INTERVAL_NS);
    parse_ok("event=alloc,interval=64k"); /* alone, interval= is the event's own unit */
    assert_int_equal(A.alloc_bytes, 64u << 10);
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_ALLOC);
    parse_ok("event=lock,interval=50us");
    assert_int_equal(A.lock_ns, 50000LL);
    parse_ok("lock=0");
    assert_int_equal(A.lock_ns, 0);
    parse_ok("event=page-faults");
    assert_int_equal(A.interval_ns, 1000);
    assert_true(js_event_is_count(A.event));
    parse_ok("interval=5000,event=context-switches");
    assert_int_equal(A.interval_ns, 5000);
    assert_string_equal(js_kind_name(&A, JS_KIND_EXEC), "context-switches");
    parse_ok("event=wall,filter=worker-*,filter=main");
    assert_string_equal(A.filter, "worker-*|main");
    parse_ok("cstack=fp");
    assert_int_equal(A.cstack, JS_CSTACK_FP);
    parse_ok("cstack=dwarf");
    assert_int_equal(A.cstack, JS_CSTACK_DWARF);
    parse_ok("event=sched:sched_switch");
    assert_int_equal(A.event, JS_EV_TRACEPOINT);
    assert_string_equal(A.tracepoint, "sched:sched_switch");
    assert_string_equal(js_kind_name(&A, JS_KIND_EXEC), "sched:sched_switch");
    assert_int_equal(A.interval_ns, 1); /* every event unless interval= says otherwise */
    parse_ok("event=syscalls:sys_enter_read,interval=10");
    assert_int_equal(A.interval_ns, 10);
    expect_error("event=sched:../../x", "'event=sched:../../x'");
    expect_error("event=:x", "CATEGORY:NAME");
    expect_error("event=tracepoint", "unknown event");
    expect_error("cstack=lbr", "'cstack=lbr'");
    assert_non_null(strstr(ERR, "frame pointers (fp), DWARF tables (dwarf, vm)"));
    parse_ok("event=task-clock,interval=1ms");
    assert_int_equal(A.interval_ns, 1000000LL);
    assert_false(js_event_is_count(A.event));
}

/* Malformed, negative, non-positive or over-an-hour intervals are rejected naming the value. */
static void test_err_interval(void **state UNUSED)
{
    const char *bad[] = {"interval=abc",  "interval=10xs", "interval=-5ms", "interval=3601s",
                         "interval=3600000001us", "interval=0ms", "interval=1.5ms",
                         "interval=10MS", "interval= 10ms", "interval=",  "interval=99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "'%s'", bad[i]);
        expect_error(bad[i], needle);
    }
}

/* Flags given a value (even an empty one) are rejected naming key=value. */
static void test_err_flag_with_value(void **state UNUSED)
{
    expect_error("threads=1", "'threads=1'");
    expect_error("start=now", "'start=now'");
    expect_error("html=1", "'html=1'");
    expect_error("reverse=", "'reverse='");
    expect_error("collapsed=yes", "'collapsed=yes'");
}

/* Options that need a value fail when given none, naming the option. */
static void test_err_missing_value(void **state UNUSED)
{
    const char *keys[] = {"event", "interval", "file", "jstackdepth", "title",
                          "include", "exclude", "log", "loglevel"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char cmd[64], needle[64];
        snprintf(cmd, sizeof cmd, "start,%s", keys[i]);
        snprintf(needle, sizeof needle, "'%s'", keys[i]);
        expect_error(cmd, needle);
    }
    const char *empty[] = {"file=", "title=", "log=", "include=", "exclude=", "loglevel=", "jstackdepth="};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "'%s'", empty[i]);
        expect_error(empty[i], needle);
    }
}

/* A token with an empty option name is rejected showing it. */
static void test_err_empty_name(void **state UNUSED)
{
    expect_error("=x", "'=x'");
    expect_error("start,=", "'='");
    assert_non_null(strstr(ERR, "missing option name"));
}

/* Two different commands conflict, naming the second one. */
static void test_err_conflicting_commands(void **state UNUSED)
{
    expect_error("start,stop", "'stop'");
    expect_error("dump,event=cpu,status", "'status'");
    expect_error("version,start", "'start'");
    assert_non_null(strstr(ERR, "conflicting commands"));
}

/* Two different output formats conflict, naming the second one. */
static void test_err_conflicting_formats(void **state UNUSED)
{
    expect_error("collapsed,html", "'html'");
    expect_error("html,flat=10", "'flat'");
    expect_error("tree,collapsed", "'collapsed'");
    expect_error("flamegraph,tree", "'tree'");
    assert_non_null(strstr(ERR, "conflicting output formats"));
}

/* jstackdepth outside 1..8192 or not a plain number, and bad flat=N, are rejected by value. */
static void test_err_numbers(void **state UNUSED)
{
    const char *bad[] = {"jstackdepth=0",  "jstackdepth=8193", "jstackdepth=-1", "jstackdepth=abc",
                         "jstackdepth=10x", "jstackdepth=99999999999999999999", "flat=100001", "flat=x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "'%s'", bad[i]);
        expect_error(bad[i], needle);
    }
    expect_error("loglevel=verbose", "'loglevel=verbose'");
}

/* file/log take up to 1023 bytes, title 255, include/exclude 1023 in total; one more is an error. */
static void test_err_overlong_values(void **state UNUSED)
{
    parse_ok(rep("file=", 'f', 1023, ""));
    assert_int_equal(strlen(A.file), 1023);
    expect_error(rep("file=", 'f', 1024, ""), "'file=ffff");
    expect_error(rep("log=", 'l', 1024, ""), "'log=llll");
    parse_ok(rep("title=", 't', 255, ""));
    assert_int_equal(strlen(A.title), 255);
    expect_error(rep("title=", 't', 256, ""), "'title=tttt");
    expect_error(rep("include=", 'i', 1024, ""), "'include=iiii");
    char cmd[2100], half[512];
    memcpy(half, rep("", 'e', 511, ""), 512);
    snprintf(cmd, sizeof cmd, "exclude=%s,exclude=%s,exclude=z", half, half);
    expect_error(cmd, "'exclude=z'");
}

/* A single include pattern of 1023 bytes fits the 1024-byte buffer like file= does. */
static void test_include_single_pattern_fills_buffer(void **state UNUSED)
{
    parse_ok(rep("include=", 'i', 1023, ""));
    assert_int_equal(strlen(A.include), 1023);
}

/* A token of 2048+ bytes is rejected naming its start; a small err buffer is truncated safely. */
static void test_err_overlong_token(void **state UNUSED)
{
    char needle[64];
    memcpy(needle, rep("'title=", 'x', 34, "...'"), 46); /* the token's first 40 bytes */
    expect_error(rep("start,title=", 'x', 2042, ""), needle); /* token = 2048 bytes */
    assert_non_null(strstr(ERR, "longer than 2047 bytes"));
    expect_error(rep("title=", 'x', 2041, ""), "'title=xxx"); /* 2047 bytes: reaches title's check */
    assert_non_null(strstr(ERR, "under 256 bytes"));
    char small[16];
    memset(small, '#', sizeof small);
    js_args_defaults(&A);
    assert_int_equal(js_args_parse("start,nosuchoption", &A, small, sizeof small), -1);
    assert_string_equal(small, "unknown option ");
}

/* js_parse_duration_ns: exact ns for valid input (s, ms, us, ns, m, h), -1 for anything malformed or over
 * 30 days. */
static void test_parse_duration(void **state UNUSED)
{
    static const struct { const char *s; long long ns; } t[] = {
        {"0", 0},           {"1", 1},          {"100000", 100000},     {"7ns", 7},
        {"5us", 5000},      {"10ms", 10000000}, {"2s", 2000000000LL},  {"3600s", 3600000000000LL},
        {"3600000ms", 3600000000000LL},        {"3600000000000", 3600000000000LL},
        {"3601s", 3601000000000LL}, {"5m", 300000000000LL}, {"2h", 7200000000000LL}, {"720h", 2592000000000000LL},
        {"721h", -1},       {"2592001s", -1},   {"2592000000000001", -1}, {"abc", -1},
        {"10xs", -1},       {"-5ms", -1},       {"+5ms", -1},          {"", -1},
        {"ms", -1},         {"10 ms", -1},      {"10MS", -1},          {"1H", -1},
        {"1.5s", -1},       {"99999999999999999999", -1}, {"18446744073709551615", -1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        long long got = js_parse_duration_ns(t[i].s);
        if (got != t[i].ns) print_error("duration '%s': got %lld want %lld\n", t[i].s, got, t[i].ns);
        assert_int_equal(got, t[i].ns);
    }
    assert_int_equal(js_parse_duration_ns(NULL), -1);
}

/* %p becomes the pid, %% a literal percent, other % sequences are kept as-is. */
static void test_expand_pid_and_percent(void **state UNUSED)
{
    char out[128];
    assert_int_equal(js_expand_path("/tmp/p-%p.html", 4242, 0, out, sizeof out), 0);
    assert_string_equal(out, "/tmp/p-4242.html");
    assert_int_equal(js_expand_path("100%%-%p-%p", 7, 0, out, sizeof out), 0);
    assert_string_equal(out, "100%-7-7");
    assert_int_equal(js_expand_path("a%xb%", 1, 0, out, sizeof out), 0);
    assert_string_equal(out, "a%xb%");
    assert_int_equal(js_expand_path("%%p", 9, 0, out, sizeof out), 0);
    assert_string_equal(out, "%p");
    assert_int_equal(js_expand_path("", 9, 0, out, sizeof out), 0);
    assert_string_equal(out, "");
}

/* %t is local time as YYYYMMDD-HHMMSS (exact under TZ=UTC). */
static void test_expand_time(void **state UNUSED)
{
    char *old = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
    setenv("TZ", "UTC0", 1);
    tzset();
    char out[128];
    assert_int_equal(js_expand_path("p-%t.jfr", 1, 1700000000LL, out, sizeof out), 0);
    assert_string_equal(out, "p-20231114-221320.jfr");
    assert_int_equal(js_expand_path("%t", 1, 0, out, sizeof out), 0);
    assert_string_equal(out, "19700101-000000");
    setenv("TZ", "EST5", 1); /* shape holds in any zone */
    tzset();
    assert_int_equal(js_expand_path("%t", 1, 1700000000LL, out, sizeof out), 0);
    assert_string_equal(out, "20231114-171320");
    if (old) setenv("TZ", old, 1); else unsetenv("TZ");
    tzset();
    free(old);
    assert_int_equal(js_expand_path("%t", 1, (long long)time(NULL), out, sizeof out), 0);
    assert_int_equal(strlen(out), 15);
    for (int i = 0; i < 15; i++) assert_true(i == 8 ? out[i] == '-' : (out[i] >= '0' && out[i] <= '9'));
}

/* Output that would not fit (with its NUL) is -1; an exact fit succeeds. */
static void test_expand_overflow(void **state UNUSED)
{
    char out[32];
    assert_int_equal(js_expand_path("abc", 1, 0, out, 4), 0);
    assert_string_equal(out, "abc");
    assert_int_equal(js_expand_path("abc", 1, 0, out, 3), -1);
    assert_int_equal(js_expand_path("p%p", 12345, 0, out, 7), 0);
    assert_string_equal(out, "p12345");
    assert_int_equal(js_expand_path("p%p", 12345, 0, out, 6), -1);
    assert_int_equal(js_expand_path("%t", 1, 0, out, 15), -1);
    assert_int_equal(js_expand_path("", 1, 0, out, 0), -1);
    assert_int_equal(js_expand_path("x", 1, 0, out, 0), -1);
    assert_int_equal(js_expand_path("%%", 1, 0, out, 2), 0);
    assert_string_equal(out, "%");
}

/* An explicit format flag wins over the file extension. */
static void test_output_format_explicit_wins(void **state UNUSED)
{
    parse_ok("html,file=p.collapsed");
    assert_int_equal(js_args_output_format(&A, A.file), JS_OUT_HTML);
    parse_ok("flat=3");
    assert_int_equal(js_args_output_format(&A, "p.html"), JS_OUT_FLAT);
    parse_ok("tree");
    assert_int_equal(js_args_output_format(&A, "p.txt"), JS_OUT_TREE);
    parse_ok("collapsed");
    assert_int_equal(js_args_output_format(&A, NULL), JS_OUT_COLLAPSED);
}

/* Without a flag the extension decides (.html, .collapsed, .folded, .txt); else collapsed. */
static void test_output_format_from_extension_and_default(void **state UNUSED)
{
    parse_ok("start");
    assert_int_equal(js_args_output_format(&A, "/tmp/p.html"), JS_OUT_HTML);
    assert_int_equal(js_args_output_format(&A, "/tmp/p.collapsed"), JS_OUT_COLLAPSED);
    assert_int_equal(js_args_output_format(&A, "/tmp/p.folded"), JS_OUT_COLLAPSED);
    assert_int_equal(js_args_output_format(&A, "/tmp/p.txt"), JS_OUT_FLAT);
    assert_int_equal(js_args_output_format(&A, NULL), JS_OUT_COLLAPSED);
    assert_int_equal(js_args_output_format(&A, ""), JS_OUT_COLLAPSED);
    assert_int_equal(js_args_output_format(&A, "/tmp/profile"), JS_OUT_COLLAPSED);
    assert_int_equal(js_args_output_format(&A, "/tmp/p.unknownext"), JS_OUT_COLLAPSED);
}

/* Whole decimal integers as a backend sends them (task durations, times): anything else is refused. */
static void test_parse_ll(void **state UNUSED)
{
    long long v = 1;
    assert_int_equal(js_parse_ll("42", &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(js_parse_ll("-7", &v), 0);
    assert_int_equal(v, -7);
    assert_int_equal(js_parse_ll("9223372036854775807", &v), 0);
    assert_true(v == 9223372036854775807LL);
    v = 5;
    assert_int_equal(js_parse_ll("9223372036854775808", &v), -1); /* out of range */
    assert_int_equal(js_parse_ll("12s", &v), -1);
    assert_int_equal(js_parse_ll("", &v), -1);
    assert_int_equal(js_parse_ll(NULL, &v), -1);
    assert_int_equal(v, 5); /* a refusal leaves *out alone */
}

/* JFR options: sizes with units, chunk time, jfrfile, and which path the recording goes to. */
static void test_jfr_options(void **state UNUSED)
{
    assert_int_equal(js_parse_size("512"), 512);
    assert_int_equal(js_parse_size("64k"), 65536);
    assert_int_equal(js_parse_size("10m"), 10u << 20);
    assert_int_equal(js_parse_size("1G"), 1u << 30);
    assert_int_equal(js_parse_size("30MB"), 30u << 20);
    assert_int_equal(js_parse_size("x"), 0);
    assert_int_equal(js_parse_size("10q"), 0);
    assert_int_equal(js_parse_size(""), 0);
    parse_ok("start,chunksize=1m,chunktime=60s,jfrmaxsize=30m,jfrfile=/tmp/r-%p.jfr,file=/tmp/p.collapsed");
    assert_int_equal(A.chunk_size, 1u << 20);
    assert_int_equal(A.chunk_time_ns, 60000000000LL);
    assert_int_equal(A.jfr_max_size, 30u << 20);
    char path[256];
    assert_int_equal(js_args_jfr_path(&A, 42, 0, path, sizeof path), 0);
    assert_string_equal(path, "/tmp/r-42.jfr");
    parse_ok("start,file=/tmp/rec.jfr");
    assert_int_equal(js_args_jfr_path(&A, 42, 0, path, sizeof path), 0);
    assert_string_equal(path, "/tmp/rec.jfr");
    parse_ok("start,jfr,file=/tmp/rec.bin");
    assert_int_equal(js_args_jfr_path(&A, 42, 0, path, sizeof path), 0);
    assert_string_equal(path, "/tmp/rec.bin");
    parse_ok("start,file=/tmp/p.html");
    assert_int_equal(js_args_jfr_path(&A, 42, 0, path, sizeof path), 0);
    assert_string_equal(path, "");
    expect_error("start,chunksize=1k", "chunksize=1k");
    expect_error("start,chunksize=lots", "chunksize=lots");
    expect_error("start,chunktime=10ms", "chunktime=10ms");
    expect_error("start,jfrmaxsize=0", "jfrmaxsize=0");
    expect_error("start,jfrfile=", "jfrfile=");
    expect_error("start,jfr=1", "'jfr' takes no value");
}


/* async-profiler's counters, names and formats: total / samples, dot, simple, ann, lib, quiet, traces, flat=0,
 * resume, list, inverted. */
static void test_asprof_output_options(void **state UNUSED)
{
    parse_ok("start");
    assert_int_equal(A.counter, JS_COUNTER_DEFAULT);
    assert_int_equal(A.names, JS_NAMES_ASPROF);
    parse_ok("stop,total");
    assert_int_equal(A.counter, JS_COUNTER_TOTAL);
    parse_ok("dump,samples");
    assert_int_equal(A.counter, JS_COUNTER_SAMPLES);
    expect_error("total,samples", "'total' and 'samples'");
    parse_ok("dot,simple,ann,lib,quiet,norm");
    assert_int_equal(A.names, JS_NAMES_DOTS);
    assert_true(A.simple && A.ann && A.libnames && A.quiet && A.norm);
    parse_ok("traces=5");
    assert_int_equal(A.format, JS_OUT_TRACES);
    assert_int_equal(A.flat_top, 5);
    parse_ok("traces");
    assert_int_equal(A.format, JS_OUT_TRACES);
    parse_ok("flat=0"); /* 0: the default number of rows, as async-profiler's dumpFlat(0) */
    assert_int_equal(A.format, JS_OUT_FLAT);
    assert_int_equal(A.flat_top, 0);
    expect_error("traces,flat", "conflicting output formats");
    parse_ok("resume");
    assert_int_equal(A.action, JS_ACTION_RESUME);
    parse_ok("list");
    assert_int_equal(A.action, JS_ACTION_LIST);
    expect_error("resume,start", "conflicting commands");
    parse_ok("inverted");
    assert_int_equal(A.reverse, 1);
    parse_ok("title=a&#44;b&#44;c"); /* asprof's --title sends commas so */
    assert_string_equal(A.title, "a,b,c");
}

/* Events as async-profiler reads them: alloc=, lock= or wall= alone record that alone; event= adds cpu; all. */
static void test_asprof_events(void **state UNUSED)
{
    int n;
    parse_ok("start,alloc");
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_ALLOC);
    assert_int_equal(A.alloc_bytes, JS_DEFAULT_ALLOC_BYTES);
    parse_ok("start,alloc=0");
    assert_int_equal(A.alloc_bytes, JS_DEFAULT_ALLOC_BYTES);
    parse_ok("start,alloc=1");
    assert_int_equal(A.alloc_bytes, 1);
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_ALLOC);
    parse_ok("start,wall=50ms,jfr,file=x.jfr");
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_WALL);
    parse_ok("start,wall=0");
    assert_int_equal(A.wall_ns, JS_DEFAULT_WALL_NS);
    parse_ok("start,lock=0");
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_LOCK);
    parse_ok("start,event=cpu,alloc,lock=0");
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_EXEC | 1u << JS_KIND_ALLOC | 1u << JS_KIND_LOCK);
    parse_ok("start,all,file=x.jfr");
    assert_int_equal(js_kinds(&A, &n), 0xfu);
    assert_int_equal(A.event, JS_EV_CPU);
    assert_int_equal(A.wall_ns, JS_DEFAULT_WALL_NS);
    assert_int_equal(A.alloc_bytes, JS_DEFAULT_ALLOC_BYTES);
    assert_int_equal(A.lock_ns, JS_DEFAULT_LOCK_NS);
    parse_ok("start,all,alloc=262143,lock=1ms,event=itimer");
    assert_int_equal(A.alloc_bytes, 262143);
    assert_int_equal(A.lock_ns, 1000000LL);
    assert_int_equal(A.event, JS_EV_ITIMER);
    parse_ok("start,live"); /* live is about allocations: alloc at its default */
    assert_int_equal(A.live, 1);
    assert_int_equal(js_kinds(&A, &n), 1u << JS_KIND_ALLOC);
    parse_ok("start,alloc=1k,live");
    assert_int_equal(A.alloc_bytes, 1024);
    parse_ok("interval=0"); /* 0: the event's default */
    assert_int_equal(A.interval_ns, JS_DEFAULT_INTERVAL_NS);
}

/* jstackdepth=N/M, seconds without a unit, cstack=vm and the default, clock, filter without a value. */
static void test_asprof_values(void **state UNUSED)
{
    parse_ok("jstackdepth=50/20");
    assert_int_equal(A.jstackdepth, 50);
    assert_int_equal(A.jstackkeep, 20);
    parse_ok("jstackdepth=50");
    assert_int_equal(A.jstackkeep, 0);
    expect_error("jstackdepth=20/50", "'jstackdepth=20/50'");
    expect_error("jstackdepth=20/", "'jstackdepth=20/'");
    parse_ok("timeout=30,loop=60,chunktime=120");
    assert_int_equal(A.timeout_ns, 30000000000LL);
    assert_int_equal(A.loop_ns, 60000000000LL);
    assert_int_equal(A.chunk_time_ns, 120000000000LL);
    parse_ok("timeout=250ms");
    assert_int_equal(A.timeout_ns, 250000000LL);
    parse_ok("");
    assert_int_equal(A.cstack, JS_CSTACK_FP); /* native frames by default */
    parse_ok("cstack=vm");
    assert_int_equal(A.cstack, JS_CSTACK_DWARF);
    parse_ok("cstack=no");
    assert_int_equal(A.cstack, JS_CSTACK_NO);
    assert_false(A.cstack_vmx);
    parse_ok("cstack=vmx"); /* walked as vm, said at start */
    assert_int_equal(A.cstack, JS_CSTACK_DWARF);
    assert_true(A.cstack_vmx);
    expect_error("cstack=lbr", "'cstack=lbr'");
    parse_ok("clock=monotonic");
    expect_error("clock=tsc", "'clock=tsc'");
    parse_ok("start,filter");
    assert_int_equal(A.thread_filter, 1);
    assert_string_equal(A.filter, "");
    expect_error("filter=120-127;132", "thread id filters");
}

/* async-profiler's options jsampler does not offer are refused, each naming itself and saying why. */
static void test_asprof_unsupported(void **state UNUSED)
{
    const char *cmds[] = {"nativemem=1m", "nofree", "nativelock=10us", "trace=a.B.c", "nobatch",
                          "sched", "signal=10", "memlimit=10m",
                          "mcache", "server=:8080", "width=1200", "minwidth=1",
                          "otlp", "metrics"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "'%.*s'", (int)strcspn(cmds[i], "="), cmds[i]);
        expect_error(cmds[i], needle);
        assert_non_null(strstr(ERR, "not supported"));
    }
}

/* tlab: allocations from the VM's TLAB events; with live it is refused, naming live. */
static void test_tlab(void **state UNUSED)
{
    parse_ok("start,event=alloc,tlab");
    assert_true(A.tlab);
    assert_true(A.alloc_bytes > 0);
    assert_false(A.alloc_set); /* every TLAB event */
    parse_ok("start,alloc=1m,tlab");
    assert_true(A.alloc_set);
    expect_error("start,event=alloc,tlab,live", "option 'live'");
    expect_error("start,event=cpu,tlab", "option 'tlab'"); /* nothing of allocations recorded: not ignored silently */
    parse_ok("start,all,tlab,file=x.jfr");
}

/* proc[=N]: seconds between readings of /proc (no value: 30 s, 0: off); all turns it on unless given. */
static void test_proc(void **state UNUSED)
{
    parse_ok("start");
    assert_int_equal(A.proc_ns, 0);
    parse_ok("start,proc=1,file=p.jfr");
    assert_int_equal(A.proc_ns, 1000000000LL);
    parse_ok("start,proc,jfr");
    assert_int_equal(A.proc_ns, JS_DEFAULT_PROC_NS);
    parse_ok("start,proc=2s,file=p.collapsed,jfrfile=p.jfr");
    assert_int_equal(A.proc_ns, 2000000000LL);
    parse_ok("start,all"); /* proc where the output is JFR */
    assert_int_equal(A.proc_ns, JS_DEFAULT_PROC_NS);
    assert_false(A.proc_set);
    parse_ok("start,all,proc=0");
    assert_int_equal(A.proc_ns, 0);
    parse_ok("start,proc=0");
    expect_error("start,proc=1", "Process sampling requires JFR output format"); /* async-profiler's words */
    expect_error("start,proc=1,file=p.html", "'proc'");
    expect_error("proc=500ms", "'proc=500ms'");
    expect_error("proc=2h", "'proc=2h'");
    expect_error("proc=x", "'proc=x'");
}

/* features=: vtable and comptask, '+'-joined (asprof's -F a,b arrives so); any other feature is refused naming it. */
static void test_features(void **state UNUSED)
{
    parse_ok("start,features=vtable");
    assert_true(A.feat_vtable);
    assert_false(A.feat_comptask);
    parse_ok("start,features=comptask+vtable");
    assert_true(A.feat_vtable && A.feat_comptask);
    expect_error("start,features=vtable+pcaddr", "'features=vtable+pcaddr'");
    assert_non_null(strstr(ERR, "not supported"));
}

/* begin=/end= name native functions; ttsp sets both (and refuses them given); end alone is refused. */
static void test_windows(void **state UNUSED)
{
    parse_ok("start,begin=write,end=read");
    assert_string_equal(A.begin, "write");
    assert_string_equal(A.end, "read");
    assert_false(A.nostop);
    parse_ok("start,ttsp,nostop");
    assert_string_equal(A.begin, "SafepointSynchronize::begin");
    assert_string_equal(A.end, "RuntimeService::record_safepoint_synchronized");
    assert_true(A.nostop);
    expect_error("start,ttsp,begin=write", "begin and end must both be empty when ttsp is set");
    expect_error("start,end=write", "needs begin=");
    expect_error("start,begin=a.b", "'begin=a.b'");
}

/* jfrsync[=CONFIG] (default: "default") needs a JFR output and one file; jfropts takes async-profiler's bits. */
static void test_jfrsync(void **state UNUSED)
{
    parse_ok("start,jfrsync,file=a.jfr");
    assert_string_equal(A.jfrsync, "default");
    parse_ok("start,jfrsync=profile,jfr,jfropts=4");
    assert_string_equal(A.jfrsync, "profile");
    assert_int_equal(A.jfropts, 4);
    parse_ok("start,jfrsync=/etc/my.jfc,file=a.collapsed,jfrfile=a.jfr");
    assert_string_equal(A.jfrsync, "/etc/my.jfc");
    expect_error("start,jfrsync", "needs a JFR output");
    expect_error("start,jfrsync,file=a.jfr,loop=10s", "loop=");
    expect_error("start,jfrsync=+jdk.CPULoad,file=a.jfr", "'jfrsync=+jdk.CPULoad'");
    expect_error("jfropts=32", "'jfropts=32'");
    expect_error("jfropts=mem", "'jfropts=mem'"); /* kept in memory: ours is streamed */
    assert_non_null(strstr(ERR, "not supported"));
}

/* record-cpu, target-cpu=N, alluser and fdtransfer, as async-profiler takes them; the first three need a perf_events
 * event (timers know no CPU and no mode), and say which option and event did not fit. */
static void test_cpu_scope(void **state UNUSED)
{
    parse_ok("start");
    assert_int_equal(A.target_cpu, -1);
    assert_false(A.record_cpu || A.alluser || A.fdtransfer);
    parse_ok("start,record-cpu,target-cpu=1,alluser,fdtransfer");
    assert_true(A.record_cpu && A.alluser && A.fdtransfer);
    assert_int_equal(A.target_cpu, 1);
    parse_ok("event=cpu-clock,target-cpu=0");
    assert_int_equal(A.target_cpu, 0);
    parse_ok("event=page-faults,alluser");
    parse_ok("event=ctimer,fdtransfer"); /* nothing to transfer: said at start */
    expect_error("event=ctimer,record-cpu", "'record-cpu'");
    assert_non_null(strstr(ERR, "event=ctimer"));
    expect_error("event=itimer,target-cpu=0", "'target-cpu'");
    expect_error("event=wall,alluser", "'alluser'");
    expect_error("alloc,record-cpu", "'record-cpu'");
    expect_error("target-cpu=-1", "target-cpu");
    expect_error("target-cpu=x", "target-cpu");
    expect_error("record-cpu=1", "takes no value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_cpu_scope),
        cmocka_unit_test(test_proc),
        cmocka_unit_test(test_jfrsync),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_features),
        cmocka_unit_test(test_null_empty_and_commas),
        cmocka_unit_test(test_actions),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_interval_units),
        cmocka_unit_test(test_interval_clamp),
        cmocka_unit_test(test_string_options),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_jstackdepth),
        cmocka_unit_test(test_boolean_flags),
        cmocka_unit_test(test_include_exclude_join),
        cmocka_unit_test(test_loglevel),
        cmocka_unit_test(test_empty_tokens_and_full_command),
        cmocka_unit_test(test_err_unknown_option),
        cmocka_unit_test(test_err_events),
        cmocka_unit_test(test_event_kinds),
        cmocka_unit_test(test_err_interval),
        cmocka_unit_test(test_err_flag_with_value),
        cmocka_unit_test(test_err_missing_value),
        cmocka_unit_test(test_err_empty_name),
        cmocka_unit_test(test_err_conflicting_commands),
        cmocka_unit_test(test_err_conflicting_formats),
        cmocka_unit_test(test_err_numbers),
        cmocka_unit_test(test_err_overlong_values),
        cmocka_unit_test(test_include_single_pattern_fills_buffer),
        cmocka_unit_test(test_err_overlong_token),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_expand_pid_and_percent),
        cmocka_unit_test(test_expand_time),
        cmocka_unit_test(test_expand_overflow),
        cmocka_unit_test(test_output_format_explicit_wins),
        cmocka_unit_test(test_output_format_from_extension_and_default),
        cmocka_unit_test(test_parse_ll),
        cmocka_unit_test(test_jfr_options),
        cmocka_unit_test(test_asprof_output_options),
        cmocka_unit_test(test_asprof_events),
        cmocka_unit_test(test_asprof_values),
        cmocka_unit_test(test_asprof_unsupported),
        cmocka_unit_test(test_tlab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
