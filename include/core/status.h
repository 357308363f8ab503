/* status.h - the status every command returns, with a strerror (the text beside each reply). */
#ifndef JS_STATUS_H
#define JS_STATUS_H

typedef enum {
    JS_OK = 0,
    JS_ERR_ARGS,   /* unknown or malformed option */
    JS_ERR_STATE,  /* e.g. stop without a running session, start while one runs */
    JS_ERR_ENGINE, /* no sampling engine could start */
    JS_ERR_IO,     /* an output could not be created or written */
    JS_ERR_UNSUPPORTED
} js_status;

/* Short description of a status. */
const char *js_strerror(js_status st);

#endif
