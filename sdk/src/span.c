/* Spans: begin/end on the hot path, exact per-site aggregates (calls, total, min, max,
 * bytes, errors, log histogram) kept per thread and summed on demand, and the sampling
 * policy that decides which spans also become events. */
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "internal.h"

#define SUB (1u << JAGER_HIST_SUB_BITS)

/* A span's site and id in one word (site low, id high), as jager_span holds them. */
#define SID(site, id) ((uint64_t)(site) | (uint64_t)(id) << 32)
#define SID_SITE(sid) ((jager_site)(sid))
#define SID_ID(sid) ((uint32_t)((sid) >> 32))

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

/* The site's state: JG_SITE_OFF (filtered out), JG_SITE_ON or JG_SITE_HOOKED, one byte of
 * jg_site_state; site 0's state is always JG_SITE_OFF (registry.c never writes it), as is
 * every id not registered, so one test also makes site 0 — and any unknown id — inert. */
static JG_INLINE uint32_t site_state(jager_site site)
{
    if (JG_UNLIKELY(site >= JG_SITE_MAX)) return JG_SITE_OFF;
    return atomic_load_explicit(&jg_site_state[site], memory_order_acquire);
}

/* Recording, and the thread state \p t armed for this run (jg_live_generation). */
static JG_INLINE int tls_live(const jg_tls *t)
{
    return t && t->generation == atomic_load_explicit(&jg_live_generation, memory_order_acquire);
}

/* A span's site and id in one word (site low, id high), as jager_span holds them. */
#define SID(site, id) ((uint64_t)(site) | (uint64_t)(id) << 32)
#define SID_SITE(sid) ((jager_site)(sid))
#define SID_ID(sid) ((uint32_t)((sid) >> 32))

/* A span opened deeper than JG_MAX_DEPTH: onto the overflow stack, grown (doubled) when
 * full. Without memory for it the span and every one above it are off the stack (their
 * parents are unknown: deep_hole) until the stack is back below it. */
static JG_COLD void push_deep(jg_tls *t, uint32_t d, uint64_t sid)
{
    if (t->deep_hole) return;
    uint32_t i = d - JG_MAX_DEPTH;
    if (i >= t->deep_cap) {
        size_t cap = t->deep_cap; /* the new entries come zeroed: no cache yet */
        jg_deep_entry *g = i < UINT32_MAX / 2 ? jg_grow(t->deep, &cap, (size_t)i + 1, sizeof *g, 64) : NULL;
        if (!g) {
            t->deep_hole = d + 1;
            return;
        }
        t->deep = g;
        t->deep_cap = (uint32_t)cap;
    }
    jg_deep_entry *e = &t->deep[i];
    e->sid = sid;
    e->task = t->task;
    e->node_id = 0; /* the entry's cache stays: it is keyed by site and parent span */
}

/* Begin on an armed thread state: id, span stack; the stamp is the caller's. */
static JG_INLINE jager_span begin_on(jg_tls *t, jager_site site)
{
    jager_span s;
    uint32_t id = ++t->next_span;
    if (JG_UNLIKELY(id == 0)) id = ++t->next_span; /* 0 means "no parent" */
    uint32_t d = t->depth++;
    if (JG_LIKELY(d < JG_MAX_DEPTH)) {
        t->stack_sid[d] = SID(site, id);
        t->stack_task[d] = t->task;
    } else {
        push_deep(t, d, SID(site, id));
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

/* Deeper than JG_MAX_DEPTH: the overflow stack (begin's fast path stays a leaf). */
static JG_COLD jager_span begin_deep(jg_tls *t, jager_site site)
{
    jager_span s = begin_on(t, site);
    s.start_ns = jg_stamp();
    return s;
}

/* The clock is clock_gettime (no invariant TSC). */
static JG_COLD jager_span begin_gettime(jager_span s)
{
    s.start_ns = jg_clock_gettime_ns();
    return s;
}

/* ---- span hooks (host->span_hook_add): sites some plugin hooks take these cold ways ----
 * A hooked site's state is JG_SITE_HOOKED, so its begin leaves the fast path by the same
 * compare that tells an enabled site from a filtered one (no extra instruction for other
 * sites). Its end must leave the fast path too, without a test there: the begin clears
 * the end cache entry its end will look up, and a hooked span's end never fills it, so
 * the end always misses into finish_miss/finish_slow, which look the span up in the
 * thread's list of hooked open spans (only when that list is not empty). */

/* Drop entries whose span is no longer open on this thread (ended on another thread). */
static JG_COLD void hooked_compact(jg_tls *t)
{
    uint32_t depth = t->depth, k = 0;
    for (uint32_t i = 0; i < t->nhooked; i++) {
        uint32_t d = 0;
        while (d < depth && !(jg_stack_has(t, d) && jg_stack_id(t, d) == t->hooked[i].id)) d++;
        if (d < depth) t->hooked[k++] = t->hooked[i];
    }
    t->nhooked = k;
}

static JG_COLD jager_span begin_other(jager_site site, uint32_t state)
{
    jager_span s = {0, 0, 0};
    if (state == JG_SITE_OFF) return s;
    jg_tls *t = jg_tls_ptr;
    if (!t || t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed)) t = jg_tls_get();
    if (!t) return s;
    uint32_t d = t->depth;
    s = begin_on(t, site);
    uint64_t mask = 0;
    const jg_site_info *si = jg_site_get(site);
    if (si && !t->in_hook) mask = atomic_load_explicit(&si->hooks, memory_order_relaxed);
    if (mask && t->nhooked == JG_HOOKED_OPEN) hooked_compact(t);
    if (mask && t->nhooked < JG_HOOKED_OPEN) {
        if (d < JG_MAX_DEPTH) t->end_cache[d][site & (JG_END_WAYS - 1)].site = 0; /* its end misses the cache */
        t->hooked[t->nhooked++] = (jg_hooked_span){s.id, site, mask};
        jager_span_event ev = {sizeof ev, site, s.id, d && jg_stack_has(t, d - 1) ? jg_stack_id(t, d - 1) : 0,
                               t->thread, d, jg_now_ns(), 0};
        t->in_hook++;
        jg_span_hooks_call(mask, 0, &ev);
        t->in_hook--;
    }
    s.start_ns = jg_stamp(); /* after the hooks: their time is not the span's */
    return s;
}

/* If span \p id of \p t is a hooked one, take it off the list and return its hook mask. */
static JG_COLD uint64_t hooked_take(jg_tls *t, uint32_t id)
{
    for (uint32_t i = t->nhooked; i-- > 0;) {
        if (t->hooked[i].id != id) continue;
        uint64_t mask = t->hooked[i].mask;
        t->hooked[i] = t->hooked[--t->nhooked];
        return mask;
    }
    return 0;
}

static JG_COLD void hooked_end(jg_tls *t, uint64_t mask, uint32_t d, uint64_t start, uint64_t end, uint64_t sid,
                               uint32_t parent)
{
    jager_span_event ev = {sizeof ev, SID_SITE(sid), SID_ID(sid), parent, t->thread, d != JG_DEPTH_UNKNOWN ? d : t->depth,
                           end, end - start};
    t->in_hook++;
    jg_span_hooks_call(mask, 1, &ev);
    t->in_hook--;
}

/* Not recording, or the thread state needs creating or re-arming for this run: the checks
 * in full. */
static JG_COLD jager_span begin_cold(jager_site site)
{
    if (!atomic_load_explicit(&jg_enabled, memory_order_acquire)) return (jager_span){0, 0, 0};
    uint32_t state = site_state(site);
    if (state != JG_SITE_ON) return begin_other(site, state);
    return begin_slow(site);
}

/* start_ns holds a stamp (jg_stamp), converted at the end: begin reads the clock and
 * nothing else. */
jager_span jager_span_begin(jager_site site)
{
    jg_tls *t = jg_tls_ptr;
    if (JG_UNLIKELY(!tls_live(t))) return begin_cold(site);
    uint32_t state = site_state(site);
    if (JG_UNLIKELY(state != JG_SITE_ON)) return begin_other(site, state);
    if (JG_UNLIKELY(t->depth >= JG_MAX_DEPTH)) return begin_deep(t, site);
    jager_span s = begin_on(t, site);
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) {
        s.start_ns = __rdtsc();
        return s;
    }
#endif
    return begin_gettime(s);
}

/* JAGER_SAMPLE_AUTO (budget sample_n spans per window of sample_interval_ns, per site and
 * thread): a site records every span until it passes the budget in a window; from then on
 * it is hot and keeps only the first span of each window, until a window in which it emits
 * no more than the budget again (or a whole window passes without a span). auto_state
 * holds the site's call count when the window began (calls counts every span already), and
 * hot_until the hot window's end as a stamp, so a hot site's thinned span costs one load, a
 * compare and the thinned count: no store to the sampling state, no clock conversion. */
#define AUTO_HOT (1ull << 63)

/* A time in ns as a stamp (jg_stamp's domain): TSC ticks, inverting jg_tsc_to_ns to within a
 * tick, or ns itself. For the window of a hot site only (a policy, not a measurement). */
static uint64_t ns_to_stamp(uint64_t ns)
{
#if defined(__x86_64__)
    if (jg_clock_state.use_tsc && jg_clock_state.mult) {
        if (ns <= jg_clock_state.ns0) return jg_clock_state.tsc0;
        return jg_clock_state.tsc0 + (uint64_t)(((unsigned __int128)(ns - jg_clock_state.ns0) << 32) / jg_clock_state.mult);
    }
#endif
    return ns;
}

/* The site is hot in the window that began at \p w (ns), or not (\p hot 0). */
static void auto_set_hot(jg_site_agg *a, uint64_t w, int hot)
{
    atomic_store_explicit(&a->hot_until, hot ? ns_to_stamp(w + JG_CFG(sample_interval_ns)) : 0, memory_order_relaxed);
}

static inline int sample_auto(jg_site_agg *a, uint64_t end)
{
    uint64_t w = atomic_load_explicit(&a->sampled_at, memory_order_relaxed);
    uint64_t st = atomic_load_explicit(&a->auto_state, memory_order_relaxed);
    uint64_t iv = JG_CFG(sample_interval_ns);
    if (JG_LIKELY(w && end - w < iv)) {
        if (st & AUTO_HOT) return 0;
        /* spans of this window so far, this one included; past the budget, the site is
         * hot from now on (finish then thins it inline) */
        if (atomic_load_explicit(&a->calls, memory_order_relaxed) - st <= JG_CFG(sample_n)) return 1;
        atomic_store_explicit(&a->auto_state, st | AUTO_HOT, memory_order_relaxed);
        auto_set_hot(a, w, 1);
        return 0;
    }
    /* A new window, whose first span is always kept; the last one had n spans. */
    uint64_t calls = atomic_load_explicit(&a->calls, memory_order_relaxed);
    uint64_t n = calls - 1 - (st & ~AUTO_HOT);
    uint64_t hot = w && n > JG_CFG(sample_n) && end - w < 2 * iv ? AUTO_HOT : 0;
    atomic_store_explicit(&a->sampled_at, end, memory_order_relaxed);
    atomic_store_explicit(&a->auto_state, (calls - 1) | hot, memory_order_relaxed);
    auto_set_hot(a, end, hot != 0);
    return 1;
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
    case JAGER_SAMPLE_AUTO: return sample_auto(a, end);
    default: {
        uint64_t last = atomic_load_explicit(&a->sampled_at, memory_order_relaxed);
        if (last && end - last < JG_CFG(sample_interval_ns)) return 0;
        atomic_store_explicit(&a->sampled_at, end, memory_order_relaxed);
        return 1;
    }
    }
}

/* Not sampled: thinned on purpose, counted per site apart from drops. */
static JG_COLD int thin(jg_site_agg *a)
{
    jg_bump(&a->thinned, 1);
    return 0;
}

/* The exact aggregates, whether or not the span becomes an event. */
static JG_INLINE void agg_add(jg_site_agg *a, uint64_t dur, uint64_t bytes)
{
    jg_bump(&a->calls, 1);
    jg_bump(&a->total_ns, dur);
    if (bytes) jg_bump(&a->bytes, bytes);
    if (dur < atomic_load_explicit(&a->min_ns, memory_order_relaxed)) atomic_store_explicit(&a->min_ns, dur, memory_order_relaxed);
    if (dur > atomic_load_explicit(&a->max_ns, memory_order_relaxed)) atomic_store_explicit(&a->max_ns, dur, memory_order_relaxed);
    jg_bump(&a->hist[hist_bucket(dur)], 1);
}

/* A hot site inside its window (JAGER_SAMPLE_AUTO), judged by the span's end in ns: the
 * way of the callers whose stamp is not in hot_until's domain (finish's fast way compares
 * the start stamp with hot_until). */
static JG_INLINE int auto_hot(const jg_site_agg *a, uint32_t mode, uint64_t end)
{
    uint64_t w = atomic_load_explicit(&a->sampled_at, memory_order_relaxed);
    return mode == JAGER_SAMPLE_AUTO && (atomic_load_explicit(&a->auto_state, memory_order_relaxed) & AUTO_HOT) && w &&
           end - w < JG_CFG(sample_interval_ns);
}

/* After agg_add: whether the span also becomes an event (a thinned one is counted). */
static JG_INLINE int keep_event(jg_site_agg *a, uint64_t end)
{
    uint32_t mode = JG_CFG(sample_mode);
    if (JG_LIKELY(mode == JAGER_SAMPLE_ALL)) return 1;
    if (auto_hot(a, mode, end)) {
        jg_bump(&a->thinned, 1);
        return 0;
    }
    return sample(a, end) ? 1 : thin(a);
}

/* A start stamp to ns: TSC ticks when \p tsc. */
static JG_INLINE uint64_t stamp_ns(uint64_t stamp, int tsc)
{
#if defined(__x86_64__)
    if (tsc) return jg_tsc_to_ns(stamp);
#endif
    (void)tsc;
    return stamp;
}

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

/* The record, the general way (no ring, pad, full ring, overwrite); a drop also counts
 * in the site's aggregate, t->slow_agg (NULL when it could not be allocated). */
static JG_COLD void record_slow(jg_tls *t, uint64_t start, uint64_t end, uint64_t sid, uint32_t parent, uint64_t bytes)
{
    jg_site_agg *a = t->slow_agg;
    if (JG_UNLIKELY(!t->ring)) {
        jg_bump(&t->no_ring_drops, 1);
        if (a) jg_bump(&a->dropped, 1);
        return;
    }
    jg_ring *ring = t->ring;
    jager_rec_span *r = jg_ring_reserve(ring, sizeof *r); /* also refreshes the fast path's fit_end */
    if (JG_LIKELY(r)) {
        rec_fill(r, start, end, sid, parent, bytes);
        jg_ring_commit(ring, sizeof *r);
    } else if (a) {
        jg_bump(&a->dropped, 1);
    }
}

/* record_slow for a span whose start is still a stamp (TSC ticks when \p tsc). */
static JG_COLD void record_slow_stamp(jg_tls *t, uint64_t stamp, uint64_t dur, uint64_t sid, uint64_t parent_tsc,
                                      uint64_t bytes)
{
    uint64_t start = stamp_ns(stamp, (int)(parent_tsc >> 32));
    record_slow(t, start, start + dur, sid, (uint32_t)parent_tsc, bytes);
}

/* The exact per-call-path aggregate (paths.c), counted whether or not the span becomes
 * an event. */
static JG_INLINE void path_add(jg_path *n, uint64_t dur, uint64_t bytes)
{
    jg_bump(&n->calls, 1);
    jg_bump(&n->total_ns, dur);
    if (bytes) jg_bump(&n->bytes, bytes);
}

/* The depth's cache missed (another site or another parent at this depth, or the site's
 * aggregate slot is not allocated yet on this thread), or the span is deeper than the
 * cache: find both, cache them (\p cache), then the general way. \p d is the span's depth
 * (JG_DEPTH_UNKNOWN: its parent is unknown). */
static JG_COLD void finish_general(jg_tls *t, uint32_t d, uint64_t start, uint64_t end, uint64_t sid, uint32_t parent,
                                   uint64_t bytes, int cache)
{
    jager_site site = SID_SITE(sid);
    jg_path *n = jg_path_resolve(t, d, site, parent);
    path_add(n, end - start, bytes);
    jg_site_agg *a = jg_site_agg_fast(t, site);
    t->slow_agg = a;
    if (JG_LIKELY(a)) {
        if (cache && d < JG_MAX_DEPTH) t->end_cache[d][site & (JG_END_WAYS - 1)] = (jg_end_cache){site, parent, a, n};
        else if (cache && d != JG_DEPTH_UNKNOWN && t->paths) t->deep[d - JG_MAX_DEPTH].cache = (jg_end_cache){site, parent, a, n};
        agg_add(a, end - start, bytes);
        if (!keep_event(a, end)) return;
    } else {
        jg_bump(&t->spans_ended, 1); /* still counted in spans_total */
    }
    record_slow(t, start, end, sid, parent, bytes);
}

/* A hooked span ends (its end never hits the cache): recorded without caching, then its
 * hooks are told. */
static JG_COLD void finish_hooked(jg_tls *t, uint64_t mask, uint32_t d, uint64_t start, uint64_t end, uint64_t sid,
                                  uint32_t parent, uint64_t bytes)
{
    finish_general(t, d, start, end, sid, parent, bytes, 0);
    hooked_end(t, mask, d, start, end, sid, parent);
}

static JG_COLD void finish_slow(jg_tls *t, uint32_t d, uint64_t start, uint64_t end, uint64_t sid, uint32_t parent,
                                uint64_t bytes)
{
    uint64_t mask;
    if (JG_UNLIKELY(t->nhooked) && (mask = hooked_take(t, SID_ID(sid))))
        return finish_hooked(t, mask, d, start, end, sid, parent, bytes);
    finish_general(t, d, start, end, sid, parent, bytes, 1);
}

/* The record, the fast way when it fits. Rings are at least 4 KiB, so a span record is
 * never too large for one; the fast way needs no pad before it and free space by the
 * cached tail (ring.h). */
static JG_INLINE void record(jg_tls *t, jg_site_agg *a, uint64_t stamp, uint64_t dur, uint64_t sid, uint32_t parent,
                             uint64_t bytes, int tsc)
{
    jg_ring *r = t->ring;
    if (JG_UNLIKELY(!r)) {
        t->slow_agg = a;
        return record_slow_stamp(t, stamp, dur, sid, parent | (uint64_t)(tsc != 0) << 32, bytes);
    }
    uint64_t pos = r->head_local;
    if (JG_UNLIKELY(!jg_ring_fast_fits(r, pos, sizeof(jager_rec_span)))) {
        /* A full ring drops here, on the thread's own counters (ring.h: drop_left). */
        if (jg_ring_fast_drop(r)) {
            jg_bump(&a->dropped, 1);
            return;
        }
        t->slow_agg = a;
        return record_slow_stamp(t, stamp, dur, sid, parent | (uint64_t)(tsc != 0) << 32, bytes);
    }
    uint8_t *slot = jg_ring_fast_claim(r, pos);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* A jager_rec_span as five 8-byte stores; with a TSC stamp it is a JG_EV_SPAN_TSC, which
     * the collector's drain converts (the start to ns, the end from the duration). */
    uint64_t *w = (uint64_t *)(void *)slot;
    w[0] = (tsc ? JG_EV_SPAN_TSC : JAGER_EV_SPAN) | (uint64_t)(sizeof(jager_rec_span) / 8) << 16 |
           (uint64_t)SID_SITE(sid) << 32;
    w[1] = stamp;
    w[2] = tsc ? dur : stamp + dur;
    w[3] = SID_ID(sid) | (uint64_t)parent << 32;
    w[4] = bytes;
#else
    (void)tsc;
    rec_fill((jager_rec_span *)(void *)slot, stamp, stamp + dur, sid, parent, bytes);
#endif
    jg_ring_publish(r, pos + sizeof(jager_rec_span));
}

/* Sampling is on (not JAGER_SAMPLE_ALL) and the site is not hot inside its window: the
 * sampling decision, then the record; t->slow_bytes holds the span's bytes. A function of
 * its own so the fast path's calls are all tail calls (it saves no registers); not cold:
 * under the default (auto) every span of a site below its budget comes here. */
static __attribute__((noinline)) void finish_sampled(jg_tls *t, jg_site_agg *a, uint64_t start, uint64_t end, uint64_t sid,
                                                     uint32_t parent)
{
    if (!sample(a, end)) {
        thin(a);
        return;
    }
    record(t, a, start, end - start, sid, parent, t->slow_bytes, 0);
}

/* The aggregates, then the record. \p stamp is the span's start stamp (TSC ticks when \p
 * tsc, else ns) and \p dur its duration in ns: in the default mode's thinned path and in
 * JAGER_SAMPLE_ALL's record, the start needs no conversion on this thread. */
static JG_INLINE void finish(jg_tls *t, jg_site_agg *a, jg_path *n, uint64_t stamp, uint64_t dur, uint64_t sid,
                             uint32_t parent, uint64_t bytes, int tsc)
{
    path_add(n, dur, bytes);
    agg_add(a, dur, bytes);
    uint32_t mode = JG_CFG(sample_mode);
    if (JG_UNLIKELY(mode != JAGER_SAMPLE_ALL)) {
        /* A hot site inside its window (hot_until is set under JAGER_SAMPLE_AUTO only): one
         * compare of the start stamp, when it is in hot_until's domain. */
        if ((tsc || !jg_clock_state.use_tsc) && stamp < atomic_load_explicit(&a->hot_until, memory_order_relaxed)) {
            jg_bump(&a->thinned, 1);
            return;
        }
        uint64_t start = stamp_ns(stamp, tsc), end = start + dur;
        if (auto_hot(a, mode, end)) {
            jg_bump(&a->thinned, 1);
            return;
        }
        t->slow_bytes = bytes;
        return finish_sampled(t, a, start, end, sid, parent);
    }
    record(t, a, stamp, dur, sid, parent, bytes, tsc);
}

/* The depth's cache missed (another parent, or a site sharing the way): when the site's
 * slot exists, the slot by two dependent loads and the path by the parent's cached node and
 * one hash probe (paths.c), both cached; the record the fast way. Not cold: siblings that
 * share a way and take turns come here on every span. */
static __attribute__((noinline)) void finish_miss(jg_tls *t, uint64_t d_parent, uint64_t stamp, uint64_t dur,
                                                  uint64_t sid, uint64_t bytes)
{
    /* depth in bits 0..30, whether the stamp is TSC ticks in bit 31, parent high: six
     * arguments, so the fast path's call is a tail call */
    uint32_t d = (uint32_t)d_parent & 0x7fffffffu, parent = (uint32_t)(d_parent >> 32);
    int tsc = (int)(d_parent >> 31) & 1;
    jager_site site = SID_SITE(sid);
    uint64_t mask;
    if (JG_UNLIKELY(t->nhooked) && (mask = hooked_take(t, SID_ID(sid)))) {
        uint64_t start = stamp_ns(stamp, tsc);
        return finish_hooked(t, mask, d, start, start + dur, sid, parent, bytes);
    }
    jg_site_agg *a = t->paths ? jg_agg_find(t->agg_dir, site) : NULL;
    if (JG_UNLIKELY(!a)) {
        uint64_t start = stamp_ns(stamp, tsc);
        return finish_slow(t, d, start, start + dur, sid, parent, bytes);
    }
    jg_path *n = jg_path_resolve(t, d, site, parent);
    t->end_cache[d][site & (JG_END_WAYS - 1)] = (jg_end_cache){site, parent, a, n};
    finish(t, a, n, stamp, dur, sid, parent, bytes, tsc);
}

/* The stamps to ns: start, then the duration from the tick delta (a stamp from a core
 * whose clock trails this one's counts as no time); \p tsc says whether they are ticks. */
static JG_INLINE void span_times(uint64_t t0, uint64_t t1, int tsc, uint64_t *start, uint64_t *end)
{
    uint64_t dur;
#if defined(__x86_64__)
    if (tsc) {
        *start = jg_tsc_to_ns(t0);
        dur = t1 > t0 ? jg_ticks_to_ns(t1 - t0) : 0;
    } else
#endif
    {
        (void)tsc;
        *start = t0;
        dur = t1 > t0 ? t1 - t0 : 0;
    }
    *end = *start + dur;
}

/* Take the open span at depth \p k out of the stack of \p depth entries: those above it
 * move down one, their path nodes with them (their paths do not change). */
static void unstack_at(jg_tls *t, uint32_t k, uint32_t depth)
{
    uint32_t stored = t->deep_hole ? t->deep_hole - 1 : depth; /* entries 0 … stored−1 are on the stack */
    for (uint32_t i = k; i + 1 < stored; i++) {
        if (i + 1 < JG_MAX_DEPTH) {
            t->stack_sid[i] = t->stack_sid[i + 1];
            t->stack_task[i] = t->stack_task[i + 1];
            t->stack_node[i] = t->stack_node[i + 1];
            t->stack_node_id[i] = t->stack_node_id[i + 1];
        } else if (i < JG_MAX_DEPTH) {
            const jg_deep_entry *e = &t->deep[0];
            t->stack_sid[i] = e->sid;
            t->stack_task[i] = e->task;
            t->stack_node[i] = e->node;
            t->stack_node_id[i] = e->node_id;
        } else {
            t->deep[i - JG_MAX_DEPTH] = t->deep[i + 1 - JG_MAX_DEPTH];
        }
    }
    if (t->deep_hole) t->deep_hole--; /* the first span off the stack is one lower now */
    t->depth = depth - 1;
    if (t->deep_hole && t->depth + 1 <= t->deep_hole) t->deep_hole = 0;
}

void jg_stack_remove(jg_tls *t, uint32_t k) { unstack_at(t, k, t->depth); }

/* ---- spans of tasks that moved between threads (task_move.c) ---- */

/* A span whose begin thread or parent's thread is not this one: the exact aggregates on
 * this thread (its call path resolved under the parent's entry, \p local_parent, through
 * the task's site chain), then a JAGER_EV_SPAN_X record. \p sid holds the site and the
 * begin thread's id of it. */
static JG_COLD void finish_x(jg_tls *t, uint32_t d, uint64_t start, uint64_t end, uint64_t sid, uint32_t local_parent,
                             uint64_t bytes, uint32_t begin_thread, uint32_t parent_thread, uint32_t parent_id)
{
    jager_site site = SID_SITE(sid);
    path_add(jg_path_resolve(t, d, site, local_parent), end - start, bytes);
    jg_site_agg *a = jg_site_agg_fast(t, site);
    if (JG_LIKELY(a)) {
        agg_add(a, end - start, bytes);
        if (!keep_event(a, end)) return;
    } else {
        jg_bump(&t->spans_ended, 1);
    }
    if (!t->ring) {
        jg_bump(&t->no_ring_drops, 1);
        if (a) jg_bump(&a->dropped, 1);
        return;
    }
    jager_rec_span_x *r = jg_ring_reserve(t->ring, sizeof *r);
    if (!r) {
        if (a) jg_bump(&a->dropped, 1);
        return;
    }
    rec_fill((jager_rec_span *)(void *)r, start, end, sid, parent_id, bytes);
    r->h.type = JAGER_EV_SPAN_X;
    r->h.words = sizeof *r / 8;
    r->begin_thread = begin_thread;
    r->parent_thread = parent_thread;
    jg_ring_commit(t->ring, sizeof *r);
}

/* The span at depth \p d of task \p task (begun on \p begin_thread with the id in \p sid)
 * ends, its entry gone: its parent is the task's innermost entry below \p d, which may be
 * foreign. 0 when neither the span nor its parent is another thread's (the usual way). */
static JG_COLD int finish_moved(jg_tls *t, uint32_t d, uint64_t task, uint64_t start, uint64_t end, uint64_t sid,
                                uint64_t bytes, uint32_t begin_thread)
{
    int64_t i = d ? jg_stack_top_of_task_x(t, (int64_t)d - 1, task) : -1;
    const jg_foreign *f = i >= 0 && jg_stack_foreign(t, (uint32_t)i) ? jg_foreign_of(t, jg_stack_id(t, (uint32_t)i)) : NULL;
    if (!f && begin_thread == t->thread) return 0;
    uint32_t local = i >= 0 ? jg_stack_id(t, (uint32_t)i) : 0;
    uint32_t pthread = f ? f->thread : i >= 0 ? t->thread : begin_thread, pid = f ? f->id : local;
    finish_x(t, d, start, end, sid, local, bytes, begin_thread, pthread, pid);
    return 1;
}

/* Not on this thread's stack as its own: a foreign entry of a task that moved here? Its
 * end is counted as a cross-thread one and recorded with its begin thread's id. */
static JG_COLD int end_foreign(jg_tls *t, uint64_t start, uint64_t end, uint64_t sid, uint64_t bytes)
{
    uint32_t depth = t->depth, k = depth;
    const jg_foreign *f = NULL;
    while (k > 0) {
        k--;
        if (!jg_stack_has(t, k) || !jg_stack_foreign(t, k)) continue;
        if ((jg_stack_site(t, k) & ~JG_SITE_FOREIGN) != SID_SITE(sid)) continue;
        f = jg_foreign_of(t, jg_stack_id(t, k));
        if (f && f->id == SID_ID(sid)) break;
        f = NULL;
    }
    if (!f) return 0;
    jg_foreign x = *f;
    uint64_t task = jg_stack_task_real(t, k);
    jg_foreign_forget(t, x.local_id);
    unstack_at(t, k, depth);
    jg_bump(&t->cross_thread, 1);
    if (!finish_moved(t, k, task, start, end, sid, bytes, x.thread)) finish_slow(t, k, start, end, sid, 0, bytes);
    return 1;
}

/* Tasks interleave on the thread (jager_task_set): the parent of a span of \p task whose
 * parent would be the entry at depth \p k is the innermost entry at \p k or below that the
 * same task began. */
static JG_COLD uint32_t task_parent(const jg_tls *t, uint32_t k, uint64_t task)
{
    int64_t i = jg_stack_top_of_task(t, k, task);
    return i >= 0 ? jg_stack_id(t, (uint32_t)i) : 0;
}

/* A run's start (ns): a span that began before it belongs to an earlier run. */
_Atomic(uint64_t) jg_run_start_ns; /* read by any thread ending a span while another re-initialises */

/* A span end the fast path does not take: the span is not the innermost open one, or it
 * lies deeper than JG_MAX_DEPTH, or this thread never began it.
 *   - Found lower on the stack: spans opened after it are still open (another Julia
 *     task's or coroutine's spans interleaved on this thread, or regions that overlap on
 *     purpose). Its entry is taken out of the middle, so those keep theirs and their own
 *     ends find them; its parent is the entry below it.
 *   - Deeper than JG_MAX_DEPTH: the same, on the overflow stack, by the general way.
 *   - Not on this thread's stack: begun on another thread (or in an earlier run, which is
 *     not this run's and ignored). It is counted (jager_stat.spans_cross_thread) and
 *     recorded here as a top-level span with an id of this thread's; this thread's stack
 *     is left as it is.
 *   - The innermost span is off the stack (no memory for the overflow stack): it ends,
 *     with its parent unknown (the overflow bucket of the call paths). */
static JG_COLD void end_odd(jg_tls *t, uint64_t t0, uint64_t sid, uint64_t bytes, uint64_t t1, int tsc)
{
    uint64_t start, end;
    span_times(t0, t1, tsc, &start, &end);
    jg_task_mail(t); /* entries of tasks adopted elsewhere are not this thread's any more */
    uint32_t depth = t->depth, k = depth;
    while (k > 0 && !(jg_stack_has(t, k - 1) && jg_stack_sid(t, k - 1) == sid)) k--;
    if (k > 0) {
        k--;
        jg_end_cache c = k >= JG_MAX_DEPTH ? t->deep[k - JG_MAX_DEPTH].cache : (jg_end_cache){0, 0, NULL, NULL};
        uint64_t task = jg_stack_task(t, k);
        unstack_at(t, k, depth);
        if (t->nforeign && finish_moved(t, k, task, start, end, sid, bytes, t->thread)) return;
        uint32_t parent = k ? task_parent(t, k - 1, task) : 0;
        /* deeper than the fixed stack: its entry's cache, as the fast path's (not while
         * hooked spans are open: finish_slow tells their hooks) */
        if (!t->nhooked && c.agg && c.site == SID_SITE(sid) && c.parent_id == parent && t->paths)
            return finish(t, c.agg, c.path, start, end - start, sid, parent, bytes, 0);
        return finish_slow(t, k, start, end, sid, parent, bytes);
    }
    if (depth && !jg_stack_has(t, depth - 1)) {
        t->depth = depth - 1;
        if (t->depth + 1 <= t->deep_hole) t->deep_hole = 0;
        return finish_slow(t, JG_DEPTH_UNKNOWN, start, end, sid, 0, bytes);
    }
    if (start < atomic_load_explicit(&jg_run_start_ns, memory_order_relaxed)) return;
    if (t->nforeign && end_foreign(t, start, end, sid, bytes)) return;
    jg_bump(&t->cross_thread, 1);
    uint32_t id = ++t->next_span;
    if (JG_UNLIKELY(id == 0)) id = ++t->next_span;
    finish_slow(t, 0, start, end, SID(SID_SITE(sid), id), 0, bytes);
}

/* The thread has no state for this run: a span begun on another thread, or in an
 * earlier run. */
static JG_COLD void end_unarmed(uint64_t t0, uint64_t sid, uint64_t bytes, uint64_t t1, int tsc)
{
    if (!atomic_load_explicit(&jg_enabled, memory_order_acquire)) return;
    uint64_t start, end;
    span_times(t0, t1, tsc, &start, &end);
    if (start < atomic_load_explicit(&jg_run_start_ns, memory_order_relaxed)) return;
    jg_tls *t = jg_tls_get();
    if (t) end_odd(t, t0, sid, bytes, t1, tsc);
}

/* The end of the span (stamp \p t0, site and id in \p sid) at stamp \p t1; \p tsc says
 * whether stamps are TSC ticks (else ns). */
/* The rest of a span's end, once its depth \p d and parent are known. */
static JG_INLINE void end_found(jg_tls *t, uint32_t d, uint32_t parent, uint64_t t0, uint64_t sid, uint64_t bytes, uint64_t t1,
                                int tsc)
{
    /* the duration in ns; the start stays a stamp (finish converts it only where needed) */
    uint64_t dur = t1 > t0 ? t1 - t0 : 0;
#if defined(__x86_64__)
    if (tsc) dur = t1 > t0 ? jg_ticks_to_ns(t1 - t0) : 0;
#endif

    /* The aggregate slot and the call-path node: the ones the last span at this depth used
     * when it had this site and this parent span (slots and nodes live as long as the
     * thread's run; a parent span id names one open span, so one path), else the cold way. */
    jager_site site = SID_SITE(sid);
    const jg_end_cache *c = &t->end_cache[d][site & (JG_END_WAYS - 1)];
    if (JG_UNLIKELY(c->site != site || c->parent_id != parent))
        return finish_miss(t, d | (uint64_t)(tsc != 0) << 31 | (uint64_t)parent << 32, t0, dur, sid, bytes);
    finish(t, c->agg, c->path, t0, dur, sid, parent, bytes, tsc);
}

/* The span below the ending one belongs to another task (jager_task_set): the parent is the
 * task's own innermost span. A function of its own, so the fast path calls nothing. */
static JG_COLD void end_task(jg_tls *t, uint64_t t0, uint64_t sid, uint64_t bytes, uint64_t t1, int tsc)
{
    uint32_t d = t->depth;
    if (JG_UNLIKELY(t->nforeign)) { /* the parent may be a span of the task another thread began */
        uint64_t start, end;
        span_times(t0, t1, tsc, &start, &end);
        if (finish_moved(t, d, t->stack_task[d], start, end, sid, bytes, t->thread)) return;
    }
    end_found(t, d, task_parent(t, d - 1, t->stack_task[d]), t0, sid, bytes, t1, tsc);
}

/* The span end on an armed thread state \p t. */
static JG_INLINE void span_end_on(jg_tls *t, uint64_t t0, uint64_t sid, uint64_t bytes, uint64_t t1, int tsc)
{
    /* The innermost open span, below JG_MAX_DEPTH (depth 0 wraps to the cold way too). */
    uint32_t d = t->depth - 1;
    if (JG_UNLIKELY(d >= JG_MAX_DEPTH || t->stack_sid[d] != sid)) return end_odd(t, t0, sid, bytes, t1, tsc);
    t->depth = d;
    if (JG_UNLIKELY(d && t->stack_task[d - 1] != t->stack_task[d])) return end_task(t, t0, sid, bytes, t1, tsc);
    end_found(t, d, d ? SID_ID(t->stack_sid[d - 1]) : 0, t0, sid, bytes, t1, tsc);
}

static JG_INLINE void span_end_at(uint64_t t0, uint64_t sid, uint64_t bytes, uint64_t t1, int tsc)
{
    jg_tls *t = jg_tls_ptr;
    if (JG_UNLIKELY(!tls_live(t))) return end_unarmed(t0, sid, bytes, t1, tsc); /* checks jg_enabled */
    span_end_on(t, t0, sid, bytes, t1, tsc);
}

/* The clock is clock_gettime (stamps are ns). */
static JG_COLD void span_end_gettime(uint64_t t0, uint64_t sid, uint64_t bytes)
{
    span_end_at(t0, sid, bytes, jg_clock_gettime_ns(), 0);
}

static JG_INLINE void span_end(jager_span span, uint64_t bytes)
{
    /* not recording: span_end_at's test of the thread state fails, and end_unarmed returns */
    if (JG_UNLIKELY(span.site == 0)) return;
    uint64_t sid = SID(span.site, span.id);
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) {
        /* the thread state's test first: its loads wait for no TSC read */
        jg_tls *t = jg_tls_ptr;
        if (JG_UNLIKELY(!tls_live(t))) return end_unarmed(span.start_ns, sid, bytes, __rdtsc(), 1);
        uint64_t t1 = __rdtsc();
        span_end_on(t, span.start_ns, sid, bytes, t1, 1);
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
    if (o->struct_size >= offsetof(jager_site_stat, dropped) + sizeof o->dropped) {
        o->thinned += atomic_load_explicit(&a->thinned, memory_order_relaxed);
        o->dropped += atomic_load_explicit(&a->dropped, memory_order_relaxed);
    }
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
    /* A 1.0 caller's struct ends before thinned: filled up to its own size. */
    if (!out || out->struct_size < offsetof(jager_site_stat, thinned))
        return jg_error(JAGER_E_INVALID, "jager_site_stats: out is NULL or struct_size too small");
    if (!jg_site_get(site)) return jg_error(JAGER_E_NOTFOUND, "jager_site_stats: unknown site %u", site);
    uint32_t size = out->struct_size;
    memset(out, 0, size < sizeof *out ? size : sizeof *out);
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
