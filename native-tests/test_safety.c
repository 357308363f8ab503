/* test_safety.c - what keeps the host safe from the files and strings jsampler handles: log lines that text from
 * elsewhere cannot split or forge, secrets kept out of messages, and outputs that never write through a symbolic
 * link, into another user's file, through a hard link or into a FIFO, whoever planted it. The profile writers are
 * checked through their real entry points (js_dump_write_profile, js_jfr_export, `jsampler convert`). Checks that
 * need files of another user run as root only and say so when skipped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/args.h"
#include "core/dump.h"
#include "jfr/jfr_export.h"
#include "testutil.h"
#include "util/log.h"
#include "util/safefile.h"

#define OTHER_UID 65534 /* nobody */

static char dir[64];

/* A fresh sticky, world-writable directory, like /tmp. */
static int make_dir(void **state TU_UNUSED)
{
    snprintf(dir, sizeof dir, "/tmp/jsampler-safety-XXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 01777), 0);
    return 0;
}

static int remove_dir(void **state TU_UNUSED)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* dir/name into buf. */
static const char *in_dir(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

/* The whole content of path (heap; "" if it cannot be read). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf = calloc(1, 1 << 20);
    assert_non_null(buf);
    if (f) {
        size_t n = fread(buf, 1, (1 << 20) - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    return buf;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* ---- log lines ---- */

/* A string from a server with a newline and a terminal escape reaches the log as one line, made visible. */
static void test_log_message_stays_one_line(void **state TU_UNUSED)
{
    char path[128], err[256];
    in_dir(path, sizeof path, "agent.log");
    assert_int_equal(js_log_configure(JS_LOG_INFO, path, err, sizeof err), 0);
    js_warn("task %s: unknown ExecArgs", "t1\n[jsampler] ERROR: forged line\x1b[31m\r");
    js_log_close();
    char *text = slurp(path);
    const char *nl = strchr(text, '\n');
    assert_non_null(nl);
    assert_string_equal(nl + 1, ""); /* one line */
    assert_non_null(strstr(text, "[jsampler] WARN: task t1\\n[jsampler] ERROR: forged line\\x1b[31m\\r: unknown"));
    free(text);
}

/* Our own multi-line texts (one line per event written) become one prefixed line each. */
static void test_log_lines(void **state TU_UNUSED)
{
    char path[128], err[256];
    in_dir(path, sizeof path, "lines.log");
    assert_int_equal(js_log_configure(JS_LOG_INFO, path, err, sizeof err), 0);
    js_log_lines(JS_LOG_INFO, "wrote a\nwrote b\n");
    js_log_close();
    char *text = slurp(path);
    assert_string_equal(text, "[jsampler] INFO: wrote a\n[jsampler] INFO: wrote b\n");
    free(text);
}

static void test_escape(void **state TU_UNUSED)
{
    char out[64];
    js_log_escape("plain text", out, sizeof out);
    assert_string_equal(out, "plain text");
    js_log_escape("a\tb\x01\x7f", out, sizeof out);
    assert_string_equal(out, "a\\tb\\x01\\x7f");
    js_log_escape("caf\xc3\xa9 \xe2\x82\xac", out, sizeof out); /* UTF-8 kept */
    assert_string_equal(out, "caf\xc3\xa9 \xe2\x82\xac");
    js_log_escape("\xc2\x9b" "2J \xff \xc3", out, sizeof out); /* C1 CSI, not UTF-8, a cut sequence */
    assert_string_equal(out, "\\xc2\\x9b2J \\xff \\xc3");
    char small[12];
    assert_int_equal(js_log_escape("0123456789abcdef", small, sizeof small), 11); /* cut, marked */
    assert_string_equal(small, "01234567...");
    assert_int_equal(js_log_escape("0123456789a", small, sizeof small), 11); /* fits exactly: not cut */
    assert_string_equal(small, "0123456789a");
    js_log_escape("0123456\n", small, sizeof small); /* an escape is never split */
    assert_string_equal(small, "0123456\\n");
    js_log_escape("0123456789\n", small, sizeof small);
    assert_string_equal(small, "01234567...");
}

static void test_redact(void **state TU_UNUSED)
{
    char out[128];
    js_log_redact("start,backend=h:1,token=s3cret,service=s", out, sizeof out);
    assert_string_equal(out, "start,backend=h:1,token=***,service=s");
    js_log_redact("token=", out, sizeof out);
    assert_string_equal(out, "token=***");
}

/* A log= path planted as another user's file (it could read our lines) or a FIFO is refused. */
static void test_log_file_of_another_user_refused(void **state TU_UNUSED)
{
    if (geteuid() != 0) skip();
    char path[128], err[256];
    in_dir(path, sizeof path, "planted.log");
    put(path, "");
    assert_int_equal(chown(path, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(js_log_configure(JS_LOG_INFO, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "belongs to another user"));
    char fifo[128];
    in_dir(fifo, sizeof fifo, "fifo.log");
    assert_int_equal(mkfifo(fifo, 0666), 0);
    alarm(10); /* an open that blocks on the FIFO fails the test instead of hanging it */
    assert_int_equal(js_log_configure(JS_LOG_INFO, fifo, err, sizeof err), -1);
    alarm(0);
    assert_non_null(strstr(err, "not a regular file"));
}

/* ---- outputs ---- */

/* A small profile and the args that write it to path. */
static void profile_args(js_profile *p, js_args *a, const char *path)
{
    tu_profile(p, "a;b 3\na;c 1");
    js_args_defaults(a);
    snprintf(a->file, sizeof a->file, "%s", path);
}

/* The same path written twice by the same user works (mode 0600), and replaces the file rather than writing into
 * it: another name (hard link) of the first file keeps its content. */
static void test_output_written_twice(void **state TU_UNUSED)
{
    char path[128], link2[128], msg[1024];
    in_dir(path, sizeof path, "twice.collapsed");
    in_dir(link2, sizeof link2, "other-name");
    js_profile p;
    js_args a;
    profile_args(&p, &a, path);
    assert_int_equal(js_dump_write_profile(&p, &a, NULL, msg, sizeof msg), 0);
    assert_int_equal(link(path, link2), 0);
    js_profile_free(&p);
    tu_profile(&p, "x;y 7");
    assert_int_equal(js_dump_write_profile(&p, &a, NULL, msg, sizeof msg), 0);
    char *now = slurp(path), *old = slurp(link2);
    assert_string_equal(now, "x;y 7\n");
    assert_string_equal(old, "a;b 3\na;c 1\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    free(now);
    free(old);
    js_profile_free(&p);
    char jfr[128], err[256];
    in_dir(jfr, sizeof jfr, "twice.jfr");
    tu_profile(&p, "a;b 3");
    assert_int_equal(js_jfr_export(jfr, &p, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(js_jfr_export(jfr, &p, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(stat(jfr, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    js_profile_free(&p);
}

/* Another user's file at the output path, in a sticky directory: refused with one line, left as it was. */
static void test_output_over_another_users_file(void **state TU_UNUSED)
{
    if (geteuid() != 0) skip();
    char path[128], jfr[128], msg[1024];
    in_dir(path, sizeof path, "theirs.html");
    in_dir(jfr, sizeof jfr, "theirs.jfr");
    put(path, "keep me\n");
    put(jfr, "keep me\n");
    assert_int_equal(chown(path, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(chown(jfr, OTHER_UID, OTHER_UID), 0);
    js_profile p;
    js_args a;
    profile_args(&p, &a, path);
    assert_int_equal(js_dump_check_output(path, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "belongs to uid 65534"));
    assert_int_equal(js_dump_write_profile(&p, &a, NULL, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, "belongs to uid 65534"));
    assert_int_equal(js_jfr_export(jfr, &p, NULL, NULL, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "belongs to uid 65534"));
    char *t1 = slurp(path), *t2 = slurp(jfr);
    assert_string_equal(t1, "keep me\n");
    assert_string_equal(t2, "keep me\n");
    free(t1);
    free(t2);
    js_profile_free(&p);
}

/* A symbolic link planted at the output path is refused and its target left alone. */
static void test_output_symlink_refused(void **state TU_UNUSED)
{
    char target[128], path[128], jfr[128], msg[1024];
    in_dir(target, sizeof target, "victim");
    in_dir(path, sizeof path, "link.collapsed");
    in_dir(jfr, sizeof jfr, "link.jfr");
    put(target, "keep me\n");
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(symlink(target, jfr), 0);
    js_profile p;
    js_args a;
    profile_args(&p, &a, path);
    assert_int_equal(js_dump_write_profile(&p, &a, NULL, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "symbolic link"));
    assert_int_equal(js_jfr_export(jfr, &p, NULL, NULL, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "symbolic link"));
    char *t = slurp(target);
    assert_string_equal(t, "keep me\n");
    free(t);
    js_profile_free(&p);
}

/* A FIFO planted at the output path: refused at once (never opened, so nothing blocks), not written. */
static void test_output_fifo_refused(void **state TU_UNUSED)
{
    char path[128], msg[1024];
    in_dir(path, sizeof path, "fifo.html");
    assert_int_equal(mkfifo(path, 0666), 0);
    js_profile p;
    js_args a;
    profile_args(&p, &a, path);
    alarm(10);
    assert_int_equal(js_dump_write_profile(&p, &a, NULL, msg, sizeof msg), -1);
    assert_int_equal(js_jfr_export(path, &p, NULL, NULL, msg, sizeof msg), -1);
    alarm(0);
    assert_non_null(strstr(msg, "not a regular file"));
    js_profile_free(&p);
}

/* A character device is written in place (log=/dev/null, file=/dev/full fails at the write, with one line). */
static void test_output_device(void **state TU_UNUSED)
{
    char msg[1024];
    js_profile p;
    js_args a;
    profile_args(&p, &a, "/dev/null");
    assert_int_equal(js_dump_check_output("/dev/null", msg, sizeof msg), 0);
    assert_int_equal(js_dump_write_profile(&p, &a, NULL, msg, sizeof msg), 0);
    snprintf(a.file, sizeof a.file, "/dev/full");
    assert_int_equal(js_dump_write_profile(&p, &a, NULL, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "No space left on device"));
    js_profile_free(&p);
}

/* Atomic outputs: the new file appears only when complete; a failed write leaves the previous one and no
 * temporary file behind. */
static void test_atomic_abort_keeps_previous(void **state TU_UNUSED)
{
    char path[128], err[256];
    in_dir(path, sizeof path, "profile.html");
    put(path, "previous\n");
    js_safe_file f;
    assert_int_equal(js_safe_open(&f, "output", path, JS_SAFE_ATOMIC, err, sizeof err), 0);
    assert_int_equal(write(f.fd, "half", 4), 4);
    char *t = slurp(path);
    assert_string_equal(t, "previous\n"); /* not yet */
    free(t);
    js_safe_abort(&f);
    t = slurp(path);
    assert_string_equal(t, "previous\n");
    free(t);
    assert_int_equal(js_safe_open(&f, "output", path, JS_SAFE_ATOMIC, err, sizeof err), 0);
    assert_int_equal(write(f.fd, "new\n", 4), 4);
    assert_int_equal(js_safe_commit(&f, err, sizeof err), 0);
    t = slurp(path);
    assert_string_equal(t, "new\n");
    free(t);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -q '\\.tmp$'", dir);
    assert_int_not_equal(system(cmd), 0); /* no temporary file left */
}

/* The checks made when a command is accepted name the problem. */
static void test_check_messages(void **state TU_UNUSED)
{
    char err[512], path[128];
    assert_int_equal(js_safe_check("output", "/nonexistent-dir/x.html", err, sizeof err), -1);
    assert_string_equal(err, "cannot write output '/nonexistent-dir/x.html': directory '/nonexistent-dir' does not exist");
    assert_int_equal(js_safe_check("output", dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "it is a directory"));
    assert_int_equal(js_safe_check("output", in_dir(path, sizeof path, "new.html"), err, sizeof err), 0);
    assert_int_equal(js_safe_check("output", "", err, sizeof err), -1);
}

/* `jsampler convert` creates its output by the same rules: a planted link or another user's file is refused and
 * left alone. Runs the built CLI (make all). */
static void test_convert_output(void **state TU_UNUSED)
{
    if (access("build/jsampler", X_OK) != 0) {
        print_message("skipped: build/jsampler is not built (make all)\n");
        skip();
    }
    char in[128], target[128], link1[128], theirs[128], ok[128], cmd[600];
    in_dir(in, sizeof in, "in.collapsed");
    in_dir(target, sizeof target, "convert-victim");
    in_dir(link1, sizeof link1, "out.html");
    in_dir(theirs, sizeof theirs, "out2.html");
    in_dir(ok, sizeof ok, "out3.html");
    put(in, "a;b 3\n");
    put(target, "keep me\n");
    assert_int_equal(symlink(target, link1), 0);
    snprintf(cmd, sizeof cmd, "build/jsampler convert %s %s 2>%s/convert.err", in, link1, dir);
    assert_int_not_equal(system(cmd), 0);
    char errpath[128];
    char *e = slurp(in_dir(errpath, sizeof errpath, "convert.err"));
    assert_non_null(strstr(e, "symbolic link"));
    free(e);
    char *t = slurp(target);
    assert_string_equal(t, "keep me\n");
    free(t);
    snprintf(cmd, sizeof cmd, "build/jsampler convert %s %s && build/jsampler convert %s %s", in, ok, in, ok);
    assert_int_equal(system(cmd), 0); /* twice in a row by the same user */
    if (geteuid() == 0) {
        put(theirs, "keep me\n");
        assert_int_equal(chown(theirs, OTHER_UID, OTHER_UID), 0);
        snprintf(cmd, sizeof cmd, "build/jsampler convert %s %s 2>/dev/null", in, theirs);
        assert_int_not_equal(system(cmd), 0);
        t = slurp(theirs);
        assert_string_equal(t, "keep me\n");
        free(t);
    }
}

int main(void)
{
    signal(SIGALRM, SIG_DFL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_log_message_stays_one_line, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_log_lines, make_dir, remove_dir),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_redact),
        cmocka_unit_test_setup_teardown(test_log_file_of_another_user_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_output_written_twice, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_output_over_another_users_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_output_symlink_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_output_fifo_refused, make_dir, remove_dir),
        cmocka_unit_test(test_output_device),
        cmocka_unit_test_setup_teardown(test_atomic_abort_keeps_previous, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_check_messages, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_convert_output, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
