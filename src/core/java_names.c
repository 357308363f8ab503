/* java_names.c - see java_names.h. */
#include "core/java_names.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/thread_names.h"

#define MAX_THREADS 65536 /* names read per refresh at most */

/* Process-wide like the JVMTI environment. */
static JavaVM *vm;
static jvmtiEnv *jv;
static jfieldID _Atomic tid_field; /* java.lang.Thread.tid (JDK 17 and 25), once found */

void js_java_names_init(JavaVM *v, jvmtiEnv *jvmti)
{
    vm = v;
    jv = jvmti;
}

/* Thread.tid's field id, looked up once; NULL if the field is not there. */
static jfieldID find_tid_field(JNIEnv *jni)
{
    jfieldID f = atomic_load(&tid_field);
    if (f) return f;
    jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
    if (c) f = (*jni)->GetFieldID(jni, c, "tid", "J");
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni), f = NULL;
    if (c) (*jni)->DeleteLocalRef(jni, c);
    if (f) atomic_store(&tid_field, f);
    return f;
}

int js_java_names_refresh(void)
{
    JNIEnv *jni = NULL;
    if (!vm || !jv || (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) return -1;
    jfieldID tid = find_tid_field(jni);
    jint n = 0;
    jthread *threads = NULL;
    if (!tid || (*jv)->GetAllThreads(jv, &n, &threads) != JVMTI_ERROR_NONE) return -1;
    int64_t *ids = malloc(sizeof *ids * (size_t)(n > 0 ? n : 1));
    char(*names)[JS_THREAD_NAME_MAX] = malloc(sizeof *names * (size_t)(n > 0 ? n : 1));
    size_t got = 0;
    for (jint i = 0; i < n; i++) {
        jvmtiThreadInfo info;
        memset(&info, 0, sizeof info);
        if (ids && names && got < MAX_THREADS && (*jv)->GetThreadInfo(jv, threads[i], &info) == JVMTI_ERROR_NONE) {
            if (info.name) {
                ids[got] = (int64_t)(*jni)->GetLongField(jni, threads[i], tid);
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
    int renamed = ids && names ? js_threads_rename_java(ids, (const char(*)[JS_THREAD_NAME_MAX])names, got) : -1;
    free(ids);
    free(names);
    return renamed;
}
