/* methodids.c - see methodids.h. */
#include "core/methodids.h"

#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "core/names.h"
#include "util/log.h"

/* Process-wide: ClassPrepare calls back without a context, and sessions start from any entry point. */
static JavaVM *vm;
static jvmtiEnv *jv;
static _Atomic int active;

void js_methodids_init(JavaVM *v, jvmtiEnv *j)
{
    vm = v;
    jv = j;
}

void js_methodids_class(jvmtiEnv *env, jclass klass)
{
    jint n = 0;
    jmethodID *ids = NULL;
    if ((*env)->GetClassMethods(env, klass, &n, &ids) == JVMTI_ERROR_NONE && ids)
        (*env)->Deallocate(env, (unsigned char *)ids);
}

/* Milliseconds of the monotonic clock. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The events a session needs, switched together (mode JVMTI_ENABLE or JVMTI_DISABLE); 0 or the first error. */
static jvmtiError switch_events(jvmtiEventMode mode)
{
    static const jvmtiEvent events[] = {JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_COMPILED_METHOD_LOAD,
                                        JVMTI_EVENT_COMPILED_METHOD_UNLOAD};
    jvmtiError first = JVMTI_ERROR_NONE;
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        jvmtiError e = (*jv)->SetEventNotificationMode(jv, mode, events[i], NULL);
        if (e != JVMTI_ERROR_NONE && first == JVMTI_ERROR_NONE) first = e;
    }
    return first;
}

int js_methodids_on(void)
{
    if (!jv) return 0;
    double t0 = now_ms();
    /* Facts of code unloaded while the events were off would linger: the VM tells everything loaded again. */
    js_names_compiled_clear();
    /* Events first: a class prepared or a method compiled while the loaded ones are listed is seen either way. */
    jvmtiError e = switch_events(JVMTI_ENABLE);
    if (e != JVMTI_ERROR_NONE) {
        js_warn("JVMTI refused ClassPrepare or CompiledMethodLoad events (error %d): some Java frames may be unnamed "
                "or of an unknown kind", (int)e);
        switch_events(JVMTI_DISABLE);
        return -1;
    }
    atomic_store(&active, 1);
    if ((e = (*jv)->GenerateEvents(jv, JVMTI_EVENT_COMPILED_METHOD_LOAD)) != JVMTI_ERROR_NONE)
        js_debug("JVMTI refused to replay the compiled code (error %d): frames show as interpreted until recompiled",
                 (int)e);
    JNIEnv *jni = NULL;
    if (!vm || (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) {
        js_debug("method ids: this thread is not attached to the JVM; classes loaded so far keep the ids they have");
        return 0;
    }
    jint n = 0;
    jclass *classes = NULL;
    if ((e = (*jv)->GetLoadedClasses(jv, &n, &classes)) != JVMTI_ERROR_NONE) {
        js_warn("JVMTI refused GetLoadedClasses (error %d): frames of classes loaded so far may be unnamed", (int)e);
        return -1;
    }
    for (jint i = 0; i < n; i++) {
        js_methodids_class(jv, classes[i]);
        (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    (*jv)->Deallocate(jv, (unsigned char *)classes);
    js_debug("method ids: compiled code replayed and %d loaded classes visited in %.1f ms", (int)n, now_ms() - t0);
    return (int)n;
}

void js_methodids_off(void)
{
    if (!jv || !atomic_exchange(&active, 0)) return;
    jvmtiError e = switch_events(JVMTI_DISABLE);
    if (e != JVMTI_ERROR_NONE) js_debug("JVMTI refused to turn ClassPrepare or CompiledMethodLoad off (error %d)", (int)e);
}
