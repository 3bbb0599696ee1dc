/* model_rusage.c — what each region cost the machine, from the rusage plugin's readings:
 * every few ms the plugin reads each thread's cumulative CPU time, system time, run-queue
 * wait, page faults and context switches (rusage.thread). A span's share is the difference
 * of those counters at its start and end, each interpolated linearly between the two readings
 * around it; spans outside the readings are not counted. Summed per site, inclusive and self
 * (a span's own minus what its covered children took).
 *
 * The readings come from another thread than the spans, so they arrive in the file after
 * the spans they cover: this is a second pass over the file, made only when it has
 * rusage.thread events. */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "plugin_events.h"

typedef struct reading {
    uint64_t t;
    double v[JM_RU_NVALUES];
} reading;

typedef struct series {
    uint64_t os_tid;
    reading *r;
    size_t n, cap;
} series;

typedef struct open_child { /* children's inclusive sums, waiting for their parent's end */
    double v[JM_RU_NVALUES];
    double wall;
} open_child;

typedef struct pass {
    series *s;
    size_t ns;
    series **by_thread; /* thread index → series (NULL: none) */
    uint32_t nthreads;
    jm_pool open; /* open_child records, keyed by (thread, span id) */
} pass;

static series *series_of(pass *p, uint64_t tid)
{
    for (size_t i = 0; i < p->ns; i++)
        if (p->s[i].os_tid == tid) return &p->s[i];
    series *n = realloc(p->s, (p->ns + 1) * sizeof *n);
    if (!n) return NULL;
    p->s = n;
    memset(&p->s[p->ns], 0, sizeof p->s[0]);
    p->s[p->ns].os_tid = tid;
    return &p->s[p->ns++];
}

static int add_reading(pass *p, const jager_event *ev)
{
    const jager_rec_plugin *r = (const jager_rec_plugin *)ev->rec;
    if ((size_t)ev->rec->words * 8u < sizeof *r + JP_RT_NFIELDS * 8u) return 0;
    series *s = series_of(p, r->fields[JP_RT_OS_TID]);
    if (!s) return -1;
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 256;
        reading *n = realloc(s->r, c * sizeof *n);
        if (!n) return -1;
        s->r = n;
        s->cap = c;
    }
    reading *d = &s->r[s->n];
    d->t = ev->time_ns;
    d->v[JM_RU_CPU] = (double)r->fields[JP_RT_CPU_NS];
    d->v[JM_RU_SYS] = (double)r->fields[JP_RT_SYS_NS];
    d->v[JM_RU_RUNQ] = (double)r->fields[JP_RT_RUNQ_NS];
    d->v[JM_RU_MINFLT] = (double)r->fields[JP_RT_MINFLT];
    d->v[JM_RU_MAJFLT] = (double)r->fields[JP_RT_MAJFLT];
    d->v[JM_RU_IVCSW] = (double)r->fields[JP_RT_IVCSW];
    /* readings of one thread come in order from one plugin thread; keep them sorted anyway */
    if (s->n && s->r[s->n - 1].t > d->t) return 0;
    s->n++;
    return 0;
}

/* The counters at time t (interpolated); 0 when t is outside the readings. */
static int at(const series *s, uint64_t t, double *out)
{
    if (s->n < 2 || t < s->r[0].t || t > s->r[s->n - 1].t) return 0;
    size_t lo = 0, hi = s->n - 1; /* r[lo].t <= t <= r[hi].t */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->r[mid].t <= t) lo = mid;
        else hi = mid;
    }
    const reading *a = &s->r[lo], *b = &s->r[hi];
    double f = b->t > a->t ? (double)(t - a->t) / (double)(b->t - a->t) : 0;
    for (int k = 0; k < JM_RU_NVALUES; k++) out[k] = a->v[k] + f * (b->v[k] - a->v[k]);
    return 1;
}

/* A span or span_x (model.h). A span of a task that moved between threads (span_x begun on
 * another thread) ran on more than one thread's readings: it is left out, as a span on a
 * thread without readings is. */
static int add_span(jm_model *m, pass *p, const jager_event *ev)
{
    jm_span_view v;
    if (!jm_span_of(ev, &v) || v.thread != ev->thread) return 0;
    const jager_rec_span *r = v.rec;
    if (ev->thread >= p->nthreads || !p->by_thread[ev->thread]) return 0;
    uint32_t site = ev->rec->aux;
    if (site >= m->nsites) return 0;
    double a[JM_RU_NVALUES], b[JM_RU_NVALUES], incl[JM_RU_NVALUES];
    const series *s = p->by_thread[ev->thread];
    if (!at(s, r->start_ns, a) || !at(s, r->end_ns, b)) return 0;
    for (int k = 0; k < JM_RU_NVALUES; k++) incl[k] = b[k] > a[k] ? b[k] - a[k] : 0;
    jm_site_rusage *u = &m->rusage.sites[site];
    u->spans++;
    double wall = (double)(r->end_ns - r->start_ns);
    u->wall_ns += wall;
    for (int k = 0; k < JM_RU_NVALUES; k++) u->incl[k] += incl[k];
    open_child *mine = jm_pool_get(&p->open, ev->thread, r->span_id);
    for (int k = 0; k < JM_RU_NVALUES; k++) {
        double self = incl[k] - (mine ? mine->v[k] : 0);
        u->self[k] += self > 0 ? self : 0;
        if (k == JM_RU_MINFLT && self >= JM_RU_FAULTING) u->faulting_spans++;
    }
    double self_wall = wall - (mine ? mine->wall : 0);
    u->self_wall_ns += self_wall > 0 ? self_wall : 0;
    if (mine) jm_pool_del(&p->open, mine);
    if (r->parent_id) {
        open_child *par = jm_pool_get(&p->open, v.parent_thread, r->parent_id);
        if (!par) par = jm_pool_add(&p->open, v.parent_thread, r->parent_id);
        if (!par) return -1;
        for (int k = 0; k < JM_RU_NVALUES; k++) par->v[k] += incl[k];
        par->wall += wall;
    }
    return 0;
}

static void pass_free(pass *p)
{
    for (size_t i = 0; i < p->ns; i++) free(p->s[i].r);
    free(p->s);
    free(p->by_thread);
    jm_pool_free(&p->open);
}

int jm_rusage_finish(jm_model *m)
{
    jm_rusage *ru = &m->rusage;
    jager_reader *r = m->reader;
    uint16_t t_thread = jager_reader_type_by_name(r, jp_name(&jp_rusage, JP_RUSAGE_THREAD));
    uint16_t t_info = jager_reader_type_by_name(r, jp_name(&jp_rusage, JP_RUSAGE_INFO));
    if (!t_thread || !m->nsites) return 0;
    int have = 0;
    for (uint32_t i = 0; i < m->ntypes; i++) {
        int mine = m->types[i].type == t_thread || (t_info && m->types[i].type == t_info);
        have |= m->types[i].type == t_thread;
        if (mine) m->types[i].known = 1; /* read here, and by the hunt's descheduled / page_faults rules */
    }
    if (!have || jager_reader_rewind(r) != JAGER_OK) return 0;
    pass p;
    memset(&p, 0, sizeof p);
    p.open.size = sizeof(open_child);
    int rc = -1;
    ru->sites = calloc(m->nsites, sizeof *ru->sites);
    if (!ru->sites) goto out;
    jager_event ev;
    while (jager_reader_next(r, &ev) == 1) { /* 1: the readings */
        if (ev.type == t_thread && add_reading(&p, &ev) != 0) goto out;
        if (ev.type == t_info && (size_t)ev.rec->words * 8u >= sizeof(jager_rec_plugin) + 3 * 8u) {
            const uint64_t *f = ((const jager_rec_plugin *)ev.rec)->fields;
            ru->interval_ns = f[JP_RI_INTERVAL_NS];
            ru->fault_ns = f[JP_RI_FAULT_NS];
            ru->has_runq = f[JP_RI_SCHEDSTAT] != 0;
        }
    }
    for (uint32_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].index + 1 > p.nthreads) p.nthreads = m->threads[i].index + 1;
    p.by_thread = calloc(p.nthreads ? p.nthreads : 1, sizeof *p.by_thread);
    if (!p.by_thread) goto out;
    for (uint32_t i = 0; i < m->nthreads; i++)
        for (size_t k = 0; k < p.ns; k++)
            if (p.s[k].os_tid == m->threads[i].os_tid && !m->threads[i].helper) p.by_thread[m->threads[i].index] = &p.s[k];
    if (jager_reader_rewind(r) != JAGER_OK) goto out;
    while (jager_reader_next(r, &ev) == 1) /* 2: the spans */
        if ((ev.type == JAGER_EV_SPAN || ev.type == JAGER_EV_SPAN_X) && add_span(m, &p, &ev) != 0) goto out;
    ru->present = 1;
    rc = 0;
out:
    pass_free(&p);
    return rc;
}

void jm_rusage_free(jm_model *m)
{
    free(m->rusage.sites);
    memset(&m->rusage, 0, sizeof m->rusage);
}
