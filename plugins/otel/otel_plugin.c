/* The otel plugin: OTLP/HTTP export of Jäger's spans, logs and per-site metrics.
 *
 * init   reads the OTEL_* configuration, sets up the trace (a child of TRACEPARENT when
 *        set), registers the sink and the otel.export event type;
 * start  starts the exporter thread;
 * stop   queues the process span, runs the bounded final flush, counts what is left as
 *        lost at shutdown, and writes every count into the recording (otel.export events);
 * shutdown frees everything. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "otel_curl.h"
#include "otel_internal.h"

static const jager_option_desc otel_options[] = {
    {"site_rate", "int", "1000", "spans exported per site and second of run time (0: every span); aggregates always"},
    {"shutdown_timeout", "duration", "5000", "ms the final flush may take at shutdown; what is left then counts as lost"},
    {"response_cap", "bytes", "65536", "bytes of an endpoint's response read; the rest is cut off"},
    {"retry_initial_backoff", "duration", "1000", "ms before the first retry (doubling, jittered) when no Retry-After"},
};

static void fill_random(void *p, size_t n)
{
    if (getrandom(p, n, 0) == (ssize_t)n) return;
    uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)p;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ((uint8_t *)p)[i] = (uint8_t)x;
    }
}

static int unhex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) return -1;
            v = v * 16 + d;
        }
        out[i] = (uint8_t)v;
    }
    return 0;
}

static int nonzero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 1;
    return 0;
}

/* TRACEPARENT (W3C level 1): version-traceid-parentid-flags, lowercase hex. */
static void parent_from_env(ot_state *st)
{
    const char *tp = getenv("TRACEPARENT");
    if (!tp || !*tp) return;
    uint8_t ver, tid[16], sid[8], fl;
    size_t n = strlen(tp);
    int ok = n >= 55 && tp[2] == '-' && tp[35] == '-' && tp[52] == '-' && !unhex(tp, &ver, 1) && ver != 0xff &&
             !unhex(tp + 3, tid, 16) && !unhex(tp + 36, sid, 8) && !unhex(tp + 53, &fl, 1) && nonzero(tid, 16) &&
             nonzero(sid, 8) && (ver ? (n == 55 || tp[55] == '-') : n == 55);
    if (!ok) {
        char msg[160];
        snprintf(msg, sizeof msg, "TRACEPARENT=\"%.60s\" is not a W3C traceparent; starting a new trace", tp);
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
        return;
    }
    memcpy(st->trace_id, tid, 16);
    memcpy(st->root_parent, sid, 8);
    st->has_root_parent = 1;
    const char *ts = getenv("TRACESTATE");
    if (ts && *ts && strlen(ts) <= 512) st->tracestate = strdup(ts);
}

/* A function of the core library that serves the host table (a plugin links no libjager),
 * or NULL (a static core that exports nothing). */
static void *core_sym(ot_state *st, const char *name)
{
    Dl_info di;
    void *fn;
    memcpy(&fn, &st->host->now_ns, sizeof fn);
    if (!dladdr(fn, &di) || !di.dli_fname) return NULL;
    void *h = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return NULL;
    void *sym = dlsym(h, name);
    dlclose(h); /* NOLOAD: the core stays mapped */
    return sym;
}

/* Make the process span the current W3C context of the thread calling jager_init(), so the
 * core's jager_context_inject() there hands peers a traceparent that makes them children of
 * this run. */
static void set_init_context(ot_state *st)
{
    void *sym = core_sym(st, "jager_context_set");
    if (!sym) return;
    void (*set)(const jager_trace_context *);
    memcpy(&set, &sym, sizeof set);
    jager_trace_context c;
    memset(&c, 0, sizeof c);
    memcpy(c.trace_id, st->trace_id, 16);
    memcpy(c.span_id, st->root_id, 8);
    c.flags = 1;
    set(&c);
}

static void meta_hex(ot_state *st, const char *key, const uint8_t *p, size_t n)
{
    char h[40];
    ot_hex(p, n, h);
    st->host->metadata_set(key, h);
}

static void state_free(ot_state *st)
{
    if (!st) return;
    for (int s = 0; s < 2; s++) {
        for (uint32_t i = 0; st->q[s] && i < st->qn[s]; i++) {
            void *it = st->q[s][(st->qhead[s] + i) % st->cfg.queue_cap[s]];
            if (s == OT_SPANS) ot_span_free(it);
            else ot_log_free(it);
        }
        free(st->q[s]);
    }
    for (size_t i = 0; i < st->nsites; i++) free(st->sites[i]);
    free(st->sites);
    free(st->rate_window);
    free(st->rate_count);
    free(st->ctrs);
    free(st->ptypes);
    free(st->tracestate);
    ot_pending_free(st);
    ot_context_free(st);
    ot_config_free(&st->cfg);
    pthread_mutex_destroy(&st->lock);
    pthread_mutex_destroy(&st->agg_lock);
    pthread_cond_destroy(&st->cond);
    free(st);
}

static jager_status otel_init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    ot_state *st = calloc(1, sizeof *st);
    if (!st) return JAGER_E_NOMEM;
    st->host = host;
    st->self = self;
    ot_attr_strings(host->string);
    pthread_mutex_init(&st->lock, NULL);
    pthread_mutex_init(&st->agg_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->cond, &ca);
    pthread_condattr_destroy(&ca);
    ot_config_load(st);
    if (st->cfg.disabled) {
        host->log(self, JAGER_DIAG_INFO, "OTEL_SDK_DISABLED=true: not exporting");
        state_free(st);
        return JAGER_E_UNSUPPORTED;
    }
    const char *a = host->metadata_get("clock.anchor_ns"), *u = host->metadata_get("clock.anchor_unix_ns");
    if (!a || !u) {
        host->log(self, JAGER_DIAG_ERROR, "the core gave no clock anchor (clock.anchor_ns); cannot place spans in Unix time");
        state_free(st);
        return JAGER_E_UNSUPPORTED;
    }
    st->anchor_ns = strtoull(a, NULL, 10);
    st->anchor_unix = strtoull(u, NULL, 10);
    do fill_random(st->trace_id, 16);
    while (!nonzero(st->trace_id, 16));
    do fill_random(st->root_id, 8);
    while (!nonzero(st->root_id, 8));
    fill_random(&st->salt, 8);
    fill_random(st->rng, sizeof st->rng);
    for (int i = 0; i < OT_NSIG; i++) st->rng[i] |= 1;
    parent_from_env(st);
    memcpy(st->own_trace_id, st->trace_id, 16);
    for (size_t i = 0; i < st->cfg.nres; i++)
        if (!strcmp(st->cfg.res[i].key, "service.name") && st->cfg.res[i].s)
            snprintf(st->root_name, sizeof st->root_name, "%s", st->cfg.res[i].s);
    if (!st->root_name[0]) snprintf(st->root_name, sizeof st->root_name, "process");
    for (int s = 0; s < 2; s++) {
        st->q[s] = calloc(st->cfg.queue_cap[s], sizeof(void *));
        if (!st->q[s]) {
            state_free(st);
            return JAGER_E_NOMEM;
        }
    }
    /* The mapping of Jäger ids to OTLP ids, so tools can join the recording and the backend. */
    meta_hex(st, "otel.trace_id", st->trace_id, 16);
    meta_hex(st, "otel.root_span_id", st->root_id, 8);
    uint8_t salt[8];
    for (int i = 0; i < 8; i++) salt[i] = (uint8_t)(st->salt >> (56 - 8 * i));
    meta_hex(st, "otel.span_id_salt", salt, 8);
    if (st->has_root_parent) meta_hex(st, "otel.parent_span_id", st->root_parent, 8);
    set_init_context(st);
    void *ss = core_sym(st, "jager_site_stats");
    if (ss) memcpy(&st->site_stats, &ss, sizeof ss);

    static const jager_field_desc f[] = {
        {"signal", JAGER_FIELD_STRING, 0},
        {"metric", JAGER_FIELD_STRING, 0},
        {"error_type", JAGER_FIELD_STRING, 0},
        {"value", JAGER_FIELD_U64, 0},
    };
    jager_status rc = host->register_type(self, "otel.export", f, 4, &st->self_type);
    if (rc != JAGER_OK) {
        state_free(st);
        return rc;
    }
    jager_sink sink = {.struct_size = sizeof sink, .name = "otel", .ctx = st, .write = ot_sink_write,
                       .flush = ot_sink_flush, .close = ot_sink_close};
    rc = host->register_sink(self, &sink);
    if (rc != JAGER_OK) {
        state_free(st);
        return rc;
    }
    *state = st;
    return JAGER_OK;
}

static int atfork_ready;
static ot_state *live; /* the state of this process's run, for the fork handler */

/* A forked child has none of the exporter threads: it exports nothing and never joins them. */
static void in_child(void)
{
    ot_state *st = live;
    if (!st) return;
    pthread_mutex_init(&st->lock, NULL);
    st->thread_started = 0;
    st->closed = 1;
    for (int s = 0; s < OT_NSIG; s++) st->curl[s] = NULL;
}

static jager_status otel_start(void *state)
{
    ot_state *st = state;
    char why[600];
    if (ot_curl_load(why, sizeof why)) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s; not exporting", why);
        st->host->log(st->self, JAGER_DIAG_ERROR, msg);
        return JAGER_E_IO;
    }
    if (!atfork_ready && !pthread_atfork(NULL, NULL, in_child)) atfork_ready = 1;
    st->start_ns = st->host->now_ns();
    live = st;
    if (ot_export_start(st)) {
        live = NULL;
        st->host->log(st->self, JAGER_DIAG_ERROR, "cannot start the exporter thread; not exporting");
        return JAGER_E_IO;
    }
    atomic_store(&st->active, 1);
    return JAGER_OK;
}

static void emit(ot_state *st, const char *sig, const char *metric, const char *err, uint64_t v)
{
    uint64_t f[4] = {st->host->intern(sig), st->host->intern(metric), st->host->intern(err), v};
    st->host->emit(st->self_type, 0, f, 4);
}

static void write_counts(ot_state *st)
{
    static const char *const sig[OT_NSIG] = {"span", "log", "metric_data_point"};
    char name[96], code[8];
    uint64_t lost_total = 0;
    char summary[512] = "";
    size_t sl = 0;
    for (int s = 0; s < OT_NSIG; s++) {
        ot_counts *c = &st->cnt[s];
        snprintf(name, sizeof name, "jager.otel.%s.seen", sig[s]);
        emit(st, sig[s], name, "", atomic_load(&c->seen));
        if (atomic_load(&c->sampled_out)) {
            snprintf(name, sizeof name, "jager.otel.%s.sampled_out", sig[s]);
            emit(st, sig[s], name, "", atomic_load(&c->sampled_out));
        }
        if (s < 2) {
            snprintf(name, sizeof name, "otel.sdk.processor.%s.processed", s ? "log" : "span");
            emit(st, sig[s], name, "", atomic_load(&c->enqueued));
            if (atomic_load(&c->queue_full)) emit(st, sig[s], name, "queue_full", atomic_load(&c->queue_full));
            if (atomic_load(&c->already_shutdown)) emit(st, sig[s], name, "already_shutdown", atomic_load(&c->already_shutdown));
            snprintf(name, sizeof name, "otel.sdk.processor.%s.queue.capacity", s ? "log" : "span");
            emit(st, sig[s], name, "", st->cfg.queue_cap[s]);
        }
        snprintf(name, sizeof name, "otel.sdk.exporter.%s.exported", sig[s]);
        emit(st, sig[s], name, "", atomic_load(&c->exported));
        static const char *const why[] = {"rejected", "timeout", "connection", "other", "shutdown"};
        uint64_t val[] = {atomic_load(&c->rejected), atomic_load(&c->timeout), atomic_load(&c->connection),
                          atomic_load(&c->other), atomic_load(&c->shutdown)};
        uint64_t lost = atomic_load(&c->queue_full) + atomic_load(&c->already_shutdown);
        for (int k = 0; k < 5; k++)
            if (val[k]) emit(st, sig[s], name, why[k], val[k]), lost += val[k];
        for (int i = 100; i < 600; i++) {
            uint64_t x = atomic_load(&c->http[i]);
            if (!x) continue;
            snprintf(code, sizeof code, "%d", i);
            emit(st, sig[s], name, code, x);
            lost += x;
        }
        snprintf(name, sizeof name, "jager.otel.%s.requests", sig[s]);
        emit(st, sig[s], name, "", atomic_load(&c->requests));
        snprintf(name, sizeof name, "jager.otel.%s.retries", sig[s]);
        emit(st, sig[s], name, "", atomic_load(&c->retries));
        if (lost && sl < sizeof summary - 64)
            sl += (size_t)snprintf(summary + sl, sizeof summary - sl, "%s%llu of %llu %ss", lost_total ? ", " : "",
                                   (unsigned long long)lost, (unsigned long long)atomic_load(&c->seen), sig[s]);
        lost_total += lost;
    }
    if (lost_total) {
        char msg[700];
        snprintf(msg, sizeof msg, "not exported: %s (by cause in the otel.export events: `jager dump`)", summary);
        st->host->log(st->self, JAGER_DIAG_WARN, msg);
    }
}

static void otel_stop(void *state)
{
    ot_state *st = state;
    ot_mpi_adopt(st); /* the collector was drained: the job's trace id, if any, is known */
    /* The process span: the root of this run's spans, a child of TRACEPARENT when set (of
     * the MPI job's root span under the mpi plugin). */
    ot_span *root = calloc(1, sizeof *root);
    atomic_fetch_add(&st->cnt[OT_SPANS].seen, 1);
    if (root) {
        memcpy(root->trace_id, st->trace_id, 16);
        memcpy(root->span_id, st->root_id, 8);
        memcpy(root->parent, st->root_parent, 8);
        root->has_parent = st->has_root_parent;
        root->start = ot_unix(st, st->start_ns);
        root->end = ot_unix(st, st->host->now_ns());
        root->name = st->root_name;
        root->root = 1;
        pthread_mutex_lock(&st->lock);
        if (st->qn[0] < st->cfg.queue_cap[0]) {
            st->q[0][(st->qhead[0] + st->qn[0]) % st->cfg.queue_cap[0]] = root;
            st->qn[0]++;
            atomic_fetch_add(&st->cnt[OT_SPANS].enqueued, 1);
            root = NULL;
        } else {
            atomic_fetch_add(&st->cnt[OT_SPANS].queue_full, 1);
        }
        pthread_mutex_unlock(&st->lock);
        free(root);
    } else {
        atomic_fetch_add(&st->cnt[OT_SPANS].other, 1);
    }
    ot_export_stop(st);
    write_counts(st);
}

static void otel_shutdown(void *state)
{
    ot_state *st = state;
    if (st->thread_started) ot_export_stop(st);
    if (live == st) live = NULL;
    state_free(st);
}

static const jager_plugin_descriptor otel_desc = {
    .struct_size = sizeof otel_desc,
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "otel",
    .version = "1.0",
    .description = "exports spans, logs and per-site metrics as OTLP/HTTP (protobuf or JSON), counting every loss",
    .init = otel_init,
    .start = otel_start,
    .stop = otel_stop,
    .shutdown = otel_shutdown,
    .options = otel_options,
    .noptions = sizeof otel_options / sizeof otel_options[0],
    /* init makes the process span the trace context of the thread calling jager_init()
     * (set_init_context): it must run on that thread. It does no I/O (the export thread
     * does), so nothing in it can hang. */
    .flags = JAGER_PLUGIN_FLAG_CALLER_THREAD,
};
JAGER_PLUGIN_DEFINE_ENTRY(&otel_desc)
