/* jfr_meta.c - see jfr_meta.h. The metadata is described by the tables below (field order = wire
 * order, as in the JDK's and async-profiler 3.0's layouts) and encoded once per writer. */
#include "jfr/jfr_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F_CP 1    /* field value is a constant-pool key */
#define F_ARRAY 2 /* field is an array (dimension 1) */
#define MAX_FIELDS 21 /* profiler.ProcessSample's */
#define EVENT "jdk.jfr.Event"
#define ANNOTATION "java.lang.annotation.Annotation"

typedef struct {
    const char *name;
    int type;
    int flags;
    const char *label;
    int unit_ann; /* 0, or the annotation type carrying `unit` */
    const char *unit;
} meta_field;

typedef struct {
    const char *name;
    int id;
    const char *super_type;
    int simple;
    const char *label;
    meta_field f[MAX_FIELDS];
} meta_class;

#define START_TIME {"startTime", JS_JFR_T_LONG, 0, "Start Time", JS_JFR_T_TIMESTAMP, "TICKS"}
#define DURATION {"duration", JS_JFR_T_LONG, 0, "Duration", JS_JFR_T_TIMESPAN, "TICKS"}
#define VALUE_FIELD {{"value", JS_JFR_T_STRING, 0, NULL, 0, NULL}}

static const meta_class classes[] = {
    {"boolean", JS_JFR_T_BOOLEAN, NULL, 0, NULL, {{0}}},
    {"int", JS_JFR_T_INT, NULL, 0, NULL, {{0}}},
    {"long", JS_JFR_T_LONG, NULL, 0, NULL, {{0}}},
    {"java.lang.String", JS_JFR_T_STRING, NULL, 0, NULL, {{0}}},
    {"float", JS_JFR_T_FLOAT, NULL, 0, NULL, {{0}}},
    {"byte", JS_JFR_T_BYTE, NULL, 0, NULL, {{0}}},
    {"jdk.jfr.Label", JS_JFR_T_LABEL, ANNOTATION, 0, NULL, VALUE_FIELD},
    {"jdk.jfr.Timestamp", JS_JFR_T_TIMESTAMP, ANNOTATION, 0, "Timestamp", VALUE_FIELD},
    {"jdk.jfr.Timespan", JS_JFR_T_TIMESPAN, ANNOTATION, 0, "Timespan", VALUE_FIELD},
    {"jdk.jfr.DataAmount", JS_JFR_T_DATA_AMOUNT, ANNOTATION, 0, "Data Amount", VALUE_FIELD},
    {"java.lang.Thread", JS_JFR_T_THREAD, NULL, 0, "Thread",
     {{"osName", JS_JFR_T_STRING, 0, "OS Thread Name", 0, NULL},
      {"osThreadId", JS_JFR_T_LONG, 0, "OS Thread Id", 0, NULL},
      {"javaName", JS_JFR_T_STRING, 0, "Java Thread Name", 0, NULL},
      {"javaThreadId", JS_JFR_T_LONG, 0, "Java Thread Id", 0, NULL}}},
    {"java.lang.Class", JS_JFR_T_CLASS, NULL, 0, "Java Class",
     {{"classLoader", JS_JFR_T_CLASS_LOADER, F_CP, "Class Loader", 0, NULL},
      {"name", JS_JFR_T_SYMBOL, F_CP, "Name", 0, NULL},
      {"package", JS_JFR_T_PACKAGE, F_CP, "Package", 0, NULL},
      {"modifiers", JS_JFR_T_INT, 0, "Access Modifiers", 0, NULL},
      {"hidden", JS_JFR_T_BOOLEAN, 0, "Hidden", 0, NULL}}},
    {"jdk.types.ClassLoader", JS_JFR_T_CLASS_LOADER, NULL, 0, "Java Class Loader",
     {{"type", JS_JFR_T_CLASS, F_CP, "Type", 0, NULL}, {"name", JS_JFR_T_SYMBOL, F_CP, "Name", 0, NULL}}},
    {"jdk.types.FrameType", JS_JFR_T_FRAME_TYPE, NULL, 1, "Frame type",
     {{"description", JS_JFR_T_STRING, 0, "Description", 0, NULL}}},
    {"jdk.types.ThreadState", JS_JFR_T_THREAD_STATE, NULL, 1, "Java Thread State",
     {{"name", JS_JFR_T_STRING, 0, "Name", 0, NULL}}},
    {"jdk.types.StackTrace", JS_JFR_T_STACK_TRACE, NULL, 0, "Stacktrace",
     {{"truncated", JS_JFR_T_BOOLEAN, 0, "Truncated", 0, NULL},
      {"frames", JS_JFR_T_STACK_FRAME, F_ARRAY, "Stack Frames", 0, NULL}}},
    {"jdk.types.StackFrame", JS_JFR_T_STACK_FRAME, NULL, 0, NULL,
     {{"method", JS_JFR_T_METHOD, F_CP, "Java Method", 0, NULL},
      {"lineNumber", JS_JFR_T_INT, 0, "Line Number", 0, NULL},
      {"bytecodeIndex", JS_JFR_T_INT, 0, "Bytecode Index", 0, NULL},
      {"type", JS_JFR_T_FRAME_TYPE, F_CP, "Frame Type", 0, NULL}}},
    {"jdk.types.Method", JS_JFR_T_METHOD, NULL, 0, "Java Method",
     {{"type", JS_JFR_T_CLASS, F_CP, "Type", 0, NULL},
      {"name", JS_JFR_T_SYMBOL, F_CP, "Name", 0, NULL},
      {"descriptor", JS_JFR_T_SYMBOL, F_CP, "Descriptor", 0, NULL},
      {"modifiers", JS_JFR_T_INT, 0, "Access Modifiers", 0, NULL},
      {"hidden", JS_JFR_T_BOOLEAN, 0, "Hidden", 0, NULL}}},
    {"jdk.types.Package", JS_JFR_T_PACKAGE, NULL, 0, "Package", {{"name", JS_JFR_T_SYMBOL, F_CP, "Name", 0, NULL}}},
    {"jdk.types.Symbol", JS_JFR_T_SYMBOL, NULL, 1, "Symbol", {{"string", JS_JFR_T_STRING, 0, "String", 0, NULL}}},
    {"jdk.ExecutionSample", JS_JFR_T_EXECUTION_SAMPLE, EVENT, 0, "Method Profiling Sample",
     {START_TIME,
      {"sampledThread", JS_JFR_T_THREAD, F_CP, "Thread", 0, NULL},
      {"stackTrace", JS_JFR_T_STACK_TRACE, F_CP, "Stack Trace", 0, NULL},
      {"state", JS_JFR_T_THREAD_STATE, F_CP, "Thread State", 0, NULL}}},
    {"jdk.ObjectAllocationInNewTLAB", JS_JFR_T_ALLOC_IN_TLAB, EVENT, 0, "Allocation in new TLAB",
     {START_TIME,
      {"eventThread", JS_JFR_T_THREAD, F_CP, "Event Thread", 0, NULL},
      {"stackTrace", JS_JFR_T_STACK_TRACE, F_CP, "Stack Trace", 0, NULL},
      {"objectClass", JS_JFR_T_CLASS, F_CP, "Object Class", 0, NULL},
      {"allocationSize", JS_JFR_T_LONG, 0, "Allocation Size", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"tlabSize", JS_JFR_T_LONG, 0, "TLAB Size", JS_JFR_T_DATA_AMOUNT, "BYTES"}}},
    {"jdk.ObjectAllocationOutsideTLAB", JS_JFR_T_ALLOC_OUTSIDE_TLAB, EVENT, 0, "Allocation outside TLAB",
     {START_TIME,
      {"eventThread", JS_JFR_T_THREAD, F_CP, "Event Thread", 0, NULL},
      {"stackTrace", JS_JFR_T_STACK_TRACE, F_CP, "Stack Trace", 0, NULL},
      {"objectClass", JS_JFR_T_CLASS, F_CP, "Object Class", 0, NULL},
      {"allocationSize", JS_JFR_T_LONG, 0, "Allocation Size", JS_JFR_T_DATA_AMOUNT, "BYTES"}}},
    {"jdk.JavaMonitorEnter", JS_JFR_T_MONITOR_ENTER, EVENT, 0, "Java Monitor Blocked",
     {START_TIME, DURATION,
      {"eventThread", JS_JFR_T_THREAD, F_CP, "Event Thread", 0, NULL},
      {"stackTrace", JS_JFR_T_STACK_TRACE, F_CP, "Stack Trace", 0, NULL},
      {"monitorClass", JS_JFR_T_CLASS, F_CP, "Monitor Class", 0, NULL},
      {"previousOwner", JS_JFR_T_THREAD, F_CP, "Previous Monitor Owner", 0, NULL},
      {"address", JS_JFR_T_LONG, 0, "Monitor Address", 0, NULL}}},
    {"jdk.ThreadPark", JS_JFR_T_THREAD_PARK, EVENT, 0, "Java Thread Park",
     {START_TIME, DURATION,
      {"eventThread", JS_JFR_T_THREAD, F_CP, "Event Thread", 0, NULL},
      {"stackTrace", JS_JFR_T_STACK_TRACE, F_CP, "Stack Trace", 0, NULL},
      {"parkedClass", JS_JFR_T_CLASS, F_CP, "Class Parked On", 0, NULL},
      {"timeout", JS_JFR_T_LONG, 0, "Park Timeout", JS_JFR_T_TIMESPAN, "NANOSECONDS"},
      {"until", JS_JFR_T_LONG, 0, "Park Until", JS_JFR_T_TIMESTAMP, "MILLISECONDS_SINCE_EPOCH"},
      {"address", JS_JFR_T_LONG, 0, "Address of Object Parked", 0, NULL}}},
    {"profiler.WallClockSample", JS_JFR_T_WALL_SAMPLE, EVENT, 0, "Wall Clock Sample",
     {START_TIME,
      {"sampledThread", JS_JFR_T_THREAD, F_CP, "Thread", 0, NULL},
      {"stackTrace", JS_JFR_T_STACK_TRACE, F_CP, "Stack Trace", 0, NULL},
      {"state", JS_JFR_T_THREAD_STATE, F_CP, "Thread State", 0, NULL},
      {"samples", JS_JFR_T_INT, 0, "Samples", 0, NULL},
      {"timeSpan", JS_JFR_T_LONG, 0, "Time Span", JS_JFR_T_TIMESPAN, "NANOSECONDS"}}},
    {"profiler.Window", JS_JFR_T_WINDOW, EVENT, 0, "Profiling Window", /* async-profiler's: begin=/end=, ttsp */
     {START_TIME, DURATION, {"eventThread", JS_JFR_T_THREAD, F_CP, "Event Thread", 0, NULL}}},
    {"profiler.ProcessSample", JS_JFR_T_PROCESS_SAMPLE, EVENT, 0, "Process Stats Sample", /* async-profiler's */
     {START_TIME,
      {"pid", JS_JFR_T_INT, 0, "Process ID", 0, NULL},
      {"ppid", JS_JFR_T_INT, 0, "Parent Process ID", 0, NULL},
      {"name", JS_JFR_T_STRING, 0, "Process Name", 0, NULL},
      {"cmdLine", JS_JFR_T_STRING, 0, "Command Line", 0, NULL},
      {"uid", JS_JFR_T_INT, 0, "User ID", 0, NULL},
      {"state", JS_JFR_T_BYTE, 0, "Process State", 0, NULL},
      {"processStartTime", JS_JFR_T_LONG, 0, "Process Start Time", JS_JFR_T_TIMESTAMP, "MILLISECONDS_SINCE_EPOCH"},
      {"cpuUser", JS_JFR_T_FLOAT, 0, "User CPU Time", 0, NULL},
      {"cpuSystem", JS_JFR_T_FLOAT, 0, "System CPU Time", 0, NULL},
      {"cpuPercent", JS_JFR_T_FLOAT, 0, "CPU Percentage", 0, NULL},
      {"threads", JS_JFR_T_INT, 0, "Thread Count", 0, NULL},
      {"vmSize", JS_JFR_T_LONG, 0, "Virtual Memory Size", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"vmRss", JS_JFR_T_LONG, 0, "Resident Memory Size", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"rssAnon", JS_JFR_T_LONG, 0, "Resident anonymous memory", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"rssFiles", JS_JFR_T_LONG, 0, "Resident file mappings", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"rssShmem", JS_JFR_T_LONG, 0, "Resident shared Memory", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"minorFaults", JS_JFR_T_LONG, 0, "Minor Page Faults", 0, NULL},
      {"majorFaults", JS_JFR_T_LONG, 0, "Major Page Faults", 0, NULL},
      {"ioRead", JS_JFR_T_LONG, 0, "I/O Read Bytes", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"ioWrite", JS_JFR_T_LONG, 0, "I/O Write Bytes", JS_JFR_T_DATA_AMOUNT, "BYTES"}}},
    {"jdk.ActiveRecording", JS_JFR_T_ACTIVE_RECORDING, EVENT, 0, "Flight Recording",
     {START_TIME,
      {"id", JS_JFR_T_LONG, 0, "Id", 0, NULL},
      {"name", JS_JFR_T_STRING, 0, "Name", 0, NULL},
      {"destination", JS_JFR_T_STRING, 0, "Destination", 0, NULL},
      {"maxAge", JS_JFR_T_LONG, 0, "Max Age", JS_JFR_T_TIMESPAN, "MILLISECONDS"},
      {"maxSize", JS_JFR_T_LONG, 0, "Max Size", JS_JFR_T_DATA_AMOUNT, "BYTES"},
      {"recordingStart", JS_JFR_T_LONG, 0, "Start Time", JS_JFR_T_TIMESTAMP, "MILLISECONDS_SINCE_EPOCH"},
      {"recordingDuration", JS_JFR_T_LONG, 0, "Recording Duration", JS_JFR_T_TIMESPAN, "MILLISECONDS"}}},
    {"jdk.ActiveSetting", JS_JFR_T_ACTIVE_SETTING, EVENT, 0, "Recording Setting",
     {START_TIME,
      {"id", JS_JFR_T_LONG, 0, "Event Id", 0, NULL},
      {"name", JS_JFR_T_STRING, 0, "Setting Name", 0, NULL},
      {"value", JS_JFR_T_STRING, 0, "Setting Value", 0, NULL}}},
};

#define NCLASSES (sizeof classes / sizeof classes[0])
#define MAX_STRINGS 512
#define ARENA 16384

/* Metadata under construction: the interned string table and the encoded element tree. */
typedef struct {
    char arena[ARENA];
    size_t alen;
    size_t off[MAX_STRINGS];
    int n;
    int overflow;
    uint32_t base; /* added to every type id (js_jfr_build_metadata) */
    js_jfr_bytes tree;
} builder;

size_t js_jfr_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (n < 8 && v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

void js_jfr_varint5(uint8_t *out, uint64_t v)
{
    for (int i = 0; i < 4; i++) out[i] = (uint8_t)(((v >> (7 * i)) & 0x7f) | 0x80);
    out[4] = (uint8_t)((v >> 28) & 0x7f);
}

size_t js_jfr_utf8_cut(const char *s, size_t len, size_t cap)
{
    if (len <= cap) return len;
    size_t n = cap;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* s[n] continues a sequence: cut before it */
    return n;
}

void js_jfr_bytes_put(js_jfr_bytes *b, const void *p, size_t n)
{
    if (b->oom) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void js_jfr_bytes_var(js_jfr_bytes *b, uint64_t v)
{
    uint8_t tmp[9];
    js_jfr_bytes_put(b, tmp, js_jfr_varint(tmp, v));
}

void js_jfr_bytes_str(js_jfr_bytes *b, const char *s)
{
    uint8_t enc = s ? 3 : 0;
    js_jfr_bytes_put(b, &enc, 1);
    if (!s) return;
    size_t n = js_jfr_utf8_cut(s, strlen(s), JS_JFR_STR_MAX);
    js_jfr_bytes_var(b, n);
    js_jfr_bytes_put(b, s, n);
}

void js_jfr_bytes_free(js_jfr_bytes *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Index of s in the string table, adding it if new. */
static size_t intern(builder *b, const char *s)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->arena + b->off[i], s) == 0) return (size_t)i;
    size_t n = strlen(s) + 1;
    if (b->n == MAX_STRINGS || b->alen + n > ARENA) {
        b->overflow = 1;
        return 0;
    }
    memcpy(b->arena + b->alen, s, n);
    b->off[b->n] = b->alen;
    b->alen += n;
    return (size_t)b->n++;
}

/* Start an element: its name and attribute count (attributes follow, then the child count). */
static void element(builder *b, const char *name, int nattrs)
{
    js_jfr_bytes_var(&b->tree, intern(b, name));
    js_jfr_bytes_var(&b->tree, (uint64_t)nattrs);
}

/* One key="value" attribute. */
static void attr(builder *b, const char *key, const char *value)
{
    js_jfr_bytes_var(&b->tree, intern(b, key));
    js_jfr_bytes_var(&b->tree, intern(b, value));
}

/* One key="<decimal n>" attribute. */
static void attr_int(builder *b, const char *key, int n)
{
    char num[16];
    snprintf(num, sizeof num, "%d", n);
    attr(b, key, num);
}

/* A childless annotation element of type ann with a value. */
static void annotation(builder *b, int ann, const char *value)
{
    element(b, "annotation", 2);
    attr_int(b, "class", ann + (int)b->base);
    attr(b, "value", value);
    js_jfr_bytes_var(&b->tree, 0);
}

/* A field element with its Label and unit annotations. */
static void field(builder *b, const meta_field *f)
{
    element(b, "field", 2 + !!(f->flags & F_CP) + !!(f->flags & F_ARRAY));
    attr(b, "name", f->name);
    attr_int(b, "class", f->type + (int)b->base);
    if (f->flags & F_CP) attr(b, "constantPool", "true");
    if (f->flags & F_ARRAY) attr(b, "dimension", "1");
    js_jfr_bytes_var(&b->tree, (uint64_t)(!!f->label + !!f->unit_ann));
    if (f->label) annotation(b, JS_JFR_T_LABEL, f->label);
    if (f->unit_ann) annotation(b, f->unit_ann, f->unit);
}

/* A class element with its Label annotation and fields. */
static void class_element(builder *b, const meta_class *c)
{
    int nfields = 0;
    while (nfields < MAX_FIELDS && c->f[nfields].name) nfields++;
    element(b, "class", 2 + !!c->super_type + !!c->simple);
    attr(b, "name", c->name);
    attr_int(b, "id", c->id + (int)b->base);
    if (c->super_type) attr(b, "superType", c->super_type);
    if (c->simple) attr(b, "simpleType", "true");
    js_jfr_bytes_var(&b->tree, (uint64_t)(!!c->label + nfields));
    if (c->label) annotation(b, JS_JFR_T_LABEL, c->label);
    for (int i = 0; i < nfields; i++) field(b, &c->f[i]);
}

/* The root element: metadata (all classes) and region (UTC). */
static void root_element(builder *b)
{
    element(b, "root", 0);
    js_jfr_bytes_var(&b->tree, 2);
    element(b, "metadata", 0);
    js_jfr_bytes_var(&b->tree, NCLASSES);
    for (size_t i = 0; i < NCLASSES; i++) class_element(b, &classes[i]);
    element(b, "region", 3);
    attr(b, "locale", "en_US");
    attr(b, "gmtOffset", "0");
    attr(b, "dst", "0");
    js_jfr_bytes_var(&b->tree, 0);
}

/* FNV-1a over a byte range, continuing from h. */
static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

int js_jfr_build_metadata(js_jfr_bytes *out, uint32_t type_base)
{
    builder *b = calloc(1, sizeof *b);
    if (!b) return -1;
    b->base = type_base;
    root_element(b);
    js_jfr_bytes strings = {0};
    for (int i = 0; i < b->n; i++) js_jfr_bytes_str(&strings, b->arena + b->off[i]);
    uint64_t h = fnv(fnv(0xcbf29ce484222325ULL, strings.p, strings.len), b->tree.p, b->tree.len);
    /* Changes with the metadata; never a small HotSpot-style id nor async-profiler's 0x7fffffff. */
    js_jfr_bytes_var(out, 0x40000000u | (h & 0x3ffffffe));
    js_jfr_bytes_var(out, (uint64_t)b->n);
    js_jfr_bytes_put(out, strings.p, strings.len);
    js_jfr_bytes_put(out, b->tree.p, b->tree.len);
    int rc = b->overflow || b->tree.oom || strings.oom || out->oom ? -1 : 0;
    js_jfr_bytes_free(&strings);
    js_jfr_bytes_free(&b->tree);
    free(b);
    return rc;
}

/* Store v big-endian in p[0..8). */
static void be64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (56 - 8 * i));
}

void js_jfr_header(uint8_t *h, uint64_t size, uint64_t cp, uint64_t start_nanos, uint64_t duration,
                   uint64_t start_ticks, int final)
{
    memset(h, 0, JS_JFR_HEADER_SIZE);
    memcpy(h, "FLR", 4);
    h[5] = 2; /* major */
    h[7] = 1; /* minor */
    be64(h + 8, size);
    be64(h + 16, cp);
    be64(h + 24, JS_JFR_HEADER_SIZE);
    be64(h + 32, start_nanos);
    be64(h + 40, duration);
    be64(h + 48, start_ticks);
    be64(h + 56, 1000000000ULL);
    h[67] = final ? 3 : 1;
}

int js_jfr_descriptor_ok(const char *d)
{
    const char *end = strrchr(d, ')');
    if (d[0] != '(' || !end) return 0;
    for (const char *p = d + 1; p < end; p++) {
        while (p < end && *p == '[') p++;
        if (p == end || (*p == 'L' && !(p = memchr(p, ';', (size_t)(end - p))))) return 0;
    }
    return 1;
}

const char *js_jfr_state_name(uint32_t key)
{
    switch (key) {
    case 0: return "STATE_DEFAULT"; /* a CPU sample (see JS_JFR_STATE_DEFAULT) */
    case 2: return "STATE_TERMINATED";
    case 5: return "STATE_RUNNABLE";
    case 225: return "STATE_SLEEPING";
    case 401: return "STATE_IN_OBJECT_WAIT";
    case 417: return "STATE_IN_OBJECT_WAIT_TIMED";
    case 657: return "STATE_PARKED";
    case 673: return "STATE_PARKED_TIMED";
    case 1025: return "STATE_BLOCKED_ON_MONITOR_ENTER";
    case 4194309: return "STATE_IN_NATIVE";
    default: return "STATE_UNKNOWN";
    }
}

const char *js_jfr_frame_type_name(uint8_t key)
{
    static const char *const names[] = {"Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel",
                                        "C1 compiled"};
    return key < sizeof names / sizeof names[0] ? names[key] : "Unknown";
}
