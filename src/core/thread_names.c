/* thread_names.c - see thread_names.h. */
#include "core/thread_names.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    uint32_t serial;
    int tid;
    int64_t java_tid; /* 0 = not a Java thread (or not known) */
    char name[JS_THREAD_NAME_MAX];
} name_entry;

/* Names by serial, appended under names_lock (never from a handler). */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static name_entry *names;
static size_t nnames, cap_names;

void js_threads_set_name(uint32_t serial, int tid, const char *name)
{
    pthread_mutex_lock(&names_lock);
    name_entry *e = NULL;
    for (size_t i = nnames; i-- > 0;)
        if (names[i].serial == serial) {
            e = &names[i];
            break;
        }
    if (!e && nnames == cap_names) {
        size_t cap = cap_names ? cap_names * 2 : 256;
        name_entry *n = realloc(names, cap * sizeof *n);
        if (n) names = n, cap_names = cap;
    }
    if (!e && nnames < cap_names) {
        e = &names[nnames++];
        memset(e, 0, sizeof *e);
    }
    if (e) {
        e->serial = serial;
        e->tid = tid;
        snprintf(e->name, sizeof e->name, "%s", name ? name : "");
    }
    pthread_mutex_unlock(&names_lock);
}

/* Entry of serial, newest first, or NULL. Caller holds names_lock. */
static name_entry *find_name(uint32_t serial)
{
    for (size_t i = nnames; i-- > 0;)
        if (names[i].serial == serial) return &names[i];
    return NULL;
}

void js_threads_set_java_id(uint32_t serial, int64_t java_tid)
{
    pthread_mutex_lock(&names_lock);
    name_entry *e = find_name(serial);
    if (e) e->java_tid = java_tid;
    pthread_mutex_unlock(&names_lock);
}

int js_threads_info(uint32_t serial, char *name, size_t len, int *tid, int64_t *java_tid)
{
    pthread_mutex_lock(&names_lock);
    const name_entry *e = find_name(serial);
    if (e) {
        snprintf(name, len, "%s", e->name);
        *tid = e->tid;
        *java_tid = e->java_tid;
    }
    pthread_mutex_unlock(&names_lock);
    return e ? 0 : -1;
}

void js_threads_label(uint32_t serial, char *buf, size_t len)
{
    pthread_mutex_lock(&names_lock);
    const name_entry *e = NULL;
    for (size_t i = nnames; i-- > 0;)
        if (names[i].serial == serial) {
            e = &names[i];
            break;
        }
    if (e && e->name[0]) snprintf(buf, len, "[%s tid=%d]", e->name, e->tid);
    else if (e) snprintf(buf, len, "[tid=%d]", e->tid);
    else snprintf(buf, len, "[unknown thread]");
    pthread_mutex_unlock(&names_lock);
}

void js_threads_clear_names(void)
{
    pthread_mutex_lock(&names_lock);
    free(names);
    names = NULL;
    nnames = cap_names = 0;
    pthread_mutex_unlock(&names_lock);
}

int js_threads_comm(int tid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *nl = strchr(buf, '\n');
    if (nl) *nl = 0;
    return 0;
}
