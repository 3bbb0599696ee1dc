// tiny_kernels.cu — a CUDA program with deliberately tiny kernels, for the cuda plugin:
//
//   JAGER_PLUGINS=cuda JAGER_OUTPUT=run.jgr ./tiny_kernels [TINY] [BIG]
//
// A "timestep" (an NVTX range and a Jäger span) runs assemble() → apply_bc(), which launches
// TINY kernels of 32 threads each (their GPU time is far below their launch cost: what
// `small_kernels` reports), then solve_big() launches BIG kernels of 1M threads; pageable
// copies in and out, a memset and a device synchronisation. Prints what it launched.
// Without a CUDA device it says so and exits 0 (the plugin steps aside on its own).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "jager.h"

__global__ void tiny_bc(float *u, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) u[i] = v;
}

__global__ void big_stencil(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        float s = 0;
        for (int k = 0; k < 64; k++) s += 0.25f * (a[i - 1] + 2.0f * a[i] + a[i + 1]) * (1.0f + 1e-6f * k);
        b[i] = s;
    }
}

static jager_site site_timestep, site_assemble, site_solve;

extern "C" __attribute__((noinline, visibility("default"))) void apply_bc(float *d)
{
    tiny_bc<<<1, 32>>>(d, 32, 1.0f);
}

extern "C" __attribute__((noinline, visibility("default"))) void assemble(float *d, int tiny)
{
    jager_span s = jager_span_begin(site_assemble);
    for (int i = 0; i < tiny; i++) apply_bc(d);
    jager_span_end(s);
}

extern "C" __attribute__((noinline, visibility("default"))) void solve_big(const float *a, float *b, int n, int big)
{
    jager_span s = jager_span_begin(site_solve);
    for (int i = 0; i < big; i++) big_stencil<<<(n + 255) / 256, 256>>>(a, b, n);
    jager_span_end(s);
}

int main(int argc, char **argv)
{
    int tiny = argc > 1 ? atoi(argv[1]) : 2000;
    int big = argc > 2 ? atoi(argv[2]) : 8;
    const int n = 1 << 20;
    if (tiny < 0 || big < 0) {
        fprintf(stderr, "usage: tiny_kernels [TINY] [BIG]\n");
        return 2;
    }
    jager_init(NULL);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("no CUDA device (%s): nothing to run\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        jager_shutdown();
        return 0;
    }
    site_timestep = jager_site_register("timestep", __FILE__, __LINE__);
    site_assemble = jager_site_register("assemble", __FILE__, __LINE__);
    site_solve = jager_site_register("solve_big", __FILE__, __LINE__);
    float *h = (float *)malloc(sizeof(float) * n); // pageable on purpose
    float *a = NULL, *b = NULL;
    if (!h || cudaMalloc(&a, sizeof(float) * n) != cudaSuccess || cudaMalloc(&b, sizeof(float) * n) != cudaSuccess) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) h[i] = (float)i;
    nvtxRangePushA("timestep");
    jager_span ts = jager_span_begin(site_timestep);
    cudaMemcpy(a, h, sizeof(float) * n, cudaMemcpyHostToDevice);
    cudaMemset(b, 0, sizeof(float) * n);
    assemble(a, tiny);
    solve_big(a, b, n, big);
    cudaDeviceSynchronize();
    cudaMemcpy(h, b, sizeof(float) * n, cudaMemcpyDeviceToHost);
    jager_span_end(ts);
    nvtxRangePop();
    e = cudaGetLastError();
    cudaFree(a);
    cudaFree(b);
    free(h);
    jager_shutdown();
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
        return 1;
    }
    printf("launches tiny=%d big=%d copies=2 memsets=1 syncs=1\n", tiny, big);
    return 0;
}
