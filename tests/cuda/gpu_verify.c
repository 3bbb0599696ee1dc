/* gpu_verify.c — checks a recording of the cuda plugin, for tests/cuda/gpu-check.sh on a
 * GPU machine and for cuda_verify here (on the test double's recording):
 *
 *   cuda_gpu_verify FILE.jgr --kernels N --stack-func NAME[,NAME...] [--min-small F]
 *
 * - cuda.kernel events == N == cuda.launch events of kind "kernel" (every launch recorded)
 * - every kernel starts after the launch call that made it began (the Jäger clock)
 * - every launch lies inside a span of its launch site on its own thread
 * - every kernel launch's host stack names one of the NAMEs (symbolised from the file)
 * - drops are zero or counted: the summary's dropped_records equals the cuda.drop records
 * - the fraction of launches under 1,024 threads is at least F (the small_kernels signal)
 * Prints its figures; exits 1 on the first failed check, 2 on bad usage. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager_reader.h"

#define MAXL 200000
typedef struct launch {
    uint32_t corr, thread, site;
    uint64_t t0, t1, stack;
} launch;
typedef struct span {
    uint32_t thread, site;
    uint64_t t0, t1;
} span;

static int field(const jager_type_desc *d, const char *name)
{
    for (uint32_t i = 0; i < d->nfields; i++)
        if (strcmp(d->fields[i].name, name) == 0) return (int)i;
    fprintf(stderr, "verify: type %s has no field %s\n", d->name, name);
    exit(1);
}

static int cmp_corr(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *funcs = NULL;
    long want = -1;
    double min_small = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernels") && i + 1 < argc) want = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--stack-func") && i + 1 < argc) funcs = argv[++i];
        else if (!strcmp(argv[i], "--min-small") && i + 1 < argc) min_small = strtod(argv[++i], NULL);
        else if (!path) path = argv[i];
        else {
            fprintf(stderr, "usage: cuda_gpu_verify FILE.jgr --kernels N --stack-func NAME[,NAME] [--min-small F]\n");
            return 2;
        }
    }
    if (!path || want < 0 || !funcs) {
        fprintf(stderr, "usage: cuda_gpu_verify FILE.jgr --kernels N --stack-func NAME[,NAME] [--min-small F]\n");
        return 2;
    }
    jager_reader *r;
    if (jager_reader_open(path, &r) != JAGER_OK) {
        fprintf(stderr, "verify: cannot read %s\n", path);
        return 1;
    }
    jager_reader_load_tables(r);
    uint16_t t_launch = jager_reader_type_by_name(r, "cuda.launch"), t_kernel = jager_reader_type_by_name(r, "cuda.kernel"),
             t_drop = jager_reader_type_by_name(r, "cuda.drop"), t_sum = jager_reader_type_by_name(r, "cuda.summary");
    if (!t_launch || !t_kernel || !t_sum) {
        fprintf(stderr, "verify: %s has no cuda.launch/cuda.kernel/cuda.summary types (did the plugin step aside?)\n", path);
        return 1;
    }
    const jager_type_desc *dl = jager_reader_type(r, t_launch), *dk = jager_reader_type(r, t_kernel),
                          *ds = jager_reader_type(r, t_sum), *dd = t_drop ? jager_reader_type(r, t_drop) : NULL;
    int l_kind = field(dl, "kind"), l_corr = field(dl, "correlation_id"), l_stack = field(dl, "stack"),
        l_site = field(dl, "site"), l_dur = field(dl, "duration_ns");
    int k_corr = field(dk, "correlation_id"), k_lns = field(dk, "launch_ns"), k_bx = field(dk, "block_x"),
        k_by = field(dk, "block_y"), k_bz = field(dk, "block_z"), k_gx = field(dk, "grid_x"), k_gy = field(dk, "grid_y"),
        k_gz = field(dk, "grid_z"), k_dur = field(dk, "duration_ns");
    int s_drop = field(ds, "dropped_records"), s_miss = field(ds, "correlation_misses");
    int d_rec = dd ? field(dd, "records") : 0;

    launch *ls = calloc(MAXL, sizeof *ls);
    span *sp = calloc(MAXL, sizeof *sp);
    if (!ls || !sp) return 1;
    size_t nl = 0, ns = 0, nk = 0, nsmall = 0, bad_order = 0, no_launch = 0;
    uint64_t dropped_recs = 0, sum_dropped = 0, misses = 0, kernel_ns = 0, launch_ns = 0, small_ns = 0;
    jager_event ev;
    int rc;
    /* pass 1: launches and spans */
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
        if (ev.type == t_launch && p->fields[l_kind] == 1 && nl < MAXL) {
            ls[nl++] = (launch){(uint32_t)p->fields[l_corr], ev.thread, (uint32_t)p->fields[l_site], ev.time_ns,
                                ev.time_ns + p->fields[l_dur], p->fields[l_stack]};
            launch_ns += p->fields[l_dur];
        } else if (ev.type == JAGER_EV_SPAN && ns < MAXL) {
            sp[ns++] = (span){ev.thread, ev.rec->aux, ev.time_ns, ev.end_ns};
        }
    }
    qsort(ls, nl, sizeof *ls, cmp_corr);
    jager_reader_rewind(r);
    /* pass 2: kernels, drops, summary */
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
        if (ev.type == t_kernel) {
            nk++;
            kernel_ns += p->fields[k_dur];
            launch key = {.corr = (uint32_t)p->fields[k_corr]};
            const launch *l = bsearch(&key, ls, nl, sizeof *ls, cmp_corr);
            if (!l) no_launch++;
            if (ev.time_ns < p->fields[k_lns] || (l && ev.time_ns < l->t0)) bad_order++;
            uint64_t threads = p->fields[k_bx] * p->fields[k_by] * p->fields[k_bz] * p->fields[k_gx] *
                               p->fields[k_gy] * p->fields[k_gz];
            if (threads < 1024) {
                nsmall++;
                small_ns += p->fields[k_dur];
            }
        } else if (t_drop && ev.type == t_drop) {
            dropped_recs += p->fields[d_rec];
        } else if (ev.type == t_sum) {
            sum_dropped = p->fields[s_drop];
            misses = p->fields[s_miss];
        }
    }
    /* spans around launches, stacks naming the launching functions */
    size_t outside = 0, unnamed = 0;
    for (size_t i = 0; i < nl; i++) {
        int in = 0;
        for (size_t j = 0; j < ns && !in; j++)
            in = sp[j].thread == ls[i].thread && sp[j].site == ls[i].site && sp[j].t0 <= ls[i].t0 &&
                 ls[i].t1 <= sp[j].t1;
        if (!in) outside++;
        const uint64_t *ips;
        uint32_t n = 0;
        int named = 0;
        if (ls[i].stack && jager_reader_stack(r, ls[i].stack, &ips, &n) == JAGER_OK) {
            for (uint32_t k = 0; k < n && !named; k++) {
                jager_frame fr[8];
                uint32_t nf = jager_reader_symbolize(r, ips[k], fr, 8);
                for (uint32_t f = 0; f < nf && !named; f++) {
                    char list[512];
                    snprintf(list, sizeof list, "%s", funcs);
                    for (char *tok = strtok(list, ","); tok && !named; tok = strtok(NULL, ","))
                        named = strstr(fr[f].func, tok) != NULL;
                }
            }
        }
        if (!named) unnamed++;
    }
    double small = nk ? (double)nsmall / (double)nk : 0;
    printf("verify: kernels %zu (want %ld), kernel launches %zu, spans %zu\n", nk, want, nl, ns);
    printf("verify: kernels before their launch %zu, without a launch %zu, correlation misses %" PRIu64 "\n", bad_order,
           no_launch, misses);
    printf("verify: launches outside their span %zu, stacks not naming %s: %zu\n", outside, funcs, unnamed);
    printf("verify: dropped %" PRIu64 " (drop records %" PRIu64 ")\n", sum_dropped, dropped_recs);
    printf("verify: small launches (< 1024 threads) %.1f %%: %.0f ns of GPU time against %.0f ns of launch calls\n",
           100.0 * small, (double)small_ns, (double)launch_ns);
    printf("verify: GPU time %" PRIu64 " ns over %zu kernels (%.0f ns each)\n", kernel_ns, nk,
           nk ? (double)kernel_ns / (double)nk : 0.0);
    int ok = 1;
#define CHECK(c, msg)                                       \
    if (!(c)) {                                             \
        printf("verify: FAILED: %s\n", msg);                \
        ok = 0;                                             \
    }
    CHECK(nk == (size_t)want && nl == (size_t)want, "kernel count equals launches");
    CHECK(bad_order == 0, "every kernel after its launch");
    CHECK(no_launch == 0 && misses == 0, "every kernel found its launch");
    CHECK(outside == 0, "every launch inside its span");
    CHECK(unnamed == 0, "host stacks name the launching functions");
    CHECK(sum_dropped == dropped_recs, "drops counted");
    CHECK(small >= min_small, "small kernels");
    jager_reader_close(r);
    free(ls);
    free(sp);
    printf("verify: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
