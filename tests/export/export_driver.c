/* export_driver OUT.jgr EXPECTED.jsonl — records a small, fully known run with the real
 * core (file sink + a memory sink fed the same batches) and prints every record the core
 * delivered as one JSON line {"table": …, "row": {…}} in the columns of `jager export`'s
 * tables. The peer tests compare what DuckDB, hyparquet, pprof, … read from our exports
 * against these lines: an oracle that never went through the reader or the exporters.
 *
 * The run: 2 worker threads × 20 `outer` spans, each with 3 `middle` spans (bytes 1000+j),
 * each with 2 `inner` spans. inner spins 300 µs, middle 5 µs of its own, outer 2 µs, so
 * `inner` holds most exclusive time — by enough (72 ms against 0.6 ms per thread) that a
 * preemption of a few milliseconds on a busy machine cannot reorder them. Plus logs with hostile strings (quotes, commas,
 * newlines, CR, tabs, Unicode, HTML, invalid UTF-8), span attributes and an error, a gauge
 * and a monotonic counter, marks, and three plugin-style event types registered through
 * the internal API: gc.pause and dispatch.compile (the bundled plugins' layouts),
 * test.sample (every field kind) and test.level (numbers only: a sampled level). 64-bit integers are printed as strings.
 *
 * export_driver --spans-only OUT.jgr: a run of spans alone (no plugin event, log, counter
 * or mark), for what the exporters say about what they left out when nothing was. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jager_reader.h"
#include "memsink.h"

#define THREADS 2
#define OUTER 20
#define MIDDLE 3
#define INNER 2

static jager_site s_outer, s_middle, s_inner, s_weird;
static jager_counter c_gauge, c_total;
static uint16_t t_sample, t_pause, t_compile, t_level;

static void spin_ns(uint64_t ns)
{
    uint64_t end = jager_now_ns() + ns;
    while (jager_now_ns() < end) {
    }
}

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    for (int i = 0; i < OUTER; i++) {
        jager_span o = jager_span_begin(s_outer);
        if (i == 0) {
            jager_attr a[4] = {{.key = "iter", .kind = JAGER_ATTR_I64, .value.i64 = -7 - w},
                               {.key = "label", .kind = JAGER_ATTR_STR, .value.str = "a,b\"c\n<d>"},
                               {.key = "ok", .kind = JAGER_ATTR_BOOL, .value.boolean = 1},
                               {.key = "ratio", .kind = JAGER_ATTR_F64, .value.f64 = 0.1}};
            jager_span_set_attrs(o, a, 4);
        }
        spin_ns(2000);
        for (int j = 0; j < MIDDLE; j++) {
            jager_span m = jager_span_begin(s_middle);
            if (i == 3 && j == 1 && w == 0) jager_span_error(m, "boom, \"bad\"\nline 2");
            spin_ns(5000);
            for (int k = 0; k < INNER; k++) {
                jager_span in = jager_span_begin(s_inner);
                spin_ns(300000);
                jager_span_end(in);
            }
            jager_span_end_bytes(m, 1000u + (uint64_t)j);
        }
        jager_span_end(o);
        jager_counter_add(c_total, 1.0 + w);
    }
    jager_span ws = jager_span_begin(s_weird);
    spin_ns(1000);
    jager_span_end(ws);
    jager_log(w ? JAGER_SEV_WARN : JAGER_SEV_INFO, w ? "worker 1 done" : "worker 0 done", NULL, 0);
    return NULL;
}

/* ---- JSON output of the oracle ---- */

static void jstr(FILE *f, const char *s, size_t n)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    if (n == (size_t)-1) n = strlen(s);
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
        else fputc(c, f); /* UTF-8 (and the deliberately invalid bytes) pass through */
    }
    fputc('"', f);
}

static void jkey(FILE *f, int *first, const char *k)
{
    fputs(*first ? "" : ",", f);
    *first = 0;
    jstr(f, k, (size_t)-1);
    fputc(':', f);
}
static void ju64(FILE *f, int *first, const char *k, uint64_t v) { jkey(f, first, k); fprintf(f, "\"%" PRIu64 "\"", v); }
static void ji64(FILE *f, int *first, const char *k, int64_t v) { jkey(f, first, k); fprintf(f, "\"%" PRId64 "\"", v); }
static void js(FILE *f, int *first, const char *k, const char *s, size_t n) { jkey(f, first, k); jstr(f, s, n); }
static void jf64(FILE *f, int *first, const char *k, double v) { jkey(f, first, k); fprintf(f, "%.17g", v); }
static void jbool(FILE *f, int *first, const char *k, int v) { jkey(f, first, k); fputs(v ? "true" : "false", f); }
static void jnull(FILE *f, int *first, const char *k) { jkey(f, first, k); fputs("null", f); }

static const char *site_name(uint32_t site)
{
    const jg_site_info *si = site ? jg_site_get(site) : NULL;
    return si ? jg_string(si->name) : NULL;
}

static void attrs_json(FILE *f, const uint8_t *p, const uint8_t *end)
{
    jager_attr_view a;
    int first = 1;
    fputc('{', f);
    while (jager_attr_next(&p, end, &a) == 1) {
        fputs(first ? "" : ",", f);
        first = 0;
        jstr(f, a.key, a.key_len);
        fputc(':', f);
        switch (a.kind) {
        case JAGER_ATTR_I64: fprintf(f, "%" PRId64, a.i64); break;
        case JAGER_ATTR_F64: fprintf(f, "%.17g", a.f64); break;
        case JAGER_ATTR_BOOL: fputs(a.i64 ? "true" : "false", f); break;
        default: jstr(f, a.str, a.str_len);
        }
    }
    fputc('}', f);
}

static const char *sev_text(uint32_t s)
{
    static const char *const n[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
    return s >= 1 && s <= 24 ? n[(s - 1) / 4] : "UNSPECIFIED";
}

static void print_record(FILE *f, uint32_t thread, const jager_record *h)
{
    int first = 1;
    const jager_type_desc *td = jg_type_get(h->type);
    fputs("{\"table\":", f);
    jstr(f, td ? td->name : "?", (size_t)-1);
    fputs(",\"row\":{", f);
    ju64(f, &first, "thread", thread);
    switch (h->type) {
    case JAGER_EV_SPAN: {
        const jager_rec_span *s = (const void *)h;
        const jg_site_info *si = jg_site_get(h->aux);
        ju64(f, &first, "site", h->aux);
        js(f, &first, "name", jg_string(si->name), (size_t)-1);
        js(f, &first, "file", si->file ? jg_string(si->file) : NULL, (size_t)-1);
        ju64(f, &first, "line", si->line);
        ju64(f, &first, "start_ns", s->start_ns);
        ju64(f, &first, "end_ns", s->end_ns);
        ju64(f, &first, "duration_ns", s->end_ns - s->start_ns);
        ju64(f, &first, "span_id", s->span_id);
        ju64(f, &first, "parent_id", s->parent_id);
        ju64(f, &first, "bytes", s->bytes);
        ju64(f, &first, "begin_thread", thread); /* a plain span: numbered by its thread */
        ju64(f, &first, "parent_thread", thread);
        break;
    }
    case JAGER_EV_LOG: {
        const jager_rec_log *l = (const void *)h;
        const char *body;
        uint32_t blen;
        const uint8_t *a, *ae;
        jager_log_body(l, &body, &blen, &a, &ae);
        ju64(f, &first, "time_ns", l->time_ns);
        ju64(f, &first, "severity", h->aux & 0xFF);
        js(f, &first, "severity_text", sev_text(h->aux & 0xFF), (size_t)-1);
        jbool(f, &first, "truncated", (h->aux & JAGER_LOG_TRUNCATED) != 0);
        ju64(f, &first, "span_id", l->span_id);
        ju64(f, &first, "site", l->site);
        js(f, &first, "site_name", site_name(l->site), (size_t)-1);
        jnull(f, &first, "trace_id");
        jnull(f, &first, "ctx_span_id");
        js(f, &first, "body", body, blen);
        jkey(f, &first, "attributes");
        if (l->nattrs) attrs_json(f, a, ae);
        else fputs("null", f);
        break;
    }
    case JAGER_EV_COUNTER: {
        const jager_rec_counter *c = (const void *)h;
        const jg_counter_info *ci = jg_counter_get(h->aux);
        ju64(f, &first, "time_ns", c->time_ns);
        ju64(f, &first, "counter", h->aux);
        js(f, &first, "name", jg_string(ci->name), (size_t)-1);
        js(f, &first, "unit", ci->unit ? jg_string(ci->unit) : NULL, (size_t)-1);
        js(f, &first, "kind", ci->kind == JAGER_COUNTER_GAUGE ? "gauge" : "monotonic", (size_t)-1);
        jf64(f, &first, "value", c->value);
        break;
    }
    case JAGER_EV_MARK: {
        const jager_rec_mark *m = (const void *)h;
        ju64(f, &first, "time_ns", m->time_ns);
        js(f, &first, "name", jg_string(h->aux), (size_t)-1);
        break;
    }
    case JAGER_EV_SPAN_ATTR: {
        const jager_rec_span_attr *s = (const void *)h;
        ju64(f, &first, "site", h->aux);
        js(f, &first, "site_name", site_name(h->aux), (size_t)-1);
        ju64(f, &first, "span_id", s->span_id);
        jkey(f, &first, "attributes");
        attrs_json(f, (const uint8_t *)(s + 1), (const uint8_t *)h + h->words * 8u);
        ju64(f, &first, "span_thread", thread); /* set on its own thread: numbered by it */
        break;
    }
    case JAGER_EV_SPAN_ERROR: {
        const jager_rec_span_error *s = (const void *)h;
        ju64(f, &first, "time_ns", s->time_ns);
        ju64(f, &first, "site", h->aux);
        js(f, &first, "site_name", site_name(h->aux), (size_t)-1);
        ju64(f, &first, "span_id", s->span_id);
        js(f, &first, "message", (const char *)(s + 1), s->msg_len);
        ju64(f, &first, "span_thread", thread);
        break;
    }
    case JAGER_EV_DIAG: {
        const jager_rec_diag *d = (const void *)h;
        ju64(f, &first, "time_ns", d->time_ns);
        ju64(f, &first, "severity", h->aux);
        js(f, &first, "source", jg_string(d->source), (size_t)-1);
        js(f, &first, "text", (const char *)(d + 1), d->text_len);
        break;
    }
    case JAGER_EV_DROP: {
        static const char *const reasons[] = {"ring_full", "overwritten", "no_ring", "too_large", "sink"};
        const jager_rec_drop *d = (const void *)h;
        ju64(f, &first, "time_ns", d->time_ns);
        js(f, &first, "reason", h->aux < 5 ? reasons[h->aux] : "unknown", (size_t)-1);
        ju64(f, &first, "count", d->count);
        break;
    }
    default: {
        const jager_rec_plugin *p = (const void *)h;
        ju64(f, &first, "time_ns", p->time_ns);
        for (uint32_t i = 0; td && i < td->nfields; i++) {
            const char *k = td->fields[i].name;
            uint64_t v = p->fields[i];
            switch (td->fields[i].kind) {
            case JAGER_FIELD_F64: {
                double d;
                memcpy(&d, &v, 8);
                jf64(f, &first, k, d);
                break;
            }
            case JAGER_FIELD_STRING: js(f, &first, k, jg_string((uint32_t)v), (size_t)-1); break;
            case JAGER_FIELD_BOOL: jbool(f, &first, k, v != 0); break;
            case JAGER_FIELD_SITE: {
                char nk[128];
                ju64(f, &first, k, v);
                snprintf(nk, sizeof nk, "%s_name", k);
                js(f, &first, nk, site_name((uint32_t)v), (size_t)-1);
                break;
            }
            case JAGER_FIELD_I64: ji64(f, &first, k, (int64_t)v); break;
            default: ju64(f, &first, k, v);
            }
        }
    }
    }
    fputs("}}\n", f);
}

static int spans_only(const char *out)
{
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.quiet = 1;
    cfg.output = out;
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "export_driver: jager_init: %s\n", jager_last_error());
        return 1;
    }
    jager_site outer = jager_site_register("outer", "tests/export/driver.c", 10);
    jager_site inner = jager_site_register("inner", "tests/export/driver.c", 30);
    for (int i = 0; i < 3; i++) {
        jager_span o = jager_span_begin(outer);
        jager_span in = jager_span_begin(inner);
        spin_ns(1000);
        jager_span_end(in);
        jager_span_end(o);
    }
    jager_shutdown();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--spans-only") == 0) return spans_only(argv[2]);
    if (argc != 3) {
        fprintf(stderr, "usage: export_driver OUT.jgr EXPECTED.jsonl | export_driver --spans-only OUT.jgr\n");
        return 1;
    }
    jager_sink ms_sink;
    memsink *ms = memsink_new(&ms_sink);
    if (!ms || jager_sink_add(&ms_sink) != JAGER_OK) return 1;
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.quiet = 1;
    cfg.output = argv[1];
    if (jager_init(&cfg) != JAGER_OK) {
        fprintf(stderr, "export_driver: jager_init: %s\n", jager_last_error());
        return 1;
    }
    jager_metadata_set("test.hostile", "quote \" comma , newline \n <script>alert(1)</script> ü");

    s_outer = jager_site_register("outer", "tests/export/driver.c", 10);
    s_middle = jager_site_register("middle", "tests/export/driver.c", 20);
    s_inner = jager_site_register("inner", "tests/export/driver.c", 30);
    s_weird = jager_site_register("weird \"site\", <b>&amp;</b>\n\xc3\xbc \xe6\x97\xa5\xe6\x9c\xac", NULL, 0);
    c_gauge = jager_counter_register("test.gauge", "bytes", JAGER_COUNTER_GAUGE);
    c_total = jager_counter_register("test.total", NULL, JAGER_COUNTER_MONOTONIC);

    static const jager_field_desc sample_fields[] = {
        {"count", JAGER_FIELD_U64, 0},   {"delta", JAGER_FIELD_I64, 0},        {"ratio", JAGER_FIELD_F64, 0},
        {"label", JAGER_FIELD_STRING, 0}, {"where", JAGER_FIELD_SITE, 0},       {"flag", JAGER_FIELD_BOOL, 0},
        {"at", JAGER_FIELD_TIME_NS, 0},  {"size", JAGER_FIELD_BYTES, 0},       {"stack", JAGER_FIELD_STACK, 0}};
    static const jager_field_desc pause_fields[] = {
        {"duration_ns", JAGER_FIELD_DURATION_NS, 0}, {"requested", JAGER_FIELD_U64, 0},
        {"full", JAGER_FIELD_BOOL, 0},               {"allocd_bytes", JAGER_FIELD_BYTES, 0},
        {"freed_bytes", JAGER_FIELD_BYTES, 0},       {"live_bytes", JAGER_FIELD_BYTES, 0},
        {"stack", JAGER_FIELD_STACK, 0}};
    static const jager_field_desc compile_fields[] = {{"duration_ns", JAGER_FIELD_DURATION_NS, 0},
                                                      {"inference_ns", JAGER_FIELD_DURATION_NS, 0},
                                                      {"signature", JAGER_FIELD_STRING, 0}};
    static const jager_field_desc level_fields[] = {{"queue", JAGER_FIELD_U64, 0}, {"load", JAGER_FIELD_F64, 0}};
    if (jg_type_register("test.level", level_fields, 2, 0, &t_level) != JAGER_OK ||
        jg_type_register("test.sample", sample_fields, 9, 0, &t_sample) != JAGER_OK ||
        jg_type_register("gc.pause", pause_fields, 7, 0, &t_pause) != JAGER_OK ||
        jg_type_register("dispatch.compile", compile_fields, 3, 0, &t_compile) != JAGER_OK) {
        fprintf(stderr, "export_driver: register types: %s\n", jager_last_error());
        return 1;
    }

    jager_mark("phase-1");
    static const char *const hostile[] = {
        "quote \" comma , newline \n cr \r tab \t end",
        "unicode: \xc3\xbc \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\xaf and <img src=x onerror=alert(1)> </script>",
        "invalid utf-8: \xff\xfe end",
        "",
        "backslash \\ and \"\"double\"\" quotes,,,",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        jager_attr a[3] = {{.key = "i", .kind = JAGER_ATTR_I64, .value.i64 = (int64_t)i},
                           {.key = "k\"e,y", .kind = JAGER_ATTR_STR, .value.str = hostile[i]},
                           {.key = "x", .kind = JAGER_ATTR_F64, .value.f64 = 1.0 / 3.0}};
        jager_log(JAGER_SEV_ERROR + (int)i, hostile[i], a, i % 2 ? 3 : 0);
    }
    const double gauge[] = {1.5, 2.25, -3.125, 1e300, 0.0};
    for (size_t i = 0; i < sizeof gauge / sizeof gauge[0]; i++) jager_counter_set(c_gauge, gauge[i]);

    uint64_t ips[3] = {0x1000, 0x2000, 0x3000};
    jager_stack_id stack = jager_stack_intern(ips, 3);
    /* frames as a language binding would add them: 0x1000 has a frame inlined into it */
    jager_symbol_add(0x1000, 0, "alloc_array", "src/alloc.jl", 11);
    jager_symbol_add(0x1000, 1, "inlined_helper", "src/helper.jl", 5);
    jager_symbol_add(0x2000, 0, "assemble", "src/assemble.jl", 88);
    jager_symbol_add(0x3000, 0, "main", "src/main.jl", 1);
    uint32_t label = jg_intern("label, \"quoted\"\n\xc3\xbc");
    for (int i = 0; i < 4; i++) {
        uint64_t fields[9];
        double ratio = 0.25 * i - 0.5;
        fields[0] = UINT64_MAX - (uint64_t)i; /* beyond INT64_MAX: needs the unsigned logical type */
        fields[1] = (uint64_t)(int64_t)(-1000 * i - 1);
        memcpy(&fields[2], &ratio, 8);
        fields[3] = i == 3 ? 0 : label;      /* string id 0: no text (null) */
        fields[4] = i == 2 ? 0 : s_inner;    /* site 0: no name (null) */
        fields[5] = (uint64_t)(i & 1);
        fields[6] = jager_now_ns();
        fields[7] = 4096u * (uint64_t)i;
        fields[8] = stack;
        jg_emit_plugin(t_sample, 0, fields, 9);
    }
    for (int i = 0; i < 3; i++) { /* an all-numeric plugin type: a sampled level */
        double load = 0.75 * i;
        uint64_t lf[2] = {(uint64_t)(10 * i + 1), 0};
        memcpy(&lf[1], &load, 8);
        jg_emit_plugin(t_level, 0, lf, 2);
    }
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = jager_now_ns();
        spin_ns(20000);
        uint64_t fields[7] = {jager_now_ns() - t0, (uint64_t)i, (uint64_t)(i == 2), 1000000u * (uint64_t)i,
                              500000u, 2000000u + (uint64_t)i, stack};
        jg_emit_plugin(t_pause, t0, fields, 7);
        uint64_t cf[3] = {15000u + (uint64_t)i, 7000, jg_intern(i ? "Tuple{typeof(f), Float64}" : "Tuple{typeof(g), \"<x>\"}")};
        jg_emit_plugin(t_compile, 0, cf, 3);
        spin_ns(10000);
    }

    {   /* a compile that overlaps another without nesting (as from a second thread) */
        uint64_t t = jager_now_ns();
        uint64_t c1[3] = {30000, 10000, jg_intern("Tuple{typeof(h)}")};
        uint64_t c2[3] = {30000, 10000, jg_intern("Tuple{typeof(k)}")};
        jg_emit_plugin(t_compile, t, c1, 3);
        jg_emit_plugin(t_compile, t + 20000, c2, 3);
    }
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) != 0) return 1;
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    jager_mark("phase \"2\"");
    jager_shutdown();

    FILE *f = fopen(argv[2], "wb");
    if (!f) return 1;
    for (size_t i = 0; i < ms->nrecs; i++) {
        memsink_rec r = memsink_at(ms, i);
        print_record(f, r.thread, r.rec);
    }
    fclose(f);
    memsink_free(ms);
    return 0;
}
