/* spool.c - see backend_int.h: finished tasks wait in taskdir as "<id>@<instance>.task" (key=value lines)
 * beside their "<id>@<instance>.jfr" (pprof tasks: "pprof@<id>@<instance>.task" and ".pb.gz") until the server
 * has accepted them. Several agents may share a taskdir: an entry is uploaded by whichever holds its flock. */
#include "backend_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Entry names stay well under NAME_MAX with the longest suffix (".task.tmp<pid>"). */
#define ENTRY_NAME_CAP 200

/* s with every byte outside [A-Za-z0-9.=-] (and a leading '.') written "_xx" (hex) after what out holds: '_' and '@'
 * never come from s itself, so different ids never give the same name. Stops where out is full. */
static void put_escaped(const char *s, char *out, size_t outlen)
{
    size_t o = strlen(out);
    for (size_t i = 0; s[i] && o + 4 < outlen; i++) {
        unsigned char ch = (unsigned char)s[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '=' ||
                 ch == '-' || (ch == '.' && o > 0);
        if (ok) out[o++] = (char)ch;
        else o += (size_t)snprintf(out + o, outlen - o, "_%02x", ch);
    }
    out[o] = 0;
}

/* 64-bit FNV-1a of s. */
static uint64_t name_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The file name of a task's entry: "<id>@<instance>", a pprof task's "pprof@<id>@<instance>" (its id may equal an
 * async-profiler task's: both are the creation time and the service), each part escaped (put_escaped), so agents
 * sharing taskdir and tasks of different ids never collide. A name over ENTRY_NAME_CAP keeps its start and ends
 * "~<hash of the whole name>" ('~' is in no escaped name). */
static void entry_name(js_spool_kind kind, const char *id, const char *instance, char *out, size_t outlen)
{
    char whole[3 * (JS_TASK_ID_MAX + JS_BACKEND_NAME_MAX) + 16] = "";
    if (kind == JS_SPOOL_PPROF) snprintf(whole, sizeof whole, "pprof@");
    put_escaped(id, whole, sizeof whole);
    snprintf(whole + strlen(whole), sizeof whole - strlen(whole), "@");
    put_escaped(instance, whole, sizeof whole);
    if (strlen(whole) <= ENTRY_NAME_CAP) {
        snprintf(out, outlen, "%s", whole);
        return;
    }
    snprintf(out, outlen, "%.*s~%016llx", ENTRY_NAME_CAP - 17, whole, (unsigned long long)name_hash(whole));
}

int js_spool_init(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create taskdir %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "taskdir %s is not a directory", dir);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(err, errlen, "taskdir %s must belong to this user and not be writable by others", dir);
        return -1;
    }
    return 0;
}

void js_spool_jfr_path(const char *dir, const char *id, const char *instance, char *out, size_t outlen)
{
    char name[ENTRY_NAME_CAP + 1];
    entry_name(JS_SPOOL_JFR, id, instance, name, sizeof name);
    snprintf(out, outlen, "%s/%s.jfr", dir, name);
}

void js_spool_pprof_path(const char *dir, const char *id, const char *instance, char *out, size_t outlen)
{
    char name[ENTRY_NAME_CAP + 1];
    entry_name(JS_SPOOL_PPROF, id, instance, name, sizeof name);
    snprintf(out, outlen, "%s/%s.pb.gz", dir, name);
}

/* value with newlines flattened, for one key=value line */
static void put_line(FILE *f, const char *key, const char *v)
{
    fprintf(f, "%s=", key);
    for (; *v; v++) fputc(*v == '\n' || *v == '\r' ? ' ' : *v, f);
    fputc('\n', f);
}

int js_spool_put(const char *dir, const js_spool_entry *e, char *err, size_t errlen)
{
    char name[ENTRY_NAME_CAP + 1], path[JS_BACKEND_PATH_MAX + 400];
    char tmp[JS_BACKEND_PATH_MAX + 420];
    entry_name(e->kind, e->id, e->instance, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s.task", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    put_line(f, "kind", e->kind == JS_SPOOL_PPROF ? "pprof" : "jfr");
    put_line(f, "id", e->id);
    put_line(f, "service", e->service);
    put_line(f, "instance", e->instance);
    put_line(f, "error", e->error ? "1" : "0");
    put_line(f, "message", e->message);
    put_line(f, "jfr", e->jfr);
    fprintf(f, "after=%lld\n", e->after_ms);
    /* Not fsynced: on a busy disk an fsync waited over 10 s behind other processes' writes (ext4 commits its whole
     * journal), holding the task client and its error reports (a clean-clone task-errors run failed so on both
     * JDKs); what the spool promises is surviving the JVM, not the machine (the recording it names is not synced
     * either), and an entry the machine's crash left empty is skipped when read. */
    int bad = fflush(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Read one .task file into e; 0 or -1. */
static int read_entry(const char *path, js_spool_entry *e)
{
    memset(e, 0, sizeof *e);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        const char *v = eq + 1;
        if (strcmp(line, "kind") == 0) e->kind = strcmp(v, "pprof") == 0 ? JS_SPOOL_PPROF : JS_SPOOL_JFR;
        else if (strcmp(line, "id") == 0) snprintf(e->id, sizeof e->id, "%s", v);
        else if (strcmp(line, "service") == 0) snprintf(e->service, sizeof e->service, "%s", v);
        else if (strcmp(line, "instance") == 0) snprintf(e->instance, sizeof e->instance, "%s", v);
        else if (strcmp(line, "error") == 0) e->error = atoi(v) != 0;
        else if (strcmp(line, "message") == 0) snprintf(e->message, sizeof e->message, "%s", v);
        else if (strcmp(line, "jfr") == 0) snprintf(e->jfr, sizeof e->jfr, "%s", v);
        else if (strcmp(line, "after") == 0) e->after_ms = atoll(v);
    }
    fclose(f);
    snprintf(e->meta, sizeof e->meta, "%s", path);
    return e->id[0] && e->service[0] && e->instance[0] ? 0 : -1;
}

int js_spool_next(const char *dir, js_spool_entry *e, int *lockfd)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    char best[JS_BACKEND_PATH_MAX + 300] = "";
    struct timespec best_t = {0, 0};
    int found = 0, fd = -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".task") != 0) continue;
        char path[sizeof best];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (found && (st.st_mtim.tv_sec > best_t.tv_sec ||
                      (st.st_mtim.tv_sec == best_t.tv_sec && st.st_mtim.tv_nsec >= best_t.tv_nsec)))
            continue;
        int f = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (f < 0) continue;
        struct stat held;
        if (flock(f, LOCK_EX | LOCK_NB) != 0 || fstat(f, &held) != 0 || stat(path, &st) != 0 ||
            held.st_ino != st.st_ino) { /* another agent is uploading it, or has just done so */
            close(f);
            continue;
        }
        if (fd >= 0) close(fd);
        fd = f;
        found = 1;
        best_t = st.st_mtim;
        snprintf(best, sizeof best, "%s", path);
    }
    closedir(d);
    if (!found) return 0;
    if (read_entry(best, e) != 0) { /* unreadable: set it aside so it never blocks the queue */
        char aside[sizeof best + 8];
        snprintf(aside, sizeof aside, "%s.bad", best);
        rename(best, aside);
        close(fd);
        return 0;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (e->after_ms > (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000) { /* its recording may still be written */
        close(fd);
        return 0;
    }
    *lockfd = fd;
    return 1;
}

void js_spool_done(js_spool_entry *e, int lockfd)
{
    if (e->jfr[0]) unlink(e->jfr);
    unlink(e->meta);
    js_spool_release(lockfd);
}

void js_spool_release(int lockfd)
{
    if (lockfd >= 0) close(lockfd);
}

int js_spool_defer(int lockfd)
{
    int rc = lockfd >= 0 ? futimens(lockfd, NULL) : 0; /* the queue is oldest first: now is its end */
    int saved = errno;
    js_spool_release(lockfd);
    errno = saved;
    return rc;
}
