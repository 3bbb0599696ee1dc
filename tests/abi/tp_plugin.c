/*
 * tp_plugin.c — the ABI tests' plugins: one source built once per case with
 * TP_NAME="<name>" (the file is libjager-<name>.so), TP_KIND (which case) and TP_TAG.
 *
 * Every callback appends "<name>:<callback>" to the file named by the plugin's "journal"
 * option (JAGER_<NAME>_JOURNAL), so a test sees which callbacks ran, in which order, even
 * after the plugin was unloaded. Callbacks that must never run abort().
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdatomic.h>
#include <time.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager_plugin.h"
#include "tp_probe.h"

#define TP_K_GOOD 1        /* full plugin: types, events, summary at stop, probe */
#define TP_K_OLD 2         /* descriptor ends before stop: stop/shutdown must read as NULL */
#define TP_K_NEWER 3       /* a newer minor: larger descriptor, abi_minor 7 */
#define TP_K_MAJOR 4       /* abi_major 2: refused before init */
#define TP_K_NOENTRY 5     /* exports a differently named symbol */
#define TP_K_NULLDESC 6    /* entry returns NULL */
#define TP_K_SMALL 7       /* struct_size too small to hold init */
#define TP_K_NOINIT 8      /* init NULL */
#define TP_K_MISMATCH 9    /* descriptor names another plugin */
#define TP_K_FAILINIT 10   /* init registers a sink, then fails */
#define TP_K_UNSUPPORTED 11 /* init steps aside */
#define TP_K_SINK 12       /* registers a sink counting spans */
#define TP_K_STARTFAIL 13  /* start fails */
#define TP_K_LATE 14       /* a thread emitting ticks, stopped in shutdown instead of stop */
#define TP_K_ORPHAN 15     /* a thread never stopped: calls the host with its stale handle after shutdown */
#define TP_K_FAILREASON 16 /* init fails with a reason set through host->set_error (1.2) */
#define TP_K_REENTER 17    /* start calls jager_init and jager_shutdown: both refused (E_STATE) */
#define TP_K_TIMER 18      /* a host timer (1.2) emitting a tick per callback */
#define TP_K_BADEMIT 19    /* emits with a wrong field count, registers a badly named type */
#define TP_K_HANG 20       /* start never returns */
#define TP_K_HANGFLUSH 21  /* flush never returns */
#define TP_K_FAILSINK 28   /* registers a sink whose every write fails (counts what it was handed) */
#define TP_K_HANGSTOP 22   /* stop never returns */
#define TP_K_HANGWRITE 23  /* registers a sink whose write never returns */
#define TP_K_CALLERTHREAD 26 /* as GOOD, with JAGER_PLUGIN_FLAG_CALLER_THREAD (1.3) */
#define TP_K_SLOWSTART 27  /* flagged JAGER_PLUGIN_FLAG_CALLER_THREAD, start takes 1.5 s */
#define TP_K_HANGTIMER 25  /* a host timer whose second callback never returns */
#define TP_K_HOOKS 24      /* span hooks (1.3) on "hook.a" and "hook.b", counting and checking each call */

#ifndef TP_TAG
#define TP_TAG TP_NAME
#endif

static const jager_host_api *host;
static jager_plugin_handle *self;

static void nap_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void journal(const char *what)
{
    const char *path = host ? host->config(self, "journal") : NULL;
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s:%s\n", TP_NAME, what);
    fclose(f);
}

static void never(const char *what)
{
    fprintf(stderr, "tp_plugin %s: %s must not be called\n", TP_NAME, what);
    abort();
}

/* ---- events ---- */
static uint16_t tick_type, summary_type;
static _Atomic(uint64_t) ticks;

static void emit_ticks(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t seq = atomic_fetch_add(&ticks, 1);
        uint64_t f[2] = {seq, seq * 8};
        host->emit(tick_type, 0, f, 2);
    }
}

/* ---- a sink (TP_K_SINK counts spans; TP_K_FAILINIT's must never be called) ---- */
static _Atomic(uint64_t) sink_spans_n, sink_batches_n;

static jager_status sink_open(void *ctx)
{
#if TP_KIND == TP_K_FAILINIT
    never("sink open");
#endif
    journal("sink-open");
    return JAGER_OK;
}

static jager_status sink_write(void *ctx, const jager_batch *b)
{
#if TP_KIND == TP_K_FAILINIT
    never("sink write");
#endif
    uint64_t spans = 0;
    for (size_t off = 0; off < b->bytes;) {
        const jager_record *r = (const jager_record *)(b->data + off);
        if (r->type == JAGER_EV_SPAN) spans++;
        off += (size_t)r->words * 8u;
    }
    atomic_fetch_add(&sink_spans_n, spans);
    atomic_fetch_add(&sink_batches_n, 1);
#if TP_KIND == TP_K_HANGWRITE
    journal("sink-write");
    for (;;) nap_us(100000);
#endif
#if TP_KIND == TP_K_FAILSINK
    return JAGER_E_IO;
#else
    return JAGER_OK;
#endif
}

static void sink_close(void *ctx) { journal("sink-close"); }

static uint64_t sink_spans(void) { return atomic_load(&sink_spans_n); }
static uint64_t sink_batches(void) { return atomic_load(&sink_batches_n); }

static const jager_sink test_sink = {
    .struct_size = sizeof(jager_sink),
    .name = "tp-sink",
    .open = sink_open,
    .write = sink_write,
    .close = sink_close,
};

/* ---- 1.2 cases: threads, timers, re-entry; values read by the tests through probe.value ---- */
static _Atomic(uint64_t) values[TP_V_COUNT];
static uint64_t tp_value(int which) { return which >= 0 && which < TP_V_COUNT ? atomic_load(&values[which]) : 0; }


#if TP_KIND == TP_K_ORPHAN
/* What the orphan holds from its run: a timer, a hook and two counters, all valid then. */
static uint32_t orphan_timer, orphan_hook;
static jager_counter orphan_counter, orphan_gauge;
static void orphan_timer_fn(void *arg) { (void)arg; }
static void orphan_hook_fn(void *arg, const jager_span_event *ev)
{
    (void)arg;
    (void)ev;
}
#endif

#if TP_KIND == TP_K_LATE || TP_KIND == TP_K_ORPHAN
static pthread_t worker;
static _Atomic(int) worker_stop;
static void *worker_main(void *arg)
{
#if TP_KIND == TP_K_LATE
    while (!atomic_load(&worker_stop)) { /* the bug: this plugin stops its thread in shutdown */
        emit_ticks(1);
        atomic_fetch_add(&values[TP_V_EMITTED], 1);
        nap_us(200);
    }
#else
    /* Outlives jager_shutdown() by ~300 ms, using every host function with its handle. */
    const jager_host_api *h = host;
    jager_plugin_handle *me = self;
    uint64_t f[2] = {0, 0};
    while (h->emit_status(tick_type, 0, f, 2) == JAGER_OK) nap_us(500); /* until the recording ends */
    /* Until the unload made the handle stale (a live one has no hook 0: E_NOTFOUND). */
    for (int i = 0; i < 20000 && h->span_hook_remove(me, 0) != JAGER_E_STATE; i++) nap_us(500);
    /* Once, before the test starts another run: each call returns its documented
     * stale-handle status (jager_plugin.h); every miss is counted. */
    uint32_t id = 0;
    int bad = 0;
    bad += h->timer_stop(me, orphan_timer) != JAGER_E_STATE;
    bad += h->span_hook_remove(me, orphan_hook) != JAGER_E_STATE;
    bad += h->span_hook_add(me, "orphan.site", orphan_hook_fn, orphan_hook_fn, NULL, &id) != JAGER_E_STATE;
    bad += id != 0;
    bad += h->extension(me, TP_PROBE_ID) != NULL;
    bad += h->emit_status(tick_type, 0, f, 2) != JAGER_E_STATE; /* not recording: lost, counted */
    h->counter_add(orphan_counter, 1); /* no status: nothing recorded, nothing read or written that is freed */
    h->counter_set(orphan_gauge, 1);
    atomic_store(&values[TP_V_ORPHAN_BAD], (uint64_t)bad);
    atomic_store(&values[TP_V_ORPHAN_CHECKED], 1);
    for (int i = 0; i < 300; i++) {
        uint16_t t = 0;
        static const jager_field_desc fd[] = {{"x", JAGER_FIELD_U64, 0}};
        f[0] = 1;
        h->emit(tick_type, 0, f, 2);
        (void)h->emit_status(tick_type, 0, f, 2);
        h->log(me, JAGER_SEV_INFO, "still running");
        (void)h->config(me, "journal");
        (void)h->register_type(me, TP_NAME ".late", fd, 1, &t);
        (void)h->register_sink(me, &test_sink);
        h->counter_add(orphan_counter, 1);
        h->counter_set(orphan_gauge, (double)i);
        /* Whatever run is on now (the test starts another): the handle stays stale. */
        int miss = h->timer_stop(me, orphan_timer) != JAGER_E_STATE;
        miss += h->span_hook_add(me, "orphan.site", orphan_hook_fn, NULL, NULL, NULL) != JAGER_E_STATE;
        miss += h->span_hook_remove(me, orphan_hook) != JAGER_E_STATE;
        miss += h->extension(me, TP_PROBE_ID) != NULL;
        if (miss) atomic_fetch_add(&values[TP_V_ORPHAN_BAD], (uint64_t)miss);
        atomic_fetch_add(&values[TP_V_ORPHAN_CALLS], 1);
        nap_us(1000);
    }
    atomic_store(&values[TP_V_ORPHAN_DONE], 1);
#endif
    return NULL;
}
#endif

#if TP_KIND == TP_K_TIMER || TP_KIND == TP_K_HANGTIMER
static uint32_t timer_id;
static void on_timer(void *arg)
{
    (void)arg;
    emit_ticks(1);
    if (atomic_fetch_add(&values[TP_V_TIMER_CALLS], 1) == 1 && TP_KIND == TP_K_HANGTIMER) {
        journal("timer-hangs");
        for (;;) nap_us(100000);
    }
}
#endif

#if TP_KIND == TP_K_HOOKS
/* Each thread's open hooked spans, to check that every end matches the last begin. */
static __thread uint32_t hook_stack[64];
static __thread uint32_t hook_depth;
static jager_site hook_site_of(const jager_span_event *ev, int which)
{
    const char *name = NULL;
    if (host->site_info(ev->site, &name, NULL, NULL) != JAGER_OK || !name) return 0;
    return strcmp(name, which ? "hook.b" : "hook.a") == 0 ? ev->site : 0;
}
static void on_begin(void *arg, const jager_span_event *ev)
{
    int which = (int)(intptr_t)arg;
    if (ev->struct_size < sizeof *ev || !hook_site_of(ev, which) || ev->duration_ns != 0) atomic_fetch_add(&values[TP_V_HOOK_BAD], 1);
    if (hook_depth < 64) hook_stack[hook_depth] = ev->span_id;
    hook_depth++;
    atomic_fetch_add(&values[which ? TP_V_HOOK_BEGIN_B : TP_V_HOOK_BEGIN_A], 1);
    /* A span begun inside a hook is recorded, but never hooked itself (no recursion). */
    if (!which) host->span_end(host->span_begin(ev->site));
}
static void on_end(void *arg, const jager_span_event *ev)
{
    int which = (int)(intptr_t)arg;
    if (!hook_site_of(ev, which) || hook_depth == 0 || (hook_depth <= 64 && hook_stack[hook_depth - 1] != ev->span_id))
        atomic_fetch_add(&values[TP_V_HOOK_BAD], 1);
    if (hook_depth) hook_depth--;
    atomic_fetch_add(&values[which ? TP_V_HOOK_END_B : TP_V_HOOK_END_A], 1);
}
static uint64_t hook_calls(void)
{
    return atomic_load(&values[TP_V_HOOK_BEGIN_A]) + atomic_load(&values[TP_V_HOOK_END_A]) +
           atomic_load(&values[TP_V_HOOK_BEGIN_B]) + atomic_load(&values[TP_V_HOOK_END_B]);
}
#endif

/* ---- callbacks ---- */
static tp_probe probe;

static jager_status tp_init(const jager_host_api *h, jager_plugin_handle *s, void **state)
{
#if TP_KIND == TP_K_MAJOR || TP_KIND == TP_K_MISMATCH || TP_KIND == TP_K_SMALL || TP_KIND == TP_K_NULLDESC
    never("init");
#endif
    host = h;
    self = s;
    *state = &probe;
    journal("init");
    atomic_store(&ticks, 0);
    atomic_store(&sink_spans_n, 0);
    atomic_store(&sink_batches_n, 0);
#if TP_KIND == TP_K_FAILINIT
    if (h->register_sink(s, &test_sink) != JAGER_OK) return JAGER_E_STATE;
    h->log(s, JAGER_DIAG_INFO, "about to fail");
    uint16_t t;
    /* A name without this plugin's prefix: the host refuses it and says why. */
    return h->register_type(s, "bad.event", NULL, 0, &t);
#elif TP_KIND == TP_K_UNSUPPORTED
    h->log(s, JAGER_DIAG_INFO, "not a Julia process");
    return JAGER_E_UNSUPPORTED;
#elif TP_KIND == TP_K_FAILREASON
    h->set_error(s, "cannot open /proc/self/stat: permission denied");
    return JAGER_E_IO;
#else
    static const jager_field_desc tick_fields[] = {{"seq", JAGER_FIELD_U64, 0}, {"payload", JAGER_FIELD_BYTES, 0}};
    static const jager_field_desc summary_fields[] = {{"ticks", JAGER_FIELD_U64, 0}};
    jager_status st = h->register_type(s, TP_NAME ".tick", tick_fields, 2, &tick_type);
    if (st == JAGER_OK) st = h->register_type(s, TP_NAME ".summary", summary_fields, 1, &summary_type);
    if (st != JAGER_OK) return st;
#if TP_KIND == TP_K_SINK || TP_KIND == TP_K_FAILSINK || TP_KIND == TP_K_HANGWRITE
    st = h->register_sink(s, &test_sink);
    if (st != JAGER_OK) return st;
#endif
    for (int i = 0; i < TP_V_COUNT; i++) atomic_store(&values[i], 0);
    probe = (tp_probe){sizeof probe, TP_TAG, h, s, tick_type, summary_type, emit_ticks, sink_spans, sink_batches, tp_value};
    return JAGER_OK;
#endif
}

static jager_status tp_start(void *state)
{
    journal("start");
#if TP_KIND == TP_K_STARTFAIL
    return JAGER_E_IO;
#else
    atomic_store(&values[TP_V_START_TID], (uint64_t)syscall(SYS_gettid));
    const char *count = host->config(self, "count");
    if (count) emit_ticks((uint32_t)strtoul(count, NULL, 10));
#if TP_KIND == TP_K_LATE || TP_KIND == TP_K_ORPHAN
    atomic_store(&worker_stop, 0);
#if TP_KIND == TP_K_ORPHAN
    /* Registered before the thread starts, which reads them. */
    jager_status os = host->timer_start(self, 1000000000u, orphan_timer_fn, NULL, &orphan_timer);
    if (os == JAGER_OK) os = host->span_hook_add(self, "orphan.site", orphan_hook_fn, NULL, NULL, &orphan_hook);
    if (os != JAGER_OK) return os;
    orphan_counter = host->counter_register(self, "items", "items", JAGER_COUNTER_MONOTONIC);
    orphan_gauge = host->counter_register(self, "level", "items", JAGER_COUNTER_GAUGE);
    if (!orphan_counter || !orphan_gauge) return JAGER_E_INVALID;
#endif
    if (pthread_create(&worker, NULL, worker_main, NULL) != 0) return JAGER_E_NOMEM;
#if TP_KIND == TP_K_ORPHAN
    pthread_detach(worker); /* the bug: nobody ever stops it */
#endif
#elif TP_KIND == TP_K_REENTER
    atomic_store(&values[TP_V_REENTER_INIT], (uint64_t)(int64_t)jager_init(NULL));
    jager_shutdown();
    atomic_store(&values[TP_V_REENTER_SHUTDOWN], strstr(jager_last_error(), "jager_shutdown: called from a plugin callback") != NULL);
#elif TP_KIND == TP_K_BADEMIT
    uint64_t one[1] = {1};
    host->emit(tick_type, 0, one, 1); /* tick has 2 fields */
    uint16_t t;
    static const jager_field_desc fd[] = {{"x", JAGER_FIELD_U64, 0}};
    (void)host->register_type(self, TP_NAME ".Bad Name", fd, 1, &t);
#elif TP_KIND == TP_K_HANG
    for (;;) nap_us(100000);
#elif TP_KIND == TP_K_SLOWSTART
    nap_us(1500000);
#elif TP_KIND == TP_K_HOOKS
    uint32_t id = 0;
    if (host->abi_minor < 3 || !host->span_hook_add) return JAGER_E_UNSUPPORTED;
    jager_status hs = host->span_hook_add(self, "hook.a", on_begin, on_end, (void *)(intptr_t)0, &id);
    if (hs != JAGER_OK) return hs;
    atomic_store(&values[TP_V_HOOK_ID_A], id);
    hs = host->span_hook_add(self, "hook.b", on_begin, on_end, (void *)(intptr_t)1, NULL);
    if (hs != JAGER_OK) return hs;
#elif TP_KIND == TP_K_TIMER || TP_KIND == TP_K_HANGTIMER
    const char *us = host->config(self, "interval_us");
    jager_status st = host->timer_start(self, (uint64_t)(us ? strtoul(us, NULL, 10) : 2000) * 1000u, on_timer, NULL, &timer_id);
    if (st != JAGER_OK) return st;
#endif
    return JAGER_OK;
#endif
}

static void tp_flush(void *state)
{
    journal("flush");
    atomic_fetch_add(&values[TP_V_FLUSHES], 1);
#if TP_KIND == TP_K_HANGFLUSH
    for (;;) nap_us(100000);
#endif
}

static void tp_stop(void *state)
{
#if TP_KIND == TP_K_OLD || TP_KIND == TP_K_STARTFAIL
    never("stop");
#endif
    journal("stop");
#if TP_KIND == TP_K_HOOKS
    /* The host removed the hooks before calling stop: this count is final. */
    atomic_store(&values[TP_V_HOOK_AT_STOP], hook_calls());
#endif
#if TP_KIND == TP_K_HANGSTOP
    for (;;) nap_us(100000);
#endif
#if TP_KIND == TP_K_TIMER
    /* The host stopped the timer before calling stop: this count is final. */
    atomic_store(&values[TP_V_TIMER_AT_STOP], atomic_load(&values[TP_V_TIMER_CALLS]));
#endif
    uint64_t f[1] = {atomic_load(&ticks)};
    host->emit(summary_type, 0, f, 1);
}

static void tp_shutdown(void *state)
{
#if TP_KIND == TP_K_OLD
    never("shutdown");
#endif
    journal("shutdown");
#if TP_KIND == TP_K_LATE
    emit_ticks(1); /* after stop: lost for certain, and counted */
    atomic_fetch_add(&values[TP_V_EMITTED], 1);
    atomic_store(&worker_stop, 1);
    pthread_join(worker, NULL);
#endif
#if TP_KIND != TP_K_ORPHAN
    host = NULL;
#endif
}

static const void *tp_get_extension(void *state, const char *id)
{
#if TP_KIND == TP_K_OLD
    never("get_extension");
#endif
    return strcmp(id, TP_PROBE_ID) == 0 ? state : NULL;
}

static const jager_option_desc tp_options[] = {
    {"count", "int", "0", "tick events to emit at start"},
    {"journal", "string", "", "file that records each callback"},
};

/* ---- descriptor ---- */

#if TP_KIND == TP_K_NEWER
/* As a plugin built against a future 1.7 header would lay it out: fields appended. */
static const struct {
    jager_plugin_descriptor d;
    void *added_in_1_7[4];
} newer = {{
    .struct_size = sizeof newer,
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = 7,
    .name = TP_NAME,
    .version = "9.9",
    .description = "built against a newer minor",
    .init = tp_init, .start = tp_start, .flush = tp_flush, .stop = tp_stop, .shutdown = tp_shutdown,
    .get_extension = tp_get_extension,
}, {(void *)1, (void *)2, (void *)3, (void *)4}};
#define TP_DESC (&newer.d)
#else
static const jager_plugin_descriptor desc = {
#if TP_KIND == TP_K_OLD
    .struct_size = offsetof(jager_plugin_descriptor, stop),
#elif TP_KIND == TP_K_SMALL
    .struct_size = offsetof(jager_plugin_descriptor, init),
#else
    .struct_size = sizeof(jager_plugin_descriptor),
#endif
#if TP_KIND == TP_K_MAJOR
    .abi_major = 2,
    .abi_minor = 3,
#else
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
#endif
#if TP_KIND == TP_K_MISMATCH
    .name = "other",
#else
    .name = TP_NAME,
#endif
    .version = "1.2.3-" TP_TAG,
    .description = "ABI test plugin (" TP_TAG ")",
#if TP_KIND != TP_K_NOINIT
    .init = tp_init,
#endif
    .start = tp_start,
    .flush = tp_flush,
    .stop = tp_stop,
    .shutdown = tp_shutdown,
    .get_extension = tp_get_extension,
    .options = tp_options,
    .noptions = 2,
#if TP_KIND == TP_K_CALLERTHREAD || TP_KIND == TP_K_SLOWSTART
    .flags = JAGER_PLUGIN_FLAG_CALLER_THREAD,
#endif
};
#define TP_DESC (&desc)
#endif

#if TP_KIND == TP_K_NOENTRY
JAGER_PLUGIN_EXPORT const jager_plugin_descriptor *jager_plugin_entry_v0(uint32_t major, uint32_t minor)
{
    return TP_DESC;
}
#elif TP_KIND == TP_K_NULLDESC
JAGER_PLUGIN_EXPORT const jager_plugin_descriptor *jager_plugin_entry(uint32_t major, uint32_t minor)
{
    (void)tp_init;
    return NULL;
}
#else
JAGER_PLUGIN_DEFINE_ENTRY(TP_DESC)
#endif
