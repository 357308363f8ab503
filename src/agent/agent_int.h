/* agent_int.h - what the agent's entry points share: setting the agent up in a running VM. */
#ifndef JS_AGENT_INT_H
#define JS_AGENT_INT_H

#include <jni.h>

/* Set the agent up in the live phase (the library was loaded by System.load, or later by attach):
 * JVMTI capabilities, callbacks and events, jmethodIDs for every class loaded so far, compiled
 * methods so far. Once per process; a no-op after -agentpath's VMInit. 0, or -1 (logged). */
int js_agent_init_live(JavaVM *vm, JNIEnv *jni);

#endif
