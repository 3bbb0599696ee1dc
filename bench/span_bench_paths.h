/* span_bench_paths.h — part of span_bench.c, included once after its helpers (it uses
 * them: N, site, plain_loop, span_loop, med_of, two_threads, init_full, floor_span_shape).
 *
 * The span's three paths side by side in one run: recording (a ring large enough), dropping
 * (a 4 KiB ring whose collector is held in a sink's write, so after the first ~100 spans
 * every span finds the ring full), thinned (JAGER_SAMPLE_AUTO with a budget of 1 per minute-long
 * window: every span after the first is thinned), against the span-shaped floor; callgrind
 * instructions per span of each; the drain's throughput; the sustained zero-drop rate. */
#include <sys/stat.h>

#include "jager_plugin.h"
#include "callgrind_ir.h"

static uint64_t big_ring(void)
{
    uint64_t ring = 64ull << 20;
    while (ring < (uint64_t)N * 48) ring <<= 1;
    return ring;
}

enum { P_RECORD, P_DROP, P_THIN, P_PLAIN, P_FLOOR, P_N };
static const char *const path_names[P_N] = {"record", "drop", "thin", "plain", "floor"};

/* The dropping case's sink: its write waits while `hold` is set, which keeps the collector
 * from draining, so the ring stays full. */
static _Atomic(int) hold;
static jager_status hold_write(void *ctx, const jager_batch *b)
{
    (void)ctx;
    (void)b;
    while (atomic_load(&hold)) usleep(1000);
    return JAGER_OK;
}

static void path_init(int p)
{
    if (p == P_RECORD) init_full(big_ring(), 10, 0, 0, 0, NULL);
    if (p == P_DROP) {
        init_full(4096, 600000, 0, 0, 0, NULL);
        jager_sink s = {.struct_size = sizeof s, .name = "hold", .write = hold_write};
        atomic_store(&hold, 1);
        jager_sink_add(&s);
    }
    if (p == P_THIN) init_full(1u << 20, 10, JAGER_SAMPLE_AUTO, 1, 60000000000ull, NULL);
}

/* The loop callgrind counts (--toggle-collect=cg_loop): not inlined, one body per path. */
__attribute__((noinline)) void cg_loop(int p, long n);
__attribute__((noinline)) void cg_loop(int p, long n)
{
    double x = 1.0;
    if (p == P_PLAIN) {
        for (long i = 0; i < n; i++) {
            WORK(x);
            __asm__ volatile("" : "+x"(x));
        }
    } else if (p == P_FLOOR) {
        uint64_t rec[5 * 64];
        for (long i = 0; i < n; i++) {
            uint64_t a = __rdtsc();
            WORK(x);
            __asm__ volatile("" : "+x"(x));
            uint64_t *r = &rec[(i & 63) * 5];
            r[0] = 1;
            r[1] = a;
            r[2] = __rdtsc();
            r[3] = (uint64_t)i;
            r[4] = 0;
            __asm__ volatile("" : : "r"(r) : "memory");
        }
    } else {
        for (long i = 0; i < n; i++) {
            jager_span s = jager_span_begin(site);
            WORK(x);
            __asm__ volatile("" : "+x"(x));
            jager_span_end(s);
        }
    }
    sink_d = x;
}

static int callgrind_case(const char *name, long n)
{
    int p = 0;
    while (p < P_N && strcmp(path_names[p], name)) p++;
    if (p == P_N) return 2;
    if (p <= P_THIN) path_init(p);
    site = jager_site_register("bench.span", __FILE__, __LINE__);
    cg_loop(P_PLAIN + 100, 2000); /* warm: the thread's state, aggregates and ring exist */
    for (long i = 0; i < 2000; i++) jager_span_end(jager_span_begin(site));
    cg_loop(p, n);
    atomic_store(&hold, 0);
    if (p <= P_THIN) jager_shutdown();
    return 0;
}

/* ---- the sustained zero-drop rate: producers paced at a rate per thread ---- */

typedef struct paced {
    double rate; /* spans per second per thread */
    double secs;
    uint64_t spans;
} paced;

static void *paced_main(void *arg)
{
    paced *p = arg;
    uint64_t t0 = mono_ns(), end = t0 + (uint64_t)(p->secs * 1e9), n = 0;
    for (;;) {
        for (int i = 0; i < 32; i++) jager_span_end(jager_span_begin(site));
        n += 32;
        uint64_t now = mono_ns();
        if (now >= end) break;
        if (p->rate > 0) {
            uint64_t due = t0 + (uint64_t)((double)n / p->rate * 1e9);
            while (now < due && now < end) now = mono_ns();
        }
    }
    p->spans = n;
    return NULL;
}

/* Run \p threads producers at \p rate for \p secs; returns the events dropped meanwhile and
 * sets *achieved to the rate per thread they reached. */
static uint64_t paced_run(int threads, double rate, double secs, double *achieved)
{
    jager_stat a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
    jager_stats(&a);
    pthread_t th[2];
    paced p[2] = {{rate, secs, 0}, {rate, secs, 0}};
    for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, paced_main, &p[i]);
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
    jager_stats(&b);
    *achieved = (double)(p[0].spans + (threads > 1 ? p[1].spans : 0)) / threads / secs;
    return b.events_dropped - a.events_dropped;
}

/* The default ring and period (1 MiB, 50 ms), every span an event, with a file sink (the drain compresses):
 * the highest rate per thread with zero drops, by bisection between 0 and the unpaced
 * rate. Sets *max_rate to the unpaced rate. */
static double sustained_rate(int threads, const char *file, double *max_rate, uint64_t *max_drops)
{
    jager_config c;
    jager_config_init(&c);
    c.quiet = 1;
    c.output = file;
    c.sample_mode = JAGER_SAMPLE_ALL; /* the drain's capacity: every span an event */
    *max_rate = 0;
    *max_drops = 0;
    if (jager_init(&c) != JAGER_OK) return -1;
    site = jager_site_register("bench.span", __FILE__, __LINE__);
    double got;
    *max_drops = paced_run(threads, 0, 0.4, &got);
    *max_rate = got;
    double lo = 0, hi = got;
    if (*max_drops == 0) lo = hi;
    for (int it = 0; it < 7 && hi - lo > hi * 0.03; it++) {
        double mid = (lo + hi) / 2;
        uint64_t d = paced_run(threads, mid, 0.4, &got);
        if (d == 0 && got > mid * 0.95) lo = mid;
        else hi = mid;
    }
    jager_shutdown();
    remove(file);
    return lo;
}

/* The drain: 400 000 spans (16 MB) wait in a 64 MiB ring (under its watermark), then one
 * jager_flush() drains, compresses and writes them; also the file's bytes per span. */
static void drain_throughput(const char *file, double *mbps, double *bytes_per_span)
{
    const long n = 400000;
    init_full(64u << 20, 600000, 0, 0, 0, file);
    for (long i = 0; i < n; i++) jager_span_end(jager_span_begin(site));
    uint64_t t0 = mono_ns();
    jager_flush();
    uint64_t dt = mono_ns() - t0;
    jager_shutdown();
    struct stat sb;
    *mbps = (double)n * 40.0 / ((double)dt / 1e9) / 1e6;
    *bytes_per_span = stat(file, &sb) == 0 ? (double)sb.st_size / (double)n : -1;
    remove(file);
}

static void paths_side_by_side(const char *self, double plain, double f_span)
{
    double med1[3], best1[3], med2[3], best2[3], frac[3];
    double pa, pb;
    two_threads(plain_loop, &pa, &pb);
    double plain2 = (pa + pb) / 2;
    for (int p = P_RECORD; p <= P_THIN; p++) {
        path_init(p);
        med1[p] = med_of(span_loop) - plain;
        best1[p] = last_best - plain;
        double a, b;
        two_threads(span_loop, &a, &b);
        med2[p] = (a + b) / 2 - plain2;
        best2[p] = last_best - plain2;
        jager_stat st = {.struct_size = sizeof st};
        jager_stats(&st);
        jager_site_stat ss = {.struct_size = sizeof ss};
        jager_site_stats(site, &ss);
        frac[p] = p == P_THIN ? (ss.calls ? 100.0 * (double)ss.thinned / (double)ss.calls : 0)
                              : (st.events_emitted ? 100.0 * (double)st.events_dropped / (double)st.events_emitted : 0);
        atomic_store(&hold, 0);
        jager_shutdown();
    }
    double fmed = f_span, fbest = last_best;
    (void)fbest;
    const long cgn = 200000;
    double ir[P_N];
    for (int p = 0; p < P_N; p++) ir[p] = bench_callgrind_ir(self, "cg_loop", "bench_span", path_names[p], cgn);
    printf("\nthe span's paths side by side (ns per span beyond the bare loop; median and best of %d repetitions):\n", REPS);
    printf("  %-34s %9s %9s %9s %9s %8s  %s\n", "", "1 thr med", "best", "2 thr med", "best", "instr", "");
    static const char *const label[3] = {"recording (ring large enough)", "dropping (4 KiB ring, full)",
                                         "thinned (JAGER_SAMPLE_AUTO)"};
    static const char *const what[3] = {"dropped", "dropped", "thinned"};
    for (int p = P_RECORD; p <= P_THIN; p++) {
        double i = ir[p] >= 0 && ir[P_PLAIN] >= 0 ? (ir[p] - ir[P_PLAIN]) / (double)cgn : -1;
        printf("  %-34s %9.2f %9.2f %9.2f %9.2f %8.1f  %.1f%% %s\n", label[p], med1[p], best1[p], med2[p], best2[p], i, frac[p],
               what[p]);
    }
    double fi = ir[P_FLOOR] >= 0 && ir[P_PLAIN] >= 0 ? (ir[P_FLOOR] - ir[P_PLAIN]) / (double)cgn : -1;
    printf("  %-34s %9.2f %9s %9s %9s %8.1f\n", "span-shaped floor (2 rdtsc + store)", fmed, "", "", "", fi);
    printf("ratios (1 thread, median): dropping / recording = %.2f, thinned / recording = %.2f, recording / floor = %.2f\n",
           med1[P_DROP] / med1[P_RECORD], med1[P_THIN] / med1[P_RECORD], med1[P_RECORD] / fmed);
    if (ir[P_PLAIN] < 0) printf("(instructions: valgrind not found, -1)\n");

    char file[64];
    snprintf(file, sizeof file, "/tmp/bench_span.%d.jgr", (int)getpid());
    double mbps, bps;
    drain_throughput(file, &mbps, &bps);
    printf("\ndrain: 16 MB of span records drained, LZ4-compressed and written by one jager_flush(): %.0f MB/s "
           "(%.1f M spans/s); %.2f bytes per span in the file\n",
           mbps, mbps / 40.0, bps);
    for (int threads = 1; threads <= 2; threads++) {
        double maxr = 0;
        uint64_t maxd = 0;
        double r = sustained_rate(threads, file, &maxr, &maxd);
        printf("sustained, default ring and period (1 MiB, 50 ms), JAGER_SAMPLE=all, %d producer%s: %.2f M spans/s per thread with zero drops "
               "(unpaced: %.2f M/s per thread, %llu dropped in 0.4 s)\n",
               threads, threads > 1 ? "s" : " ", r / 1e6, maxr / 1e6, (unsigned long long)maxd);
    }
}
