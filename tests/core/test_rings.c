/* Rings under load: exact accounting with tiny rings and several threads
 * (recorded + dropped == emitted), threads that exit mid-run lose nothing, the flight
 * recorder keeps the newest events, and the ring itself wraps records correctly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "memsink.h"
#include "testutil.h"

#define THREADS 4
#define SPANS 20000

static jager_site site;

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < SPANS; i++) jager_span_end(jager_span_begin(site));
    return NULL;
}

static uint64_t drop_records(const memsink *m, uint32_t reason)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type == JAGER_EV_DROP && r.rec->aux == reason) n += ((const jager_rec_drop *)r.rec)->count;
    }
    return n;
}

static void test_tiny_rings_exact_accounting(void **state)
{
    (void)state;
    jager_sink s;
    memsink *m = memsink_new(&s);
    jager_sink_add(&s);
    jager_config c = tu_config(4096); /* ~100 spans per ring: most of a burst is dropped */
    c.flush_interval_ms = 1;
    assert_int_equal(jager_init(&c), JAGER_OK);
    site = jager_site_register("tiny", __FILE__, __LINE__);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, producer, NULL);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    jager_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_stats(&st), JAGER_OK);
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_site_stats(site, &ss), JAGER_OK);
    jager_shutdown();

    assert_int_equal(ss.calls, (uint64_t)THREADS * SPANS); /* aggregates are exact */
    assert_int_equal(st.events_emitted, (uint64_t)THREADS * SPANS);
    assert_int_equal(st.events_recorded + st.dropped[JAGER_DROP_RING_FULL], st.events_emitted);
    assert_true(st.dropped[JAGER_DROP_RING_FULL] > 0);
    /* everything recorded reached the sink, and the drop reports add up to the drops */
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, site), st.events_recorded);
    assert_int_equal(drop_records(m, JAGER_DROP_RING_FULL), st.dropped[JAGER_DROP_RING_FULL]);
    memsink_free(m);
}

static void *short_lived(void *arg)
{
    int n = *(int *)arg;
    for (int i = 0; i < n; i++) {
        jager_span sp = jager_span_begin(site);
        jager_span_end_bytes(sp, 1);
    }
    return NULL;
}

static void test_threads_exit_mid_run(void **state)
{
    (void)state;
    jager_sink s;
    memsink *m = memsink_new(&s);
    jager_sink_add(&s);
    jager_config c = tu_config(1u << 20);
    c.flush_interval_ms = 1000; /* the threads exit long before the collector's first round */
    assert_int_equal(jager_init(&c), JAGER_OK);
    site = jager_site_register("short_lived", __FILE__, __LINE__);
    int counts[6] = {1, 10, 100, 1000, 5000, 7};
    uint64_t total = 0;
    for (int i = 0; i < 6; i++) {
        pthread_t t;
        pthread_create(&t, NULL, short_lived, &counts[i]);
        pthread_join(t, NULL);
        total += (uint64_t)counts[i];
    }
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_site_stats(site, &ss), JAGER_OK);
    assert_int_equal(ss.calls, total); /* exited threads' aggregates are kept */
    assert_int_equal(ss.bytes, total);
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    assert_int_equal(st.events_emitted, total);
    assert_int_equal(st.events_dropped, 0);
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, site), total);
    /* six distinct thread indexes */
    uint32_t seen[64] = {0};
    int distinct = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type == JAGER_EV_SPAN && r.thread < 64 && !seen[r.thread]++) distinct++;
    }
    assert_int_equal(distinct, 6);
    memsink_free(m);
}

static void test_overwrite_keeps_newest(void **state)
{
    (void)state;
    jager_sink s;
    memsink *m = memsink_new(&s);
    jager_sink_add(&s);
    jager_config c = tu_config(4096);
    c.ring_mode = JAGER_RING_OVERWRITE;
    c.flush_interval_ms = 100000; /* nothing drains until shutdown: a flight recorder */
    assert_int_equal(jager_init(&c), JAGER_OK);
    site = jager_site_register("flight", __FILE__, __LINE__);
    uint32_t last_id = 0;
    for (int i = 0; i < 1000; i++) {
        jager_span sp = jager_span_begin(site);
        last_id = sp.id;
        jager_span_end(sp);
    }
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    assert_int_equal(st.events_emitted, 1000);
    assert_int_equal(st.dropped[JAGER_DROP_RING_FULL], 0);
    assert_true(st.dropped[JAGER_DROP_OVERWRITTEN] > 0);
    size_t kept = memsink_count(m, JAGER_EV_SPAN, 1, site);
    assert_int_equal(kept + st.dropped[JAGER_DROP_OVERWRITTEN], 1000);
    /* the kept spans are the newest ones, in order, ending with the last */
    uint32_t prev = 0;
    const jager_rec_span *lastrec = NULL;
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type != JAGER_EV_SPAN) continue;
        const jager_rec_span *sp = (const jager_rec_span *)r.rec;
        if (prev) assert_int_equal(sp->span_id, prev + 1);
        prev = sp->span_id;
        lastrec = sp;
    }
    assert_non_null(lastrec);
    assert_int_equal(lastrec->span_id, last_id);
    memsink_free(m);
}

/* Overwrite mode with the collector draining concurrently: what arrives is whole, ordered
 * records, and arrivals + evictions account for every event. */
static void *flight_producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < SPANS; i++) jager_span_end(jager_span_begin(site));
    return NULL;
}

static void test_overwrite_concurrent_drain(void **state)
{
    (void)state;
    jager_sink s;
    memsink *m = memsink_new(&s);
    jager_sink_add(&s);
    jager_config c = tu_config(4096);
    c.ring_mode = JAGER_RING_OVERWRITE;
    c.flush_interval_ms = 1;
    assert_int_equal(jager_init(&c), JAGER_OK);
    site = jager_site_register("flight2", __FILE__, __LINE__);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, flight_producer, NULL);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    size_t kept = memsink_count(m, JAGER_EV_SPAN, 1, site);
    assert_int_equal(st.events_emitted, 2 * SPANS);
    assert_int_equal(kept + st.dropped[JAGER_DROP_OVERWRITTEN], 2 * SPANS);
    /* per thread, span ids strictly increase: no torn or duplicated record */
    uint32_t prev[64] = {0};
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type != JAGER_EV_SPAN) continue;
        const jager_rec_span *sp = (const jager_rec_span *)r.rec;
        assert_int_equal(sp->h.words, sizeof(jager_rec_span) / 8);
        assert_true(r.thread < 64);
        assert_true(sp->span_id > prev[r.thread]);
        prev[r.thread] = sp->span_id;
    }
    memsink_free(m);
}

static void test_ring_wraps_with_padding(void **state)
{
    (void)state;
    jg_ring *r = jg_ring_new(4096, JAGER_RING_DISCARD, 1);
    assert_non_null(r);
    uint8_t *out = NULL;
    size_t cap = 0;
    uint64_t ev, total = 0;
    /* 24-byte and 200-byte records interleaved force pads at the buffer's end */
    for (int round = 0; round < 200; round++) {
        uint32_t sz = (round % 3 == 0) ? 200 : 24;
        jager_record *h = jg_ring_reserve(r, sz);
        assert_non_null(h);
        memset(h, 0xab, sz);
        h->type = 300;
        h->words = (uint16_t)(sz / 8);
        h->aux = (uint32_t)round;
        jg_ring_commit(r, sz);
        if (round % 7 == 6) {
            size_t n = jg_ring_drain(r, &out, &cap, &ev);
            uint32_t expect = (uint32_t)(round - (int)ev + 1);
            for (size_t off = 0; off < n;) {
                const jager_record *rec = (const jager_record *)(out + off);
                assert_int_equal(rec->type, 300);
                assert_int_equal(rec->aux, expect++);
                off += rec->words * 8u;
            }
            total += ev;
        }
    }
    size_t n = jg_ring_drain(r, &out, &cap, &ev);
    (void)n;
    total += ev;
    assert_int_equal(total, 200);
    /* a record larger than 1/8 of the ring is refused and counted */
    assert_null(jg_ring_reserve(r, 1024));
    assert_int_equal(atomic_load(&r->dropped_large), 1);
    free(out);
    jg_ring_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_wraps_with_padding),
        cmocka_unit_test(test_tiny_rings_exact_accounting),
        cmocka_unit_test(test_threads_exit_mid_run),
        cmocka_unit_test(test_overwrite_keeps_newest),
        cmocka_unit_test(test_overwrite_concurrent_drain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
