/* gc_drain.c — the side of the plugin that may lock and allocate: it takes finished
 * pauses off the queue, interns their stacks, emits gc.pause with the original times,
 * and adds each pause to the GC time of the sites open on the triggering thread.
 * Runs on the plugin thread (every interval), the collector thread (flush) and the
 * thread calling jager_shutdown (stop), serialised by drain_lock.
 *
 * Attribution: a stop-the-world pause stalls every thread, but the host tells only the
 * calling thread's open sites, and the pre callback runs on the triggering thread. So a
 * pause counts toward the sites open on the thread that triggered it (each site once per
 * pause, however deep it recurses: the time is inclusive). Spans of other threads that
 * overlapped the pause can be found from gc.pause times in the file. */
#include <stdlib.h>
#include <string.h>

#include "gc_internal.h"

/* Field order of gc.pause (see gc_plugin.c and docs/event-types.md). */
enum { P_DURATION, P_REQUESTED, P_FULL, P_ALLOCD, P_FREED, P_LIVE, P_STACK, P_OS_TID, P_PLUGIN_NS, P_SITE, P_NFIELDS };

static int site_slot(gc_state *st, jager_site site)
{
    if (site < st->nsites) return 1;
    uint32_t cap = st->nsites ? st->nsites : 64;
    while (cap <= site) {
        if (cap > (1u << 30)) return 0;
        cap *= 2;
    }
    gc_site_agg *n = realloc(st->sites, (size_t)cap * sizeof *n);
    if (!n) return 0;
    memset(n + st->nsites, 0, (size_t)(cap - st->nsites) * sizeof *n);
    st->sites = n;
    st->nsites = cap;
    return 1;
}

static void attribute(gc_state *st, const gc_pause *p, uint64_t dur)
{
    for (uint32_t i = 0; i < p->nsites; i++) {
        jager_site s = p->sites[i];
        int dup = 0;
        for (uint32_t j = 0; j < i && !dup; j++) dup = p->sites[j] == s;
        if (s == 0 || dup || !site_slot(st, s)) continue;
        st->sites[s].gc_ns += dur;
        st->sites[s].pauses++;
    }
}

void gc_drain(gc_state *st)
{
    pthread_mutex_lock(&st->drain_lock);
    uint64_t ticket;
    gc_pause *p;
    while ((p = gc_queue_peek(&st->q, &ticket)) != NULL) {
        uint64_t dur = p->end_ns - p->start_ns;
        uint64_t f[P_NFIELDS];
        f[P_DURATION] = dur;
        f[P_REQUESTED] = p->requested;
        f[P_FULL] = p->full;
        f[P_ALLOCD] = p->allocd;
        f[P_FREED] = p->freed;
        f[P_LIVE] = p->live_after;
        f[P_STACK] = p->nips ? st->host->stack_intern(p->ips, p->nips) : 0;
        f[P_OS_TID] = p->os_tid;
        f[P_PLUGIN_NS] = p->plugin_ns;
        f[P_SITE] = p->nsites ? p->sites[0] : 0;
        st->host->emit(st->t_pause, p->start_ns ? p->start_ns : 1, f, P_NFIELDS);
        attribute(st, p, dur);
        st->emitted++;
        st->total_gc_ns += dur;
        gc_queue_release(&st->q, ticket);
    }
    pthread_mutex_unlock(&st->drain_lock);
}

void gc_emit_site_times(gc_state *st)
{
    pthread_mutex_lock(&st->drain_lock);
    uint64_t now = st->host->now_ns();
    for (uint32_t s = 1; s < st->nsites; s++) {
        if (!st->sites[s].pauses) continue;
        uint64_t f[3] = {s, st->sites[s].gc_ns, st->sites[s].pauses};
        st->host->emit(st->t_site_time, now, f, 3);
    }
    pthread_mutex_unlock(&st->drain_lock);
}

void gc_sample(gc_state *st)
{
    uint64_t colls = 0, full = 0;
    if (!gc_julia_counts(&st->jl, &colls, &full)) colls = atomic_load_explicit(&st->seen, memory_order_relaxed);
    int64_t live = gc_julia_live(&st->jl), total = gc_julia_total(&st->jl);
    uint64_t f[5] = {
        live > 0 ? (uint64_t)live : 0,
        total > 0 ? (uint64_t)total : 0,
        colls,
        gc_rss_bytes(st->statm_fd),
        st->jl.total_hrtime ? st->jl.total_hrtime() : 0,
    };
    st->host->emit(st->t_sample, 0, f, 5);
}

void gc_site_get(gc_state *st, jager_site site, uint64_t *gc_ns, uint64_t *pauses)
{
    pthread_mutex_lock(&st->drain_lock);
    uint64_t ns = 0, n = 0;
    if (site < st->nsites) {
        ns = st->sites[site].gc_ns;
        n = st->sites[site].pauses;
    }
    pthread_mutex_unlock(&st->drain_lock);
    if (gc_ns) *gc_ns = ns;
    if (pauses) *pauses = n;
}

void gc_drain_free(gc_state *st)
{
    free(st->sites);
    st->sites = NULL;
    st->nsites = 0;
    st->emitted = st->total_gc_ns = 0;
}
