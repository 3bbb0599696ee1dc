/* test_cuda_plugin.c — the cuda plugin against the CUPTI/driver test double: driver calls
 * on known call paths inside a Jäger span, synthetic activity buffers built from the real
 * CUDA 13 record structs (a kernel before its correlation record, correlations in an earlier
 * buffer, a graph launch's three kernels, zero timestamps, unknown kinds, drops, a record
 * with no launch), the buffer pool's cap, and every reason to step aside. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cuda_test_util.h"
#include "fake_cuda.h"
#include "internal.h"
#include "testutil.h"

/* field indices (plugins/cuda/cuda_plugin.c, docs/cuda.md) */
enum { L_DUR, L_API, L_KIND, L_CORR, L_EXT, L_STACK, L_SITE };
enum { K_DUR, K_NAME, K_DEV, K_CTX, K_STREAM, K_GX, K_GY, K_GZ, K_BX, K_BY, K_BZ, K_REGS, K_SSHM, K_DSHM,
       K_CORR, K_EXT, K_LAUNCH_NS, K_STACK, K_SITE, K_TID, K_GRAPH, K_LTYPE };
enum { S_LAUNCHES, S_STACKS, S_RECORDS, S_KERNELS, S_MEMCPYS, S_MEMSETS, S_SYNCS, S_MEMORY, S_OVERHEADS, S_OTHER,
       S_EXT, S_HITS, S_MISSES, S_EVICTED, S_ZERO, S_DROPPED, S_EXHAUSTED, S_BUFFERS, S_BUFBYTES, S_CAP,
       S_SUGGESTED, S_CLOCK };

uint32_t launch_site_a(uint64_t *ext);
uint32_t launch_site_b(uint64_t *ext);
__attribute__((noinline, visibility("default"))) uint32_t launch_site_a(uint64_t *ext)
{
    uint32_t c = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", ext);
    __asm__ volatile("" ::: "memory"); /* keep the frame */
    return c;
}

__attribute__((noinline, visibility("default"))) uint32_t launch_site_b(uint64_t *ext)
{
    uint32_t c = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", ext);
    __asm__ volatile("" ::: "memory");
    return c;
}

static const jager_rec_plugin *launch_of(const memsink *m, uint16_t t_launch, uint64_t corr)
{
    for (size_t i = 0;; i++) {
        const jager_rec_plugin *r = ct_rec(m, t_launch, i);
        if (!r || r->fields[L_CORR] == corr) return r;
    }
}

static int stack_has(jager_stack_id id, void *fn)
{
    const uint64_t *ips;
    uint32_t n;
    if (!jg_stack_get(id, &ips, &n)) return 0;
    for (uint32_t i = 0; i < n; i++) {
        Dl_info di;
        if (dladdr((void *)(uintptr_t)(ips[i] - 1), &di) && di.dli_saddr == fn) return 1;
    }
    return 0;
}

static void add_unknown(uint32_t kind)
{
    struct {
        CUpti_ActivityKind kind;
        uint32_t pad;
        uint64_t junk[3];
    } u = {(CUpti_ActivityKind)kind, 0, {1, 2, 3}};
    assert_true(fake_buf_add(&u, sizeof u));
}

void test_launches_and_activity(void **unused);
__attribute__((visibility("default"))) void test_launches_and_activity(void **unused)
{
    (void)unused;
    fake_reset(FAKE_OK);
    ct_env(NULL, NULL);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_launch = ct_type("cuda.launch"), t_kernel = ct_type("cuda.kernel"), t_sum = ct_type("cuda.summary"),
             t_drop = ct_type("cuda.drop"), t_other = ct_type("cuda.activity_other"),
             t_memcpy = ct_type("cuda.memcpy"), t_memset = ct_type("cuda.memset"), t_sync = ct_type("cuda.sync"),
             t_dev = ct_type("cuda.device");
    assert_true(t_launch && t_kernel && t_sum && t_drop && t_other && t_memcpy && t_memset && t_sync && t_dev);

    jager_site solve = jager_site_register("solve", __FILE__, __LINE__);
    jager_span sp = jager_span_begin(solve);
    uint32_t ca[5], cb[3];
    uint64_t ea[5], eb[3], eg, ec, es, ey;
    /* one call site per path: loops the compiler may not unroll */
    volatile int na = 5, nb = 3;
    for (int i = 0; i < na; i++) ca[i] = launch_site_a(&ea[i]);
    for (int i = 0; i < nb; i++) cb[i] = launch_site_b(&eb[i]);
    uint32_t cg = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", &eg);
    uint32_t cc = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", &ec);
    uint32_t cs = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, "cuMemsetD32_v2", &es);
    uint32_t cy = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", &ey);
    jager_span_end(sp);
    for (int i = 0; i < 5; i++) assert_int_equal(ea[i], (uint64_t)i + 1); /* external ids: one per call, in order */
    assert_int_equal(ey, 12);

    uint64_t t = jager_now_ns() + 1000; /* the device runs after the launches */
    /* buffer 1: a kernel before its correlation record, every correlation, three more kernels,
     * a correlation for a launch the callbacks never saw, a MARKER record (not decoded) */
    assert_true(fake_buf_begin());
    CUpti_ActivityKernel10 k = ct_kernel(ca[0], t, t + 4000, "tiny_a");
    assert_true(fake_buf_add(&k, sizeof k));
    k = ct_kernel(6000, t + 500, t + 900, "ext_only"); /* its correlation record comes later */
    assert_true(fake_buf_add(&k, sizeof k));
    uint32_t corrs[] = {ca[0], ca[1], ca[2], ca[3], ca[4], cb[0], cb[1], cb[2], cg, cc, cs, cy};
    uint64_t exts[] = {ea[0], ea[1], ea[2], ea[3], ea[4], eb[0], eb[1], eb[2], eg, ec, es, ey};
    for (int i = 0; i < 12; i++) {
        CUpti_ActivityExternalCorrelation e = ct_ext(corrs[i], exts[i]);
        assert_true(fake_buf_add(&e, sizeof e));
    }
    CUpti_ActivityExternalCorrelation e5000 = ct_ext(5000, 777);
    assert_true(fake_buf_add(&e5000, sizeof e5000));
    CUpti_ActivityExternalCorrelation e6000 = ct_ext(6000, 888);
    assert_true(fake_buf_add(&e6000, sizeof e6000));
    for (int i = 1; i < 4; i++) {
        k = ct_kernel(ca[i], t + 10000u * (uint64_t)i, t + 10000u * (uint64_t)i + 4000, "tiny_a");
        assert_true(fake_buf_add(&k, sizeof k));
    }
    CUpti_ActivityMarker2 mk;
    memset(&mk, 0, sizeof mk);
    mk.kind = CUPTI_ACTIVITY_KIND_MARKER;
    assert_true(fake_buf_add(&mk, sizeof mk));
    fake_buf_finish(7, 0);

    /* buffer 2: kernels whose correlations sat in buffer 1, a graph's three kernels, the
     * unseen launch's kernel, one with no launch at all, one without timestamps, a copy, a
     * memset, a sync, a kind from a future CUPTI; CUPTI dropped 17 records on this stream */
    assert_true(fake_buf_begin());
    k = ct_kernel(ca[4], t + 50000, t + 54000, "tiny_a");
    assert_true(fake_buf_add(&k, sizeof k));
    for (int i = 0; i < 3; i++) {
        k = ct_kernel(cb[i], t + 60000u + 10000u * (uint64_t)i, t + 62000u + 10000u * (uint64_t)i, "tiny_b");
        assert_true(fake_buf_add(&k, sizeof k));
    }
    for (int i = 0; i < 3; i++) {
        k = ct_kernel(cg, t + 100000u + 1000u * (uint64_t)i, t + 100500u + 1000u * (uint64_t)i, "graph_node");
        k.graphId = 42;
        k.graphNodeId = (uint64_t)i + 1;
        assert_true(fake_buf_add(&k, sizeof k));
    }
    k = ct_kernel(5000, t + 200000, t + 900000, "big");
    k.gridX = 4096;
    k.blockX = 256;
    assert_true(fake_buf_add(&k, sizeof k));
    k = ct_kernel(999999, t + 300000, t + 301000, "orphan");
    assert_true(fake_buf_add(&k, sizeof k));
    k = ct_kernel(cb[0], 0, 0, "tiny_b");
    assert_true(fake_buf_add(&k, sizeof k));
    CUpti_ActivityMemcpy6 mc = ct_memcpy(cc, t + 400000, t + 410000, 1u << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    assert_true(fake_buf_add(&mc, sizeof mc));
    CUpti_ActivityMemset4 ms = ct_memset(cs, t + 420000, t + 421000, 4096);
    assert_true(fake_buf_add(&ms, sizeof ms));
    CUpti_ActivitySynchronization2 sy = ct_sync(cy, t + 430000, t + 440000);
    assert_true(fake_buf_add(&sy, sizeof sy));
    add_unknown(250);
    fake_buf_finish(7, 17);

    /* stacks are read while the recording's stack table lives */
    assert_int_equal(jager_flush(), JAGER_OK);
    const jager_rec_plugin *la0 = launch_of(m, t_launch, ca[0]), *lb0 = launch_of(m, t_launch, cb[0]);
    assert_non_null(la0);
    assert_non_null(lb0);
    assert_true(stack_has(la0->fields[L_STACK], (void *)launch_site_a));
    assert_false(stack_has(la0->fields[L_STACK], (void *)launch_site_b));
    assert_true(stack_has(lb0->fields[L_STACK], (void *)launch_site_b));
    assert_true(stack_has(lb0->fields[L_STACK], (void *)test_launches_and_activity));
    const uint64_t stack_a = la0->fields[L_STACK], stack_b = lb0->fields[L_STACK]; /* the sink grows on */
    jager_shutdown();
    ct_env_clear();

    /* launches: one event per call, the launching site, the pushed id, one stack per path */
    assert_int_equal(ct_count(m, t_launch), 12);
    size_t by_kind[8] = {0};
    for (size_t i = 0; i < 12; i++) {
        const jager_rec_plugin *l = ct_rec(m, t_launch, i);
        assert_int_equal(l->fields[L_SITE], solve);
        assert_int_equal(l->fields[L_EXT], i + 1);
        assert_true(l->fields[L_STACK] != 0);
        by_kind[l->fields[L_KIND] & 7]++;
    }
    assert_int_equal(by_kind[1], 8);
    assert_int_equal(by_kind[2], 1);
    assert_int_equal(by_kind[3], 1);
    assert_int_equal(by_kind[4], 1);
    assert_int_equal(by_kind[5], 1);
    for (int i = 0; i < 5; i++) assert_int_equal(launch_of(m, t_launch, ca[i])->fields[L_STACK], stack_a);
    for (int i = 0; i < 3; i++) assert_int_equal(launch_of(m, t_launch, cb[i])->fields[L_STACK], stack_b);
    assert_true(stack_a != stack_b);
    assert_string_equal(jg_string((uint32_t)launch_of(m, t_launch, cb[0])->fields[L_API]), "cuLaunchKernelEx");

    /* kernels: 15 records, 14 with times; each tied to its launch */
    assert_int_equal(ct_count(m, t_kernel), 14);
    size_t linked = 0, graph = 0, orphans = 0, ext_only = 0;
    for (size_t i = 0; i < 14; i++) {
        const jager_rec_plugin *kr = ct_rec(m, t_kernel, i);
        const jager_rec_plugin *l = launch_of(m, t_launch, kr->fields[K_CORR]);
        if (l) {
            linked++;
            assert_int_equal(kr->fields[K_STACK], l->fields[L_STACK]);
            assert_int_equal(kr->fields[K_EXT], l->fields[L_EXT]);
            assert_int_equal(kr->fields[K_SITE], solve);
            assert_int_equal(kr->fields[K_LAUNCH_NS], l->time_ns);
            assert_true(kr->time_ns > kr->fields[K_LAUNCH_NS]); /* every kernel after its launch began */
            assert_true(kr->fields[K_TID] != 0);
        } else if (kr->fields[K_CORR] == 5000 || kr->fields[K_CORR] == 6000) {
            /* matched through EXTERNAL_CORRELATION only: of the buffer before, of later in the buffer */
            assert_int_equal(kr->fields[K_EXT], kr->fields[K_CORR] == 5000 ? 777 : 888);
            assert_int_equal(kr->fields[K_STACK], 0);
            ext_only++;
        } else {
            orphans++;
            assert_int_equal(kr->fields[K_CORR], 999999);
            assert_int_equal(kr->fields[K_EXT], 0);
        }
        if (kr->fields[K_GRAPH] == 42) {
            graph++;
            assert_int_equal(kr->fields[K_CORR], cg);
        }
        assert_int_equal(kr->fields[K_BX] * kr->fields[K_GX] >= 512, 1);
        assert_int_equal(kr->fields[K_REGS], 32);
        assert_int_equal(kr->fields[K_SSHM], 1024);
    }
    assert_int_equal(linked, 11);
    assert_int_equal(graph, 3);
    assert_int_equal(orphans, 1);
    assert_int_equal(ext_only, 2);
    const jager_rec_plugin *k0 = ct_rec(m, t_kernel, 0);
    assert_int_equal(k0->time_ns, t);
    assert_int_equal(k0->fields[K_DUR], 4000);
    assert_string_equal(jg_string(k0->fields[K_NAME]), "tiny_a");
    assert_int_equal(k0->fields[K_STREAM], 7);

    /* copies, memsets, syncs */
    assert_int_equal(ct_count(m, t_memcpy), 1);
    const jager_rec_plugin *mr = ct_rec(m, t_memcpy, 0);
    assert_int_equal(mr->fields[0], 10000);
    assert_int_equal(mr->fields[1], 1u << 20);
    assert_int_equal(mr->fields[2], CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    assert_int_equal(ct_count(m, t_memset), 1);
    assert_int_equal(ct_rec(m, t_memset, 0)->fields[1], 4096);
    assert_int_equal(ct_count(m, t_sync), 1);
    assert_int_equal(ct_rec(m, t_sync, 0)->fields[0], 10000);

    /* drops, unknown kinds, the summary */
    assert_int_equal(ct_count(m, t_drop), 1);
    assert_int_equal(ct_rec(m, t_drop, 0)->fields[3], 17);
    assert_int_equal(ct_rec(m, t_drop, 0)->fields[2], 7);
    assert_int_equal(ct_count(m, t_other), 2);
    assert_int_equal(ct_rec(m, t_other, 0)->fields[0], CUPTI_ACTIVITY_KIND_MARKER);
    assert_int_equal(ct_rec(m, t_other, 0)->fields[1], 1);
    assert_int_equal(ct_rec(m, t_other, 1)->fields[0], 0xffffffffu);
    assert_int_equal(ct_count(m, t_sum), 1);
    const uint64_t *s = ct_rec(m, t_sum, 0)->fields;
    assert_int_equal(s[S_LAUNCHES], 12);
    assert_int_equal(s[S_STACKS], 12);
    assert_int_equal(s[S_RECORDS], 34);
    assert_int_equal(s[S_KERNELS], 15);
    assert_int_equal(s[S_MEMCPYS], 1);
    assert_int_equal(s[S_MEMSETS], 1);
    assert_int_equal(s[S_SYNCS], 1);
    assert_int_equal(s[S_OTHER], 2);
    assert_int_equal(s[S_EXT], 14);
    assert_int_equal(s[S_HITS], 17);
    assert_int_equal(s[S_MISSES], 1);
    assert_int_equal(s[S_EVICTED], 0);
    assert_int_equal(s[S_ZERO], 1);
    assert_int_equal(s[S_DROPPED], 17);
    assert_int_equal(s[S_EXHAUSTED], 0);
    assert_int_equal(s[S_BUFBYTES], 4u << 20);
    assert_int_equal(s[S_BUFFERS], 16);
    assert_true(s[S_SUGGESTED] > s[S_CAP]);
    assert_int_equal(s[S_CLOCK], 1);
    assert_int_equal(ct_diags(m, "cuda", "17 activity records dropped"), 1);
    /* the device */
    assert_int_equal(ct_count(m, t_dev), 1);
    assert_string_equal(jg_string(ct_rec(m, t_dev, 0)->fields[1]), "Fake H200");
    assert_int_equal(ct_rec(m, t_dev, 0)->fields[2], 132);

    fake_counts fc = fake_get_counts();
    assert_int_equal(fc.ts_registrations, 1);
    assert_int_equal(fc.subscribes, 1);
    assert_int_equal(fc.unsubscribes, 1);
    assert_int_equal(fc.pushes, 12);
    assert_int_equal(fc.pops, 12);
    assert_true(fc.forced_flushes >= 1);
    assert_int_equal(fc.buffers_completed, 2);
    memsink_free(m);
}

/* A second recording in the process: the timestamp callback is not registered again. */
static void test_second_recording_one_timestamp_callback(void **unused)
{
    (void)unused;
    fake_reset(FAKE_OK);
    ct_env(NULL, NULL);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_sum = ct_type("cuda.summary"), t_launch = ct_type("cuda.launch");
    for (int i = 0; i < 3; i++) launch_site_a(NULL);
    jager_shutdown();
    ct_env_clear();
    fake_counts fc = fake_get_counts();
    assert_int_equal(fc.ts_registrations, 0);
    assert_int_equal(fc.subscribes, 1);
    assert_int_equal(ct_count(m, t_launch), 3);
    assert_int_equal(ct_rec(m, t_sum, 0)->fields[S_CLOCK], 1);
    assert_int_equal(ct_rec(m, t_sum, 0)->fields[S_LAUNCHES], 3);
    assert_int_equal(ct_rec(m, t_sum, 0)->fields[S_KERNELS], 0);
    memsink_free(m);
}

/* cudaLaunchKernel with cuLaunchKernel inside: one launch, one stack, one external id; a
 * kernel carrying either call's correlation id finds it. */
static void test_runtime_and_driver_are_one_launch(void **unused)
{
    (void)unused;
    fake_reset(FAKE_OK);
    ct_env(NULL, NULL);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_launch = ct_type("cuda.launch"), t_kernel = ct_type("cuda.kernel"), t_sum = ct_type("cuda.summary");
    uint32_t rt[4], drv[4];
    for (int i = 0; i < 4; i++)
        fake_api_call_nested(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel",
                             CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", &rt[i], &drv[i]);
    uint64_t t = jager_now_ns() + 1000;
    assert_true(fake_buf_begin());
    for (int i = 0; i < 4; i++) {
        CUpti_ActivityKernel10 k = ct_kernel(i % 2 ? rt[i] : drv[i], t + 1000u * (uint64_t)i, t + 1000u * (uint64_t)i + 500, "k");
        assert_true(fake_buf_add(&k, sizeof k));
    }
    fake_buf_finish(7, 0);
    jager_shutdown();
    ct_env_clear();
    assert_int_equal(ct_count(m, t_launch), 4);
    assert_int_equal(ct_count(m, t_kernel), 4);
    for (size_t i = 0; i < 4; i++) {
        const jager_rec_plugin *l = ct_rec(m, t_launch, i), *k = ct_rec(m, t_kernel, i);
        assert_string_equal(jg_string((uint32_t)l->fields[L_API]), "cudaLaunchKernel");
        assert_int_equal(l->fields[L_CORR], rt[i]);
        assert_int_equal(l->fields[L_EXT], i + 1);
        assert_int_equal(k->fields[K_EXT], i + 1);
        assert_int_equal(k->fields[K_STACK], l->fields[L_STACK]);
        assert_int_equal(k->fields[K_LAUNCH_NS], l->time_ns);
    }
    assert_int_equal(ct_rec(m, t_sum, 0)->fields[S_MISSES], 0);
    assert_int_equal(ct_rec(m, t_sum, 0)->fields[S_LAUNCHES], 4);
    assert_int_equal(ct_rec(m, t_sum, 0)->fields[S_STACKS], 4);
    fake_counts fc = fake_get_counts();
    assert_int_equal(fc.pushes, 4);
    assert_int_equal(fc.pops, 4);
    memsink_free(m);
}

/* Eviction by age: with 16 slots, launches 17..20 take the slots of launches 1..4 before
 * any record matched them (4 evicted); those four kernels then find nothing (4 misses),
 * the other sixteen find their launch. */
static void test_eviction_by_age(void **unused)
{
    (void)unused;
    fake_reset(FAKE_OK);
    ct_env(NULL, NULL);
    setenv("JAGER_CUDA_CORRELATION_SLOTS", "16", 1);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_kernel = ct_type("cuda.kernel"), t_sum = ct_type("cuda.summary");
    uint32_t c[20];
    volatile int n = 20;
    for (int i = 0; i < n; i++) c[i] = launch_site_a(NULL);
    uint64_t t = jager_now_ns() + 1000;
    assert_true(fake_buf_begin());
    for (int i = 0; i < 20; i++) {
        CUpti_ActivityKernel10 k = ct_kernel(c[i], t + 100u * (uint64_t)i, t + 100u * (uint64_t)i + 50, "k");
        assert_true(fake_buf_add(&k, sizeof k));
    }
    fake_buf_finish(7, 0);
    jager_shutdown();
    unsetenv("JAGER_CUDA_CORRELATION_SLOTS");
    ct_env_clear();
    assert_int_equal(ct_count(m, t_kernel), 20);
    size_t unlinked = 0;
    for (size_t i = 0; i < 20; i++) {
        const jager_rec_plugin *k = ct_rec(m, t_kernel, i);
        if (!k->fields[K_STACK]) {
            unlinked++;
            assert_true(k->fields[K_CORR] <= c[3]); /* the oldest four */
        }
    }
    assert_int_equal(unlinked, 4);
    const uint64_t *s = ct_rec(m, t_sum, 0)->fields;
    assert_int_equal(s[S_EVICTED], 4);
    assert_int_equal(s[S_MISSES], 4);
    assert_int_equal(s[S_HITS], 16);
    assert_int_equal(ct_diags(m, "cuda", "4 activity records found no launch (4 launches evicted unmatched)"), 1);
    memsink_free(m);
}

/* The pool: 1 MiB of 64 KiB buffers is 16; the 17th request is refused and counted. */
static void test_pool_cap(void **unused)
{
    (void)unused;
    fake_reset(FAKE_OK);
    ct_env(NULL, NULL);
    setenv("JAGER_CUDA_BUFFER_KB", "64", 1);
    setenv("JAGER_CUDA_MEMORY_MB", "1", 1);
    setenv("JAGER_CUDA_FLUSH_MS", "10000", 1);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_sum = ct_type("cuda.summary");
    for (int i = 0; i < 16; i++) {
        assert_true(fake_buf_begin());
        fake_buf_finish(0, 0);
    }
    assert_int_equal(fake_buffer_size(), 65536);
    assert_false(fake_buf_begin());
    jager_shutdown();
    ct_env_clear();
    unsetenv("JAGER_CUDA_BUFFER_KB");
    unsetenv("JAGER_CUDA_MEMORY_MB");
    unsetenv("JAGER_CUDA_FLUSH_MS");
    const uint64_t *s = ct_rec(m, t_sum, 0)->fields;
    assert_int_equal(s[S_BUFFERS], 16);
    assert_int_equal(s[S_EXHAUSTED], 1);
    assert_int_equal(s[S_CAP], 1u << 20);
    assert_true(s[S_SUGGESTED] >= 2u << 20);
    assert_int_equal(fake_get_counts().buffers_refused, 1);
    assert_int_equal(fake_get_counts().buffers_completed, 16);
    assert_int_equal(ct_diags(m, "cuda", "1 buffer requests refused"), 1);
    memsink_free(m);
}

/* A bad option value: one warning, the default, the recording goes on. */
static void test_bad_option(void **unused)
{
    (void)unused;
    fake_reset(FAKE_OK);
    ct_env(NULL, NULL);
    setenv("JAGER_CUDA_DEPTH", "abc", 1);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_launch = ct_type("cuda.launch");
    launch_site_a(NULL);
    jager_shutdown();
    unsetenv("JAGER_CUDA_DEPTH");
    ct_env_clear();
    assert_int_equal(ct_diags(m, "cuda", "option depth=\"abc\""), 1);
    assert_int_equal(ct_count(m, t_launch), 1);
    assert_true(ct_rec(m, t_launch, 0)->fields[L_STACK] != 0);
    memsink_free(m);
}

/* Each reason to step aside: said once, nothing registered, the program records on. */
static void step_aside(int mode, const char *cupti, const char *driver, const char *needle)
{
    fake_reset(mode);
    ct_env(cupti, driver);
    memsink *m = ct_start();
    assert_non_null(m);
    jager_site s = jager_site_register("aside.work", __FILE__, __LINE__);
    for (int i = 0; i < 10; i++) jager_span_end(jager_span_begin(s));
    launch_site_a(NULL); /* no subscriber: nothing happens */
    jager_shutdown();
    ct_env_clear();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, s), 10);
    size_t cuda_events = 0;
    for (size_t k = 0; k < m->nrecs; k++) {
        const jager_type_desc *d = jg_type_get(memsink_at(m, k).rec->type);
        if (d && !d->builtin && strncmp(d->name, "cuda.", 5) == 0) cuda_events++;
    }
    assert_int_equal(cuda_events, 0);
    assert_int_equal(ct_diags(m, "cuda", needle), 1);
    assert_int_equal(ct_diags(m, "cuda", "stepped aside"), 1); /* the loader's line */
    assert_int_equal(ct_diags(m, "cuda", NULL), 2);             /* and nothing else */
    fake_counts fc = fake_get_counts();
    assert_int_equal(fc.kinds_enabled, 0);
    assert_int_equal(fc.subscribes, 0);
    memsink_free(m);
}

static void test_aside_no_driver(void **u)
{
    (void)u;
    step_aside(FAKE_OK, NULL, "/nonexistent/libcuda.so.1", "no CUDA driver");
}
static void test_aside_cuinit_fails(void **u)
{
    (void)u;
    step_aside(FAKE_CUINIT_FAILS, NULL, NULL, "CUDA_ERROR_NO_DEVICE");
}
static void test_aside_no_device(void **u)
{
    (void)u;
    step_aside(FAKE_NO_DEVICE, NULL, NULL, "no CUDA device (the driver reports 0)");
}
static void test_aside_no_cupti(void **u)
{
    (void)u;
    step_aside(FAKE_OK, "/nonexistent/libcupti.so", NULL, "CUPTI not found");
}
static void test_aside_other_subscriber(void **u)
{
    (void)u;
    step_aside(FAKE_OTHER_SUBSCRIBER, NULL, NULL, "another tool already holds CUPTI");
}
static void test_aside_old_cupti(void **u)
{
    (void)u;
    step_aside(FAKE_OLD_CUPTI, NULL, NULL, "CUPTI API version 26 is older than the CUDA 13 record layouts");
}

/* A failed case must not leave the next one a running recording. */
static int teardown(void **unused)
{
    (void)unused;
    jager_shutdown();
    ct_env_clear();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_launches_and_activity, teardown),
        cmocka_unit_test_teardown(test_second_recording_one_timestamp_callback, teardown),
        cmocka_unit_test_teardown(test_runtime_and_driver_are_one_launch, teardown),
        cmocka_unit_test_teardown(test_eviction_by_age, teardown),
        cmocka_unit_test_teardown(test_pool_cap, teardown),
        cmocka_unit_test_teardown(test_bad_option, teardown),
        cmocka_unit_test_teardown(test_aside_no_driver, teardown),
        cmocka_unit_test_teardown(test_aside_cuinit_fails, teardown),
        cmocka_unit_test_teardown(test_aside_no_device, teardown),
        cmocka_unit_test_teardown(test_aside_no_cupti, teardown),
        cmocka_unit_test_teardown(test_aside_other_subscriber, teardown),
        cmocka_unit_test_teardown(test_aside_old_cupti, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
