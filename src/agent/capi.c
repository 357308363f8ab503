/* capi.c - async-profiler's C API (asprof_init, asprof_execute, asprof_error_str) over the one dispatcher.
 *
 * For native programs that load the library with dlopen, with or without a JVM in the process. asprof_init sets
 * the profiler up once: on the process's JVM if one has been created (JNI_GetCreatedJavaVMs), else for native code
 * alone (cpu, wall and the perf events with native frames; alloc and lock need a JVM and are refused). A session
 * still running when the process exits is stopped and written then. asprof_execute runs one command string like
 * every other entry point; what it writes without file= and its reply go to the caller's callback. An error is a
 * message that stays valid until the calling thread's next asprof_execute; asprof_error_str returns it as it is.
 */
#include <dlfcn.h>
#include <jni.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cmd.h"
#include "agent_int.h"
#include "core/profiler.h"
#include "util/log.h"

#define REPLY_MAX 8192
#define CAPI __attribute__((visibility("default")))

typedef const char *asprof_error_t;
typedef void (*asprof_writer_t)(const char *buf, size_t size);

CAPI void asprof_init(void);
CAPI const char *asprof_error_str(asprof_error_t err);
CAPI asprof_error_t asprof_execute(const char *command, asprof_writer_t output_callback);

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* At exit of a process without a JVM (which stops a session itself at VM death): stop and write. */
static void at_exit(void)
{
    js_profiler_shutdown();
}

/* The process's JVM, if one was created; NULL otherwise. */
static JavaVM *created_vm(void)
{
    typedef jint (*get_vms_fn)(JavaVM **, jsize, jsize *);
    get_vms_fn get = (get_vms_fn)dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    void *h = get ? NULL : dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
    if (h) get = (get_vms_fn)dlsym(h, "JNI_GetCreatedJavaVMs");
    JavaVM *vm = NULL;
    jsize n = 0;
    if (!get || get(&vm, 1, &n) != JNI_OK || n < 1) vm = NULL;
    if (h) dlclose(h);
    return vm;
}

/* Whether the profiler is set up on a JVM (set once; a process has one JVM at most). */
static _Atomic int on_vm;

/* Set the profiler up on the process's JVM if one exists now (attaching this thread for the call if it is not);
 * 1 if it is set up on one. */
static int join_vm(void)
{
    if (atomic_load(&on_vm)) return 1;
    JavaVM *vm = created_vm();
    JNIEnv *env = NULL;
    int attached = 0;
    if (vm && (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) {
        JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler init", NULL};
        attached = (*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&env, &aa) == JNI_OK;
        if (!attached) env = NULL;
    }
    if (env && js_agent_init_live(vm, env) == 0) atomic_store(&on_vm, 1);
    if (attached) (*vm)->DetachCurrentThread(vm);
    return atomic_load(&on_vm);
}

/* Once: on the JVM if there is one, else for native code (a JVM the process creates later is joined by the first
 * command that finds no session running). The library stays loaded for good (its exit handler and signal handler
 * must outlive a dlclose by the host). */
static void init_once(void)
{
    Dl_info self;
    if (dladdr((void *)init_once, &self) && self.dli_fname) dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (join_vm()) {
        js_info("C API: set up on the process's JVM");
    } else {
        js_agent_init_native();
        atexit(at_exit);
        js_info("C API: set up for native code (no JVM in this process)");
    }
}

void asprof_init(void)
{
    pthread_once(&once, init_once);
}

const char *asprof_error_str(asprof_error_t err)
{
    return err;
}

asprof_error_t asprof_execute(const char *command, asprof_writer_t output_callback)
{
    static __thread char error[REPLY_MAX];
    asprof_init();
    if (!atomic_load(&on_vm) && !js_profiler_running() && join_vm()) /* a JVM created since: Java frames from now on */
        js_info("C API: set up on the JVM the process created");
    char *buf = NULL, reply[REPLY_MAX] = "";
    size_t n = 0;
    FILE *cap = open_memstream(&buf, &n);
    if (!cap) return "out of memory";
    js_status st = js_execute_capture(command ? command : "", cap, reply, sizeof reply);
    fclose(cap);
    if (st != JS_OK) {
        free(buf);
        snprintf(error, sizeof error, "%s", reply[0] ? reply : js_strerror(st));
        return error;
    }
    if (output_callback && n) {
        output_callback(buf, n);
    } else if (output_callback && reply[0]) {
        size_t r = strlen(reply);
        reply[r < sizeof reply - 1 ? r++ : r - 1] = '\n';
        output_callback(reply, r);
    }
    free(buf);
    return NULL;
}
