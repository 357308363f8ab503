/* jfr_meta.h - JFR wire encodings and the metadata the JFR writer declares (internal to jfr_write.c).
 *
 * Varints are JFR's LEB128 (up to 9 bytes, the 9th carrying 8 bits); sizes that are patched later
 * use a padded 5-byte form. Strings are written as encoding 3 (UTF-8), cut to JS_JFR_STR_MAX bytes
 * at a character boundary. js_jfr_build_metadata produces the part of the metadata event after its
 * startTicks/duration: metadataId, string table and element tree, declaring the types below.
 */
#ifndef JS_JFR_META_H
#define JS_JFR_META_H

#include <stddef.h>
#include <stdint.h>

#define JS_JFR_STR_MAX 8191    /* longest string written, in bytes */
#define JS_JFR_HEADER_SIZE 68  /* chunk header; the metadata event follows it */

/* Type ids declared in our metadata (any ids work when declared; these are ours). */
enum {
    JS_JFR_T_BOOLEAN = 20,
    JS_JFR_T_INT = 21,
    JS_JFR_T_LONG = 22,
    JS_JFR_T_STRING = 23,
    JS_JFR_T_FLOAT = 24,
    JS_JFR_T_BYTE = 25,
    JS_JFR_T_THREAD = 30,
    JS_JFR_T_CLASS = 31,
    JS_JFR_T_CLASS_LOADER = 32,
    JS_JFR_T_FRAME_TYPE = 33,
    JS_JFR_T_THREAD_STATE = 34,
    JS_JFR_T_STACK_TRACE = 35,
    JS_JFR_T_STACK_FRAME = 36,
    JS_JFR_T_METHOD = 37,
    JS_JFR_T_PACKAGE = 38,
    JS_JFR_T_SYMBOL = 39,
    JS_JFR_T_EXECUTION_SAMPLE = 100,
    JS_JFR_T_ACTIVE_RECORDING = 101,
    JS_JFR_T_ACTIVE_SETTING = 102,
    JS_JFR_T_ALLOC_IN_TLAB = 103,
    JS_JFR_T_MONITOR_ENTER = 104,
    JS_JFR_T_THREAD_PARK = 105,
    JS_JFR_T_WALL_SAMPLE = 106,
    JS_JFR_T_PROCESS_SAMPLE = 107,
    JS_JFR_T_WINDOW = 108,
    JS_JFR_T_ALLOC_OUTSIDE_TLAB = 109,
    JS_JFR_T_LABEL = 200,
    JS_JFR_T_TIMESTAMP = 201,
    JS_JFR_T_TIMESPAN = 202,
    JS_JFR_T_DATA_AMOUNT = 203,
};

/* A growable byte string; oom is set (and appends stop) when memory runs out. */
typedef struct {
    uint8_t *p;
    size_t len, cap;
    int oom;
} js_jfr_bytes;

/* Encode v as a JFR varint into out (9 bytes of room); returns the byte count. */
size_t js_jfr_varint(uint8_t *out, uint64_t v);
/* Encode v (< 2^35) as a varint padded to exactly 5 bytes. */
void js_jfr_varint5(uint8_t *out, uint64_t v);
/* Length of s[0..len) cut to at most cap bytes without splitting a UTF-8 sequence. */
size_t js_jfr_utf8_cut(const char *s, size_t len, size_t cap);
/* Append n bytes / a varint / an encoding-3 string (NULL = encoding 0) to b. */
void js_jfr_bytes_put(js_jfr_bytes *b, const void *p, size_t n);
void js_jfr_bytes_var(js_jfr_bytes *b, uint64_t v);
void js_jfr_bytes_str(js_jfr_bytes *b, const char *s);
void js_jfr_bytes_free(js_jfr_bytes *b);
/* Fill out (empty on entry) with metadataId, string table and root element. 0, or -1 out of memory. */
int js_jfr_build_metadata(js_jfr_bytes *out, uint32_t type_base);
/* Fill h[0..68) with a chunk header: magic, version 2.1, the given size, checkpoint offset,
 * metadata offset 68, start (wall ns), duration, start ticks, 1e9 ticks/s; state byte 0 (finished);
 * flags 1 (compressed integers) | 2 if final. */
void js_jfr_header(uint8_t *h, uint64_t size, uint64_t cp, uint64_t start_nanos, uint64_t duration,
                   uint64_t start_ticks, int final);
/* Whether d is shaped "(params)ret" with well-formed params, as the JDK's `jfr print` needs (it
 * cuts out the parameters and decodes each; an empty or odd descriptor makes it throw). */
int js_jfr_descriptor_ok(const char *d);
/* Name of a ThreadState key ("STATE_RUNNABLE"...; "STATE_UNKNOWN" for keys HotSpot does not use). */
const char *js_jfr_state_name(uint32_t key);
/* Description of a FrameType key 0..6 ("Interpreted", "JIT compiled"...). */
const char *js_jfr_frame_type_name(uint8_t key);

#endif
