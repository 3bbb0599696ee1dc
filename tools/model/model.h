/*
 * model.h — the analysis model every `jager` command that interprets a recording builds on
 * (summary, hunt, report).
 *
 * One streaming pass over a recording builds memory-bounded aggregates; no event is kept.
 *
 *   - per thread, the span call tree: spans of a thread reach the file in *end* order
 *     (children before their parent), so each span's subtree is assembled from its
 *     children by span_id/parent_id and merged, path-keyed, into the thread's tree when
 *     the top-level span ends. A node is one call path (root → … → site) with calls,
 *     inclusive/exclusive ns, bytes, errors and the GC time that overlapped it;
 *   - the merged tree (all threads, same path keys);
 *   - per-site totals: exact ones from the file's STATS block when it covers the site,
 *     otherwise from the span events (log histogram for percentiles);
 *   - GC pauses (`gc.pause`) by triggering stack and by site, GC time inside spans
 *     (`gc.site_time` per site when present; per call path the overlap of `gc.stall`
 *     records — written into the stalled thread's ring, so they precede the spans they
 *     stalled — or, in recordings without them, of `gc.pause` with spans on the same thread);
 *   - Julia dispatch telemetry: signatures per site, instability verdicts, compiles,
 *     the specialization census (`dispatch.*`, docs/event-types.md);
 *   - logs by severity, exceptions (span_error) per site with their messages, counters,
 *     drops, marks, every plugin event type counted by name (known or not).
 *
 * One pass is enough: jager_reader_next() absorbs table blocks as they come (strings and
 * sites resolve when their event arrives), stack ids are kept as ids, and stacks, symbols
 * and statistics (written late) are looked up in jm_model_finish(), after the last event — no jager_reader_load_tables() pass, which
 * would decompress the file twice.
 *
 * Memory: every table is capped (jm_options); what does not fit is folded into an "other"
 * bucket (site JM_SITE_OTHER in trees, *_other counters elsewhere) and counted, never lost.
 *
 * Lifetime: a model borrows strings from its reader (names, files, signatures): free the
 * model before closing the reader. Not thread-safe; one model per thread.
 *
 * Typical use (one pass, as `jager summary` does):
 * \code
 * jager_reader *r = cli_open("summary", path);
 * jm_model *m; int rc;
 * if (jm_model_build(r, NULL, &m, &rc) != JAGER_OK) { ... out of memory ... }
 * ... m->merged, m->sites[1..m->nsites-1], m->gc ...
 * jm_model_free(m); int exit_code = cli_finish("summary", path, r, rc); jager_reader_close(r);
 * \endcode
 * Or feed events you already read (the report's single pass): jm_model_new(),
 * jm_model_add() per event, jm_model_finish(), then read the same fields.
 */
#ifndef JAGER_TOOLS_MODEL_H
#define JAGER_TOOLS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "jager_reader.h"

/* ------------------------------------------------------------------------------------ */
/* Span records                                                                         */

/** A span record as every tool reads it, a JAGER_EV_SPAN or a JAGER_EV_SPAN_X (format 1.2:
 *  a span of a task that moved between threads). Its \c span_id is \c thread's id of it,
 *  its \c parent_id \c parent_thread's id of its parent: a plain span's are both the
 *  recording thread; a span_x's are its begin thread and its parent's. Keys of spans and
 *  parents are (thread, id) pairs in these numberings. */
typedef struct jm_span_view {
    const jager_rec_span *rec;  /**< the fields of jager_rec_span (a span_x has them at the same offsets) */
    uint32_t thread;            /**< the thread that numbers span_id (and whose tree holds it) */
    uint32_t parent_thread;     /**< the thread that numbers parent_id */
    int moved;                  /**< 1 for a JAGER_EV_SPAN_X */
} jm_span_view;

/** \p ev as a span: 1 and \p out filled for a whole span or span_x record, else 0. */
static inline int jm_span_of(const jager_event *ev, jm_span_view *out)
{
    size_t bytes = (size_t)ev->rec->words * 8u;
    if (ev->type == JAGER_EV_SPAN && bytes >= sizeof(jager_rec_span)) {
        *out = (jm_span_view){(const jager_rec_span *)ev->rec, ev->thread, ev->thread, 0};
        return 1;
    }
    if (ev->type == JAGER_EV_SPAN_X && bytes >= sizeof(jager_rec_span_x)) {
        const jager_rec_span_x *x = (const jager_rec_span_x *)ev->rec;
        *out = (jm_span_view){(const jager_rec_span *)ev->rec, x->begin_thread, x->parent_thread, 1};
        return 1;
    }
    return 0;
}

/** The span a JAGER_EV_SPAN_ATTR or JAGER_EV_SPAN_ERROR record \p ev names (its header's aux
 *  and its \p span_id): its site as the return value, and in \p thread the thread that
 *  numbers \p span_id — the recording thread, or with JAGER_SPAN_REF_MOVED (format 1.2: the
 *  task moved here) the span's begin thread, so the record joins the span's span_x. */
static inline uint32_t jm_span_ref(const jager_event *ev, uint32_t *thread)
{
    uint32_t aux = ev->rec->aux;
    *thread = aux & JAGER_SPAN_REF_MOVED ? JAGER_SPAN_REF_THREAD(aux) : ev->thread;
    return aux & JAGER_SPAN_REF_MOVED ? JAGER_SPAN_REF_SITE(aux) : aux;
}

/* ------------------------------------------------------------------------------------ */
/* Options                                                                              */

/** Caps that keep memory bounded on huge or hostile files. 0 in a field means the default. */
typedef struct jm_options {
    uint32_t struct_size;     /**< sizeof(jm_options) */
    uint32_t max_tree_nodes;  /**< distinct call paths per tree (default 65536) */
    uint32_t max_gc_stacks;   /**< distinct GC trigger stacks (default 4096) */
    uint32_t max_site_stacks; /**< distinct (site, trigger stack) pairs (default 65536) */
    uint32_t max_signatures;  /**< distinct (site, signature) pairs, all dispatch tables (default 65536) */
    uint32_t max_messages;    /**< distinct exception messages kept (default 1024) */
    uint32_t max_pending_gc;  /**< GC pauses per thread awaiting their enclosing spans (default 65536) */
    uint32_t events_only;     /**< 1: trees from the events fed even when the file has exact call paths
                                   (for callers that feed events other than the file's; default 0) */
} jm_options;

/** Fill \p o with the defaults. */
void jm_options_default(jm_options *o);

/* ------------------------------------------------------------------------------------ */
/* Span call trees                                                                       */

#define JM_NONE UINT32_MAX                      /**< "no node" in parent/child/sibling links */
#define JM_SITE_OTHER UINT32_MAX                /**< node folding call paths beyond the node cap */
#define JM_SITE_UNRECORDED (UINT32_MAX - 1u)    /**< stands for enclosing spans whose record is missing
                                                     (sampled out, dropped, or still open at a crash) */

/** One call path. Children are linked in no particular order (sort them for display). */
typedef struct jm_node {
    uint32_t site;          /**< jager_site, 0 for the root, or JM_SITE_OTHER / JM_SITE_UNRECORDED */
    uint32_t parent;        /**< node index, JM_NONE for the root */
    uint32_t first_child;   /**< node index or JM_NONE */
    uint32_t next_sibling;  /**< node index or JM_NONE */
    uint32_t depth;         /**< 0 for the root */
    uint32_t flags;         /**< JM_NODE_* */
    uint64_t calls;         /**< span events on this path */
    uint64_t incl_ns;       /**< sum of their durations */
    uint64_t excl_ns;       /**< incl_ns minus the children's incl_ns (per call, never below 0) */
    uint64_t min_ns, max_ns;/**< of one call */
    uint64_t bytes;         /**< allocated inside (jager_span_end_bytes), inclusive */
    uint64_t errors;        /**< span_error records of spans on this path */
    uint64_t gc_ns;         /**< GC pause time overlapping these spans (inclusive) */
    uint64_t gc_pauses;     /**< pauses overlapping them */
} jm_node;

/* jm_node.flags: what the file's exact aggregates say about a node built from events. */
#define JM_NODE_PARTIAL 1u      /**< its site lost span events (the STATS block counts more calls):
                                     calls and times of this row are short */
#define JM_NODE_SELF_PARTIAL 2u /**< a child's site lost events: this row's self time is too high */

/** A path-keyed call tree. nodes[0] is the root; its incl_ns is the sum of top-level spans. */
typedef struct jm_tree {
    uint32_t thread;        /**< thread index; 0 for the merged tree */
    uint32_t count;         /**< nodes in use */
    jm_node *nodes;
    uint64_t folded_calls;  /**< span calls that landed in JM_SITE_OTHER nodes (node cap reached) */
    uint64_t unrecorded;    /**< subtrees whose enclosing span record was missing */
    void *index;            /**< private: (parent, site) → node */
} jm_tree;

/** Children of \p node sorted by incl_ns, descending (heaviest first).
 *  \return the number of children; writes min(that, \p cap) indices — pass cap ≥ the count for a full sort. */
uint32_t jm_tree_children_sorted(const jm_tree *t, uint32_t node, uint32_t *out, uint32_t cap);
/** Per site of \p t (ids below \p nsites): add the inclusive time of its outermost nodes —
 *  not counted twice under recursion — into top[site] and, when \p self is not NULL, its
 *  exclusive time into self[site]. \return 0 or -1 (out of memory). */
int jm_tree_site_times(const jm_tree *t, uint32_t nsites, uint64_t *top, uint64_t *self);

/* ------------------------------------------------------------------------------------ */
/* Sites                                                                                 */

#define JM_TAIL_FACTOR 4

/** Everything known about one site. Index m->sites by site id (dense from 1; [0] unused). */
typedef struct jm_site {
    jager_site id;
    const char *name;       /**< never NULL ("?" if the site table lacks it) */
    const char *file;       /**< never NULL ("" if unknown) */
    uint32_t line;
    int exact;              /**< 1: totals below come from the file's STATS block */
    uint64_t calls, total_ns, min_ns, max_ns;
    double mean_ns;
    uint64_t p50_ns, p90_ns, p99_ns;
    uint64_t bytes, errors;
    /* The slow tail, from the log histogram (STATS, else events): calls at least
     * JM_TAIL_FACTOR × the median, and the time they took beyond the median. GC pause
     * time inside calls is left out when pauses overlapped the site (a histogram of
     * durations less their GC time, from the span events). */
    uint64_t tail_calls;
    double tail_excess_ns;
    /* From the span events (sampling may make these smaller than the exact totals). */
    uint64_t ev_calls, ev_total_ns;
    uint64_t self_ns;       /**< exclusive time summed over every tree node of this site */
    uint64_t top_ns;        /**< inclusive time not counted twice under recursion (outermost spans of the site) */
    uint32_t tree_exact;    /**< 1: self_ns and top_ns come from the exact call paths (no scaling to the
                                 exact total needed); 0: from span events, possibly sampled */
    uint64_t gc_ns;         /**< GC time inside spans of this site (gc.site_time if present, else overlap) */
    uint64_t gc_pauses;
    /* The part of gc_ns/gc_pauses that were requested collections (GC.gc(), gc.pause
     * requested ≠ 0), from the overlap of pauses with spans: not allocation pressure. */
    uint64_t gc_requested_ns, gc_requested_pauses;
    /* Slices of the sorted tables below that belong to this site (count 0 when none). */
    uint32_t sig_first, sig_count;       /**< m->signatures */
    uint32_t unstable_first, unstable_count; /**< m->instabilities */
    uint32_t msg_first, msg_count;       /**< m->messages */
    uint32_t trig_first, trig_count;     /**< m->site_stacks (GC triggers inside this site) */
    uint64_t msg_other;                  /**< span errors whose message was not kept (cap) */
    uint32_t role;          /**< JM_SITE_ROLE_* bits from "<plugin>.site_role" events (0: none) */
    /* From STATS (1.1): calls whose events were left out on purpose by the sampling mode
     * (never a loss), and calls whose events were lost (no ring, ring full). */
    uint64_t thinned, dropped;
    uint64_t sample_1_in;   /**< thinned site: about 1 in this many calls has its event (0: not thinned) */
} jm_site;

/* jm_site.role: what a plugin said the site measures (openmp.site_role, docs/openmp.md).
 * Tools decide "is this a wait" by role when KNOWN is set, by name only otherwise. */
#define JM_SITE_ROLE_KNOWN 1u  /**< a site_role event named this site */
#define JM_SITE_ROLE_WAIT 2u   /**< role barrier_wait or lock_wait */
#define JM_SITE_ROLE_REGION 4u /**< role region (a parallel region on its encountering thread) */
#define JM_SITE_ROLE_WORK 8u   /**< role work (one thread's share of a region) */

/* ------------------------------------------------------------------------------------ */
/* GC                                                                                    */

/** Pauses triggered from one allocation stack. */
typedef struct jm_gc_stack {
    jager_stack_id stack;   /**< 0: no stack recorded */
    uint64_t pauses, total_ns, max_ns;
    int requested;          /**< 1: requested collections (GC.gc()) from this stack */
} jm_gc_stack;

/** GC pauses triggered from one stack while spans of one site were open. */
typedef struct jm_site_stack {
    jager_site site;
    jager_stack_id stack;
    uint64_t pauses, total_ns;
    int requested;          /**< 1: requested collections (GC.gc()) from this stack, 0: automatic */
} jm_site_stack;

typedef struct jm_gc {
    uint64_t pauses, total_ns, max_ns;
    uint64_t full_pauses;         /**< full sweeps (sum of gc.pause `full`: a pause can hold two) */
    uint64_t requested_pauses, requested_ns; /**< collections the program asked for (GC.gc()) */
    uint64_t allocd_bytes, freed_bytes;
    uint64_t max_live_bytes;
    int has_site_time;            /**< gc.site_time events were present (site gc_ns exact) */
    jm_gc_stack *stacks;          /**< sorted by total_ns, descending */
    uint32_t nstacks;
    uint64_t other_pauses, other_ns; /**< pauses of stacks beyond the cap */
    uint64_t unattributed_ns;     /**< pause time on threads/intervals with no enclosing span */
} jm_gc;

/* ------------------------------------------------------------------------------------ */
/* Julia dispatch                                                                        */

/** Calls of one site with one argument signature (dispatch.signature). */
typedef struct jm_signature {
    jager_site site;
    const char *signature;  /**< "Tuple{typeof(f), Float64}" */
    uint64_t calls;         /**< exact count from the census at stop (0: seen, count unknown) */
} jm_signature;

/** An instability verdict (dispatch.instability), merged per (site, signature). */
typedef struct jm_instability {
    jager_site site;
    const char *signature;
    uint64_t flags;         /**< 1 runtime dispatch, 2 non-concrete union, 4 Core.Box, 8 non-concrete return */
    const char *reason;     /**< e.g. "runtime dispatch on p.weight::Real" ("" if none) */
    const char *chain;      /**< call chain text ("" if none) */
    uint64_t reports;
} jm_instability;

/** Compiles of one root signature (dispatch.compile). */
typedef struct jm_compile {
    const char *signature;
    uint64_t count, codegen_ns, inference_ns;
} jm_compile;

/** One method's specialization census (dispatch.specializations; the largest count seen). */
typedef struct jm_method_specs {
    const char *method;     /**< "f(x::Real) in Main at file:line" */
    const char *file;
    uint32_t line;
    uint64_t count;
} jm_method_specs;

/* ------------------------------------------------------------------------------------ */
/* Other tables                                                                          */

/** One distinct exception message of a site (span_error). */
typedef struct jm_message {
    jager_site site;
    char *text;             /**< owned copy, cut at 512 bytes, may contain any byte: escape it */
    uint64_t count;
    uint64_t first_ns;
} jm_message;

typedef struct jm_counter {
    jager_counter id;
    const char *name, *unit;
    uint32_t kind;          /**< jager_counter_kind */
    uint64_t samples;
    double first, last, min, max; /**< first and last by time (all threads), min and max of all samples */
    double total;           /**< monotonic: the latest sample's running total (the process's, all
                                 threads together: not a sum over threads); gauge: the last level */
    uint64_t first_ns, last_ns;
} jm_counter;

/** Events of one type (core or plugin), counted by type name. */
typedef struct jm_type_count {
    uint16_t type;
    uint16_t known;         /**< 1: a core type, or one of the gc/dispatch plugins' (interpreted, or
                                 known and not needed, like dispatch.summary); 0: a plugin no
                                 rule knows (hunt reports those generically) */
    const char *name;       /**< schema name, "type#<id>" when the schema lacks it */
    uint64_t count;
} jm_type_count;

typedef struct jm_thread {
    uint32_t index;
    uint64_t os_tid;
    const char *name;       /**< "" if unnamed */
    uint64_t events, spans;
    uint64_t first_ns, last_ns;   /**< first start .. last end of its events, within the run */
    int helper;             /**< 1: one of Jäger's own threads ("jager-…"), not program time */
    jm_tree tree;
} jm_thread;

/** 1 if a thread of this name is one of Jäger's own (the collector "jager-collector", the
 *  gc plugin's "jager-gc": every helper thread of the core and its plugins is named "jager-…"). */
int jm_thread_is_helper(const char *name);

/** Log severities folded to the OpenTelemetry ranges. */
enum { JM_SEV_TRACE, JM_SEV_DEBUG, JM_SEV_INFO, JM_SEV_WARN, JM_SEV_ERROR, JM_SEV_FATAL, JM_SEV_COUNT };

/** GPU time of one kernel name (cuda.kernel). */
typedef struct jm_cuda_kernel {
    const char *name;        /**< borrowed from the reader */
    uint64_t count, total_ns, max_ns;
    uint64_t small;          /**< executions with fewer than JM_CUDA_SMALL_THREADS threads */
    /* the shape of its first execution (theoretical occupancy) */
    uint64_t block_threads, grid_blocks, registers, shared_bytes;
} jm_cuda_kernel;

/** What one launching site (the innermost span open at the launch) sent to the GPU. */
typedef struct jm_cuda_site {
    jager_site site;         /**< 0: launched outside any span */
    uint64_t launches;       /**< kernel and graph launch calls (cuda.launch kind 1, 2) */
    uint64_t launch_ns;      /**< host time in those calls */
    uint64_t kernels, gpu_ns;
    uint64_t small, small_gpu_ns; /**< kernels under JM_CUDA_SMALL_THREADS threads, their GPU time */
    uint64_t sync_ns;        /**< host time in synchronisation calls (kind 5) */
    uint64_t stack;          /**< the launch stack of its first kernel (0 if none) */
} jm_cuda_site;

#define JM_CUDA_SMALL_THREADS 1024u /**< threads per launch below which a kernel is "small" */
enum { JM_COPY_HTOD, JM_COPY_DTOH, JM_COPY_DTOD, JM_COPY_OTHER, JM_COPY_KINDS };

/** The cuda plugin's events, summed. */
typedef struct jm_cuda {
    uint64_t kernels, gpu_ns, small, small_gpu_ns;
    uint64_t launches, launch_ns;     /**< kernel/graph launch calls and their host time */
    uint64_t sync_calls, sync_ns;     /**< synchronisation calls */
    uint64_t copies[JM_COPY_KINDS], copy_bytes[JM_COPY_KINDS], copy_ns[JM_COPY_KINDS];
    uint64_t pageable_copies, pageable_bytes;
    uint64_t first_kernel_ns, last_kernel_end_ns;
    uint64_t dropped, pool_exhausted, misses, suggested_memory_bytes;
    int have_summary;
    /* the first device's limits (cuda.device); 0 when unknown */
    uint64_t sm_count, max_threads_per_sm, registers_per_sm, shared_per_sm;
    jm_cuda_kernel *names;            /**< sorted by total_ns, descending */
    uint32_t nnames;
    jm_cuda_site *sites;              /**< sorted by gpu_ns + launch_ns, descending */
    uint32_t nsites;
} jm_cuda;

/* ------------------------------------------------------------------------------------ */
/* The model                                                                             */

/** A function in the sampler's stacks (plugins/sampler). Weights are trigger periods. */
typedef struct jm_sample_fn {
    const char *func, *file;      /**< borrowed from the reader */
    uint32_t line;                /**< of the first address seen in it */
    uint32_t index;               /**< its position in jm_samples.fns */
    uint64_t self;                /**< samples whose innermost address lies in its code */
    uint64_t total;               /**< samples with it anywhere on the stack (once per stack) */
    uint64_t outside;             /**< the part of self taken outside any span */
} jm_sample_fn;

/** Self weight of one function inside one site (the sample's innermost open site). */
typedef struct jm_site_fn {
    jager_site site;              /**< 0: outside any span */
    uint32_t fn;                  /**< index into jm_samples.fns */
    uint64_t self;
} jm_site_fn;

/** The sampler's samples, by function (empty when the recording has none). */
typedef struct jm_samples {
    uint64_t samples, weight;     /**< events, and Σ weight (trigger periods) */
    uint64_t cpu_ns;              /**< Σ cpu_ns: CPU time the samples stand for */
    uint64_t outside;             /**< weight taken outside any span */
    uint64_t recorder_self;       /**< weight whose innermost frame is the recorder's own code (jager_*,
                                       jg_*, sdk/src): what recording cost the program's threads, sampled */
    jm_sample_fn *fns;            /**< sorted by self, descending */
    uint32_t nfns;
    jm_site_fn *site_fns;         /**< sorted by site, then self descending */
    uint32_t nsite_fns;
    void *build;                  /**< private building state */
} jm_samples;

/** What the rusage plugin's readings say a site cost the machine (model_rusage.c). */
enum { JM_RU_CPU, JM_RU_SYS, JM_RU_RUNQ, JM_RU_MINFLT, JM_RU_MAJFLT, JM_RU_IVCSW, JM_RU_NVALUES };
/** Minor faults (4 KiB pages: 64 KiB) that make one span a "faulting" one. */
#define JM_RU_FAULTING 16.0
typedef struct jm_site_rusage {
    uint64_t spans;                /**< spans inside the readings (both ends covered) */
    double wall_ns;                /**< their wall time */
    double self_wall_ns;           /**< less their covered child spans' wall time */
    uint64_t faulting_spans;       /**< spans whose own (self) minor faults reached JM_RU_FAULTING */
    double incl[JM_RU_NVALUES];    /**< CPU ns, system ns, run-queue wait ns, minor faults, major faults,
                                        involuntary switches: inside the spans (children included) */
    double self[JM_RU_NVALUES];    /**< the same less what the site's covered child spans took */
} jm_site_rusage;
typedef struct jm_rusage {
    int present;                   /**< the recording has rusage.thread readings */
    int has_runq;                  /**< run-queue wait was known (schedstat) */
    uint64_t interval_ns, fault_ns;/**< reading period; measured cost of one minor fault */
    jm_site_rusage *sites;         /**< [nsites] when present */
} jm_rusage;

/** Whether a site's slow calls are designed work, not a tail (model_split.c). */
enum { JM_SPLIT_NONE, JM_SPLIT_ORDINAL, JM_SPLIT_ATTRIBUTE, JM_SPLIT_PATH };
#define JM_SPLIT_MIN_PARENTS 3 /**< parents over which an ordinal split must hold */
typedef struct jm_split {
    int kind;                  /**< JM_SPLIT_* */
    uint64_t ordinals;         /**< ORDINAL: bit k = the (k+1)-th call under each parent is the slow one */
    uint64_t parents;          /**< ORDINAL: parent spans it held over */
    char key[64], value[64];   /**< ATTRIBUTE: the calls with key = value are the slow ones */
    uint32_t path_parent;      /**< PATH: the calls made under this site are the slow ones */
    uint64_t path_calls;       /**< PATH: the calls on those paths */
    uint64_t slow, calls;      /**< slow calls (over JM_TAIL_FACTOR × p50) and calls, from the events */
    /** ORDINAL, ATTRIBUTE: the two groups the split makes (0: the other calls, 1: the slow
     * set), each with its own tail (calls over JM_TAIL_FACTOR × the group's median), so a
     * real tail inside one group is not hidden by the split. PATH: not filled (calls 0). */
    struct jm_split_group {
        uint64_t calls, tail_calls, p50_ns, max_ns;
        double total_ns, tail_excess_ns;
    } group[2];
} jm_split;

/** Calls of one site with one value of one span attribute (model_attrs.c). */
#define JM_ATTR_TEXT 64      /**< bytes kept of a key or value */
#define JM_ATTR_KEYS 16      /**< attribute keys tracked */
#define JM_ATTR_VALUES 64    /**< values per site and key */
#define JM_ATTR_GROUPS 65536 /**< groups in all */
typedef struct jm_attr_group {
    uint32_t site;
    const char *key;           /**< one of jm_model.attr_keys */
    char value[JM_ATTR_TEXT];  /**< the value as text (numbers printed) */
    uint64_t calls, total_ns, max_ns;
} jm_attr_group;

/** Log records and span errors with one innermost method (`code.method`, model_methods.c). */
#define JM_CODE_METHOD_TEXT 512   /**< bytes kept of a method's text */
#define JM_CODE_METHODS 4096 /**< methods grouped; events of others are counted as folded */
typedef struct jm_code_method {
    char method[JM_CODE_METHOD_TEXT]; /**< the code.method text (cut at whole characters) */
    uint64_t logs;           /**< log records carrying it */
    uint64_t warnings;       /**< of them, severity WARN (13–16) */
    uint64_t errors;         /**< of them, severity ERROR or FATAL (≥ 17) */
    uint64_t span_errors;    /**< span errors (jager_span_error) of spans carrying it */
} jm_code_method;

typedef struct jm_model {
    jager_reader *reader;         /**< borrowed */
    jager_reader_info info;       /**< as of jm_model_finish() */
    jm_options opt;

    /* Run */
    uint64_t events;              /**< events seen */
    uint64_t first_ns, last_ns;   /**< the run: the recording's start .. end (END block), or in a
                                       file without one its first start .. last end over the events
                                       (a plugin event at its time: its duration fields never extend it) */
    uint64_t run_ns;              /**< last_ns - first_ns */
    int run_from_end;             /**< 1: the run is the END block's clock span; 0: from events */
    uint64_t program_ns;          /**< the program's part of the run: the run less Jäger's own
                                       start and stop work where the Julia binding marked it
                                       (metadata julia.program_start_ns / _end_ns), else run_ns */
    uint64_t thread_ns;           /**< the sum over the program's threads (Jäger's own left out) of
                                       their time windows (first..last event, within the program's
                                       part of the run), at least program_ns: the whole of "thread
                                       time" that shares of multi-threaded work are taken of */
    uint32_t helper_threads;      /**< Jäger's own threads seen (jm_thread.helper) */
    /* The trees are built from span events; the per-site totals of the STATS block are exact.
     * When spans were lost (a full ring) the trees are short of them: counted here, and the
     * nodes concerned flagged (JM_NODE_PARTIAL), so no view shows a short row as complete. */
    uint64_t tree_lost_calls;     /**< calls counted exactly per site but missing from the trees */
    uint32_t partial_sites;       /**< sites with such calls */
    uint32_t sampled_sites;       /**< sites thinned on purpose (jm_site.sample_1_in), not counted as lost */
    uint32_t sites_without_events;/**< of them, sites with no span event at all (not in any tree) */
    int exact_paths;              /**< 1: the trees are the file's exact call paths (PATHS block,
                                       format 1.1, clean end): calls, times and bytes of every node
                                       are exact whatever the drops or sampling; min/max, errors and
                                       GC per node still come from the events */
    uint32_t collector_cpu_ns_known; /**< 1: the file says what the collector's CPU cost (1.1) */
    uint64_t collector_cpu_ns;    /**< the collector's CPU time (drain, compression, writing) */
    uint64_t collector_cpu_spans; /**< spans ended when it was measured */
    int have_stats;               /**< the file had a STATS block */
    jager_stat stats;             /**< core counters from it (zeroed if none) */
    uint64_t spans;               /**< span events seen */
    double self_cost_ns;          /**< stats.span_cost_ns_x1000 / 1000 × the spans of non-Julia sites
                                       + julia_span_cost_ns × julia_spans */
    double self_cost_pct;         /**< self_cost_ns / run_ns × 100 */
    double julia_span_cost_ns;    /**< the Julia binding's measured cost of one span (metadata
                                       julia.span_cost_ns), 0 when the file has none */
    uint64_t julia_spans;         /**< exact calls of the Julia sites (julia.site.<id>.module) */
    double julia_dynamic_call_ns; /**< one dynamic call as the binding timed it (metadata
                                       julia.dynamic_call_ns), 0 when the file has none */

    /* Drops: drop records by reason (jager_drop_reason) and their total. */
    uint64_t drop_records[JAGER_DROP_REASONS];
    uint64_t dropped;             /**< max(sum of drop records, stats.events_dropped) */

    /* Threads (thread index order; a thread appears once it has an event) */
    jm_thread *threads;
    uint32_t nthreads;
    jm_tree merged;               /**< every thread's tree merged by path */

    /* Sites: sites[id] for id in 1..nsites-1 */
    jm_site *sites;
    uint32_t nsites;

    jm_gc gc;
    jm_cuda cuda;                 /**< GPU work (cuda.* events), zeros without them */
    jm_samples samples;           /**< sampler.sample events by function */
    jm_rusage rusage;             /**< per-site CPU, wait and faults (rusage plugin), zeros without it */
    jm_split *splits;             /**< [nsites] for sites with a tail, else NULL (model_split.c) */
    jm_attr_group *attr_groups;   /**< sorted by site, key, then total descending (model_attrs.c) */
    size_t nattr_groups;
    char (*attr_keys)[JM_ATTR_TEXT]; /**< the span attribute keys seen, first come first */
    uint32_t nattr_keys;
    uint64_t attr_folded;         /**< attribute values beyond the caps (counted, not grouped) */
    jm_code_method *code_methods; /**< logs and span errors by code.method, most errors first, then most logs (model_methods.c) */
    size_t ncode_methods;
    uint64_t code_methods_folded; /**< events with a code.method beyond JM_CODE_METHODS */

    jm_signature *signatures;     /**< sorted by site, then calls descending */
    uint32_t nsignatures;
    jm_instability *instabilities;/**< sorted by site */
    uint32_t ninstabilities;
    jm_compile *compiles;         /**< sorted by codegen_ns + inference_ns, descending */
    uint32_t ncompiles;
    uint64_t compile_count, compile_ns, inference_ns, compile_max_ns;
    jm_method_specs *methods;     /**< sorted by count, descending */
    uint32_t nmethods;
    uint64_t dispatch_other;      /**< dispatch records beyond the caps (counted, not kept) */

    jm_message *messages;         /**< sorted by site, then count descending */
    uint32_t nmessages;
    jm_site_stack *site_stacks;   /**< sorted by site, then total_ns descending */
    uint32_t nsite_stacks;

    uint64_t logs[JM_SEV_COUNT];
    uint64_t logs_truncated;
    uint64_t marks, diags;
    uint64_t span_errors;         /**< span_error records */

    jm_counter *counters;         /**< by counter id order */
    uint32_t ncounters;

    jm_type_count *types;         /**< every type seen, by type id */
    uint32_t ntypes;

    uint64_t malformed;           /**< records too short for their type (counted, skipped) */

    uint64_t security_events;     /**< log events with attribute security=true (supply chain, docs/supply-chain.md) */
    struct jm_security *security; /**< the first JM_SECURITY_KEEP of them, in file order */
    uint32_t nsecurity;
    void *priv;                   /**< private building state */
} jm_model;

/* ------------------------------------------------------------------------------------ */
/* Building                                                                              */

/**
 * \brief Read every event of \p r from where it stands and build the model.
 * \param opt caps, or NULL for the defaults.
 * \param out receives the model (NULL on failure).
 * \param read_status receives the final jager_reader_next() result (0 clean end, or a
 *        negative jager_status such as JAGER_E_TRUNCATED); the model then holds everything
 *        read before it. Pass it to cli_finish() for the exit code.
 * \return JAGER_OK; JAGER_E_NOMEM; JAGER_E_INVALID.
 */
jager_status jm_model_build(jager_reader *r, const jm_options *opt, jm_model **out, int *read_status);

/** \brief Start an empty model for events read by the caller. \return as jm_model_build(). */
jager_status jm_model_new(jager_reader *r, const jm_options *opt, jm_model **out);
/** \brief Add one event (as returned by jager_reader_next()). \return JAGER_OK or JAGER_E_NOMEM. */
jager_status jm_model_add(jm_model *m, const jager_event *ev);
/** \brief Resolve names, merge trees, fold in the STATS block, sort tables. Call once, after the last event. */
jager_status jm_model_finish(jm_model *m);
/** \brief Free a model. NULL is allowed. */
void jm_model_free(jm_model *m);

/* ------------------------------------------------------------------------------------ */
/* Queries                                                                               */

/** The site record, or NULL for 0, JM_SITE_* and unknown ids. */
const jm_site *jm_site_get(const jm_model *m, uint32_t site);
/** Display name of a tree site id: the site name, "(other)", "(unrecorded)", "(root)". */
const char *jm_site_name(const jm_model *m, uint32_t site);

/** A symbolized frame chosen to name a stack for people. */
typedef struct jm_frame_pick {
    const char *func;       /**< "??" when the stack has no symbols */
    const char *file;       /**< "" if unknown */
    uint32_t line;
    uint64_t ip;
    int program;            /**< 1: a frame of the program; 0: the fallback (runtime or Julia library only) */
} jm_frame_pick;

/**
 * \brief The innermost frame of \p stack that belongs to the program rather than the
 *        runtime or Julia's own library (skips Julia/GC/allocator/libc/Jäger internals:
 *        jl_*, ijl_*, gc_*, malloc, …, and Base/stdlib files such as "./array.jl"),
 *        falling back to the innermost symbolized frame.
 * \return 1 if a frame was found, 0 if the stack is unknown or has no symbols.
 */
int jm_stack_pick_frame(const jm_model *m, jager_stack_id stack, jm_frame_pick *out);
/** 1 if a symbolized frame of \p stack (inlined frames included) is named \p func
 *  ("unaliascopy", or "Base.unaliascopy"). */
int jm_stack_has_func(const jm_model *m, jager_stack_id stack, const char *func);

/** A security event (a log event with security=true): its body and supply.* attributes. */
#define JM_SECURITY_KEEP 64
typedef struct jm_security {
    char body[512];
    char kind[48];      /**< supply.kind: "modified", "added", … ("" if absent) */
    char package[128];  /**< supply.package */
    char file[256];     /**< supply.file */
} jm_security;

/** Name of a log severity bucket JM_SEV_* ("trace" … "fatal"). */
const char *jm_sev_name(int bucket);

/**
 * \brief Make \p s safe and tidy for a terminal: control bytes (C0, DEL, C1, ESC
 *        sequences) become "\xNN", invalid UTF-8 bytes become "?", and text wider than
 *        \p cols code points is cut in the middle with "…", keeping its end, where sibling
 *        names differ ("X.omp", "X.omp_barrier"; cols 0: no limit). Writes a NUL-terminated
 *        result into \p buf (always, cut to fit \p size).
 * \return the number of display columns written (code points, one each).
 */
uint32_t jm_text_fit(char *buf, size_t size, const char *s, uint32_t cols);

#endif
