/* The extension ("test.probe/1") that the test plugins offer the ABI tests: it hands out
 * the host table and handle the plugin received, so a test can exercise every host
 * function exactly as a plugin would, and tells which copy of a plugin was loaded. */
#ifndef JAGER_TEST_TP_PROBE_H
#define JAGER_TEST_TP_PROBE_H
#include <stdint.h>
#include "jager_plugin.h"

#define TP_PROBE_ID "test.probe/1"

typedef struct tp_probe {
    uint32_t struct_size;
    const char *tag;             /* TP_TAG the plugin was built with ("a", "b", …) */
    const jager_host_api *host;  /* what init received */
    jager_plugin_handle *self;
    uint16_t tick_type;          /* "<name>.tick": seq U64, payload BYTES */
    uint16_t summary_type;       /* "<name>.summary": ticks U64 (emitted by stop) */
    /** Emit \p n tick events on the calling thread, numbered after the previous ones. */
    void (*emit_ticks)(uint32_t n);
    /** Span events the plugin's sink has received so far (sink plugin), else 0. */
    uint64_t (*sink_spans)(void);
    /** Batches that sink received. */
    uint64_t (*sink_batches)(void);
} tp_probe;

#endif
