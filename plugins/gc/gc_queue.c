/* gc_queue.c — a bounded lock-free queue of finished pauses (Dmitry Vyukov's bounded
 * MPMC design). Each slot carries a sequence number: a producer may fill slot i when its
 * sequence equals the ticket, a consumer may read it when the sequence equals ticket+1.
 * Producers are GC callbacks, so they never block, spin on others or allocate: a full
 * queue refuses at once. */
#include <stdlib.h>
#include <string.h>

#include "gc_internal.h"

jager_status gc_queue_init(gc_queue *q, uint32_t cap)
{
    memset(q, 0, sizeof *q);
    if (cap < 2 || (cap & (cap - 1)) != 0) return JAGER_E_INVALID;
    q->slots = calloc(cap, sizeof *q->slots); /* calloc touches nothing; memset below does */
    if (!q->slots) return JAGER_E_NOMEM;
    memset(q->slots, 0, (size_t)cap * sizeof *q->slots);
    for (uint32_t i = 0; i < cap; i++) atomic_init(&q->slots[i].seq, i);
    q->mask = cap - 1;
    atomic_init(&q->enq, 0);
    atomic_init(&q->deq, 0);
    return JAGER_OK;
}

void gc_queue_free(gc_queue *q)
{
    if (!q) return;
    free(q->slots);
    q->slots = NULL;
    q->mask = 0;
}

gc_pause *gc_queue_reserve(gc_queue *q, uint64_t *ticket)
{
    if (!q->slots) return NULL;
    uint64_t pos = atomic_load_explicit(&q->enq, memory_order_relaxed);
    for (;;) {
        gc_queue_slot *s = &q->slots[pos & q->mask];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->enq, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *ticket = pos;
                return &s->p;
            }
        } else if (dif < 0) {
            return NULL; /* full: the consumer has not released this slot yet */
        } else {
            pos = atomic_load_explicit(&q->enq, memory_order_relaxed);
        }
    }
}

void gc_queue_publish(gc_queue *q, uint64_t ticket)
{
    atomic_store_explicit(&q->slots[ticket & q->mask].seq, ticket + 1, memory_order_release);
}

gc_pause *gc_queue_peek(gc_queue *q, uint64_t *ticket)
{
    if (!q->slots) return NULL;
    uint64_t pos = atomic_load_explicit(&q->deq, memory_order_relaxed);
    gc_queue_slot *s = &q->slots[pos & q->mask];
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
    if ((int64_t)(seq - (pos + 1)) != 0) return NULL; /* empty, or the producer is still filling it */
    *ticket = pos;
    return &s->p;
}

void gc_queue_release(gc_queue *q, uint64_t ticket)
{
    atomic_store_explicit(&q->deq, ticket + 1, memory_order_relaxed);
    atomic_store_explicit(&q->slots[ticket & q->mask].seq, ticket + q->mask + 1, memory_order_release);
}
