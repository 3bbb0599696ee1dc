/* Spans: begin/end on the hot path, exact per-site aggregates (calls, total, min, max,
 * bytes, errors, log histogram) kept per thread and summed on demand, and the sampling
 * policy that decides which spans also become events. */
#include <string.h>

#include "internal.h"

#define SUB (1u << JAGER_HIST_SUB_BITS)

/* Buckets: 0..3 hold 0..3 ns exactly; above, 4 buckets per power of two. */
uint32_t jg_hist_bucket(uint64_t ns)
{
    if (ns < SUB) return (uint32_t)ns;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(ns);
    uint32_t b = (e - 1u) * SUB + (uint32_t)((ns >> (e - JAGER_HIST_SUB_BITS)) & (SUB - 1u));
    return b < JAGER_HIST_BUCKETS ? b : JAGER_HIST_BUCKETS - 1u;
}

uint64_t jager_hist_bucket_lower_ns(uint32_t b)
{
    if (b >= JAGER_HIST_BUCKETS) return UINT64_MAX;
    if (b < SUB) return b;
    uint32_t e = b / SUB + 1u, sub = b % SUB;
    return (uint64_t)(SUB + sub) << (e - JAGER_HIST_SUB_BITS);
}

jager_span jager_span_begin(jager_site site)
{
    jager_span s = {0, 0, 0};
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire) || site == 0)) return s;
    const jg_site_info *si = jg_site_get(site);
    if (JG_UNLIKELY(!si || !atomic_load_explicit(&si->enabled, memory_order_relaxed))) return s;
    jg_tls *t = jg_tls_fast();
    if (JG_UNLIKELY(!t)) return s;
    uint32_t id = ++t->next_span;
    if (JG_UNLIKELY(id == 0)) id = ++t->next_span; /* 0 means "no parent" */
    uint32_t d = t->depth++;
    if (JG_LIKELY(d < JG_MAX_DEPTH)) {
        t->stack_id[d] = id;
        t->stack_site[d] = site;
    }
    s.site = site;
    s.id = id;
    s.start_ns = jg_now_ns();
    return s;
}

static inline int sample(jg_site_agg *a, uint64_t end)
{
    switch (jg_cfg.c.sample_mode) {
    case JAGER_SAMPLE_ALL: return 1;
    case JAGER_SAMPLE_ONE_IN_N: {
        uint64_t n = atomic_load_explicit(&a->sampled_at, memory_order_relaxed) + 1;
        int hit = n >= jg_cfg.c.sample_n;
        atomic_store_explicit(&a->sampled_at, hit ? 0 : n, memory_order_relaxed);
        return hit;
    }
    default: {
        uint64_t last = atomic_load_explicit(&a->sampled_at, memory_order_relaxed);
        if (last && end - last < jg_cfg.c.sample_interval_ns) return 0;
        atomic_store_explicit(&a->sampled_at, end, memory_order_relaxed);
        return 1;
    }
    }
}

static inline void span_end(jager_span span, uint64_t bytes)
{
    if (JG_UNLIKELY(span.site == 0 || !atomic_load_explicit(&jg_enabled, memory_order_acquire))) return;
    uint64_t end = jg_now_ns();
    jg_tls *t = jg_tls_ptr;
    /* A span begun in an earlier run (before a re-init) is not this run's. */
    if (JG_UNLIKELY(!t || t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed))) return;
    uint32_t parent = 0;
    if (JG_LIKELY(t->depth)) {
        uint32_t d = --t->depth;
        if (d) parent = t->stack_id[(d <= JG_MAX_DEPTH ? d : JG_MAX_DEPTH) - 1];
    }
    uint64_t dur = end - span.start_ns;
    jg_site_agg *a = jg_site_agg_fast(t, span.site);
    jg_bump(&t->spans_ended, 1);
    if (JG_LIKELY(a)) {
        jg_bump(&a->calls, 1);
        jg_bump(&a->total_ns, dur);
        if (bytes) jg_bump(&a->bytes, bytes);
        if (dur < atomic_load_explicit(&a->min_ns, memory_order_relaxed)) atomic_store_explicit(&a->min_ns, dur, memory_order_relaxed);
        if (dur > atomic_load_explicit(&a->max_ns, memory_order_relaxed)) atomic_store_explicit(&a->max_ns, dur, memory_order_relaxed);
        jg_bump(&a->hist[jg_hist_bucket(dur)], 1);
        if (!sample(a, end)) return;
    }
    if (JG_UNLIKELY(!t->ring)) {
        jg_bump(&t->no_ring_drops, 1);
        return;
    }
    jager_rec_span *r = jg_ring_reserve(t->ring, sizeof *r);
    if (JG_UNLIKELY(!r)) return;
    r->h.type = JAGER_EV_SPAN;
    r->h.words = sizeof *r / 8;
    r->h.aux = span.site;
    r->start_ns = span.start_ns;
    r->end_ns = end;
    r->span_id = span.id;
    r->parent_id = parent;
    r->bytes = bytes;
    jg_ring_commit(t->ring, sizeof *r);
}

void jager_span_end(jager_span span) { span_end(span, 0); }
void jager_span_end_bytes(jager_span span, uint64_t bytes) { span_end(span, bytes); }

/* ---- statistics ---- */
typedef struct stat_acc {
    jager_site site;
    jager_site_stat *out;
} stat_acc;

static void add_agg(jager_site_stat *o, jg_site_agg *a)
{
    if (!a) return;
    uint64_t calls = atomic_load_explicit(&a->calls, memory_order_relaxed);
    o->errors += atomic_load_explicit(&a->errors, memory_order_relaxed);
    if (!calls) return;
    o->calls += calls;
    o->total_ns += atomic_load_explicit(&a->total_ns, memory_order_relaxed);
    o->bytes += atomic_load_explicit(&a->bytes, memory_order_relaxed);
    uint64_t mn = atomic_load_explicit(&a->min_ns, memory_order_relaxed);
    uint64_t mx = atomic_load_explicit(&a->max_ns, memory_order_relaxed);
    if (mn < o->min_ns) o->min_ns = mn;
    if (mx > o->max_ns) o->max_ns = mx;
    for (int b = 0; b < JAGER_HIST_BUCKETS; b++) o->hist[b] += atomic_load_explicit(&a->hist[b], memory_order_relaxed);
}

static void add_thread(jg_tls *t, void *arg)
{
    stat_acc *acc = arg;
    uint32_t d = acc->site >> 14, m = (acc->site >> 6) & (JG_AGG_MID - 1);
    if (d >= JG_AGG_DIR) return;
    jg_agg_mid *mid = atomic_load_explicit(&t->agg_dir[d], memory_order_acquire);
    jg_site_agg *c = mid ? atomic_load_explicit(&(*mid)[m], memory_order_acquire) : NULL;
    if (c) add_agg(acc->out, &c[acc->site & (JG_SITE_CHUNK - 1)]);
}

static uint64_t percentile(const jager_site_stat *o, double q)
{
    if (!o->calls) return 0;
    uint64_t rank = (uint64_t)(q * (double)o->calls + 0.5);
    if (rank < 1) rank = 1;
    uint64_t cum = 0;
    for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++) {
        cum += o->hist[b];
        if (cum >= rank) {
            uint64_t lo = jager_hist_bucket_lower_ns(b);
            uint64_t hi = b + 1 < JAGER_HIST_BUCKETS ? jager_hist_bucket_lower_ns(b + 1) : lo * 2;
            uint64_t v = lo + (hi - lo) / 2; /* bucket midpoint: relative error ≤ 1/8 */
            if (v < o->min_ns) v = o->min_ns;
            if (v > o->max_ns) v = o->max_ns;
            return v;
        }
    }
    return o->max_ns;
}

jager_status jager_site_stats(jager_site site, jager_site_stat *out)
{
    if (!out || out->struct_size < sizeof(jager_site_stat))
        return jg_error(JAGER_E_INVALID, "jager_site_stats: out is NULL or struct_size too small");
    if (!jg_site_get(site)) return jg_error(JAGER_E_NOTFOUND, "jager_site_stats: unknown site %u", site);
    uint32_t size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
    out->site = site;
    out->min_ns = UINT64_MAX;
    stat_acc acc = {site, out};
    jg_rings_lock();
    add_agg(out, jg_retired_agg(site));
    jg_rings_unlock();
    jg_tls_foreach(add_thread, &acc);
    if (!out->calls) out->min_ns = 0;
    out->p50_ns = percentile(out, 0.50);
    out->p90_ns = percentile(out, 0.90);
    out->p99_ns = percentile(out, 0.99);
    return JAGER_OK;
}
