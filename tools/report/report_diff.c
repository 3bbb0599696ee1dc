/* report_diff.c — the baseline recording's tree and site totals for the differential page. */
#include "report_diff.h"

#include <inttypes.h>

#include "toolutil.h"

void rm_write_baseline(FILE *out, const rm_input *base)
{
    const jm_model *m = base->m;
    const jm_tree *t = &m->merged;
    fputs("\"baseline\":{\"path\":", out);
    tu_json_str(out, base->path, (size_t)-1);
    fprintf(out, ",\"run_ns\":%" PRIu64 ",\"tree\":{\"p\":[", m->run_ns);
    for (uint32_t i = 0; i < t->count; i++)
        fprintf(out, i ? ",%" PRId64 : "%" PRId64, t->nodes[i].parent == JM_NONE ? (int64_t)-1 : (int64_t)t->nodes[i].parent);
    fputs("],\"n\":[", out);
    for (uint32_t i = 0; i < t->count; i++) {
        if (i) fputc(',', out);
        tu_json_str(out, i ? jm_site_name(m, t->nodes[i].site) : "", (size_t)-1);
    }
    fputs("],\"t\":[", out);
    for (uint32_t i = 0; i < t->count; i++) fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, t->nodes[i].incl_ns);
    fputs("]},\"sites\":[", out);
    int first = 1;
    for (uint32_t i = 1; i < m->nsites; i++) {
        const jm_site *s = &m->sites[i];
        if (!s->calls && !s->ev_calls) continue;
        fputs(first ? "[" : ",[", out);
        first = 0;
        tu_json_str(out, s->name, (size_t)-1);
        fputc(',', out);
        tu_json_str(out, s->file, (size_t)-1);
        fprintf(out, ",%" PRIu64 ",%" PRIu64 "]", s->calls ? s->total_ns : s->ev_total_ns, s->calls ? s->calls : s->ev_calls);
    }
    fputs("]}", out);
}
