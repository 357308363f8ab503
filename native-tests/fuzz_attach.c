/* fuzz_attach.c - libFuzzer target for what a target JVM answers the attach client (docs/FUZZING.md): the reply
 * its attach listener sends to a `load` request (src/attach/attach.c) and the reply file the agent leaves in its
 * /tmp (src/tool/cli_reply.c). Both come from a process that may belong to another user (root attaches to
 * anyone's JVM) and are printed to the operator's terminal.
 *
 * The input, up to its first NUL, is taken as each. Invariants beyond the sanitizers: a load succeeds only on
 * "0\nreturn code: N" (N the agent's code); otherwise the error is one line without control characters that
 * names the process; the reply file's text keeps no control character but newline and tab, and no status line.
 */
#include "fuzz_util.h"

#include "../src/attach/attach_parse_int.h"
#include "../src/tool/cli_int.h"

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_cstr(data, size), err[256];
    int rc = -12345;
    err[0] = 0;
    js_attach_code c = js_attach_load_reply(text, 4242, "/opt/jsampler/libjsampler.so", &rc, err, sizeof err);
    if (c == JS_AT_OK) {
        const char *nl = strchr(text, '\n');
        FZ_CHECK(nl && strncmp(nl + 1, "return code: ", 13) == 0 && strtol(text, NULL, 10) == 0, "accepted '%.40s'",
                 text);
        FZ_CHECK(rc != -12345, "no agent code");
    } else {
        FZ_CHECK(c == JS_AT_LIBRARY || c == JS_AT_PROTOCOL, "code %d", (int)c);
        FZ_CHECK(strstr(err, "process 4242 ") != NULL, "error does not name the process: '%s'", err);
        FZ_CHECK(!fz_has_ctl(err, strlen(err)) && !strchr(err, '\t'), "control character in '%s'", err);
    }
    size_t n = strlen(text);
    int had_status = strchr(text, '\n') != NULL;
    js_cli_reply_text(text);
    size_t m = strlen(text);
    FZ_CHECK(m <= n && (!had_status || m < n), "reply grew or kept its status line");
    for (size_t i = 0; i < m; i++)
        FZ_CHECK((unsigned char)text[i] >= 0x20 ? text[i] != 0x7f : text[i] == '\n' || text[i] == '\t',
                 "control character %02x kept at %zu", (unsigned char)text[i], i);
    FZ_CHECK(m == 0 || text[m - 1] != '\n', "trailing newline kept");
    free(text);
    return 0;
}
