/*
 * status.h — the core's error helper, shared by the recorder (sdk/src) and the reader
 * (sdk/src/reader). Never installed.
 */
#ifndef JAGER_STATUS_PRIV_H
#define JAGER_STATUS_PRIV_H

#include "jager.h"

#define JG_HIDDEN __attribute__((visibility("hidden")))

/** Set the calling thread's last error message (printf-style) and return \p status. */
JG_HIDDEN jager_status jg_error(jager_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* JAGER_STATUS_PRIV_H */
