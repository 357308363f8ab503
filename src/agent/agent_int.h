/* agent_int.h - what the agent's entry points share: setting the agent up in a running VM. */
#ifndef JS_AGENT_INT_H
#define JS_AGENT_INT_H

#include <jni.h>
#include <stddef.h>

/* Set the agent up in the live phase (the library was loaded by System.load, or later by attach):
 * JVMTI capabilities, callbacks and events, jmethodIDs for every class loaded so far, compiled
 * methods so far. Once per process; a no-op after -agentpath's VMInit. 0, or -1 (logged). */
int js_agent_init_live(JavaVM *vm, JNIEnv *jni);

/* The name the task client's thread has while attached to the VM; such threads are not sampled. */
#define JS_BACKEND_THREAD_NAME "jsampler backend"

/* Take the task client's options out of opts (the profiler command is left in cmd) and check them.
 * 1 when they ask for a client ('backend[=...]'; SW_AGENT_* fill in what they leave out; kept for
 * js_agent_backend_start), 0 when they do not (the environment is not read), -1 with one line in err. */
int js_agent_backend_configure(const char *opts, char *cmd, size_t cmdlen, char *err, size_t errlen);
/* Start the configured task client on vm; 0 with one line in out (also when the same client already
 * runs), or -1 with the reason (a client with other options runs, thread or libcurl failure). */
int js_agent_backend_start(JavaVM *vm, char *out, size_t outlen);

#endif
