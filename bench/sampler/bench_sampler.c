/* bench_sampler.c — what sampling costs a compute loop, in one run (ratios against the
 * unsampled loop measured alongside, rounds interleaved so drift hits every variant).
 *
 * For each trigger kind (perf_event where permitted, POSIX timers) and rate (100 Hz,
 * 1 kHz): the loop's CPU time against the same loop with Jäger recording and no sampler
 * (median of ROUNDS), the handler time per sample (the plugin's own handler_ns / samples,
 * median of the rounds: it is wall time, so a handler preempted on a busy machine inflates one),
 * and samples delivered against expected on the sampled thread (its CPU time × rate), plus
 * the periods the samples stand for (a timer signals at most once per kernel tick and
 * counts the rest as overruns). Beside them the floor: the same loop with a bare
 * perf_event CPU clock signalling an empty handler at each rate, no Jäger at all, which is
 * what the kernel's signal delivery alone costs on this machine. Asserts nothing.
 *
 * Usage: bench_sampler [PLUGIN_DIR [ROUNDS [MS]]] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* F_SETOWN_EX, F_SETSIG */
#endif
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jager.h"
#include "jager_plugin.h"
#include "jager_reader.h"

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t kernel(uint64_t x, int n)
{
    for (int i = 0; i < n; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

__attribute__((noinline)) static void workload(uint64_t units)
{
    uint64_t x = sink;
    for (uint64_t u = 0; u < units; u++) x = kernel(x, 1000);
    sink = x;
}

static double cpu_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct result {
    double thread_ms, process_ms;
    uint64_t samples, periods, expected, handler_ns;
    char mode[16];
} result;

static const char *g_plugins;

/* One recording of the workload; hz 0: Jäger without the sampler. */
static int run(uint64_t units, unsigned hz, const char *mode, result *out)
{
    char path[256];
    snprintf(path, sizeof path, "%s/bench_sampler_%d.jgr", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    char v[16];
    snprintf(v, sizeof v, "%u", hz);
    setenv("JAGER_SAMPLER_HZ", v, 1);
    setenv("JAGER_SAMPLER_MODE", mode, 1);
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.quiet = 1;
    cfg.output = path;
    cfg.plugins = hz ? "sampler" : "";
    cfg.plugin_path = g_plugins;
    if (jager_init(&cfg) != JAGER_OK) return -1;
    double t0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID), p0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
    workload(units);
    out->thread_ms = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
    out->process_ms = cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - p0;
    jager_shutdown();
    out->samples = out->periods = out->expected = out->handler_ns = 0;
    out->mode[0] = 0;
    if (!hz) {
        unlink(path);
        return 0;
    }
    jager_reader *r = NULL;
    if (jager_reader_open(path, &r) != JAGER_OK) return -1;
    uint16_t t_sum = jager_reader_type_by_name(r, "sampler.summary");
    uint16_t t_thr = jager_reader_type_by_name(r, "sampler.thread");
    jager_event ev;
    uint64_t best_expected = 0;
    while (jager_reader_next(r, &ev) > 0) {
        const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
        if (ev.type == t_sum) {
            snprintf(out->mode, sizeof out->mode, "%s", jager_reader_string(r, (uint32_t)p->fields[0]));
            out->handler_ns = p->fields[10];
            out->periods = p->fields[13];
        } else if (ev.type == t_thr && p->fields[4] >= best_expected) { /* the busiest thread: the workload's */
            best_expected = p->fields[4];
            out->expected = p->fields[4];
            out->samples = p->fields[1];
        }
    }
    jager_reader_close(r);
    unlink(path);
    return 0;
}

static volatile sig_atomic_t g_bare_hits;
static void bare_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    g_bare_hits++;
}

/* The floor: the workload under a perf CPU-clock event that signals an empty handler at
 * hz, as the sampler's perf mode arms it, without Jäger. Returns the thread's CPU ms, or
 * -1 when perf_event_open is refused here. */
static double run_bare(uint64_t units, unsigned hz, uint64_t *hits)
{
    int sig = SIGRTMIN + 6;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = bare_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0) return -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000000ull / hz;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.wakeup_events = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    double ms = -1;
    if (fd >= 0) {
        struct f_owner_ex own = {.type = F_OWNER_TID, .pid = (pid_t)syscall(SYS_gettid)};
        if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) == 0 && fcntl(fd, F_SETSIG, sig) == 0 &&
            fcntl(fd, F_SETOWN_EX, &own) == 0) {
            g_bare_hits = 0;
            ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
            double t0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
            workload(units);
            ms = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
            ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
            *hits = (uint64_t)g_bare_hits;
        }
        close(fd);
    }
    sigaction(sig, &old, NULL);
    return ms;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    g_plugins = argc > 1 ? argv[1] : NULL;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    double ms = argc > 3 ? atof(argv[3]) : 300;
    if (rounds < 1 || rounds > 99 || ms <= 0) return 2;
    /* calibrate: units for ms of CPU */
    uint64_t units = 1000;
    for (;;) {
        double t0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
        workload(units);
        double d = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
        if (d > 50) {
            units = (uint64_t)((double)units * ms / d);
            break;
        }
        units *= 2;
    }
    const char *modes[2] = {"perf", "timer"};
    const unsigned rates[2] = {100, 1000};
    double base[99], var[2][2][99], hper[2][2][99], bare[2][99];
    uint64_t bare_hits[2] = {0, 0};
    int have_bare = 1;
    result last[2][2];
    memset(last, 0, sizeof last);
    for (int k = 0; k < rounds; k++) {
        result r;
        if (run(units, 0, "auto", &r)) return 1;
        base[k] = r.thread_ms;
        for (int h = 0; h < 2 && have_bare; h++) {
            bare[h][k] = run_bare(units, rates[h], &bare_hits[h]);
            if (bare[h][k] < 0) have_bare = 0;
        }
        for (int m = 0; m < 2; m++)
            for (int h = 0; h < 2; h++) {
                if (run(units, rates[h], modes[m], &r)) return 1;
                var[m][h][k] = r.thread_ms;
                hper[m][h][k] = r.samples ? (double)r.handler_ns / (double)r.samples : 0.0;
                if (k == rounds - 1 || last[m][h].samples == 0) last[m][h] = r;
                last[m][h].samples = r.samples;
            }
    }
    qsort(base, (size_t)rounds, sizeof base[0], cmp);
    double b = base[rounds / 2];
    printf("compute loop: %.0f ms of CPU, median of %d rounds; unsampled (Jäger recording, no sampler) %.1f ms\n", ms,
           rounds, b);
    printf("%-6s %6s %11s %9s %13s %13s %16s\n", "mode", "rate", "slowdown", "spread", "handler/smp", "delivered",
           "periods/expected");
    for (int m = 0; m < 2; m++)
        for (int h = 0; h < 2; h++) {
            double *v = var[m][h];
            qsort(v, (size_t)rounds, sizeof v[0], cmp);
            const result *r = &last[m][h];
            double med = v[rounds / 2];
            qsort(hper[m][h], (size_t)rounds, sizeof(double), cmp); /* median: a preempted handler inflates one round */
            printf("%-6s %5uHz %+10.2f%% %+4.1f..%+4.1f%% %10.0f ns %6llu/%-6llu %15.3f%s\n", r->mode, rates[h],
                   100.0 * (med / b - 1.0), 100.0 * (v[0] / b - 1.0), 100.0 * (v[rounds - 1] / b - 1.0),
                   hper[m][h][rounds / 2], (unsigned long long)r->samples,
                   (unsigned long long)r->expected, r->expected ? (double)r->periods / (double)r->expected : 0.0,
                   strcmp(r->mode, modes[m]) ? "  (perf refused: timers ran)" : "");
        }
    for (int h = 0; h < 2 && have_bare; h++) {
        double *v = bare[h];
        qsort(v, (size_t)rounds, sizeof v[0], cmp);
        printf("%-6s %5uHz %+10.2f%% %+4.1f..%+4.1f%% %13s %6llu signals (an empty handler, no Jager: the floor)\n", "bare",
               rates[h], 100.0 * (v[rounds / 2] / b - 1.0), 100.0 * (v[0] / b - 1.0), 100.0 * (v[rounds - 1] / b - 1.0),
               "", (unsigned long long)bare_hits[h]);
    }
    if (!have_bare) printf("bare: perf_event_open refused here, no floor measured\n");
    /* the noise floor: two unsampled medians' halves against each other */
    printf("noise: unsampled rounds spread %+.2f..%+.2f%% around their median\n", 100.0 * (base[0] / b - 1.0),
           100.0 * (base[rounds - 1] / b - 1.0));
    return 0;
}
