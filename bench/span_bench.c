/* bench_span: the cost of one span (begin + end) through libjager.so, against the same loop
 * uninstrumented and against the machine's floors, in one run. Medians of 7 repetitions,
 * the best beside them. Then, side by side: recording vs dropping (full ring) vs thinned
 * (JAGER_SAMPLE_AUTO) vs the span-shaped floor, 1 and 2 threads; callgrind instructions
 * per span of each path (when valgrind is on PATH: the count does not depend on the
 * machine's load); the collector's drain+compress throughput; and the sustained span rate
 * one and two producers keep with zero drops at the default settings.
 *
 *   bench_span [spans_per_rep]
 *   bench_span --callgrind-case CASE N   (what the callgrind pass runs; prints nothing)
 */
#include <pthread.h>
#include <unistd.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "jager.h"

#define REPS 7

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return (double)v[n / 2];
}

static volatile double sink_d;
static long N = 2000000;
static jager_site site;

/* The work inside each span: a dependent multiply-add, a few ns, that the compiler keeps. */
#define WORK(x) ((x) = (x) * 1.0000001 + 1e-9)

static double plain_loop(void)
{
    double x = 1.0;
    uint64_t t0 = mono_ns();
    for (long i = 0; i < N; i++) {
        WORK(x);
        __asm__ volatile("" : "+x"(x));
    }
    uint64_t dt = mono_ns() - t0;
    sink_d = x;
    return (double)dt / (double)N;
}

static double span_loop(void)
{
    double x = 1.0;
    uint64_t t0 = mono_ns();
    for (long i = 0; i < N; i++) {
        jager_span s = jager_span_begin(site);
        WORK(x);
        __asm__ volatile("" : "+x"(x));
        jager_span_end(s);
    }
    uint64_t dt = mono_ns() - t0;
    sink_d = x;
    return (double)dt / (double)N;
}

static double macro_loop(void)
{
    double x = 1.0;
    uint64_t t0 = mono_ns();
    for (long i = 0; i < N; i++) {
        JAGER_SPAN("bench.macro");
        WORK(x);
        __asm__ volatile("" : "+x"(x));
    }
    uint64_t dt = mono_ns() - t0;
    sink_d = x;
    return (double)dt / (double)N;
}

static double last_best; /* the best repetition of the last med_of() on this thread */
static __thread double t_best;
static double med_of(double (*fn)(void))
{
    uint64_t v[REPS];
    for (int r = 0; r < REPS; r++) v[r] = (uint64_t)(fn() * 1000.0);
    double m = median(v, REPS) / 1000.0; /* sorts v */
    t_best = last_best = (double)v[0] / 1000.0;
    return m;
}

static double floor_rdtsc_pair(void)
{
    uint64_t t0 = mono_ns(), acc = 0;
    for (long i = 0; i < N; i++) acc += __rdtsc() + __rdtsc();
    sink_d = (double)acc;
    return (double)(mono_ns() - t0) / (double)N;
}

static double floor_clock_gettime(void)
{
    uint64_t t0 = mono_ns(), acc = 0;
    for (long i = 0; i < N; i++) acc += mono_ns();
    sink_d = (double)acc;
    return (double)(mono_ns() - t0) / (double)N;
}

/* The floor of a recorded span, inline and with nothing else: two rdtsc around the work
 * and a 40-byte record stored at a plain cursor into a large buffer (as the issue's
 * "two rdtsc + two ring stores" measurement). */
static uint8_t *floor_buf;
static const size_t FLOOR_BYTES = 256u << 20;
static double floor_span_shape(void)
{
    double x = 1.0;
    size_t cur = 0;
    uint64_t t0 = mono_ns();
    for (long i = 0; i < N; i++) {
        uint64_t a = __rdtsc();
        WORK(x);
        __asm__ volatile("" : "+x"(x));
        uint64_t b = __rdtsc();
        uint64_t *rec = (uint64_t *)(floor_buf + cur);
        rec[0] = 1;
        rec[1] = a;
        rec[2] = b;
        rec[3] = (uint64_t)i;
        rec[4] = 0;
        cur += 40;
        if (cur + 40 > FLOOR_BYTES) cur = 0;
    }
    uint64_t dt = mono_ns() - t0;
    sink_d = x + (double)floor_buf[cur];
    return (double)dt / (double)N;
}

static _Atomic(uint64_t) shared_cursor;
static double floor_fetch_add(void)
{
    uint64_t t0 = mono_ns(), acc = 0;
    for (long i = 0; i < N; i++) acc += atomic_fetch_add_explicit(&shared_cursor, 1, memory_order_relaxed);
    sink_d = (double)acc;
    return (double)(mono_ns() - t0) / (double)N;
}

typedef struct thr {
    double (*fn)(void);
    double ns, best;
} thr;

static void *thr_main(void *arg)
{
    thr *t = arg;
    t->ns = med_of(t->fn);
    t->best = t_best;
    return NULL;
}

static void two_threads(double (*fn)(void), double *a, double *b)
{
    pthread_t th[2];
    thr t[2] = {{fn, 0, 0}, {fn, 0, 0}};
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, thr_main, &t[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    *a = t[0].ns;
    *b = t[1].ns;
    last_best = (t[0].best + t[1].best) / 2;
}

static void init_full(uint64_t ring_bytes, uint32_t flush_ms, uint32_t sample_mode, uint32_t sample_n, uint64_t iv_ns,
                      const char *output)
{
    jager_config c;
    jager_config_init(&c);
    c.quiet = 1;
    c.ring_bytes = ring_bytes;
    c.flush_interval_ms = flush_ms;
    c.output = output;
    /* 0 is JAGER_SAMPLE_ALL: every span an event, the path each case times */
    c.sample_mode = sample_mode;
    c.sample_n = sample_n ? sample_n : 1;
    c.sample_interval_ns = iv_ns ? iv_ns : 1000000u;
    if (jager_init(&c) != JAGER_OK) {
        fprintf(stderr, "bench_span: jager_init failed: %s\n", jager_last_error());
        exit(1);
    }
    site = jager_site_register("bench.span", __FILE__, __LINE__);
}

static void init_with_ring(uint64_t ring_bytes) { init_full(ring_bytes, 10, 0, 0, 0, NULL); }

#include "span_bench_paths.h"

int main(int argc, char **argv)
{
    if (argc > 3 && !strcmp(argv[1], "--callgrind-case")) return callgrind_case(argv[2], atol(argv[3]));
    if (argc > 1) N = atol(argv[1]);
    if (N < 1000) N = 1000;
    site = jager_site_register("bench.span", __FILE__, __LINE__);

    double plain = med_of(plain_loop);
    double uninit = med_of(span_loop) - plain; /* not initialised: two calls, one branch each */
    double uninit_macro = med_of(macro_loop) - plain; /* not initialised: one inline branch */

    /* A ring large enough to hold a whole repetition: the recording path, no drops. */
    uint64_t ring = 64ull << 20;
    while (ring < (uint64_t)N * 48) ring <<= 1;
    init_with_ring(ring);
    double on1 = med_of(span_loop) - plain;
    double a, b;
    two_threads(span_loop, &a, &b);
    double pa, pb;
    two_threads(plain_loop, &pa, &pb);
    double on2 = ((a - pa) + (b - pb)) / 2;
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    double self_cost = (double)st.span_cost_ns_x1000 / 1000.0;
    jager_shutdown();

    /* A 1 MiB ring with every span an event (JAGER_SAMPLE=all): a tight loop of empty spans
     * outruns the collector and many events take the drop path; aggregates stay exact. */
    init_full(1u << 20, 50, JAGER_SAMPLE_ALL, 1, 0, NULL);
    double all1m = med_of(span_loop) - plain;
    jager_stats(&st);
    double dropped_pct = st.events_emitted ? 100.0 * (double)st.events_dropped / (double)st.events_emitted : 0;
    jager_shutdown();

    /* The defaults of jager_config_init(): the same ring, thinning on purpose (auto). */
    jager_config dc;
    jager_config_init(&dc);
    init_full(dc.ring_bytes, dc.flush_interval_ms, dc.sample_mode, dc.sample_n, dc.sample_interval_ns, NULL);
    double dflt = med_of(span_loop) - plain;
    jager_stats(&st);
    jager_site_stat ss = {.struct_size = sizeof ss};
    jager_site_stats(site, &ss);
    double dflt_dropped = ss.calls ? 100.0 * (double)ss.dropped / (double)ss.calls : 0;
    double dflt_thinned = ss.calls ? 100.0 * (double)ss.thinned / (double)ss.calls : 0;
    jager_shutdown();

    setenv("JAGER_DISABLE", "1", 1);
    jager_init(NULL);
    double disabled = med_of(span_loop) - plain;
    double disabled_macro = med_of(macro_loop) - plain;
    unsetenv("JAGER_DISABLE");

    double f_rdtsc = med_of(floor_rdtsc_pair), f_cg = med_of(floor_clock_gettime), f_fa = med_of(floor_fetch_add);
    floor_buf = malloc(FLOOR_BYTES);
    if (!floor_buf) return 1;
    memset(floor_buf, 1, FLOOR_BYTES); /* prefault, like the rings */
    double f_span = med_of(floor_span_shape) - plain;
    free(floor_buf);

    printf("bench_span: %ld spans per repetition, median of %d, ns per span (begin+end) beyond the bare loop\n", N, REPS);
    printf("  bare loop body                           %7.2f ns/iter\n", plain);
    printf("  not initialised, begin/end calls         %7.2f ns\n", uninit);
    printf("  not initialised, JAGER_SPAN scope        %7.2f ns   (target <= 1)\n", uninit_macro);
    printf("  JAGER_DISABLE=1, begin/end calls         %7.2f ns\n", disabled);
    printf("  JAGER_DISABLE=1, JAGER_SPAN scope        %7.2f ns   (target <= 1)\n", disabled_macro);
    printf("  recording, 1 thread                      %7.2f ns   (target <= 40)\n", on1);
    printf("  recording, 2 threads (mean per thread)   %7.2f ns\n", on2);
    printf("  1 MiB ring, JAGER_SAMPLE=all, tight loop %7.2f ns   (%.1f%% dropped and counted)\n", all1m, dropped_pct);
    printf("  the defaults (auto), tight loop          %7.2f ns   (%.1f%% thinned on purpose, %.2f%% dropped)\n", dflt,
           dflt_thinned, dflt_dropped);
    printf("  self-measured at init (jager_stat)       %7.2f ns\n", self_cost);
    printf("floors on this machine:\n");
    printf("  two rdtsc                                %7.2f ns\n", f_rdtsc);
    printf("  clock_gettime                            %7.2f ns\n", f_cg);
    printf("  atomic fetch_add (uncontended)           %7.2f ns\n", f_fa);
    printf("  span-shaped floor: 2 rdtsc + 40 B store  %7.2f ns   (inline, nothing else)\n", f_span);
    printf("ratio: recording, 1 thread / span-shaped floor = %.2f\n", on1 / f_span);
    paths_side_by_side(argv[0], plain, f_span);
    return 0;
}
