/* Configuration from the standard OTEL_* variables (and the plugin's JAGER_OTEL_* options),
 * and the resource attributes. A malformed value gets one clear message and the default. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "otel_internal.h"

/* Messages already given during this load: a generic variable read for each of the three
 * signals is reported once. */
static uint64_t warned[64];
static unsigned nwarned;

static void warn(ot_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(ot_state *st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uint64_t h = 1469598103934665603ull;
    for (const char *p = msg; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    for (unsigned i = 0; i < nwarned; i++)
        if (warned[i] == h) return;
    if (nwarned < sizeof warned / sizeof warned[0]) warned[nwarned++] = h;
    st->host->log(st->self, JAGER_DIAG_WARN, msg);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A non-negative integer (no sign, no suffix) within [lo, hi]; else the default and a message. */
static uint64_t num_value(ot_state *st, const char *name, const char *v, uint64_t def, uint64_t lo, uint64_t hi)
{
    if (!v) return def;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    while (end && isspace((unsigned char)*end)) end++;
    if (!isdigit((unsigned char)v[0]) || errno || !end || *end || x < lo || x > hi) {
        warn(st, "%s=\"%s\" is not an integer in [%llu, %llu]; using the default %llu", name, v,
             (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)def);
        return def;
    }
    return x;
}

static uint64_t num(ot_state *st, const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    return num_value(st, name, env(name), def, lo, hi);
}

static uint64_t opt(ot_state *st, const char *key, const char *shown, uint64_t def, uint64_t lo, uint64_t hi)
{
    return num_value(st, shown, st->host->config(st->self, key), def, lo, hi);
}

/* Percent-decoding for OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES values. */
static char *decode(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    char *o = malloc(n + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2])) {
            char h[3] = {s[i + 1], s[i + 2], 0};
            o[k++] = (char)strtol(h, NULL, 16);
            i += 2;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = 0;
    return o;
}

/* "k=v,k2=v2": calls fn for each pair; a pair without '=' is reported and skipped. */
static void pairs(ot_state *st, const char *name, const char *v, void (*fn)(ot_state *, void *, char *, char *), void *arg)
{
    if (!v) return;
    const char *p = v;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq || eq == p) {
            if (n) warn(st, "%s: \"%.*s\" is not key=value; ignored", name, (int)n, p);
        } else {
            char *k = decode(p, (size_t)(eq - p)), *val = decode(eq + 1, n - (size_t)(eq - p) - 1);
            if (k && val && *k) fn(st, arg, k, val);
            else free(k), free(val);
        }
        if (!e) break;
        p = e + 1;
    }
}

static void add_header(ot_state *st, void *arg, char *k, char *v)
{
    (void)st;
    ot_endpoint *ep = arg;
    /* The signal's own headers are read first: a generic one of the same name (HTTP field
     * names are case-insensitive) is left out, not sent twice. */
    size_t kl = strlen(k);
    for (size_t i = 0; i < ep->nheaders; i++)
        if (!strncasecmp(ep->headers[i], k, kl) && ep->headers[i][kl] == ':') {
            free(k);
            free(v);
            return;
        }
    char **h = realloc(ep->headers, (ep->nheaders + 1) * sizeof *h);
    if (h) {
        ep->headers = h;
        size_t n = strlen(k) + strlen(v) + 3;
        char *line = malloc(n);
        if (line) {
            snprintf(line, n, "%s: %s", k, v);
            h[ep->nheaders++] = line;
        }
    }
    free(k);
    free(v);
}

static void res_put(ot_state *st, const char *k, const char *s, int64_t i)
{
    ot_config *c = &st->cfg;
    for (size_t j = 0; j < c->nres; j++)
        if (!strcmp(c->res[j].key, k)) {
            free(c->res[j].s);
            c->res[j].s = s ? strdup(s) : NULL;
            c->res[j].i = i;
            return;
        }
    ot_kv *r = realloc(c->res, (c->nres + 1) * sizeof *r);
    if (!r) return;
    c->res = r;
    r[c->nres].key = strdup(k);
    r[c->nres].s = s ? strdup(s) : NULL;
    r[c->nres].i = i;
    if (r[c->nres].key) c->nres++;
}

static void add_res(ot_state *st, void *arg, char *k, char *v)
{
    (void)arg;
    res_put(st, k, v, 0);
    free(k);
    free(v);
}

static const char *const sig_env[OT_NSIG] = {"TRACES", "LOGS", "METRICS"};
static const char *const sig_path[OT_NSIG] = {"v1/traces", "v1/logs", "v1/metrics"};

static void endpoint(ot_state *st, int sig)
{
    ot_endpoint *ep = &st->cfg.ep[sig];
    char name[96];
    /* Endpoint: the signal's own is used as is; the generic one gets /v1/<signal>. */
    snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_%s_ENDPOINT", sig_env[sig]);
    const char *own = env(name), *gen = env("OTEL_EXPORTER_OTLP_ENDPOINT");
    if (own) {
        ep->url = strdup(own);
    } else {
        const char *base = gen ? gen : "http://localhost:4318";
        size_t n = strlen(base) + 16;
        ep->url = malloc(n);
        if (ep->url) snprintf(ep->url, n, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", sig_path[sig]);
    }
    if (ep->url && strncmp(ep->url, "http://", 7) && strncmp(ep->url, "https://", 8))
        warn(st, "%s endpoint \"%s\" is not an http:// or https:// URL; exports will fail", sig_env[sig], ep->url);

    snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_%s_HEADERS", sig_env[sig]);
    pairs(st, name, env(name), add_header, ep);
    pairs(st, "OTEL_EXPORTER_OTLP_HEADERS", env("OTEL_EXPORTER_OTLP_HEADERS"), add_header, ep);

    snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_%s_TIMEOUT", sig_env[sig]);
    ep->timeout_ms = num(st, "OTEL_EXPORTER_OTLP_TIMEOUT", 10000, 1, 86400000);
    ep->timeout_ms = num(st, name, ep->timeout_ms, 1, 86400000);

    snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_%s_COMPRESSION", sig_env[sig]);
    const char *cmp = env(name) ? env(name) : env("OTEL_EXPORTER_OTLP_COMPRESSION");
    const char *cn = env(name) ? name : "OTEL_EXPORTER_OTLP_COMPRESSION";
    if (cmp && !strcmp(cmp, "gzip")) ep->gzip = 1;
    else if (cmp && strcmp(cmp, "none")) warn(st, "%s=\"%s\": use gzip or none; sending uncompressed", cn, cmp);

    snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_%s_PROTOCOL", sig_env[sig]);
    const char *pr = env(name) ? env(name) : env("OTEL_EXPORTER_OTLP_PROTOCOL");
    const char *pn = env(name) ? name : "OTEL_EXPORTER_OTLP_PROTOCOL";
    ep->protocol = OT_PROTO_PB;
    if (pr && !strcmp(pr, "http/json")) ep->protocol = OT_PROTO_JSON;
    else if (pr && !strcmp(pr, "grpc"))
        warn(st, "%s=grpc: OTLP/gRPC is not supported by this plugin; using http/protobuf", pn);
    else if (pr && strcmp(pr, "http/protobuf"))
        warn(st, "%s=\"%s\": use http/protobuf or http/json; using http/protobuf", pn, pr);
}

static void resource(ot_state *st)
{
    const jager_host_api *h = st->host;
    pairs(st, "OTEL_RESOURCE_ATTRIBUTES", env("OTEL_RESOURCE_ATTRIBUTES"), add_res, NULL);
    const char *sn = env("OTEL_SERVICE_NAME");
    if (sn) {
        res_put(st, "service.name", sn, 0);
    } else {
        int have = 0;
        for (size_t i = 0; i < st->cfg.nres; i++) have |= !strcmp(st->cfg.res[i].key, "service.name");
        if (!have) {
            char exe[512] = "", name[600];
            ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
            if (n > 0) exe[n] = 0;
            const char *base = strrchr(exe, '/');
            snprintf(name, sizeof name, "unknown_service:%s", base ? base + 1 : exe);
            res_put(st, "service.name", name, 0);
        }
    }
    const char *v;
    if ((v = h->metadata_get("host.name"))) res_put(st, "host.name", v, 0);
    if ((v = h->metadata_get("process.pid"))) res_put(st, "process.pid", NULL, strtoll(v, NULL, 10));
    if ((v = h->metadata_get("process.command_line"))) res_put(st, "process.command_line", v, 0);
    res_put(st, "telemetry.sdk.name", "jager", 0);
    res_put(st, "telemetry.sdk.language", "c", 0);
    if ((v = h->metadata_get("jager.version"))) res_put(st, "telemetry.sdk.version", v, 0);
    static const char *const jobs[][2] = {{"SLURM_JOB_ID", "slurm.job.id"}, {"SLURM_ARRAY_TASK_ID", "slurm.array.task.id"},
                                          {"PBS_JOBID", "pbs.job.id"}, {"LSB_JOBID", "lsf.job.id"},
                                          {"FLUX_JOB_ID", "flux.job.id"}};
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
        if ((v = env(jobs[i][0]))) res_put(st, jobs[i][1], v, 0);
}

void ot_config_load(ot_state *st)
{
    ot_config *c = &st->cfg;
    memset(c, 0, sizeof *c);
    nwarned = 0;
    const char *d = env("OTEL_SDK_DISABLED");
    if (d && !strcasecmp(d, "true")) c->disabled = 1;
    else if (d && strcasecmp(d, "false")) warn(st, "OTEL_SDK_DISABLED=\"%s\": use true or false; the plugin stays enabled", d);
    for (int s = 0; s < OT_NSIG; s++) endpoint(st, s);
    c->delay_ms[0] = num(st, "OTEL_BSP_SCHEDULE_DELAY", 5000, 1, 86400000);
    c->bsp_export_timeout_ms[0] = num(st, "OTEL_BSP_EXPORT_TIMEOUT", 30000, 1, 86400000);
    c->queue_cap[0] = (uint32_t)num(st, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1, 1u << 24);
    c->batch[0] = (uint32_t)num(st, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1, 1u << 24);
    c->delay_ms[1] = num(st, "OTEL_BLRP_SCHEDULE_DELAY", 1000, 1, 86400000);
    c->bsp_export_timeout_ms[1] = num(st, "OTEL_BLRP_EXPORT_TIMEOUT", 30000, 1, 86400000);
    c->queue_cap[1] = (uint32_t)num(st, "OTEL_BLRP_MAX_QUEUE_SIZE", 2048, 1, 1u << 24);
    c->batch[1] = (uint32_t)num(st, "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", 512, 1, 1u << 24);
    for (int i = 0; i < 2; i++)
        if (c->batch[i] > c->queue_cap[i]) {
            warn(st, "%s export batch size %u exceeds the queue size %u; using %u", i ? "OTEL_BLRP" : "OTEL_BSP",
                 c->batch[i], c->queue_cap[i], c->queue_cap[i]);
            c->batch[i] = c->queue_cap[i];
        }
    c->metric_interval_ms = num(st, "OTEL_METRIC_EXPORT_INTERVAL", 60000, 1, 86400000);
    c->metric_timeout_ms = num(st, "OTEL_METRIC_EXPORT_TIMEOUT", 30000, 1, 86400000);
    uint64_t cnt = num(st, "OTEL_ATTRIBUTE_COUNT_LIMIT", 128, 0, 65535);
    uint64_t len = num(st, "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", 0, 0, 1u << 30);
    c->attr_count[0] = (uint32_t)num(st, "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", cnt, 0, 65535);
    c->attr_len[0] = (uint32_t)num(st, "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", len, 0, 1u << 30);
    c->attr_count[1] = (uint32_t)num(st, "OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT", cnt, 0, 65535);
    c->attr_len[1] = (uint32_t)num(st, "OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT", len, 0, 1u << 30);
    c->site_rate = (uint32_t)opt(st, "site_rate", "JAGER_OTEL_SITE_RATE", 1000, 0, 1u << 30);
    c->shutdown_ms = opt(st, "shutdown_timeout", "JAGER_OTEL_SHUTDOWN_TIMEOUT", 5000, 0, 600000);
    c->response_cap = (uint32_t)opt(st, "response_cap", "JAGER_OTEL_RESPONSE_CAP", 65536, 64, 1u << 24);
    c->backoff_ms = opt(st, "retry_initial_backoff", "JAGER_OTEL_RETRY_INITIAL_BACKOFF", 1000, 1, 60000);
    resource(st);
}

void ot_config_free(ot_config *c)
{
    for (int s = 0; s < OT_NSIG; s++) {
        free(c->ep[s].url);
        for (size_t i = 0; i < c->ep[s].nheaders; i++) free(c->ep[s].headers[i]);
        free(c->ep[s].headers);
    }
    for (size_t i = 0; i < c->nres; i++) free(c->res[i].key), free(c->res[i].s);
    free(c->res);
    memset(c, 0, sizeof *c);
}
