/* log.h - one-line log messages "[jsampler] LEVEL: text" to stderr or a log= file. Control characters in the
 * text (newlines, escapes; tab excepted) are written as '?', so a message is one line whatever it quotes.
 *
 * Thread-safe (a mutex), so never call from a signal handler. The sink is process-wide:
 * there is one agent per process.
 */
#ifndef JS_LOG_H
#define JS_LOG_H

#include <stddef.h>

typedef enum { JS_LOG_DEBUG = 0, JS_LOG_INFO, JS_LOG_WARN, JS_LOG_ERROR, JS_LOG_NONE } js_loglevel;

/* Set level and sink (path NULL or "" = stderr). -1 with err if the file can't be opened. */
int js_log_configure(js_loglevel level, const char *path, char *err, size_t errlen);
/* Write one line if lvl passes the threshold. */
void js_log(js_loglevel lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close a log file sink (back to stderr). */
void js_log_close(void);

#define js_debug(...) js_log(JS_LOG_DEBUG, __VA_ARGS__)
#define js_info(...) js_log(JS_LOG_INFO, __VA_ARGS__)
#define js_warn(...) js_log(JS_LOG_WARN, __VA_ARGS__)
#define js_error(...) js_log(JS_LOG_ERROR, __VA_ARGS__)

#endif
