/* attach.c - the attach handshake and the `load` request (see attach.h). */
#include "attach/attach.h"
#include "attach_parse_int.h"
#include "util/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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

/* The target's /tmp (util: js_attach_open_in) as an O_PATH descriptor; -1 with err. */
static int open_tmp(const js_target *t, char *err, size_t errlen)
{
    int fd = js_attach_open_in(t, "/tmp", O_PATH | O_DIRECTORY);
    if (fd < 0)
        snprintf(err, errlen, "cannot open /tmp of process %d%s: %s", t->pid,
                 t->root[0] ? " inside its root (a symbolic link there pointing out of it is not followed)" : "",
                 strerror(errno));
    return fd;
}

/* Name of the attach socket in the target's /tmp. */
static void socket_name(const js_target *t, char *buf, size_t len)
{
    snprintf(buf, len, ".java_pid%d", t->nspid);
}

/* 1 if the socket file exists in tmp (a link there does not count). */
static int socket_exists(const js_target *t, int tmp)
{
    char name[32];
    struct stat st;
    socket_name(t, name, sizeof name);
    return fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
}

/* The listener's socket file, opened as a path (not followed, if a link: a link put there in the meantime, by the
 * container, would lead connect anywhere) and checked to be a socket; its address through that descriptor in addr,
 * so that nothing is looked up again. The descriptor (close it after connect), or -1 with errno. */
static int socket_addr(const js_target *t, int tmp, struct sockaddr_un *addr)
{
    char name[32];
    struct stat st;
    socket_name(t, name, sizeof name);
    int fd = openat(tmp, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        close(fd);
        errno = ENOTSOCK;
        return -1;
    }
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    snprintf(addr->sun_path, sizeof addr->sun_path, "/proc/self/fd/%d", fd);
    return fd;
}

/* What a connect to the socket file at addr says: 0 if something accepted it, else its errno (ECONNREFUSED: nothing
 * listens there; ENOENT: the file went away; EAGAIN: a listener whose queue is full, so alive). Retried on EINTR. */
static int socket_probe(const struct sockaddr_un *addr)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    int rc, e = 0, tries = 0;
    do rc = connect(fd, (const struct sockaddr *)addr, sizeof *addr);
    while (rc != 0 && errno == EINTR && ++tries < 3);
    if (rc != 0) e = errno;
    close(fd);
    return e;
}

js_attach_code js_attach_clear_stale(const js_target *t, char *err, size_t errlen)
{
    struct sockaddr_un addr;
    struct stat a, b;
    char name[32], why[96];
    int tmp = open_tmp(t, err, errlen);
    if (tmp < 0) return JS_AT_SYSTEM;
    socket_name(t, name, sizeof name);
    js_attach_code rc = JS_AT_OK;
    int sock = -1;
    if (fstatat(tmp, name, &a, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(a.st_mode) || a.st_uid == t->uid) goto out;
    if ((sock = socket_addr(t, tmp, &addr)) < 0) goto out; /* gone, or no longer a socket: nothing to clear */
    int probe = socket_probe(&addr);
    if (probe == ENOENT) goto out; /* gone since the stat: nothing to clear */
    if (probe == ECONNREFUSED) { /* unlink only the file probed: the JVM may have just put its own there */
        if (fstatat(tmp, name, &b, AT_SYMLINK_NOFOLLOW) != 0 || b.st_ino != a.st_ino || b.st_dev != a.st_dev) goto out;
        if (unlinkat(tmp, name, 0) == 0) goto out;
        snprintf(why, sizeof why, "unlink: %s", strerror(errno));
    } else if (probe == 0) {
        snprintf(why, sizeof why, "a listener answers on it");
    } else {
        snprintf(why, sizeof why, "it is not known to be dead: connect: %s", strerror(probe));
    }
    snprintf(err, errlen, "%s/tmp/%s belongs to uid %u, not to uid %u of process %d: a file left by an earlier process "
             "with this pid, which keeps the JVM from starting its attach listener, and it cannot be removed (%s); "
             "remove it as root", t->root, name, (unsigned)a.st_uid, (unsigned)t->uid, t->pid, why);
    rc = JS_AT_PERMISSION;
out:
    if (sock >= 0) close(sock);
    close(tmp);
    return rc;
}

/* Create the trigger file .attach_pid<nspid> in the JVM's working directory, else in its /tmp (tmp): created
 * exclusively, or one of ours left there before. Its directory is returned in *dir (unlink from there). 0 or -1. */
static int create_trigger(const js_target *t, int tmp, int *dir, char *name, size_t len)
{
    char cwd[64];
    snprintf(cwd, sizeof cwd, "/proc/%d/cwd", t->pid);
    snprintf(name, len, ".attach_pid%d", t->nspid);
    for (int i = 0; i < 2; i++) {
        int d = i == 0 ? open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC) : dup(tmp);
        if (d < 0) continue;
        struct stat st;
        int fd = openat(d, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        int mine = fd >= 0 ? fstat(fd, &st) == 0 && st.st_uid == geteuid()
                           : errno == EEXIST && fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                                 S_ISREG(st.st_mode) && st.st_uid == geteuid();
        if (fd >= 0) close(fd);
        if (mine) {
            *dir = d;
            return 0;
        }
        if (fd >= 0) unlinkat(d, name, 0); /* an odd filesystem gave it another owner: the JVM would ignore it */
        close(d);
    }
    return -1;
}

/* When process pid started, in seconds since the epoch (the boot time of /proc/stat and the start of its stat); 0 if
 * unknown. */
static long long process_start(int pid)
{
    char path[64], buf[1024];
    long long btime = js_boot_time(), ticks = -1;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (js_read_small(path, buf, sizeof buf) <= 0) return 0;
    const char *p = strrchr(buf, ')'); /* fields after the name; starttime is the 22nd */
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ') field++;
    if (p && sscanf(p, "%lld", &ticks) != 1) ticks = -1;
    long hz = sysconf(_SC_CLK_TCK);
    return btime > 0 && ticks >= 0 && hz > 0 ? btime + ticks / hz : 0;
}

/* A socket at the listener's name made before the process started: left by an earlier process with this pid (a JVM
 * killed before it could remove it), which nothing listens on. Removed, that inode only; 1 if removed. */
static int drop_dead_socket(const js_target *t, int tmp)
{
    struct stat a, b;
    char name[32];
    socket_name(t, name, sizeof name);
    long long started = process_start(t->pid);
    if (!started || fstatat(tmp, name, &a, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(a.st_mode) ||
        (long long)a.st_mtime >= started)
        return 0;
    if (fstatat(tmp, name, &b, AT_SYMLINK_NOFOLLOW) != 0 || b.st_ino != a.st_ino || b.st_dev != a.st_dev) return 0;
    return unlinkat(tmp, name, 0) == 0;
}

/* Bring the listener up: trigger + SIGQUIT, then wait for the socket with growing sleeps. */
static js_attach_code start_listener(const js_target *t, int tmp, int timeout_ms, char *err, size_t errlen)
{
    if (socket_exists(t, tmp) && !drop_dead_socket(t, tmp)) return JS_AT_OK;
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
    char trigger[32];
    int dir = -1;
    if (create_trigger(t, tmp, &dir, trigger, sizeof trigger) != 0) {
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
            if (socket_exists(t, tmp)) {
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
    unlinkat(dir, trigger, 0);
    close(dir);
    return rc;
}

/* Is the socket in tmp the JVM's own, as jcmd checks: a socket owned by the JVM's user, closed to group and
 * others? 0, or -1 with err. Checked again on the connection itself (check_peer): this one names the file. */
static int check_socket_file(const js_target *t, int tmp, char *err, size_t errlen)
{
    char name[32];
    struct stat st;
    socket_name(t, name, sizeof name);
    if (fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        snprintf(err, errlen, "the attach socket %s/tmp/%s of process %d is gone: %s", t->root, name, t->pid,
                 strerror(errno));
        return -1;
    }
    const char *why = !S_ISSOCK(st.st_mode) ? "it is not a socket"
                      : st.st_uid != t->uid ? "it belongs to another user"
                      : (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) ? "group or others may use it"
                                                                               : NULL;
    if (!why) return 0;
    snprintf(err, errlen, "refusing the attach socket %s/tmp/%s (uid %u, mode %03o) of process %d (uid %u): %s; the "
             "JVM's own is a socket of its user with mode 600 (another process may have put this one there; remove "
             "it and try again)", t->root, name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), t->pid,
             (unsigned)t->uid, why);
    return -1;
}

/* Is the process at the other end of fd the JVM itself (SO_PEERCRED: its pid and user)? 0, or -1 with err. */
static int check_peer(const js_target *t, int fd, char *err, size_t errlen)
{
    struct ucred uc;
    socklen_t n = sizeof uc;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &n) != 0) {
        snprintf(err, errlen, "cannot tell who serves the attach socket of process %d: %s", t->pid, strerror(errno));
        return -1;
    }
    if (uc.pid == t->pid && uc.uid == t->uid) return 0;
    snprintf(err, errlen, "the attach socket of process %d (uid %u) is served by process %d (uid %u), not by the JVM: "
             "nothing was sent (remove the socket file and try again)", t->pid, (unsigned)t->uid, (int)uc.pid,
             (unsigned)uc.uid);
    return -1;
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

/* Connect, check that the JVM itself answers, send the v1 request, read the reply to EOF (or ECONNRESET) into
 * text. */
static js_attach_code exchange(const js_target *t, int tmp, const char *const args[4], int timeout_ms, char *text,
                               size_t textlen, char *err, size_t errlen)
{
    struct sockaddr_un addr;
    if (check_socket_file(t, tmp, err, errlen) != 0) return JS_AT_PERMISSION;
    int sock = socket_addr(t, tmp, &addr);
    if (sock < 0) {
        snprintf(err, errlen, "cannot connect to %s/tmp/.java_pid%d: %s", t->root, t->nspid, strerror(errno));
        return JS_AT_SYSTEM;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        close(sock);
        return JS_AT_SYSTEM;
    }
    struct timeval tv = {timeout_ms / 1000 + 30, 0}; /* the agent's own work (a dump) may take a while */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int connected = connect(fd, (struct sockaddr *)&addr, sizeof addr);
    int why = errno;
    close(sock);
    if (connected != 0) {
        close(fd);
        snprintf(err, errlen, "cannot connect to %s/tmp/.java_pid%d: %s", t->root, t->nspid, strerror(why));
        return why == EACCES || why == EPERM ? JS_AT_PERMISSION : JS_AT_SYSTEM;
    }
    if (check_peer(t, fd, err, errlen) != 0) { /* before a byte is sent: the options may carry a token */
        close(fd);
        return JS_AT_PERMISSION;
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
    int tmp = open_tmp(t, err, errlen);
    if (tmp < 0) return JS_AT_SYSTEM;
    js_attach_code rc = start_listener(t, tmp, timeout_ms, err, errlen);
    const char *args[4] = {"load", lib, "true", options};
    if (rc == JS_AT_OK) rc = exchange(t, tmp, args, timeout_ms, text, textlen, err, errlen);
    /* A JVM still starting answers before it is live, and loads agents once it is: asked again, every STEP_MS more,
     * within the attach timeout (jcmd gives up at once). */
    for (int waited = 0, step = STEP_MS; rc == JS_AT_OK && strstr(text, "only permitted in the live phase") &&
                                         waited < timeout_ms; waited += step, step += STEP_MS) {
        sleep_ms(step);
        rc = exchange(t, tmp, args, timeout_ms, text, textlen, err, errlen);
    }
    close(tmp);
    if (rc != JS_AT_OK) return rc;
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

/* A random 48-bit number in hex, for names others must not guess. */
static void random_hex(char *buf, size_t len)
{
    unsigned long long r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r = (unsigned long long)ts.tv_nsec * 2654435761ULL ^ (unsigned long long)getpid();
    }
    snprintf(buf, len, "%012llx", r & 0xffffffffffffULL);
}

/* Copy src to name in directory dir: a new file (exclusive, 0600: the JVM runs as its owner) renamed over name,
 * which is replaced if present (a link there is replaced, never followed). 0 or -1 with errno. */
static int copy_file(const char *src, int dir, const char *name)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    char tmp[JS_AT_PATH_MAX], rnd[16];
    random_hex(rnd, sizeof rnd);
    snprintf(tmp, sizeof tmp, ".%s.%d.%s", name, (int)getpid(), rnd);
    int out = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
    if (rc == 0 && renameat(dir, tmp, dir, name) != 0) rc = -1;
    if (rc != 0) {
        e = errno;
        unlinkat(dir, tmp, 0);
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
    /* Another mount namespace (a container): the JVM cannot see our file; copy it into its /tmp, reached inside
     * its root (a link the container planted cannot send the copy to a path of ours). */
    const char *base = strrchr(lib, '/') + 1;
    snprintf(target_path, len, "/tmp/%s", base);
    int tmp = open_tmp(t, err, errlen);
    if (tmp < 0) return JS_AT_LIBRARY;
    int rc = copy_file(lib, tmp, base);
    int e = errno;
    close(tmp);
    if (rc != 0) {
        snprintf(err, errlen, "cannot copy the agent library into the target's /tmp (%s%s): %s", t->root, target_path,
                 strerror(e));
        return JS_AT_LIBRARY;
    }
    return JS_AT_OK;
}

void js_attach_tmp_name(const js_target *t, const char *what, char *name, size_t len)
{
    char rnd[16];
    random_hex(rnd, sizeof rnd);
    snprintf(name, len, "/tmp/.jsampler-%s-%d-%d-%s", what, t->nspid, (int)getpid(), rnd);
}

void js_attach_reply_name(const js_target *t, char *name, size_t len)
{
    js_attach_tmp_name(t, "reply", name, len);
}

int js_attach_take_file(const js_target *t, const char *name)
{
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    char err[256];
    int tmp = open_tmp(t, err, sizeof err);
    if (tmp < 0) return -1;
    int fd = openat(tmp, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == t->uid; /* the agent's */
    if (fd >= 0) unlinkat(tmp, base, 0);
    close(tmp);
    if (!ok && fd >= 0) close(fd);
    return ok ? fd : -1;
}

int js_attach_take_reply(const js_target *t, const char *name, char *out, size_t len)
{
    out[0] = 0;
    int fd = js_attach_take_file(t, name);
    if (fd < 0) return -1;
    size_t got = 0;
    ssize_t r;
    while (got < len - 1 && (r = read(fd, out + got, len - 1 - got)) > 0) got += (size_t)r;
    out[got] = 0;
    close(fd);
    return 0;
}
