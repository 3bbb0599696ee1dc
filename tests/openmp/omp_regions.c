/*
 * omp_regions.c — the OpenMP program the openmp tests record, built once with GCC
 * (libgomp) and once with Clang (libomp). Every count is known:
 *
 *   omp_regions REGIONS THREADS SKEW_MS
 *   per region, THREADS threads (num_threads, OMP_DYNAMIC=false):
 *     a dynamic loop of 2·THREADS iterations (its implicit barrier: one wait per thread)
 *     an explicit barrier                          (one wait per thread)
 *     a critical section                           (one wait per thread)
 *     skewed work: thread t spins t·SKEW_MS        (the join barrier: thread 0 waits longest)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Sleep rather than spin: the test machine may be loaded; a sleeping thread's time is
 * wall time, the way the join barrier sees it. */
static void work_ms(double ms)
{
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1e3), (long)((ms - (time_t)(ms / 1e3) * 1e3) * 1e6)};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: omp_regions REGIONS THREADS SKEW_MS\n");
        return 2;
    }
    int regions = atoi(argv[1]), threads = atoi(argv[2]);
    double skew = atof(argv[3]);
    long counter = 0;
    double t0 = now_ms();
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(threads)
        {
#pragma omp for schedule(dynamic, 1)
            for (int i = 0; i < 2 * threads; i++) work_ms(0.2);
#pragma omp barrier
#pragma omp critical
            counter++;
            work_ms(skew * omp_get_thread_num());
        }
    }
    printf("counter %ld in %.1f ms\n", counter, now_ms() - t0);
    return counter == (long)regions * threads ? 0 : 1;
}
