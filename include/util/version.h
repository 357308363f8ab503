/* version.h - the release version. */
#ifndef JS_VERSION_H
#define JS_VERSION_H
#define JS_VERSION "0.1.0"
#endif
