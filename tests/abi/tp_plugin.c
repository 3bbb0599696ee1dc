/*
 * tp_plugin.c — the ABI tests' plugins: one source built once per case with
 * TP_NAME="<name>" (the file is libjager-<name>.so), TP_KIND (which case) and TP_TAG.
 *
 * Every callback appends "<name>:<callback>" to the file named by the plugin's "journal"
 * option (JAGER_<NAME>_JOURNAL), so a test sees which callbacks ran, in which order, even
 * after the plugin was unloaded. Callbacks that must never run abort().
 */
#include <stdatomic.h>
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

#ifndef TP_TAG
#define TP_TAG TP_NAME
#endif

static const jager_host_api *host;
static jager_plugin_handle *self;

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
    return JAGER_OK;
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
#else
    static const jager_field_desc tick_fields[] = {{"seq", JAGER_FIELD_U64, 0}, {"payload", JAGER_FIELD_BYTES, 0}};
    static const jager_field_desc summary_fields[] = {{"ticks", JAGER_FIELD_U64, 0}};
    jager_status st = h->register_type(s, TP_NAME ".tick", tick_fields, 2, &tick_type);
    if (st == JAGER_OK) st = h->register_type(s, TP_NAME ".summary", summary_fields, 1, &summary_type);
    if (st != JAGER_OK) return st;
#if TP_KIND == TP_K_SINK
    st = h->register_sink(s, &test_sink);
    if (st != JAGER_OK) return st;
#endif
    probe = (tp_probe){sizeof probe, TP_TAG, h, s, tick_type, summary_type, emit_ticks, sink_spans, sink_batches};
    return JAGER_OK;
#endif
}

static jager_status tp_start(void *state)
{
    journal("start");
#if TP_KIND == TP_K_STARTFAIL
    return JAGER_E_IO;
#else
    const char *count = host->config(self, "count");
    if (count) emit_ticks((uint32_t)strtoul(count, NULL, 10));
    return JAGER_OK;
#endif
}

static void tp_flush(void *state) { journal("flush"); }

static void tp_stop(void *state)
{
#if TP_KIND == TP_K_OLD || TP_KIND == TP_K_STARTFAIL
    never("stop");
#endif
    journal("stop");
    uint64_t f[1] = {atomic_load(&ticks)};
    host->emit(summary_type, 0, f, 1);
}

static void tp_shutdown(void *state)
{
#if TP_KIND == TP_K_OLD
    never("shutdown");
#endif
    journal("shutdown");
    host = NULL;
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
