/* agent_backend.c - the agent's side of the task client: its options, and the host functions
 * through which the client reaches the profiler (the dispatcher) and the VM. */
#include <jni.h>
#include <stdio.h>
#include <string.h>

#include "agent/cmd.h"
#include "agent_int.h"
#include "backend/backend.h"

/* Process-wide: the VM and the options the client runs with (one client per process). */
static JavaVM *backend_vm;
static js_backend_conf pending_conf;
static int pending;

static int host_execute(const char *cmd, char *out, size_t outlen)
{
    return js_execute(cmd, out, outlen) == JS_OK ? 0 : -1;
}

/* Attach the calling thread as a daemon under JS_BACKEND_THREAD_NAME (the agent leaves it unsampled). */
static int host_vm_enter(void)
{
    JNIEnv *env = NULL;
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, JS_BACKEND_THREAD_NAME, NULL};
    return backend_vm && (*backend_vm)->AttachCurrentThreadAsDaemon(backend_vm, (void **)&env, &aa) == JNI_OK ? 0 : -1;
}

static void host_vm_leave(void)
{
    if (backend_vm) (*backend_vm)->DetachCurrentThread(backend_vm);
}

int js_agent_backend_configure(const char *opts, char *cmd, size_t cmdlen, char *err, size_t errlen)
{
    char bopts[4096];
    js_backend_split(opts, cmd, cmdlen, bopts, sizeof bopts);
    js_backend_conf c;
    int rc = js_backend_conf_load(bopts, &c, err, errlen);
    if (rc == 1) {
        pending_conf = c;
        pending = 1;
    }
    return rc;
}

/* 1 if a and b configure the same client (what a second request may repeat without changing anything). */
static int same_conf(const js_backend_conf *a, const js_backend_conf *b)
{
    if (a->ntargets != b->ntargets || a->tls != b->tls || a->insecure != b->insecure || a->poll_ms != b->poll_ms ||
        a->upload_max != b->upload_max)
        return 0;
    for (int i = 0; i < a->ntargets; i++)
        if (strcmp(a->targets[i], b->targets[i]) != 0) return 0;
    return !strcmp(a->service, b->service) && !strcmp(a->instance, b->instance) && !strcmp(a->token, b->token) &&
           !strcmp(a->cafile, b->cafile) && !strcmp(a->taskdir, b->taskdir);
}

int js_agent_backend_start(JavaVM *vm, char *out, size_t outlen)
{
    if (!pending) {
        snprintf(out, outlen, "no task client configured");
        return -1;
    }
    js_backend_conf running;
    if (js_backend_running(&running)) { /* one client per process: a repeated request is answered, not refused */
        pending = 0;
        if (same_conf(&running, &pending_conf)) {
            snprintf(out, outlen, "task client already runs with these options: service %s, instance %s, backend %s",
                     running.service, running.instance, running.targets[0]);
            return 0;
        }
        snprintf(out, outlen, "a task client already runs with other options (service %s, instance %s, backend %s); "
                              "its options cannot change while the JVM runs", running.service, running.instance,
                 running.targets[0]);
        return -1;
    }
    backend_vm = vm;
    static const js_backend_host host = {host_execute, host_vm_enter, host_vm_leave};
    char err[512];
    if (js_backend_start(&pending_conf, &host, err, sizeof err) != 0) {
        snprintf(out, outlen, "task client not started: %s", err);
        return -1;
    }
    pending = 0;
    snprintf(out, outlen, "task client started: service %s, instance %s, backend %s, taskdir %s", pending_conf.service,
             pending_conf.instance, pending_conf.targets[0], pending_conf.taskdir);
    return 0;
}
