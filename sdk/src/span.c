/* Spans: begin/end on the hot path, exact per-site aggregates (calls, total, min, max,
 * bytes, errors, log histogram) kept per thread and summed on demand, and the sampling
 * policy that decides which spans also become events. */
#include <string.h>

#include "internal.h"

#define SUB (1u << JAGER_HIST_SUB_BITS)

#define JG_COLD __attribute__((noinline, cold))
#define JG_INLINE inline __attribute__((always_inline))

/* Buckets: 0..3 hold 0..3 ns exactly; above, 4 buckets per power of two. With s the
 * position of the top bit of (ns | 4) minus 2, bucket = 4·s + (ns >> s): ns >> s holds the
 * top bit (4) and the two bits below it, and for ns < 8 (s = 0) it is ns itself. */
static JG_INLINE uint32_t hist_bucket(uint64_t ns)
{
    uint32_t sh = 61u - (uint32_t)__builtin_clzll(ns | SUB);
    uint32_t b = sh * SUB + (uint32_t)(ns >> sh);
    return b < JAGER_HIST_BUCKETS ? b : JAGER_HIST_BUCKETS - 1u;
}

uint32_t jg_hist_bucket(uint64_t ns) { return hist_bucket(ns); }

uint64_t jager_hist_bucket_lower_ns(uint32_t b)
{
    if (b >= JAGER_HIST_BUCKETS) return UINT64_MAX;
    if (b < SUB) return b;
    uint32_t e = b / SUB + 1u, sub = b % SUB;
    return (uint64_t)(SUB + sub) << (e - JAGER_HIST_SUB_BITS);
}

/* The hot paths below are leaf functions: every rare case (thread state to create, a
 * clock_gettime clock, a site aggregate to allocate, no ring, a record that needs a pad or
 * finds the ring full) leaves by a tail call to a cold function, so the common path saves
 * no registers and sets up no frame. */

/* The site's filter verdict. jg_sites holds jg_site_info entries (a constant size, so no
 * multiply by elem_size), and site 0's verdict is always 0 (registry.c appends it zeroed
 * and never filters it), so one test also makes site 0 — and any unknown id — inert. */
static JG_INLINE int site_on(jager_site site)
{
    if (JG_UNLIKELY(site >= atomic_load_explicit(&jg_sites.count, memory_order_acquire))) return 0;
    /* Below count, the chunk is there: it is published before count and never freed. */
    const jg_site_info *chunk = atomic_load_explicit(&jg_sites.chunks[site >> JG_TABLE_CHUNK_BITS], memory_order_acquire);
    return atomic_load_explicit(&chunk[site & ((1u << JG_TABLE_CHUNK_BITS) - 1)].enabled, memory_order_relaxed) != 0;
}

/* Begin on an armed thread state: id, span stack; the stamp is the caller's. */
static JG_INLINE jager_span begin_on(jg_tls *t, jager_site site)
{
    jager_span s;
    uint32_t id = ++t->next_span;
    if (JG_UNLIKELY(id == 0)) id = ++t->next_span; /* 0 means "no parent" */
    uint32_t d = t->depth++;
    if (JG_LIKELY(d < JG_MAX_DEPTH)) {
        t->stack_id[d] = id;
        t->stack_site[d] = site;
    }
    s.site = site;
    s.id = id;
    s.start_ns = 0;
    return s;
}

/* The thread state needs creating or re-arming for this run. */
static JG_COLD jager_span begin_slow(jager_site site)
{
    jager_span s = {0, 0, 0};
    jg_tls *t = jg_tls_get();
    if (!t) return s;
    s = begin_on(t, site);
    s.start_ns = jg_stamp();
    return s;
}

/* The clock is clock_gettime (no invariant TSC). */
static JG_COLD jager_span begin_gettime(jager_span s)
{
    s.start_ns = jg_clock_gettime_ns();
    return s;
}

/* start_ns holds a stamp (jg_stamp), converted at the end: begin reads the clock and
 * nothing else. */
jager_span jager_span_begin(jager_site site)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire) || !site_on(site))) return (jager_span){0, 0, 0};
    jg_tls *t = jg_tls_ptr;
    if (JG_UNLIKELY(!t || t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed))) return begin_slow(site);
    jager_span s = begin_on(t, site);
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) {
        s.start_ns = __rdtsc();
        return s;
    }
#endif
    return begin_gettime(s);
}

static inline int sample(jg_site_agg *a, uint64_t end)
{
    switch (JG_CFG(sample_mode)) {
    case JAGER_SAMPLE_ALL: return 1;
    case JAGER_SAMPLE_ONE_IN_N: {
        uint64_t n = atomic_load_explicit(&a->sampled_at, memory_order_relaxed) + 1;
        int hit = n >= JG_CFG(sample_n);
        atomic_store_explicit(&a->sampled_at, hit ? 0 : n, memory_order_relaxed);
        return hit;
    }
    default: {
        uint64_t last = atomic_load_explicit(&a->sampled_at, memory_order_relaxed);
        if (last && end - last < JG_CFG(sample_interval_ns)) return 0;
        atomic_store_explicit(&a->sampled_at, end, memory_order_relaxed);
        return 1;
    }
    }
}

/* The exact aggregates; then whether the span also becomes an event. */
static JG_INLINE int agg_add(jg_site_agg *a, uint64_t dur, uint64_t bytes, uint64_t end)
{
    jg_bump(&a->calls, 1);
    jg_bump(&a->total_ns, dur);
    if (bytes) jg_bump(&a->bytes, bytes);
    if (dur < atomic_load_explicit(&a->min_ns, memory_order_relaxed)) atomic_store_explicit(&a->min_ns, dur, memory_order_relaxed);
    if (dur > atomic_load_explicit(&a->max_ns, memory_order_relaxed)) atomic_store_explicit(&a->max_ns, dur, memory_order_relaxed);
    jg_bump(&a->hist[hist_bucket(dur)], 1);
    return JG_LIKELY(JG_CFG(sample_mode) == JAGER_SAMPLE_ALL) || sample(a, end);
}

/* A span's site and id in one word (site low, id high), as jager_span holds them. */
#define SID(site, id) ((uint64_t)(site) | (uint64_t)(id) << 32)
#define SID_SITE(sid) ((jager_site)(sid))
#define SID_ID(sid) ((uint32_t)((sid) >> 32))

static JG_INLINE void rec_fill(jager_rec_span *r, uint64_t start, uint64_t end, uint64_t sid, uint32_t parent, uint64_t bytes)
{
    r->h.type = JAGER_EV_SPAN;
    r->h.words = sizeof *r / 8;
    r->h.aux = SID_SITE(sid);
    r->start_ns = start;
    r->end_ns = end;
    r->span_id = SID_ID(sid);
    r->parent_id = parent;
    r->bytes = bytes;
}

/* The record, the general way (no ring, pad, full ring, overwrite). */
static JG_COLD void record_slow(jg_tls *t, uint64_t start, uint64_t end, uint64_t sid, uint32_t parent, uint64_t bytes)
{
    if (JG_UNLIKELY(!t->ring)) {
        jg_bump(&t->no_ring_drops, 1);
        return;
    }
    jg_ring *ring = t->ring;
    jager_rec_span *r = jg_ring_reserve(ring, sizeof *r); /* also refreshes the fast path's fit_end */
    if (JG_LIKELY(r)) {
        rec_fill(r, start, end, sid, parent, bytes);
        jg_ring_commit(ring, sizeof *r);
    }
}

/* The site's aggregate slot is not allocated yet on this thread. */
static JG_COLD void finish_slow(jg_tls *t, uint64_t start, uint64_t end, uint64_t sid, uint32_t parent, uint64_t bytes)
{
    jg_site_agg *a = jg_tls_site_agg(t, SID_SITE(sid));
    if (JG_LIKELY(a)) {
        if (!agg_add(a, end - start, bytes, end)) return;
    } else {
        jg_bump(&t->spans_ended, 1); /* still counted in spans_total */
    }
    record_slow(t, start, end, sid, parent, bytes);
}

/* A span ends that is not the innermost open one: spans opened after it are still open
 * (another Julia task's or coroutine's spans interleaved on this thread, or regions that
 * overlap on purpose). Its entry is taken out of the middle of the stack, so those keep
 * theirs and their own ends find them; its parent is the entry below it. \p d is the top
 * (below JG_MAX_DEPTH); returns the span's depth, or \p d when it is not on the stack
 * (begun beyond JG_MAX_DEPTH), which ends the top entry as before. */
static JG_COLD uint32_t unstack_inner(jg_tls *t, uint32_t d, uint32_t id)
{
    uint32_t k = d;
    while (k > 0 && t->stack_id[k - 1] != id) k--;
    if (k == 0) return d;
    k--;
    memmove(&t->stack_id[k], &t->stack_id[k + 1], (d - k) * sizeof t->stack_id[0]);
    memmove(&t->stack_site[k], &t->stack_site[k + 1], (d - k) * sizeof t->stack_site[0]);
    return k;
}

/* The end of the span (stamp \p t0, site and id in \p sid) at stamp \p t1; \p tsc says
 * whether stamps are TSC ticks (else ns). */
static JG_INLINE void span_end_at(uint64_t t0, uint64_t sid, uint64_t bytes, uint64_t t1, int tsc)
{
    jg_tls *t = jg_tls_ptr;
    /* A span begun in an earlier run (before a re-init) is not this run's. */
    if (JG_UNLIKELY(!t || t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed))) return;
    uint32_t parent = 0, d = JG_MAX_DEPTH; /* d: this span's depth, where it is cached */
    if (JG_LIKELY(t->depth)) {
        d = --t->depth;
        if (JG_UNLIKELY(d < JG_MAX_DEPTH && t->stack_id[d] != SID_ID(sid))) d = unstack_inner(t, d, SID_ID(sid));
        if (d) parent = t->stack_id[(d <= JG_MAX_DEPTH ? d : JG_MAX_DEPTH) - 1];
    }
    /* One conversion: start, then the duration from the tick delta (a stamp from a core
     * whose clock trails this one's counts as no time). */
    uint64_t start, dur;
#if defined(__x86_64__)
    if (tsc) {
        start = jg_tsc_to_ns(t0);
        dur = t1 > t0 ? jg_ticks_to_ns(t1 - t0) : 0;
    } else
#endif
    {
        (void)tsc;
        start = t0;
        dur = t1 > t0 ? t1 - t0 : 0;
    }
    uint64_t end = start + dur;

    /* The aggregate slot: the one the last span at this depth used when it is this site's
     * (slots live as long as the thread), else two dependent loads. */
    jager_site site = SID_SITE(sid);
    jg_site_agg *a;
    if (JG_LIKELY(d < JG_MAX_DEPTH && t->agg_site[d] == site)) {
        a = t->agg_at[d];
    } else {
        /* jg_agg_find()'s walk, each miss leaving by its own tail call (fewer registers live) */
        uint32_t di = jg_agg_dir_of(site);
        if (JG_UNLIKELY(di >= JG_AGG_DIR)) return finish_slow(t, start, end, sid, parent, bytes);
        jg_agg_mid *mid = atomic_load_explicit(&t->agg_dir[di], memory_order_acquire);
        if (JG_UNLIKELY(!mid)) return finish_slow(t, start, end, sid, parent, bytes);
        jg_site_agg *c = atomic_load_explicit(&(*mid)[jg_agg_mid_of(site)], memory_order_acquire);
        if (JG_UNLIKELY(!c)) return finish_slow(t, start, end, sid, parent, bytes);
        a = &c[jg_agg_slot_of(site)];
        if (d < JG_MAX_DEPTH) {
            t->agg_site[d] = site;
            t->agg_at[d] = a;
        }
    }
    if (!agg_add(a, dur, bytes, end)) return;

    /* The record. Rings are at least 4 KiB, so a span record is never too large for one;
     * the fast way needs no pad before it and free space by the cached tail (ring.h). */
    jg_ring *r = t->ring;
    if (JG_UNLIKELY(!r)) return record_slow(t, start, end, sid, parent, bytes);
    uint64_t pos = r->head_local;
    if (JG_UNLIKELY(!jg_ring_fast_fits(r, pos, sizeof(jager_rec_span)))) return record_slow(t, start, end, sid, parent, bytes);
    uint8_t *slot = jg_ring_fast_claim(r, pos);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The same jager_rec_span, as five 8-byte stores. */
    uint64_t *w = (uint64_t *)(void *)slot;
    w[0] = JAGER_EV_SPAN | (uint64_t)(sizeof(jager_rec_span) / 8) << 16 | (uint64_t)site << 32;
    w[1] = start;
    w[2] = end;
    w[3] = SID_ID(sid) | (uint64_t)parent << 32;
    w[4] = bytes;
#else
    rec_fill((jager_rec_span *)(void *)slot, start, end, sid, parent, bytes);
#endif
    jg_ring_publish(r, pos + sizeof(jager_rec_span));
}

/* The clock is clock_gettime (stamps are ns). */
static JG_COLD void span_end_gettime(uint64_t t0, uint64_t sid, uint64_t bytes)
{
    span_end_at(t0, sid, bytes, jg_clock_gettime_ns(), 0);
}

static JG_INLINE void span_end(jager_span span, uint64_t bytes)
{
    if (JG_UNLIKELY(span.site == 0 || !atomic_load_explicit(&jg_enabled, memory_order_acquire))) return;
    uint64_t sid = SID(span.site, span.id);
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) {
        span_end_at(span.start_ns, sid, bytes, __rdtsc(), 1);
        return;
    }
#endif
    span_end_gettime(span.start_ns, sid, bytes);
}

void jager_span_end(jager_span span) { span_end(span, 0); }

/* The host API's span_end_ns: the end stamp is a jager_now_ns() value the caller took
 * earlier (a runtime that reports an end late, e.g. an OpenMP worker's join barrier at
 * the next fork). An end before the start counts as no time. */
void jg_span_end_ns(jager_span span, uint64_t end_ns)
{
    if (JG_UNLIKELY(span.site == 0 || !atomic_load_explicit(&jg_enabled, memory_order_acquire))) return;
    uint64_t t0 = span.start_ns;
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) t0 = jg_tsc_to_ns(t0);
#endif
    span_end_at(t0, SID(span.site, span.id), 0, end_ns, 0);
}
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
    add_agg(acc->out, jg_agg_find(t->agg_dir, acc->site));
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
