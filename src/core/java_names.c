/* java_names.c - see java_names.h. */
#include "core/java_names.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/thread_names.h"
#include "core/vm_names.h"
#include "sample/safe_read.h"
#include "sample/vmlayout.h"

#define MAX_THREADS 65536 /* names read per refresh at most */

/* Process-wide like the JVMTI environment. */
static JavaVM *vm;
static jvmtiEnv *jv;
/* java.lang.Thread.tid and .eetop (its JavaThread*, 0 once it ended), JDK 17 and 25; found once. */
static jfieldID tid_field, eetop_field;
static int fields_looked_up;
/* Java ids whose thread could not be matched to a recorded thread (attached through JNI, renamed by another thread,
 * or not recorded): not probed again. Sorted; rebuilt by each refresh from the ids still live. */
static int64_t *unmatchable;
static size_t n_unmatchable;

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* JavaThread::_osthread (Thread::_osthread in JDK 25) and OSThread::_thread_id from HotSpot's published tables;
 * -1 if absent. */
static long long off_osthread = -1, off_thread_id = -1;

void js_java_names_init(JavaVM *v, jvmtiEnv *jvmti)
{
    vm = v;
    jv = jvmti;
}

/* js_vmstructs_each's callback: the two offsets of HotSpot's gHotSpotVMStructs that lead from a JavaThread to its OS
 * thread id. */
static void osthread_offsets(void *ctx, const js_vmstruct *e)
{
    /* JavaThread's in JDK 17, its base Thread's (first base: the same offset) in JDK 25 */
    if ((!strcmp(e->type, "JavaThread") || !strcmp(e->type, "Thread")) && !strcmp(e->field, "_osthread"))
        off_osthread = (long long)e->offset;
    if (!strcmp(e->type, "OSThread") && !strcmp(e->field, "_thread_id")) off_thread_id = (long long)e->offset;
}

/* Thread's field ids and HotSpot's offsets, once. */
static void look_up(JNIEnv *jni)
{
    if (fields_looked_up) return;
    fields_looked_up = 1;
    jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
    if (c) tid_field = (*jni)->GetFieldID(jni, c, "tid", "J");
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni), tid_field = NULL;
    if (c) eetop_field = (*jni)->GetFieldID(jni, c, "eetop", "J");
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni), eetop_field = NULL;
    if (c) (*jni)->DeleteLocalRef(jni, c);
    js_vmstructs_each(osthread_offsets, NULL); /* without the table the offsets stay -1 */
}

/* The OS thread id of a live JavaThread (eetop), or -1. Its memory may be freed as the thread ends: read through
 * the kernel, so a stale pointer is a failed read; the caller checks what it finds. */
static int os_tid(uintptr_t java_thread)
{
    uintptr_t osthread = 0;
    int32_t tid = -1;
    if (!java_thread || off_osthread < 0 || off_thread_id < 0 ||
        js_safe_read(java_thread + (uintptr_t)off_osthread, &osthread, sizeof osthread) != 0 || !osthread ||
        js_safe_read(osthread + (uintptr_t)off_thread_id, &tid, sizeof tid) != 0)
        return -1;
    return tid > 0 ? tid : -1;
}

/* One refresh at a time: the housekeeper's and a command's (stop, dump) may overlap. */
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;

static int refresh_locked(JNIEnv *jni);

int js_java_names_refresh(void)
{
    JNIEnv *jni = NULL;
    if (!vm || !jv || (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) return -1;
    pthread_mutex_lock(&refresh_lock);
    int rc = refresh_locked(jni);
    pthread_mutex_unlock(&refresh_lock);
    return rc;
}

static int refresh_locked(JNIEnv *jni)
{
    look_up(jni);
    jint n = 0;
    jthread *threads = NULL;
    if (!tid_field || (*jv)->GetAllThreads(jv, &n, &threads) != JVMTI_ERROR_NONE) return -1;
    size_t cap = (size_t)(n > 0 ? n : 1);
    int64_t *ids = malloc(sizeof *ids * cap);
    uintptr_t *tops = malloc(sizeof *tops * cap);
    unsigned char *matched = malloc(cap);
    char(*names)[JS_THREAD_NAME_MAX] = malloc(sizeof *names * cap);
    int ok = ids && tops && matched && names;
    size_t got = 0;
    for (jint i = 0; i < n; i++) {
        jvmtiThreadInfo info;
        memset(&info, 0, sizeof info);
        if (ok && got < MAX_THREADS && (*jv)->GetThreadInfo(jv, threads[i], &info) == JVMTI_ERROR_NONE) {
            if (info.name) {
                ids[got] = (int64_t)(*jni)->GetLongField(jni, threads[i], tid_field);
                tops[got] = eetop_field ? (uintptr_t)(*jni)->GetLongField(jni, threads[i], eetop_field) : 0;
                snprintf(names[got], sizeof names[got], "%s", info.name);
                got += ids[got] != 0;
                (*jv)->Deallocate(jv, (unsigned char *)info.name);
            }
            if (info.thread_group) (*jni)->DeleteLocalRef(jni, info.thread_group);
            if (info.context_class_loader) (*jni)->DeleteLocalRef(jni, info.context_class_loader);
        }
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    (*jv)->Deallocate(jv, (unsigned char *)threads);
    int renamed = -1;
    if (ok) {
        renamed = js_threads_rename_java(ids, (const char(*)[JS_THREAD_NAME_MAX])names, got, matched);
        /* Threads recorded before the VM reported them (an attach finds them in /proc): their OS id through
         * HotSpot's JavaThread, then their full Java name if their comm is what the JVM made of it. */
        int64_t *failed = malloc(sizeof *failed * cap);
        size_t nfailed = 0;
        for (size_t i = 0; i < got; i++) {
            if (matched[i]) continue;
            int known = n_unmatchable && bsearch(&ids[i], unmatchable, n_unmatchable, sizeof *unmatchable, cmp_id);
            int tid = known ? -1 : os_tid(tops[i]);
            int adopted = tid > 0 && js_threads_adopt_java(tid, ids[i], names[i]);
            renamed += adopted;
            if (!adopted && failed) failed[nfailed++] = ids[i];
        }
        if (failed) qsort(failed, nfailed, sizeof *failed, cmp_id);
        free(unmatchable);
        unmatchable = failed;
        n_unmatchable = failed ? nfailed : 0;
        /* Threads JVMTI does not list (JIT compilers, ...): their full names from HotSpot's thread list. */
        renamed += js_vm_names_refresh(jni, tops, (const char(*)[JS_THREAD_NAME_MAX])names, got);
    }
    free(ids);
    free(tops);
    free(matched);
    free(names);
    return renamed;
}
