/* cuda_plugin.c — the cuda plugin's descriptor: options, event types, lifecycle.
 *
 * Records every kernel, copy, memset, synchronisation and (optionally) allocation of the
 * process's CUDA devices from CUPTI's activity API, on the Jäger clock, each tied through
 * its correlation id to the driver call that made it (cuda.launch: thread, span, host
 * stack); NVTX ranges and marks become Jäger spans and marks. Without a driver, a device or
 * CUPTI, or with another CUPTI subscriber, it says so once and steps aside (docs/cuda.md). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

cu_state cu_g;

static const jager_field_desc launch_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT}, {"api", JAGER_FIELD_STRING, 0},
    {"kind", JAGER_FIELD_U64, 0}, /* 1 kernel, 2 graph, 3 copy, 4 memset, 5 sync, 6 alloc, 7 free */
    {"correlation_id", JAGER_FIELD_U64, 0},      {"external_id", JAGER_FIELD_U64, 0},
    {"stack", JAGER_FIELD_STACK, 0},             {"site", JAGER_FIELD_SITE, 0},
};
/* the launch fields every device record carries (zeros when the launch was not found) */
#define LAUNCH_REF                                                                               \
    {"correlation_id", JAGER_FIELD_U64, 0}, {"external_id", JAGER_FIELD_U64, 0},                 \
        {"launch_ns", JAGER_FIELD_TIME_NS, 0}, {"launch_stack", JAGER_FIELD_STACK, 0},           \
        {"launch_site", JAGER_FIELD_SITE, 0}, {"launch_os_tid", JAGER_FIELD_U64, 0}
static const jager_field_desc kernel_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"name", JAGER_FIELD_STRING, 0},
    {"device", JAGER_FIELD_U64, 0},
    {"context", JAGER_FIELD_U64, 0},
    {"stream", JAGER_FIELD_U64, 0},
    {"grid_x", JAGER_FIELD_U64, 0},
    {"grid_y", JAGER_FIELD_U64, 0},
    {"grid_z", JAGER_FIELD_U64, 0},
    {"block_x", JAGER_FIELD_U64, 0},
    {"block_y", JAGER_FIELD_U64, 0},
    {"block_z", JAGER_FIELD_U64, 0},
    {"registers", JAGER_FIELD_U64, 0},
    {"static_shared_bytes", JAGER_FIELD_BYTES, 0},
    {"dynamic_shared_bytes", JAGER_FIELD_BYTES, 0},
    LAUNCH_REF,
    {"graph_id", JAGER_FIELD_U64, 0},
    {"launch_type", JAGER_FIELD_U64, 0},
};
static const jager_field_desc memcpy_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT}, {"bytes", JAGER_FIELD_BYTES, 0},
    {"copy_kind", JAGER_FIELD_U64, 0}, /* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP */
    {"src_kind", JAGER_FIELD_U64, 0},            {"dst_kind", JAGER_FIELD_U64, 0}, /* 1 pageable, 2 pinned, 3 device */
    {"async", JAGER_FIELD_BOOL, 0},              {"device", JAGER_FIELD_U64, 0},
    {"context", JAGER_FIELD_U64, 0},             {"stream", JAGER_FIELD_U64, 0},
    LAUNCH_REF,                                  {"graph_id", JAGER_FIELD_U64, 0},
};
static const jager_field_desc memset_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT}, {"bytes", JAGER_FIELD_BYTES, 0},
    {"value", JAGER_FIELD_U64, 0},               {"memory_kind", JAGER_FIELD_U64, 0},
    {"device", JAGER_FIELD_U64, 0},              {"context", JAGER_FIELD_U64, 0},
    {"stream", JAGER_FIELD_U64, 0},              LAUNCH_REF,
    {"graph_id", JAGER_FIELD_U64, 0},
};
static const jager_field_desc sync_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"sync_type", JAGER_FIELD_U64, 0}, /* 1 event, 2 stream wait event, 3 stream, 4 context */
    {"context", JAGER_FIELD_U64, 0},
    {"stream", JAGER_FIELD_U64, 0},
    {"event", JAGER_FIELD_U64, 0},
    LAUNCH_REF,
};
static const jager_field_desc memory_fields[] = {
    {"operation", JAGER_FIELD_U64, 0}, /* 1 allocation, 2 release */
    {"memory_kind", JAGER_FIELD_U64, 0},
    {"address", JAGER_FIELD_U64, 0},
    {"bytes", JAGER_FIELD_BYTES, 0},
    {"device", JAGER_FIELD_U64, 0},
    {"context", JAGER_FIELD_U64, 0},
    {"stream", JAGER_FIELD_U64, 0},
    {"async", JAGER_FIELD_BOOL, 0},
    {"correlation_id", JAGER_FIELD_U64, 0},
    {"external_id", JAGER_FIELD_U64, 0},
    {"launch_stack", JAGER_FIELD_STACK, 0},
    {"launch_site", JAGER_FIELD_SITE, 0},
    {"launch_os_tid", JAGER_FIELD_U64, 0},
};
static const jager_field_desc overhead_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"overhead_kind", JAGER_FIELD_U64, 0},
    {"object_kind", JAGER_FIELD_U64, 0},
    {"correlation_id", JAGER_FIELD_U64, 0},
};
static const jager_field_desc other_fields[] = {
    {"kind", JAGER_FIELD_U64, 0}, /* CUpti_ActivityKind; 0xffffffff: kinds beyond the table */
    {"records", JAGER_FIELD_U64, 0},
};
static const jager_field_desc drop_fields[] = {
    {"window_start_ns", JAGER_FIELD_TIME_NS, 0}, /* the window ends at the record's time */
    {"context_buffer", JAGER_FIELD_BOOL, 0},     /* the buffer held one context's records (else the global one) */
    {"stream", JAGER_FIELD_U64, 0},
    {"records", JAGER_FIELD_U64, 0},
    {"reason", JAGER_FIELD_U64, 0}, /* 1: CUPTI dropped (buffer full or none to give) */
    {"kind", JAGER_FIELD_U64, 0},   /* 0: CUPTI does not say which kinds */
};
static const jager_field_desc summary_fields[] = {
    {"launches", JAGER_FIELD_U64, 0},
    {"launch_stacks", JAGER_FIELD_U64, 0},
    {"records", JAGER_FIELD_U64, 0},
    {"kernels", JAGER_FIELD_U64, 0},
    {"memcpys", JAGER_FIELD_U64, 0},
    {"memsets", JAGER_FIELD_U64, 0},
    {"syncs", JAGER_FIELD_U64, 0},
    {"memory", JAGER_FIELD_U64, 0},
    {"overheads", JAGER_FIELD_U64, 0},
    {"other_records", JAGER_FIELD_U64, 0},
    {"external_correlations", JAGER_FIELD_U64, 0},
    {"correlation_hits", JAGER_FIELD_U64, 0},
    {"correlation_misses", JAGER_FIELD_U64, 0},
    {"correlation_evicted", JAGER_FIELD_U64, 0},
    {"zero_timestamps", JAGER_FIELD_U64, 0},
    {"dropped_records", JAGER_FIELD_U64, 0},
    {"pool_exhausted", JAGER_FIELD_U64, 0},
    {"buffers", JAGER_FIELD_U64, 0},
    {"buffer_bytes", JAGER_FIELD_BYTES, 0},
    {"memory_cap_bytes", JAGER_FIELD_BYTES, 0},
    {"suggested_memory_bytes", JAGER_FIELD_BYTES, 0}, /* a pool that would have held the drops, 0 if none */
    {"clock_mode", JAGER_FIELD_U64, 0},               /* 1 timestamp callback, 2 paired-sample fit */
};
static const jager_field_desc device_fields[] = {
    {"device", JAGER_FIELD_U64, 0},
    {"name", JAGER_FIELD_STRING, 0},
    {"sm_count", JAGER_FIELD_U64, 0},
    {"max_threads_per_sm", JAGER_FIELD_U64, 0},
    {"max_threads_per_block", JAGER_FIELD_U64, 0},
    {"memory_bytes", JAGER_FIELD_BYTES, 0},
    {"compute_capability", JAGER_FIELD_U64, 0}, /* major*10 + minor */
    {"shared_bytes_per_sm", JAGER_FIELD_BYTES, 0},
    {"registers_per_sm", JAGER_FIELD_U64, 0},
};
static const jager_field_desc clock_fields[] = {
    {"cupti_ns", JAGER_FIELD_U64, 0},
    {"residual_ns", JAGER_FIELD_I64, 0},
    {"bracket_ns", JAGER_FIELD_DURATION_NS, 0},
};
static const jager_field_desc nvtx_range_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"name", JAGER_FIELD_STRING, 0},
    {"domain", JAGER_FIELD_STRING, 0},
    {"category", JAGER_FIELD_U64, 0},
};

static const jager_option_desc cu_options[] = {
    {"depth", "int", "32", "host stack frames kept per launch (0 = none, at most 128)"},
    {"buffer_kb", "int", "4096", "size of one CUPTI activity buffer in KiB (64 to 65536)"},
    {"memory_mb", "int", "64", "cap on all activity buffers together in MiB (records beyond are dropped and counted)"},
    {"flush_ms", "int", "150", "period of cuptiActivityFlushAll (10 to 10000)"},
    {"flush_timeout_ms", "int", "5000", "how long stop waits for the last buffers"},
    {"correlation_slots", "int", "65536", "launches remembered for their activity records (a power of two)"},
    {"callbacks", "bool", "1", "trace driver calls on the launching thread (stacks, spans); 0: activity only"},
    {"sync", "bool", "1", "record synchronisations (SYNCHRONIZATION activity)"},
    {"memory", "bool", "1", "record allocations and frees (MEMORY2 activity)"},
    {"overhead", "bool", "0", "record CUPTI's own overhead (OVERHEAD activity)"},
    {"nvtx", "bool", "1", "become the NVTX injection (NVTX ranges and marks as Jäger spans and marks)"},
    {"nvtx_chain", "string", "", "NVTX injection to forward to (default: NVTX_INJECTION64_PATH as found at start)"},
    {"cupti_lib", "string", "libcupti.so.13", "CUPTI library to load (a test double, a CUPTI outside the loader path)"},
    {"driver_lib", "string", "libcuda.so.1", "CUDA driver library to load (a test double)"},
};

static uint64_t option_u64(cu_state *st, const char *key, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *v = st->host->config(st->self, key);
    if (!v) return def;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || x < lo || x > hi || v[0] == '-') {
        char msg[256];
        snprintf(msg, sizeof msg, "option %s=\"%s\" is not a whole number in %llu..%llu: using %llu", key, v,
                 (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)def);
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
        return def;
    }
    return x;
}

static jager_status reg(cu_state *st, const char *name, const jager_field_desc *f, uint32_t n, uint16_t *out)
{
    return st->host->register_type(st->self, name, f, n, out);
}

static void reset(cu_state *st)
{
    memset(st, 0, sizeof *st);
}

static jager_status cu_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    static uint32_t recordings;
    cu_state *st = &cu_g;
    if (st->host) return JAGER_E_STATE;
    reset(st);
    st->generation = ++recordings;
    st->host = host;
    st->self = self;
    /* CUPTI and NVTX keep pointers into this library for the whole process: never unload it. */
    Dl_info di;
    if (dladdr((void *)cu_init, &di) && di.dli_fname) dlopen(di.dli_fname, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD);

    st->depth = (uint32_t)option_u64(st, "depth", 32, 0, CU_MAX_DEPTH);
    st->buffer_bytes = option_u64(st, "buffer_kb", 4096, 64, 65536) << 10;
    st->memory_cap = option_u64(st, "memory_mb", 64, 1, 65536) << 20;
    st->flush_ms = (uint32_t)option_u64(st, "flush_ms", 150, 10, 10000);
    st->flush_timeout_ms = (uint32_t)option_u64(st, "flush_timeout_ms", 5000, 10, 600000);
    st->corr_slots = (uint32_t)option_u64(st, "correlation_slots", 65536, 16, 1u << 24);
    st->callbacks = (int)option_u64(st, "callbacks", 1, 0, 1);
    st->kinds_sync = (int)option_u64(st, "sync", 1, 0, 1);
    st->kinds_memory = (int)option_u64(st, "memory", 1, 0, 1);
    st->kinds_overhead = (int)option_u64(st, "overhead", 0, 0, 1);
    st->nvtx = (int)option_u64(st, "nvtx", 1, 0, 1);
    if (st->corr_slots & (st->corr_slots - 1)) {
        uint32_t c = 16;
        while (c < st->corr_slots) c *= 2;
        st->corr_slots = c;
    }
    if (st->buffer_bytes > st->memory_cap) st->memory_cap = st->buffer_bytes * 2;

    char why[768];
    jager_status s = cu_load(st, why, sizeof why);
    if (s != JAGER_OK) {
        host->log(self, JAGER_DIAG_INFO, why);
        cu_unload(st);
        reset(st);
        return JAGER_E_UNSUPPORTED;
    }
    if ((s = reg(st, "cuda.launch", launch_fields, CU_N(launch_fields), &st->t_launch)) != JAGER_OK ||
        (s = reg(st, "cuda.kernel", kernel_fields, CU_N(kernel_fields), &st->t_kernel)) != JAGER_OK ||
        (s = reg(st, "cuda.memcpy", memcpy_fields, CU_N(memcpy_fields), &st->t_memcpy)) != JAGER_OK ||
        (s = reg(st, "cuda.memset", memset_fields, CU_N(memset_fields), &st->t_memset)) != JAGER_OK ||
        (s = reg(st, "cuda.sync", sync_fields, CU_N(sync_fields), &st->t_sync)) != JAGER_OK ||
        (s = reg(st, "cuda.memory", memory_fields, CU_N(memory_fields), &st->t_memory)) != JAGER_OK ||
        (s = reg(st, "cuda.overhead", overhead_fields, CU_N(overhead_fields), &st->t_overhead)) != JAGER_OK ||
        (s = reg(st, "cuda.activity_other", other_fields, CU_N(other_fields), &st->t_other)) != JAGER_OK ||
        (s = reg(st, "cuda.drop", drop_fields, CU_N(drop_fields), &st->t_drop)) != JAGER_OK ||
        (s = reg(st, "cuda.summary", summary_fields, CU_N(summary_fields), &st->t_summary)) != JAGER_OK ||
        (s = reg(st, "cuda.device", device_fields, CU_N(device_fields), &st->t_device)) != JAGER_OK ||
        (s = reg(st, "cuda.clock_sample", clock_fields, CU_N(clock_fields), &st->t_clock)) != JAGER_OK ||
        (s = reg(st, "cuda.nvtx_range", nvtx_range_fields, CU_N(nvtx_range_fields), &st->t_nvtx_range)) != JAGER_OK)
        goto fail_unload;
    if (st->nvtx) cu_nvtx_attach(st);
    *state = st;
    return JAGER_OK;
fail_unload:
    cu_unload(st);
    reset(st);
    return s;
}

static jager_status cu_start(void *state)
{
    cu_state *st = state;
    cu_devices_record(st);
    jager_status s = cu_activity_start(st);
    if (s != JAGER_OK) {
        cu_unload(st);
        return s;
    }
    st->active = 1;
    if (st->callbacks && cu_callbacks_enable(st) != JAGER_OK)
        st->host->log(st->self, JAGER_DIAG_WARN,
                      "cuptiEnableCallback failed: kernels are recorded without their launching stacks");
    return JAGER_OK;
}

static void cu_stop(void *state)
{
    cu_state *st = state;
    if (!st->active) return;
    st->active = 0; /* callbacks in flight return at once */
    cu_unload(st);  /* and no more come */
    cu_activity_stop(st);
    for (uint32_t k = 0; k < CU_MAX_KIND; k++)
        if (st->other_by_kind[k]) {
            uint64_t f[] = {k, st->other_by_kind[k]};
            st->host->emit(st->t_other, 0, f, CU_N(f));
        }
    if (st->other_unlisted) {
        uint64_t f[] = {0xffffffffu, st->other_unlisted};
        st->host->emit(st->t_other, 0, f, CU_N(f));
    }
    uint64_t exhausted = atomic_load(&st->pool_exhausted);
    uint64_t suggested = 0;
    if (st->dropped || exhausted) {
        /* the pool that would have held the lost records too, at the average record size */
        uint64_t avg = st->records ? st->bytes_decoded / st->records : 64;
        suggested = st->memory_cap + st->dropped * (avg ? avg : 64);
        suggested = ((suggested + (1u << 20) - 1) >> 20) << 20;
        if (suggested <= st->memory_cap) suggested = st->memory_cap * 2;
        char msg[320];
        snprintf(msg, sizeof msg,
                 "%llu activity records dropped (%llu buffer requests refused): JAGER_CUDA_MEMORY_MB=%llu would "
                 "have held them",
                 (unsigned long long)st->dropped, (unsigned long long)exhausted,
                 (unsigned long long)(suggested >> 20));
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
    }
    if (st->corr_misses) {
        char msg[256];
        snprintf(msg, sizeof msg, "%llu activity records found no launch (%llu launches evicted unmatched)",
                 (unsigned long long)st->corr_misses, (unsigned long long)atomic_load(&st->corr_evicted));
        st->host->log(st->self, JAGER_DIAG_INFO, msg);
    }
    uint64_t f[] = {atomic_load(&st->launches), atomic_load(&st->launch_stacks), st->records, st->kernels,
                    st->memcpys, st->memsets, st->syncs, st->memories, st->overheads, st->others, st->ext_records,
                    st->corr_hits, st->corr_misses, atomic_load(&st->corr_evicted), st->zero_ts, st->dropped,
                    exhausted, st->nbufs, st->buffer_bytes, st->memory_cap, suggested, (uint64_t)st->clock_mode};
    st->host->emit(st->t_summary, 0, f, CU_N(f));
}

static void cu_shutdown(void *state)
{
    cu_state *st = state;
    cu_nvtx_detach(st);
    cu_activity_free(st);
    reset(st);
}

static const void *cu_get_extension(void *state, const char *id)
{
    (void)state;
    (void)id;
    return NULL;
}

static const jager_plugin_descriptor cu_descriptor = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "cuda",
    .version = "0.1.0",
    .description = "CUDA kernels, copies, memsets and syncs on the Jäger clock, tied to their launching host "
                   "stacks; NVTX ranges as spans",
    .init = cu_init,
    .start = cu_start,
    .stop = cu_stop,
    .shutdown = cu_shutdown,
    .get_extension = cu_get_extension,
    .options = cu_options,
    .noptions = CU_N(cu_options),
    .flags = JAGER_PLUGIN_FLAG_CALLER_THREAD, /* its runtime is called from the program's thread */
};

JAGER_PLUGIN_DEFINE_ENTRY(&cu_descriptor)
