/* model_tree.c — path-keyed call trees: a node per distinct call path, found by
 * (parent node, site) through a hash map, capped so hostile or huge recordings stay
 * bounded (overflow goes to "(other)" nodes and is counted). */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"

/* The private part behind jm_tree.index. */
typedef struct tree_index {
    jm_map map;
    uint32_t cap;   /* nodes allocated */
    uint32_t limit; /* node cap */
} tree_index;

static void node_init(jm_node *n, uint32_t site, uint32_t parent, uint32_t depth)
{
    memset(n, 0, sizeof *n);
    n->site = site;
    n->parent = parent;
    n->first_child = JM_NONE;
    n->next_sibling = JM_NONE;
    n->depth = depth;
    n->min_ns = UINT64_MAX;
}

int jm_tree_init(jm_tree *t, uint32_t thread, uint32_t limit)
{
    memset(t, 0, sizeof *t);
    tree_index *ix = calloc(1, sizeof *ix);
    if (!ix) return -1;
    ix->limit = limit ? limit : 65536;
    t->index = ix;
    t->thread = thread;
    if (jm_grow((void **)&t->nodes, &ix->cap, 16, sizeof(jm_node)) != 0) {
        free(ix);
        t->index = NULL;
        return -1;
    }
    node_init(&t->nodes[0], 0, JM_NONE, 0);
    t->count = 1;
    return 0;
}

void jm_tree_free(jm_tree *t)
{
    if (!t) return;
    tree_index *ix = t->index;
    if (ix) {
        jm_map_free(&ix->map);
        free(ix);
    }
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

void jm_tree_reset(jm_tree *t)
{
    tree_index *ix = t->index;
    jm_map_clear(&ix->map);
    if (ix->cap > 4096) { /* shrink trees that once grew large */
        jm_node *n = realloc(t->nodes, 16 * sizeof *n);
        if (n) {
            t->nodes = n;
            ix->cap = 16;
        }
    }
    node_init(&t->nodes[0], 0, JM_NONE, 0);
    t->count = 1;
    t->folded_calls = 0;
    t->unrecorded = 0;
}

static uint32_t find_or_add(jm_tree *t, uint32_t parent, uint32_t site)
{
    tree_index *ix = t->index;
    uint32_t idx = jm_map_get(&ix->map, parent, site);
    if (idx != JM_NONE) return idx;
    if (jm_grow((void **)&t->nodes, &ix->cap, t->count + 1, sizeof(jm_node)) != 0) return JM_NONE;
    idx = t->count;
    if (jm_map_put(&ix->map, parent, site, idx) != 0) return JM_NONE;
    jm_node *p = &t->nodes[parent];
    node_init(&t->nodes[idx], site, parent, p->depth + 1);
    /* Prepend: O(1) however wide the fan-out (display sorts children anyway). */
    t->nodes[idx].next_sibling = p->first_child;
    p->first_child = idx;
    t->count++;
    return idx;
}

uint32_t jm_tree_find(const jm_tree *t, uint32_t parent, uint32_t site)
{
    const tree_index *ix = t->index;
    return ix ? jm_map_get(&ix->map, parent, site) : JM_NONE;
}

uint32_t jm_tree_child(jm_tree *t, uint32_t parent, uint32_t site)
{
    tree_index *ix = t->index;
    uint32_t idx = jm_map_get(&ix->map, parent, site);
    if (idx != JM_NONE) return idx;
    if (t->count >= ix->limit) site = JM_SITE_OTHER;          /* fold new paths per parent */
    if (t->count >= 2 * (uint64_t)ix->limit) parent = 0;       /* even the folds are full */
    if (t->nodes[parent].site == JM_SITE_OTHER) return parent; /* below a fold: the fold itself */
    return find_or_add(t, parent, site);
}

uint32_t jm_tree_wrap(jm_tree *t, uint32_t site)
{
    tree_index *ix = t->index;
    if (t->count + 1 >= ix->limit) return JM_NONE; /* near the limit: the caller merges (and folds) */
    if (jm_grow((void **)&t->nodes, &ix->cap, t->count + 1, sizeof(jm_node)) != 0) return JM_NONE;
    uint32_t old = t->nodes[0].first_child;
    for (uint32_t k = old; k != JM_NONE; k = t->nodes[k].next_sibling) jm_map_del(&ix->map, 0, t->nodes[k].site);
    t->nodes[0].first_child = JM_NONE;
    uint32_t c = find_or_add(t, 0, site);
    if (c == JM_NONE) return JM_NONE; /* cannot happen: room was made above */
    t->nodes[c].first_child = old;
    for (uint32_t k = old; k != JM_NONE; k = t->nodes[k].next_sibling) {
        t->nodes[k].parent = c;
        if (jm_map_put(&ix->map, c, t->nodes[k].site, k) != 0) return JM_NONE;
    }
    return c;
}

uint32_t jm_tree_limit(const jm_tree *t) { return ((const tree_index *)t->index)->limit; }

void jm_tree_set_limit(jm_tree *t, uint32_t limit) { ((tree_index *)t->index)->limit = limit ? limit : 1; }

void jm_node_add(jm_node *dst, const jm_node *src)
{
    dst->calls += src->calls;
    dst->incl_ns += src->incl_ns;
    dst->excl_ns += src->excl_ns;
    if (src->calls && src->min_ns < dst->min_ns) dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns) dst->max_ns = src->max_ns;
    dst->bytes += src->bytes;
    dst->errors += src->errors;
    dst->gc_ns += src->gc_ns;
    dst->gc_pauses += src->gc_pauses;
}

/* Work item of the iterative merge (hostile files can nest arbitrarily deep). */
typedef struct merge_item {
    uint32_t src, dst_parent;
} merge_item;

static int merge_walk(jm_tree *dst, const jm_tree *src, merge_item *first)
{
    merge_item *stack = malloc(64 * sizeof *stack);
    uint32_t n = 0, cap = 64;
    if (!stack) return -1;
    stack[n++] = *first;
    while (n) {
        merge_item it = stack[--n];
        const jm_node *s = &src->nodes[it.src];
        uint32_t d = jm_tree_child(dst, it.dst_parent, s->site);
        if (d == JM_NONE) goto oom;
        jm_node *dn = &dst->nodes[d];
        if (dn->site == JM_SITE_OTHER && s->site != JM_SITE_OTHER) {
            /* A fold keeps no structure: the whole source subtree becomes self time here. */
            jm_node leaf = *s;
            leaf.excl_ns = s->incl_ns;
            jm_node_add(dn, &leaf);
            dst->folded_calls += s->calls;
            continue;
        }
        jm_node_add(dn, s);
        for (uint32_t c = s->first_child; c != JM_NONE; c = src->nodes[c].next_sibling) {
            if (jm_grow((void **)&stack, &cap, n + 1, sizeof *stack) != 0) goto oom;
            stack[n++] = (merge_item){c, d};
        }
    }
    free(stack);
    return 0;
oom:
    free(stack);
    return -1;
}

int jm_tree_merge(jm_tree *dst, uint32_t dst_parent, const jm_tree *src, uint32_t src_node)
{
    merge_item it = {src_node, dst_parent};
    return merge_walk(dst, src, &it);
}

int jm_tree_merge_children(jm_tree *dst, uint32_t dst_node, const jm_tree *src)
{
    for (uint32_t c = src->nodes[0].first_child; c != JM_NONE; c = src->nodes[c].next_sibling)
        if (jm_tree_merge(dst, dst_node, src, c) != 0) return -1;
    dst->folded_calls += src->folded_calls;
    dst->unrecorded += src->unrecorded;
    return 0;
}

static _Thread_local const jm_node *sort_nodes;

static int by_incl_desc(const void *a, const void *b)
{
    const jm_node *x = &sort_nodes[*(const uint32_t *)a], *y = &sort_nodes[*(const uint32_t *)b];
    if (x->incl_ns != y->incl_ns) return x->incl_ns < y->incl_ns ? 1 : -1;
    return x->site < y->site ? -1 : x->site > y->site;
}

uint32_t jm_tree_children_sorted(const jm_tree *t, uint32_t node, uint32_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t c = t->nodes[node].first_child; c != JM_NONE; c = t->nodes[c].next_sibling) {
        if (n < cap) out[n] = c;
        n++;
    }
    uint32_t k = n < cap ? n : cap;
    sort_nodes = t->nodes;
    if (k > 1) qsort(out, k, sizeof *out, by_incl_desc);
    return n;
}

int jm_tree_site_times(const jm_tree *t, uint32_t nsites, uint64_t *top, uint64_t *self)
{
    if (!t->count) return 0;
    uint32_t *active = calloc(nsites ? nsites : 1, sizeof *active);  /* open nodes per site */
    uint32_t *stack = malloc((size_t)t->count * 2 * sizeof *stack); /* node*2 + exiting flag */
    if (!active || !stack) {
        free(active);
        free(stack);
        return -1;
    }
    size_t n = 0;
    for (uint32_t c = t->nodes[0].first_child; c != JM_NONE; c = t->nodes[c].next_sibling) stack[n++] = c * 2;
    while (n) {
        uint32_t item = stack[--n], idx = item / 2;
        const jm_node *nd = &t->nodes[idx];
        int known = nd->site > 0 && nd->site < nsites;
        if (item & 1) {
            if (known) active[nd->site]--;
            continue;
        }
        if (known) {
            if (self) self[nd->site] += nd->excl_ns;
            if (!active[nd->site]) top[nd->site] += nd->incl_ns;
            active[nd->site]++;
        }
        stack[n++] = item | 1;
        for (uint32_t c = nd->first_child; c != JM_NONE; c = t->nodes[c].next_sibling) stack[n++] = c * 2;
    }
    free(active);
    free(stack);
    return 0;
}
