/* pprof_util.c - see pprof_int.h: the writer's string table and gzip stream. */
#include "pprof_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GZ_BUF (256u << 10)

/* FNV-1a of n bytes. */
static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 31);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if the byte there starts none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80) return 1;
    size_t len = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (!len || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (s[0] == 0xe0 && s[1] < 0xa0) return 0; /* overlong */
    if (s[0] == 0xed && s[1] >= 0xa0) return 0; /* a surrogate (modified UTF-8 writes supplementary chars so) */
    if (s[0] == 0xf0 && s[1] < 0x90) return 0;
    if (s[0] == 0xf4 && s[1] >= 0x90) return 0;
    return len;
}

/* A NUL-terminated copy of n bytes with every byte that starts no valid UTF-8 sequence replaced by U+FFFD. */
static char *utf8_copy(const char *s, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len((const unsigned char *)s + i, n - i);
        bad += l == 0;
        i += l ? l : 1;
    }
    char *c = malloc(n + 2 * bad + 1), *o = c;
    if (!c) return NULL;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len((const unsigned char *)s + i, n - i);
        if (l) memcpy(o, s + i, l), o += l, i += l;
        else memcpy(o, "\xef\xbf\xbd", 3), o += 3, i++;
    }
    *o = 0;
    return c;
}

/* Rebuilds the slots with cap entries (a power of two); 0 or -1. */
static int strtab_rehash(js_pprof_strtab *t, size_t cap)
{
    uint32_t *sl = calloc(cap, sizeof *sl);
    if (!sl) return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t h = (size_t)str_hash(t->s[i], strlen(t->s[i])) & (cap - 1);
        while (sl[h]) h = (h + 1) & (cap - 1);
        sl[h] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = sl;
    t->nslots = cap;
    return 0;
}

int js_pprof_strtab_init(js_pprof_strtab *t)
{
    memset(t, 0, sizeof *t);
    return js_pprof_strtab_add(t, "", 0) == 0 ? 0 : -1;
}

int64_t js_pprof_strtab_add(js_pprof_strtab *t, const char *s, size_t n)
{
    char *c = utf8_copy(s, n);
    if (!c) return -1;
    size_t len = strlen(c); /* a NUL inside s ends the string */
    if ((t->n + 1) * 2 >= t->nslots && strtab_rehash(t, t->nslots ? t->nslots * 2 : 256) != 0) {
        free(c);
        return -1;
    }
    size_t h = (size_t)str_hash(c, len) & (t->nslots - 1);
    for (; t->slots[h]; h = (h + 1) & (t->nslots - 1))
        if (strcmp(t->s[t->slots[h] - 1], c) == 0) {
            free(c);
            return t->slots[h] - 1;
        }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        char **ns = realloc(t->s, cap * sizeof *ns);
        if (!ns || t->n >= UINT32_MAX - 1) {
            if (ns) t->s = ns;
            free(c);
            return -1;
        }
        t->s = ns;
        t->cap = cap;
    }
    t->s[t->n] = c;
    t->slots[h] = (uint32_t)t->n + 1;
    return (int64_t)t->n++;
}

void js_pprof_strtab_free(js_pprof_strtab *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->s[i]);
    free(t->s);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

int js_pprof_gz_open(js_pprof_gz *g, FILE *f, int level, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->f = f;
    g->in = malloc(GZ_BUF);
    g->out = malloc(GZ_BUF);
    /* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
    if (!g->in || !g->out || deflateInit2(&g->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        snprintf(err, errlen, "out of memory starting gzip");
        js_pprof_gz_free(g);
        return -1;
    }
    g->open = 1;
    return 0;
}

/* Deflates the buffered input with flush mode and writes what comes out; 0, or -1 with err. */
static int gz_deflate(js_pprof_gz *g, int mode, char *err, size_t errlen)
{
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)g->nin;
    int rc;
    do {
        g->z.next_out = g->out;
        g->z.avail_out = GZ_BUF;
        rc = deflate(&g->z, mode);
        if (rc == Z_STREAM_ERROR) {
            g->failed = 1;
            snprintf(err, errlen, "gzip failed");
            return -1;
        }
        size_t have = GZ_BUF - g->z.avail_out;
        if (have && fwrite(g->out, 1, have, g->f) != have) {
            g->failed = 1;
            snprintf(err, errlen, "%s", errno ? strerror(errno) : "write error");
            return -1;
        }
    } while (g->z.avail_out == 0 || (mode == Z_FINISH && rc != Z_STREAM_END));
    g->nin = 0;
    return 0;
}

int js_pprof_gz_put(js_pprof_gz *g, const void *data, size_t n, uint64_t count, char *err, size_t errlen)
{
    if (g->failed) return -1;
    for (uint64_t k = 0; k < count; k++) {
        const unsigned char *p = data;
        for (size_t left = n; left;) {
            size_t room = GZ_BUF - g->nin, take = left < room ? left : room;
            memcpy(g->in + g->nin, p, take);
            g->nin += take;
            p += take;
            left -= take;
            if (g->nin == GZ_BUF && gz_deflate(g, Z_NO_FLUSH, err, errlen) != 0) return -1;
        }
        g->raw += n;
    }
    return 0;
}

int js_pprof_gz_close(js_pprof_gz *g, char *err, size_t errlen)
{
    if (g->failed || gz_deflate(g, Z_FINISH, err, errlen) != 0) return -1;
    if (fflush(g->f) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    return 0;
}

void js_pprof_gz_free(js_pprof_gz *g)
{
    if (g->open) deflateEnd(&g->z);
    free(g->in);
    free(g->out);
    memset(g, 0, sizeof *g);
}
