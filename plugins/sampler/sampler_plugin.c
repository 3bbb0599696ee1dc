/* sampler_plugin.c — the sampler plugin's descriptor: options, event types, lifecycle.
 *
 * Samples the call stack of every thread of the process at a fixed rate of CPU time
 * (perf_event_open, else POSIX CPU-time timers), each sample attributed to the innermost
 * Jäger site open on the thread (docs/sampler.md; events in docs/event-types.md, "sampler").
 * Says once which trigger ran and why; at stop, one sampler.thread per thread (samples
 * against the CPU time it used) and one sampler.summary, and a warning when most stacks
 * ended at a broken frame-pointer chain. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler_internal.h"

smp_state smp_g;

static const jager_field_desc sample_fields[] = {
    {"stack", JAGER_FIELD_STACK, 0},          /* innermost first; [0] is the interrupted pc + 1 */
    {"os_tid", JAGER_FIELD_U64, 0},           /* the sampled thread */
    {"site", JAGER_FIELD_SITE, 0},            /* innermost open site on it, 0 if none */
    {"weight", JAGER_FIELD_U64, 0},           /* trigger periods the sample stands for (≥ 1) */
    {"cpu_ns", JAGER_FIELD_U64, 0},           /* weight × period, in ns (U64: the sample is an instant, not an interval) */
    {"flags", JAGER_FIELD_U64, 0},            /* 1 truncated at depth, 2 chain left the stack, 4 stack unknown, 8 no caller found, 16 cut at a non-code return address */
};
static const jager_field_desc thread_fields[] = {
    {"os_tid", JAGER_FIELD_U64, 0},
    {"samples", JAGER_FIELD_U64, 0},          /* delivered into the recording */
    {"lost", JAGER_FIELD_U64, 0},             /* the thread's buffer was full */
    {"cpu_ns", JAGER_FIELD_DURATION_NS, 0},   /* CPU time while sampled */
    {"expected", JAGER_FIELD_U64, 0},         /* cpu_ns / period */
    {"truncated", JAGER_FIELD_U64, 0},
    {"broken", JAGER_FIELD_U64, 0},
    {"handler_ns", JAGER_FIELD_DURATION_NS, 0}, /* time spent in the signal handler */
};
static const jager_field_desc module_fields[] = {
    {"path", JAGER_FIELD_STRING, 0},
    {"build_id", JAGER_FIELD_STRING, 0},      /* GNU build id, hex; "" when none */
    {"start", JAGER_FIELD_U64, 0},
    {"end", JAGER_FIELD_U64, 0},
};
static const jager_field_desc summary_fields[] = {
    {"mode", JAGER_FIELD_STRING, 0},          /* "perf" or "timer" */
    {"signal", JAGER_FIELD_U64, 0},
    {"hz", JAGER_FIELD_U64, 0},
    {"period_ns", JAGER_FIELD_DURATION_NS, 0},
    {"samples", JAGER_FIELD_U64, 0},
    {"lost", JAGER_FIELD_U64, 0},
    {"truncated", JAGER_FIELD_U64, 0},
    {"broken", JAGER_FIELD_U64, 0},
    {"no_bounds", JAGER_FIELD_U64, 0},
    {"threads", JAGER_FIELD_U64, 0},
    {"handler_ns", JAGER_FIELD_DURATION_NS, 0},
    {"chained", JAGER_FIELD_U64, 0},          /* instances passed to an earlier handler */
    {"leaf_only", JAGER_FIELD_U64, 0},        /* walks that found no caller (code without frame pointers) */
    {"periods", JAGER_FIELD_U64, 0},          /* Σ weight: trigger periods the samples stand for */
    {"slow_walks", JAGER_FIELD_U64, 0},       /* fast traces that missed the interrupted frame: walked with unw_step instead */
    {"symbolize_ns", JAGER_FIELD_DURATION_NS, 0}, /* time spent naming native frames (libdw) */
};
#define SMP_N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const jager_option_desc smp_options[] = {
    {"hz", "int", "100", "samples per second of each thread's CPU time (1..10000)"},
    {"depth", "int", "128", "deepest stack kept (frames, at most 256); deeper stacks are truncated and counted"},
    {"mode", "string", "auto", "auto (perf_event_open when permitted, else timers), perf or timer"},
    {"unwind", "string", "auto", "auto (libunwind in a Julia process, frame pointers elsewhere), fp, libunwind (cached fast trace) or libunwind-step (unw_step every frame)"},
    {"signal", "int", "0", "real-time signal number to use (0: the first free of SIGRTMIN+4..SIGRTMAX)"},
    {"threads", "int", "256", "threads sampled at once (more are counted, not sampled)"},
    {"buffer", "int", "256", "samples buffered per thread between drains (every 10 ms); more are lost and counted"},
    {"scan_ms", "int", "50", "period of the /proc/self/task scan that finds new threads"},
    {"symbolize", "string", "auto", "when native frames are named: auto (run in a Julia process, else end), end (at stop, once per address) or run (as found)"},
};

static uint32_t option_u32(smp_state *st, const char *key, uint32_t def, uint32_t lo, uint32_t hi)
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

static jager_status smp_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    smp_state *st = &smp_g;
    if (st->host) return JAGER_E_STATE;
    memset(st, 0, sizeof *st);
    st->host = host;
    st->self = self;
    st->wake_fd = -1;
    atomic_store(&st->maps_cur, -1);
    jager_status s = JAGER_E_UNSUPPORTED;
    if (host->struct_size < offsetof(jager_host_api, open_sites) + sizeof host->open_sites || !host->open_sites) {
        host->log(self, JAGER_DIAG_WARN, "the host is too old (no open_sites): sampler off");
        goto fail;
    }
    st->hz = option_u32(st, "hz", 100, 1, 10000);
    st->depth = option_u32(st, "depth", 128, 1, SMP_MAX_DEPTH);
    st->max_threads = option_u32(st, "threads", 256, 1, SMP_MAX_SLOTS);
    st->buffer = option_u32(st, "buffer", 256, 4, 65536);
    st->scan_ms = option_u32(st, "scan_ms", 50, 1, 60000);
    st->signo_wanted = (int)option_u32(st, "signal", 0, 0, 64);
    const char *mode = host->config(self, "mode");
    if (!mode || !*mode || strcmp(mode, "auto") == 0) st->mode_wanted = 0;
    else if (strcmp(mode, "perf") == 0) st->mode_wanted = SMP_MODE_PERF;
    else if (strcmp(mode, "timer") == 0) st->mode_wanted = SMP_MODE_TIMER;
    else {
        char msg[160];
        snprintf(msg, sizeof msg, "option mode=\"%.32s\" is not auto, perf or timer; using auto", mode);
        host->log(self, JAGER_DIAG_WARN, msg);
    }
    const char *uw = host->config(self, "unwind");
    if (uw && *uw && strcmp(uw, "auto") != 0) {
        if (strcmp(uw, "fp") == 0) st->unwind_wanted = 1;
        else if (strcmp(uw, "libunwind") == 0) st->unwind_wanted = 2;
        else if (strcmp(uw, "libunwind-step") == 0) st->unwind_wanted = 3;
        else {
            char msg[160];
            snprintf(msg, sizeof msg, "option unwind=\"%.32s\" is not auto, fp, libunwind or libunwind-step; using auto", uw);
            host->log(self, JAGER_DIAG_WARN, msg);
        }
    }
    /* Julia 1.5's JIT code keeps no frame pointers, but registers its unwind tables */
    st->in_julia = dlsym(RTLD_DEFAULT, "jl_is_initialized") != NULL;
    st->use_libunwind = st->unwind_wanted ? st->unwind_wanted >= 2 : st->in_julia;
    st->fast_trace = st->use_libunwind && st->unwind_wanted != 3;
    const char *sy = host->config(self, "symbolize");
    /* auto: in Julia the binding pulls the unnamed addresses right after a flush, which the
     * core bounds (JAGER_PLUGIN_TIMEOUT_MS): naming them all there could outlast it */
    st->symbolize_end = !st->in_julia;
    if (sy && *sy && strcmp(sy, "auto") != 0) {
        if (strcmp(sy, "run") == 0) st->symbolize_end = 0;
        else if (strcmp(sy, "end") == 0) st->symbolize_end = 1;
        else {
            char msg[160];
            snprintf(msg, sizeof msg, "option symbolize=\"%.32s\" is not auto, end or run; using auto", sy);
            host->log(self, JAGER_DIAG_WARN, msg);
        }
    }
    st->period_ns = 1000000000u / st->hz;
    st->entry_bytes = sizeof(smp_entry) + (size_t)(st->depth + (st->use_libunwind ? SMP_UNW_EXTRA : 0)) * sizeof(uint64_t);
    if ((s = host->register_type(self, "sampler.sample", sample_fields, SMP_N(sample_fields), &st->t_sample)) != JAGER_OK ||
        (s = host->register_type(self, "sampler.thread", thread_fields, SMP_N(thread_fields), &st->t_thread)) != JAGER_OK ||
        (s = host->register_type(self, "sampler.module", module_fields, SMP_N(module_fields), &st->t_module)) != JAGER_OK ||
        (s = host->register_type(self, "sampler.summary", summary_fields, SMP_N(summary_fields), &st->t_summary)) !=
            JAGER_OK)
        goto fail;
    s = JAGER_E_NOMEM;
    st->slots = calloc(st->max_threads, sizeof *st->slots);
    st->ips_tmp = calloc(st->depth, sizeof *st->ips_tmp);
    if (!st->slots || !st->ips_tmp) goto fail_free;
    for (uint32_t i = 0; i < st->max_threads; i++) st->slots[i].fd = -1;
    pthread_mutex_init(&st->drain_lock, NULL);
    *state = st;
    return JAGER_OK;
fail_free:
    free(st->slots);
    free(st->ips_tmp);
    st->slots = NULL;
    st->ips_tmp = NULL;
fail:
    st->host = NULL;
    return s;
}

static jager_status smp_start(void *state)
{
    smp_state *st = state;
    jager_status s = smp_signal_install(st);
    if (s != JAGER_OK) {
        char msg[160];
        snprintf(msg, sizeof msg, "no real-time signal free%s: sampler off",
                 st->signo_wanted ? " (JAGER_SAMPLER_SIGNAL must be SIGRTMIN..SIGRTMAX)" : "");
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
        return JAGER_OK; /* the program runs on, unsampled */
    }
    smp_trigger_choose(st);
    if (st->fast_trace) smp_fast_trace_prime(st);
    smp_symbols_init(st);
    smp_maps_refresh(st);
    smp_threads_scan(st);
    char msg[400];
    snprintf(msg, sizeof msg, "sampling %u Hz of CPU time per thread with %s triggers (%s), signal %d, %llu threads, %s",
             st->hz, st->mode == SMP_MODE_PERF ? "perf_event" : "POSIX timer", st->mode_reason, st->signo,
             (unsigned long long)st->threads_seen, !st->use_libunwind ? "frame-pointer walks" : st->fast_trace ? "libunwind walks (fast trace)" : "libunwind walks (unw_step)");
    st->host->log(st->self, JAGER_DIAG_INFO, msg);
    s = smp_thread_start(st);
    if (s != JAGER_OK) {
        smp_threads_disarm_all(st);
        smp_signal_remove(st);
    }
    return s;
}

static void smp_flush(void *state)
{
    smp_state *st = state;
    if (!st->signo) return;
    smp_drain(st);
    if (!st->in_julia) return; /* named at stop, which the core does not bound */
    /* before the binding pulls the unresolved addresses (Jager.symbolize! follows the flush) */
    pthread_mutex_lock(&st->drain_lock);
    smp_symbols_settle(st);
    pthread_mutex_unlock(&st->drain_lock);
}

static void smp_stop(void *state)
{
    smp_state *st = state;
    if (!st->signo) return;
    smp_thread_stop(st);
    /* CPU time first: the threads still run, and the triggers are still armed. */
    for (uint32_t i = 0; i < st->max_threads; i++) {
        smp_slot *s = &st->slots[i];
        if (!s->tid) continue;
        uint64_t c = smp_thread_cpu_ns(s->tid);
        if (c) s->cpu_last_ns = c;
    }
    smp_threads_disarm_all(st);
    smp_signal_remove(st);
    smp_drain(st);
    pthread_mutex_lock(&st->drain_lock);
    smp_symbols_settle(st);
    uint64_t fired = st->retired_fired, lost = st->retired_lost, trunc = st->retired_truncated;
    uint64_t broken = st->retired_broken, nob = st->retired_no_bounds, hns = st->retired_handler_ns;
    uint64_t leaf = st->retired_leaf_only, slow = st->retired_slow_walks;
    for (uint32_t i = 0; i < st->max_threads; i++) {
        smp_slot *s = &st->slots[i];
        if (!s->tid) continue;
        smp_emit_thread(st, s, s->cpu_last_ns > s->cpu_start_ns ? s->cpu_last_ns - s->cpu_start_ns : 0);
        fired += atomic_load(&s->fired);
        lost += atomic_load(&s->lost);
        trunc += atomic_load(&s->truncated);
        broken += atomic_load(&s->broken);
        nob += atomic_load(&s->no_bounds);
        leaf += atomic_load(&s->leaf_only);
        hns += atomic_load(&s->handler_ns);
        slow += atomic_load(&s->slow_walks);
    }
    (void)fired;
    uint64_t f[16] = {st->host->intern(st->mode == SMP_MODE_PERF ? "perf" : "timer"),
                      (uint64_t)st->signo,
                      st->hz,
                      st->period_ns,
                      st->emitted,
                      lost,
                      trunc,
                      broken,
                      nob,
                      st->threads_seen,
                      hns,
                      smp_signal_chained(),
                      leaf,
                      st->weight_total,
                      slow,
                      smp_symbols_ns(st)};
    st->host->emit(st->t_summary, 0, f, 16);
    uint64_t emitted = st->emitted;
    pthread_mutex_unlock(&st->drain_lock);

    char msg[400];
    if (emitted >= 20 && leaf * 2 > emitted) {
        snprintf(msg, sizeof msg,
                 "%llu of %llu stacks (%.0f%%) are truncated to their innermost frame: the frame-pointer chain was "
                 "broken where they were taken (code built without frame pointers); rebuild with "
                 "-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer to see callers",
                 (unsigned long long)leaf, (unsigned long long)emitted, 100.0 * (double)leaf / (double)emitted);
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
    }
    if (lost) {
        snprintf(msg, sizeof msg, "%llu samples lost: a thread's buffer (%u) filled between drains; raise JAGER_SAMPLER_BUFFER",
                 (unsigned long long)lost, st->buffer);
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
    }
    if (st->threads_failed) {
        snprintf(msg, sizeof msg, "%llu threads not sampled (%s)", (unsigned long long)st->threads_failed,
                 st->trigger_errno ? strerror(st->trigger_errno) : "JAGER_SAMPLER_THREADS reached");
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
    }
}

static void smp_shutdown(void *state)
{
    smp_state *st = state;
    smp_symbols_free(st);
    smp_maps_free(st);
    smp_code_free(st);
    /* stop removed the handler after discarding pending instances and waiting for running
     * ones (smp_signal_remove): no handler can reach a slot any more. */
    for (uint32_t i = 0; st->slots && i < st->max_threads; i++) free(st->slots[i].buf);
    free(st->slots);
    st->slots = NULL;
    free(st->ips_tmp);
    st->ips_tmp = NULL;
    if (st->wake_fd >= 0) close(st->wake_fd);
    st->wake_fd = -1;
    pthread_mutex_destroy(&st->drain_lock);
    st->host = NULL;
}

static const jager_plugin_descriptor smp_descriptor = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "sampler",
    .version = "1.0.0",
    .description = "CPU stack samples of every thread (C and Julia frames), each attributed to the open site",
    .init = smp_init,
    .start = smp_start,
    .flush = smp_flush,
    .stop = smp_stop,
    .shutdown = smp_shutdown,
    .options = smp_options,
    .noptions = SMP_N(smp_options),
};

JAGER_PLUGIN_DEFINE_ENTRY(&smp_descriptor)
