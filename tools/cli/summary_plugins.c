/*
 * summary_plugins.c — `jager summary`'s plugin-event section: every plugin event type in
 * the recording with its count and, for numeric fields, min / mean / max (durations and
 * byte counts in their units), in text and JSON. The numbers come from
 * model/plugin_stats.c; names come from the file and are escaped (text: jm_text_fit,
 * JSON: tu_json_str).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "plugin_stats.h"
#include "summary_plugins.h"
#include "toolutil.h"

static const char *fmt_value(char *buf, size_t size, uint32_t kind, double v)
{
    if (kind == JAGER_FIELD_DURATION_NS) return tu_fmt_ns(buf, size, v);
    if (kind == JAGER_FIELD_BYTES) return tu_fmt_bytes(buf, size, v);
    snprintf(buf, size, "%.6g", v);
    return buf;
}

static const char *flag_word(uint32_t flags)
{
    return flags & JAGER_FIELD_FLAG_EXTENT    ? " (duration)"
           : flags & JAGER_FIELD_FLAG_COUNTER ? " (counter)"
           : flags & JAGER_FIELD_FLAG_GAUGE   ? " (gauge)"
                                              : "";
}

int summary_plugins_text(jager_reader *r)
{
    jm_plugin_stats s;
    if (jm_plugin_stats_build(r, &s) != 0) return -1;
    if (s.ntypes) printf("\nPlugin events (%u type%s; numeric fields: min / mean / max)\n", s.ntypes, s.ntypes == 1 ? "" : "s");
    for (uint32_t i = 0; i < s.ntypes; i++) {
        const jm_type_stat *t = &s.types[i];
        char name[256];
        jm_text_fit(name, sizeof name, t->name, 60);
        printf("  %-40s %12" PRIu64 " event%s\n", name, t->events, t->events == 1 ? "" : "s");
        for (uint32_t f = 0; f < t->nfields; f++) {
            const jm_field_stat *fs = &t->fields[f];
            if (!fs->n) continue;
            char fn[160], a[32], b[32], c[32];
            jm_text_fit(fn, sizeof fn, fs->name, 40);
            printf("    %-38s %s / %s / %s%s\n", fn, fmt_value(a, sizeof a, fs->kind, fs->min),
                   fmt_value(b, sizeof b, fs->kind, fs->sum / (double)fs->n), fmt_value(c, sizeof c, fs->kind, fs->max),
                   flag_word(fs->flags));
        }
    }
    jm_plugin_stats_free(&s);
    return 0;
}

static void json_num(double v)
{
    if (v != v || v > 1.7e308 || v < -1.7e308) printf("null");
    else printf("%.17g", v);
}

int summary_plugins_json(jager_reader *r)
{
    jm_plugin_stats s;
    if (jm_plugin_stats_build(r, &s) != 0) return -1;
    printf(",\"plugin_types\":[");
    for (uint32_t i = 0; i < s.ntypes; i++) {
        const jm_type_stat *t = &s.types[i];
        printf("%s{\"type\":%u,\"name\":", i ? "," : "", t->type);
        tu_json_str(stdout, t->name ? t->name : "", (size_t)-1);
        printf(",\"events\":%" PRIu64 ",\"fields\":[", t->events);
        for (uint32_t f = 0; f < t->nfields; f++) {
            const jm_field_stat *fs = &t->fields[f];
            printf("%s{\"name\":", f ? "," : "");
            tu_json_str(stdout, fs->name ? fs->name : "", (size_t)-1);
            printf(",\"kind\":%u,\"flags\":%u,\"n\":%" PRIu64 ",\"min\":", fs->kind, fs->flags, fs->n);
            json_num(fs->n ? fs->min : 0);
            printf(",\"mean\":");
            json_num(fs->n ? fs->sum / (double)fs->n : 0);
            printf(",\"max\":");
            json_num(fs->n ? fs->max : 0);
            printf("}");
        }
        printf("]}");
    }
    printf("]");
    jm_plugin_stats_free(&s);
    return 0;
}
