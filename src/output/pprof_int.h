/* pprof_int.h - what the pprof writer and reader share: the string table of the writer, the gzip stream of the
 * writer, and the protobuf-c message names. */
#ifndef JS_PPROF_INT_H
#define JS_PPROF_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "proto/pprof/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* Interned strings, index 0 = "": every string is stored once, as valid UTF-8 (bad bytes become U+FFFD). */
typedef struct {
    char **s;
    size_t n, cap;
    uint32_t *slots; /* open addressing over the strings: index + 1, 0 = empty */
    size_t nslots;   /* a power of two, more than twice n */
} js_pprof_strtab;

/* An empty table holding "" as string 0; 0, or -1 without memory. */
int js_pprof_strtab_init(js_pprof_strtab *t);
/* Index of the n bytes at s (added if new), or -1 without memory. */
int64_t js_pprof_strtab_add(js_pprof_strtab *t, const char *s, size_t n);
void js_pprof_strtab_free(js_pprof_strtab *t);

/* A gzip stream into a FILE: bytes are buffered and deflated in large pieces. */
typedef struct {
    z_stream z;
    FILE *f;
    unsigned char *in, *out;
    size_t nin;
    uint64_t raw;      /* bytes put */
    int open, failed;
} js_pprof_gz;

/* Starts a gzip stream into f at level 1..9; 0, or -1 with err. */
int js_pprof_gz_open(js_pprof_gz *g, FILE *f, int level, char *err, size_t errlen);
/* Puts n bytes, count times over; 0, or -1 with err. */
int js_pprof_gz_put(js_pprof_gz *g, const void *data, size_t n, uint64_t count, char *err, size_t errlen);
/* Finishes the stream (the gzip trailer written, f flushed); 0, or -1 with err. */
int js_pprof_gz_close(js_pprof_gz *g, char *err, size_t errlen);
/* Releases the stream whatever state it is in. */
void js_pprof_gz_free(js_pprof_gz *g);

#endif
