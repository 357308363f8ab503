/* sw_pprof.c - see backend_int.h: the PprofTask service of the OAP's receiver-pprof module: its task poll and the
 * messages of its collect stream (the upload itself is sw_rpc.c's, shared with AsyncProfilerTask). */
#include "backend_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "proto/pprof/Pprof.pb-c.h"

#define MAX_ARGS 16

/* One PprofTaskQuery command into t (t->invalid says why it cannot be served). */
static void read_task(const Skywalking__V3__Command *c, js_pprof_task *t)
{
    const char *keys[MAX_ARGS], *vals[MAX_ARGS];
    size_t n = 0;
    for (size_t i = 0; i < c->n_args && n < MAX_ARGS; i++, n++) {
        keys[n] = c->args[i]->key ? c->args[i]->key : "";
        vals[n] = c->args[i]->value ? c->args[i]->value : "";
    }
    char err[JS_TASK_MSG_MAX];
    if (js_pprof_task_from_args(keys, vals, n, t, err, sizeof err) != 0)
        snprintf(t->invalid, sizeof t->invalid, "%s", err);
}

int js_sw_poll_pprof(js_sw_client *s, long long last_ms, js_pprof_task *out, int max, int *n, char *err,
                     size_t errlen)
{
    *n = 0;
    Skywalking__V10__PprofTaskCommandQuery q = SKYWALKING__V10__PPROF_TASK_COMMAND_QUERY__INIT;
    q.service = (char *)s->conf->service;
    q.serviceinstance = (char *)s->conf->instance;
    q.lastcommandtime = last_ms;
    uint8_t *resp = NULL;
    size_t len = 0;
    int st = js_sw_unary(s, "/skywalking.v10.PprofTask/getPprofTaskCommands", &q.base, &resp, &len, err, errlen);
    if (st != JS_GRPC_OK) return st;
    Skywalking__V3__Commands *cmds = skywalking__v3__commands__unpack(NULL, len, resp);
    free(resp);
    if (!cmds) {
        snprintf(err, errlen, "the pprof task answer is not a valid Commands message (%zu bytes)", len);
        return JS_GRPC_INTERNAL;
    }
    for (size_t i = 0; i < cmds->n_commands && *n < max; i++) {
        const Skywalking__V3__Command *c = cmds->commands[i];
        if (!c->command || strcmp(c->command, "PprofTaskQuery") != 0) continue; /* not ours: ignored */
        read_task(c, &out[*n]);
        (*n)++;
    }
    skywalking__v3__commands__free_unpacked(cmds, NULL);
    return JS_GRPC_OK;
}

/* The first PprofData message (metadata; the error text of an error report) or a content slice; see
 * js_collect_codec.pack. */
static size_t pprof_pack(const js_spool_entry *e, const char *error, int64_t size, const uint8_t *data, size_t len,
                         uint8_t *buf, size_t cap)
{
    Skywalking__V10__PprofMetaData md = SKYWALKING__V10__PPROF_META_DATA__INIT;
    Skywalking__V10__PprofData d = SKYWALKING__V10__PPROF_DATA__INIT;
    if (e) {
        md.service = (char *)e->service;
        md.serviceinstance = (char *)e->instance;
        md.taskid = (char *)e->id;
        md.type = error ? SKYWALKING__V10__PPROF_PROFILING_STATUS__PPROF_EXECUTION_TASK_ERROR
                        : SKYWALKING__V10__PPROF_PROFILING_STATUS__PPROF_PROFILING_SUCCESS;
        md.contentsize = error ? 0 : (int32_t)size; /* the protocol's 0 for an error */
        d.metadata = &md;
        if (error) {
            d.result_case = SKYWALKING__V10__PPROF_DATA__RESULT_ERROR_MESSAGE;
            d.errormessage = (char *)error;
        }
    } else {
        d.result_case = SKYWALKING__V10__PPROF_DATA__RESULT_CONTENT;
        d.content.data = (uint8_t *)data;
        d.content.len = len;
    }
    size_t n = skywalking__v10__pprof_data__get_packed_size(&d);
    if (!buf) return n;
    return n <= cap ? skywalking__v10__pprof_data__pack(&d, buf) : 0;
}

/* The answer to the metadata: 0 go ahead, 1 too large, -1 unreadable (or a refusal this upload cannot meet). */
static int pprof_answer(const uint8_t *m, size_t len)
{
    Skywalking__V10__PprofCollectionResponse *r = skywalking__v10__pprof_collection_response__unpack(NULL, len, m);
    if (!r) return -1;
    int st = r->status;
    skywalking__v10__pprof_collection_response__free_unpacked(r, NULL);
    return st == SKYWALKING__V10__PPROF_PROFILING_STATUS__PPROF_PROFILING_SUCCESS            ? 0
           : st == SKYWALKING__V10__PPROF_PROFILING_STATUS__PPROF_TERMINATED_BY_OVERSIZE ? 1
                                                                                           : -1;
}

/* A whole pprof file: one gzip stream inflated to its end, its trailer checked (a JVM killed while writing leaves
 * a cut one, which the OAP would take and fail to parse). */
static int pprof_whole(int fd, int64_t size, char *why, size_t whylen)
{
    unsigned char in[65536], out[65536];
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        snprintf(why, whylen, "cannot check the profile: zlib refused to start");
        return -1;
    }
    int rc = Z_OK;
    int64_t off = 0;
    while (rc == Z_OK && off < size) {
        ssize_t r = pread(fd, in, sizeof in, off);
        if (r <= 0) break;
        off += r;
        z.next_in = in;
        z.avail_in = (uInt)r;
        while (rc == Z_OK && z.avail_in) {
            z.next_out = out;
            z.avail_out = sizeof out;
            rc = inflate(&z, Z_NO_FLUSH);
            if (rc == Z_BUF_ERROR && z.avail_out) break; /* needs more input */
            if (rc == Z_BUF_ERROR) rc = Z_OK;
        }
        if (rc == Z_BUF_ERROR) rc = Z_OK;
    }
    int whole = rc == Z_STREAM_END && z.avail_in == 0 && off == size;
    inflateEnd(&z);
    if (whole) return 0;
    snprintf(why, whylen, "the profile is incomplete (%lld bytes, not a whole gzip stream)", (long long)size);
    return -1;
}

const js_collect_codec js_pprof_codec = {"/skywalking.v10.PprofTask/collect", "profile", pprof_pack, pprof_answer,
                                         pprof_whole};
