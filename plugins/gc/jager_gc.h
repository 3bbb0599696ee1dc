/*
 * jager_gc.h — the gc plugin's extension "jager.gc/1": live GC figures for bindings,
 * tests and tools running in the recorded process.
 *
 * \code
 * const jager_gc_api *gc = jager_extension_get(JAGER_GC_EXTENSION_ID);
 * if (gc) { uint64_t ns, n; gc->site_time(site, &ns, &n); }
 * \endcode
 * The table lives in the plugin's static storage. site_time and totals answer while the
 * plugin is loaded (until jager_shutdown()); callback_counts answers for the rest of
 * the process once the plugin has hooked Julia (the library then stays mapped).
 */
#ifndef JAGER_GC_H
#define JAGER_GC_H

#include "jager.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Versioned extension id. */
#define JAGER_GC_EXTENSION_ID "jager.gc/1"

/** The "jager.gc/1" table. Grows only at the end; check struct_size. */
typedef struct jager_gc_api {
    uint32_t struct_size;
    uint32_t reserved;
    /** GC time (ns) and pauses attributed so far to \p site (pauses triggered while a span
     *  of it was open on the triggering thread; inclusive). Drains pending pauses first.
     *  \return JAGER_OK, JAGER_E_STATE when the plugin is not running. [any-thread] (lock) */
    jager_status (*site_time)(jager_site site, uint64_t *gc_ns, uint64_t *pauses);
    /** Pauses emitted, their summed duration, pauses lost (queue full) and callbacks
     *  without a matching pre (hooked mid-collection). Drains first. [any-thread] (lock) */
    jager_status (*totals)(uint64_t *pauses, uint64_t *gc_ns, uint64_t *lost, uint64_t *unpaired);
    /** Callback invocations while recording, and late ones (after unhooking; each returned
     *  at once). A late count that grows after jager_shutdown() means Julia still calls
     *  the plugin. [any-thread][hot-path] */
    void (*callback_counts)(uint64_t *armed, uint64_t *late);
    /** 1 while the callbacks are registered with Julia. [any-thread] */
    int (*hooked)(void);
} jager_gc_api;

#ifdef __cplusplus
}
#endif

#endif /* JAGER_GC_H */
