/* The program the otel tests and the benchmark run: nested spans on several threads (with
 * attributes and failures on some), logs and counters, with the otel plugin loaded from
 * JAGER_PLUGINS. What it emitted is read back from its .jgr, never from here.
 *
 *   otel_workload ITERATIONS THREADS LOGS [WORK [SLEEP_MS]]
 *
 * Each iteration of each thread is one "solve" span holding two "kernel" spans; every 50th
 * kernel gets attributes, every 97th solve is marked failed. LOGS log records are written
 * inside a "setup" span on the main thread. WORK (default 0) is busy work per kernel in
 * loop turns, for the benchmark. SLEEP_MS (default 0): the run goes on that long after the
 * loop, recording nothing (periodic metric exports). Prints the loop time in ns on stdout, then (after
 * jager_shutdown, so the exporter's threads are included) the process's CPU time in ns. */
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "jager.h"

static long iters, work;
static jager_site s_solve, s_kernel;
static jager_counter c_items;
static volatile uint64_t sink;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iters; i++) {
        jager_span s = jager_span_begin(s_solve);
        for (int k = 0; k < 2; k++) {
            jager_span kk = jager_span_begin(s_kernel);
            for (long w = 0; w < work; w++) sink += (uint64_t)w * 2654435761u;
            if (k == 0 && i % 50 == 0) {
                jager_attr a[2] = {{.key = "iteration", .kind = JAGER_ATTR_I64, .value.i64 = i},
                                   /* interned (one string-table entry): the sink exports its text */
                                   {.key = "phase", .kind = JAGER_ATTR_STR_ID, .value.i64 = jager_string_intern("assemble")}};
                jager_span_set_attrs(kk, a, 2);
            }
            jager_span_end(kk);
        }
        if (i % 97 == 0) jager_span_error(s, "residual diverged");
        jager_span_end(s);
        jager_counter_add(c_items, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    iters = argc > 1 ? atol(argv[1]) : 100;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    long logs = argc > 3 ? atol(argv[3]) : 10;
    work = argc > 4 ? atol(argv[4]) : 0;
    long sleep_ms = argc > 5 ? atol(argv[5]) : 0;
    if (threads < 1 || threads > 64) threads = 1;
    if (jager_init(NULL) != JAGER_OK) {
        fprintf(stderr, "jager_init: %s\n", jager_last_error());
        return 1;
    }
    s_solve = jager_site_register("solve", __FILE__, __LINE__);
    s_kernel = jager_site_register("kernel", __FILE__, __LINE__);
    jager_site s_setup = jager_site_register("setup", __FILE__, __LINE__);
    c_items = jager_counter_register("workload.items", "{item}", JAGER_COUNTER_MONOTONIC);
    jager_span setup = jager_span_begin(s_setup);
    for (long i = 0; i < logs; i++) {
        jager_attr a = {.key = "index", .kind = JAGER_ATTR_I64, .value.i64 = i};
        jager_log(i % 3 == 0 ? JAGER_SEV_WARN : JAGER_SEV_INFO, "setup step \"done\"", &a, 1);
    }
    jager_span_end(setup);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th[64];
    for (int t = 0; t < threads; t++) pthread_create(&th[t], NULL, worker, NULL);
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%lld\n", (long long)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)));
    fflush(stdout);
    if (sleep_ms > 0) {
        struct timespec d = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
        while (nanosleep(&d, &d)) continue;
    }
    jager_shutdown();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%lld\n", (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                          (long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
    return 0;
}
