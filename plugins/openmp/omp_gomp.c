/*
 * omp_gomp.c — GCC's libgomp has no OMPT: interpose its entry points.
 *
 * These GOMP_* definitions take effect when this library comes before libgomp in the
 * symbol search order (LD_PRELOAD, or linked ahead of -fopenmp); each forwards to the
 * next definition (dlsym RTLD_NEXT). A parallel region runs the program's outlined body
 * inside a trampoline that records, on every thread of the team:
 *
 *   omp work  (role work; attributes omp.region, omp.thread)
 *     …the body: loops, barriers, critical waits as child spans…
 *   omp join barrier  (role barrier_wait, kind join; omp.region, omp.thread): a
 *                     GOMP_barrier() the trampoline calls after the body, so every
 *                     thread's wait at the end of the region is measured (libgomp's own
 *                     join barrier then finds the team already arrived). OPARI2
 *                     instruments implicit barriers the same way.
 *
 * and on the encountering thread the region span around it all. When LLVM's libomp runs
 * the program (its GOMP_* compatibility layer), OMPT reports everything and these
 * wrappers only forward.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "omp_internal.h"

#define GOMP_API __attribute__((visibility("default")))
#define RA() ((const char *)__builtin_return_address(0) - 1)

typedef void (*gomp_body)(void *);

/* The next definition of a libgomp symbol, looked up once (a benign race stores the same
 * value twice). NULL when no OpenMP runtime is loaded: then nothing can call these. */
static void *next_sym(_Atomic(void *) *cache, const char *name)
{
    void *p = atomic_load_explicit(cache, memory_order_relaxed);
    if (OMP_UNLIKELY(!p)) {
        p = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, p, memory_order_relaxed);
    }
    return p;
}
#define NEXT(name)                                        \
    static _Atomic(void *) next_##name;                   \
    __typeof__(&name) real = (__typeof__(&name))next_sym(&next_##name, #name)

static int (*p_thread_num)(void);
static int (*p_num_threads)(void);

static int team_info(int *nthreads)
{
    if (OMP_UNLIKELY(!p_thread_num)) {
        p_num_threads = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_num_threads");
        p_thread_num = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_thread_num");
        if (!p_thread_num || !p_num_threads) return *nthreads = 1, 0;
    }
    *nthreads = p_num_threads();
    return p_thread_num();
}

/* Record only while recording, and only when OMPT is not already reporting. */
static inline int gomp_active(void) { return omp_recording() && !omp_ompt_started(); }

/* ---- per-thread stack of open loops (a loop begins in GOMP_loop_*_start and ends in
 * GOMP_loop_end*; nested loops need nested regions, so a few levels are plenty) ---- */
#define LOOP_DEPTH 16
static __thread jager_span loop_stack[LOOP_DEPTH];
static __thread unsigned loop_depth;

static void loop_begin(const void *ra)
{
    jager_span s = omp_host->span_begin(omp_site(ra, OMP_ROLE_LOOP, OMP_RT_GOMP));
    if (loop_depth < LOOP_DEPTH) loop_stack[loop_depth] = s;
    loop_depth++;
    atomic_fetch_add_explicit(&omp_n.loops, 1, memory_order_relaxed);
}

static void loop_end(void)
{
    if (!loop_depth) return; /* a combined parallel loop: no *_start on this thread */
    loop_depth--;
    if (loop_depth < LOOP_DEPTH) omp_host->span_end(loop_stack[loop_depth]);
}

/* ---- parallel regions ---- */
typedef struct tramp {
    gomp_body fn;
    void *data;
    uint64_t region;
    jager_site work, join;
    int threads;
} tramp;

static void (*barrier_next(void))(void);

static void tramp_run(void *p)
{
    tramp *t = p;
    if (!t->region) {
        t->fn(t->data);
        return;
    }
    int n = 1, me = team_info(&n);
    if (me == 0) t->threads = n;
    jager_span w = omp_host->span_begin(t->work);
    omp_attrs_worker(w, t->region, me);
    unsigned depth = loop_depth;
    t->fn(t->data);
    loop_depth = depth; /* a body left by cancellation leaves no stale loop */
    omp_host->span_end(w);
    jager_span j = omp_host->span_begin(t->join);
    omp_attrs_worker(j, t->region, me);
    void (*bar)(void) = barrier_next();
    if (bar) bar();
    omp_host->span_end(j);
    atomic_fetch_add_explicit(&omp_n.workers, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&omp_n.joins, 1, memory_order_relaxed);
}

static void tramp_init(tramp *t, gomp_body fn, void *data)
{
    t->fn = fn;
    t->data = data;
    t->threads = 1;
    t->region = 0;
    if (!gomp_active()) return;
    t->work = omp_site((const void *)fn, OMP_ROLE_WORK, OMP_RT_GOMP);
    t->join = omp_site((const void *)fn, OMP_ROLE_JOIN_WAIT, OMP_RT_GOMP);
    t->region = omp_region_next();
}

static jager_span region_begin(const tramp *t)
{
    if (!t->region) return (jager_span){0, 0, 0};
    return omp_host->span_begin(omp_site((const void *)t->fn, OMP_ROLE_REGION, OMP_RT_GOMP));
}

static void region_end(jager_span r, const tramp *t)
{
    if (!t->region) return;
    omp_attrs_region(r, t->region, t->threads);
    omp_host->span_end(r);
    atomic_fetch_add_explicit(&omp_n.regions, 1, memory_order_relaxed);
}

GOMP_API void GOMP_parallel(gomp_body fn, void *data, unsigned num_threads, unsigned flags)
{
    NEXT(GOMP_parallel);
    tramp t;
    tramp_init(&t, fn, data);
    jager_span r = region_begin(&t);
    real(tramp_run, &t, num_threads, flags);
    region_end(r, &t);
}

/* GOMP_parallel_loop_<sched>(fn, data, num_threads, start, end, incr, chunk_size, flags):
 * the team's threads share the loop inside fn; their work spans cover their chunks. */
#define PARALLEL_LOOP(name)                                                                                      \
    GOMP_API void name(gomp_body fn, void *data, unsigned num_threads, long start, long end, long incr,          \
                       long chunk_size, unsigned flags)                                                          \
    {                                                                                                            \
        NEXT(name);                     \
        tramp t;                                                                                                 \
        tramp_init(&t, fn, data);                                                                                \
        jager_span r = region_begin(&t);                                                                         \
        real(tramp_run, &t, num_threads, start, end, incr, chunk_size, flags);                                   \
        region_end(r, &t);                                                                                       \
    }
#define PARALLEL_LOOP_RUNTIME(name)                                                                              \
    GOMP_API void name(gomp_body fn, void *data, unsigned num_threads, long start, long end, long incr,          \
                       unsigned flags)                                                                           \
    {                                                                                                            \
        NEXT(name);                           \
        tramp t;                                                                                                 \
        tramp_init(&t, fn, data);                                                                                \
        jager_span r = region_begin(&t);                                                                         \
        real(tramp_run, &t, num_threads, start, end, incr, flags);                                               \
        region_end(r, &t);                                                                                       \
    }
PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* GOMP_parallel_sections(fn, data, num_threads, count, flags). */
GOMP_API void GOMP_parallel_sections(gomp_body fn, void *data, unsigned num_threads, unsigned count, unsigned flags)
{
    NEXT(GOMP_parallel_sections);
    tramp t;
    tramp_init(&t, fn, data);
    jager_span r = region_begin(&t);
    real(tramp_run, &t, num_threads, count, flags);
    region_end(r, &t);
}

/* ---- barriers ---- */
static _Atomic(void *) next_barrier;
static void (*barrier_next(void))(void) { return (void (*)(void))next_sym(&next_barrier, "GOMP_barrier"); }

GOMP_API void GOMP_barrier(void)
{
    void (*real)(void) = barrier_next();
    if (!gomp_active()) {
        real();
        return;
    }
    jager_span b = omp_host->span_begin(omp_site(RA(), OMP_ROLE_GOMP_BARRIER_WAIT, OMP_RT_GOMP));
    real();
    omp_host->span_end(b);
    atomic_fetch_add_explicit(&omp_n.barriers, 1, memory_order_relaxed);
}

GOMP_API bool GOMP_barrier_cancel(void)
{
    NEXT(GOMP_barrier_cancel);
    if (!gomp_active()) return real();
    jager_span b = omp_host->span_begin(omp_site(RA(), OMP_ROLE_GOMP_BARRIER_WAIT, OMP_RT_GOMP));
    bool c = real();
    omp_host->span_end(b);
    atomic_fetch_add_explicit(&omp_n.barriers, 1, memory_order_relaxed);
    return c;
}

/* ---- worksharing loops: GOMP_loop_<sched>_start … GOMP_loop_end[_nowait] ---- */
#define LOOP_START(name)                                                                                         \
    GOMP_API bool name(long start, long end, long incr, long chunk_size, long *istart, long *iend)               \
    {                                                                                                            \
        NEXT(name);                                            \
        if (gomp_active()) loop_begin(RA());                                                                     \
        return real(start, end, incr, chunk_size, istart, iend);                                                 \
    }
#define LOOP_START_RUNTIME(name)                                                                                 \
    GOMP_API bool name(long start, long end, long incr, long *istart, long *iend)                                \
    {                                                                                                            \
        NEXT(name);                                                  \
        if (gomp_active()) loop_begin(RA());                                                                     \
        return real(start, end, incr, istart, iend);                                                             \
    }
LOOP_START(GOMP_loop_static_start)
LOOP_START(GOMP_loop_dynamic_start)
LOOP_START(GOMP_loop_guided_start)
LOOP_START(GOMP_loop_nonmonotonic_dynamic_start)
LOOP_START(GOMP_loop_nonmonotonic_guided_start)
LOOP_START_RUNTIME(GOMP_loop_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_nonmonotonic_runtime_start)
LOOP_START_RUNTIME(GOMP_loop_maybe_nonmonotonic_runtime_start)

/* GCC 9+: the generic start (reductions, ordered, schedule chosen at run time). */
GOMP_API bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk_size, long *istart,
                              long *iend, uintptr_t *reductions, void **mem)
{
    NEXT(GOMP_loop_start);
    if (gomp_active()) loop_begin(RA());
    return real(start, end, incr, sched, chunk_size, istart, iend, reductions, mem);
}

GOMP_API void GOMP_loop_end(void)
{
    NEXT(GOMP_loop_end);
    if (!gomp_active()) {
        loop_depth = loop_depth ? loop_depth - 1 : 0;
        real();
        return;
    }
    loop_end();
    jager_span b = omp_host->span_begin(omp_site(RA(), OMP_ROLE_BARRIER_WAIT, OMP_RT_GOMP));
    real();
    omp_host->span_end(b);
    atomic_fetch_add_explicit(&omp_n.barriers, 1, memory_order_relaxed);
}

GOMP_API bool GOMP_loop_end_cancel(void)
{
    NEXT(GOMP_loop_end_cancel);
    if (!gomp_active()) {
        loop_depth = loop_depth ? loop_depth - 1 : 0;
        return real();
    }
    loop_end();
    jager_span b = omp_host->span_begin(omp_site(RA(), OMP_ROLE_BARRIER_WAIT, OMP_RT_GOMP));
    bool c = real();
    omp_host->span_end(b);
    atomic_fetch_add_explicit(&omp_n.barriers, 1, memory_order_relaxed);
    return c;
}

GOMP_API void GOMP_loop_end_nowait(void)
{
    NEXT(GOMP_loop_end_nowait);
    if (gomp_active()) loop_end();
    else loop_depth = loop_depth ? loop_depth - 1 : 0;
    real();
}

/* ---- critical sections: the wait to enter ---- */
GOMP_API void GOMP_critical_start(void)
{
    NEXT(GOMP_critical_start);
    if (!gomp_active()) {
        real();
        return;
    }
    jager_span c = omp_host->span_begin(omp_site(RA(), OMP_ROLE_CRITICAL_WAIT, OMP_RT_GOMP));
    real();
    omp_host->span_end(c);
    atomic_fetch_add_explicit(&omp_n.criticals, 1, memory_order_relaxed);
}

GOMP_API void GOMP_critical_name_start(void **pptr)
{
    NEXT(GOMP_critical_name_start);
    if (!gomp_active()) {
        real(pptr);
        return;
    }
    jager_span c = omp_host->span_begin(omp_site(RA(), OMP_ROLE_CRITICAL_WAIT, OMP_RT_GOMP));
    real(pptr);
    omp_host->span_end(c);
    atomic_fetch_add_explicit(&omp_n.criticals, 1, memory_order_relaxed);
}

/* ---- what the process runs ---- */
int omp_gomp_present(void)
{
    void *h = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != NULL;
}

int omp_gomp_interposed(void)
{
    Dl_info bound, self;
    void *p = dlsym(RTLD_DEFAULT, "GOMP_parallel");
    if (!p || !dladdr(p, &bound) || !dladdr((void *)tramp_run, &self)) return 0;
    return bound.dli_fbase == self.dli_fbase;
}
