/* thread_names.c - see thread_names.h.
 *
 * Entries live in a pool (grown by doubling up to JS_THREAD_NAMES_MAX) and are chained in
 * recording order (oldest at the head); an open-addressing index maps serial -> pool slot,
 * with backward-shift deletion so lookups never degrade. Eviction walks from the head: an
 * entry of a live thread is moved to the tail (it cannot be evicted now), the first entry of
 * an ended thread is evicted, so each eviction costs O(1) amortised.
 */
#include "core/thread_names.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample/threads.h"
#include "util/hashmix.h"

#define NIL UINT32_MAX

typedef struct {
    uint32_t serial;
    int tid;
    int64_t java_tid; /* 0 = not a Java thread (or not known) */
    uint32_t prev, next; /* recording order; next doubles as the free-list link */
    uint8_t vm_tries;    /* lookups of its full name in the JVM (vm_names.c) so far */
    char name[JS_THREAD_NAME_MAX];
} name_entry;

/* Names by serial: process-wide because serials are; guarded by names_lock (never a handler). */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    name_entry *pool;
    uint32_t pool_cap, pool_used, free_head;
    uint32_t head, tail; /* oldest, newest */
    uint32_t *index;     /* pool slot + 1; 0 = empty */
    uint32_t index_cap;  /* power of two, >= 2 * entries */
    uint32_t count;
} N = {NULL, 0, 0, NIL, NIL, NIL, NULL, 0, 0};

/* Home position of serial in the index. */
static uint32_t home(uint32_t serial)
{
    return (uint32_t)js_mix64(serial) & (N.index_cap - 1);
}

/* Index position holding serial, or the empty position where it would go. Caller holds lock. */
static uint32_t index_pos(uint32_t serial)
{
    uint32_t i = home(serial);
    while (N.index[i] && N.pool[N.index[i] - 1].serial != serial) i = (i + 1) & (N.index_cap - 1);
    return i;
}

/* Entry of serial or NULL. Caller holds names_lock. */
static name_entry *find_name(uint32_t serial)
{
    if (!N.index_cap) return NULL;
    uint32_t i = index_pos(serial);
    return N.index[i] ? &N.pool[N.index[i] - 1] : NULL;
}

/* Remove the index entry at position i, shifting later members of the cluster back. */
static void index_delete(uint32_t i)
{
    uint32_t mask = N.index_cap - 1;
    N.index[i] = 0;
    for (uint32_t j = (i + 1) & mask; N.index[j]; j = (j + 1) & mask) {
        uint32_t h = home(N.pool[N.index[j] - 1].serial);
        /* Move j into the hole i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (stays) continue;
        N.index[i] = N.index[j];
        N.index[j] = 0;
        i = j;
    }
}

/* Double the index; 0 or -1. */
static int index_grow(void)
{
    uint32_t cap = N.index_cap ? N.index_cap * 2 : 512;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    free(N.index);
    N.index = t;
    N.index_cap = cap;
    for (uint32_t k = N.head; k != NIL; k = N.pool[k].next) N.index[index_pos(N.pool[k].serial)] = k + 1;
    return 0;
}

/* Take pool slot k out of the recording-order list. */
static void list_unlink(uint32_t k)
{
    name_entry *e = &N.pool[k];
    if (e->prev != NIL) N.pool[e->prev].next = e->next;
    else N.head = e->next;
    if (e->next != NIL) N.pool[e->next].prev = e->prev;
    else N.tail = e->prev;
}

/* Put pool slot k at the newest end of the list. */
static void list_append(uint32_t k)
{
    N.pool[k].prev = N.tail;
    N.pool[k].next = NIL;
    if (N.tail != NIL) N.pool[N.tail].next = k;
    else N.head = k;
    N.tail = k;
}

/* 1 while the thread that recorded e still holds its serial in the thread table. */
static int alive(const name_entry *e)
{
    js_thread *t = js_threads_find(e->tid);
    return t && atomic_load(&t->serial) == e->serial;
}

/* Evict the oldest entry of an ended thread; 0, or -1 if every entry is live. */
static int evict_one(void)
{
    for (uint32_t seen = 0; seen < N.count && N.head != NIL; seen++) {
        uint32_t k = N.head;
        list_unlink(k);
        if (alive(&N.pool[k])) {
            list_append(k);
            continue;
        }
        index_delete(index_pos(N.pool[k].serial));
        N.pool[k].next = N.free_head;
        N.free_head = k;
        N.count--;
        return 0;
    }
    return -1;
}

/* A fresh pool slot (evicting when the bound is reached), or NIL. */
static uint32_t take_slot(void)
{
    if (N.free_head == NIL && N.pool_used == N.pool_cap) {
        if (N.pool_cap < JS_THREAD_NAMES_MAX) {
            uint32_t cap = N.pool_cap ? N.pool_cap * 2 : 256;
            if (cap > JS_THREAD_NAMES_MAX) cap = JS_THREAD_NAMES_MAX;
            name_entry *p = realloc(N.pool, (size_t)cap * sizeof *p);
            if (!p) return NIL;
            N.pool = p;
            N.pool_cap = cap;
        } else if (evict_one() != 0) {
            return NIL;
        }
    }
    if (N.free_head != NIL) {
        uint32_t k = N.free_head;
        N.free_head = N.pool[k].next;
        return k;
    }
    return N.pool_used < N.pool_cap ? N.pool_used++ : NIL;
}

void js_threads_set_name(uint32_t serial, int tid, const char *name)
{
    pthread_mutex_lock(&names_lock);
    name_entry *e = find_name(serial);
    if (!e && ((N.count + 1) * 2 <= N.index_cap || index_grow() == 0)) {
        uint32_t k = take_slot();
        if (k != NIL) {
            e = &N.pool[k];
            memset(e, 0, sizeof *e);
            e->serial = serial;
            N.index[index_pos(serial)] = k + 1;
            list_append(k);
            N.count++;
        }
    }
    if (e) {
        e->tid = tid;
        snprintf(e->name, sizeof e->name, "%s", name ? name : "");
    }
    pthread_mutex_unlock(&names_lock);
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
    const name_entry *e = find_name(serial);
    if (e && e->name[0]) snprintf(buf, len, "[%s tid=%d]", e->name, e->tid);
    else if (e) snprintf(buf, len, "[tid=%d]", e->tid);
    else snprintf(buf, len, "[unknown thread]");
    pthread_mutex_unlock(&names_lock);
}

/* An index into the arrays of js_threads_rename_java, sorted by Java id. */
typedef struct {
    int64_t id;
    size_t at;
} id_at;

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const id_at *)a)->id, y = ((const id_at *)b)->id;
    return (x > y) - (x < y);
}

int js_threads_rename_java(const int64_t *ids, const char (*names)[JS_THREAD_NAME_MAX], size_t n,
                           unsigned char *matched)
{
    if (matched) memset(matched, 0, n);
    id_at *sorted = malloc(sizeof *sorted * (n ? n : 1));
    if (!sorted) return 0;
    for (size_t i = 0; i < n; i++) sorted[i] = (id_at){ids[i], i};
    qsort(sorted, n, sizeof *sorted, by_id);
    int renamed = 0;
    pthread_mutex_lock(&names_lock);
    for (uint32_t k = N.head; k != NIL; k = N.pool[k].next) {
        name_entry *e = &N.pool[k];
        if (!e->java_tid) continue;
        id_at key = {e->java_tid, 0};
        const id_at *hit = bsearch(&key, sorted, n, sizeof *sorted, by_id);
        if (hit && matched) matched[hit->at] = 1;
        if (hit && strncmp(e->name, names[hit->at], sizeof e->name) != 0) {
            snprintf(e->name, sizeof e->name, "%s", names[hit->at]);
            renamed++;
        }
    }
    pthread_mutex_unlock(&names_lock);
    free(sorted);
    return renamed;
}

int js_threads_adopt_java(int tid, int64_t java_tid, const char *name)
{
    char comm[JS_THREAD_NAME_MAX];
    js_thread *t = js_threads_find(tid);
    if (!t || !name || !name[0] || js_threads_comm(tid, comm, sizeof comm) != 0) return 0;
    /* Linux keeps 15 bytes of a thread's name, and HotSpot gives a Java thread's native thread its Java name. */
    size_t n = strlen(comm);
    if (!n || n > 15 || strncmp(comm, name, n) != 0 || (n < 15 && name[n])) return 0;
    uint32_t serial = atomic_load(&t->serial);
    int done = 0;
    pthread_mutex_lock(&names_lock);
    name_entry *e = find_name(serial);
    if (e && e->tid == tid && !e->java_tid) {
        e->java_tid = java_tid;
        snprintf(e->name, sizeof e->name, "%s", name);
        done = 1;
    }
    pthread_mutex_unlock(&names_lock);
    return done;
}

size_t js_threads_cut_names(int *tids, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&names_lock);
    for (uint32_t k = N.head; k != NIL && n < max; k = N.pool[k].next) {
        name_entry *e = &N.pool[k];
        if (e->java_tid || e->vm_tries >= JS_VM_NAME_TRIES || strlen(e->name) != 15 || !alive(e)) continue;
        e->vm_tries++;
        tids[n++] = e->tid;
    }
    pthread_mutex_unlock(&names_lock);
    return n;
}

int js_threads_adopt_vm(int tid, const char *name)
{
    char comm[JS_THREAD_NAME_MAX];
    js_thread *t = js_threads_find(tid);
    if (!t || !name || js_threads_comm(tid, comm, sizeof comm) != 0 || strlen(comm) != 15 ||
        strncmp(comm, name, 15) != 0 || !name[15])
        return 0;
    uint32_t serial = atomic_load(&t->serial);
    int done = 0;
    pthread_mutex_lock(&names_lock);
    name_entry *e = find_name(serial);
    if (e && e->tid == tid && !e->java_tid && strncmp(e->name, comm, sizeof e->name) == 0) {
        snprintf(e->name, sizeof e->name, "%s", name);
        done = 1;
    }
    pthread_mutex_unlock(&names_lock);
    return done;
}

void js_threads_rename_tid(int tid, const char *name)
{
    js_thread *t = js_threads_find(tid);
    if (!t || !name || !name[0]) return;
    uint32_t serial = atomic_load(&t->serial);
    pthread_mutex_lock(&names_lock);
    name_entry *e = find_name(serial);
    if (e && e->tid == tid) snprintf(e->name, sizeof e->name, "%s", name);
    pthread_mutex_unlock(&names_lock);
}

size_t js_threads_names_count(void)
{
    pthread_mutex_lock(&names_lock);
    size_t n = N.count;
    pthread_mutex_unlock(&names_lock);
    return n;
}

void js_threads_clear_names(void)
{
    pthread_mutex_lock(&names_lock);
    free(N.pool);
    free(N.index);
    N.pool = NULL;
    N.index = NULL;
    N.pool_cap = N.pool_used = N.index_cap = N.count = 0;
    N.free_head = N.head = N.tail = NIL;
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
