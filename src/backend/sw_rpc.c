/* sw_rpc.c - see backend_int.h: the SkyWalking calls (heartbeat, task poll, collect) as protobuf-c
 * messages over grpc.h. */
#include "backend_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "proto/asyncprofiler/AsyncProfiler.pb-c.h"
#include "proto/management/Management.pb-c.h"
#include "util/log.h"
#include "util/version.h"

#define MAX_PROPS 16
#define SLICE (1u << 20) /* content per collect message, as the Java agent sends */

void js_sw_client_target(js_sw_client *s, int i)
{
    const js_backend_conf *c = s->conf;
    const char *t = c->targets[i % (c->ntargets ? c->ntargets : 1)];
    const char *colon = strrchr(t, ':');
    memset(&s->ch, 0, sizeof s->ch);
    snprintf(s->ch.host, sizeof s->ch.host, "%.*s", colon ? (int)(colon - t) : (int)strlen(t), t);
    s->ch.port = colon ? atoi(colon + 1) : 11800;
    s->ch.tls = c->tls;
    s->ch.insecure = c->insecure;
    snprintf(s->ch.cafile, sizeof s->ch.cafile, "%s", c->cafile);
    snprintf(s->ch.token, sizeof s->ch.token, "%s", c->token);
    s->ch.connect_timeout_ms = 5000;
    if (!s->deadline_ms) s->deadline_ms = 30000;
}

#define SLOW_CALL_MS 5000 /* a call that takes this long is logged with where its time went */

/* ms as seconds, or "never" for a point the call did not reach (-1). */
static const char *secs(long long ms, char *buf, size_t len)
{
    if (ms < 0) snprintf(buf, len, "never");
    else snprintf(buf, len, "%.1f s", ms / 1e3);
    return buf;
}

/* Log a call of path that took long: where its time went, as libcurl measured it. */
static void note_slow(const char *path, const js_grpc_timing *t)
{
    if (t->total_ms < SLOW_CALL_MS) return;
    char a[24], b[24];
    js_warn("backend call %s took %.1f s: connected after %s, ready to send the request after %s, the rest waiting "
            "for the backend", path, t->total_ms / 1e3, secs(t->connect_ms, a, sizeof a), secs(t->sent_ms, b, sizeof b));
}

int js_sw_unary(js_sw_client *s, const char *path, const ProtobufCMessage *msg, uint8_t **resp, size_t *resp_len,
                 char *err, size_t errlen)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return JS_GRPC_RESOURCE_EXHAUSTED;
    }
    protobuf_c_message_pack(msg, buf);
    js_grpc_timing t;
    int st = js_grpc_unary_timed(&s->ch, path, buf, n, s->deadline_ms, resp, resp_len, &t, err, errlen);
    free(buf);
    note_slow(path, &t);
    return st;
}

/* The instance's properties, as the SkyWalking Java agent reports them (the ones that apply). */
static size_t properties(Skywalking__V3__KeyStringValuePair *kv, Skywalking__V3__KeyStringValuePair **ptrs,
                         char vals[][64], size_t max)
{
    size_t n = 0;
    struct utsname u;
    const char *os = uname(&u) == 0 ? u.sysname : "Linux";
#define PROP(k, ...) \
    if (n < max) { \
        snprintf(vals[n], 64, __VA_ARGS__); \
        skywalking__v3__key_string_value_pair__init(&kv[n]); \
        kv[n].key = (char *)(k); \
        kv[n].value = vals[n]; \
        ptrs[n] = &kv[n]; \
        n++; \
    }
    PROP("OS Name", "%s", os);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    PROP("hostname", "%s", host);
    PROP("Process No.", "%d", (int)getpid());
    PROP("language", "java");
    PROP("profiler", "jsampler %s", JS_VERSION);
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        int ips = 0;
        for (struct ifaddrs *i = ifs; i && ips < 10; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, ip, sizeof ip);
            if (strncmp(ip, "127.", 4) == 0) continue;
            PROP("ipv4", "%s", ip);
            ips++;
        }
        freeifaddrs(ifs);
    }
#undef PROP
    return n;
}

int js_sw_heartbeat(js_sw_client *s, int with_properties, char *err, size_t errlen)
{
    uint8_t *resp = NULL;
    size_t len = 0;
    int st;
    if (with_properties) {
        Skywalking__V3__KeyStringValuePair kv[MAX_PROPS], *ptrs[MAX_PROPS];
        char vals[MAX_PROPS][64];
        Skywalking__V3__InstanceProperties m = SKYWALKING__V3__INSTANCE_PROPERTIES__INIT;
        m.service = (char *)s->conf->service;
        m.serviceinstance = (char *)s->conf->instance;
        m.n_properties = properties(kv, ptrs, vals, MAX_PROPS);
        m.properties = ptrs;
        st = js_sw_unary(s, "/skywalking.v3.ManagementService/reportInstanceProperties", &m.base, &resp, &len, err,
                         errlen);
    } else {
        Skywalking__V3__InstancePingPkg m = SKYWALKING__V3__INSTANCE_PING_PKG__INIT;
        m.service = (char *)s->conf->service;
        m.serviceinstance = (char *)s->conf->instance;
        st = js_sw_unary(s, "/skywalking.v3.ManagementService/keepAlive", &m.base, &resp, &len, err, errlen);
    }
    free(resp); /* the OAP sends no commands in heartbeat answers */
    return st;
}

/* One AsyncProfilerTaskQuery command into t (t->invalid says why it could not be read). */
static void read_task(const Skywalking__V3__Command *c, js_sw_task *t)
{
    const char *keys[16], *vals[16];
    size_t n = 0;
    for (size_t i = 0; i < c->n_args && n < 16; i++, n++) {
        keys[n] = c->args[i]->key ? c->args[i]->key : "";
        vals[n] = c->args[i]->value ? c->args[i]->value : "";
    }
    char err[JS_TASK_MSG_MAX];
    if (js_task_from_args(keys, vals, n, t, err, sizeof err) != 0) snprintf(t->invalid, sizeof t->invalid, "%s", err);
}

int js_sw_poll(js_sw_client *s, long long last_ms, js_sw_task *out, int max, int *n, char *err, size_t errlen)
{
    *n = 0;
    Skywalking__V10__AsyncProfilerTaskCommandQuery q = SKYWALKING__V10__ASYNC_PROFILER_TASK_COMMAND_QUERY__INIT;
    q.service = (char *)s->conf->service;
    q.serviceinstance = (char *)s->conf->instance;
    q.lastcommandtime = last_ms;
    uint8_t *resp = NULL;
    size_t len = 0;
    int st = js_sw_unary(s, "/skywalking.v10.AsyncProfilerTask/getAsyncProfilerTaskCommands", &q.base, &resp, &len,
                         err, errlen);
    if (st != JS_GRPC_OK) return st;
    int rc = js_sw_read_commands(resp, len, out, max, n, err, errlen);
    free(resp);
    return rc == 0 ? JS_GRPC_OK : JS_GRPC_INTERNAL;
}

int js_sw_read_commands(const uint8_t *msg, size_t len, js_sw_task *out, int max, int *n, char *err, size_t errlen)
{
    *n = 0;
    Skywalking__V3__Commands *cmds = skywalking__v3__commands__unpack(NULL, len, msg);
    if (!cmds) {
        snprintf(err, errlen, "the task answer is not a valid Commands message (%zu bytes)", len);
        return -1;
    }
    for (size_t i = 0; i < cmds->n_commands && *n < max; i++) {
        const Skywalking__V3__Command *c = cmds->commands[i];
        if (!c->command || strcmp(c->command, "AsyncProfilerTaskQuery") != 0) continue; /* not ours: ignored */
        read_task(c, &out[*n]);
        (*n)++;
    }
    skywalking__v3__commands__free_unpacked(cmds, NULL);
    return 0;
}

int js_sw_read_collect_answer(const uint8_t *msg, size_t len)
{
    Skywalking__V10__AsyncProfilerCollectionResponse *r =
        skywalking__v10__async_profiler_collection_response__unpack(NULL, len, msg);
    if (!r) return -1;
    int oversize = r->type == SKYWALKING__V10__ASYNC_PROFILING_STATUS__TERMINATED_BY_OVERSIZE;
    skywalking__v10__async_profiler_collection_response__free_unpacked(r, NULL);
    return oversize;
}

/* The first AsyncProfilerData message (metadata, and the error text of an error report) or a content slice,
 * packed into buf; its length (with buf NULL: the length it needs), 0 if it does not fit in cap. */
static size_t jfr_pack(const js_spool_entry *e, const char *error, int64_t size, const uint8_t *data, size_t len,
                       uint8_t *buf, size_t cap)
{
    Skywalking__V10__AsyncProfilerMetaData md = SKYWALKING__V10__ASYNC_PROFILER_META_DATA__INIT;
    Skywalking__V10__AsyncProfilerData d = SKYWALKING__V10__ASYNC_PROFILER_DATA__INIT;
    if (e) {
        md.service = (char *)e->service;
        md.serviceinstance = (char *)e->instance;
        md.taskid = (char *)e->id;
        md.type = error ? SKYWALKING__V10__ASYNC_PROFILING_STATUS__EXECUTION_TASK_ERROR
                        : SKYWALKING__V10__ASYNC_PROFILING_STATUS__PROFILING_SUCCESS;
        md.contentsize = error ? -1 : (int32_t)size; /* the Java agent's -1 for an error */
        d.metadata = &md;
        if (error) {
            d.result_case = SKYWALKING__V10__ASYNC_PROFILER_DATA__RESULT_ERROR_MESSAGE;
            d.errormessage = (char *)error;
        }
    } else {
        d.result_case = SKYWALKING__V10__ASYNC_PROFILER_DATA__RESULT_CONTENT;
        d.content.data = (uint8_t *)data;
        d.content.len = len;
    }
    size_t n = skywalking__v10__async_profiler_data__get_packed_size(&d);
    if (!buf) return n;
    return n <= cap ? skywalking__v10__async_profiler_data__pack(&d, buf) : 0;
}

/* A whole JFR file: its magic and at least a chunk header. */
static int jfr_whole(int fd, int64_t size, char *why, size_t whylen)
{
    char magic[4];
    if (size >= 68 && pread(fd, magic, 4, 0) == 4 && memcmp(magic, "FLR", 4) == 0) return 0;
    snprintf(why, whylen, "the recording is incomplete (%lld bytes, not a whole JFR file)", (long long)size);
    return -1;
}

const js_collect_codec js_jfr_codec = {"/skywalking.v10.AsyncProfilerTask/collect", "recording", jfr_pack, js_sw_read_collect_answer,
                                       jfr_whole};

/* Pack and send one message (last: the request ends with it). */
static int send_msg(js_grpc_call *c, const js_collect_codec *k, const js_spool_entry *e, const char *error,
                    int64_t size, const uint8_t *data, size_t len, uint8_t *buf, size_t cap, int last)
{
    size_t n = k->pack(e, error, size, data, len, buf, cap);
    if (!n) return JS_GRPC_INTERNAL;
    return last ? js_grpc_send_last(c, buf, n) : js_grpc_send(c, buf, n);
}

/* Open the file of a pending entry and check it is whole; its fd, or -1 with why. */
static int open_file(const js_collect_codec *k, const char *path, int64_t *size, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, whylen, "the %s %s cannot be read: %s", k->what, path, strerror(errno));
    } else if (st.st_size > 0x7fffffff) {
        snprintf(why, whylen, "the %s (%lld bytes) is too big for the protocol", k->what, (long long)st.st_size);
    } else if (k->whole(fd, st.st_size, why, whylen) == 0) {
        *size = st.st_size;
        return fd;
    }
    if (fd >= 0) close(fd);
    return -1;
}

/* Content in 1 MiB messages; the gRPC status. */
static int send_content(js_grpc_call *c, const js_collect_codec *k, int fd, int64_t size, uint8_t *buf, size_t cap,
                        uint8_t *slice, uint64_t *sent, char *err, size_t errlen)
{
    for (int64_t off = 0; off < size;) {
        size_t want = size - off < SLICE ? (size_t)(size - off) : SLICE;
        ssize_t r = pread(fd, slice, want, off);
        if (r != (ssize_t)want) {
            snprintf(err, errlen, "reading the %s at %lld: %s", k->what, (long long)off,
                     r < 0 ? strerror(errno) : "short");
            return JS_GRPC_CANCELLED;
        }
        int st = send_msg(c, k, NULL, NULL, 0, slice, want, buf, cap, off + (int64_t)want == size);
        if (st != JS_GRPC_OK) {
            snprintf(err, errlen, "%s: sending the %s at byte %lld: %s", js_grpc_code_name(st), k->what, (long long)off,
                     js_grpc_error(c));
            return st;
        }
        off += (int64_t)want;
        *sent = (uint64_t)off;
    }
    return JS_GRPC_OK;
}

/* After the metadata of a recording: the server's answer, then the content. */
static js_upload_result upload_body(js_grpc_call *c, const js_collect_codec *k, int fd, int64_t size, uint64_t *sent,
                                    char *err, size_t errlen)
{
    const uint8_t *m;
    size_t mlen;
    int st = js_grpc_recv(c, &m, &mlen);
    if (st != JS_GRPC_OK || !m) {
        snprintf(err, errlen, "%s: no answer to the upload's metadata: %s", js_grpc_code_name(st), js_grpc_error(c));
        return JS_UP_RETRY;
    }
    int answer = k->answer(m, mlen);
    if (answer < 0) {
        snprintf(err, errlen, "the upload's answer is not a valid message (%zu bytes)", mlen);
        return JS_UP_RETRY;
    }
    if (answer == 1) {
        js_grpc_finish(c);
        return JS_UP_OVERSIZE;
    }
    size_t cap = SLICE + 64;
    uint8_t *buf = malloc(cap), *slice = malloc(SLICE);
    st = buf && slice ? send_content(c, k, fd, size, buf, cap, slice, sent, err, errlen) : JS_GRPC_RESOURCE_EXHAUSTED;
    free(buf);
    free(slice);
    if (st == JS_GRPC_OK) st = js_grpc_finish(c);
    if (st != JS_GRPC_OK) {
        if (!err[0]) snprintf(err, errlen, "%s: %s", js_grpc_code_name(st), js_grpc_error(c));
        return JS_UP_RETRY;
    }
    return JS_UP_DONE;
}

js_upload_result js_sw_upload(js_sw_client *s, const js_spool_entry *e, uint64_t *sent, char *err, size_t errlen)
{
    const js_collect_codec *k = e->kind == JS_SPOOL_PPROF ? &js_pprof_codec : &js_jfr_codec;
    *sent = 0;
    err[0] = 0;
    char why[JS_TASK_MSG_MAX + 64] = "";
    int64_t size = 0;
    int fd = -1;
    if (!e->error) fd = open_file(k, e->jfr, &size, why, sizeof why);
    const char *error = e->error ? e->message : fd < 0 ? why : NULL;
    long long deadline = s->deadline_ms + size / (1 << 20) * 2000; /* 2 s per MiB beyond the call deadline */
    /* An error report is one message of known size (see js_grpc_open). An upload's size is left open: the server
     * may end it after the first message (oversize), and its headers and go-ahead are read before the content. */
    long long req_size = error ? 5 + (long long)k->pack(e, error, 0, NULL, 0, NULL, 0) : -1;
    js_grpc_call *c = js_grpc_open(&s->ch, k->path, deadline, req_size);
    uint8_t meta[JS_TASK_MSG_MAX * 2 + 1024];
    js_upload_result res = JS_UP_RETRY;
    int st = c ? send_msg(c, k, e, error, size, NULL, 0, meta, sizeof meta, error != NULL) : JS_GRPC_RESOURCE_EXHAUSTED;
    if (st != JS_GRPC_OK) {
        snprintf(err, errlen, "%s: %s", js_grpc_code_name(st), c ? js_grpc_error(c) : "cannot set up the call");
    } else if (error) { /* an error report: the status is what counts (the pprof receiver answers a message too) */
        st = js_grpc_finish(c);
        if (st == JS_GRPC_OK) res = JS_UP_DONE;
        else snprintf(err, errlen, "%s: %s", js_grpc_code_name(st), js_grpc_error(c));
    } else {
        res = upload_body(c, k, fd, size, sent, err, errlen);
    }
    if (fd >= 0) close(fd);
    if (c) {
        js_grpc_timing t;
        js_grpc_timing_of(c, &t);
        note_slow(k->path, &t);
    }
    js_grpc_close(c);
    return res;
}
