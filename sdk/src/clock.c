/* The clock: an invariant TSC calibrated against CLOCK_MONOTONIC, else clock_gettime.
 * Times everywhere are nanoseconds on the CLOCK_MONOTONIC base, so events from plugins that
 * read clock_gettime themselves line up with spans. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "internal.h"

jg_clock jg_clock_state;

uint64_t jg_clock_gettime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* CPUID leaf 0x80000007 EDX bit 8: the TSC ticks at a constant rate in every P/C-state. */
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    if (d & (1u << 8)) return 1;
    /* Hypervisors often hide the bit while the kernel trusts the TSC as its clocksource. */
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char buf[32] = {0};
    if (f) {
        if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
        fclose(f);
    }
    return strncmp(buf, "tsc", 3) == 0;
}

/* One (tsc, mono) pair taken as close together as possible: keep the tightest bracket. */
static void sample_pair(uint64_t *tsc, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = __rdtsc();
        uint64_t m = jg_clock_gettime_ns();
        uint64_t t1 = __rdtsc();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *tsc = t0 + (t1 - t0) / 2;
            *mono = m;
        }
    }
}
#endif

void jg_clock_calibrate(uint64_t spin_ns)
{
    jg_clock c;
    memset(&c, 0, sizeof c);
    if (!spin_ns) spin_ns = 5000000u; /* 5 ms gives ~0.02% here (julia-1.5-notes §1) */
#if defined(__x86_64__)
    if (tsc_invariant()) {
        uint64_t tsc0 = 0, m0 = 0, tsc1 = 0, m1 = 0;
        sample_pair(&tsc0, &m0);
        do {
            sample_pair(&tsc1, &m1);
        } while (m1 - m0 < spin_ns);
        double ticks_per_ns = (double)(tsc1 - tsc0) / (double)(m1 - m0);
        if (ticks_per_ns > 0.05 && ticks_per_ns < 100.0) {
            c.use_tsc = 1;
            c.ticks_per_ns = ticks_per_ns;
            c.mult = (uint64_t)((double)(1ull << 32) / ticks_per_ns + 0.5);
            c.tsc0 = tsc1;
            c.ns0 = m1;
        }
    }
#endif
    if (!c.use_tsc) c.ns0 = jg_clock_gettime_ns();
    c.unix_ns0 = realtime_ns() - (jg_clock_gettime_ns() - c.ns0);
    jg_clock_state = c;
}

uint64_t jager_now_ns(void) { return jg_now_ns(); }
