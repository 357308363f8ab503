/* grpc_call.c - see grpc.h: gRPC calls driven through libcurl's multi interface on the calling
 * thread. One easy handle per call, one fresh connection per call (libcurl 7.88's h2c reuse bug),
 * request body from a paused read callback (bidirectional streams), responses reassembled from
 * the write callback, status from the header callback (trailers arrive there too). */
#include "backend/grpc.h"
#include "util/monotime.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USER_AGENT "grpc-c-jsampler/1.0"
#define POLL_SLICE_MS 200 /* curl_multi_poll wait per turn; the deadline is checked between turns */
#define QUEUE_MSGS_MAX 1024 /* response messages unread at once: a unary answer is one, a stream's are read as they come */

typedef struct msg_node {
    struct msg_node *next;
    size_t len;
    uint8_t data[];
} msg_node;

struct js_grpc_call {
    CURL *easy;
    CURLM *multi;
    struct curl_slist *hdrs;
    long long started, deadline; /* CLOCK_MONOTONIC ms */
    const volatile int *cancel;
    int tls;
    /* request side */
    uint8_t *out;             /* framed messages not yet handed to libcurl */
    size_t out_len, out_off, out_cap;
    int half_closed, paused;
    /* response side */
    js_grpc_reader rd;
    msg_node *head, *tail;
    size_t queued, nqueued;   /* memory (with each node's own) and number of queued messages (both capped) */
    size_t body_bytes;        /* response body bytes seen, for error messages */
    msg_node *given;          /* the message the last recv returned */
    js_grpc_headers hd;
    int proto_error;
    int unary;                /* one response message only */
    /* end */
    int running, ended, status;
    CURLcode result;
    char curl_err[CURL_ERROR_SIZE];
    char err[JS_GRPC_ERR_MAX];
};

int js_grpc_global_init(char *err, size_t errlen)
{
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "libcurl init failed: %s", curl_easy_strerror(rc));
        return -1;
    }
    curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    if (!(v->features & CURL_VERSION_HTTP2)) {
        snprintf(err, errlen, "libcurl %s was built without HTTP/2", v->version);
        return -1;
    }
    return 0;
}

static size_t on_read(char *buf, size_t size, size_t nitems, void *ud)
{
    js_grpc_call *c = ud;
    size_t room = size * nitems;
    if (c->out_off < c->out_len) {
        size_t n = c->out_len - c->out_off;
        if (n > room) n = room;
        memcpy(buf, c->out + c->out_off, n);
        c->out_off += n;
        return n;
    }
    if (c->half_closed) return 0; /* end of the request; libcurl may ask again: keep answering 0 */
    c->paused = 1;
    return CURL_READFUNC_PAUSE;
}

/* Queue one response message; 0, or -1 with the call's err. Empty messages cost a node each, so nodes count too. */
static int queue_msg(void *ctx, const uint8_t *data, size_t len)
{
    js_grpc_call *c = ctx;
    if (c->queued + sizeof(msg_node) + len > JS_GRPC_MSG_MAX) {
        snprintf(c->err, sizeof c->err, "the server sent more than %u bytes unread", JS_GRPC_MSG_MAX);
        return -1;
    }
    if (c->unary && (c->head || c->given)) {
        snprintf(c->err, sizeof c->err, "the server sent a second message in answer to a unary call");
        return -1;
    }
    if (c->nqueued >= QUEUE_MSGS_MAX) {
        snprintf(c->err, sizeof c->err, "the server sent more than %d messages unread", QUEUE_MSGS_MAX);
        return -1;
    }
    msg_node *m = malloc(sizeof *m + len);
    if (!m) {
        snprintf(c->err, sizeof c->err, "out of memory for a response message");
        return -1;
    }
    m->next = NULL;
    m->len = len;
    if (len) memcpy(m->data, data, len);
    if (c->tail) c->tail->next = m;
    else c->head = m;
    c->tail = m;
    c->queued += sizeof(msg_node) + len;
    c->nqueued++;
    return 0;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
    js_grpc_call *c = ud;
    size_t n = size * nmemb, used = 0;
    c->body_bytes += n;
    if (js_grpc_reader_feed(&c->rd, (const uint8_t *)p, n, &used, queue_msg, c, c->err, sizeof c->err) != 0) {
        c->proto_error = 1;
        return 0; /* libcurl aborts the transfer */
    }
    return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    js_grpc_call *c = ud;
    js_grpc_headers_line(&c->hd, p, size * nmemb);
    return size * nmemb;
}

/* Request headers; 0 or -1. */
static int build_headers(js_grpc_call *c, const js_grpc_channel *ch, long long deadline_ms)
{
    char line[512], tv[32];
    js_grpc_timeout_value(deadline_ms, tv, sizeof tv);
    const char *fixed[] = {"content-type: application/grpc", "te: trailers", "Expect:", "Accept:"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (!(c->hdrs = curl_slist_append(c->hdrs, fixed[i]))) return -1;
    snprintf(line, sizeof line, "grpc-timeout: %s", tv);
    if (!(c->hdrs = curl_slist_append(c->hdrs, line))) return -1;
    if (ch->token[0]) {
        snprintf(line, sizeof line, "authentication: %s", ch->token);
        if (!(c->hdrs = curl_slist_append(c->hdrs, line))) return -1;
    }
    return 0;
}

/* Easy-handle options for one call; 0 or -1. request_size: as js_grpc_open takes it. */
static int setup_easy(js_grpc_call *c, const js_grpc_channel *ch, const char *path, long long deadline_ms,
                      long long request_size)
{
    char url[1400];
    snprintf(url, sizeof url, "%s://%s:%d%s", ch->tls ? "https" : "http", ch->host, ch->port, path);
    CURL *e = c->easy;
    int bad = 0;
    bad |= curl_easy_setopt(e, CURLOPT_URL, url) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                            (long)(ch->tls ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_POST, 1L) != CURLE_OK;
    /* A known size ends the request with its last DATA frame (why: js_grpc_open in grpc.h). */
    if (request_size >= 0)
        bad |= curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request_size) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->hdrs) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_USERAGENT, USER_AGENT) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_READDATA, c) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_WRITEDATA, c) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HEADERDATA, c) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->curl_err) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                            ch->connect_timeout_ms > 0 ? ch->connect_timeout_ms : 5000L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)deadline_ms) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, ch->tls ? "https" : "http") != CURLE_OK;
    if (ch->tls) {
        bad |= curl_easy_setopt(e, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2) != CURLE_OK;
        if (ch->cafile[0]) bad |= curl_easy_setopt(e, CURLOPT_CAINFO, ch->cafile) != CURLE_OK;
        if (ch->insecure) {
            bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK;
            bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK;
        }
    }
    return bad ? -1 : 0;
}

js_grpc_call *js_grpc_open(const js_grpc_channel *ch, const char *path, long long deadline_ms, long long request_size)
{
    js_grpc_call *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->started = js_mono_ms();
    c->deadline = c->started + deadline_ms;
    c->status = JS_GRPC_OK;
    c->tls = ch->tls;
    c->cancel = ch->cancel;
    js_grpc_reader_init(&c->rd, JS_GRPC_MSG_MAX);
    js_grpc_headers_init(&c->hd);
    c->easy = curl_easy_init();
    c->multi = curl_multi_init();
    if (!c->easy || !c->multi || build_headers(c, ch, deadline_ms) != 0 ||
        setup_easy(c, ch, path, deadline_ms, request_size) != 0 || curl_multi_add_handle(c->multi, c->easy) != CURLM_OK) {
        js_grpc_close(c);
        return NULL;
    }
    c->running = 1;
    return c;
}

/* The status of a call that ended without a grpc-status of its own. */
static void status_without_trailer(js_grpc_call *c, int timed_out)
{
    if (c->proto_error) {
        c->status = JS_GRPC_INTERNAL; /* err already says why */
    } else if (timed_out || c->result == CURLE_OPERATION_TIMEDOUT) {
        c->status = JS_GRPC_DEADLINE_EXCEEDED;
        snprintf(c->err, sizeof c->err, "deadline exceeded");
    } else if (c->result != CURLE_OK) {
        c->status = JS_GRPC_UNAVAILABLE;
        snprintf(c->err, sizeof c->err, "%s", c->curl_err[0] ? c->curl_err : curl_easy_strerror(c->result));
    } else if (c->hd.http_status && c->hd.http_status != 200) {
        c->status = js_grpc_code_from_http(c->hd.http_status);
        snprintf(c->err, sizeof c->err, "HTTP status %ld without a gRPC status", c->hd.http_status);
    } else {
        c->status = JS_GRPC_UNKNOWN;
        snprintf(c->err, sizeof c->err, "the response carried no gRPC status");
    }
}

/* End the call: take its status and take the handle out of the multi (the server may have ended
 * the call before our half-close; libcurl 7.88 would then wait for an upload that never resumes). */
static void end_call(js_grpc_call *c, int timed_out)
{
    if (c->ended) return;
    c->ended = 1;
    if (c->hd.status >= 0) {
        c->status = c->hd.status;
        snprintf(c->err, sizeof c->err, "%s", c->hd.message);
    } else {
        status_without_trailer(c, timed_out);
    }
    if (c->running) curl_multi_remove_handle(c->multi, c->easy);
    c->running = 0;
}

/* A connection that is not HTTP/2 (an HTTP/1.1 server, ALPN refused) ends the call: UNAVAILABLE. */
static int wrong_protocol(js_grpc_call *c)
{
    if (!c->hd.http_status) return 0;
    long v = 0;
    if (curl_easy_getinfo(c->easy, CURLINFO_HTTP_VERSION, &v) != CURLE_OK || v == 0 || v == CURL_HTTP_VERSION_2_0)
        return 0;
    c->hd.status = JS_GRPC_UNAVAILABLE;
    snprintf(c->hd.message, sizeof c->hd.message, "the server answered over HTTP/1.x, not HTTP/2: not a gRPC endpoint");
    return 1;
}

/* Drive the transfer until done(c) holds or the call ends. */
static void drive(js_grpc_call *c, int (*done)(const js_grpc_call *))
{
    while (!c->ended) {
        int still = 0;
        if (curl_multi_perform(c->multi, &still) != CURLM_OK) {
            c->result = CURLE_FAILED_INIT;
            end_call(c, 0);
            break;
        }
        int left;
        CURLMsg *m;
        while ((m = curl_multi_info_read(c->multi, &left)) != NULL)
            if (m->msg == CURLMSG_DONE) {
                c->result = m->data.result;
                end_call(c, 0);
            }
        if (c->ended) break;
        if (c->hd.status >= 0 || c->proto_error || wrong_protocol(c)) {
            end_call(c, 0);
            break;
        }
        if (done(c)) break;
        if (c->cancel && *c->cancel) {
            c->hd.status = JS_GRPC_CANCELLED;
            snprintf(c->hd.message, sizeof c->hd.message, "cancelled: the agent is shutting down");
            end_call(c, 0);
            break;
        }
        long long left_ms = c->deadline - js_mono_ms();
        if (left_ms <= 0) {
            end_call(c, 1);
            break;
        }
        curl_multi_poll(c->multi, NULL, 0, (int)(left_ms < POLL_SLICE_MS ? left_ms : POLL_SLICE_MS), NULL);
    }
}

static int drained(const js_grpc_call *c) { return c->out_off >= c->out_len; }
static int has_msg(const js_grpc_call *c) { return c->head != NULL; }
static int never(const js_grpc_call *c) { (void)c; return 0; }

static void resume(js_grpc_call *c)
{
    if (c->paused && !c->ended) {
        c->paused = 0;
        curl_easy_pause(c->easy, CURLPAUSE_CONT);
    }
}

int js_grpc_send(js_grpc_call *c, const void *msg, size_t len)
{
    if (c->ended) return c->status == JS_GRPC_OK ? JS_GRPC_CANCELLED : c->status;
    if (len > JS_GRPC_MSG_MAX) {
        snprintf(c->err, sizeof c->err, "message of %zu bytes exceeds the %u-byte limit", len, JS_GRPC_MSG_MAX);
        return JS_GRPC_INTERNAL;
    }
    if (c->out_off == c->out_len) c->out_off = c->out_len = 0;
    if (c->out_len + 5 + len > c->out_cap) {
        size_t cap = c->out_len + 5 + len;
        uint8_t *b = realloc(c->out, cap);
        if (!b) {
            snprintf(c->err, sizeof c->err, "out of memory for a %zu-byte message", len);
            return JS_GRPC_RESOURCE_EXHAUSTED;
        }
        c->out = b;
        c->out_cap = cap;
    }
    js_grpc_frame_prefix(c->out + c->out_len, (uint32_t)len);
    if (len) memcpy(c->out + c->out_len + 5, msg, len);
    c->out_len += 5 + len;
    resume(c);
    drive(c, drained);
    if (c->ended && c->status == JS_GRPC_OK && !drained(c)) return JS_GRPC_CANCELLED;
    return c->ended ? c->status : JS_GRPC_OK;
}

int js_grpc_send_last(js_grpc_call *c, const void *msg, size_t len)
{
    c->half_closed = 1; /* the read callback ends the request once the message is out */
    return js_grpc_send(c, msg, len);
}

int js_grpc_recv(js_grpc_call *c, const uint8_t **msg, size_t *len)
{
    free(c->given);
    c->given = NULL;
    *msg = NULL;
    *len = 0;
    if (!c->head) drive(c, has_msg);
    if (c->head) {
        c->given = c->head;
        c->head = c->head->next;
        if (!c->head) c->tail = NULL;
        c->queued -= sizeof(msg_node) + c->given->len;
        c->nqueued--;
        *msg = c->given->data;
        *len = c->given->len;
        return JS_GRPC_OK;
    }
    return c->ended ? c->status : JS_GRPC_DEADLINE_EXCEEDED;
}

int js_grpc_finish(js_grpc_call *c)
{
    c->half_closed = 1;
    resume(c);
    drive(c, never);
    return c->status;
}

const char *js_grpc_error(const js_grpc_call *c)
{
    return c->err;
}

void js_grpc_close(js_grpc_call *c)
{
    if (!c) return;
    if (c->running) curl_multi_remove_handle(c->multi, c->easy);
    if (c->easy) curl_easy_cleanup(c->easy);
    if (c->multi) curl_multi_cleanup(c->multi);
    curl_slist_free_all(c->hdrs);
    for (msg_node *m = c->head, *n; m; m = n) {
        n = m->next;
        free(m);
    }
    free(c->given);
    free(c->out);
    js_grpc_reader_free(&c->rd);
    free(c);
}

/* One of libcurl's times of the call, in ms (-1 if it has none: libcurl gives 0 for a point not reached). */
static long long curl_ms(const js_grpc_call *c, CURLINFO what)
{
    curl_off_t us = 0;
    return curl_easy_getinfo(c->easy, what, &us) == CURLE_OK && us > 0 ? (long long)(us / 1000) : -1;
}

void js_grpc_timing_of(const js_grpc_call *c, js_grpc_timing *t)
{
    t->connect_ms = curl_ms(c, CURLINFO_CONNECT_TIME_T);
    t->sent_ms = curl_ms(c, CURLINFO_PRETRANSFER_TIME_T);
    t->total_ms = js_mono_ms() - c->started;
}

int js_grpc_unary(const js_grpc_channel *ch, const char *path, const void *req, size_t req_len,
                  long long deadline_ms, uint8_t **resp, size_t *resp_len, char *err, size_t errlen)
{
    return js_grpc_unary_timed(ch, path, req, req_len, deadline_ms, resp, resp_len, NULL, err, errlen);
}

int js_grpc_unary_timed(const js_grpc_channel *ch, const char *path, const void *req, size_t req_len,
                        long long deadline_ms, uint8_t **resp, size_t *resp_len, js_grpc_timing *t, char *err,
                        size_t errlen)
{
    *resp = NULL;
    *resp_len = 0;
    js_grpc_call *c = js_grpc_open(ch, path, deadline_ms, (long long)req_len + 5);
    if (!c) {
        snprintf(err, errlen, "cannot set up the call (out of memory or a bad option)");
        return JS_GRPC_INTERNAL;
    }
    c->unary = 1; /* one small answer: what it unpacks to is bounded too */
    js_grpc_reader_init(&c->rd, JS_GRPC_UNARY_MAX);
    int st = js_grpc_send_last(c, req, req_len);
    if (st == JS_GRPC_OK) st = js_grpc_finish(c);
    if (st == JS_GRPC_OK && !c->head) {
        st = JS_GRPC_INTERNAL;
        snprintf(c->err, sizeof c->err, "the server sent no response message (HTTP %ld, %zu body bytes)",
                 c->hd.http_status, c->body_bytes);
    }
    if (st == JS_GRPC_OK) {
        *resp = malloc(c->head->len ? c->head->len : 1);
        if (*resp) {
            memcpy(*resp, c->head->data, c->head->len);
            *resp_len = c->head->len;
        } else {
            st = JS_GRPC_RESOURCE_EXHAUSTED;
            snprintf(c->err, sizeof c->err, "out of memory for the response");
        }
    }
    snprintf(err, errlen, "%s", st == JS_GRPC_OK ? "" : c->err);
    if (t) js_grpc_timing_of(c, t);
    js_grpc_close(c);
    return st;
}
