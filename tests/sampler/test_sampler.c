/* test_sampler.c — the sampler plugin on C workloads built with frame pointers.
 *
 * Run as `test_sampler timer` (POSIX CPU-time timers forced) and `test_sampler auto`
 * (perf_event_open where the kernel permits it, else timers: the case checks which ran
 * and that the reason was given). Assertions compare counts and ratios of samples, never
 * time: the triggers count CPU time, so a busy machine changes how long a case takes,
 * not what it samples. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler_fixture.h"

static const char *g_mode = "timer";
/* Under scripts/valgrind-unit.sh: memcheck flags every walk's reads of stack words that no
 * code wrote (a stack walker reads what it finds), so the cases keep the leaf frame only
 * (JAGER_SAMPLER_DEPTH=1) and skip their caller checks, as the gc plugin's tests do; the
 * walks are checked in the plain and ASan+UBSan builds. */
static int g_no_stacks;
/* Statistical assertions (enough samples, shares, delivered against expected) hold for the
 * real machine, not for memcheck's serialised, 30× slower threads: there only the exact
 * ones run (counts equal to the summary's, spans, attribution). */
#define STAT_TRUE(x)                        \
    do {                                    \
        if (!g_no_stacks) assert_true(x);   \
    } while (0)

/* `libunwind-dlopen`: libunwind reached this process with the plugin's dlopen, so its
 * thread-local block is allocated on a thread's first use (malloc): the sampler must then
 * never run libunwind's fast trace in a handler. Proven on each workload thread by its
 * block still being unallocated when it ends (dl_iterate_phdr gives NULL for it). */
static int g_unw_dlopen;
static atomic_int g_threads_with_unwind_tls;

static int unwind_tls_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "/libunwind.so")) return 0;
    *(int *)arg = info->dlpi_tls_data != NULL;
    return 1;
}

/* 1 when this thread has libunwind's thread-local block, 0 when not, -1 when no libunwind */
static int unwind_tls_here(void)
{
    int r = -1;
    dl_iterate_phdr(unwind_tls_cb, &r);
    return r;
}

static void note_unwind_tls(void)
{
    if (unwind_tls_here() == 1) atomic_fetch_add(&g_threads_with_unwind_tls, 1);
}

/* ---- workloads: a dependent multiply chain the compiler can neither drop nor fold ----
 * Each calls tick() now and then: GCC sets up no frame in a leaf function that needs no
 * stack even with -fno-omit-frame-pointer, and a sample in such a leaf loses its caller
 * (docs/sampler.md); a call makes the busy functions non-leaf, as real ones mostly are. */
volatile uint64_t fx_sink;
#define NOINL __attribute__((noinline, used))
NOINL void tick(void) { __asm__ volatile("" ::: "memory"); }

NOINL void busy_a(uint64_t n)
{
    uint64_t x = fx_sink;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        if ((x & 0xfffff) == 0) tick();
    }
    fx_sink = x;
}
NOINL void busy_b(uint64_t n)
{
    uint64_t x = fx_sink;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        if ((x & 0xfffff) == 0) tick();
    }
    fx_sink = x;
}
NOINL void busy_outer(uint64_t n) { busy_a(n); }
NOINL void busy_in_span(uint64_t n) { busy_b(n); }
NOINL void busy_thread(uint64_t n) { busy_a(n); }

/* Units of work per millisecond on this machine, measured once. */
static uint64_t units_per_ms(void)
{
    static uint64_t u;
    if (u) return u;
    uint64_t n = 1u << 20;
    for (;;) {
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        busy_a(n);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
        if (ms > 20) {
            u = (uint64_t)((double)n / ms);
            return u;
        }
        n *= 2;
    }
}

static void check_mode(const fx_run *r)
{
    assert_true(r->have_summary);
    if (strcmp(g_mode, "timer") == 0) {
        assert_string_equal(r->mode, "timer");
        assert_non_null(strstr(r->diags, "POSIX timer triggers (asked for"));
    } else if (fx_perf_available()) {
        assert_string_equal(r->mode, "perf");
        assert_non_null(strstr(r->diags, "perf_event triggers (perf_event_open permitted"));
    } else {
        assert_string_equal(r->mode, "timer");
        assert_non_null(strstr(r->diags, "perf_event_open refused"));
    }
    /* said once */
    const char *first = strstr(r->diags, "sampling ");
    assert_non_null(first);
    assert_null(strstr(first + 1, "sampling "));
}

static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Two functions in a 3:1 split of CPU time, interleaved in small slices. The slices' lengths
 * are drawn at random (a fixed-seed LCG): a fixed period of 4/3 ms locks onto a 250 Hz tick
 * (three iterations a tick) and then the timer lands at the same phase every time, which is a
 * property of the workload, not of the sampler. The share of samples is judged against the
 * share of CPU time each function measurably had on this thread, so a machine that runs the
 * two at different speeds (frequency steps, a neighbour on the core) moves both alike. */
static void test_split_3_to_1(void **unused)
{
    (void)unused;
    uint64_t u = units_per_ms();
    const char *path = fx_start(1000, g_mode, 0);
    /* timers fire at the kernel's tick (250 Hz here) whatever the rate: more work for as
     * many samples */
    int iters = strcmp(g_mode, "timer") == 0 ? 1800 : 600;
    uint64_t lcg = 0x9e3779b97f4a7c15ull;
    double cpu_a = 0, cpu_b = 0;
    for (int i = 0; i < iters; i++) { /* ≈ iters ms of busy_a, a third of that of busy_b */
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t fa = 512 + ((lcg >> 33) & 1023); /* 0.5 .. 1.5 of a unit, in 1/1024ths */
        uint64_t fb = 512 + ((lcg >> 13) & 1023);
        double t0 = thread_cpu_ms();
        busy_a(u * fa / 1024);
        double t1 = thread_cpu_ms();
        busy_b(u * fb / 3072);
        double t2 = thread_cpu_ms();
        cpu_a += t1 - t0;
        cpu_b += t2 - t1;
    }
    fx_run r;
    fx_stop(path, &r);
    check_mode(&r);
    uint64_t me = fx_gettid(); /* the collector and the plugin thread have samples too */
    size_t a = fx_count(&r, "busy_a", UINT64_MAX, me), b = fx_count(&r, "busy_b", UINT64_MAX, me);
    size_t mine = fx_count(&r, NULL, UINT64_MAX, me);
    double cpu_share = cpu_a / (cpu_a + cpu_b);
    print_message("samples %zu: busy_a %zu, busy_b %zu (share %.3f; CPU time %.0f ms : %.0f ms, share %.3f)\n", r.ns, a,
                  b, (double)a / (double)(a + b), cpu_a, cpu_b, cpu_share);
    STAT_TRUE(a + b >= 400);
    STAT_TRUE(a + b >= mine * 9 / 10); /* the two functions are nearly all the thread's CPU time */
    STAT_TRUE(cpu_share > 0.6 && cpu_share < 0.9); /* the premise: about 3:1 was run */
    double share = (double)a / (double)(a + b);
    /* binomial: 400+ samples at p≈0.75 put 3.5 sigma at ±0.076 */
    STAT_TRUE(share > cpu_share - 0.08 && share < cpu_share + 0.08);
    /* the callers are there: the walk went past the leaf */
    size_t with_caller = 0;
    for (size_t i = 0; i < r.ns; i++)
        if (strcmp(r.s[i].leaf, "busy_a") == 0 && strcmp(r.s[i].caller, "test_split_3_to_1") == 0) with_caller++;
    if (!g_no_stacks) assert_true(with_caller >= a * 9 / 10);
    assert_int_equal(r.summary[4], r.ns);       /* summary.samples: exactly the records */
    STAT_TRUE(r.summary[5] == 0);               /* nothing lost (memcheck drains too slowly) */
    assert_true(r.modules >= 1 && r.modules_with_build_id >= 1);
    if (!g_no_stacks) assert_null(strstr(r.diags, "truncated to their innermost frame")); /* leaf only under memcheck */
    if (!g_no_stacks) assert_true(r.summary[12] < r.ns / 20); /* leaf-only walks */
    fx_free(&r);
}

/* Samples carry the innermost open site: busy_a runs only in outer, busy_b only in inner
 * (nested in outer), and the same busy_a outside any span has site 0. Every sample whose
 * leaf is a busy function was taken between its span's begin and end, so the attribution
 * is exact, not statistical. */
static void test_attribution(void **unused)
{
    (void)unused;
    uint64_t u = units_per_ms();
    const char *path = fx_start(1000, g_mode, 0);
    jager_site outer = jager_site_register("sampler_test.outer", __FILE__, __LINE__);
    jager_site inner = jager_site_register("sampler_test.inner", __FILE__, __LINE__);
    int iters = strcmp(g_mode, "timer") == 0 ? 600 : 200;
    for (int i = 0; i < iters; i++) {
        jager_span so = jager_span_begin(outer);
        busy_outer(u);
        jager_span si = jager_span_begin(inner);
        busy_in_span(u);
        jager_span_end(si);
        jager_span_end(so);
        busy_a(u);
    }
    fx_run r;
    fx_stop(path, &r);
    size_t b_all = fx_count(&r, "busy_b", UINT64_MAX, 0);
    size_t b_inner = fx_count(&r, "busy_b", inner, 0);
    size_t a_all = fx_count(&r, "busy_a", UINT64_MAX, 0);
    size_t a_outer = fx_count(&r, "busy_a", outer, 0), a_none = fx_count(&r, "busy_a", 0, 0);
    print_message("busy_b %zu (in inner %zu); busy_a %zu (outer %zu, no span %zu)\n", b_all, b_inner, a_all, a_outer,
                  a_none);
    STAT_TRUE(b_all >= 80 && a_outer >= 80 && a_none >= 80);
    assert_int_equal(b_inner, b_all);
    assert_int_equal(a_outer + a_none, a_all);
    /* busy_a under outer was called by busy_outer, outside by the test itself */
    for (size_t i = 0; i < r.ns; i++) {
        const fx_sample *s = &r.s[i];
        if (strcmp(s->leaf, "busy_a") != 0 || g_no_stacks) continue;
        assert_string_equal(s->caller, s->site == outer ? "busy_outer" : "test_attribution");
    }
    assert_int_equal(r.spans, 2 * (uint64_t)iters);
    fx_free(&r);
}

static uint64_t g_never_cpu_ns; /* never_emits' own CPU time, read as it ends */

static void *never_emits(void *arg)
{
    busy_thread(*(uint64_t *)arg);
    note_unwind_tls();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    g_never_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return (void *)(uintptr_t)fx_gettid();
}

/* A thread that never calls Jäger is found in /proc/self/task and sampled; its
 * sampler.thread record counts exactly the samples of it in the file, close to its CPU
 * time × rate. */
static void test_thread_that_never_emits(void **unused)
{
    (void)unused;
    uint64_t work = units_per_ms() * 500;
    const char *path = fx_start(1000, g_mode, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, never_emits, &work), 0);
    void *ret = NULL;
    pthread_join(th, &ret);
    uint64_t tid = (uint64_t)(uintptr_t)ret;
    fx_run r;
    fx_stop(path, &r);
    if (g_unw_dlopen) assert_int_equal(atomic_load(&g_threads_with_unwind_tls), 0);
    size_t mine = fx_count(&r, NULL, UINT64_MAX, tid), in_busy = fx_count(&r, "busy_a", UINT64_MAX, tid);
    uint64_t periods = 0; /* Σ weight: a timer counts the periods it could not signal */
    for (size_t i = 0; i < r.ns; i++)
        if (r.s[i].os_tid == tid) periods += r.s[i].weight;
    const fx_thread *t = NULL;
    for (size_t i = 0; i < r.nt; i++)
        if (r.t[i].os_tid == tid) t = &r.t[i];
    if (g_no_stacks && !t) { /* memcheck's thread scheduling may leave the short thread unseen */
        fx_free(&r);
        return;
    }
    assert_non_null(t);
    print_message("thread %llu: %zu samples (%zu in busy_a), %llu periods, expected %llu from %.1f ms CPU\n",
                  (unsigned long long)tid, mine, in_busy, (unsigned long long)periods, (unsigned long long)t->expected,
                  (double)t->cpu_ns / 1e6);
    STAT_TRUE(mine >= 100);
    assert_int_equal(t->samples, mine);
    STAT_TRUE(in_busy >= mine * 9 / 10);
    STAT_TRUE(t->expected > 0);
    /* The record's expected is the CPU time between the scan that found the thread and the
     * last scan that saw it alive (a thread's clock goes with it): up to a scan period
     * (50 ms, longer on a loaded machine) short at each end of what was sampled. So the
     * periods are at least what it covers and at most the thread's whole CPU time, which
     * the thread read itself as it ended (1 kHz: a period per ms). */
    uint64_t own = g_never_cpu_ns / 1000000u;
    print_message("the thread's own CPU time: %.1f ms\n", (double)g_never_cpu_ns / 1e6);
    STAT_TRUE(t->expected <= own + 2);
    STAT_TRUE(periods >= t->expected * 9 / 10 && periods <= own * 11 / 10 + 2);
    fx_free(&r);
}

/* Heavy span traffic on two threads while sampling at 10 kHz: signals land in the middle
 * of span records being written, and every record survives: the file reads to its end,
 * the span count is exact, every sample is there. */
static int g_storm = 100000; /* per thread; 10 000 under valgrind (scripts/valgrind-unit.sh) */

static void *span_storm(void *arg)
{
    jager_site s1 = *(jager_site *)arg, s2 = s1 + 1;
    for (int i = 0; i < g_storm; i++) {
        jager_span a = jager_span_begin(s1);
        jager_span b = jager_span_begin(s2);
        busy_b(1000);
        jager_span_end(b);
        jager_span_end(a);
        jager_span c = jager_span_begin(s1); /* back-to-back records: signals hit mid-write */
        jager_span_end(c);
    }
    note_unwind_tls();
    return (void *)(uintptr_t)fx_gettid();
}

static void test_heavy_span_traffic(void **unused)
{
    (void)unused;
    const char *path = fx_start(g_no_stacks ? 1000 : 10000, g_mode, 16u << 20); /* memcheck: 1 kHz */
    jager_site s1 = jager_site_register("sampler_test.storm", __FILE__, __LINE__);
    jager_site s2 = jager_site_register("sampler_test.storm_inner", __FILE__, __LINE__);
    assert_int_equal(s2, s1 + 1);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, span_storm, &s1), 0);
    uint64_t tids[2];
    for (int i = 0; i < 2; i++) {
        void *ret = NULL;
        pthread_join(th[i], &ret);
        tids[i] = (uint64_t)(uintptr_t)ret;
    }
    fx_run r;
    fx_stop(path, &r);
    print_message("spans %llu, samples %zu, dropped %llu\n", (unsigned long long)r.spans, r.ns,
                  (unsigned long long)r.stats.events_dropped);
    assert_int_equal(r.stats.events_dropped, 0);
    assert_int_equal(r.spans, 6 * (uint64_t)g_storm);
    if (g_unw_dlopen) { /* no walk allocated libunwind's block on any thread, this one included */
        assert_int_equal(atomic_load(&g_threads_with_unwind_tls), 0);
        assert_int_equal(unwind_tls_here(), 0);
    }
    STAT_TRUE(r.ns >= 40);
    assert_int_equal(r.summary[4], r.ns);
    size_t on_storm = 0, attributed = 0;
    for (int i = 0; i < 2; i++) {
        on_storm += fx_count(&r, NULL, UINT64_MAX, tids[i]);
        attributed += fx_count(&r, NULL, s1, tids[i]) + fx_count(&r, NULL, s2, tids[i]);
    }
    STAT_TRUE(on_storm >= 20 && attributed >= on_storm * 8 / 10);
    fx_free(&r);
}

/* `test_sampler MODE libunwind`: the walks of a Julia process (libunwind's fast trace from
 * the handler through the signal frame) on the same C workloads. The attribution case
 * checks every busy_a sample's caller exactly, so each walk must have crossed the signal
 * frame into the interrupted code; the thread and storm cases run the walk on a thread
 * that never calls Jäger and at 10 kHz amid span writes. Each checks that the fast trace
 * found the interrupted frame in every walk (summary.slow_walks, exact). */
static void check_fast_trace(void **unused)
{
    (void)unused;
    uint64_t u = units_per_ms();
    const char *path = fx_start(1000, g_mode, 0);
    int iters = fx_perf_available() ? 200 : 800; /* timers: the kernel's tick, not 1 kHz */
    for (int i = 0; i < iters; i++) busy_outer(u);
    fx_run r;
    fx_stop(path, &r);
    size_t a = fx_count(&r, "busy_a", UINT64_MAX, fx_gettid()), with_caller = 0;
    for (size_t i = 0; i < r.ns; i++)
        if (strcmp(r.s[i].leaf, "busy_a") == 0 && strcmp(r.s[i].caller, "busy_outer") == 0) with_caller++;
    print_message("samples %zu: busy_a %zu (called by busy_outer %zu), slow walks %llu\n", r.ns, a, with_caller,
                  (unsigned long long)r.summary[14]);
    if (g_unw_dlopen) {
        assert_non_null(strstr(r.diags, "fast trace is off (libunwind was loaded with dlopen"));
        assert_non_null(strstr(r.diags, "libunwind walks (unw_step)"));
        assert_int_equal(unwind_tls_here(), 0);
    } else {
        assert_non_null(strstr(r.diags, "libunwind walks (fast trace)"));
    }
    STAT_TRUE(a >= 100);
    assert_int_equal(with_caller, a);      /* every one: the walk crossed the signal frame */
    assert_int_equal(r.summary[14], 0);    /* summary.slow_walks */
    assert_int_equal(r.summary[4], r.ns);
    fx_free(&r);
}

int main(int argc, char **argv)
{
    if (argc > 1) g_mode = argv[1];
    /* libunwind: the executable links libunwind, so it is loaded at start-up (as libjulia
     * brings it into Julia 1.5) and the fast trace runs on every thread; libunwind-dlopen:
     * the plugin's dlopen brings it (as in a C program, or Julia 1.6+) */
    g_unw_dlopen = argc > 2 && strcmp(argv[2], "libunwind-dlopen") == 0;
    int unw = argc > 2 && (strcmp(argv[2], "libunwind") == 0 || g_unw_dlopen);
    if (getenv("JAGER_UNDER_VALGRIND")) {
        /* libunwind validates addresses by write(2)ing them to a pipe, which memcheck
         * reports: the libunwind variant runs in the plain and sanitizer builds only */
        if (unw) return 0;
        g_storm = 10000;
        g_no_stacks = 1;
        setenv("JAGER_SAMPLER_DEPTH", "1", 1);
    }
#if defined(__SANITIZE_THREAD__)
    if (unw) return 0; /* the plugin walks with unw_step under TSan (libunwind's trace cache) */
#endif
    if (unw) {
        setenv("JAGER_SAMPLER_UNWIND", "libunwind", 1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(check_fast_trace),
            cmocka_unit_test(test_attribution),
            cmocka_unit_test(test_thread_that_never_emits),
            cmocka_unit_test(test_heavy_span_traffic),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_3_to_1),
        cmocka_unit_test(test_attribution),
        cmocka_unit_test(test_thread_that_never_emits),
        cmocka_unit_test(test_heavy_span_traffic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
