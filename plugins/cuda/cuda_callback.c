/* cuda_callback.c — the driver API callbacks, on the launching thread.
 *
 * For each traced call (kernel launches incl. cuLaunchKernelEx, cooperative and graph
 * launches; copies; memsets; allocations; synchronisations), at entry: the time, the
 * innermost open Jäger site, a host stack by frame-pointer walk into a buffer on this stack
 * (interned through the host), and an external correlation id pushed to CUPTI; the lot goes
 * into the correlation table under CUPTI's correlation id, where the activity records find
 * it. At exit: the id is popped and one cuda.launch event is written on this thread.
 * No allocation after a thread's first call; no lock is held across a CUPTI call. */
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cuda_internal.h"

/* launch kinds (cuda.launch.kind) */
enum { CU_K_KERNEL = 1, CU_K_GRAPH = 2, CU_K_COPY = 3, CU_K_MEMSET = 4, CU_K_SYNC = 5, CU_K_ALLOC = 6, CU_K_FREE = 7 };

static const struct {
    uint16_t cbid;
    uint8_t kind;
} traced[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunch, CU_K_KERNEL},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CU_K_KERNEL},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, CU_K_KERNEL},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CU_K_KERNEL},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, CU_K_KERNEL},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CU_K_KERNEL},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, CU_K_KERNEL},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CU_K_GRAPH},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, CU_K_GRAPH},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpy_v2, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz, CU_K_COPY},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz, CU_K_MEMSET},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, CU_K_SYNC},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, CU_K_SYNC},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, CU_K_SYNC},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, CU_K_SYNC},
    {CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, CU_K_SYNC},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc, CU_K_ALLOC},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CU_K_ALLOC},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, CU_K_ALLOC},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, CU_K_ALLOC},
    {CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, CU_K_FREE},
    {CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, CU_K_FREE},
    {CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz, CU_K_FREE},
};

#define RT(n) CUPTI_RUNTIME_TRACE_CBID_##n
static const struct {
    uint16_t cbid;
    uint8_t kind;
} traced_rt[] = {
    {RT(cudaLaunchKernel_v7000), CU_K_KERNEL},
    {RT(cudaLaunchKernel_ptsz_v7000), CU_K_KERNEL},
    {RT(cudaLaunchKernelExC_v11060), CU_K_KERNEL},
    {RT(cudaLaunchKernelExC_ptsz_v11060), CU_K_KERNEL},
    {RT(cudaLaunchCooperativeKernel_v9000), CU_K_KERNEL},
    {RT(cudaLaunchCooperativeKernel_ptsz_v9000), CU_K_KERNEL},
    {RT(cudaGraphLaunch_v10000), CU_K_GRAPH},
    {RT(cudaGraphLaunch_ptsz_v10000), CU_K_GRAPH},
    {RT(cudaMemcpy_v3020), CU_K_COPY},
    {RT(cudaMemcpy_ptds_v7000), CU_K_COPY},
    {RT(cudaMemcpyAsync_v3020), CU_K_COPY},
    {RT(cudaMemcpyAsync_ptsz_v7000), CU_K_COPY},
    {RT(cudaMemset_v3020), CU_K_MEMSET},
    {RT(cudaMemset_ptds_v7000), CU_K_MEMSET},
    {RT(cudaMemsetAsync_v3020), CU_K_MEMSET},
    {RT(cudaMemsetAsync_ptsz_v7000), CU_K_MEMSET},
    {RT(cudaDeviceSynchronize_v3020), CU_K_SYNC},
    {RT(cudaStreamSynchronize_v3020), CU_K_SYNC},
    {RT(cudaStreamSynchronize_ptsz_v7000), CU_K_SYNC},
    {RT(cudaEventSynchronize_v3020), CU_K_SYNC},
    {RT(cudaMalloc_v3020), CU_K_ALLOC},
    {RT(cudaMallocAsync_v11020), CU_K_ALLOC},
    {RT(cudaMallocAsync_ptsz_v11020), CU_K_ALLOC},
    {RT(cudaFree_v3020), CU_K_FREE},
    {RT(cudaFreeAsync_v11020), CU_K_FREE},
    {RT(cudaFreeAsync_ptsz_v11020), CU_K_FREE},
};

static uint8_t kind_of[CU_MAX_CBID], kind_of_rt[CU_MAX_CBID];

jager_status cu_callbacks_enable(cu_state *st)
{
    for (uint32_t i = 0; i < CU_N(traced); i++) {
        if (traced[i].cbid < CU_MAX_CBID) kind_of[traced[i].cbid] = traced[i].kind;
        CUptiResult r = st->api.EnableCallback(1, st->sub, CUPTI_CB_DOMAIN_DRIVER_API, traced[i].cbid);
        if (r != CUPTI_SUCCESS) return JAGER_E_UNSUPPORTED;
    }
    /* The runtime's calls too: a kernel launched through cudaLaunchKernel may carry the
     * runtime call's correlation id rather than the driver call's underneath it. */
    for (uint32_t i = 0; i < CU_N(traced_rt); i++) {
        if (traced_rt[i].cbid < CU_MAX_CBID) kind_of_rt[traced_rt[i].cbid] = traced_rt[i].kind;
        CUptiResult r = st->api.EnableCallback(1, st->sub, CUPTI_CB_DOMAIN_RUNTIME_API, traced_rt[i].cbid);
        if (r != CUPTI_SUCCESS) return JAGER_E_UNSUPPORTED;
    }
    return JAGER_OK;
}

/* ---- stacks ---- */

/* The calling thread's stack bounds, found on its first traced call. */
static __thread uintptr_t tl_stack_hi __attribute__((tls_model("initial-exec")));
static __thread uint64_t tl_tid __attribute__((tls_model("initial-exec")));
/* The outermost traced call on this thread (a runtime call and the driver call inside it
 * are one launch: one stack, one external id, one cuda.launch event). */
typedef struct cu_outer {
    uint64_t t0, ext, stack;
    uint32_t site, depth;
    uint32_t gen; /* the recording that set depth: a call left open by a stop is forgotten */
} cu_outer;
static __thread cu_outer tl_outer __attribute__((tls_model("initial-exec")));

static void thread_first_call(void)
{
    pthread_attr_t a;
    void *addr = NULL;
    size_t size = 0;
    tl_tid = (uint64_t)syscall(SYS_gettid);
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &addr, &size) == 0) tl_stack_hi = (uintptr_t)addr + size;
        pthread_attr_destroy(&a);
    }
    if (!tl_stack_hi) tl_stack_hi = (uintptr_t)__builtin_frame_address(0) + 65536; /* bound the walk */
}

__attribute__((noinline)) uint32_t cu_stack_walk(uint64_t *out, uint32_t cap)
{
    if (!tl_stack_hi) thread_first_call();
    uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
    uintptr_t hi = tl_stack_hi;
    uintptr_t fp = lo;
    uint32_t n = 0;
    /* Frames without a frame pointer (CUPTI, the driver) leave the caller's in rbp, so the
     * chain continues at the next function that keeps one. Every step must go up the stack,
     * stay inside it and be aligned, or the walk ends. */
    while (n < cap && fp >= lo && fp <= hi - 16 && (fp & 7u) == 0) {
        const uintptr_t *f = (const uintptr_t *)fp;
        uintptr_t next = f[0], ret = f[1];
        if (ret < 4096) break;
        out[n++] = (uint64_t)ret;
        if (next <= fp) break;
        fp = next;
    }
    return n;
}

/* ---- the correlation table ---- */

void cu_corr_put(cu_state *st, uint32_t corr, uint64_t launch_ns, uint64_t ext, uint64_t stack, uint32_t site,
                 uint64_t tid)
{
    cu_corr_slot *s = &st->corr[corr & st->corr_mask];
    uint32_t old = atomic_exchange_explicit(&s->corr, 0, memory_order_acq_rel);
    if (old && old != corr && !atomic_load_explicit(&s->matched, memory_order_relaxed))
        atomic_fetch_add_explicit(&st->corr_evicted, 1, memory_order_relaxed);
    atomic_store_explicit(&s->matched, 0, memory_order_relaxed);
    atomic_store_explicit(&s->launch_ns, launch_ns, memory_order_relaxed);
    atomic_store_explicit(&s->external_id, ext, memory_order_relaxed);
    atomic_store_explicit(&s->stack, stack, memory_order_relaxed);
    atomic_store_explicit(&s->site, site, memory_order_relaxed);
    atomic_store_explicit(&s->os_tid, tid, memory_order_relaxed);
    atomic_store_explicit(&s->corr, corr, memory_order_release);
}

int cu_corr_get(cu_state *st, uint32_t corr, cu_launch_info *out)
{
    memset(out, 0, sizeof *out);
    if (!st->corr || !corr) return 0;
    cu_corr_slot *s = &st->corr[corr & st->corr_mask];
    if (atomic_load_explicit(&s->corr, memory_order_acquire) != corr) return 0;
    out->launch_ns = atomic_load_explicit(&s->launch_ns, memory_order_relaxed);
    out->external_id = atomic_load_explicit(&s->external_id, memory_order_relaxed);
    out->stack = atomic_load_explicit(&s->stack, memory_order_relaxed);
    out->site = atomic_load_explicit(&s->site, memory_order_relaxed);
    out->os_tid = atomic_load_explicit(&s->os_tid, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->corr, memory_order_relaxed) != corr) return 0; /* rewritten meanwhile */
    atomic_store_explicit(&s->matched, 1, memory_order_relaxed);
    out->found = 1;
    return 1;
}

/* ---- the callback ---- */

static uint32_t api_name_id(cu_state *st, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char *name)
{
    if (cbid >= CU_MAX_CBID || !name) return 0;
    _Atomic uint32_t *slot = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? &st->api_name_rt[cbid] : &st->api_name[cbid];
    uint32_t id = atomic_load_explicit(slot, memory_order_relaxed);
    if (!id) { /* first sight of this API: intern once (takes the host's lock, not CUPTI's) */
        id = st->host->intern(name);
        atomic_store_explicit(slot, id, memory_order_relaxed);
    }
    return id;
}

void CUPTIAPI cu_api_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata)
{
    cu_state *st = userdata;
    if (!st || !st->active || !st->callbacks || cbid >= CU_MAX_CBID) return;
    uint8_t kind;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        kind = kind_of[cbid];
    else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        kind = kind_of_rt[cbid];
    else
        return;
    if (!kind) return;
    const CUpti_CallbackData *cd = cbdata;
    cu_outer *o = &tl_outer;
    if (o->gen != st->generation) {
        o->gen = st->generation;
        o->depth = 0;
    }
    if (cd->callbackSite == CUPTI_API_ENTER) {
        if (o->depth++ == 0) {
            o->t0 = st->host->now_ns();
            uint64_t ips[CU_MAX_DEPTH];
            uint32_t n = st->depth ? cu_stack_walk(ips, st->depth) : 0;
            if (!tl_tid) thread_first_call();
            o->stack = n ? st->host->stack_intern(ips, n) : 0;
            o->site = 0;
            st->host->open_sites(&o->site, 1);
            o->ext = atomic_fetch_add_explicit(&st->next_external_id, 1, memory_order_relaxed) + 1;
            st->api.ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, o->ext);
            if (o->stack) atomic_fetch_add_explicit(&st->launch_stacks, 1, memory_order_relaxed);
        }
        if (cd->correlationData) *cd->correlationData = o->t0;
        /* every level's correlation id leads to the outermost call */
        cu_corr_put(st, cd->correlationId, o->t0, o->ext, o->stack, o->site, tl_tid);
    } else if (cd->callbackSite == CUPTI_API_EXIT) {
        if (o->depth == 0) return; /* entered before the plugin started */
        if (--o->depth) return;
        uint64_t t1 = st->host->now_ns();
        uint64_t popped = 0;
        st->api.ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
        uint64_t f[] = {t1 >= o->t0 ? t1 - o->t0 : 0, api_name_id(st, domain, cbid, cd->functionName), kind,
                        cd->correlationId, popped, o->stack, o->site};
        st->host->emit(st->t_launch, o->t0, f, CU_N(f));
        atomic_fetch_add_explicit(&st->launches, 1, memory_order_relaxed);
    }
}
