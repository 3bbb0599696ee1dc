/*
 * omp_imbalance.c — the hunt on real OpenMP recordings (imbalance_check.py), built with GCC
 * (libgomp) and with Clang (libomp):
 *
 *   omp_imbalance skewed|uneven|balanced REGIONS MS
 *   REGIONS parallel regions of 2 threads; in each, every thread spins MS ms of its own CPU
 *   time, thread 1 four times that when skewed: thread 0 waits at the join barrier for it;
 *   1.1 times when uneven: thread 0 waits a little every time (LULESH's loops: a tail of
 *   waits at the barrier, no imbalance worth a finding).
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
    int regions = atoi(argv[2]);
    double slow = !strcmp(argv[1], "skewed") ? 4.0 : !strcmp(argv[1], "uneven") ? 1.1 : 1.0;
    double ms = atof(argv[3]);
    int team = 0;
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2)
        {
            spin_cpu_ms(omp_get_thread_num() == 1 ? slow * ms : ms);
#pragma omp single nowait
            team = omp_get_num_threads();
        }
    }
    printf("%d\n", team);
    return team == 2 ? 0 : 1;
}
