/*
 * example.c — a complete Jäger plugin, built out of tree against the installed SDK.
 *
 * "example" counts the spans of every site with a sink of its own and, when recording
 * stops, emits one "example.site_calls" event per site (site, calls) into the recording.
 * Option "min_calls" (JAGER_EXAMPLE_MIN_CALLS, default 1): sites with fewer calls are left
 * out of the summary.
 *
 * It shows each part of the ABI a plugin uses: the entry point and descriptor, init with
 * the host API, a self-describing event type, a sink on the collector thread, an option
 * read through host->config, diagnostics through host->log, and a summary emitted in stop.
 * It includes only <jager_plugin.h> and links nothing from Jäger: every service comes
 * through the host table, so the plugin works in any process that loaded the core.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jager_plugin.h>

#if JAGER_PLUGIN_ABI_MAJOR != 1
#error "this plugin is written for plugin ABI 1.x"
#endif

/* Everything the plugin owns, allocated in init and freed in shutdown. */
typedef struct example {
    const jager_host_api *host;
    jager_plugin_handle *self;
    uint16_t site_calls_type; /* "example.site_calls" */
    uint64_t min_calls;
    /* Span counts by site id. The sink (collector thread) writes them, stop (the thread
     * calling jager_shutdown) reads them: the mutex orders the two. */
    pthread_mutex_t lock;
    uint64_t *calls;
    size_t ncalls;
    int out_of_memory; /* set by the sink, reported by stop (a sink must not emit) */
} example;

/* ---- the sink: runs on the collector thread, once per drained batch ---- */

/* Grow the table to hold \p site; 0 on out of memory. Called with the lock held. */
static int ensure_site(example *ex, uint32_t site)
{
    if (site < ex->ncalls) return 1;
    size_t n = ex->ncalls ? ex->ncalls : 64;
    while (n <= site) n *= 2;
    uint64_t *c = realloc(ex->calls, n * sizeof *c);
    if (!c) return 0;
    memset(c + ex->ncalls, 0, (n - ex->ncalls) * sizeof *c);
    ex->calls = c;
    ex->ncalls = n;
    return 1;
}

static jager_status example_write(void *ctx, const jager_batch *batch)
{
    example *ex = ctx;
    pthread_mutex_lock(&ex->lock);
    /* Records are back to back; a record's size is words * 8 bytes. */
    for (size_t off = 0; off + sizeof(jager_record) <= batch->bytes;) {
        const jager_record *r = (const jager_record *)(batch->data + off);
        if (r->words == 0) break; /* never happens in a well-formed batch; do not loop */
        off += (size_t)r->words * 8u;
        if (r->type != JAGER_EV_SPAN) continue;
        if (!ensure_site(ex, r->aux)) {
            ex->out_of_memory = 1;
            continue;
        }
        ex->calls[r->aux]++;
    }
    pthread_mutex_unlock(&ex->lock);
    return JAGER_OK;
}

/* ---- callbacks ---- */

static jager_status example_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    /* A field added after 1.0 would be checked against host->struct_size before use; the
     * 1.0 fields used here are always present. */
    static const jager_field_desc fields[] = {
        {"site", JAGER_FIELD_SITE, 0},
        {"calls", JAGER_FIELD_U64, 0},
    };
    example *ex = calloc(1, sizeof *ex);
    if (!ex) return JAGER_E_NOMEM;
    ex->host = host;
    ex->self = self;
    ex->min_calls = 1;
    pthread_mutex_init(&ex->lock, NULL);

    const char *opt = host->config(self, "min_calls");
    if (opt) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(opt, &end, 10);
        if (errno || end == opt || *end || opt[0] == '-') {
            char msg[160];
            snprintf(msg, sizeof msg, "JAGER_EXAMPLE_MIN_CALLS=\"%.40s\" is not a count; using 1", opt);
            host->log(self, JAGER_DIAG_WARN, msg);
        } else {
            ex->min_calls = v;
        }
    }

    jager_status st = host->register_type(self, "example.site_calls", fields, 2, &ex->site_calls_type);
    if (st != JAGER_OK) goto free_state;

    jager_sink sink = {
        .struct_size = sizeof sink,
        .name = "example",
        .ctx = ex,
        .write = example_write,
    };
    /* Sinks are registered from init (or start); the host copies the struct. */
    if ((st = host->register_sink(self, &sink)) != JAGER_OK) goto free_state;

    *state = ex;
    return JAGER_OK;

free_state:
    /* A failed init cleans up itself: the host calls no other callback. */
    pthread_mutex_destroy(&ex->lock);
    free(ex);
    return st;
}

/* Recording stops: every event recorded so far has reached the sink (the host drains
 * before calling stop), and events emitted here still reach the recording. */
static void example_stop(void *state)
{
    example *ex = state;
    uint32_t emitted = 0;
    pthread_mutex_lock(&ex->lock);
    for (size_t site = 1; site < ex->ncalls; site++) {
        if (ex->calls[site] == 0 || ex->calls[site] < ex->min_calls) continue;
        uint64_t f[2] = {site, ex->calls[site]};
        ex->host->emit(ex->site_calls_type, 0, f, 2);
        emitted++;
    }
    int oom = ex->out_of_memory;
    pthread_mutex_unlock(&ex->lock);
    char msg[96];
    snprintf(msg, sizeof msg, "%u site summaries", emitted);
    ex->host->log(ex->self, JAGER_DIAG_DEBUG, msg);
    if (oom) ex->host->log(ex->self, JAGER_DIAG_WARN, "out of memory while counting: some spans were not counted");
}

static void example_shutdown(void *state)
{
    example *ex = state;
    pthread_mutex_destroy(&ex->lock);
    free(ex->calls);
    free(ex);
}

/* ---- descriptor and entry point ---- */

static const jager_option_desc example_options[] = {
    {"min_calls", "int", "1", "leave sites with fewer calls out of the summary"},
};

static const jager_plugin_descriptor example_descriptor = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "example", /* the file must be libjager-example.so */
    .version = "1.0.0",
    .description = "counts spans per site and writes example.site_calls at stop",
    .init = example_init,
    .stop = example_stop,
    .shutdown = example_shutdown,
    .options = example_options,
    .noptions = sizeof example_options / sizeof example_options[0],
};

JAGER_PLUGIN_DEFINE_ENTRY(&example_descriptor)
