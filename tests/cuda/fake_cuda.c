/* fake_cuda.c — the CUPTI/driver test double (see fake_cuda.h). Not thread-safe beyond what
 * the tests need: API calls from any thread, buffers built by one thread at a time. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cupti.h>

#include "fake_cuda.h"

#define EXPORT __attribute__((visibility("default")))

static int mode;
static int64_t clock_offset;
static fake_counts counts;
static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static int subscribed;
static CUpti_BuffersCallbackRequestFunc req_cb;
static CUpti_BuffersCallbackCompleteFunc done_cb;
static uint32_t next_corr;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread uint64_t ext_stack[16];
static __thread int ext_depth;

/* buffers: a side table of record offsets, so records keep their real layout */
#define MAXREC 4096
typedef struct fbuf {
    uint8_t *p;
    size_t size, used;
    uint32_t nrec, stream;
    uint32_t off[MAXREC];
    uint64_t dropped;
    int pending;
} fbuf;
#define MAXBUF 64
static fbuf bufs[MAXBUF];
static int cur = -1;
static uint64_t pending_dropped;

EXPORT void fake_reset(int m)
{
    pthread_mutex_lock(&lock);
    mode = m;
    clock_offset = 0;
    memset(&counts, 0, sizeof counts);
    memset(bufs, 0, sizeof bufs);
    cur = -1;
    pending_dropped = 0;
    pthread_mutex_unlock(&lock);
}
EXPORT void fake_set_clock_offset(int64_t ns) { clock_offset = ns; }
EXPORT fake_counts fake_get_counts(void) { return counts; }

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
EXPORT uint64_t fake_cupti_now(void) { return (uint64_t)((int64_t)mono_ns() + clock_offset); }

EXPORT uint32_t fake_api_call(uint32_t cbid, const char *name, uint64_t *ext_out)
{
    uint64_t data = 0;
    uint32_t corr = __atomic_add_fetch(&next_corr, 1, __ATOMIC_RELAXED);
    CUpti_CallbackData cd;
    memset(&cd, 0, sizeof cd);
    cd.functionName = name;
    cd.correlationData = &data;
    cd.correlationId = corr;
    int depth0 = ext_depth;
    cd.callbackSite = CUPTI_API_ENTER;
    if (sub_cb) sub_cb(sub_ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cd);
    if (ext_out) *ext_out = ext_depth > depth0 ? ext_stack[ext_depth - 1] : 0;
    cd.callbackSite = CUPTI_API_EXIT;
    if (sub_cb) sub_cb(sub_ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cd);
    return corr;
}

EXPORT void fake_api_call_nested(uint32_t rt_cbid, const char *rt_name, uint32_t drv_cbid, const char *drv_name,
                                 uint32_t *rt_corr, uint32_t *drv_corr)
{
    uint64_t d1 = 0, d2 = 0;
    CUpti_CallbackData rt, drv;
    memset(&rt, 0, sizeof rt);
    memset(&drv, 0, sizeof drv);
    rt.functionName = rt_name;
    rt.correlationData = &d1;
    rt.correlationId = __atomic_add_fetch(&next_corr, 1, __ATOMIC_RELAXED);
    drv.functionName = drv_name;
    drv.correlationData = &d2;
    drv.correlationId = __atomic_add_fetch(&next_corr, 1, __ATOMIC_RELAXED);
    rt.callbackSite = drv.callbackSite = CUPTI_API_ENTER;
    if (sub_cb) sub_cb(sub_ud, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, &rt);
    if (sub_cb) sub_cb(sub_ud, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, &drv);
    rt.callbackSite = drv.callbackSite = CUPTI_API_EXIT;
    if (sub_cb) sub_cb(sub_ud, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, &drv);
    if (sub_cb) sub_cb(sub_ud, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, &rt);
    *rt_corr = rt.correlationId;
    *drv_corr = drv.correlationId;
}

EXPORT int fake_buf_begin(void)
{
    uint8_t *p = NULL;
    size_t size = 0, maxrec = 0;
    counts.buffers_requested++;
    if (req_cb) req_cb(&p, &size, &maxrec);
    if (!p || !size) {
        counts.buffers_refused++;
        return 0;
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAXBUF; i++)
        if (bufs[i].p == p) bufs[i].p = NULL; /* the plugin reuses a buffer it got back */
    for (int i = 0; i < MAXBUF; i++)
        if (!bufs[i].p) {
            memset(&bufs[i], 0, sizeof bufs[i]);
            bufs[i].p = p;
            bufs[i].size = size;
            cur = i;
            pthread_mutex_unlock(&lock);
            return 1;
        }
    pthread_mutex_unlock(&lock);
    return 0;
}

EXPORT int fake_buf_add(const void *rec, size_t size)
{
    if (cur < 0) return 0;
    fbuf *b = &bufs[cur];
    size_t need = (size + 7u) & ~(size_t)7u;
    if (b->used + need > b->size || b->nrec >= MAXREC) return 0;
    memcpy(b->p + b->used, rec, size);
    b->off[b->nrec++] = (uint32_t)b->used;
    b->used += need;
    return 1;
}

EXPORT void fake_buf_finish(uint32_t stream, uint64_t dropped)
{
    if (cur < 0) return;
    pthread_mutex_lock(&lock);
    bufs[cur].stream = stream;
    bufs[cur].dropped = dropped;
    bufs[cur].pending = 1;
    pthread_mutex_unlock(&lock);
    cur = -1;
}

EXPORT size_t fake_buffer_size(void) { return bufs[0].size; }

/* ---- CUPTI ---- */
EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
    *v = mode == FAKE_OLD_CUPTI ? 26u : CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                               : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud)
{
    if (mode == FAKE_OTHER_SUBSCRIBER || subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    sub_cb = cb;
    sub_ud = ud;
    subscribed = 1;
    counts.subscribes++;
    *h = (CUpti_SubscriberHandle)(uintptr_t)0x5b5b;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
    (void)h;
    sub_cb = NULL;
    subscribed = 0;
    counts.unsubscribes++;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
                                       CUpti_CallbackId id)
{
    (void)h;
    (void)d;
    (void)id;
    if (en) counts.callbacks_enabled++;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                  CUpti_BuffersCallbackCompleteFunc c)
{
    req_cb = r;
    done_cb = c;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    if (mode == FAKE_NO_TS_CALLBACK || !f) return CUPTI_ERROR_NOT_SUPPORTED;
    counts.ts_registrations++;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    (void)k;
    counts.kinds_enabled++;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    (void)k;
    counts.kinds_disabled++;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    counts.flushes++;
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) counts.forced_flushes++;
    for (int i = 0; i < MAXBUF; i++) {
        pthread_mutex_lock(&lock);
        int go = bufs[i].p && bufs[i].pending == 1;
        if (go) {
            pending_dropped = bufs[i].dropped;
            bufs[i].pending = 2; /* delivered: its layout stays for GetNextRecord */
        }
        pthread_mutex_unlock(&lock);
        if (go && done_cb) {
            counts.buffers_completed++;
            done_cb((CUcontext)(uintptr_t)1, bufs[i].stream, bufs[i].p, bufs[i].size, bufs[i].used);
        }
    }
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
    const fbuf *b = NULL;
    for (int i = 0; !b && i < MAXBUF; i++)
        if (bufs[i].p == buffer && bufs[i].pending == 2) b = &bufs[i];
    if (!b) return CUPTI_ERROR_INVALID_PARAMETER;
    uint32_t k = 0;
    if (*rec) {
        size_t off = (size_t)((uint8_t *)*rec - buffer);
        while (k < b->nrec && b->off[k] != off) k++;
        k++;
    }
    if (k >= b->nrec || b->off[k] >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(buffer + b->off[k]);
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *d)
{
    (void)c;
    (void)s;
    *d = (size_t)pending_dropped;
    pending_dropped = 0;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t id)
{
    (void)k;
    counts.pushes++;
    if (ext_depth < 16) ext_stack[ext_depth++] = id;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t *id)
{
    (void)k;
    counts.pops++;
    if (ext_depth <= 0) return CUPTI_ERROR_INVALID_OPERATION;
    uint64_t v = ext_stack[--ext_depth];
    if (id) *id = v;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    *t = fake_cupti_now();
    return CUPTI_SUCCESS;
}

/* ---- driver ---- */
EXPORT CUresult cuInit(unsigned int f)
{
    (void)f;
    return mode == FAKE_CUINIT_FAILS ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetCount(int *n)
{
    *n = mode == FAKE_NO_DEVICE ? 0 : 1;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *d, int i)
{
    *d = i;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    strncpy(name, "Fake H200", (size_t)len);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    default: *v = 0;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d)
{
    (void)d;
    *b = (size_t)141 << 30;
    return CUDA_SUCCESS;
}
