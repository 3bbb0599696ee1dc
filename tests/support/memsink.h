/* A memory sink for tests: keeps every record it receives, with its thread index. */
#ifndef JAGER_TEST_MEMSINK_H
#define JAGER_TEST_MEMSINK_H
#include <stddef.h>
#include <stdint.h>
#include "jager_plugin.h"

typedef struct memsink_rec {
    uint32_t thread;
    const jager_record *rec; /* points into the sink's storage */
} memsink_rec;

typedef struct memsink {
    uint8_t *data;     /* records back to back */
    size_t bytes, cap;
    uint32_t *threads; /* thread of each record, by record index */
    size_t nrecs, threads_cap;
    uint64_t batches, flushes;
    int opened, closed;
} memsink;

/** A zeroed memsink and the jager_sink that feeds it (add it with jager_sink_add). */
memsink *memsink_new(jager_sink *out);
void memsink_free(memsink *m);
/** The i-th record (i < m->nrecs). */
memsink_rec memsink_at(const memsink *m, size_t i);
/** Records of \p type (optionally only with aux == \p aux when aux_filter). */
size_t memsink_count(const memsink *m, uint16_t type, int aux_filter, uint32_t aux);
#endif
