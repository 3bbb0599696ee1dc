/* omp_small_regions.c — the shape of LULESH's CalcPressureForElems: two consecutive
 * `parallel for` over a short array, run many times (each region's work is a few µs, so
 * the runtime's fork and join are a large share of it), or the same loops as two `omp for`
 * inside one `parallel` around the repetitions (the fix small_parallel_regions suggests).
 *   omp_small_regions small|merged REPS N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double a[1 << 16], b[1 << 16];

static void small(int reps, int n)
{
    for (int r = 0; r < reps; r++) {
#pragma omp parallel for
        for (int i = 0; i < n; i++) a[i] = 0.5 * (b[i] + 1.0);
#pragma omp parallel for
        for (int i = 0; i < n; i++) b[i] = a[i] * 0.999 + 1e-3;
    }
}

static void merged(int reps, int n)
{
#pragma omp parallel
    for (int r = 0; r < reps; r++) {
#pragma omp for
        for (int i = 0; i < n; i++) a[i] = 0.5 * (b[i] + 1.0);
#pragma omp for
        for (int i = 0; i < n; i++) b[i] = a[i] * 0.999 + 1e-3;
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    int reps = atoi(argv[2]), n = atoi(argv[3]);
    if (n > (1 << 16)) n = 1 << 16;
    if (!strcmp(argv[1], "small")) small(reps, n);
    else merged(reps, n);
    printf("%g\n", a[n / 2] + b[n / 3]);
    return 0;
}
