// launch_cost.cu — host cost of one kernel launch, with whatever JAGER_PLUGINS says
// (tests/cuda/gpu-check.sh runs it without plugins and with JAGER_PLUGINS=cuda and prints
// the ratio). Launches an empty kernel N times (default 20000) after a warm-up, timing the
// launch calls only, then synchronises. Prints "launch_ns <ns per launch> plugins=<list>".
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <time.h>

#include "jager.h"

__global__ void empty_kernel() {}

static double now_ns()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n <= 0) return 2;
    jager_init(NULL);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("no CUDA device\n");
        jager_shutdown();
        return 3;
    }
    for (int i = 0; i < 1000; i++) empty_kernel<<<1, 1>>>();
    cudaDeviceSynchronize();
    double best = 1e300;
    for (int rep = 0; rep < 5; rep++) { // best of 5: launch queues fill, the rest is noise
        double t0 = now_ns();
        for (int i = 0; i < n; i++) empty_kernel<<<1, 1>>>();
        double t1 = now_ns();
        cudaDeviceSynchronize();
        double per = (t1 - t0) / n;
        if (per < best) best = per;
    }
    const char *p = getenv("JAGER_PLUGINS");
    printf("launch_ns %.1f plugins=%s\n", best, p && *p ? p : "none");
    jager_shutdown();
    return 0;
}
