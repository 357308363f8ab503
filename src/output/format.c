/* format.c - see format.h: the format names and the file extensions that imply them. */
#include "output/format.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

static const struct {
    js_out_format f;
    const char *name;
} format_names[] = {
    {JS_OUT_NONE, "none"}, {JS_OUT_COLLAPSED, "collapsed"}, {JS_OUT_FLAT, "flat"}, {JS_OUT_TREE, "tree"},
    {JS_OUT_HTML, "html"}, {JS_OUT_JFR, "jfr"},             {JS_OUT_JSON_TREE, "json"}, {JS_OUT_PPROF, "pprof"},
};

static const struct {
    const char *ext;
    js_out_format f;
} extensions[] = {
    {"html", JS_OUT_HTML}, {"htm", JS_OUT_HTML}, {"collapsed", JS_OUT_COLLAPSED}, {"folded", JS_OUT_COLLAPSED},
    {"txt", JS_OUT_FLAT},  {"tree", JS_OUT_TREE}, {"jfr", JS_OUT_JFR},            {"json", JS_OUT_JSON_TREE},
    {"pprof", JS_OUT_PPROF}, {"pb.gz", JS_OUT_PPROF},
};

/* Lowercase name of a format; "unknown" when out of range. */
const char *js_out_format_name(js_out_format f)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (format_names[i].f == f) return format_names[i].name;
    return "unknown";
}

/* Format implied by the extension of path's last component (case-insensitive), or JS_OUT_NONE. */
js_out_format js_out_format_from_path(const char *path)
{
    if (!path) return JS_OUT_NONE;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++) {
        size_t e = strlen(extensions[i].ext);
        /* the extension, after a dot that does not start the name (".html" is a dot file, not an extension) */
        if (n > e + 1 && base[n - e - 1] == '.' && strcasecmp(base + n - e, extensions[i].ext) == 0)
            return extensions[i].f;
    }
    return JS_OUT_NONE;
}
