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
    /** A value the 1.2 cases keep (TP_V_*). */
    uint64_t (*value)(int which);
} tp_probe;

enum {
    TP_V_EMITTED,          /* late: ticks its thread (and shutdown) emitted */
    TP_V_ORPHAN_CALLS,     /* orphan: rounds of host calls after shutdown */
    TP_V_ORPHAN_DONE,      /* orphan: 1 once its thread is done */
    TP_V_REENTER_INIT,     /* reenter: what jager_init returned inside start */
    TP_V_REENTER_SHUTDOWN, /* reenter: 1 when jager_shutdown inside start was refused */
    TP_V_TIMER_CALLS,      /* timer: callbacks so far */
    TP_V_TIMER_AT_STOP,    /* timer: callbacks counted when stop was called */
    TP_V_FLUSHES,          /* flush callbacks entered */
    TP_V_HOOK_BEGIN_A,     /* hooks: begin hook calls for site "hook.a" */
    TP_V_HOOK_END_A,       /* hooks: end hook calls for "hook.a" */
    TP_V_HOOK_BEGIN_B,     /* hooks: … for "hook.b" (registered after the hook) */
    TP_V_HOOK_END_B,
    TP_V_HOOK_BAD,         /* hooks: calls for another site, an end not matching the last begin, a bad event */
    TP_V_HOOK_AT_STOP,     /* hooks: all hook calls counted when stop was called */
    TP_V_HOOK_ID_A,        /* hooks: the id of the "hook.a" hook */
    TP_V_START_TID,        /* good, callerthread: the OS thread id start ran on */
    TP_V_ORPHAN_CHECKED,   /* orphan: 1 once its thread checked each host call after the unload */
    TP_V_ORPHAN_BAD,       /* orphan: host calls after the unload that did not return their stale-handle status */
    TP_V_COUNT
};

#endif
