/* fake_cuda.h — a test double of the few CUPTI and driver entry points the cuda plugin
 * resolves with dlsym (libjager_fake_cuda.so; point the plugin at it with
 * JAGER_CUDA_CUPTI_LIB and JAGER_CUDA_DRIVER_LIB). Tests drive it through these functions:
 * API calls run the plugin's subscriber callback on the calling thread as CUPTI would,
 * buffers are requested from the plugin, filled with real CUDA 13 records and handed back
 * at the next cuptiActivityFlushAll. */
#ifndef JAGER_FAKE_CUDA_H
#define JAGER_FAKE_CUDA_H
#include <stddef.h>
#include <stdint.h>

enum fake_mode {
    FAKE_OK = 0,
    FAKE_CUINIT_FAILS = 1,   /* cuInit returns CUDA_ERROR_NO_DEVICE */
    FAKE_NO_DEVICE = 2,      /* cuInit succeeds, zero devices */
    FAKE_OTHER_SUBSCRIBER = 3, /* cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED */
    FAKE_OLD_CUPTI = 4,      /* cuptiGetVersion: 26 (CUDA 12.x) */
    FAKE_NO_TS_CALLBACK = 5, /* cuptiActivityRegisterTimestampCallback fails */
};

typedef struct fake_counts {
    int subscribes, unsubscribes, ts_registrations, callbacks_enabled, kinds_enabled, kinds_disabled;
    int flushes, forced_flushes, buffers_requested, buffers_refused, buffers_completed;
    int pushes, pops;
} fake_counts;

void fake_reset(int mode);
/* CUPTI timestamps = Jäger-ish ns + offset (for the paired-sample fallback). */
void fake_set_clock_offset(int64_t ns);
fake_counts fake_get_counts(void);
/* One driver API call: enter and exit callbacks. Returns its correlation id; *ext_out gets
 * the external id the plugin pushed (0 if none). */
uint32_t fake_api_call(uint32_t cbid, const char *name, uint64_t *ext_out);
/* A runtime call with a driver call inside it (cudaLaunchKernel → cuLaunchKernel): two
 * correlation ids, returned in *rt_corr and *drv_corr. */
void fake_api_call_nested(uint32_t rt_cbid, const char *rt_name, uint32_t drv_cbid, const char *drv_name,
                          uint32_t *rt_corr, uint32_t *drv_corr);
/* Take a buffer from the plugin (0 when it has none to give: the records are dropped). */
int fake_buf_begin(void);
/* Append one record (its size in bytes); returns 0 when it does not fit. */
int fake_buf_add(const void *rec, size_t size);
/* Queue the buffer for the next flush, with CUPTI's drop count for its stream. */
void fake_buf_finish(uint32_t stream, uint64_t dropped);
/* The plugin's buffer-size request (bytes) and how many were given. */
size_t fake_buffer_size(void);
uint64_t fake_cupti_now(void);
#endif
