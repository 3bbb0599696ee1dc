/* model_finish.c — turning the streamed aggregates into the finished model: subtrees left
 * open by a crash, the merged tree, per-site totals (exact STATS block preferred), sorted
 * tables with per-site slices, run totals and the instrumentation's own cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"

/* Spans still open at the end (a crash, a cut file): their recorded children are kept
 * under "(unrecorded)" at the top of the thread's tree. */
static int close_pending(jm_model *m)
{
    jm_priv *p = m->priv;
    for (uint32_t i = 0; i < p->nts; i++) {
        jm_thread_state *ts = &p->ts[i];
        if (!ts->present) continue;
        jm_tree *t = &m->threads[ts->slot].tree;
        for (uint32_t k = 0; k < ts->npending; k++) {
            jm_tree *o = ts->pending[k].forest;
            uint32_t u = jm_tree_child(t, 0, JM_SITE_UNRECORDED);
            if (u == JM_NONE) return -1;
            jm_node sum = {.calls = 1};
            for (uint32_t c = o->nodes[0].first_child; c != JM_NONE; c = o->nodes[c].next_sibling)
                sum.incl_ns += o->nodes[c].incl_ns;
            sum.min_ns = sum.max_ns = sum.incl_ns;
            jm_node_add(&t->nodes[u], &sum);
            if (t->nodes[u].site == JM_SITE_UNRECORDED && jm_tree_merge_children(t, u, o) != 0) return -1;
            t->unrecorded++;
            jm_tree_free(o);
            free(o);
        }
        ts->npending = 0;
        for (uint32_t k = 0; k < ts->npauses; k++)
            if (!ts->pauses[k].attributed) m->gc.unattributed_ns += ts->pauses[k].end - ts->pauses[k].start;
        ts->npauses = 0;
    }
    return 0;
}

static int by_thread_index(const void *a, const void *b)
{
    const jm_thread *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The region site a top-level node of a thread's tree belongs under (an OpenMP worker's
 * `omp work` or join barrier: site_role's region field), or 0. */
static uint32_t adopting_region(const jm_model *m, const jm_node *n)
{
    const jm_priv *p = m->priv;
    return n->site < p->nacc ? p->acc[n->site].region : 0;
}

/* The merged tree's node of \p site with the most calls (its main path), or JM_NONE. */
static uint32_t main_node_of(const jm_tree *t, uint32_t site)
{
    uint32_t best = JM_NONE;
    for (uint32_t i = 1; i < t->count; i++)
        if (t->nodes[i].site == site && (best == JM_NONE || t->nodes[i].calls > t->nodes[best].calls)) best = i;
    return best;
}

/* Worker threads' top-level `omp work` and join-barrier rows go under their region's node
 * (the one with the most calls when the region runs on several paths), after every thread's
 * own rows are in: the region's self time is its own thread's (excl_ns per call), while its
 * children add up the team's thread time. Rows whose region never ran as a span stay on top. */
static int adopt_workers(jm_model *m)
{
    for (uint32_t i = 0; i < m->nthreads; i++) {
        const jm_tree *t = &m->threads[i].tree;
        for (uint32_t c = t->nodes[0].first_child; c != JM_NONE; c = t->nodes[c].next_sibling) {
            uint32_t r = adopting_region(m, &t->nodes[c]);
            if (!r) continue; /* merged by merge_threads */
            uint32_t at = main_node_of(&m->merged, r);
            if (at == JM_NONE) at = 0;
            if (jm_tree_merge(&m->merged, at, t, c) != 0) return -1;
            if (at) { /* no longer a top-level span of the merged tree */
                jm_node *root = &m->merged.nodes[0];
                root->calls -= t->nodes[c].calls;
                root->incl_ns -= t->nodes[c].incl_ns;
                root->bytes -= t->nodes[c].bytes;
                root->errors -= t->nodes[c].errors;
            }
        }
    }
    return 0;
}

static int merge_threads(jm_model *m)
{
    /* Building state (slots) is gone by now: present threads in index order. */
    if (m->nthreads) qsort(m->threads, m->nthreads, sizeof *m->threads, by_thread_index);
    jm_node *root = &m->merged.nodes[0];
    for (uint32_t i = 0; i < m->nthreads; i++) {
        jm_tree *t = &m->threads[i].tree;
        const jm_node *tr = &t->nodes[0];
        root->calls += tr->calls;
        root->incl_ns += tr->incl_ns;
        root->bytes += tr->bytes;
        root->errors += tr->errors;
        root->gc_ns += tr->gc_ns;
        root->gc_pauses += tr->gc_pauses;
        for (uint32_t c = t->nodes[0].first_child; c != JM_NONE; c = t->nodes[c].next_sibling)
            if (!adopting_region(m, &t->nodes[c]) && jm_tree_merge(&m->merged, 0, t, c) != 0) return -1;
        m->merged.folded_calls += t->folded_calls;
        m->merged.unrecorded += t->unrecorded;
        root = &m->merged.nodes[0];
        uint64_t os_tid = 0;
        const char *name = NULL;
        if (jager_reader_thread(m->reader, m->threads[i].index, &os_tid, &name) == JAGER_OK) {
            m->threads[i].os_tid = os_tid;
            m->threads[i].name = name ? name : "";
        }
        if (m->threads[i].first_ns == UINT64_MAX) m->threads[i].first_ns = 0;
    }
    return adopt_workers(m);
}

/* Percentile from the event histogram: the middle of the bucket holding the q-th call. */
static uint64_t hist_quantile(const jm_priv *p, const uint64_t *hist, uint64_t calls, double q, uint64_t lo,
                              uint64_t hi)
{
    if (!hist || !calls) return 0;
    uint64_t want = (uint64_t)(q * (double)calls + 0.999999);
    if (want < 1) want = 1;
    uint64_t cum = 0;
    for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++) {
        cum += hist[b];
        if (cum < want) continue;
        uint64_t a = p->hist_lower[b];
        uint64_t z = b + 1 < JAGER_HIST_BUCKETS ? p->hist_lower[b + 1] : a;
        uint64_t v = a + (z - a) / 2;
        return v < lo ? lo : v > hi ? hi : v;
    }
    return hi;
}

/* The slow tail: calls in buckets at least JM_TAIL_FACTOR × the median (bucket middles).
 * When GC pauses overlapped the site's calls, the histogram without their pause time is
 * used (slow calls caused by GC are gc_pressure's finding, not a slow path of the code). */
static void tail(const jm_priv *p, jm_site *s, const uint64_t *hist, const jm_site_acc *a)
{
    uint64_t p50 = s->p50_ns, max = s->max_ns;
    double scale = 1.0;
    if (a && a->hist_nogc && a->calls) {
        hist = a->hist_nogc;
        p50 = hist_quantile(p, hist, a->calls, 0.50, 0, UINT64_MAX);
        max = UINT64_MAX;
        scale = (double)s->calls / (double)a->calls; /* events may be sampled */
    }
    if (!hist || !p50) return;
    uint64_t cut = p50 * JM_TAIL_FACTOR;
    double calls = 0, excess = 0;
    for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++) {
        if (!hist[b] || p->hist_lower[b] < cut) continue;
        uint64_t lo = p->hist_lower[b], hi = b + 1 < JAGER_HIST_BUCKETS ? p->hist_lower[b + 1] : lo;
        double mid = (double)lo + (double)(hi - lo) / 2.0;
        if (mid > (double)max && max >= lo) mid = (double)max;
        calls += (double)hist[b];
        excess += (double)hist[b] * (mid - (double)p50);
    }
    s->tail_calls = (uint64_t)(calls * scale + 0.5);
    s->tail_excess_ns = excess * scale;
}

/* Self time and outermost (recursion-free) inclusive time of each site, from the merged tree. */
static int tree_site_times(jm_model *m)
{
    uint64_t *top = calloc(m->nsites ? m->nsites : 1, sizeof *top);
    uint64_t *self = calloc(m->nsites ? m->nsites : 1, sizeof *self);
    int rc = top && self ? jm_tree_site_times(&m->merged, m->nsites, top, self) : -1;
    for (uint32_t id = 1; rc == 0 && id < m->nsites; id++) {
        m->sites[id].top_ns += top[id];
        m->sites[id].self_ns += self[id];
    }
    free(top);
    free(self);
    return rc;
}

static int build_sites(jm_model *m)
{
    jm_priv *p = m->priv;
    uint32_t n = jager_reader_site_count(m->reader) + 1;
    if (p->nacc > n) n = p->nacc;
    m->sites = calloc(n, sizeof *m->sites);
    if (!m->sites) return -1;
    m->nsites = n;
    for (uint32_t id = 1; id < n; id++) {
        jm_site *s = &m->sites[id];
        const jm_site_acc *a = id < p->nacc && p->acc[id].seen ? &p->acc[id] : NULL;
        const char *name = NULL, *file = NULL;
        uint32_t line = 0;
        jager_reader_site(m->reader, id, &name, &file, &line);
        s->id = id;
        s->role = id < p->nacc ? p->acc[id].role : 0;
        s->tree_exact = m->exact_paths ? 1u : 0u;
        s->name = name && *name ? name : "?";
        s->file = file ? file : "";
        s->line = line;
        jager_site_stat st;
        memset(&st, 0, sizeof st);
        st.struct_size = sizeof st;
        int have = jager_reader_site_stats(m->reader, id, &st) == JAGER_OK;
        if (a) {
            s->ev_calls = a->calls;
            s->ev_total_ns = a->total_ns;
        }
        /* The STATS block is exact, but a cut file may hold an older one than its events. */
        if (have && (!a || st.calls >= a->calls)) {
            s->exact = 1;
            s->calls = st.calls;
            s->total_ns = st.total_ns;
            s->min_ns = st.min_ns;
            s->max_ns = st.max_ns;
            s->bytes = st.bytes;
            s->errors = st.errors;
            s->p50_ns = st.p50_ns;
            s->p90_ns = st.p90_ns;
            s->p99_ns = st.p99_ns;
            s->thinned = st.thinned;
            s->dropped = st.dropped;
        } else if (a) {
            s->calls = a->calls;
            s->total_ns = a->total_ns;
            s->min_ns = a->calls ? a->min_ns : 0;
            s->max_ns = a->max_ns;
            s->bytes = a->bytes;
            s->errors = a->errors;
            s->p50_ns = hist_quantile(p, a->hist, a->calls, 0.50, s->min_ns, s->max_ns);
            s->p90_ns = hist_quantile(p, a->hist, a->calls, 0.90, s->min_ns, s->max_ns);
            s->p99_ns = hist_quantile(p, a->hist, a->calls, 0.99, s->min_ns, s->max_ns);
        }
        const uint64_t *hist = s->exact ? st.hist : a ? a->hist : NULL;
        tail(p, s, hist, a);
        s->mean_ns = s->calls ? (double)s->total_ns / (double)s->calls : 0;
        if (a && m->gc.has_site_time && (a->site_time_gc_ns || a->site_time_pauses)) {
            s->gc_ns = a->site_time_gc_ns;
            s->gc_pauses = a->site_time_pauses;
        } else if (a) {
            s->gc_ns = a->gc_ns;
            s->gc_pauses = a->gc_pauses;
        }
        if (a) {
            s->gc_requested_ns = a->req_ns < s->gc_ns ? a->req_ns : s->gc_ns;
            s->gc_requested_pauses = a->req_pauses < s->gc_pauses ? a->req_pauses : s->gc_pauses;
        }
    }
    return tree_site_times(m);
}

/* ---- the run ---- */

/* "The run" is the recording's clock span, init to shutdown, as its END block states; only
 * a file without one (cut short, crashed) takes it from its events (first start .. last end,
 * plugin events at their time: jm_model_add). Thread windows are clamped into it. Jäger's own
 * threads (named "jager-…": the collector, the gc plugin's) do no program work: they are left
 * out of the thread time that top-level shares are taken of. */
static void run_window(jm_model *m)
{
    if (m->first_ns == UINT64_MAX) m->first_ns = m->last_ns = 0;
    if (m->info.end_ns > m->info.start_ns) {
        m->run_from_end = 1;
        m->first_ns = m->info.start_ns;
        m->last_ns = m->info.end_ns;
    }
    m->run_ns = m->last_ns - m->first_ns;
    /* The program's part of the run (the Julia binding marks it: the end of start(), the
     * call of stop()): Jäger's own start and stop work on the program's threads is not
     * program time. Thread windows are clamped into it; the run stays the END block's. */
    uint64_t from = m->first_ns, to = m->last_ns;
    const char *ps = jager_reader_meta(m->reader, "julia.program_start_ns");
    const char *pe = jager_reader_meta(m->reader, "julia.program_end_ns");
    uint64_t vs = ps ? strtoull(ps, NULL, 10) : 0, ve = pe ? strtoull(pe, NULL, 10) : 0;
    if (vs > from && vs < to) from = vs;
    if (ve > from && ve < to) to = ve;
    m->program_ns = to - from;
    m->thread_ns = 0;
    m->helper_threads = 0;
    for (uint32_t i = 0; i < m->nthreads; i++) {
        jm_thread *t = &m->threads[i];
        if (t->first_ns < from) t->first_ns = from;
        if (t->last_ns > to) t->last_ns = to;
        if (t->last_ns < t->first_ns) t->last_ns = t->first_ns;
        t->helper = jm_thread_is_helper(t->name);
        if (t->helper) {
            m->helper_threads++;
            continue;
        }
        m->thread_ns += t->last_ns - t->first_ns;
    }
    if (m->thread_ns < m->program_ns) m->thread_ns = m->program_ns;
}

/* ---- what the trees lack ---- */

static void mark_tree(const jm_model *m, jm_tree *t, const uint8_t *lost)
{
    for (uint32_t i = 1; i < t->count; i++) {
        jm_node *n = &t->nodes[i];
        if (n->site >= m->nsites || !lost[n->site]) continue;
        n->flags |= JM_NODE_PARTIAL;
        if (n->parent != JM_NONE && n->parent != 0) t->nodes[n->parent].flags |= JM_NODE_SELF_PARTIAL;
    }
}

/* A site whose exact count (STATS) exceeds its span events lost calls before they reached
 * the file. Which call paths they were on is not in the file (only per-site aggregates are):
 * flag the nodes of such sites rather than present them as complete. */
static int mark_partial(jm_model *m)
{
    m->tree_lost_calls = 0;
    m->partial_sites = m->sites_without_events = m->sampled_sites = 0;
    uint8_t *lost = calloc(m->nsites ? m->nsites : 1, 1);
    if (!lost) return -1;
    for (uint32_t id = 1; id < m->nsites; id++) {
        jm_site *s = &m->sites[id];
        /* Thinned calls were left out on purpose (sampling): the site is sampled 1 in N,
         * which is no loss; only what is missing beyond them was lost. */
        if (s->exact && s->thinned) {
            uint64_t kept = s->ev_calls ? s->ev_calls : 1;
            s->sample_1_in = (s->ev_calls + s->thinned + kept / 2) / kept;
            if (s->sample_1_in < 2) s->sample_1_in = 2;
            m->sampled_sites++;
        }
        /* exact trees (PATHS block) hold every call: nothing is short there */
        if (m->exact_paths || !s->exact || s->calls <= s->ev_calls + s->thinned) continue;
        lost[id] = 1;
        m->tree_lost_calls += s->calls - s->ev_calls - s->thinned;
        m->partial_sites++;
        if (!s->ev_calls) m->sites_without_events++;
    }
    if (m->partial_sites) {
        mark_tree(m, &m->merged, lost);
        for (uint32_t i = 0; i < m->nthreads; i++) mark_tree(m, &m->threads[i].tree, lost);
    }
    free(lost);
    return 0;
}

/* ---- sorting ---- */

static int cmp_u64_desc(uint64_t a, uint64_t b) { return a < b ? 1 : a > b ? -1 : 0; }
static int cmp_u32(uint32_t a, uint32_t b) { return a < b ? -1 : a > b; }

static int by_sig(const void *a, const void *b)
{
    const jm_signature *x = a, *y = b;
    int c = cmp_u32(x->site, y->site);
    if (c) return c;
    c = cmp_u64_desc(x->calls, y->calls);
    return c ? c : strcmp(x->signature, y->signature);
}
static int by_unstable(const void *a, const void *b)
{
    const jm_instability *x = a, *y = b;
    int c = cmp_u32(x->site, y->site);
    return c ? c : strcmp(x->signature, y->signature);
}
static int by_msg(const void *a, const void *b)
{
    const jm_message *x = a, *y = b;
    int c = cmp_u32(x->site, y->site);
    return c ? c : cmp_u64_desc(x->count, y->count);
}
static int by_site_stack(const void *a, const void *b)
{
    const jm_site_stack *x = a, *y = b;
    int c = cmp_u32(x->site, y->site);
    return c ? c : cmp_u64_desc(x->total_ns, y->total_ns);
}
static int by_gc_stack(const void *a, const void *b)
{
    const jm_gc_stack *x = a, *y = b;
    return cmp_u64_desc(x->total_ns, y->total_ns);
}
static int by_compile(const void *a, const void *b)
{
    const jm_compile *x = a, *y = b;
    return cmp_u64_desc(x->codegen_ns + x->inference_ns, y->codegen_ns + y->inference_ns);
}
static int by_method(const void *a, const void *b)
{
    const jm_method_specs *x = a, *y = b;
    int c = cmp_u64_desc(x->count, y->count);
    return c ? c : strcmp(x->method, y->method);
}

/* Point each site at its slice of a site-sorted table. */
#define SLICE(arr, count, first_field, count_field)                                    \
    for (uint32_t i = 0; i < (count); i++) {                                           \
        uint32_t sid = (arr)[i].site;                                                  \
        if (sid == 0 || sid >= m->nsites) continue;                                    \
        jm_site *s = &m->sites[sid];                                                   \
        if (!s->count_field) s->first_field = i;                                       \
        s->count_field++;                                                              \
    }

static void sort_tables(jm_model *m)
{
    jm_cuda_finish(m);
    if (m->nsignatures) qsort(m->signatures, m->nsignatures, sizeof *m->signatures, by_sig);
    if (m->ninstabilities) qsort(m->instabilities, m->ninstabilities, sizeof *m->instabilities, by_unstable);
    if (m->nmessages) qsort(m->messages, m->nmessages, sizeof *m->messages, by_msg);
    if (m->nsite_stacks) qsort(m->site_stacks, m->nsite_stacks, sizeof *m->site_stacks, by_site_stack);
    if (m->gc.nstacks) qsort(m->gc.stacks, m->gc.nstacks, sizeof *m->gc.stacks, by_gc_stack);
    if (m->ncompiles) qsort(m->compiles, m->ncompiles, sizeof *m->compiles, by_compile);
    if (m->nmethods) qsort(m->methods, m->nmethods, sizeof *m->methods, by_method);
    SLICE(m->signatures, m->nsignatures, sig_first, sig_count)
    SLICE(m->instabilities, m->ninstabilities, unstable_first, unstable_count)
    SLICE(m->messages, m->nmessages, msg_first, msg_count)
    SLICE(m->site_stacks, m->nsite_stacks, trig_first, trig_count)
    for (uint32_t id = 1; id < m->nsites; id++) {
        jm_site *s = &m->sites[id];
        uint64_t kept = 0;
        for (uint32_t i = 0; i < s->msg_count; i++) kept += m->messages[s->msg_first + i].count;
        jm_priv *p = m->priv;
        uint64_t seen = id < p->nacc ? p->acc[id].errors : 0;
        s->msg_other = seen > kept ? seen - kept : 0;
    }
}

static int build_counters_and_types(jm_model *m)
{
    jm_priv *p = m->priv;
    for (uint32_t id = 1; id < m->ncounters; id++) {
        jm_counter *c = &m->counters[id];
        const char *name = NULL, *unit = NULL;
        uint32_t kind = 0;
        c->id = id;
        if (jager_reader_counter(m->reader, id, &name, &unit, &kind) == JAGER_OK) {
            c->name = name;
            c->unit = unit;
            c->kind = kind;
        }
        if (!c->name) c->name = "?";
        if (!c->unit) c->unit = "";
        c->total = c->last; /* monotonic: the latest sample's running total; gauge: its level */
    }
    uint32_t n = 0;
    for (uint32_t t = 0; t < 65536; t++) n += p->type_counts[t] != 0;
    m->types = calloc(n ? n : 1, sizeof *m->types);
    if (!m->types) return -1;
    for (uint32_t t = 0; t < 65536; t++) {
        if (!p->type_counts[t]) continue;
        jm_type_count *tc = &m->types[m->ntypes++];
        tc->type = (uint16_t)t;
        tc->count = p->type_counts[t];
        const jager_type_desc *d = jager_reader_type(m->reader, (uint16_t)t);
        tc->name = d && d->name ? d->name : NULL;
        if (t < JAGER_EV_FIRST_PLUGIN) tc->known = t >= JAGER_EV_SPAN && t <= JAGER_EV_SPAN_X;
        else tc->known = p->role[t] > JM_ROLE_OTHER;
    }
    return 0;
}

jager_status jm_finish_impl(jm_model *m)
{
    jm_priv *p = m->priv;
    if (p->oom) return JAGER_E_NOMEM;
    m->info.struct_size = sizeof m->info;
    jager_reader_get_info(m->reader, &m->info);
    memset(&m->stats, 0, sizeof m->stats);
    m->stats.struct_size = sizeof m->stats;
    m->have_stats = jager_reader_stats(m->reader, &m->stats) == JAGER_OK;

    if (close_pending(m) != 0 || jm_paths_apply(m) != 0 || merge_threads(m) != 0 || jm_gc_attribute_sites(m) != 0 ||
        build_sites(m) != 0)
        return JAGER_E_NOMEM;
    sort_tables(m);
    if (build_counters_and_types(m) != 0) return JAGER_E_NOMEM;
    if (jm_samples_finish(m) != 0) return JAGER_E_NOMEM;
    if (jm_rusage_finish(m) != 0) return JAGER_E_NOMEM;
    if (jm_split_finish(m) != 0) return JAGER_E_NOMEM;
    if (jm_attrs_finish(m) != 0) return JAGER_E_NOMEM;
    jm_methods_finish(m);

    run_window(m);
    if (mark_partial(m) != 0) return JAGER_E_NOMEM;
    uint64_t drops = 0;
    for (int i = 0; i < JAGER_DROP_REASONS; i++) drops += m->drop_records[i];
    m->dropped = m->have_stats && m->stats.events_dropped > drops ? m->stats.events_dropped : drops;
    const char *cpu = jager_reader_meta(m->reader, "jager.collector_cpu_ns");
    const char *cpu_spans = jager_reader_meta(m->reader, "jager.collector_cpu_spans");
    if (cpu && cpu_spans) {
        m->collector_cpu_ns_known = 1;
        m->collector_cpu_ns = strtoull(cpu, NULL, 10);
        m->collector_cpu_spans = strtoull(cpu_spans, NULL, 10);
    }
    const char *dc = jager_reader_meta(m->reader, "julia.dynamic_call_ns");
    m->julia_dynamic_call_ns = dc ? strtod(dc, NULL) : 0;
    if (!(m->julia_dynamic_call_ns > 0 && m->julia_dynamic_call_ns < 1e6)) m->julia_dynamic_call_ns = 0;
    if (m->have_stats) {
        /* A Julia span costs more than the core's C pair (exception handler, signature check,
         * byte counters): the binding measures it (julia.span_cost_ns) and its sites carry
         * julia.site.<id>.module, so their calls are charged at that cost. */
        const char *jc = jager_reader_meta(m->reader, "julia.span_cost_ns");
        double c_cost = (double)m->stats.span_cost_ns_x1000 / 1000.0;
        uint64_t others = m->stats.spans_total;
        m->julia_span_cost_ns = jc ? strtod(jc, NULL) : 0;
        m->julia_spans = 0;
        if (m->julia_span_cost_ns > 0) {
            char key[64];
            for (uint32_t id = 1; id < m->nsites; id++) {
                snprintf(key, sizeof key, "julia.site.%u.module", id);
                if (jager_reader_meta(m->reader, key)) m->julia_spans += m->sites[id].calls;
            }
            if (m->julia_spans > others) m->julia_spans = others;
            others -= m->julia_spans;
        } else {
            m->julia_span_cost_ns = 0;
        }
        m->self_cost_ns = c_cost * (double)others + m->julia_span_cost_ns * (double)m->julia_spans;
        m->self_cost_pct = m->run_ns ? m->self_cost_ns / (double)m->run_ns * 100.0 : 0;
    }
    return JAGER_OK;
}
