/* bench_instrument: the cost of one -finstrument-functions call through
 * libjager-instrument.so, against the same function built without the flag, in one run.
 *
 *   LD_PRELOAD=libjager-instrument.so JAGER_OUTPUT=… JAGER_INSTRUMENT_FILTER=-f_excl bench_instrument [calls]
 *
 * f_plain: no hooks; f_inst: hooks → a span per call; f_excl: hooks, excluded by the
 * filter (the probe, no span). Medians of 7 repetitions, interleaved, in thread CPU time
 * (the collector's CPU meanwhile printed apart). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double f_plain(double), f_inst(double), f_excl(double);

/* CPU time, not wall time: on a loaded machine a preempted loop would count the other
 * programs' time. The calling thread's CPU is the cost on the application thread; the
 * process's CPU minus it is what other threads (the collector) spent meanwhile. */
static double cpu_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static volatile double sink;

static double other_ns; /* CPU of the other threads during the last per_call */

static double per_call(double (*f)(double), long n)
{
    double x = 1.0, t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (long i = 0; i < n; i++) x = f(x);
    sink = x;
    double t = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0, p = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - p0;
    other_ns = (p - t) / (double)n;
    return t / (double)n;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    enum { REPS = 7 };
    double p[REPS], in[REPS], ex[REPS], coll[REPS];
    per_call(f_inst, n / 10); /* first sight: name resolution, site registration */
    per_call(f_excl, n / 10);
    for (int r = 0; r < REPS; r++) {
        p[r] = per_call(f_plain, n);
        in[r] = per_call(f_inst, n);
        coll[r] = other_ns;
        ex[r] = per_call(f_excl, n);
    }
    qsort(p, REPS, sizeof p[0], cmp);
    qsort(in, REPS, sizeof in[0], cmp);
    qsort(ex, REPS, sizeof ex[0], cmp);
    qsort(coll, REPS, sizeof coll[0], cmp);
    double mp = p[REPS / 2], mi = in[REPS / 2], me = ex[REPS / 2];
    printf("instrumented function call, %ld calls × %d, medians of thread CPU time:\n", n, REPS);
    printf("  plain (no -finstrument-functions)  %7.1f ns/call\n", mp);
    printf("  instrumented, recorded (a span)    %7.1f ns/call  ratio %.1fx  cost %.1f ns/call\n", mi, mi / mp, mi - mp);
    printf("    + other threads (collector) meanwhile   %5.1f ns/call\n", coll[REPS / 2]);
    printf("  instrumented, filtered out         %7.1f ns/call  ratio %.1fx  cost %.1f ns/call\n", me, me / mp, me - mp);
    return 0;
}
