/* backend.h - the SkyWalking task client: an entry point that takes async-profiler tasks from an
 * OAP over gRPC, runs each through the command dispatcher and uploads the JFR recording.
 *
 * It runs on one native thread of its own. It reaches the profiler only through the host's
 * execute function (the dispatcher, agent/cmd.h), which keeps it an entry point like -agentpath
 * or attach; vm_enter/vm_leave attach the thread to the VM around each command. Recordings wait
 * in taskdir until the server has accepted all of their bytes, so they survive backend outages
 * and agent restarts. Process-wide: one client per process.
 */
#ifndef JS_BACKEND_H
#define JS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define JS_BACKEND_MAX_TARGETS 8
#define JS_BACKEND_NAME_MAX 256
#define JS_BACKEND_PATH_MAX 1024
#define JS_BACKEND_DEFAULT_POLL_MS 20000LL
#define JS_BACKEND_DEFAULT_UPLOADMAX (30ull << 20) /* the OAP's default jfrMaxSize */

typedef struct {
    char targets[JS_BACKEND_MAX_TARGETS][JS_BACKEND_NAME_MAX]; /* host:port, tried in turn */
    int ntargets;
    char service[JS_BACKEND_NAME_MAX];
    char instance[JS_BACKEND_NAME_MAX];
    char token[JS_BACKEND_NAME_MAX];   /* never logged */
    int tls, insecure;
    char cafile[JS_BACKEND_PATH_MAX];
    long long poll_ms;
    char taskdir[JS_BACKEND_PATH_MAX];
    uint64_t upload_max;
} js_backend_conf;

/* What the client may call in the host: the dispatcher and the VM attachment of its thread. start and
 * stop run between vm_enter and vm_leave; status, which needs no VM, is asked without. */
typedef struct {
    int (*execute)(const char *cmd, char *out, size_t outlen); /* 0 = done */
    int (*vm_enter)(void);                                     /* 0 = attached */
    void (*vm_leave)(void);
} js_backend_host;

/* 1 if key (an option name, without '=') belongs to the task client. */
int js_backend_is_option(const char *key, size_t keylen);
/* Split an option string into the task client's options and the rest (the profiler command). */
void js_backend_split(const char *opts, char *cmd, size_t cmdlen, char *bopts, size_t boptslen);
/* The task client's options in opts. Returns 0 when opts holds none (the environment is not read), 1 when
 * they ask for a client ('backend' or 'backend=HOST:PORT') with c filled: the SW_AGENT_* variables are the
 * defaults of the options not given ('backend' alone takes its address from them), or -1 with one line in err
 * naming a bad option or variable. */
int js_backend_conf_load(const char *opts, js_backend_conf *c, char *err, size_t errlen);

/* Start the client thread; 0, or -1 with err (already running, thread or libcurl failure). */
int js_backend_start(const js_backend_conf *c, const js_backend_host *host, char *err, size_t errlen);
/* 1 with *c the running client's options, 0 when none runs. */
int js_backend_running(js_backend_conf *c);
/* One line describing the running client into out; 0, or -1 when none runs. */
int js_backend_describe(char *out, size_t outlen);
/* Stop the client (VM death): a task still recording is left for the profiler's shutdown to write,
 * marked pending, and uploaded by the next agent. Waits a bounded time for the thread. */
void js_backend_shutdown(void);

#endif
