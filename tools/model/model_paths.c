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

/* old_of entries that name another thread's event tree: BORROWED | rebuilt index << 24 | node. */
#define BORROWED 0x80000000u

/* The node of \p rb[o]'s event tree on the same site chain as node \p i of rb[k]'s new tree,
 * if it holds calls and no path of thread o claimed it: recorded in rb[k].old_of[i]. */
static void borrow_path(jm_model *m, rebuilt *rb, uint32_t k, uint32_t i, uint32_t o)
{
    const jm_tree *t = &rb[k].tree;
    const jm_thread *oth = jm_model_thread(m, rb[o].thread);
    if (!oth || o > 0x7f) return;
    uint32_t chain[64], n = 0;
    for (uint32_t x = i; x != 0 && n < 64; x = t->nodes[x].parent) chain[n++] = t->nodes[x].site;
    if (n == 64) return;
    uint32_t at = 0;
    while (n && at != JM_NONE) at = jm_tree_find(&oth->tree, at, chain[--n]);
    if (at == JM_NONE || !oth->tree.nodes[at].calls || at > 0xFFFFFF) return;
    for (uint32_t j = 1; j < rb[o].tree.count; j++)
        if (rb[o].old_of[j] == at) return; /* its own thread's path has it */
    rb[k].old_of[i] = BORROWED | o << 24 | at;
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
    /* Pass 1: each new node's old counterpart in its own thread's event tree: its parent's
     * counterpart's child of the same site (nodes are created parents first). */
    for (uint32_t k = 0; k < nrb; k++) {
        rebuilt *b = &rb[k];
        jm_thread *th = jm_model_thread(m, b->thread);
        if (!th) goto oom;
        jm_tree *old = &th->tree, *t = &b->tree;
        if (!(b->old_of = malloc(t->count * sizeof *b->old_of))) goto oom;
        b->old_of[0] = 0;
        for (uint32_t i = 1; i < t->count; i++) {
            uint32_t op = b->old_of[t->nodes[i].parent];
            b->old_of[i] = op == JM_NONE ? JM_NONE : jm_tree_find(old, op, t->nodes[i].site);
        }
    }
    /* Pass 2: a span of a task that moved ended on another thread, so its exact path is that
     * thread's, while the events put it in its begin thread's tree: a path whose own
     * thread's events lack it takes its event fields from another thread's tree holding
     * the same path that no path of that thread claimed. */
    for (uint32_t k = 0; k < nrb; k++) {
        rebuilt *b = &rb[k];
        jm_tree *t = &b->tree;
        for (uint32_t i = 1; i < t->count; i++) {
            if (b->old_of[i] != JM_NONE) continue;
            for (uint32_t o = 0; o < nrb && b->old_of[i] == JM_NONE; o++)
                if (o != k) borrow_path(m, rb, k, i, o);
        }
    }
    for (uint32_t k = 0; k < nrb; k++) {
        rebuilt *b = &rb[k];
        jm_thread *th = jm_model_thread(m, b->thread);
        jm_tree *old = &th->tree, *t = &b->tree;
        jm_tree *src = old;
        for (uint32_t i = 1; i < t->count; i++) {
            uint32_t oi = b->old_of[i];
            if (oi != JM_NONE && (oi & BORROWED)) { /* from another thread's events */
                const rebuilt *ob = &rb[(oi >> 24) & 0x7f];
                const jm_thread *oth = jm_model_thread(m, ob->thread);
                take_event_fields(&t->nodes[i], oth ? &oth->tree.nodes[oi & 0xFFFFFF] : NULL);
            } else {
                take_event_fields(&t->nodes[i], oi == JM_NONE ? NULL : &src->nodes[oi]);
            }
        }
    }
    for (uint32_t k = 0; k < nrb; k++) {
        rebuilt *b = &rb[k];
        jm_thread *th = jm_model_thread(m, b->thread);
        jm_tree *old = &th->tree, *t = &b->tree;
        t->nodes[0].errors = old->nodes[0].errors;
        t->nodes[0].gc_ns = old->nodes[0].gc_ns;
        t->nodes[0].gc_pauses = old->nodes[0].gc_pauses;
        t->folded_calls = 0;
        for (uint32_t i = 1; i < t->count; i++)
            if (t->nodes[i].site == JM_SITE_OTHER) t->folded_calls += t->nodes[i].calls;
        finish_tree(t);
    }
    /* The event trees are read above until the last thread's turn: replace them only now. */
    for (uint32_t k = 0; k < nrb; k++) {
        rebuilt *b = &rb[k];
        jm_thread *th = jm_model_thread(m, b->thread);
        jm_tree_free(&th->tree);
        th->tree = b->tree; /* the thread owns it now */
        memset(&b->tree, 0, sizeof b->tree);
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
