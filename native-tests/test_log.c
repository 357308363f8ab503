/* test_log.c - the agent's log (src/util/log.c): one line per message, whatever the message quotes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

/* The text of the file at path (caller frees). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = calloc(1, 4096);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 4095, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Text from elsewhere (a backend's task id, a JVM's reply) cannot add lines or escape sequences to the log:
 * control characters and bytes that are not UTF-8 are written as escapes (\n, \r, \t, \xNN). */
static void test_one_line(void **state)
{
    char path[] = "/tmp/jsampler-log-XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(js_log_configure(JS_LOG_INFO, path, err, sizeof err), 0);
    js_warn("task %s: %s", "t1\n[jsampler] ERROR: forged", "bad\r\x1b[2Jthing\tok\x7f");
    js_info("plain");
    js_log_close();
    char *text = slurp(path);
    assert_string_equal(text, "[jsampler] WARN: task t1\\n[jsampler] ERROR: forged: bad\\r\\x1b[2Jthing\\tok\\x7f\n"
                              "[jsampler] INFO: plain\n");
    free(text);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
