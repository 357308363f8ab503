/* out_util.c - see out_int.h. */
#include "out_int.h"

#include <errno.h>
#include <string.h>

int js_out_fail(const char *what, char *err, size_t errlen, const char *why, int with_errno)
{
    int e = errno;
    if (err && errlen) {
        if (with_errno) snprintf(err, errlen, "%s: %s: %s", what, why, e ? strerror(e) : "I/O error");
        else snprintf(err, errlen, "%s: %s", what, why);
    }
    return -1;
}

void js_out_put_replacing(FILE *f, const char *s, const char *bad)
{
    for (;;) {
        size_t n = strcspn(s, bad);
        if (n) fwrite(s, 1, n, f);
        if (!s[n]) return;
        putc('_', f);
        s += n + 1;
    }
}
