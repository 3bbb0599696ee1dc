/* hunt_priv.h — what the rule files share: a growing list of findings and small helpers.
 * Thresholds live next to the rule that uses them and are explained in docs/hunt.md. */
#ifndef JAGER_TOOLS_HUNT_PRIV_H
#define JAGER_TOOLS_HUNT_PRIV_H

#include "hunt_rules.h"

typedef struct hunt_list {
    hunt_finding *items;
    size_t n, cap;
    int oom;
} hunt_list;

/** What a finding's pct_of_run is a share of: the instrumented time (sum of top-level spans
 *  over threads) for findings inside regions, the recording's thread time for run-wide ones. */
double hunt_base(const jm_model *m, hunt_kind kind);
/** A new zeroed finding at the end of \p l, or NULL (l->oom set). */
hunt_finding *hunt_add(hunt_list *l, hunt_kind kind, int severity, double cost_ns, const jm_model *m);
/** Free what a finding owns (not the finding itself). */
void hunt_finding_free(hunt_finding *f);
/** Remove (and free) the findings of \p kind at \p site already in \p l. */
void hunt_remove(hunt_list *l, hunt_kind kind, jager_site site);
/** Set the finding's location to a site. */
void hunt_at_site(hunt_finding *f, const jm_model *m, jager_site site);
/** printf into an owned string (NULL on OOM, which also sets l->oom). */
char *hunt_fmt(hunt_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Append one evidence number. */
void hunt_ev(hunt_finding *f, const char *key, double value, const char *unit);
/** Append a detail line (printf). */
void hunt_detail(hunt_list *l, hunt_finding *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Time of a site not counted twice under recursion (outermost spans), else its total. */
double hunt_site_time(const jm_site *s);
/** Which of a set of sites ran inside which (merged tree): built once per rule. */
typedef struct hunt_nesting {
    uint64_t *pairs; /* (inner << 32 | outer), sorted */
    size_t n;
} hunt_nesting;
/** Record every (inner, outer) pair among the sites of findings [from, l->n). \return 0 or -1 (OOM). */
int hunt_nesting_build(const jm_model *m, const hunt_list *l, size_t from, hunt_nesting *out);
/** 1 if some span of site \p inner ran inside a span of site \p outer. */
int hunt_nesting_under(const hunt_nesting *nest, jager_site inner, jager_site outer);
void hunt_nesting_free(hunt_nesting *nest);
/** 1 if a region name says it waits for others (barrier, lock, wait, recv, join, …). */
int hunt_is_wait(const char *name);
/** 1 if site \p s waits for others: by its role when a plugin named one
 *  (JM_SITE_ROLE_KNOWN: openmp.site_role), else by its name (hunt_is_wait). */
int hunt_site_is_wait(const jm_site *s);
/** "1.23 s" etc. into a caller buffer. */
const char *hunt_ns(char *buf, size_t size, double ns);

/* The rules, one per concern (hunt_rules_time.c, hunt_rules_threads.c, hunt_rules_julia.c). */
void hunt_rule_slow_regions(const jm_model *m, hunt_list *l);
void hunt_rule_gc_pressure(const jm_model *m, hunt_list *l);
void hunt_rule_allocations(const jm_model *m, hunt_list *l);
void hunt_rule_exceptions(const jm_model *m, hunt_list *l);
void hunt_rule_load_imbalance(const jm_model *m, hunt_list *l);
void hunt_rule_dropped(const jm_model *m, hunt_list *l);
void hunt_rule_supply_chain(const jm_model *m, hunt_list *l);
void hunt_rule_plugin_events(const jm_model *m, hunt_list *l);
void hunt_rule_type_instability(const jm_model *m, hunt_list *l);
void hunt_rule_dispatch_diversity(const jm_model *m, hunt_list *l);
void hunt_rule_specializations(const jm_model *m, hunt_list *l);
void hunt_rule_compile_time(const jm_model *m, hunt_list *l);
/* hunt_rules_gpu.c (cuda.* events) */
void hunt_rule_small_kernels(const jm_model *m, hunt_list *l);
void hunt_rule_launch_bound(const jm_model *m, hunt_list *l);
void hunt_rule_transfer_bound(const jm_model *m, hunt_list *l);
void hunt_rule_low_occupancy(const jm_model *m, hunt_list *l);
/* hunt_rules_samples.c: the sampler's stacks */
void hunt_rule_unannotated(const jm_model *m, hunt_list *l);
/** Name the hot functions inside each slow_region finding already in \p l. */
void hunt_samples_annotate(const jm_model *m, hunt_list *l);
/* hunt_rules_openmp.c: OpenMP regions (openmp plugin's roles) */
void hunt_rule_small_regions(const jm_model *m, hunt_list *l);
/* hunt_rules_rusage.c: the rusage plugin's readings */
void hunt_rule_descheduled(const jm_model *m, hunt_list *l);
void hunt_rule_page_faults(const jm_model *m, hunt_list *l);
/** Sort findings as hunt_run() ranks them (recording warnings first, then by cost). */
void hunt_rank_list(hunt_finding *f, size_t n);

#endif
