/* Helpers of the ABI tests: a run with a memory sink and a plugin list, diagnostics read
 * back from the recording, the test plugins' callback journals. */
#ifndef JAGER_TEST_ABI_UTIL_H
#define JAGER_TEST_ABI_UTIL_H
#include <stddef.h>
#include <stdint.h>

#include "jager_plugin.h"
#include "memsink.h"

typedef struct abi_run {
    memsink *m;
    jager_sink sink;
    jager_status init_status;
} abi_run;

/** Add a memory sink, then jager_init() with \p plugins searched in \p path (quiet). */
void abi_start(abi_run *r, const char *plugins, const char *path);
/** jager_shutdown() and free the sink. */
void abi_finish(abi_run *r);

/** One diagnostic record read back from the sink. */
typedef struct abi_diag {
    char source[64];
    int level;
    char text[1024];
} abi_diag;

/** Diagnostics in the sink, in order, from \p source (NULL: any); returns how many (≤ max
 *  stored, all counted). Call after jager_flush() and before jager_shutdown(). */
size_t abi_diags(const memsink *m, const char *source, abi_diag *out, size_t max);
/** Records of type \p type in the sink. */
size_t abi_count(const memsink *m, uint16_t type);

/** A fresh journal path, set as JAGER_<NAME>_JOURNAL for each name in the comma list. */
const char *abi_journal_for(const char *names);
/** The journal's text ("" when missing); static buffer. */
const char *abi_journal_read(const char *path);
#endif
