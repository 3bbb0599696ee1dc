/* hunt_rules_time.c — rules about where time goes in any program: slow tails, GC pressure,
 * allocation hotspots, exception hotspots; and the two notes about the recording itself
 * (dropped events, events of plugins no rule knows). Thresholds: docs/hunt.md. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "hunt_priv.h"
#include "toolutil.h"

/* ---- slow_region ---- */
#define SLOW_MIN_CALLS 20          /* percentiles mean little below this */
#define SLOW_MIN_TAIL_CALLS 2      /* one slow call is a warm-up, not a pattern */
#define SLOW_MIN_TAIL_SHARE 0.10   /* ≥ 1 call in 10 in the tail */
#define SLOW_MIN_EXCESS_SHARE 0.25 /* the tail's excess is ≥ 25% of the site's time */
#define NEST_EXPLAINS 0.8          /* a nested finding explaining ≥ 80% suppresses its parent's */

/* Suppress findings of kind \p k on sites that enclose findings of the same kind whose
 * cost explains most of theirs: report the most specific regions. The inner findings'
 * keys are summed (the outermost of them under the site, so none is counted twice): a
 * phase whose 2.4 GiB are two kernels' 1.2 GiB each is explained by the two, though
 * neither alone reaches 80 %. */
static void suppress_enclosing(const jm_model *m, hunt_list *l, size_t from, double *key)
{
    hunt_nesting nest;
    if (hunt_nesting_build(m, l, from, &nest) != 0) {
        l->oom = 1;
        return;
    }
    for (size_t i = from; i < l->n && nest.n; i++) {
        if (!l->items[i].site || l->items[i].cost_ns < 0) continue;
        jager_site outer = l->items[i].site;
        double inner = 0;
        for (size_t j = from; j < l->n; j++) {
            jager_site sj = l->items[j].site;
            if (i == j || !sj || sj == outer || !hunt_nesting_under(&nest, sj, outer)) continue;
            int covered = 0; /* j inside another finding under the same site */
            for (size_t k = from; k < l->n && !covered; k++) {
                jager_site sk = l->items[k].site;
                covered = k != j && sk && sk != outer && sk != sj && hunt_nesting_under(&nest, sk, outer) &&
                          hunt_nesting_under(&nest, sj, sk) && !hunt_nesting_under(&nest, sk, sj);
            }
            if (!covered) inner += key[j - from];
        }
        if (inner >= NEST_EXPLAINS * key[i - from]) l->items[i].cost_ns = -2; /* marked for removal below */
    }
    hunt_nesting_free(&nest);
    size_t k = from;
    for (size_t i = from; i < l->n; i++) {
        if (l->items[i].cost_ns == -2) {
            hunt_finding_free(&l->items[i]);
            continue;
        }
        l->items[k++] = l->items[i];
    }
    l->n = k;
}

/* The site most of \p site's calls run under (merged tree), or 0. */
static uint32_t main_parent(const jm_model *m, uint32_t site)
{
    const jm_tree *t = &m->merged;
    uint32_t best = 0;
    uint64_t calls = 0;
    for (uint32_t i = 1; i < t->count; i++) {
        const jm_node *n = &t->nodes[i];
        if (n->site != site || n->parent == JM_NONE || n->calls <= calls) continue;
        calls = n->calls;
        best = t->nodes[n->parent].site;
    }
    return best < m->nsites ? best : 0;
}

/* A tail that is designed work (model_split.c): the slow calls are the k-th under every
 * parent, or the calls with one attribute value. A note, not a cost: nothing is recoverable
 * by making "those calls" look like the others. */
static void input_split(const jm_model *m, hunt_list *l, uint32_t id)
{
    const jm_site *s = &m->sites[id];
    const jm_split *sp = &m->splits[id];
    hunt_finding *f = hunt_add(l, HUNT_INPUT_SPLIT, 0, -1, m);
    if (!f) return;
    hunt_at_site(f, m, id);
    char a[32], b[32];
    if (sp->kind == JM_SPLIT_ORDINAL) {
        char which[128] = "";
        size_t o = 0;
        int shown = 0;
        for (int k = 0; k < 64 && shown < 4; k++) {
            if (!(sp->ordinals >> k & 1)) continue;
            int w = snprintf(which + o, sizeof which - o, "%s%d", shown ? ", " : "", k + 1);
            if (w > 0 && (size_t)w < sizeof which - o) o += (size_t)w;
            shown++;
        }
        uint32_t par = main_parent(m, id);
        f->title = hunt_fmt(l, "calls of `%s` differ by input, not a slow tail: call %s%s under each `%s` is the slow one "
                               "(%llu of %llu calls slow, over %llu parents; p50 %s, max %s)",
                            s->name, which, shown == 4 ? ", …" : "", par ? jm_site_name(m, par) : "parent",
                            (unsigned long long)sp->slow, (unsigned long long)sp->calls, (unsigned long long)sp->parents,
                            hunt_ns(a, sizeof a, (double)s->p50_ns), hunt_ns(b, sizeof b, (double)s->max_ns));
    } else if (sp->kind == JM_SPLIT_PATH) {
        f->title = hunt_fmt(l, "calls of `%s` differ by call path, not a slow tail: the %llu calls made under `%s` are the "
                               "slow ones (%llu slow calls; p50 %s, max %s)",
                            s->name, (unsigned long long)sp->path_calls, jm_site_name(m, sp->path_parent),
                            (unsigned long long)sp->slow, hunt_ns(a, sizeof a, (double)s->p50_ns),
                            hunt_ns(b, sizeof b, (double)s->max_ns));
    } else {
        f->title = hunt_fmt(l, "calls of `%s` differ by input, not a slow tail: the calls with %s = %s are the slow ones "
                               "(%llu slow calls; p50 %s, max %s)",
                            s->name, sp->key, sp->value, (unsigned long long)sp->slow, hunt_ns(a, sizeof a, (double)s->p50_ns),
                            hunt_ns(b, sizeof b, (double)s->max_ns));
    }
    f->hint = hunt_fmt(l, "The same calls are slow every time: this is the work the input asks for (a larger region, "
                          "another material, another level), not waste. To see it apart, give the calls an attribute "
                          "(jager_span_set_attrs) and group by it: `jager summary --by KEY`.");
    hunt_ev(f, "calls", (double)s->calls, "count");
    hunt_ev(f, "slow_calls", (double)sp->slow, "count");
    hunt_ev(f, "p50_ns", (double)s->p50_ns, "ns");
    hunt_ev(f, "max_ns", (double)s->max_ns, "ns");
    if (sp->kind == JM_SPLIT_ORDINAL) hunt_ev(f, "parents", (double)sp->parents, "count");
}

/* The tail inside one group of a split (model_split.c): the split explains why one set of
 * calls is slower than the rest, not why some calls of that set are slower than their peers.
 * The same thresholds as a site's, on the group's own calls and median; the excess must
 * also be that share of the site's time. */
static void group_tails(const jm_model *m, hunt_list *l, uint32_t id, double *key, size_t from)
{
    const jm_site *s = &m->sites[id];
    const jm_split *sp = &m->splits[id];
    for (int g = 0; g < 2; g++) {
        const struct jm_split_group *x = &sp->group[g];
        if (x->calls < SLOW_MIN_CALLS || x->tail_calls < SLOW_MIN_TAIL_CALLS) continue;
        if ((double)x->tail_calls < SLOW_MIN_TAIL_SHARE * (double)x->calls) continue;
        /* … and the excess a share of the whole site's time, not only of the group's: a
         * group of tiny calls (the fast side of a split) is where a loaded machine's
         * preemptions make a tail of their own, worth nothing beside the site's time */
        if (x->tail_excess_ns < SLOW_MIN_EXCESS_SHARE * x->total_ns ||
            x->tail_excess_ns < SLOW_MIN_EXCESS_SHARE * (double)s->total_ns)
            continue;
        double cost = x->tail_excess_ns * (s->total_ns ? hunt_site_time(s) / (double)s->total_ns : 1.0);
        hunt_finding *f = hunt_add(l, HUNT_SLOW_REGION, 1, cost, m);
        if (!f) return;
        key[l->n - 1 - from] = cost;
        hunt_at_site(f, m, id);
        char grp[192], a[32], b[32], c[32];
        if (sp->kind == JM_SPLIT_ATTRIBUTE)
            snprintf(grp, sizeof grp, "%s %s %s", sp->key, g ? "=" : "≠", sp->value);
        else
            snprintf(grp, sizeof grp, "%s", g ? "the slow call(s) under each parent" : "the other calls under each parent");
        f->title = hunt_fmt(l, "slow calls in `%s` with %s: %llu of its %llu calls took over %dx the group's median "
                               "(p50 %s, max %s), %s beyond the group's typical call (%.1f%% of the run)",
                            s->name, grp, (unsigned long long)x->tail_calls, (unsigned long long)x->calls, JM_TAIL_FACTOR,
                            hunt_ns(a, sizeof a, (double)x->p50_ns), hunt_ns(b, sizeof b, (double)x->max_ns),
                            hunt_ns(c, sizeof c, cost), f->pct_of_run);
        f->hint = hunt_fmt(l, "The calls of `%s` differ by input (see the calls_differ_by_input note), and within the "
                              "group with %s some calls are still far slower than their peers: find what those calls do "
                              "differently (a data-dependent slow path, I/O, lock waits, page faults). `jager summary --by "
                              "KEY` shows the group apart.",
                           s->name, grp);
        hunt_detail(l, f, "group: %s", grp);
        hunt_ev(f, "group", (double)g, "");
        hunt_ev(f, "calls", (double)x->calls, "count");
        hunt_ev(f, "slow_calls", (double)x->tail_calls, "count");
        hunt_ev(f, "p50_ns", (double)x->p50_ns, "ns");
        hunt_ev(f, "max_ns", (double)x->max_ns, "ns");
        hunt_ev(f, "total_ns", x->total_ns, "ns");
        hunt_ev(f, "excess_ns", cost, "ns");
        hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
    }
}

void hunt_rule_slow_regions(const jm_model *m, hunt_list *l)
{
    size_t from = l->n;
    /* at most three findings a site: a split's note and a slow_region per group */
    double *key = calloc(m->nsites ? (size_t)m->nsites * 3 : 1, sizeof *key);
    if (!key) {
        l->oom = 1;
        return;
    }
    for (uint32_t id = 1; id < m->nsites; id++) {
        const jm_site *s = &m->sites[id];
        if (s->calls < SLOW_MIN_CALLS || s->tail_calls < SLOW_MIN_TAIL_CALLS) continue;
        if ((double)s->tail_calls < SLOW_MIN_TAIL_SHARE * (double)s->calls) continue;
        if (s->tail_excess_ns < SLOW_MIN_EXCESS_SHARE * (double)s->total_ns) continue;
        /* A barrier a plugin names as such (openmp.site_role) always has a "tail": every
         * thread but the last to arrive waits, so half a 2-thread team's calls are many times
         * the median (LULESH: 191-196 of 400 at each join barrier of a balanced loop). Whether
         * that wait is an imbalance is load_imbalance's to judge, from the threads' work. */
        if ((s->role & JM_SITE_ROLE_KNOWN) && (s->role & JM_SITE_ROLE_WAIT)) continue;
        if (m->splits && m->splits[id].kind != JM_SPLIT_NONE) {
            input_split(m, l, id);
            group_tails(m, l, id, key, from);
            continue;
        }
        /* Under recursion total_ns counts nested calls twice: scale the excess to the site's own time. */
        double cost = s->tail_excess_ns * (hunt_site_time(s) / (double)s->total_ns);
        hunt_finding *f = hunt_add(l, HUNT_SLOW_REGION, 1, cost, m);
        if (!f) break;
        key[l->n - 1 - from] = cost;
        hunt_at_site(f, m, id);
        char a[32], b[32], c[32], d[32];
        f->title = hunt_fmt(l, "slow calls in `%s`: %llu of %llu calls took over %dx the median (p50 %s, p99 %s, max %s), %s beyond the typical call (%.1f%% of the run)",
                            s->name, (unsigned long long)s->tail_calls, (unsigned long long)s->calls, JM_TAIL_FACTOR,
                            hunt_ns(a, sizeof a, (double)s->p50_ns), hunt_ns(b, sizeof b, (double)s->p99_ns),
                            hunt_ns(c, sizeof c, (double)s->max_ns), hunt_ns(d, sizeof d, cost), f->pct_of_run);
        if (hunt_site_is_wait(s))
            f->hint = hunt_fmt(l, "`%s` waits for other threads or ranks: its slow calls are time spent waiting for the "
                                  "slowest participant (load imbalance). Balance the work before the wait (smaller or "
                                  "dynamically scheduled chunks) or overlap it with independent work; the report's "
                                  "timeline shows which thread arrives last.",
                               s->name);
        else
            f->hint = hunt_fmt(l, "Most calls of `%s` are fast but some are far slower: find what those calls do differently "
                                  "(a data-dependent slow path, I/O or system calls, lock waits, page faults on fresh memory, "
                                  "cache misses on a larger input). `jager report` shows when on the timeline they happen.",
                               s->name);
        hunt_ev(f, "calls", (double)s->calls, "count");
        hunt_ev(f, "slow_calls", (double)s->tail_calls, "count");
        hunt_ev(f, "p50_ns", (double)s->p50_ns, "ns");
        hunt_ev(f, "p99_ns", (double)s->p99_ns, "ns");
        hunt_ev(f, "max_ns", (double)s->max_ns, "ns");
        hunt_ev(f, "total_ns", (double)s->total_ns, "ns");
        hunt_ev(f, "excess_ns", cost, "ns");
        hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
    }
    suppress_enclosing(m, l, from, key);
    free(key);
}

/* ---- gc_pressure ---- */
#define GC_MIN_SHARE 0.10  /* ≥ 10% of a region's time in GC pauses */
#define GC_MIN_PAUSES 3    /* a single collection is not pressure */
#define GC_RUN_SHARE 0.10  /* run-wide finding when no region explains it */

typedef struct trigger {
    const char *func, *file;
    uint32_t line;
    uint64_t ns, pauses;
} trigger;

/* Fold a region's trigger stacks (automatic or requested collections, \p requested) to
 * the program frame that allocated, heaviest first. Only the region's own stacks: a
 * region without any names no trigger (the run's stacks belong to other phases). The
 * run-wide finding (\p ss NULL) folds the run's stacks. */
static uint32_t top_triggers(const jm_model *m, const jm_site_stack *ss, uint32_t nss, int requested, trigger *out,
                             uint32_t cap)
{
    uint32_t n = 0;
    uint32_t count = ss ? nss : m->gc.nstacks;
    for (uint32_t i = 0; i < count && i < 256; i++) {
        if (ss ? ss[i].requested != requested : m->gc.stacks[i].requested != requested) continue;
        jager_stack_id st = ss ? ss[i].stack : m->gc.stacks[i].stack;
        uint64_t ns = ss ? ss[i].total_ns : m->gc.stacks[i].total_ns, pz = ss ? ss[i].pauses : m->gc.stacks[i].pauses;
        jm_frame_pick pick;
        if (!jm_stack_pick_frame(m, st, &pick)) pick.func = st ? "(unsymbolized stack)" : "(no stack recorded)";
        else if (!pick.program) {
            /* Only runtime or Julia-library frames (`jl_gc_collect (libjulia.so.1:0)`): not a
             * function of the program's, so not named as one. */
            pick.func = "(runtime-internal: no program frame in the stack)";
            pick.file = "";
            pick.line = 0;
        }
        uint32_t k = 0;
        while (k < n && !(!strcmp(out[k].func, pick.func) && !strcmp(out[k].file, pick.file) && out[k].line == pick.line)) k++;
        if (k == n) {
            if (n == cap) continue;
            out[n++] = (trigger){pick.func, pick.file, pick.line, 0, 0};
        }
        out[k].ns += ns;
        out[k].pauses += pz;
    }
    for (uint32_t i = 1; i < n; i++) /* few entries: insertion sort by time */
        for (uint32_t j = i; j > 0 && out[j].ns > out[j - 1].ns; j--) {
            trigger t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* A GC finding: automatic collections (gc_pressure) or requested ones (GC.gc(),
 * requested_collections) inside site \p s, or run-wide when \p s is NULL. */
static void gc_finding(const jm_model *m, hunt_list *l, const jm_site *s, int requested, double gc_ns, uint64_t pauses,
                       double base_ns, double *key, size_t from)
{
    trigger tr[16];
    const jm_site_stack *ss = s && s->trig_count ? &m->site_stacks[s->trig_first] : NULL;
    uint32_t nt = s && !ss ? 0 : top_triggers(m, ss, s ? s->trig_count : 0, requested, tr, 16);
    uint64_t tr_total = 0;
    for (uint32_t i = 0; i < nt; i++) tr_total += tr[i].ns;
    hunt_finding *f = hunt_add(l, requested ? HUNT_REQUESTED_COLLECTIONS : HUNT_GC_PRESSURE, requested ? 1 : 2, gc_ns, m);
    if (!f) return;
    if (key) key[l->n - 1 - from] = gc_ns;
    if (s) hunt_at_site(f, m, s->id);
    else f->pct_of_run = base_ns > 0 ? (gc_ns >= base_ns ? 100.0 : gc_ns / base_ns * 100.0) : 0;
    f->estimate = requested ? "the requested collections' pause time inside the region"
                            : s ? "the automatic collections' pause time inside the region"
                                : "all automatic collections' pause time in the recording";
    char where[600] = "";
    int named = nt && tr_total && tr[0].func[0] != '('; /* only a symbolized frame names a trigger */
    if (named) {
        char ln[32] = "";
        if (tr[0].line) snprintf(ln, sizeof ln, " line %u", tr[0].line);
        snprintf(where, sizeof where, ", %.0f%% %s `%s`%s", 100.0 * (double)tr[0].ns / (double)tr_total,
                 requested ? "requested from" : "triggered from", tr[0].func, ln);
    }
    char a[32];
    double share = base_ns > 0 ? (gc_ns >= base_ns ? 100.0 : gc_ns / base_ns * 100.0) : 0;
    if (requested)
        f->title = hunt_fmt(l, "requested collections in `%s`: %.1f%% of its time in %llu explicit GC.gc() pauses%s — not allocation pressure",
                            s ? s->name : "(the run)", share, (unsigned long long)pauses, where);
    else if (s)
        f->title = hunt_fmt(l, "GC pressure in `%s`: %.1f%% of its time in %llu pauses%s", s->name, share,
                            (unsigned long long)pauses, nt ? where : ", none triggered inside it");
    else
        f->title = hunt_fmt(l, "GC pressure: %.1f%% of the run (%s) in %llu pauses%s", share,
                            hunt_ns(a, sizeof a, gc_ns), (unsigned long long)pauses, where);
    if (requested)
        f->hint = hunt_fmt(l, "The program calls GC.gc()%s%s%s: each call is a full collection it asked for, not one "
                              "its allocation caused. Take explicit collections out of the measured loop (a benchmark "
                              "harness collects between timings, outside the timed region) or remove them; "
                              "preallocating would not change this time.",
                           named ? " at `" : "", named ? tr[0].func : "", named ? "`" : "");
    else if (s && !nt) {
        char b[32];
        f->hint = hunt_fmt(l, "No collection in this region was triggered by its own code (it allocated %s itself): the "
                              "pauses were triggered elsewhere — another thread or task allocating — and stopped this "
                              "region's thread too. Reduce the allocation where it happens (see the other GC and "
                              "`allocation_hotspot` findings and the largest allocators); preallocating here would not help.",
                           tu_fmt_bytes(b, sizeof b, (double)s->bytes));
    } else
        f->hint = hunt_fmt(l, "Collections are triggered by allocation%s%s%s: allocate buffers once outside the loop and update "
                              "them in place (`.=`, `mul!`, `@views` instead of slices, preallocated outputs); check "
                              "`allocation_hotspot` findings for the regions that allocate most.",
                           named ? " at `" : "", named ? tr[0].func : "", named ? "`" : "");
    hunt_ev(f, "gc_ns", gc_ns, "ns");
    hunt_ev(f, "gc_pauses", (double)pauses, "count");
    hunt_ev(f, "gc_pct_of_region", share, "%");
    hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
    if (s) hunt_ev(f, "region_ns", base_ns, "ns");
    /* The model keeps the longest pause of the run only: a region's finding would show
     * another region's pause (200 ms in four findings of one run). */
    if (!requested && !s) hunt_ev(f, "longest_pause_ns", (double)m->gc.max_ns, "ns");
    if (s && !requested && s->gc_requested_pauses) {
        hunt_ev(f, "requested_gc_ns", (double)s->gc_requested_ns, "ns");
        hunt_ev(f, "requested_pauses", (double)s->gc_requested_pauses, "count");
    }
    for (uint32_t i = 0; i < nt && i < 3; i++)
        hunt_detail(l, f, "%s: %s (%s:%u) — %.0f%% of this GC time, %llu pauses", requested ? "GC.gc() from" : "trigger",
                    tr[i].func, *tr[i].file ? tr[i].file : "?", tr[i].line,
                    tr_total ? 100.0 * (double)tr[i].ns / (double)tr_total : 0.0, (unsigned long long)tr[i].pauses);
    if (s && !nt) hunt_detail(l, f, "no trigger stack was recorded inside this region");
}

/* Regions with ≥ GC_MIN_SHARE of their time in collections of one kind (automatic or
 * requested), the enclosing ones suppressed when an inner one explains them. */
static size_t gc_regions(const jm_model *m, hunt_list *l, int requested)
{
    size_t from = l->n;
    /* at most three findings a site: a split's note and a slow_region per group */
    double *key = calloc(m->nsites ? (size_t)m->nsites * 3 : 1, sizeof *key);
    if (!key) {
        l->oom = 1;
        return 0;
    }
    for (uint32_t id = 1; id < m->nsites; id++) {
        const jm_site *s = &m->sites[id];
        double t = hunt_site_time(s);
        uint64_t ns = requested ? s->gc_requested_ns : s->gc_ns - s->gc_requested_ns;
        uint64_t pz = requested ? s->gc_requested_pauses : s->gc_pauses - s->gc_requested_pauses;
        if (!ns || t <= 0 || pz < GC_MIN_PAUSES || (double)ns < GC_MIN_SHARE * t) continue;
        gc_finding(m, l, s, requested, (double)ns, pz, t, key, from);
    }
    suppress_enclosing(m, l, from, key);
    free(key);
    return l->n - from;
}

void hunt_rule_gc_pressure(const jm_model *m, hunt_list *l)
{
    if (!m->gc.pauses) return;
    size_t automatic = gc_regions(m, l, 0);
    size_t requested = gc_regions(m, l, 1);
    /* Run-wide: all GC time against the whole recording window (startup included), the run's
     * wall-clock span — a collection stops every thread — as `jager summary` prints it. */
    double base = (double)m->run_ns;
    uint64_t auto_ns = m->gc.total_ns - (m->gc.requested_ns < m->gc.total_ns ? m->gc.requested_ns : m->gc.total_ns);
    uint64_t auto_pz = m->gc.pauses - (m->gc.requested_pauses < m->gc.pauses ? m->gc.requested_pauses : m->gc.pauses);
    if (!automatic && base > 0 && (double)auto_ns >= GC_RUN_SHARE * base && auto_pz >= GC_MIN_PAUSES)
        gc_finding(m, l, NULL, 0, (double)auto_ns, auto_pz, base, NULL, 0);
    if (!requested && base > 0 && (double)m->gc.requested_ns >= GC_RUN_SHARE * base && m->gc.requested_pauses >= GC_MIN_PAUSES)
        gc_finding(m, l, NULL, 1, (double)m->gc.requested_ns, m->gc.requested_pauses, base, NULL, 0);
}

/* ---- allocation_hotspot ---- */
#define ALLOC_MIN_BYTES (16.0 * 1024 * 1024) /* below this, allocation is noise */
#define ALLOC_MIN_RATE 0.1                   /* bytes per ns of the region's time: 100 MB/s */
#define ALLOC_MIN_GC_SHARE 0.10              /* or ≥ 10% of the region's time in automatic collections */
#define ALLOC_NS_PER_BYTE 0.25               /* estimated cost of allocating and reclaiming a byte */

/* The share of a region's automatic-GC trigger time whose stacks pass through
 * Base.unalias (`unaliascopy`): copies a broadcast makes because its destination overlaps
 * its sources (views of one array on both sides) — allocation `@views` cannot remove. */
static double unalias_share(const jm_model *m, const jm_site *s)
{
    double all = 0, alias = 0;
    for (uint32_t i = 0; i < s->trig_count && i < 256; i++) {
        const jm_site_stack *ss = &m->site_stacks[s->trig_first + i];
        if (ss->requested) continue;
        all += (double)ss->total_ns;
        if (jm_stack_has_func(m, ss->stack, "unaliascopy") || jm_stack_has_func(m, ss->stack, "unalias"))
            alias += (double)ss->total_ns;
    }
    return all > 0 ? alias / all : 0;
}

/* One problem, one cost: the automatic GC time of a region that is an allocation hotspot
 * is that allocation's cost (max(GC time, bytes × 0.25 ns)). A gc_pressure finding on the
 * same region charged the same GC time again: it is folded into the allocation finding —
 * its pauses and trigger go into the title and evidence, its trigger lines into the
 * details — and removed. Findings [from, l->n) are the allocation findings. */
static void fold_gc_pressure(hunt_list *l, size_t from)
{
    for (size_t i = from; i < l->n; i++) {
        size_t g = 0;
        while (g < from && !(l->items[g].kind == HUNT_GC_PRESSURE && l->items[g].site == l->items[i].site)) g++;
        if (g == from) continue;
        hunt_finding *f = &l->items[i], *gp = &l->items[g];
        double pauses = 0;
        for (uint32_t e = 0; e < gp->nevidence; e++)
            if (!strcmp(gp->evidence[e].key, "gc_pauses")) pauses = gp->evidence[e].value;
        const char *t = gp->title ? strstr(gp->title, " pauses, ") : NULL;
        char *title = hunt_fmt(l, "%s; %.0f GC pauses%s%s", f->title ? f->title : "", pauses, t ? ", " : "",
                               t ? t + strlen(" pauses, ") : "");
        if (title) {
            free(f->title);
            f->title = title;
        }
        hunt_ev(f, "gc_pauses", pauses, "count");
        for (uint32_t d = 0; d < gp->ndetails && f->ndetails < HUNT_MAX_DETAILS; d++) {
            f->details[f->ndetails++] = gp->details[d];
            gp->details[d] = NULL;
        }
        hunt_finding_free(gp);
        memmove(&l->items[g], &l->items[g + 1], (l->n - g - 1) * sizeof l->items[0]);
        l->n--;
        from--;
        i--;
    }
}

void hunt_rule_allocations(const jm_model *m, hunt_list *l)
{
    size_t from = l->n;
    /* at most three findings a site: a split's note and a slow_region per group */
    double *key = calloc(m->nsites ? (size_t)m->nsites * 3 : 1, sizeof *key);
    if (!key) {
        l->oom = 1;
        return;
    }
    for (uint32_t id = 1; id < m->nsites; id++) {
        const jm_site *s = &m->sites[id];
        double t = hunt_site_time(s), b = (double)s->bytes;
        /* Bytes, rate and GC share decide, not the number of calls: 1 GiB in 3 calls of a
         * function whose inner loop allocates is as much a hotspot as 1 GiB in 3000. */
        double gc = (double)(s->gc_ns - s->gc_requested_ns);
        if (b < ALLOC_MIN_BYTES || t <= 0 || !s->calls) continue;
        if (b / t < ALLOC_MIN_RATE && gc < ALLOC_MIN_GC_SHARE * t) continue;
        double cost = b * ALLOC_NS_PER_BYTE;
        if (gc > cost) cost = gc;
        if (cost > t) cost = t;
        hunt_finding *f = hunt_add(l, HUNT_ALLOCATION_HOTSPOT, 2, cost, m);
        if (!f) break;
        key[l->n - 1 - from] = b;
        hunt_at_site(f, m, id);
        f->estimate = gc > b * ALLOC_NS_PER_BYTE ? "the automatic GC time inside the region (at most its time)"
                                                 : "0.25 ns per allocated byte (at most the region's time)";
        char x[32], y[32];
        double gshare = gc / t * 100.0;
        f->title = hunt_fmt(l, "allocation hotspot in `%s`: %s allocated in %llu calls (%s per call, %.2f GB/s of its time, %.1f%% of its time in GC), about %.1f%% of the run",
                            s->name, tu_fmt_bytes(x, sizeof x, b), (unsigned long long)s->calls,
                            tu_fmt_bytes(y, sizeof y, b / (double)s->calls), b / t, gshare > 100 ? 100.0 : gshare,
                            f->pct_of_run);
        double alias = unalias_share(m, s);
        if (alias >= 0.5)
            f->hint = hunt_fmt(l, "%.0f%% of the collections were triggered in Base.unalias copies (`unaliascopy`): a "
                                  "broadcast in `%s` writes into an array that its sources overlap (views of the same "
                                  "array on both sides of `.=`), so Julia copies each source first. `@views` does not "
                                  "help — they are views already: write the result into a separate preallocated "
                                  "buffer and copy it back (or swap two arrays), so destination and sources do not alias.",
                               100.0 * alias, s->name);
        else
            f->hint = hunt_fmt(l, "Allocate once and reuse: hoist temporary arrays out of `%s`'s loop and write into "
                                  "preallocated outputs (in-place functions, `.=`, `@views`; in C a scratch buffer kept "
                                  "across calls instead of malloc/free per call).",
                               s->name);
        if (alias > 0) hunt_ev(f, "unalias_gc_share_pct", 100.0 * alias, "%");
        hunt_ev(f, "bytes", b, "bytes");
        hunt_ev(f, "calls", (double)s->calls, "count");
        hunt_ev(f, "bytes_per_call", b / (double)s->calls, "bytes");
        hunt_ev(f, "bytes_per_ns", b / t, "bytes/ns");
        hunt_ev(f, "region_ns", t, "ns");
        hunt_ev(f, "gc_ns", gc, "ns");
        hunt_ev(f, "gc_pct_of_region", gshare > 100 ? 100.0 : gshare, "%");
        hunt_ev(f, "estimated_cost_ns", cost, "ns");
        hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
    }
    suppress_enclosing(m, l, from, key);
    free(key);
    fold_gc_pressure(l, from);
}

static int by_self_bytes(const void *a, const void *b)
{
    const hunt_allocator *x = a, *y = b;
    if (x->self_bytes != y->self_bytes) return x->self_bytes < y->self_bytes ? 1 : -1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

size_t hunt_allocators(const jm_model *m, hunt_allocator *out, size_t cap)
{
    if (!cap || m->nsites < 2) return 0;
    uint64_t *self = calloc(m->nsites, sizeof *self);
    hunt_allocator *all = calloc(m->nsites, sizeof *all);
    if (!self || !all) {
        free(self);
        free(all);
        return 0;
    }
    /* Self bytes: what a site's spans allocated outside the spans of sites inside them. */
    const jm_tree *t = &m->merged;
    for (uint32_t i = 1; i < t->count; i++) {
        const jm_node *nd = &t->nodes[i];
        if (nd->site >= m->nsites) continue;
        uint64_t kids = 0;
        for (uint32_t c = nd->first_child; c != JM_NONE && c < t->count; c = t->nodes[c].next_sibling)
            kids += t->nodes[c].bytes;
        self[nd->site] += nd->bytes > kids ? nd->bytes - kids : 0;
    }
    size_t n = 0;
    for (uint32_t id = 1; id < m->nsites; id++) {
        const jm_site *s = &m->sites[id];
        if (!s->bytes) continue;
        double rt = hunt_site_time(s);
        all[n++] = (hunt_allocator){id, s->bytes, self[id] < s->bytes ? self[id] : s->bytes, s->calls, rt,
                                    rt > 0 ? (double)s->bytes / rt : 0, s->gc_ns - s->gc_requested_ns};
    }
    free(self);
    if (n > 1) qsort(all, n, sizeof *all, by_self_bytes);
    if (n > cap) n = cap;
    memcpy(out, all, n * sizeof *out);
    free(all);
    return n;
}

/* ---- exception_hotspot ---- */
#define EXC_MIN_ERRORS 10
#define EXC_MIN_SHARE 0.01 /* ≥ 1% of calls fail */

void hunt_rule_exceptions(const jm_model *m, hunt_list *l)
{
    for (uint32_t id = 1; id < m->nsites; id++) {
        const jm_site *s = &m->sites[id];
        if (s->errors < EXC_MIN_ERRORS || !s->calls || (double)s->errors < EXC_MIN_SHARE * (double)s->calls) continue;
        double share = (double)s->errors / (double)s->calls;
        if (share > 1) share = 1;
        double cost = hunt_site_time(s) * share;
        hunt_finding *f = hunt_add(l, HUNT_EXCEPTION_HOTSPOT, 2, cost, m);
        if (!f) return;
        hunt_at_site(f, m, id);
        const jm_message *top = s->msg_count ? &m->messages[s->msg_first] : NULL;
        char msg[120] = "";
        if (top) jm_text_fit(msg, sizeof msg, top->text, 60);
        if (top)
            f->title = hunt_fmt(l, "exception hotspot in `%s`: %llu of %llu calls failed (%.1f%%), most with \"%s\" (×%llu)",
                                s->name, (unsigned long long)s->errors, (unsigned long long)s->calls, share * 100.0, msg,
                                (unsigned long long)top->count);
        else
            f->title = hunt_fmt(l, "exception hotspot in `%s`: %llu of %llu calls failed (%.1f%%)", s->name,
                                (unsigned long long)s->errors, (unsigned long long)s->calls, share * 100.0);
        f->hint = hunt_fmt(l, "Throwing and catching in a loop is slow (unwinding, backtraces, allocation): test the "
                              "condition first (`tryparse` instead of `parse`, `haskey`/`get` instead of catching "
                              "KeyError, return a status) and keep try/catch outside `%s`'s hot path.",
                           s->name);
        hunt_ev(f, "errors", (double)s->errors, "count");
        hunt_ev(f, "calls", (double)s->calls, "count");
        hunt_ev(f, "error_pct", share * 100.0, "%");
        hunt_ev(f, "estimated_cost_ns", cost, "ns");
        for (uint32_t i = 0; i < s->msg_count && i < 3; i++) {
            const jm_message *g = &m->messages[s->msg_first + i];
            char t[200];
            jm_text_fit(t, sizeof t, g->text, 100);
            hunt_detail(l, f, "message ×%llu: %s", (unsigned long long)g->count, t);
        }
    }
}

/* ---- dropped_events ---- */

void hunt_rule_dropped(const jm_model *m, hunt_list *l)
{
    if (!m->dropped) return;
    static const char *const reasons[JAGER_DROP_REASONS] = {"ring full", "overwritten", "no ring", "too large",
                                                            "sink failed", "reason 5", "reason 6", "reason 7"};
    hunt_finding *f = hunt_add(l, HUNT_DROPPED_EVENTS, 1, 0, m);
    if (!f) return;
    uint64_t emitted = m->have_stats ? m->stats.events_emitted : 0;
    double share = emitted ? 100.0 * (double)m->dropped / (double)emitted : 0;
    char parts[256] = "";
    size_t o = 0;
    for (int i = 0; i < JAGER_DROP_REASONS; i++) {
        uint64_t v = m->drop_records[i] > m->stats.dropped[i] ? m->drop_records[i] : m->stats.dropped[i];
        if (!v || o >= sizeof parts) continue;
        int w = snprintf(parts + o, sizeof parts - o, "%s%s ×%llu", o ? ", " : "", reasons[i], (unsigned long long)v);
        if (w > 0) o += (size_t)w;
    }
    if (emitted)
        f->title = hunt_fmt(l, "%llu events were dropped (%.2f%% of %llu emitted: %s): the call tree and timeline are incomplete",
                            (unsigned long long)m->dropped, share, (unsigned long long)emitted, parts);
    else
        f->title = hunt_fmt(l, "%llu events were dropped (%s): the call tree and timeline are incomplete",
                            (unsigned long long)m->dropped, parts);
    f->hint = hunt_fmt(l, "Per-site totals stay exact. To keep every event, give each thread a larger ring "
                          "(JAGER_RING_BYTES=16M), drain more often (JAGER_FLUSH_MS=10), or sample spans "
                          "(JAGER_SAMPLE=1/10) on very hot sites.");
    hunt_ev(f, "dropped", (double)m->dropped, "count");
    if (emitted) hunt_ev(f, "emitted", (double)emitted, "count");
    hunt_ev(f, "dropped_pct", share, "%");
}

/* ---- events of plugins without a rule ---- */

void hunt_rule_plugin_events(const jm_model *m, hunt_list *l)
{
    uint32_t unknown = 0;
    for (uint32_t i = 0; i < m->ntypes; i++) unknown += m->types[i].type >= JAGER_EV_FIRST_PLUGIN && !m->types[i].known;
    if (!unknown) return;
    hunt_finding *f = hunt_add(l, HUNT_PLUGIN_EVENTS, 0, 0, m);
    if (!f) return;
    char list[512] = "";
    size_t o = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const jm_type_count *t = &m->types[i];
        if (t->type < JAGER_EV_FIRST_PLUGIN || t->known) continue;
        total += t->count;
        char name[96];
        if (t->name) jm_text_fit(name, sizeof name, t->name, 48);
        else snprintf(name, sizeof name, "type#%u", t->type);
        hunt_detail(l, f, "%s ×%llu", name, (unsigned long long)t->count);
        if (o < 400) {
            int w = snprintf(list + o, sizeof list - o, "%s%s ×%llu", o ? ", " : "", name, (unsigned long long)t->count);
            if (w > 0) o += (size_t)w;
        }
    }
    f->title = hunt_fmt(l, "plugin events seen: %s", list);
    f->hint = hunt_fmt(l, "No hunt rule reads these types yet; `jager dump` and `jager export` show every field "
                          "(the file's schema describes them).");
    hunt_ev(f, "types", (double)unknown, "count");
    hunt_ev(f, "events", (double)total, "count");
}
