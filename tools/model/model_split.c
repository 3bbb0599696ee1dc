/* model_split.c — whether a site's slow calls are designed work: calls that differ by input
 * (the k-th call under every parent, or the calls with one attribute value), not a slow tail.
 *
 * For each site with a tail (model.c: calls over JM_TAIL_FACTOR × its median), a second pass
 * over the span events counts, per call ordinal under the same parent span (1st, 2nd, …
 * call of the site inside one parent) and per value of each span attribute, how many calls
 * there were and how many of them were slow. A split is stable when one set of ordinals (or
 * one attribute value) holds nearly every slow call and nearly all its calls are slow, while
 * the other calls almost never are, over at least JM_SPLIT_MIN_PARENTS parents. A tail of
 * calls slow at random places (a lock, a cache, preemption) has no such set.
 *
 * A split hides the site's tail, not the tail inside each group: a third pass collects the
 * durations of the calls of each ordinal or attribute split, per group, for the group's own
 * median and tail (jm_split.group). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_map.h"
#include "model_priv.h"
#include "toolutil.h"

#define ORD_CAP 64          /* ordinals tracked per site; later calls fold into the last */
#define VALS_CAP 32         /* attribute (key, value) pairs tracked per site */
#define TEXT_CAP 64         /* bytes kept of a key or value */
#define SPLIT_PURE 0.9      /* ≥ 90 % of the chosen calls slow */
#define SPLIT_HOLDS 0.75    /* … holding ≥ 75 % of the slow calls (the rest: preemption, noise) */
#define SPLIT_OTHERS 0.1    /* ≤ 10 % of the other calls slow */
#define OPEN_CAP (1u << 22) /* (parent, site) counters kept at once; beyond, ordinals are unknown */
#define PARENTS_CAP 16      /* parent sites tracked per site */

typedef struct count2 {
    uint64_t n, slow;
} count2;

typedef struct attr_val {
    char key[TEXT_CAP], val[TEXT_CAP];
    count2 c;
} attr_val;

typedef struct durs {
    uint64_t *d;
    size_t n, cap;
} durs;

typedef struct cand {
    uint64_t threshold_ns; /* slow above this */
    const jm_split *split; /* the group pass: the split found (NULL: not collected) */
    durs group[2];         /* … and the durations of its two groups */
    count2 ord[ORD_CAP];
    uint64_t parents, slow_total, calls;
    attr_val vals[VALS_CAP];
    uint32_t nvals;
    int ord_unknown;
    /* calls and slow calls per parent site (the context), learnt when each parent ends */
    uint32_t ps_site[PARENTS_CAP];
    count2 ps[PARENTS_CAP];
    uint32_t nps;
} cand;

typedef struct ord_slot { /* a site's calls (and slow ones) so far under one parent instance */
    uint32_t count, slow;
} ord_slot;

typedef struct pend { /* attributes of an open span of a candidate site */
    struct pend *next;
    uint64_t key;
    uint32_t n;
    char k[4][TEXT_CAP], v[4][TEXT_CAP];
} pend;

typedef struct pass {
    cand **c;            /* per site, NULL when not a candidate */
    uint32_t *cands;     /* the candidate sites */
    uint32_t ncands;
    jm_map ord_map;      /* (parent instance, site) → index into ord */
    ord_slot *ord;
    size_t ord_cap, ord_n;
    pend *buckets[4096];
    const jager_reader *reader; /* for interned string attributes */
    int grouping;               /* the group pass (durations per split group) */
} pass;

/* The ordinal (0-based) of this call of site under parent instance pkey, or -1 (unknown). */
static int ordinal(pass *p, uint64_t pkey, uint32_t site, int slow)
{
    uint32_t i = jm_map_get(&p->ord_map, pkey, site);
    if (i == JM_NONE) {
        if (p->ord_n >= OPEN_CAP) return -1;
        if (p->ord_n == p->ord_cap) {
            size_t c = p->ord_cap ? p->ord_cap * 2 : 4096;
            ord_slot *n = realloc(p->ord, c * sizeof *n);
            if (!n) return -1;
            p->ord = n;
            p->ord_cap = c;
        }
        i = (uint32_t)p->ord_n;
        if (jm_map_put(&p->ord_map, pkey, site, i)) return -1;
        p->ord[p->ord_n++] = (ord_slot){0, 0};
    }
    p->ord[i].slow += (uint32_t)slow;
    return (int)p->ord[i].count++;
}

/* The counter of site's calls under parent instance pkey, or NULL. */
static const ord_slot *ord_find(const pass *p, uint64_t pkey, uint32_t site)
{
    uint32_t i = jm_map_get(&p->ord_map, pkey, site);
    return i == JM_NONE ? NULL : &p->ord[i];
}

/* A span ended: the calls of candidate sites made under it learn their context (its site). */
static void parent_ended(pass *p, uint64_t pkey, uint32_t parent_site)
{
    for (uint32_t i = 0; i < p->ncands; i++) {
        const ord_slot *o = ord_find(p, pkey, p->cands[i]);
        if (!o || !o->count) continue;
        cand *c = p->c[p->cands[i]];
        uint32_t k = 0;
        while (k < c->nps && c->ps_site[k] != parent_site) k++;
        if (k == c->nps) {
            if (c->nps == PARENTS_CAP) continue;
            c->ps_site[c->nps++] = parent_site;
        }
        c->ps[k].n += o->count;
        c->ps[k].slow += o->slow;
    }
}

static void text(char *dst, const char *s, size_t n)
{
    if (n >= TEXT_CAP) n = TEXT_CAP - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

static void on_attrs(pass *p, const jager_event *ev)
{
    const jager_rec_span_attr *r = (const jager_rec_span_attr *)ev->rec;
    uint32_t thread, site = jm_span_ref(ev, &thread); /* keyed as its span (model.h) */
    if (site >= 1 && !p->c[site]) return;
    uint64_t key = (uint64_t)thread << 32 | r->span_id;
    pend **pp = &p->buckets[jm_mix64(key) & 4095];
    while (*pp && (*pp)->key != key) pp = &(*pp)->next;
    if (!*pp && !(*pp = calloc(1, sizeof **pp))) return;
    pend *e = *pp;
    e->key = key;
    const uint8_t *cur = (const uint8_t *)(r + 1), *end = (const uint8_t *)r + (size_t)r->h.words * 8u;
    jager_attr_view a;
    while (e->n < 4 && jager_attr_next(&cur, end, &a) == 1) {
        tu_attr_resolve(p->reader, &a);
        text(e->k[e->n], a.key, a.key_len);
        if (a.kind == JAGER_ATTR_STR) text(e->v[e->n], a.str, a.str_len);
        else if (a.kind == JAGER_ATTR_F64) snprintf(e->v[e->n], TEXT_CAP, "%g", a.f64);
        else snprintf(e->v[e->n], TEXT_CAP, "%lld", (long long)a.i64);
        e->n++;
    }
}

static pend *take_attrs(pass *p, uint64_t key)
{
    pend **pp = &p->buckets[jm_mix64(key) & 4095];
    while (*pp && (*pp)->key != key) pp = &(*pp)->next;
    pend *e = *pp;
    if (e) *pp = e->next;
    return e;
}

static void count_value(cand *c, const char *k, const char *v, int slow)
{
    uint32_t i = 0;
    while (i < c->nvals && !(strcmp(c->vals[i].key, k) == 0 && strcmp(c->vals[i].val, v) == 0)) i++;
    if (i == c->nvals) {
        if (c->nvals == VALS_CAP) return;
        snprintf(c->vals[i].key, TEXT_CAP, "%s", k);
        snprintf(c->vals[i].val, TEXT_CAP, "%s", v);
        c->nvals++;
    }
    c->vals[i].c.n++;
    c->vals[i].c.slow += (uint64_t)slow;
}

static int push(durs *g, uint64_t d)
{
    if (g->n == g->cap) {
        size_t c = g->cap ? g->cap * 2 : 256;
        uint64_t *n = realloc(g->d, c * sizeof *n);
        if (!n) return -1;
        g->d = n;
        g->cap = c;
    }
    g->d[g->n++] = d;
    return 0;
}

/* The group pass: which side of its split this call is on, and its duration. */
static int on_span_grouped(pass *p, const jm_span_view *v)
{
    const jager_rec_span *r = v->rec;
    cand *c = p->c[r->h.aux];
    if (!c || !c->split) return 0;
    int in = 0;
    if (c->split->kind == JM_SPLIT_ORDINAL) {
        int k = r->parent_id ? ordinal(p, (uint64_t)v->parent_thread << 32 | r->parent_id, r->h.aux, 0) : -1;
        if (k < 0) return 0;
        in = (int)(c->split->ordinals >> (k < ORD_CAP ? k : ORD_CAP - 1) & 1);
    } else {
        pend *a = take_attrs(p, (uint64_t)v->thread << 32 | r->span_id);
        for (uint32_t i = 0; a && i < a->n; i++)
            in |= !strcmp(a->k[i], c->split->key) && !strcmp(a->v[i], c->split->value);
        free(a);
    }
    return push(&c->group[in], r->end_ns - r->start_ns);
}

/* A span or span_x (model.h: keys in the numbering of its begin thread and its parent's). */
static void on_span(pass *p, const jm_span_view *v)
{
    const jager_rec_span *r = v->rec;
    uint32_t site = r->h.aux;
    if (p->ncands && p->ord_n) parent_ended(p, (uint64_t)v->thread << 32 | r->span_id, site);
    cand *c = p->c[site];
    if (!c) return;
    int slow = r->end_ns - r->start_ns > c->threshold_ns;
    c->calls++;
    c->slow_total += (uint64_t)slow;
    if (r->parent_id) {
        int k = ordinal(p, (uint64_t)v->parent_thread << 32 | r->parent_id, site, slow);
        if (k < 0) c->ord_unknown = 1;
        else {
            if (k == 0) c->parents++;
            count2 *o = &c->ord[k < ORD_CAP ? k : ORD_CAP - 1];
            o->n++;
            o->slow += (uint64_t)slow;
        }
    } else {
        c->ord_unknown = 1; /* top-level calls have no parent to count under */
    }
    pend *a = take_attrs(p, (uint64_t)v->thread << 32 | r->span_id);
    if (a) {
        for (uint32_t i = 0; i < a->n; i++) count_value(c, a->k[i], a->v[i], slow);
        free(a);
    }
}

/* The ordinals that are (nearly) always slow: set in \p mask; 1 if they make a stable split. */
static int ordinal_split(const cand *c, uint64_t *mask)
{
    *mask = 0;
    if (c->ord_unknown || c->parents < JM_SPLIT_MIN_PARENTS || !c->slow_total) return 0;
    uint64_t in_n = 0, in_slow = 0;
    for (int k = 0; k < ORD_CAP; k++) {
        const count2 *o = &c->ord[k];
        if (o->n && (double)o->slow >= SPLIT_PURE * (double)o->n) {
            *mask |= 1ull << k;
            in_n += o->n;
            in_slow += o->slow;
        }
    }
    uint64_t out_n = c->calls - in_n, out_slow = c->slow_total - in_slow;
    return *mask && (double)in_slow >= SPLIT_HOLDS * (double)c->slow_total &&
           (out_n == 0 || (double)out_slow <= SPLIT_OTHERS * (double)out_n) && out_n > 0;
}

static int value_split(const cand *c, uint32_t *which)
{
    for (uint32_t i = 0; i < c->nvals; i++) {
        const attr_val *v = &c->vals[i];
        uint64_t key_n = 0, key_slow = 0; /* calls carrying this key at all */
        for (uint32_t j = 0; j < c->nvals; j++)
            if (!strcmp(c->vals[j].key, v->key)) key_n += c->vals[j].c.n, key_slow += c->vals[j].c.slow;
        uint64_t out_n = key_n - v->c.n, out_slow = key_slow - v->c.slow;
        if (v->c.n && out_n && (double)v->c.slow >= SPLIT_PURE * (double)v->c.n &&
            (double)v->c.slow >= SPLIT_HOLDS * (double)c->slow_total && (double)out_slow <= SPLIT_OTHERS * (double)out_n) {
            *which = i;
            return 1;
        }
    }
    return 0;
}

/* The parent site whose calls of the site are (nearly) all slow, holding most of the slow
 * calls, while under every other parent they are (nearly) never slow: the tail is the calls
 * made from that context. Returns that site (\p pcalls its calls), or 0. */
static uint32_t path_split(const cand *c, uint64_t *pcalls)
{
    if (c->nps < 2 || !c->slow_total) return 0;
    for (uint32_t i = 0; i < c->nps; i++) {
        const count2 *in = &c->ps[i];
        if (!c->ps_site[i] || (double)in->slow < SPLIT_PURE * (double)in->n ||
            (double)in->slow < SPLIT_HOLDS * (double)c->slow_total)
            continue;
        uint64_t out_n = 0, out_slow = 0;
        for (uint32_t j = 0; j < c->nps; j++)
            if (j != i) out_n += c->ps[j].n, out_slow += c->ps[j].slow;
        if (out_n && (double)out_slow <= SPLIT_OTHERS * (double)out_n) {
            *pcalls = in->n;
            return c->ps_site[i];
        }
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* One group's median and tail, the way model_finish.c judges a site's (exact durations here). */
static void group_stats(durs *g, struct jm_split_group *out)
{
    memset(out, 0, sizeof *out);
    if (!g->n) return;
    qsort(g->d, g->n, sizeof *g->d, cmp_u64);
    out->calls = g->n;
    out->p50_ns = g->d[(g->n - 1) / 2];
    out->max_ns = g->d[g->n - 1];
    uint64_t cut = out->p50_ns * JM_TAIL_FACTOR;
    for (size_t i = 0; i < g->n; i++) {
        out->total_ns += (double)g->d[i];
        if (out->p50_ns && g->d[i] >= cut) {
            out->tail_calls++;
            out->tail_excess_ns += (double)(g->d[i] - out->p50_ns);
        }
    }
}

static void pass_reset(pass *p)
{
    p->ord_n = 0;
    jm_map_free(&p->ord_map);
    memset(&p->ord_map, 0, sizeof p->ord_map);
    for (int b = 0; b < 4096; b++) {
        for (pend *e = p->buckets[b], *n; e; e = n) {
            n = e->next;
            free(e);
        }
        p->buckets[b] = NULL;
    }
}

/* The third pass: the durations of each ordinal or attribute split's two groups. */
static int group_pass(jm_model *m, pass *p)
{
    int any = 0;
    for (uint32_t s = 1; s < m->nsites; s++)
        if (p->c[s] && (m->splits[s].kind == JM_SPLIT_ORDINAL || m->splits[s].kind == JM_SPLIT_ATTRIBUTE)) {
            p->c[s]->split = &m->splits[s];
            any = 1;
        }
    if (!any) return 0;
    pass_reset(p);
    p->grouping = 1;
    if (jager_reader_rewind(m->reader) != JAGER_OK) return 0;
    jager_event ev;
    jm_span_view v;
    while (jager_reader_next(m->reader, &ev) == 1) {
        size_t bytes = (size_t)ev.rec->words * 8u;
        uint32_t th;
        if (ev.type == JAGER_EV_SPAN_ATTR ? jm_span_ref(&ev, &th) >= m->nsites : ev.rec->aux >= m->nsites) continue;
        if (ev.type == JAGER_EV_SPAN_ATTR && bytes >= sizeof(jager_rec_span_attr)) on_attrs(p, &ev);
        else if (jm_span_of(&ev, &v) && on_span_grouped(p, &v)) return -1;
    }
    for (uint32_t s = 1; s < m->nsites; s++)
        if (p->c[s] && p->c[s]->split)
            for (int g = 0; g < 2; g++) group_stats(&p->c[s]->group[g], &m->splits[s].group[g]);
    return 0;
}

int jm_split_finish(jm_model *m)
{
    if (m->nsites < 2) return 0;
    pass p;
    memset(&p, 0, sizeof p);
    p.reader = m->reader;
    p.c = calloc(m->nsites, sizeof *p.c);
    p.cands = calloc(m->nsites, sizeof *p.cands);
    int any = 0, rc = -1;
    if (!p.c || !p.cands) goto out;
    for (uint32_t s = 1; s < m->nsites; s++) {
        const jm_site *x = &m->sites[s];
        if (x->tail_calls < 2 || x->calls < 20 || !x->p50_ns) continue;
        if (!(p.c[s] = calloc(1, sizeof **p.c))) goto out;
        p.c[s]->threshold_ns = (uint64_t)JM_TAIL_FACTOR * x->p50_ns;
        p.cands[p.ncands++] = s;
        any = 1;
    }
    if (!any || jager_reader_rewind(m->reader) != JAGER_OK) {
        rc = 0;
        goto out;
    }
    jager_event ev;
    jm_span_view v;
    uint32_t th;
    while (jager_reader_next(m->reader, &ev) == 1) {
        size_t bytes = (size_t)ev.rec->words * 8u;
        if (ev.type == JAGER_EV_SPAN_ATTR && bytes >= sizeof(jager_rec_span_attr) && jm_span_ref(&ev, &th) < m->nsites) on_attrs(&p, &ev);
        else if (ev.rec->aux < m->nsites && jm_span_of(&ev, &v)) on_span(&p, &v);
    }
    m->splits = calloc(m->nsites, sizeof *m->splits);
    if (!m->splits) goto out;
    for (uint32_t s = 1; s < m->nsites; s++) {
        const cand *c = p.c[s];
        if (!c) continue;
        jm_split *out = &m->splits[s];
        uint64_t mask, pcalls = 0;
        uint32_t which, parent;
        if ((parent = path_split(c, &pcalls)) != 0) {
            out->kind = JM_SPLIT_PATH;
            out->path_parent = parent;
            out->path_calls = pcalls;
        } else if (ordinal_split(c, &mask)) {
            out->kind = JM_SPLIT_ORDINAL;
            out->ordinals = mask;
            out->parents = c->parents;
        } else if (value_split(c, &which)) {
            out->kind = JM_SPLIT_ATTRIBUTE;
            snprintf(out->key, sizeof out->key, "%s", c->vals[which].key);
            snprintf(out->value, sizeof out->value, "%s", c->vals[which].val);
        }
        out->slow = c->slow_total;
        out->calls = c->calls;
    }
    rc = group_pass(m, &p);
out:
    for (uint32_t s = 0; p.c && s < m->nsites; s++) {
        if (p.c[s]) free(p.c[s]->group[0].d), free(p.c[s]->group[1].d);
        free(p.c[s]);
    }
    free(p.c);
    free(p.cands);
    free(p.ord);
    jm_map_free(&p.ord_map);
    for (int b = 0; b < 4096; b++)
        for (pend *e = p.buckets[b], *n; e; e = n) {
            n = e->next;
            free(e);
        }
    return rc;
}

void jm_split_free(jm_model *m)
{
    free(m->splits);
    m->splits = NULL;
}
