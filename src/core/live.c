/* live.c - see live.h. */
#include "core/live.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fold.h"
#include "core/names.h"

typedef struct {
    jweak ref;          /* NULL: a free slot */
    js_raw_frame *frames;
    int n;
    uint32_t thread;
    uint64_t weight;
} live_sample;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static live_sample *table; /* JS_LIVE_MAX slots, allocated when tracking starts */
static _Atomic int on;
static int used;
static uint64_t untracked;
/* A sweep of a full table costs JS_LIVE_MAX weak-reference checks under the lock every allocating thread takes. One
 * at most every SWEEP_GAP samples (tracked or not) keeps that to JS_LIVE_MAX / SWEEP_GAP checks a sample whatever the
 * objects do (all alive, a cache filling up; or a few dying between samples); after the collector frees room, a full
 * table leaves at most SWEEP_GAP samples untracked. */
#define SWEEP_GAP 256
static unsigned since_sweep; /* samples since the last sweep */

/* Free slot i (its reference and frames). Caller holds lock. */
static void drop(JNIEnv *jni, int i)
{
    if (table[i].ref) (*jni)->DeleteWeakGlobalRef(jni, table[i].ref);
    free(table[i].frames);
    memset(&table[i], 0, sizeof table[i]);
    used--;
}

void js_live_enable(JNIEnv *jni, int enable)
{
    pthread_mutex_lock(&lock);
    if (table && jni)
        for (int i = 0; i < JS_LIVE_MAX; i++)
            if (table[i].ref) drop(jni, i);
    if (table && !jni) /* no JNIEnv: the references are left to the VM, which ends soon (VM death) */
        for (int i = 0; i < JS_LIVE_MAX; i++) free(table[i].frames);
    free(table);
    table = enable ? calloc(JS_LIVE_MAX, sizeof *table) : NULL;
    atomic_store(&on, table != NULL);
    used = 0;
    untracked = 0;
    since_sweep = 0;
    pthread_mutex_unlock(&lock);
}

/* Drop every sample whose object is gone. Caller holds lock. */
static void sweep(JNIEnv *jni)
{
    for (int i = 0; i < JS_LIVE_MAX; i++)
        if (table[i].ref && (*jni)->IsSameObject(jni, table[i].ref, NULL)) drop(jni, i);
    since_sweep = 0;
}

void js_live_track(JNIEnv *jni, jobject object, const js_raw_frame *frames, int n, uint32_t thread, uint64_t weight)
{
    if (!atomic_load(&on) || !jni || !object || n <= 0) return;
    if (n > JS_LIVE_MAX_FRAMES) n = JS_LIVE_MAX_FRAMES;
    js_raw_frame *copy = malloc((size_t)n * sizeof *copy);
    jweak ref = copy ? (*jni)->NewWeakGlobalRef(jni, object) : NULL;
    pthread_mutex_lock(&lock);
    if (on && ++since_sweep >= SWEEP_GAP && used == JS_LIVE_MAX) sweep(jni);
    int slot = -1;
    for (int i = 0; on && ref && used < JS_LIVE_MAX && i < JS_LIVE_MAX && slot < 0; i++)
        if (!table[i].ref) slot = i;
    if (slot >= 0) {
        memcpy(copy, frames, (size_t)n * sizeof *copy);
        table[slot] = (live_sample){ref, copy, n, thread, weight};
        used++;
        copy = NULL, ref = NULL;
    } else if (on) {
        untracked++;
    }
    pthread_mutex_unlock(&lock);
    if (ref) (*jni)->DeleteWeakGlobalRef(jni, ref);
    free(copy);
}

int js_live_profile(JNIEnv *jni, const js_args *a, js_profile *p, char *err, size_t errlen)
{
    if (!jni) {
        snprintf(err, errlen, "live: no JNI environment on this thread to tell live objects");
        return -1;
    }
    js_profile live;
    js_profile_init(&live);
    snprintf(live.unit, sizeof live.unit, "%s", p->unit);
    int rc = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; table && i < JS_LIVE_MAX && rc == 0; i++)
        if (table[i].ref && !(*jni)->IsSameObject(jni, table[i].ref, NULL))
            rc = js_fold_frames(table[i].frames, table[i].n, table[i].thread, table[i].weight, 1, a, &live);
    pthread_mutex_unlock(&lock);
    if (rc == 0) rc = js_profile_normalize(&live);
    if (rc != 0) {
        js_profile_free(&live);
        snprintf(err, errlen, "live: out of memory building the profile");
        return -1;
    }
    js_profile_free(p);
    *p = live;
    return 0;
}

void js_live_touch_names(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; table && i < JS_LIVE_MAX; i++)
        if (table[i].ref) js_names_touch(table[i].frames, table[i].n);
    pthread_mutex_unlock(&lock);
}

uint64_t js_live_untracked(void)
{
    pthread_mutex_lock(&lock);
    uint64_t n = untracked;
    pthread_mutex_unlock(&lock);
    return n;
}
