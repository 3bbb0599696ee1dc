/* http/protobuf request bodies, built with the protobuf-c code generated at build time
 * from the official opentelemetry-proto definitions. Every message of one request comes
 * from one arena, freed after packing. */
#include <stdlib.h>
#include <string.h>

#include "opentelemetry/proto/collector/logs/v1/logs_service.pb-c.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb-c.h"
#include "otel_internal.h"

typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;
typedef Opentelemetry__Proto__Common__V1__AnyValue AnyValue;
typedef Opentelemetry__Proto__Resource__V1__Resource Resource;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope Scope;
typedef Opentelemetry__Proto__Trace__V1__Span Span;
typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;
typedef Opentelemetry__Proto__Metrics__V1__NumberDataPoint NumberDataPoint;
typedef Opentelemetry__Proto__Metrics__V1__HistogramDataPoint HistogramDataPoint;

/* A bump allocator: chunks of 256 KiB (larger requests get their own), zeroed, freed at once. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

typedef struct arena {
    chunk *head;
    int oom;
} arena;

static void *al(arena *a, size_t size)
{
    if (a->oom) return NULL;
    size = (size + 15u) & ~(size_t)15u;
    if (!size) size = 16;
    chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > (256u << 10) ? size : (256u << 10);
        chunk *n = calloc(1, sizeof *n + cap);
        if (!n) {
            a->oom = 1;
            return NULL;
        }
        n->cap = cap;
        if (c && size > (256u << 10)) { /* keep bumping the current chunk afterwards */
            n->next = c->next;
            c->next = n;
            n->used = size;
            return n->data;
        }
        n->next = c;
        a->head = c = n;
    }
    void *p = c->data + c->used;
    c->used += size;
    return p;
}

static void arena_free(arena *a)
{
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    a->head = NULL;
}

static char *dup(arena *a, const char *s, size_t n)
{
    char *p = al(a, n + 1);
    if (p) memcpy(p, s, n);
    return p ? p : (char *)"";
}

static KeyValue *kv(arena *a, const char *key, size_t klen)
{
    KeyValue *k = al(a, sizeof *k);
    AnyValue *v = al(a, sizeof *v);
    if (!k || !v) return NULL;
    opentelemetry__proto__common__v1__key_value__init(k);
    opentelemetry__proto__common__v1__any_value__init(v);
    k->key = dup(a, key, klen);
    k->value = v;
    return k;
}

static KeyValue *kv_str(arena *a, const char *key, const char *val, size_t vlen)
{
    KeyValue *k = kv(a, key, strlen(key));
    if (!k) return NULL;
    k->value->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
    k->value->string_value = dup(a, val, vlen);
    return k;
}

static KeyValue *kv_int(arena *a, const char *key, int64_t i)
{
    KeyValue *k = kv(a, key, strlen(key));
    if (!k) return NULL;
    k->value->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
    k->value->int_value = i;
    return k;
}

/* Jäger attribute list → KeyValues appended to v (room for n more), limits applied. */
static size_t attrs(arena *a, KeyValue **v, size_t at, const uint8_t *list, uint32_t len, uint32_t count_limit,
                    uint32_t len_limit, uint32_t *dropped)
{
    uint32_t off = 0;
    ot_attr x;
    while (ot_attr_next(list, len, &off, &x)) {
        if (at >= count_limit) {
            (*dropped)++;
            continue;
        }
        KeyValue *k = kv(a, x.key, x.key_len);
        if (!k) break;
        AnyValue *val = k->value;
        if (x.kind == JAGER_ATTR_STR) {
            uint32_t n = len_limit && x.value_len > len_limit ? len_limit : x.value_len;
            val->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
            val->string_value = dup(a, (const char *)x.value, n);
        } else if (x.value_len == 8 && x.kind == JAGER_ATTR_F64) {
            val->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE;
            memcpy(&val->double_value, x.value, 8);
        } else if (x.value_len == 8 && x.kind == JAGER_ATTR_BOOL) {
            int64_t b;
            memcpy(&b, x.value, 8);
            val->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
            val->bool_value = b != 0;
        } else if (x.value_len == 8) {
            val->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
            memcpy(&val->int_value, x.value, 8);
        }
        v[at++] = k;
    }
    return at;
}

static Resource *resource(ot_state *st, arena *a)
{
    Resource *r = al(a, sizeof *r);
    if (!r) return NULL;
    opentelemetry__proto__resource__v1__resource__init(r);
    const char *rank = st->host->metadata_get("mpi.rank"), *size = st->host->metadata_get("mpi.world_size");
    r->attributes = al(a, (st->cfg.nres + 2) * sizeof(KeyValue *));
    if (!r->attributes) return r;
    for (size_t i = 0; i < st->cfg.nres; i++) {
        const ot_kv *k = &st->cfg.res[i];
        KeyValue *x = k->s ? kv_str(a, k->key, k->s, strlen(k->s)) : kv_int(a, k->key, k->i);
        if (x) r->attributes[r->n_attributes++] = x;
    }
    if (rank) r->attributes[r->n_attributes++] = kv_int(a, "mpi.rank", strtoll(rank, NULL, 10));
    if (size) r->attributes[r->n_attributes++] = kv_int(a, "mpi.size", strtoll(size, NULL, 10));
    for (size_t i = 0; i < r->n_attributes; i++)
        if (!r->attributes[i]) r->n_attributes = i;
    return r;
}

static Scope *scope(ot_state *st, arena *a)
{
    Scope *s = al(a, sizeof *s);
    if (!s) return NULL;
    opentelemetry__proto__common__v1__instrumentation_scope__init(s);
    s->name = (char *)"jager";
    const char *v = st->host->metadata_get("jager.version");
    s->version = dup(a, v ? v : "", v ? strlen(v) : 0);
    return s;
}

static ProtobufCBinaryData bin(arena *a, const uint8_t *p, size_t n)
{
    ProtobufCBinaryData b = {0, NULL};
    uint8_t *c = al(a, n);
    if (c) {
        memcpy(c, p, n);
        b.len = n;
        b.data = c;
    }
    return b;
}

static int pack(const ProtobufCMessage *m, ot_buf *out)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    out->p = malloc(n + 1);
    if (!out->p) return -1;
    out->n = protobuf_c_message_pack(m, out->p);
    out->cap = n + 1;
    return out->n == n ? 0 : -1;
}

int ot_pb_spans(ot_state *st, ot_span **v, size_t n, ot_buf *out)
{
    arena a = {0};
    Opentelemetry__Proto__Collector__Trace__V1__ExportTraceServiceRequest req;
    Opentelemetry__Proto__Trace__V1__ResourceSpans rs;
    Opentelemetry__Proto__Trace__V1__ScopeSpans ss;
    opentelemetry__proto__collector__trace__v1__export_trace_service_request__init(&req);
    opentelemetry__proto__trace__v1__resource_spans__init(&rs);
    opentelemetry__proto__trace__v1__scope_spans__init(&ss);
    Opentelemetry__Proto__Trace__V1__ResourceSpans *rsp = &rs;
    Opentelemetry__Proto__Trace__V1__ScopeSpans *ssp = &ss;
    req.n_resource_spans = 1;
    req.resource_spans = &rsp;
    rs.resource = resource(st, &a);
    rs.n_scope_spans = 1;
    rs.scope_spans = &ssp;
    ss.scope = scope(st, &a);
    ss.spans = al(&a, n * sizeof(Span *));
    for (size_t i = 0; ss.spans && i < n; i++) {
        const ot_span *s = v[i];
        Span *p = al(&a, sizeof *p);
        if (!p) break;
        opentelemetry__proto__trace__v1__span__init(p);
        p->trace_id = bin(&a, s->trace_id, 16);
        p->span_id = bin(&a, s->span_id, 8);
        if (s->has_parent) p->parent_span_id = bin(&a, s->parent, 8);
        if (st->tracestate) p->trace_state = st->tracestate;
        p->name = (char *)s->name;
        p->kind = s->root ? OPENTELEMETRY__PROTO__TRACE__V1__SPAN__SPAN_KIND__SPAN_KIND_SERVER
                          : OPENTELEMETRY__PROTO__TRACE__V1__SPAN__SPAN_KIND__SPAN_KIND_INTERNAL;
        p->start_time_unix_nano = s->start;
        p->end_time_unix_nano = s->end;
        uint32_t lim = st->cfg.attr_count[0];
        p->attributes = al(&a, ((size_t)s->nattrs + 4) * sizeof(KeyValue *));
        if (p->attributes) {
            size_t k = 0;
            if (!s->root) {
                /* The plugin's own attributes come first and obey the same limits: one over
                 * the count limit is counted as dropped, the file path cut to the length limit. */
                uint32_t *dr = &p->dropped_attributes_count, vl = st->cfg.attr_len[0];
                size_t fl = s->file ? strlen(s->file) : 0;
                if (vl && fl > vl) fl = vl;
                if (s->file) k < lim ? (void)(p->attributes[k++] = kv_str(&a, "code.file.path", s->file, fl)) : (void)(*dr)++;
                if (s->line) k < lim ? (void)(p->attributes[k++] = kv_int(&a, "code.line.number", s->line)) : (void)(*dr)++;
                k < lim ? (void)(p->attributes[k++] = kv_int(&a, "thread.id", (int64_t)s->os_tid)) : (void)(*dr)++;
                if (s->task) k < lim ? (void)(p->attributes[k++] = kv_int(&a, "jager.task.id", (int64_t)s->task)) : (void)(*dr)++;
            }
            if (s->attrs) k = attrs(&a, p->attributes, k, s->attrs, s->attrs_len, lim, st->cfg.attr_len[0], &p->dropped_attributes_count);
            p->n_attributes = k;
            for (size_t j = 0; j < k; j++)
                if (!p->attributes[j]) p->n_attributes = j;
        }
        if (s->failed) {
            Opentelemetry__Proto__Trace__V1__Status *stt = al(&a, sizeof *stt);
            Opentelemetry__Proto__Trace__V1__Span__Event *ev = al(&a, sizeof *ev);
            Opentelemetry__Proto__Trace__V1__Span__Event **evs = al(&a, sizeof *evs);
            KeyValue **ea = al(&a, sizeof *ea);
            if (stt && ev && evs && ea) {
                opentelemetry__proto__trace__v1__status__init(stt);
                stt->code = OPENTELEMETRY__PROTO__TRACE__V1__STATUS__STATUS_CODE__STATUS_CODE_ERROR;
                stt->message = s->error ? s->error : (char *)"";
                p->status = stt;
                opentelemetry__proto__trace__v1__span__event__init(ev);
                ev->name = (char *)"exception";
                ev->time_unix_nano = s->error_time;
                ea[0] = kv_str(&a, "exception.message", s->error ? s->error : "", s->error ? strlen(s->error) : 0);
                ev->attributes = ea;
                ev->n_attributes = ea[0] ? 1 : 0;
                evs[0] = ev;
                p->events = evs;
                p->n_events = 1;
            }
        }
        ss.spans[ss.n_spans++] = p;
    }
    int rc = a.oom || ss.n_spans != n ? -1 : pack(&req.base, out);
    arena_free(&a);
    return rc;
}

int ot_pb_logs(ot_state *st, ot_log **v, size_t n, ot_buf *out)
{
    arena a = {0};
    Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceRequest req;
    Opentelemetry__Proto__Logs__V1__ResourceLogs rl;
    Opentelemetry__Proto__Logs__V1__ScopeLogs sl;
    opentelemetry__proto__collector__logs__v1__export_logs_service_request__init(&req);
    opentelemetry__proto__logs__v1__resource_logs__init(&rl);
    opentelemetry__proto__logs__v1__scope_logs__init(&sl);
    Opentelemetry__Proto__Logs__V1__ResourceLogs *rlp = &rl;
    Opentelemetry__Proto__Logs__V1__ScopeLogs *slp = &sl;
    req.n_resource_logs = 1;
    req.resource_logs = &rlp;
    rl.resource = resource(st, &a);
    rl.n_scope_logs = 1;
    rl.scope_logs = &slp;
    sl.scope = scope(st, &a);
    sl.log_records = al(&a, n * sizeof(void *));
    for (size_t i = 0; sl.log_records && i < n; i++) {
        const ot_log *l = v[i];
        Opentelemetry__Proto__Logs__V1__LogRecord *r = al(&a, sizeof *r);
        AnyValue *body = al(&a, sizeof *body);
        if (!r || !body) break;
        opentelemetry__proto__logs__v1__log_record__init(r);
        opentelemetry__proto__common__v1__any_value__init(body);
        r->time_unix_nano = l->time;
        r->observed_time_unix_nano = l->time;
        r->severity_number = (Opentelemetry__Proto__Logs__V1__SeverityNumber)l->severity;
        r->severity_text = (char *)ot_severity_text(l->severity);
        body->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
        body->string_value = dup(&a, l->body, l->body_len);
        r->body = body;
        if (l->has_trace) r->trace_id = bin(&a, l->trace_id, 16), r->flags = 1;
        if (l->has_span) r->span_id = bin(&a, l->span_id, 8);
        if (l->attrs) {
            r->attributes = al(&a, ((size_t)l->nattrs + 1) * sizeof(KeyValue *));
            if (r->attributes)
                r->n_attributes = attrs(&a, r->attributes, 0, l->attrs, l->attrs_len, st->cfg.attr_count[1],
                                        st->cfg.attr_len[1], &r->dropped_attributes_count);
        }
        sl.log_records[sl.n_log_records++] = r;
    }
    int rc = a.oom || sl.n_log_records != n ? -1 : pack(&req.base, out);
    arena_free(&a);
    return rc;
}

static KeyValue **point_attrs(arena *a, const ot_point *p, size_t *n)
{
    KeyValue **v = al(a, 3 * sizeof *v);
    *n = 0;
    for (int i = 0; v && i < p->nattr; i++) {
        KeyValue *k = p->aval[i] ? kv_str(a, p->akey[i], p->aval[i], strlen(p->aval[i])) : kv_int(a, p->akey[i], p->aint[i]);
        if (k) v[(*n)++] = k;
    }
    return v;
}

int ot_pb_metrics(ot_state *st, uint64_t now_unix, ot_buf *out, uint64_t *points)
{
    ot_point *pts = NULL;
    ot_site *copies = NULL;
    size_t np = ot_points_build(st, &pts, &copies);
    *points = np;
    arena a = {0};
    Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest req;
    Opentelemetry__Proto__Metrics__V1__ResourceMetrics rm;
    Opentelemetry__Proto__Metrics__V1__ScopeMetrics sm;
    opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__init(&req);
    opentelemetry__proto__metrics__v1__resource_metrics__init(&rm);
    opentelemetry__proto__metrics__v1__scope_metrics__init(&sm);
    Opentelemetry__Proto__Metrics__V1__ResourceMetrics *rmp = &rm;
    Opentelemetry__Proto__Metrics__V1__ScopeMetrics *smp = &sm;
    req.n_resource_metrics = 1;
    req.resource_metrics = &rmp;
    rm.resource = resource(st, &a);
    rm.n_scope_metrics = 1;
    rm.scope_metrics = &smp;
    sm.scope = scope(st, &a);
    sm.metrics = al(&a, (np + 1) * sizeof(Metric *));
    char *done = al(&a, np + 1);
    uint64_t start = ot_unix(st, st->start_ns);
    for (size_t i = 0; sm.metrics && done && i < np; i++) {
        if (done[i]) continue;
        const ot_point *p0 = &pts[i];
        size_t same = 0;
        for (size_t j = i; j < np; j++) same += !done[j] && !strcmp(pts[j].name, p0->name) && pts[j].type == p0->type;
        Metric *m = al(&a, sizeof *m);
        if (!m) break;
        opentelemetry__proto__metrics__v1__metric__init(m);
        m->name = (char *)p0->name;
        m->unit = (char *)p0->unit;
        m->description = (char *)p0->desc;
        if (p0->type == 2) {
            Opentelemetry__Proto__Metrics__V1__Histogram *h = al(&a, sizeof *h);
            if (!h) break;
            opentelemetry__proto__metrics__v1__histogram__init(h);
            h->aggregation_temporality = OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
            h->data_points = al(&a, same * sizeof(HistogramDataPoint *));
            for (size_t j = i; h->data_points && j < np; j++) {
                if (done[j] || strcmp(pts[j].name, p0->name) || pts[j].type != 2) continue;
                done[j] = 1;
                const ot_site *s = pts[j].hist;
                HistogramDataPoint *d = al(&a, sizeof *d);
                if (!d) break;
                opentelemetry__proto__metrics__v1__histogram_data_point__init(d);
                d->attributes = point_attrs(&a, &pts[j], &d->n_attributes);
                d->start_time_unix_nano = start;
                d->time_unix_nano = now_unix;
                d->count = s->calls;
                d->sum = (double)s->sum_ns / 1e9;
                d->min = (double)s->min_ns / 1e9;
                d->max = (double)s->max_ns / 1e9;
                uint32_t lo = 0, hi = 0;
                while (lo < JAGER_HIST_BUCKETS && !s->hist[lo]) lo++;
                for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++)
                    if (s->hist[b]) hi = b;
                if (lo > hi) lo = hi;
                d->n_bucket_counts = hi - lo + 1;
                d->bucket_counts = al(&a, d->n_bucket_counts * sizeof(uint64_t));
                d->n_explicit_bounds = hi - lo;
                d->explicit_bounds = al(&a, (d->n_explicit_bounds + 1) * sizeof(double));
                if (!d->bucket_counts || !d->explicit_bounds) break;
                for (uint32_t b = lo; b <= hi; b++) d->bucket_counts[b - lo] = s->hist[b];
                for (uint32_t b = lo; b < hi; b++) d->explicit_bounds[b - lo] = (double)ot_bucket_lower(b + 1) / 1e9;
                h->data_points[h->n_data_points++] = d;
            }
            m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_HISTOGRAM;
            m->histogram = h;
        } else {
            NumberDataPoint **dp = al(&a, same * sizeof *dp);
            size_t nd = 0;
            for (size_t j = i; dp && j < np; j++) {
                if (done[j] || strcmp(pts[j].name, p0->name) || pts[j].type != p0->type) continue;
                done[j] = 1;
                NumberDataPoint *d = al(&a, sizeof *d);
                if (!d) break;
                opentelemetry__proto__metrics__v1__number_data_point__init(d);
                d->attributes = point_attrs(&a, &pts[j], &d->n_attributes);
                d->start_time_unix_nano = start;
                d->time_unix_nano = now_unix;
                if (pts[j].is_int) {
                    d->value_case = OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_INT;
                    d->as_int = (int64_t)pts[j].value;
                } else {
                    d->value_case = OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_DOUBLE;
                    d->as_double = pts[j].value;
                }
                dp[nd++] = d;
            }
            if (p0->type == 0) {
                Opentelemetry__Proto__Metrics__V1__Sum *s = al(&a, sizeof *s);
                if (!s) break;
                opentelemetry__proto__metrics__v1__sum__init(s);
                s->aggregation_temporality = OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
                s->is_monotonic = 1;
                s->data_points = dp;
                s->n_data_points = nd;
                m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM;
                m->sum = s;
            } else {
                Opentelemetry__Proto__Metrics__V1__Gauge *g = al(&a, sizeof *g);
                if (!g) break;
                opentelemetry__proto__metrics__v1__gauge__init(g);
                g->data_points = dp;
                g->n_data_points = nd;
                m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE;
                m->gauge = g;
            }
        }
        sm.metrics[sm.n_metrics++] = m;
    }
    int rc = a.oom || !pts ? -1 : pack(&req.base, out);
    arena_free(&a);
    ot_points_free(pts, copies);
    return rc;
}
