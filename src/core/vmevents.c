/* vmevents.c - see vmevents.h. */
#include "core/vmevents.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc_native_int.h"
#include "core/classes.h"
#include "core/symbols.h"
#include "core/live.h"
#include "sample/threads.h"
#include "core/snapshot.h"
#include "sample/sampler.h"
#include "sample/walker.h"
#include "util/log.h"
#include "util/monotime.h"

#define MAX_DEPTH 2048 /* frames asked of GetStackTrace (jstackdepth, at most this) */
#define MAX_NATIVE 128 /* native frames of an allocation sample (below the VM's entry) */

typedef void(JNICALL *park_fn)(JNIEnv *env, jobject unsafe, jboolean absolute, jlong time);
typedef void(JNICALL *start0_fn)(JNIEnv *env, jobject thread);

/* Process-wide like the JVMTI environment the callbacks come from. Settings are atomics: callbacks of
 * any thread read them while a command changes them. */
static struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    _Atomic int alloc_on, lock_on, depth;
    _Atomic int alloc_cstack; /* js_cstack: the native frames allocation samples get */
    _Atomic uint64_t alloc_interval;
    _Atomic long long lock_ns;
    /* park: the original Unsafe.park (bound to park_hook from start-up on) and the field naming a park's blocker */
    park_fn _Atomic orig_park;
    jfieldID blocker_field; /* java.lang.Thread.parkBlocker */
    /* capabilities held for the running session (changed under the command lock only) */
    int alloc_cap, lock_cap;
    int tlab_on; /* tlab: the VM's TLAB event functions are hooked */
    /* Thread.start0, bound to start0_hook when thread starts are traced (core/snapshot.h) */
    start0_fn _Atomic orig_start0;
    int want_park, want_start0; /* which natives the bind callback wraps */
} V;

#define JVM_DEFAULT_HEAP_SAMPLING_INTERVAL (512 * 1024) /* HotSpot's, restored when a session gives it back */

static __thread uint64_t monitor_wait_start; /* MonitorContendedEnter time of this thread, 0 none */

void js_vmevents_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    V.vm = vm;
    V.jvmti = jvmti;
}

/* Class id of klass (0 if it cannot be named). */
static uint32_t class_id(jclass klass)
{
    char *sig = NULL;
    if (!klass || (*V.jvmti)->GetClassSignature(V.jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE) return 0;
    uint32_t id = js_classes_id(sig);
    (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)sig);
    return id;
}

/* Record an event of the current thread: its stack, ending in class frame cls, with info; an allocated object
 * (live) is tracked with that stack. */
static void record(uint32_t cls, js_sample_info *info, JNIEnv *jni, jobject object)
{
    int depth = atomic_load(&V.depth);
    jvmtiFrameInfo *fi = malloc(((size_t)depth + 1) * sizeof *fi); /* one more: tells a stack cut at depth */
    js_raw_frame *raw = malloc(((size_t)depth + 2 + MAX_NATIVE) * sizeof *raw);
    jint count = 0;
    if (fi && raw && (*V.jvmti)->GetStackTrace(V.jvmti, NULL, 0, depth + 1, fi, &count) == JVMTI_ERROR_NONE) {
        int cut = count > depth;
        if (cut) count = depth;
        int n = 0;
        raw[n++] = (js_raw_frame){.bci = 0, .kind = JS_RF_CLASS, .method = (const void *)(uintptr_t)cls};
        if (info->kind == JS_SK_ALLOC) { /* the VM's own frames between the allocation and Java code */
            int in_java = 0;
            int k = js_alloc_native_frames((js_cstack)atomic_load(&V.alloc_cstack), raw + n, MAX_NATIVE, &in_java);
            if (in_java || count == 0) n += k; /* a native part that broke off before Java code is not shown */
        }
        for (jint i = 0; i < count; i++)
            raw[n++] = (js_raw_frame){.bci = fi[i].location >= 0 ? (int32_t)fi[i].location : -1,
                                      .kind = fi[i].location >= 0 ? JS_RF_JAVA : JS_RF_NATIVE,
                                      .method = fi[i].method};
        if (cut) raw[n++] = (js_raw_frame){.bci = JS_WALK_TRUNCATED, .kind = JS_RF_ERROR, .method = NULL};
        info->cls = cls;
        int tid = (int)syscall(SYS_gettid);
        js_sampler_record(cls ? raw : raw + 1, cls ? n : n - 1, tid, info);
        js_thread *t = object ? js_threads_find(tid) : NULL;
        if (t) js_live_track(jni, object, cls ? raw : raw + 1, cls ? n : n - 1, atomic_load(&t->serial), info->weight);
    }
    free(fi);
    free(raw);
}

void js_vmevents_on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass, jlong size)
{
    if (!atomic_load(&V.alloc_on) || size <= 0) return;
    /* A sample point falls on average every I bytes: an object of s bytes is sampled with probability
     * 1 - e^(-s/I), so it stands for s / (1 - e^(-s/I)) bytes (about I for small objects, s for huge ones). */
    double s = (double)size, iv = (double)atomic_load(&V.alloc_interval);
    double p = -expm1(-s / iv);
    js_sample_info info = {.kind = JS_SK_ALLOC, .weight = (uint64_t)(s / (p > 0 ? p : 1) + 0.5),
                           .value = (uint64_t)size, .ticks = js_mono_ns()};
    record(class_id(klass), &info, jni, object);
}

void js_vmevents_on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
    monitor_wait_start = atomic_load(&V.lock_on) ? js_mono_ns() : 0;
}

void js_vmevents_on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
    uint64_t t0 = monitor_wait_start, now = js_mono_ns();
    monitor_wait_start = 0;
    if (!t0 || !atomic_load(&V.lock_on) || now - t0 < (uint64_t)atomic_load(&V.lock_ns)) return;
    jclass k = (*jni)->GetObjectClass(jni, object);
    js_sample_info info = {.kind = JS_SK_LOCK, .weight = now - t0, .sub = JS_LOCK_MONITOR, .ticks = t0};
    record(class_id(k), &info, NULL, NULL);
    if (k) (*jni)->DeleteLocalRef(jni, k);
}

/* The class of the current thread's park blocker (Thread.parkBlocker), 0 if none. */
static uint32_t blocker_class(JNIEnv *env)
{
    jthread self = NULL;
    if (!V.blocker_field || (*V.jvmti)->GetCurrentThread(V.jvmti, &self) != JVMTI_ERROR_NONE || !self) return 0;
    uint32_t id = 0;
    jobject b = (*env)->GetObjectField(env, self, V.blocker_field);
    if (b) {
        jclass k = (*env)->GetObjectClass(env, b);
        id = class_id(k);
        if (k) (*env)->DeleteLocalRef(env, k);
        (*env)->DeleteLocalRef(env, b);
    }
    (*env)->DeleteLocalRef(env, self);
    return id;
}

/* Unsafe.park, timed: the original runs, and a wait of lock= or longer is recorded. */
static void JNICALL park_hook(JNIEnv *env, jobject unsafe, jboolean absolute, jlong time)
{
    park_fn orig = atomic_load(&V.orig_park);
    if (!atomic_load(&V.lock_on)) {
        orig(env, unsafe, absolute, time);
        return;
    }
    uint64_t t0 = js_mono_ns();
    orig(env, unsafe, absolute, time);
    uint64_t d = js_mono_ns() - t0;
    if (!atomic_load(&V.lock_on) || d < (uint64_t)atomic_load(&V.lock_ns) || (*env)->ExceptionCheck(env)) return;
    js_sample_info info = {.kind = JS_SK_LOCK, .weight = d, .sub = JS_LOCK_PARK, .ticks = t0,
                           .value = (uint64_t)time, .absolute = absolute ? 1 : 0};
    record(blocker_class(env), &info, NULL, NULL);
}

/* Thread.start0, wrapped: the original starts the thread; the caller's stack is recorded if it did. */
static void JNICALL start0_hook(JNIEnv *env, jobject thread)
{
    atomic_load(&V.orig_start0)(env, thread);
    if (!(*env)->ExceptionCheck(env)) js_snapshot_thread_started();
}

/* 1 if method is csig.name with signature sig (e.g. "Ljava/lang/Thread;", "start0", "()V"). */
static int is_method(jvmtiEnv *jvmti, jmethodID method, const char *csig_want, const char *name_want,
                     const char *sig_want)
{
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass k = NULL;
    int yes = 0;
    if ((*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) == JVMTI_ERROR_NONE && strcmp(name, name_want) == 0 &&
        strcmp(sig, sig_want) == 0 && (*jvmti)->GetMethodDeclaringClass(jvmti, method, &k) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) == JVMTI_ERROR_NONE)
        yes = strcmp(csig, csig_want) == 0;
    (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
    return yes;
}

void js_vmevents_on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method, void *address,
                                void **new_address)
{
    if (V.want_park && !atomic_load(&V.orig_park) && address != (void *)park_hook &&
        is_method(jvmti, method, "Ljdk/internal/misc/Unsafe;", "park", "(ZJ)V")) {
        atomic_store(&V.orig_park, (park_fn)address);
        *new_address = (void *)park_hook;
    } else if (V.want_start0 && !atomic_load(&V.orig_start0) && address != (void *)start0_hook &&
               is_method(jvmti, method, "Ljava/lang/Thread;", "start0", "()V")) {
        atomic_store(&V.orig_start0, (start0_fn)address);
        *new_address = (void *)start0_hook;
        js_snapshot_starts_traced();
    }
    if ((!V.want_park || atomic_load(&V.orig_park)) && (!V.want_start0 || atomic_load(&V.orig_start0)))
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL);
}

int js_vmevents_capture(jvmtiEnv *jvmti, int park, int thread_starts)
{
    /* Unsafe and Thread bind their natives before the start phase, where methods cannot be named: an early
     * start phase lets the bind callback name them. */
    V.want_park = park;
    V.want_start0 = thread_starts;
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    c.can_generate_early_vmstart = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &c) != JVMTI_ERROR_NONE) return -1;
    return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL) ==
                   JVMTI_ERROR_NONE ? 0 : -1;
}

/* The JNIEnv of the calling thread, attaching it as a daemon if it is not (*attached = 1). */
static JNIEnv *jni_env(int *attached)
{
    JNIEnv *env = NULL;
    *attached = 0;
    if ((*V.vm)->GetEnv(V.vm, (void **)&env, JNI_VERSION_1_6) == JNI_OK) return env;
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler vm events", NULL};
    if ((*V.vm)->AttachCurrentThreadAsDaemon(V.vm, (void **)&env, &aa) != JNI_OK) return NULL;
    *attached = 1;
    return env;
}

/* java.lang.Thread.parkBlocker, for the class a park waits on (once). */
static void find_blocker_field(void)
{
    int attached;
    JNIEnv *env = V.blocker_field ? NULL : jni_env(&attached);
    if (!env) return;
    jclass th = (*env)->FindClass(env, "java/lang/Thread");
    if (th) V.blocker_field = (*env)->GetFieldID(env, th, "parkBlocker", "Ljava/lang/Object;");
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    if (th) (*env)->DeleteLocalRef(env, th);
    if (attached) (*V.vm)->DetachCurrentThread(V.vm);
}

/* An agent loaded after start-up finds Unsafe.park bound already (its NativeMethodBind came before us): the
 * original is found by its symbol in libjvm (Unsafe_Park, the function the VM binds; in the symbol table of the
 * JDKs built here), then the method is bound again to park_hook with RegisterNatives. Threads inside the original
 * stay there; later parks come through the hook. 0, or -1 (no such symbol, or the JVM refused). */
static int bind_park_late(void)
{
    if (atomic_load(&V.orig_park)) return 0;
    int attached;
    JNIEnv *env = jni_env(&attached);
    if (!env) return -1;
    uintptr_t orig = js_symbols_lookup((uintptr_t)(*env)->GetVersion, "Unsafe_Park"); /* GetVersion: in libjvm */
    jclass k = orig ? (*env)->FindClass(env, "jdk/internal/misc/Unsafe") : NULL;
    int rc = -1;
    if (k) {
        atomic_store(&V.orig_park, (park_fn)orig); /* before any thread can enter the hook */
        JNINativeMethod m = {"park", "(ZJ)V", (void *)park_hook};
        if ((*env)->RegisterNatives(env, k, &m, 1) == JNI_OK) rc = 0;
        else atomic_store(&V.orig_park, NULL);
        (*env)->DeleteLocalRef(env, k);
    }
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    if (attached) (*V.vm)->DetachCurrentThread(V.vm);
    return rc;
}

/* Enable or disable one JVMTI event for every thread; the JVMTI error. */
static jvmtiError set_event(jvmtiEventMode mode, jvmtiEvent ev)
{
    return (*V.jvmti)->SetEventNotificationMode(V.jvmti, mode, ev, NULL);
}

/* Add (on 1) or give back (on 0) the one capability set by fill; the JVMTI error. */
static jvmtiError set_cap(int on, void (*fill)(jvmtiCapabilities *))
{
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    fill(&c);
    return on ? (*V.jvmti)->AddCapabilities(V.jvmti, &c) : (*V.jvmti)->RelinquishCapabilities(V.jvmti, &c);
}

static void alloc_cap(jvmtiCapabilities *c)
{
    c->can_generate_sampled_object_alloc_events = 1;
}

static void lock_cap(jvmtiCapabilities *c)
{
    c->can_generate_monitor_events = 1;
}

/* The heap sampling interval for alloc= bytes, within the JVM's limit. */
static jint heap_interval(uint64_t alloc_bytes)
{
    return (jint)(alloc_bytes > INT32_MAX ? INT32_MAX : alloc_bytes);
}

int js_vmevents_early_interval(jvmtiEnv *jvmti, uint64_t alloc_bytes)
{
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    alloc_cap(&c);
    if ((*jvmti)->AddCapabilities(jvmti, &c) != JVMTI_ERROR_NONE) return -1;
    jint interval = heap_interval(alloc_bytes);
    jvmtiError e = (*jvmti)->SetHeapSamplingInterval(jvmti, interval);
    (*jvmti)->RelinquishCapabilities(jvmti, &c);
    return e == JVMTI_ERROR_NONE ? 0 : -1;
}

/* Sampled allocations on at the interval of a; 0 or -1 with err (nothing left held). */
static int alloc_start(const js_args *a, char *err, size_t errlen)
{
    jvmtiError e = set_cap(1, alloc_cap);
    if (e != JVMTI_ERROR_NONE) {
        /* The capability is one JVMTI environment's at a time: another agent's session (async-profiler, another
         * copy of this library) may hold it. */
        snprintf(err, errlen, "alloc: the JVM refused sampled allocation events (JVMTI error %d%s)", (int)e,
                 e == JVMTI_ERROR_NOT_AVAILABLE ? ": another JVMTI agent in this JVM holds them; only one may at a time"
                                                : "");
        return -1;
    }
    V.alloc_cap = 1;
    if (a->cstack != JS_CSTACK_NO) js_alloc_native_prepare();
    atomic_store(&V.alloc_cstack, (int)a->cstack);
    jint interval = heap_interval(a->alloc_bytes);
    atomic_store(&V.alloc_interval, (uint64_t)interval);
    e = (*V.jvmti)->SetHeapSamplingInterval(V.jvmti, interval);
    if (e == JVMTI_ERROR_NONE) e = set_event(JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC);
    if (e != JVMTI_ERROR_NONE) {
        js_vmevents_stop();
        snprintf(err, errlen, "alloc: the JVM refused sampled allocation events (JVMTI error %d)", (int)e);
        return -1;
    }
    atomic_store(&V.alloc_on, 1);
    return 0;
}

/* Monitor contention events on; 0 or -1 with err (nothing left held). */
static int lock_start(const js_args *a, char *note, size_t notelen, char *err, size_t errlen)
{
    atomic_store(&V.lock_ns, a->lock_ns);
    jvmtiError e = set_cap(1, lock_cap);
    if (e == JVMTI_ERROR_NONE) {
        V.lock_cap = 1;
        e = set_event(JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER);
    }
    if (e == JVMTI_ERROR_NONE) e = set_event(JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED);
    if (e != JVMTI_ERROR_NONE) {
        js_vmevents_stop();
        snprintf(err, errlen, "lock: the JVM refused monitor contention events (JVMTI error %d)", (int)e);
        return -1;
    }
    find_blocker_field();
    if (!atomic_load(&V.orig_park) && bind_park_late() == 0) js_debug("lock: Unsafe.park bound to the agent's hook");
    atomic_store(&V.lock_on, 1);
    if (!atomic_load(&V.orig_park))
        snprintf(note, notelen, "lock: LockSupport.park waits (java.util.concurrent locks) are not traced: loaded "
                 "after start-up, the agent did not find libjvm's Unsafe_Park to bind Unsafe.park to; contended "
                 "synchronized blocks are traced");
    return 0;
}

int js_vmevents_start(const js_args *a, char *note, size_t notelen, char *err, size_t errlen)
{
    note[0] = 0;
    if (!a->alloc_bytes && a->lock_ns < 0) return 0;
    if (!V.jvmti) {
        snprintf(err, errlen, "%s needs the JVM (JVMTI), which this process does not have", a->alloc_bytes ? "alloc" : "lock");
        return -1;
    }
    atomic_store(&V.depth, a->jstackdepth < MAX_DEPTH ? a->jstackdepth : MAX_DEPTH);
    if (a->alloc_bytes && a->tlab) {
        if (js_alloc_tlab_start(a, err, errlen) != 0) return -1;
        V.tlab_on = 1;
    } else if (a->alloc_bytes && alloc_start(a, err, errlen) != 0) {
        return -1;
    }
    if (a->lock_ns >= 0 && lock_start(a, note, notelen, err, errlen) != 0) return -1;
    return 0;
}

void js_vmevents_stop(void)
{
    if (V.tlab_on) js_alloc_tlab_stop();
    V.tlab_on = 0;
    if (atomic_exchange(&V.alloc_on, 0)) set_event(JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC);
    if (atomic_exchange(&V.lock_on, 0)) {
        set_event(JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER);
        set_event(JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED);
    }
    /* Give back what the session took, so another agent (async-profiler, another copy of this library) can have it:
     * sampled allocations are one environment's at a time. The heap sampling interval is the VM's, not ours. */
    if (V.alloc_cap) {
        (*V.jvmti)->SetHeapSamplingInterval(V.jvmti, JVM_DEFAULT_HEAP_SAMPLING_INTERVAL);
        set_cap(0, alloc_cap);
        V.alloc_cap = 0;
    }
    if (V.lock_cap) {
        set_cap(0, lock_cap);
        V.lock_cap = 0;
    }
}
