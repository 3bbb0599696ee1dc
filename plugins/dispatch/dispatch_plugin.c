/* dispatch_plugin.c — the dispatch plugin's descriptor: event types, options, the summary
 * written at stop, and the "jager.dispatch/1" extension.
 *
 * The plugin observes nothing by itself; a language binding feeds it through the
 * extension (see jager_dispatch.h). Its value is the bookkeeping: per-site signature
 * diversity with exact counts and per-method specialization growth, written into the
 * recording as self-describing events (docs/event-types.md, "dispatch" section). */
#include <stdlib.h>
#include <string.h>

#include "dispatch_internal.h"

#define DP_DEFAULT_MAX_SIGNATURES 1000000u
#define DP_DEFAULT_MAX_METHODS 1000000u
#define DP_STRING_MAX 4096u

static const jager_field_desc dp_signature_fields[] = {
    {"site", JAGER_FIELD_SITE, 0},
    {"signature", JAGER_FIELD_STRING, 0},
    {"calls", JAGER_FIELD_U64, 0},
    {"distinct", JAGER_FIELD_U64, 0}, /* signatures seen at the site so far */
    {"final", JAGER_FIELD_BOOL, 0},   /* 1: the summary record written at stop */
};
static const jager_field_desc dp_compile_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
    {"inference_ns", JAGER_FIELD_DURATION_NS, 0},
    {"signature", JAGER_FIELD_STRING, 0},
};
static const jager_field_desc dp_specializations_fields[] = {
    {"method", JAGER_FIELD_STRING, 0},
    {"count", JAGER_FIELD_U64, 0},
    {"file", JAGER_FIELD_STRING, 0},
    {"line", JAGER_FIELD_U64, 0},
    {"previous", JAGER_FIELD_U64, 0},    /* count at the previous census that changed it, 0 first */
    {"censuses", JAGER_FIELD_U64, 0},    /* censuses of this method so far */
    {"first_count", JAGER_FIELD_U64, 0}, /* count at the first census */
    {"first_ns", JAGER_FIELD_TIME_NS, 0},/* time of the first census */
    {"final", JAGER_FIELD_BOOL, 0},
};
static const jager_field_desc dp_instability_fields[] = {
    {"site", JAGER_FIELD_SITE, 0},
    {"signature", JAGER_FIELD_STRING, 0},
    {"flags", JAGER_FIELD_U64, 0},
    {"reason", JAGER_FIELD_STRING, 0},
    {"chain", JAGER_FIELD_STRING, 0},
};
static const jager_field_desc dp_summary_fields[] = {
    {"sites", JAGER_FIELD_U64, 0},
    {"signatures", JAGER_FIELD_U64, 0},
    {"polymorphic_sites", JAGER_FIELD_U64, 0},
    {"methods", JAGER_FIELD_U64, 0},
    {"specializations", JAGER_FIELD_U64, 0},
    {"compiles", JAGER_FIELD_U64, 0},
    {"codegen_ns", JAGER_FIELD_DURATION_NS, 0},
    {"inference_ns", JAGER_FIELD_DURATION_NS, 0},
    {"unstable", JAGER_FIELD_U64, 0},
    {"rejected", JAGER_FIELD_U64, 0},
};

#define DP_N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static const jager_option_desc dp_options[] = {
    {"max_signatures", "int", "1000000", "(site, signature) pairs kept; later new pairs are refused and counted"},
    {"max_methods", "int", "1000000", "methods whose specializations are tracked"},
};

/* A positive integer option, else the default (a malformed value is reported). */
static uint64_t dp_option_u64(const jager_host_api *host, jager_plugin_handle *self, const char *key,
                              uint64_t def)
{
    const char *v = host->config(self, key);
    if (!v || !v[0])
        return def;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end != '\0' || x == 0 || v[0] == '-') {
        host->log(self, JAGER_DIAG_WARN, "malformed max_* option (want a positive integer); using the default");
        return def;
    }
    return x;
}

static jager_status dp_register_types(dp_state *s)
{
    const jager_host_api *h = s->host;
    jager_status st = h->register_type(s->self, "dispatch.signature", dp_signature_fields,
                                       DP_N(dp_signature_fields), &s->types.signature);
    if (st == JAGER_OK)
        st = h->register_type(s->self, "dispatch.compile", dp_compile_fields, DP_N(dp_compile_fields),
                              &s->types.compile);
    if (st == JAGER_OK)
        st = h->register_type(s->self, "dispatch.specializations", dp_specializations_fields,
                              DP_N(dp_specializations_fields), &s->types.specializations);
    if (st == JAGER_OK)
        st = h->register_type(s->self, "dispatch.instability", dp_instability_fields,
                              DP_N(dp_instability_fields), &s->types.instability);
    if (st == JAGER_OK)
        st = h->register_type(s->self, "dispatch.summary", dp_summary_fields, DP_N(dp_summary_fields),
                              &s->types.summary);
    return st;
}

static jager_status dp_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    /* Every function used is from ABI 1.0; a host table shorter than that is not a 1.x core. */
    if (!host || host->struct_size < offsetof(jager_host_api, open_sites) + sizeof(void *))
        return JAGER_E_ABI;
    dp_state *s = calloc(1, sizeof *s);
    if (!s)
        return JAGER_E_NOMEM;
    s->host = host;
    s->self = self;
    s->sigs.elem = sizeof(dp_sig);
    s->sites.elem = sizeof(dp_site);
    s->methods.elem = sizeof(dp_method);
    s->string_max = DP_STRING_MAX;
    s->max_signatures = dp_option_u64(host, self, "max_signatures", DP_DEFAULT_MAX_SIGNATURES);
    s->max_methods = dp_option_u64(host, self, "max_methods", DP_DEFAULT_MAX_METHODS);
    jager_status st = dp_register_types(s);
    if (st != JAGER_OK)
        goto fail_types;

    pthread_mutex_lock(&dp_lock);
    if (dp_global) { /* a second copy in one process: the first one owns the extension */
        pthread_mutex_unlock(&dp_lock);
        host->log(self, JAGER_DIAG_WARN, "already loaded in this process; this copy steps aside");
        st = JAGER_E_UNSUPPORTED;
        goto fail_types;
    }
    dp_global = s;
    pthread_mutex_unlock(&dp_lock);
    *state = s;
    return JAGER_OK;

fail_types:
    free(s);
    return st;
}

/* The summary at stop: every (site, signature) with its exact count, every method with
 * its last count and growth, and one dispatch.summary record. */
static void dp_stop(void *state)
{
    pthread_mutex_lock(&dp_lock);
    dp_state *s = state;
    if (s != dp_global || s->stopped)
        goto out;
    s->stopped = 1;
    const jager_host_api *h = s->host;
    uint64_t polymorphic = 0, specializations = 0;
    for (size_t i = 0; i < s->sigs.n; i++) {
        const dp_sig *e = dp_vec_at(&s->sigs, i);
        uint32_t idx = 0;
        uint64_t distinct = 0;
        if (dp_map_find(&s->site_map, e->site, &idx))
            distinct = ((dp_site *)dp_vec_at(&s->sites, idx))->distinct;
        uint64_t f[5] = {e->site, e->sig, e->calls, distinct, 1};
        h->emit(s->types.signature, 0, f, 5);
    }
    for (size_t i = 0; i < s->sites.n; i++)
        polymorphic += ((dp_site *)dp_vec_at(&s->sites, i))->distinct >= 2;
    for (size_t i = 0; i < s->methods.n; i++) {
        const dp_method *m = dp_vec_at(&s->methods, i);
        specializations += m->count;
        uint64_t f[9] = {m->name, m->count, m->file, m->line, m->count, m->censuses, m->first_count,
                         m->first_ns, 1};
        h->emit(s->types.specializations, 0, f, 9);
    }
    uint64_t f[10] = {s->sites.n,  s->sigs.n,          polymorphic,     s->methods.n,      specializations,
                      s->compiles, s->codegen_ns,      s->inference_ns, s->unstable_count, s->rejected};
    h->emit(s->types.summary, 0, f, 10);
out:
    pthread_mutex_unlock(&dp_lock);
}

static void dp_shutdown(void *state)
{
    pthread_mutex_lock(&dp_lock);
    dp_state *s = state;
    if (s == dp_global)
        dp_global = NULL;
    pthread_mutex_unlock(&dp_lock);
    if (!s)
        return;
    dp_state_clear(s);
    free(s);
}

static const void *dp_get_extension(void *state, const char *id)
{
    (void)state;
    if (id && strcmp(id, JAGER_DISPATCH_EXTENSION_ID) == 0)
        return dp_api_table();
    return NULL;
}

static const jager_plugin_descriptor dp_descriptor = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "dispatch",
    .version = "1.0.0",
    .description = "Julia dispatch telemetry: signatures per call site, compile events, specialization growth, "
                   "type-instability verdicts (fed by the Julia binding through \"" JAGER_DISPATCH_EXTENSION_ID "\")",
    .init = dp_init,
    .stop = dp_stop,
    .shutdown = dp_shutdown,
    .get_extension = dp_get_extension,
    .options = dp_options,
    .noptions = DP_N(dp_options),
    .flags = JAGER_PLUGIN_FLAG_CALLER_THREAD, /* its runtime is called from the program's thread */
};

JAGER_PLUGIN_DEFINE_ENTRY(&dp_descriptor)
