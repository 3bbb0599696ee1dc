/*
 * instrument.c — libjager-instrument.so: function spans from compiler instrumentation.
 *
 * A program compiled with -finstrument-functions (GCC, Clang; Score-P's compiler adapter
 * is the model) calls __cyg_profile_func_enter/exit around every function. glibc defines
 * both as no-ops, so an instrumented program links and runs without Jäger; preloading
 * this library (or linking it) turns each call into a span:
 *
 *   cc -O2 -g -finstrument-functions app.c -o app
 *   LD_PRELOAD=libjager-instrument.so JAGER_OUTPUT=run.jgr ./app
 *
 * One site per function address, named on first sight (dladdr, then libdw for functions
 * not in .dynsym, C++ names demangled) and kept in a lock-free table, so a call costs a
 * hash probe plus a span. JAGER_INSTRUMENT_FILTER (globs on the function name, "-"
 * excludes, the syntax of JAGER_FILTER) is applied once per function: an excluded
 * function costs the probe and no span. Every function here is no_instrument_function,
 * and a thread inside the first-sight path records nothing, so the library never
 * measures itself.
 */
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager.h"
#include "omp_sym.h"

#define NOINST __attribute__((no_instrument_function))
#define EXPORT __attribute__((visibility("default"), no_instrument_function))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- functions: address → site, open addressing, insert under a lock ---- */
#define FN_BITS 16
#define FN_SLOTS (1u << FN_BITS) /* functions recorded at most; later ones run unrecorded */
#define FN_PROBES 32u
#define SITE_EXCLUDED UINT32_MAX

typedef struct fn_slot {
    _Atomic(uintptr_t) fn; /* 0 = empty */
    _Atomic(uint32_t) site; /* a jager_site, or SITE_EXCLUDED */
} fn_slot;

static fn_slot fns[FN_SLOTS];
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t fn_full; /* first sights refused: table full */

/* ---- per-thread stack of open calls ----
 * One initial-exec TLS pointer (this library is preloaded or linked, never dlopen'ed, so
 * static TLS is right and costs no __tls_get_addr call) to a per-thread block allocated
 * at the thread's first call and freed at its exit. */
#define MAX_DEPTH 512 /* deeper calls are not recorded (their depth is still tracked) */
typedef struct tstate {
    uint32_t depth;
    int busy; /* inside the first-sight path */
    jager_span stack[MAX_DEPTH];
} tstate;
static __thread tstate *ts __attribute__((tls_model("initial-exec")));
static pthread_key_t ts_key;
static pthread_once_t ts_once = PTHREAD_ONCE_INIT;

NOINST static void ts_free(void *p)
{
    /* Calls after this thread's key destructors run (other destructors) find no state
     * and are not recorded. */
    ts = NULL;
    free(p);
}
NOINST static void ts_key_make(void) { (void)pthread_key_create(&ts_key, ts_free); }

NOINST __attribute__((noinline, cold)) static tstate *ts_make(void)
{
    pthread_once(&ts_once, ts_key_make);
    tstate *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    ts = t;
    (void)pthread_setspecific(ts_key, t);
    return t;
}

NOINST static uint32_t fn_hash(uintptr_t fn)
{
    uint64_t h = (uint64_t)fn * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> (64 - FN_BITS));
}

NOINST static int filter_match(const char *filter, const char *name)
{
    if (!filter || !*filter) return 1;
    int have_include = 0, included = 0;
    const char *p = filter;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char pat[256];
        if (len >= sizeof pat) len = sizeof pat - 1;
        memcpy(pat, p, len);
        pat[len] = 0;
        char *q = pat;
        while (*q == ' ') q++;
        int exclude = (*q == '-');
        if (exclude) q++;
        if (*q) {
            int m = fnmatch(q, name, 0) == 0;
            if (exclude && m) return 0;
            if (!exclude) {
                have_include = 1;
                included |= m;
            }
        }
        if (!end) break;
        p = end + 1;
    }
    return have_include ? included : 1;
}

/* First sight of \p fn: name it, filter it, register its site. */
NOINST __attribute__((noinline, cold)) static uint32_t fn_first(tstate *t, uintptr_t fn)
{
    if (t->busy) return SITE_EXCLUDED; /* something we call was instrumented: not recorded */
    t->busy = 1;
    uint32_t site = 0;
    pthread_mutex_lock(&fn_lock);
    uint32_t i = fn_hash(fn);
    for (uint32_t n = 0; n < FN_PROBES; n++, i = (i + 1) & (FN_SLOTS - 1)) {
        uintptr_t have = atomic_load_explicit(&fns[i].fn, memory_order_relaxed);
        if (have == fn) {
            site = atomic_load_explicit(&fns[i].site, memory_order_relaxed);
            goto unlock;
        }
        if (have == 0) {
            char func[512], file[256];
            uint32_t line = 0;
            jgx_symbolize((const void *)fn, func, sizeof func, file, sizeof file, &line);
            site = filter_match(getenv("JAGER_INSTRUMENT_FILTER"), func)
                       ? jager_site_register(func, file[0] ? file : NULL, line)
                       : SITE_EXCLUDED;
            if (site == 0) site = SITE_EXCLUDED; /* out of memory: never retried */
            atomic_store_explicit(&fns[i].site, site, memory_order_relaxed);
            atomic_store_explicit(&fns[i].fn, fn, memory_order_release);
            goto unlock;
        }
    }
    atomic_fetch_add_explicit(&fn_full, 1, memory_order_relaxed);
    site = SITE_EXCLUDED;
unlock:
    pthread_mutex_unlock(&fn_lock);
    t->busy = 0;
    return site;
}

NOINST static inline uint32_t fn_site(tstate *t, uintptr_t fn)
{
    uint32_t i = fn_hash(fn);
    for (uint32_t n = 0; n < FN_PROBES; n++, i = (i + 1) & (FN_SLOTS - 1)) {
        uintptr_t have = atomic_load_explicit(&fns[i].fn, memory_order_acquire);
        if (LIKELY(have == fn)) return atomic_load_explicit(&fns[i].site, memory_order_relaxed);
        if (have == 0) break;
    }
    return fn_first(t, fn);
}

EXPORT void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site;
    tstate *t = ts;
    if (UNLIKELY(!t) && !(t = ts_make())) return;
    uint32_t d = t->depth++;
    jager_span s = {0, 0, 0};
    if (LIKELY(__atomic_load_n(&jager_active, __ATOMIC_RELAXED))) {
        uint32_t site = fn_site(t, (uintptr_t)fn);
        if (site != SITE_EXCLUDED) s = jager_span_begin(site);
    }
    if (LIKELY(d < MAX_DEPTH)) t->stack[d] = s;
}

EXPORT void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)fn;
    (void)call_site;
    tstate *t = ts;
    if (UNLIKELY(!t || t->depth == 0)) return; /* entered before this library was loaded */
    uint32_t d = --t->depth;
    if (LIKELY(d < MAX_DEPTH) && t->stack[d].site) jager_span_end(t->stack[d]);
}
