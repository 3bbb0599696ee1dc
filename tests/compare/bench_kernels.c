/* bench_kernels.c — the program `jager bench` measures in tests/compare: three kernels with
 * fixed work, built in variants that change one thing each:
 *   -DDOT_WORK=120   dot does 20 % more arithmetic (a real slowdown, not a sleep)
 *   -DSCALE_BYTES=N  scale reports N more bytes per call (an allocation added)
 *   -DEXTRA_SITE     one more kernel, with a hostile name (the differential report shows it
 *                    as new, as text)
 * Each kernel is a site; `jager bench run` reads their exact per-site statistics. */
#include <stdio.h>
#include <stdlib.h>

#include <jager.h>

#ifndef DOT_WORK
#define DOT_WORK 100
#endif
#ifndef SCALE_BYTES
#define SCALE_BYTES 0
#endif

#define N 4096

static double x[N], y[N];

/* The work counts are data, not constants: every variant compiles to the same code (same
 * loop shape, same alignment), so a variant differs only in how much work it does. */
static volatile int dot_work = DOT_WORK;
static volatile unsigned scale_bytes = SCALE_BYTES;

/* volatile sink: the compiler must keep every kernel's work. */
static volatile double sink;

static void dot(void)
{
    double s = 0;
    int work = dot_work;
    for (int rep = 0; rep < work; rep++)
        for (int i = 0; i < N; i++) s += x[i] * y[(i + rep) & (N - 1)];
    sink = s;
}

static void scale(double a)
{
    for (int rep = 0; rep < 50; rep++)
        for (int i = 0; i < N; i++) y[i] = a * y[i] + 1e-9 * rep;
}

static void reduce_max(void)
{
    double m = 0;
    for (int rep = 0; rep < 60; rep++)
        for (int i = 0; i < N; i++) m = x[i] * rep > m ? x[i] * rep : m;
    sink = m;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 40;
    if (jager_init(NULL) != JAGER_OK) { fprintf(stderr, "jager_init: %s\n", jager_last_error()); return 1; }
    jager_site s_dot = jager_site_register("dot", __FILE__, __LINE__);
    jager_site s_scale = jager_site_register("scale", __FILE__, __LINE__);
    jager_site s_max = jager_site_register("reduce_max", __FILE__, __LINE__);
    for (int i = 0; i < N; i++) { x[i] = 1.0 / (i + 1); y[i] = i * 0.5; }
    for (int it = 0; it < iters; it++) {
        jager_span sp = jager_span_begin(s_dot);
        dot();
        jager_span_end(sp);
        sp = jager_span_begin(s_scale);
        scale(0.999);
        jager_span_end_bytes(sp, 4096 + scale_bytes);
        sp = jager_span_begin(s_max);
        reduce_max();
        jager_span_end(sp);
#ifdef EXTRA_SITE
        static jager_site s_extra;
        if (!s_extra) s_extra = jager_site_register("<img src=x onerror=window.__pwned=1>", __FILE__, __LINE__);
        sp = jager_span_begin(s_extra);
        scale(1.0);
        jager_span_end(sp);
#endif
    }
    jager_shutdown();
    return 0;
}
