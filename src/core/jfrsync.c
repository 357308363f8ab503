/* jfrsync.c - see jfrsync.h. */
#include "core/jfrsync.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/safefile.h"

#define STOP_WAIT_MS 3000 /* the JDK's shutdown hook may still be writing the recording when we stop it */

/* The one JDK recording of a jfrsync session (sessions are one at a time, under the session lock). */
static struct {
    jobject rec;                     /* global reference to the jdk.jfr.Recording, or NULL */
    char dir[JS_SAFE_PATH_MAX];      /* private directory beside the output, where the JDK writes */
    char jdk_file[JS_SAFE_PATH_MAX]; /* dir/jdk.jfr */
} S;

/* The calling thread's JNIEnv, attaching it (as a daemon) if needed; *attached says whether to detach. */
static JNIEnv *env_of(JavaVM *vm, int *attached)
{
    JNIEnv *env = NULL;
    *attached = 0;
    if (!vm) return NULL;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) == JNI_OK) return env;
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler jfrsync", NULL};
    if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&env, &aa) != JNI_OK) return NULL;
    *attached = 1;
    return env;
}

/* If a Java exception is pending: cleared, and described in err after what; -1. Else 0. */
static int pending(JNIEnv *env, const char *what, char *err, size_t errlen)
{
    if (!(*env)->ExceptionCheck(env)) return 0;
    jthrowable t = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    char why[256] = "a Java exception";
    jclass oc = (*env)->FindClass(env, "java/lang/Object");
    jmethodID ts = oc ? (*env)->GetMethodID(env, oc, "toString", "()Ljava/lang/String;") : NULL;
    jstring s = t && ts ? (jstring)(*env)->CallObjectMethod(env, t, ts) : NULL;
    const char *c = s && !(*env)->ExceptionCheck(env) ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
    if (c) {
        snprintf(why, sizeof why, "%s", c);
        (*env)->ReleaseStringUTFChars(env, s, c);
    }
    (*env)->ExceptionClear(env);
    if (err) snprintf(err, errlen, "jfrsync: %s: %s", what, why);
    return -1;
}

/* A java.nio.file.Path for p, or NULL (exception pending). */
static jobject path_of(JNIEnv *env, const char *p)
{
    jclass paths = (*env)->FindClass(env, "java/nio/file/Paths"), str = (*env)->FindClass(env, "java/lang/String");
    if (!paths || !str) return NULL;
    jmethodID get = (*env)->GetStaticMethodID(env, paths, "get", "(Ljava/lang/String;[Ljava/lang/String;)Ljava/nio/file/Path;");
    jobjectArray none = get ? (*env)->NewObjectArray(env, 0, str, NULL) : NULL;
    jstring js = none ? (*env)->NewStringUTF(env, p) : NULL;
    return js ? (*env)->CallStaticObjectMethod(env, paths, get, js, none) : NULL;
}

/* Call a method of the recording by name and signature: with a String argument s, an object o, a boolean z
 * (signature "(Z)V"), or none; what it returns is dropped. */
static void call(JNIEnv *env, jobject rec, const char *name, const char *sig, const char *s, jboolean z, jobject o)
{
    jclass rc = (*env)->GetObjectClass(env, rec);
    jmethodID m = rc ? (*env)->GetMethodID(env, rc, name, sig) : NULL;
    if (!m) return;
    char ret = strchr(sig, ')')[1];
    jvalue arg = {0};
    if (s) arg.l = (*env)->NewStringUTF(env, s);
    else if (o) arg.l = o;
    else arg.z = z;
    if (ret == 'V') (*env)->CallVoidMethodA(env, rec, m, &arg);
    else if (ret == 'Z') (*env)->CallBooleanMethodA(env, rec, m, &arg);
    else (*env)->CallObjectMethodA(env, rec, m, &arg);
}

/* The configuration named by config: a .jfc file's path (it has a '/' or ends in .jfc), else a name. */
static jobject configuration(JNIEnv *env, const char *config)
{
    jclass cc = (*env)->FindClass(env, "jdk/jfr/Configuration");
    if (!cc) return NULL;
    size_t n = strlen(config);
    if (strchr(config, '/') || (n > 4 && strcmp(config + n - 4, ".jfc") == 0)) {
        jmethodID m = (*env)->GetStaticMethodID(env, cc, "create", "(Ljava/nio/file/Path;)Ljdk/jfr/Configuration;");
        jobject p = m ? path_of(env, config) : NULL;
        return p ? (*env)->CallStaticObjectMethod(env, cc, m, p) : NULL;
    }
    jmethodID m = (*env)->GetStaticMethodID(env, cc, "getConfiguration", "(Ljava/lang/String;)Ljdk/jfr/Configuration;");
    jstring js = m ? (*env)->NewStringUTF(env, config) : NULL;
    return js ? (*env)->CallStaticObjectMethod(env, cc, m, js) : NULL;
}

void js_jfrsync_stream_path(const char *path, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s.jsampler~", path);
}

int js_jfrsync_start(JavaVM *vm, const char *config, unsigned kinds, const char *path, char *err, size_t errlen)
{
    if (S.rec) {
        snprintf(err, errlen, "jfrsync: a JDK recording of an earlier session is still running");
        return -1;
    }
    int attached, rc = -1;
    JNIEnv *env = env_of(vm, &attached);
    if (!env) {
        snprintf(err, errlen, "jfrsync: needs a running JVM (no JNI environment here)");
        return -1;
    }
    (*env)->PushLocalFrame(env, 32);
    snprintf(S.dir, sizeof S.dir, "%s.jdk-XXXXXX", path);
    jobject cfg = NULL, rec = NULL, dest = NULL;
    jclass rcl = NULL;
    if (!mkdtemp(S.dir)) {
        snprintf(err, errlen, "jfrsync: cannot make a directory beside '%s': %s", path, js_safe_strerror(errno));
        S.dir[0] = 0;
        goto out;
    }
    snprintf(S.jdk_file, sizeof S.jdk_file, "%s/jdk.jfr", S.dir);
    cfg = configuration(env, config);
    if (!cfg) {
        if (!pending(env, config, err, errlen))
            snprintf(err, errlen, "jfrsync: this JVM has no JDK Flight Recorder (module jdk.jfr)");
        goto out;
    }
    rcl = (*env)->FindClass(env, "jdk/jfr/Recording");
    jmethodID ctor = rcl ? (*env)->GetMethodID(env, rcl, "<init>", "(Ljdk/jfr/Configuration;)V") : NULL;
    rec = ctor ? (*env)->NewObject(env, rcl, ctor, cfg) : NULL;
    if (!rec) {
        if (!pending(env, "cannot make a JDK recording", err, errlen)) snprintf(err, errlen, "jfrsync: no jdk.jfr.Recording");
        goto out;
    }
    static const char *const cpu[] = {"jdk.ExecutionSample", "jdk.NativeMethodSample", NULL};
    static const char *const alloc[] = {"jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB",
                                        "jdk.ObjectAllocationSample", "jdk.OldObjectSample", NULL};
    static const char *const lock[] = {"jdk.JavaMonitorEnter", "jdk.ThreadPark", NULL};
    const char *const *off[] = {kinds & JS_JFRSYNC_CPU ? cpu : NULL, kinds & JS_JFRSYNC_ALLOC ? alloc : NULL,
                                kinds & JS_JFRSYNC_LOCK ? lock : NULL};
    for (size_t k = 0; k < 3; k++)
        for (const char *const *e = off[k]; e && *e; e++)
            call(env, rec, "disable", "(Ljava/lang/String;)Ljdk/jfr/EventSettings;", *e, 0, NULL);
    call(env, rec, "setName", "(Ljava/lang/String;)V", "jsampler jfrsync", 0, NULL);
    call(env, rec, "setToDisk", "(Z)V", NULL, JNI_TRUE, NULL);
    call(env, rec, "setDumpOnExit", "(Z)V", NULL, JNI_TRUE, NULL); /* the JDK's shutdown hook writes it at exit */
    dest = path_of(env, S.jdk_file);
    if (dest) call(env, rec, "setDestination", "(Ljava/nio/file/Path;)V", NULL, 0, dest);
    if (pending(env, "cannot set up the JDK recording", err, errlen)) goto out;
    call(env, rec, "start", "()V", NULL, 0, NULL);
    if (pending(env, "cannot start the JDK recording", err, errlen)) goto out;
    S.rec = (*env)->NewGlobalRef(env, rec);
    rc = S.rec ? 0 : -1;
    if (rc) snprintf(err, errlen, "jfrsync: out of memory");
out:
    if (rc && S.dir[0]) rmdir(S.dir), S.dir[0] = 0;
    (*env)->PopLocalFrame(env, NULL);
    if (attached) (*vm)->DetachCurrentThread(vm);
    return rc;
}

/* The recording's state name ("RUNNING", "STOPPED", "CLOSED", ...) into out. */
static void state_of(JNIEnv *env, char *out, size_t outlen)
{
    out[0] = 0;
    jclass rc = (*env)->GetObjectClass(env, S.rec), ec = (*env)->FindClass(env, "java/lang/Enum");
    jmethodID gs = rc ? (*env)->GetMethodID(env, rc, "getState", "()Ljdk/jfr/RecordingState;") : NULL;
    jmethodID nm = ec ? (*env)->GetMethodID(env, ec, "name", "()Ljava/lang/String;") : NULL;
    jobject st = gs && nm ? (*env)->CallObjectMethod(env, S.rec, gs) : NULL;
    jstring s = st ? (jstring)(*env)->CallObjectMethod(env, st, nm) : NULL;
    const char *c = s && !(*env)->ExceptionCheck(env) ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
    if (c) snprintf(out, outlen, "%s", c), (*env)->ReleaseStringUTFChars(env, s, c);
    (*env)->ExceptionClear(env);
}

/* Stop the JDK's recording (written to jdk_file by then) and let it go. */
static void stop_recording(JavaVM *vm)
{
    int attached;
    JNIEnv *env = S.rec ? env_of(vm, &attached) : NULL;
    if (!env) return;
    (*env)->PushLocalFrame(env, 16);
    call(env, S.rec, "stop", "()Z", NULL, 0, NULL);
    (*env)->ExceptionClear(env); /* already stopped: at exit the JDK's shutdown hook stops and writes it */
    char st[32];
    for (int ms = 0; ms < STOP_WAIT_MS; ms += 10) {
        state_of(env, st, sizeof st);
        if (strcmp(st, "RUNNING") != 0 && strcmp(st, "DELAYED") != 0 && strcmp(st, "NEW") != 0 &&
            access(S.jdk_file, F_OK) == 0)
            break;
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
    call(env, S.rec, "close", "()V", NULL, 0, NULL);
    (*env)->ExceptionClear(env);
    (*env)->DeleteGlobalRef(env, S.rec);
    S.rec = NULL;
    (*env)->PopLocalFrame(env, NULL);
    if (attached) (*vm)->DetachCurrentThread(vm);
}

/* Append the file at from to fd; its size, or -1 (errno set). */
static long long append_file(int fd, const char *from)
{
    int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0) return -1;
    char buf[65536];
    long long total = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = errno;
            close(in);
            errno = e;
            return n < 0 ? -1 : total;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                int e = w < 0 ? errno : ENOSPC;
                close(in);
                errno = e;
                return -1;
            }
            off += w;
        }
        total += n;
    }
}

/* Clear the "final chunk" flag (bit 1 of the header's byte 67) of every chunk in the first len bytes of fd: the JDK
 * marks the last chunk of its recording so, and its reader stops there, before jsampler's chunks. 0, or -1. */
static int unmark_final(int fd, long long len)
{
    for (long long off = 0; off + 68 <= len;) {
        uint8_t h[68];
        if (pread(fd, h, sizeof h, off) != (ssize_t)sizeof h || memcmp(h, "FLR", 4) != 0) return -1;
        uint64_t size = 0;
        for (int i = 8; i < 16; i++) size = size << 8 | h[i];
        if (size < sizeof h || size > (uint64_t)(len - off)) return -1;
        if (h[67] & 2) {
            uint8_t flags = h[67] & (uint8_t)~2u;
            if (pwrite(fd, &flags, 1, off + 67) != 1) return -1;
        }
        off += (long long)size;
    }
    return 0;
}

/* Remove what the session made beside the output. */
static void remove_made(const char *stream)
{
    if (stream) unlink(stream);
    if (S.dir[0]) {
        unlink(S.jdk_file);
        rmdir(S.dir);
        S.dir[0] = 0;
    }
}

int js_jfrsync_finish(JavaVM *vm, const char *path, char *msg, size_t msglen)
{
    char stream[JS_SAFE_PATH_MAX + 16];
    js_jfrsync_stream_path(path, stream, sizeof stream);
    stop_recording(vm);
    js_safe_file f;
    if (js_safe_open(&f, "JFR", path, JS_SAFE_ATOMIC, msg, msglen) != 0) {
        remove_made(stream);
        return -1;
    }
    int jf = open(S.jdk_file, O_RDWR | O_CLOEXEC | O_NOFOLLOW), joinable = 1; /* in our private directory */
    if (jf >= 0) {
        off_t len = lseek(jf, 0, SEEK_END);
        joinable = len >= 0 && unmark_final(jf, (long long)len) == 0;
        close(jf);
    }
    long long jdk = joinable ? append_file(f.fd, S.jdk_file) : -1;
    int e = joinable ? errno : 0;
    if (!joinable) {
        snprintf(msg, msglen, "jfrsync: the JDK's recording in '%s' is not a JFR file we can join", S.jdk_file);
        js_safe_abort(&f);
        remove_made(stream);
        return -1;
    }
    if (jdk < 0 && e != ENOENT) {
        snprintf(msg, msglen, "jfrsync: cannot write JFR '%s': %s", path, js_safe_strerror(e));
        js_safe_abort(&f);
        remove_made(stream);
        return -1;
    }
    long long ours = append_file(f.fd, stream);
    if (ours < 0) {
        snprintf(msg, msglen, "jfrsync: cannot write JFR '%s': %s", path, js_safe_strerror(errno));
        js_safe_abort(&f);
        remove_made(stream);
        return -1;
    }
    int rc = js_safe_commit(&f, msg, msglen);
    remove_made(stream);
    if (rc) return -1;
    if (jdk < 0)
        snprintf(msg, msglen, "jfrsync: the JDK's recording was not written (stopped elsewhere?); '%s' holds jsampler's "
                 "(%lld bytes)", path, ours);
    else
        snprintf(msg, msglen, "jfrsync: wrote '%s': the JDK's recording (%lld bytes), then jsampler's (%lld bytes)",
                 path, jdk, ours);
    return jdk < 0 ? -1 : 0;
}

void js_jfrsync_abort(JavaVM *vm)
{
    stop_recording(vm);
    remove_made(NULL);
}
