/* units.h - numbers, durations and sizes as users and backends write them ("42", "10ms", "30m", "64k"). Pure. */
#ifndef JS_UNITS_H
#define JS_UNITS_H

#include <stdint.h>

#define JS_UNITS_MAX_NS (30LL * 24 * 3600 * 1000000000LL) /* longest duration accepted: 30 days */

/* Parse "10ms", "500us", "1s", "5m", "2h", "100000" (ns) into ns (at most 30 days); -1 if malformed. */
long long js_parse_duration_ns(const char *s);
/* Parse "512", "64k", "10m", "1g" (bytes; k/m/g are KiB/MiB/GiB) into bytes; 0 if malformed. */
uint64_t js_parse_size(const char *s);
/* Parse a whole decimal integer, optionally negative, into *out: 0, or -1 if empty, malformed or out of range. */
int js_parse_ll(const char *s, long long *out);

#endif
