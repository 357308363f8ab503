/* attach_proc.c - what /proc tells about a target JVM (see attach.h). */
#include "attach/attach.h"
#include "util/safefile.h"
#include "attach_parse_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *js_attach_strerror(js_attach_code c)
{
    switch (c) {
    case JS_AT_OK: return "ok";
    case JS_AT_NO_PROCESS: return "no such process";
    case JS_AT_NOT_JVM: return "not a HotSpot JVM";
    case JS_AT_PERMISSION: return "permission denied";
    case JS_AT_DISABLED: return "attach disabled in the target";
    case JS_AT_TIMEOUT: return "attach timed out";
    case JS_AT_LIBRARY: return "agent library unusable";
    case JS_AT_PROTOCOL: return "attach refused";
    case JS_AT_SYSTEM: return "system error";
    }
    return "unknown error";
}

/* Open path relative to dirfd with every step kept inside dirfd, as if it were "/": symbolic links and ".." are
 * resolved against it, never against our own root (openat2 RESOLVE_IN_ROOT); without openat2 (kernels before
 * 5.6) each component is opened with O_NOFOLLOW, so any link at all is refused. fd or -1 with errno. */
static int open_beneath(int dirfd, const char *path, int flags)
{
    struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = RESOLVE_IN_ROOT |
                                                                                     RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS) return fd;
    char part[JS_AT_PATH_MAX];
    int cur = dup(dirfd);
    for (const char *p = path; cur >= 0 && *p;) {
        while (*p == '/') p++;
        size_t n = strcspn(p, "/");
        if (!n) break;
        if (n >= sizeof part || (n == 2 && p[0] == '.' && p[1] == '.')) {
            close(cur);
            errno = EPERM;
            return -1;
        }
        memcpy(part, p, n);
        part[n] = 0;
        p += n;
        while (*p == '/') p++;
        int next = openat(cur, part, (*p ? O_PATH | O_DIRECTORY : flags) | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(cur);
        errno = e;
        cur = next;
    }
    return cur;
}

int js_attach_open_in(const js_target *t, const char *path, int flags)
{
    if (!t->root[0]) return open(path, flags | O_CLOEXEC);
    int root = open(t->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return -1;
    int fd = open_beneath(root, path, flags);
    int e = errno;
    close(root);
    errno = e;
    return fd;
}

/* Read at most len-1 bytes of a file as the target sees it; length read, or -1. */
static ssize_t read_in(const js_target *t, const char *path, char *buf, size_t len)
{
    return js_read_fd(js_attach_open_in(t, path, O_RDONLY | O_NONBLOCK), buf, len);
}

/* Replaces control characters in s by '?': text from a target is printed to a terminal (`list`, warnings). */
static void no_controls(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* The value after "key:" on its line of a status text, or NULL. */
static const char *status_field(const char *status, const char *key)
{
    size_t k = strlen(key);
    for (const char *l = status; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, key, k) == 0 && l[k] == ':') return l + k + 1;
    return NULL;
}

/* Fill ids, nspid, signal and run state from /proc/<pid>/status; -1 if it is gone. */
static int read_status(js_target *t)
{
    char path[64], st[8192];
    snprintf(path, sizeof path, "/proc/%d/status", t->pid);
    if (js_read_small(path, st, sizeof st) <= 0) return -1;
    js_target_parse_status(st, t);
    return 0;
}

void js_target_parse_status(const char *st, js_target *t)
{
    unsigned long a, b;
    const char *v = status_field(st, "Uid");
    if (v && sscanf(v, "%lu %lu", &a, &b) == 2) t->uid = (uid_t)b;
    v = status_field(st, "Gid");
    if (v && sscanf(v, "%lu %lu", &a, &b) == 2) t->gid = (gid_t)b;
    t->nspid = t->pid;
    if ((v = status_field(st, "NStgid")) != NULL) { /* the last number is the innermost namespace's pid */
        const char *end = strchr(v, '\n');
        for (const char *p = v; *p && (!end || p < end); p++)
            if (isdigit((unsigned char)*p) && (p == v || !isdigit((unsigned char)p[-1]))) t->nspid = atoi(p);
    }
    unsigned long long cgt = 0, ign = 0;
    if ((v = status_field(st, "SigCgt")) != NULL) cgt = strtoull(v, NULL, 16);
    if ((v = status_field(st, "SigIgn")) != NULL) ign = strtoull(v, NULL, 16);
    t->catches_quit = (cgt & 0x4) && !(ign & 0x4); /* SIGQUIT = 3: bit 2 */
    if ((v = status_field(st, "State")) != NULL) {
        while (*v == ' ' || *v == '\t') v++;
        t->stopped = *v == 'T' || *v == 't';
    }
}

/* 1 if libjvm.so is mapped, 0 if not, -1 if the maps cannot be read. */
static int maps_jvm(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    int found = js_target_maps_jvm(f);
    fclose(f);
    return found;
}

int js_target_maps_jvm(FILE *f)
{
    char line[1024];
    int found = 0, any = 0;
    while (!found && fgets(line, sizeof line, f)) {
        any = 1;
        found = strstr(line, "/libjvm.so") != NULL;
    }
    return any ? found : -1;
}

/* Main class or jar, and whether attach is disabled, from the command line. */
static void read_cmdline(js_target *t)
{
    char path[64], buf[16384];
    snprintf(path, sizeof path, "/proc/%d/cmdline", t->pid);
    ssize_t n = js_read_small(path, buf, sizeof buf);
    if (n > 0) js_target_parse_cmdline(buf, (size_t)n, t);
}

void js_target_parse_cmdline(const char *buf, size_t n, js_target *t)
{
    int skip = 0, next_is_main = 0;
    for (const char *a = buf; a < buf + n; a += strlen(a) + 1) {
        if (a == buf) continue; /* the launcher */
        if (strcmp(a, "-XX:+DisableAttachMechanism") == 0) t->disabled = 1;
        if (t->main[0]) continue;
        if (skip) {
            skip = 0;
        } else if (next_is_main || a[0] != '-') {
            snprintf(t->main, sizeof t->main, "%s", a);
            no_controls(t->main);
        } else if (!strcmp(a, "-cp") || !strcmp(a, "-classpath") || !strcmp(a, "--class-path") || !strcmp(a, "-p") ||
                   !strcmp(a, "--module-path") || !strcmp(a, "--add-opens") || !strcmp(a, "--add-exports")) {
            skip = 1;
        } else if (!strcmp(a, "-jar") || !strcmp(a, "-m") || !strcmp(a, "--module")) {
            next_is_main = 1;
        }
    }
}

/* JAVA_VERSION from the release file of the JDK that runs the target. */
static void read_version(js_target *t)
{
    char exe[64], bin[JS_AT_PATH_MAX], rel[JS_AT_PATH_MAX + 80], buf[4096];
    snprintf(exe, sizeof exe, "/proc/%d/exe", t->pid);
    ssize_t n = readlink(exe, bin, sizeof bin - 1);
    if (n <= 0) return;
    bin[n] = 0;
    for (int up = 0; up < 2; up++) { /* .../bin/java -> ... */
        char *s = strrchr(bin, '/');
        if (s) *s = 0;
    }
    snprintf(rel, sizeof rel, "%s/release", bin); /* inside the target's root: its links cannot lead out */
    if (read_in(t, rel, buf, sizeof buf) > 0) js_target_parse_release(buf, t);
}

void js_target_parse_release(const char *buf, js_target *t)
{
    const char *v = strstr(buf, "JAVA_VERSION=\"");
    if (!v) return;
    v += 14;
    size_t k = strcspn(v, "\"\n");
    if (k >= sizeof t->java_version) k = sizeof t->java_version - 1;
    memcpy(t->java_version, v, k);
    t->java_version[k] = 0;
    no_controls(t->java_version);
    long major = strtol(t->java_version, NULL, 10);
    if (major == 1) major = strtol(t->java_version + 2, NULL, 10); /* 1.8.0_x */
    t->java_major = major > 0 && major < 1000 ? (int)major : 0;
}

/* 1 if /proc/<pid>/ns/mnt differs from ours. */
static int other_mount_ns(int pid)
{
    char path[64];
    struct stat a, b;
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", pid);
    if (stat(path, &a) != 0 || stat("/proc/self/ns/mnt", &b) != 0) return 0;
    return a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

js_attach_code js_target_inspect(int pid, js_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    if (pid <= 0 || read_status(t) != 0) {
        snprintf(err, errlen, "process %d: no such process (see 'jsampler list' for running JVMs)", pid);
        return JS_AT_NO_PROCESS;
    }
    t->other_mnt = other_mount_ns(pid);
    if (t->other_mnt) snprintf(t->root, sizeof t->root, "/proc/%d/root", pid);
    t->is_jvm = maps_jvm(pid);
    read_cmdline(t);
    read_version(t);
    char sock[32];
    struct stat st;
    snprintf(sock, sizeof sock, ".java_pid%d", t->nspid);
    int tmp = js_attach_open_in(t, "/tmp", O_PATH | O_DIRECTORY);
    t->listening = tmp >= 0 && fstatat(tmp, sock, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
    if (tmp >= 0) close(tmp);
    return JS_AT_OK;
}

int js_attach_list(int (*fn)(const js_target *t, void *ctx), void *ctx)
{
    DIR *d = opendir("/proc");
    if (!d) return -1;
    struct dirent *e;
    int self = (int)getpid(), rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        int pid = atoi(e->d_name);
        js_target t;
        char err[256];
        if (pid == self || js_target_inspect(pid, &t, err, sizeof err) != JS_AT_OK || t.is_jvm != 1) continue;
        rc = fn(&t, ctx);
    }
    closedir(d);
    return rc;
}
