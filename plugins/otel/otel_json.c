/* http/json request bodies, per the OTLP JSON mapping: lowerCamelCase keys, trace and span
 * ids as hex strings, enums as integers, 64-bit integers as decimal strings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "otel_internal.h"

const char *ot_severity_text(uint32_t sev)
{
    static const char *const t[] = {"", "TRACE", "TRACE2", "TRACE3", "TRACE4", "DEBUG", "DEBUG2", "DEBUG3", "DEBUG4",
                                    "INFO", "INFO2", "INFO3", "INFO4", "WARN", "WARN2", "WARN3", "WARN4",
                                    "ERROR", "ERROR2", "ERROR3", "ERROR4", "FATAL", "FATAL2", "FATAL3", "FATAL4"};
    return sev < sizeof t / sizeof t[0] ? t[sev] : "";
}

static void str(ot_buf *b, const char *s, size_t n)
{
    static const char hx[] = "0123456789abcdef";
    ot_buf_put(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        ot_buf_put(b, s + run, i - run);
        run = i + 1;
        if (c == '"') ot_buf_put(b, "\\\"", 2);
        else if (c == '\\') ot_buf_put(b, "\\\\", 2);
        else if (c == '\n') ot_buf_put(b, "\\n", 2);
        else if (c == '\t') ot_buf_put(b, "\\t", 2);
        else if (c == '\r') ot_buf_put(b, "\\r", 2);
        else {
            char e[6] = {'\\', 'u', '0', '0', hx[c >> 4], hx[c & 15]};
            ot_buf_put(b, e, 6);
        }
    }
    ot_buf_put(b, s + run, n - run);
    ot_buf_put(b, "\"", 1);
}

static void cstr(ot_buf *b, const char *s) { str(b, s ? s : "", s ? strlen(s) : 0); }

static void hex(ot_buf *b, const uint8_t *p, size_t n)
{
    char h[40];
    ot_hex(p, n, h);
    ot_buf_put(b, "\"", 1);
    ot_buf_str(b, h);
    ot_buf_put(b, "\"", 1);
}

static void dbl(ot_buf *b, double d) { ot_buf_fmt(b, "%.17g", isfinite(d) ? d : 0.0); }

static void kv_s(ot_buf *b, const char *k, size_t kl, const char *v, size_t vl)
{
    ot_buf_str(b, "{\"key\":");
    str(b, k, kl);
    ot_buf_str(b, ",\"value\":{\"stringValue\":");
    str(b, v, vl);
    ot_buf_str(b, "}}");
}

static void kv_i(ot_buf *b, const char *k, int64_t i)
{
    ot_buf_str(b, "{\"key\":");
    cstr(b, k);
    ot_buf_fmt(b, ",\"value\":{\"intValue\":\"%lld\"}}", (long long)i);
}

/* Jäger attribute list; returns the number written after `at` (limits applied). */
static uint32_t attrs(ot_buf *b, uint32_t at, const uint8_t *list, uint32_t len, uint32_t lim, uint32_t len_lim, uint32_t *dropped)
{
    uint32_t off = 0;
    ot_attr x;
    while (ot_attr_next(list, len, &off, &x)) {
        if (at >= lim) {
            (*dropped)++;
            continue;
        }
        if (at) ot_buf_put(b, ",", 1);
        if (x.kind == JAGER_ATTR_STR) {
            kv_s(b, x.key, x.key_len, (const char *)x.value, len_lim && x.value_len > len_lim ? len_lim : x.value_len);
        } else {
            int64_t i = 0;
            if (x.value_len == 8) memcpy(&i, x.value, 8);
            ot_buf_str(b, "{\"key\":");
            str(b, x.key, x.key_len);
            if (x.kind == JAGER_ATTR_F64) {
                double d;
                memcpy(&d, &i, 8);
                ot_buf_str(b, ",\"value\":{\"doubleValue\":");
                dbl(b, d);
                ot_buf_str(b, "}}");
            } else if (x.kind == JAGER_ATTR_BOOL) {
                ot_buf_str(b, i ? ",\"value\":{\"boolValue\":true}}" : ",\"value\":{\"boolValue\":false}}");
            } else {
                ot_buf_fmt(b, ",\"value\":{\"intValue\":\"%lld\"}}", (long long)i);
            }
        }
        at++;
    }
    return at;
}

static void resource(ot_state *st, ot_buf *b)
{
    ot_buf_str(b, "\"resource\":{\"attributes\":[");
    for (size_t i = 0; i < st->cfg.nres; i++) {
        if (i) ot_buf_put(b, ",", 1);
        const ot_kv *k = &st->cfg.res[i];
        if (k->s) kv_s(b, k->key, strlen(k->key), k->s, strlen(k->s));
        else kv_i(b, k->key, k->i);
    }
    const char *rank = st->host->metadata_get("mpi.rank"), *size = st->host->metadata_get("mpi.world_size");
    if (rank) ot_buf_put(b, ",", 1), kv_i(b, "mpi.rank", strtoll(rank, NULL, 10));
    if (size) ot_buf_put(b, ",", 1), kv_i(b, "mpi.size", strtoll(size, NULL, 10));
    ot_buf_str(b, "]}");
}

static void scope(ot_state *st, ot_buf *b)
{
    ot_buf_str(b, "\"scope\":{\"name\":\"jager\",\"version\":");
    cstr(b, st->host->metadata_get("jager.version"));
    ot_buf_str(b, "}");
}

int ot_json_spans(ot_state *st, ot_span **v, size_t n, ot_buf *b)
{
    ot_buf_str(b, "{\"resourceSpans\":[{");
    resource(st, b);
    ot_buf_str(b, ",\"scopeSpans\":[{");
    scope(st, b);
    ot_buf_str(b, ",\"spans\":[");
    for (size_t i = 0; i < n; i++) {
        const ot_span *s = v[i];
        if (i) ot_buf_put(b, ",", 1);
        ot_buf_str(b, "{\"traceId\":");
        hex(b, s->trace_id, 16);
        ot_buf_str(b, ",\"spanId\":");
        hex(b, s->span_id, 8);
        if (s->has_parent) {
            ot_buf_str(b, ",\"parentSpanId\":");
            hex(b, s->parent, 8);
        }
        if (st->tracestate) {
            ot_buf_str(b, ",\"traceState\":");
            cstr(b, st->tracestate);
        }
        ot_buf_str(b, ",\"name\":");
        cstr(b, s->name);
        ot_buf_fmt(b, ",\"kind\":%d,\"startTimeUnixNano\":\"%llu\",\"endTimeUnixNano\":\"%llu\",\"attributes\":[", s->root ? 2 : 1,
                   (unsigned long long)s->start, (unsigned long long)s->end);
        uint32_t k = 0, lim = st->cfg.attr_count[0], dropped = 0;
        if (!s->root) {
            /* The plugin's own attributes come first and obey the same limits: one over the
             * count limit is counted as dropped, the file path cut to the length limit. */
            uint32_t vl = st->cfg.attr_len[0];
            size_t fl = s->file ? strlen(s->file) : 0;
            if (vl && fl > vl) fl = vl;
            if (s->file) k < lim ? (kv_s(b, "code.file.path", 14, s->file, fl), k++) : dropped++;
            if (s->line) k < lim ? (ot_buf_str(b, k ? "," : ""), kv_i(b, "code.line.number", s->line), k++) : dropped++;
            k < lim ? (ot_buf_str(b, k ? "," : ""), kv_i(b, "thread.id", (int64_t)s->os_tid), k++) : dropped++;
            if (s->task) k < lim ? (ot_buf_str(b, k ? "," : ""), kv_i(b, "jager.task.id", (int64_t)s->task), k++) : dropped++;
        }
        if (s->attrs) attrs(b, k, s->attrs, s->attrs_len, lim, st->cfg.attr_len[0], &dropped);
        ot_buf_str(b, "]");
        if (dropped) ot_buf_fmt(b, ",\"droppedAttributesCount\":%u", dropped);
        if (s->failed) {
            ot_buf_fmt(b, ",\"events\":[{\"timeUnixNano\":\"%llu\",\"name\":\"exception\",\"attributes\":[",
                       (unsigned long long)s->error_time);
            kv_s(b, "exception.message", 17, s->error ? s->error : "", s->error ? strlen(s->error) : 0);
            ot_buf_str(b, "]}],\"status\":{\"code\":2,\"message\":");
            cstr(b, s->error);
            ot_buf_str(b, "}");
        }
        ot_buf_str(b, "}");
    }
    ot_buf_str(b, "]}]}]}");
    return b->oom ? -1 : 0;
}

int ot_json_logs(ot_state *st, ot_log **v, size_t n, ot_buf *b)
{
    ot_buf_str(b, "{\"resourceLogs\":[{");
    resource(st, b);
    ot_buf_str(b, ",\"scopeLogs\":[{");
    scope(st, b);
    ot_buf_str(b, ",\"logRecords\":[");
    for (size_t i = 0; i < n; i++) {
        const ot_log *l = v[i];
        if (i) ot_buf_put(b, ",", 1);
        ot_buf_fmt(b, "{\"timeUnixNano\":\"%llu\",\"observedTimeUnixNano\":\"%llu\",\"severityNumber\":%u,\"severityText\":",
                   (unsigned long long)l->time, (unsigned long long)l->time, l->severity);
        cstr(b, ot_severity_text(l->severity));
        ot_buf_str(b, ",\"body\":{\"stringValue\":");
        str(b, l->body, l->body_len);
        ot_buf_str(b, "}");
        if (l->has_trace) {
            ot_buf_str(b, ",\"flags\":1,\"traceId\":");
            hex(b, l->trace_id, 16);
        }
        if (l->has_span) {
            ot_buf_str(b, ",\"spanId\":");
            hex(b, l->span_id, 8);
        }
        uint32_t dropped = 0;
        ot_buf_str(b, ",\"attributes\":[");
        if (l->attrs) attrs(b, 0, l->attrs, l->attrs_len, st->cfg.attr_count[1], st->cfg.attr_len[1], &dropped);
        ot_buf_str(b, "]");
        if (dropped) ot_buf_fmt(b, ",\"droppedAttributesCount\":%u", dropped);
        ot_buf_str(b, "}");
    }
    ot_buf_str(b, "]}]}]}");
    return b->oom ? -1 : 0;
}

static void point_attrs(ot_buf *b, const ot_point *p)
{
    ot_buf_str(b, "\"attributes\":[");
    for (int i = 0; i < p->nattr; i++) {
        if (i) ot_buf_put(b, ",", 1);
        if (p->aval[i]) kv_s(b, p->akey[i], strlen(p->akey[i]), p->aval[i], strlen(p->aval[i]));
        else kv_i(b, p->akey[i], p->aint[i]);
    }
    ot_buf_str(b, "]");
}

int ot_json_metrics(ot_state *st, uint64_t now_unix, ot_buf *b, uint64_t *points)
{
    ot_point *pts = NULL;
    ot_site *copies = NULL;
    size_t np = ot_points_build(st, &pts, &copies);
    *points = np;
    char *done = calloc(np + 1, 1);
    if (!pts || !done) {
        free(done);
        ot_points_free(pts, copies);
        return -1;
    }
    unsigned long long start = ot_unix(st, st->start_ns), now = now_unix;
    ot_buf_str(b, "{\"resourceMetrics\":[{");
    resource(st, b);
    ot_buf_str(b, ",\"scopeMetrics\":[{");
    scope(st, b);
    ot_buf_str(b, ",\"metrics\":[");
    int first = 1;
    for (size_t i = 0; i < np; i++) {
        if (done[i]) continue;
        const ot_point *p0 = &pts[i];
        if (!first) ot_buf_put(b, ",", 1);
        first = 0;
        ot_buf_str(b, "{\"name\":");
        cstr(b, p0->name);
        ot_buf_str(b, ",\"unit\":");
        cstr(b, p0->unit);
        ot_buf_str(b, ",\"description\":");
        cstr(b, p0->desc);
        ot_buf_str(b, p0->type == 2 ? ",\"histogram\":{\"dataPoints\":[" : p0->type == 0 ? ",\"sum\":{\"dataPoints\":[" : ",\"gauge\":{\"dataPoints\":[");
        int fp = 1;
        for (size_t j = i; j < np; j++) {
            if (done[j] || strcmp(pts[j].name, p0->name) || pts[j].type != p0->type) continue;
            done[j] = 1;
            if (!fp) ot_buf_put(b, ",", 1);
            fp = 0;
            ot_buf_str(b, "{");
            point_attrs(b, &pts[j]);
            ot_buf_fmt(b, ",\"startTimeUnixNano\":\"%llu\",\"timeUnixNano\":\"%llu\"", start, now);
            if (p0->type == 2) {
                const ot_site *s = pts[j].hist;
                uint32_t lo = 0, hi = 0;
                while (lo < JAGER_HIST_BUCKETS && !s->hist[lo]) lo++;
                for (uint32_t k = 0; k < JAGER_HIST_BUCKETS; k++)
                    if (s->hist[k]) hi = k;
                if (lo > hi) lo = hi;
                ot_buf_fmt(b, ",\"count\":\"%llu\",\"sum\":", (unsigned long long)s->calls);
                dbl(b, (double)s->sum_ns / 1e9);
                ot_buf_str(b, ",\"min\":");
                dbl(b, (double)s->min_ns / 1e9);
                ot_buf_str(b, ",\"max\":");
                dbl(b, (double)s->max_ns / 1e9);
                ot_buf_str(b, ",\"bucketCounts\":[");
                for (uint32_t k = lo; k <= hi; k++) ot_buf_fmt(b, "%s\"%llu\"", k > lo ? "," : "", (unsigned long long)s->hist[k]);
                ot_buf_str(b, "],\"explicitBounds\":[");
                for (uint32_t k = lo; k < hi; k++) {
                    if (k > lo) ot_buf_put(b, ",", 1);
                    dbl(b, (double)ot_bucket_lower(k + 1) / 1e9);
                }
                ot_buf_str(b, "]}");
            } else if (pts[j].is_int) {
                ot_buf_fmt(b, ",\"asInt\":\"%lld\"}", (long long)pts[j].value);
            } else {
                ot_buf_str(b, ",\"asDouble\":");
                dbl(b, pts[j].value);
                ot_buf_str(b, "}");
            }
        }
        ot_buf_str(b, "]");
        if (p0->type == 0) ot_buf_str(b, ",\"aggregationTemporality\":2,\"isMonotonic\":true");
        if (p0->type == 2) ot_buf_str(b, ",\"aggregationTemporality\":2");
        ot_buf_str(b, "}}");
    }
    ot_buf_str(b, "]}]}]}");
    free(done);
    ot_points_free(pts, copies);
    return b->oom ? -1 : 0;
}
