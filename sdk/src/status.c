/* Status codes and the per-thread last-error message. */
#include <stdarg.h>
#include <stdio.h>

#include "status.h"

/* One small buffer per thread; initial-exec keeps the TLS block static (see architecture.md). */
static __thread char last_error[256] __attribute__((tls_model("initial-exec")));

const char *jager_strerror(jager_status status)
{
    switch (status) {
#define JAGER_STATUS_CASE(name, value, msg) \
    case value: return msg;
        JAGER_STATUS_MAP(JAGER_STATUS_CASE)
#undef JAGER_STATUS_CASE
    default: return "unknown status";
    }
}

const char *jager_last_error(void) { return last_error; }

jager_status jg_error(jager_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}
