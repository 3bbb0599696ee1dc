/* summary_by.c — `jager summary --by KEY`: calls of each site grouped by the value of one
 * span attribute (jager_span_set_attrs; Caliper users' region ids, iteration numbers,
 * material names), so calls that differ by input are seen apart: calls, total, mean, max per
 * (site, value), from the model's attribute groups (model_attrs.c: counted from the span
 * events, so under drops or JAGER_SAMPLE the groups are the events that reached the file). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "summary_by.h"
#include "toolutil.h"

/* One group of span attributes as a JSON object (after a comma unless \p first). */
static void group_json(const jm_model *m, const jm_attr_group *g, int first)
{
    printf("%s{\"site\":%u,\"name\":", first ? "" : ",", g->site);
    tu_json_str(stdout, jm_site_name(m, g->site), (size_t)-1);
    printf(",\"value\":");
    tu_json_str(stdout, g->value, (size_t)-1);
    printf(",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}", g->calls, g->total_ns, g->max_ns);
}

/* `--by method`: log records and span errors by their innermost method (code.method, the
 * Julia binding's), then, where spans carry code.method (JAGER_JULIA_METHOD=all), each site's
 * calls by it. */
static int summary_by_method(const jm_model *m, int json)
{
    if (json) {
        printf(",\"by\":{\"key\":\"method\",\"folded\":%" PRIu64 ",\"methods\":[", m->code_methods_folded);
    } else {
        printf("\nBy method (code.method: the innermost method at each log record and span error)\n");
        printf("%-60s %8s %8s %8s %11s\n", "method", "logs", "warn", "error", "span errors");
    }
    for (size_t i = 0; i < m->ncode_methods; i++) {
        const jm_code_method *g = &m->code_methods[i];
        if (json) {
            printf("%s{\"method\":", i ? "," : "");
            tu_json_str(stdout, g->method, (size_t)-1);
            printf(",\"logs\":%" PRIu64 ",\"warnings\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"span_errors\":%" PRIu64 "}", g->logs,
                   g->warnings, g->errors, g->span_errors);
        } else {
            char name[256];
            jm_text_fit(name, sizeof name, g->method, 60);
            printf("%-60s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %11" PRIu64 "\n", name, g->logs, g->warnings, g->errors, g->span_errors);
        }
    }
    if (!json && !m->ncode_methods) printf("(no log record or span error carries code.method)\n");
    if (!json && m->code_methods_folded) printf("(%" PRIu64 " events of further methods not grouped)\n", m->code_methods_folded);
    if (json) printf("],\"groups\":[");
    int first = 1;
    for (size_t i = 0; i < m->nattr_groups; i++) {
        const jm_attr_group *g = &m->attr_groups[i];
        if (strcmp(g->key, "code.method")) continue;
        if (json) {
            group_json(m, g, first);
        } else {
            if (first) printf("\nSpans by method (span attribute code.method)\n%-32s %-40s %10s %12s\n", "site", "method", "calls", "total");
            char name[128], val[256], t[32];
            jm_text_fit(name, sizeof name, jm_site_name(m, g->site), 32);
            jm_text_fit(val, sizeof val, g->value, 40);
            printf("%-32s %-40s %10" PRIu64 " %12s\n", name, val, g->calls, tu_fmt_ns(t, sizeof t, (double)g->total_ns));
        }
        first = 0;
    }
    if (json) printf("]}");
    return 0;
}

int summary_by(const jm_model *m, const char *key, int json)
{
    if (!strcmp(key, "method")) return summary_by_method(m, json);
    if (json) {
        printf(",\"by\":{\"key\":");
        tu_json_str(stdout, key, (size_t)-1);
        printf(",\"folded\":%" PRIu64 ",\"groups\":[", m->attr_folded);
    } else {
        printf("\nBy %s (%s; from the span events)\n", key, strcmp(key, "task") ? "span attribute" : "the task that ran each span");
        printf("%-32s %-20s %10s %12s %12s %12s\n", "site", key, "calls", "total", "mean", "max");
    }
    int first = 1;
    for (size_t i = 0; i < m->nattr_groups; i++) {
        const jm_attr_group *g = &m->attr_groups[i];
        if (strcmp(g->key, key)) continue;
        if (json) {
            group_json(m, g, first);
        } else {
            char name[128], val[128], t[32], mean[32], mx[32];
            jm_text_fit(name, sizeof name, jm_site_name(m, g->site), 32);
            jm_text_fit(val, sizeof val, g->value, 20);
            printf("%-32s %-20s %10" PRIu64 " %12s %12s %12s\n", name, val, g->calls, tu_fmt_ns(t, sizeof t, (double)g->total_ns),
                   tu_fmt_ns(mean, sizeof mean, (double)g->total_ns / (double)g->calls), tu_fmt_ns(mx, sizeof mx, (double)g->max_ns));
        }
        first = 0;
    }
    if (json) printf("]}");
    else if (first) printf("(no span carries the attribute %s)\n", key);
    return 0;
}
