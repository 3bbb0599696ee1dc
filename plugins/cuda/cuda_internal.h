/* cuda_internal.h — the cuda plugin's shared state (one instance per process).
 *
 * Files: cuda_plugin.c (descriptor, options, event types, lifecycle), cuda_load.c (dlopen of
 * CUPTI and the driver, the reasons to step aside), cuda_callback.c (the API callbacks on the
 * launching thread: span, host stack, correlation), cuda_activity.c (buffer pool, worker
 * thread, record decoder, correlation table), cuda_nvtx.c (the NVTX injection). */
#ifndef JAGER_CUDA_INTERNAL_H
#define JAGER_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

#include "jager_plugin.h"

#define CU_HIDDEN __attribute__((visibility("hidden")))
#define CU_N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* The CUPTI API version whose record layouts this file decodes (CUDA 13: 130000 and up). */
#define CU_LAYOUT_MIN_API 130000u
#define CU_MAX_DEPTH 128u
#define CU_MAX_KIND 128u  /* activity kinds counted individually (CUPTI has ~70) */
#define CU_MAX_CBID 1024u /* driver callback ids whose api name is cached */

/* The CUPTI and driver entry points the plugin resolves with dlsym (and a test double
 * provides). Everything else of CUDA stays out of the plugin. */
typedef struct cu_api {
    void *cupti_lib, *driver_lib;
    /* CUPTI */
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc); /* may be NULL */
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*GetTimestamp)(uint64_t *);
    /* driver */
    CUresult (*cuInit)(unsigned int);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
} cu_api;

/* What an API call left for its activity records: written by the launching thread, read by
 * the worker. A slot is reused by the launch whose correlation id is equal modulo the table
 * size (eviction by age); `corr` is the seqlock word (0 while being written). */
typedef struct cu_corr_slot {
    _Atomic uint32_t corr;
    _Atomic uint32_t matched; /* an activity record found it */
    _Atomic uint64_t launch_ns;
    _Atomic uint64_t external_id;
    _Atomic uint64_t stack;
    _Atomic uint32_t site;
    _Atomic uint64_t os_tid;
} cu_corr_slot;

/* What the worker found for one record. */
typedef struct cu_launch_info {
    uint64_t launch_ns, external_id, os_tid, stack;
    uint32_t site;
    int found;
} cu_launch_info;

/* One completed activity buffer on its way from CUPTI's thread to the worker. */
typedef struct cu_full {
    uint8_t *buf;
    size_t valid;
    uint32_t stream;
    uint32_t ctx_id;  /* 0: the buffer is not tied to one context */
    uint64_t dropped; /* CUPTI's drop count for (context, stream), read when it handed the buffer */
} cu_full;

typedef struct cu_state {
    const jager_host_api *host;
    jager_plugin_handle *self;
    cu_api api;
    int active;      /* init succeeded and not shut down */
    uint32_t generation; /* counts recordings in this process (1, 2, …) */
    int subscribed;
    CUpti_SubscriberHandle sub;
    uint32_t cupti_version;
    int driver_version;
    int ndevices;

    /* options */
    uint32_t depth, corr_slots, flush_ms, flush_timeout_ms;
    uint64_t buffer_bytes, memory_cap;
    int callbacks, nvtx, kinds_memory, kinds_overhead, kinds_sync;

    /* event types */
    uint16_t t_launch, t_kernel, t_memcpy, t_memset, t_sync, t_memory, t_overhead, t_other,
        t_drop, t_summary, t_device, t_clock, t_nvtx_range;

    /* clock */
    int clock_mode;   /* 1: CUPTI timestamps are Jäger ns (timestamp callback); 2: paired-sample fit */
    double fit_slope, fit_offset; /* jager = slope * cupti + offset */
    double fit_sx, fit_sy, fit_sxx, fit_sxy, fit_n; /* running sums (around fit_x0/y0) */
    double fit_x0, fit_y0, fit_xmin, fit_xmax;

    /* correlation table (power of two) */
    cu_corr_slot *corr;
    uint32_t corr_mask;
    _Atomic uint64_t next_external_id;
    /* external ids seen in EXTERNAL_CORRELATION records (worker only) */
    uint32_t *ext_corr;
    uint64_t *ext_id;

    /* buffer pool: free stack + completed queue, one mutex (never held across CUPTI) */
    pthread_mutex_t pool_lock;
    pthread_cond_t pool_cond;
    uint8_t *pool_mem;
    uint8_t **free_bufs;
    uint32_t nfree, nbufs;
    cu_full *full;
    uint32_t full_head, full_count;
    int worker_stop, worker_started, pool_leaked;
    pthread_t worker;
    uint64_t window_start_ns;

    /* api names by driver callback id (interned lazily, first sight) */
    _Atomic uint32_t api_name[CU_MAX_CBID], api_name_rt[CU_MAX_CBID];

    /* kernel-name cache: CUPTI name pointer -> string id (worker only) */
    const char **name_ptr;
    uint32_t *name_id;
    uint32_t name_mask;

    /* counts */
    _Atomic uint64_t launches, launch_stacks, pool_exhausted, buffers_completed;
    uint64_t records, kernels, memcpys, memsets, syncs, memories, overheads, others, ext_records;
    uint64_t dropped, corr_hits, corr_misses, zero_ts, bytes_decoded, max_valid;
    _Atomic uint64_t corr_evicted;
    uint64_t other_by_kind[CU_MAX_KIND];
    uint64_t other_unlisted; /* kinds ≥ CU_MAX_KIND */
} cu_state;

extern cu_state cu_g CU_HIDDEN;

/* cuda_load.c */
/* Open the driver and CUPTI, check device and version; on failure writes a reason and
 * returns JAGER_E_UNSUPPORTED. */
jager_status cu_load(cu_state *st, char *why, size_t whylen) CU_HIDDEN;
void cu_unload(cu_state *st) CU_HIDDEN;
const char *cu_result_name(cu_state *st, CUptiResult r) CU_HIDDEN;
void cu_devices_record(cu_state *st) CU_HIDDEN;

/* cuda_callback.c */
void CUPTIAPI cu_api_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void *cbdata) CU_HIDDEN;
jager_status cu_callbacks_enable(cu_state *st) CU_HIDDEN;
/* Frame-pointer walk of the calling thread into out (innermost first). */
uint32_t cu_stack_walk(uint64_t *out, uint32_t cap) CU_HIDDEN;
void cu_corr_put(cu_state *st, uint32_t corr, uint64_t launch_ns, uint64_t ext, uint64_t stack, uint32_t site,
                 uint64_t tid) CU_HIDDEN;
int cu_corr_get(cu_state *st, uint32_t corr, cu_launch_info *out) CU_HIDDEN;

/* cuda_activity.c */
jager_status cu_activity_start(cu_state *st) CU_HIDDEN;
void cu_activity_stop(cu_state *st) CU_HIDDEN;
void cu_activity_free(cu_state *st) CU_HIDDEN;
/* Decode one buffer (two passes: correlations first). Worker thread only. */
void cu_decode_buffer(cu_state *st, uint8_t *buf, size_t valid) CU_HIDDEN;
uint64_t cu_to_jager(cu_state *st, uint64_t t) CU_HIDDEN;
void cu_clock_sample(cu_state *st) CU_HIDDEN;

/* cuda_nvtx.c */
void cu_nvtx_attach(cu_state *st) CU_HIDDEN;  /* init: become NVTX_INJECTION64_PATH, remember the chain */
void cu_nvtx_detach(cu_state *st) CU_HIDDEN;

#endif
