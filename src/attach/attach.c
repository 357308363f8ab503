/* attach.c - the attach handshake and the `load` request (see attach.h). */
#include "attach/attach.h"
#include "attach_parse_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define ARG_MAX_LEN 1024 /* the listener drops a request with a longer argument */
#define STEP_MS 20       /* waits grow by this much each time: 20, 40, 60 ms ... */

js_attach_code js_attach_become(const js_target *t, char *err, size_t errlen)
{
    if (geteuid() == t->uid && getegid() == t->gid) return JS_AT_OK;
    if (geteuid() != 0) {
        snprintf(err, errlen, "process %d runs as uid %u gid %u and we are uid %u: the JVM accepts only its own user "
                 "(run jsampler as that user, e.g. 'sudo -u#%u jsampler ...', or as root)",
                 t->pid, (unsigned)t->uid, (unsigned)t->gid, (unsigned)geteuid(), (unsigned)t->uid);
        return JS_AT_PERMISSION;
    }
    if (setegid(t->gid) != 0 || seteuid(t->uid) != 0) { /* gid first: root is needed to change it */
        snprintf(err, errlen, "cannot take uid %u gid %u of process %d: %s", (unsigned)t->uid, (unsigned)t->gid,
                 t->pid, strerror(errno));
        return JS_AT_PERMISSION;
    }
    return JS_AT_OK;
}

/* Sleep ms milliseconds. */
static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Path of the attach socket as seen from here. */
static void socket_path(const js_target *t, char *buf, size_t len)
{
    snprintf(buf, len, "%s/tmp/.java_pid%d", t->root, t->nspid);
}

/* 1 if the socket file exists. */
static int socket_exists(const js_target *t)
{
    char p[JS_AT_PATH_MAX];
    struct stat st;
    socket_path(t, p, sizeof p);
    return stat(p, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The listener's address in addr; 0, or -1 with err when the path does not fit. */
static int socket_addr(const js_target *t, struct sockaddr_un *addr, char *err, size_t errlen)
{
    char path[JS_AT_PATH_MAX];
    socket_path(t, path, sizeof path);
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr->sun_path) {
        snprintf(err, errlen, "attach socket path too long: %s", path);
        return -1;
    }
    memcpy(addr->sun_path, path, strlen(path) + 1);
    return 0;
}

/* 1 if nothing listens on the socket file at addr (connect refused). */
static int socket_dead(const struct sockaddr_un *addr)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    int dead = connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0 && errno == ECONNREFUSED;
    close(fd);
    return dead;
}

js_attach_code js_attach_clear_stale(const js_target *t, char *err, size_t errlen)
{
    struct sockaddr_un addr;
    struct stat a, b;
    if (socket_addr(t, &addr, err, errlen) != 0) return JS_AT_SYSTEM;
    if (lstat(addr.sun_path, &a) != 0 || !S_ISSOCK(a.st_mode) || a.st_uid == t->uid) return JS_AT_OK;
    const char *why = "a listener answers on it";
    if (socket_dead(&addr)) { /* unlink only the file probed: the JVM may have just put its own there */
        if (lstat(addr.sun_path, &b) != 0 || b.st_ino != a.st_ino || b.st_dev != a.st_dev) return JS_AT_OK;
        if (unlink(addr.sun_path) == 0) return JS_AT_OK;
        why = strerror(errno);
    }
    snprintf(err, errlen, "%s belongs to uid %u, not to uid %u of process %d: a file left by an earlier process with "
             "this pid, which keeps the JVM from starting its attach listener, and it cannot be removed (%s); remove "
             "it as root", addr.sun_path, (unsigned)a.st_uid, (unsigned)t->uid, t->pid, why);
    return JS_AT_PERMISSION;
}

/* Create the trigger file in the JVM's working directory, else in its /tmp; path written to buf. 0 or -1. */
static int create_trigger(const js_target *t, char *buf, size_t len)
{
    for (int i = 0; i < 2; i++) {
        if (i == 0) snprintf(buf, len, "/proc/%d/cwd/.attach_pid%d", t->pid, t->nspid);
        else snprintf(buf, len, "%s/tmp/.attach_pid%d", t->root, t->nspid);
        int fd = open(buf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0660);
        if (fd < 0) continue;
        struct stat st;
        int mine = fstat(fd, &st) == 0 && st.st_uid == geteuid();
        close(fd);
        if (mine) return 0;
        unlink(buf); /* an odd filesystem gave it another owner: the JVM would ignore it */
    }
    buf[0] = 0;
    return -1;
}

/* Bring the listener up: trigger + SIGQUIT, then wait for the socket with growing sleeps. */
static js_attach_code start_listener(const js_target *t, int timeout_ms, char *err, size_t errlen)
{
    if (socket_exists(t)) return JS_AT_OK;
    if (t->disabled) {
        snprintf(err, errlen, "process %d was started with -XX:+DisableAttachMechanism: it cannot be attached to; "
                 "restart it without that flag, or profile it from start-up with -agentpath", t->pid);
        return JS_AT_DISABLED;
    }
    if (!t->catches_quit) { /* SIGQUIT would kill it: a JVM still starting, run with -Xrs, or not a JVM */
        snprintf(err, errlen, "process %d does not handle SIGQUIT (a JVM still starting, or one run with -Xrs), so "
                 "its attach listener cannot be started; sending the signal would kill it", t->pid);
        return JS_AT_PROTOCOL;
    }
    char trigger[JS_AT_PATH_MAX];
    if (create_trigger(t, trigger, sizeof trigger) != 0) {
        snprintf(err, errlen, "cannot create the attach trigger file in the working directory or /tmp of process %d: %s",
                 t->pid, strerror(errno));
        return JS_AT_SYSTEM;
    }
    js_attach_code rc = JS_AT_TIMEOUT;
    if (kill(t->pid, SIGQUIT) != 0) {
        snprintf(err, errlen, "cannot signal process %d: %s", t->pid, strerror(errno));
        rc = errno == ESRCH ? JS_AT_NO_PROCESS : JS_AT_PERMISSION;
    } else {
        for (int waited = 0, step = STEP_MS; waited < timeout_ms; waited += step, step += STEP_MS) {
            sleep_ms(step);
            if (socket_exists(t)) {
                rc = JS_AT_OK;
                break;
            }
            if (kill(t->pid, 0) != 0 && errno == ESRCH) {
                snprintf(err, errlen, "process %d ended while attaching", t->pid);
                rc = JS_AT_NO_PROCESS;
                break;
            }
        }
        if (rc == JS_AT_TIMEOUT)
            snprintf(err, errlen, "process %d did not start its attach listener within %d ms%s; try again, or give "
                     "more time with --timeout", t->pid, timeout_ms,
                     t->stopped ? " (the process is stopped: SIGCONT it first)"
                                : " (the JVM may be busy in a safepoint or a long GC)");
    }
    unlink(trigger);
    return rc;
}

/* Write all of buf; 0 or -1. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Connect, send the v1 request, read the reply to EOF (or ECONNRESET) into text. */
static js_attach_code exchange(const js_target *t, const char *const args[4], int timeout_ms, char *text,
                               size_t textlen, char *err, size_t errlen)
{
    struct sockaddr_un addr;
    if (socket_addr(t, &addr, err, errlen) != 0) return JS_AT_SYSTEM;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return JS_AT_SYSTEM;
    }
    struct timeval tv = {timeout_ms / 1000 + 30, 0}; /* the agent's own work (a dump) may take a while */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        close(fd);
        snprintf(err, errlen, "cannot connect to %s: %s", addr.sun_path, strerror(e));
        return e == EACCES || e == EPERM ? JS_AT_PERMISSION : JS_AT_SYSTEM;
    }
    char req[4 * (ARG_MAX_LEN + 1) + 4];
    size_t n = 0;
    req[n++] = '1', req[n++] = 0;
    for (int i = 0; i < 4; i++) {
        size_t k = strlen(args[i]);
        memcpy(req + n, args[i], k + 1);
        n += k + 1;
    }
    if (write_all(fd, req, n) != 0) {
        snprintf(err, errlen, "cannot send the attach request: %s", strerror(errno));
        close(fd);
        return JS_AT_SYSTEM;
    }
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fd, text + got, textlen - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == ECONNRESET) break;
        if (r < 0) {
            int e = errno;
            close(fd);
            if (e == EAGAIN)
                snprintf(err, errlen, "process %d accepted the attach connection but did not answer in %d s (the JVM "
                         "may be stopped, or busy in a long safepoint or GC)", t->pid, (int)tv.tv_sec);
            else snprintf(err, errlen, "no reply from process %d: %s", t->pid, strerror(e));
            return e == EAGAIN ? JS_AT_TIMEOUT : JS_AT_SYSTEM;
        }
        if (r == 0 || (got += (size_t)r) >= textlen - 1) break;
    }
    text[got] = 0;
    close(fd);
    if (got == 0) { /* the listener closes on peers of another user without a word */
        snprintf(err, errlen, "process %d closed the attach connection without a reply (the JVM accepts only its own "
                 "uid and gid, or root)", t->pid);
        return JS_AT_PERMISSION;
    }
    return JS_AT_OK;
}

js_attach_code js_attach_load(const js_target *t, const char *lib, const char *options, int timeout_ms, int *agent_rc,
                              char *text, size_t textlen, char *err, size_t errlen)
{
    *agent_rc = -1;
    text[0] = 0;
    if (strlen(lib) > ARG_MAX_LEN || strlen(options) > ARG_MAX_LEN) {
        snprintf(err, errlen, "the library path and the options must each be at most %d bytes", ARG_MAX_LEN);
        return JS_AT_LIBRARY;
    }
    if (t->stopped) { /* it could neither start a listener nor answer one */
        snprintf(err, errlen, "process %d is stopped (SIGSTOP, or a debugger holds it): SIGCONT it first", t->pid);
        return JS_AT_TIMEOUT;
    }
    js_attach_code rc = start_listener(t, timeout_ms, err, errlen);
    if (rc != JS_AT_OK) return rc;
    const char *args[4] = {"load", lib, "true", options};
    if ((rc = exchange(t, args, timeout_ms, text, textlen, err, errlen)) != JS_AT_OK) return rc;
    return js_attach_load_reply(text, t->pid, lib, agent_rc, err, errlen);
}

/* A decimal int at s (leading blanks and a sign allowed, then at least one digit, the rest ignored); 0, or -1 if
 * there is none or it is out of range. */
static int leading_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno || v < INT_MIN || v > INT_MAX) return -1;
    *out = (int)v;
    return 0;
}

js_attach_code js_attach_load_reply(const char *text, int pid, const char *lib, int *agent_rc, char *err,
                                    size_t errlen)
{
    /* "<status>\n" then, for a loaded agent, "return code: N"; anything else is the JVM's error text. */
    int status = -1;
    const char *body = strchr(text, '\n');
    body = body ? body + 1 : "";
    if (leading_int(text, &status) == 0 && status == 0 && strncmp(body, "return code: ", 13) == 0 &&
        leading_int(body + 13, agent_rc) == 0)
        return JS_AT_OK;
    char first[512];
    snprintf(first, sizeof first, "%s", body[0] ? body : text);
    first[strcspn(first, "\n")] = 0;
    for (char *c = first; *c; c++) /* the JVM's words in our one-line message: no control characters */
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    if (strstr(body, "Dynamic agent loading is not enabled"))
        snprintf(err, errlen, "process %d refuses dynamic agents (-XX:-EnableDynamicAgentLoading): restart it "
                 "without that flag, or use -agentpath", pid);
    else if (strstr(body, "was not loaded"))
        snprintf(err, errlen, "process %d could not load the agent library %s: %s", pid, lib, first);
    else snprintf(err, errlen, "process %d refused the attach request: %s", pid, first);
    return strstr(body, "was not loaded") ? JS_AT_LIBRARY : JS_AT_PROTOCOL;
}

/* Copy src to dst (created 0644, replaced if present); 0 or -1 with errno. */
static int copy_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    char tmp[JS_AT_PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.%d", dst, (int)getpid());
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return -1;
    }
    char buf[65536];
    ssize_t r;
    int rc = 0;
    while ((r = read(in, buf, sizeof buf)) > 0)
        if (write_all(out, buf, (size_t)r) != 0) rc = -1;
    if (r < 0) rc = -1;
    int e = errno;
    close(in);
    if (close(out) != 0) rc = -1;
    if (rc == 0 && rename(tmp, dst) != 0) rc = -1;
    if (rc != 0) {
        e = errno;
        unlink(tmp);
    }
    errno = e;
    return rc;
}

js_attach_code js_attach_place_library(const js_target *t, const char *lib, char *target_path, size_t len, char *err,
                                       size_t errlen)
{
    if (lib[0] != '/') {
        snprintf(err, errlen, "agent library path '%s' is not absolute: the JVM resolves it from its own working "
                 "directory (give an absolute path)", lib);
        return JS_AT_LIBRARY;
    }
    if (!t->other_mnt) {
        if (faccessat(AT_FDCWD, lib, R_OK, AT_EACCESS) != 0) {
            snprintf(err, errlen, "agent library %s is not readable by uid %u, the user of process %d (%s): make it "
                     "and its directories readable, or put it elsewhere", lib, (unsigned)geteuid(), t->pid,
                     strerror(errno));
            return JS_AT_LIBRARY;
        }
        snprintf(target_path, len, "%s", lib);
        return JS_AT_OK;
    }
    /* Another mount namespace (a container): the JVM cannot see our file; copy it into its /tmp. */
    const char *base = strrchr(lib, '/') + 1;
    char dst[JS_AT_PATH_MAX];
    snprintf(target_path, len, "/tmp/%s", base);
    snprintf(dst, sizeof dst, "%s%s", t->root, target_path);
    if (copy_file(lib, dst) != 0) {
        snprintf(err, errlen, "cannot copy the agent library into the target's /tmp (%s): %s", dst, strerror(errno));
        return JS_AT_LIBRARY;
    }
    return JS_AT_OK;
}
