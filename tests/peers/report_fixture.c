/* report_fixture — records a small but complete run with the real core for the report's
 * browser test and benchmark: nested spans on two threads, logs (some carrying HTML and
 * script payloads), counters, a mark, and Julia-style dispatch telemetry fed through the
 * real dispatch plugin (signatures, compiles, a type instability) and GC pauses from the
 * real gc plugin hooked into the gc tests' stand-in Julia runtime (tests/gc/fake_julia.c,
 * exported from this executable), collections triggered inside `assemble`.
 *
 *   report_fixture OUT.jgr [--spans N] [--plugin-dir DIR] [--rank R]
 *
 * Prints one JSON line with what it recorded, so the test compares the page with it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jager.h"
#include "fake_julia.h"
#include "jager_dispatch.h"

/* Hostile strings: the report must show them as text and execute nothing. */
#define HOSTILE_LOG_IMG "<img src=x onerror=window.__pwned=1>"
#define HOSTILE_LOG_SCRIPT "</script><script>window.__pwned=2</script>"
#define HOSTILE_SITE "\"><svg onload=window.__pwned=3>"

typedef struct plan {
    unsigned long iterations; /* outer iterations of the main thread */
    unsigned long kernels;    /* kernel spans per iteration */
    unsigned long worker_iterations;
    unsigned long spans_main, spans_worker, logs, gc_pauses;
} plan;

static volatile double sink;
static unsigned unit = 100; /* iterations of work() per unit: scaled so any size runs in ~0.2 s */

/* Dependent arithmetic (~25 ns per iteration here) so spans have real, varied durations. */
static void work(unsigned n)
{
    double x = 1.0;
    for (unsigned i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static struct {
    jager_site solve, assemble, kernel, hostile, worker, deposit, scatter;
} S;

static void *worker_main(void *arg)
{
    const plan *p = arg;
    for (unsigned long i = 0; i < p->worker_iterations; i++) {
        jager_span w = jager_span_begin(S.worker);
        jager_span d = jager_span_begin(S.deposit);
        for (int k = 0; k < 3; k++) {
            jager_span s = jager_span_begin(S.scatter);
            work(unit * 3 + (unsigned)(i % 7) * unit / 4); /* deposit! carries a third of the work */
            jager_span_end(s);
        }
        jager_span_end(d);
        jager_span_end(w);
    }
    jager_log(JAGER_SEV_WARN, "worker: " HOSTILE_LOG_SCRIPT, NULL, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *plugin_dir = NULL, *rank = NULL;
    unsigned long spans = 4000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--spans") && i + 1 < argc) spans = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--plugin-dir") && i + 1 < argc) plugin_dir = argv[++i];
        else if (!strcmp(argv[i], "--rank") && i + 1 < argc) rank = argv[++i];
        else out = argv[i];
    }
    if (!out || spans < 100) {
        fprintf(stderr, "usage: report_fixture OUT.jgr [--spans N>=100] [--plugin-dir DIR] [--rank R]\n");
        return 1;
    }
    /* Split the span budget: main thread 2 + kernels per iteration + 1 hostile, worker 5 per iteration. */
    plan p = {0};
    p.kernels = 8;
    p.iterations = spans * 3 / 4 / (p.kernels + 3);
    p.worker_iterations = (spans - p.iterations * (p.kernels + 3)) / 5;
    p.spans_main = p.iterations * (p.kernels + 3);
    p.spans_worker = p.worker_iterations * 5;
    double u = 200e6 / 25.0 / (double)spans / 2.0;
    unit = u < 4 ? 4 : u > 4000 ? 4000 : (unsigned)u;
    uint64_t ring = 1u << 20;
    while (ring < 32u << 20 && ring < (uint64_t)spans * 32) ring <<= 1; /* prefaulting costs time too */

    jager_config cfg;
    jager_config_init(&cfg);
    cfg.output = out;
    cfg.plugins = "dispatch,gc";
    fake_julia_reset(1, 64 << 20);
    cfg.plugin_path = plugin_dir;
    cfg.quiet = 1;
    cfg.ring_bytes = ring; /* no drops: the test compares exact counts */
    cfg.sample_mode = JAGER_SAMPLE_ALL; /* and no thinning */
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "report_fixture: jager_init: %s\n", jager_last_error());
        return 1;
    }
    jager_metadata_set("fixture.purpose", "report test <b>not bold</b>");
    if (rank) jager_metadata_set("mpi.rank", rank); /* as the MPI plugin records it */
    S.solve = jager_site_register("solve!", "src/solver.jl", 12);
    S.assemble = jager_site_register("assemble", "src/assemble.jl", 88);
    S.kernel = jager_site_register("kernel", "src/kernel.c", 40);
    S.hostile = jager_site_register(HOSTILE_SITE, "<evil>.jl", 1);
    S.worker = jager_site_register("worker_loop", "src/worker.c", 7);
    S.deposit = jager_site_register("deposit!", "src/pic.jl", 42);
    S.scatter = jager_site_register("scatter", "src/pic.jl", 51);
    jager_counter live = jager_counter_register("gc.live_bytes", "bytes", JAGER_COUNTER_GAUGE);
    jager_counter colls = jager_counter_register("gc.collections", NULL, JAGER_COUNTER_MONOTONIC);

    const jager_dispatch_api *d = jager_extension_get(JAGER_DISPATCH_EXTENSION_ID);
    pthread_t th;
    if (pthread_create(&th, NULL, worker_main, &p) != 0) return 1;

    jager_mark("start <solve>");
    jager_log(JAGER_SEV_INFO, "solver starting: " HOSTILE_LOG_IMG, NULL, 0);
    p.logs = 2;
    for (unsigned long i = 0; i < p.iterations; i++) {
        jager_span s = jager_span_begin(S.solve);
        jager_span a = jager_span_begin(S.assemble);
        for (unsigned long k = 0; k < p.kernels; k++) {
            jager_span ks = jager_span_begin(S.kernel);
            work(unit + (unsigned)((i * 7 + k) % 11) * unit / 10);
            jager_span_end(ks);
        }
        if (i % (p.iterations / 6 + 1) == 3) { /* a collection triggered while assembling */
            fake_julia_alloc(32 << 20);
            fake_julia_collect(0, i % 2, 24 << 20, 400000);
            p.gc_pauses++;
        }
        jager_span_end(a);
        jager_span h = jager_span_begin(S.hostile);
        work(unit / 2);
        if (i % 50 == 7) jager_span_error(h, "bad input " HOSTILE_LOG_IMG);
        jager_span_end(h);
        jager_span_end(s);
        if (i % (p.iterations / 8 + 1) == 0) {
            jager_counter_set(live, (double)(1u << 20) * (double)(1 + (i / (p.iterations / 8 + 1)) % 5));
            jager_counter_add(colls, 1);
            char msg[96];
            snprintf(msg, sizeof msg, "iteration %lu done", i);
            jager_log(i % 3 ? JAGER_SEV_INFO : JAGER_SEV_ERROR, msg, NULL, 0);
            p.logs++;
        }
    }
    if (d) {
        d->signature_count(S.deposit, "Tuple{typeof(deposit!), Particle{Float64}}", p.worker_iterations / 2);
        d->signature_count(S.deposit, "Tuple{typeof(deposit!), Particle{Float32}}", p.worker_iterations - p.worker_iterations / 2);
        d->instability(S.deposit, "Tuple{typeof(deposit!), Particle{Float64}}", JAGER_DISPATCH_RUNTIME_DISPATCH,
                       "runtime dispatch on p.weight::Real", "step! → deposit! → +(::Float64, ::Real)");
        d->compile(0, 2000000, 3000000, "Tuple{typeof(solve!), Vector{Float64}}");
        d->compile(0, 500000, 700000, "Tuple{typeof(kernel), " HOSTILE_LOG_IMG "}");
    }
    pthread_join(th, NULL);
    jager_shutdown();
    printf("{\"gc_pauses\":%lu,\"errors\":%lu,\"spans\":%lu,\"spans_main\":%lu,\"spans_worker\":%lu,\"kernel_calls\":%lu,\"logs\":%lu,\"sites\":7,\"dispatch\":%d}\n",
           p.gc_pauses, (p.iterations + 42) / 50, p.spans_main + p.spans_worker, p.spans_main, p.spans_worker, p.iterations * p.kernels, p.logs + 1, d != NULL);
    return 0;
}
