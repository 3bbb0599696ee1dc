/* The rules that read the sampler's stacks (plugins/sampler, model.h's jm_samples):
 *
 *   unannotated_hotspot  a function taking a large share of the sampled CPU time outside
 *                        any span: hot code nobody annotated (docs/hunt.md)
 *   slow_region details  which functions the samples inside a slow region's spans found hot
 */
#include <stdio.h>
#include <string.h>

#include "hunt_priv.h"

/* A function outside any span is a finding from this share of the sampled CPU time (and a
 * problem from the second), with at least this many trigger periods behind it. */
#define UNANNOTATED_MIN_SHARE 0.05
#define UNANNOTATED_PROBLEM_SHARE 0.20
#define UNANNOTATED_MIN_WEIGHT 10u
#define UNANNOTATED_MAX 5u

/* An OpenMP runtime's own code (libgomp, LLVM's libomp, Intel's libiomp5): outside spans its
 * threads spin or sleep between regions (OMP_WAIT_POLICY), which no span of the program's
 * could annotate; its time inside regions is already the regions' (small_parallel_regions,
 * load_imbalance). Unsymbolised frames carry the module's path as their file. */
static int in_openmp_runtime(const jm_sample_fn *f)
{
    const char *file = f->file ? f->file : "", *fn = f->func ? f->func : "";
    return strstr(file, "libgomp") || strstr(file, "libomp") || strstr(file, "libiomp") || !strncmp(fn, "gomp_", 5) ||
           !strncmp(fn, "__kmp", 5);
}

void hunt_rule_unannotated(const jm_model *m, hunt_list *l)
{
    const jm_samples *s = &m->samples;
    if (!s->weight) return;
    double per_weight = s->cpu_ns ? (double)s->cpu_ns / (double)s->weight : 0.0;
    uint32_t made = 0;
    for (uint32_t i = 0; i < s->nfns && made < UNANNOTATED_MAX; i++) {
        const jm_sample_fn *f = &s->fns[i];
        double share = (double)f->outside / (double)s->weight;
        if (f->outside < UNANNOTATED_MIN_WEIGHT || share < UNANNOTATED_MIN_SHARE || in_openmp_runtime(f)) continue;
        hunt_finding *h = hunt_add(l, HUNT_UNANNOTATED_HOTSPOT, share >= UNANNOTATED_PROBLEM_SHARE ? 2 : 1,
                                   (double)f->outside * per_weight, m);
        if (!h) return;
        made++;
        h->func = f->func;
        h->file = f->file;
        h->line = f->line;
        h->title = hunt_fmt(l, "hot code outside any span: %s, %.1f%% of the sampled CPU time", f->func,
                            share * 100.0);
        h->hint = hunt_fmt(l, "wrap the code that calls %s in a span (@jäger / JAGER_SPAN) to see it per call path, "
                              "or check whether that work is needed",
                           f->func);
        hunt_ev(h, "outside_share", share * 100.0, "%");
        hunt_ev(h, "samples_outside", (double)f->outside, "count");
        hunt_ev(h, "self_share", (double)f->self / (double)s->weight * 100.0, "%");
        hunt_ev(h, "total_share", (double)f->total / (double)s->weight * 100.0, "%");
    }
}

void hunt_samples_annotate(const jm_model *m, hunt_list *l)
{
    const jm_samples *s = &m->samples;
    if (!s->weight) return;
    for (size_t i = 0; i < l->n; i++) {
        hunt_finding *f = &l->items[i];
        if (f->kind != HUNT_SLOW_REGION || !f->site) continue;
        uint64_t in = 0;
        uint32_t first = UINT32_MAX;
        for (uint32_t k = 0; k < s->nsite_fns; k++)
            if (s->site_fns[k].site == f->site) {
                if (first == UINT32_MAX) first = k;
                in += s->site_fns[k].self;
            }
        if (!in) continue;
        for (uint32_t k = first, shown = 0; k < s->nsite_fns && s->site_fns[k].site == f->site && shown < 3; k++, shown++) {
            const jm_sample_fn *fn = &s->fns[s->site_fns[k].fn];
            hunt_detail(l, f, "sampled inside: %s %.1f%% (%s:%u)", fn->func,
                        (double)s->site_fns[k].self / (double)in * 100.0, fn->file, fn->line);
        }
        const jm_sample_fn *top = &s->fns[s->site_fns[first].fn];
        hunt_ev(f, "hot_function_share", (double)s->site_fns[first].self / (double)in * 100.0, "%");
        if (!f->func || !*f->func) f->func = top->func;
    }
}
