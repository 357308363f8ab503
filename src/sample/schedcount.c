/* schedcount.c - see schedcount.h. */
#include "sample/schedcount.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "sample/safe_fmt.h"

uint64_t js_sched_switch_ins(int tid)
{
    char path[64], buf[96];
    if (tid > 0) js_safe_fmt(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    else js_safe_fmt(path, sizeof path, "/proc/thread-self/schedstat");
    int saved = errno, fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        errno = saved;
        return 0;
    }
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    errno = saved;
    if (n <= 0) return 0;
    buf[n] = 0;
    /* "<ns on CPU> <ns waiting> <switch-ins>\n": the third number. */
    int field = 0;
    uint64_t v = 0;
    for (ssize_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c == ' ' || c == '\n') {
            if (field == 2) return v;
            field++;
            v = 0;
        } else if (c >= '0' && c <= '9') {
            v = v * 10 + (uint64_t)(c - '0');
        } else {
            return 0;
        }
    }
    return field == 2 ? v : 0;
}
