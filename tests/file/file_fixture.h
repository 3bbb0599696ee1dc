/* Shared by the file tests: a small real recording made through the core, and an
 * independent LZ4 frame walker (liblz4 only, not the reader) that finds frame
 * boundaries and what each block holds. */
#ifndef JAGER_TEST_FILE_FIXTURE_H
#define JAGER_TEST_FILE_FIXTURE_H
#include <stddef.h>
#include <stdint.h>

#include "jager_reader.h"

/** What fx_record() recorded, as the test itself counted it. */
typedef struct fx_expect {
    uint64_t spans, logs, counters, marks, plugin, span_attrs, span_errors;
    jager_site site_outer, site_inner;
    uint16_t plugin_type;
    uint64_t stack_ips[3];
    jager_stack_id stack;
    uint64_t by_type[512]; /* memsink's counts per record type (plugin ids < 512 here) */
} fx_expect;

/** Record \p iters iterations on each of \p threads threads into \p path through the
 *  real core (spans, logs with attributes, counters, marks, plugin events with a stack,
 *  span attributes and errors, hostile strings) and fill \p ex. Returns 0 on success. */
int fx_record(const char *path, int threads, int iters, fx_expect *ex);

/** One frame as found by the independent walker. */
typedef struct fx_frame {
    size_t offset, len;
    uint32_t kind;    /* block kind; 0 for a skippable frame */
    uint64_t events;  /* EVENTS blocks: declared events */
    uint64_t hash;    /* FNV-1a of the decompressed content */
    uint64_t content; /* decompressed bytes */
} fx_frame;

/** Split a whole file into frames with liblz4's streaming decoder; returns the count
 *  (≤ cap) or -1 if the file does not decode. */
int fx_frames(const uint8_t *data, size_t size, fx_frame *out, int cap);

/** Iterate a reader to its end: events counted per type into \p by_type (512 entries,
 *  may be NULL); returns the final jager_reader_next() result, events in *n. */
int fx_drain(jager_reader *r, uint64_t *by_type, uint64_t *n);
#endif
