/* codenames.c - see codenames.h. */
#include "core/codenames.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uintptr_t start, end;
    uintptr_t reach; /* once sorted: the largest end of this region and every one before it */
    char name[JS_CODENAME_LEN];
} region;

/* The regions of the process (generated code is the JVM's, one per process); sorted by start, with their reach, when
 * `sorted` (a lookup sorts after adds: the VM adds in bursts, names are looked up at output time). */
static struct {
    pthread_mutex_t lock;
    region *r;
    size_t n, cap;
    int sorted;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int by_start(const void *a, const void *b)
{
    const region *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int js_codenames_add(uintptr_t start, size_t size, const char *name)
{
    if (size == 0 || !name || start + size < start) return -1;
    pthread_mutex_lock(&C.lock);
    int rc = -1;
    if (C.n == C.cap && C.cap < JS_CODENAMES_MAX) {
        size_t cap = C.cap ? C.cap * 2 : 256;
        if (cap > JS_CODENAMES_MAX) cap = JS_CODENAMES_MAX;
        region *r = realloc(C.r, cap * sizeof *r);
        if (r) C.r = r, C.cap = cap;
    }
    if (C.n < C.cap) {
        region *e = &C.r[C.n++];
        e->start = start;
        e->end = start + size;
        snprintf(e->name, sizeof e->name, "%s", name);
        C.sorted = 0;
        rc = 0;
    }
    pthread_mutex_unlock(&C.lock);
    return rc;
}

int js_codenames_find(uintptr_t pc, char *buf, size_t len, uintptr_t *start)
{
    pthread_mutex_lock(&C.lock);
    if (!C.sorted) {
        if (C.n > 1) qsort(C.r, C.n, sizeof *C.r, by_start);
        for (size_t i = 0; i < C.n; i++)
            C.r[i].reach = i && C.r[i - 1].reach > C.r[i].end ? C.r[i - 1].reach : C.r[i].end;
        C.sorted = 1;
    }
    size_t lo = 0, hi = C.n; /* the first region starting after pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (C.r[mid].start <= pc) lo = mid + 1;
        else hi = mid;
    }
    const region *best = NULL;
    for (size_t i = lo; i-- > 0 && C.r[i].reach > pc;) /* back while a region at or before i reaches past pc */
        if (pc < C.r[i].end && (!best || C.r[i].end - C.r[i].start < best->end - best->start)) best = &C.r[i];
    if (best) {
        snprintf(buf, len, "%s", best->name);
        if (start) *start = best->start;
    }
    pthread_mutex_unlock(&C.lock);
    return best ? 0 : -1;
}

void js_codenames_clear(void)
{
    pthread_mutex_lock(&C.lock);
    free(C.r);
    C.r = NULL;
    C.n = C.cap = 0;
    C.sorted = 0;
    pthread_mutex_unlock(&C.lock);
}
