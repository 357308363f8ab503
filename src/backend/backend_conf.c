/* backend_conf.c - see backend.h: the task client's options, from SW_AGENT_* variables and from
 * the agent's option string. Pure but for getenv, gethostname and getuid.
 *
 * The variables are read only when the options ask for a task client ('backend' or 'backend=...'): they are
 * defaults, never a reason to start a client or to refuse a command or a JVM start. */
#include "backend/backend.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/units.h"

static const char *const option_names[] = {"backend", "service", "instance", "token", "tls",
                                           "cafile", "insecure", "poll", "taskdir", "uploadmax"};

int js_backend_is_option(const char *key, size_t keylen)
{
    for (size_t i = 0; i < sizeof option_names / sizeof option_names[0]; i++)
        if (strlen(option_names[i]) == keylen && strncmp(key, option_names[i], keylen) == 0) return 1;
    return 0;
}

/* Append the n bytes at p to the comma list out. */
static void append_token(char *out, size_t outlen, const char *p, size_t n)
{
    size_t o = strlen(out);
    if (o + n + 2 > outlen) return;
    if (o) out[o++] = ',';
    memcpy(out + o, p, n);
    out[o + n] = 0;
}

void js_backend_split(const char *opts, char *cmd, size_t cmdlen, char *bopts, size_t boptslen)
{
    cmd[0] = bopts[0] = 0;
    for (const char *p = opts ? opts : ""; *p;) {
        size_t n = strcspn(p, ",");
        size_t k = strcspn(p, "=,");
        if (n) append_token(js_backend_is_option(p, k) ? bopts : cmd, js_backend_is_option(p, k) ? boptslen : cmdlen, p, n);
        p += n;
        if (*p == ',') p++;
    }
}

/* Parse "host:port[;host:port...]" (or comma-separated, from the environment) into c->targets. */
static int parse_targets(const char *v, js_backend_conf *c, char *err, size_t errlen)
{
    c->ntargets = 0;
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",;| ");
        if (n) {
            const char *colon = memchr(p, ':', n);
            char *end = NULL;
            long port = colon ? strtol(colon + 1, &end, 10) : 0;
            if (!colon || colon == p || end != p + n || port < 1 || port > 65535 || n >= JS_BACKEND_NAME_MAX) {
                snprintf(err, errlen, "option 'backend=%s': expected host:port, like oap.example:11800", v);
                return -1;
            }
            if (c->ntargets == JS_BACKEND_MAX_TARGETS) {
                snprintf(err, errlen, "option 'backend=%s': at most %d backends", v, JS_BACKEND_MAX_TARGETS);
                return -1;
            }
            snprintf(c->targets[c->ntargets++], JS_BACKEND_NAME_MAX, "%.*s", (int)n, p);
        }
        p += n;
        if (*p) p++;
    }
    if (!c->ntargets) {
        snprintf(err, errlen, "option 'backend=%s': expected host:port, like oap.example:11800", v);
        return -1;
    }
    return 0;
}

/* A name SkyWalking accepts: printable, no control characters, not empty. */
static int plain_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isprint((unsigned char)*s)) return 0;
    return 1;
}

/* Apply one key=value; 0 or -1 with err. */
static int apply(js_backend_conf *c, const char *key, size_t klen, const char *v, int has_value, char *err, size_t errlen)
{
#define IS(name) (klen == strlen(name) && strncmp(key, name, klen) == 0)
#define COPY(dst) snprintf(dst, sizeof dst, "%s", v)
    if (IS("tls") || IS("insecure")) {
        if (has_value) {
            snprintf(err, errlen, "option '%.*s' takes no value", (int)klen, key);
            return -1;
        }
        if (IS("tls")) c->tls = 1;
        else c->insecure = c->tls = 1;
        return 0;
    }
    if (!has_value || !*v) {
        snprintf(err, errlen, "option '%.*s' needs a value", (int)klen, key);
        return -1;
    }
    if (strlen(v) >= JS_BACKEND_NAME_MAX && !IS("taskdir") && !IS("cafile")) {
        snprintf(err, errlen, "option '%.*s': value longer than %d characters", (int)klen, key, JS_BACKEND_NAME_MAX - 1);
        return -1;
    }
    if (IS("backend")) return parse_targets(v, c, err, errlen);
    if (IS("service") || IS("instance")) {
        if (!plain_name(v)) {
            snprintf(err, errlen, "option '%.*s': expected printable characters", (int)klen, key);
            return -1;
        }
        if (IS("service")) COPY(c->service);
        else COPY(c->instance);
    } else if (IS("token")) {
        COPY(c->token);
        for (const char *p = v; *p; p++)
            if (*p < 0x20 || *p > 0x7e) {
                snprintf(err, errlen, "option 'token': expected printable ASCII");
                return -1;
            }
    } else if (IS("cafile") || IS("taskdir")) {
        if (strlen(v) >= JS_BACKEND_PATH_MAX) {
            snprintf(err, errlen, "option '%.*s': path too long", (int)klen, key);
            return -1;
        }
        if (IS("cafile")) COPY(c->cafile), c->tls = 1;
        else COPY(c->taskdir);
    } else if (IS("poll")) {
        long long ns = js_parse_duration_ns(v);
        if (ns < 1000000000LL || ns > 3600000000000LL) {
            snprintf(err, errlen, "option 'poll=%s': expected a duration from 1s to 1h, like 20s", v);
            return -1;
        }
        c->poll_ms = ns / 1000000;
    } else if (IS("uploadmax")) {
        c->upload_max = js_parse_size(v);
        if (c->upload_max < (256u << 10) || c->upload_max > (1ull << 31) - 1) {
            snprintf(err, errlen, "option 'uploadmax=%s': expected a size from 256k to 2047m, like 30m", v);
            return -1;
        }
    }
    return 0;
#undef IS
#undef COPY
}

/* Which task client options opts holds, as a bit per entry of option_names. */
static unsigned given_options(const char *opts)
{
    unsigned given = 0;
    for (const char *p = opts ? opts : ""; *p;) {
        size_t n = strcspn(p, ",");
        size_t k = strcspn(p, "=,");
        for (size_t i = 0; n && i < sizeof option_names / sizeof option_names[0]; i++)
            if (strlen(option_names[i]) == k && strncmp(p, option_names[i], k) == 0) given |= 1u << i;
        p += n;
        if (*p == ',') p++;
    }
    return given;
}

#define GIVEN_BACKEND (1u << 0)
#define GIVEN_SERVICE (1u << 1)
#define GIVEN_INSTANCE (1u << 2)
#define GIVEN_TOKEN (1u << 3)

/* One SW_AGENT_* variable as the default of option key (unless the options give it); 0 or -1 with err naming it. */
static int env_default(js_backend_conf *c, unsigned given, unsigned bit, const char *var, const char *key, char *err,
                       size_t errlen)
{
    const char *v = getenv(var);
    if ((given & bit) || !v || !*v) return 0;
    int rc = bit == GIVEN_BACKEND ? parse_targets(v, c, err, errlen) : apply(c, key, strlen(key), v, 1, err, errlen);
    if (rc != 0) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (from %s)", var);
    }
    return rc;
}

int js_backend_conf_load(const char *opts, js_backend_conf *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->poll_ms = JS_BACKEND_DEFAULT_POLL_MS;
    c->upload_max = JS_BACKEND_DEFAULT_UPLOADMAX;
    unsigned given = given_options(opts);
    if (!given) return 0; /* no task client asked for: the environment is not read */
    if (!(given & GIVEN_BACKEND)) {
        snprintf(err, errlen, "option 'backend' missing: the task client's options need backend=HOST:PORT, or "
                              "'backend' alone to take SW_AGENT_COLLECTOR_BACKEND_SERVICES");
        return -1;
    }
    /* Asked for: the SkyWalking agent's variables are the defaults of the options not given. */
    unsigned from_opts = given;
    for (const char *p = opts; *p;) { /* a bare 'backend' takes its address from the environment */
        size_t n = strcspn(p, ",");
        if (n == 7 && strncmp(p, "backend", 7) == 0) from_opts &= ~GIVEN_BACKEND;
        p += n;
        if (*p == ',') p++;
    }
    if (env_default(c, from_opts, GIVEN_SERVICE, "SW_AGENT_NAME", "service", err, errlen) != 0 ||
        env_default(c, from_opts, GIVEN_INSTANCE, "SW_AGENT_INSTANCE_NAME", "instance", err, errlen) != 0 ||
        env_default(c, from_opts, GIVEN_TOKEN, "SW_AGENT_AUTHENTICATION", "token", err, errlen) != 0 ||
        env_default(c, from_opts, GIVEN_BACKEND, "SW_AGENT_COLLECTOR_BACKEND_SERVICES", NULL, err, errlen) != 0)
        return -1;
    for (const char *p = opts; *p;) {
        size_t n = strcspn(p, ",");
        size_t k = strcspn(p, "=,");
        if (n && js_backend_is_option(p, k) && !(n == 7 && strncmp(p, "backend", 7) == 0)) {
            char v[JS_BACKEND_PATH_MAX + 8];
            int has_value = k < n;
            snprintf(v, sizeof v, "%.*s", has_value ? (int)(n - k - 1) : 0, p + k + 1);
            if (apply(c, p, k, v, has_value, err, errlen) != 0) return -1;
        }
        p += n;
        if (*p == ',') p++;
    }
    if (!c->ntargets) {
        snprintf(err, errlen, "option 'backend': no address: give backend=HOST:PORT, or set "
                              "SW_AGENT_COLLECTOR_BACKEND_SERVICES for 'backend' alone");
        return -1;
    }
    if (!c->service[0]) {
        snprintf(err, errlen, "option 'service=' missing: a backend needs the service name (or SW_AGENT_NAME)");
        return -1;
    }
    if (!c->instance[0]) {
        char host[200] = "localhost";
        gethostname(host, sizeof host - 1);
        snprintf(c->instance, sizeof c->instance, "%d@%s", (int)getpid(), host);
    }
    if (!c->taskdir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(c->taskdir, sizeof c->taskdir, "%s/jsampler-tasks-%u", tmp && *tmp == '/' ? tmp : "/tmp",
                 (unsigned)getuid());
    }
    return 1;
}
