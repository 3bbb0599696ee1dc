/* cmd_summary.c — `jager summary FILE [--threads|--merged] [--format text|json] [--depth N]`:
 * the nested per-site table (calls, total, % of parent, mean, p50, p99, bytes, GC %,
 * errors) of the span call tree, merged over threads or per thread, with the signature
 * breakdown of sites that saw more than one, under a header of run totals, drops and the
 * instrumentation's own cost; then the program's counters (summary_counters.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "job.h"
#include "model.h"
#include "summary_by.h"
#include "summary_otel.h"
#include "summary_counters.h"
#include "summary_rusage.h"
#include "model_mpi.h"
#include "summary_mpi.h"
#include "summary_plugins.h"
#include "toolutil.h"

typedef struct summary_opts {
    const char *path;
    const char **paths;
    size_t npaths;
    int per_thread;
    int json;
    uint32_t depth; /* 0: unlimited */
    const char *by; /* --by KEY: also group each site's calls by that span attribute */
} summary_opts;

static void usage(FILE *out)
{
    fputs("usage: jager summary FILE.jgr… | FOLDER [--threads|--merged] [--format text|json] [--depth N] [--by KEY]\n"
          "  several files, a job file or a folder: the ranks of one MPI job, each rank's table and the MPI\n"
          "  table over ranks (min/mean/max per function, the slowest rank, clock-condition violations)\n"
          "  --merged   one tree over all threads (default)\n"
          "  --threads  one tree per thread\n"
          "  --depth N  show call paths up to N levels deep\n"
          "  --by KEY   also group each site's calls by the value of span attribute KEY\n"
          "             (--by task: by the task that ran them, where tasks were recorded: Julia tasks;\n"
          "             --by method: log records and span errors by their innermost method, code.method)\n"
          "Columns: calls, total and mean are per call path; p50/p99 are the site's (all paths, from the\n"
          "exact histogram); %parent is of the enclosing path (top level: of all threads' time);\n"
          "GC% is GC pause time inside the path's spans.\n",
          out);
}

static const cli_choice formats[] = {{"text", 0}, {"json", 1}, {NULL, 0}};

static int parse_args(int argc, char **argv, summary_opts *o)
{
    memset(o, 0, sizeof *o);
    uint64_t depth = 0;
    const cli_opt opts[] = {
        {.name = "--threads", .kind = CLI_FLAG, .dest = &o->per_thread, .flag_value = 1},
        {.name = "--merged", .kind = CLI_FLAG, .dest = &o->per_thread, .flag_value = 0},
        {.name = "--format", .kind = CLI_CHOICE, .dest = &o->json, .choices = formats, .bad = "unknown format '%s' (text or json)"},
        {.name = "--depth", .kind = CLI_UINT, .dest = &depth, .min = 0, .max = 100000, .bad = "--depth wants a number"},
        CLI_STRING_OPT("--by", NULL, &o->by),
    };
    const cli_spec spec = {"summary", usage, opts, sizeof opts / sizeof opts[0], 1, (size_t)argc, 0, NULL};
    if (!(o->paths = calloc((size_t)argc + 1, sizeof *o->paths))) return -1;
    int parsed = cli_parse(&spec, argc, argv, o->paths, &o->npaths);
    o->path = o->paths[0];
    o->depth = (uint32_t)depth;
    return parsed;
}

/* CPU time the sampler saw in the recorder's own code on the program's threads, or -1 when
 * the recording has no samples or no spans to spread it over. */
static double sampled_recorder_ns(const jm_model *m)
{
    const jm_samples *s = &m->samples;
    if (!s->weight || !m->have_stats || !m->stats.spans_total) return -1;
    return (double)s->recorder_self * (double)s->cpu_ns / (double)s->weight;
}

/* ---- depth-first walk in display order (heaviest child first), without recursion ---- */

typedef struct walk_frame {
    uint32_t node;
    uint32_t *kids;
    uint32_t nkids, next;
} walk_frame;

typedef struct walker {
    const jm_tree *t;
    walk_frame *stack;
    uint32_t n, cap;
} walker;

/* Push \p node; its children are sorted now. \return 0 or -1 (OOM). */
static int walk_push(walker *w, uint32_t node)
{
    if (w->n == w->cap) {
        uint32_t cap = w->cap ? w->cap * 2 : 32;
        walk_frame *s = realloc(w->stack, cap * sizeof *s);
        if (!s) return -1;
        w->stack = s;
        w->cap = cap;
    }
    uint32_t count = jm_tree_children_sorted(w->t, node, NULL, 0);
    uint32_t *kids = count ? malloc(count * sizeof *kids) : NULL;
    if (count && !kids) return -1;
    if (count) jm_tree_children_sorted(w->t, node, kids, count);
    w->stack[w->n++] = (walk_frame){node, kids, count, 0};
    return 0;
}

static void walk_pop(walker *w) { free(w->stack[--w->n].kids); }

static void walk_free(walker *w)
{
    while (w->n) walk_pop(w);
    free(w->stack);
}

/* What top-level rows are a share of: the thread's window in a per-thread tree, the sum
 * of all threads' windows in the merged one (so parallel work never exceeds 100%). */
static double top_base(const jm_model *m, const jm_tree *t)
{
    if (t == &m->merged) return (double)m->thread_ns;
    for (uint32_t i = 0; i < m->nthreads; i++)
        if (&m->threads[i].tree == t) return (double)(m->threads[i].last_ns - m->threads[i].first_ns);
    return (double)m->run_ns;
}

/* ---- text ---- */

#define NAME_COLS 44
/* Rows indent two columns a level up to this; deeper rows name their depth. */
#define MAX_INDENT 64u

/* part / whole in percent, never above 100 (a part is never more than its whole). */
static double share_pct(double part, double whole)
{
    if (whole <= 0) return 0;
    return part >= whole ? 100.0 : part / whole * 100.0;
}

static const char *pct(char *buf, size_t size, double part, double whole)
{
    if (whole <= 0) snprintf(buf, size, "-");
    else snprintf(buf, size, "%.1f%%", share_pct(part, whole));
    return buf;
}

/* The GPU (cuda.* events): totals, copies per direction, drops, then GPU time per kernel
 * name and per launching site (docs/cuda.md). */
static void text_gpu(const jm_model *m)
{
    const jm_cuda *c = &m->cuda;
    char a[32], b[32], d[32], fit[256];
    if (!c->kernels && !c->launches && !c->have_summary) return;
    printf("GPU %" PRIu64 " kernels, %s busy; %" PRIu64 " launches, %s of host time in launch calls; %s in syncs\n",
           c->kernels, tu_fmt_ns(a, sizeof a, (double)c->gpu_ns), c->launches, tu_fmt_ns(b, sizeof b, (double)c->launch_ns),
           tu_fmt_ns(d, sizeof d, (double)c->sync_ns));
    static const char *const dir[JM_COPY_KINDS] = {"host→device", "device→host", "device→device", "other"};
    for (int k = 0; k < JM_COPY_KINDS; k++)
        if (c->copies[k])
            printf("  copies %s: %" PRIu64 ", %s in %s\n", dir[k], c->copies[k],
                   tu_fmt_bytes(a, sizeof a, (double)c->copy_bytes[k]), tu_fmt_ns(b, sizeof b, (double)c->copy_ns[k]));
    if (c->dropped || c->pool_exhausted || c->misses) {
        printf("  GPU records dropped %" PRIu64 " (buffers refused %" PRIu64 ", launches not found %" PRIu64 ")",
               c->dropped, c->pool_exhausted, c->misses);
        if (c->suggested_memory_bytes)
            printf("; JAGER_CUDA_MEMORY_MB=%" PRIu64 " would have held them", c->suggested_memory_bytes >> 20);
        printf("\n");
    }
    if (c->nnames) {
        printf("  %-40s %8s %10s %10s %8s\n", "kernel", "count", "GPU time", "mean", "small");
        for (uint32_t i = 0; i < c->nnames && i < 10; i++) {
            const jm_cuda_kernel *k = &c->names[i];
            jm_text_fit(fit, sizeof fit, k->name, 40);
            printf("  %-40s %8" PRIu64 " %10s %10s %7.0f%%\n", fit, k->count, tu_fmt_ns(a, sizeof a, (double)k->total_ns),
                   tu_fmt_ns(b, sizeof b, k->count ? (double)k->total_ns / (double)k->count : 0.0),
                   k->count ? 100.0 * (double)k->small / (double)k->count : 0.0);
        }
    }
    if (c->nsites) {
        printf("  %-40s %8s %10s %10s %10s\n", "launching site", "launches", "launch", "kernels", "GPU time");
        for (uint32_t i = 0; i < c->nsites && i < 10; i++) {
            const jm_cuda_site *s = &c->sites[i];
            const char *name = "(outside spans)";
            if (s->site && s->site < m->nsites && m->sites[s->site].name) name = m->sites[s->site].name;
            jm_text_fit(fit, sizeof fit, name, 40);
            printf("  %-40s %8" PRIu64 " %10s %10" PRIu64 " %10s\n", fit, s->launches,
                   tu_fmt_ns(a, sizeof a, (double)s->launch_ns), s->kernels, tu_fmt_ns(b, sizeof b, (double)s->gpu_ns));
        }
    }
}

/* The recorder's accounting (docs/configuration.md, "Accounting"): what the program
 * emitted, where each event went, and each sink's share. The identities hold exactly in
 * every ring mode; a line says so, or by how much a file (cut short, or hand-made) is off. */
static const char *const drop_names[JAGER_DROP_REASONS] = {"ring full", "overwritten", "no ring", "too large",
                                                           "no sink took", "bad emit", "after stop", "reason 7"};

static uint64_t before_sinks(const jager_stat *st)
{
    uint64_t n = st->events_recorded;
    for (int i = 0; i < JAGER_DROP_REASONS; i++)
        if (i != JAGER_DROP_SINK) n += st->dropped[i];
    return n;
}

static void text_accounting(const jm_model *m)
{
    if (!m->have_stats) return;
    const jager_stat *st = &m->stats;
    uint64_t rhs = before_sinks(st);
    printf("accounting: emitted %" PRIu64 " = recorded %" PRIu64, st->events_emitted, st->events_recorded);
    for (int i = 0; i < JAGER_DROP_REASONS; i++)
        if (i != JAGER_DROP_SINK && st->dropped[i]) printf(" + %s %" PRIu64, drop_names[i], st->dropped[i]);
    if (rhs == st->events_emitted) printf(" (exact)\n");
    else printf(" (off by %" PRId64 ")\n", (int64_t)(st->events_emitted - rhs));
    if (st->sinks) {
        uint64_t handed = st->events_recorded - st->events_pending + st->drop_reports;
        printf("  to sinks: written %" PRIu64 " = recorded %" PRIu64 " − pending %" PRIu64 " + drop reports %" PRIu64 "%s\n",
               st->events_written, st->events_recorded, st->events_pending, st->drop_reports,
               handed == st->events_written ? " (exact)" : " (off)");
        for (uint32_t i = 0; i < st->sinks; i++) {
            jager_sink_stat ks = {.struct_size = sizeof ks};
            if (jager_reader_sink_stats(m->reader, i, &ks) != JAGER_OK) continue;
            char fit[64];
            jm_text_fit(fit, sizeof fit, ks.name, 24);
            printf("  sink %s: delivered %" PRIu64 " + failed %" PRIu64 " = %" PRIu64 "%s", fit, ks.events_delivered,
                   ks.events_failed, ks.events_delivered + ks.events_failed,
                   ks.events_delivered + ks.events_failed == st->events_written ? "" : " (registered late)");
            if (ks.batches_failed) printf(" · %" PRIu64 " batch%s failed", ks.batches_failed, ks.batches_failed == 1 ? "" : "es");
            printf("\n");
        }
        if (st->dropped[JAGER_DROP_SINK])
            printf("  no sink took %" PRIu64 " event%s\n", st->dropped[JAGER_DROP_SINK], st->dropped[JAGER_DROP_SINK] == 1 ? "" : "s");
    }
    if (st->spans_cross_thread)
        printf("  %" PRIu64 " span%s ended on another thread than began %s (recorded there as top-level spans)\n",
               st->spans_cross_thread, st->spans_cross_thread == 1 ? "" : "s", st->spans_cross_thread == 1 ? "it" : "them");
}

static void text_header(const jm_model *m, const summary_opts *o)
{
    char a[32], b[32], fit[512];
    jm_text_fit(fit, sizeof fit, o->path, 120);
    printf("jager summary %s\n", fit);
    printf("run %s · %" PRIu64 " events · %" PRIu64 " spans · %u thread%s · dropped %" PRIu64,
           tu_fmt_ns(a, sizeof a, (double)m->run_ns), m->events, m->spans, m->nthreads, m->nthreads == 1 ? "" : "s",
           m->dropped);
    if (m->have_stats && m->stats.span_cost_ns_x1000) {
        if (m->julia_spans) /* Julia spans at the binding's measured cost (model_finish.c) */
            printf(" · instrumentation %.2f%% of run (%" PRIu64 " Julia spans × %s measured", m->self_cost_pct,
                   m->julia_spans, tu_fmt_ns(b, sizeof b, m->julia_span_cost_ns));
        else
            printf(" · instrumentation %.2f%% of run (", m->self_cost_pct);
        if (!m->julia_spans || m->stats.spans_total > m->julia_spans)
            printf("%s%" PRIu64 " spans × %s", m->julia_spans ? ", " : "", m->stats.spans_total - m->julia_spans,
                   tu_fmt_ns(b, sizeof b, (double)m->stats.span_cost_ns_x1000 / 1000.0));
        printf(")");
    }
    if (m->info.truncated) printf(" · TRUNCATED file");
    else if (!m->info.clean_end) printf(" · no clean end");
    printf("\n");
    /* What Jäger cost: on the program's threads (a span pair timed at start) and, on its
     * own thread, the collector's CPU (drain, compression, writing) measured over the run. */
    if (m->collector_cpu_ns_known) {
        double per = m->collector_cpu_spans ? (double)m->collector_cpu_ns / (double)m->collector_cpu_spans : 0;
        printf("self-cost: %s per span on the program's threads (timed at start) · collector %s CPU over the run",
               tu_fmt_ns(a, sizeof a, (double)m->stats.span_cost_ns_x1000 / 1000.0),
               tu_fmt_ns(b, sizeof b, (double)m->collector_cpu_ns));
        if (m->collector_cpu_spans) printf(" = %s per span", tu_fmt_ns(fit, sizeof fit, per));
        if (m->run_ns) printf(" (%.2f%% of one core)", (double)m->collector_cpu_ns / (double)m->run_ns * 100.0);
        printf("\n");
    }
    /* With the sampler, the program threads' share measured on the run: samples whose
     * innermost frame is the recorder's own code. */
    double sampled = sampled_recorder_ns(m);
    if (sampled >= 0)
        printf("self-cost measured on the run (sampler): %s on the program's threads in the recorder's code "
               "(%" PRIu64 " of %" PRIu64 " samples) = %s per span\n",
               tu_fmt_ns(a, sizeof a, sampled), m->samples.recorder_self, m->samples.weight,
               tu_fmt_ns(b, sizeof b, sampled / (double)m->stats.spans_total));
    text_accounting(m);
    printf("tree: %s\n", m->exact_paths ? "exact call paths (the core's per-path counts: every call, whatever was dropped or sampled)"
                                         : "from span events (the file has no exact call paths)");
    const char *host = jager_reader_meta(m->reader, "host.name");
    const char *cmd = jager_reader_meta(m->reader, "process.command_line");
    if (host || cmd) {
        jm_text_fit(fit, sizeof fit, host ? host : "?", 40);
        printf("host %s", fit);
        if (cmd) {
            jm_text_fit(fit, sizeof fit, cmd, 100);
            printf(" · %s", fit);
        }
        printf("\n");
    }
    if (m->gc.pauses)
        printf("GC %" PRIu64 " pauses, %s total (%s of run), longest %s\n", m->gc.pauses,
               tu_fmt_ns(a, sizeof a, (double)m->gc.total_ns), pct(fit, sizeof fit, (double)m->gc.total_ns, (double)m->run_ns),
               tu_fmt_ns(b, sizeof b, (double)m->gc.max_ns));
    text_gpu(m);
    if (m->compile_count)
        printf("compiles %" PRIu64 ", %s codegen + %s inference\n", m->compile_count,
               tu_fmt_ns(a, sizeof a, (double)m->compile_ns), tu_fmt_ns(b, sizeof b, (double)m->inference_ns));
    if (m->security_events) { /* the supply-chain scanner's (docs/supply-chain.md) */
        printf("SECURITY: %" PRIu64 " supply-chain event%s — the code that ran differs from its lock:\n", m->security_events,
               m->security_events == 1 ? "" : "s");
        for (uint32_t i = 0; i < m->nsecurity; i++) {
            char line[2048];
            jm_text_fit(line, sizeof line, m->security[i].body, 0); /* whole, control bytes escaped */
            printf("  %s\n", line);
        }
        if (m->security_events > m->nsecurity)
            printf("  … and %" PRIu64 " more\n", m->security_events - m->nsecurity);
    }
    if (m->logs[JM_SEV_WARN] || m->logs[JM_SEV_ERROR] || m->logs[JM_SEV_FATAL] || m->span_errors)
        printf("logs: %" PRIu64 " warn, %" PRIu64 " error, %" PRIu64 " fatal · span errors %" PRIu64 "\n",
               m->logs[JM_SEV_WARN], m->logs[JM_SEV_ERROR], m->logs[JM_SEV_FATAL], m->span_errors);
}

static void text_signatures(const jm_model *m, const jm_site *s, uint32_t indent)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < s->sig_count; i++) total += m->signatures[s->sig_first + i].calls;
    for (uint32_t i = 0; i < s->sig_count; i++) {
        const jm_signature *g = &m->signatures[s->sig_first + i];
        char fit[512], p[32];
        uint32_t w = jm_text_fit(fit, sizeof fit, g->signature, NAME_COLS + 40 - (indent + 4 < NAME_COLS ? indent + 4 : NAME_COLS));
        (void)w;
        printf("%*s↳ %s  %" PRIu64 " calls (%s)\n", (int)indent + 2, "", fit, g->calls,
               pct(p, sizeof p, (double)g->calls, (double)total));
    }
}

static void text_row(const jm_model *m, const jm_tree *t, uint32_t idx, double parent_ns, uint32_t indent)
{
    const jm_node *n = &t->nodes[idx];
    const jm_site *s = jm_site_get(m, n->site);
    char name[512], c1[32], c2[32], c3[32], c4[32], c5[32], c6[32], c7[32];
    /* A row deeper than the indent shows says its depth instead: "[130] name". */
    char deep[16] = "";
    if (indent > MAX_INDENT) {
        indent = MAX_INDENT;
        snprintf(deep, sizeof deep, "[%u] ", n->depth);
    }
    uint32_t room = NAME_COLS > indent + 8 ? NAME_COLS - indent : 8;
    int partial = (n->flags & JM_NODE_PARTIAL) != 0, sampled = s && s->sample_1_in;
    uint32_t mark = (partial ? 2u : 0u) + (sampled ? 2u : 0u) + (uint32_t)strlen(deep);
    uint32_t w = jm_text_fit(name + strlen(deep), sizeof name - strlen(deep), jm_site_name(m, n->site),
                             room > mark + 8 ? room - mark : 8);
    if (*deep) {
        memcpy(name, deep, strlen(deep));
        w += (uint32_t)strlen(deep);
    }
    if (partial && strlen(name) + 3 <= sizeof name) {
        strcat(name, " ~"); /* short row: see the note under the tree */
        w += 2;
    }
    if (sampled && strlen(name) + 3 <= sizeof name) {
        strcat(name, " %"); /* sampled on purpose: see the note under the tree */
        w += 2;
    }
    printf("%*s%s%*s %10" PRIu64 " %10s %7s %10s %10s %10s %10s %6s %6" PRIu64 "\n", (int)indent, "", name,
           (int)(room > w ? room - w : 0), "", n->calls, tu_fmt_ns(c1, sizeof c1, (double)n->incl_ns),
           pct(c2, sizeof c2, (double)n->incl_ns, parent_ns),
           tu_fmt_ns(c3, sizeof c3, n->calls ? (double)n->incl_ns / (double)n->calls : 0),
           s ? tu_fmt_ns(c4, sizeof c4, (double)s->p50_ns) : "-", s ? tu_fmt_ns(c5, sizeof c5, (double)s->p99_ns) : "-",
           n->bytes ? tu_fmt_bytes(c6, sizeof c6, (double)n->bytes) : "-",
           n->gc_ns ? pct(c7, sizeof c7, (double)n->gc_ns, (double)n->incl_ns) : "-", n->errors);
}

static int text_tree(const jm_model *m, const jm_tree *t, const summary_opts *o, uint8_t *sig_shown)
{
    walker w = {.t = t};
    if (walk_push(&w, 0) != 0) goto oom;
    while (w.n) {
        walk_frame *f = &w.stack[w.n - 1];
        if (f->next == f->nkids) {
            walk_pop(&w);
            continue;
        }
        uint32_t c = f->kids[f->next++];
        const jm_node *n = &t->nodes[c];
        /* Top-level rows are shares of the run (thread time when merged); deeper ones of their parent. */
        double parent_ns = f->node == 0 ? top_base(m, t) : (double)t->nodes[f->node].incl_ns;
        uint32_t indent = 2 * (n->depth - 1);
        text_row(m, t, c, parent_ns, indent);
        const jm_site *s = jm_site_get(m, n->site);
        if (s && s->sig_count > 1 && !sig_shown[n->site]) {
            sig_shown[n->site] = 1;
            text_signatures(m, s, indent < MAX_INDENT ? indent : MAX_INDENT);
        }
        if ((!o->depth || n->depth < o->depth) && n->first_child != JM_NONE && walk_push(&w, c) != 0) goto oom;
    }
    walk_free(&w);
    return 0;
oom:
    walk_free(&w);
    return -1;
}

#define TOP_FUNCTIONS 15

/* The sampler's samples (plugins/sampler): top functions by self time, the share taken
 * outside any span, and what is hot inside each sampled site. */
static void text_samples(const jm_model *m)
{
    const jm_samples *s = &m->samples;
    if (!s->samples) return;
    double w = (double)s->weight;
    printf("\nsampled CPU time: %" PRIu64 " samples, %.3f s of CPU; %.1f%% outside any span\n", s->samples,
           (double)s->cpu_ns / 1e9, w ? (double)s->outside / w * 100.0 : 0.0);
    printf("%-*s %7s %7s %9s  %s\n", NAME_COLS, "function", "self%", "total%", "outside%", "file:line");
    for (uint32_t i = 0; i < s->nfns && i < TOP_FUNCTIONS; i++) {
        const jm_sample_fn *f = &s->fns[i];
        if (!f->self) break;
        char fit[128];
        jm_text_fit(fit, sizeof fit, f->func, NAME_COLS);
        printf("%-*s %6.1f%% %6.1f%% %8.1f%%  %s:%u\n", NAME_COLS, fit, (double)f->self / w * 100.0,
               (double)f->total / w * 100.0, (double)f->outside / w * 100.0, f->file, f->line);
    }
    jager_site cur = 0;
    uint32_t shown = 0;
    for (uint32_t i = 0; i < s->nsite_fns; i++) {
        const jm_site_fn *e = &s->site_fns[i];
        if (!e->site) continue;
        if (e->site != cur) {
            uint64_t in = 0;
            for (uint32_t k = i; k < s->nsite_fns && s->site_fns[k].site == e->site; k++) in += s->site_fns[k].self;
            printf("%sinside %s (%.1f%% of samples):", cur ? "\n" : "", jm_site_name(m, e->site), (double)in / w * 100.0);
            cur = e->site;
            shown = 0;
        }
        if (shown++ < 3) {
            printf(" %s %.1f%%", s->fns[e->fn].func, (double)e->self / w * 100.0);
        }
    }
    if (cur) printf("\n");
}

static int print_text(const jm_model *m, const summary_opts *o)
{
    text_header(m, o);
    uint8_t *sig_shown = calloc(m->nsites ? m->nsites : 1, 1);
    if (!sig_shown) return -1;
    int rc = 0;
    for (uint32_t i = 0; i < (o->per_thread ? m->nthreads : 1u) && rc == 0; i++) {
        const jm_tree *t = o->per_thread ? &m->threads[i].tree : &m->merged;
        printf("\n");
        if (o->per_thread) {
            char fit[128];
            jm_text_fit(fit, sizeof fit, m->threads[i].name, 40);
            printf("thread %u (tid %" PRIu64 "%s%s)%s\n", m->threads[i].index, m->threads[i].os_tid, *fit ? ", " : "", fit,
                   m->threads[i].helper ? " · Jäger's own thread, not counted in the thread time" : "");
            memset(sig_shown, 0, m->nsites ? m->nsites : 1);
        }
        printf("%-*s %10s %10s %7s %10s %10s %10s %10s %6s %6s\n", NAME_COLS, "site", "calls", "total", "%parent",
               "mean", "p50", "p99", "bytes", "GC%", "errors");
        if (t->nodes[0].first_child == JM_NONE) printf("(no spans)\n");
        rc = text_tree(m, t, o, sig_shown);
        if (t->folded_calls)
            printf("(%" PRIu64 " calls folded into (other): more distinct call paths than the node cap)\n", t->folded_calls);
    }
    if (m->tree_lost_calls) {
        printf("\n~ %" PRIu64 " calls of %u site%s never reached the file (dropped before writing), so rows marked ~ are\n"
               "  short of them and their parents' self time too high. Which call paths they were on is not recorded;\n"
               "  the exact per-site totals are in the JSON \"sites\" (exact: true) and the report's table.\n",
               m->tree_lost_calls, m->partial_sites, m->partial_sites == 1 ? "" : "s");
        if (m->sites_without_events) {
            printf("  %u of these sites have no recorded call at all and are missing from the tree:\n",
                   m->sites_without_events);
            uint32_t shown = 0;
            for (uint32_t id = 1; id < m->nsites && shown < 8; id++) {
                const jm_site *s = &m->sites[id];
                if (!s->exact || !s->calls || s->ev_calls) continue;
                char fit[256], a[32];
                jm_text_fit(fit, sizeof fit, s->name, 60);
                printf("    %s  %" PRIu64 " calls, %s (exact)\n", fit, s->calls, tu_fmt_ns(a, sizeof a, (double)s->total_ns));
                shown++;
            }
        }
    }
    if (m->sampled_sites) {
        printf("\n%% %u site%s sampled on purpose (JAGER_SAMPLE thinned the events; none of this is loss): rows\n"
               "  marked %% hold the recorded calls only; the exact totals are in the JSON \"sites\".\n",
               m->sampled_sites, m->sampled_sites == 1 ? " was" : "s were");
        uint32_t shown = 0;
        for (uint32_t id = 1; id < m->nsites && shown < 8; id++) {
            const jm_site *s = &m->sites[id];
            if (!s->sample_1_in) continue;
            char fit[256];
            jm_text_fit(fit, sizeof fit, s->name, 60);
            printf("    %s  sampled 1 in %" PRIu64 " (%" PRIu64 " of %" PRIu64 " calls recorded, %" PRIu64 " thinned)\n", fit,
                   s->sample_1_in, s->ev_calls, s->calls, s->thinned);
            shown++;
        }
        if (shown < m->sampled_sites) printf("    … and %u more\n", m->sampled_sites - shown);
    }
    free(sig_shown);
    text_samples(m);
    return rc;
}

/* ---- JSON ---- */

static void json_kv_str(const char *key, const char *v, int comma)
{
    printf("%s\"%s\":", comma ? "," : "", key);
    tu_json_str(stdout, v ? v : "", (size_t)-1);
}

static void json_node(const jm_model *m, const jm_tree *t, uint32_t idx, double parent_ns)
{
    const jm_node *n = &t->nodes[idx];
    const jm_site *s = jm_site_get(m, n->site);
    printf("{\"site\":%u", n->site == JM_SITE_OTHER || n->site == JM_SITE_UNRECORDED ? 0 : n->site);
    json_kv_str("name", jm_site_name(m, n->site), 1);
    json_kv_str("file", s ? s->file : "", 1);
    printf(",\"line\":%u,\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64, s ? s->line : 0, n->calls,
           n->incl_ns, n->excl_ns);
    printf(",\"pct_parent\":%.4f,\"mean_ns\":%.1f", share_pct((double)n->incl_ns, parent_ns),
           n->calls ? (double)n->incl_ns / (double)n->calls : 0.0);
    printf(",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64, n->calls ? n->min_ns : 0, n->max_ns);
    printf(",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64, s ? s->p50_ns : 0, s ? s->p99_ns : 0);
    printf(",\"bytes\":%" PRIu64 ",\"gc_ns\":%" PRIu64 ",\"gc_pauses\":%" PRIu64 ",\"gc_pct\":%.4f,\"errors\":%" PRIu64,
           n->bytes, n->gc_ns, n->gc_pauses, share_pct((double)n->gc_ns, (double)n->incl_ns), n->errors);
    printf(",\"partial\":%s,\"self_partial\":%s", n->flags & JM_NODE_PARTIAL ? "true" : "false",
           n->flags & JM_NODE_SELF_PARTIAL ? "true" : "false");
    printf(",\"children\":[");
}

static int json_tree(const jm_model *m, const jm_tree *t, const summary_opts *o)
{
    walker w = {.t = t};
    if (walk_push(&w, 0) != 0) goto oom;
    while (w.n) {
        walk_frame *f = &w.stack[w.n - 1];
        if (f->next == f->nkids) {
            walk_pop(&w);
            if (w.n) printf("]}");
            continue;
        }
        if (f->next) printf(",");
        uint32_t c = f->kids[f->next++];
        const jm_node *n = &t->nodes[c];
        double parent_ns = f->node == 0 ? top_base(m, t) : (double)t->nodes[f->node].incl_ns;
        json_node(m, t, c, parent_ns);
        if ((!o->depth || n->depth < o->depth) && n->first_child != JM_NONE) {
            if (walk_push(&w, c) != 0) goto oom;
        } else {
            printf("]}");
        }
    }
    walk_free(&w);
    return 0;
oom:
    walk_free(&w);
    return -1;
}

static void json_run(const jm_model *m, const summary_opts *o)
{
    printf("{\"tool\":\"jager summary\",\"version\":");
    tu_json_str(stdout, jager_version_string(), (size_t)-1);
    json_kv_str("file", o->path, 1);
    printf(",\"view\":\"%s\"", o->per_thread ? "threads" : "merged");
    printf(",\"run\":{\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"thread_ns\":%" PRIu64 ",\"events\":%" PRIu64
           ",\"spans\":%" PRIu64 ",\"threads\":%u,\"dropped\":%" PRIu64 ",\"clean_end\":%s,\"truncated\":%s",
           m->first_ns, m->last_ns, m->run_ns, m->thread_ns, m->events, m->spans, m->nthreads, m->dropped,
           m->info.clean_end ? "true" : "false", m->info.truncated ? "true" : "false");
    printf(",\"sampled_sites\":%u", m->sampled_sites);
    printf(",\"spans_total\":%" PRIu64 ",\"span_cost_ns\":%.3f,\"self_cost_ns\":%.1f,\"self_cost_pct\":%.4f,"
           "\"julia_spans\":%" PRIu64 ",\"julia_span_cost_ns\":%.3f,\"malformed\":%" PRIu64,
           m->stats.spans_total, (double)m->stats.span_cost_ns_x1000 / 1000.0, m->self_cost_ns, m->self_cost_pct,
           m->julia_spans, m->julia_span_cost_ns, m->malformed);
    printf(",\"duration_from\":\"%s\",\"helper_threads\":%u,\"tree_lost_calls\":%" PRIu64 ",\"partial_sites\":%u"
           ",\"sites_without_events\":%u",
           m->run_from_end ? "end_block" : "events", m->helper_threads, m->tree_lost_calls, m->partial_sites,
           m->sites_without_events);
    printf(",\"tree_from\":\"%s\"", m->exact_paths ? "paths" : "events");
    if (sampled_recorder_ns(m) >= 0)
        printf(",\"sampled_self_cost\":{\"recorder_samples\":%" PRIu64 ",\"samples\":%" PRIu64
               ",\"recorder_cpu_ns\":%.0f,\"cpu_ns_per_span\":%.3f}",
               m->samples.recorder_self, m->samples.weight, sampled_recorder_ns(m),
               sampled_recorder_ns(m) / (double)m->stats.spans_total);
    if (m->collector_cpu_ns_known)
        printf(",\"collector\":{\"cpu_ns\":%" PRIu64 ",\"spans\":%" PRIu64 ",\"cpu_ns_per_span\":%.3f}", m->collector_cpu_ns,
               m->collector_cpu_spans,
               m->collector_cpu_spans ? (double)m->collector_cpu_ns / (double)m->collector_cpu_spans : 0.0);
    printf("}");
    printf(",\"metadata\":{");
    size_t nm = jager_reader_meta_count(m->reader);
    int first = 1;
    for (size_t i = 0; i < nm; i++) {
        const char *k = NULL, *v = NULL;
        if (jager_reader_meta_at(m->reader, i, &k, &v) != JAGER_OK || !k) continue;
        if (!first) printf(",");
        first = 0;
        tu_json_str(stdout, k, (size_t)-1);
        printf(":");
        tu_json_str(stdout, v ? v : "", (size_t)-1);
    }
    printf("}");
    static const char *const reasons[JAGER_DROP_REASONS] = {"ring_full", "overwritten", "no_ring", "too_large",
                                                            "sink", "bad_emit", "after_stop", "reason_7"};
    printf(",\"drops\":{");
    for (int i = 0; i < JAGER_DROP_REASONS; i++)
        printf("%s\"%s\":%" PRIu64, i ? "," : "", reasons[i],
               m->drop_records[i] > m->stats.dropped[i] ? m->drop_records[i] : m->stats.dropped[i]);
    printf("}");
    if (m->have_stats) { /* the recorder's counters as the file has them (docs/configuration.md, "Accounting") */
        const jager_stat *st = &m->stats;
        printf(",\"accounting\":{\"emitted\":%" PRIu64 ",\"recorded\":%" PRIu64 ",\"dropped\":%" PRIu64
               ",\"written\":%" PRIu64 ",\"pending\":%" PRIu64 ",\"drop_reports\":%" PRIu64 ",\"spans_cross_thread\":%" PRIu64
               ",\"exact\":%s,\"sinks\":[",
               st->events_emitted, st->events_recorded, st->events_dropped, st->events_written, st->events_pending,
               st->drop_reports, st->spans_cross_thread, before_sinks(st) == st->events_emitted ? "true" : "false");
        for (uint32_t i = 0; i < st->sinks; i++) {
            jager_sink_stat ks = {.struct_size = sizeof ks};
            if (jager_reader_sink_stats(m->reader, i, &ks) != JAGER_OK) continue;
            printf("%s{\"name\":", i ? "," : "");
            tu_json_str(stdout, ks.name, (size_t)-1);
            printf(",\"delivered\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"batches_failed\":%" PRIu64 "}", ks.events_delivered,
                   ks.events_failed, ks.batches_failed);
        }
        printf("]}");
    }
}

static void json_sites(const jm_model *m)
{
    printf(",\"sites\":[");
    int first = 1;
    for (uint32_t id = 1; id < m->nsites; id++) {
        const jm_site *s = &m->sites[id];
        if (!s->calls && !s->ev_calls && !s->sig_count) continue;
        printf("%s{\"id\":%u", first ? "" : ",", id);
        first = 0;
        json_kv_str("name", s->name, 1);
        json_kv_str("file", s->file, 1);
        printf(",\"line\":%u,\"exact\":%s,\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64
               ",\"max_ns\":%" PRIu64 ",\"mean_ns\":%.1f,\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
               ",\"bytes\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"self_ns\":%" PRIu64 ",\"gc_ns\":%" PRIu64
               ",\"gc_pauses\":%" PRIu64 ",\"event_calls\":%" PRIu64,
               s->line, s->exact ? "true" : "false", s->calls, s->total_ns, s->min_ns, s->max_ns, s->mean_ns, s->p50_ns,
               s->p90_ns, s->p99_ns, s->bytes, s->errors, s->self_ns, s->gc_ns, s->gc_pauses, s->ev_calls);
        printf(",\"thinned\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"sampled_1_in\":%" PRIu64, s->thinned, s->dropped,
               s->sample_1_in);
        printf(",\"signatures\":[");
        for (uint32_t i = 0; i < s->sig_count; i++) {
            const jm_signature *g = &m->signatures[s->sig_first + i];
            printf("%s{", i ? "," : "");
            json_kv_str("signature", g->signature, 0);
            printf(",\"calls\":%" PRIu64 "}", g->calls);
        }
        printf("]}");
    }
    printf("]");
}

static void json_extras(const jm_model *m)
{
    printf(",\"gc\":{\"pauses\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"full_pauses\":%" PRIu64
           ",\"pct_of_run\":%.4f}",
           m->gc.pauses, m->gc.total_ns, m->gc.max_ns, m->gc.full_pauses,
           m->run_ns ? (double)m->gc.total_ns / (double)m->run_ns * 100.0 : 0.0);
    const jm_cuda *c = &m->cuda;
    printf(",\"gpu\":{\"kernels\":%" PRIu64 ",\"gpu_ns\":%" PRIu64 ",\"small_kernels\":%" PRIu64
           ",\"launches\":%" PRIu64 ",\"launch_ns\":%" PRIu64 ",\"sync_ns\":%" PRIu64 ",\"dropped\":%" PRIu64
           ",\"copy_bytes\":{\"htod\":%" PRIu64 ",\"dtoh\":%" PRIu64 ",\"dtod\":%" PRIu64 ",\"other\":%" PRIu64
           "},\"kernels_by_name\":[",
           c->kernels, c->gpu_ns, c->small, c->launches, c->launch_ns, c->sync_ns, c->dropped,
           c->copy_bytes[JM_COPY_HTOD], c->copy_bytes[JM_COPY_DTOH], c->copy_bytes[JM_COPY_DTOD],
           c->copy_bytes[JM_COPY_OTHER]);
    for (uint32_t i = 0; i < c->nnames; i++) {
        printf("%s{", i ? "," : "");
        json_kv_str("name", c->names[i].name, 0);
        printf(",\"count\":%" PRIu64 ",\"gpu_ns\":%" PRIu64 ",\"small\":%" PRIu64 "}", c->names[i].count,
               c->names[i].total_ns, c->names[i].small);
    }
    printf("],\"launch_sites\":[");
    for (uint32_t i = 0; i < c->nsites; i++) {
        const jm_cuda_site *st = &c->sites[i];
        printf("%s{\"site\":%u,\"launches\":%" PRIu64 ",\"launch_ns\":%" PRIu64 ",\"kernels\":%" PRIu64
               ",\"gpu_ns\":%" PRIu64 ",\"small\":%" PRIu64 "}",
               i ? "," : "", st->site, st->launches, st->launch_ns, st->kernels, st->gpu_ns, st->small);
    }
    printf("]}");
    printf(",\"compile\":{\"count\":%" PRIu64 ",\"codegen_ns\":%" PRIu64 ",\"inference_ns\":%" PRIu64 "}", m->compile_count,
           m->compile_ns, m->inference_ns);
    printf(",\"logs\":{");
    for (int b = 0; b < JM_SEV_COUNT; b++) printf("%s\"%s\":%" PRIu64, b ? "," : "", jm_sev_name(b), m->logs[b]);
    printf("},\"span_errors\":%" PRIu64, m->span_errors);
    printf(",\"security_events\":%" PRIu64, m->security_events);
    printf(",\"event_types\":[");
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jm_type_count *tc = &m->types[i];
        printf("%s{\"type\":%u", i ? "," : "", tc->type);
        if (tc->name) json_kv_str("name", tc->name, 1);
        else printf(",\"name\":\"type#%u\"", tc->type);
        printf(",\"count\":%" PRIu64 ",\"interpreted\":%s}", tc->count, tc->known ? "true" : "false");
    }
    printf("]");
    const jm_samples *smp = &m->samples;
    printf(",\"samples\":{\"count\":%" PRIu64 ",\"weight\":%" PRIu64 ",\"cpu_ns\":%" PRIu64 ",\"outside\":%" PRIu64
           ",\"top_functions\":[",
           smp->samples, smp->weight, smp->cpu_ns, smp->outside);
    for (uint32_t i = 0; i < smp->nfns && i < TOP_FUNCTIONS; i++) {
        const jm_sample_fn *f = &smp->fns[i];
        printf("%s{", i ? "," : "");
        json_kv_str("function", f->func, 0);
        json_kv_str("file", f->file, 1);
        printf(",\"line\":%u,\"self\":%" PRIu64 ",\"total\":%" PRIu64 ",\"outside\":%" PRIu64 "}", f->line, f->self,
               f->total, f->outside);
    }
    printf("],\"by_site\":[");
    for (uint32_t i = 0; i < smp->nsite_fns; i++) {
        const jm_site_fn *e = &smp->site_fns[i];
        printf("%s{\"site\":%u", i ? "," : "", e->site);
        json_kv_str("function", smp->fns[e->fn].func, 1);
        printf(",\"self\":%" PRIu64 "}", e->self);
    }
    printf("]}");
}

static int print_json(const jm_model *m, const summary_opts *o)
{
    json_run(m, o);
    printf(",\"trees\":[");
    int rc = 0;
    for (uint32_t i = 0; i < (o->per_thread ? m->nthreads : 1u) && rc == 0; i++) {
        const jm_tree *t = o->per_thread ? &m->threads[i].tree : &m->merged;
        printf("%s{\"thread\":%u", i ? "," : "", o->per_thread ? m->threads[i].index : 0);
        if (o->per_thread) {
            printf(",\"os_tid\":%" PRIu64 ",\"helper\":%s", m->threads[i].os_tid, m->threads[i].helper ? "true" : "false");
            json_kv_str("name", m->threads[i].name, 1);
        }
        printf(",\"total_ns\":%" PRIu64 ",\"folded_calls\":%" PRIu64 ",\"nodes\":[", t->nodes[0].incl_ns, t->folded_calls);
        rc = json_tree(m, t, o);
        printf("]}");
    }
    printf("]");
    json_sites(m);
    json_extras(m);
    summary_counters_json(m);
    summary_rusage_json(m);
    if (o->by && summary_by(m, o->by, 1) != 0) return -1;
    summary_otel_json(m->reader);
    if (rc == 0) rc = summary_plugins_json(m->reader);
    printf("}\n");
    return rc;
}

int cmd_summary(int argc, char **argv)
{
    summary_opts o;
    int a = parse_args(argc, argv, &o);
    if (a != 0) {
        free(o.paths);
        return cli_parse_exit(a);
    }
    jm_job *j = cli_open_job("summary", o.paths, o.npaths);
    if (!j) {
        free(o.paths);
        return JAGER_EXIT_INPUT;
    }
    int job = j->n > 1 || j->from_job_file, code = JAGER_EXIT_OK, oom = 0;
    jm_mpi *mpi = NULL;
    if (jm_mpi_build(j, &mpi)) oom = 1;
    if (job && o.json) printf("{\"tool\":\"jager summary\",\"parts\":[");
    for (size_t p = 0; p < j->n && !oom; p++) {
        jager_reader *r = j->parts[p].r;
        o.path = j->parts[p].label;
        jm_model *m = NULL;
        int rc = 0;
        jager_reader_rewind(r);
        if (jm_model_build(r, NULL, &m, &rc) != JAGER_OK) {
            oom = 1;
            break;
        }
        int c;
        if (rc < 0 && m->events == 0 && rc != JAGER_E_TRUNCATED) { /* nothing readable: not a partial result */
            c = cli_finish("summary", o.path, r, rc);
            if (job && o.json) printf("%snull", p ? "," : "");
        } else {
            if (job && !o.json) { /* a recording that is no rank's (a worker, a process of the run): its file alone */
                printf("%s== ", p ? "\n" : "");
                if (j->parts[p].rank >= 0) printf("rank %lld: ", (long long)j->parts[p].rank);
                cli_put_safe(stdout, o.path); /* a name read from a folder may hold control bytes */
                printf(" ==\n");
            }
            if (job && o.json && p) printf(",");
            int out = o.json ? print_json(m, &o) : print_text(m, &o);
            if (!o.json && out == 0) summary_counters_text(m);
            if (!o.json && out == 0) summary_rusage_text(m);
            if (!o.json && out == 0 && o.by && summary_by(m, o.by, 0) != 0) out = -1;
            if (!o.json && out == 0) summary_otel_text(r);
            if (!o.json && out == 0 && summary_plugins_text(r) != 0) out = -1;
            c = cli_finish("summary", o.path, r, rc);
            if (out != 0) oom = 1;
        }
        if (c > code) code = c;
        jm_model_free(m);
    }
    if (!oom && mpi) {
        if (job && o.json) {
            printf("],\"mpi\":");
            if (summary_mpi_json(mpi, j)) oom = 1;
            printf("}\n");
        } else if (!o.json && (job || mpi->ncalls) && summary_mpi_text(mpi, j)) {
            oom = 1;
        }
    }
    fflush(stdout);
    if (oom) {
        fprintf(stderr, "jager summary: out of memory\n");
        code = JAGER_EXIT_INPUT;
    }
    jm_mpi_free(mpi);
    jm_job_free(j);
    free(o.paths);
    return code;
}
