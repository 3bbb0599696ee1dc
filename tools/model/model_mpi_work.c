/* model_mpi_work.c — what a rank computed between two MPI calls: the self time of the
 * program's own spans (jager.h sites, instrumented functions) in that stretch of its
 * thread, by site. The wait-state rules name with it the computation that made a late
 * rank late (tools/hunt/hunt_rules_mpi.c). */
#include <stdlib.h>
#include <string.h>

#include "jager_reader.h"
#include "model.h"
#include "model_mpi.h"

typedef struct jm_mpi_span {
    uint32_t part, thread;
    uint32_t site;        /* index in jm_mpi.sites */
    uint32_t parent_site; /* the enclosing span's site, UINT32_MAX at top level */
    uint32_t id, parent;  /* per-thread ids, while reading */
    uint64_t t0, t1;      /* the part's own clock */
} jm_mpi_span;

static uint32_t site_id(jm_mpi *m, const char *name, int *oom)
{
    for (uint32_t i = 0; i < m->nsites; i++)
        if (!strcmp(m->sites[i], name)) return i;
    char **s = realloc(m->sites, (m->nsites + 1) * sizeof *s);
    if (!s || !(s[m->nsites] = strdup(name))) {
        if (s) m->sites = s;
        *oom = 1;
        return 0;
    }
    m->sites = s;
    return m->nsites++;
}

static int cmp_id(const void *a, const void *b)
{
    const jm_mpi_span *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_t0(const void *a, const void *b)
{
    const jm_mpi_span *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

int jm_mpi_read_spans(jm_mpi *m, const jm_job *j)
{
    size_t n = 0, cap = 0;
    jm_mpi_span *v = NULL;
    int oom = 0;
    for (uint32_t p = 0; p < j->n && !oom; p++) {
        jager_reader *r = j->parts[p].r;
        jager_event ev;
        jager_reader_rewind(r);
        while (jager_reader_next(r, &ev) > 0) {
            jm_span_view sv; /* a span_x (a task that moved): in its begin thread's numbering */
            if (!jm_span_of(&ev, &sv)) continue;
            const jager_rec_span *s = sv.rec;
            /* its parent numbered by another thread: not found among this thread's spans */
            uint32_t parent = sv.parent_thread == sv.thread ? s->parent_id : 0;
            const char *name = NULL;
            if (jager_reader_site(r, ev.rec->aux, &name, NULL, NULL) != JAGER_OK || !name) continue;
            if (n == cap) {
                size_t c = cap ? 2 * cap : 256;
                jm_mpi_span *q = realloc(v, c * sizeof *q);
                if (!q) {
                    oom = 1;
                    break;
                }
                v = q;
                cap = c;
            }
            uint32_t site = site_id(m, name, &oom);
            if (oom) break;
            v[n++] = (jm_mpi_span){p, sv.thread, site, UINT32_MAX, s->span_id, parent, s->start_ns, s->end_ns};
        }
        jager_reader_rewind(r);
    }
    if (oom) {
        free(v);
        return -1;
    }
    /* each span's parent site: spans are written at their end, children before parents */
    if (n > 1) qsort(v, n, sizeof *v, cmp_id);
    for (size_t i = 0; i < n; i++) {
        if (!v[i].parent) continue;
        jm_mpi_span key = {.part = v[i].part, .thread = v[i].thread, .id = v[i].parent};
        const jm_mpi_span *q = bsearch(&key, v, n, sizeof *v, cmp_id);
        if (q) v[i].parent_site = q->site;
    }
    if (n > 1) qsort(v, n, sizeof *v, cmp_t0);
    m->spans = v;
    m->nspans = n;
    if (!(m->first_span = calloc(j->n + 1, sizeof *m->first_span)) ||
        !(m->max_span = calloc(j->n ? j->n : 1, sizeof *m->max_span)))
        return -1;
    for (size_t i = 0, p = 0; p <= j->n; p++) {
        while (i < n && v[i].part < p) i++;
        m->first_span[p] = i;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].t1 - v[i].t0 > m->max_span[v[i].part]) m->max_span[v[i].part] = v[i].t1 - v[i].t0;
    return 0;
}

double jm_mpi_work_sites(const jm_mpi *m, uint32_t from, uint32_t to, double *acc)
{
    if (!m->nspans || to == UINT32_MAX || to >= m->ncalls) return 0;
    const jm_mpi_call *b = &m->calls[to];
    if (from == UINT32_MAX || from >= m->ncalls || m->calls[from].part != b->part) from = (uint32_t)m->first[b->part];
    if (from >= to) return 0;
    const jm_mpi_call *a = &m->calls[from];
    /* the stretch on the rank's own clock (the spans' clock), from the end of call a to the
     * start of call b, on b's thread */
    uint64_t s0 = a->local_t0 + (a->t1 - a->t0), s1 = b->local_t0;
    if (s1 <= s0) return 0;
    uint64_t lo_t = s0 > m->max_span[b->part] ? s0 - m->max_span[b->part] : 0;
    size_t lo = m->first_span[b->part], hi = m->first_span[b->part + 1];
    while (lo < hi) { /* the first span of this thread that can reach into the stretch */
        size_t mid = (lo + hi) / 2;
        const jm_mpi_span *x = &m->spans[mid];
        if (x->thread < b->thread || (x->thread == b->thread && x->t0 < lo_t)) lo = mid + 1;
        else hi = mid;
    }
    double covered = 0;
    for (size_t i = lo; i < m->first_span[b->part + 1]; i++) {
        const jm_mpi_span *x = &m->spans[i];
        if (x->thread != b->thread || x->t0 >= s1) break;
        uint64_t o0 = x->t0 > s0 ? x->t0 : s0, o1 = x->t1 < s1 ? x->t1 : s1;
        if (o1 <= o0) continue;
        double ov = (double)(o1 - o0);
        /* self time: the span's overlap less its children's (each child takes its own out
         * of its parent; a parent overlaps the stretch wherever its child does) */
        acc[x->site] += ov;
        if (x->parent_site != UINT32_MAX) acc[x->parent_site] -= ov;
        else covered += ov;
    }
    return covered;
}
