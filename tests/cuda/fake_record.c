/* fake_record.c — a recording to a .jgr file through the CUPTI/driver test double, for the
 * cuda_dump and cuda_hunt tests: JAGER_PLUGINS=cuda JAGER_OUTPUT=FILE fake_record N [big|fat]. Inside a span
 * "assemble", apply_bc() launches N kernels; one activity buffer holds their records
 * (200 ns each, 32 threads; "big": 500 µs each, 4096 × 256 threads; "fat": big with 255
 * registers per thread) and a 1 MiB
 * host-to-device copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda.h"
#include "jager.h"

__attribute__((noinline, visibility("default"))) uint32_t apply_bc(void);
__attribute__((noinline, visibility("default"))) uint32_t apply_bc(void)
{
    uint32_t c = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", NULL);
    __asm__ volatile("" ::: "memory");
    return c;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    int big = argc > 2 && (strcmp(argv[2], "big") == 0 || strcmp(argv[2], "fat") == 0);
    int fat = argc > 2 && strcmp(argv[2], "fat") == 0; /* big, 255 registers per thread */
    if (n < 1 || n > 1000) {
        fprintf(stderr, "usage: fake_record N (1..1000)\n");
        return 2;
    }
    fake_reset(FAKE_OK);
    if (jager_init(NULL) != JAGER_OK) {
        fprintf(stderr, "jager_init: %s\n", jager_last_error());
        return 1;
    }
    uint32_t *corr = calloc((size_t)n, sizeof *corr);
    if (!corr) return 1;
    jager_site s = jager_site_register("assemble", __FILE__, __LINE__);
    jager_span sp = jager_span_begin(s);
    for (int i = 0; i < n; i++) corr[i] = apply_bc();
    uint32_t cc = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", NULL);
    jager_span_end(sp);
    uint64_t t = jager_now_ns() + 1000;
    if (!fake_buf_begin()) return 1;
    for (int i = 0; i < n; i++) {
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = t + (big ? 600000u : 2000u) * (uint64_t)i;
        k.end = k.start + (big ? 500000u : 200u);
        k.streamId = 7;
        k.gridX = big ? 4096 : 1;
        k.gridY = k.gridZ = 1;
        k.blockX = big ? 256 : 32;
        k.blockY = k.blockZ = 1;
        k.registersPerThread = fat ? 255 : 16;
        k.correlationId = corr[i];
        k.name = fat ? "fat_stencil" : big ? "big_stencil" : "tiny_bc_kernel";
        if (!fake_buf_add(&k, sizeof k)) return 1;
    }
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1u << 20;
    m.start = t + (big ? 600000u : 2000u) * (uint64_t)n;
    m.end = m.start + 50000;
    m.correlationId = cc;
    if (!fake_buf_add(&m, sizeof m)) return 1;
    fake_buf_finish(7, 0);
    jager_shutdown();
    free(corr);
    printf("launches %d\n", n);
    return 0;
}
