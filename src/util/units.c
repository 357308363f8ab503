/* units.c - see units.h. */
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

long long js_parse_duration_ns(const char *s)
{
    if (!s || !isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    unsigned long long mul;
    if (*end == 0 || strcmp(end, "ns") == 0) mul = 1;
    else if (strcmp(end, "us") == 0) mul = 1000ULL;
    else if (strcmp(end, "ms") == 0) mul = 1000000ULL;
    else if (strcmp(end, "s") == 0) mul = 1000000000ULL;
    else if (strcmp(end, "m") == 0) mul = 60ULL * 1000000000ULL;
    else if (strcmp(end, "h") == 0) mul = 3600ULL * 1000000000ULL;
    else return -1;
    if (v > (unsigned long long)JS_UNITS_MAX_NS / mul) return -1; /* over 30 days: malformed */
    return (long long)(v * mul);
}

uint64_t js_parse_size(const char *s)
{
    if (!s || !isdigit((unsigned char)*s)) return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return 0;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10, end++;
    else if (*end == 'm' || *end == 'M') shift = 20, end++;
    else if (*end == 'g' || *end == 'G') shift = 30, end++;
    if (*end == 'b' || *end == 'B') end++;
    if (*end || v > (1ULL << 50) >> shift) return 0;
    return (uint64_t)v << shift;
}

int js_parse_ll(const char *s, long long *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}
