/* hunt_rules_rusage.c — what the machine did to the program, from the rusage plugin's
 * readings (model_rusage.c): a region that spent its wall time waiting for a CPU was
 * descheduled (an oversubscribed machine), not slow, and the rules about its speed stay
 * quiet; a region that takes many page faults each call first-touches fresh memory. */
#include <stdint.h>
#include <stdlib.h>

#include "hunt_priv.h"

/* Descheduled: at least this share of the region's wall time runnable but off the CPU,
 * over at least this much wall time. A quiet machine shows a few per cent at most. */
#define DESCHED_SHARE 0.25
#define DESCHED_MIN_WALL_NS 20e6
/* Page faults: most calls fault (each at least JM_RU_FAULTING pages of its own), so it is
 * memory fresh on every call, not one buffer's first touch spread over the calls. */
#define FAULTING_SHARE 0.5
/* … and over enough calls and pages that the readings' interpolation (a few ms apart) cannot
 * make it up: a region called once is set-up, and tens of pages a call can be a neighbour's
 * faults smeared over a short span. */
#define FAULT_MIN_CALLS 4
#define FAULTS_PER_CALL_MIN 64.0

static int descheduled(const jm_site_rusage *u)
{
    return u->wall_ns >= DESCHED_MIN_WALL_NS && u->incl[JM_RU_RUNQ] >= DESCHED_SHARE * u->wall_ns;
}

/* The speed findings (slow regions, imbalance) at descheduled sites leave the list: the time
 * they name was the machine's. The first gone title of each kind is kept in
 * \p gone[site * 2 + (imbalance ? 1 : 0)] and each kind counted in \p ngone likewise, so the
 * descheduled finding can name both (a late thread's slow calls and the others' wait). */
static void withhold(const jm_model *m, hunt_list *l, char **gone, uint32_t *ngone)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        hunt_finding *f = &l->items[i];
        int speed = f->kind == HUNT_SLOW_REGION || f->kind == HUNT_LOAD_IMBALANCE;
        if (speed && f->site && f->site < m->nsites && descheduled(&m->rusage.sites[f->site])) {
            size_t at = (size_t)f->site * 2 + (f->kind == HUNT_LOAD_IMBALANCE);
            if (!ngone[at]++)
                gone[at] = hunt_fmt(l, "withheld: %s — %s", hunt_kind_name(f->kind), f->title ? f->title : "");
            hunt_finding_free(f);
            continue;
        }
        l->items[k++] = *f;
    }
    l->n = k;
}

void hunt_rule_descheduled(const jm_model *m, hunt_list *l)
{
    const jm_rusage *ru = &m->rusage;
    if (!ru->present || !ru->has_runq) return;
    char **gone = calloc((size_t)m->nsites * 2, sizeof *gone);
    uint32_t *ngone = calloc((size_t)m->nsites * 2, sizeof *ngone);
    if (!gone || !ngone) {
        free(gone);
        free(ngone);
        l->oom = 1;
        return;
    }
    withhold(m, l, gone, ngone);
    size_t from = l->n;
    for (uint32_t s = 1; s < m->nsites; s++) {
        const jm_site_rusage *u = &ru->sites[s];
        if (!descheduled(u)) continue;
        double runq = u->incl[JM_RU_RUNQ], cpu = u->incl[JM_RU_CPU];
        hunt_finding *f = hunt_add(l, HUNT_DESCHEDULED, 1, runq, m);
        if (!f) break;
        hunt_at_site(f, m, s);
        char w[32], c[32], q[32];
        f->title = hunt_fmt(l, "`%s` was descheduled: wall %s, on a CPU %s, waiting for one %s (%.0f %%)", f->func,
                            hunt_ns(w, sizeof w, u->wall_ns), hunt_ns(c, sizeof c, cpu), hunt_ns(q, sizeof q, runq),
                            100.0 * runq / u->wall_ns);
        f->hint = hunt_fmt(l, "The machine had more runnable threads than cores while this ran (%.0f involuntary context "
                              "switches): this time is not the code's. Rerun on a quiet or exclusive node, or with no more "
                              "threads than cores; findings about this region's speed are withheld.",
                           u->incl[JM_RU_IVCSW]);
        hunt_ev(f, "wall_ns", u->wall_ns, "ns");
        hunt_ev(f, "cpu_ns", cpu, "ns");
        hunt_ev(f, "runq_wait_ns", runq, "ns");
        hunt_ev(f, "runq_share", 100.0 * runq / u->wall_ns, "%");
        hunt_ev(f, "involuntary_switches", u->incl[JM_RU_IVCSW], "count");
        hunt_ev(f, "spans_covered", (double)u->spans, "count");
        hunt_ev(f, "withheld", (double)(ngone[2 * s] + ngone[2 * s + 1]), "count");
        hunt_ev(f, "withheld_load_imbalance", (double)ngone[2 * s + 1], "count");
        for (uint32_t kind = 0; kind < 2; kind++) {
            uint32_t n = ngone[2 * s + kind];
            if (!gone[2 * s + kind]) continue;
            hunt_detail(l, f, "%s", gone[2 * s + kind]);
            if (n > 1) hunt_detail(l, f, "… and %u more %s", n - 1, kind ? "load_imbalance" : "slow_region");
        }
    }
    for (size_t s = 0; s < (size_t)m->nsites * 2; s++) free(gone[s]);
    free(gone);
    free(ngone);
    /* One finding per descheduled stretch: a region inside another descheduled one says the
     * same thing. */
    hunt_nesting nest;
    if (l->n - from > 1 && hunt_nesting_build(m, l, from, &nest) == 0) {
        uint8_t *inner = calloc(l->n - from, 1);
        if (!inner) l->oom = 1;
        for (size_t i = from; inner && i < l->n; i++)
            for (size_t j = from; j < l->n && !inner[i - from]; j++)
                inner[i - from] = j != i && hunt_nesting_under(&nest, l->items[i].site, l->items[j].site);
        size_t k = from;
        for (size_t i = from; inner && i < l->n; i++) {
            if (inner[i - from]) hunt_finding_free(&l->items[i]);
            else l->items[k++] = l->items[i];
        }
        if (inner) l->n = k;
        free(inner);
        hunt_nesting_free(&nest);
    }
}

void hunt_rule_page_faults(const jm_model *m, hunt_list *l)
{
    const jm_rusage *ru = &m->rusage;
    if (!ru->present || !ru->fault_ns) return;
    for (uint32_t s = 1; s < m->nsites; s++) {
        const jm_site_rusage *u = &ru->sites[s];
        double faults = u->self[JM_RU_MINFLT];
        if (u->spans < FAULT_MIN_CALLS || (double)u->faulting_spans < FAULTING_SHARE * (double)u->spans ||
            faults / (double)u->spans < FAULTS_PER_CALL_MIN)
            continue;
        /* The cost: the faults at the measured price of one, or the system time the readings
         * saw inside the region when that is more (zeroing, unmapping, the allocator's calls). */
        double by_count = faults * (double)ru->fault_ns, by_sys = u->self[JM_RU_SYS];
        double cost = by_sys > by_count ? by_sys : by_count;
        hunt_finding *f = hunt_add(l, HUNT_PAGE_FAULTS, 1, cost, m);
        if (!f) return;
        hunt_at_site(f, m, s);
        double per_call = faults / (double)u->spans;
        f->title = hunt_fmt(l, "`%s` takes %.0f page faults a call (%.1f MiB of fresh memory first touched each time): "
                               "≈ %.1f %% of the run",
                            f->func, per_call, per_call * 4096.0 / 1048576.0, f->pct_of_run);
        f->hint = hunt_fmt(l, "Each call gets memory the kernel must map and zero when it is first touched (a large "
                              "malloc/free or a new array per call). Allocate the buffers once, outside the loop, and "
                              "reuse them. With glibc, blocks above M_MMAP_THRESHOLD go back to the kernel at free(). "
                              "%s",
                           by_sys > by_count ? "Cost: the system time inside the region (more than the faults at their "
                                               "measured price)."
                                             : "Cost: the faults at one fault's price, measured on this run.");
        hunt_ev(f, "faults", faults, "count");
        hunt_ev(f, "faults_per_call", per_call, "count");
        hunt_ev(f, "faulting_calls", (double)u->faulting_spans, "count");
        hunt_ev(f, "major_faults", u->self[JM_RU_MAJFLT], "count");
        hunt_ev(f, "fault_ns", (double)ru->fault_ns, "ns");
        hunt_ev(f, "sys_ns", u->self[JM_RU_SYS], "ns");
        hunt_ev(f, "spans_covered", (double)u->spans, "count");
    }
}
