/* model_priv.h — the analysis model's private building blocks: a hash map keyed by two
 * integers (model_map.h), call-tree operations and the per-event building state. Only model*.c use it. */
#ifndef JAGER_TOOLS_MODEL_PRIV_H
#define JAGER_TOOLS_MODEL_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#include "model_map.h" /* the map (a, b) → uint32, public: the export and report layers use it too */


/* ---- model_samples.c ---- */
void jm_samples_add(jm_model *m, uint64_t stack, uint64_t site, uint64_t weight, uint64_t cpu_ns);
/** By function, symbolized from the reader's tables. \return 0 or -1 (OOM). */
int jm_samples_finish(jm_model *m);
void jm_samples_free(jm_model *m);
/* A 64-bit finaliser (splitmix64's) for the second passes' small hash tables keyed by
 * thread << 32 | span id. */
static inline uint64_t jm_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* model_rusage.c: a second pass when the file has rusage.thread readings */
int jm_rusage_finish(jm_model *m);
/* model_split.c: a second pass for sites with a tail */
int jm_split_finish(jm_model *m);
/* model_attrs.c: a second pass when the file has span attributes */
int jm_attrs_finish(jm_model *m);
void jm_attrs_free(jm_model *m);
void jm_split_free(jm_model *m);
void jm_rusage_free(jm_model *m);
struct jm_method_pass;
/* model_methods.c: logs and span errors by code.method, counted in the first pass */
void jm_methods_add(jm_model *m, const jager_event *ev);
void jm_methods_finish(jm_model *m);
void jm_methods_free(jm_model *m);
void jm_methods_pass_free(struct jm_method_pass *mp);

/* ---- model_tree.c ---- */
/** Initialise a tree with a root node. \return 0 or -1. */
int jm_tree_init(jm_tree *t, uint32_t thread, uint32_t limit);
void jm_tree_free(jm_tree *t);
/** Empty a tree down to a fresh root (for reuse as a pending subtree). */
void jm_tree_reset(jm_tree *t);
/**
 * The child of \p parent for \p site, created if needed. Past the node cap new paths go
 * to the parent's JM_SITE_OTHER child, and past twice the cap to the root's.
 * \return node index, or JM_NONE on out of memory.
 */
uint32_t jm_tree_child(jm_tree *t, uint32_t parent, uint32_t site);
/** Put every top-level node of \p t under one new top-level node of \p site, in place (the
 *  pending children of a span become its subtree: O(top-level nodes), not a copy; depths
 *  in such a forest are not kept, merging recomputes them). \return the new node, or
 *  JM_NONE near the node limit (merge instead). */
uint32_t jm_tree_wrap(jm_tree *t, uint32_t site);
/** The node cap of \p t (jm_tree_init's limit); jm_tree_set_limit changes it (lowered for
 *  one merge into a fresh forest, see add_span: a deep chain at the cap). */
uint32_t jm_tree_limit(const jm_tree *t);
void jm_tree_set_limit(jm_tree *t, uint32_t limit);
/** Add one node's numbers into another (calls, times, min/max, bytes, errors, GC). */
void jm_node_add(jm_node *dst, const jm_node *src);
/**
 * Merge the subtree of \p src rooted at \p src_node into \p dst under \p dst_parent,
 * path by path (src_node itself becomes/joins a child of dst_parent). A folded
 * (JM_SITE_OTHER) destination absorbs the whole source subtree as one leaf.
 * \return 0 or -1 (OOM).
 */
int jm_tree_merge(jm_tree *dst, uint32_t dst_parent, const jm_tree *src, uint32_t src_node);
/** The existing child of \p parent for \p site, or JM_NONE. */
uint32_t jm_tree_find(const jm_tree *t, uint32_t parent, uint32_t site);

/* ---- model_paths.c ---- */
/** Rebuild every thread's tree from the file's exact call paths when it has them (format
 *  1.1, cleanly closed), keeping the event-derived min/max, errors and GC of each path.
 *  Call before the trees are merged. \return 0 or -1 (OOM). */
int jm_paths_apply(jm_model *m);
/** The model's thread of index \p thread, added when no event named it. NULL on OOM. */
jm_thread *jm_model_thread(jm_model *m, uint32_t thread);

/** Merge the children of src's root under dst's node \p dst_node. \return 0 or -1. */
int jm_tree_merge_children(jm_tree *dst, uint32_t dst_node, const jm_tree *src);

/* ---- model.c: building state ---- */

/** A GC pause waiting for the spans that enclose it (same thread). */
typedef struct jm_pause {
    uint64_t start, end;
    jager_stack_id stack;
    uint32_t attributed; /* overlapped at least one span */
    uint32_t requested;  /* a requested collection (GC.gc(): gc.pause requested ≠ 0) */
} jm_pause;

/** Children of a still-open span, assembled before the span's own record arrives. */
typedef struct jm_pending {
    uint32_t span_id;
    jm_tree *forest;     /* root = the open span (site unknown yet); children below */
} jm_pending;

/** An error count of a still-open span. */
typedef struct jm_open_error {
    uint32_t span_id;
    uint32_t count : 31;
    uint32_t moved : 1; /* set on another thread (JAGER_SPAN_REF_MOVED): only its span takes it */
} jm_open_error;

typedef struct jm_thread_state {
    int present;
    uint32_t slot;       /* index into m->threads */
    jm_pending *pending;
    uint32_t npending, cap_pending;
    jm_pause *pauses;
    uint32_t npauses, cap_pauses;
    jm_pause *stalls;    /* gc.stall of this thread: the same pauses, in span order */
    uint32_t nstalls, cap_stalls;
    jm_open_error *errs;
    uint32_t nerrs, cap_errs;
    int tasks;           /* tasks interleave on this thread (a JAGER_EV_TASK record was seen):
                            a span's end leaves other spans' pending entries alone */
} jm_thread_state;

/** Per-site numbers gathered from events. */
typedef struct jm_site_acc {
    uint64_t calls, total_ns, min_ns, max_ns, bytes, errors;
    uint64_t gc_ns, gc_pauses;
    uint64_t *hist;      /* JAGER_HIST_BUCKETS, allocated at the site's first span */
    uint64_t *hist_nogc; /* the same with each call's GC pause time taken out; allocated at
                            the site's first call that overlapped a pause */
    uint64_t site_time_gc_ns, site_time_pauses; /* gc.site_time */
    uint64_t req_ns, req_pauses; /* overlap of requested collections (GC.gc()) */
    uint32_t role;       /* JM_SITE_ROLE_* from site_role events */
    uint32_t region;     /* a work or join-barrier site's region site (site_role's region), 0 none */
    int seen;
} jm_site_acc;

/** What a plugin type id means to the model (resolved once per type). */
enum jm_role {
    JM_ROLE_UNRESOLVED = 0,
    JM_ROLE_OTHER,
    JM_ROLE_FAMILIAR, /* a gc.* / dispatch.* type the model needs nothing from (e.g. dispatch.summary) */
    JM_ROLE_GC_PAUSE,
    JM_ROLE_GC_SITE_TIME,
    JM_ROLE_GC_STALL,
    JM_ROLE_SIGNATURE,
    JM_ROLE_COMPILE,
    JM_ROLE_SPECS,
    JM_ROLE_INSTABILITY,
    JM_ROLE_CUDA_KERNEL,
    JM_ROLE_CUDA_LAUNCH,
    JM_ROLE_CUDA_MEMCPY,
    JM_ROLE_CUDA_SUMMARY,
    JM_ROLE_CUDA_DEVICE,
    JM_ROLE_SITE_ROLE, /* "<plugin>.site_role" (openmp.site_role) */
    JM_ROLE_SAMPLE,
    JM_ROLE_COUNT
};
#define JM_ROLE_FIELDS 16

typedef struct jm_priv {
    jm_thread_state *ts;
    uint32_t nts;
    jm_site_acc *acc;
    uint32_t nacc;
    uint32_t cap_threads, cap_sites;

    /* Free pending subtrees for reuse. */
    jm_tree **pool;
    uint32_t npool, cap_pool;

    uint64_t hist_lower[JAGER_HIST_BUCKETS];

    uint8_t role[65536];
    int8_t fields[JM_ROLE_COUNT][JM_ROLE_FIELDS]; /* per role: field positions (-1 absent) */
    uint64_t type_counts[65536];

    jm_map gc_stack_map, site_stack_map, sig_map, unstable_map, compile_map, method_map,
        msg_map, cuda_name_map, cuda_site_map;
    uint32_t cap_gc_stacks, cap_site_stacks, cap_sigs, cap_unstable, cap_compiles, cap_methods,
        cap_msgs, cap_counters, cap_cuda_names, cap_cuda_sites;
    int have_stalls; /* a gc.stall was seen: spans take their GC time from stalls */
    /* gc.pause by (innermost open site, stack, requested): model_gc.c credits them to the
     * site and the sites enclosing it (the trigger stacks of every region). */
    jm_site_stack *psites;
    uint32_t npsites, cap_psites;
    jm_map psite_map;
    struct jm_method_pass *code_methods; /* model_methods.c while reading; NULL after finish */
    int oom;
} jm_priv;

/* ---- model_gc.c ---- */

/** Count one gc.pause under its innermost open site (the pause's `site` field). */
void jm_gc_pause_site(jm_model *m, jager_site site, jager_stack_id stack, int requested, uint64_t dur);
/** When pauses named their site: rebuild m->site_stacks and the sites' requested GC time
 *  from them, over the merged tree (after merge_threads, before build_sites). \return 0 or -1. */
int jm_gc_attribute_sites(jm_model *m);

/* ---- model_cuda.c ---- */
/** A cuda.* record of role \p role (JM_ROLE_CUDA_*); fld(f) reads its field f. */
void jm_cuda_add(jm_model *m, int role, const jager_event *ev, const uint64_t *vals);
/** Sort the per-name and per-site tables (at finish). */
void jm_cuda_finish(jm_model *m);

/* ---- model_finish.c ---- */
jager_status jm_finish_impl(jm_model *m);

#endif
