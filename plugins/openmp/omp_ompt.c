/*
 * omp_ompt.c — the OMPT tool for LLVM's libomp (OpenMP 5.0 tools interface).
 *
 * libomp calls ompt_start_tool() when it initialises; this library defines it when it is
 * preloaded, linked into the program, or named in OMP_TOOL_LIBRARIES. Callbacks stay
 * registered for the process's life and record only while the plugin is started.
 *
 *   parallel_begin/end  → omp parallel (region, encountering thread); a region object
 *                         in parallel_data->ptr carries the instance id and, once the
 *                         primary thread leaves the join barrier, its release time
 *   implicit_task       → omp work (one per team thread; omp.region, omp.thread), up to
 *                         the thread's arrival at the join barrier
 *   work (loops)        → omp loop
 *   sync_region         → barrier waits by kind: join (omp.region, omp.thread), implicit,
 *                         explicit
 *   mutex_acquire(d)    → omp critical wait
 *
 * libomp reports a worker's end of the join barrier, and the end of its implicit task,
 * only when the worker is released for the next region (or at exit). The join wait ends
 * at the region's release time instead (host span_end_ns), so a worker's join wait is
 * its wait for the team, not the serial time until the next fork; each such end is
 * counted in openmp.summary's late_ends. Before recording stops, the plugin pauses the
 * runtime (omp_pause_resource_all) when no region is active, so the workers report the
 * last region's ends while they still count.
 */
#include <dlfcn.h>
#include <omp-tools.h>
#include <stdlib.h>

#include "omp_internal.h"

static atomic_int ompt_started, ompt_ever;

int omp_ompt_started(void) { return atomic_load_explicit(&ompt_started, memory_order_relaxed); }
int omp_ompt_ever_started(void) { return atomic_load_explicit(&ompt_ever, memory_order_relaxed); }

int omp_ompt_present(void)
{
    void *h = dlopen("libomp.so.5", RTLD_LAZY | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != NULL || dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != NULL;
}

/* A region instance, shared by its team; freed by the last of the primary thread
 * (parallel_end) and the workers (their late implicit-task end). */
typedef struct omp_region {
    uint64_t id;
    const void *ra;               /* the construct's code address (return address − 1) */
    _Atomic(uint64_t) release_ns; /* when the primary left the join barrier; 0 before */
    atomic_int refs;
    int threads;
} omp_region;

static void region_unref(omp_region *r)
{
    if (r && atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) free(r);
}

/* Per-thread stacks: regions this thread encountered, implicit tasks it runs, barriers
 * it is in. Depth beyond the arrays is counted, not recorded. */
#define DEPTH 16
typedef struct task_ent {
    jager_span span;
    omp_region *r;
    unsigned index;
} task_ent;
typedef struct sync_ent {
    jager_span span;
    int join;
} sync_ent;
static __thread jager_span reg_stack[DEPTH];
static __thread unsigned reg_depth;
static __thread task_ent task_stack[DEPTH];
static __thread unsigned task_depth;
static __thread sync_ent sync_stack[DEPTH];
static __thread unsigned sync_depth;
static __thread jager_span loop_stack[DEPTH];
static __thread unsigned loop_depth;
static __thread jager_span crit_span;

static const void *adj(const void *ra) { return ra ? (const char *)ra - 1 : NULL; }

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
                              unsigned int requested, int flags, const void *codeptr_ra)
{
    parallel->ptr = NULL;
    jager_span s = {0, 0, 0};
    if (omp_recording()) {
        omp_region *r = malloc(sizeof *r);
        if (r) {
            r->id = omp_region_next();
            r->ra = adj(codeptr_ra);
            atomic_init(&r->release_ns, 0);
            atomic_init(&r->refs, 1);
            r->threads = (int)requested;
            parallel->ptr = r;
            s = omp_host->span_begin(omp_site(r->ra, OMP_ROLE_REGION, OMP_RT_OMPT));
        }
    }
    if (reg_depth < DEPTH) reg_stack[reg_depth] = s;
    reg_depth++;
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *codeptr_ra)
{
    omp_region *r = parallel ? parallel->ptr : NULL;
    if (reg_depth) {
        reg_depth--;
        if (reg_depth < DEPTH && r) {
            omp_attrs_region(reg_stack[reg_depth], r->id, r->threads);
            omp_host->span_end(reg_stack[reg_depth]);
            atomic_fetch_add_explicit(&omp_n.regions, 1, memory_order_relaxed);
        }
    }
    if (parallel) parallel->ptr = NULL;
    region_unref(r);
}

static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned int actual, unsigned int index, int flags)
{
    if (flags & ompt_task_initial) return;
    if (ep == ompt_scope_begin) {
        omp_region *r = parallel ? parallel->ptr : NULL;
        task_ent e = {{0, 0, 0}, NULL, index};
        if (r && omp_recording()) {
            if (index == 0) r->threads = (int)actual;
            atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
            e.r = r;
            e.span = omp_host->span_begin(omp_site(r->ra, OMP_ROLE_WORK, OMP_RT_OMPT));
            omp_attrs_worker(e.span, r->id, index);
        }
        if (task_depth < DEPTH) task_stack[task_depth] = e;
        task_depth++;
        return;
    }
    if (!task_depth) return;
    task_depth--;
    if (task_depth >= DEPTH) return;
    task_ent *e = &task_stack[task_depth];
    if (!e->r) return;
    /* Normally the work span ended when the thread reached the join barrier; a runtime
     * that reports no sync regions ends it here (a worker's at the release time). */
    if (e->span.site) {
        uint64_t rel = atomic_load_explicit(&e->r->release_ns, memory_order_acquire);
        if (e->index != 0 && rel) {
            omp_host->span_end_ns(e->span, rel);
            atomic_fetch_add_explicit(&omp_n.late_ends, 1, memory_order_relaxed);
        } else {
            omp_host->span_end(e->span);
        }
        atomic_fetch_add_explicit(&omp_n.workers, 1, memory_order_relaxed);
    }
    region_unref(e->r);
    e->r = NULL;
}

/* The thread reached its region's join barrier: its work ends here. */
static void work_end(task_ent *t)
{
    if (!t->span.site) return;
    omp_host->span_end(t->span);
    t->span.site = 0;
    atomic_fetch_add_explicit(&omp_n.workers, 1, memory_order_relaxed);
}

static task_ent *task_top(void) { return task_depth && task_depth <= DEPTH ? &task_stack[task_depth - 1] : NULL; }

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                           ompt_data_t *task, const void *codeptr_ra)
{
    if (ep == ompt_scope_begin) {
        sync_ent e = {{0, 0, 0}, 0};
        task_ent *t = task_top();
        omp_role role = OMP_ROLE_COUNT;
        const void *at = adj(codeptr_ra);
        switch ((int)kind) {
        case ompt_sync_region_barrier_explicit: role = OMP_ROLE_EXPLICIT_WAIT; break;
        case ompt_sync_region_barrier_implicit_parallel: role = OMP_ROLE_JOIN_WAIT; break;
        case ompt_sync_region_barrier_implicit:
        case ompt_sync_region_barrier_implicit_workshare:
        case ompt_sync_region_barrier:
        case ompt_sync_region_barrier_implementation:
            /* libomp 14 reports the join barrier as barrier_implicit: a worker's comes
             * without a code address, the primary's with the region's. */
            role = t && t->r && (!codeptr_ra || at == t->r->ra) ? OMP_ROLE_JOIN_WAIT : OMP_ROLE_BARRIER_WAIT;
            break;
        default: break; /* taskwait, taskgroup, reduction: not barriers */
        }
        if (role == OMP_ROLE_JOIN_WAIT && t && t->r) at = t->r->ra;
        if (role != OMP_ROLE_COUNT && t && t->r && omp_recording()) {
            e.join = role == OMP_ROLE_JOIN_WAIT;
            if (e.join) work_end(t);
            e.span = omp_host->span_begin(omp_site(at, role, OMP_RT_OMPT));
            if (e.join) omp_attrs_worker(e.span, t->r->id, t->index);
        }
        if (sync_depth < DEPTH) sync_stack[sync_depth] = e;
        sync_depth++;
        return;
    }
    if (!sync_depth) return;
    sync_depth--;
    if (sync_depth >= DEPTH) return;
    sync_ent *e = &sync_stack[sync_depth];
    if (!e->span.site) return;
    task_ent *t = task_top();
    if (e->join && t && t->r) {
        if (t->index == 0) {
            uint64_t now = omp_host->now_ns();
            atomic_store_explicit(&t->r->release_ns, now, memory_order_release);
            omp_host->span_end_ns(e->span, now);
        } else {
            uint64_t rel = atomic_load_explicit(&t->r->release_ns, memory_order_acquire);
            if (rel) {
                omp_host->span_end_ns(e->span, rel);
                atomic_fetch_add_explicit(&omp_n.late_ends, 1, memory_order_relaxed);
            } else {
                omp_host->span_end(e->span);
            }
        }
        atomic_fetch_add_explicit(&omp_n.joins, 1, memory_order_relaxed);
    } else {
        omp_host->span_end(e->span);
        atomic_fetch_add_explicit(&omp_n.barriers, 1, memory_order_relaxed);
    }
    e->span.site = 0;
}

static void on_work(ompt_work_t wstype, ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                    uint64_t count, const void *codeptr_ra)
{
    if (wstype != ompt_work_loop) return;
    if (ep == ompt_scope_begin) {
        jager_span s = {0, 0, 0};
        task_ent *t = task_top();
        if (t && t->r && omp_recording()) {
            s = omp_host->span_begin(omp_site(adj(codeptr_ra), OMP_ROLE_LOOP, OMP_RT_OMPT));
            atomic_fetch_add_explicit(&omp_n.loops, 1, memory_order_relaxed);
        }
        if (loop_depth < DEPTH) loop_stack[loop_depth] = s;
        loop_depth++;
        return;
    }
    if (!loop_depth) return;
    loop_depth--;
    if (loop_depth < DEPTH) omp_host->span_end(loop_stack[loop_depth]);
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
                             const void *codeptr_ra)
{
    if (kind != ompt_mutex_critical || !omp_recording()) return;
    crit_span = omp_host->span_begin(omp_site(adj(codeptr_ra), OMP_ROLE_CRITICAL_WAIT, OMP_RT_OMPT));
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra)
{
    if (kind != ompt_mutex_critical || !crit_span.site) return;
    omp_host->span_end(crit_span);
    crit_span.site = 0;
    atomic_fetch_add_explicit(&omp_n.criticals, 1, memory_order_relaxed);
}

static int tool_init(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data)
{
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set) return 0;
    int ok = 1;
    ok &= set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin) == ompt_set_always;
    ok &= set(ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end) == ompt_set_always;
    ok &= set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task) == ompt_set_always;
    /* These three may be "sometimes" in a runtime; what is reported is recorded. */
    set(ompt_callback_sync_region, (ompt_callback_t)on_sync_region);
    set(ompt_callback_work, (ompt_callback_t)on_work);
    set(ompt_callback_mutex_acquire, (ompt_callback_t)on_mutex_acquire);
    set(ompt_callback_mutex_acquired, (ompt_callback_t)on_mutex_acquired);
    atomic_store_explicit(&ompt_started, ok, memory_order_release);
    atomic_store_explicit(&ompt_ever, ok, memory_order_release);
    return ok; /* 0: the runtime deactivates the tool (never a half-recorded region model) */
}

static void tool_fini(ompt_data_t *tool_data) { atomic_store_explicit(&ompt_started, 0, memory_order_release); }

/* The tool entry point: an OpenMP 5.0 runtime looks it up at initialisation. */
__attribute__((visibility("default"))) ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                                                   const char *runtime_version)
{
    static ompt_start_tool_result_t result = {tool_init, tool_fini, {0}};
    return &result;
}

/* Before recording stops: let libomp's idle workers report the ends it holds back (see
 * the top of this file). A hard pause releases the runtime's threads (OpenMP 5.0
 * omp_pause_resource_all); a program that runs OpenMP again afterwards gets a freshly
 * initialised runtime. Not from inside a region, and only when our tool runs. */
void omp_ompt_quiesce(void)
{
    if (!omp_ompt_started()) return;
    int (*in_parallel)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_in_parallel");
    int (*pause_all)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "omp_pause_resource_all");
    if (!in_parallel || !pause_all || in_parallel()) return;
    pause_all(2 /* omp_pause_hard */);
}
