/* safe_fmt.h - a small printf for the signal-safe zone: no locale, no malloc, no stdio.
 *
 * Everything in src/sample/ may run inside (or be linked beside) the profiling signal handler,
 * where snprintf and strerror are not async-signal-safe. js_safe_fmt understands %s %c %d %u
 * %ld %lu %lld %llu %zu %x %p and %%; anything else is copied as is. The result is always
 * NUL-terminated and truncated to len; returns the length written.
 */
#ifndef JS_SAFE_FMT_H
#define JS_SAFE_FMT_H

#include <stddef.h>

size_t js_safe_fmt(char *buf, size_t len, const char *fmt, ...);
/* Short English text for an errno value ("Permission denied"), from a static table. */
const char *js_safe_errstr(int err);

#endif
