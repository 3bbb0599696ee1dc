/* gc_plugin.c — the gc plugin's descriptor: options, event types, lifecycle, extension.
 *
 * Records every Julia garbage collection as a gc.pause event (start, duration, requested
 * kind, full sweep, bytes allocated since the previous collection, freed, live after, the
 * triggering thread and its allocation stack), samples the heap as gc.sample, and at stop
 * writes the GC time each site's open spans suffered as gc.site_time
 * (docs/event-types.md, "gc" section; docs/gc.md). Outside a Julia process it says so
 * once and steps aside. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_internal.h"
#include "jager_gc.h"

gc_state gc_g;

#define GC_DEFAULT_DEPTH 64u
#define GC_DEFAULT_INTERVAL_MS 10u
#define GC_DEFAULT_QUEUE 256u

static const jager_field_desc pause_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"requested", JAGER_FIELD_U64, 0},   /* Julia's argument: 0 auto, 1 full, 2 incremental */
    {"full", JAGER_FIELD_U64, 0},        /* full sweeps in this pause (runtime counters): GC.gc(true)
                                            can sweep twice, its forced sweep and a full recollection */
    {"allocd_bytes", JAGER_FIELD_BYTES, 0},
    {"freed_bytes", JAGER_FIELD_BYTES, 0},
    {"live_bytes", JAGER_FIELD_BYTES, 0},
    {"stack", JAGER_FIELD_STACK, 0},     /* triggering allocation, innermost first */
    {"os_tid", JAGER_FIELD_U64, 0},      /* OS thread id of the triggering thread */
    {"plugin_ns", JAGER_FIELD_DURATION_NS, 0}, /* the plugin's own time in the callbacks */
    {"site", JAGER_FIELD_SITE, 0},       /* innermost open site on the triggering thread, 0 if none */
};
/* Written by the post-GC callback into the triggering thread's own ring (only when that
 * thread has spans open), so that it reaches the file before every span the collection
 * stalled; gc.pause, with the stack, follows from the plugin's thread. */
static const jager_field_desc stall_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
};
static const jager_field_desc site_time_fields[] = {
    {"site", JAGER_FIELD_SITE, 0},
    {"gc_ns", JAGER_FIELD_DURATION_NS, 0},
    {"pauses", JAGER_FIELD_U64, 0},
};
static const jager_field_desc sample_fields[] = {
    {"live_bytes", JAGER_FIELD_BYTES, 0},
    {"allocated_bytes", JAGER_FIELD_BYTES, 0}, /* allocated since Julia started (monotonic) */
    {"collections", JAGER_FIELD_U64, 0},       /* collections since Julia started (monotonic) */
    {"rss_bytes", JAGER_FIELD_BYTES, 0},
    {"gc_total_ns", JAGER_FIELD_DURATION_NS, 0}, /* the runtime's summed GC time (monotonic) */
};
#define GC_N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const jager_option_desc gc_options[] = {
    {"depth", "int", "64", "frames kept of each collection's triggering stack (0 = no stacks, at most 128)"},
    {"interval_ms", "int", "10", "period of gc.sample and of moving pauses into the recording"},
    {"queue", "int", "256", "pauses buffered between drains (a power of two); more are lost and counted"},
    {"eager", "bool", "1", "move each pause into the recording right after its collection (0: every interval_ms only)"},
};

/* An unsigned option in [lo, hi], else the default (a malformed value is reported). */
static uint32_t option_u32(gc_state *st, const char *key, uint32_t def, uint32_t lo, uint32_t hi)
{
    const char *v = st->host->config(st->self, key);
    if (!v || !v[0]) return def;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end != '\0' || v[0] == '-' || x < lo || x > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "option %s=\"%.32s\" is not an integer in [%u, %u]; using %u", key, v, lo, hi, def);
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
        return def;
    }
    return (uint32_t)x;
}

static jager_status gc_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    gc_state *st = &gc_g;
    if (st->host) return JAGER_E_STATE;
    memset(st, 0, sizeof *st);
    st->host = host;
    st->self = self;
    st->statm_fd = -1;
    st->wake_fd = -1;
    if (!gc_julia_find(&st->jl)) {
        host->log(self, JAGER_DIAG_INFO,
                  "not a Julia process (jl_gc_set_cb_pre_gc not found): no GC events will be recorded");
        st->host = NULL;
        return JAGER_E_UNSUPPORTED;
    }
    st->depth = option_u32(st, "depth", GC_DEFAULT_DEPTH, 0, GC_MAX_DEPTH);
    st->interval_ms = option_u32(st, "interval_ms", GC_DEFAULT_INTERVAL_MS, 1, 60000);
    st->queue_cap = option_u32(st, "queue", GC_DEFAULT_QUEUE, 2, 65536);
    st->eager = option_u32(st, "eager", 1, 0, 1);
    if (st->queue_cap & (st->queue_cap - 1)) {
        uint32_t c = 2;
        while (c < st->queue_cap) c *= 2;
        st->queue_cap = c;
    }
    jager_status s;
    if ((s = host->register_type(self, "gc.pause", pause_fields, GC_N(pause_fields), &st->t_pause)) != JAGER_OK ||
        (s = host->register_type(self, "gc.site_time", site_time_fields, GC_N(site_time_fields), &st->t_site_time)) !=
            JAGER_OK ||
        (s = host->register_type(self, "gc.sample", sample_fields, GC_N(sample_fields), &st->t_sample)) != JAGER_OK ||
        (s = host->register_type(self, "gc.stall", stall_fields, GC_N(stall_fields), &st->t_stall)) != JAGER_OK)
        goto fail;
    if ((s = gc_queue_init(&st->q, st->queue_cap)) != JAGER_OK) goto fail;
    pthread_mutex_init(&st->drain_lock, NULL);
    gc_hooks_locate_self(st);
    *state = st;
    return JAGER_OK;
fail:
    st->host = NULL;
    return s;
}

static jager_status gc_start(void *state)
{
    gc_state *st = state;
    st->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    /* Julia already running (the binding started Jäger from Julia code): hook now, from
     * this thread, which Julia cannot stop for a collection while it is in a ccall. */
    if (gc_julia_ready(&st->jl)) gc_hooks_install(st);
    jager_status s = gc_thread_start(st);
    if (s != JAGER_OK) {
        gc_hooks_remove(st);
        return s;
    }
    return JAGER_OK;
}

static void gc_flush(void *state) { gc_drain(state); }

static void gc_stop(void *state)
{
    gc_state *st = state;
    int was_hooked = atomic_load(&st->hooked);
    gc_thread_stop(st);
    was_hooked |= atomic_load(&st->hooked);
    gc_hooks_remove(st);
    gc_drain(st);
    gc_emit_site_times(st);
    if (was_hooked) gc_sample(st);
    uint64_t lost = atomic_load(&st->lost_full);
    if (lost) {
        char msg[160];
        snprintf(msg, sizeof msg, "%llu GC pauses lost: the queue (%u) filled between drains; raise JAGER_GC_QUEUE",
                 (unsigned long long)lost, st->queue_cap);
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
    }
}

static void gc_shutdown(void *state)
{
    gc_state *st = state;
    gc_queue_free(&st->q);
    gc_drain_free(st);
    if (st->statm_fd >= 0) close(st->statm_fd);
    st->statm_fd = -1;
    if (st->wake_fd >= 0) close(st->wake_fd);
    st->wake_fd = -1;
    pthread_mutex_destroy(&st->drain_lock);
    st->host = NULL;
}

/* ---- the "jager.gc/1" extension ---- */

static int ext_running(void) { return gc_g.host != NULL; }

static jager_status ext_site_time(jager_site site, uint64_t *gc_ns, uint64_t *pauses)
{
    if (!ext_running()) return JAGER_E_STATE;
    gc_drain(&gc_g);
    gc_site_get(&gc_g, site, gc_ns, pauses);
    return JAGER_OK;
}

static jager_status ext_totals(uint64_t *pauses, uint64_t *gc_ns, uint64_t *lost, uint64_t *unpaired)
{
    if (!ext_running()) return JAGER_E_STATE;
    gc_drain(&gc_g);
    pthread_mutex_lock(&gc_g.drain_lock);
    if (pauses) *pauses = gc_g.emitted;
    if (gc_ns) *gc_ns = gc_g.total_gc_ns;
    pthread_mutex_unlock(&gc_g.drain_lock);
    if (lost) *lost = atomic_load(&gc_g.lost_full);
    if (unpaired) *unpaired = atomic_load(&gc_g.unpaired);
    return JAGER_OK;
}

static int ext_hooked(void) { return atomic_load(&gc_g.hooked); }

static const jager_gc_api gc_api = {
    .struct_size = sizeof(jager_gc_api),
    .site_time = ext_site_time,
    .totals = ext_totals,
    .callback_counts = gc_hooks_counts,
    .hooked = ext_hooked,
};

static const void *gc_get_extension(void *state, const char *id)
{
    (void)state;
    return id && strcmp(id, JAGER_GC_EXTENSION_ID) == 0 ? &gc_api : NULL;
}

static const jager_plugin_descriptor gc_descriptor = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "gc",
    .version = "1.0.0",
    .description = "Julia GC pauses with the stack of the allocation that triggered each, heap samples, GC time per site",
    .init = gc_init,
    .start = gc_start,
    .flush = gc_flush,
    .stop = gc_stop,
    .shutdown = gc_shutdown,
    .get_extension = gc_get_extension,
    .options = gc_options,
    .noptions = GC_N(gc_options),
    .flags = JAGER_PLUGIN_FLAG_CALLER_THREAD, /* its runtime is called from the program's thread */
};

JAGER_PLUGIN_DEFINE_ENTRY(&gc_descriptor)
