/* agent.c - JVMTI entry points and VM callbacks: the -agentpath entry into the dispatcher.
 *
 * Agent_OnLoad validates the options (a bad option stops JVM start-up, naming it), sets up
 * JVMTI (capabilities, events) and, at VMInit, hands the option string to js_execute. The
 * callbacks feed thread lifecycle and compiled-method facts to the core; ClassPrepare creates
 * jmethodIDs so AsyncGetCallTrace can name every frame. Those two and CompiledMethodUnload are on only
 * while a session runs (core/methodids.h). VMDeath stops and writes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <jvmti.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/args.h"
#include "agent/cmd.h"
#include "util/log.h"
#include "util/version.h"
#include "core/codenames.h"
#include "core/methodids.h"
#include "core/names.h"
#include "core/vmevents.h"
#include "core/profiler.h"
#include "core/vmflags.h"
#include "backend/backend.h"
#include "agent_int.h"

#define MAX_INLINED 512 /* distinct inlined methods recorded per compiled method */
#define REPLY_MAX 4096

/* Process-wide: JVMTI calls back without a context pointer. */
static jvmtiEnv *jvmti;
static JavaVM *jvm;
static char *startup_cmd; /* -agentpath options, run at VMInit */
static int startup_backend; /* -agentpath (or SW_AGENT_*) configured the task client: started at VMInit */
static _Atomic int vm_dead;
static _Atomic int vm_ready;  /* VMInit done (or set up in the live phase): commands may run */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER; /* serialises the setups below */

static int current_tid(void)
{
    return (int)syscall(SYS_gettid);
}

/* Java name of thread into buf ("" if unavailable). */
static void thread_name(jvmtiEnv *env, JNIEnv *jni, jthread thread, char *buf, size_t len)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    buf[0] = 0;
    if ((*env)->GetThreadInfo(env, thread, &info) != JVMTI_ERROR_NONE) return;
    if (info.name) {
        snprintf(buf, len, "%s", info.name);
        (*env)->Deallocate(env, (unsigned char *)info.name);
    }
    if (info.thread_group) (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader) (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

/* java.lang.Thread's private "tid" field (JDK 17 and 25), looked up once at VM init; a field ID
 * is a process-wide constant, hence the global. NULL if the field is not there. */
static jfieldID thread_tid_field;

/* Look up Thread.tid; clears the exception if the field does not exist. */
static void find_thread_tid_field(JNIEnv *jni)
{
    jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
    if (c) thread_tid_field = (*jni)->GetFieldID(jni, c, "tid", "J");
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
    if (c) (*jni)->DeleteLocalRef(jni, c);
}

/* The java.lang.Thread id of thread, or 0 if unknown. */
static int64_t java_thread_id(JNIEnv *jni, jthread thread)
{
    return thread_tid_field && thread ? (int64_t)(*jni)->GetLongField(jni, thread, thread_tid_field) : 0;
}

/* Run a command through the dispatcher and log its reply. */
static js_status run_command(const char *cmd)
{
    char reply[REPLY_MAX] = "";
    js_status st = js_execute(cmd, reply, sizeof reply);
    if (st != JS_OK) js_error("%s: %s", js_strerror(st), reply);
    return st;
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    (*env)->GenerateEvents(env, JVMTI_EVENT_DYNAMIC_CODE_GENERATED); /* what the VM generated before we listened */
    find_thread_tid_field(jni);
    char name[64];
    thread_name(env, jni, thread, name, sizeof name);
    js_profiler_thread_start(current_tid(), jni, name, java_thread_id(jni, thread));
    atomic_store(&vm_ready, 1);
    if (startup_cmd) {
        js_args a;
        char err[256];
        js_args_defaults(&a);
        if (js_args_parse(startup_cmd, &a, err, sizeof err) == 0 && a.action != JS_ACTION_NONE) run_command(startup_cmd);
    }
    if (startup_backend) {
        char out[1024];
        if (js_agent_backend_start(jvm, out, sizeof out) != 0) js_error("%s", out);
    }
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
    atomic_store(&vm_dead, 1);
    js_backend_shutdown(); /* first: a task still recording is handed to the profiler's shutdown */
    js_profiler_shutdown();
}

static void JNICALL on_class_load(jvmtiEnv *env, JNIEnv *jni, jthread thread, jclass klass)
{
    /* Enabled only because AsyncGetCallTrace refuses to walk unless ClassLoad events are on. */
}

static void JNICALL on_class_prepare(jvmtiEnv *env, JNIEnv *jni, jthread thread, jclass klass)
{
    js_methodids_class(env, klass); /* enabled while a session runs (core/methodids.c) */
}

static void JNICALL on_thread_start(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    if (atomic_load(&vm_dead)) return;
    char name[64];
    thread_name(env, jni, thread, name, sizeof name);
    if (strcmp(name, JS_BACKEND_THREAD_NAME) == 0) return; /* our task client, attached only to run commands */
    js_profiler_thread_start(current_tid(), jni, name, java_thread_id(jni, thread));
}

static void JNICALL on_thread_end(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    if (atomic_load(&vm_dead)) return;
    char name[64];
    thread_name(env, jni, thread, name, sizeof name);
    js_profiler_thread_end(current_tid(), name);
}

/* Add m to the set ids[0..*n) if absent and there is room. */
static void add_unique(jmethodID *ids, int *n, jmethodID m)
{
    for (int i = 0; i < *n; i++)
        if (ids[i] == m) return;
    if (*n < MAX_INLINED) ids[(*n)++] = m;
}

static void JNICALL on_compiled_method_load(jvmtiEnv *env, jmethodID method, jint code_size, const void *code_addr,
                                            jint map_length, const jvmtiAddrLocationMap *map,
                                            const void *compile_info)
{
    jmethodID inlined[MAX_INLINED];
    int n = 0;
    for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next) {
        if (h->kind != JVMTI_CMLR_INLINE_INFO) continue;
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; i < r->numpcs; i++)
            for (jint j = 0; j < r->pcinfo[i].numstackframes; j++)
                if (r->pcinfo[i].methods[j] != method) add_unique(inlined, &n, r->pcinfo[i].methods[j]);
    }
    js_names_compiled(code_addr, method, inlined, n);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *env, jmethodID method, const void *code_addr)
{
    js_names_compiled_unload(code_addr, method);
}

/* Code the VM generates (stubs, adapters, the interpreter): named as the VM names it, without the "Stub Generator "
 * some JDKs put before a stub's own name. */
static void JNICALL on_dynamic_code(jvmtiEnv *env, const char *name, const void *address, jint length)
{
    static const char prefix[] = "Stub Generator ";
    if (!name || length <= 0) return;
    if (strncmp(name, prefix, sizeof prefix - 1) == 0) name += sizeof prefix - 1;
    js_codenames_add((uintptr_t)address, (size_t)length, name);
}

/* Capabilities, callbacks and events; 0 or -1 with a logged reason. */
static int setup_jvmti(void)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_get_source_file_name = 1;
    caps.can_get_line_numbers = 1;
    caps.can_generate_compiled_method_load_events = 1;
    jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &caps);
    if (e != JVMTI_ERROR_NONE) {
        js_error("JVMTI AddCapabilities failed (error %d)", (int)e);
        return -1;
    }
    /* Tracing LockSupport.park and Thread.start0 needs native method binding (a VM that refuses it still profiles).
     * What the alloc and lock events need is added by the session that asks for them and given back when it ends
     * (vmevents.c): sampled allocations are one JVMTI environment's at a time, and other agents may want them. */
    jvmtiCapabilities bind;
    memset(&bind, 0, sizeof bind);
    bind.can_generate_native_method_bind_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &bind) != JVMTI_ERROR_NONE) js_debug("JVMTI native method bind events refused");
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.CompiledMethodLoad = on_compiled_method_load;
    cb.CompiledMethodUnload = on_compiled_method_unload;
    cb.DynamicCodeGenerated = on_dynamic_code;
    cb.SampledObjectAlloc = js_vmevents_on_alloc;
    cb.MonitorContendedEnter = js_vmevents_on_contended_enter;
    cb.MonitorContendedEntered = js_vmevents_on_contended_entered;
    cb.NativeMethodBind = js_vmevents_on_native_bind;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE) {
        js_error("JVMTI SetEventCallbacks failed");
        return -1;
    }
    /* ClassPrepare and CompiledMethodLoad/Unload are not here: core/methodids.c turns them on while a session
     * runs (both make jmethodIDs, which the VM keeps for good). */
    const jvmtiEvent events[] = {JVMTI_EVENT_VM_INIT,      JVMTI_EVENT_VM_DEATH,     JVMTI_EVENT_CLASS_LOAD,
                                 JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
                                 JVMTI_EVENT_DYNAMIC_CODE_GENERATED};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) != JVMTI_ERROR_NONE) {
            js_error("JVMTI cannot enable event %d", (int)events[i]);
            return -1;
        }
    return 0;
}

/* One line when -agentpath options start nothing: idle on purpose (no options, or only log options) or,
 * with other options and no command, probably a forgotten 'start'. */
static void report_idle_load(const char *opts, const js_args *a)
{
    if (a->action != JS_ACTION_NONE) return;
    js_args only_log;
    js_args_defaults(&only_log);
    only_log.loglevel = a->loglevel;
    only_log.loglevel_set = a->loglevel_set;
    memcpy(only_log.log, a->log, sizeof only_log.log);
    if (memcmp(&only_log, a, sizeof only_log) != 0)
        fprintf(stderr, "[jsampler] WARN: -agentpath options '%s' have no command: nothing is profiled; add 'start' "
                        "to profile from start-up\n", opts);
    else if (a->loglevel <= JS_LOG_INFO)
        fprintf(stderr, "[jsampler] INFO: loaded idle; profiling starts on a 'start' command\n");
}

/* JVMTI environment, capabilities, callbacks and events, once per process. Caller holds init_lock. */
static int setup(JavaVM *vm)
{
    if (jvmti) return 0;
    jvm = vm;
    jvmtiEnv *env = NULL;
    if ((*vm)->GetEnv(vm, (void **)&env, JVMTI_VERSION_1_2) != JNI_OK) {
        js_error("JVMTI 1.2 is not available in this JVM");
        return -1;
    }
    jvmti = env;
    if (setup_jvmti() != 0) return -1;
    js_profiler_init(vm, jvmti);
    return 0;
}

static void pin_library(void);

int js_agent_init_live(JavaVM *vm, JNIEnv *jni)
{
    pthread_mutex_lock(&init_lock);
    int rc = 0;
    if (!atomic_load(&vm_ready)) {
        rc = setup(vm);
        if (rc == 0) {
            /* System.load from a class loader: the JDK unloads the library with the loader's last class, and the
             * callbacks set up here stay registered for the JVM's life */
            pin_library();
            /* The VMInit work, now: generated code so far, this thread (jmethodIDs and compiled code come with a
             * session's start: core/methodids.c). */
            find_thread_tid_field(jni);
            /* At start-up the CompiledMethodLoad capability turns DebugNonSafepoints on; loaded later, it is set here,
             * so methods compiled from now on keep their inlined frames at every pc */
            if (js_vmflag_set_default("DebugNonSafepoints", 1) == 1)
                js_debug("DebugNonSafepoints turned on: inlined frames of methods compiled from now on are exact");
            (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
            atomic_store(&vm_ready, 1);
        }
    }
    pthread_mutex_unlock(&init_lock);
    return rc;
}

int js_agent_init_native(void)
{
    pthread_mutex_lock(&init_lock);
    static int native_ready;
    if (!jvmti && !native_ready) {
        js_profiler_init(NULL, NULL); /* names of native code only; no JVMTI events */
        native_ready = 1;
    }
    pthread_mutex_unlock(&init_lock);
    return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    const char *given = options ? options : "";
    char err[512];
    if (startup_cmd) { /* a second -agentpath of this library: one agent per process */
        char shown[1024]; /* its options without secrets (token=) */
        js_log_redact(given, shown, sizeof shown);
        fprintf(stderr, "[jsampler] ERROR: the agent is loaded twice (-agentpath options '%s' and '%s'); give one "
                        "-agentpath with all options\n", startup_cmd, shown);
        return JNI_ERR;
    }
    size_t optlen = strlen(given) + 2;
    char *opts = malloc(optlen); /* the profiler command: the options without the task client's */
    if (!opts) return JNI_ERR;
    int backend = js_agent_backend_configure(given, opts, optlen, err, sizeof err);
    if (backend < 0) {
        fprintf(stderr, "[jsampler] ERROR: %s\n", err);
        free(opts);
        return JNI_ERR;
    }
    if (js_validate(opts, err, sizeof err) != JS_OK) {
        fprintf(stderr, "[jsampler] ERROR: %s\n", err);
        free(opts);
        return JNI_ERR;
    }
    js_args a;
    js_args_defaults(&a);
    js_args_parse(opts, &a, err, sizeof err);
    if (!backend) report_idle_load(opts, &a);
    if (js_log_configure(a.loglevel, a.log, err, sizeof err) != 0) {
        fprintf(stderr, "[jsampler] ERROR: option 'log=%s': %s\n", a.log, err);
        free(opts);
        return JNI_ERR;
    }
    pthread_mutex_lock(&init_lock);
    int rc = setup(vm);
    pthread_mutex_unlock(&init_lock);
    if (rc != 0) {
        free(opts);
        return JNI_ERR;
    }
    /* LockSupport.park and Thread.start0 can be wrapped only when the VM binds them, during start-up: park when locks
     * may be asked for (lock in the options, or tasks from a backend), Thread.start0 (who starts threads, for pprof
     * threadcreate tasks) with a backend; never otherwise. */
    if ((a.lock_ns >= 0 || backend) && js_vmevents_capture(jvmti, 1, backend) != 0)
        js_warn("lock: the VM does not report native method binding; LockSupport.park waits%s will not be traced",
                backend ? " and thread starts" : "");
    if (a.action == JS_ACTION_START && a.alloc_bytes && !a.tlab && js_vmevents_early_interval(jvmti, a.alloc_bytes) != 0)
        js_debug("alloc: the VM refused the heap sampling interval at start-up; set again at VMInit");
    startup_cmd = opts;
    startup_backend = backend;
    return JNI_OK;
}

/* Keep this library loaded for good: HotSpot dlcloses an agent whose Agent_OnAttach returns non-zero, and the JDK
 * one loaded by System.load once its class loader is collected; once JVMTI callbacks point into it either would leave
 * them pointing at unmapped code. */
static void pin_library(void)
{
    Dl_info info;
    if (dladdr((void *)pin_library, &info) && info.dli_fname) dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* Split the attach options into the command and our CLI's private "reply=PATH" (where the reply text
 * goes; the attach protocol itself only carries a return code). */
static void split_reply(const char *opts, char *cmd, size_t cmdlen, char *reply, size_t replylen)
{
    reply[0] = 0;
    size_t o = 0;
    cmd[0] = 0;
    for (const char *p = opts; *p;) {
        size_t n = strcspn(p, ",");
        if (n > 6 && strncmp(p, "reply=", 6) == 0) {
            snprintf(reply, replylen, "%.*s", (int)(n - 6), p + 6);
        } else if (n > 0 && o + n + 2 < cmdlen) {
            if (o) cmd[o++] = ',';
            memcpy(cmd + o, p, n);
            o += n;
            cmd[o] = 0;
        }
        p += n;
        if (*p == ',') p++;
    }
}

/* Write "<code>\n<text>" to the reply file the attaching CLI named (created here, never followed). */
static void write_reply(const char *path, js_status st, const char *text)
{
    if (!path[0] || path[0] != '/') return;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        js_warn("cannot write the attach reply to %s: %s", path, strerror(errno));
        return;
    }
    char head[32];
    int n = snprintf(head, sizeof head, "%d\n", (int)st);
    if (write(fd, head, (size_t)n) != n || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        js_warn("cannot write the attach reply to %s: %s", path, strerror(errno));
    close(fd);
}

/* Dynamic attach (jsampler CLI, jcmd JVMTI.agent_load, jattach): the first one sets JVMTI up as in the live phase,
 * every one runs its options through the dispatcher. Returns 0 or the js_status of the command (the attaching tool
 * shows it as "return code: N"); the JVM keeps running either way. */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    char all[2048], cmd[2048], reply[1024], out[8192] = "";
    split_reply(options ? options : "", all, sizeof all, reply, sizeof reply);
    pin_library();
    int backend = js_agent_backend_configure(all, cmd, sizeof cmd, out, sizeof out);
    js_status st = backend < 0 ? JS_ERR_ARGS : js_validate(cmd, out, sizeof out);
    JNIEnv *jni = NULL;
    if (st == JS_OK && (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) {
        snprintf(out, sizeof out, "the attach thread has no JNI environment");
        st = JS_ERR_STATE;
    }
    if (st == JS_OK && js_agent_init_live(vm, jni) != 0) {
        snprintf(out, sizeof out, "cannot set up JVMTI in this JVM (see its log)");
        st = JS_ERR_STATE;
    }
    if (st == JS_OK && backend == 1 && js_agent_backend_start(vm, out, sizeof out) != 0) st = JS_ERR_STATE;
    if (st == JS_OK && !cmd[0] && backend != 1) {
        snprintf(out, sizeof out, "jsampler %s loaded, idle: send a command such as 'start'", JS_VERSION);
    } else if (st == JS_OK && cmd[0]) { /* the command's reply goes after the task client's line, if any */
        size_t o = strlen(out);
        if (o) out[o++] = '\n';
        st = js_execute(cmd, out + o, sizeof out - o);
        o = strlen(out);
        if (st == JS_OK && strcmp(cmd, "status") == 0 && o + 2 < sizeof out) { /* and the task client's state */
            out[o] = '\n';
            if (js_backend_describe(out + o + 1, sizeof out - o - 1) != 0) out[o] = 0;
        }
    }
    if (st != JS_OK) js_error("attach '%s': %s", cmd, out);
    write_reply(reply, st, out);
    return st == JS_OK ? 0 : (jint)st;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    js_log_close();
}
