/* rec_driver — writes recordings with known content for the `jager summary`/`hunt` tests,
 * through the real core (and the real dispatch plugin for Julia-side telemetry).
 *
 *   rec_driver nest OUT.jgr EXPECT.json   a known span nest on two threads (+ errors, bytes,
 *                                         a hostile site name); EXPECT.json holds the core's
 *                                         exact per-site aggregates (jager_site_stats)
 *   rec_driver julia OUT.jgr              a simulated Julia run with known problems: GC
 *                                         pressure from `assemble` line 88, an unstable
 *                                         `deposit!`, a Val{N} specialization loop, a
 *                                         polymorphic `accumulate!`, an allocation hotspot,
 *                                         unknown plugin events (gpu.kernel ×120)
 *   rec_driver julia-clean OUT.jgr        the same kind of run without problems
 *   rec_driver flood OUT.jgr N            N spans as fast as possible (big-file tests, bench)
 *   rec_driver drops OUT.jgr              bursts into a tiny ring, so events are dropped
 *   rec_driver phases OUT.jgr             a known call tree on two threads, recorded with the
 *                                         JAGER_* environment (ring size, sampling); prints
 *                                         drops, spans, and the CPU ns of the process, of the
 *                                         main thread before shutdown and of the worker
 *   rec_driver clock OUT.jgr              two 40 ms phases on the main thread while a thread
 *                                         named "jager-gc" emits gc.sample, whose cumulative
 *                                         gc_total_ns (a DURATION_NS field) reads 5 s
 *
 * GC pauses are emitted with the documented gc.pause fields through the core's plugin emit
 * path (no Julia here); their stacks are interned with JIT-style frames added through
 * jager_symbol_add(), as the Julia binding does. Dispatch telemetry goes through the
 * dispatch plugin's "jager.dispatch/1" extension. Durations are real: the driver spins.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "internal.h"
#include "jager.h"
#include "jager_dispatch.h"

static void spin_ns(uint64_t ns)
{
    uint64_t t0 = jager_now_ns();
    while (jager_now_ns() - t0 < ns) {
    }
}

static uint64_t ring_bytes = 8u << 20;
/* Every span an event unless a scenario asks otherwise: the tools' tests count events
 * exactly (the default's thinning of hot sites has its own scenario). */
static uint32_t sample_mode = JAGER_SAMPLE_ALL, sample_n = 1;
static uint64_t sample_interval_ns = 1000000u;

static int start(const char *out, const char *plugins)
{
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.output = out;
    cfg.quiet = 1;
    cfg.plugins = plugins;
    cfg.plugin_path = JAGER_TEST_PLUGIN_DIR;
    cfg.ring_bytes = ring_bytes;
    cfg.sample_mode = sample_mode;
    cfg.sample_n = sample_n;
    cfg.sample_interval_ns = sample_interval_ns;
    jager_status st = jager_init(&cfg);
    if (st != JAGER_OK) {
        fprintf(stderr, "rec_driver: jager_init: %s (%s)\n", jager_strerror(st), jager_last_error());
        return -1;
    }
    return 0;
}

/* ---- nest ---- */

#define EVIL_NAME "evil \"name\"\n<script>alert(1)</script>\\ \x01 end"

static jager_site s_outer, s_middle, s_inner, s_worker, s_evil;

static void *worker_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < 30; i++) {
        jager_span w = jager_span_begin(s_worker);
        jager_span in = jager_span_begin(s_inner);
        spin_ns(20000);
        jager_span_end_bytes(in, 1000);
        jager_span_end(w);
    }
    return NULL;
}

static int write_expect(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    jager_site sites[] = {s_outer, s_middle, s_inner, s_worker, s_evil};
    const char *names[] = {"outer", "middle", "inner", "worker", "evil"};
    fprintf(f, "{");
    for (size_t i = 0; i < 5; i++) {
        jager_site_stat st = {.struct_size = sizeof st};
        if (jager_site_stats(sites[i], &st) != JAGER_OK) {
            fclose(f);
            return -1;
        }
        fprintf(f, "%s\"%s\":{\"id\":%u,\"calls\":%llu,\"total_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,"
                   "\"bytes\":%llu,\"errors\":%llu,\"p50_ns\":%llu,\"p99_ns\":%llu}",
                i ? "," : "", names[i], sites[i], (unsigned long long)st.calls, (unsigned long long)st.total_ns,
                (unsigned long long)st.min_ns, (unsigned long long)st.max_ns, (unsigned long long)st.bytes,
                (unsigned long long)st.errors, (unsigned long long)st.p50_ns, (unsigned long long)st.p99_ns);
    }
    fprintf(f, "}\n");
    return fclose(f) == 0 ? 0 : -1;
}

static int run_nest(const char *out, const char *expect)
{
    if (start(out, NULL) != 0) return 1;
    s_outer = jager_site_register("outer", "nest.c", 10);
    s_middle = jager_site_register("middle", "nest.c", 20);
    s_inner = jager_site_register("inner", "nest.c", 30);
    s_worker = jager_site_register("worker", "nest.c", 40);
    s_evil = jager_site_register(EVIL_NAME, "evil<file>.c", 50);
    pthread_t th;
    if (pthread_create(&th, NULL, worker_main, NULL) != 0) return 1;
    jager_span o = jager_span_begin(s_outer);
    for (int i = 0; i < 10; i++) {
        jager_span m = jager_span_begin(s_middle);
        for (int j = 0; j < 10; j++) {
            jager_span in = jager_span_begin(s_inner);
            spin_ns(50000);
            jager_span_end_bytes(in, 4096);
        }
        spin_ns(100000);
        if (i % 3 == 0) jager_span_error(m, "boom <b>\"quoted\"</b>\n\ttab");
        jager_span_end(m);
    }
    jager_span_end(o);
    for (int i = 0; i < 3; i++) {
        jager_span e = jager_span_begin(s_evil);
        spin_ns(10000);
        jager_span_end(e);
    }
    pthread_join(th, NULL);
    int rc = write_expect(expect);
    jager_shutdown();
    return rc == 0 ? 0 : 1;
}

/* ---- julia (simulated) ---- */

static uint16_t t_gc_pause, t_gpu;
static jager_stack_id stack_assemble, stack_push;

static const jager_field_desc gc_pause_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, 0}, {"requested", JAGER_FIELD_U64, 0},
    {"full", JAGER_FIELD_BOOL, 0},               {"allocd_bytes", JAGER_FIELD_BYTES, 0},
    {"freed_bytes", JAGER_FIELD_BYTES, 0},       {"live_bytes", JAGER_FIELD_BYTES, 0},
    {"stack", JAGER_FIELD_STACK, 0},
};
static const jager_field_desc gpu_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, 0},
    {"grid", JAGER_FIELD_U64, 0},
};

/* A stack as the gc plugin captures it (innermost first: runtime allocator frames, then
 * the program's), symbolized the way the Julia binding names JIT frames. */
static jager_stack_id make_stack(uint64_t base, const char *func, uint32_t line, const char *caller, uint32_t cline)
{
    uint64_t ips[4] = {base + 0x10, base + 0x120, base + 0x2230, base + 0x3340};
    jager_symbol_add(ips[0], 0, "jl_gc_pool_alloc", "/usr/lib/julia/libjulia-internal.so", 0);
    jager_symbol_add(ips[1], 0, "jl_alloc_array_1d", "/usr/lib/julia/libjulia-internal.so", 0);
    jager_symbol_add(ips[2], 0, func, "/work/pic/pic.jl", line);
    jager_symbol_add(ips[3], 0, caller, "/work/pic/pic.jl", cline);
    return jager_stack_intern(ips, 4);
}

/* One collection of \p ns, triggered from \p stack, happening now on this thread. */
static void gc_pause(uint64_t ns, jager_stack_id stack)
{
    uint64_t t0 = jager_now_ns();
    spin_ns(ns);
    uint64_t f[7] = {ns, 0, 0, 64u << 20, 60u << 20, 200u << 20, stack};
    jg_emit_plugin(t_gc_pause, t0, f, 7);
}

static int julia_types(void)
{
    if (jg_type_register("gc.pause", gc_pause_fields, 7, 0, &t_gc_pause) != JAGER_OK) return -1;
    if (jg_type_register("gpu.kernel", gpu_fields, 2, 0, &t_gpu) != JAGER_OK) return -1;
    return 0;
}

/* A 3 ms kernel `NAME(::Vector{Float64})` at pic.jl:LINE, called 10 times, whose verdict
 * (\p flags) says its bad statement runs 1000 times a call (flags bits 32–63). */
static void loop_kernel(const jager_dispatch_api *d, const char *name, uint32_t line, uint64_t flags, const char *reason)
{
    char sig[128], fn[128];
    snprintf(sig, sizeof sig, "Tuple{typeof(%s), Vector{Float64}}", name);
    snprintf(fn, sizeof fn, "%s(::Vector{Float64})", name);
    jager_site site = jager_site_register(name, "/work/pic/pic.jl", line);
    d->instability(site, sig, flags | (1000ull << 32), reason, fn);
    for (int i = 0; i < 10; i++) {
        jager_span sp = jager_span_begin(site);
        spin_ns(3000000);
        jager_span_end(sp);
    }
    d->signature_count(site, sig, 10);
}

static int run_julia(const char *out)
{
    if (start(out, "dispatch") != 0 || julia_types() != 0) return 1;
    const jager_dispatch_api *d = jager_extension_get(JAGER_DISPATCH_EXTENSION_ID);
    if (!d) {
        fprintf(stderr, "rec_driver: the dispatch plugin did not load\n");
        return 1;
    }
    jager_site s_main = jager_site_register("main", "/work/pic/pic.jl", 1);
    jager_site s_step = jager_site_register("step!", "/work/pic/pic.jl", 10);
    jager_site s_assemble = jager_site_register("assemble", "/work/pic/pic.jl", 85);
    jager_site s_deposit = jager_site_register("deposit!", "/work/pic/pic.jl", 40);
    jager_site s_push = jager_site_register("push_particles!", "/work/pic/pic.jl", 60);
    jager_site s_acc = jager_site_register("accumulate!", "/work/pic/pic.jl", 100);
    jager_site s_val = jager_site_register("val_loop", "/work/pic/pic.jl", 140);
    stack_assemble = make_stack(0x7f3a00001000ull, "assemble", 88, "step!", 12);
    stack_push = make_stack(0x7f3a00101000ull, "push_particles!", 63, "step!", 14);

    const char *sig32 = "Tuple{typeof(deposit!), Vector{Particle}, Particle{Float32}}";
    const char *sig64 = "Tuple{typeof(deposit!), Vector{Particle}, Particle{Float64}}";
    const char *acc_types[5] = {"Int64", "Float64", "Float32", "Int32", "Rational{Int64}"};
    uint64_t acc_calls[5] = {0};
    d->instability(s_deposit, sig64, JAGER_DISPATCH_RUNTIME_DISPATCH, "runtime dispatch on p.weight::Real",
                   "step! → deposit! → +(::Real, ::Real)");

    jager_span mn = jager_span_begin(s_main);
    for (int step = 0; step < 20; step++) {
        jager_span st = jager_span_begin(s_step);

        jager_span as = jager_span_begin(s_assemble);
        spin_ns(1000000);
        gc_pause(1500000, stack_assemble);
        gc_pause(1500000, stack_assemble);
        jager_span_end_bytes(as, 16u << 20);

        jager_span dp = jager_span_begin(s_deposit);
        spin_ns(2000000);
        jager_span_end(dp);
        d->signature_count(s_deposit, step % 2 ? sig64 : sig32, (uint64_t)(step / 2 + 1));

        jager_span ps = jager_span_begin(s_push);
        spin_ns(1000000);
        gc_pause(300000, stack_push);
        jager_span_end_bytes(ps, 1u << 20);

        jager_span ac = jager_span_begin(s_acc);
        spin_ns(500000);
        jager_span_end(ac);
        char sig[128];
        snprintf(sig, sizeof sig, "Tuple{typeof(accumulate!), Vector{%s}}", acc_types[step % 5]);
        d->signature_count(s_acc, sig, ++acc_calls[step % 5]);

        jager_span_end_bytes(st, (17u << 20));
    }
    /* The Val{N} loop: each new N compiles a new specialization. */
    jager_span vl = jager_span_begin(s_val);
    for (int n = 1; n <= 40; n++) {
        char sig[96];
        snprintf(sig, sizeof sig, "Tuple{typeof(f), Val{%d}}", n);
        spin_ns(200000);
        d->compile(0, 2500000, 1500000, sig);
        d->signature_count(s_val, "Tuple{typeof(val_loop), Int64}", 1);
    }
    jager_span_end(vl);
    d->specializations("f(::Val{N}) where N in Main at /work/pic/pic.jl:140", "/work/pic/pic.jl", 140, 40);
    d->specializations("+(x::Float64, y::Float64) in Base at float.jl:401", "float.jl", 401, 60);
    for (int i = 0; i < 120; i++) {
        uint64_t f[2] = {5000, (uint64_t)(64 + i)};
        jg_emit_plugin(t_gpu, 0, f, 2);
    }
    jager_span_end_bytes(mn, 400u << 20);
    /* A dynamic call in a `for k in 1:1000` loop of a 3 ms kernel: the verdict says its
     * statement runs 1000 times a call (flags bits 32–63); the file has no measured
     * julia.dynamic_call_ns (a binding before it), so the hunt prices 10 × 1000 dynamic
     * calls at the documented 100 ns (1 ms), not the kernel's 30 ms, and says so. */
    loop_kernel(d, "smooth", 150, JAGER_DISPATCH_RUNTIME_DISPATCH, "runtime dispatch: `+(::Real, ::Float64)` at pic.jl:155");
    /* A union the compiler splits (flag 2 alone: typed branches, no dynamic call) in the
     * same kind of loop: a note with no cost, not 1000 × 10 dynamic calls nor its region. */
    loop_kernel(d, "split_sum", 170, JAGER_DISPATCH_BAD_UNION, "non-concrete value `%37::Union{Float64, Int64}` at pic.jl:175");
    /* GC pauses whose stacks hold no program frame (only the runtime's, as
     * `jl_gc_collect (libjulia.so.1:0)` was seen): not named as a function of the program. */
    jager_site s_rt = jager_site_register("sparse_build", "/work/pic/pic.jl", 190);
    uint64_t rt_ips[2] = {0x7f3a00401010ull, 0x7f3a00401120ull};
    jager_symbol_add(rt_ips[0], 0, "jl_gc_collect", "libjulia.so.1", 0);
    jager_symbol_add(rt_ips[1], 0, "jl_gc_pool_alloc", "libjulia.so.1", 0);
    jager_stack_id stack_rt = jager_stack_intern(rt_ips, 2);
    for (int i = 0; i < 4; i++) {
        jager_span rs = jager_span_begin(s_rt);
        spin_ns(1000000);
        gc_pause(1000000, stack_rt);
        jager_span_end(rs);
    }
    jager_shutdown();
    return 0;
}

/* gc-phases: GC in a region that triggered none of it (issue 9 item 6). Phase `fill`
 * allocates and triggers 5 collections itself (trigger stack: fill_grid); phase
 * `monte_carlo` allocates nothing, but a worker thread's allocation (stack-less pauses, as
 * when the plugin's unwind found nothing) triggers 5 collections that stall it (gc.stall on
 * the main thread). The hunt must not name fill_grid for monte_carlo's GC time. */
static uint16_t t_gc_stall;
static const jager_field_desc gc_stall_fields[] = {{"duration_ns", JAGER_FIELD_DURATION_NS, 0}};

static void stall(uint64_t t0, uint64_t ns)
{
    uint64_t f[1] = {ns};
    jg_emit_plugin(t_gc_stall, t0, f, 1);
}

static void *gc_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = jager_now_ns();
        spin_ns(2000000);
        uint64_t f[7] = {2000000, 0, 0, 64u << 20, 60u << 20, 200u << 20, 0};
        jg_emit_plugin(t_gc_pause, t0, f, 7);
        spin_ns(200000);
    }
    return NULL;
}

static int run_gc_phases(const char *out)
{
    if (start(out, NULL) != 0 || julia_types() != 0) return 1;
    if (jg_type_register("gc.stall", gc_stall_fields, 1, 0, &t_gc_stall) != JAGER_OK) return 1;
    jager_site s_fill = jager_site_register("fill", "/work/mc/mc.jl", 10);
    jager_site s_mc = jager_site_register("monte_carlo", "/work/mc/mc.jl", 30);
    jager_stack_id st_fill = make_stack(0x7f3a00201000ull, "fill_grid", 12, "main", 40);
    jager_span fs = jager_span_begin(s_fill);
    for (int i = 0; i < 5; i++) {
        spin_ns(1000000);
        uint64_t t0 = jager_now_ns();
        gc_pause(2000000, st_fill);
        stall(t0, 2000000);
    }
    jager_span_end_bytes(fs, 512u << 20);
    pthread_t th;
    jager_span mc = jager_span_begin(s_mc);
    if (pthread_create(&th, NULL, gc_worker, NULL) != 0) return 1;
    /* The worker's five pauses stall this thread: one stall per pause, 2 ms each (most of
     * the region, so its GC share stays far above the rule's 10 % on a loaded host). */
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = jager_now_ns();
        spin_ns(2000000);
        stall(t0, jager_now_ns() - t0); /* the time it spun, on the clock the span is measured by */
        spin_ns(200000);
    }
    jager_span_end(mc);
    pthread_join(th, NULL);
    jager_shutdown();
    return 0;
}

static int run_julia_clean(const char *out)
{
    if (start(out, "dispatch") != 0 || julia_types() != 0) return 1;
    const jager_dispatch_api *d = jager_extension_get(JAGER_DISPATCH_EXTENSION_ID);
    if (!d) {
        fprintf(stderr, "rec_driver: the dispatch plugin did not load\n");
        return 1;
    }
    jager_site s_main = jager_site_register("main", "/work/pic/clean.jl", 1);
    jager_site s_kernel = jager_site_register("axpy_kernel!", "/work/pic/clean.jl", 20);
    jager_site s_resid = jager_site_register("residual", "/work/pic/clean.jl", 30);
    const char *sig = "Tuple{typeof(axpy_kernel!), Vector{Float64}, Float64, Vector{Float64}}";
    /* First call: one compile, as any Julia function has. */
    d->compile(0, 1000000, 1000000, sig);
    jager_span mn = jager_span_begin(s_main);
    /* Short calls: on a busy test machine, preemption stretches few of them. */
    for (int i = 0; i < 300; i++) {
        jager_span k = jager_span_begin(s_kernel);
        spin_ns(100000);
        jager_span_end_bytes(k, 0);
        d->signature_count(s_kernel, sig, (uint64_t)i + 1);
        jager_span r = jager_span_begin(s_resid);
        spin_ns(30000);
        jager_span_end_bytes(r, 16);
    }
    /* One small collection while setting up: not pressure. */
    gc_pause(200000, make_stack(0x7f3a00201000ull, "setup", 5, "main", 2));
    jager_span_end_bytes(mn, 8u << 20);
    d->specializations("axpy_kernel!(y, a, x) in Main at /work/pic/clean.jl:20", "/work/pic/clean.jl", 20, 1);
    d->specializations("+(x::Float64, y::Float64) in Base at float.jl:401", "float.jl", 401, 60);
    jager_shutdown();
    return 0;
}

/* ---- flood ---- */

static int run_flood(const char *out, unsigned long long n)
{
    if (start(out, NULL) != 0) return 1;
    jager_site a = jager_site_register("flood_outer", "flood.c", 1);
    jager_site b = jager_site_register("flood_inner", "flood.c", 2);
    unsigned long long done = 0;
    while (done < n) {
        jager_span o = jager_span_begin(a);
        for (int i = 0; i < 99 && done + 1 < n; i++, done++) {
            jager_span in = jager_span_begin(b);
            jager_span_end(in);
        }
        jager_span_end(o);
        done++;
        /* Let the collector keep up so the file holds every event. */
        if (done % 8192 < 100) jager_flush();
    }
    jager_shutdown();
    return 0;
}

/* ---- sampled: JAGER_SAMPLE_AUTO thins a hot site on purpose, a cold one keeps all ---- */

static int run_sampled(const char *out)
{
    sample_mode = JAGER_SAMPLE_AUTO;
    sample_n = 50;                  /* budget: 50 spans per window per site and thread */
    sample_interval_ns = 600000000000ull; /* one window for the whole run: exact counts */
    if (start(out, NULL) != 0) return 1;
    jager_site hot = jager_site_register("hot_loop", "sampled.c", 1);
    jager_site cold = jager_site_register("cold_call", "sampled.c", 2);
    for (int i = 0; i < 5000; i++) jager_span_end(jager_span_begin(hot));
    for (int i = 0; i < 20; i++) jager_span_end(jager_span_begin(cold));
    jager_shutdown();
    return 0;
}

/* ---- drops ---- */

static int run_drops(const char *out)
{
    ring_bytes = 4096;
    if (start(out, NULL) != 0) return 1;
    jager_site s = jager_site_register("burst", "drops.c", 1);
    for (int i = 0; i < 20000; i++) {
        jager_span sp = jager_span_begin(s);
        jager_span_end(sp);
    }
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    printf("%llu %llu\n", (unsigned long long)st.events_dropped, (unsigned long long)st.spans_total);
    return 0;
}

/* ---- phases: a known call tree, recorded with any ring and sampling (JAGER_* env) ----
 * main { setup(1) step × 50 { force × 40 { pair × 10 } force_barrier × 40 } heavy(1, 20 ms) }
 * and a worker thread: work × 2000 { pair }. Durations are spun, so two runs of it agree
 * node by node in time within a few percent and exactly in calls. */

static jager_site ph_main, ph_setup, ph_step, ph_force, ph_barrier, ph_pair, ph_heavy, ph_work;

static uint64_t thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t worker_cpu;

static void *phases_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        jager_span w = jager_span_begin(ph_work);
        jager_span p = jager_span_begin(ph_pair);
        spin_ns(1000);
        jager_span_end(p);
        jager_span_end(w);
    }
    worker_cpu = thread_cpu();
    return NULL;
}

static int run_phases(const char *out)
{
    jager_config cfg;
    jager_config_init(&cfg);
    if (jager_config_from_env(&cfg) != JAGER_OK) return 1;
    cfg.output = out;
    cfg.quiet = 1;
    if (jager_init(&cfg) != JAGER_OK) return 1;
    ph_main = jager_site_register("main", "phases.c", 1);
    ph_setup = jager_site_register("setup", "phases.c", 2);
    ph_step = jager_site_register("step", "phases.c", 3);
    ph_force = jager_site_register("CalcFBHourglassForceForElems.omp", "phases.c", 4);
    ph_barrier = jager_site_register("CalcFBHourglassForceForElems.omp_barrier", "phases.c", 5);
    ph_pair = jager_site_register("pair", "phases.c", 6);
    ph_heavy = jager_site_register("heavy", "phases.c", 7);
    ph_work = jager_site_register("work", "phases.c", 8);
    pthread_t th;
    if (pthread_create(&th, NULL, phases_worker, NULL) != 0) return 1;
    jager_span m = jager_span_begin(ph_main);
    jager_span su = jager_span_begin(ph_setup);
    spin_ns(2000000);
    jager_span_end(su);
    for (int s = 0; s < 50; s++) {
        jager_span st = jager_span_begin(ph_step);
        for (int f = 0; f < 40; f++) {
            jager_span fo = jager_span_begin(ph_force);
            for (int p = 0; p < 10; p++) {
                jager_span pa = jager_span_begin(ph_pair);
                spin_ns(500);
                jager_span_end_bytes(pa, 64);
            }
            jager_span_end(fo);
            jager_span b = jager_span_begin(ph_barrier);
            spin_ns(2000);
            jager_span_end(b);
        }
        jager_span_end(st);
    }
    jager_span h = jager_span_begin(ph_heavy);
    spin_ns(20000000);
    jager_span_end(h);
    jager_span_end(m);
    pthread_join(th, NULL);
    jager_stat stat = {.struct_size = sizeof stat};
    jager_stats(&stat);
    uint64_t main_cpu = thread_cpu();
    jager_shutdown();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t proc = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
                    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
    printf("%llu %llu %llu %llu %llu\n", (unsigned long long)stat.events_dropped, (unsigned long long)stat.spans_total,
           (unsigned long long)proc, (unsigned long long)main_cpu, (unsigned long long)worker_cpu);
    return 0;
}

/* ---- clock: "the run" is the END block's span ---- */

static uint16_t t_gc_sample;
static const jager_field_desc gc_sample_fields[] = {
    {"live_bytes", JAGER_FIELD_BYTES, 0},  {"allocated_bytes", JAGER_FIELD_BYTES, 0},
    {"collections", JAGER_FIELD_U64, 0},   {"rss_bytes", JAGER_FIELD_BYTES, 0},
    {"gc_total_ns", JAGER_FIELD_DURATION_NS, 0},
};
static volatile int clock_done;

/* Jäger's own kind of thread: named "jager-…", emitting plugin samples the whole run. */
static void *sampler_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "jager-gc");
    for (uint64_t i = 0; !clock_done; i++) {
        uint64_t f[5] = {100u << 20, i << 20, i, 300u << 20, 5000000000ull + i * 1000};
        jg_emit_plugin(t_gc_sample, jager_now_ns(), f, 5);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int run_clock(const char *out)
{
    if (start(out, NULL) != 0) return 1;
    if (jg_type_register("gc.sample", gc_sample_fields, 5, 0, &t_gc_sample) != JAGER_OK) return 1;
    jager_site a = jager_site_register("phase_a", "clock.c", 1), b = jager_site_register("phase_b", "clock.c", 2);
    pthread_t th;
    if (pthread_create(&th, NULL, sampler_main, NULL) != 0) return 1;
    jager_span sa = jager_span_begin(a);
    spin_ns(40000000);
    jager_span_end(sa);
    jager_span sb = jager_span_begin(b);
    spin_ns(40000000);
    jager_span_end(sb);
    clock_done = 1;
    pthread_join(th, NULL);
    jager_shutdown();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "drops")) return run_drops(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "sampled")) return run_sampled(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "phases")) return run_phases(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "clock")) return run_clock(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "nest")) return run_nest(argv[2], argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "julia")) return run_julia(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "julia-clean")) return run_julia_clean(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "gc-phases")) return run_gc_phases(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "flood")) return run_flood(argv[2], strtoull(argv[3], NULL, 10));
    fprintf(stderr, "usage: rec_driver nest OUT EXPECT | julia OUT | julia-clean OUT | flood OUT N | clock OUT | sampled OUT\n");
    return 2;
}
