/* fuzz_grpc.c - libFuzzer target for the gRPC wire parts of the task client (src/backend/grpc_wire.c;
 * docs/FUZZING.md): what a server sends back before protobuf sees it.
 *
 * The input is a recipe: a message size limit, then DATA bytes fed to the message reassembler
 * (js_grpc_reader_feed) in pieces cut where the input says, then response header lines (split at '\n') for
 * the status parser (js_grpc_headers_line, which percent-decodes grpc-message), then a few percent-decodes
 * into buffers of every small size.
 * Invariants beyond the sanitizers: every message handed on is complete and within the limit, and the
 * messages' bytes are exactly the DATA bytes less their 5-byte prefixes; the reassembler consumes all it is
 * given unless it fails, and a failure names its cause; grpc-status is -1 (unseen), 0..16 or UNKNOWN; texts
 * stay NUL-terminated within their buffers.
 */
#include "fuzz_util.h"

#include "backend/grpc.h"

typedef struct {
    size_t max, msgs, bytes;
    const uint8_t *expect; /* the DATA bytes fed so far, to check each message against */
    size_t at;             /* offset in expect of the next message's prefix */
} sink_ctx;

/* Message callback: checks the message against the bytes that carried it. */
static int on_msg(void *ctx, const uint8_t *msg, size_t len)
{
    sink_ctx *s = ctx;
    FZ_CHECK(msg != NULL && len <= s->max, "message %p of %zu bytes (limit %zu)", (const void *)msg, len, s->max);
    const uint8_t *p = s->expect + s->at;
    size_t want = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
    FZ_CHECK(p[0] == 0 && want == len && (len == 0 || memcmp(p + 5, msg, len) == 0),
             "message %zu differs from its frame", s->msgs);
    s->at += 5 + len;
    s->msgs++;
    s->bytes += len;
    return 0;
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    size_t max = (size_t)fz_range(&in, 0, 4096);
    size_t dlen;
    const uint8_t *d = fz_take(&in, 8192, &dlen);
    js_grpc_reader r;
    js_grpc_reader_init(&r, max);
    sink_ctx s = {max, 0, 0, d, 0};
    char err[JS_GRPC_ERR_MAX] = "";
    size_t off = 0;
    uint8_t cut = fz_u8(&in);
    while (off < dlen) { /* pieces of 1..cut+1 bytes, as libcurl may hand them */
        size_t piece = 1 + (size_t)(d[off] % ((size_t)cut + 1)), used = 0;
        if (piece > dlen - off) piece = dlen - off;
        int rc = js_grpc_reader_feed(&r, d + off, piece, &used, on_msg, &s, err, sizeof err);
        FZ_CHECK(used <= piece, "used %zu of %zu", used, piece);
        if (rc != 0) {
            FZ_CHECK(rc == -1 && err[0] && fz_fits(err, sizeof err), "feed failed without a reason (%d)", rc);
            break;
        }
        FZ_CHECK(used == piece, "used %zu of %zu without failing", used, piece);
        off += piece;
    }
    js_grpc_reader_free(&r);

    js_grpc_headers h;
    js_grpc_headers_init(&h);
    size_t hlen;
    const uint8_t *hp = fz_take(&in, 2048, &hlen);
    for (size_t i = 0; i < hlen;) {
        const uint8_t *nl = memchr(hp + i, '\n', hlen - i);
        size_t n = nl ? (size_t)(nl - (hp + i)) + 1 : hlen - i;
        char *line = fz_cstr(hp + i, n); /* libcurl hands a line with its CRLF; NUL-terminated past it */
        js_grpc_headers_line(&h, line, n);
        free(line);
        i += n;
    }
    FZ_CHECK(h.status >= -1 && h.status <= 16, "grpc-status %d", h.status);
    FZ_CHECK(fz_fits(h.message, sizeof h.message), "grpc-message overran");
    (void)js_grpc_code_name(h.status);
    (void)js_grpc_code_from_http(h.http_status);

    for (size_t cap = 0; cap < 6; cap++) { /* the decoder into tight buffers */
        char out[8];
        memset(out, 'x', sizeof out);
        js_grpc_percent_decode((const char *)in.p, in.n, out, cap);
        FZ_CHECK(cap == 0 || memchr(out, 0, cap), "decode into %zu bytes not terminated", cap);
        FZ_CHECK(cap >= sizeof out || out[cap] == 'x', "decode wrote past %zu", cap);
    }
    char tv[16];
    js_grpc_timeout_value((long long)fz_bits(&in, 8), tv, sizeof tv);
    FZ_CHECK(strlen(tv) <= 9, "grpc-timeout '%s' longer than 8 digits and a unit", tv);
    return 0;
}
