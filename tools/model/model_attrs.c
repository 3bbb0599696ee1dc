/* model_attrs.c — each site's calls grouped by the value of each span attribute
 * (jager_span_set_attrs: region ids, materials, levels), for `jager summary --by KEY` and the
 * report's "by attribute" table: calls, total and max per (site, key, value). Spans without a
 * key are not in that key's groups. Spans of a recording with task records (jager_task_set:
 * Julia tasks, coroutines) are also grouped under the key "task" by the task that ended them
 * (the task record last seen on their thread; "id (name)" where the run metadata names it,
 * `julia.task.<id>.name`). A second pass over the file, made only when it has span
 * attributes; counted from the span events (what reached the file). Bounded: JM_ATTR_KEYS keys,
 * JM_ATTR_VALUES values per site and key, JM_ATTR_GROUPS groups; the rest is counted as folded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "toolutil.h"

#define PEND_BUCKETS 4096u
#define PEND_ATTRS 8u

typedef struct pend {
    struct pend *next;
    uint64_t key; /* thread << 32 | span id */
    uint32_t n;
    uint16_t k[PEND_ATTRS];              /* key index */
    char v[PEND_ATTRS][JM_ATTR_TEXT];
} pend;

typedef struct pass {
    jm_model *m;
    char keys[JM_ATTR_KEYS][JM_ATTR_TEXT];
    uint32_t nkeys;
    pend *buckets[PEND_BUCKETS];
    size_t cap;
    uint64_t *task;   /* per thread index: the current task (task records), +1; 0 none seen */
    char (*task_text)[JM_ATTR_TEXT]; /* per thread index: its group value, "id" or "id (name)" */
    uint32_t ntask;
    int task_key;     /* index of the key "task", -1 until a task record is seen */
} pass;

static int key_index(pass *p, const char *k, uint32_t len)
{
    if (len >= JM_ATTR_TEXT) len = JM_ATTR_TEXT - 1;
    for (uint32_t i = 0; i < p->nkeys; i++)
        if (strlen(p->keys[i]) == len && !memcmp(p->keys[i], k, len)) return (int)i;
    if (p->nkeys == JM_ATTR_KEYS) return -1;
    memcpy(p->keys[p->nkeys], k, len);
    p->keys[p->nkeys][len] = 0;
    return (int)p->nkeys++;
}

static void on_attrs(pass *p, const jager_event *ev)
{
    const jager_rec_span_attr *r = (const jager_rec_span_attr *)ev->rec;
    uint32_t thread;
    (void)jm_span_ref(ev, &thread); /* keyed as its span: by the thread that numbers span_id */
    uint64_t key = (uint64_t)thread << 32 | r->span_id;
    pend **pp = &p->buckets[jm_mix64(key) & (PEND_BUCKETS - 1)];
    while (*pp && (*pp)->key != key) pp = &(*pp)->next;
    if (!*pp && !(*pp = calloc(1, sizeof **pp))) {
        p->m->attr_folded++;
        return;
    }
    pend *e = *pp;
    e->key = key;
    const uint8_t *cur = (const uint8_t *)(r + 1), *end = (const uint8_t *)r + (size_t)r->h.words * 8u;
    jager_attr_view a;
    while (e->n < PEND_ATTRS && jager_attr_next(&cur, end, &a) == 1) {
        int ki = key_index(p, a.key, a.key_len);
        if (ki < 0) {
            p->m->attr_folded++;
            continue;
        }
        char *v = e->v[e->n];
        tu_attr_resolve(p->m->reader, &a);
        if (a.kind == JAGER_ATTR_STR)
            snprintf(v, JM_ATTR_TEXT, "%.*s", (int)(a.str_len < JM_ATTR_TEXT ? a.str_len : JM_ATTR_TEXT - 1), a.str);
        else if (a.kind == JAGER_ATTR_F64) snprintf(v, JM_ATTR_TEXT, "%g", a.f64);
        else if (a.kind == JAGER_ATTR_BOOL) snprintf(v, JM_ATTR_TEXT, "%s", a.i64 ? "true" : "false");
        else snprintf(v, JM_ATTR_TEXT, "%lld", (long long)a.i64);
        e->k[e->n++] = (uint16_t)ki;
    }
}

static int add(pass *p, uint32_t site, uint32_t ki, const char *val, uint64_t dur)
{
    jm_model *m = p->m;
    uint32_t values = 0;
    for (size_t i = 0; i < m->nattr_groups; i++) { /* few groups per site and key */
        jm_attr_group *g = &m->attr_groups[i];
        if (g->site != site || g->key != p->keys[ki]) continue;
        if (!strcmp(g->value, val)) {
            g->calls++;
            g->total_ns += dur;
            if (dur > g->max_ns) g->max_ns = dur;
            return 0;
        }
        values++;
    }
    if (values >= JM_ATTR_VALUES || m->nattr_groups >= JM_ATTR_GROUPS) {
        m->attr_folded++;
        return 0;
    }
    if (m->nattr_groups == p->cap) {
        size_t c = p->cap ? p->cap * 2 : 64;
        jm_attr_group *n = realloc(m->attr_groups, c * sizeof *n);
        if (!n) return -1;
        m->attr_groups = n;
        p->cap = c;
    }
    jm_attr_group *g = &m->attr_groups[m->nattr_groups++];
    memset(g, 0, sizeof *g);
    g->site = site;
    g->key = p->keys[ki]; /* repointed into m->attr_keys below */
    snprintf(g->value, sizeof g->value, "%s", val);
    g->calls = 1;
    g->total_ns = g->max_ns = dur;
    return 0;
}

/* The thread's task changed; remember it (+1, so 0 stays "no task record seen"). */
static int on_task(pass *p, const jager_event *ev)
{
    const jager_rec_task *r = (const jager_rec_task *)ev->rec;
    if (p->task_key < 0) p->task_key = key_index(p, "task", 4);
    if (ev->thread >= p->ntask) {
        uint32_t n = ev->thread + 16;
        uint64_t *t = realloc(p->task, n * sizeof *t);
        if (!t) return -1;
        p->task = t;
        char (*x)[JM_ATTR_TEXT] = realloc(p->task_text, n * sizeof *x);
        if (!x) return -1;
        p->task_text = x;
        memset(t + p->ntask, 0, (n - p->ntask) * sizeof *t);
        memset(x + p->ntask, 0, (n - p->ntask) * sizeof *x);
        p->ntask = n;
    }
    p->task[ev->thread] = r->task + 1;
    /* a name the program gave the task (the Julia binding's Jager.@async "name") */
    char key[64];
    snprintf(key, sizeof key, "julia.task.%llu.name", (unsigned long long)r->task);
    const char *name = p->m->reader ? jager_reader_meta(p->m->reader, key) : NULL;
    if (name && *name) snprintf(p->task_text[ev->thread], JM_ATTR_TEXT, "%llu (%s)", (unsigned long long)r->task, name);
    else snprintf(p->task_text[ev->thread], JM_ATTR_TEXT, "%llu", (unsigned long long)r->task);
    return 0;
}

/* A span or span_x: its task is the recording thread's current one (a moved task's span
 * ends on the thread that runs the task now); its attributes were keyed by the thread that
 * numbers its id (its begin thread, model.h), where the binding sets them. */
static int on_span(pass *p, const jager_event *ev, const jm_span_view *v)
{
    const jager_rec_span *r = v->rec;
    if (p->task_key >= 0 && ev->thread < p->ntask && p->task[ev->thread]) {
        uint64_t d = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
        if (add(p, r->h.aux, (uint32_t)p->task_key, p->task_text[ev->thread], d)) return -1;
    }
    uint64_t key = (uint64_t)v->thread << 32 | r->span_id;
    pend **pp = &p->buckets[jm_mix64(key) & (PEND_BUCKETS - 1)];
    while (*pp && (*pp)->key != key) pp = &(*pp)->next;
    pend *e = *pp;
    if (!e) return 0;
    *pp = e->next;
    uint64_t dur = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
    int rc = 0;
    for (uint32_t i = 0; i < e->n && rc == 0; i++) rc = add(p, r->h.aux, e->k[i], e->v[i], dur);
    free(e);
    return rc;
}

static int by_site_key_total(const void *x, const void *y)
{
    const jm_attr_group *a = x, *b = y;
    if (a->site != b->site) return a->site < b->site ? -1 : 1;
    int c = strcmp(a->key, b->key);
    if (c) return c;
    return a->total_ns < b->total_ns ? 1 : a->total_ns > b->total_ns ? -1 : 0;
}

int jm_attrs_finish(jm_model *m)
{
    int have = 0;
    for (uint32_t i = 0; i < m->ntypes; i++) have |= m->types[i].type == JAGER_EV_SPAN_ATTR || m->types[i].type == JAGER_EV_TASK;
    if (!have || !m->reader || jager_reader_rewind(m->reader) != JAGER_OK) return 0;
    pass *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->m = m;
    p->task_key = -1;
    int rc = 0;
    jager_event ev;
    jm_span_view v;
    while (rc == 0 && jager_reader_next(m->reader, &ev) == 1) {
        size_t bytes = (size_t)ev.rec->words * 8u;
        if (ev.type == JAGER_EV_SPAN_ATTR && bytes >= sizeof(jager_rec_span_attr)) on_attrs(p, &ev);
        else if (ev.type == JAGER_EV_TASK && bytes >= sizeof(jager_rec_task)) rc = on_task(p, &ev);
        else if (ev.rec->aux < m->nsites && jm_span_of(&ev, &v)) rc = on_span(p, &ev, &v);
    }
    /* the keys live in the model; the groups point at them */
    if (rc == 0 && p->nkeys) {
        m->attr_keys = calloc(p->nkeys, sizeof *m->attr_keys);
        if (!m->attr_keys) rc = -1;
        for (uint32_t i = 0; rc == 0 && i < p->nkeys; i++) {
            memcpy(m->attr_keys[i], p->keys[i], JM_ATTR_TEXT);
            for (size_t g = 0; g < m->nattr_groups; g++)
                if (m->attr_groups[g].key == p->keys[i]) m->attr_groups[g].key = m->attr_keys[i];
        }
        m->nattr_keys = p->nkeys;
    }
    if (rc == 0 && m->nattr_groups > 1) qsort(m->attr_groups, m->nattr_groups, sizeof *m->attr_groups, by_site_key_total);
    for (uint32_t b = 0; b < PEND_BUCKETS; b++)
        for (pend *e = p->buckets[b], *n; e; e = n) {
            n = e->next;
            free(e);
        }
    free(p->task);
    free(p->task_text);
    free(p);
    return rc;
}

void jm_attrs_free(jm_model *m)
{
    free(m->attr_groups);
    free(m->attr_keys);
    m->attr_groups = NULL;
    m->attr_keys = NULL;
    m->nattr_groups = m->nattr_keys = 0;
}
