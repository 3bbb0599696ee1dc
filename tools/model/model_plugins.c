/* model_plugins.c — the model's input from the project's own plugins: GC pauses, stalls and
 * per-site GC time (gc), signatures, instabilities, compiles and the specialization census
 * (dispatch). Which types and fields: plugin_events.h; each gets a role here. */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "plugin_events.h"
#include "toolutil.h"

/* ---- plugin records ---- */

/* The model's role for each plugin event it reads (the types and fields: plugin_events.h). */
static const struct role_def {
    const jp_plugin *plugin;
    int event;
    int role;
} role_defs[] = {
    {&jp_gc, JP_GC_PAUSE, JM_ROLE_GC_PAUSE},
    {&jp_gc, JP_GC_SITE_TIME, JM_ROLE_GC_SITE_TIME},
    {&jp_gc, JP_GC_STALL, JM_ROLE_GC_STALL},
    {&jp_dispatch, JP_DISPATCH_SIGNATURE, JM_ROLE_SIGNATURE},
    {&jp_dispatch, JP_DISPATCH_COMPILE, JM_ROLE_COMPILE},
    {&jp_dispatch, JP_DISPATCH_SPECIALIZATIONS, JM_ROLE_SPECS},
    {&jp_dispatch, JP_DISPATCH_INSTABILITY, JM_ROLE_INSTABILITY},
};

static void resolve_role(jm_model *m, uint16_t type)
{
    jm_priv *p = m->priv;
    p->role[type] = JM_ROLE_OTHER;
    const jager_type_desc *d = jager_reader_type(m->reader, type);
    if (!d || !d->name) return;
    if (jp_in_plugin(d->name, &jp_gc) || jp_in_plugin(d->name, &jp_dispatch)) p->role[type] = JM_ROLE_FAMILIAR;
    for (size_t i = 0; i < sizeof role_defs / sizeof role_defs[0]; i++) {
        const struct role_def *rd = &role_defs[i];
        if (!jp_is(d->name, rd->plugin, rd->event)) continue;
        for (int f = 0; f < JM_ROLE_FIELDS && f < JP_MAX_FIELDS && jp_field(rd->plugin, rd->event, f); f++) {
            uint32_t k = jp_field_index(d, rd->plugin, rd->event, f);
            p->fields[rd->role][f] = k < JAGER_MAX_FIELDS ? (int8_t)k : -1;
        }
        p->role[type] = (uint8_t)rd->role;
        return;
    }
}

/* Field \p f (the event's field enum in plugin_events.h) of a plugin record, 0 when the type or record lacks it. */
static uint64_t field(const jm_priv *p, int role, const jager_rec_plugin *rec, int f)
{
    int k = p->fields[role][f];
    if (k < 0 || rec->h.words < 3u + (unsigned)k) return 0;
    return rec->fields[k];
}

static uint32_t sig_slot(jm_model *m, jm_map *map, void **arr, uint32_t *cap, uint32_t *count, size_t elem,
                         uint64_t a, uint64_t b)
{
    jm_priv *p = m->priv;
    uint32_t k = jm_map_get(map, a, b);
    if (k != JM_NONE) return k;
    if (*count >= m->opt.max_signatures) {
        m->dispatch_other++;
        return JM_NONE;
    }
    if (jm_grow(arr, cap, *count + 1, elem) != 0 || jm_map_put(map, a, b, *count) != 0) {
        p->oom = 1;
        return JM_NONE;
    }
    return (*count)++;
}

static const char *str_or_empty(const jm_model *m, uint64_t id)
{
    const char *s = id <= UINT32_MAX ? jager_reader_string(m->reader, (uint32_t)id) : NULL;
    return s ? s : "";
}

static void add_gc_pause(jm_model *m, const jager_event *ev, const jager_rec_plugin *rec)
{
    jm_priv *p = m->priv;
    int R = JM_ROLE_GC_PAUSE;
    uint64_t dur = field(p, R, rec, JP_PAUSE_DURATION_NS);
    if (dur > UINT64_MAX - rec->time_ns) dur = UINT64_MAX - rec->time_ns; /* damaged: keep start ≤ end */
    jager_stack_id stack = field(p, R, rec, JP_PAUSE_STACK);
    jm_gc *g = &m->gc;
    g->pauses++;
    g->total_ns += dur;
    if (dur > g->max_ns) g->max_ns = dur;
    if (field(p, R, rec, JP_PAUSE_FULL)) g->full_pauses++;
    g->allocd_bytes += field(p, R, rec, JP_PAUSE_ALLOCD_BYTES);
    g->freed_bytes += field(p, R, rec, JP_PAUSE_FREED_BYTES);
    uint64_t live = field(p, R, rec, JP_PAUSE_LIVE_BYTES);
    if (live > g->max_live_bytes) g->max_live_bytes = live;

    uint32_t k = jm_map_get(&p->gc_stack_map, stack, 0);
    if (k == JM_NONE && g->nstacks < m->opt.max_gc_stacks) {
        if (jm_grow((void **)&g->stacks, &p->cap_gc_stacks, g->nstacks + 1, sizeof *g->stacks) != 0 ||
            jm_map_put(&p->gc_stack_map, stack, 0, g->nstacks) != 0) {
            p->oom = 1;
        } else {
            k = g->nstacks++;
            g->stacks[k].stack = stack;
        }
    }
    if (k == JM_NONE) {
        g->other_pauses++;
        g->other_ns += dur;
    } else {
        g->stacks[k].pauses++;
        g->stacks[k].total_ns += dur;
        if (dur > g->stacks[k].max_ns) g->stacks[k].max_ns = dur;
    }

    /* The gc plugin emits pauses from its own thread; the thread that triggered (and whose
     * spans the pause stalled) is named by os_tid. Older files lack it: use the record's. */
    jm_thread_state *ts = jm_thread_state_get(m, tu_thread_by_os_tid(m->reader, field(p, R, rec, JP_PAUSE_OS_TID), ev->thread));
    if (!ts) return;
    if (ts->npauses && rec->time_ns < ts->pauses[ts->npauses - 1].end) {
        /* Out of order or overlapping on one thread: keep the order the search relies on. */
        g->unattributed_ns += dur;
        return;
    }
    if (ts->npauses >= m->opt.max_pending_gc) jm_gc_prune(m, ts, 0, m->opt.max_pending_gc / 2);
    if (jm_grow((void **)&ts->pauses, &ts->cap_pauses, ts->npauses + 1, sizeof *ts->pauses) != 0) {
        p->oom = 1;
        return;
    }
    ts->pauses[ts->npauses++] = (jm_pause){rec->time_ns, rec->time_ns + dur, stack, 0, 0};
}

/* A stall: the pause as the triggering thread's own ring saw it (before the spans it
 * stalled end). Only the GC time of spans comes from stalls; counts, stacks and the
 * attribution of trigger stacks stay with gc.pause. */
static void add_gc_stall(jm_model *m, const jager_event *ev, const jager_rec_plugin *rec)
{
    jm_priv *p = m->priv;
    uint64_t dur = field(p, JM_ROLE_GC_STALL, rec, JP_STALL_DURATION_NS);
    if (dur > UINT64_MAX - rec->time_ns) dur = UINT64_MAX - rec->time_ns;
    jm_thread_state *ts = jm_thread_state_get(m, ev->thread);
    if (!ts) return;
    p->have_stalls = 1;
    if (ts->nstalls && rec->time_ns < ts->stalls[ts->nstalls - 1].end) return; /* keep them ordered */
    if (ts->nstalls >= m->opt.max_pending_gc) jm_gc_prune(m, ts, 0, m->opt.max_pending_gc / 2);
    if (jm_grow((void **)&ts->stalls, &ts->cap_stalls, ts->nstalls + 1, sizeof *ts->stalls) != 0) {
        p->oom = 1;
        return;
    }
    ts->stalls[ts->nstalls++] = (jm_pause){rec->time_ns, rec->time_ns + dur, 0, 0, 0};
}

void jm_add_plugin(jm_model *m, const jager_event *ev)
{
    jm_priv *p = m->priv;
    const jager_rec_plugin *rec = (const jager_rec_plugin *)ev->rec;
    if (p->role[ev->type] == JM_ROLE_UNRESOLVED) resolve_role(m, ev->type);
    int R = p->role[ev->type];
    if (R == JM_ROLE_OTHER || R == JM_ROLE_FAMILIAR) return;
    if (rec->h.words < 2) {
        m->malformed++;
        return;
    }
    switch (R) {
    case JM_ROLE_GC_PAUSE:
        add_gc_pause(m, ev, rec);
        break;
    case JM_ROLE_GC_STALL:
        add_gc_stall(m, ev, rec);
        break;
    case JM_ROLE_GC_SITE_TIME: {
        jm_site_acc *a = jm_site_acc_get(m, (uint32_t)field(p, R, rec, JP_SITE_TIME_SITE));
        if (!a) break;
        a->site_time_gc_ns += field(p, R, rec, JP_SITE_TIME_GC_NS);
        a->site_time_pauses += field(p, R, rec, JP_SITE_TIME_PAUSES);
        m->gc.has_site_time = 1;
        break;
    }
    case JM_ROLE_SIGNATURE: {
        uint64_t site = field(p, R, rec, JP_SIGNATURE_SITE), sig = field(p, R, rec, JP_SIGNATURE_SIGNATURE), calls = field(p, R, rec, JP_SIGNATURE_CALLS);
        uint32_t k = sig_slot(m, &p->sig_map, (void **)&m->signatures, &p->cap_sigs, &m->nsignatures,
                              sizeof *m->signatures, site, sig);
        if (k == JM_NONE) break;
        jm_signature *s = &m->signatures[k];
        if (!s->signature) {
            s->site = (jager_site)site;
            s->signature = str_or_empty(m, sig);
        }
        if (calls > s->calls) s->calls = calls; /* the census repeats at each stop: keep the latest (largest) */
        break;
    }
    case JM_ROLE_INSTABILITY: {
        uint64_t site = field(p, R, rec, JP_INSTABILITY_SITE), sig = field(p, R, rec, JP_INSTABILITY_SIGNATURE);
        uint32_t k = sig_slot(m, &p->unstable_map, (void **)&m->instabilities, &p->cap_unstable,
                              &m->ninstabilities, sizeof *m->instabilities, site, sig);
        if (k == JM_NONE) break;
        jm_instability *u = &m->instabilities[k];
        if (!u->signature) {
            u->site = (jager_site)site;
            u->signature = str_or_empty(m, sig);
            u->reason = "";
            u->chain = "";
        }
        u->flags |= field(p, R, rec, JP_INSTABILITY_FLAGS);
        const char *reason = str_or_empty(m, field(p, R, rec, JP_INSTABILITY_REASON)), *chain = str_or_empty(m, field(p, R, rec, JP_INSTABILITY_CHAIN));
        if (!*u->reason) u->reason = reason;
        if (!*u->chain) u->chain = chain;
        u->reports++;
        break;
    }
    case JM_ROLE_COMPILE: {
        uint64_t dur = field(p, R, rec, JP_COMPILE_DURATION_NS), inf = field(p, R, rec, JP_COMPILE_INFERENCE_NS), sig = field(p, R, rec, JP_COMPILE_SIGNATURE);
        m->compile_count++;
        m->compile_ns += dur;
        m->inference_ns += inf;
        if (dur + inf > m->compile_max_ns) m->compile_max_ns = dur + inf;
        uint32_t k = sig_slot(m, &p->compile_map, (void **)&m->compiles, &p->cap_compiles, &m->ncompiles,
                              sizeof *m->compiles, sig, 0);
        if (k == JM_NONE) break;
        jm_compile *c = &m->compiles[k];
        if (!c->signature) c->signature = str_or_empty(m, sig);
        c->count++;
        c->codegen_ns += dur;
        c->inference_ns += inf;
        break;
    }
    case JM_ROLE_SPECS: {
        uint64_t method = field(p, R, rec, JP_SPECS_METHOD), count = field(p, R, rec, JP_SPECS_COUNT);
        uint32_t k = sig_slot(m, &p->method_map, (void **)&m->methods, &p->cap_methods, &m->nmethods,
                              sizeof *m->methods, method, 0);
        if (k == JM_NONE) break;
        jm_method_specs *s = &m->methods[k];
        if (!s->method) {
            s->method = str_or_empty(m, method);
            s->file = str_or_empty(m, field(p, R, rec, JP_SPECS_FILE));
            uint64_t line = field(p, R, rec, JP_SPECS_LINE);
            s->line = line > UINT32_MAX ? 0 : (uint32_t)line;
        }
        if (count > s->count) s->count = count;
        break;
    }
    default:
        break;
    }
}
