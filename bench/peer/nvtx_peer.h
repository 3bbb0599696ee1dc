/* nvtx_peer.h — a REFERENCE for the benchmarks, not product code: the shape of NVTX's
 * injection model (NVTX v3 nvToolsExt.h), so bench_span_peer can time Jäger's span beside
 * the cheapest way a range push/pop is usually recorded.
 *
 * As in NVTX, the program calls inline wrappers that load a function pointer from a global
 * table and call through it when a tool filled it in (else they return at once); the tool
 * is a shared library the program loads (NVTX: NVTX_INJECTION64_PATH and
 * InitializeInjectionNvtx2) whose push/pop record the range into a per-thread buffer. The
 * injection here (nvtx_peer.c) does what a minimal tracer does and nothing more: push reads
 * the TSC and keeps it on a per-thread stack; pop reads the TSC and stores one 32-byte
 * record {start, end, message, thread | depth} at a per-thread cursor into a prefaulted
 * buffer that wraps. No aggregates, no consumer, no accounting of anything overwritten. */
#ifndef JAGER_BENCH_NVTX_PEER_H
#define JAGER_BENCH_NVTX_PEER_H

#include <dlfcn.h>
#include <stdint.h>

typedef int (*nvtxp_push_fn)(const char *message);
typedef int (*nvtxp_pop_fn)(void);

/* The global table the inline wrappers read (NVTX: nvtxGlobals_v3). */
static __attribute__((unused)) struct {
    nvtxp_push_fn push;
    nvtxp_pop_fn pop;
} nvtxp_globals;

/* NVTX_NO_PUSH_POP_TRACKING: what the wrappers return without a tool. */
#define NVTXP_NO_TRACKING (-2)

static inline int nvtxpRangePushA(const char *message)
{
    nvtxp_push_fn f = nvtxp_globals.push;
    return f ? f(message) : NVTXP_NO_TRACKING;
}

static inline int nvtxpRangePop(void)
{
    nvtxp_pop_fn f = nvtxp_globals.pop;
    return f ? f() : NVTXP_NO_TRACKING;
}

/* The injection's entry (NVTX: InitializeInjectionNvtx2): fills the table. */
typedef int (*nvtxp_init_fn)(nvtxp_push_fn *push, nvtxp_pop_fn *pop);

/* Load the injection library at \p path (dlopen + dlsym, as NVTX does on the first call);
 * 0 on success. */
static inline int nvtxp_load(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return -1;
    nvtxp_init_fn init = (nvtxp_init_fn)dlsym(h, "nvtxp_initialize_injection");
    if (!init) return -1;
    return init(&nvtxp_globals.push, &nvtxp_globals.pop);
}

/* Stop recording: the wrappers return at once again. */
static inline void nvtxp_unload(void)
{
    nvtxp_globals.push = 0;
    nvtxp_globals.pop = 0;
}

#endif
