/*
 * omp_imbalance.c — the hunt on real OpenMP recordings (imbalance_check.py), built with GCC
 * (libgomp) and with Clang (libomp):
 *
 *   omp_imbalance skewed|balanced REGIONS MS
 *   REGIONS parallel regions of 2 threads; in each, every thread spins MS ms of its own CPU
 *   time, thread 1 four times that when skewed: thread 0 waits at the join barrier for it.
 *   CPU time, not wall time: on a loaded machine both threads are slowed alike, the 4x stays.
 * Prints the team size (2 expected).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static void spin_cpu_ms(double ms)
{
    double t0 = cpu_ms();
    while (cpu_ms() - t0 < ms) sink++;
}
int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    int skewed = !strcmp(argv[1], "skewed"), regions = atoi(argv[2]);
    double ms = atof(argv[3]);
    int team = 0;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2)
        {
            spin_cpu_ms(skewed && omp_get_thread_num() == 1 ? 4 * ms : ms);
#pragma omp single nowait
            team = omp_get_num_threads();
        }
    }
    printf("%d\n", team);
    return team == 2 ? 0 : 1;
}
