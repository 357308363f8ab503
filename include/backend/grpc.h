/* grpc.h - gRPC over HTTP/2 on libcurl: no gRPC library, one call per connection over h2c.
 *
 * A channel is a target (host:port, h2c or TLS) plus call metadata (the token). A call is driven on
 * the calling thread only, through libcurl's multi interface, and every step has a deadline, so
 * no call blocks past the time it was given. Unary calls are one function; a bidirectional
 * stream (the OAP's `collect`) is open / send / recv / finish. Every message is capped
 * (JS_GRPC_MSG_MAX). Results are gRPC status codes (js_grpc_code) with a message in the call.
 *
 * libcurl 7.88 corrupts reused prior-knowledge h2c connections, so every call opens a fresh one.
 */
#ifndef JS_GRPC_H
#define JS_GRPC_H

#include <stddef.h>
#include <stdint.h>

#define JS_GRPC_MSG_MAX (4u << 20)  /* largest message sent or received (an upload slice is 1 MiB) */
#define JS_GRPC_UNARY_MAX (256u << 10) /* largest answer to a unary call (a poll's Commands: a few hundred bytes) */
#define JS_GRPC_ERR_MAX 256

/* gRPC status codes (grpc's statuscodes.md). */
typedef enum {
    JS_GRPC_OK = 0,
    JS_GRPC_CANCELLED = 1,
    JS_GRPC_UNKNOWN = 2,
    JS_GRPC_INVALID_ARGUMENT = 3,
    JS_GRPC_DEADLINE_EXCEEDED = 4,
    JS_GRPC_NOT_FOUND = 5,
    JS_GRPC_ALREADY_EXISTS = 6,
    JS_GRPC_PERMISSION_DENIED = 7,
    JS_GRPC_RESOURCE_EXHAUSTED = 8,
    JS_GRPC_FAILED_PRECONDITION = 9,
    JS_GRPC_ABORTED = 10,
    JS_GRPC_OUT_OF_RANGE = 11,
    JS_GRPC_UNIMPLEMENTED = 12,
    JS_GRPC_INTERNAL = 13,
    JS_GRPC_UNAVAILABLE = 14,
    JS_GRPC_DATA_LOSS = 15,
    JS_GRPC_UNAUTHENTICATED = 16
} js_grpc_code;

/* "UNAVAILABLE", ... ("code N" beyond the table, in a static buffer per code: never for user text). */
const char *js_grpc_code_name(int code);

/* ---- pure wire helpers (grpc_wire.c), testable on captured bytes ---- */

/* Write the 5-byte prefix for a message of len bytes into p. */
void js_grpc_frame_prefix(uint8_t p[5], uint32_t len);

/* Reassembles length-prefixed messages from DATA bytes cut anywhere. */
typedef struct {
    uint8_t *buf;  /* the message being assembled (heap, grows up to its length) */
    size_t cap;
    size_t have;   /* bytes of the current message read so far */
    uint8_t head[5];
    size_t head_have;
    uint32_t len;
    size_t max;    /* larger messages are an error */
} js_grpc_reader;

void js_grpc_reader_init(js_grpc_reader *r, size_t max);
void js_grpc_reader_free(js_grpc_reader *r);
/* Feed n bytes; for each complete message call on_msg(ctx, data, len) (a nonzero return stops with
 * that value). Returns 0, or -1 with err set for a compressed or oversized message. Returns the
 * number of bytes consumed in *used (all of them unless stopped or failed). */
int js_grpc_reader_feed(js_grpc_reader *r, const uint8_t *p, size_t n, size_t *used,
                        int (*on_msg)(void *ctx, const uint8_t *msg, size_t len), void *ctx, char *err, size_t errlen);

/* "30S", "1500m": a grpc-timeout value for ms milliseconds (at most 8 digits). */
void js_grpc_timeout_value(long long ms, char *out, size_t outlen);
/* Decode a grpc-message value (percent-encoded UTF-8) into out; bad escapes stay as they are. */
void js_grpc_percent_decode(const char *in, size_t n, char *out, size_t outlen);
/* The status for an HTTP :status when the response carried no grpc-status. */
int js_grpc_code_from_http(long http_status);

/* What one response header line told us. */
typedef struct {
    int status;          /* grpc-status, -1 until seen */
    long http_status;    /* :status of the first header block, 0 until seen */
    char message[JS_GRPC_ERR_MAX]; /* grpc-message, decoded */
} js_grpc_headers;

void js_grpc_headers_init(js_grpc_headers *h);
/* Take one header line as libcurl delivers it ("HTTP/2 200 \r\n", "grpc-status: 0\r\n", "\r\n"). */
void js_grpc_headers_line(js_grpc_headers *h, const char *line, size_t n);

/* ---- calls over libcurl (grpc_call.c) ---- */

typedef struct {
    char host[256];
    int port;
    int tls;            /* https with ALPN h2, TLS >= 1.2 */
    int insecure;       /* TLS without verifying the server */
    char cafile[1024];  /* CA bundle for TLS; "" = the system's */
    char token[256];    /* "authentication" metadata; "" = none; never logged */
    long connect_timeout_ms;
    const volatile int *cancel; /* when set and nonzero, calls end at once with CANCELLED */
} js_grpc_channel;

typedef struct js_grpc_call js_grpc_call;

/* One-time process setup of libcurl; 0 or -1 with err. */
int js_grpc_global_init(char *err, size_t errlen);

/* Open a call to path ("/pkg.Service/Method") that must end within deadline_ms; NULL on
 * allocation failure. Nothing is sent until the first send. request_size: the bytes of every framed
 * message the call will send (5 + length each) when known, else -1. Give it whenever it is known:
 * libcurl 7.88 ends a request of unknown size with an empty DATA frame, and when the whole answer is
 * already buffered by then it hands over the trailers but never the headers and messages ("Empty
 * reply from server", seen on loaded machines); a known size ends the request with its last frame.
 * Still lost with libcurl 7.88: a refusal (trailers-only answer and RST_STREAM in one read) of a call whose
 * request is still open; such a call ends at its deadline. */
js_grpc_call *js_grpc_open(const js_grpc_channel *ch, const char *path, long long deadline_ms, long long request_size);
/* Queue one message and drive until it is handed to the connection. JS_GRPC_OK or the status that
 * ended the call. */
int js_grpc_send(js_grpc_call *c, const void *msg, size_t len);
/* The same for the last message: the request ends (half-close) right after it. A server may answer as
 * soon as it has the message; unary calls send this way, with their size given to js_grpc_open. */
int js_grpc_send_last(js_grpc_call *c, const void *msg, size_t len);
/* Wait up to the deadline for the next server message: JS_GRPC_OK with *msg (owned by the call,
 * valid until the next call on c) and *len, or a status: the call ended (-1 never). A call that
 * ended OK with no further message gives JS_GRPC_OK with *msg NULL. */
int js_grpc_recv(js_grpc_call *c, const uint8_t **msg, size_t *len);
/* Half-close, wait for the server's status and end the call. The status; detail in js_grpc_error. */
int js_grpc_finish(js_grpc_call *c);
/* The status message of the last failure on c ("" if none). */
const char *js_grpc_error(const js_grpc_call *c);
/* Where a call's time went, in ms from its start (-1 where not reached): connected and ready to send the request,
 * as libcurl measured them, and the whole call up to now. For a call that took long, to say where it waited. (Not
 * the first byte of the answer: libcurl 7.88 marks it for HTTP/2 when the request goes, not when the answer comes.) */
typedef struct {
    long long connect_ms, sent_ms, total_ms;
} js_grpc_timing;
void js_grpc_timing_of(const js_grpc_call *c, js_grpc_timing *t);
void js_grpc_close(js_grpc_call *c);

/* One unary call: req -> the single response message, copied into resp (heap, caller frees) with
 * *resp_len. Returns the status; err gets the message. */
int js_grpc_unary(const js_grpc_channel *ch, const char *path, const void *req, size_t req_len,
                  long long deadline_ms, uint8_t **resp, size_t *resp_len, char *err, size_t errlen);
/* The same, with where its time went in *t (NULL: not wanted). */
int js_grpc_unary_timed(const js_grpc_channel *ch, const char *path, const void *req, size_t req_len,
                        long long deadline_ms, uint8_t **resp, size_t *resp_len, js_grpc_timing *t, char *err,
                        size_t errlen);

#endif
