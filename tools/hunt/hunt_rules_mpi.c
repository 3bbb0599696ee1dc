/* hunt_rules_mpi.c — MPI wait states over a job (model_mpi.h), after Scalasca's patterns:
 * late_sender, late_receiver, collective_wait, and two volume rules, mpi_time and
 * small_messages. Every time compared across ranks is on the job's clock (offsets measured
 * by the plugin); messages are joined by their ids, never by clock. Thresholds and
 * reasoning: docs/hunt.md ("MPI"). */
#include <stdlib.h>
#include <string.h>

#include "hunt_priv.h"
#include "job.h"
#include "model_mpi.h"
#include "toolutil.h"

/* A wait pattern must cost this share of the job's rank time to be reported: below it,
 * scheduler noise on loaded nodes and the clock error bound dominate. */
#define MPI_WAIT_MIN_PCT 5.0
/* A late rank's computation before its late calls must be at least this share of the wait. */
#define MPI_EXPLAINED 0.25
/* A wait is systematic when the rank named late was late at least this share of the
 * exchanges (instances): a fixed imbalance makes the same rank late nearly every time.
 * Below it the wait is reported as a note (severity 0), not a problem. */
#define MPI_SYSTEMATIC 0.9
/* mpi_time: share of rank time in MPI calls (problem from MPI_TIME_PROBLEM_PCT). */
#define MPI_TIME_MIN_PCT 10.0
#define MPI_TIME_PROBLEM_PCT 30.0
/* small_messages: at least this many sends of at most SMALL_BYTES from one site to one peer. */
#define SMALL_COUNT 1000
#define SMALL_BYTES 1024

typedef struct ctx {
    const jm_mpi *mpi;
    const jm_job *job;
    const jm_model *const *models;
    hunt_list *l;
    double base; /* the job's rank time: sum over ranks of first-to-last MPI call */
} ctx;

static int64_t rank_of(const ctx *c, uint32_t part) { return c->job->parts[part].rank; }

static hunt_finding *add(ctx *c, hunt_kind kind, int severity, double cost)
{
    hunt_list *l = c->l;
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
    f->cost_ns = cost;
    f->pct_of_run = c->base > 0 ? cost / c->base * 100.0 : 0;
    if (f->pct_of_run > 100.0) f->pct_of_run = 100.0;
    f->func = "";
    f->file = "";
    return f;
}

/* "file:line (function)" of a call's caller, into buf; "" when not symbolized. */
static const char *where(const ctx *c, const jm_mpi_call *call, char *buf, size_t size)
{
    jm_frame_pick fp;
    const jm_model *m = c->models ? c->models[call->part] : NULL;
    buf[0] = 0;
    if (m && call->caller && jm_stack_pick_frame(m, (jager_stack_id)call->caller, &fp) >= 0 && fp.func &&
        strcmp(fp.func, "??")) {
        if (fp.file && *fp.file) snprintf(buf, size, "%s (%s:%u)", fp.func, fp.file, fp.line);
        else snprintf(buf, size, "%s", fp.func);
    }
    return buf;
}

/* The finding's location: the caller of the MPI call where the time was lost. */
static void locate(ctx *c, hunt_finding *f, const jm_mpi_call *call)
{
    jm_frame_pick fp;
    const jm_model *m = c->models ? c->models[call->part] : NULL;
    if (m && call->caller && jm_stack_pick_frame(m, (jager_stack_id)call->caller, &fp) >= 0 && fp.func &&
        strcmp(fp.func, "??")) {
        f->func = fp.func;
        f->file = fp.file ? fp.file : "";
        f->line = fp.line;
        return;
    }
    if ((f->owned_func = strdup(c->mpi->funcs[call->func]))) f->func = f->owned_func;
    else c->l->oom = 1;
}

/* One (waiting rank, site, rank waited for) group of a point-to-point pattern. */
typedef struct group {
    uint32_t wait_part, other_part, func;
    uint64_t caller;
    uint32_t example;      /* a call of the waiting side */
    uint32_t other_call;   /* the other side's call of the largest wait */
    double wait, max_wait, other_work; /* other_work: the late side's work in its interval (late messages) */
    uint64_t n, late;
    double delay;          /* the late side's work minus the waiting side's, same intervals (late messages) */
    double desched;        /* the late side's time off the CPU in its intervals, taken out of other_work (rusage) */
} group;

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
#define C(f) \
    if (x->f != y->f) return x->f < y->f ? -1 : 1;
    C(wait_part) C(func) C(caller) C(other_part)
#undef C
    return 0;
}

/* Sum groups with equal keys (sorted), return the new count. */
static size_t fold(group *g, size_t n)
{
    if (!n) return 0;
    qsort(g, n, sizeof *g, cmp_group);
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        if (!cmp_group(&g[w], &g[i])) {
            if (g[i].max_wait > g[w].max_wait) g[w].max_wait = g[i].max_wait, g[w].other_call = g[i].other_call;
            g[w].wait += g[i].wait;
            g[w].other_work += g[i].other_work;
            g[w].delay += g[i].delay;
            g[w].desched += g[i].desched;
            g[w].n += g[i].n;
            g[w].late += g[i].late;
        } else {
            g[++w] = g[i];
        }
    }
    return w + 1;
}

/* The share of its stretches the late rank was on a CPU (rusage plugin: time runnable but
 * off the CPU taken out), 1 without readings. Its work and the delay are CPU time then, the
 * wait is wall time: the wait is scaled to the late rank's rate of progress before the delay
 * is held against it. A rank that was merely descheduled did as much work as the waiting
 * one (delay ≈ 0) however late it came; a rank that computed more has a delay in CPU time
 * too (docs/hunt.md, "MPI wait states"). */
static double on_cpu(double work, double desched)
{
    return desched > 0 && work + desched > 0 ? work / (work + desched) : 1.0;
}

/* Whether the late rank's delay explains the wait. Without readings: the delay (wall time
 * outside MPI) is at least MPI_EXPLAINED of the wait. With them, the delay is CPU time and
 * the wait is scaled by the late rank's on-CPU share; and since wall less run-queue wait is
 * uncertain at the readings' resolution when most of a stretch was spent waiting for a CPU
 * (balanced PRK stencil runs on 2 oversubscribed cores: the two ranks' work differed by up to
 * 42 %), the delay must also be a clear part of the late rank's own work: at least
 * (1 − on-CPU share) of it, capped at a half. Nothing is explained by no delay at all. */
static int delay_explains(double delay, double wait, double work, double desched)
{
    double share = on_cpu(work, desched);
    if (delay <= 0 || delay < MPI_EXPLAINED * wait * share) return 0;
    double rel = 1.0 - share;
    if (rel > 0.5) rel = 0.5;
    return delay >= rel * work;
}

/* Name the computation that made the late rank late: its span sites' self time in the
 * stretches before its late calls (acc, summed over nlate of them), the largest first; up
 * to three that each hold at least a tenth of what the spans cover. Nothing without spans. */
static uint32_t name_work(ctx *c, hunt_finding *f, const double *acc, double nlate, const char *who)
{
    const jm_mpi *m = c->mpi;
    uint32_t top[3];
    size_t nt = 0;
    double sum = 0;
    for (uint32_t i = 0; i < m->nsites; i++)
        if (acc[i] > 0) sum += acc[i];
    if (sum <= 0 || nlate <= 0) return UINT32_MAX;
    for (size_t k = 0; k < 3; k++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < m->nsites; i++) {
            int taken = 0;
            for (size_t t = 0; t < nt; t++) taken |= top[t] == i;
            if (!taken && acc[i] >= 0.1 * sum && (best == UINT32_MAX || acc[i] > acc[best])) best = i;
        }
        if (best == UINT32_MAX) break;
        top[nt++] = best;
    }
    if (!nt) return UINT32_MAX;
    char line[1024], t[32];
    int k = 0;
    line[0] = 0;
    for (size_t i = 0; i < nt && k >= 0 && (size_t)k < sizeof line; i++)
        k += snprintf(line + k, sizeof line - (size_t)k, "%s%s %s", i ? ", " : "", m->sites[top[i]],
                      hunt_ns(t, sizeof t, acc[top[i]] / nlate));
    hunt_detail(c->l, f, "%s's computation before each late call (self time of its spans): %s", who, line);
    hunt_ev(f, "late_rank_top_site_ns", acc[top[0]] / nlate, "ns");
    return top[0];
}

/* A site's calls and time on one part, by name (site ids are per part). */
static int site_on(const ctx *c, uint32_t part, const char *name, double *calls, double *total)
{
    const jm_model *m = c->models ? c->models[part] : NULL;
    if (!m) return 0;
    for (uint32_t id = 1; id < m->nsites; id++)
        if (m->sites[id].calls && !strcmp(m->sites[id].name, name)) {
            *calls = (double)m->sites[id].calls;
            *total = (double)m->sites[id].total_ns;
            return 1;
        }
    return 0;
}

/* How the late rank's top computation differs from the other ranks': more calls (more work
 * given to it), or as many calls each taking longer — a larger share of the data in each, or
 * the same work on a slower core (balanced HPCCG under -finstrument-functions on a 2-core
 * VM: rank 0's HPC_sparsemv took 7.77 ms a call against 6.28 ms, 150 calls each). One run
 * cannot tell those two apart: the hint says so. Returns 1 when the calls are as many and
 * each slower (the hint was set), else 0. */
static int compare_work(ctx *c, hunt_finding *f, uint32_t site, uint32_t late_part, const char *fn)
{
    if (site == UINT32_MAX || !c->models) return 0;
    const char *name = c->mpi->sites[site];
    double lc = 0, lt = 0, oc = 0, ot = 0, n = 0;
    if (!site_on(c, late_part, name, &lc, &lt) || lc <= 0) return 0;
    for (uint32_t p = 0; p < c->job->n; p++) {
        double pc, pt;
        if (p == late_part || !site_on(c, p, name, &pc, &pt)) continue;
        oc += pc, ot += pt, n++;
    }
    if (n <= 0 || oc <= 0) return 0;
    oc /= n, ot /= n;
    char a[32], b[32];
    int64_t r = rank_of(c, late_part);
    if (lc > 1.05 * oc) {
        hunt_detail(c->l, f, "rank %lld called %s %.0f times, the other ranks %.0f on average: more work given to it", (long long)r,
                    name, lc, oc);
        return 0;
    }
    if (lc < 0.95 * oc || lt / lc < 1.05 * (ot / oc)) return 0;
    hunt_detail(c->l, f, "rank %lld called %s as often as the others (%.0f times) but each call took %s against %s: "
                "each call has more data, or the same work ran slower there", (long long)r, name, lc,
                hunt_ns(a, sizeof a, lt / lc), hunt_ns(b, sizeof b, ot / oc));
    f->hint = hunt_fmt(c->l, "rank %lld's %s takes longer per call with as many calls: if its share of the data is larger, "
                       "rebalance the decomposition; if the shares are equal, the rank ran slower (its core, node or "
                       "memory): rerun with the ranks placed on other cores to tell, or overlap the wait with a "
                       "non-blocking %s", (long long)r, name, fn);
    return 1;
}

/* A wait whose late rank was late at fewer than MPI_SYSTEMATIC of the exchanges: a note.
 * A fixed imbalance (more work, a bigger subdomain) makes the same rank late nearly every
 * time; lateness that comes and goes is the same work taking different times — a slower or
 * shared core, memory bandwidth, a noisy node (balanced PRK Stencil on a 2-core VM: rank 0's
 * identical step took 8–20 ms, late at 75 of 101 exchanges) — or load that moves. */
static void varying_note(ctx *c, hunt_finding *f, const char *how, int64_t rank)
{
    hunt_detail(c->l, f, "a note, not a problem: rank %lld was %s (a fixed imbalance makes the same rank late nearly "
                "every time)", (long long)rank, how);
    f->hint = hunt_fmt(c->l, "the same work took different times on the ranks, or the load moves between them: rerun to "
                       "see whether rank %lld is late again, compare its core and node, and record with "
                       "JAGER_PLUGINS=mpi,rusage to take run-queue waits out", (long long)rank);
}

/* The late side's span sites over the late messages of one group (p2p_findings). */
static void p2p_work(ctx *c, const group *x, hunt_kind kind, double *acc)
{
    const jm_mpi *m = c->mpi;
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *g = &m->msgs[i];
        uint32_t wcall = kind == HUNT_LATE_SENDER ? g->recv_call : g->send_wait_call;
        uint32_t ocall = kind == HUNT_LATE_SENDER ? g->send_call : g->recv_post_call;
        uint32_t wpart = kind == HUNT_LATE_SENDER ? g->recv_part : g->send_part;
        uint32_t opart = kind == HUNT_LATE_SENDER ? g->send_part : g->recv_part;
        uint64_t ready = kind == HUNT_LATE_SENDER ? g->send_start : g->recv_post;
        if (wcall == UINT32_MAX || ocall == UINT32_MAX || wpart != x->wait_part || opart != x->other_part) continue;
        const jm_mpi_call *wc = &m->calls[wcall];
        if (wc->func != x->func || wc->caller != x->caller || ready <= wc->t0) continue; /* not late */
        jm_mpi_work_sites(m, kind == HUNT_LATE_SENDER ? g->send_prev : g->recv_prev, ocall, acc);
    }
}

static void p2p_findings(ctx *c, group *g, size_t n, hunt_kind kind)
{
    char a[32], b[32], dl[32], site[1024];
    for (size_t i = 0; i < n; i++) {
        const group *x = &g[i];
        double pct = c->base > 0 ? x->wait / c->base * 100.0 : 0;
        /* the late rank's extra work since the two ranks last exchanged (Scalasca's delay)
         * must explain the wait; otherwise the lateness propagated from a wait elsewhere
         * (whose own finding names the rank that worked) */
        if (pct < MPI_WAIT_MIN_PCT || !x->late || !delay_explains(x->delay, x->wait, x->other_work, x->desched)) continue;
        const jm_mpi_call *wc = &c->mpi->calls[x->example];
        const jm_mpi_call *oc = &c->mpi->calls[x->other_call];
        const char *fn = c->mpi->funcs[x->func];
        int64_t me = rank_of(c, x->wait_part), other = rank_of(c, x->other_part);
        int systematic = (double)x->late >= MPI_SYSTEMATIC * (double)x->n;
        hunt_finding *f = add(c, kind, !systematic ? 0 : pct >= 10 ? 2 : 1, x->wait);
        if (!f) return;
        const char *vary = systematic ? "" : " (varying)";
        if (kind == HUNT_LATE_SENDER)
            f->title = hunt_fmt(c->l, "late sender%s: rank %lld waited %s in %s for rank %lld's messages (%llu of %llu late)",
                                vary, (long long)me, hunt_ns(a, sizeof a, x->wait), fn, (long long)other,
                                (unsigned long long)x->late, (unsigned long long)x->n);
        else
            f->title = hunt_fmt(c->l, "late receiver%s: rank %lld waited %s in %s for rank %lld to post the receive "
                                "(%llu of %llu late)", vary, (long long)me, hunt_ns(a, sizeof a, x->wait), fn,
                                (long long)other, (unsigned long long)x->late, (unsigned long long)x->n);
        locate(c, f, wc);
        hunt_ev(f, "waiting_rank", (double)me, "");
        hunt_ev(f, "late_rank", (double)other, "");
        hunt_ev(f, "wait_ns", x->wait, "ns");
        hunt_ev(f, "max_wait_ns", x->max_wait, "ns");
        hunt_ev(f, "messages", (double)x->n, "count");
        hunt_ev(f, "late_messages", (double)x->late, "count");
        hunt_ev(f, "late_rank_work_ns", x->other_work / (double)x->late, "ns");
        hunt_ev(f, "delay_ns", x->delay / (double)x->late, "ns");
        if (c->mpi->nru) hunt_ev(f, "late_rank_descheduled_ns", x->desched / (double)x->late, "ns");
        where(c, oc, site, sizeof site);
        hunt_detail(c->l, f, "rank %lld worked %s outside MPI on average since it last exchanged with rank %lld, %s more "
                    "than rank %lld (the delay) before %s%s%s", (long long)other,
                    hunt_ns(b, sizeof b, x->other_work / (double)x->late), (long long)me,
                    hunt_ns(dl, sizeof dl, x->delay / (double)x->late), (long long)me, c->mpi->funcs[oc->func],
                    *site ? " at " : "", site);
        if (c->mpi->nsites) {
            double *acc = calloc(c->mpi->nsites, sizeof *acc);
            char who[32];
            snprintf(who, sizeof who, "rank %lld", (long long)other);
            uint32_t top = UINT32_MAX;
            if (acc) p2p_work(c, x, kind, acc), top = name_work(c, f, acc, (double)x->late, who);
            else c->l->oom = 1;
            free(acc);
            if (systematic && compare_work(c, f, top, x->other_part, fn)) continue;
        }
        if (!systematic)
            varying_note(c, f, hunt_fmt(c->l, "late at only %llu of %llu", (unsigned long long)x->late,
                                        (unsigned long long)x->n), other);
        else if (kind == HUNT_LATE_SENDER)
            f->hint = hunt_fmt(c->l, "rank %lld starts its sends late: balance the work before them (or overlap: post "
                               "MPI_Irecv early and compute until the data is needed)", (long long)other);
        else
            f->hint = hunt_fmt(c->l, "rank %lld posts its receives late while rank %lld blocks in a synchronous or large "
                               "send: post MPI_Irecv earlier, or use MPI_Isend and complete it later",
                               (long long)other, (long long)me);
    }
}

/* One call's wait is counted once: a Waitall that completed several messages of a late
 * rank waited until the last of them could come, not once per message (PRK PIC on 2 ranks:
 * 6 messages per Waitall, the sum over messages was 5 × the ranks' whole MPI time). Each
 * message's wait w[i] (0 when not late) is cut to what its call had not already counted:
 * per call only the largest stays, the others count as late messages with no time. */
static void once_per_call(const jm_mpi *m, const uint32_t *call, double *w, size_t n)
{
    double *best = calloc(m->ncalls ? m->ncalls : 1, sizeof *best);
    uint32_t *who = malloc((m->ncalls ? m->ncalls : 1) * sizeof *who);
    if (!best || !who) { /* out of memory: leave the per-message sums */
        free(best);
        free(who);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (call[i] != UINT32_MAX && w[i] > best[call[i]]) best[call[i]] = w[i], who[call[i]] = (uint32_t)i;
    for (size_t i = 0; i < n; i++)
        if (call[i] != UINT32_MAX && w[i] > 0 && who[call[i]] != (uint32_t)i) w[i] = 0;
    free(best);
    free(who);
}

/* Per call: 1 when it completed a message whose send began after the call did (a late
 * sender kept it waiting). NULL on out of memory. */
static unsigned char *late_sent_calls(const jm_mpi *m)
{
    unsigned char *f = calloc(m->ncalls ? m->ncalls : 1, 1);
    if (!f) return NULL;
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        if (x->recv_call != UINT32_MAX && x->send_call != UINT32_MAX && x->send_start > m->calls[x->recv_call].t0)
            f[x->recv_call] = 1;
    }
    return f;
}

static void rule_late_sender(ctx *c)
{
    const jm_mpi *m = c->mpi;
    size_t nm = m->nmsgs ? m->nmsgs : 1;
    group *g = calloc(nm, sizeof *g);
    double *w = calloc(nm, sizeof *w);
    uint32_t *call = malloc(nm * sizeof *call);
    size_t n = 0;
    if (!g || !w || !call) {
        free(g), free(w), free(call);
        c->l->oom = 1;
        return;
    }
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        call[i] = UINT32_MAX;
        if (x->recv_call == UINT32_MAX || x->send_call == UINT32_MAX) continue;
        const jm_mpi_call *rc = &m->calls[x->recv_call];
        /* the receiver blocked from rc->t0; the message could not come before the send began */
        if (x->send_start > rc->t0) w[i] = (double)((x->send_start < rc->t1 ? x->send_start : rc->t1) - rc->t0);
        call[i] = x->recv_call;
    }
    once_per_call(m, call, w, m->nmsgs);
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        if (call[i] == UINT32_MAX) continue;
        const jm_mpi_call *rc = &m->calls[x->recv_call];
        int late = x->send_start > rc->t0;
        double dq = 0;
        double late_free = late ? jm_mpi_work_ns(m, x->send_prev, x->send_call, &dq) : 0;
        double wait_free = late ? jm_mpi_work_ns(m, x->recv_prev, x->recv_call, NULL) : 0;
        g[n++] = (group){x->recv_part, x->send_part, rc->func, rc->caller, x->recv_call, x->send_call,
                         w[i], w[i], late_free, 1, (uint64_t)late, late_free - wait_free, dq};
    }
    n = fold(g, n);
    p2p_findings(c, g, n, HUNT_LATE_SENDER);
    free(g), free(w), free(call);
}

static void rule_late_receiver(ctx *c)
{
    const jm_mpi *m = c->mpi;
    size_t nm = m->nmsgs ? m->nmsgs : 1;
    group *g = calloc(nm, sizeof *g);
    double *w = calloc(nm, sizeof *w);
    uint32_t *call = malloc(nm * sizeof *call);
    unsigned char *ls = late_sent_calls(m);
    size_t n = 0;
    if (!g || !w || !call || !ls) {
        free(g), free(w), free(call), free(ls);
        c->l->oom = 1;
        return;
    }
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        call[i] = UINT32_MAX;
        /* the sender blocked in its send (or in the Wait of its Isend: a message too large to
         * go eagerly) until the receive was posted */
        if (x->send_wait_call == UINT32_MAX || x->recv_post_call == UINT32_MAX) continue;
        /* a Wait that also completed a message from a late sender waited for that message
         * (late_sender names it): its Isends are not why it waited (an eager send completes
         * at once; PRK PIC's Waitall of 8-byte counts was reported both ways) */
        if (ls[x->send_wait_call]) continue; /* also MPI_Sendrecv, whose receive half waited */
        const jm_mpi_call *sc = &m->calls[x->send_wait_call];
        /* it waited for the receive only if it was still in the call when the receive was
         * posted: a send that returned before (eager, buffered) did not wait for it (PRK
         * p2p's 8-byte MPI_Send: 100,723 of 100,899 "late", each its own few µs) */
        if (x->recv_post > sc->t0 && x->recv_post <= sc->t1) w[i] = (double)(x->recv_post - sc->t0);
        call[i] = x->send_wait_call;
    }
    once_per_call(m, call, w, m->nmsgs);
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        if (call[i] == UINT32_MAX) continue;
        const jm_mpi_call *sc = &m->calls[x->send_wait_call];
        int late = x->recv_post > sc->t0 && x->recv_post <= sc->t1;
        double dq = 0;
        double late_free = late ? jm_mpi_work_ns(m, x->recv_prev, x->recv_post_call, &dq) : 0;
        double wait_free = late ? jm_mpi_work_ns(m, x->send_prev, x->send_wait_call, NULL) : 0;
        g[n++] = (group){x->send_part, x->recv_part, sc->func, sc->caller, x->send_wait_call, x->recv_post_call,
                         w[i], w[i], late_free, 1, (uint64_t)late, late_free - wait_free, dq};
    }
    n = fold(g, n);
    p2p_findings(c, g, n, HUNT_LATE_RECEIVER);
    free(g), free(w), free(call), free(ls);
}

/* When the last rank left MPI_Init (job clock; 0 without Init calls). Start-up is not the
 * program's MPI time nor a wait state: ranks leave MPI_Init at different times (the launcher
 * starts them one by one), and the first collective waits for the last one. */
static uint64_t job_started(const jm_mpi *m)
{
    uint32_t fi = jm_mpi_func(m, "MPI_Init"), fit = jm_mpi_func(m, "MPI_Init_thread");
    uint64_t started = 0;
    for (size_t i = 0; i < m->ncalls; i++)
        if ((m->calls[i].func == fi || m->calls[i].func == fit) && m->calls[i].t1 > started) started = m->calls[i].t1;
    return started;
}

/* ---- collectives: the k-th collective on a communicator of every member ---- */
typedef struct inst {
    uint64_t comm, k;
    uint32_t call;
    uint32_t prev; /* this rank's previous collective on the communicator, UINT32_MAX none */
} inst;

static int cmp_inst(const void *a, const void *b)
{
    const inst *x = a, *y = b;
    if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->call < y->call ? -1 : x->call > y->call;
}

typedef struct coll {
    uint64_t comm, caller; /* caller: of the first member's call (its part's stack id) */
    uint32_t func;
    uint32_t example;      /* a waiting rank's call */
    double wait, max_wait, late_work, other_work;
    double late_desched;   /* the last rank's time off the CPU in its stretches (rusage), late instances */
    double skew;           /* wait not counted: the last rank left the previous instance that much later */
    uint32_t *lasts;       /* per late instance: the last rank's previous collective here and its call */
    size_t nlasts, caplasts;
    uint64_t n, ninst_late;
    uint32_t *last_count;  /* per part: times it arrived last */
    double *last_wait;     /* per part: the others' wait in the instances it arrived last */
} coll;

static void rule_collective_wait(ctx *c)
{
    const jm_mpi *m = c->mpi;
    size_t P = c->job->n, ni = 0, nc = 0;
    if (P < 2) return;
    uint64_t started = job_started(m);
    inst *v = calloc(m->ncalls ? m->ncalls : 1, sizeof *v);
    coll *cs = calloc(64, sizeof *cs);
    size_t ccap = 64;
    if (!v || !cs) goto oom;
    /* number each part's collectives per communicator (calls are by part, then time) */
    uint64_t *cm = NULL;
    size_t ncm = 0;
    uint32_t part = UINT32_MAX;
    for (size_t i = 0; i < m->ncalls; i++) {
        const jm_mpi_call *x = &m->calls[i];
        if (!jm_mpi_is_collective(m->funcs[x->func]) || x->comm_size < 2) continue;
        if (x->part != part) ncm = 0, part = x->part; /* a new part: counters restart */
        size_t j = 0;
        while (j < ncm && cm[2 * j] != x->comm) j++;
        if (j == ncm) {
            uint64_t *t = realloc(cm, (ncm + 1) * 2 * sizeof *t);
            if (!t) {
                free(cm);
                goto oom;
            }
            cm = t;
            cm[2 * ncm] = x->comm;
            cm[2 * ncm + 1] = 0;
            ncm++;
        }
        /* the count's high bits keep the previous call: k < 2^32 collectives per comm */
        uint64_t k = (cm[2 * j + 1] & 0xffffffffu) + 1, prevc = cm[2 * j + 1] >> 32;
        v[ni++] = (inst){x->comm, k, (uint32_t)i, k > 1 ? (uint32_t)(prevc - 1) : UINT32_MAX};
        cm[2 * j + 1] = k | ((uint64_t)(i + 1) << 32);
    }
    free(cm);
    qsort(v, ni, sizeof *v, cmp_inst);
    for (size_t a = 0; a < ni;) {
        size_t b = a;
        while (b < ni && v[b].comm == v[a].comm && v[b].k == v[a].k) b++;
        const jm_mpi_call *first = &m->calls[v[a].call];
        int same = 1;
        for (size_t i = a; i < b; i++) same &= m->calls[v[i].call].func == first->func;
        int after_init = 1; /* an instance a rank entered before the last rank left MPI_Init waited for the launcher */
        for (size_t i = a; i < b; i++) after_init &= m->calls[v[i].call].t0 >= started;
        if (same && after_init && b - a == first->comm_size) { /* every member is in the job */
            uint32_t last = v[a].call;
            for (size_t i = a; i < b; i++)
                if (m->calls[v[i].call].t0 > m->calls[last].t0) last = v[i].call;
            const jm_mpi_call *lc = &m->calls[last];
            double w = 0, ow = 0, lw = 0, lq = 0, cut = 0, best_wi = 0;
            uint32_t example = UINT32_MAX, last_prev = UINT32_MAX;
            for (size_t i = a; i < b; i++)
                if (v[i].call == last) last_prev = v[i].prev;
            for (size_t i = a; i < b; i++) {
                const jm_mpi_call *x = &m->calls[v[i].call];
                /* each rank's work since its previous collective on this communicator */
                double dq = 0;
                double free_i = jm_mpi_work_ns(m, v[i].prev, v[i].call, &dq);
                if (v[i].call == last) {
                    lw = free_i;
                    lq = dq;
                    continue;
                }
                double wi = (double)((lc->t0 < x->t1 ? lc->t0 : x->t1) - x->t0);
                if (lc->t0 <= x->t0) wi = 0;
                /* The part of the wait by which the last rank left the previous instance after
                 * this one is that collective's own completion order (a rooted one releases
                 * ranks at different times: PRK Reduce's sender left 0.18 ms after the root,
                 * worked 0.08 ms more, and the root "waited" 0.26 ms per call), not work:
                 * it is not counted. */
                if (last_prev != UINT32_MAX && v[i].prev != UINT32_MAX && m->calls[last_prev].t1 > m->calls[v[i].prev].t1) {
                    double s = (double)(m->calls[last_prev].t1 - m->calls[v[i].prev].t1);
                    s = s < wi ? s : wi;
                    wi -= s;
                    cut += s;
                }
                w += wi;
                ow += free_i;
                if (example == UINT32_MAX || wi > best_wi) example = v[i].call, best_wi = wi;
            }
            size_t ci = 0;
            /* one group per call site: the caller of the first member's call (calls are by
             * part, so always the same part's) — HPCCG's Allreduce in ddot() is not its
             * set-up's in make_local_matrix() */
            while (ci < nc && !(cs[ci].comm == first->comm && cs[ci].func == first->func && cs[ci].caller == first->caller))
                ci++;
            if (ci == nc) {
                if (nc == ccap) {
                    coll *t = realloc(cs, 2 * ccap * sizeof *t);
                    if (!t) goto oom;
                    cs = t;
                    ccap *= 2;
                }
                memset(&cs[nc], 0, sizeof cs[nc]);
                cs[nc].comm = first->comm;
                cs[nc].func = first->func;
                cs[nc].caller = first->caller;
                cs[nc].example = example;
                if (!(cs[nc].last_count = calloc(P, sizeof(uint32_t))) || !(cs[nc].last_wait = calloc(P, sizeof(double))))
                    goto oom;
                nc++;
            }
            coll *x = &cs[ci];
            x->wait += w;
            x->skew += cut;
            if (best_wi > x->max_wait) x->max_wait = best_wi, x->example = example; /* shown: the longest wait's call */
            x->n++;
            if (w > 0) {
                x->ninst_late++;
                x->late_work += lw;
                x->late_desched += lq;
                x->other_work += b - a > 1 ? ow / (double)(b - a - 1) : 0;
                x->last_count[lc->part]++;
                x->last_wait[lc->part] += w;
                if (m->nsites) { /* kept to name the late rank's computation */
                    if (x->nlasts == x->caplasts) {
                        size_t cap = x->caplasts ? 2 * x->caplasts : 16;
                        uint32_t *t = realloc(x->lasts, cap * 2 * sizeof *t);
                        if (!t) goto oom;
                        x->lasts = t;
                        x->caplasts = cap;
                    }
                    x->lasts[2 * x->nlasts] = last_prev;
                    x->lasts[2 * x->nlasts + 1] = last;
                    x->nlasts++;
                }
            }
        }
        a = b;
    }
    char t1[32], t2[32], t3[32];
    for (size_t i = 0; i < nc; i++) {
        coll *x = &cs[i];
        double pct = c->base > 0 ? x->wait / c->base * 100.0 : 0;
        if (pct < MPI_WAIT_MIN_PCT || !x->ninst_late) continue;
        /* the last rank's extra work must explain the wait (else the lateness propagated
         * from a wait elsewhere, which its own finding names) */
        double per_wait = x->wait / (double)x->ninst_late / (double)(P > 1 ? P - 1 : 1);
        double nl = (double)x->ninst_late;
        double delay = (x->late_work - x->other_work) / nl;
        if (!delay_explains(delay, per_wait, x->late_work / nl, x->late_desched / nl)) continue;
        uint32_t lp = 0;
        for (uint32_t p = 1; p < P; p++)
            if (x->last_wait[p] > x->last_wait[lp]) lp = p;
        /* by wait, not by count: an instance where nobody waited (a final barrier) is no
         * evidence either way */
        int systematic = x->last_wait[lp] >= MPI_SYSTEMATIC * x->wait;
        hunt_finding *f = add(c, HUNT_COLLECTIVE_WAIT, !systematic ? 0 : pct >= 10 ? 2 : 1, x->wait);
        if (!f) break;
        const char *fn = m->funcs[x->func];
        f->title = hunt_fmt(c->l, "collective wait%s: ranks waited %s in %s for the last rank to arrive (mostly rank %lld, "
                            "last in %u of %llu)", systematic ? "" : " (varying)", hunt_ns(t1, sizeof t1, x->wait), fn,
                            (long long)rank_of(c, lp), x->last_count[lp], (unsigned long long)x->n);
        if (x->example != UINT32_MAX) locate(c, f, &m->calls[x->example]);
        hunt_ev(f, "wait_ns", x->wait, "ns");
        hunt_ev(f, "late_rank", (double)rank_of(c, lp), "");
        hunt_ev(f, "instances", (double)x->n, "count");
        hunt_ev(f, "late_instances", (double)x->ninst_late, "count");
        hunt_ev(f, "comm", (double)x->comm, "");
        hunt_ev(f, "late_rank_work_ns", x->late_work / (double)x->ninst_late, "ns");
        hunt_ev(f, "others_work_ns", x->other_work / (double)x->ninst_late, "ns");
        hunt_ev(f, "exit_skew_ns", x->skew, "ns");
        if (x->skew > 0)
            hunt_detail(c->l, f, "not counted: %s more the others waited because the last rank left the previous "
                        "collective here later than they did (its completion order, not work)", hunt_ns(t2, sizeof t2, x->skew));
        hunt_detail(c->l, f, "the last rank worked %s outside MPI on average since the previous collective here, the others %s "
                    "(imbalance %s per %s)", hunt_ns(t2, sizeof t2, x->late_work / (double)x->ninst_late),
                    hunt_ns(t3, sizeof t3, x->other_work / (double)x->ninst_late),
                    hunt_ns(t1, sizeof t1, (x->late_work - x->other_work) / (double)x->ninst_late), fn);
        uint32_t top = UINT32_MAX;
        if (x->nlasts) { /* the instances where the rank named late was last */
            double *acc = calloc(m->nsites, sizeof *acc), nk = 0;
            char who[32];
            if (!acc) goto oom;
            for (size_t k = 0; k < x->nlasts; k++)
                if (m->calls[x->lasts[2 * k + 1]].part == lp)
                    jm_mpi_work_sites(m, x->lasts[2 * k], x->lasts[2 * k + 1], acc), nk++;
            snprintf(who, sizeof who, "rank %lld", (long long)rank_of(c, lp));
            top = name_work(c, f, acc, nk, who);
            free(acc);
        }
        if (systematic && compare_work(c, f, top, lp, fn)) continue;
        if (!systematic) {
            varying_note(c, f, hunt_fmt(c->l, "last in instances holding only %.0f%% of the wait",
                                        x->wait > 0 ? x->last_wait[lp] / x->wait * 100.0 : 0), rank_of(c, lp));
            continue;
        }
        f->hint = hunt_fmt(c->l, "the work before %s is imbalanced across ranks: rebalance the decomposition (rank %lld "
                           "has the most), or overlap with a non-blocking collective", fn, (long long)rank_of(c, lp));
    }
    for (size_t i = 0; i < nc; i++) free(cs[i].last_count), free(cs[i].last_wait), free(cs[i].lasts);
    free(cs);
    free(v);
    return;
oom:
    c->l->oom = 1;
    for (size_t i = 0; cs && i < nc; i++) free(cs[i].last_count), free(cs[i].last_wait), free(cs[i].lasts);
    free(cs);
    free(v);
}

static void rule_mpi_time(ctx *c)
{
    const jm_mpi *m = c->mpi;
    double total = 0, *by_fn = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *by_fn), by_size[3] = {0};
    if (!by_fn) {
        c->l->oom = 1;
        return;
    }
    uint32_t fi = jm_mpi_func(m, "MPI_Init"), ff = jm_mpi_func(m, "MPI_Finalize"), fit = jm_mpi_func(m, "MPI_Init_thread");
    uint64_t started = job_started(m);
    for (size_t i = 0; i < m->ncalls; i++) {
        const jm_mpi_call *x = &m->calls[i];
        if (x->func == fi || x->func == fit || x->func == ff || x->t1 <= started) continue;
        double d = (double)(x->t1 - (x->t0 > started ? x->t0 : started));
        uint64_t bytes = x->bytes > x->recv_bytes ? x->bytes : x->recv_bytes;
        total += d;
        by_fn[x->func] += d;
        by_size[bytes <= 1024 ? 0 : bytes <= 65536 ? 1 : 2] += d;
    }
    double pct = c->base > 0 ? total / c->base * 100.0 : 0;
    if (pct >= MPI_TIME_MIN_PCT) {
        char a[32];
        hunt_finding *f = add(c, HUNT_MPI_TIME, pct >= MPI_TIME_PROBLEM_PCT ? 2 : 1, total);
        if (f) {
            f->title = hunt_fmt(c->l, "%.0f%% of the job's rank time is inside MPI (%s over %zu ranks)", pct,
                                hunt_ns(a, sizeof a, total), c->job->n);
            hunt_ev(f, "mpi_ns", total, "ns");
            hunt_ev(f, "mpi_pct", pct, "%");
            hunt_ev(f, "ranks", (double)c->job->n, "count");
            hunt_ev(f, "small_msg_ns", by_size[0], "ns");
            hunt_ev(f, "medium_msg_ns", by_size[1], "ns");
            hunt_ev(f, "large_msg_ns", by_size[2], "ns");
            for (int shown = 0; shown < 5; shown++) { /* the top functions */
                uint32_t best = UINT32_MAX;
                for (uint32_t i = 0; i < m->nfuncs; i++)
                    if (by_fn[i] > 0 && (best == UINT32_MAX || by_fn[i] > by_fn[best])) best = i;
                if (best == UINT32_MAX) break;
                hunt_detail(c->l, f, "%s: %s (%.1f%% of the MPI time)", m->funcs[best], hunt_ns(a, sizeof a, by_fn[best]),
                            total > 0 ? by_fn[best] / total * 100 : 0);
                by_fn[best] = 0;
            }
            hunt_detail(c->l, f, "by message size: <=1 KiB %s, <=64 KiB %s, larger %s", hunt_ns(a, sizeof a, by_size[0]),
                        hunt_ns((char[32]){0}, 32, by_size[1]), hunt_ns((char[32]){0}, 32, by_size[2]));
            f->hint = hunt_fmt(c->l, "see the late_sender, late_receiver and collective_wait findings for the part "
                               "that is waiting; the rest is communication volume (fewer, larger messages; overlap)");
        }
    }
    free(by_fn);
}

static void rule_small_messages(ctx *c)
{
    const jm_mpi *m = c->mpi;
    group *g = calloc(m->nmsgs ? m->nmsgs : 1, sizeof *g);
    size_t n = 0;
    if (!g) {
        c->l->oom = 1;
        return;
    }
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        if (x->bytes > SMALL_BYTES || x->send_call == UINT32_MAX) continue;
        const jm_mpi_call *sc = &m->calls[x->send_call];
        double cost = (double)(sc->t1 - sc->t0);
        if (x->recv_call != UINT32_MAX) {
            const jm_mpi_call *rc = &m->calls[x->recv_call];
            /* the receive's own cost, without the time it waited for a late sender */
            uint64_t from = x->send_start > rc->t0 ? (x->send_start < rc->t1 ? x->send_start : rc->t1) : rc->t0;
            cost += (double)(rc->t1 - from);
        }
        g[n++] = (group){x->send_part, x->recv_part, sc->func, sc->caller, x->send_call, x->recv_call,
                         cost, cost, (double)x->bytes, 1, 1, 0, 0};
    }
    n = fold(g, n);
    char a[32], b[32];
    for (size_t i = 0; i < n; i++) {
        const group *x = &g[i];
        if (x->n < SMALL_COUNT) continue;
        hunt_finding *f = add(c, HUNT_SMALL_MESSAGES, 1, x->wait);
        if (!f) break;
        f->title = hunt_fmt(c->l, "small messages: rank %lld sent %llu messages of %s on average to rank %lld from "
                            "one site (%s in send and receive calls)", (long long)rank_of(c, x->wait_part),
                            (unsigned long long)x->n, tu_fmt_bytes(b, sizeof b, x->other_work / (double)x->n),
                            (long long)rank_of(c, x->other_part), hunt_ns(a, sizeof a, x->wait));
        locate(c, f, &m->calls[x->example]);
        hunt_ev(f, "messages", (double)x->n, "count");
        hunt_ev(f, "mean_bytes", x->other_work / (double)x->n, "bytes");
        hunt_ev(f, "per_message_ns", x->wait / (double)x->n, "ns");
        hunt_ev(f, "rank", (double)rank_of(c, x->wait_part), "");
        hunt_ev(f, "peer", (double)rank_of(c, x->other_part), "");
        f->hint = hunt_fmt(c->l, "each message pays MPI's latency: pack what goes to one peer into fewer, larger "
                           "messages (a buffer, a derived datatype, or one message per exchange phase)");
    }
    free(g);
}

/* A warning about the job itself, first in the list: ranks with no recording in it (the
 * job file names them: they did not reach MPI_Finalize with recording on) and ranks whose
 * recording ends without its END block (the process was killed or crashed: what was
 * written up to then is used). Its cost is 0: it is about what the findings can see. */
static void rule_job_incomplete(ctx *c)
{
    const jm_job *j = c->job;
    size_t cut = 0;
    char list[256], cutl[256];
    size_t o = 0, oc = 0;
    list[0] = cutl[0] = '\0';
    for (size_t i = 0; i < j->nmissing && o + 16 < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%u", i ? ", " : "", j->missing[i]);
    for (size_t p = 0; p < j->n; p++) {
        const jm_model *m = c->models ? c->models[p] : NULL;
        if (!m || (m->info.clean_end && !m->info.truncated)) continue;
        if (oc + 24 < sizeof cutl)
            oc += (size_t)snprintf(cutl + oc, sizeof cutl - oc, "%s%lld", cut ? ", " : "", (long long)rank_of(c, (uint32_t)p));
        cut++;
    }
    if (!j->nmissing && !cut) return;
    hunt_finding *f = add(c, HUNT_JOB_INCOMPLETE, 1, 0);
    if (!f) return;
    f->pct_of_run = 0;
    if (j->nmissing && cut)
        f->title = hunt_fmt(c->l, "job incomplete: rank(s) %s missing from the job, and the recording of rank(s) %s "
                            "cut short (killed or crashed)", list, cutl);
    else if (j->nmissing)
        f->title = hunt_fmt(c->l, "job incomplete: rank(s) %s of %lld missing (no recording of them in the job: they "
                            "did not reach MPI_Finalize with recording on)", list, (long long)j->world_size);
    else
        f->title = hunt_fmt(c->l, "job incomplete: the recording of rank(s) %s is cut short (killed or crashed "
                            "before MPI_Finalize): its findings cover what it wrote until then", cutl);
    hunt_ev(f, "missing_ranks", (double)j->nmissing, "count");
    hunt_ev(f, "cut_short_ranks", (double)cut, "count");
    if (j->nmissing) hunt_ev(f, "first_missing_rank", (double)j->missing[0], "");
    hunt_ev(f, "ranks", (double)j->n, "count");
    f->hint = hunt_fmt(c->l, "wait states with a missing rank are not seen; a rank's own file (OUTPUT.<rank>) keeps "
                       "what it recorded before it died: `jager merge JOB.jgr OUTPUT.<rank> -o all.jgr` adds it");
}

/* Time of part's MPI calls made directly by the function named \p func (their caller's frame). */
static double mpi_time_in(const jm_mpi *mpi, uint32_t part, const jm_model *m, const char *func)
{
    double t = 0;
    uint64_t seen = 0, hit = 0; /* the last caller stack looked up, and whether it matched */
    for (size_t i = 0; i < mpi->ncalls; i++) {
        const jm_mpi_call *x = &mpi->calls[i];
        if (x->part != part || !x->caller) continue;
        if (x->caller != seen) {
            jm_frame_pick fp;
            seen = x->caller;
            hit = jm_stack_pick_frame(m, (jager_stack_id)x->caller, &fp) >= 0 && fp.func && !strcmp(fp.func, func);
        }
        if (hit) t += (double)(x->t1 - x->t0);
    }
    return t;
}

size_t hunt_mpi_filter_part(const jm_mpi *mpi, uint32_t part, const jm_model *m, hunt_finding *f, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        /* HPCCG's ddot() and exchange_externals() on a rank: "slow calls" that were their
         * MPI_Allreduce and MPI_Send waiting for the other rank (collective_wait names it) */
        int waits = mpi && m && f[i].kind == HUNT_SLOW_REGION && f[i].cost_ns > 0 && f[i].func && *f[i].func &&
                    mpi_time_in(mpi, part, m, f[i].func) >= 0.5 * f[i].cost_ns;
        if (waits) hunt_finding_free(&f[i]);
        else f[k++] = f[i];
    }
    return k;
}

int hunt_run_mpi(const jm_mpi *mpi, const jm_job *job, const jm_model *const *models, const hunt_options *o,
                 hunt_finding **out, size_t *n)
{
    hunt_options def;
    if (!o) {
        hunt_options_default(&def);
        o = &def;
    }
    if (!mpi || (!mpi->ncalls && !job->nmissing)) return 0;
    hunt_list l = {*out, *n, *n, 0};
    ctx c = {mpi, job, models, &l, 0};
    size_t first = l.n;
    if (job->n > 1 || job->nmissing) rule_job_incomplete(&c);
    size_t kept = l.n; /* never dropped by min_pct */
    if (!mpi->ncalls) goto ranked;
    for (size_t i = 0; i < mpi->nranks; i++)
        if (mpi->ranks[i].end > mpi->ranks[i].start) c.base += (double)(mpi->ranks[i].end - mpi->ranks[i].start);
    size_t from = l.n;
    rule_late_sender(&c);
    rule_late_receiver(&c);
    rule_collective_wait(&c);
    rule_mpi_time(&c);
    rule_small_messages(&c);
    for (size_t i = from; i < l.n; i++)
        if (!l.items[i].title || !l.items[i].hint) l.oom = 1;
    size_t k = from;
    for (size_t i = from; i < l.n; i++) { /* min_pct as for the other rules */
        hunt_finding *f = &l.items[i];
        if (!l.oom && f->pct_of_run >= o->min_pct) l.items[k++] = *f;
        else hunt_finding_free(f);
    }
    l.n = k;
ranked:
    for (size_t i = first; i < kept && i < l.n; i++)
        if (!l.items[i].title || !l.items[i].hint) l.oom = 1;
    *out = l.items;
    *n = l.n;
    hunt_rank_list(l.items, l.n);
    return l.oom ? -1 : 0;
}
