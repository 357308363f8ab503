/* classes.c - see classes.h. An open-addressing table by name hash, and an array by id. */
#include "core/classes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmix.h"

#define NAME_CAP 1024

/* Process-wide: class ids outlive sessions (a JFR writer and its stores name them across rotations). */
static struct {
    pthread_mutex_t lock;
    char **names;   /* names[id], id 1..count */
    uint32_t count, cap;
    uint32_t *slots; /* hash slot -> id, 0 empty; JS_CLASSES_MAX * 2 slots */
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return js_mix64(h);
}

/* Internal form of a signature: "Lpkg/C;" -> "pkg/C", arrays and primitives as given. */
static void internal_of(const char *sig, char *out, size_t len)
{
    size_t n = strlen(sig);
    if (sig[0] == 'L' && n > 1 && sig[n - 1] == ';') snprintf(out, len, "%.*s", (int)(n - 2), sig + 1);
    else snprintf(out, len, "%s", sig);
}

uint32_t js_classes_id(const char *signature)
{
    char name[NAME_CAP];
    internal_of(signature, name, sizeof name);
    uint32_t nslots = JS_CLASSES_MAX * 2, id = 0;
    pthread_mutex_lock(&C.lock);
    if (!C.slots) C.slots = calloc(nslots, sizeof *C.slots);
    if (!C.slots) goto out;
    for (uint32_t i = (uint32_t)hash_str(name) & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
        uint32_t k = C.slots[i];
        if (k && strcmp(C.names[k], name) == 0) {
            id = k;
            break;
        }
        if (k) continue;
        if (C.count + 1 >= JS_CLASSES_MAX) break; /* full: the table stays at most half used */
        if (C.count + 1 >= C.cap) {
            uint32_t cap = C.cap ? C.cap * 2 : 256;
            char **g = realloc(C.names, cap * sizeof *g);
            if (!g) break;
            C.names = g;
            C.cap = cap;
        }
        char *copy = strdup(name);
        if (!copy) break;
        id = ++C.count;
        C.names[id] = copy;
        C.slots[i] = id;
        break;
    }
out:
    pthread_mutex_unlock(&C.lock);
    return id;
}

int js_classes_internal(uint32_t id, char *buf, size_t len)
{
    pthread_mutex_lock(&C.lock);
    int ok = id >= 1 && id <= C.count;
    if (ok) snprintf(buf, len, "%s", C.names[id]);
    pthread_mutex_unlock(&C.lock);
    return ok ? 0 : -1;
}

int js_classes_java(uint32_t id, char *buf, size_t len)
{
    static const char codes[] = "BCDFIJSZ";
    static const char *const prims[] = {"byte", "char", "double", "float", "int", "long", "short", "boolean"};
    char in[NAME_CAP];
    if (js_classes_internal(id, in, sizeof in) != 0 || len == 0) return -1;
    size_t dims = 0, o = 0;
    while (in[dims] == '[') dims++;
    const char *p = in + dims, *hit = dims && p[0] && !p[1] ? strchr(codes, p[0]) : NULL;
    if (hit) {
        o = (size_t)snprintf(buf, len, "%s", prims[hit - codes]);
    } else {
        if (dims && *p == 'L') p++;
        for (; *p && !(dims && *p == ';') && !((p[0] == '/' || p[0] == '+') && p[1] == '0' && p[2] == 'x') &&
               o + 1 < len;
             p++)
            buf[o++] = *p == '/' ? '.' : *p;
        buf[o] = 0;
    }
    for (size_t i = 0; i < dims && o + 3 <= len; i++) buf[o++] = '[', buf[o++] = ']', buf[o] = 0;
    return 0;
}
