/* cuda_load.c — find the CUDA driver and CUPTI at run time (dlopen, never linked), decide
 * whether this process can be traced, and describe the devices.
 *
 * JAGER_CUDA_DRIVER_LIB and JAGER_CUDA_CUPTI_LIB name other libraries (a test double, a
 * CUPTI outside the loader path); the defaults are libcuda.so.1 and libcupti.so.13 /
 * libcupti.so, then the toolkit's folders. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

static void *open_first(const char *const *names, char *err, size_t errlen)
{
    err[0] = 0;
    for (size_t i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        const char *e = dlerror();
        if (!err[0] && e) snprintf(err, errlen, "%s", e);
    }
    return NULL;
}

#define SYM(lib, field, name)                                                         \
    do {                                                                              \
        *(void **)&st->api.field = dlsym(st->api.lib, name);                          \
        if (!st->api.field) {                                                         \
            snprintf(why, whylen, "%s has no %s: not a usable %s", libname, name, what); \
            return JAGER_E_UNSUPPORTED;                                               \
        }                                                                             \
    } while (0)

const char *cu_result_name(cu_state *st, CUptiResult r)
{
    const char *s = NULL;
    if (st->api.GetResultString && st->api.GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    switch (r) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_NOT_INITIALIZED: return "CUPTI_ERROR_NOT_INITIALIZED";
    default: return "CUPTI error";
    }
}

jager_status cu_load(cu_state *st, char *why, size_t whylen)
{
    char err[512];
    const char *libname, *what;
    /* 1. the driver */
    const char *drv = st->host->config(st->self, "driver_lib");
    const char *drv_names[] = {drv ? drv : "libcuda.so.1", drv ? NULL : "libcuda.so", NULL};
    st->api.driver_lib = open_first(drv_names, err, sizeof err);
    if (!st->api.driver_lib) {
        snprintf(why, whylen, "no CUDA driver (%s): no GPU events will be recorded", err);
        return JAGER_E_UNSUPPORTED;
    }
    libname = drv ? drv : "libcuda.so.1";
    what = "CUDA driver";
    SYM(driver_lib, cuInit, "cuInit");
    SYM(driver_lib, cuDriverGetVersion, "cuDriverGetVersion");
    SYM(driver_lib, cuDeviceGetCount, "cuDeviceGetCount");
    SYM(driver_lib, cuDeviceGet, "cuDeviceGet");
    SYM(driver_lib, cuDeviceGetName, "cuDeviceGetName");
    SYM(driver_lib, cuDeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(driver_lib, cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    CUresult cr = st->api.cuInit(0);
    if (cr != CUDA_SUCCESS) {
        snprintf(why, whylen, "no usable CUDA device (cuInit returned %d%s): no GPU events will be recorded",
                 (int)cr, cr == CUDA_ERROR_NO_DEVICE ? ", CUDA_ERROR_NO_DEVICE" : "");
        return JAGER_E_UNSUPPORTED;
    }
    st->api.cuDriverGetVersion(&st->driver_version);
    int n = 0;
    if (st->api.cuDeviceGetCount(&n) != CUDA_SUCCESS || n <= 0) {
        snprintf(why, whylen, "no CUDA device (the driver reports %d): no GPU events will be recorded", n);
        return JAGER_E_UNSUPPORTED;
    }
    st->ndevices = n;

    /* 2. CUPTI */
    const char *cup = st->host->config(st->self, "cupti_lib");
    const char *cupti_names[] = {cup ? cup : "libcupti.so.13",
                                 cup ? NULL : "libcupti.so",
                                 "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
                                 "/usr/local/cuda/lib64/libcupti.so",
                                 NULL};
    st->api.cupti_lib = open_first(cupti_names, err, sizeof err);
    if (!st->api.cupti_lib) {
        snprintf(why, whylen,
                 "CUPTI not found (%s): no GPU events will be recorded; set JAGER_CUDA_CUPTI_LIB to libcupti.so", err);
        return JAGER_E_UNSUPPORTED;
    }
    libname = cup ? cup : "libcupti";
    what = "CUPTI";
    SYM(cupti_lib, GetVersion, "cuptiGetVersion");
    SYM(cupti_lib, GetResultString, "cuptiGetResultString");
    SYM(cupti_lib, Subscribe, "cuptiSubscribe");
    SYM(cupti_lib, Unsubscribe, "cuptiUnsubscribe");
    SYM(cupti_lib, EnableCallback, "cuptiEnableCallback");
    SYM(cupti_lib, ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    SYM(cupti_lib, ActivityEnable, "cuptiActivityEnable");
    SYM(cupti_lib, ActivityDisable, "cuptiActivityDisable");
    SYM(cupti_lib, ActivityFlushAll, "cuptiActivityFlushAll");
    SYM(cupti_lib, ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    SYM(cupti_lib, ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
    SYM(cupti_lib, ActivityPushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId");
    SYM(cupti_lib, ActivityPopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId");
    SYM(cupti_lib, GetTimestamp, "cuptiGetTimestamp");
    /* optional: the fallback is the paired-sample fit */
    *(void **)&st->api.ActivityRegisterTimestampCallback =
        dlsym(st->api.cupti_lib, "cuptiActivityRegisterTimestampCallback");

    if (st->api.GetVersion(&st->cupti_version) != CUPTI_SUCCESS) st->cupti_version = 0;
    if (st->cupti_version < CU_LAYOUT_MIN_API) {
        snprintf(why, whylen,
                 "CUPTI API version %u is older than the CUDA 13 record layouts this plugin decodes "
                 "(API version %u and up): no GPU events will be recorded (use the CUPTI of CUDA 13)",
                 st->cupti_version, CU_LAYOUT_MIN_API);
        return JAGER_E_UNSUPPORTED;
    }

    /* 3. the one subscriber */
    CUptiResult r = st->api.Subscribe(&st->sub, (CUpti_CallbackFunc)cu_api_callback, st);
    if (r != CUPTI_SUCCESS) {
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            snprintf(why, whylen,
                     "another tool already holds CUPTI (%s: Nsight Systems/Compute, CUDA.jl's profiler or a "
                     "CUPTI-based tracer is attached): no GPU events will be recorded",
                     cu_result_name(st, r));
        else
            snprintf(why, whylen, "cuptiSubscribe failed (%s, %d): no GPU events will be recorded",
                     cu_result_name(st, r), (int)r);
        return JAGER_E_UNSUPPORTED;
    }
    st->subscribed = 1;
    return JAGER_OK;
}

void cu_unload(cu_state *st)
{
    if (st->subscribed && st->api.Unsubscribe) st->api.Unsubscribe(st->sub);
    st->subscribed = 0;
    /* The libraries stay loaded: CUPTI may still hold pointers into them and the driver
     * cannot be unloaded from a process that initialised it. */
}

/* cuda.device events and metadata, one per device. */
void cu_devices_record(cu_state *st)
{
    char key[96], val[256];
    snprintf(val, sizeof val, "%d", st->driver_version);
    st->host->metadata_set("cuda.driver_version", val);
    snprintf(val, sizeof val, "%u", st->cupti_version);
    st->host->metadata_set("cuda.cupti_version", val);
    snprintf(val, sizeof val, "%d", st->ndevices);
    st->host->metadata_set("cuda.devices", val);
    for (int i = 0; i < st->ndevices; i++) {
        CUdevice d;
        if (st->api.cuDeviceGet(&d, i) != CUDA_SUCCESS) continue;
        char name[256] = "";
        st->api.cuDeviceGetName(name, (int)sizeof name - 1, d);
        int sms = 0, tps = 0, major = 0, minor = 0, smem = 0, regs = 0, tpb = 0;
        size_t mem = 0;
        st->api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
        st->api.cuDeviceGetAttribute(&tps, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, d);
        st->api.cuDeviceGetAttribute(&tpb, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d);
        st->api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
        st->api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
        st->api.cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, d);
        st->api.cuDeviceGetAttribute(&regs, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, d);
        st->api.cuDeviceTotalMem(&mem, d);
        snprintf(key, sizeof key, "cuda.device.%d.name", i);
        st->host->metadata_set(key, name);
        snprintf(key, sizeof key, "cuda.device.%d.sm_count", i);
        snprintf(val, sizeof val, "%d", sms);
        st->host->metadata_set(key, val);
        snprintf(key, sizeof key, "cuda.device.%d.max_threads_per_sm", i);
        snprintf(val, sizeof val, "%d", tps);
        st->host->metadata_set(key, val);
        snprintf(key, sizeof key, "cuda.device.%d.memory_bytes", i);
        snprintf(val, sizeof val, "%zu", mem);
        st->host->metadata_set(key, val);
        snprintf(key, sizeof key, "cuda.device.%d.compute_capability", i);
        snprintf(val, sizeof val, "%d.%d", major, minor);
        st->host->metadata_set(key, val);
        uint64_t f[] = {(uint64_t)i, st->host->intern(name), (uint64_t)sms, (uint64_t)tps, (uint64_t)tpb,
                        (uint64_t)mem, (uint64_t)(major * 10 + minor), (uint64_t)smem, (uint64_t)regs};
        st->host->emit(st->t_device, 0, f, CU_N(f));
    }
}
