/* Recordings for the hostile-input tests (test_hostile.js), made through the real core.
 *
 *   rec_hostile ids OUT INDEX [FROM]   a small recording (spans nested 3 deep on two threads,
 *                                      counters, logs, marks, metadata) whose EVENTS blocks of
 *                                      thread index FROM (default 1; 0: all) are rewritten to
 *                                      name thread INDEX, which the file's thread table lacks
 *   rec_hostile threads OUT N [BIG]    N threads: the first two at once, each recording BIG
 *                                      (default 3) outer spans around 2 inner ones, then the
 *                                      others one after another with 3 (9 spans per thread)
 *   rec_hostile chain OUT N            N spans of N sites, rewritten into a chain: each the
 *                                      parent of the next (tests/support/jgr_edit.c), no PATHS
 *   rec_hostile sites OUT N            N sites "site_<i>", site i called i % 5 + 1 times
 *   rec_hostile longsites OUT N        N sites with long names and long file paths (the
 *                                      report's table must wrap them, not truncate them)
 *
 * Prints what it recorded as one JSON line ({"threads":…,"spans":…}). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager.h"
#include "jgr_edit.h"
#include "testutil.h"

static jager_site s_outer, s_mid, s_inner;
static jager_counter c_iter;

static void *small_worker(void *arg)
{
    int iters = *(int *)arg;
    for (int i = 0; i < iters; i++) {
        jager_span a = jager_span_begin(s_outer);
        jager_span b = jager_span_begin(s_mid);
        jager_span c = jager_span_begin(s_inner);
        jager_span_end(c);
        jager_span_end(b);
        jager_span_end(a);
        jager_counter_add(c_iter, 1.0);
        if (i % 5 == 0) jager_log(JAGER_SEV_INFO, "step", NULL, 0);
        if (i % 7 == 0) jager_mark("checkpoint");
    }
    return NULL;
}

static void *threads_worker(void *arg)
{
    int iters = *(int *)arg;
    for (int i = 0; i < iters; i++) {
        jager_span a = jager_span_begin(s_outer);
        for (int k = 0; k < 2; k++) jager_span_end(jager_span_begin(s_inner));
        jager_span_end(a);
        if (i % 256 == 255) jager_flush(); /* blocks of the two big threads interleave; nothing dropped */
    }
    return NULL;
}

static int start(const char *out, uint32_t max_threads)
{
    jager_config c = tu_config(64u << 10);
    c.output = out;
    c.max_threads = max_threads;
    if (jager_init(&c) != JAGER_OK) {
        fprintf(stderr, "rec_hostile: jager_init: %s\n", jager_last_error());
        return -1;
    }
    s_outer = jager_site_register("outer", "hostile.c", 10);
    s_mid = jager_site_register("mid", "hostile.c", 20);
    s_inner = jager_site_register("inner", "hostile.c", 30);
    c_iter = jager_counter_register("iterations", "1", JAGER_COUNTER_MONOTONIC);
    return 0;
}

static int finish(void)
{
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    if (st.events_dropped) {
        fprintf(stderr, "rec_hostile: %llu events dropped\n", (unsigned long long)st.events_dropped);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "ids")) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.orig", argv[2]);
        if (start(tmp, 0)) return 1;
        jager_metadata_set("test.case", "hostile thread index");
        int iters = 40;
        pthread_t th;
        pthread_create(&th, NULL, small_worker, &iters);
        small_worker(&iters);
        pthread_join(th, NULL);
        if (finish()) return 1;
        uint32_t ids[2] = {argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 1u, (uint32_t)strtoul(argv[3], NULL, 0)};
        if (tu_jgr_edit_file(tmp, argv[2], tu_jgr_retarget_thread, ids)) {
            fprintf(stderr, "rec_hostile: cannot rewrite %s\n", tmp);
            return 1;
        }
        remove(tmp);
        printf("{\"threads\":2,\"spans\":%d}\n", 2 * iters * 3);
        return 0;
    }
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "threads")) {
        int n = atoi(argv[3]), big = argc == 5 ? atoi(argv[4]) : 3, small = 3;
        if (n < 2 || big <= 0 || start(argv[2], (uint32_t)n + 8)) return 1;
        pthread_t two[2];
        for (int t = 0; t < 2; t++)
            if (pthread_create(&two[t], NULL, threads_worker, &big)) return 1;
        for (int t = 0; t < 2; t++) pthread_join(two[t], NULL);
        for (int t = 2; t < n; t++) {
            pthread_t th;
            if (pthread_create(&th, NULL, threads_worker, &small)) return 1;
            pthread_join(th, NULL);
            if (t % 64 == 63) jager_flush();
        }
        if (finish()) return 1;
        printf("{\"threads\":%d,\"spans\":%d,\"big_spans\":%d,\"small_spans\":%d}\n", n, 2 * big * 3 + (n - 2) * small * 3,
               big * 3, small * 3);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "sites")) {
        unsigned n = (unsigned)atoi(argv[3]), spans = 0;
        char name[64];
        if (n < 1 || start(argv[2], 0)) return 1;
        for (unsigned i = 0; i < n; i++) {
            snprintf(name, sizeof name, "site_%u", i);
            jager_site st = jager_site_register(name, "sites.c", i + 1);
            for (unsigned k = 0; k < i % 5 + 1; k++, spans++) jager_span_end(jager_span_begin(st));
            if (i % 256 == 255) jager_flush(); /* the 64 KiB ring never fills */
        }
        if (finish()) return 1;
        printf("{\"threads\":1,\"spans\":%u,\"sites\":%u}\n", spans, n);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "longsites")) {
        unsigned n = (unsigned)atoi(argv[3]);
        char name[160], file[256];
        if (n < 1 || start(argv[2], 0)) return 1;
        for (unsigned i = 0; i < n; i++) {
            snprintf(name, sizeof name, "ClimateModel.Dynamics.assemble_jacobian_with_boundary_conditions_and_halo_exchange!_%u", i);
            snprintf(file, sizeof file,
                     "/home/researcher/projects/climate-model/src/dynamics/very/deep/nested/package/structure/"
                     "assemble_boundary_conditions_%u.jl", i);
            jager_site st = jager_site_register(name, file, 10000 + i);
            for (unsigned k = 0; k < i % 3 + 1; k++) jager_span_end(jager_span_begin(st));
        }
        if (finish()) return 1;
        printf("{\"threads\":1,\"sites\":%u}\n", n);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "chain")) {
        char tmp[4096], name[64];
        unsigned n = (unsigned)atoi(argv[3]);
        snprintf(tmp, sizeof tmp, "%s.siblings", argv[2]);
        if (n < 2 || start(tmp, 0)) return 1;
        for (unsigned i = 0; i < n; i++) {
            snprintf(name, sizeof name, "link_%u", i);
            jager_span_end(jager_span_begin(jager_site_register(name, "chain.c", i + 1)));
            if (i % 256 == 255) jager_flush(); /* the 64 KiB ring never fills */
        }
        if (finish()) return 1;
        tu_jgr_chain c = {n, 0, 0};
        if (tu_jgr_edit_file(tmp, argv[2], tu_jgr_to_chain, &c) || c.k != n) return 1;
        remove(tmp);
        printf("{\"threads\":1,\"spans\":%u}\n", n);
        return 0;
    }
    fprintf(stderr, "usage: rec_hostile ids OUT INDEX [FROM] | threads OUT N [BIG] | chain OUT N | sites OUT N | longsites OUT N\n");
    return 2;
}
