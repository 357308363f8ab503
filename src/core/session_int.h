/* session_int.h - what the session's files share: its state, and the steps of a session.
 *
 * session.c holds the state machine and the commands; session_hk.c the housekeeping thread (thread
 * rescans, names, loop= files, timeout=); session_io.c the outputs (JFR stream, folded profile, stop
 * and dump); session_store.c the store pair and its rotation; session_state.c the state itself.
 * Calls go one way: session -> hk -> io -> store -> state. All of it runs with js_cmd_lock held
 * unless a function says otherwise.
 */
#ifndef JS_SESSION_INT_H
#define JS_SESSION_INT_H

#include <jni.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/args.h"
#include "core/arming.h"
#include "core/status.h"
#include "output/profile.h"
#include "sample/store.h"

enum { JS_STATE_IDLE = 0, JS_STATE_RUNNING, JS_STATE_STOPPING, JS_STATE_DEAD };

typedef struct {
    JavaVM *vm;
    _Atomic int state;
    js_args args;              /* the running session's request */
    js_arming_info eng;
    char vm_note[256];         /* why a VM event runs degraded (e.g. park not traced), or "" */
    js_store *stores[2];       /* [active] is written by handlers; the other is empty, ready for a swap */
    int active;
    uint32_t gen;              /* generation tag of the active store */
    js_profile profiles[JS_KINDS]; /* text outputs: every rotated store, folded, one profile per kind; after a stop,
                                    * the last session's (retained) until the next start */
    int retained;              /* idle, and profiles/args hold the last session's text profiles (stop, dump and
                                * resume use them) */
    uint64_t samples_kept;     /* samples of the sessions a resume carried on (the Java API's getSamples) */
    int text_output;           /* the session writes a non-JFR file at the end */
    int jfr;                   /* a JFR recording streams */
    char jfrsync_path[JS_PATH_MAX]; /* with jfrsync: the output the JDK's recording and ours are joined into */
    unsigned seq;              /* loop= file number (%n) */
    uint64_t started_ns, deadline_ns, next_loop_ns, file_started_ns;
    _Atomic uint64_t rotations, abandoned_stores, unaggregated_weight;
    _Atomic uint64_t fill_traces, fill_frames, fill_pairs; /* the active store's fill, published for status */
    uint64_t dropped_written;  /* dropped weight already written as a pseudo-frame */
    uint32_t names_cursor;     /* traces of the active store whose names are resolved */
    int throttle_logged;
    pthread_t hk;
    int hk_started;
    _Atomic int hk_stop;
    _Atomic int trim_due; /* a stop or a loop= file freed memory: trim once the command lock is released */
    uint64_t aged_chunks;  /* JFR chunks ended (js_jfr_stream_chunks_ended) at the method-name cache's last age */
    int rotated_since_age; /* a store was folded since that age (sessions without JFR) */
    int aged_logged;       /* the session said once that it forgot names it had not used lately */
} js_session;

extern js_session js_sess;
extern pthread_mutex_t js_cmd_lock;

/* Take js_cmd_lock for command what (a static string), trying every 10 ms for wait_ms. 0 when held; -1 when another
 * command kept it, with which and for how long written into out. */
int js_session_lock(const char *what, int wait_ms, char *out, size_t outlen);
/* Note who has just taken js_cmd_lock (a command's name, a static string): a command that waits too long for the lock
 * names it in its refusal. */
void js_session_held_by(const char *what);
/* How long start, stop and dump wait for the lock before they are refused (ms; 0 = the default, 30 s): for tests. */
void js_session_set_cmd_wait(int ms);
JNIEnv *js_session_env(void);
void js_session_format_ns(long long ns, char *buf, size_t len);

/* session_store.c: the two stores exist and are empty (created once, re-created if abandoned). */
int js_session_stores_ready(char *err, size_t errlen);
/* 1 when the active store has passed half of a table or the frame threshold. */
int js_session_store_full(void);
/* Swap stores, let the JFR stream take the old one's events, fold it (text outputs), empty it (or leave it, abandoned,
 * to a handler that stayed inside it: -1 with err then). */
int js_session_rotate(char *err, size_t errlen);
void js_session_reset_counters(void);
/* Status text (without the state), safe without js_cmd_lock. */
void js_session_format_status(int running, char *out, size_t outlen);

/* session_hk.c */
void js_session_start_housekeeper(void);

/* session_io.c */
/* Open the outputs of a start: profiles emptied unless a resume carries the retained ones on; JFR streaming begun. */
js_status js_session_open_outputs(const js_args *a, char *out, size_t outlen);
/* Close what js_session_open_outputs opened, for a start that failed; the profiles stay if keep_profiles. */
void js_session_close_outputs(int keep_profiles);
js_status js_session_stop_locked(const js_args *req, int from_housekeeper, char *out, size_t outlen);
js_status js_session_dump_locked(const js_args *req, char *out, size_t outlen);
/* Write the retained profiles of the last session as req asks (stop or dump after the session ended). */
js_status js_session_write_retained(const js_args *req, char *out, size_t outlen);
/* Return the memory malloc holds free to the system (malloc_trim) if a stop or a loop= file asked for it since
 * (js_sess.trim_due). Call with js_cmd_lock not held. */
void js_session_trim_if_due(void);
/* Methods the name cache keeps (65,536; tests lower it). */
extern unsigned js_session_names_keep;
/* Empty the method-name cache if it holds over js_session_names_keep methods (at a start: nothing refers to it). */
void js_session_trim_names(void);
/* Within a session, once every output has used the names it took since the last age (JFR: a chunk ended, its names
 * written; text only: a store was folded), or now (a loop= file was written): over js_session_names_keep methods
 * cached, forget those not used since (js_names_age), but for the active store's and live's stacks, which are yet to
 * be folded or written. */
void js_session_age_names(int now);
/* loop=: finish the current file(s) and start the next. */
void js_session_next_file(void);

#endif
