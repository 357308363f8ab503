/* safefile.h - how every file the agent and the CLI write is created: profiles, recordings, converted
 * outputs, logs. One set of rules, so a file in a shared directory (a sticky, world-writable /tmp) can never
 * be turned against its writer:
 *
 *  - the last component of the path is never followed: a symbolic link there is refused;
 *  - a new file is created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW), mode 0600, owned by the writer;
 *  - an existing path is written only when it is a regular file of the same user, which is then replaced by a
 *    new file (never opened: its inode, links and mode are left alone), or a character device (/dev/null,
 *    /dev/full), which is written in place. Another user's file, a FIFO, a socket or a directory is refused;
 *  - JS_SAFE_ATOMIC writes a temporary file beside the path and renames it over the path when complete, so a
 *    reader sees the old file or the new one and a failed write leaves the old one; JS_SAFE_STREAM creates the
 *    path itself (the old one removed first), for recordings read while they grow or after a crash.
 *
 * Every failure is one line in the caller's buffer naming the path and the reason. Not for signal handlers.
 */
#ifndef JS_SAFEFILE_H
#define JS_SAFEFILE_H

#include <stddef.h>

#define JS_SAFE_PATH_MAX 4096

typedef enum { JS_SAFE_STREAM = 0, JS_SAFE_ATOMIC = 1 } js_safe_mode;

typedef struct {
    int fd;                        /* where to write; -1 when closed */
    int atomic;                    /* fd is the temporary file tmp, renamed over path by js_safe_commit */
    const char *what;              /* "output", "JFR", ...: how messages name the file */
    char path[JS_SAFE_PATH_MAX];
    char tmp[JS_SAFE_PATH_MAX];
} js_safe_file;

/* Whether path may be written by the rules above, creating nothing: its directory exists and is writable, and
 * what is at path (if anything) may be replaced. 0, or -1 with err ("cannot write 'what' 'path': reason"). */
int js_safe_check(const char *what, const char *path, char *err, size_t errlen);

/* Create path for writing by the rules above; f->fd is the descriptor (close-on-exec). what (a string that
 * outlives f) names the file in messages. 0, or -1 with err. */
int js_safe_open(js_safe_file *f, const char *what, const char *path, js_safe_mode mode, char *err, size_t errlen);

/* Close f; an atomic file is renamed over its path. 0, or -1 with err (the temporary file is removed). */
int js_safe_commit(js_safe_file *f, char *err, size_t errlen);

/* Close f without keeping an atomic file's new content (its temporary file is removed). */
void js_safe_abort(js_safe_file *f);

/* Read at most len - 1 bytes of the file at path (a /proc file, a small text) into buf, NUL-terminated: the length
 * read, or -1 if it cannot be opened. */
long js_read_small(const char *path, char *buf, size_t len);
/* The same from descriptor fd, which it closes; -1 if fd < 0. */
long js_read_fd(int fd, char *buf, size_t len);
/* The boot time (btime of /proc/stat) in seconds since the epoch, or 0 if unknown. */
long long js_boot_time(void);

/* Why an open failed with errno e, in words a user acts on. */
const char *js_safe_strerror(int e);

#endif
