/* model_paths.c — the call trees from the file's exact per-call-path aggregates (PATHS,
 * format 1.1). The core counts every span end on its path, so these trees are whole when
 * events were dropped (a full ring) or thinned (JAGER_SAMPLE): calls, inclusive and
 * exclusive time and bytes of each node are the core's. What only events carry — the
 * shortest and longest call, span errors, GC pauses inside — is taken from the tree the
 * events built, node by node along the same path. */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"

/* One thread's new tree, its old (event) tree, and for each new node the old one. */
typedef struct rebuilt {
    uint32_t thread;
    jm_tree tree;
    uint32_t *old_of;
    uint32_t cap;
} rebuilt;

static rebuilt *rebuilt_of(rebuilt **v, uint32_t *n, uint32_t thread, uint32_t limit)
{
    for (uint32_t i = 0; i < *n; i++)
        if ((*v)[i].thread == thread) return &(*v)[i];
    rebuilt *g = realloc(*v, (*n + 1) * sizeof *g);
    if (!g) return NULL;
    *v = g;
    rebuilt *b = &g[*n];
    memset(b, 0, sizeof *b);
    b->thread = thread;
    if (jm_tree_init(&b->tree, thread, limit) != 0) return NULL;
    (*n)++;
    return b;
}

static void rebuilt_free(rebuilt *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        jm_tree_free(&v[i].tree);
        free(v[i].old_of);
    }
    free(v);
}

/* Exclusive times: a node's total minus its children's; folded and overflow nodes overlap
 * their own contents, so they have none. */
static void finish_tree(jm_tree *t)
{
    for (uint32_t i = 0; i < t->count; i++) t->nodes[i].excl_ns = t->nodes[i].incl_ns;
    for (uint32_t i = 1; i < t->count; i++) {
        jm_node *p = &t->nodes[t->nodes[i].parent];
        p->excl_ns = p->excl_ns > t->nodes[i].incl_ns ? p->excl_ns - t->nodes[i].incl_ns : 0;
    }
    t->nodes[0].excl_ns = 0;
    for (uint32_t i = 1; i < t->count; i++)
        if (t->nodes[i].site == JM_SITE_OTHER) t->nodes[i].excl_ns = 0;
}

/* The event-derived numbers of the old node, where the events saw this path. */
static void take_event_fields(jm_node *n, const jm_node *o)
{
    if (!o || !o->calls) {
        n->min_ns = n->calls ? n->incl_ns / n->calls : 0; /* no call of it was recorded: the mean */
        n->max_ns = n->min_ns;
        return;
    }
    n->min_ns = o->min_ns;
    n->max_ns = o->max_ns;
    n->errors = o->errors;
    n->gc_ns = o->gc_ns;
    n->gc_pauses = o->gc_pauses;
}

int jm_paths_apply(jm_model *m)
{
    size_t np = jager_reader_path_count(m->reader);
    /* A file cut after a flush holds an older set than its events: its event trees are closer. */
    if (!np || !m->info.clean_end || m->info.truncated || m->opt.events_only) return 0;
    uint32_t *node_of = malloc(np * sizeof *node_of); /* path index → node in its thread's tree */
    rebuilt *rb = NULL;
    uint32_t nrb = 0;
    if (!node_of) return -1;
    for (size_t i = 0; i < np; i++) {
        jager_path_stat ps = {.struct_size = sizeof ps};
        node_of[i] = JM_NONE;
        if (jager_reader_path(m->reader, i, &ps) != JAGER_OK) continue;
        if (!ps.site && !ps.calls) continue; /* an unused overflow bucket */
        rebuilt *b = rebuilt_of(&rb, &nrb, ps.thread, m->opt.max_tree_nodes);
        if (!b) goto oom;
        uint32_t parent = 0;
        if (ps.parent != JAGER_PATH_TOP && ps.parent < i && node_of[ps.parent] != JM_NONE) parent = node_of[ps.parent];
        uint32_t idx = jm_tree_child(&b->tree, parent, ps.site ? ps.site : JM_SITE_OTHER);
        if (idx == JM_NONE) goto oom;
        node_of[i] = idx;
        jm_node *n = &b->tree.nodes[idx];
        n->calls += ps.calls;
        n->incl_ns += ps.total_ns;
        n->bytes += ps.bytes;
        if (parent == 0) {
            b->tree.nodes[0].calls += ps.calls;
            b->tree.nodes[0].incl_ns += ps.total_ns;
            b->tree.nodes[0].bytes += ps.bytes;
        }
    }
    for (uint32_t k = 0; k < nrb; k++) {
        rebuilt *b = &rb[k];
        jm_thread *th = jm_model_thread(m, b->thread);
        if (!th) goto oom;
        jm_tree *old = &th->tree, *t = &b->tree;
        /* Node i's old counterpart: its parent's counterpart's child of the same site
         * (nodes are created parents first). */
        uint32_t *old_of = malloc(t->count * sizeof *old_of);
        if (!old_of) goto oom;
        old_of[0] = 0;
        for (uint32_t i = 1; i < t->count; i++) {
            uint32_t op = old_of[t->nodes[i].parent];
            old_of[i] = op == JM_NONE ? JM_NONE : jm_tree_find(old, op, t->nodes[i].site);
            take_event_fields(&t->nodes[i], old_of[i] == JM_NONE ? NULL : &old->nodes[old_of[i]]);
        }
        t->nodes[0].errors = old->nodes[0].errors;
        t->nodes[0].gc_ns = old->nodes[0].gc_ns;
        t->nodes[0].gc_pauses = old->nodes[0].gc_pauses;
        t->folded_calls = 0;
        for (uint32_t i = 1; i < t->count; i++)
            if (t->nodes[i].site == JM_SITE_OTHER) t->folded_calls += t->nodes[i].calls;
        free(old_of);
        finish_tree(t);
        jm_tree_free(old);
        *old = *t; /* the thread owns it now */
        memset(t, 0, sizeof *t);
    }
    rebuilt_free(rb, nrb);
    free(node_of);
    m->exact_paths = 1;
    return 0;
oom:
    rebuilt_free(rb, nrb);
    free(node_of);
    return -1;
}
