/* The timeline data as JSON members for the report page (see report_timeline.h): start
 * times are delta-encoded per sorted array, strings go through tu_json_str. */
#include <stdlib.h>
#include <string.h>

#include "report_timeline_priv.h"
#include "toolutil.h"

/* Write the start times of rows (already sorted) as deltas: the page adds them up. */
static void put_delta(FILE *out, uint64_t t, uint64_t *prev, int first)
{
    uint64_t v = t >= *prev ? t - *prev : 0;
    fprintf(out, first ? "%llu" : ",%llu", (unsigned long long)v);
    *prev = t >= *prev ? t : *prev;
}

/* A time of the recording on the page's clock (before t0 is subtracted). */
static uint64_t mt(const rt_json_ctx *c, uint64_t t) { return c->map ? c->map(c->map_arg, t) : t; }
/* The length of [t, t + d] on the page's clock. */
static uint64_t md(const rt_json_ctx *c, uint64_t t, uint64_t d) { return c->map ? mt(c, t + d) - mt(c, t) : d; }

static void write_evlist(FILE *out, const char *key, const rt_evlist *e, const rt_json_ctx *c, int with_dur,
                         const char *str_key, int with_sev, uint32_t str_base)
{
    if (!e->n) return;
    uint64_t t0 = c->t0, prev = t0;
    fprintf(out, ",\"%s\":{\"%s\":[", key, with_dur ? "s" : "t");
    for (size_t i = 0; i < e->n; i++) {
        uint64_t t = mt(c, e->v[i].t);
        put_delta(out, t < t0 ? t0 : t, &prev, i == 0);
    }
    if (with_dur) {
        fputs("],\"d\":[", out);
        for (size_t i = 0; i < e->n; i++) fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)md(c, e->v[i].t, e->v[i].dur));
    }
    if (with_sev) {
        fputs("],\"v\":[", out);
        for (size_t i = 0; i < e->n; i++) fprintf(out, i ? ",%u" : "%u", e->v[i].sev);
    }
    if (str_key) {
        fprintf(out, "],\"%s\":[", str_key);
        for (size_t i = 0; i < e->n; i++) fprintf(out, i ? ",%u" : "%u", e->v[i].str + str_base);
    }
    fputs("]}", out);
}

static int write_lane(const rt_data *d, const rt_lane *l, FILE *out, const rt_json_ctx *c)
{
    uint64_t t0 = c->t0;
    uint32_t proc = c->proc;
    uint64_t os_tid = 0;
    const char *tname = NULL;
    char name[512];
    if (l->task) { /* "task 3 · name · threads 1, 2": the name from the run metadata (Jager.@async "name") */
        char key[64], on[128];
        snprintf(key, sizeof key, "julia.task.%llu.name", (unsigned long long)l->task);
        const char *tn = d->r ? jager_reader_meta(d->r, key) : NULL;
        size_t o = (size_t)snprintf(on, sizeof on, "%s", l->nthreads > 1 ? "threads " : "thread ");
        for (uint32_t i = 0; i < l->nthreads && o < sizeof on; i++)
            o += (size_t)snprintf(on + o, sizeof on - o, i ? ", %u" : "%u", l->threads[i]);
        if (l->more_threads && o < sizeof on) snprintf(on + o, sizeof on - o, ", …");
        if (l->task == RT_OTHER_TASKS)
            snprintf(name, sizeof name, "%llu other tasks (fewer events each) · %s", (unsigned long long)l->folded_tasks, on);
        else if (tn && *tn) snprintf(name, sizeof name, "task %llu · %.160s · %s", (unsigned long long)l->task, tn, on);
        else snprintf(name, sizeof name, "task %llu · %s", (unsigned long long)l->task, on);
    } else {
        if (d->r) jager_reader_thread(d->r, l->thread, &os_tid, &tname);
        if (tname && *tname)
            snprintf(name, sizeof name, "thread %u · %.160s · tid %llu", l->thread, tname, (unsigned long long)os_tid);
        else
            snprintf(name, sizeof name, "thread %u · tid %llu", l->thread, (unsigned long long)os_tid);
    }
    fputs("{\"name\":", out);
    tu_json_str(out, name, (size_t)-1);
    fprintf(out, ",\"thread\":%u,\"tid\":%llu,\"proc\":%u,\"total\":%llu,\"raw\":%llu,\"merged\":%llu,\"too_deep\":%llu",
            l->thread, (unsigned long long)os_tid, proc, (unsigned long long)l->n, (unsigned long long)l->raw,
            (unsigned long long)l->merged, (unsigned long long)l->too_deep);
    if (l->task) {
        if (l->task == RT_OTHER_TASKS) fprintf(out, ",\"other_tasks\":%llu,\"threads\":[", (unsigned long long)l->folded_tasks);
        else fprintf(out, ",\"task\":%llu,\"threads\":[", (unsigned long long)l->task);
        for (uint32_t i = 0; i < l->nthreads; i++) fprintf(out, i ? ",%u" : "%u", l->threads[i]);
        fprintf(out, "]%s", l->more_threads ? ",\"more_threads\":true" : "");
    }
    /* Spans and blocks by depth: count per depth, then one pass per depth over the sorted arrays. */
    int maxd = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->spans[i].depth < RT_MAX_DEPTH && l->spans[i].depth + 1 > maxd) maxd = l->spans[i].depth + 1;
    fputs(",\"rows\":[", out);
    for (int dep = 0; dep < maxd; dep++) {
        uint64_t prev = t0;
        int first = 1;
        fputs(dep ? ",{\"s\":[" : "{\"s\":[", out);
        for (size_t i = 0; i < l->n; i++)
            if (l->spans[i].depth == dep && l->spans[i].raw) { put_delta(out, mt(c, l->spans[i].start), &prev, first); first = 0; }
        fputs("],\"d\":[", out);
        first = 1;
        for (size_t i = 0; i < l->n; i++)
            if (l->spans[i].depth == dep && l->spans[i].raw) {
                fprintf(out, first ? "%llu" : ",%llu", (unsigned long long)md(c, l->spans[i].start, l->spans[i].end - l->spans[i].start));
                first = 0;
            }
        fputs("],\"k\":[", out);
        first = 1;
        for (size_t i = 0; i < l->n; i++)
            if (l->spans[i].depth == dep && l->spans[i].raw) {
                fprintf(out, first ? "%u" : ",%u", l->spans[i].site + c->site_base);
                first = 0;
            }
        fputs("]}", out);
    }
    fputs("],\"blocks\":[", out);
    for (int dep = 0; l->nblocks && dep < maxd; dep++) {
        const char *keys[5] = {"s", "d", "k", "n", "b"};
        fputs(dep ? ",{" : "{", out);
        for (int key = 0; key < 5; key++) {
            uint64_t prev = t0;
            int first = 1;
            fprintf(out, key ? "],\"%s\":[" : "\"%s\":[", keys[key]);
            for (size_t i = 0; i < l->nblocks; i++) {
                const rt_block *b = &l->blocks[i];
                if (b->depth != (uint32_t)dep) continue;
                uint64_t v = key == 1 ? md(c, b->start, b->end - b->start) : key == 2 ? (uint64_t)b->site + c->site_base : key == 3 ? b->count : b->busy;
                if (key == 0) put_delta(out, mt(c, b->start), &prev, first);
                else fprintf(out, first ? "%llu" : ",%llu", (unsigned long long)v);
                first = 0;
            }
        }
        fputs("]}", out);
    }
    fputs("]", out);
    write_evlist(out, "gc", &l->gc, c, 1, NULL, 0, 0);
    write_evlist(out, "cc", &l->cc, c, 1, "g", 0, c->str_base);
    write_evlist(out, "logs", &l->logs, c, 0, "m", 1, c->str_base);
    write_evlist(out, "marks", &l->marks, c, 0, "m", 0, c->str_base);
    if (l->logs_dropped) fprintf(out, ",\"logs_dropped\":%llu", (unsigned long long)l->logs_dropped);
    fputs("}", out);
    return 0;
}

static void put_num(FILE *out, double v, int first)
{
    if (!first) fputc(',', out);
    if (v != v || v > 1e300 || v < -1e300) fputs("0", out); /* JSON has no NaN or infinities */
    else fprintf(out, "%.10g", v);
}

/* One counter as a series, its samples in time order as they come: a monotonic counter's
 * sample is the process's running total (all threads: never summed over threads), a
 * gauge's its level. Long series are binned (last value, min, max). */
static void write_counter(const rt_data *d, const rt_counter *c, FILE *out, const rt_json_ctx *jc)
{
    uint64_t t0 = jc->t0;
    const char *prefix = jc->counter_prefix;
    const char *name = NULL, *unit = NULL;
    uint32_t kind = JAGER_COUNTER_GAUGE;
    char pname[256];
    if (c->id >= RT_JGC_SERIES_ID && c->id - RT_JGC_SERIES_ID < RT_JGC_SERIES) {
        name = rt_jgc_series[c->id - RT_JGC_SERIES_ID].name;
        unit = rt_jgc_series[c->id - RT_JGC_SERIES_ID].unit;
    } else if (c->id >= RT_GC_SERIES_ID && c->id - RT_GC_SERIES_ID < RT_GC_SERIES) {
        name = rt_gc_series[c->id - RT_GC_SERIES_ID].name;
        unit = rt_gc_series[c->id - RT_GC_SERIES_ID].unit;
    } else if ((c->id & 0xC0000000u) == RT_PLUGIN_SERIES_ID) { /* a plugin field flagged COUNTER or GAUGE */
        const jager_type_desc *t = d->r ? jager_reader_type(d->r, (uint16_t)((c->id >> 5) & 0xffffu)) : NULL;
        uint32_t f = c->id & 31u;
        if (t && f < t->nfields) {
            snprintf(pname, sizeof pname, "%s.%s", t->name ? t->name : "?", t->fields[f].name ? t->fields[f].name : "?");
            name = pname;
            unit = t->fields[f].kind == JAGER_FIELD_BYTES ? "bytes" : t->fields[f].kind == JAGER_FIELD_DURATION_NS ? "ns" : "";
            /* a COUNTER field is a total the plugin keeps: drawn as it comes, like a gauge */
            kind = JAGER_COUNTER_GAUGE;
        }
    } else if (d->r) {
        jager_reader_counter(d->r, c->id, &name, &unit, &kind);
    }
    char label[512];
    if (name) snprintf(label, sizeof label, "%s%s", prefix ? prefix : "", name);
    else snprintf(label, sizeof label, "%scounter %u", prefix ? prefix : "", c->id);
    fputs("{\"name\":", out);
    tu_json_str(out, label, (size_t)-1);
    fputs(",\"unit\":", out);
    tu_json_str(out, unit ? unit : "", (size_t)-1);
    fprintf(out, ",\"kind\":\"%s\"", kind == JAGER_COUNTER_MONOTONIC ? "monotonic" : "gauge");
    uint64_t tmin = c->s[0].t, tmax = c->s[c->n - 1].t;
    uint32_t bins = d->o.counter_bins;
    int binned = c->n > bins && tmax > tmin;
    double width = binned ? (double)(tmax - tmin) / bins : 0;
    /* Pass 1 over the samples writes t; pass 2 v; pass 3 lo; pass 4 hi (bins only). */
    const char *keys[4] = {"t", "v", "lo", "hi"};
    for (int key = 0; key < (binned ? 4 : 2); key++) {
        fprintf(out, ",\"%s\":[", keys[key]);
        uint64_t prev = t0;
        int first = 1;
        long cur_bin = -1;
        double lo = 0, hi = 0, val = 0, bv = 0;
        uint64_t bt = 0;
        for (size_t i = 0; i <= c->n; i++) {
            long bin = -2;
            if (i < c->n) {
                const rt_sample *s = &c->s[i];
                val = s->v;
                if (!binned) {
                    if (key == 0) put_delta(out, mt(jc, s->t) < t0 ? t0 : mt(jc, s->t), &prev, first);
                    else put_num(out, val, first);
                    first = 0;
                    continue;
                }
                bin = (long)((double)(s->t - tmin) / width);
                if (bin >= (long)bins) bin = (long)bins - 1;
                if (bin == cur_bin) {
                    if (val < lo) lo = val;
                    if (val > hi) hi = val;
                    bv = val;
                    continue;
                }
            }
            if (cur_bin >= 0) { /* emit the finished bin: its first time, last value, range */
                if (key == 0) put_delta(out, mt(jc, bt) < t0 ? t0 : mt(jc, bt), &prev, first);
                else put_num(out, key == 1 ? bv : key == 2 ? lo : hi, first);
                first = 0;
            }
            if (i < c->n) { cur_bin = bin; bt = c->s[i].t; lo = hi = bv = val; }
        }
        fputs("]", out);
    }
    fputs("}", out);
}

int rt_write_lanes(const rt_data *d, FILE *out, const rt_json_ctx *c, int *first)
{
    /* task lanes first (by task id: a Julia program's root task is 1), then the threads' own */
    for (size_t k = 0; k < rt_nall(d); k++) {
        size_t i = k < d->ntlanes ? d->nlanes + k : k - d->ntlanes;
        const rt_lane *l = rt_lane_at(d, i);
        if (!l) continue;
        if (!*first) fputc(',', out);
        *first = 0;
        write_lane(d, l, out, c);
    }
    return ferror(out) ? -1 : 0;
}

int rt_write_counters(const rt_data *d, FILE *out, const rt_json_ctx *c, int *first)
{
    for (size_t i = 0; i < d->ncounters; i++) {
        if (!d->counters[i].n) continue;
        if (!*first) fputc(',', out);
        *first = 0;
        write_counter(d, &d->counters[i], out, c);
    }
    return ferror(out) ? -1 : 0;
}

int rt_write_strings(const rt_data *d, FILE *out, int *first)
{
    for (uint32_t i = 0; i < d->strings.count; i++) {
        uint32_t len;
        const char *s = tu_strdict_get(&d->strings, i, &len);
        if (!*first) fputc(',', out);
        *first = 0;
        tu_json_str(out, s, len);
    }
    return ferror(out) ? -1 : 0;
}

uint32_t rt_string_count(const rt_data *d) { return d->strings.count; }

int rt_write_json(const rt_data *d, FILE *out, uint64_t t0, uint32_t proc)
{
    rt_json_ctx c = {.t0 = t0, .proc = proc};
    int first = 1;
    fputs("\"lanes\":[", out);
    rt_write_lanes(d, out, &c, &first);
    fputs("],\"counters\":[", out);
    first = 1;
    rt_write_counters(d, out, &c, &first);
    fputs("],\"strings\":[", out);
    first = 1;
    rt_write_strings(d, out, &first);
    fputs("]", out);
    return ferror(out) ? -1 : 0;
}
