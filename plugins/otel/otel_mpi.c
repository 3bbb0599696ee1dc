/* The MPI job as one trace. The mpi plugin (plugins/mpi) broadcasts rank 0's trace id at
 * MPI_Init (run metadata mpi.trace_id, mpi.root_span_id) and, at MPI_Finalize, records
 * each rank's span (mpi.rank) and, on rank 0, the job's root span (mpi.job). When that
 * metadata appears, this plugin adopts the job's trace: every span and log record not yet
 * sent moves from the run's own trace into the job's, the process span becomes a child of
 * the job's root span, and the mpi.rank / mpi.job records are exported as spans, so the
 * backend shows job → ranks' process spans (and rank spans) → the program's spans.
 *
 * Runs on the collector thread (the sink), and once more in stop (after the collector
 * was drained); the ids it writes are read on the collector thread and by stop. */
#include <stdlib.h>
#include <string.h>

#include "otel_internal.h"

static int unhex(const char *s, uint8_t *out, size_t n)
{
    if (!s || strlen(s) != 2 * n) return -1;
    for (size_t i = 0; i < 2 * n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return -1;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | d : d << 4);
    }
    return 0;
}

static void put_be64(uint8_t out[8], uint64_t v)
{
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (56 - 8 * i));
}

void ot_mpi_adopt(ot_state *st)
{
    if (atomic_load(&st->mpi_adopted)) return;
    uint8_t trace[16], root[8];
    static const uint8_t zero[16];
    if (unhex(st->host->metadata_get("mpi.trace_id"), trace, 16) ||
        unhex(st->host->metadata_get("mpi.root_span_id"), root, 8) || !memcmp(trace, zero, 16) ||
        !memcmp(root, zero, 8))
        return;
    pthread_mutex_lock(&st->lock);
    /* What is queued still carries the run's own trace: move it into the job's. What the
     * exporter already took (sent before MPI_Init reached this thread) stays where it is. */
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < st->qn[s]; i++) {
            void *it = st->q[s][(st->qhead[s] + i) % st->cfg.queue_cap[s]];
            uint8_t *t = s == OT_SPANS ? ((ot_span *)it)->trace_id : ((ot_log *)it)->trace_id;
            if (!memcmp(t, st->own_trace_id, 16)) memcpy(t, trace, 16);
        }
    memcpy(st->trace_id, trace, 16);
    memcpy(st->root_parent, root, 8);
    st->has_root_parent = 1;
    pthread_mutex_unlock(&st->lock);
    atomic_store(&st->mpi_adopted, 1);
    char h[40];
    ot_hex(trace, 16, h);
    st->host->metadata_set("otel.trace_id", h);
    ot_hex(root, 8, h);
    st->host->metadata_set("otel.parent_span_id", h);
    st->host->metadata_set("otel.trace_from", "mpi");
}

int ot_mpi_kind(const char *type_name)
{
    if (!type_name) return 0;
    if (!strcmp(type_name, "mpi.rank")) return 1;
    if (!strcmp(type_name, "mpi.job")) return 2;
    return 0;
}

/* mpi.rank: rank, size, duration_ns, span_id, parent_span_id, pid; mpi.job: size,
 * duration_ns, span_id, parent_span_id (0: none). Both start at the rank's MPI_Init. */
ot_span *ot_mpi_span(ot_state *st, int kind, const jager_record *r, size_t rbytes, uint64_t os_tid)
{
    const jager_rec_plugin *p = (const jager_rec_plugin *)r;
    size_t nf = kind == 1 ? 5 : 4;
    if (rbytes < sizeof *p + nf * 8u) return NULL;
    const uint64_t *f = p->fields + (kind == 1 ? 2 : 1); /* duration_ns, span_id, parent_span_id */
    if (!f[1]) return NULL;
    ot_span *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    memcpy(s->trace_id, st->trace_id, 16);
    put_be64(s->span_id, f[1]);
    if (f[2]) put_be64(s->parent, f[2]), s->has_parent = 1;
    s->start = ot_unix(st, p->time_ns);
    s->end = s->start + f[0];
    s->name = kind == 1 ? "mpi.rank" : "mpi.job";
    s->os_tid = os_tid;
    return s;
}
