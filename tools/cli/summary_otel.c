/* summary_otel.c — the otel plugin's export accounting in `jager summary` (text and JSON):
 * the otel.export events written at shutdown, one line (or object) per signal — seen,
 * exported, and every other outcome by cause. Read in a second pass over the file, only when
 * the schema has the type. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "plugin_events.h"
#include "summary_otel.h"
#include "toolutil.h"

#define MAX_ROWS 256

static const char *const sigs[3] = {"span", "log", "metric_data_point"};

typedef struct otel_row {
    const char *metric, *err;
    uint64_t v;
    int sig;
} otel_row;

/* What the otel.export events say; returns the rows read (0: none, or no such type). */
static size_t read_rows(jager_reader *r, otel_row *row)
{
    uint16_t type = jager_reader_type_by_name(r, jp_name(&jp_otel, JP_OTEL_EXPORT));
    if (!type || jager_reader_rewind(r) != JAGER_OK) return 0;
    size_t n = 0;
    jager_event ev;
    while (jager_reader_next(r, &ev) == 1 && n < MAX_ROWS) {
        if (ev.type != type || ev.rec->words < 6) continue;
        const uint64_t *f = ((const jager_rec_plugin *)ev.rec)->fields;
        const char *sig = jager_reader_string(r, (uint32_t)f[JP_OX_SIGNAL]);
        int si = -1;
        for (int i = 0; i < 3; i++)
            if (sig && !strcmp(sig, sigs[i])) si = i;
        if (si < 0) continue;
        row[n].metric = jager_reader_string(r, (uint32_t)f[JP_OX_METRIC]);
        row[n].err = jager_reader_string(r, (uint32_t)f[JP_OX_ERROR_TYPE]);
        row[n].v = f[JP_OX_VALUE];
        row[n].sig = si;
        if (row[n].metric) n++;
    }
    return n;
}

/* How row i counts for its signal: 1 seen, 2 exported, 3 a cause of loss, 0 other. */
static int role(const otel_row *w)
{
    const char *m = w->metric, *e = w->err ? w->err : "";
    if (strstr(m, ".seen")) return 1;
    if (strstr(m, ".exported") && !*e) return 2;
    if (((strstr(m, ".exported") || strstr(m, ".processed")) && *e) || strstr(m, ".sampled_out")) return 3;
    return 0;
}

static const char *cause(const otel_row *w) { return w->err && *w->err ? w->err : "sampled_out"; }

void summary_otel_text(jager_reader *r)
{
    otel_row row[MAX_ROWS];
    size_t n = read_rows(r, row);
    if (!n) return;
    printf("\nOpenTelemetry export (otel plugin; by cause: jager dump --type otel.export)\n");
    printf("%-18s %12s %12s  %s\n", "signal", "seen", "exported", "not exported");
    for (int si = 0; si < 3; si++) {
        uint64_t seen = 0, exported = 0;
        char causes[512] = "";
        size_t cl = 0;
        int any = 0;
        for (size_t i = 0; i < n; i++) {
            if (row[i].sig != si) continue;
            any = 1;
            switch (role(&row[i])) {
            case 1: seen = row[i].v; break;
            case 2: exported = row[i].v; break;
            case 3:
                if (row[i].v && cl < sizeof causes - 64)
                    cl += (size_t)snprintf(causes + cl, sizeof causes - cl, "%s%s %" PRIu64, cl ? ", " : "", cause(&row[i]),
                                           row[i].v);
                break;
            default: break;
            }
        }
        if (any) printf("%-18s %12" PRIu64 " %12" PRIu64 "  %s\n", sigs[si], seen, exported, cl ? causes : "none");
    }
}

void summary_otel_json(jager_reader *r)
{
    otel_row row[MAX_ROWS];
    size_t n = read_rows(r, row);
    printf(",\"otel\":");
    if (!n) {
        printf("null");
        return;
    }
    printf("{");
    int first_sig = 1;
    for (int si = 0; si < 3; si++) {
        uint64_t seen = 0, exported = 0;
        int any = 0;
        for (size_t i = 0; i < n; i++) {
            if (row[i].sig != si) continue;
            any = 1;
            if (role(&row[i]) == 1) seen = row[i].v;
            if (role(&row[i]) == 2) exported = row[i].v;
        }
        if (!any) continue;
        printf("%s\"%s\":{\"seen\":%" PRIu64 ",\"exported\":%" PRIu64 ",\"not_exported\":{", first_sig ? "" : ",", sigs[si],
               seen, exported);
        first_sig = 0;
        /* One key per cause: a cause both stages name (none today) is summed, never repeated. */
        const char *key[MAX_ROWS];
        uint64_t val[MAX_ROWS];
        size_t nk = 0;
        for (size_t i = 0; i < n; i++) {
            if (row[i].sig != si || role(&row[i]) != 3) continue;
            size_t k = 0;
            while (k < nk && strcmp(key[k], cause(&row[i]))) k++;
            if (k == nk) key[nk] = cause(&row[i]), val[nk++] = 0;
            val[k] += row[i].v;
        }
        for (size_t k = 0; k < nk; k++) {
            printf("%s", k ? "," : "");
            tu_json_str(stdout, key[k], (size_t)-1);
            printf(":%" PRIu64, val[k]);
        }
        printf("}}");
    }
    printf("}");
}
