/* Exact per-call-path aggregates: per thread, a node per distinct call path with calls,
 * total time and bytes, counted at every span end whether or not the span became an event
 * (sampled out, dropped by a full ring). The trees of every tool are built from them
 * (docs/file-format.md, block PATHS), so a lost event costs a tree nothing.
 *
 * Only the owner thread adds nodes and bumps values; the file sink reads them from the
 * collector thread: chunks are published before the count (release), never moved, and
 * freed only when the run ends (jg_paths_reset_retired_locked) or the thread re-arms. The
 * span end's fast path never comes here: it finds the node cached in its depth's entry
 * (span.c); this file is the miss. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_CHUNKS (JG_PATHS_MAX / JG_PATH_CHUNK)

struct jg_paths {
    _Atomic(uint32_t) count;                 /* nodes published */
    uint32_t thread;
    _Atomic(jg_path *) chunks[MAX_CHUNKS];
    /* not jg_idmap (containers.h): 4-byte slots, (parent, site) compared inline, no hash or callback per probe */
    uint32_t *hash;                          /* owner only: node indices, 0 = empty slot */
    uint32_t hash_cap;                       /* power of two */
    struct jg_paths *next_retired;
};

static jg_paths *retired_head; /* under the threads lock */

const jg_path *jg_paths_node(const jg_paths *p, uint32_t i)
{
    jg_path *c = atomic_load_explicit(&((jg_paths *)p)->chunks[i >> JG_PATH_CHUNK_BITS], memory_order_acquire);
    return c ? &c[i & (JG_PATH_CHUNK - 1)] : NULL;
}

static void paths_free(jg_paths *p)
{
    if (!p) return;
    for (uint32_t c = 0; c < MAX_CHUNKS; c++) free(atomic_load_explicit(&p->chunks[c], memory_order_relaxed));
    free(p->hash);
    free(p);
}

/* A table with the root (0) and the overflow bucket (1). */
static jg_paths *paths_new(uint32_t thread)
{
    jg_paths *p = calloc(1, sizeof *p);
    jg_path *c = calloc(JG_PATH_CHUNK, sizeof *c);
    uint32_t *h = calloc(64, sizeof *h);
    if (!p || !c || !h) {
        free(p);
        free(c);
        free(h);
        return NULL;
    }
    p->thread = thread;
    p->hash = h;
    p->hash_cap = 64;
    atomic_store_explicit(&p->chunks[0], c, memory_order_release);
    atomic_store_explicit(&p->count, 2, memory_order_release);
    return p;
}

static inline uint32_t hash_of(uint32_t parent, jager_site site)
{
    uint64_t k = ((uint64_t)parent << 32 | site) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(k >> 32);
}

static jg_path *node_at(jg_paths *p, uint32_t i)
{
    return &atomic_load_explicit(&p->chunks[i >> JG_PATH_CHUNK_BITS], memory_order_relaxed)[i & (JG_PATH_CHUNK - 1)];
}

/* Double the hash table (at half load); on failure keep the old one (it still has room). */
static void hash_grow(jg_paths *p)
{
    uint32_t cap = p->hash_cap * 2;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h) return;
    uint32_t n = atomic_load_explicit(&p->count, memory_order_relaxed);
    for (uint32_t i = 2; i < n; i++) {
        const jg_path *x = node_at(p, i);
        uint32_t s = hash_of(x->parent, x->site) & (cap - 1);
        while (h[s]) s = (s + 1) & (cap - 1);
        h[s] = i;
    }
    free(p->hash);
    p->hash = h;
    p->hash_cap = cap;
}

/* The child \p site of node \p parent: found, added, or the overflow bucket when the table
 * is full (or out of memory) and for everything below the bucket. */
static uint32_t child_of(jg_paths *p, uint32_t parent, jager_site site)
{
    if (parent == JG_PATH_OVERFLOW) return JG_PATH_OVERFLOW;
    uint32_t mask = p->hash_cap - 1, s = hash_of(parent, site) & mask;
    for (uint32_t i; (i = p->hash[s]) != 0; s = (s + 1) & mask) {
        const jg_path *x = node_at(p, i);
        if (x->parent == parent && x->site == site) return i;
    }
    uint32_t n = atomic_load_explicit(&p->count, memory_order_relaxed);
    if (n >= JG_PATHS_MAX) return JG_PATH_OVERFLOW;
    if ((uint64_t)(n + 1) * 2 > p->hash_cap) { /* keep the load at most 1/2 */
        hash_grow(p);
        if ((uint64_t)(n + 1) * 4 > (uint64_t)p->hash_cap * 3) return JG_PATH_OVERFLOW;
        mask = p->hash_cap - 1;
        s = hash_of(parent, site) & mask;
        while (p->hash[s]) s = (s + 1) & mask;
    }
    uint32_t c = n >> JG_PATH_CHUNK_BITS;
    if (!atomic_load_explicit(&p->chunks[c], memory_order_relaxed)) {
        jg_path *chunk = calloc(JG_PATH_CHUNK, sizeof *chunk);
        if (!chunk) return JG_PATH_OVERFLOW;
        atomic_store_explicit(&p->chunks[c], chunk, memory_order_release);
    }
    jg_path *x = node_at(p, n);
    x->parent = parent;
    x->site = site;
    p->hash[s] = n;
    atomic_store_explicit(&p->count, n + 1, memory_order_release);
    return n;
}

/* The cached path node of the open span at depth \p d (0 when not cached: its id is not
 * the one the cache was filled for), and caching one. */
static inline uint32_t stack_node(const jg_tls *t, uint32_t d, uint32_t id)
{
    if (d < JG_MAX_DEPTH) return t->stack_node_id[d] == id ? t->stack_node[d] : 0;
    const jg_deep_entry *e = &t->deep[d - JG_MAX_DEPTH];
    return e->node_id == id ? e->node : 0;
}
static inline void stack_node_set(jg_tls *t, uint32_t d, uint32_t id, uint32_t node)
{
    if (d < JG_MAX_DEPTH) {
        t->stack_node[d] = node;
        t->stack_node_id[d] = id;
    } else {
        t->deep[d - JG_MAX_DEPTH].node = node;
        t->deep[d - JG_MAX_DEPTH].node_id = id;
    }
}

/* The node of the open span at stack position \p q: the path of its task's spans below it
 * (jager_task_set: tasks interleaved on a thread each keep their own tree, as each span's
 * parent is its task's innermost open span), from the deepest of them whose node is
 * cached. Without tasks every entry is the task 0's, so this is the whole stack below. */
static uint32_t entry_node(jg_tls *t, jg_paths *p, uint32_t q)
{
    /* A task that moved here has foreign entries below its own (task_move.c): the same
     * task's, their sites the chain it had where it began them. */
    uint64_t task = jg_stack_task_real(t, q);
    int64_t j = q;
    uint32_t node = 0;
    while (j >= 0 && !(node = stack_node(t, (uint32_t)j, jg_stack_id(t, (uint32_t)j))))
        j = jg_stack_top_of_task_x(t, j - 1, task);
    if (node && (uint32_t)j == q) return node;
    for (uint32_t i = j >= 0 ? (uint32_t)j + 1 : 0; i <= q; i++) {
        if (jg_stack_task_real(t, i) != task) continue;
        node = child_of(p, node, jg_stack_site(t, i) & ~JG_SITE_FOREIGN);
        stack_node_set(t, i, jg_stack_id(t, i), node);
    }
    return node;
}

jg_path *jg_path_resolve(jg_tls *t, uint32_t d, jager_site site, uint32_t parent)
{
    jg_paths *p = t->paths;
    if (!p) {
        if (!(p = paths_new(t->thread))) return &t->path_void;
        /* published to the file sink's reader (visit_live, on the collector thread) whole */
        __atomic_store_n(&t->paths, p, __ATOMIC_RELEASE);
    }
    if (d == JG_DEPTH_UNKNOWN) return node_at(p, JG_PATH_OVERFLOW);
    /* The parent: the innermost open span below \p d with its id (none: a root span, as a
     * task's first span or one recorded from another thread's begin). */
    uint32_t k = parent ? d : 0;
    while (k > 0 && jg_stack_id(t, k - 1) != parent) k--;
    uint32_t node = k ? entry_node(t, p, k - 1) : 0; /* node 0 is the root, never an open span's */
    return node_at(p, child_of(p, node, site));
}

void jg_paths_rearm(jg_tls *t)
{
    paths_free(t->paths);
    t->paths = NULL;
    /* Cached nodes point into the freed table: no depth's cache may hit again. */
    memset(t->end_cache, 0, sizeof t->end_cache);
    memset(t->stack_node_id, 0, sizeof t->stack_node_id);
    if (t->deep) memset(t->deep, 0, (size_t)t->deep_cap * sizeof *t->deep);
}

void jg_paths_retire_locked(jg_tls *t)
{
    jg_paths *p = t->paths;
    t->paths = NULL;
    if (!p) return;
    if (t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed)) {
        paths_free(p);
        return;
    }
    free(p->hash); /* nobody adds nodes any more */
    p->hash = NULL;
    p->next_retired = retired_head;
    retired_head = p;
}

void jg_paths_reset_retired_locked(void)
{
    while (retired_head) {
        jg_paths *n = retired_head->next_retired;
        paths_free(retired_head);
        retired_head = n;
    }
}

typedef struct foreach_arg {
    void (*fn)(const jg_paths_view *v, void *arg);
    void *arg;
} foreach_arg;

static void visit(const jg_paths *p, const foreach_arg *fa)
{
    if (!p) return;
    jg_paths_view v = {p->thread, atomic_load_explicit(&((jg_paths *)p)->count, memory_order_acquire), p};
    fa->fn(&v, fa->arg);
}

/* The owner publishes its table lazily at its first span end (jg_path_resolve), outside
 * the threads lock this runs under; setting it back to NULL happens under that lock. */
static void visit_live(jg_tls *t, void *arg) { visit(__atomic_load_n(&t->paths, __ATOMIC_ACQUIRE), arg); }

/* Live tables first (jg_tls_foreach takes the threads lock), then the retired ones under
 * the same lock: a thread exiting in between moves its table from one list to the other,
 * so it may be visited twice or (never) not at all; the writer keeps the first per thread. */
void jg_paths_foreach(void (*fn)(const jg_paths_view *v, void *arg), void *arg)
{
    foreach_arg fa = {fn, arg};
    jg_tls_foreach(visit_live, &fa);
    jg_rings_lock();
    for (const jg_paths *p = retired_head; p; p = p->next_retired) visit(p, &fa);
    jg_rings_unlock();
}
