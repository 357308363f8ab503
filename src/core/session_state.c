/* session_state.c - the one session of the process and the lock its commands take. */
#include <stdio.h>
#include <time.h>

#include "session_int.h"

/* The one session of the process (a signal handler, the engines and JVMTI are process-wide).
 * Every field is guarded by cmd_lock, except `state` (read without it by status and hooks). */
js_session js_sess;
pthread_mutex_t js_cmd_lock = PTHREAD_MUTEX_INITIALIZER;

/* The calling thread's JNIEnv, or NULL (no VM, or a thread not attached to it). */
JNIEnv *js_session_env(void)
{
    JNIEnv *env = NULL;
    if (!js_sess.vm || (*js_sess.vm)->GetEnv(js_sess.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) return NULL;
    return env;
}

/* CLOCK_MONOTONIC in ns. */
uint64_t js_session_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* "10ms", "250us" for logs. */
void js_session_format_ns(long long ns, char *buf, size_t len)
{
    if (ns % 1000000000LL == 0) snprintf(buf, len, "%llds", ns / 1000000000LL);
    else if (ns % 1000000LL == 0) snprintf(buf, len, "%lldms", ns / 1000000LL);
    else if (ns % 1000LL == 0) snprintf(buf, len, "%lldus", ns / 1000LL);
    else snprintf(buf, len, "%lldns", ns);
}

