/* safefile.c - see safefile.h. */
#include "util/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_TRIES 8 /* fresh temporary names tried before giving up */

const char *js_safe_strerror(int e)
{
    if (e == ELOOP) return "it is a symbolic link (not followed)";
    if (e == EISDIR) return "it is a directory";
    return strerror(e);
}

/* What is at path (lstat in st) says about writing there: 0 (nothing there, our own regular file, a character
 * device), or -1 with the reason in why. */
static int judge(const char *path, struct stat *st, int *exists, char *why, size_t whylen)
{
    *exists = 0;
    if (lstat(path, st) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    *exists = 1;
    if (S_ISLNK(st->st_mode)) snprintf(why, whylen, "it is a symbolic link (not followed)");
    else if (S_ISDIR(st->st_mode)) snprintf(why, whylen, "it is a directory");
    else if (S_ISCHR(st->st_mode)) return 0;
    else if (!S_ISREG(st->st_mode)) snprintf(why, whylen, "it is not a regular file (a FIFO, socket or block device)");
    else if (st->st_uid != geteuid())
        snprintf(why, whylen, "it belongs to uid %u, not to this process's uid %u (another user's file is never "
                 "replaced: remove it or choose another path)", (unsigned)st->st_uid, (unsigned)geteuid());
    else return 0;
    return -1;
}

/* The directory part of path ("." when there is none). */
static void dir_of(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, len, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
}

int js_safe_check(const char *what, const char *path, char *err, size_t errlen)
{
    char why[512], dir[JS_SAFE_PATH_MAX];
    struct stat st;
    int exists;
    if (!path[0] || strlen(path) >= JS_SAFE_PATH_MAX - 64) {
        snprintf(err, errlen, "cannot write %s '%s': %s", what, path, path[0] ? "path too long" : "empty path");
        return -1;
    }
    if (judge(path, &st, &exists, why, sizeof why) != 0) {
        snprintf(err, errlen, "cannot write %s '%s': %s", what, path, why);
        return -1;
    }
    if (exists && S_ISCHR(st.st_mode)) {
        if (access(path, W_OK) == 0) return 0;
        snprintf(err, errlen, "cannot write %s '%s': %s", what, path, strerror(errno));
        return -1;
    }
    dir_of(path, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write %s '%s': directory '%s' does not exist", what, path, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "cannot write %s '%s': directory '%s' is not writable (%s)", what, path, dir,
                 strerror(errno));
        return -1;
    }
    return 0;
}

/* Open an existing character device for writing in place; fd or -1 (errno set). */
static int open_device(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode))) { /* replaced since it was looked at */
        close(fd);
        errno = EEXIST;
        return -1;
    }
    return fd;
}

/* A name for the temporary file beside path: ".<name>.<pid>.<random>.tmp" in the same directory. */
static int temp_name(const char *path, char *out, size_t len)
{
    char dir[JS_SAFE_PATH_MAX];
    dir_of(path, dir, sizeof dir);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    unsigned long long r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r = (unsigned long long)ts.tv_nsec * 2654435761ULL ^ (unsigned long long)ts.tv_sec;
    }
    int n = snprintf(out, len, "%s/.%s.%d.%012llx.tmp", dir, base, (int)getpid(), r & 0xffffffffffffULL);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int js_safe_open(js_safe_file *f, const char *what, const char *path, js_safe_mode mode, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->what = what;
    if (!path[0] || strlen(path) >= JS_SAFE_PATH_MAX - 64) {
        snprintf(err, errlen, "cannot write %s '%s': %s", what, path, path[0] ? "path too long" : "empty path");
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    char why[512];
    struct stat st;
    for (int attempt = 0; attempt < TMP_TRIES; attempt++) {
        int exists;
        if (judge(path, &st, &exists, why, sizeof why) != 0) break;
        if (exists && S_ISCHR(st.st_mode)) {
            if ((f->fd = open_device(path)) >= 0) return 0;
            if (errno == EEXIST) continue;
            snprintf(why, sizeof why, "%s", strerror(errno));
            break;
        }
        if (mode == JS_SAFE_ATOMIC) {
            if (temp_name(path, f->tmp, sizeof f->tmp) != 0) {
                snprintf(why, sizeof why, "path too long");
                break;
            }
            f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (f->fd >= 0) {
                f->atomic = 1;
                return 0;
            }
        } else {
            if (exists && unlink(path) != 0 && errno != ENOENT) { /* our own earlier file: replaced, not reopened */
                snprintf(why, sizeof why, "cannot replace it: %s", strerror(errno));
                break;
            }
            f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (f->fd >= 0) return 0;
        }
        if (errno != EEXIST) { /* EEXIST: something appeared at the name meanwhile: judged again */
            char dir[JS_SAFE_PATH_MAX];
            dir_of(path, dir, sizeof dir);
            if (errno == ENOENT) snprintf(why, sizeof why, "directory '%.400s' does not exist", dir);
            else if (errno == EACCES || errno == EROFS)
                snprintf(why, sizeof why, "directory '%.400s' is not writable (%s)", dir, strerror(errno));
            else snprintf(why, sizeof why, "%s", strerror(errno));
            break;
        }
        snprintf(why, sizeof why, "another process keeps creating files at this name");
    }
    f->tmp[0] = 0;
    snprintf(err, errlen, "cannot write %s '%s': %s", what, path, why);
    return -1;
}

int js_safe_commit(js_safe_file *f, char *err, size_t errlen)
{
    int rc = 0;
    if (f->fd >= 0 && close(f->fd) != 0) {
        snprintf(err, errlen, "cannot write %s '%s': %s", f->what, f->path, strerror(errno));
        rc = -1;
    }
    f->fd = -1;
    if (rc == 0 && f->atomic) {
        char why[512];
        struct stat st;
        int exists;
        if (judge(f->path, &st, &exists, why, sizeof why) != 0) { /* a link or a stranger's file appeared */
            snprintf(err, errlen, "cannot write %s '%s': %s", f->what, f->path, why);
            rc = -1;
        } else if (rename(f->tmp, f->path) != 0) {
            snprintf(err, errlen, "cannot write %s '%s': %s", f->what, f->path, js_safe_strerror(errno));
            rc = -1;
        } else {
            f->tmp[0] = 0;
        }
    }
    if (rc != 0 && f->atomic && f->tmp[0]) unlink(f->tmp);
    f->atomic = 0;
    f->tmp[0] = 0;
    return rc;
}

void js_safe_abort(js_safe_file *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->atomic && f->tmp[0]) unlink(f->tmp);
    f->atomic = 0;
    f->tmp[0] = 0;
}

long js_read_small(const char *path, char *buf, size_t len)
{
    return js_read_fd(open(path, O_RDONLY | O_CLOEXEC), buf, len);
}

long js_read_fd(int fd, char *buf, size_t len)
{
    if (fd < 0) return -1;
    size_t n = 0;
    while (n < len - 1) {
        ssize_t r = read(fd, buf + n, len - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    return (long)n;
}

long long js_boot_time(void)
{
    char line[1024];
    long long btime = 0;
    FILE *f = fopen("/proc/stat", "re"); /* by lines: on a machine of many CPUs the file passes tens of kilobytes */
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &btime) == 1) break;
    if (f) fclose(f);
    return btime > 0 ? btime : 0;
}
