/* hunt_rules_threads.c — rules that compare threads: load imbalance (threads that wait for
 * the slowest one at a barrier, lock or message). Thresholds: docs/hunt.md. */
#include <stdio.h>
#include <stdlib.h>

#include "hunt_priv.h"

/* ---- load_imbalance ---- */
#define IMB_MIN_WAIT_SHARE 0.05 /* excess waiting ≥ 5% of the peers' thread time */
#define IMB_MIN_WORK_RATIO 1.2  /* the slowest peer does ≥ 1.2× the others' mean work */
#define IMB_PROBLEM_SHARE 0.20  /* severity 2 from 20% of the peers' time */
#define IMB_MAX_CELLS (1u << 20) /* threads × sites table cap (8 MiB of uint64); beyond, the rule steps aside */

/* Per thread, the time in each site not counted twice under recursion (out[t * nsites +
 * site], from the thread's tree); and which sites are not work: waits (bit 1) and sites
 * that enclose a wait somewhere (bit 2). */
static int per_thread_site_ns(const jm_model *m, uint64_t *out, uint8_t *not_work)
{
    for (jager_site s = 1; s < m->nsites; s++)
        if (hunt_site_is_wait(&m->sites[s])) not_work[s] |= 1;
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const jm_tree *tr = &m->threads[t].tree;
        if (jm_tree_site_times(tr, m->nsites, out + (size_t)t * m->nsites, NULL) != 0) return -1;
        for (uint32_t i = 1; i < tr->count; i++) {
            if (tr->nodes[i].site >= m->nsites || !(not_work[tr->nodes[i].site] & 1)) continue;
            for (uint32_t p = tr->nodes[i].parent; p != JM_NONE && p != 0; p = tr->nodes[p].parent)
                if (tr->nodes[p].site < m->nsites) not_work[tr->nodes[p].site] |= 2;
        }
    }
    return 0;
}

static uint64_t thread_window(const jm_thread *t) { return t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0; }

/* The imbalance behind one wait site \p w. The peers are the threads that wait there; the
 * one that waits least is the last to arrive (the critical thread). Waiting beyond its
 * wait is what it made the others wait (its own wait is the barrier's cost and phases
 * elsewhere). The explanation is the work site (not a wait, not enclosing one) where the
 * critical thread spends the most time beyond the others' mean: a larger share of the
 * same work, or work only it does (a serial section). */
typedef struct imbalance {
    jager_site work;
    uint32_t peers;          /* threads waiting at w */
    uint32_t critical;       /* thread index waiting least */
    double critical_ns, others_mean_ns; /* time in `work` on the critical thread, on the others */
    double wait_total_ns, wait_excess_ns, peer_ns;
} imbalance;

static int best_imbalance(const jm_model *m, const uint64_t *tab, const uint8_t *not_work, jager_site w,
                          imbalance *out)
{
    imbalance b = {0};
    double min_wait = -1;
    for (uint32_t t = 0; t < m->nthreads; t++) {
        const uint64_t *row = tab + (size_t)t * m->nsites;
        if (!row[w]) continue;
        b.peers++;
        b.wait_total_ns += (double)row[w];
        b.peer_ns += (double)thread_window(&m->threads[t]);
        if (min_wait < 0 || (double)row[w] < min_wait) {
            min_wait = (double)row[w];
            b.critical = t;
        }
    }
    if (b.peers < 2 || b.peer_ns <= 0) return 0;
    b.wait_excess_ns = b.wait_total_ns - min_wait * b.peers;
    if (b.wait_excess_ns < IMB_MIN_WAIT_SHARE * b.peer_ns) return 0;
    const uint64_t *crit = tab + (size_t)b.critical * m->nsites;
    double best = 0;
    for (jager_site s = 1; s < m->nsites; s++) {
        if (!crit[s] || not_work[s]) continue;
        double others = 0;
        for (uint32_t t = 0; t < m->nthreads; t++)
            if (t != b.critical && tab[(size_t)t * m->nsites + w]) others += (double)tab[(size_t)t * m->nsites + s];
        others /= (double)(b.peers - 1);
        if (others > 0 && (double)crit[s] < IMB_MIN_WORK_RATIO * others) continue;
        double beyond = (double)crit[s] - others;
        if (beyond > best) {
            best = beyond;
            b.work = s;
            b.critical_ns = (double)crit[s];
            b.others_mean_ns = others;
        }
    }
    if (!b.work) return 0;
    *out = b;
    return 1;
}

static const char *thread_label(const jm_model *m, uint32_t t, char *buf, size_t size)
{
    const jm_thread *th = &m->threads[t];
    if (th->name && *th->name)
        snprintf(buf, size, "thread %u \"%s\" (tid %llu)", th->index, th->name, (unsigned long long)th->os_tid);
    else
        snprintf(buf, size, "thread %u (tid %llu)", th->index, (unsigned long long)th->os_tid);
    return buf;
}

/* One line per peer: how long it waited and what it did most (details of the finding). */
static void peer_details(const jm_model *m, const uint64_t *tab, const uint8_t *not_work, jager_site w,
                         hunt_list *l, hunt_finding *f)
{
    for (uint32_t t = 0; t < m->nthreads && f->ndetails < HUNT_MAX_DETAILS; t++) {
        const uint64_t *row = tab + (size_t)t * m->nsites;
        if (!row[w]) continue;
        jager_site top = 0;
        for (jager_site s = 1; s < m->nsites; s++)
            if (!not_work[s] && row[s] > row[top]) top = s;
        char who[160], a[32], b[32];
        thread_label(m, t, who, sizeof who);
        if (top)
            hunt_detail(l, f, "%s waits %s; its heaviest work: `%s` %s", who, hunt_ns(a, sizeof a, (double)row[w]),
                        m->sites[top].name, hunt_ns(b, sizeof b, (double)row[top]));
        else
            hunt_detail(l, f, "%s waits %s", who, hunt_ns(a, sizeof a, (double)row[w]));
    }
}

void hunt_rule_load_imbalance(const jm_model *m, hunt_list *l)
{
    if (m->nthreads < 2 || m->nsites < 3) return;
    if ((uint64_t)m->nthreads * m->nsites > IMB_MAX_CELLS) return;
    uint64_t *tab = calloc((size_t)m->nthreads * m->nsites, sizeof *tab);
    uint8_t *not_work = calloc(m->nsites, 1);
    if (!tab || !not_work || per_thread_site_ns(m, tab, not_work) != 0) {
        free(tab);
        free(not_work);
        l->oom = 1;
        return;
    }
    for (jager_site w = 1; w < m->nsites; w++) {
        if (!(not_work[w] & 1)) continue;
        imbalance b = {0};
        if (!best_imbalance(m, tab, not_work, w, &b)) continue;
        double share = b.wait_excess_ns / b.peer_ns;
        /* The wait's slow tail is this same time: report it once, with its cause. */
        hunt_remove(l, HUNT_SLOW_REGION, w);
        hunt_finding *f = hunt_add(l, HUNT_LOAD_IMBALANCE, share >= IMB_PROBLEM_SHARE ? 2 : 1, b.wait_excess_ns, m);
        if (!f) break;
        const jm_site *ws = &m->sites[w], *ks = &m->sites[b.work];
        hunt_at_site(f, m, b.work);
        char a[32], c[32], d[32], who[160];
        thread_label(m, b.critical, who, sizeof who);
        if (b.others_mean_ns > 0)
            f->title = hunt_fmt(l, "load imbalance: threads wait %s at `%s` (%.0f%% of their time) for %s, whose `%s` "
                                   "takes %.1fx as long as on the others (%s vs %s)",
                                hunt_ns(a, sizeof a, b.wait_excess_ns), ws->name, share * 100.0, who, ks->name,
                                b.critical_ns / b.others_mean_ns, hunt_ns(c, sizeof c, b.critical_ns),
                                hunt_ns(d, sizeof d, b.others_mean_ns));
        else
            f->title = hunt_fmt(l, "load imbalance: threads wait %s at `%s` (%.0f%% of their time) while %s runs `%s` "
                                   "alone (%s): a serial section",
                                hunt_ns(a, sizeof a, b.wait_excess_ns), ws->name, share * 100.0, who, ks->name,
                                hunt_ns(c, sizeof c, b.critical_ns));
        f->hint = b.others_mean_ns > 0
                      ? hunt_fmt(l, "The threads that reach `%s` first sit idle until the one with the most `%s` work "
                                    "arrives. Split the work by cost rather than by count (smaller chunks scheduled "
                                    "dynamically, or a partition weighted by the measured per-thread times), or give the "
                                    "waiting threads independent work before the wait. The report's timeline shows who "
                                    "arrives last.",
                                 ws->name, ks->name)
                      : hunt_fmt(l, "Only one thread runs `%s` while the others wait at `%s`: parallelise it (split it "
                                    "across the waiting threads), overlap it with their next phase, or move it off the "
                                    "critical path. The report's timeline shows the idle threads.",
                                 ks->name, ws->name);
        hunt_detail(l, f, "wait site: %s (%s:%u)", ws->name, ws->file, ws->line);
        peer_details(m, tab, not_work, w, l, f);
        hunt_ev(f, "threads", b.peers, "count");
        hunt_ev(f, "wait_total_ns", b.wait_total_ns, "ns");
        hunt_ev(f, "wait_excess_ns", b.wait_excess_ns, "ns");
        hunt_ev(f, "wait_share_pct", share * 100.0, "%");
        hunt_ev(f, "critical_thread", m->threads[b.critical].index, "");
        hunt_ev(f, "critical_work_ns", b.critical_ns, "ns");
        hunt_ev(f, "others_mean_work_ns", b.others_mean_ns, "ns");
        if (b.others_mean_ns > 0) hunt_ev(f, "work_ratio", b.critical_ns / b.others_mean_ns, "");
        hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
    }
    free(tab);
    free(not_work);
}
