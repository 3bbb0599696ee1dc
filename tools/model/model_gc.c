/* model_gc.c — GC trigger stacks and requested collections per region, from the pause's
 * own `site` field (the innermost site open on the triggering thread when it began).
 *
 * The gc plugin writes gc.pause from its own thread, so a pause usually reaches the file
 * after the spans it stalled: overlapping pauses with spans as they arrive misses it, and
 * a region would have no trigger stacks of its own. The innermost open site is exact;
 * the sites enclosing it are taken from the merged call tree (every path on which that
 * site ran), each credited once per pause. */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"

void jm_gc_pause_site(jm_model *m, jager_site site, jager_stack_id stack, int requested, uint64_t dur)
{
    jm_priv *p = m->priv;
    uint64_t key = requested ? ~(uint64_t)stack : (uint64_t)stack;
    uint32_t k = jm_map_get(&p->psite_map, site, key);
    if (k == JM_NONE) {
        if (p->npsites >= m->opt.max_site_stacks) return;
        if (jm_grow((void **)&p->psites, &p->cap_psites, p->npsites + 1, sizeof *p->psites) != 0 ||
            jm_map_put(&p->psite_map, site, key, p->npsites) != 0) {
            p->oom = 1;
            return;
        }
        k = p->npsites++;
        p->psites[k] = (jm_site_stack){site, stack, 0, 0, requested != 0};
    }
    p->psites[k].pauses++;
    p->psites[k].total_ns += dur;
}

/* The sites on every tree path through a node of \p inner, \p inner included. */
static uint32_t enclosing(const jm_model *m, jager_site inner, uint8_t *mark, jager_site *out, uint32_t cap)
{
    const jm_tree *t = &m->merged;
    uint32_t n = 0;
    if (inner < m->nsites && !mark[inner]) {
        mark[inner] = 1;
        out[n++] = inner;
    }
    for (uint32_t i = 1; i < t->count && n < cap; i++) {
        if (t->nodes[i].site != inner) continue;
        for (uint32_t q = t->nodes[i].parent, hops = 0; q != JM_NONE && q != 0 && hops < 4096 && n < cap;
             q = t->nodes[q].parent, hops++) {
            uint32_t s = t->nodes[q].site;
            if (s < m->nsites && !mark[s]) {
                mark[s] = 1;
                out[n++] = s;
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) mark[out[i]] = 0;
    return n;
}

static int add_site_stack(jm_model *m, jm_map *map, uint32_t *cap, const jm_site_stack *src, jager_site site)
{
    uint64_t key = src->requested ? ~(uint64_t)src->stack : (uint64_t)src->stack;
    uint32_t k = jm_map_get(map, site, key);
    if (k == JM_NONE) {
        if (m->nsite_stacks >= m->opt.max_site_stacks) return 0;
        if (jm_grow((void **)&m->site_stacks, cap, m->nsite_stacks + 1, sizeof *m->site_stacks) != 0 ||
            jm_map_put(map, site, key, m->nsite_stacks) != 0)
            return -1;
        k = m->nsite_stacks++;
        m->site_stacks[k] = (jm_site_stack){site, src->stack, 0, 0, src->requested};
    }
    m->site_stacks[k].pauses += src->pauses;
    m->site_stacks[k].total_ns += src->total_ns;
    return 0;
}

int jm_gc_attribute_sites(jm_model *m)
{
    jm_priv *p = m->priv;
    if (!p->npsites) return 0; /* older files: the overlap of pauses with spans stays */
    uint32_t nsites = jager_reader_site_count(m->reader) + 1;
    uint8_t *mark = calloc(nsites, 1);
    jager_site *chain = calloc(nsites, sizeof *chain);
    if (!mark || !chain) {
        free(mark);
        free(chain);
        return -1;
    }
    /* Replace the overlap-based table: every pause named its site. */
    m->nsite_stacks = 0;
    jm_map_clear(&p->site_stack_map);
    for (uint32_t i = 0; i < p->nacc; i++) {
        p->acc[i].req_ns = 0;
        p->acc[i].req_pauses = 0;
    }
    jm_model tmp = *m;
    tmp.nsites = nsites;
    int rc = 0;
    for (uint32_t i = 0; i < p->npsites && rc == 0; i++) {
        const jm_site_stack *ps = &p->psites[i];
        if (ps->site == 0 || ps->site >= nsites) continue;
        uint32_t n = enclosing(&tmp, ps->site, mark, chain, nsites);
        for (uint32_t j = 0; j < n && rc == 0; j++) {
            rc = add_site_stack(m, &p->site_stack_map, &p->cap_site_stacks, ps, chain[j]);
            if (ps->requested && chain[j] < p->nacc) {
                p->acc[chain[j]].req_ns += ps->total_ns;
                p->acc[chain[j]].req_pauses += ps->pauses;
            }
        }
    }
    free(mark);
    free(chain);
    return rc;
}
