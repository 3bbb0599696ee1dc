/*
 * hunt_rules.h — findings: what is slow in a recording and why, ranked by estimated cost.
 *
 * The rules read only the analysis model (model.h); each rule and threshold is described,
 * with its reasoning, in docs/hunt.md. `jager hunt` prints the findings; `jager report`
 * shows the same list.
 */
#ifndef JAGER_TOOLS_HUNT_RULES_H
#define JAGER_TOOLS_HUNT_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/** Kinds of finding. Stable names (hunt_kind_name) are part of the JSON output. */
typedef enum hunt_kind {
    HUNT_SLOW_REGION = 0,
    HUNT_GC_PRESSURE,
    HUNT_ALLOCATION_HOTSPOT,
    HUNT_TYPE_INSTABILITY,
    HUNT_DISPATCH_DIVERSITY,
    HUNT_SPECIALIZATION_EXPLOSION,
    HUNT_COMPILE_TIME,
    HUNT_EXCEPTION_HOTSPOT,
    HUNT_LOAD_IMBALANCE,    /**< threads waiting at a barrier/lock for the slowest one */
    HUNT_DROPPED_EVENTS,
    HUNT_PLUGIN_EVENTS,     /**< events of plugins hunt has no rule for, reported generically */
    HUNT_SMALL_KERNELS,     /**< GPU kernels too small for their launch cost (cuda plugin) */
    HUNT_LAUNCH_BOUND,      /**< host time in launch calls ≫ GPU busy time */
    HUNT_TRANSFER_BOUND,    /**< copies take longer than the kernels */
    HUNT_LOW_OCCUPANCY,     /**< a kernel's shape keeps few warps resident per SM */
    HUNT_UNANNOTATED_HOTSPOT, /**< a function hot in the sampler's stacks outside any span */
    HUNT_REQUESTED_COLLECTIONS, /**< collections the program asked for (GC.gc()), not allocation pressure */
    HUNT_DESCHEDULED,       /**< a region waited for a CPU (oversubscribed machine): rusage plugin */
    HUNT_PAGE_FAULTS,       /**< a region first-touches fresh memory every call: rusage plugin */
    HUNT_INPUT_SPLIT,       /**< a tail that is designed work: the same calls slow every time (a note) */
    HUNT_LATE_SENDER,       /**< a receive waited for a send that began later (mpi) */
    HUNT_LATE_RECEIVER,     /**< a blocking send waited for a receive posted later (mpi) */
    HUNT_COLLECTIVE_WAIT,   /**< ranks waited in a collective for the last one to arrive (mpi) */
    HUNT_MPI_TIME,          /**< a large share of the job's rank time is inside MPI (mpi) */
    HUNT_SMALL_MESSAGES,    /**< many tiny point-to-point messages that could be aggregated (mpi) */
    HUNT_SUPPLY_CHAIN,      /**< the code that ran differs from its lock (security events; ranked first) */
    HUNT_JOB_INCOMPLETE,    /**< ranks of a job missing, or whose recording was cut short (killed, crashed) */
    HUNT_SMALL_PARALLEL_REGIONS, /**< OpenMP regions too small for their fork and join (openmp plugin) */
    HUNT_KIND_COUNT
} hunt_kind;

/** "slow_region", "gc_pressure", … */
const char *hunt_kind_name(hunt_kind k);

/** One number behind a finding. */
typedef struct hunt_evidence {
    const char *key;        /**< static: "pct_of_run", "calls", "gc_pauses", … */
    double value;
    const char *unit;       /**< static: "ns", "%", "bytes", "count", "" */
} hunt_evidence;

#define HUNT_MAX_EVIDENCE 12
#define HUNT_MAX_DETAILS 8

/** A finding. Strings are owned by the finding list (hunt_free). */
typedef struct hunt_finding {
    hunt_kind kind;
    int severity;            /**< 2 problem, 1 warning, 0 note */
    double cost_ns;          /**< estimated time this problem cost in this run (ranking key) */
    double pct_of_run;       /**< cost_ns / run time × 100 */
    char *title;             /**< one line, plain text (escape when printing) */
    char *hint;              /**< what to do about it */
    jager_site site;         /**< 0 when not tied to a site */
    const char *func;        /**< location: function ("" if none), borrowed from the model */
    const char *file;        /**< "" if unknown */
    uint32_t line;
    hunt_evidence evidence[HUNT_MAX_EVIDENCE];
    uint32_t nevidence;
    char *details[HUNT_MAX_DETAILS]; /**< extra lines: trigger stacks, signatures, call chain */
    uint32_t ndetails;
    const char *estimate;    /**< static or hunt_fmt()'s: how cost_ns was estimated ("" when the rule says nothing) */
    char *owned_func;        /**< private: storage behind func when the model has no such string */
} hunt_finding;

/** Knobs (defaults in docs/hunt.md). */
typedef struct hunt_options {
    double min_pct;          /**< drop findings whose cost is below this % of the run (default 1.0) */
} hunt_options;

void hunt_options_default(hunt_options *o);

/**
 * \brief Apply every rule to \p m and return the findings ranked by cost (descending;
 *        warnings about the recording itself — dropped events — first).
 * \return 0, or -1 on out of memory (nothing returned).
 */
int hunt_run(const jm_model *m, const hunt_options *o, hunt_finding **out, size_t *n);

/** One row of the "largest allocators" table. */
typedef struct hunt_allocator {
    jager_site site;
    uint64_t bytes;          /**< allocated inside the site's spans (inclusive of sites inside them) */
    uint64_t self_bytes;     /**< allocated outside the spans of sites inside them (from the call tree) */
    uint64_t calls;
    double region_ns;        /**< the site's time, not counted twice under recursion */
    double bytes_per_ns;     /**< bytes / region_ns (GB/s) */
    uint64_t gc_ns;          /**< automatic collections' time inside the site's spans */
} hunt_allocator;

/**
 * \brief The sites that allocated most, by self bytes (then inclusive bytes), for the
 *        "largest allocators" table of `jager hunt` and `jager report`.
 * \return the number of rows written to \p out (at most \p cap; 0 when nothing allocated
 *         or out of memory).
 */
size_t hunt_allocators(const jm_model *m, hunt_allocator *out, size_t cap);
struct jm_mpi;
struct jm_job;
/**
 * \brief The MPI wait-state rules (late_sender, late_receiver, collective_wait, mpi_time,
 *        small_messages; docs/hunt.md) over a job's MPI view, appended to \p *out / \p *n
 *        (a list from hunt_run(), or NULL/0) and the whole list re-ranked by cost.
 * \param models one model per part of \p job (callers are symbolized with them; entries may be NULL)
 * \return 0, or -1 on out of memory (the list given is kept).
 */
int hunt_run_mpi(const struct jm_mpi *mpi, const struct jm_job *job, const jm_model *const *models,
                 const hunt_options *o, hunt_finding **out, size_t *n);

/**
 * \brief Take out of one part's findings (hunt_run() on part \p part of the job) the
 *        slow_region findings whose excess is mostly time in MPI calls the function makes
 *        itself: those slow calls wait for other ranks, which the MPI wait rules judge (and
 *        name the rank waited for). Run before hunt_run_mpi().
 * \return the number of findings kept (moved to the front; the others are freed)
 */
size_t hunt_mpi_filter_part(const struct jm_mpi *mpi, uint32_t part, const jm_model *m, hunt_finding *f, size_t n);

/** Free a list returned by hunt_run(). */
void hunt_free(hunt_finding *f, size_t n);

#endif
