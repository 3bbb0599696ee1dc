/* fake_julia.h — a stand-in for the slice of libjulia the gc plugin uses, exported from a
 * test executable so the plugin's dlsym(RTLD_DEFAULT) finds it. It keeps the runtime's
 * counters the way Julia 1.5 does and drives the registered callbacks exactly as
 * jl_gc_collect does: pre callback, collection, post callback, one collection at a time. */
#ifndef JAGER_TEST_FAKE_JULIA_H
#define JAGER_TEST_FAKE_JULIA_H
#include <stdint.h>

typedef void (*fake_cb)(int);

/** Reset the fake runtime: initialised or not, no callbacks, counters at the given live size. */
void fake_julia_reset(int initialized, int64_t live_bytes);
void fake_julia_set_initialized(int initialized);
/** Allocate \p bytes: the running total grows now, the live size at the next collection. */
void fake_julia_alloc(int64_t bytes);
/** One collection as jl_gc_collect runs it: requested kind (0 auto, 1 full, 2 incremental),
 *  whether it sweeps fully, bytes freed, pause length. Serialised like Julia's safepoint. */
void fake_julia_collect(int requested, int full_sweep, int64_t freed, uint64_t pause_ns);
/** Currently registered callbacks (NULL when none). */
fake_cb fake_julia_pre(void);
fake_cb fake_julia_post(void);
/** Register/unregister calls seen: [0] pre on, [1] pre off, [2] post on, [3] post off. */
void fake_julia_reg_calls(unsigned out[4]);
/** Collections run so far, their summed pause, and full sweeps. */
uint64_t fake_julia_collections(void);
#endif
