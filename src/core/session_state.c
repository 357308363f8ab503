/* session_state.c - the one session of the process and the lock its commands take. */
#include <stdio.h>
#include <time.h>

#include "session_int.h"
#include "util/monotime.h"

/* The one session of the process (a signal handler, the engines and JVMTI are process-wide).
 * Every field is guarded by js_cmd_lock, except `state` (read without it by status and hooks). */
js_session js_sess;
pthread_mutex_t js_cmd_lock = PTHREAD_MUTEX_INITIALIZER;

/* The calling thread's JNIEnv, or NULL (no VM, or a thread not attached to it). */
JNIEnv *js_session_env(void)
{
    JNIEnv *env = NULL;
    if (!js_sess.vm || (*js_sess.vm)->GetEnv(js_sess.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK) return NULL;
    return env;
}

/* "10ms", "250us" for logs. */
void js_session_format_ns(long long ns, char *buf, size_t len)
{
    if (ns % 1000000000LL == 0) snprintf(buf, len, "%llds", ns / 1000000000LL);
    else if (ns % 1000000LL == 0) snprintf(buf, len, "%lldms", ns / 1000000LL);
    else if (ns % 1000LL == 0) snprintf(buf, len, "%lldus", ns / 1000LL);
    else snprintf(buf, len, "%lldns", ns);
}

/* The command that holds js_cmd_lock and since when (monotonic ns), for the refusal of the ones that wait on it.
 * Written under the lock, read by the waiters without it. */
static _Atomic(const char *) cmd_holder;
static _Atomic uint64_t cmd_since_ns;

/* Polls with trylock rather than pthread_mutex_clocklock, which ThreadSanitizer's runtime here does not know. */
int js_session_lock(const char *what, int wait_ms, char *out, size_t outlen)
{
    const struct timespec step = {0, 10 * 1000000L};
    for (int waited = 0; pthread_mutex_trylock(&js_cmd_lock) != 0; waited += 10) {
        if (waited >= wait_ms) {
            const char *holder = atomic_load(&cmd_holder);
            uint64_t since = atomic_load(&cmd_since_ns), now = js_mono_ns();
            snprintf(out, outlen,
                     "%s: another profiler command (%s) has held the session for %.1f s (a system call the kernel "
                     "holds up?)",
                     what, holder ? holder : "?", now > since ? (now - since) / 1e9 : 0.0);
            return -1;
        }
        nanosleep(&step, NULL);
    }
    js_session_held_by(what);
    return 0;
}

void js_session_held_by(const char *what)
{
    atomic_store(&cmd_holder, what);
    atomic_store(&cmd_since_ns, js_mono_ns());
}
