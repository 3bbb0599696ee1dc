/*
 * omp_internal.h — shared state of the openmp plugin: the host table, the on/off switch,
 * sites by (code address, role), region instances and the per-thread span stacks that
 * both adapters (OMPT for LLVM's libomp, interposition for GCC's libgomp) use.
 */
#ifndef JAGER_OMP_INTERNAL_H
#define JAGER_OMP_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "jager_plugin.h"

#define OMP_HIDDEN __attribute__((visibility("hidden")))
#define OMP_LIKELY(x) __builtin_expect(!!(x), 1)
#define OMP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Roles: what a site measures, written once per site as an openmp.site_role event so the
 * tools know a wait by its role, never by its name. Stable strings (docs/openmp.md). */
typedef enum omp_role {
    OMP_ROLE_REGION = 0,  /* "region": a parallel region on the encountering thread, fork to join */
    OMP_ROLE_WORK,        /* "work": one thread's implicit task up to the join barrier */
    OMP_ROLE_LOOP,        /* "loop": one thread's share of a worksharing loop (its chunks) */
    OMP_ROLE_JOIN_WAIT,   /* "barrier_wait", kind "join": the barrier that ends a region */
    OMP_ROLE_BARRIER_WAIT, /* "barrier_wait", kind "implicit": end of a loop/single/sections */
    OMP_ROLE_EXPLICIT_WAIT, /* "barrier_wait", kind "explicit": #pragma omp barrier */
    OMP_ROLE_GOMP_BARRIER_WAIT, /* "barrier_wait", kind "barrier": a GOMP_barrier() call (GCC: explicit, or a static loop's/single's implicit barrier) */
    OMP_ROLE_CRITICAL_WAIT, /* "lock_wait", kind "critical": waiting to enter a critical section */
    OMP_ROLE_COUNT
} omp_role;

/* The adapter that produced a site: written with its role. */
typedef enum omp_runtime { OMP_RT_OMPT = 0, OMP_RT_GOMP = 1 } omp_runtime;

/* The host's table (NULL before init) and whether events are recorded now. */
OMP_HIDDEN extern const jager_host_api *omp_host;
OMP_HIDDEN extern atomic_int omp_on;

static inline int omp_recording(void) { return OMP_LIKELY(atomic_load_explicit(&omp_on, memory_order_relaxed) != 0); }

/* The site of (code address, role). Addresses are function entries (a construct's outlined
 * body) or return addresses minus one (so the line is the call's own), registered and described on first sight (takes a
 * lock and resolves the address then; later calls are a lock-free table probe). 0 when
 * not recording or out of memory: spans at site 0 are inert. */
OMP_HIDDEN jager_site omp_site(const void *addr, omp_role role, omp_runtime rt);

/* A fresh region instance id (process-wide, 1-based). */
OMP_HIDDEN uint64_t omp_region_next(void);

/* Attributes that link a worker's span to its region: omp.region, omp.thread (and on the
 * region span omp.threads, the team size). */
OMP_HIDDEN void omp_attrs_worker(jager_span s, uint64_t region, int64_t thread);
OMP_HIDDEN void omp_attrs_region(jager_span s, uint64_t region, int64_t threads);

/* Symbol names (dladdr, then libdw for functions absent from .dynsym), off the hot path. */
OMP_HIDDEN int omp_symbolize(const void *addr, char *func, size_t fcap, char *file, size_t filecap, uint32_t *line);

/* Counters reported at stop (openmp.summary). */
typedef struct omp_counts {
    atomic_uint_fast64_t regions, workers, loops, barriers, joins, criticals, late_ends;
} omp_counts;
OMP_HIDDEN extern omp_counts omp_n;

/* Adapters. */
OMP_HIDDEN int omp_gomp_interposed(void);   /* our GOMP_* entry points are the ones the program binds */
OMP_HIDDEN int omp_gomp_present(void);      /* GCC's libgomp (not libomp's compat layer) is loaded */
OMP_HIDDEN int omp_ompt_started(void);      /* libomp started our OMPT tool */
OMP_HIDDEN int omp_ompt_ever_started(void); /* … at some time in this process (it stops at libomp's exit) */
OMP_HIDDEN int omp_ompt_present(void);
OMP_HIDDEN void omp_ompt_quiesce(void);      /* have libomp's idle workers report held-back ends */      /* LLVM's libomp is loaded */

#endif
