/* log.h - one-line log messages "[jsampler] LEVEL: text" to stderr or a log= file. Control characters in the
 * text (newlines, escapes; tab excepted) are written as '?', so a message is one line whatever it quotes.
 *
 * Thread-safe (a mutex), so never call from a signal handler. The sink is process-wide:
 * there is one agent per process. Every message is escaped on its way out (js_log_escape): text
 * that came from elsewhere (a server, a thread name) cannot start a line of its own or send
 * terminal control sequences.
 */
#ifndef JS_LOG_H
#define JS_LOG_H

#include <stddef.h>

typedef enum { JS_LOG_DEBUG = 0, JS_LOG_INFO, JS_LOG_WARN, JS_LOG_ERROR, JS_LOG_NONE } js_loglevel;

#define JS_LOG_LINE_MAX 4096 /* one escaped message at most, "..." marking a cut */

/* Set level and sink (path NULL or "" = stderr). -1 with err if the file can't be opened. */
int js_log_configure(js_loglevel level, const char *path, char *err, size_t errlen);
/* Only the sink: a log file at path (NULL or "": unchanged); the level is kept. -1 with err, sink unchanged. */
int js_log_set_file(const char *path, char *err, size_t errlen);
/* Only the level; the sink is kept. */
void js_log_set_level(js_loglevel level);
/* Write one line if lvl passes the threshold. */
void js_log(js_loglevel lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close a log file sink (back to stderr). */
void js_log_close(void);
/* Write each line of text (split at newlines) as one message of its own. For texts made of our own lines. */
void js_log_lines(js_loglevel lvl, const char *text);

/* Copy in to out (NUL-terminated, cut at outlen with "..."), control characters made visible: newline, CR and
 * tab as \n \r \t, the others, DEL, C1 controls and bytes that are not UTF-8 as \xNN. Returns the length. */
size_t js_log_escape(const char *in, char *out, size_t outlen);
/* js_log_escape into buf; returns buf (for "%s" arguments). */
const char *js_log_esc(const char *in, char *buf, size_t len);
/* Copy an option string with every secret's value hidden (token=*** ), for messages. Returns the length. */
size_t js_log_redact(const char *opts, char *out, size_t outlen);

#define js_debug(...) js_log(JS_LOG_DEBUG, __VA_ARGS__)
#define js_info(...) js_log(JS_LOG_INFO, __VA_ARGS__)
#define js_warn(...) js_log(JS_LOG_WARN, __VA_ARGS__)
#define js_error(...) js_log(JS_LOG_ERROR, __VA_ARGS__)

#endif
