/* log.c - see log.h. */
#include "util/log.h"
#include "util/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Process-wide sink: one agent per process; guarded by log_lock. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file;
static js_loglevel log_level = JS_LOG_INFO;

static const char *level_tag(js_loglevel l)
{
    switch (l) {
    case JS_LOG_DEBUG: return "DEBUG";
    case JS_LOG_INFO: return "INFO";
    case JS_LOG_WARN: return "WARN";
    case JS_LOG_ERROR: return "ERROR";
    default: return "NONE";
    }
}

/* The log file at path (NULL for ""), or -1 with err. */
static int open_log(const char *path, FILE **out, char *err, size_t errlen)
{
    FILE *f = NULL;
    if (path && *path) {
        /* Never through a symbolic link planted at the path; a new log is readable by its owner only; an existing
         * one is appended to only when it is our own regular file (or a device such as /dev/null). */
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
        struct stat st;
        const char *why = fd < 0 && errno == ENXIO ? "it is not a regular file (a FIFO)" : NULL;
        if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISCHR(st.st_mode)) {
            if (!S_ISREG(st.st_mode)) why = "it is not a regular file";
            else if (st.st_uid != geteuid()) why = "it belongs to another user";
        }
        if (fd >= 0 && !why) fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
        f = fd >= 0 && !why ? fdopen(fd, "a") : NULL;
        int e = errno;
        if (!f && fd >= 0) close(fd);
        if (!f) {
            snprintf(err, errlen, "cannot open log file '%s': %s", path, why ? why : js_safe_strerror(e));
            return -1;
        }
        setvbuf(f, NULL, _IOLBF, 0);
    }
    *out = f;
    return 0;
}

/* Replace the sink; a failed open keeps the previous one. */
int js_log_configure(js_loglevel level, const char *path, char *err, size_t errlen)
{
    FILE *f;
    if (open_log(path, &f, err, errlen) != 0) return -1;
    pthread_mutex_lock(&log_lock);
    if (log_file) fclose(log_file);
    log_file = f;
    log_level = level;
    pthread_mutex_unlock(&log_lock);
    return 0;
}

/* Length of the UTF-8 sequence starting at s (1..4) if it is well formed and not a C1 control, else 0. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
    if (s[0] >= 0xF5) n = 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (n == 2 && s[0] == 0xC2 && s[1] < 0xA0) return 0;         /* U+0080..U+009F: C1 controls */
    if (n == 3 && s[0] == 0xE0 && s[1] < 0xA0) return 0;         /* overlong */
    if (n == 3 && s[0] == 0xED && s[1] >= 0xA0) return 0;        /* surrogates */
    if (n == 4 && s[0] == 0xF0 && s[1] < 0x90) return 0;         /* overlong */
    if (n == 4 && s[0] == 0xF4 && s[1] >= 0x90) return 0;        /* past U+10FFFF */
    return n;
}

/* The visible form of the character at s into piece (at most 4 bytes); *take gets the bytes it stands for. */
static size_t escape_one(const unsigned char *s, char piece[4], size_t *take)
{
    static const char hex[] = "0123456789abcdef";
    *take = 1;
    if (*s == '\n' || *s == '\r' || *s == '\t') {
        piece[0] = '\\';
        piece[1] = *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't';
        return 2;
    }
    if (*s < 0x20 || *s == 0x7F || (*s >= 0x80 && (*take = utf8_len(s)) == 0)) {
        *take = 1;
        piece[0] = '\\', piece[1] = 'x', piece[2] = hex[*s >> 4], piece[3] = hex[*s & 15];
        return 4;
    }
    memcpy(piece, s, *take);
    return *take;
}

size_t js_log_escape(const char *in, char *out, size_t outlen)
{
    if (!outlen) return 0;
    size_t room = outlen - 1, total = 0, take, n;
    char piece[4];
    for (const unsigned char *s = (const unsigned char *)in; *s; s += take) total += escape_one(s, piece, &take);
    size_t limit = total <= room ? room : room >= 3 ? room - 3 : 0; /* when cut, "..." takes the last 3 */
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)in;
    for (; *s && o + (n = escape_one(s, piece, &take)) <= limit; s += take) {
        memcpy(out + o, piece, n);
        o += n;
    }
    if (*s)
        for (int i = 0; i < 3 && o < room; i++) out[o++] = '.';
    out[o] = 0;
    return o;
}

const char *js_log_esc(const char *in, char *buf, size_t len)
{
    js_log_escape(in, buf, len);
    return buf;
}

size_t js_log_redact(const char *opts, char *out, size_t outlen)
{
    if (!outlen) return 0;
    size_t o = 0;
    for (const char *p = opts; *p;) {
        size_t n = strcspn(p, ",");
        const char *show = p;
        size_t k = n;
        if (n >= 6 && strncmp(p, "token=", 6) == 0) show = "token=***", k = 9;
        if (o + k + 2 > outlen) break;
        if (o) out[o++] = ',';
        memcpy(out + o, show, k);
        o += k;
        p += n;
        if (*p == ',') p++;
    }
    out[o] = 0;
    return o;
}

/* Write one line "[jsampler] LEVEL: text" with text escaped (no control character reaches the sink). */
static void emit(js_loglevel lvl, const char *text)
{
    char esc[JS_LOG_LINE_MAX];
    js_log_escape(text, esc, sizeof esc);
    pthread_mutex_lock(&log_lock);
    FILE *out = log_file ? log_file : stderr;
    fprintf(out, "[jsampler] %s: %s\n", level_tag(lvl), esc);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
}

int js_log_set_file(const char *path, char *err, size_t errlen)
{
    FILE *f;
    if (!path || !*path) return 0;
    if (open_log(path, &f, err, errlen) != 0) return -1;
    pthread_mutex_lock(&log_lock);
    if (log_file) fclose(log_file);
    log_file = f;
    pthread_mutex_unlock(&log_lock);
    return 0;
}

void js_log_set_level(js_loglevel level)
{
    pthread_mutex_lock(&log_lock);
    log_level = level;
    pthread_mutex_unlock(&log_lock);
}

/* Format and write one line, prefixed, newline-terminated, escaped. */
void js_log(js_loglevel lvl, const char *fmt, ...)
{
    if (lvl < log_level || lvl >= JS_LOG_NONE) return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    emit(lvl, line);
}

void js_log_lines(js_loglevel lvl, const char *text)
{
    if (lvl < log_level || lvl >= JS_LOG_NONE) return;
    char line[2048];
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        if (n) emit(lvl, line);
        p += n;
        if (*p) p++;
    }
}

/* Back to stderr. */
void js_log_close(void)
{
    pthread_mutex_lock(&log_lock);
    if (log_file) fclose(log_file);
    log_file = NULL;
    pthread_mutex_unlock(&log_lock);
}
