/* bench_span_hooks: what span hooks (plugin ABI 1.3) cost, side by side in one run:
 *   none      no plugin loaded: spans of a site
 *   unhooked  a plugin hooks another site: spans of this one (must equal "none")
 *   hooked    spans of the hooked site, whose begin and end hooks only count
 * Medians of 7 repetitions of N spans (CPU ns per span of the timing thread, and the ratio
 * to "none"), and callgrind
 * instructions per span of each case when valgrind is on PATH (the count does not depend
 * on the machine's load). Prints; asserts nothing.
 *
 *   bench_span_hooks [spans_per_rep]
 *   bench_span_hooks --callgrind-case CASE N   (what the callgrind pass runs)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jager.h"
#include "../callgrind_ir.h"

#define REPS 7
enum { C_NONE, C_UNHOOKED, C_HOOKED, C_N };
static const char *const case_names[C_N] = {"none", "unhooked", "hooked"};

static long N = 2000000;
static volatile double sink_d;
#define WORK(x) ((x) = (x) * 1.0000001 + 1e-9)

/* The thread's CPU time: a loaded machine's descheduling is not counted against a case. */
static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Start a run (big ring, so spans record) with or without the hooks plugin; the site the
 * case times. */
static jager_site case_init(int c)
{
    jager_config cfg;
    jager_config_init(&cfg);
    uint64_t bytes = 64ull << 20;
    while (bytes < (uint64_t)N * 48) bytes <<= 1;
    cfg.ring_bytes = bytes;
    cfg.quiet = 1;
    cfg.plugins = c == C_NONE ? NULL : "benchhooks";
    cfg.plugin_path = BENCH_PLUGIN_DIR;
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "bench_span_hooks: jager_init: %s\n", jager_last_error());
        exit(1);
    }
    return jager_site_register(c == C_HOOKED ? "bench.hooked" : "bench.plain", __FILE__, __LINE__);
}

__attribute__((noinline)) void cg_loop(jager_site site, long n);
__attribute__((noinline)) void cg_loop(jager_site site, long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++) {
        jager_span s = jager_span_begin(site);
        WORK(x);
        __asm__ volatile("" : "+x"(x));
        jager_span_end(s);
    }
    sink_d = x;
}

static double time_case(int c)
{
    double v[REPS];
    for (int r = 0; r < REPS; r++) {
        jager_site site = case_init(c);
        cg_loop(site, 2000); /* warm: thread state, aggregates, caches */
        uint64_t t0 = mono_ns();
        cg_loop(site, N);
        v[r] = (double)(mono_ns() - t0) / (double)N;
        jager_shutdown();
    }
    qsort(v, REPS, sizeof v[0], cmp_d);
    return v[REPS / 2];
}

static int callgrind_case(const char *name, long n)
{
    int c = 0;
    while (c < C_N && strcmp(case_names[c], name)) c++;
    if (c == C_N) return 2;
    jager_site site = case_init(c);
    cg_loop(site, 2000);
    cg_loop(site, n);
    jager_shutdown();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 3 && !strcmp(argv[1], "--callgrind-case")) return callgrind_case(argv[2], atol(argv[3]));
    if (argc > 1) N = atol(argv[1]);
    if (N < 1000) N = 1000;
    double ns[C_N];
    /* Interleaved twice (none, unhooked, hooked, none, ...): the better of each pair, so a
     * burst of load on the machine does not land on one case only. */
    for (int c = 0; c < C_N; c++) ns[c] = time_case(c);
    for (int c = 0; c < C_N; c++) {
        double again = time_case(c);
        if (again < ns[c]) ns[c] = again;
    }
    printf("span hooks: thread CPU ns per span (begin + end), median of %d x %ld spans, better of 2 passes\n", REPS, N);
    printf("  %-9s %8s %8s\n", "case", "ns/span", "x none");
    for (int c = 0; c < C_N; c++) printf("  %-9s %8.2f %8.3f\n", case_names[c], ns[c], ns[c] / ns[0]);
    char self[4096];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) return 0;
    self[k] = 0;
    const long cgn = 100000;
    double ir[C_N];
    for (int c = 0; c < C_N; c++) ir[c] = bench_callgrind_ir(self, "cg_loop", "bench_span_hooks", case_names[c], cgn);
    if (ir[0] < 0) {
        printf("callgrind: valgrind not found, instruction counts skipped\n");
        return 0;
    }
    printf("callgrind instructions per span (loop of %ld spans + 2000 warm-up, work included)\n", cgn);
    printf("  %-9s %8s %8s\n", "case", "Ir/span", "x none");
    for (int c = 0; c < C_N; c++)
        printf("  %-9s %8.2f %8.3f\n", case_names[c], ir[c] / (double)(cgn + 2000), ir[c] / ir[0]);
    return 0;
}
