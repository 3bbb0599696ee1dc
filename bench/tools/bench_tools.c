/* bench_tools — how fast `jager summary`'s analysis reads a big recording, beside `lz4 -d`
 * decompressing the same file, measured in the same run.
 *
 *   bench_tools [events (default 10000000)] [file (default /tmp/jager-bench-tools.jgr)]
 *
 * Writes the recording first if the file does not exist (spans through the real core:
 * one "outer" span around every 99 "inner" ones, flushed often so nothing is dropped),
 * then times, best of 3: `lz4 -d -c FILE > /dev/null`, and reading + summarising the file
 * in-process (jager_reader + the analysis model: call trees, site totals, everything
 * `jager summary` and `jager hunt` use). Prints events/s for both and their ratio
 * (target: summarising at ≥ 1/4 of lz4's speed). Asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "jager.h"
#include "model.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_recording(const char *path, unsigned long long n)
{
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.output = path;
    cfg.quiet = 1;
    cfg.ring_bytes = 16u << 20;
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "bench_tools: jager_init: %s\n", jager_last_error());
        return -1;
    }
    jager_site a = jager_site_register("outer", "bench_tools.c", 1);
    jager_site b = jager_site_register("inner", "bench_tools.c", 2);
    unsigned long long done = 0;
    while (done < n) {
        jager_span o = jager_span_begin(a);
        for (int i = 0; i < 99 && done + 1 < n; i++, done++) {
            jager_span in = jager_span_begin(b);
            jager_span_end(in);
        }
        jager_span_end(o);
        done++;
        if (done % 65536 < 100) jager_flush(); /* the collector keeps up: no drops */
    }
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    if (st.events_dropped) fprintf(stderr, "bench_tools: warning: %llu events dropped\n", (unsigned long long)st.events_dropped);
    return 0;
}

/* Read and summarise once. \return events, 0 on failure. */
static unsigned long long summarise(const char *path)
{
    jager_reader *r = NULL;
    if (jager_reader_open(path, &r) != JAGER_OK) {
        fprintf(stderr, "bench_tools: %s: %s\n", path, jager_last_error());
        return 0;
    }
    jm_model *m = NULL;
    int rc = 0;
    unsigned long long events = 0;
    if (jm_model_build(r, NULL, &m, &rc) == JAGER_OK && rc == 0) events = m->events;
    else fprintf(stderr, "bench_tools: reading failed (%d): %s\n", rc, jager_reader_error(r));
    jm_model_free(m);
    jager_reader_close(r);
    return events;
}

int main(int argc, char **argv)
{
    unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
    const char *path = argc > 2 ? argv[2] : "/tmp/jager-bench-tools.jgr";
    struct stat sb;
    if (stat(path, &sb) != 0) {
        double t0 = now_s();
        if (write_recording(path, n) != 0) return 1;
        printf("wrote %s: %llu spans in %.2f s\n", path, n, now_s() - t0);
        if (stat(path, &sb) != 0) return 1;
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "lz4 -d -c -q '%s' > /dev/null", path);
    double best_lz4 = 1e30, best_sum = 1e30;
    unsigned long long events = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_s();
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_tools: '%s' failed (is lz4 installed?)\n", cmd);
            return 1;
        }
        double t1 = now_s();
        events = summarise(path);
        double t2 = now_s();
        if (!events) return 1;
        if (t1 - t0 < best_lz4) best_lz4 = t1 - t0;
        if (t2 - t1 < best_sum) best_sum = t2 - t1;
    }
    double lz4_eps = (double)events / best_lz4, sum_eps = (double)events / best_sum;
    printf("file: %s, %.1f MiB, %llu events\n", path, (double)sb.st_size / 1048576.0, events);
    printf("lz4 -d             %8.3f s  %10.2f M events/s  %8.1f MiB/s of file\n", best_lz4, lz4_eps / 1e6,
           (double)sb.st_size / 1048576.0 / best_lz4);
    printf("read + summarise   %8.3f s  %10.2f M events/s  %8.1f MiB/s of file\n", best_sum, sum_eps / 1e6,
           (double)sb.st_size / 1048576.0 / best_sum);
    printf("ratio summarise/lz4: %.2f (target >= 0.25)\n", sum_eps / lz4_eps);
    return 0;
}
