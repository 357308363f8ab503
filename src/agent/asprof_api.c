/* asprof_api.c - async-profiler's Java API (one.profiler.AsyncProfiler) over the one dispatcher.
 *
 * Code and agents built against async-profiler's API jar (Pyroscope's and SkyWalking's Java agents among them) call
 * these natives, resolved by their JNI names once the class has loaded this library with System.load. Each one
 * becomes a command string for js_execute_capture, so the syntax, state machine and replies are those of every
 * other entry point; what differs is async-profiler's contract around them:
 *   - a dump or stop without file= returns the profile as the call's result (never the JVM's stdout);
 *   - a plain stop writes nothing and keeps the profile for a later dump; "collapsed" alone means dump;
 *   - errors throw IllegalArgumentException (a bad option), java.io.IOException (an output that cannot be
 *     written) or IllegalStateException (the session is not in the right state, an engine that cannot start);
 *   - getVersion ("version") is the bare version number.
 */
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/cmd.h"
#include "core/args.h"
#include "core/profiler.h"
#include "util/version.h"

#define REPLY_MAX 8192
#define CMD_MAX 4096

/* Throw what async-profiler's API throws for st, with msg. */
static void throw_for(JNIEnv *env, js_status st, const char *msg)
{
    const char *name = st == JS_ERR_ARGS ? "java/lang/IllegalArgumentException"
                       : st == JS_ERR_IO ? "java/io/IOException"
                                         : "java/lang/IllegalStateException";
    jclass c = (*env)->FindClass(env, name);
    if (c) (*env)->ThrowNew(env, c, msg);
}

/* Run cmd with a capture stream. On success the result (what the command wrote without file=, else its reply and a
 * newline) in a malloc'd buffer with its length; on failure NULL with an exception thrown. */
static char *run(JNIEnv *env, const char *cmd, size_t *len)
{
    char *buf = NULL, reply[REPLY_MAX] = "";
    size_t n = 0;
    FILE *cap = open_memstream(&buf, &n);
    if (!cap) {
        throw_for(env, JS_ERR_STATE, "out of memory");
        return NULL;
    }
    js_status st = js_execute_capture(cmd, cap, reply, sizeof reply);
    fclose(cap);
    if (st != JS_OK) {
        free(buf);
        throw_for(env, st, reply);
        return NULL;
    }
    if (n == 0) { /* nothing written to the caller: the reply is the result */
        free(buf);
        size_t r = strlen(reply);
        if (!(buf = malloc(r + 2))) {
            throw_for(env, JS_ERR_STATE, "out of memory");
            return NULL;
        }
        memcpy(buf, reply, r);
        if (r) buf[r++] = '\n';
        buf[r] = 0;
        n = r;
    }
    *len = n;
    return buf;
}

/* A Java byte[] of len bytes of s, or NULL with an exception pending. */
static jbyteArray bytes_of(JNIEnv *env, const char *s, size_t len)
{
    if (len > 0x7ffffff0u) {
        throw_for(env, JS_ERR_STATE, "Output exceeds the largest Java array");
        return NULL;
    }
    jbyteArray a = (*env)->NewByteArray(env, (jsize)len);
    if (a) (*env)->SetByteArrayRegion(env, a, 0, (jsize)len, (const jbyte *)s);
    return a;
}

/* A Java String decoded from UTF-8 s (NewStringUTF wants modified UTF-8, which profile text need not be). */
static jstring string_of(JNIEnv *env, const char *s, size_t len)
{
    jbyteArray a = bytes_of(env, s, len);
    jclass c = a ? (*env)->FindClass(env, "java/lang/String") : NULL;
    jmethodID ctor = c ? (*env)->GetMethodID(env, c, "<init>", "([BLjava/lang/String;)V") : NULL;
    jstring cs = ctor ? (*env)->NewStringUTF(env, "UTF-8") : NULL;
    return cs ? (jstring)(*env)->NewObject(env, c, ctor, a, cs) : NULL;
}

/* The command in a Java string, or NULL with an exception pending (NullPointerException for null). */
static const char *command_of(JNIEnv *env, jstring command)
{
    if (!command) {
        jclass c = (*env)->FindClass(env, "java/lang/NullPointerException");
        if (c) (*env)->ThrowNew(env, c, "command");
        return NULL;
    }
    return (*env)->GetStringUTFChars(env, command, NULL);
}

/* execute0 and execute1: the result of cmd, as text or bytes. */
static jobject execute(JNIEnv *env, jstring command, int as_bytes)
{
    const char *cmd = command_of(env, command);
    if (!cmd) return NULL;
    jobject res = NULL;
    js_args a;
    char err[512];
    js_args_defaults(&a);
    int parsed = js_args_parse(cmd, &a, err, sizeof err) == 0;
    if (parsed && a.action == JS_ACTION_VERSION) {
        res = as_bytes ? (jobject)bytes_of(env, JS_VERSION, strlen(JS_VERSION))
                       : (jobject)string_of(env, JS_VERSION, strlen(JS_VERSION));
    } else if (parsed && as_bytes && a.file[0]) {
        throw_for(env, JS_ERR_ARGS, "execute1 calls should not specify an output file argument");
    } else {
        size_t len;
        char *out = run(env, cmd, &len);
        if (out) res = as_bytes ? (jobject)bytes_of(env, out, len) : (jobject)string_of(env, out, len);
        free(out);
    }
    (*env)->ReleaseStringUTFChars(env, command, cmd);
    return res;
}

/* AsyncProfiler.start0(String event, long interval, boolean reset): start (reset) or resume profiling event. */
JNIEXPORT void JNICALL Java_one_profiler_AsyncProfiler_start0(JNIEnv *env, jobject self, jstring event, jlong interval,
                                                               jboolean reset)
{
    const char *ev = command_of(env, event);
    if (!ev) return;
    char cmd[CMD_MAX];
    const char *action = reset ? "start" : "resume";
    if (strcmp(ev, "alloc") == 0) /* the allocation interval in bytes; 0 the default */
        snprintf(cmd, sizeof cmd, "%s,alloc=%lld", action, interval > 0 ? (long long)interval : 0LL);
    else if (strcmp(ev, "lock") == 0) /* the lock threshold in ns */
        snprintf(cmd, sizeof cmd, "%s,lock=%lld", action, interval >= 0 ? (long long)interval : 10000LL);
    else if (interval > 0)
        snprintf(cmd, sizeof cmd, "%s,event=%s,interval=%lld", action, ev, (long long)interval);
    else
        snprintf(cmd, sizeof cmd, "%s,event=%s", action, ev);
    (*env)->ReleaseStringUTFChars(env, event, ev);
    size_t len;
    free(run(env, cmd, &len));
}

/* AsyncProfiler.stop0(): stop, keeping the profile for a dump. */
JNIEXPORT void JNICALL Java_one_profiler_AsyncProfiler_stop0(JNIEnv *env, jobject self)
{
    size_t len;
    free(run(env, "stop", &len));
}

/* AsyncProfiler.execute0(String command): the command's text result. */
JNIEXPORT jstring JNICALL Java_one_profiler_AsyncProfiler_execute0(JNIEnv *env, jobject self, jstring command)
{
    return (jstring)execute(env, command, 0);
}

/* AsyncProfiler.execute1(String command): the command's result as bytes (binary formats). */
JNIEXPORT jbyteArray JNICALL Java_one_profiler_AsyncProfiler_execute1(JNIEnv *env, jobject self, jstring command)
{
    return (jbyteArray)execute(env, command, 1);
}

/* AsyncProfiler.getSamples(): samples of the session (with those a resume carried on). */
JNIEXPORT jlong JNICALL Java_one_profiler_AsyncProfiler_getSamples(JNIEnv *env, jobject self)
{
    return (jlong)js_profiler_samples();
}

/* AsyncProfiler.filterThread0(Thread thread, boolean enable): add or remove a thread (null: the calling one) in the
 * filter of a session started with `filter`; a thread the agent does not know is ignored. */
JNIEXPORT void JNICALL Java_one_profiler_AsyncProfiler_filterThread0(JNIEnv *env, jobject self, jobject thread,
                                                                      jboolean enable)
{
    if (!thread) {
        js_profiler_filter_thread((int)syscall(SYS_gettid), 0, enable);
        return;
    }
    jclass c = (*env)->GetObjectClass(env, thread);
    jmethodID id = c ? (*env)->GetMethodID(env, c, "getId", "()J") : NULL;
    if (!id) return;
    jlong jtid = (*env)->CallLongMethod(env, thread, id);
    if ((*env)->ExceptionCheck(env)) return;
    js_profiler_filter_thread(0, (int64_t)jtid, enable);
}
