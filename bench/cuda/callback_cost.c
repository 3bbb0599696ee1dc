/* callback_cost.c — the cuda plugin's own host cost per traced call, without a GPU: driver
 * calls through the CUPTI test double (tests/cuda/fake_cuda.c), timed with the plugin
 * subscribed (host stack of JAGER_CUDA_DEPTH frames, span, correlation, one event) and
 * without it (the double's bare call). Built with the cuda tests as bin/cuda_callback_cost:
 *
 *   JAGER_CUDA_CUPTI_LIB=… JAGER_CUDA_DRIVER_LIB=… JAGER_PLUGIN_PATH=build/plugins \
 *     build/bin/cuda_callback_cost [N]
 *
 * Prints ns per call for each configuration and the difference; asserts nothing. */
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#include "fake_cuda.h"
#include "jager.h"

__attribute__((noinline)) static double run(int n)
{
    uint64_t t0 = jager_now_ns();
    for (int i = 0; i < n; i++) fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", NULL);
    return (double)(jager_now_ns() - t0) / n;
}

static double best(int n)
{
    double b = 1e300;
    for (int r = 0; r < 7; r++) {
        double v = run(n);
        if (v < b) b = v;
    }
    return b;
}

static double with_plugin(int n, const char *depth)
{
    setenv("JAGER_CUDA_DEPTH", depth, 1);
    setenv("JAGER_RING_BYTES", "4M", 1);
    setenv("JAGER_PLUGINS", "cuda", 1);
    fake_reset(FAKE_OK);
    jager_init(NULL);
    jager_site s = jager_site_register("bench", __FILE__, __LINE__);
    jager_span sp = jager_span_begin(s);
    run(1000);
    double v = best(n);
    jager_span_end(sp);
    jager_shutdown();
    return v;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n <= 0) return 2;
    fake_reset(FAKE_OK);
    double bare = best(n);
    double d0 = with_plugin(n, "0"), d32 = with_plugin(n, "32");
    printf("per traced call (best of 7 x %d): bare double %.1f ns; plugin, no stack %.1f ns (+%.1f); "
           "plugin, 32-frame stack %.1f ns (+%.1f)\n",
           n, bare, d0, d0 - bare, d32, d32 - bare);
    return 0;
}
