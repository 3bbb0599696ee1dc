/* sampler_storm.c — heavy span traffic for `jager dump` to check: THREADS threads, each
 * SPANS times a nested pair of spans around a little work and one empty span, recorded
 * with whatever JAGER_* environment the caller sets (JAGER_PLUGINS=sampler). Prints the
 * spans it ended and the events the core dropped. Usage: sampler_storm THREADS SPANS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "jager.h"

static volatile uint64_t sink;
static long spans_per_thread;
static jager_site s_outer, s_inner;

__attribute__((noinline)) static void work(void)
{
    uint64_t x = sink;
    for (int i = 0; i < 400; i++) x = x * 6364136223846793005ull + 1;
    sink = x;
}

static void *storm(void *arg)
{
    (void)arg;
    for (long i = 0; i < spans_per_thread; i++) {
        jager_span a = jager_span_begin(s_outer);
        jager_span b = jager_span_begin(s_inner);
        work();
        jager_span_end(b);
        jager_span_end(a);
        jager_span c = jager_span_begin(s_outer);
        jager_span_end(c);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sampler_storm THREADS SPANS\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    spans_per_thread = atol(argv[2]);
    if (threads < 1 || threads > 64 || spans_per_thread < 1) return 2;
    if (jager_init(NULL) != JAGER_OK) {
        fprintf(stderr, "sampler_storm: jager_init: %s\n", jager_last_error());
        return 1;
    }
    s_outer = jager_site_register("storm.outer", __FILE__, __LINE__);
    s_inner = jager_site_register("storm.inner", __FILE__, __LINE__);
    pthread_t th[64];
    for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, storm, NULL);
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    printf("spans %ld dropped %llu\n", (long)threads * spans_per_thread * 3, (unsigned long long)st.events_dropped);
    return 0;
}
