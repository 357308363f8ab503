/* attach.h - load the agent into a running HotSpot JVM (the HotSpot attach protocol, client side).
 *
 * The JVM starts its attach listener when it receives SIGQUIT and finds a trigger file
 * .attach_pid<pid> in its working directory (or /tmp); the listener is a UNIX socket
 * /tmp/.java_pid<pid> that accepts peers of the JVM's own uid and gid (or root). A request is
 * protocol version 1: "1" cmd arg0 arg1 arg2, each NUL-terminated; the reply is a status line
 * and the command's text. For `load`, the text is "return code: N", N being what the agent's
 * Agent_OnAttach returned.
 *
 * A JVM in a container (another pid and mount namespace) is reached through /proc/<pid>/root
 * and known there by its namespace pid (NStgid in /proc/<pid>/status); every path in it is
 * resolved inside that root, so no link the container controls leads to a file of the host.
 * Before a byte is sent, the socket is checked as jcmd does (a socket of the JVM's user, mode
 * 600) and so is the process that serves it (SO_PEERCRED: the JVM's pid and uid). Errors are a
 * code with a strerror and one line in the caller's buffer that names the problem and the fix.
 */
#ifndef JS_ATTACH_H
#define JS_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

typedef enum {
    JS_AT_OK = 0,
    JS_AT_NO_PROCESS,  /* no such process */
    JS_AT_NOT_JVM,     /* the process is not a HotSpot JVM */
    JS_AT_PERMISSION,  /* another user's JVM, and we are not root */
    JS_AT_DISABLED,    /* the JVM runs with -XX:+DisableAttachMechanism */
    JS_AT_TIMEOUT,     /* the attach listener did not answer in time */
    JS_AT_LIBRARY,     /* the agent library cannot be used by the target */
    JS_AT_PROTOCOL,    /* the JVM refused or dropped the request */
    JS_AT_SYSTEM       /* a system call failed */
} js_attach_code;

/* Short text of a code ("no such process"). */
const char *js_attach_strerror(js_attach_code c);

#define JS_AT_PATH_MAX 512

/* What /proc tells about a target process. */
typedef struct {
    int pid;                       /* in our pid namespace */
    int nspid;                     /* in its own (innermost) pid namespace */
    uid_t uid;                     /* effective ids */
    gid_t gid;
    int other_mnt;                 /* 1 if it lives in another mount namespace */
    char root[64];                 /* "/proc/<pid>/root" if other_mnt, else "" */
    int is_jvm;                    /* libjvm.so is mapped (-1: cannot tell, maps unreadable) */
    int catches_quit;              /* SIGQUIT caught and not ignored */
    int stopped;                   /* state T (stopped) or t (traced) */
    int disabled;                  /* -XX:+DisableAttachMechanism on its command line */
    int listening;                 /* the attach socket exists */
    char main[256];                /* main class or -jar file, "" if unknown */
    char java_version[32];         /* JAVA_VERSION of the JDK's release file, "" if unknown */
    int java_major;                /* 17, 25, ... or 0 */
} js_target;

/* Open path (absolute) as the target sees it: in its own root when it lives in another mount namespace,
 * resolved there so that no symbolic link or ".." the container controls leads out of it (openat2
 * RESOLVE_IN_ROOT; without openat2 no link is followed at all). flags as for open; close-on-exec added.
 * fd, or -1 with errno. */
int js_attach_open_in(const js_target *t, const char *path, int flags);

/* Read /proc/<pid> into t. JS_AT_OK, or JS_AT_NO_PROCESS with err. */
js_attach_code js_target_inspect(int pid, js_target *t, char *err, size_t errlen);

/* Remove a dead socket file that another user owns at the target's attach path: an earlier process with
 * this pid left it (a JVM killed by SIGKILL keeps its socket), the JVM cannot replace another user's file
 * in the sticky /tmp, and we could not connect to it. Call before js_attach_become: only root may remove
 * it. JS_AT_OK (nothing there, the JVM's own, or removed), or JS_AT_PERMISSION with err naming the file. */
js_attach_code js_attach_clear_stale(const js_target *t, char *err, size_t errlen);

/* Take the target's effective uid and gid if they differ from ours (root only). JS_AT_OK, or
 * JS_AT_PERMISSION with err naming the fix. */
js_attach_code js_attach_become(const js_target *t, char *err, size_t errlen);

/* Start the target's attach listener if needed (trigger file + SIGQUIT, bounded waits up to
 * timeout_ms) and send one `load lib true options` request. *agent_rc gets the agent's return
 * code; text gets the JVM's reply (NUL-terminated, cut at textlen). */
js_attach_code js_attach_load(const js_target *t, const char *lib, const char *options, int timeout_ms, int *agent_rc,
                              char *text, size_t textlen, char *err, size_t errlen);

/* Make lib usable by the target: itself when the target shares our mount namespace and can read
 * it, else a copy in the target's /tmp. target_path gets the path to hand to the JVM. */
js_attach_code js_attach_place_library(const js_target *t, const char *lib, char *target_path, size_t len, char *err,
                                       size_t errlen);

/* A name for the agent's reply file in the target's /tmp, not to be guessed by others: "/tmp/.jsampler-reply-..."
 * (as the target sees it; handed to the agent as reply=NAME). */
void js_attach_reply_name(const js_target *t, char *name, size_t len);

/* Read the reply file the agent wrote at name (js_attach_reply_name) and remove it: read only when it is a
 * regular file of the JVM's user, reached inside the target's root without following links. out gets the whole
 * text, its first line the status (js_cli_reply_text makes it printable). 0, or -1 when there is no such file. */
int js_attach_take_reply(const js_target *t, const char *name, char *out, size_t len);

/* Call fn for every process that maps libjvm.so (readable ones only); stops when fn returns non-zero. */
int js_attach_list(int (*fn)(const js_target *t, void *ctx), void *ctx);

#endif
