/* jfr_write_out.c - the JFR writer's output layer (see jfr_write_int.h): a BUF_CAP buffer flushed to the
 * file, varints, strings, 5-byte size placeholders patched in place, and per-chunk key sets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jfr_write_int.h"

/* Remember the first failure. */
void js_jfrw_set_error(js_jfr_writer *w, int e)
{
    if (!w->err_no) w->err_no = e ? e : EIO;
}

/* Format the writer's error into err; returns -1. */
int js_jfrw_fail(const js_jfr_writer *w, char *err, size_t errlen)
{
    char tmp[128];
    if (w->err_no == ENOENT) /* what a write never says: the file was found unlinked at a chunk's end */
        snprintf(err, errlen, "cannot write JFR '%s': the file was removed while being written (its directory "
                 "deleted?); the recording stops here", w->path);
    else snprintf(err, errlen, "cannot write JFR '%s': %s", w->path, strerror_r(w->err_no, tmp, sizeof tmp));
    return -1;
}

/* Write p[0..n) at fd's offset (off < 0) or at off, retrying EINTR and short writes; 0 or an errno. */
int js_jfrw_write_all(int fd, const uint8_t *p, size_t n, int64_t off)
{
    while (n) {
        ssize_t k = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
        if (off >= 0) off += k;
    }
    return 0;
}

/* File offset of the next byte appended. */
uint64_t js_jfrw_pos(const js_jfr_writer *w)
{
    return w->flushed + w->len;
}

/* Write the buffer to the file; 0, or -1 with the error recorded. */
int js_jfrw_flush(js_jfr_writer *w)
{
    if (w->err_no) return -1;
    int e = js_jfrw_write_all(w->fd, w->buf, w->len, -1);
    if (e) {
        js_jfrw_set_error(w, e);
        return -1;
    }
    w->flushed += w->len;
    w->len = 0;
    return 0;
}

/* Append n bytes (n <= BUF_CAP), flushing first if they do not fit; nothing once failed. */
void js_jfrw_put(js_jfr_writer *w, const void *p, size_t n)
{
    if (w->err_no || (w->len + n > BUF_CAP && js_jfrw_flush(w) != 0)) return;
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

void js_jfrw_put_large(js_jfr_writer *w, const void *p, size_t n)
{
    if (n <= BUF_CAP - w->len) {
        js_jfrw_put(w, p, n);
        return;
    }
    if (js_jfrw_flush(w) != 0) return;
    int e = js_jfrw_write_all(w->fd, p, n, -1); /* straight to the file: no copy through the buffer */
    if (e) js_jfrw_set_error(w, e);
    else w->flushed += n;
}

/* Append a varint. */
void js_jfrw_put_var(js_jfr_writer *w, uint64_t v)
{
    uint8_t b[LONG_MAX_BYTES];
    js_jfrw_put(w, b, js_jfr_varint(b, v));
}

/* Append a JFR int: its 32-bit two's complement as a varint (-1 takes 5 bytes, as HotSpot's). */
void js_jfrw_put_int(js_jfr_writer *w, int32_t v)
{
    js_jfrw_put_var(w, (uint32_t)v);
}

/* Append a raw byte (boolean, encoding). */
void js_jfrw_put_u8(js_jfr_writer *w, uint8_t v)
{
    js_jfrw_put(w, &v, 1);
}

/* Append a string: NULL as encoding 0, else encoding 3 cut to JS_JFR_STR_MAX bytes. */
void js_jfrw_put_str(js_jfr_writer *w, const char *s)
{
    js_jfrw_put_u8(w, s ? 3 : 0);
    if (!s) return;
    size_t n = js_jfr_utf8_cut(s, strlen(s), JS_JFR_STR_MAX);
    js_jfrw_put_var(w, n);
    js_jfrw_put(w, s, n);
}

/* Append a 5-byte varint placeholder; returns its file offset for patch5. */
uint64_t js_jfrw_reserve5(js_jfr_writer *w)
{
    uint8_t b[5];
    js_jfr_varint5(b, 0);
    js_jfrw_put(w, b, 5);
    return js_jfrw_pos(w) - 5;
}

/* Overwrite the 5-byte varint at file offset off with v: in the buffer, or in the file if flushed. */
void js_jfrw_patch5(js_jfr_writer *w, uint64_t off, uint64_t v)
{
    uint8_t b[5];
    js_jfr_varint5(b, v);
    if (w->err_no) return;
    if (off >= w->flushed) {
        memcpy(w->buf + (off - w->flushed), b, 5);
        return;
    }
    int e = js_jfrw_write_all(w->fd, b, 5, (int64_t)off);
    if (e) js_jfrw_set_error(w, e);
}

/* Start a record of the given type with a padded size; returns its offset for record_end. */
uint64_t js_jfrw_record_begin(js_jfr_writer *w, uint32_t type)
{
    uint64_t at = js_jfrw_reserve5(w);
    js_jfrw_put_var(w, type);
    return at;
}

/* Patch the size of the record started at `at` (the size counts itself). */
void js_jfrw_record_end(js_jfr_writer *w, uint64_t at)
{
    js_jfrw_patch5(w, at, js_jfrw_pos(w) - at);
}

/* Add key to a per-chunk set; 1 if new, 0 if present or out of memory (recorded). */
int js_jfrw_ref(js_jfr_writer *w, js_jfr_set *s, uint32_t key)
{
    int r = js_jfr_set_add(s, key);
    if (r < 0) js_jfrw_set_error(w, ENOMEM);
    return r > 0;
}
