/* hunt_rules_openmp.c — OpenMP parallel regions too small for their fork and join
 * (openmp plugin, docs/openmp.md; the sites' roles come from openmp.site_role):
 *
 *   small_parallel_regions  a region run many times whose encountering thread spends a
 *                           large share of it outside its own work: the runtime's fork,
 *                           the join barrier and the wake-ups, paid again by every region
 *
 * From each thread's own call tree: a region node's children on the encountering thread are
 * its own `omp work` (the primary's share) and its join-barrier wait; what the region took
 * beyond that work is the price of running it in parallel. docs/hunt.md gives the numbers. */
#include <stdio.h>

#include "hunt_priv.h"

#define SMALL_REGION_MIN_CALLS 100
#define SMALL_REGION_MAX_MEAN_NS 200000.0 /* 200 µs: fork + join cost 2–20 µs a region */
#define SMALL_REGION_MIN_SHARE 0.30       /* of the region's time outside the primary's work */
#define SMALL_REGION_PROBLEM_SHARE 0.50
#define SMALL_REGION_MAX 5u

static int has_role(const jm_model *m, uint32_t site, uint32_t role)
{
    const jm_site *s = jm_site_get(m, site);
    return s && (s->role & JM_SITE_ROLE_KNOWN) && (s->role & role);
}

/* One region site's time on its encountering threads: the calls and inclusive time of its
 * nodes and, of their children on the same thread, the work and the join-barrier wait. */
typedef struct region_sum {
    uint64_t calls, incl_ns, work, wait;
} region_sum;

/* Summed over every thread's own tree, not the merged one: the merged tree puts the workers'
 * `omp work` and join barrier under the region node too (the team's thread time), and the
 * price of a region is what its encountering thread spends outside its own share. */
static region_sum region_on_encountering_threads(const jm_model *m, uint32_t site)
{
    region_sum r = {0, 0, 0, 0};
    for (uint32_t th = 0; th < m->nthreads; th++) {
        const jm_tree *t = &m->threads[th].tree;
        for (uint32_t i = 1; i < t->count; i++) {
            const jm_node *n = &t->nodes[i];
            if (n->site != site) continue;
            r.calls += n->calls;
            r.incl_ns += n->incl_ns;
            for (uint32_t c = n->first_child; c != JM_NONE; c = t->nodes[c].next_sibling) {
                const jm_node *k = &t->nodes[c];
                if (has_role(m, k->site, JM_SITE_ROLE_WORK)) r.work += k->incl_ns;
                else if (has_role(m, k->site, JM_SITE_ROLE_WAIT)) r.wait += k->incl_ns;
            }
        }
    }
    return r;
}

void hunt_rule_small_regions(const jm_model *m, hunt_list *l)
{
    size_t first = l->n;
    for (uint32_t site = 1; site < m->nsites; site++) {
        if (!has_role(m, site, JM_SITE_ROLE_REGION)) continue;
        region_sum rs = region_on_encountering_threads(m, site);
        const region_sum *n = &rs;
        if (n->calls < SMALL_REGION_MIN_CALLS || !n->incl_ns) continue;
        double mean = (double)n->incl_ns / (double)n->calls;
        if (mean > SMALL_REGION_MAX_MEAN_NS) continue;
        uint64_t work = n->work, wait = n->wait;
        if (!work || work >= n->incl_ns) continue; /* no work span of its own: not the plugin's shape */
        double outside = (double)(n->incl_ns - work), share = outside / (double)n->incl_ns;
        if (share < SMALL_REGION_MIN_SHARE) continue;
        hunt_finding *f = hunt_add(l, HUNT_SMALL_PARALLEL_REGIONS, share >= SMALL_REGION_PROBLEM_SHARE ? 2 : 1, outside, m);
        if (!f) return;
        hunt_at_site(f, m, site);
        char mb[32], ob[32], wb[32];
        f->title = hunt_fmt(l, "`%s` ran %llu times at %s each, %.0f%% of it outside its work: fork, join and "
                               "wake-ups cost %s",
                            f->func, (unsigned long long)n->calls, hunt_ns(mb, sizeof mb, mean), share * 100.0,
                            hunt_ns(ob, sizeof ob, outside));
        f->hint = hunt_fmt(l, "Every parallel region pays the runtime's fork and its join barrier (%s a region "
                              "here beyond the work). Put consecutive regions in one `#pragma omp parallel` with "
                              "several `omp for`, give small ones an `if(n > …)` clause so they run serially, or "
                              "give each region more work.",
                           hunt_ns(wb, sizeof wb, outside / (double)n->calls));
        f->estimate = "the encountering thread's time in the region outside its own work span";
        hunt_ev(f, "regions", (double)n->calls, "count");
        hunt_ev(f, "mean_ns", mean, "ns");
        hunt_ev(f, "work_ns", (double)work, "ns");
        hunt_ev(f, "join_wait_ns", (double)wait, "ns");
        hunt_ev(f, "runtime_ns", outside - (double)wait, "ns");
        hunt_ev(f, "outside_work_pct", share * 100.0, "%");
    }
    /* the heaviest few */
    size_t made = l->n - first;
    if (made > SMALL_REGION_MAX) {
        hunt_rank_list(l->items + first, made);
        while (l->n > first + SMALL_REGION_MAX) hunt_finding_free(&l->items[--l->n]);
    }
}
