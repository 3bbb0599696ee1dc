/* summary_counters.c — the program's counters in `jager summary`: what each ended at. A
 * monotonic counter's samples carry the process's running total (all threads together), so
 * its total is its latest sample's (model.c), never a sum over threads; a gauge's is its
 * last level. */
#include <inttypes.h>
#include <stdio.h>

#include "summary_counters.h"
#include "toolutil.h"

static const char *kind_name(uint32_t kind) { return kind == JAGER_COUNTER_GAUGE ? "gauge" : "monotonic"; }

/* A JSON number, or null for what JSON cannot hold (NaN, infinities). */
static void json_num(double v)
{
    if (v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308) printf("null");
    else printf("%.17g", v);
}

void summary_counters_text(const jm_model *m)
{
    int any = 0;
    for (uint32_t id = 1; id < m->ncounters; id++) {
        const jm_counter *c = &m->counters[id];
        if (!c->samples) continue;
        if (!any)
            printf("\nCounters (monotonic: the running total of the whole process; gauge: the last level)\n"
                   "%-36s %-10s %-9s %10s %14s %14s %14s\n",
                   "counter", "unit", "kind", "samples", "total/last", "min", "max");
        any = 1;
        char name[160], unit[48];
        jm_text_fit(name, sizeof name, c->name, 36);
        jm_text_fit(unit, sizeof unit, c->unit, 10);
        printf("%-36s %-10s %-9s %10" PRIu64 " %14.10g %14.10g %14.10g\n", name, unit, kind_name(c->kind), c->samples,
               c->total, c->min, c->max);
    }
}

void summary_counters_json(const jm_model *m)
{
    printf(",\"counters\":[");
    int first = 1;
    for (uint32_t id = 1; id < m->ncounters; id++) {
        const jm_counter *c = &m->counters[id];
        if (!c->samples) continue;
        printf("%s{\"id\":%u,\"name\":", first ? "" : ",", id);
        tu_json_str(stdout, c->name, (size_t)-1);
        printf(",\"unit\":");
        tu_json_str(stdout, c->unit, (size_t)-1);
        printf(",\"kind\":\"%s\",\"samples\":%" PRIu64 ",\"total\":", kind_name(c->kind), c->samples);
        if (c->kind == JAGER_COUNTER_GAUGE) printf("null");
        else json_num(c->total);
        printf(",\"first\":");
        json_num(c->first);
        printf(",\"last\":");
        json_num(c->last);
        printf(",\"min\":");
        json_num(c->min);
        printf(",\"max\":");
        json_num(c->max);
        printf(",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 "}", c->first_ns, c->last_ns);
        first = 0;
    }
    printf("]");
}
