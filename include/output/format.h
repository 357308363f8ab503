/* format.h - the output formats by name and by file extension.
 *
 * Kept apart from the writers (output.h) so that the option parser can name a format without
 * knowing how any format is written. Pure functions.
 */
#ifndef JS_FORMAT_H
#define JS_FORMAT_H

typedef enum {
    JS_OUT_NONE = 0,
    JS_OUT_COLLAPSED,
    JS_OUT_FLAT,
    JS_OUT_TREE,
    JS_OUT_HTML,
    JS_OUT_JFR,
    JS_OUT_JSON_TREE,
    JS_OUT_PPROF
} js_out_format;

/* Name of a format ("collapsed", "flat", ...). */
const char *js_out_format_name(js_out_format f);
/* Format implied by a file name's extension (".pb.gz" counts as one: pprof), or JS_OUT_NONE. */
js_out_format js_out_format_from_path(const char *path);

#endif
