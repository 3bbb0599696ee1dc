/* plugin_stats.c — see plugin_stats.h. */
#include "plugin_stats.h"

#include <stdlib.h>
#include <string.h>

int jm_field_is_numeric(uint32_t kind)
{
    return kind == JAGER_FIELD_U64 || kind == JAGER_FIELD_I64 || kind == JAGER_FIELD_F64 ||
           kind == JAGER_FIELD_DURATION_NS || kind == JAGER_FIELD_BYTES || kind == JAGER_FIELD_BOOL;
}

static double as_number(uint32_t kind, uint64_t v)
{
    double d;
    switch (kind) {
    case JAGER_FIELD_I64: return (double)(int64_t)v;
    case JAGER_FIELD_F64: memcpy(&d, &v, 8); return d;
    case JAGER_FIELD_BOOL: return v != 0;
    default: return (double)v;
    }
}

static int by_name(const void *a, const void *b)
{
    const jm_type_stat *x = a, *y = b;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    return c ? c : (int)x->type - (int)y->type;
}

int jm_plugin_stats_build(jager_reader *r, jm_plugin_stats *out)
{
    memset(out, 0, sizeof *out);
    uint32_t *slot = calloc(65536, sizeof *slot); /* type → 1 + index in types */
    if (!slot) return -1;
    uint32_t cap = 0;
    if (jager_reader_rewind(r) != JAGER_OK) {
        free(slot);
        return 0;
    }
    jager_event ev;
    while (jager_reader_next(r, &ev) == 1) {
        if (ev.type < JAGER_EV_FIRST_PLUGIN) continue;
        const jager_type_desc *d = jager_reader_type(r, ev.type);
        if (!d || d->builtin) continue;
        uint32_t i = slot[ev.type];
        if (!i) {
            if (out->ntypes == cap) {
                uint32_t nc = cap ? cap * 2 : 16;
                jm_type_stat *nt = realloc(out->types, nc * sizeof *nt);
                if (!nt) {
                    free(slot);
                    jm_plugin_stats_free(out);
                    return -1;
                }
                out->types = nt;
                cap = nc;
            }
            jm_type_stat *t = &out->types[out->ntypes];
            memset(t, 0, sizeof *t);
            t->type = ev.type;
            t->name = d->name;
            for (uint32_t f = 0; f < d->nfields && f < JAGER_MAX_FIELDS; f++) {
                if (!jm_field_is_numeric(d->fields[f].kind)) continue;
                jm_field_stat *s = &t->fields[t->nfields++];
                s->name = d->fields[f].name;
                s->kind = d->fields[f].kind;
                s->flags = d->fields[f].flags;
                s->min = 0;
                s->max = 0;
            }
            i = slot[ev.type] = ++out->ntypes;
        }
        jm_type_stat *t = &out->types[i - 1];
        t->events++;
        const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
        size_t have = ev.rec->words * 8u >= sizeof *p ? (ev.rec->words * 8u - sizeof *p) / 8u : 0;
        for (uint32_t f = 0, k = 0; f < d->nfields && k < t->nfields; f++) {
            if (!jm_field_is_numeric(d->fields[f].kind)) continue;
            jm_field_stat *s = &t->fields[k++];
            if (f >= have) continue; /* a short record: the field is absent, not 0 */
            double v = as_number(s->kind, p->fields[f]);
            if (!s->n || v < s->min) s->min = v;
            if (!s->n || v > s->max) s->max = v;
            s->sum += v;
            s->n++;
        }
    }
    free(slot);
    if (out->ntypes > 1) qsort(out->types, out->ntypes, sizeof *out->types, by_name);
    return 0;
}

void jm_plugin_stats_free(jm_plugin_stats *s)
{
    free(s->types);
    s->types = NULL;
    s->ntypes = 0;
}
