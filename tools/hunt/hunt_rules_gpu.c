/* hunt_rules_gpu.c — rules on the cuda plugin's events (model: m->cuda): small kernels,
 * launch-bound runs, transfer-bound runs. Thresholds and reasoning: docs/hunt.md. */
#include <stdio.h>
#include <string.h>

#include "hunt_priv.h"

#define SMALL_MIN_KERNELS 100  /* a site launching fewer is not a pattern worth a finding */
#define SMALL_MIN_SHARE 0.25   /* ≥ 25% of its kernels under JM_CUDA_SMALL_THREADS threads … */
#define LAUNCH_BOUND_RATIO 2.0 /* host time in launch calls ≥ 2× the GPU's busy time */
#define LAUNCH_BOUND_MIN 100   /* launches */

/* "apply_bc ← assemble ← main": the symbolised frames of a launch stack that are not the
 * plugin's, CUDA's or the C library's. */
static void call_path(const jm_model *m, jager_stack_id stack, char *out, size_t size)
{
    out[0] = 0;
    const uint64_t *ips;
    uint32_t n = 0;
    if (!stack || jager_reader_stack(m->reader, stack, &ips, &n) != JAGER_OK) return;
    size_t o = 0;
    uint32_t shown = 0;
    for (uint32_t i = 0; i < n && shown < 4; i++) {
        jager_frame fr[4];
        uint32_t nf = jager_reader_symbolize(m->reader, ips[i], fr, 4);
        if (!nf) continue;
        const char *f = fr[0].func;
        if (!f || !*f || f[0] == '?' || !strncmp(f, "cu", 2) || !strncmp(f, "__", 2) || !strncmp(f, "fake_", 5) ||
            !strncmp(f, "_Z", 2) || !strcmp(f, "main"))
            continue;
        int w = snprintf(out + o, size - o, "%s%s", shown ? " ← " : "", f);
        if (w < 0 || (size_t)w >= size - o) break;
        o += (size_t)w;
        shown++;
    }
}

/* A GPU-side cost as a share of the run's wall time (GPU work overlaps the host's, so the
 * host's instrumented time is no base for it), at most 100%. */
static double gpu_pct(const jm_model *m, double cost)
{
    double pct = m->run_ns ? cost / (double)m->run_ns * 100.0 : 0;
    return pct > 100.0 ? 100.0 : pct;
}

static const char *site_name(const jm_model *m, jager_site site)
{
    if (site && site < m->nsites && m->sites[site].name) return m->sites[site].name;
    return "(outside spans)";
}

void hunt_rule_small_kernels(const jm_model *m, hunt_list *l)
{
    const jm_cuda *c = &m->cuda;
    double base = hunt_base(m, HUNT_SMALL_KERNELS);
    for (uint32_t i = 0; i < c->nsites; i++) {
        const jm_cuda_site *s = &c->sites[i];
        if (s->kernels < SMALL_MIN_KERNELS || !s->launches) continue;
        double share = (double)s->small / (double)s->kernels;
        double gpu_each = (double)s->gpu_ns / (double)s->kernels, launch_each = (double)s->launch_ns / (double)s->launches;
        int ratio_low = gpu_each < launch_each; /* the compute-to-launch ratio is below 1 */
        if (share < SMALL_MIN_SHARE && !ratio_low) continue;
        /* merging the launches saves most of their host cost beyond the GPU work itself */
        double cost = (double)s->launch_ns - (double)s->small_gpu_ns;
        if (cost <= 0) cost = (double)s->launch_ns;
        hunt_finding *f = hunt_add(l, HUNT_SMALL_KERNELS, 2, cost, m);
        if (!f) return;
        if (s->site) hunt_at_site(f, m, s->site);
        f->pct_of_run = base > 0 ? cost / base * 100.0 : 0;
        char path[400], a[32], b[32];
        call_path(m, s->stack, path, sizeof path);
        f->title = hunt_fmt(l,
                            "%.0f%% of the kernels launched in `%s` run fewer than %u threads; they take %s on the GPU "
                            "against %s of launch cost each%s%s — merge them",
                            100.0 * share, site_name(m, s->site), JM_CUDA_SMALL_THREADS, hunt_ns(a, sizeof a, gpu_each),
                            hunt_ns(b, sizeof b, launch_each), path[0] ? " in " : "", path);
        f->hint = hunt_fmt(l, "Each launch costs microseconds of host time however little the kernel does: fuse the "
                              "small kernels into one (loop inside the kernel, or over a batch of items), launch "
                              "them as a CUDA graph, or give each launch enough threads (≥ %u) to amortise it.",
                           JM_CUDA_SMALL_THREADS);
        hunt_ev(f, "kernels", (double)s->kernels, "count");
        hunt_ev(f, "small_pct", 100.0 * share, "%");
        hunt_ev(f, "gpu_ns_per_kernel", gpu_each, "ns");
        hunt_ev(f, "launch_ns_per_call", launch_each, "ns");
        hunt_ev(f, "compute_to_launch", launch_each > 0 ? gpu_each / launch_each : 0, "");
        hunt_ev(f, "launch_ns", (double)s->launch_ns, "ns");
        hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
        if (path[0]) hunt_detail(l, f, "launched from %s", path);
    }
}

void hunt_rule_launch_bound(const jm_model *m, hunt_list *l)
{
    const jm_cuda *c = &m->cuda;
    if (c->launches < LAUNCH_BOUND_MIN || (double)c->launch_ns < LAUNCH_BOUND_RATIO * (double)c->gpu_ns) return;
    double cost = (double)c->launch_ns - (double)c->gpu_ns;
    hunt_finding *f = hunt_add(l, HUNT_LAUNCH_BOUND, 2, cost, m);
    if (!f) return;
    double base = hunt_base(m, HUNT_LAUNCH_BOUND);
    f->pct_of_run = base > 0 ? cost / base * 100.0 : 0;
    char a[32], b[32];
    f->title = hunt_fmt(l, "Launch-bound: %s of host time in %llu launch calls against %s of GPU busy time (%.1f×)",
                        hunt_ns(a, sizeof a, (double)c->launch_ns), (unsigned long long)c->launches,
                        hunt_ns(b, sizeof b, (double)c->gpu_ns), c->gpu_ns ? (double)c->launch_ns / (double)c->gpu_ns : 0);
    f->hint = hunt_fmt(l, "The GPU waits for the host to launch work: fewer, larger kernels (fusion), CUDA graphs "
                          "for repeated launch sequences, or launches from several streams/threads. See the "
                          "small_kernels findings for the sites that launch most.");
    hunt_ev(f, "launch_ns", (double)c->launch_ns, "ns");
    hunt_ev(f, "gpu_busy_ns", (double)c->gpu_ns, "ns");
    hunt_ev(f, "launches", (double)c->launches, "count");
    hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
}

void hunt_rule_transfer_bound(const jm_model *m, hunt_list *l)
{
    const jm_cuda *c = &m->cuda;
    uint64_t copy_ns = 0, copies = 0;
    for (int k = 0; k < JM_COPY_KINDS; k++) {
        copy_ns += c->copy_ns[k];
        copies += c->copies[k];
    }
    if (!copies || copy_ns <= c->gpu_ns) return;
    double cost = (double)(copy_ns - c->gpu_ns);
    hunt_finding *f = hunt_add(l, HUNT_TRANSFER_BOUND, 1, cost, m);
    if (!f) return;
    f->pct_of_run = gpu_pct(m, cost);
    char a[32], b[32];
    f->title = hunt_fmt(l, "Transfer-bound: copies take %s against %s of kernels%s", hunt_ns(a, sizeof a, (double)copy_ns),
                        hunt_ns(b, sizeof b, (double)c->gpu_ns),
                        c->pageable_copies ? "; some copies use pageable host memory" : "");
    f->hint = hunt_fmt(l, "Keep data on the device between kernels; where copies remain, use pinned host memory "
                          "(cudaMallocHost / CUDA.jl's pinned arrays) and cudaMemcpyAsync on a stream so copies "
                          "overlap compute.");
    hunt_ev(f, "copy_ns", (double)copy_ns, "ns");
    hunt_ev(f, "gpu_busy_ns", (double)c->gpu_ns, "ns");
    hunt_ev(f, "pageable_copies", (double)c->pageable_copies, "count");
    hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
}

#define OCC_MAX_BLOCKS_PER_SM 32 /* resident blocks per SM on compute capability 5.0 … 9.0 */
#define OCC_LOW 0.5              /* theoretical occupancy below 50% … */
#define OCC_MIN_SHARE 0.05       /* … of a kernel holding ≥ 5% of the GPU time */

/* Theoretical occupancy of one kernel shape on the device: resident warps per SM over the
 * SM's maximum, with the limit that binds ("block size", "registers", "shared memory"). */
static double occupancy(const jm_cuda *c, const jm_cuda_kernel *k, const char **limit)
{
    uint64_t warps = (k->block_threads + 31) / 32;
    uint64_t max_warps = c->max_threads_per_sm / 32;
    if (!warps || !max_warps) return 1.0;
    uint64_t blocks = OCC_MAX_BLOCKS_PER_SM, b;
    *limit = "blocks per SM";
    if ((b = c->max_threads_per_sm / (warps * 32)) < blocks) {
        blocks = b;
        *limit = "block size";
    }
    if (k->registers && c->registers_per_sm && (b = c->registers_per_sm / (k->registers * warps * 32)) < blocks) {
        blocks = b;
        *limit = "registers";
    }
    if (k->shared_bytes && c->shared_per_sm && (b = c->shared_per_sm / k->shared_bytes) < blocks) {
        blocks = b;
        *limit = "shared memory";
    }
    double occ = (double)(blocks * warps) / (double)max_warps;
    return occ > 1.0 ? 1.0 : occ;
}

void hunt_rule_low_occupancy(const jm_model *m, hunt_list *l)
{
    const jm_cuda *c = &m->cuda;
    if (!c->max_threads_per_sm || !c->gpu_ns) return;
    for (uint32_t i = 0; i < c->nnames; i++) {
        const jm_cuda_kernel *k = &c->names[i];
        if ((double)k->total_ns < OCC_MIN_SHARE * (double)c->gpu_ns) continue;
        if (c->sm_count && k->grid_blocks < c->sm_count) continue; /* a grid that cannot fill the device: small_kernels' case */
        const char *limit = "";
        double occ = occupancy(c, k, &limit);
        if (occ >= OCC_LOW) continue;
        double cost = (double)k->total_ns * (1.0 - occ / OCC_LOW); /* what reaching 50% might save, at most */
        hunt_finding *f = hunt_add(l, HUNT_LOW_OCCUPANCY, 1, cost, m);
        if (!f) return;
        f->pct_of_run = gpu_pct(m, cost);
        char a[32];
        f->title = hunt_fmt(l, "Kernel `%s` reaches %.0f%% theoretical occupancy, limited by %s (%llu threads per block, "
                               "%llu registers per thread, %llu bytes of shared memory); it holds %s of GPU time",
                            k->name, 100.0 * occ, limit, (unsigned long long)k->block_threads,
                            (unsigned long long)k->registers, (unsigned long long)k->shared_bytes,
                            hunt_ns(a, sizeof a, (double)k->total_ns));
        f->hint = hunt_fmt(l, "Fewer resident warps hide less memory latency: %s",
                           !strcmp(limit, "registers") ? "cap registers (`__launch_bounds__`, `-maxrregcount`) or split the kernel"
                           : !strcmp(limit, "shared memory") ? "use less shared memory per block (smaller tiles) or fewer blocks' worth per SM"
                                                             : "choose a block size that is a multiple of 32 and lets several blocks share an SM");
        hunt_ev(f, "occupancy_pct", 100.0 * occ, "%");
        hunt_ev(f, "block_threads", (double)k->block_threads, "count");
        hunt_ev(f, "registers", (double)k->registers, "count");
        hunt_ev(f, "shared_bytes", (double)k->shared_bytes, "bytes");
        hunt_ev(f, "gpu_ns", (double)k->total_ns, "ns");
        hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
    }
}
