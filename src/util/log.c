/* log.c - see log.h. */
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* Replace the sink; a failed open keeps the previous one. */
int js_log_configure(js_loglevel level, const char *path, char *err, size_t errlen)
{
    FILE *f = NULL;
    if (path && *path) {
        /* Never through a symbolic link planted at the path; a new log is readable by its owner only. */
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        f = fd >= 0 ? fdopen(fd, "a") : NULL;
        if (!f && fd >= 0) close(fd);
        if (!f) {
            snprintf(err, errlen, "cannot open log file '%s': %s", path, strerror(errno));
            return -1;
        }
        setvbuf(f, NULL, _IOLBF, 0);
    }
    pthread_mutex_lock(&log_lock);
    if (log_file) fclose(log_file);
    log_file = f;
    log_level = level;
    pthread_mutex_unlock(&log_lock);
    return 0;
}

/* Format and write one line, prefixed, newline-terminated. */
void js_log(js_loglevel lvl, const char *fmt, ...)
{
    if (lvl < log_level || lvl >= JS_LOG_NONE) return;
    char line[2048];
    int n = snprintf(line, sizeof line, "[jsampler] %s: ", level_tag(lvl));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* One line whatever the text holds: messages quote what others sent (a backend's task id or status message, a
     * file name, a JVM's reply), and a newline or an escape sequence there would forge lines or drive a terminal. */
    for (char *c = line + n; *c; c++)
        if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f) *c = '?';
    pthread_mutex_lock(&log_lock);
    FILE *out = log_file ? log_file : stderr;
    fprintf(out, "%s\n", line);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
}

/* Back to stderr. */
void js_log_close(void)
{
    pthread_mutex_lock(&log_lock);
    if (log_file) fclose(log_file);
    log_file = NULL;
    pthread_mutex_unlock(&log_lock);
}
