/* gc_hooks.c — the pre/post GC callbacks and their registration with Julia.
 *
 * Rules for the callback bodies (Julia calls them with the world stopped, on the thread
 * that triggered the collection): C only, never re-enter Julia, never allocate (a Julia
 * allocation in the pre callback kills the process), take no lock. They write into
 * storage allocated at init: an in-flight slot claimed by the triggering thread in pre and
 * released in post, and a slot of the pause queue filled in post. Interning the stack
 * and emitting gc.pause happen later, off the callbacks (gc_drain.c). The one record
 * written in a callback is gc.stall, and only on a thread with spans open: its thread
 * state and ring exist, so the core's emit neither allocates nor locks.
 *
 * Late callbacks are harmless: every body first counts itself active, then checks the
 * armed flag; removal clears the flag, unregisters, and waits for the active count to
 * drop to zero. A callback that Julia had already picked before the removal finds the
 * flag clear and returns. The flag and counters are static and the library is pinned in
 * memory once hooked (gc_hooks_install), so even a call after dlclose finds its code. */
#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gc_internal.h"

/* libunwind's local unwinder (libunwind.so.8 exports the plain name); declared by hand
 * so no libunwind header is needed. It is the unwinder Julia itself uses, so it knows the
 * JIT's frames. Under ThreadSanitizer it is replaced by glibc's backtrace(): libunwind's
 * per-thread trace cache is freed by a thread-exit destructor that crashes inside TSan's
 * mutex interceptor (sanitizer builds never run inside Julia). */
#if defined(__SANITIZE_THREAD__)
#include <execinfo.h>
#define gc_backtrace backtrace
#else
extern int unw_backtrace(void **buffer, int size);
#define gc_backtrace unw_backtrace
#endif

static _Atomic(int) g_armed;
static _Atomic(int) g_active;
static _Atomic(uint64_t) g_calls_armed;
static _Atomic(uint64_t) g_calls_late;
static int g_pinned;

/* ---- the bodies ----------------------------------------------------------------------- */

static gc_inflight *inflight_claim(gc_state *st, uintptr_t self)
{
    for (int i = 0; i < GC_INFLIGHT; i++) {
        uintptr_t expect = 0;
        if (atomic_compare_exchange_strong_explicit(&st->inflight[i].owner, &expect, self, memory_order_acquire,
                                                    memory_order_relaxed))
            return &st->inflight[i];
    }
    return NULL;
}

static gc_inflight *inflight_find(gc_state *st, uintptr_t self)
{
    for (int i = 0; i < GC_INFLIGHT; i++)
        if (atomic_load_explicit(&st->inflight[i].owner, memory_order_acquire) == self) return &st->inflight[i];
    return NULL;
}

static void on_pre(gc_state *st, int collection)
{
    uint64_t t0 = st->host->now_ns();
    uintptr_t self = (uintptr_t)pthread_self();
    gc_inflight *f = inflight_find(st, self); /* a pre without post (unhooked mid-pause): reuse */
    if (!f) f = inflight_claim(st, self);
    if (!f) {
        atomic_fetch_add_explicit(&st->unpaired, 1, memory_order_relaxed);
        return;
    }
    f->start_ns = t0;
    f->requested = (uint32_t)collection;
    /* The stack first: it is what the user came for, and nothing below moves it. */
    int n = 0;
    if (st->depth > 0) {
        int want = (int)st->depth + 8;
        if (want > (int)(sizeof f->raw / sizeof f->raw[0])) want = (int)(sizeof f->raw / sizeof f->raw[0]);
        n = gc_backtrace(f->raw, want);
        if (n < 0) n = 0;
    }
    /* Cut the plugin's own frames (and anything above them, such as a sanitizer's
     * interceptor) off the top: the stack starts in the runtime that called us. */
    int skip = 0;
    for (int i = 0; i < n && i < 8; i++)
        if ((uintptr_t)f->raw[i] >= st->own_lo && (uintptr_t)f->raw[i] < st->own_hi) skip = i + 1;
    uint32_t keep = (uint32_t)(n - skip);
    if (keep > st->depth) keep = st->depth;
    if (skip > 0 && keep > 0) memmove(f->raw, f->raw + skip, keep * sizeof f->raw[0]);
    f->nips = keep;
    f->nsites = st->host->open_sites(f->sites, GC_MAX_SITES);
    f->live_before = gc_julia_live(&st->jl);
    f->total_before = gc_julia_total(&st->jl);
    uint64_t colls = 0;
    f->have_counts = gc_julia_counts(&st->jl, &colls, &f->full_before);
    f->os_tid = (uint64_t)syscall(SYS_gettid);
    f->pre_ns = st->host->now_ns() - t0;
}

static void on_post(gc_state *st, int collection)
{
    uint64_t t1 = st->host->now_ns();
    gc_inflight *f = inflight_find(st, (uintptr_t)pthread_self());
    if (!f) {
        atomic_fetch_add_explicit(&st->unpaired, 1, memory_order_relaxed);
        return;
    }
    if (f->nsites) {
        /* Into this thread's ring, ahead of the end of every span the pause stalled. */
        uint64_t dur = t1 > f->start_ns ? t1 - f->start_ns : 0;
        st->host->emit(st->t_stall, f->start_ns ? f->start_ns : 1, &dur, 1);
    }
    uint64_t ticket = 0;
    gc_pause *p = gc_queue_reserve(&st->q, &ticket);
    int64_t prev_total = atomic_load_explicit(&st->last_total, memory_order_relaxed);
    if (f->total_before >= 0) atomic_store_explicit(&st->last_total, f->total_before, memory_order_relaxed);
    if (!p) {
        atomic_fetch_add_explicit(&st->lost_full, 1, memory_order_relaxed);
        atomic_store_explicit(&f->owner, 0, memory_order_release);
        return;
    }
    p->start_ns = f->start_ns;
    p->end_ns = t1 > f->start_ns ? t1 : f->start_ns;
    p->requested = f->requested;
    (void)collection; /* Julia passes the same requested kind to both callbacks */
    int64_t live_after = gc_julia_live(&st->jl);
    /* Allocated since the previous collection began (the runtime's running total). */
    int64_t allocd = (f->total_before >= 0 && prev_total >= 0 && f->total_before > prev_total)
                         ? f->total_before - prev_total : 0;
    /* The runtime's own bookkeeping: live_after = live_before + allocated - freed. */
    int64_t freed = (f->live_before >= 0 && live_after >= 0) ? f->live_before + allocd - live_after : 0;
    p->allocd = (uint64_t)allocd;
    p->freed = freed > 0 ? (uint64_t)freed : 0;
    p->live_after = live_after > 0 ? (uint64_t)live_after : 0;
    uint64_t colls = 0, full_after = 0;
    /* A count, not a flag: on 1.5 GC.gc(true) recollects inside the same pause, and that
     * recollection is itself full when the heap asks for it — one pause, two full sweeps
     * (a flag undercounted gc_num().full_sweep by one per such pause). */
    uint64_t sweeps = (f->have_counts && gc_julia_counts(&st->jl, &colls, &full_after) && full_after > f->full_before)
                          ? full_after - f->full_before : 0;
    p->full = sweeps > UINT32_MAX ? UINT32_MAX : (uint32_t)sweeps;
    p->os_tid = f->os_tid;
    p->nips = f->nips;
    for (uint32_t i = 0; i < f->nips; i++) p->ips[i] = (uint64_t)(uintptr_t)f->raw[i];
    p->nsites = f->nsites;
    memcpy(p->sites, f->sites, f->nsites * sizeof p->sites[0]);
    p->plugin_ns = f->pre_ns + (st->host->now_ns() - t1);
    gc_queue_publish(&st->q, ticket);
    atomic_fetch_add_explicit(&st->seen, 1, memory_order_relaxed);
    atomic_store_explicit(&f->owner, 0, memory_order_release);
    /* The world runs again: have the plugin thread intern and emit the pause now, so it
     * is in the stack table before the binding's next symbolize. */
    gc_thread_wake(st);
}

/* ---- the entry points Julia calls ------------------------------------------------------- */

void gc_hook_pre(int collection)
{
    atomic_fetch_add(&g_active, 1);
    if (atomic_load(&g_armed)) {
        atomic_fetch_add_explicit(&g_calls_armed, 1, memory_order_relaxed);
        on_pre(&gc_g, collection);
    } else {
        atomic_fetch_add_explicit(&g_calls_late, 1, memory_order_relaxed);
    }
    atomic_fetch_sub(&g_active, 1);
}

void gc_hook_post(int collection)
{
    atomic_fetch_add(&g_active, 1);
    if (atomic_load(&g_armed)) {
        atomic_fetch_add_explicit(&g_calls_armed, 1, memory_order_relaxed);
        on_post(&gc_g, collection);
    } else {
        atomic_fetch_add_explicit(&g_calls_late, 1, memory_order_relaxed);
    }
    atomic_fetch_sub(&g_active, 1);
}

/* ---- registration ----------------------------------------------------------------------- */

/* Keep this library mapped for the rest of the process: Julia may still hold a pointer to
 * a callback (registration is not synchronised with a collection on another thread), and
 * the core dlcloses plugins at shutdown. */
static void pin_self(void)
{
    if (g_pinned) return;
    Dl_info info;
    if (dladdr((void *)(uintptr_t)&gc_hook_pre, &info) && info.dli_fname) {
        void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        if (h) {
            g_pinned = 1;
            dlclose(h); /* drops the extra reference; RTLD_NODELETE stays */
        }
    }
}

void gc_hooks_install(gc_state *st)
{
    if (atomic_load(&st->hooked)) return;
    pin_self();
    /* Pay the unwinder's one-time set-up here rather than inside the first pause. */
    if (st->depth > 0) {
        void *warm[GC_MAX_DEPTH];
        (void)gc_backtrace(warm, (int)(sizeof warm / sizeof warm[0]));
    }
    for (int i = 0; i < GC_INFLIGHT; i++) atomic_store(&st->inflight[i].owner, 0);
    atomic_store(&st->last_total, gc_julia_total(&st->jl));
    atomic_store(&g_armed, 1);
    st->jl.set_cb_pre(gc_hook_pre, 1);
    st->jl.set_cb_post(gc_hook_post, 1);
    atomic_store(&st->hooked, 1);
}

void gc_hooks_remove(gc_state *st)
{
    atomic_store(&g_armed, 0);
    if (atomic_exchange(&st->hooked, 0)) {
        st->jl.set_cb_pre(gc_hook_pre, 0);
        st->jl.set_cb_post(gc_hook_post, 0);
    }
    /* A body that counted itself active before the flag cleared finishes within
     * microseconds; give it up to a second, then go on (its writes go to storage that is
     * freed only at shutdown, after this). */
    struct timespec ts = {0, 100000};
    for (int i = 0; i < 10000 && atomic_load(&g_active) != 0; i++) nanosleep(&ts, NULL);
}

void gc_hooks_counts(uint64_t *armed, uint64_t *late)
{
    if (armed) *armed = atomic_load_explicit(&g_calls_armed, memory_order_relaxed);
    if (late) *late = atomic_load_explicit(&g_calls_late, memory_order_relaxed);
}

/* The address range of this library's code, so the plugin's frames can be cut from stacks. */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    gc_state *st = arg;
    uintptr_t me = (uintptr_t)&gc_hook_pre;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = (uintptr_t)(info->dlpi_addr + ph->p_vaddr), hi = lo + ph->p_memsz;
        if (me >= lo && me < hi) {
            st->own_lo = lo;
            st->own_hi = hi;
            return 1;
        }
    }
    return 0;
}

void gc_hooks_locate_self(gc_state *st)
{
    st->own_lo = st->own_hi = 0;
    dl_iterate_phdr(find_self, st);
}
