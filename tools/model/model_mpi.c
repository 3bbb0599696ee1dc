/* model_mpi.c — the MPI view of a job (model_mpi.h). Field names come from the mpi table
 * of plugin_events.h; the meaning of each field is in docs/mpi.md. */
#include "model_mpi.h"

#include <stdlib.h>
#include <string.h>

#include "plugin_events.h"

/* A completed request (mpi.request), local clock until converted. */
typedef struct req {
    uint32_t part, kind;
    uint64_t start, done, bytes, comm, seq;
    int64_t dest, tag, source, recv_tag;
} req;

/* One side of a message, for the join. */
typedef struct side {
    int64_t from, to, tag;
    uint64_t comm, seq;
    uint32_t idx; /* send: index in msgs being built; recv: same */
    uint64_t t_a, t_b; /* send: start, end; recv: post, end */
    uint32_t call;
    uint32_t call2; /* send: the call that waited for it (the send, or its Wait); recv: the call that posted it */
    uint32_t part;
    uint64_t bytes;
    int blocking;
} side;

typedef struct vec {
    void *p;
    size_t n, cap, esz;
} vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t c = v->cap ? 2 * v->cap : 256;
        void *q = realloc(v->p, c * v->esz);
        if (!q) return NULL;
        v->p = q;
        v->cap = c;
    }
    void *e = (char *)v->p + v->n++ * v->esz;
    memset(e, 0, v->esz);
    return e;
}

uint32_t jm_mpi_func(const jm_mpi *m, const char *name)
{
    for (uint32_t i = 0; i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i], name)) return i;
    return UINT32_MAX;
}

static uint32_t func_id(jm_mpi *m, const char *name, int *oom)
{
    uint32_t i = jm_mpi_func(m, name);
    if (i != UINT32_MAX) return i;
    char **f = realloc(m->funcs, (m->nfuncs + 1) * sizeof *f);
    if (!f || !(f[m->nfuncs] = strdup(name))) {
        if (f) m->funcs = f;
        *oom = 1;
        return 0;
    }
    m->funcs = f;
    return m->nfuncs++;
}

int jm_mpi_is_collective(const char *f)
{
    static const char *const names[] = {"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Scan",
                                        "MPI_Exscan", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
                                        "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
                                        "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
                                        "MPI_Alltoallw", "MPI_Bcast_c", "MPI_Reduce_c", "MPI_Allreduce_c",
                                        "MPI_Gather_c", "MPI_Scatter_c", "MPI_Allgather_c", "MPI_Alltoall_c",
                                        "MPI_Scan_c", "MPI_Exscan_c", "MPI_Reduce_scatter_block_c", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(f, names[i])) return 1;
    return 0;
}

static uint64_t fv(const jager_rec_plugin *p, uint32_t nf, uint32_t idx, uint64_t def)
{
    return idx < nf ? p->fields[idx] : def;
}

static int cmp_call(const void *a, const void *b)
{
    const jm_mpi_call *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int cmp_side(const void *a, const void *b)
{
    const side *x = a, *y = b;
#define C(f) \
    if (x->f != y->f) return x->f < y->f ? -1 : 1;
    C(from) C(to) C(comm) C(tag) C(seq)
#undef C
    return 0;
}

/* The rank's clock → rank 0's: offset at Init, drifting linearly to the one at Finalize. */
typedef struct clockmap {
    int64_t off0, off1;
    uint64_t err0, err1;
    uint64_t t0, t1;
    int have0, have1;
} clockmap;

static uint64_t to_job(const clockmap *c, uint64_t t)
{
    if (!c->have0) return t;
    double off = (double)c->off0;
    if (c->have1 && c->t1 > c->t0)
        off += (double)(c->off1 - c->off0) * ((double)t - (double)c->t0) / (double)(c->t1 - c->t0);
    double v = (double)t + off;
    return v < 0 ? 0 : (uint64_t)v;
}

/* Index of the call of part p (calls sorted) whose span holds time t, preferring func prefix. */
static uint32_t call_at(const jm_mpi *m, const size_t *first, uint32_t p, uint64_t t, const char *prefix)
{
    size_t lo = first[p], hi = first[p + 1];
    while (lo < hi) { /* first call beginning after t */
        size_t mid = (lo + hi) / 2;
        if (m->calls[mid].t0 <= t) lo = mid + 1;
        else hi = mid;
    }
    /* the completion time is read inside the Wait after MPI returned, a little after the
     * call's recorded end: fall back to the nearest call that began before it */
    uint32_t nearest = UINT32_MAX;
    for (size_t i = lo; i > first[p] && lo - i < 64; i--) {
        const jm_mpi_call *c = &m->calls[i - 1];
        if (strncmp(m->funcs[c->func], prefix, strlen(prefix))) continue;
        if (c->t1 >= t) return (uint32_t)(i - 1);
        if (nearest == UINT32_MAX) nearest = (uint32_t)(i - 1);
    }
    return nearest;
}

static int read_part(jm_mpi *m, const jm_job *j, uint32_t p, vec *calls, vec *reqs, vec *rus)
{
    jager_reader *r = j->parts[p].r;
    uint16_t tc = jager_reader_type_by_name(r, jp_name(&jp_mpi, JP_MPI_CALL));
    uint16_t tq = jager_reader_type_by_name(r, jp_name(&jp_mpi, JP_MPI_REQUEST));
    uint16_t tk = jager_reader_type_by_name(r, jp_name(&jp_mpi, JP_MPI_CLOCK));
    /* rusage.thread: tid, cpu_ns, sys_ns, runq_ns, … (docs/rusage.md; model_rusage.c reads the same) */
    uint16_t tr = jager_reader_type_by_name(r, jp_name(&jp_rusage, JP_RUSAGE_THREAD));
    if (!tr) tr = UINT16_MAX;
    uint32_t fc[JP_MC_NFIELDS], fq[JP_MQ_NFIELDS], fk[JP_MK_NFIELDS];
    size_t c_from = calls->n, q_from = reqs->n;
    clockmap cm = {0};
    int oom = 0, rc;
    jager_event ev;
    jager_reader_load_tables(r);
    jager_reader_rewind(r);
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        if (ev.type < JAGER_EV_FIRST_PLUGIN || (ev.type != tc && ev.type != tq && ev.type != tk && ev.type != tr)) continue;
        const jager_rec_plugin *pr = (const jager_rec_plugin *)ev.rec;
        uint32_t nf = ev.rec->words > 2 ? ev.rec->words - 2u : 0;
        if (ev.type == tr) {
            if (nf < JP_RT_RUNQ_NS + 1) continue;
            jm_mpi_ru *u = vec_push(rus);
            if (!u) return -1;
            *u = (jm_mpi_ru){p, pr->fields[JP_RT_OS_TID], pr->time_ns, (double)pr->fields[JP_RT_RUNQ_NS],
                             (double)pr->fields[JP_RT_CPU_NS]};
            continue;
        }
        const jager_type_desc *d = jager_reader_type(r, ev.type);
        if (ev.type == tc) {
            if (!d) continue;
            for (int i = 0; i < JP_MC_NFIELDS; i++) fc[i] = jp_field_index(d, &jp_mpi, JP_MPI_CALL, i);
            const char *name = jager_reader_string(r, (uint32_t)fv(pr, nf, fc[JP_MC_FUNC], 0));
            jm_mpi_call *c = vec_push(calls);
            if (!c) return -1;
            c->part = p;
            c->local_t0 = pr->time_ns;
            c->thread = ev.thread;
            c->func = func_id(m, name ? name : "?", &oom);
            c->t0 = pr->time_ns;
            c->t1 = pr->time_ns + fv(pr, nf, fc[JP_MC_DURATION_NS], 0);
            c->bytes = fv(pr, nf, fc[JP_MC_BYTES], 0);
            c->recv_bytes = fv(pr, nf, fc[JP_MC_RECV_BYTES], 0);
            c->dest = (int64_t)fv(pr, nf, fc[JP_MC_DEST], (uint64_t)-1);
            c->tag = (int64_t)fv(pr, nf, fc[JP_MC_TAG], (uint64_t)-1);
            c->seq = fv(pr, nf, fc[JP_MC_SEQ], 0);
            c->source = (int64_t)fv(pr, nf, fc[JP_MC_SOURCE], (uint64_t)-1);
            c->recv_tag = (int64_t)fv(pr, nf, fc[JP_MC_RECV_TAG], (uint64_t)-1);
            c->recv_seq = fv(pr, nf, fc[JP_MC_RECV_SEQ], 0);
            c->root = (int64_t)fv(pr, nf, fc[JP_MC_ROOT], (uint64_t)-1);
            c->comm = fv(pr, nf, fc[JP_MC_COMM], 0);
            c->comm_size = fv(pr, nf, fc[JP_MC_COMM_SIZE], 0);
            c->caller = fv(pr, nf, fc[JP_MC_CALLER], 0);
            if (oom) return -1;
            if (name && !strcmp(name, "MPI_Init")) cm.t0 = c->t1;
            if (name && !strcmp(name, "MPI_Finalize")) cm.t1 = c->t0;
        } else if (ev.type == tq) {
            if (!d) continue;
            for (int i = 0; i < JP_MQ_NFIELDS; i++) fq[i] = jp_field_index(d, &jp_mpi, JP_MPI_REQUEST, i);
            req *q = vec_push(reqs);
            if (!q) return -1;
            q->part = p;
            q->kind = (uint32_t)fv(pr, nf, fq[JP_MQ_KIND], 0);
            q->start = pr->time_ns;
            q->done = fv(pr, nf, fq[JP_MQ_DONE], pr->time_ns);
            q->bytes = q->kind == 2 ? fv(pr, nf, fq[JP_MQ_RECV_BYTES], 0) : fv(pr, nf, fq[JP_MQ_BYTES], 0);
            q->dest = (int64_t)fv(pr, nf, fq[JP_MQ_DEST], (uint64_t)-1);
            q->tag = (int64_t)fv(pr, nf, fq[JP_MQ_TAG], (uint64_t)-1);
            q->source = (int64_t)fv(pr, nf, fq[JP_MQ_SOURCE], (uint64_t)-1);
            q->recv_tag = (int64_t)fv(pr, nf, fq[JP_MQ_RECV_TAG], (uint64_t)-1);
            q->comm = fv(pr, nf, fq[JP_MQ_COMM], 0);
            q->seq = fv(pr, nf, fq[JP_MQ_SEQ], 0);
        } else if (d) {
            for (int i = 0; i < JP_MK_NFIELDS; i++) fk[i] = jp_field_index(d, &jp_mpi, JP_MPI_CLOCK, i);
            if (!fv(pr, nf, fk[JP_MK_OK], 0)) continue;
            int64_t off = (int64_t)fv(pr, nf, fk[JP_MK_OFFSET_NS], 0);
            uint64_t err = fv(pr, nf, fk[JP_MK_ERROR_NS], 0);
            if (fv(pr, nf, fk[JP_MK_PHASE], 0) == 0) cm.off0 = off, cm.err0 = err, cm.have0 = 1;
            else cm.off1 = off, cm.err1 = err, cm.have1 = 1;
        }
    }
    jager_reader_rewind(r);
    jm_mpi_call *cw = calls->p;
    for (size_t i = c_from; i < calls->n; i++) {
        uint64_t os_tid = 0;
        if (jager_reader_thread(r, cw[i].thread, &os_tid, NULL) == JAGER_OK) cw[i].os_tid = os_tid;
    }
    jm_mpi_rank *rk = &m->ranks[p];
    rk->rank = j->parts[p].rank;
    rk->offset0 = cm.off0;
    rk->offset1 = cm.off1;
    rk->clock_known = cm.have0;
    if (!cm.have1) cm.off1 = cm.off0, cm.have1 = cm.have0;
    /* drift only where the two offsets differ by more than their error bounds: on a loaded
     * node a bad measurement would otherwise stretch or shrink the rank's whole timeline */
    int64_t dd = cm.off1 - cm.off0;
    if ((uint64_t)(dd < 0 ? -dd : dd) <= cm.err0 + cm.err1) cm.off1 = cm.off0;
    rk->use_off0 = cm.have0 ? cm.off0 : 0;
    rk->use_off1 = cm.have0 ? cm.off1 : 0;
    rk->anchor0 = cm.t0;
    rk->anchor1 = cm.t1;
    jm_mpi_call *cv = calls->p;
    uint32_t fi = jm_mpi_func(m, "MPI_Init");
    rk->start = UINT64_MAX;
    for (size_t i = c_from; i < calls->n; i++) {
        cv[i].t0 = to_job(&cm, cv[i].t0);
        cv[i].t1 = to_job(&cm, cv[i].t1);
        /* the rank's time starts when MPI_Init returned (its own duration is start-up skew) */
        uint64_t from = cv[i].func == fi ? cv[i].t1 : cv[i].t0;
        if (from < rk->start) rk->start = from;
        if (cv[i].t1 > rk->end) rk->end = cv[i].t1;
    }
    if (rk->start == UINT64_MAX) rk->start = 0;
    req *qv = reqs->p;
    for (size_t i = q_from; i < reqs->n; i++) {
        qv[i].start = to_job(&cm, qv[i].start);
        qv[i].done = to_job(&cm, qv[i].done);
    }
    return 0;
}

/* A call where a rank synchronised with a partner: it completed a message from it (the
 * receive, or the Wait of an Irecv) or its send to it (the blocking send, or the Wait of an
 * Isend). */
typedef struct syncpt {
    uint32_t part, call, partner;
} syncpt;

static int cmp_sync(const void *a, const void *b)
{
    const syncpt *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    return x->call < y->call ? -1 : x->call > y->call;
}

/* The last synchronisation of `part` with `partner` before call `before`, or UINT32_MAX. */
static uint32_t last_sync(const syncpt *v, size_t n, uint32_t part, uint32_t partner, uint32_t before)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first entry at or after (part, before) */
        size_t mid = (lo + hi) / 2;
        if (v[mid].part < part || (v[mid].part == part && v[mid].call < before)) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i > 0 && lo - i < 4096; i--) {
        const syncpt *e = &v[i - 1];
        if (e->part != part) break;
        if (e->partner == partner) return e->call;
    }
    return UINT32_MAX;
}

/* For each message, each side's last synchronisation with the other before it: the
 * interval the rules measure each side's work in (Scalasca's synchronisation interval). */
static int link_pairs(jm_mpi *m)
{
    syncpt *v = malloc((2 * m->nmsgs + 1) * sizeof *v);
    size_t n = 0;
    if (!v) return -1;
    for (size_t i = 0; i < m->nmsgs; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        if (x->recv_call != UINT32_MAX) v[n++] = (syncpt){x->recv_part, x->recv_call, x->send_part};
        if (x->send_wait_call != UINT32_MAX) v[n++] = (syncpt){x->send_part, x->send_wait_call, x->recv_part};
    }
    qsort(v, n, sizeof *v, cmp_sync);
    for (size_t i = 0; i < m->nmsgs; i++) {
        jm_mpi_msg *x = &m->msgs[i];
        uint32_t sref = x->send_call, rref = x->recv_post_call != UINT32_MAX ? x->recv_post_call : x->recv_call;
        x->send_prev = sref == UINT32_MAX ? UINT32_MAX : last_sync(v, n, x->send_part, x->recv_part, sref);
        x->recv_prev = rref == UINT32_MAX ? UINT32_MAX : last_sync(v, n, x->recv_part, x->send_part, rref);
    }
    free(v);
    return 0;
}

/* ---- clock-condition repair: a controlled logical clock (Rabenseifner's CLC, as Scalasca
 * uses it) over the job's calls in happened-before order, with backward amortisation.
 *
 * Forward: every call of a rank is moved by D, which never decreases along the rank (so
 * its own order and every duration and gap are kept) and rises only where the call
 * completes a receive that would otherwise end less than CLC_MIN_LATENCY_NS after its send
 * began: D = max(D of the rank's previous call, C(send) + latency − receive end), C(send)
 * being the send's begin as already corrected. The ranks are walked together so that a
 * receive is judged only once its sender has been corrected past the send (one pass, no
 * repeated moves: a move is never made larger than a receive needs). A cycle — two calls
 * that each send and complete the other's receive (MPI_Sendrecv pairs), or ids that do not
 * match the real order — is broken at the earliest waiting call and settled after the walk
 * (a receive still short raises its call's move and the later ones of its rank, at most 32
 * passes).
 *
 * Backward: each rise of D at call i (from lo to hi) is amortised over the rank's time
 * before it — from the previous rise (or the rank's start, the end of its MPI_Init) up to
 * the call, times move by lo + (hi − lo)·(t − a)/(from − a), a linear ramp instead of a
 * step (intervals there grow by (hi − lo)/(from − a), none shrinks). The ramp's start a is
 * raised as far as the rank's sends inside it require: none may move past
 * CLC_MIN_LATENCY_NS before its receive ended. */
#define CLC_MIN_LATENCY_NS 1000
/* Sends looked at below a rise when placing its ramp; beyond, the ramp starts at the last one seen. */
#define CLC_RAMP_SENDS 4096

typedef struct jm_mpi_step {
    uint64_t a;      /* original time the ramp starts at (== from: a plain step) */
    uint64_t from;   /* original time of the call where D rises */
    uint64_t lo, hi; /* D before and from there on */
} step;

/* The move at original time t of a part whose rises are st[0..n) (in time order). */
static uint64_t move_at(const step *st, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n; /* first rise whose ramp starts after t */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (st[mid].a <= t) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    const step *s = &st[lo - 1];
    if (t >= s->from) return s->hi;
    if (t <= s->a) return s->lo;
    return s->lo + (uint64_t)((double)(s->hi - s->lo) * (double)(t - s->a) / (double)(s->from - s->a));
}

static uint64_t shifted(const jm_mpi *m, uint32_t part, uint64_t t)
{
    if (!m->steps || part >= m->nranks) return t;
    size_t a = m->nsteps[part], b = m->nsteps[part + 1];
    return t + move_at(m->steps + a, b - a, t);
}

typedef struct send_ix {
    uint32_t part, msg;
    uint64_t t;
} send_ix;

static int cmp_send_ix(const void *a, const void *b)
{
    const send_ix *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->msg < y->msg ? -1 : x->msg > y->msg;
}

/* Index of part p's last call beginning at or before t, or SIZE_MAX. */
static size_t call_before(const jm_mpi *m, uint32_t p, uint64_t t)
{
    size_t lo = m->first[p], hi = m->first[p + 1];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->calls[mid].t0 <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo > m->first[p] ? lo - 1 : SIZE_MAX;
}

/* The call of the receiving part whose move a message's receive end takes: the call that
 * completed it, or the last one that began before it ended; SIZE_MAX none. */
static size_t recv_index(const jm_mpi *m, const jm_mpi_msg *x)
{
    return x->recv_call < m->ncalls ? x->recv_call : call_before(m, x->recv_part, x->recv_end);
}

static void repair_clocks(jm_mpi *m)
{
    size_t P = m->nranks, N = m->ncalls, M = m->nmsgs;
    uint64_t *D = calloc(N ? N : 1, sizeof *D);          /* each call's forward move */
    size_t *cur = calloc(P ? P : 1, sizeof *cur);         /* each part's next call to judge */
    send_ix *byrecv = malloc((M ? M : 1) * sizeof *byrecv); /* messages by the call that completed the receive */
    send_ix *sx = malloc((M ? M : 1) * sizeof *sx);       /* sends by (part, time) */
    step *st = malloc((N ? N : 1) * sizeof *st);
    size_t *off = calloc(P + 1, sizeof *off), nst = 0;
    uint8_t *was = calloc(M ? M : 1, 1);
    if (!D || !cur || !byrecv || !sx || !st || !off || !was) goto out;
    size_t nr = 0;
    for (size_t i = 0; i < M; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        was[i] = x->recv_end < x->send_start;
        size_t ri = recv_index(m, x);
        if (ri != SIZE_MAX) byrecv[nr++] = (send_ix){0, (uint32_t)i, ri};
        sx[i] = (send_ix){x->send_part, (uint32_t)i, x->send_start};
    }
    if (nr > 1) qsort(byrecv, nr, sizeof *byrecv, cmp_send_ix);
    if (M > 1) qsort(sx, M, sizeof *sx, cmp_send_ix);
    size_t *rfirst = calloc(N + 1, sizeof *rfirst); /* byrecv range of each call */
    if (!rfirst) goto out;
    for (size_t i = 0, c = 0; c <= N; c++) {
        while (i < nr && byrecv[i].t < c) i++;
        rfirst[c] = i;
    }
    for (size_t p = 0; p < P; p++) cur[p] = m->first[p];
    /* forward: walk the ranks together; a call waits until every send it completes a
     * receive of has its sender's move known */
    size_t left = N;
    while (left) {
        int progressed = 0;
        for (size_t p = 0; p < P; p++) {
            while (cur[p] < m->first[p + 1]) {
                size_t i = cur[p];
                uint64_t d = i > m->first[p] ? D[i - 1] : 0;
                int ready = 1;
                for (size_t k = rfirst[i]; k < rfirst[i + 1] && ready; k++) {
                    const jm_mpi_msg *x = &m->msgs[byrecv[k].msg];
                    size_t j = call_before(m, x->send_part, x->send_start);
                    if (j != SIZE_MAX && j >= cur[x->send_part] && !(x->send_part == p && j == i)) ready = 0;
                }
                if (!ready) break;
                for (size_t k = rfirst[i]; k < rfirst[i + 1]; k++) {
                    const jm_mpi_msg *x = &m->msgs[byrecv[k].msg];
                    size_t j = call_before(m, x->send_part, x->send_start);
                    uint64_t cs = x->send_start + (j == SIZE_MAX ? 0 : D[j]) + CLC_MIN_LATENCY_NS;
                    if (cs > x->recv_end && cs - x->recv_end > d) d = cs - x->recv_end;
                }
                D[i] = d;
                cur[p]++;
                left--;
                progressed = 1;
            }
        }
        if (!progressed) { /* a cycle: judge the earliest waiting call with what is known */
            size_t best = SIZE_MAX;
            for (size_t p = 0; p < P; p++)
                if (cur[p] < m->first[p + 1] && (best == SIZE_MAX || m->calls[cur[p]].t0 < m->calls[cur[best]].t0)) best = p;
            size_t i = cur[best];
            uint64_t d = i > m->first[best] ? D[i - 1] : 0;
            for (size_t k = rfirst[i]; k < rfirst[i + 1]; k++) {
                const jm_mpi_msg *x = &m->msgs[byrecv[k].msg];
                size_t j = call_before(m, x->send_part, x->send_start);
                uint64_t cs = x->send_start + (j == SIZE_MAX || j >= cur[x->send_part] ? 0 : D[j]) + CLC_MIN_LATENCY_NS;
                if (cs > x->recv_end && cs - x->recv_end > d) d = cs - x->recv_end;
            }
            D[i] = d;
            cur[best]++;
            left--;
        }
    }
    /* a call that both sends and completes a receive of its partner's (two MPI_Sendrecv)
     * is a cycle the walk broke with what it knew: settle what is left, raising a call's
     * move and every later one of its rank that is below it */
    for (int pass = 0; pass < 32; pass++) {
        int changed = 0;
        for (size_t k = 0; k < nr; k++) {
            const jm_mpi_msg *x = &m->msgs[byrecv[k].msg];
            size_t i = byrecv[k].t, j = call_before(m, x->send_part, x->send_start);
            uint64_t cs = x->send_start + (j == SIZE_MAX ? 0 : D[j]) + CLC_MIN_LATENCY_NS;
            if (cs <= x->recv_end + D[i]) continue;
            uint64_t d = cs - x->recv_end;
            for (size_t q = i; q < m->first[m->calls[i].part + 1] && D[q] < d; q++) D[q] = d;
            changed = 1;
        }
        if (!changed) break;
    }
    /* backward: a ramp before each rise, in the stretch since the previous one */
    size_t sfirst = 0;
    for (size_t p = 0; p < P; p++) {
        off[p] = nst;
        while (sfirst < M && sx[sfirst].part < p) sfirst++;
        size_t send_end = sfirst;
        while (send_end < M && sx[send_end].part == p) send_end++;
        uint64_t floor = m->ranks[p].start, prev = 0;
        for (size_t i = m->first[p]; i < m->first[p + 1]; i++) {
            if (D[i] <= prev) continue;
            uint64_t from = m->calls[i].t0, lo = prev, by = D[i] - prev, a = floor;
            if (from <= a) a = from;
            else { /* sends in [a, from): each may move by at most its slack */
                size_t b = sfirst, e = send_end;
                while (b < e) {
                    size_t mid = (b + e) / 2;
                    if (sx[mid].t < from) b = mid + 1;
                    else e = mid;
                }
                for (size_t k = b, seen = 0; k > sfirst; k--) {
                    const send_ix *s = &sx[k - 1];
                    if (s->t <= a) break; /* earlier sends cannot raise a: each bound is below its send */
                    if (++seen > CLC_RAMP_SENDS) {
                        a = s->t;
                        break;
                    }
                    const jm_mpi_msg *x = &m->msgs[s->msg];
                    if (x->recv_part == p) continue; /* to itself: its receive moves with it */
                    size_t jr = recv_index(m, x);
                    double recv = (double)x->recv_end + (double)(jr == SIZE_MAX ? 0 : D[jr]);
                    double slack = recv - CLC_MIN_LATENCY_NS - ((double)s->t + (double)lo);
                    if (slack >= (double)by) continue;
                    double t = (double)s->t;
                    double need = slack <= 0 ? t : ((double)by * t - slack * (double)from) / ((double)by - slack);
                    uint64_t na = need >= t ? s->t : (uint64_t)need + 1; /* rounded up: at most slack at the send */
                    if (na > a) a = na;
                }
                if (a > from) a = from;
            }
            st[nst++] = (step){a, from, lo, D[i]};
            prev = D[i];
            floor = from;
        }
    }
    off[P] = nst;
    m->steps = st;
    m->nsteps = off;
    st = NULL;
    off = NULL;
    for (size_t i = 0; i < N; i++) {
        jm_mpi_call *c = &m->calls[i];
        c->t0 = shifted(m, c->part, c->t0);
        c->t1 = shifted(m, c->part, c->t1);
        c->prev_end = shifted(m, c->part, c->prev_end);
    }
    for (size_t i = 0; i < M; i++) {
        jm_mpi_msg *x = &m->msgs[i];
        x->send_start = shifted(m, x->send_part, x->send_start);
        x->send_end = shifted(m, x->send_part, x->send_end);
        x->recv_post = shifted(m, x->recv_part, x->recv_post);
        x->recv_end = shifted(m, x->recv_part, x->recv_end);
        if (was[i] && x->recv_end >= x->send_start) m->clock_repaired++;
    }
    for (size_t p = 0; p < P; p++) {
        m->ranks[p].start = shifted(m, (uint32_t)p, m->ranks[p].start);
        m->ranks[p].end = shifted(m, (uint32_t)p, m->ranks[p].end);
    }
    free(rfirst);
out:
    free(D);
    free(cur);
    free(byrecv);
    free(sx);
    free(st);
    free(off);
    free(was);
}

uint64_t jm_mpi_job_time(const jm_mpi *m, uint32_t part, uint64_t t)
{
    if (part >= m->nranks) return t;
    const jm_mpi_rank *rk = &m->ranks[part];
    clockmap cm = {.off0 = rk->use_off0, .off1 = rk->use_off1, .t0 = rk->anchor0, .t1 = rk->anchor1,
                   .have0 = rk->clock_known, .have1 = rk->clock_known};
    return shifted(m, part, to_job(&cm, t));
}

double jm_mpi_free_ns(const jm_mpi *m, uint32_t from, uint32_t to)
{
    if (to == UINT32_MAX || to >= m->ncalls) return 0;
    const jm_mpi_call *b = &m->calls[to];
    if (from == UINT32_MAX || from >= m->ncalls || m->calls[from].part != b->part) {
        from = (uint32_t)m->first[b->part]; /* no earlier synchronisation: from the rank's first call, MPI_Init */
    }
    if (from >= to) return 0;
    const jm_mpi_call *a = &m->calls[from];
    double span = (double)b->t0 - (double)a->t1;
    double in_mpi = (double)b->mpi_before - (double)m->calls[from + 1].mpi_before;
    double v = span - in_mpi;
    return v > 0 ? v : 0;
}

static int cmp_ru(const void *a, const void *b)
{
    const jm_mpi_ru *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->os_tid != y->os_tid) return x->os_tid < y->os_tid ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* A thread's cumulative run-queue wait at local time t, interpolated; -1 outside its readings. */
static double runq_at(const jm_mpi *m, uint32_t part, uint64_t tid, uint64_t t)
{
    size_t lo = 0, hi = m->nru;
    jm_mpi_ru key = {part, tid, t, 0, 0};
    while (lo < hi) { /* first reading at or after (part, tid, t) */
        size_t mid = (lo + hi) / 2;
        if (cmp_ru(&m->ru[mid], &key) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= m->nru || m->ru[lo].part != part || m->ru[lo].os_tid != tid) return -1;
    const jm_mpi_ru *b = &m->ru[lo];
    if (b->t == t) return b->runq_ns;
    if (lo == 0 || m->ru[lo - 1].part != part || m->ru[lo - 1].os_tid != tid) return -1; /* before the first */
    const jm_mpi_ru *a = &m->ru[lo - 1];
    double f = (double)(t - a->t) / (double)(b->t - a->t);
    return a->runq_ns + f * (b->runq_ns - a->runq_ns);
}

double jm_mpi_work_ns(const jm_mpi *m, uint32_t from, uint32_t to, double *descheduled)
{
    double free_ns = jm_mpi_free_ns(m, from, to);
    if (descheduled) *descheduled = 0;
    if (!m->nru || free_ns <= 0 || to == UINT32_MAX || to >= m->ncalls) return free_ns;
    const jm_mpi_call *b = &m->calls[to];
    if (from == UINT32_MAX || from >= m->ncalls || m->calls[from].part != b->part) from = (uint32_t)m->first[b->part];
    if (from >= to) return free_ns;
    const jm_mpi_call *a = &m->calls[from];
    if (!b->os_tid || a->os_tid != b->os_tid) return free_ns;
    /* the stretch on the rank's own clock, from the end of call a to the start of call b,
     * less the run-queue wait inside the MPI calls between them (their wall time is out of
     * free_ns already: a rank descheduled while it polls in MPI is not late for it) */
    uint64_t t0 = a->local_t0 + (a->t1 - a->t0), t1 = b->local_t0;
    if (t1 <= t0) return free_ns;
    double q0 = runq_at(m, b->part, b->os_tid, t0), q1 = runq_at(m, b->part, b->os_tid, t1);
    if (q0 < 0 || q1 < 0) return free_ns;
    double d = q1 - q0;
    for (uint32_t i = from + 1; i < to; i++) {
        const jm_mpi_call *x = &m->calls[i];
        if (x->os_tid != b->os_tid) continue; /* another thread's call: not this thread's time */
        double x0 = runq_at(m, b->part, b->os_tid, x->local_t0), x1 = runq_at(m, b->part, b->os_tid, x->local_t0 + (x->t1 - x->t0));
        if (x0 >= 0 && x1 > x0) d -= x1 - x0;
    }
    if (d < 0) d = 0;
    if (d > free_ns) d = free_ns;
    if (descheduled) *descheduled = d;
    return free_ns - d;
}

/* Cumulative MPI time per part (mpi_before), and each rank's time in MPI. */
static void sum_mpi_time(jm_mpi *m)
{
    uint32_t fi = jm_mpi_func(m, "MPI_Init"), ff = jm_mpi_func(m, "MPI_Finalize");
    for (size_t p = 0; p < m->nranks; p++) m->ranks[p].mpi_ns = 0;
    for (size_t i = 0; i < m->ncalls; i++) {
        const jm_mpi_call *c = &m->calls[i];
        int same = i > 0 && m->calls[i - 1].part == c->part;
        m->calls[i].mpi_before = same ? m->calls[i - 1].mpi_before + (m->calls[i - 1].t1 - m->calls[i - 1].t0) : 0;
        if (c->part < m->nranks && c->func != fi && c->func != ff) m->ranks[c->part].mpi_ns += c->t1 - c->t0;
    }
}

int jm_mpi_build(const jm_job *j, jm_mpi **out)
{
    jm_mpi *m = calloc(1, sizeof *m);
    vec calls = {.esz = sizeof(jm_mpi_call)}, reqs = {.esz = sizeof(req)}, rus = {.esz = sizeof(jm_mpi_ru)};
    vec sends = {.esz = sizeof(side)}, recvs = {.esz = sizeof(side)};
    size_t *first = NULL;
    *out = NULL;
    if (!m || !(m->ranks = calloc(j->n ? j->n : 1, sizeof *m->ranks))) goto oom;
    m->nranks = j->n;
    for (uint32_t p = 0; p < j->n; p++)
        if (read_part(m, j, p, &calls, &reqs, &rus)) goto oom;
    if (calls.n && jm_mpi_read_spans(m, j)) goto oom; /* a job without MPI calls needs none */
    m->ru = rus.p;
    m->nru = rus.n;
    rus.p = NULL;
    if (m->nru > 1) qsort(m->ru, m->nru, sizeof *m->ru, cmp_ru);
    m->calls = calls.p;
    m->ncalls = calls.n;
    calls.p = NULL;
    if (m->ncalls > 1) qsort(m->calls, m->ncalls, sizeof *m->calls, cmp_call); /* qsort(NULL, 0) is UB (UBSan) */
    if (!(first = calloc(j->n + 1, sizeof *first))) goto oom;
    for (size_t i = 0, p = 0; p <= j->n; p++) {
        while (i < m->ncalls && m->calls[i].part < p) i++;
        first[p] = i;
    }
    sum_mpi_time(m);
    m->job_start = UINT64_MAX;
    uint32_t last = UINT32_MAX; /* this part's last call that can block */
    for (size_t i = 0; i < m->ncalls; i++) {
        jm_mpi_call *c = &m->calls[i];
        if (i > 0 && m->calls[i - 1].part != c->part) last = UINT32_MAX;
        /* a rank's work before a call began when its last call that could wait ended: posting
         * a request (MPI_Irecv, MPI_Isend, MPI_Start) does not interrupt it */
        c->prev = last;
        c->prev_end = last != UINT32_MAX ? m->calls[last].t1 : c->t0;
        const char *fname = m->funcs[c->func];
        int posts = (!strncmp(fname, "MPI_I", 5) && strncmp(fname, "MPI_Init", 8)) || !strncmp(fname, "MPI_Start", 9) ||
                    strstr(fname, "_init");
        if (!posts) last = (uint32_t)i;
        if (c->t0 < m->job_start) m->job_start = c->t0;
        if (c->t1 > m->job_end) m->job_end = c->t1;
        const char *f = m->funcs[c->func];
        int64_t me = j->parts[c->part].rank;
        if (c->seq > 0 && strncmp(f, "MPI_I", 5) && strncmp(f, "MPI_Start", 9)) {
            side *s = vec_push(&sends);
            if (!s) goto oom;
            *s = (side){me, c->dest, c->tag, c->comm, c->seq, 0, c->t0, c->t1, (uint32_t)i, (uint32_t)i, c->part, c->bytes, 1};
        }
        if (c->recv_seq > 0 && strcmp(f, "MPI_Mrecv")) {
            side *s = vec_push(&recvs);
            if (!s) goto oom;
            *s = (side){c->source, me, c->recv_tag, c->comm, c->recv_seq, 0, c->t0, c->t1, (uint32_t)i, (uint32_t)i,
                        c->part, c->recv_bytes, 1};
        }
    }
    if (m->job_start == UINT64_MAX) m->job_start = 0;
    for (size_t i = 0; i < reqs.n; i++) {
        const req *q = &((req *)reqs.p)[i];
        int64_t me = j->parts[q->part].rank;
        if (q->seq == 0 || (q->kind != 1 && q->kind != 2)) continue;
        side *s = vec_push(q->kind == 1 ? &sends : &recvs);
        if (!s) goto oom;
        if (q->kind == 1)
            *s = (side){me, q->dest, q->tag, q->comm, q->seq, 0, q->start, q->start,
                        call_at(m, first, q->part, q->start, "MPI_I"), call_at(m, first, q->part, q->done, "MPI_"),
                        q->part, q->bytes, 0};
        else /* the receive waited in the Wait/Test that completed it */
            *s = (side){q->source, me, q->recv_tag, q->comm, q->seq, 0, q->start, q->done,
                        call_at(m, first, q->part, q->done, "MPI_"), call_at(m, first, q->part, q->start, "MPI_I"),
                        q->part, q->bytes, 0};
    }
    if (sends.n > 1) qsort(sends.p, sends.n, sizeof(side), cmp_side); /* qsort(NULL, 0) is UB */
    if (recvs.n > 1) qsort(recvs.p, recvs.n, sizeof(side), cmp_side);
    vec msgs = {.esz = sizeof(jm_mpi_msg)};
    size_t a = 0, b = 0;
    side *sv = sends.p, *rv = recvs.p;
    while (a < sends.n && b < recvs.n) {
        int c = cmp_side(&sv[a], &rv[b]);
        if (c < 0) {
            m->unmatched_sends++;
            a++;
        } else if (c > 0) {
            m->unmatched_recvs++;
            b++;
        } else {
            jm_mpi_msg *g = vec_push(&msgs);
            if (!g) {
                free(msgs.p);
                goto oom;
            }
            *g = (jm_mpi_msg){sv[a].part, rv[b].part, sv[a].t_a, sv[a].t_b, sv[a].call, rv[b].call,
                              sv[a].call2, rv[b].call2, rv[b].t_a, rv[b].t_b, sv[a].bytes, sv[a].blocking,
                              UINT32_MAX, UINT32_MAX};
            if (g->recv_end < g->send_start) m->clock_violations++;
            a++;
            b++;
        }
    }
    m->unmatched_sends += sends.n - a;
    m->unmatched_recvs += recvs.n - b;
    m->msgs = msgs.p;
    m->nmsgs = msgs.n;
    if (link_pairs(m)) goto oom;
    m->first = first;
    first = NULL;
    if (m->clock_violations) {
        repair_clocks(m); /* counts clock_repaired */
        sum_mpi_time(m);  /* the ramps stretched some calls */
        for (size_t p = 0; p < m->nranks; p++)
            if (m->ranks[p].end > m->job_end) m->job_end = m->ranks[p].end;
    }
    free(reqs.p);
    free(sends.p);
    free(recvs.p);
    *out = m;
    return 0;
oom:
    free(first);
    free(rus.p);
    free(calls.p);
    free(reqs.p);
    free(sends.p);
    free(recvs.p);
    jm_mpi_free(m);
    return -1;
}

void jm_mpi_free(jm_mpi *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->nfuncs; i++) free(m->funcs[i]);
    free(m->funcs);
    free(m->calls);
    free(m->msgs);
    free(m->ranks);
    free(m->first);
    free(m->steps);
    free(m->nsteps);
    free(m->ru);
    for (uint32_t i = 0; i < m->nsites; i++) free(m->sites[i]);
    free(m->sites);
    free(m->spans);
    free(m->first_span);
    free(m->max_span);
    free(m);
}
