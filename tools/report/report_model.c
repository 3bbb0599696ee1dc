/* JSON from the analysis model for `jager report` (see report_model.h). Every string that
 * comes from the recording goes through tu_json_str, which also escapes < > & and
 * U+2028/2029, so the data block can never end its <script> element early. */
#include "report_model.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_events.h"
#include "toolutil.h"

static void key_str(FILE *out, const char *key, const char *value)
{
    fprintf(out, ",\"%s\":", key);
    tu_json_str(out, value ? value : "", (size_t)-1);
}

static void key_u64(FILE *out, const char *key, uint64_t v) { fprintf(out, ",\"%s\":%" PRIu64, key, v); }

static void key_num(FILE *out, const char *key, double v)
{
    if (v != v || v > 1e300 || v < -1e300) v = 0;
    fprintf(out, ",\"%s\":%.6g", key, v);
}

/* The first of several metadata keys that is present. */
static const char *meta_any(const jager_reader *r, const char *const *keys)
{
    for (; *keys; keys++) {
        const char *v = jager_reader_meta(r, *keys);
        if (v && *v) return v;
    }
    return NULL;
}

static const char *drop_reason_name(int i)
{
    static const char *names[] = {"ring full", "overwritten", "no ring", "too large", "sink", "bad emit", "after stop"};
    return i < 7 ? names[i] : "other";
}

/* Plugin names: the part before the dot of every plugin event type in the schema seen. */
static void write_plugins(FILE *out, const jm_model *m)
{
    const char *listed = jager_reader_meta(m->reader, "jager.plugins");
    fputs(",\"plugins\":[", out);
    int first = 1;
    if (listed && *listed) {
        const char *p = listed;
        while (*p) {
            size_t n = strcspn(p, ",");
            if (n) {
                if (!first) fputc(',', out);
                tu_json_str(out, p, n);
                first = 0;
            }
            p += n + (p[n] == ',');
        }
    } else {
        for (uint32_t i = 0; i < m->ntypes; i++) {
            const jm_type_count *t = &m->types[i];
            if (t->type < JAGER_EV_FIRST_PLUGIN || !t->name) continue;
            size_t n = strcspn(t->name, ".");
            int seen = 0;
            for (uint32_t k = 0; k < i && !seen; k++) {
                const jm_type_count *u = &m->types[k];
                seen = u->type >= JAGER_EV_FIRST_PLUGIN && u->name && strcspn(u->name, ".") == n && !strncmp(u->name, t->name, n);
            }
            if (seen) continue;
            if (!first) fputc(',', out);
            tu_json_str(out, t->name, n);
            first = 0;
        }
    }
    fputc(']', out);
}

static void write_run(FILE *out, const rm_input *in)
{
    const jm_model *m = in->m;
    rt_summary sum, *ts = &sum;
    rt_get_summary(in->rt, ts);
    static const char *const host_keys[] = {"host.name", "host", NULL};
    static const char *const cmd_keys[] = {"process.command_line", "process.cmdline", "command_line", NULL};
    static const char *const exe_keys[] = {"process.executable", "process.executable.name", "process.name", NULL};
    static const char *const pid_keys[] = {"process.pid", "pid", NULL};
    const jager_reader *r = m->reader;
    const char *host = meta_any(r, host_keys), *exe = meta_any(r, exe_keys), *pid = meta_any(r, pid_keys);
    char process[512];
    snprintf(process, sizeof process, "%s%s%s", exe ? exe : "", exe && pid ? " · pid " : (pid ? "pid " : ""), pid ? pid : "");

    fputs("{\"file\":", out);
    tu_json_str(out, in->path, (size_t)-1);
    key_str(out, "host", host);
    key_str(out, "process", process);
    key_str(out, "command_line", meta_any(r, cmd_keys));
    key_u64(out, "start_unix_ns", m->info.start_unix_ns);
    key_u64(out, "duration_ns", m->run_ns);
    key_u64(out, "events", m->events);
    key_u64(out, "spans_total", m->have_stats && m->stats.spans_total > m->spans ? m->stats.spans_total : m->spans);
    key_u64(out, "span_events", m->spans);
    key_u64(out, "sites", m->nsites ? m->nsites - 1 : 0);
    key_u64(out, "threads", m->nthreads);
    key_u64(out, "dropped", m->dropped);
    key_u64(out, "file_bytes", m->info.file_bytes);
    key_u64(out, "truncated", in->truncated || m->info.truncated);
    key_u64(out, "clean_end", m->info.clean_end);
    if (in->read_error) key_str(out, "read_error", in->read_error);
    if (m->have_stats && m->stats.span_cost_ns_x1000) {
        key_num(out, "span_cost_ns", m->stats.span_cost_ns_x1000 / 1000.0);
        key_num(out, "overhead_share", m->self_cost_pct / 100.0);
    }
    key_u64(out, "gc_pauses", m->gc.pauses ? m->gc.pauses : ts->gc_pauses);
    key_u64(out, "gc_ns", m->gc.total_ns ? m->gc.total_ns : ts->gc_ns);
    key_u64(out, "compiles", m->compile_count ? m->compile_count : ts->compiles);
    key_u64(out, "compile_ns", m->compile_count ? m->compile_ns + m->inference_ns : ts->compile_ns);
    key_u64(out, "logs", ts->logs);
    fputs(",\"drops\":[", out);
    int first = 1;
    for (int i = 0; i < JAGER_DROP_REASONS; i++) {
        uint64_t n = m->have_stats && m->stats.dropped[i] > m->drop_records[i] ? m->stats.dropped[i] : m->drop_records[i];
        if (!n) continue;
        fprintf(out, "%s[\"%s\",%" PRIu64 "]", first ? "" : ",", drop_reason_name(i), n);
        first = 0;
    }
    fputc(']', out);
    write_plugins(out, m);
    if (ts->merged_spans || ts->not_kept || ts->too_deep) {
        char buf[512], dur[32];
        int k = snprintf(buf, sizeof buf, "%" PRIu64 " spans drawn exactly", ts->raw);
        if (ts->merged_spans)
            k += snprintf(buf + k, sizeof buf - (size_t)k, " (all longer than %s); %" PRIu64 " shorter ones merged into %" PRIu64 " blocks",
                          tu_fmt_ns(dur, sizeof dur, (double)ts->duration_threshold_ns), ts->merged_spans, ts->blocks);
        if (ts->too_deep && k < (int)sizeof buf)
            k += snprintf(buf + k, sizeof buf - (size_t)k, "; %" PRIu64 " nested deeper than %d levels not drawn", ts->too_deep, RT_MAX_DEPTH);
        if (ts->not_kept && k < (int)sizeof buf)
            snprintf(buf + k, sizeof buf - (size_t)k, "; %" PRIu64 " spans past the timeline's memory cap not drawn (totals include them)", ts->not_kept);
        key_str(out, "lod", buf);
    }
    fputs(",\"meta\":[", out);
    size_t nm = jager_reader_meta_count(r);
    for (size_t i = 0; i < nm; i++) {
        const char *k = NULL, *v = NULL;
        if (jager_reader_meta_at(r, i, &k, &v) != JAGER_OK) continue;
        fputs(i ? ",[" : "[", out);
        tu_json_str(out, k ? k : "", (size_t)-1);
        fputc(',', out);
        tu_json_str(out, v ? v : "", (size_t)-1);
        fputc(']', out);
    }
    fputs("]}", out);
}

/* The process's display name and rank. */
static void name_input(rm_input *in)
{
    static const char *const host_keys[] = {"host.name", "host", NULL};
    static const char *const exe_keys[] = {"process.executable", "process.executable.name", "process.name", NULL};
    static const char *const pid_keys[] = {"process.pid", "pid", NULL};
    const char *const rank_keys[] = {jp_mpi_meta[JP_MPI_META_RANK], NULL};
    const jager_reader *r = in->m->reader;
    const char *host = meta_any(r, host_keys), *exe = meta_any(r, exe_keys), *pid = meta_any(r, pid_keys);
    char process[512];
    snprintf(process, sizeof process, "%s%s%s", exe ? exe : "", exe && pid ? " · pid " : (pid ? "pid " : ""), pid ? pid : "");
    in->rank = meta_any(r, rank_keys);
    if (in->rank) snprintf(in->name, sizeof in->name, "rank %s · %s · %s", in->rank, host ? host : "?", process);
    else snprintf(in->name, sizeof in->name, "%s%s%s", process, host ? " on " : "", host ? host : "");
}

/* Wall-clock time (UTC ns) of a time on a recording's own clock. */
static int64_t wall(const jm_model *m, uint64_t t)
{
    return (int64_t)m->info.start_unix_ns + ((int64_t)t - (int64_t)m->info.start_ns);
}

void rm_layout(rm_input *in, size_t n)
{
    uint32_t base = 0;
    int64_t origin = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        name_input(&in[i]);
        in[i].site_base = base;
        base += in[i].m->nsites > 1 ? in[i].m->nsites - 1 : 0;
        int64_t w = wall(in[i].m, in[i].m->first_ns);
        if (w < origin) origin = w;
    }
    /* then (other), (unrecorded), and the process nodes of the merged flame graph */
    for (size_t i = 0; i < n; i++) in[i].proc_site = n > 1 ? base + 3 + (uint32_t)i : 0;
    for (size_t i = 0; i < n; i++) {
        const jm_model *m = in[i].m;
        if (n == 1) { /* on its own, a recording starts at its first event */
            in[i].t0 = m->first_ns;
        } else {
            int64_t t0 = (int64_t)m->first_ns - (wall(m, m->first_ns) - origin);
            in[i].t0 = t0 > 0 ? (uint64_t)t0 : 0;
        }
        uint64_t last = m->first_ns + m->run_ns;
        in[i].end = last > in[i].t0 ? last - in[i].t0 : 0;
    }
}

void rm_write_runs(FILE *out, const rm_input *in, size_t n)
{
    uint64_t dur = 0;
    fputs("\"run\":", out);
    write_run(out, &in[0]);
    fputs(",\"runs\":[", out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', out);
        write_run(out, &in[i]);
        if (in[i].end > dur) dur = in[i].end;
    }
    fputs("],\"processes\":[", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        tu_json_str(out, in[i].name, (size_t)-1);
        if (in[i].rank) {
            fputs(",\"rank\":", out);
            tu_json_str(out, in[i].rank, (size_t)-1);
        }
        fputc('}', out);
    }
    fprintf(out, "],\"duration_ns\":%" PRIu64, dur);
}

void rm_write_sites(FILE *out, const rm_input *in, size_t n)
{
    fputs("\"sites\":[[\"(root)\",\"\",0]", out);
    for (size_t p = 0; p < n; p++) {
        const jm_model *m = in[p].m;
        for (uint32_t i = 1; i < m->nsites; i++) {
            const jm_site *s = &m->sites[i];
            fputs(",[", out);
            tu_json_str(out, s->name ? s->name : "?", (size_t)-1);
            fputc(',', out);
            tu_json_str(out, s->file ? s->file : "", (size_t)-1);
            fprintf(out, ",%u]", s->line);
        }
    }
    fputs(",[\"(other)\",\"\",0],[\"(unrecorded)\",\"\",0]", out);
    for (size_t p = 0; n > 1 && p < n; p++) {
        fputs(",[", out);
        tu_json_str(out, in[p].name, (size_t)-1);
        fputs(",\"\",0]", out);
    }
    fputc(']', out);
}

/* Index in the sites array of site \p site of input \p in (tree pseudo-sites included). */
static uint32_t site_index(const rm_input *all, size_t n, const rm_input *in, uint32_t site)
{
    const rm_input *last = &all[n - 1];
    uint32_t after = last->site_base + (last->m->nsites > 1 ? last->m->nsites - 1 : 0); /* index of the last real site */
    if (site == JM_SITE_OTHER) return after + 1;
    if (site == JM_SITE_UNRECORDED) return after + 2;
    if (site == 0 || site >= in->m->nsites) return after + 1;
    return in->site_base + site;
}

/* One output node of the page's tree. */
typedef struct out_node {
    int64_t parent;
    uint32_t site;
    uint64_t incl, excl, calls;
} out_node;

/* Append input \p in's merged tree under output node \p parent (its root is skipped: its
 * children hang from \p parent), depth-first with parents first. */
static int append_tree(out_node *o, uint32_t *n, const rm_input *all, size_t nin, const rm_input *in, int64_t parent,
                       uint32_t *stack, uint32_t *newidx)
{
    const jm_tree *t = &in->m->merged;
    uint32_t top = 0;
    newidx[0] = (uint32_t)parent;
    for (uint32_t c = t->nodes[0].first_child; c != JM_NONE && c < t->count && top < t->count; c = t->nodes[c].next_sibling)
        stack[top++] = c;
    while (top) {
        uint32_t i = stack[--top];
        const jm_node *nd = &t->nodes[i];
        newidx[i] = *n;
        int64_t pa = nd->parent == JM_NONE || nd->parent >= t->count ? parent : (int64_t)newidx[nd->parent];
        o[(*n)++] = (out_node){pa, site_index(all, nin, in, nd->site), nd->incl_ns, nd->excl_ns, nd->calls};
        for (uint32_t c = nd->first_child; c != JM_NONE && c < t->count && top < t->count; c = t->nodes[c].next_sibling)
            stack[top++] = c;
    }
    return 0;
}

int rm_write_tree(FILE *out, const rm_input *in, size_t n)
{
    /* One root; with several recordings, one node per process under it. */
    uint64_t total = 1 + n, maxcount = 1;
    for (size_t p = 0; p < n; p++) {
        total += in[p].m->merged.count;
        if (in[p].m->merged.count > maxcount) maxcount = in[p].m->merged.count;
    }
    out_node *o = malloc(total * sizeof *o);
    uint32_t *stack = malloc(maxcount * sizeof *stack), *newidx = malloc(maxcount * sizeof *newidx);
    if (!o || !stack || !newidx) {
        free(o);
        free(stack);
        free(newidx);
        return -1;
    }
    uint32_t cnt = 0;
    o[cnt++] = (out_node){-1, 0, 0, 0, 1};
    for (size_t p = 0; p < n; p++) {
        const jm_tree *t = &in[p].m->merged;
        if (!t->count || !t->nodes) continue;
        int64_t parent = 0;
        if (n > 1) {
            parent = cnt;
            o[cnt++] = (out_node){0, in[p].proc_site, t->nodes[0].incl_ns, 0, 1};
        }
        o[0].incl += t->nodes[0].incl_ns;
        append_tree(o, &cnt, in, n, &in[p], parent, stack, newidx);
    }
    const char *keys[5] = {"p", "k", "t", "s", "c"};
    fputs("\"tree\":{", out);
    for (int k = 0; k < 5; k++) {
        fprintf(out, k ? "],\"%s\":[" : "\"%s\":[", keys[k]);
        for (uint32_t j = 0; j < cnt; j++) {
            if (j) fputc(',', out);
            switch (k) {
            case 0: fprintf(out, "%" PRId64, o[j].parent); break;
            case 1: fprintf(out, "%u", o[j].site); break;
            case 2: fprintf(out, "%" PRIu64, o[j].incl); break;
            case 3: fprintf(out, "%" PRIu64, o[j].excl); break;
            default: fprintf(out, "%" PRIu64, o[j].calls); break;
            }
        }
    }
    fputs("]}", out);
    free(o);
    free(stack);
    free(newidx);
    return 0;
}

static void write_table(FILE *out, const rm_input *in, uint32_t proc, int *first)
{
    const jm_model *m = in->m;
    for (uint32_t i = 1; i < m->nsites; i++) {
        const jm_site *s = &m->sites[i];
        if (!s->calls && !s->ev_calls) continue;
        fprintf(out, "%s{\"k\":%u,\"proc\":%u", *first ? "" : ",", in->site_base + i, proc);
        *first = 0;
        key_u64(out, "calls", s->calls ? s->calls : s->ev_calls);
        key_u64(out, "total", s->calls ? s->total_ns : s->ev_total_ns);
        key_u64(out, "self", s->self_ns);
        key_u64(out, "p50", s->p50_ns);
        key_u64(out, "p99", s->p99_ns);
        key_u64(out, "max", s->max_ns);
        key_u64(out, "bytes", s->bytes);
        key_u64(out, "errors", s->errors);
        key_u64(out, "gc", s->gc_ns);
        key_u64(out, "exact", s->exact ? 1 : 0);
        /* calls the exact count has but the span events lack: self time is from the rest */
        if (!s->tree_exact && s->exact && s->calls > s->ev_calls + s->thinned) key_u64(out, "lost", s->calls - s->ev_calls - s->thinned);
        /* thinned on purpose by the sampling mode: shown as "sampled 1 in N", never as loss */
        if (s->sample_1_in) key_u64(out, "sampled", s->sample_1_in);
        if (s->unstable_count) fputs(",\"unstable\":1", out);
        fputs(",\"sigs\":[", out);
        for (uint32_t k = 0; k < s->sig_count && s->sig_first + k < m->nsignatures; k++) {
            const jm_signature *g = &m->signatures[s->sig_first + k];
            int unstable = 0;
            for (uint32_t u = 0; u < s->unstable_count && s->unstable_first + u < m->ninstabilities; u++) {
                const jm_instability *ui = &m->instabilities[s->unstable_first + u];
                if (ui->signature && g->signature && !strcmp(ui->signature, g->signature)) unstable = 1;
            }
            fputs(k ? ",[" : "[", out);
            tu_json_str(out, g->signature ? g->signature : "", (size_t)-1);
            fprintf(out, ",%" PRIu64 ",%d]", g->calls, unstable);
        }
        fputs("]}", out);
    }
}

void rm_write_table(FILE *out, const rm_input *in, size_t n)
{
    int first = 1;
    fputs("\"table\":[", out);
    for (size_t p = 0; p < n; p++) write_table(out, &in[p], (uint32_t)p, &first);
    fputc(']', out);
}

/* "calls 1200", "gc_time 3.1 ms", "pct_of_run 38 %" */
static void evidence_text(const hunt_evidence *e, char *buf, size_t size)
{
    char v[48];
    int64_t iv;
    const char *unit = e->unit ? e->unit : "";
    if (!strcmp(unit, "ns")) tu_fmt_ns(v, sizeof v, e->value);
    else if (!strcmp(unit, "bytes")) tu_fmt_bytes(v, sizeof v, e->value);
    else if (!strcmp(unit, "%")) snprintf(v, sizeof v, "%.1f %%", e->value);
    else if (tu_double_as_i64(e->value, &iv)) snprintf(v, sizeof v, "%" PRId64 "%s%s", iv, *unit && strcmp(unit, "count") ? " " : "", strcmp(unit, "count") ? unit : "");
    else snprintf(v, sizeof v, "%.3g%s%s", e->value, *unit ? " " : "", unit);
    snprintf(buf, size, "%s: %s", e->key ? e->key : "?", v);
    for (char *p = buf; *p && *p != ':'; p++)
        if (*p == '_') *p = ' ';
}

typedef struct ranked {
    const hunt_finding *f;
    uint32_t proc;
    uint32_t order; /* position in its recording's list, to keep ties stable */
} ranked;

/* Warnings about a recording (dropped events) first, then by cost, descending. */
static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int wx = x->f->kind == HUNT_DROPPED_EVENTS || x->f->kind == HUNT_JOB_INCOMPLETE,
        wy = y->f->kind == HUNT_DROPPED_EVENTS || y->f->kind == HUNT_JOB_INCOMPLETE;
    if (wx != wy) return wy - wx;
    if (x->f->cost_ns != y->f->cost_ns) return x->f->cost_ns < y->f->cost_ns ? 1 : -1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return x->proc < y->proc ? -1 : x->proc > y->proc;
}

int rm_write_findings(FILE *out, const rm_input *in, size_t nin)
{
    size_t n = 0;
    for (size_t p = 0; p < nin; p++) n += in[p].nfindings;
    ranked *all = n ? malloc(n * sizeof *all) : NULL;
    if (n && !all) return -1;
    size_t k0 = 0;
    for (size_t p = 0; p < nin; p++)
        for (size_t i = 0; i < in[p].nfindings; i++) all[k0++] = (ranked){&in[p].findings[i], (uint32_t)p, (uint32_t)i};
    /* one recording: hunt's own order; several: merged by cost */
    if (nin > 1 && n > 1) qsort(all, n, sizeof *all, ranked_cmp);
    fputs("\"findings\":[", out);
    for (size_t i = 0; i < n; i++) {
        const hunt_finding *h = all[i].f;
        fputs(i ? ",{\"kind\":" : "{\"kind\":", out);
        tu_json_str(out, hunt_kind_name(h->kind), (size_t)-1);
        key_str(out, "severity", h->severity >= 2 ? "problem" : h->severity == 1 ? "warn" : "note");
        key_str(out, "title", h->title);
        key_num(out, "cost_ns", h->cost_ns);
        key_num(out, "share", h->pct_of_run / 100.0);
        key_str(out, "func", h->func);
        key_str(out, "file", h->file);
        key_u64(out, "line", h->line);
        key_u64(out, "site", h->site ? in[all[i].proc].site_base + h->site : 0);
        key_u64(out, "proc", all[i].proc);
        key_str(out, "hint", h->hint);
        key_str(out, "estimate", h->estimate ? h->estimate : "");
        fputs(",\"evidence\":[", out);
        for (uint32_t k = 0; k < h->nevidence && k < HUNT_MAX_EVIDENCE; k++) {
            char buf[160];
            evidence_text(&h->evidence[k], buf, sizeof buf);
            if (k) fputc(',', out);
            tu_json_str(out, buf, (size_t)-1);
        }
        fputs("],\"chain\":", out);
        /* details: trigger stacks, signatures, the call chain: one line each */
        size_t len = 0;
        for (uint32_t k = 0; k < h->ndetails && k < HUNT_MAX_DETAILS; k++) len += (h->details[k] ? strlen(h->details[k]) : 0) + 1;
        char *joined = len ? malloc(len) : NULL;
        if (joined) {
            char *p = joined;
            for (uint32_t k = 0; k < h->ndetails && k < HUNT_MAX_DETAILS; k++) {
                size_t l = h->details[k] ? strlen(h->details[k]) : 0;
                if (p != joined) *p++ = '\n';
                memcpy(p, h->details[k] ? h->details[k] : "", l);
                p += l;
            }
            tu_json_str(out, joined, (size_t)(p - joined));
            free(joined);
        } else {
            fputs("\"\"", out);
        }
        fputc('}', out);
    }
    fputc(']', out);
    free(all);
    return 0;
}

#define RM_ALLOCATORS 8 /* rows per recording, as in `jager hunt` */

void rm_write_allocators(FILE *out, const rm_input *in, size_t nin)
{
    fputs("\"allocators\":[", out);
    int first = 1;
    for (size_t p = 0; p < nin; p++) {
        hunt_allocator al[RM_ALLOCATORS];
        size_t na = in[p].m ? hunt_allocators(in[p].m, al, RM_ALLOCATORS) : 0;
        for (size_t i = 0; i < na; i++) {
            const jm_site *s = jm_site_get(in[p].m, al[i].site);
            fputs(first ? "{" : ",{", out);
            first = 0;
            fprintf(out, "\"proc\":%zu", p);
            key_u64(out, "site", in[p].site_base + al[i].site);
            key_str(out, "func", s ? s->name : "");
            key_str(out, "file", s ? s->file : "");
            key_u64(out, "line", s ? s->line : 0);
            key_u64(out, "bytes", al[i].bytes);
            key_u64(out, "self_bytes", al[i].self_bytes);
            key_u64(out, "calls", al[i].calls);
            key_num(out, "region_ns", al[i].region_ns);
            key_u64(out, "gc_ns", al[i].gc_ns);
            fputc('}', out);
        }
    }
    fputc(']', out);
}

void rm_write_attrs(FILE *out, const rm_input *in, size_t nin)
{
    fputs("\"attrs\":[", out);
    int first = 1;
    for (size_t p = 0; p < nin; p++) {
        const jm_model *m = in[p].m;
        for (size_t i = 0; m && i < m->nattr_groups; i++) {
            const jm_attr_group *g = &m->attr_groups[i];
            fputs(first ? "{" : ",{", out);
            first = 0;
            fprintf(out, "\"proc\":%zu", p);
            key_u64(out, "site", in[p].site_base + g->site);
            key_str(out, "func", jm_site_name(m, g->site));
            key_str(out, "key", g->key);
            key_str(out, "value", g->value);
            key_u64(out, "calls", g->calls);
            key_u64(out, "total", g->total_ns);
            key_u64(out, "max", g->max_ns);
            fputc('}', out);
        }
    }
    fputc(']', out);
}

void rm_write_methods(FILE *out, const rm_input *in, size_t nin)
{
    fputs("\"methods\":[", out);
    int first = 1;
    for (size_t p = 0; p < nin; p++) {
        const jm_model *m = in[p].m;
        for (size_t i = 0; m && i < m->ncode_methods; i++) {
            const jm_code_method *g = &m->code_methods[i];
            fputs(first ? "{" : ",{", out);
            first = 0;
            fprintf(out, "\"proc\":%zu", p);
            key_str(out, "method", g->method);
            key_u64(out, "logs", g->logs);
            key_u64(out, "warnings", g->warnings);
            key_u64(out, "errors", g->errors);
            key_u64(out, "span_errors", g->span_errors);
            fputc('}', out);
        }
    }
    fputc(']', out);
}
