/* test_grpc.c - gRPC on the wire without a gRPC library: message framing on bytes captured from a real
 * exchange (a libcurl client and a grpcio server), the status headers as libcurl delivers them, the SkyWalking
 * messages protoc-c generates from proto/ against captured bytes, and calls against peers that fail: nothing
 * listening, an HTTP/1.1 server, a server that never answers, a cancelled call. The calls against the real
 * grpcio stand-in for the OAP are in java-test-harness/backend (make backend-test). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "backend/grpc.h"
#include "proto/asyncprofiler/AsyncProfiler.pb-c.h"

/* The request body libcurl sent for AsyncProfilerTaskCommandQuery{svc, inst, -1}, as a grpcio server got it. */
static const uint8_t captured_query[] = {0x00, 0x00, 0x00, 0x00, 0x16, 0x0a, 0x03, 's',  'v',  'c',  0x12, 0x04,
                                         'i',  'n',  's',  't',  0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0x01};
/* The OAP's answer to an upload over its limit: AsyncProfilerCollectionResponse{TERMINATED_BY_OVERSIZE}. */
static const uint8_t captured_oversize[] = {0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02};

typedef struct {
    int n;
    size_t len[8];
    uint8_t data[8][64];
} got_msgs;

static int collect_msg(void *ctx, const uint8_t *m, size_t len)
{
    got_msgs *g = ctx;
    if (g->n < 8) {
        g->len[g->n] = len;
        if (len) memcpy(g->data[g->n], m, len < 64 ? len : 64);
        g->n++;
    }
    return 0;
}

static void test_query_bytes_match_capture(void **state)
{
    Skywalking__V10__AsyncProfilerTaskCommandQuery q = SKYWALKING__V10__ASYNC_PROFILER_TASK_COMMAND_QUERY__INIT;
    q.service = "svc";
    q.serviceinstance = "inst";
    q.lastcommandtime = -1;
    uint8_t buf[64];
    size_t n = skywalking__v10__async_profiler_task_command_query__pack(&q, buf + 5);
    js_grpc_frame_prefix(buf, (uint32_t)n);
    assert_int_equal(n + 5, sizeof captured_query);
    assert_memory_equal(buf, captured_query, sizeof captured_query);
}

static void test_reader_byte_by_byte(void **state)
{
    js_grpc_reader r;
    js_grpc_reader_init(&r, 1024);
    got_msgs g = {0};
    char err[128];
    for (size_t i = 0; i < sizeof captured_query; i++) {
        size_t used = 0;
        assert_int_equal(js_grpc_reader_feed(&r, captured_query + i, 1, &used, collect_msg, &g, err, sizeof err), 0);
        assert_int_equal(used, 1);
    }
    assert_int_equal(g.n, 1);
    Skywalking__V10__AsyncProfilerTaskCommandQuery *q =
        skywalking__v10__async_profiler_task_command_query__unpack(NULL, g.len[0], g.data[0]);
    assert_non_null(q);
    assert_string_equal(q->service, "svc");
    assert_string_equal(q->serviceinstance, "inst");
    assert_int_equal(q->lastcommandtime, -1);
    skywalking__v10__async_profiler_task_command_query__free_unpacked(q, NULL);
    js_grpc_reader_free(&r);
}

static void test_reader_several_and_empty(void **state)
{
    uint8_t stream[64];
    size_t n = 0;
    uint8_t empty[5] = {0, 0, 0, 0, 0}; /* the OAP's go-ahead: an empty message */
    memcpy(stream + n, empty, 5), n += 5;
    memcpy(stream + n, captured_oversize, sizeof captured_oversize), n += sizeof captured_oversize;
    memcpy(stream + n, empty, 5), n += 5;
    js_grpc_reader r;
    js_grpc_reader_init(&r, 1024);
    got_msgs g = {0};
    char err[128];
    size_t used;
    /* cut in two at an awkward place: inside the second prefix */
    assert_int_equal(js_grpc_reader_feed(&r, stream, 7, &used, collect_msg, &g, err, sizeof err), 0);
    assert_int_equal(js_grpc_reader_feed(&r, stream + 7, n - 7, &used, collect_msg, &g, err, sizeof err), 0);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.len[0], 0);
    assert_int_equal(g.len[1], 2);
    assert_int_equal(g.len[2], 0);
    Skywalking__V10__AsyncProfilerCollectionResponse *resp =
        skywalking__v10__async_profiler_collection_response__unpack(NULL, g.len[1], g.data[1]);
    assert_non_null(resp);
    assert_int_equal(resp->type, SKYWALKING__V10__ASYNC_PROFILING_STATUS__TERMINATED_BY_OVERSIZE);
    skywalking__v10__async_profiler_collection_response__free_unpacked(resp, NULL);
    js_grpc_reader_free(&r);
}

static void test_reader_refuses_compressed_and_oversized(void **state)
{
    js_grpc_reader r;
    got_msgs g = {0};
    char err[128] = "";
    size_t used;
    const uint8_t compressed[] = {1, 0, 0, 0, 1, 0x08};
    js_grpc_reader_init(&r, 1024);
    assert_int_equal(js_grpc_reader_feed(&r, compressed, sizeof compressed, &used, collect_msg, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "compressed"));
    js_grpc_reader_free(&r);
    const uint8_t huge[] = {0, 0x7f, 0xff, 0xff, 0xff};
    js_grpc_reader_init(&r, 1024);
    assert_int_equal(js_grpc_reader_feed(&r, huge, sizeof huge, &used, collect_msg, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "exceeds"));
    assert_int_equal(g.n, 0);
    js_grpc_reader_free(&r);
}

/* Header lines exactly as libcurl 7.88 hands them over: note the space after the status code. */
static void feed_lines(js_grpc_headers *h, const char *const *lines)
{
    for (; *lines; lines++) js_grpc_headers_line(h, *lines, strlen(*lines));
}

static void test_headers_trailers_only(void **state)
{
    js_grpc_headers h;
    js_grpc_headers_init(&h);
    const char *const lines[] = {"HTTP/2 200 \r\n", "content-type: application/grpc\r\n", "grpc-status: 12\r\n",
                                 "grpc-message: bad token: 100%25 wrong\r\n", "\r\n", NULL};
    feed_lines(&h, lines);
    assert_int_equal(h.http_status, 200);
    assert_int_equal(h.status, JS_GRPC_UNIMPLEMENTED);
    assert_string_equal(h.message, "bad token: 100% wrong");
}

static void test_headers_trailers_after_body(void **state)
{
    js_grpc_headers h;
    js_grpc_headers_init(&h);
    const char *const head[] = {"HTTP/2 200 \r\n", "content-type: application/grpc\r\n", "\r\n", NULL};
    feed_lines(&h, head);
    assert_int_equal(h.status, -1); /* not yet: the status comes with the trailers */
    const char *const trailers[] = {"grpc-status: 0\r\n", "x-trailer: t1\r\n", NULL};
    feed_lines(&h, trailers);
    assert_int_equal(h.status, JS_GRPC_OK);
}

static void test_headers_bad_values(void **state)
{
    js_grpc_headers h;
    js_grpc_headers_init(&h);
    const char *const lines[] = {"HTTP/2 503 \r\n", "grpc-status: 07x\r\n", "grpc-message: %zz%4\r\n", NULL};
    feed_lines(&h, lines);
    assert_int_equal(h.http_status, 503);
    assert_int_equal(h.status, JS_GRPC_UNKNOWN); /* unparsable status */
    assert_string_equal(h.message, "%zz%4");     /* bad escapes stay */
    assert_int_equal(js_grpc_code_from_http(503), JS_GRPC_UNAVAILABLE);
    assert_int_equal(js_grpc_code_from_http(404), JS_GRPC_UNIMPLEMENTED);
    assert_int_equal(js_grpc_code_from_http(200), JS_GRPC_UNKNOWN);
}

static void test_timeout_values(void **state)
{
    char v[16];
    js_grpc_timeout_value(30000, v, sizeof v);
    assert_string_equal(v, "30000m");
    js_grpc_timeout_value(0, v, sizeof v);
    assert_string_equal(v, "1m");
    js_grpc_timeout_value(1000000000LL, v, sizeof v); /* over 8 digits of ms: seconds */
    assert_string_equal(v, "1000000S");
    assert_string_equal(js_grpc_code_name(14), "UNAVAILABLE");
}

/* ---- calls against peers that fail ---- */

typedef struct {
    int fd;
    const char *reply; /* NULL: accept and stay silent */
    int hold_ms;
} peer;

static void *serve_one(void *arg)
{
    peer *p = arg;
    int c = accept(p->fd, NULL, NULL);
    if (c < 0) return NULL;
    char buf[4096];
    if (p->reply) {
        if (read(c, buf, sizeof buf) > 0 && write(c, p->reply, strlen(p->reply)) < 0) buf[0] = 0;
    } else {
        struct timespec ts = {p->hold_ms / 1000, (p->hold_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    close(c);
    return NULL;
}

/* A loopback listener on a free port; returns the port. */
static int listen_any(peer *p)
{
    p->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(p->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(p->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(p->fd, 4), 0);
    socklen_t l = sizeof a;
    getsockname(p->fd, (struct sockaddr *)&a, &l);
    return ntohs(a.sin_port);
}

static js_grpc_channel channel(int port)
{
    js_grpc_channel ch;
    memset(&ch, 0, sizeof ch);
    snprintf(ch.host, sizeof ch.host, "127.0.0.1");
    ch.port = port;
    ch.connect_timeout_ms = 1000;
    return ch;
}

static long long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_call_nothing_listening(void **state)
{
    peer p;
    int port = listen_any(&p);
    close(p.fd); /* the port is now free: connection refused */
    js_grpc_channel ch = channel(port);
    uint8_t *resp;
    size_t len;
    char err[256];
    int st = js_grpc_unary(&ch, "/x.Y/z", "", 0, 2000, &resp, &len, err, sizeof err);
    assert_int_equal(st, JS_GRPC_UNAVAILABLE);
    assert_null(resp);
    assert_true(err[0] != 0);
}

/* One unary call to a peer served by a thread; the status, with the call's duration in *took (ms). */
static int call_peer(peer *p, long long deadline_ms, volatile int *cancel, long long *took)
{
    int port = listen_any(p);
    pthread_t t;
    pthread_create(&t, NULL, serve_one, p);
    js_grpc_channel ch = channel(port);
    ch.cancel = cancel;
    uint8_t *resp = NULL;
    size_t len;
    char err[256];
    long long t0 = ms_now();
    int st = js_grpc_unary(&ch, "/x.Y/z", "", 0, deadline_ms, &resp, &len, err, sizeof err);
    *took = ms_now() - t0;
    pthread_join(t, NULL);
    close(p->fd);
    assert_null(resp);
    return st;
}

static void test_call_http1_server(void **state)
{
    peer p = {.reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"};
    long long took;
    /* prior-knowledge HTTP/2 meets HTTP/1.1: not a gRPC endpoint */
    assert_int_equal(call_peer(&p, 3000, NULL, &took), JS_GRPC_UNAVAILABLE);
}

static void test_call_garbage_server(void **state)
{
    peer p = {.reply = "\x17\x03\x03garbage that is neither HTTP/1 nor HTTP/2\r\n\r\n\x00\x00\x00\x00"};
    long long took;
    assert_int_equal(call_peer(&p, 3000, NULL, &took), JS_GRPC_UNAVAILABLE);
    assert_true(took < 2500); /* ends when the peer hangs up, not at the deadline */
}

static void test_call_silent_server_meets_deadline(void **state)
{
    peer p = {.reply = NULL, .hold_ms = 3000};
    long long took;
    assert_int_equal(call_peer(&p, 400, NULL, &took), JS_GRPC_DEADLINE_EXCEEDED);
    assert_true(took >= 350 && took < 2000); /* bounded by the call's deadline, not by the peer */
}

static void test_call_cancelled(void **state)
{
    peer p = {.reply = NULL, .hold_ms = 3000};
    volatile int cancel = 1; /* the agent is shutting down */
    long long took;
    assert_int_equal(call_peer(&p, 10000, &cancel, &took), JS_GRPC_CANCELLED);
    assert_true(took < 1500);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    char err[256];
    if (js_grpc_global_init(err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_bytes_match_capture),
        cmocka_unit_test(test_reader_byte_by_byte),
        cmocka_unit_test(test_reader_several_and_empty),
        cmocka_unit_test(test_reader_refuses_compressed_and_oversized),
        cmocka_unit_test(test_headers_trailers_only),
        cmocka_unit_test(test_headers_trailers_after_body),
        cmocka_unit_test(test_headers_bad_values),
        cmocka_unit_test(test_timeout_values),
        cmocka_unit_test(test_call_nothing_listening),
        cmocka_unit_test(test_call_http1_server),
        cmocka_unit_test(test_call_garbage_server),
        cmocka_unit_test(test_call_silent_server_meets_deadline),
        cmocka_unit_test(test_call_cancelled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
