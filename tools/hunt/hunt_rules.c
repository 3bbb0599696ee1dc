/* hunt_rules.c — running the rules, ranking and freeing findings, and the helpers the
 * rule files share (hunt_priv.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_priv.h"
#include "toolutil.h"

static const char *const kind_names[HUNT_KIND_COUNT] = {
    "slow_region", "gc_pressure", "allocation_hotspot", "type_instability", "dispatch_diversity",
    "specialization_explosion", "compile_time", "exception_hotspot", "load_imbalance", "dropped_events",
    "plugin_events", "small_kernels", "launch_bound", "transfer_bound", "low_occupancy",
    "unannotated_hotspot", "requested_collections", "descheduled", "page_faults", "calls_differ_by_input",
    "late_sender", "late_receiver", "collective_wait", "mpi_time", "small_messages", "supply_chain", "job_incomplete",
    "small_parallel_regions",
};

const char *hunt_kind_name(hunt_kind k) { return k < HUNT_KIND_COUNT ? kind_names[k] : "unknown"; }

void hunt_options_default(hunt_options *o) { o->min_pct = 1.0; }

/* The time under node \p i: its spans' time, or — for a path with no span that ended
 * (main, still open when an MPI job's recording was gathered at MPI_Finalize) — what its
 * children's cover. Without that, a run whose only ended top-level spans are static
 * initialisers (HPCCG under -finstrument-functions: 260 µs) made every cost 100% of it. */
static double covered(const jm_tree *t, uint32_t i)
{
    const jm_node *n = &t->nodes[i];
    if (n->calls) return (double)n->incl_ns;
    double sum = 0;
    for (uint32_t c = n->first_child; c != JM_NONE; c = t->nodes[c].next_sibling) sum += covered(t, c);
    return sum;
}

double hunt_base(const jm_model *m, hunt_kind kind)
{
    /* Costs inside regions are shares of the measured (instrumented) time: in a Julia
     * session the recording window also holds startup and JIT work the user did not ask
     * to measure. Compile time and run-wide GC are shares of the whole window. */
    double spanned = 0; /* the top-level paths (the root counts their calls too) */
    if (m->merged.count)
        for (uint32_t c = m->merged.nodes[0].first_child; c != JM_NONE; c = m->merged.nodes[c].next_sibling)
            spanned += covered(&m->merged, c);
    int run_wide = kind == HUNT_COMPILE_TIME || kind == HUNT_SPECIALIZATION_EXPLOSION || kind == HUNT_DROPPED_EVENTS ||
                   kind == HUNT_UNANNOTATED_HOTSPOT;
    if (!run_wide && spanned > 0) return spanned;
    return (double)m->thread_ns;
}

hunt_finding *hunt_add(hunt_list *l, hunt_kind kind, int severity, double cost_ns, const jm_model *m)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        hunt_finding *p = realloc(l->items, cap * sizeof *p);
        if (!p) {
            l->oom = 1;
            return NULL;
        }
        l->items = p;
        l->cap = cap;
    }
    hunt_finding *f = &l->items[l->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->severity = severity;
    f->cost_ns = cost_ns;
    double base = hunt_base(m, kind);
    f->pct_of_run = cost_ns > 0 && base > 0 ? cost_ns / base * 100.0 : 0;
    if (f->pct_of_run > 100.0) f->pct_of_run = 100.0; /* a share never exceeds the whole */
    f->func = "";
    f->file = "";
    f->estimate = "";
    return f;
}

void hunt_at_site(hunt_finding *f, const jm_model *m, jager_site site)
{
    const jm_site *s = jm_site_get(m, site);
    f->site = s ? site : 0;
    f->func = s ? s->name : "";
    f->file = s ? s->file : "";
    f->line = s ? s->line : 0;
}

static char *vfmt(const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *hunt_fmt(hunt_list *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(fmt, ap);
    va_end(ap);
    if (!s) l->oom = 1;
    return s;
}

void hunt_ev(hunt_finding *f, const char *key, double value, const char *unit)
{
    if (f->nevidence < HUNT_MAX_EVIDENCE) f->evidence[f->nevidence++] = (hunt_evidence){key, value, unit};
}

void hunt_detail(hunt_list *l, hunt_finding *f, const char *fmt, ...)
{
    if (f->ndetails >= HUNT_MAX_DETAILS) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = vfmt(fmt, ap);
    va_end(ap);
    if (!s) {
        l->oom = 1;
        return;
    }
    f->details[f->ndetails++] = s;
}

void hunt_finding_free(hunt_finding *f)
{
    free(f->title);
    free(f->hint);
    free(f->owned_func);
    for (uint32_t i = 0; i < f->ndetails; i++) free(f->details[i]);
}

void hunt_remove(hunt_list *l, hunt_kind kind, jager_site site)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i].kind == kind && l->items[i].site == site) hunt_finding_free(&l->items[i]);
        else l->items[k++] = l->items[i];
    }
    l->n = k;
}

double hunt_site_time(const jm_site *s)
{
    /* From the exact call paths top_ns is exact; from span events (possibly sampled) it is
     * scaled to the exact total. */
    if (s->tree_exact) return s->top_ns ? (double)s->top_ns : (double)s->total_ns;
    if (s->top_ns && s->ev_total_ns && s->total_ns >= s->ev_total_ns)
        return (double)s->top_ns * ((double)s->total_ns / (double)s->ev_total_ns);
    return (double)s->total_ns;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int hunt_nesting_build(const jm_model *m, const hunt_list *l, size_t from, hunt_nesting *out)
{
    out->pairs = NULL;
    out->n = 0;
    if (l->n - from < 2) return 0;
    uint8_t *flagged = calloc(m->nsites ? m->nsites : 1, 1);
    if (!flagged) return -1;
    for (size_t i = from; i < l->n; i++)
        if (l->items[i].site && l->items[i].site < m->nsites) flagged[l->items[i].site] = 1;
    /* One walk up from every node of a flagged site: O(nodes × depth), whatever the
     * number of findings. */
    const jm_tree *t = &m->merged;
    size_t cap = 0;
    for (uint32_t i = 1; i < t->count; i++) {
        uint32_t inner = t->nodes[i].site;
        if (inner >= m->nsites || !flagged[inner]) continue;
        for (uint32_t p = t->nodes[i].parent, hops = 0; p != JM_NONE && p != 0 && hops < 4096;
             p = t->nodes[p].parent, hops++) {
            uint32_t outer = t->nodes[p].site;
            if (outer >= m->nsites || !flagged[outer] || outer == inner) continue;
            if (out->n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                uint64_t *np = realloc(out->pairs, nc * sizeof *np);
                if (!np) {
                    free(flagged);
                    hunt_nesting_free(out);
                    return -1;
                }
                out->pairs = np;
                cap = nc;
            }
            out->pairs[out->n++] = (uint64_t)inner << 32 | outer;
        }
    }
    free(flagged);
    if (out->n > 1) qsort(out->pairs, out->n, sizeof *out->pairs, cmp_u64);
    return 0;
}

int hunt_nesting_under(const hunt_nesting *nest, jager_site inner, jager_site outer)
{
    uint64_t key = (uint64_t)inner << 32 | outer;
    return nest->n && bsearch(&key, nest->pairs, nest->n, sizeof key, cmp_u64) != NULL;
}

void hunt_nesting_free(hunt_nesting *nest)
{
    free(nest->pairs);
    nest->pairs = NULL;
    nest->n = 0;
}

/* Regions that wait for others (barriers, locks, messages): their tails mean imbalance. */
int hunt_is_wait(const char *name)
{
    static const char *const words[] = {"wait", "barrier", "lock", "mutex", "join", "recv", "sync", "allreduce"};
    char low[128];
    size_t n = 0;
    for (; name[n] && n < sizeof low - 1; n++) low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(low, words[i])) return 1;
    return 0;
}

int hunt_site_is_wait(const jm_site *s)
{
    if (s->role & JM_SITE_ROLE_KNOWN) return (s->role & JM_SITE_ROLE_WAIT) != 0;
    return hunt_is_wait(s->name);
}

const char *hunt_ns(char *buf, size_t size, double ns) { return tu_fmt_ns(buf, size, ns); }

/* Warnings about the recording first, then cost (unknown cost and notes last), generic notes at the end. */
static int rank_group(const hunt_finding *f)
{
    if (f->kind == HUNT_SUPPLY_CHAIN) return -1; /* whatever else is slow, the code is not what was locked */
    if (f->kind == HUNT_DROPPED_EVENTS || f->kind == HUNT_JOB_INCOMPLETE) return 0;
    if (f->kind == HUNT_PLUGIN_EVENTS) return 3;
    return f->cost_ns >= 0 && f->severity > 0 ? 1 : 2; /* notes with the unknown costs */
}

static int by_rank(const void *a, const void *b)
{
    const hunt_finding *x = a, *y = b;
    int gx = rank_group(x), gy = rank_group(y);
    if (gx != gy) return gx < gy ? -1 : 1;
    if (x->cost_ns != y->cost_ns) return x->cost_ns < y->cost_ns ? 1 : -1;
    if (x->severity != y->severity) return x->severity < y->severity ? 1 : -1;
    return strcmp(x->title ? x->title : "", y->title ? y->title : "");
}

void hunt_rank_list(hunt_finding *f, size_t n)
{
    if (n > 1) qsort(f, n, sizeof *f, by_rank);
}

int hunt_run(const jm_model *m, const hunt_options *o, hunt_finding **out, size_t *n)
{
    hunt_options def;
    if (!o) {
        hunt_options_default(&def);
        o = &def;
    }
    *out = NULL;
    *n = 0;
    hunt_list l = {0};
    hunt_rule_supply_chain(m, &l);
    hunt_rule_dropped(m, &l);
    hunt_rule_slow_regions(m, &l);
    hunt_rule_gc_pressure(m, &l);
    hunt_rule_allocations(m, &l);
    hunt_rule_exceptions(m, &l);
    hunt_rule_load_imbalance(m, &l);
    hunt_rule_small_regions(m, &l);
    hunt_rule_type_instability(m, &l);
    hunt_rule_dispatch_diversity(m, &l);
    hunt_rule_specializations(m, &l);
    hunt_rule_compile_time(m, &l);
    hunt_rule_small_kernels(m, &l);
    hunt_rule_launch_bound(m, &l);
    hunt_rule_transfer_bound(m, &l);
    hunt_rule_low_occupancy(m, &l);
    hunt_rule_plugin_events(m, &l);
    hunt_rule_unannotated(m, &l);
    hunt_rule_descheduled(m, &l); /* after the speed rules: it withholds theirs on its regions */
    hunt_rule_page_faults(m, &l);
    hunt_samples_annotate(m, &l);
    for (size_t i = 0; i < l.n; i++)
        if (!l.items[i].title || !l.items[i].hint) l.oom = 1;
    if (l.oom) {
        hunt_free(l.items, l.n);
        return -1;
    }
    /* Drop what costs less than min_pct of the run (findings of unknown cost stay). A
     * specialization explosion stays whatever its compile time: its count is the evidence,
     * and its calls also pay a dynamic dispatch each, charged to the caller's instability. */
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        hunt_finding *f = &l.items[i];
        int keep = f->kind == HUNT_DROPPED_EVENTS || f->kind == HUNT_SUPPLY_CHAIN || f->kind == HUNT_PLUGIN_EVENTS || f->cost_ns < 0 ||
                   f->kind == HUNT_SPECIALIZATION_EXPLOSION || f->pct_of_run >= o->min_pct;
        if (keep) l.items[k++] = *f;
        else hunt_finding_free(f);
    }
    if (k > 1) qsort(l.items, k, sizeof *l.items, by_rank);
    *out = l.items;
    *n = k;
    if (!k) {
        free(l.items);
        *out = NULL;
    }
    return 0;
}

void hunt_free(hunt_finding *f, size_t n)
{
    if (!f) return;
    for (size_t i = 0; i < n; i++) hunt_finding_free(&f[i]);
    free(f);
}
