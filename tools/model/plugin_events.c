#include "plugin_events.h"

#include <string.h>

static const jp_event gc_events[JP_GC_NEVENTS] = {
    [JP_GC_PAUSE] = {"gc.pause",
                     {"duration_ns", "stack", "full", "allocd_bytes", "freed_bytes", "live_bytes", "os_tid",
                      "requested", "site"}},
    [JP_GC_SITE_TIME] = {"gc.site_time", {"site", "gc_ns", "pauses"}},
    [JP_GC_STALL] = {"gc.stall", {"duration_ns"}},
    [JP_GC_SAMPLE] = {"gc.sample", {"live_bytes", "allocated_bytes", "collections", "rss_bytes", "gc_total_ns"}},
};

static const jp_event dispatch_events[JP_DISPATCH_NEVENTS] = {
    [JP_DISPATCH_SIGNATURE] = {"dispatch.signature", {"site", "signature", "calls"}},
    [JP_DISPATCH_COMPILE] = {"dispatch.compile", {"duration_ns", "inference_ns", "signature"}},
    [JP_DISPATCH_SPECIALIZATIONS] = {"dispatch.specializations", {"method", "count", "file", "line"}},
    [JP_DISPATCH_INSTABILITY] = {"dispatch.instability", {"site", "signature", "flags", "reason", "chain"}},
};

static const jp_event cuda_events[JP_CUDA_NEVENTS] = {
    [JP_CUDA_KERNEL] = {"cuda.kernel",
                        {"duration_ns", "name", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                         "launch_site", "launch_stack", "registers", "static_shared_bytes", "dynamic_shared_bytes"}},
    [JP_CUDA_LAUNCH] = {"cuda.launch", {"duration_ns", "kind", "site"}},
    [JP_CUDA_MEMCPY] = {"cuda.memcpy", {"duration_ns", "bytes", "copy_kind", "src_kind", "dst_kind"}},
    [JP_CUDA_SUMMARY] = {"cuda.summary",
                         {"dropped_records", "pool_exhausted", "correlation_misses", "suggested_memory_bytes"}},
    [JP_CUDA_DEVICE] = {"cuda.device", {"sm_count", "max_threads_per_sm", "registers_per_sm", "shared_bytes_per_sm"}},
};

static const jp_event openmp_events[JP_OPENMP_NEVENTS] = {
    [JP_OPENMP_SITE_ROLE] = {"openmp.site_role", {"site", "role", "kind", "region"}},
};

static const jp_event sampler_events[JP_SAMPLER_NEVENTS] = {
    [JP_SAMPLER_SAMPLE] = {"sampler.sample", {"stack", "os_tid", "site", "weight", "cpu_ns", "flags"}},
    [JP_SAMPLER_THREAD] = {"sampler.thread", {"os_tid", "samples", "lost", "cpu_ns", "expected"}},
    [JP_SAMPLER_SUMMARY] = {"sampler.summary", {"mode", "samples", "hz"}},
};

const jp_plugin jp_sampler = {"sampler", "sampler.", sampler_events, JP_SAMPLER_NEVENTS};
const jp_plugin jp_gc = {"gc", "gc.", gc_events, JP_GC_NEVENTS};
const jp_plugin jp_openmp = {"openmp", "openmp.", openmp_events, JP_OPENMP_NEVENTS};

int jp_is_site_role(const char *type_name)
{
    static const char suffix[] = ".site_role";
    size_t n = type_name ? strlen(type_name) : 0, k = sizeof suffix - 1;
    return n > k && !strcmp(type_name + n - k, suffix);
}
const jp_plugin jp_dispatch = {"dispatch", "dispatch.", dispatch_events, JP_DISPATCH_NEVENTS};
const jp_plugin jp_cuda = {"cuda", "cuda.", cuda_events, JP_CUDA_NEVENTS};

int jp_is(const char *type_name, const jp_plugin *plugin, int event)
{
    return type_name && !strcmp(type_name, plugin->events[event].name);
}

int jp_in_plugin(const char *type_name, const jp_plugin *plugin)
{
    return type_name && !strncmp(type_name, plugin->prefix, strlen(plugin->prefix));
}

uint32_t jp_field_index(const jager_type_desc *d, const jp_plugin *plugin, int event, int field)
{
    const char *want = plugin->events[event].fields[field];
    for (uint32_t i = 0; d && want && i < d->nfields; i++)
        if (d->fields[i].name && !strcmp(d->fields[i].name, want)) return i;
    return UINT32_MAX;
}

static const jp_event mpi_events[JP_MPI_NEVENTS] = {
    [JP_MPI_CALL] = {"mpi.call",
                     {"func", "duration_ns", "bytes", "recv_bytes", "dest", "tag", "seq", "source", "recv_tag",
                      "recv_seq", "root", "comm", "comm_size", "caller"}},
    [JP_MPI_REQUEST] = {"mpi.request",
                        {"func", "done_by", "kind", "done", "bytes", "dest", "tag", "source", "recv_tag", "recv_bytes",
                         "comm", "seq"}},
    [JP_MPI_CLOCK] = {"mpi.clock", {"phase", "offset_ns", "error_ns", "ok"}},
    [JP_MPI_RANK] = {"mpi.rank", {"rank", "size", "duration_ns"}},
};
const jp_plugin jp_mpi = {"mpi", "mpi.", mpi_events, JP_MPI_NEVENTS};

const char *const jp_mpi_meta[JP_MPI_META_NKEYS] = {
    [JP_MPI_META_RANK] = "mpi.rank",
    [JP_MPI_META_WORLD_SIZE] = "mpi.world_size",
    [JP_MPI_META_HOST] = "mpi.host",
    [JP_MPI_META_TRACE_ID] = "mpi.trace_id",
};

static const jp_event rusage_events[JP_RUSAGE_NEVENTS] = {
    [JP_RUSAGE_THREAD] = {"rusage.thread",
                          {"os_tid", "cpu_ns", "sys_ns", "runq_ns", "minflt", "majflt", "vcsw", "ivcsw"}},
    [JP_RUSAGE_INFO] = {"rusage.info", {"interval_ns", "fault_ns", "schedstat", "samples", "threads"}},
};
const jp_plugin jp_rusage = {"rusage", "rusage.", rusage_events, JP_RUSAGE_NEVENTS};

static const jp_event otel_events[JP_OTEL_NEVENTS] = {
    [JP_OTEL_EXPORT] = {"otel.export", {"signal", "metric", "error_type", "value"}},
};
const jp_plugin jp_otel = {"otel", "otel.", otel_events, JP_OTEL_NEVENTS};

const char *const jp_julia_gc_keys[JP_JGC_NKEYS] = {"gc.allocated_bytes", "gc.pauses", "gc.time_ns", "gc.full_sweeps"};

int jp_julia_gc_key(const char *key, size_t len)
{
    for (int i = 0; i < JP_JGC_NKEYS; i++)
        if (strlen(jp_julia_gc_keys[i]) == len && !memcmp(jp_julia_gc_keys[i], key, len)) return i;
    return -1;
}
