/* The events of the project's own plugins that the tools read — one table per plugin
 * (plugins/<name>/ register them: gc, dispatch, cuda, openmp, sampler, mpi, rusage, otel),
 * the mpi plugin's run metadata keys and the Julia binding's GC attribute keys. Every tool
 * names these types, fields and keys through the tables, never as string literals, so a
 * renamed one is changed here once. A recording's types are still looked up by name at run time
 * (ids differ per file), and a field a file lacks reads as absent.
 *
 * Part of the model layer (tools/README.md); export and report use it too. */
#ifndef JAGER_TOOLS_PLUGIN_EVENTS_H
#define JAGER_TOOLS_PLUGIN_EVENTS_H
#include <stddef.h>
#include <stdint.h>

#include "jager_reader.h"

#define JP_MAX_FIELDS 16

/** One event type: its name and the fields the tools read, in its field enum's order. */
typedef struct jp_event {
    const char *name;
    const char *fields[JP_MAX_FIELDS];
} jp_event;

/** One plugin: its type-name prefix (every type it registers starts with it) and events. */
typedef struct jp_plugin {
    const char *name;   /**< "gc" */
    const char *prefix; /**< "gc." */
    const jp_event *events;
    size_t nevents;
} jp_plugin;

/* ---- gc (plugins/gc) ---- */
enum jp_gc_event { JP_GC_PAUSE, JP_GC_SITE_TIME, JP_GC_STALL, JP_GC_SAMPLE, JP_GC_NEVENTS };
/** gc.pause: one collection (emitted from the gc plugin's thread; os_tid names the trigger). */
enum { JP_PAUSE_DURATION_NS, JP_PAUSE_STACK, JP_PAUSE_FULL, JP_PAUSE_ALLOCD_BYTES, JP_PAUSE_FREED_BYTES,
       JP_PAUSE_LIVE_BYTES, JP_PAUSE_OS_TID, JP_PAUSE_REQUESTED, JP_PAUSE_SITE };
/** gc.site_time: GC time inside a site's spans. */
enum { JP_SITE_TIME_SITE, JP_SITE_TIME_GC_NS, JP_SITE_TIME_PAUSES };
/** gc.stall: the same pause seen from a stalled thread. */
enum { JP_STALL_DURATION_NS };
/** gc.sample: periodic heap figures (gc_total_ns is cumulative: a counter, not an extent). */
enum { JP_SAMPLE_LIVE_BYTES, JP_SAMPLE_ALLOCATED_BYTES, JP_SAMPLE_COLLECTIONS, JP_SAMPLE_RSS_BYTES,
       JP_SAMPLE_GC_TOTAL_NS, JP_SAMPLE_NFIELDS };

/* ---- dispatch (plugins/dispatch) ---- */
enum jp_dispatch_event { JP_DISPATCH_SIGNATURE, JP_DISPATCH_COMPILE, JP_DISPATCH_SPECIALIZATIONS,
                         JP_DISPATCH_INSTABILITY, JP_DISPATCH_NEVENTS };
enum { JP_SIGNATURE_SITE, JP_SIGNATURE_SIGNATURE, JP_SIGNATURE_CALLS };
/** dispatch.compile: time_ns is when inference began; codegen (duration_ns) follows it. */
enum { JP_COMPILE_DURATION_NS, JP_COMPILE_INFERENCE_NS, JP_COMPILE_SIGNATURE };
enum { JP_SPECS_METHOD, JP_SPECS_COUNT, JP_SPECS_FILE, JP_SPECS_LINE };
enum { JP_INSTABILITY_SITE, JP_INSTABILITY_SIGNATURE, JP_INSTABILITY_FLAGS, JP_INSTABILITY_REASON,
       JP_INSTABILITY_CHAIN };

/* ---- cuda (plugins/cuda, docs/cuda.md) ---- */
enum jp_cuda_event { JP_CUDA_KERNEL, JP_CUDA_LAUNCH, JP_CUDA_MEMCPY, JP_CUDA_SUMMARY, JP_CUDA_DEVICE, JP_CUDA_NEVENTS };
/** cuda.kernel: one kernel execution (time_ns: device start on the Jäger clock), with its launch. */
enum { JP_KERNEL_DURATION_NS, JP_KERNEL_NAME, JP_KERNEL_GRID_X, JP_KERNEL_GRID_Y, JP_KERNEL_GRID_Z, JP_KERNEL_BLOCK_X,
       JP_KERNEL_BLOCK_Y, JP_KERNEL_BLOCK_Z, JP_KERNEL_LAUNCH_SITE, JP_KERNEL_LAUNCH_STACK, JP_KERNEL_REGISTERS,
       JP_KERNEL_STATIC_SHARED, JP_KERNEL_DYNAMIC_SHARED };
/** cuda.launch: one traced API call on the launching thread (kind 1 kernel, 2 graph, 3 copy, 4 memset, 5 sync). */
enum { JP_LAUNCH_DURATION_NS, JP_LAUNCH_KIND, JP_LAUNCH_SITE };
/** cuda.memcpy: one copy (copy_kind 1 HtoD, 2 DtoH, 8 DtoD; src/dst_kind 1 pageable). */
enum { JP_MEMCPY_DURATION_NS, JP_MEMCPY_BYTES, JP_MEMCPY_COPY_KIND, JP_MEMCPY_SRC_KIND, JP_MEMCPY_DST_KIND };
/** cuda.summary: the recording's counts, at stop. */
enum { JP_CSUM_DROPPED, JP_CSUM_POOL_EXHAUSTED, JP_CSUM_MISSES, JP_CSUM_SUGGESTED };
/** cuda.device: one device's limits, at start. */
enum { JP_DEV_SM_COUNT, JP_DEV_MAX_THREADS_PER_SM, JP_DEV_REGISTERS_PER_SM, JP_DEV_SHARED_PER_SM };

extern const jp_plugin jp_gc;
extern const jp_plugin jp_dispatch;
extern const jp_plugin jp_cuda;
/* ---- openmp (plugins/openmp) ---- */
enum jp_openmp_event { JP_OPENMP_SITE_ROLE, JP_OPENMP_NEVENTS };
/** openmp.site_role: what a site measures (docs/openmp.md). Any plugin's "<name>.site_role"
 *  with these fields is read the same way. */
enum { JP_ROLE_SITE, JP_ROLE_ROLE, JP_ROLE_KIND, JP_ROLE_REGION };
extern const jp_plugin jp_openmp;
/** 1 if \p type_name is a "<plugin>.site_role" type. */
int jp_is_site_role(const char *type_name);
/* ---- sampler (plugins/sampler) ---- */
enum jp_sampler_event { JP_SAMPLER_SAMPLE, JP_SAMPLER_THREAD, JP_SAMPLER_SUMMARY, JP_SAMPLER_NEVENTS };
/** sampler.sample: one stack sample (emitted from the sampler's thread; os_tid names the
 *  sampled thread, site its innermost open site, cpu_ns the CPU time it stands for). */
enum { JP_SMP_STACK, JP_SMP_OS_TID, JP_SMP_SITE, JP_SMP_WEIGHT, JP_SMP_CPU_NS, JP_SMP_FLAGS };
/** sampler.thread / sampler.summary: what was delivered. */
enum { JP_SMPT_OS_TID, JP_SMPT_SAMPLES, JP_SMPT_LOST, JP_SMPT_CPU_NS, JP_SMPT_EXPECTED };
enum { JP_SMPS_MODE, JP_SMPS_SAMPLES, JP_SMPS_HZ };
extern const jp_plugin jp_sampler;

/** Name of event \p event of \p plugin ("gc.pause"). */
static inline const char *jp_name(const jp_plugin *plugin, int event) { return plugin->events[event].name; }
/** Name of field \p field of that event ("duration_ns"). */
static inline const char *jp_field(const jp_plugin *plugin, int event, int field)
{
    return plugin->events[event].fields[field];
}
/** 1 if \p type_name is event \p event of \p plugin. */
int jp_is(const char *type_name, const jp_plugin *plugin, int event);
/** 1 if \p type_name belongs to \p plugin (starts with its prefix). */
int jp_in_plugin(const char *type_name, const jp_plugin *plugin);
/** Position of field \p field of event \p event in the recording's description \p d of
 *  that type, or UINT32_MAX when the file's type lacks it. */
uint32_t jp_field_index(const jager_type_desc *d, const jp_plugin *plugin, int event, int field);
/* ---- mpi (plugins/mpi, docs/mpi.md) ---- */
enum jp_mpi_event { JP_MPI_CALL, JP_MPI_REQUEST, JP_MPI_CLOCK, JP_MPI_RANK, JP_MPI_NEVENTS };
/** mpi.call: one wrapped call (time_ns: when it began). */
enum { JP_MC_FUNC, JP_MC_DURATION_NS, JP_MC_BYTES, JP_MC_RECV_BYTES, JP_MC_DEST, JP_MC_TAG, JP_MC_SEQ, JP_MC_SOURCE,
       JP_MC_RECV_TAG, JP_MC_RECV_SEQ, JP_MC_ROOT, JP_MC_COMM, JP_MC_COMM_SIZE, JP_MC_CALLER, JP_MC_NFIELDS };
/** mpi.request: a non-blocking request, when completed (time_ns: when it was started). */
enum { JP_MQ_FUNC, JP_MQ_DONE_BY, JP_MQ_KIND, JP_MQ_DONE, JP_MQ_BYTES, JP_MQ_DEST, JP_MQ_TAG, JP_MQ_SOURCE,
       JP_MQ_RECV_TAG, JP_MQ_RECV_BYTES, JP_MQ_COMM, JP_MQ_SEQ, JP_MQ_NFIELDS };
/** mpi.clock: this rank's offset to rank 0 (phase 0 MPI_Init, 1 MPI_Finalize). */
enum { JP_MK_PHASE, JP_MK_OFFSET_NS, JP_MK_ERROR_NS, JP_MK_OK, JP_MK_NFIELDS };
/** mpi.rank: the rank's span. */
enum { JP_MR_RANK, JP_MR_SIZE, JP_MR_DURATION_NS, JP_MR_NFIELDS };
extern const jp_plugin jp_mpi;
/** The run metadata keys of the mpi plugin that the tools read (jager_reader_meta()). */
enum { JP_MPI_META_RANK, JP_MPI_META_WORLD_SIZE, JP_MPI_META_HOST, JP_MPI_META_TRACE_ID, JP_MPI_META_NKEYS };
extern const char *const jp_mpi_meta[JP_MPI_META_NKEYS];
/* ---- rusage (plugins/rusage, docs/rusage.md) ---- */
enum jp_rusage_event { JP_RUSAGE_THREAD, JP_RUSAGE_INFO, JP_RUSAGE_NEVENTS };
/** rusage.thread: one thread's cumulative readings (emitted from the plugin's timer). */
enum { JP_RT_OS_TID, JP_RT_CPU_NS, JP_RT_SYS_NS, JP_RT_RUNQ_NS, JP_RT_MINFLT, JP_RT_MAJFLT, JP_RT_VCSW, JP_RT_IVCSW,
       JP_RT_NFIELDS };
/** rusage.info: the plugin's settings and what it measured at start. */
enum { JP_RI_INTERVAL_NS, JP_RI_FAULT_NS, JP_RI_SCHEDSTAT, JP_RI_SAMPLES, JP_RI_THREADS };
extern const jp_plugin jp_rusage;
/* ---- otel (plugins/otel, docs/otel.md) ---- */
enum jp_otel_event { JP_OTEL_EXPORT, JP_OTEL_NEVENTS };
/** otel.export: one count of the exporter (signal, metric and error type are strings). */
enum { JP_OX_SIGNAL, JP_OX_METRIC, JP_OX_ERROR_TYPE, JP_OX_VALUE };
extern const jp_plugin jp_otel;
/* ---- the Julia binding's GC counters (bindings/julia) ---- */
/** i64 attributes on log records and marks, process totals read at the event; the report
 *  and the chrome export chart each as the counter series "julia.<key>". */
enum { JP_JGC_ALLOCATED_BYTES, JP_JGC_PAUSES, JP_JGC_TIME_NS, JP_JGC_FULL_SWEEPS, JP_JGC_NKEYS };
extern const char *const jp_julia_gc_keys[JP_JGC_NKEYS];
/** Which of jp_julia_gc_keys the attribute key \p key (\p len bytes, not NUL-terminated)
 *  is, or -1. */
int jp_julia_gc_key(const char *key, size_t len);
#endif
