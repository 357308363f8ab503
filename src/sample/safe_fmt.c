/* safe_fmt.c - see safe_fmt.h. */
#include "sample/safe_fmt.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char *buf;
    size_t len, off;
} sink;

static void put(sink *s, char c)
{
    if (s->off + 1 < s->len) s->buf[s->off++] = c;
}

static void put_str(sink *s, const char *p)
{
    for (p = p ? p : "(null)"; *p; p++) put(s, *p);
}

/* Unsigned v in base 10 or 16. */
static void put_unsigned(sink *s, unsigned long long v, unsigned base)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (n) put(s, tmp[--n]);
}

static void put_signed(sink *s, long long v)
{
    if (v < 0) {
        put(s, '-');
        put_unsigned(s, (unsigned long long)(-(v + 1)) + 1, 10);
    } else {
        put_unsigned(s, (unsigned long long)v, 10);
    }
}

/* One conversion starting after '%'; returns the pointer past it. */
static const char *convert(sink *s, const char *f, va_list *ap)
{
    int longs = 0, size = 0;
    while (*f == 'l') longs++, f++;
    if (*f == 'z') size = 1, f++;
    switch (*f) {
    case 's': put_str(s, va_arg(*ap, const char *)); break;
    case 'c': put(s, (char)va_arg(*ap, int)); break;
    case 'd':
        put_signed(s, size ? (long long)va_arg(*ap, ptrdiff_t) : longs >= 2 ? va_arg(*ap, long long)
                                                               : longs ? va_arg(*ap, long) : va_arg(*ap, int));
        break;
    case 'u':
    case 'x':
        put_unsigned(s, size ? va_arg(*ap, size_t) : longs >= 2 ? va_arg(*ap, unsigned long long)
                                                    : longs ? va_arg(*ap, unsigned long) : va_arg(*ap, unsigned),
                     *f == 'x' ? 16 : 10);
        break;
    case 'p':
        put_str(s, "0x");
        put_unsigned(s, (uintptr_t)va_arg(*ap, void *), 16);
        break;
    case '%': put(s, '%'); break;
    case 0: return f;
    default: put(s, '%'); put(s, *f); break;
    }
    return f + 1;
}

size_t js_safe_fmt(char *buf, size_t len, const char *fmt, ...)
{
    sink s = {buf, len, 0};
    if (!len) return 0;
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f;) {
        if (*f != '%') {
            put(&s, *f++);
            continue;
        }
        f = convert(&s, f + 1, &ap);
    }
    va_end(ap);
    buf[s.off] = 0;
    return s.off;
}

const char *js_safe_errstr(int err)
{
    /* glibc's description table: a static string, no locale lookup. */
    const char *d = strerrordesc_np(err);
    return d ? d : "unknown error";
}
