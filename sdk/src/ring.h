/*
 * ring.h — the per-thread ring and its protocol, in one place. Never installed.
 *
 * One ring per recording thread: a power-of-two buffer of 8-byte words with exactly one
 * producer (the owning thread) and one consumer (the collector). Positions are monotonic
 * byte offsets (they never wrap); the buffer index is pos & mask.
 *
 * The producer (ring.h inlines; jg_ring_evict in ring.c):
 *   1. reserve: a record of `bytes` (a multiple of 8, at most 1/8 of the ring and
 *      JAGER_RECORD_MAX_BYTES) starts at head_local. A record never wraps: when it does
 *      not fit before the buffer's end, a PAD record (type 0, words 0, aux = pad bytes)
 *      fills the rest of the lap first. Free space is checked against tail_cache, the
 *      producer's last view of tail; only when that says "full" is tail re-read (acquire).
 *      Still full: discard mode drops the record (counted in dropped_full); overwrite mode
 *      evicts whole records from the tail by CAS (counted in overwritten).
 *   2. fill the record in place;
 *   3. commit: head_local advances, and head is published with a release store, so the
 *      collector that acquires head sees the record's bytes.
 *   Every record offered counts in `emitted`, every refusal in exactly one drop counter,
 *   with single-writer relaxed stores (jg_bump) that other threads read race-free.
 *
 * Dropping costs no more than recording: a reserve that finds the ring full (by the
 * re-read tail) sets drop_left, and the span fast path then drops the next drop_left
 * spans with counter bumps on the producer's own line (emitted, dropped_full, the site's
 * dropped), without calling out and without reading the shared tail; the general reserve
 * looks at tail again only when drop_left runs out (JG_RING_DROP_RECHECK spans later).
 *
 * The watermark: fit_end is also capped at tail_cache + capacity/2 while the collector
 * has not been woken for this ring since its last drain, so the first record past the
 * half-full mark takes the general reserve, which re-reads tail and, when the ring is
 * still at least half full, wakes the collector (jg_ring_wake: one sem_post, which is a
 * syscall only when the collector sleeps). It wakes again only after the collector has
 * drained the ring once more (drain_rounds moved), so at most once per collector round,
 * which takes at least the half ring it was woken for: at most once per half ring, and
 * nothing at all on the fast path. Until it sees that drain, fit_end is capped 1/16 ring
 * ahead, so the producer notices it soon and re-arms: with a collector that keeps up, no
 * more than half a ring plus 1/16 waits undrained once the producer pauses. Overwrite
 * mode (a flight recorder, drained on the period and on flush) has no watermark: it keeps
 * the newest records rather than more of them.
 *
 * The span fast path (span.c) skips step 1's checks: fit_end is a position up to which a
 * record needs no pad and no eviction — min(tail_cache + capacity, end of head's lap) —
 * refreshed by every general reserve (jg_ring_reserve). It only lags (tail only grows,
 * the lap end is fixed), so it is conservative; 0 until the first general reserve, which
 * sends the first span the general way. jg_ring_fast_fits() is that test,
 * jg_ring_fast_claim() the slot and the emitted count, jg_ring_publish() the commit.
 *
 * The consumer (jg_ring_drain in ring.c): read head (acquire), then tail; copy
 * [tail, head) out; advance tail to head with a CAS. In overwrite mode the producer may
 * have evicted (advanced tail) meanwhile: the collector keeps only the part of its copy
 * at or after the tail it wins the CAS with, whose bytes cannot have been reused while it
 * copied them (a seqlock-style read). Pads are dropped from the copy.
 *
 * Life (thread.c): the owning thread creates its ring on its first event of a run and
 * links it into the collector's list (under the rings lock); at thread exit, or when the
 * thread re-arms for a new run, it marks the ring orphaned (release) and never touches it
 * again. The collector drains an orphaned ring one last time, then (jg_ring_reapable)
 * unlinks and frees it and folds its counters into the retired totals.
 */
#ifndef JAGER_RING_H
#define JAGER_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jager_plugin.h"
#include "status.h"

#ifndef JG_LIKELY
#define JG_LIKELY(x) __builtin_expect(!!(x), 1)
#define JG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif

typedef struct jg_ring {
    /* producer cache line */
    uint64_t head_local;             /* next write position in bytes (monotonic) */
    uint64_t tail_cache;             /* producer's last view of tail */
    uint64_t fit_end;                /* the fast path's limit (see above); 0: nothing fits */
    uint64_t mask;                   /* capacity - 1 */
    uint8_t *buf;
    uint32_t mode;                   /* jager_ring_mode */
    uint32_t thread;                 /* thread index */
    _Atomic(uint64_t) emitted;       /* events offered (producer-written, relaxed) */
    _Atomic(uint64_t) dropped_full;  /* JAGER_DROP_RING_FULL */
    _Atomic(uint64_t) dropped_large; /* JAGER_DROP_TOO_LARGE */
    _Atomic(uint64_t) overwritten;   /* JAGER_DROP_OVERWRITTEN */
    uint64_t woke_round;             /* drain_rounds when the producer last woke the collector */
    uint32_t drop_left;              /* spans the fast path still drops without a look at tail */
    char pad0[60];
    /* shared */
    _Atomic(uint64_t) head;          /* published by the producer (release) */
    char pad1[56];
    _Atomic(uint64_t) tail;          /* advanced by the collector (and producer on overwrite) */
    _Atomic(uint64_t) drain_rounds;  /* drains of this ring so far (collector-written) */
    char pad2[48];
    /* collector-owned */
    uint64_t reported_drops[JAGER_DROP_REASONS]; /* what drop records already said */
    int said_all;                    /* a drain saw it orphaned, then drained it and reported its
                                      * drops: nothing its thread did is left unsaid [drain lock] */
    _Atomic(int) orphaned;           /* the thread is done with it: drain, then free */
    struct jg_ring *next;            /* collector's list (under the rings lock) */
} jg_ring;

/** A ring of \p bytes (a power of two, prefaulted); NULL on out of memory. */
JG_HIDDEN jg_ring *jg_ring_new(uint64_t bytes, uint32_t mode, uint32_t thread);
JG_HIDDEN void jg_ring_free(jg_ring *r);
/** Overwrite mode: evict whole records until \p need bytes fit at \p pos; 0 on success. [producer] */
JG_HIDDEN int jg_ring_evict(jg_ring *r, uint64_t pos, uint64_t need);
/** Copy whole records (pads removed) into \p out (grown as needed, caller frees);
 *  returns the bytes and sets *events. [collector only] */
JG_HIDDEN size_t jg_ring_drain(jg_ring *r, uint8_t **out, size_t *out_cap, uint64_t *events);
/** The ring passed its watermark: wake the collector (one sem_post). [producer][cold] */
JG_HIDDEN void jg_ring_wake(jg_ring *r);

/** A record type that only rings hold: the span fast path's record (jager_rec_span's
 *  layout) with start_ns a raw TSC stamp and end_ns the duration in ns, so the producer
 *  converts only the duration; jg_ring_drain makes it a JAGER_EV_SPAN (start to ns on the
 *  same clock, end = start + duration) before any sink sees it. Below
 *  JAGER_EV_FIRST_PLUGIN, unused by the core's public types. */
#define JG_EV_SPAN_TSC 255u

/** Spans the fast path drops after a full ring before the general reserve re-reads tail. */
#define JG_RING_DROP_RECHECK 64u

/** Single-writer counter bump: no lock prefix, but atomic so other threads read it race-free. */
static inline void jg_bump(_Atomic(uint64_t) *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by, memory_order_relaxed);
}

/** Commit: publish everything written up to \p end (the position after the last record). [producer] */
static inline void jg_ring_publish(jg_ring *r, uint64_t end)
{
    r->head_local = end;
    atomic_store_explicit(&r->head, end, memory_order_release);
}

/** Commit the record reserved last with jg_ring_reserve(). [producer] */
static inline void jg_ring_commit(jg_ring *r, uint32_t bytes) { jg_ring_publish(r, r->head_local + bytes); }

/** Step 1, the general way: reserve \p bytes (a multiple of 8) for one record, padding to
 *  the next lap or evicting as needed; NULL when it cannot (counted). Refreshes fit_end. [producer] */
static inline void *jg_ring_reserve(jg_ring *r, uint32_t bytes)
{
    uint64_t cap = r->mask + 1;
    jg_bump(&r->emitted, 1);
    if (JG_UNLIKELY(bytes > cap / 8 || bytes > JAGER_RECORD_MAX_BYTES)) {
        jg_bump(&r->dropped_large, 1);
        return NULL;
    }
    uint64_t pos = r->head_local;
    uint64_t contig = cap - (pos & r->mask);
    uint64_t pad = bytes > contig ? contig : 0;
    uint64_t need = pad + bytes;
    void *slot = NULL;
    if (JG_UNLIKELY(pos + need - r->tail_cache > cap)) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (pos + need - r->tail_cache > cap &&
            (r->mode != JAGER_RING_OVERWRITE || jg_ring_evict(r, pos, need))) {
            jg_bump(&r->dropped_full, 1);
            r->drop_left = JG_RING_DROP_RECHECK;
            goto refit;
        }
    }
    if (JG_UNLIKELY(pad)) {
        jager_record *p = (jager_record *)(r->buf + (pos & r->mask));
        p->type = JAGER_EV_PAD;
        p->words = 0;
        p->aux = (uint32_t)pad;
        r->head_local = pos + pad;
    }
    slot = r->buf + (r->head_local & r->mask);
refit:;
    /* tail_cache is fresh whenever free space looked short by it (tail only grows); the
     * lap that head will be in after this record ends at (head | mask) + 1. */
    uint64_t head = slot ? r->head_local + bytes : r->head_local;
    if (slot) r->drop_left = 0;
    uint64_t half = cap / 2, wake_end = UINT64_MAX;
    if (r->mode != JAGER_RING_OVERWRITE) {
        uint64_t rounds = atomic_load_explicit(&r->drain_rounds, memory_order_relaxed);
        wake_end = head + cap / 16; /* woken and not drained yet: look again 1/16 ring on */
        if (rounds != r->woke_round) {
            /* Not woken since the last drain: past the watermark (by a fresh tail), wake
             * it; else come back here when head crosses it. */
            if (head - r->tail_cache >= half) r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
            if (head - r->tail_cache >= half) {
                r->woke_round = rounds;
                jg_ring_wake(r);
            } else {
                wake_end = r->tail_cache + half;
            }
        }
    }
    uint64_t by_tail = r->tail_cache + cap, lap_end = (head | r->mask) + 1;
    uint64_t fit = by_tail < lap_end ? by_tail : lap_end;
    r->fit_end = fit < wake_end ? fit : wake_end;
    return slot;
}

/** The span fast path's reserve, in two steps so the test is one compare and a branch:
 *  whether a \p bytes record at \p pos (= head_local) fits without pad or eviction; if
 *  not, take jg_ring_reserve(). [producer][hot-path] */
static inline int jg_ring_fast_fits(const jg_ring *r, uint64_t pos, uint32_t bytes) { return pos + bytes <= r->fit_end; }

/** Then the slot at \p pos, counted as emitted; commit with jg_ring_publish(r, pos + bytes). [producer][hot-path] */
static inline uint8_t *jg_ring_fast_claim(jg_ring *r, uint64_t pos)
{
    jg_bump(&r->emitted, 1);
    return r->buf + (pos & r->mask);
}

/** The fast path found no room: when the last reserve found the ring full, drop this
 *  span here (counted emitted and dropped_full) and return 1; 0 means take
 *  jg_ring_reserve(). Touches only the producer's own line. [producer][hot-path] */
static inline int jg_ring_fast_drop(jg_ring *r)
{
    if (JG_LIKELY(r->drop_left == 0)) return 0;
    r->drop_left--;
    jg_bump(&r->emitted, 1);
    jg_bump(&r->dropped_full, 1);
    return 1;
}

/** The owning thread is done with \p r: the collector drains it once more, then frees it. [producer] */
static inline void jg_ring_orphan(jg_ring *r) { atomic_store_explicit(&r->orphaned, 1, memory_order_release); }

/** Whether \p r is orphaned, fully drained and its drops reported (said_all), so it may be
 * unlinked and freed. Drained is not enough: the producer's fast path drops spans on a stale
 * view of the tail (drop_left), so it can count drops after the drain that emptied the ring
 * read its counters, and then exit with the ring empty; freed then, those drops were in
 * jager_stats() but in no drop record (1 run in ~30 of test_tiny_rings_exact_accounting).
 * [rings lock and drain lock] */
static inline int jg_ring_reapable(jg_ring *r)
{
    return atomic_load_explicit(&r->orphaned, memory_order_acquire) && r->said_all &&
           atomic_load_explicit(&r->head, memory_order_acquire) == atomic_load_explicit(&r->tail, memory_order_acquire);
}

#endif /* JAGER_RING_H */
