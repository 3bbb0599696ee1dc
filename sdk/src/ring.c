/* Per-thread rings: creation, overwrite-mode eviction and the collector's drain. The
 * protocol, and the producer's inline reserve/commit, are in ring.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "containers.h"
#include "internal.h"


jg_ring *jg_ring_new(uint64_t bytes, uint32_t mode, uint32_t thread)
{
    jg_ring *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    /* MAP_POPULATE prefaults every page now, so the hot path never takes a first-touch
     * fault (~1.6 µs each here). */
    void *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (buf == MAP_FAILED) {
        free(r);
        return NULL;
    }
    r->buf = buf;
    r->mask = bytes - 1;
    r->mode = mode;
    r->thread = thread;
    r->woke_round = UINT64_MAX; /* never woken: the first crossing of the watermark wakes */
    return r;
}

void jg_ring_free(jg_ring *r)
{
    if (!r) return;
    munmap(r->buf, r->mask + 1);
    free(r);
}

void jg_ring_wake(jg_ring *r)
{
    (void)r;
    jg_collector_wake();
}

static inline uint32_t rec_bytes(const uint8_t *p)
{
    const jager_record *h = (const jager_record *)p;
    return (h->type == JAGER_EV_PAD && h->words == 0) ? h->aux : (uint32_t)h->words * 8u;
}

/* Overwrite mode: evict whole records from the tail until `need` more bytes fit. An
 * evicted span also counts as dropped in its site's aggregate on this (the producer's)
 * thread, so calls == recorded + thinned + dropped holds per site in this mode too. */
int jg_ring_evict(jg_ring *r, uint64_t pos, uint64_t need)
{
    uint64_t cap = r->mask + 1;
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    while (pos + need - t > cap) {
        const jager_record *h = (const jager_record *)(r->buf + (t & r->mask));
        uint32_t sz = rec_bytes(r->buf + (t & r->mask));
        uint16_t type = h->type;
        uint32_t aux = h->aux;
        if (sz == 0 || sz > cap) return -1; /* cannot happen with our own records */
        if (atomic_compare_exchange_weak_explicit(&r->tail, &t, t + sz, memory_order_acq_rel, memory_order_acquire)) {
            if (type != JAGER_EV_PAD) jg_bump(&r->overwritten, 1);
            if (type == JAGER_EV_SPAN || type == JG_EV_SPAN_TSC) {
                jg_tls *me = jg_tls_ptr;
                jg_site_agg *a = me && me->ring == r ? jg_agg_find(me->agg_dir, (jager_site)aux) : NULL;
                if (a) jg_bump(&a->dropped, 1);
            }
            t += sz;
        }
    }
    r->tail_cache = t;
    return 0;
}

/* Copy [from, to) out of the ring, 8-byte words at a time. In overwrite mode the producer
 * may be rewriting the part of this range that it evicts; those bytes are discarded after
 * the tail CAS in jg_ring_drain, like a seqlock read. So this one function is exempt from
 * ThreadSanitizer's instrumentation, and copies with volatile loads rather than memcpy,
 * which the sanitizer runtime intercepts (and the compiler would otherwise call). */
__attribute__((no_sanitize("thread"))) static void copy_words(uint64_t *dst, const volatile uint64_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
}

static void copy_out(const jg_ring *r, uint8_t *dst, uint64_t from, uint64_t to)
{
    uint64_t cap = r->mask + 1;
    uint64_t n = to - from, off = from & r->mask;
    uint64_t first = n < cap - off ? n : cap - off;
    /* positions and record sizes are multiples of 8, and the buffer is page-aligned */
    copy_words((uint64_t *)dst, (const volatile uint64_t *)(r->buf + off), first / 8);
    if (n > first) copy_words((uint64_t *)(dst + first), (const volatile uint64_t *)r->buf, (n - first) / 8);
}

size_t jg_ring_drain(jg_ring *r, uint8_t **out, size_t *out_cap, uint64_t *events)
{
    *events = 0;
    /* Head first, then tail: when the producer published h it had already made
     * h - tail <= capacity, and tail only grows, so the tail read afterwards is within one
     * capacity of h. (Read the other way round, an eviction in between could make the
     * range longer than the ring.) A tail past h means everything up to h was evicted. */
    /* A new round: the producer may wake us again at its next crossing of the watermark. */
    jg_bump(&r->drain_rounds, 1);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (t >= h) return 0;
    uint64_t n = h - t;
    uint8_t *grown = jg_grow(*out, out_cap, n, 1, 65536);
    if (!grown) return 0; /* try again next round: nothing is lost yet */
    *out = grown;
    copy_out(r, *out, t, h);
    uint64_t start = t;
    while (!atomic_compare_exchange_weak_explicit(&r->tail, &start, h, memory_order_acq_rel, memory_order_acquire)) {
        /* The producer evicted records (overwrite mode): keep only what is still ours. */
        if (start >= h) return 0;
    }
    /* Compact: drop pads, keep whole records from `start` on. */
    uint8_t *buf = *out;
    size_t rd = (size_t)(start - t), wr = 0, end = (size_t)n;
    uint64_t ev = 0;
    while (rd < end) {
        const jager_record *rec = (const jager_record *)(buf + rd);
        uint32_t sz = (rec->type == JAGER_EV_PAD && rec->words == 0) ? rec->aux : (uint32_t)rec->words * 8u;
        if (sz == 0 || rd + sz > end) break; /* defensive: never trust a length blindly */
        if (rec->type != JAGER_EV_PAD) {
            if (wr != rd) memmove(buf + wr, buf + rd, sz);
#if defined(__x86_64__)
            jager_rec_span *sp = (jager_rec_span *)(void *)(buf + wr);
            if (sp->h.type == JG_EV_SPAN_TSC && sz == sizeof *sp) { /* the span fast path's: start to ns here */
                sp->h.type = JAGER_EV_SPAN;
                sp->start_ns = jg_tsc_to_ns(sp->start_ns);
                sp->end_ns += sp->start_ns;
            }
#endif
            wr += sz;
            ev++;
        }
        rd += sz;
    }
    *events = ev;
    return wr;
}
