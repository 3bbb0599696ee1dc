/* The sampler's stacks in the model: sampler.sample events (plugins/sampler) aggregated by
 * (stack, innermost open site) while reading, then, at finish, by function — the function
 * whose code holds each sample's innermost address (self), every function on the stack
 * (total, counted once per stack), the part of self outside any span, and self per site.
 * Weights are trigger periods (a sample's weight), so they are CPU time in periods. */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "strdict.h"

typedef struct sm_raw {
    uint64_t stack, site, weight;
} sm_raw;

typedef struct sm_build {
    jm_map map; /* (stack, site) → raw index */
    sm_raw *raw;
    uint32_t nraw, cap;
    int oom;
} sm_build;

void jm_samples_add(jm_model *m, uint64_t stack, uint64_t site, uint64_t weight, uint64_t cpu_ns)
{
    jm_samples *s = &m->samples;
    sm_build *b = s->build;
    if (!b && !(b = s->build = calloc(1, sizeof *b))) return;
    if (!weight) weight = 1;
    s->samples++;
    s->weight += weight;
    s->cpu_ns += cpu_ns;
    if (!site) s->outside += weight;
    uint32_t k = jm_map_get(&b->map, stack, site);
    if (k == JM_NONE) {
        if (jm_grow((void **)&b->raw, &b->cap, b->nraw + 1, sizeof *b->raw) || jm_map_put(&b->map, stack, site, b->nraw)) {
            b->oom = 1;
            return;
        }
        k = b->nraw++;
        b->raw[k] = (sm_raw){stack, site, 0};
    }
    b->raw[k].weight += weight;
}

static int by_self(const void *a, const void *b)
{
    const jm_sample_fn *x = a, *y = b;
    if (x->self != y->self) return x->self < y->self ? 1 : -1;
    if (x->total != y->total) return x->total < y->total ? 1 : -1;
    return strcmp(x->func, y->func);
}

static int by_site_self(const void *a, const void *b)
{
    const jm_site_fn *x = a, *y = b;
    if (x->site != y->site) return x->site < y->site ? -1 : 1;
    if (x->self != y->self) return x->self < y->self ? 1 : -1;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* The index of \p fr's function, adding it; JM_NONE on out of memory. */
static uint32_t fn_of(jm_samples *s, tu_strdict *names, uint32_t *cap, const jager_frame *fr)
{
    int64_t i = tu_strdict_put(names, fr->func, (uint32_t)strlen(fr->func));
    if (i < 0) return JM_NONE;
    if ((uint32_t)i == s->nfns) {
        if (jm_grow((void **)&s->fns, cap, s->nfns + 1, sizeof *s->fns)) return JM_NONE;
        s->fns[s->nfns++] = (jm_sample_fn){.func = fr->func, .file = fr->file, .line = fr->line};
    }
    return (uint32_t)i;
}

/* A frame of the recorder itself (libjager: its API, its hidden jg_* functions, the static
 * functions of its sources): a sample there is the recorder's cost on a program thread. */
static int in_recorder(const jager_frame *f)
{
    return !strncmp(f->func, "jager_", 6) || !strncmp(f->func, "jg_", 3) || strstr(f->file, "/sdk/src/") != NULL;
}

int jm_samples_finish(jm_model *m)
{
    jm_samples *s = &m->samples;
    sm_build *b = s->build;
    if (!b) return 0;
    int rc = b->oom ? -1 : 0;
    tu_strdict names = {0};
    jm_map site_map = {0};
    uint32_t fcap = 0, scap = 0, *seen = NULL, seen_cap = 0;
    for (uint32_t i = 0; i < b->nraw && rc == 0; i++) {
        const sm_raw *r = &b->raw[i];
        const uint64_t *ips = NULL;
        uint32_t n = 0;
        if (jager_reader_stack(m->reader, r->stack, &ips, &n) != JAGER_OK || n == 0) continue;
        if (jm_grow((void **)&seen, &seen_cap, n * 16u + 1, sizeof *seen)) {
            rc = -1;
            break;
        }
        uint32_t nseen = 0, leaf = JM_NONE;
        int recorder = 0;
        for (uint32_t k = 0; k < n && rc == 0; k++) {
            jager_frame fr[16];
            uint32_t nf = jager_reader_symbolize(m->reader, ips[k], fr, 16);
            for (uint32_t j = 0; j < nf; j++) {
                uint32_t f = fn_of(s, &names, &fcap, &fr[j]);
                if (f == JM_NONE) {
                    rc = -1;
                    break;
                }
                if (k == 0 && j == 0) { /* the function whose code holds the address */
                    leaf = f;
                    recorder = in_recorder(&fr[j]);
                }
                int dup = 0;
                for (uint32_t q = 0; q < nseen; q++) dup |= seen[q] == f;
                if (!dup) {
                    seen[nseen++] = f;
                    s->fns[f].total += r->weight;
                }
            }
        }
        if (rc || leaf == JM_NONE) continue;
        s->fns[leaf].self += r->weight;
        if (recorder) s->recorder_self += r->weight;
        if (!r->site) s->fns[leaf].outside += r->weight;
        uint32_t q = jm_map_get(&site_map, r->site, leaf);
        if (q == JM_NONE) {
            if (jm_grow((void **)&s->site_fns, &scap, s->nsite_fns + 1, sizeof *s->site_fns) ||
                jm_map_put(&site_map, r->site, leaf, s->nsite_fns)) {
                rc = -1;
                break;
            }
            q = s->nsite_fns++;
            s->site_fns[q] = (jm_site_fn){.site = (jager_site)r->site, .fn = leaf};
        }
        s->site_fns[q].self += r->weight;
    }
    free(seen);
    jm_map_free(&site_map);
    tu_strdict_free(&names);
    /* sort functions by self; site entries keep pointing at them through a remap */
    uint32_t *order = NULL;
    if (rc == 0 && s->nfns) {
        for (uint32_t i = 0; i < s->nfns; i++) s->fns[i].index = i;
        qsort(s->fns, s->nfns, sizeof *s->fns, by_self);
        order = malloc(s->nfns * sizeof *order);
        if (!order) rc = -1;
        for (uint32_t i = 0; order && i < s->nfns; i++) order[s->fns[i].index] = i;
        for (uint32_t i = 0; order && i < s->nsite_fns; i++) s->site_fns[i].fn = order[s->site_fns[i].fn];
        for (uint32_t i = 0; i < s->nfns; i++) s->fns[i].index = i;
    }
    free(order);
    if (s->nsite_fns) qsort(s->site_fns, s->nsite_fns, sizeof *s->site_fns, by_site_self);
    jm_map_free(&b->map);
    free(b->raw);
    free(b);
    s->build = NULL;
    return rc;
}

void jm_samples_free(jm_model *m)
{
    sm_build *b = m->samples.build;
    if (b) {
        jm_map_free(&b->map);
        free(b->raw);
        free(b);
    }
    free(m->samples.fns);
    free(m->samples.site_fns);
    memset(&m->samples, 0, sizeof m->samples);
}
