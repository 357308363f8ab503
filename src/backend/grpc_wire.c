/* grpc_wire.c - see grpc.h: the byte-level parts of gRPC (message framing, timeouts, status
 * headers), kept free of I/O so captured frames can test them. */
#include "backend/grpc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const code_names[] = {
    "OK",        "CANCELLED",         "UNKNOWN",      "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};

const char *js_grpc_code_name(int code)
{
    if (code >= 0 && code < (int)(sizeof code_names / sizeof code_names[0])) return code_names[code];
    return "UNKNOWN_CODE";
}

void js_grpc_frame_prefix(uint8_t p[5], uint32_t len)
{
    p[0] = 0; /* not compressed: we never announce an encoding */
    p[1] = (uint8_t)(len >> 24);
    p[2] = (uint8_t)(len >> 16);
    p[3] = (uint8_t)(len >> 8);
    p[4] = (uint8_t)len;
}

void js_grpc_reader_init(js_grpc_reader *r, size_t max)
{
    memset(r, 0, sizeof *r);
    r->max = max;
}

void js_grpc_reader_free(js_grpc_reader *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}

/* Make room for the current message's len bytes; -1 if allocation fails. */
static int reserve(js_grpc_reader *r)
{
    if (r->cap >= r->len) return 0;
    size_t cap = r->len < 256 ? 256 : r->len;
    uint8_t *b = realloc(r->buf, cap);
    if (!b) return -1;
    r->buf = b;
    r->cap = cap;
    return 0;
}

int js_grpc_reader_feed(js_grpc_reader *r, const uint8_t *p, size_t n, size_t *used,
                        int (*on_msg)(void *ctx, const uint8_t *msg, size_t len), void *ctx, char *err, size_t errlen)
{
    size_t i = 0;
    int rc = 0;
    while (i < n && rc == 0) {
        if (r->head_have < 5) {
            r->head[r->head_have++] = p[i++];
            if (r->head_have < 5) continue;
            if (r->head[0] != 0) {
                snprintf(err, errlen, "compressed message (flag %u) though no encoding was offered", r->head[0]);
                rc = -1;
                break;
            }
            r->len = (uint32_t)r->head[1] << 24 | (uint32_t)r->head[2] << 16 | (uint32_t)r->head[3] << 8 | r->head[4];
            if (r->len > r->max) {
                snprintf(err, errlen, "message of %u bytes exceeds the %zu-byte limit", r->len, r->max);
                rc = -1;
                break;
            }
            if (reserve(r) != 0) {
                snprintf(err, errlen, "out of memory for a %u-byte message", r->len);
                rc = -1;
                break;
            }
            r->have = 0;
        } else {
            size_t take = r->len - r->have;
            if (take > n - i) take = n - i;
            if (take) memcpy(r->buf + r->have, p + i, take);
            r->have += take;
            i += take;
        }
        if (r->head_have == 5 && r->have == r->len) {
            r->head_have = 0;
            rc = on_msg(ctx, r->buf ? r->buf : r->head, r->len); /* never NULL, even for an empty message */
        }
    }
    if (used) *used = i;
    return rc;
}

void js_grpc_timeout_value(long long ms, char *out, size_t outlen)
{
    if (ms < 1) ms = 1;
    if (ms <= 99999999LL) snprintf(out, outlen, "%lldm", ms);
    else snprintf(out, outlen, "%lldS", ms / 1000 > 99999999LL ? 99999999LL : ms / 1000);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

void js_grpc_percent_decode(const char *in, size_t n, char *out, size_t outlen)
{
    size_t o = 0;
    if (!outlen) return;
    for (size_t i = 0; i < n && o + 1 < outlen; i++) {
        int hi, lo;
        if (in[i] == '%' && i + 2 < n && (hi = hexval((unsigned char)in[i + 1])) >= 0 &&
            (lo = hexval((unsigned char)in[i + 2])) >= 0) {
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[o++] = in[i];
        }
    }
    out[o] = 0;
}

int js_grpc_code_from_http(long s)
{
    switch (s) {
    case 400: return JS_GRPC_INTERNAL;
    case 401: return JS_GRPC_UNAUTHENTICATED;
    case 403: return JS_GRPC_PERMISSION_DENIED;
    case 404: return JS_GRPC_UNIMPLEMENTED;
    case 429: case 502: case 503: case 504: return JS_GRPC_UNAVAILABLE;
    case 431: return JS_GRPC_INTERNAL;
    default: return JS_GRPC_UNKNOWN;
    }
}

void js_grpc_headers_init(js_grpc_headers *h)
{
    memset(h, 0, sizeof *h);
    h->status = -1;
}

/* Header value of "name: value" when the line's name is name (case-insensitive), trimmed; NULL if not. */
static const char *value_of(const char *line, size_t n, const char *name, size_t *vlen)
{
    size_t nl = strlen(name);
    if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':') return NULL;
    const char *v = line + nl + 1;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    *vlen = (size_t)(end - v);
    return v;
}

void js_grpc_headers_line(js_grpc_headers *h, const char *line, size_t n)
{
    size_t vl;
    const char *v;
    if (n > 5 && strncmp(line, "HTTP/", 5) == 0) {
        const char *sp = memchr(line, ' ', n);
        if (sp && !h->http_status) h->http_status = strtol(sp + 1, NULL, 10);
    } else if ((v = value_of(line, n, "grpc-status", &vl)) != NULL) {
        char num[12];
        snprintf(num, sizeof num, "%.*s", (int)(vl < 11 ? vl : 11), v);
        char *e;
        long s = strtol(num, &e, 10);
        h->status = (vl && !*e && s >= 0 && s <= 16) ? (int)s : JS_GRPC_UNKNOWN;
    } else if ((v = value_of(line, n, "grpc-message", &vl)) != NULL) {
        js_grpc_percent_decode(v, vl, h->message, sizeof h->message);
    }
}
