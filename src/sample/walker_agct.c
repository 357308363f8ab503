/* walker_agct.c - stack walker over HotSpot's AsyncGetCallTrace.
 *
 * AsyncGetCallTrace walks the calling thread from the signal's ucontext and writes
 * {lineno(bci), jmethodID} pairs; js_raw_frame has the same layout for those two fields
 * (the 4 padding bytes are our `kind`), so it writes straight into the store's frame type.
 *
 * The JNIEnv it needs is the interrupted thread's own, taken in the handler with
 * JavaVM->GetEnv: a registry keyed by tid would miss threads that existed before the agent
 * and hand a reused tid a stale env. In HotSpot GetEnv reads the current Thread* from a
 * compiler thread-local (__thread in libjvm), which is only signal-safe once that thread has
 * touched it: the first access from a thread that never ran VM code can allocate its TLS block
 * (malloc in __tls_get_addr, the reason behind JDK-8132510). So GetEnv runs only for threads
 * HotSpot has registered: HotSpot also stores the current Thread* in a pthread key (read with
 * pthread_getspecific, which is what its own signal handlers use). That key is found at init
 * by looking for the value of the current thread's java.lang.Thread.eetop (its JavaThread*)
 * among the pthread keys. A thread without it gets JS_WALK_NO_ENV without calling into the VM.
 * If the key cannot be found (another VM), GetEnv is called unguarded.
 *
 * Even a thread that has touched the thread-local is not safe in GetEnv: when a library with
 * thread-locals was loaded since (dlopen bumps glibc's TLS generation), that thread's next
 * thread-local access updates its TLS vector, which can reallocate it (malloc, free) — from a
 * signal handler, over an interrupted malloc or an interrupted update of the same vector. So
 * where AsyncGetCallTrace finds the thread itself (through the same pthread key, JDK-8285794: JDK
 * 17.0.6 and later, 19 and later) and only checks that env_id is not NULL, the handler calls no
 * JNI function at all: the JNIEnv lies at a fixed offset in HotSpot's JavaThread, measured once
 * at init, and AsyncGetCallTrace itself refuses a thread that is not a Java thread.
 */
#include "sample/walker.h"

#include <dlfcn.h>
#include <jni.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>

#include "sample/safe_fmt.h"
#include "walker_int.h"

typedef struct {
    jint lineno;
    jmethodID method_id;
} agct_frame;

typedef struct {
    JNIEnv *env_id;
    jint num_frames;
    agct_frame *frames;
} agct_trace;

_Static_assert(sizeof(agct_frame) == sizeof(js_raw_frame), "frame layouts differ");
_Static_assert(offsetof(agct_frame, method_id) == offsetof(js_raw_frame, method), "method offset differs");
_Static_assert(offsetof(agct_frame, lineno) == offsetof(js_raw_frame, bci), "bci offset differs");

typedef void (*agct_fn)(agct_trace *, jint, void *);

#ifndef PTHREAD_KEYS_MAX
#define PTHREAD_KEYS_MAX 1024
#endif

/* Resolved once at init on a normal thread, read by handlers (a handler has no context). */
static struct {
    agct_fn agct;
    JavaVM *vm;
    int have_key; /* 1 when vm_key is HotSpot's current-thread key */
    pthread_key_t vm_key;
    int env_by_offset; /* 1: env = Thread* + env_offset, no GetEnv in handlers (see above) */
    intptr_t env_offset;
} W;

/* 1 if this VM's AsyncGetCallTrace takes the current thread from the pthread key and needs of
 * env_id only that it is not NULL (JDK-8285794: 17.0.6+, 19+), read from java.version. */
static int agct_finds_thread(JNIEnv *jni)
{
    int ok = 0;
    jclass sys = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID get = sys ? (*jni)->GetStaticMethodID(jni, sys, "getProperty", "(Ljava/lang/String;)Ljava/lang/String;") : NULL;
    jstring key = get ? (*jni)->NewStringUTF(jni, "java.version") : NULL;
    jstring v = key ? (jstring)(*jni)->CallStaticObjectMethod(jni, sys, get, key) : NULL;
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
    const char *text = v ? (*jni)->GetStringUTFChars(jni, v, NULL) : NULL;
    if (text) {
        int part[3] = {0, 0, 0}, i = 0; /* "17.0.15", "25.0.3", "25" */
        for (const char *c = text; *c && i < 3; c++) {
            if (*c == '.') i++;
            else if (*c >= '0' && *c <= '9' && part[i] < 100000) part[i] = part[i] * 10 + (*c - '0');
            else break;
        }
        ok = part[0] >= 19 || (part[0] == 17 && (part[1] > 0 || part[2] >= 6)); /* feature.interim.update */
        (*jni)->ReleaseStringUTFChars(jni, v, text);
    }
    if (v) (*jni)->DeleteLocalRef(jni, v);
    if (key) (*jni)->DeleteLocalRef(jni, key);
    if (sys) (*jni)->DeleteLocalRef(jni, sys);
    return ok;
}

/* Find HotSpot's current-thread pthread key from a Java thread's JNIEnv; 0 or -1. */
static int find_vm_key(JNIEnv *jni)
{
    int found = -1;
    jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID cur = c ? (*jni)->GetStaticMethodID(jni, c, "currentThread", "()Ljava/lang/Thread;") : NULL;
    jfieldID eetop = c ? (*jni)->GetFieldID(jni, c, "eetop", "J") : NULL;
    jobject self = cur ? (*jni)->CallStaticObjectMethod(jni, c, cur) : NULL;
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
    jlong vm_thread = self && eetop ? (*jni)->GetLongField(jni, self, eetop) : 0;
    for (int k = 0; vm_thread && k < PTHREAD_KEYS_MAX && found < 0; k++)
        if (pthread_getspecific((pthread_key_t)k) == (void *)(intptr_t)vm_thread) {
            W.vm_key = (pthread_key_t)k;
            found = 0;
        }
    intptr_t offset = (intptr_t)jni - (intptr_t)vm_thread; /* the JNIEnv is a field of the JavaThread */
    W.env_offset = offset;
    W.env_by_offset = found == 0 && offset > 0 && offset < 65536 && agct_finds_thread(jni);
    if (self) (*jni)->DeleteLocalRef(jni, self);
    if (c) (*jni)->DeleteLocalRef(jni, c);
    return found;
}

/* Look for the key from this thread, attaching it to the VM for the time of the search if needed. */
static void init_vm_key(JavaVM *vm)
{
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK) {
        W.have_key = find_vm_key(jni) == 0;
        return;
    }
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler init", NULL};
    if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&jni, &aa) != JNI_OK) return;
    W.have_key = find_vm_key(jni) == 0;
    (*vm)->DetachCurrentThread(vm);
}

/* Resolve AsyncGetCallTrace and HotSpot's thread key (normal thread); 0 or -1 with err. */
static int agct_init(void *java_vm, char *err, size_t errlen)
{
    if (!java_vm) {
        js_safe_fmt(err, errlen, "the AsyncGetCallTrace walker needs the JavaVM");
        return -1;
    }
    if (!W.agct) {
        W.agct = (agct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
        if (!W.agct) {
            void *h = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
            if (h) W.agct = (agct_fn)dlsym(h, "AsyncGetCallTrace");
        }
    }
    if (!W.agct) {
        js_safe_fmt(err, errlen, "AsyncGetCallTrace not found in this JVM (HotSpot is required)");
        return -1;
    }
    if (W.vm != java_vm || !W.have_key) {
        W.vm = java_vm;
        W.have_key = 0;
        init_vm_key(W.vm);
    }
    return 0;
}

/* Signal-safe: the interrupted thread's JNIEnv, or NULL if it is not a Java thread. */
static JNIEnv *current_env(void)
{
    if (W.have_key) {
        intptr_t thread = (intptr_t)pthread_getspecific(W.vm_key);
        if (!thread) return NULL; /* never touched the VM */
        if (W.env_by_offset) return (JNIEnv *)(thread + W.env_offset);
    }
    JNIEnv *env = NULL;
    if ((*W.vm)->GetEnv(W.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) return NULL;
    return env;
}

uintptr_t js_agct_vm_thread(void)
{
    return W.have_key ? (uintptr_t)pthread_getspecific(W.vm_key) : 0;
}

/* Signal-safe. */
static int agct_walk(void *ucontext, js_raw_frame *frames, int max)
{
    JNIEnv *env = current_env();
    if (!env) return JS_WALK_NO_ENV;
    agct_trace trace = {env, 0, (agct_frame *)frames};
    W.agct(&trace, max, ucontext);
    int n = trace.num_frames;
    /* by offset, a thread of the VM's own (GC, VM thread) reaches AsyncGetCallTrace, which calls it exiting */
    if (n == JS_WALK_THREAD_EXIT && W.env_by_offset) return JS_WALK_NO_ENV;
    for (int i = 0; i < n; i++) {
        if (frames[i].bci == -3) frames[i].kind = JS_RF_NATIVE;
        else frames[i].kind = frames[i].method ? JS_RF_JAVA : JS_RF_NULL_ID;
    }
    return n;
}

const js_walker js_walker_agct = {
    .name = "AsyncGetCallTrace",
    .init = agct_init,
    .walk = agct_walk,
};
