/* javaapi.c - the in-process Java API (jsampler.JSampler): natives registered with JNI.
 *
 * JNI_OnLoad runs when Java code calls System.load on the library, whether -agentpath loaded it
 * already or not: it sets the agent up in the live phase if that has not happened yet, then binds
 * JSampler's natives with RegisterNatives. The natives hand command strings to the dispatcher, like
 * every other entry point: same syntax, same state machine, same replies.
 */
#include <jni.h>
#include <stdio.h>
#include <string.h>

#include "agent/cmd.h"
#include "agent_int.h"
#include "util/log.h"
#include "util/version.h"

#define REPLY_MAX 8192
#define API_CLASS "jsampler/JSampler"
#define ERROR_CLASS "jsampler/JSamplerException"

/* Throw JSamplerException(status, message) into Java (IllegalStateException if that class is missing). */
static void throw_error(JNIEnv *env, js_status st, const char *reply)
{
    char msg[REPLY_MAX + 64];
    snprintf(msg, sizeof msg, "%s: %s", js_strerror(st), reply);
    jclass c = (*env)->FindClass(env, ERROR_CLASS);
    if (!c) {
        (*env)->ExceptionClear(env);
        c = (*env)->FindClass(env, "java/lang/IllegalStateException");
    }
    if (c) (*env)->ThrowNew(env, c, msg);
}

/* JSampler.execute0(String command): the agent's reply, or an exception carrying it. */
static jstring JNICALL execute0(JNIEnv *env, jclass cls, jstring command)
{
    if (!command) {
        throw_error(env, JS_ERR_ARGS, "no command given");
        return NULL;
    }
    const char *cmd = (*env)->GetStringUTFChars(env, command, NULL);
    if (!cmd) return NULL; /* OutOfMemoryError pending */
    char reply[REPLY_MAX] = "";
    js_status st = js_execute(cmd, reply, sizeof reply);
    (*env)->ReleaseStringUTFChars(env, command, cmd);
    if (st != JS_OK) {
        throw_error(env, st, reply);
        return NULL;
    }
    return (*env)->NewStringUTF(env, reply);
}

/* JSampler.version0(): "jsampler X.Y.Z". */
static jstring JNICALL version0(JNIEnv *env, jclass cls)
{
    return (*env)->NewStringUTF(env, "jsampler " JS_VERSION);
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    JNIEnv *env = NULL;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
    if (js_agent_init_live(vm, env) != 0) js_error("Java API: the agent could not be set up in this JVM");
    jclass cls = (*env)->FindClass(env, API_CLASS);
    if (!cls) { /* loaded by code that does not know JSampler (another class loader): nothing to bind */
        (*env)->ExceptionClear(env);
        return JNI_VERSION_1_6;
    }
    static const JNINativeMethod methods[] = {
        {"execute0", "(Ljava/lang/String;)Ljava/lang/String;", (void *)execute0},
        {"version0", "()Ljava/lang/String;", (void *)version0},
    };
    if ((*env)->RegisterNatives(env, cls, methods, sizeof methods / sizeof methods[0]) != 0) {
        (*env)->ExceptionClear(env);
        js_error("Java API: cannot bind the natives of %s", API_CLASS);
    }
    (*env)->DeleteLocalRef(env, cls);
    return JNI_VERSION_1_6;
}
