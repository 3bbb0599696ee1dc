/* JSON from the analysis model for `jager report` (see report_model.h). Every string that
 * comes from the recording goes through tu_json_str, which also escapes < > & and
 * U+2028/2029, so the data block can never end its <script> element early. */
#include "report_model.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
    static const char *names[] = {"ring full", "overwritten", "no ring", "too large", "sink"};
    return i < 5 ? names[i] : "other";
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

void rm_write_run(FILE *out, const jm_model *m, const rt_summary *ts, const rm_source *src)
{
    static const char *const host_keys[] = {"host.name", "host", NULL};
    static const char *const cmd_keys[] = {"process.command_line", "process.cmdline", "command_line", NULL};
    static const char *const exe_keys[] = {"process.executable", "process.executable.name", "process.name", NULL};
    static const char *const pid_keys[] = {"process.pid", "pid", NULL};
    static const char *const rank_keys[] = {"mpi.rank", NULL};
    const jager_reader *r = m->reader;
    const char *host = meta_any(r, host_keys), *exe = meta_any(r, exe_keys), *pid = meta_any(r, pid_keys);
    const char *rank = meta_any(r, rank_keys);
    char process[512];
    snprintf(process, sizeof process, "%s%s%s", exe ? exe : "", exe && pid ? " · pid " : (pid ? "pid " : ""), pid ? pid : "");

    fputs("\"run\":{\"file\":", out);
    tu_json_str(out, src->path, (size_t)-1);
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
    key_u64(out, "truncated", src->truncated || m->info.truncated);
    key_u64(out, "clean_end", m->info.clean_end);
    if (src->read_error) key_str(out, "read_error", src->read_error);
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

    /* One process per recording; a rank makes the timeline group its lanes under it. */
    char pname[640];
    if (rank) snprintf(pname, sizeof pname, "rank %s · %s · %s", rank, host ? host : "?", process);
    else snprintf(pname, sizeof pname, "%s%s%s", process, host ? " on " : "", host ? host : "");
    fputs(",\"processes\":[{\"name\":", out);
    tu_json_str(out, pname, (size_t)-1);
    if (rank) {
        fputs(",\"rank\":", out);
        tu_json_str(out, rank, (size_t)-1);
    }
    fputs("}]", out);
}

void rm_write_sites(FILE *out, const jm_model *m)
{
    fputs("\"sites\":[[\"(root)\",\"\",0]", out);
    for (uint32_t i = 1; i < m->nsites; i++) {
        const jm_site *s = &m->sites[i];
        fputs(",[", out);
        tu_json_str(out, s->name ? s->name : "?", (size_t)-1);
        fputc(',', out);
        tu_json_str(out, s->file ? s->file : "", (size_t)-1);
        fprintf(out, ",%u]", s->line);
    }
    fputs(",[\"(other)\",\"\",0],[\"(unrecorded)\",\"\",0]]", out);
}

/* Tree site id → index into the sites array written above. */
static uint32_t site_index(const jm_model *m, uint32_t site)
{
    uint32_t n = m->nsites ? m->nsites : 1;
    if (site == JM_SITE_OTHER) return n;
    if (site == JM_SITE_UNRECORDED) return n + 1;
    return site < n ? site : n;
}

int rm_write_tree(FILE *out, const jm_model *m)
{
    const jm_tree *t = &m->merged;
    if (!t->count || !t->nodes) {
        fputs("\"tree\":{\"p\":[],\"k\":[],\"t\":[],\"s\":[],\"c\":[]}", out);
        return 0;
    }
    /* Depth-first order, parents before children: new index per node, then five columns. */
    uint32_t *order = malloc(t->count * sizeof *order), *newidx = malloc(t->count * sizeof *newidx),
             *stack = malloc(t->count * sizeof *stack);
    if (!order || !newidx || !stack) {
        free(order);
        free(newidx);
        free(stack);
        return -1;
    }
    uint32_t n = 0, top = 0;
    stack[top++] = 0;
    while (top) {
        uint32_t i = stack[--top];
        if (i >= t->count) continue;
        newidx[i] = n;
        order[n++] = i;
        for (uint32_t c = t->nodes[i].first_child; c != JM_NONE && c < t->count && top < t->count; c = t->nodes[c].next_sibling)
            stack[top++] = c;
    }
    const char *keys[5] = {"p", "k", "t", "s", "c"};
    fputs("\"tree\":{", out);
    for (int k = 0; k < 5; k++) {
        fprintf(out, k ? "],\"%s\":[" : "\"%s\":[", keys[k]);
        for (uint32_t j = 0; j < n; j++) {
            const jm_node *nd = &t->nodes[order[j]];
            if (j) fputc(',', out);
            switch (k) {
            case 0:
                if (nd->parent == JM_NONE || nd->parent >= t->count) fputs("-1", out);
                else fprintf(out, "%u", newidx[nd->parent]);
                break;
            case 1: fprintf(out, "%u", nd->parent == JM_NONE ? 0 : site_index(m, nd->site)); break;
            case 2: fprintf(out, "%" PRIu64, nd->incl_ns); break;
            case 3: fprintf(out, "%" PRIu64, nd->excl_ns); break;
            default: fprintf(out, "%" PRIu64, nd->calls); break;
            }
        }
    }
    fputs("]}", out);
    free(order);
    free(newidx);
    free(stack);
    return 0;
}

void rm_write_table(FILE *out, const jm_model *m)
{
    fputs("\"table\":[", out);
    int first = 1;
    for (uint32_t i = 1; i < m->nsites; i++) {
        const jm_site *s = &m->sites[i];
        if (!s->calls && !s->ev_calls) continue;
        fprintf(out, "%s{\"k\":%u", first ? "" : ",", i);
        first = 0;
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
        if (s->unstable_count) fputs(",\"unstable\":1", out);
        fputs(",\"sigs\":[", out);
        for (uint32_t k = 0; k < s->sig_count && s->sig_first + k < m->nsignatures; k++) {
            const jm_signature *g = &m->signatures[s->sig_first + k];
            int unstable = 0;
            for (uint32_t u = 0; u < s->unstable_count && s->unstable_first + u < m->ninstabilities; u++) {
                const jm_instability *in = &m->instabilities[s->unstable_first + u];
                if (in->signature && g->signature && !strcmp(in->signature, g->signature)) unstable = 1;
            }
            fputs(k ? ",[" : "[", out);
            tu_json_str(out, g->signature ? g->signature : "", (size_t)-1);
            fprintf(out, ",%" PRIu64 ",%d]", g->calls, unstable);
        }
        fputs("]}", out);
    }
    fputc(']', out);
}

/* "calls 1200", "gc_time 3.1 ms", "pct_of_run 38 %" */
static void evidence_text(const hunt_evidence *e, char *buf, size_t size)
{
    char v[48];
    const char *unit = e->unit ? e->unit : "";
    if (!strcmp(unit, "ns")) tu_fmt_ns(v, sizeof v, e->value);
    else if (!strcmp(unit, "bytes")) tu_fmt_bytes(v, sizeof v, e->value);
    else if (!strcmp(unit, "%")) snprintf(v, sizeof v, "%.1f %%", e->value);
    else if (e->value == (double)(int64_t)e->value) snprintf(v, sizeof v, "%" PRId64 "%s%s", (int64_t)e->value, *unit && strcmp(unit, "count") ? " " : "", strcmp(unit, "count") ? unit : "");
    else snprintf(v, sizeof v, "%.3g%s%s", e->value, *unit ? " " : "", unit);
    snprintf(buf, size, "%s: %s", e->key ? e->key : "?", v);
    for (char *p = buf; *p && *p != ':'; p++)
        if (*p == '_') *p = ' ';
}

void rm_write_findings(FILE *out, const jm_model *m, const hunt_finding *f, size_t n)
{
    (void)m;
    fputs("\"findings\":[", out);
    for (size_t i = 0; i < n; i++) {
        const hunt_finding *h = &f[i];
        fputs(i ? ",{\"kind\":" : "{\"kind\":", out);
        tu_json_str(out, hunt_kind_name(h->kind), (size_t)-1);
        key_str(out, "severity", h->severity >= 2 ? "problem" : h->severity == 1 ? "warn" : "note");
        key_str(out, "title", h->title);
        key_num(out, "cost_ns", h->cost_ns);
        key_num(out, "share", h->pct_of_run / 100.0);
        key_str(out, "func", h->func);
        key_str(out, "file", h->file);
        key_u64(out, "line", h->line);
        key_u64(out, "site", h->site);
        key_str(out, "hint", h->hint);
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
}
