/* bench_omp: time per OpenMP parallel region (a team of THREADS threads, a static loop of
 * 1000 multiply-adds per thread inside), the best of 7 repetitions of
 * REGIONS regions (the least disturbed by other programs on a loaded machine).
 * Run by bench_omp.sh plain and with the openmp plugin, whose ratio is the plugin's cost
 * per region. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double acc[64];

int main(int argc, char **argv)
{
    long regions = argc > 1 ? atol(argv[1]) : 2000;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    enum { REPS = 7 };
    double per[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ns();
        for (long k = 0; k < regions; k++) {
#pragma omp parallel num_threads(threads)
            {
                int me = omp_get_thread_num();
                double x = acc[me];
#pragma omp for schedule(static) nowait
                for (int i = 0; i < 1000 * threads; i++) x = x * 1.0000001 + 1e-9;
                acc[me] = x;
            }
        }
        per[r] = (now_ns() - t0) / (double)regions;
    }
    qsort(per, REPS, sizeof per[0], cmp);
    printf("%.0f\n", per[0]);
    return 0;
}
