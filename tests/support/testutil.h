/* Small helpers shared by the unit tests. */
#ifndef JAGER_TEST_UTIL_H
#define JAGER_TEST_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include "jager.h"

/** A fresh path under $TMPDIR (or /tmp) ending in \p suffix; static buffer per call slot. */
const char *tu_tmp_path(const char *suffix);
/** jager_config with defaults, quiet, no output, given ring size (0 = default). */
jager_config tu_config(uint64_t ring_bytes);
/** Read a whole file; caller frees. NULL on error. */
uint8_t *tu_read_file(const char *path, size_t *size);
/** Write bytes to a file; 0 on success. */
int tu_write_file(const char *path, const void *data, size_t size);
/** Sleep for \p ns with nanosleep (restarting on EINTR). */
void tu_sleep_ns(uint64_t ns);
#endif
