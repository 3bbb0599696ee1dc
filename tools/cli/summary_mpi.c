/* summary_mpi.c — `jager summary`'s MPI section for a job (model_mpi.h): per MPI function
 * the calls and the time of each rank (min / mean / max over ranks, and the rank that took
 * longest), per rank its time in MPI, and the job's message matching and clock checks
 * (receives that complete before their send began: clock-condition violations). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "summary_mpi.h"
#include "toolutil.h"

typedef struct fn_row {
    uint64_t calls, bytes;
    double *per_rank; /* time per part */
} fn_row;

static fn_row *rows_build(const jm_mpi *m)
{
    fn_row *rows = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *rows);
    if (!rows) return NULL;
    for (uint32_t f = 0; f < m->nfuncs; f++)
        if (!(rows[f].per_rank = calloc(m->nranks ? m->nranks : 1, sizeof(double)))) {
            for (uint32_t g = 0; g < f; g++) free(rows[g].per_rank);
            free(rows);
            return NULL;
        }
    for (size_t i = 0; i < m->ncalls; i++) {
        const jm_mpi_call *c = &m->calls[i];
        rows[c->func].calls++;
        rows[c->func].bytes += c->bytes;
        rows[c->func].per_rank[c->part] += (double)(c->t1 - c->t0);
    }
    return rows;
}

static void rows_free(fn_row *rows, uint32_t n)
{
    for (uint32_t f = 0; rows && f < n; f++) free(rows[f].per_rank);
    free(rows);
}

static void stats(const jm_mpi *m, const fn_row *r, double *mn, double *mean, double *mx, size_t *arg)
{
    *mn = *mx = *mean = 0;
    *arg = 0;
    for (size_t p = 0; p < m->nranks; p++) {
        double v = r->per_rank[p];
        if (p == 0 || v < *mn) *mn = v;
        if (p == 0 || v > *mx) *mx = v, *arg = p;
        *mean += v;
    }
    if (m->nranks) *mean /= (double)m->nranks;
}

int summary_mpi_text(const jm_mpi *m, const jm_job *j)
{
    if (!m->ncalls) return 0;
    fn_row *rows = rows_build(m);
    if (!rows) return -1;
    char a[32], b[32], c[32], d[32];
    printf("\nMPI over %zu rank(s): time per rank in each function (min / mean / max, and the rank that took longest)\n",
           m->nranks);
    printf("  %-26s %10s %12s %12s %12s %6s %12s\n", "function", "calls", "min", "mean", "max", "rank", "bytes");
    for (uint32_t f = 0; f < m->nfuncs; f++) {
        double mn, mean, mx;
        size_t arg;
        stats(m, &rows[f], &mn, &mean, &mx, &arg);
        printf("  %-26s %10" PRIu64 " %12s %12s %12s %6lld %12s\n", m->funcs[f], rows[f].calls, tu_fmt_ns(a, sizeof a, mn),
               tu_fmt_ns(b, sizeof b, mean), tu_fmt_ns(c, sizeof c, mx), (long long)j->parts[arg].rank,
               tu_fmt_bytes(d, sizeof d, (double)rows[f].bytes));
    }
    printf("  per rank:");
    for (size_t p = 0; p < m->nranks; p++) {
        const jm_mpi_rank *r = &m->ranks[p];
        double span = r->end > r->start ? (double)(r->end - r->start) : 0;
        printf("%s rank %lld %s in MPI (%.0f%%)", p ? "," : "", (long long)r->rank, tu_fmt_ns(a, sizeof a, (double)r->mpi_ns),
               span > 0 ? (double)r->mpi_ns / span * 100 : 0);
    }
    printf("\n  messages: %zu matched, %" PRIu64 " sends and %" PRIu64 " receives without their other side in the input; "
           "%" PRIu64 " clock-condition violation(s) (a receive that completed before its send began), %" PRIu64
           " repaired for the analysis (the receiver's later calls moved forward)\n",
           m->nmsgs, m->unmatched_sends, m->unmatched_recvs, m->clock_violations, m->clock_repaired);
    if (j->nmissing) {
        printf("  missing rank(s):");
        for (size_t i = 0; i < j->nmissing; i++) printf("%s%u", i ? "," : " ", j->missing[i]);
        printf("\n");
    }
    rows_free(rows, m->nfuncs);
    return 0;
}

int summary_mpi_json(const jm_mpi *m, const jm_job *j)
{
    fn_row *rows = rows_build(m);
    if (!rows) return -1;
    printf("{\"functions\":[");
    for (uint32_t f = 0; f < m->nfuncs; f++) {
        double mn, mean, mx;
        size_t arg;
        stats(m, &rows[f], &mn, &mean, &mx, &arg);
        printf("%s{\"function\":", f ? "," : "");
        tu_json_str(stdout, m->funcs[f], (size_t)-1);
        printf(",\"calls\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"min_ns\":%.0f,\"mean_ns\":%.0f,\"max_ns\":%.0f,\"max_rank\":%lld}",
               rows[f].calls, rows[f].bytes, mn, mean, mx, (long long)j->parts[arg].rank);
    }
    printf("],\"ranks\":[");
    for (size_t p = 0; p < m->nranks; p++) {
        const jm_mpi_rank *r = &m->ranks[p];
        printf("%s{\"rank\":%lld,\"mpi_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64 ",\"clock_offset_init_ns\":%" PRId64
               ",\"clock_offset_finalize_ns\":%" PRId64 "}",
               p ? "," : "", (long long)r->rank, r->mpi_ns, r->end > r->start ? r->end - r->start : 0, r->offset0, r->offset1);
    }
    printf("],\"messages\":%zu,\"unmatched_sends\":%" PRIu64 ",\"unmatched_receives\":%" PRIu64
           ",\"clock_violations\":%" PRIu64 ",\"clock_repaired\":%" PRIu64 ",\"missing_ranks\":[",
           m->nmsgs, m->unmatched_sends, m->unmatched_recvs, m->clock_violations, m->clock_repaired);
    for (size_t i = 0; i < j->nmissing; i++) printf("%s%u", i ? "," : "", j->missing[i]);
    printf("]}");
    rows_free(rows, m->nfuncs);
    return 0;
}
