/* bench_span_peer: Jäger's span beside an NVTX-like injection library (nvtx_peer.c, a
 * reference written for this benchmark: two TSC reads and a 32-byte store into a per-thread
 * buffer per range, called through NVTX's function-pointer wrappers) in one run, around
 * the same small noinline function. Trials take the cases in turn (the order rotates every
 * trial, so no case always runs after the same one), each case a fresh jager_init with its
 * configuration and a warm-up. Per case: the per-trial mean's median and best, and the
 * per-batch (64 spans) p50 / p90 / p99 / p99.9, all in ns per span beyond the bare call;
 * the ratios to the injection library; and, when valgrind is on PATH, instructions per span
 * by callgrind (they do not depend on the machine's load).
 *
 *   bench_span_peer [trials [spans_per_trial]]     (default 15 trials of 1 000 000 spans)
 *   bench_span_peer --callgrind-case CASE N        (what the callgrind pass runs)
 *
 * Asserts nothing; compare figures only within one run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "jager.h"
#include "nvtx_peer.h"
#include "../callgrind_ir.h"

#define K 64 /* spans per timed batch */

static double ticks_per_ns = 1.0;
static volatile double sink_d;
static jager_site site;
static uint8_t *floor_buf;
#define FLOOR_RECS (1u << 20)

/* The function every case wraps (the "1.4 ns function"). */
__attribute__((noinline, noipa)) static double work(double x) { return x * 1.0000001 + 1e-9; }

/* One loop per case, so no case pays for another's branch: nb batches of K spans, each
 * batch's TSC ticks into out[]. */
#define TIMED_LOOP(name, BEGIN, END)                                                                                   \
    __attribute__((noinline)) static void name(long nb, uint64_t *out)                                                \
    {                                                                                                                  \
        double x = 1.0;                                                                                                \
        for (long b = 0; b < nb; b++) {                                                                                \
            uint64_t t0 = __rdtsc();                                                                                   \
            for (int k = 0; k < K; k++) {                                                                              \
                BEGIN;                                                                                                 \
                x = work(x);                                                                                           \
                END;                                                                                                   \
            }                                                                                                          \
            out[b] = __rdtsc() - t0;                                                                                   \
        }                                                                                                              \
        sink_d = x;                                                                                                    \
    }

TIMED_LOOP(loop_call, (void)0, (void)0)
TIMED_LOOP(loop_peer, nvtxpRangePushA("bench.span"), nvtxpRangePop())
TIMED_LOOP(loop_jager, jager_span s = jager_span_begin(site), jager_span_end(s))

/* The span-shaped floor, inline: two TSC reads around the call and a 32-byte record at a
 * cursor into a prefaulted buffer that wraps. */
static uint64_t floor_cursor;
__attribute__((noinline)) static void loop_floor(long nb, uint64_t *out)
{
    double x = 1.0;
    uint64_t cur = floor_cursor;
    for (long b = 0; b < nb; b++) {
        uint64_t t0 = __rdtsc();
        for (int k = 0; k < K; k++) {
            uint64_t a = __rdtsc();
            x = work(x);
            uint64_t e = __rdtsc();
            uint64_t *r = (uint64_t *)(void *)(floor_buf + (cur++ & (FLOOR_RECS - 1)) * 32);
            r[0] = a;
            r[1] = e;
            r[2] = (uint64_t)(uintptr_t)"bench.span";
            r[3] = 1;
        }
        out[b] = __rdtsc() - t0;
    }
    floor_cursor = cur;
    sink_d = x;
}

enum { C_CALL, C_FLOOR, C_PEER, C_AUTO, C_ALL_BIG, C_ALL_1M, C_N };
static const char *const case_key[C_N] = {"call", "floor", "peer", "auto", "all_big", "all_1m"};
static const char *const case_label[C_N] = {
    "bare call (the function alone)",
    "span-shaped floor, inline (2 rdtsc + 32 B)",
    "NVTX-like injection (bench/peer)",
    "Jager, defaults (JAGER_SAMPLE=auto)",
    "Jager, thinning off, ring large enough",
    "Jager, thinning off, 1 MiB ring (default)",
};
static void (*const case_loop[C_N])(long, uint64_t *) = {loop_call, loop_floor, loop_peer,
                                                         loop_jager, loop_jager, loop_jager};

static long spans_per_trial = 1000000;
/* Under callgrind (50x slower) a tight loop stays below auto's budget of 1000 spans a ms, so
 * the auto case counts its thinned path with a minute-long window instead. */
static int under_callgrind;

static uint64_t pow2_at_least(uint64_t v)
{
    uint64_t r = 4096;
    while (r < v) r <<= 1;
    return r;
}

/* The case's recorder, started fresh (a Jäger case: jager_init with its configuration). */
static void case_setup(int c)
{
    if (c < C_AUTO) return;
    jager_config cfg;
    jager_config_init(&cfg); /* the defaults: 1 MiB ring, 50 ms, JAGER_SAMPLE_AUTO */
    cfg.quiet = 1;
    if (c != C_AUTO) cfg.sample_mode = JAGER_SAMPLE_ALL;
    if (c == C_AUTO && under_callgrind) cfg.sample_interval_ns = 60000000000ull;
    if (c == C_ALL_BIG) cfg.ring_bytes = pow2_at_least((uint64_t)(spans_per_trial + 64 * K) * 40);
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "bench_span_peer: jager_init failed: %s\n", jager_last_error());
        exit(1);
    }
    site = jager_site_register("bench.span", __FILE__, __LINE__);
}

typedef struct tally {
    uint64_t calls, thinned, dropped;
} tally;

static void case_teardown(int c, tally *a)
{
    if (c < C_AUTO) return;
    jager_site_stat ss = {.struct_size = sizeof ss};
    jager_site_stats(site, &ss);
    a->calls += ss.calls;
    a->thinned += ss.thinned;
    a->dropped += ss.dropped;
    jager_shutdown();
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void calibrate(void)
{
    uint64_t n0 = mono_ns(), t0 = __rdtsc(), n1;
    while ((n1 = mono_ns()) - n0 < 50000000u) {
    }
    ticks_per_ns = (double)(__rdtsc() - t0) / (double)(n1 - n0);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[0..n). */
static double quantile(const double *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* The loop callgrind counts (--toggle-collect=cg_run). */
__attribute__((noinline)) void cg_run(int c, long nb, uint64_t *out);
__attribute__((noinline)) void cg_run(int c, long nb, uint64_t *out) { case_loop[c](nb, out); }

static int peer_loaded;
static void load_peer(const char *argv0)
{
    char path[4096];
    const char *env = getenv("JAGER_BENCH_PEER_LIB");
    if (env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
        if (n <= 0) n = (ssize_t)snprintf(path, sizeof path - 32, "%s", argv0);
        path[n] = 0;
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, 32, "libnvtx_peer.so");
    }
    peer_loaded = nvtxp_load(path) == 0;
    if (!peer_loaded) fprintf(stderr, "bench_span_peer: cannot load the injection library %s: %s\n", path, dlerror());
}

static int callgrind_case(const char *name, long n, const char *argv0)
{
    int c = 0;
    while (c < C_N && strcmp(case_key[c], name)) c++;
    if (c == C_N) return 2;
    under_callgrind = 1;
    load_peer(argv0);
    floor_buf = calloc(FLOOR_RECS, 32);
    if (!floor_buf) return 1;
    spans_per_trial = n;
    case_setup(c);
    long nb = n / K;
    uint64_t *out = calloc((size_t)nb + 64, sizeof *out);
    if (!out) return 1;
    case_loop[c](64, out); /* warm: thread state, ring, the site's aggregate, the peer's buffer */
    cg_run(c, nb, out);
    tally a = {0, 0, 0};
    case_teardown(c, &a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 3 && !strcmp(argv[1], "--callgrind-case")) return callgrind_case(argv[2], atol(argv[3]), argv[0]);
    int trials = argc > 1 ? atoi(argv[1]) : 15;
    if (argc > 2) spans_per_trial = atol(argv[2]);
    if (trials < 3) trials = 3;
    if (spans_per_trial < 100 * K) spans_per_trial = 100 * K;
    load_peer(argv[0]);
    if (!peer_loaded) return 1;
    floor_buf = malloc((size_t)FLOOR_RECS * 32);
    if (!floor_buf) return 1;
    memset(floor_buf, 1, (size_t)FLOOR_RECS * 32);
    calibrate();

    long nb = spans_per_trial / K;
    uint64_t *ticks = malloc((size_t)nb * sizeof *ticks);
    double *per_batch[C_N], *per_trial[C_N];
    for (int c = 0; c < C_N; c++) {
        per_batch[c] = malloc((size_t)nb * (size_t)trials * sizeof(double));
        per_trial[c] = malloc((size_t)trials * sizeof(double));
        if (!per_batch[c] || !per_trial[c]) return 1;
    }
    if (!ticks) return 1;
    tally acc[C_N];
    memset(acc, 0, sizeof acc);

    for (int t = 0; t < trials; t++) {
        for (int i = 0; i < C_N; i++) {
            int c = (i + t) % C_N;
            case_setup(c);
            case_loop[c](64, ticks); /* warm-up: 4096 spans */
            case_loop[c](nb, ticks);
            case_teardown(c, &acc[c]);
            double sum = 0;
            for (long b = 0; b < nb; b++) {
                double ns = (double)ticks[b] / ticks_per_ns / K;
                per_batch[c][(size_t)t * (size_t)nb + (size_t)b] = ns;
                sum += ns;
            }
            per_trial[c][t] = sum / (double)nb;
        }
    }

    /* Beyond the bare call: each trial's mean minus that trial's bare call; each batch minus
     * the bare call's median batch. */
    size_t nall = (size_t)nb * (size_t)trials;
    for (int c = 0; c < C_N; c++) qsort(per_batch[c], nall, sizeof(double), cmp_d);
    double call_batch_med = quantile(per_batch[C_CALL], nall, 0.5);
    double med[C_N], best[C_N], q[C_N][4];
    static const double qs[4] = {0.5, 0.9, 0.99, 0.999};
    double *d = malloc((size_t)trials * sizeof(double));
    if (!d) return 1;
    for (int c = 0; c < C_N; c++) {
        for (int t = 0; t < trials; t++) d[t] = per_trial[c][t] - (c == C_CALL ? 0 : per_trial[C_CALL][t]);
        qsort(d, (size_t)trials, sizeof(double), cmp_d);
        med[c] = quantile(d, (size_t)trials, 0.5);
        best[c] = d[0];
        for (int k = 0; k < 4; k++) q[c][k] = quantile(per_batch[c], nall, qs[k]) - (c == C_CALL ? 0 : call_batch_med);
    }

    printf("bench_span_peer: %d trials x %ld spans per case, cases in turn (order rotating), each span around the same "
           "noinline function; TSC %.3f ticks/ns\n",
           trials, spans_per_trial, ticks_per_ns);
    printf("ns per span beyond the bare call (the bare call's own row: ns per call); trial = a trial's mean, "
           "batch = %d spans\n",
           K);
    printf("  %-42s %8s %8s | %8s %8s %8s %8s |\n", "", "trial", "trial", "batch", "batch", "batch", "batch");
    printf("  %-42s %8s %8s | %8s %8s %8s %8s | %s\n", "", "median", "best", "p50", "p90", "p99", "p99.9", "accounting");
    for (int c = 0; c < C_N; c++) {
        char note[128] = "";
        if (c >= C_AUTO && acc[c].calls) {
            double n = (double)acc[c].calls;
            snprintf(note, sizeof note, "%.2f%% thinned, %.3f%% dropped", 100.0 * (double)acc[c].thinned / n,
                     100.0 * (double)acc[c].dropped / n);
        }
        if (c == C_PEER) snprintf(note, sizeof note, "records every range, no consumer");
        printf("  %-42s %8.2f %8.2f | %8.2f %8.2f %8.2f %8.2f | %s\n", case_label[c], med[c], best[c], q[c][0], q[c][1],
               q[c][2], q[c][3], note);
    }
    printf("ratios to the NVTX-like injection (target: median within 1.20; on a loaded host the trial means carry\n"
           "other programs' time, the batch median does not):\n");
    printf("  %-42s %8s %8s | %8s %8s %8s\n", "", "trial", "trial", "batch", "batch", "batch");
    printf("  %-42s %8s %8s | %8s %8s %8s\n", "", "median", "best", "p50", "p90", "p99");
    for (int c = C_FLOOR; c < C_N; c++) {
        if (c == C_PEER) continue;
        printf("  %-42s %8.2f %8.2f | %8.2f %8.2f %8.2f\n", case_label[c], med[c] / med[C_PEER], best[c] / best[C_PEER],
               q[c][0] / q[C_PEER][0], q[c][1] / q[C_PEER][1], q[c][2] / q[C_PEER][2]);
    }

    if (!getenv("JAGER_BENCH_NO_CALLGRIND")) {
        const long cgn = 64 * 3200;
        double ir[C_N];
        for (int c = 0; c < C_N; c++) ir[c] = bench_callgrind_ir(argv[0], "cg_run", "bench_span_peer", case_key[c], cgn);
        if (ir[C_CALL] < 0) {
            printf("instructions per span: valgrind not found\n");
        } else {
            printf("instructions per span beyond the bare call (callgrind; auto: its thinned path):");
            for (int c = C_FLOOR; c < C_N; c++) printf(" %s %.1f;", case_key[c], (ir[c] - ir[C_CALL]) / (double)cgn);
            printf("\n");
        }
    }
    return 0;
}
