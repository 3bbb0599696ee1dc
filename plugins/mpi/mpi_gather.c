/* mpi_gather.c — one file for the job: at MPI_Finalize every rank closes its own recording
 * (the file sink's crash-tolerant .jgr: LZ4 frames with checksums) and rank 0 gathers the
 * files with MPI into one job file, streaming each rank's bytes to disk as they arrive.
 *
 * The job file (docs/mpi.md "Aggregation", read by tools/model/job.c) is a sequence of LZ4
 * skippable frames (magic 0x184D2A51) and whole recordings:
 *
 *   JOB  {"JAGERJOB", u16 major 1, u16 minor 0, u32 world size}
 *   per rank, in rank order: PART {"JAGERPRT", i64 rank, u64 n} then the rank's n bytes
 *   END  {"JAGEREND", u32 k, k × u32 missing rank}
 *
 * so `lz4 -t` still checks every frame, and `jager merge` writes the same bytes from the
 * per-rank files. Each step is bounded by timeout_ms; a rank that does not answer is
 * named in END and the others' data is kept. A rank's own file is removed only after
 * rank 0 acknowledged its part (JAGER_MPI_KEEP_PARTS=1 keeps it). Everything travels on
 * the plugin's own communicator through PMPI, so none of it is recorded as the program's.
 * What happens after MPI_Finalize is not recorded (the core is shut down here). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "mpi_internal.h"

#define TAG_GSIZE 111
#define TAG_GDATA 112
#define TAG_GACK 113
#define TAG_GGO 114
#define GO_AHEAD 16 /* ranks asked for their part ahead of the one rank 0 is receiving */
#define CHUNK (64u << 20) /* bytes per message: an int count, and a bounded buffer at rank 0 */
#define SKIP_MAGIC 0x184D2A51u

static int env_on(const char *name, int def)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    return !(!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off"));
}

/* Replace "%r" in pattern by rep into out. */
static void subst_rank(char *out, size_t size, const char *pattern, const char *rep)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 1 < size; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            o += (size_t)snprintf(out + o, size - o, "%s", rep);
            if (o >= size) o = size - 1;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

void jm_gather_setup(int global)
{
    (void)global; /* preloaded, linked or named in JAGER_PLUGINS: the core names the parts alike */
    const char *out = getenv("JAGER_OUTPUT");
    jm_g.job_path[0] = 0;
    if (!out || !*out || !env_on("JAGER_MPI_AGGREGATE", 1) || jm_g.env_rank < 0) return;
    if (strstr(out, "%r")) { /* ranks record to the pattern, the job to the pattern with "all" */
        subst_rank(jm_g.job_path, sizeof jm_g.job_path, out, "all");
        return;
    }
    /* A pid in the name: one file per process, as asked. One rank: its recording is the job. */
    if (strstr(out, "%p") || jm_g.size == 1) return;
    /* run.jgr: the core records each rank's part to run.jgr.<r> (launch.c: the ranks of a job
     * never share one file); rank 0 gathers them into run.jgr at MPI_Finalize. */
    snprintf(jm_g.job_path, sizeof jm_g.job_path, "%s", out);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait for n requests until deadline; on time-out cancel what is left, return -1. */
static int wait_all(MPI_Request *r, int n, uint64_t deadline)
{
    for (;;) {
        int left = 0;
        for (int i = 0; i < n; i++) { /* (Testall with MPI_STATUSES_IGNORE trips GCC's array-bound checks) */
            int flag = 1;
            if (r[i] != MPI_REQUEST_NULL && PMPI_Test(&r[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
            left += !flag;
        }
        if (!left) return 0;
        if (mono_ns() > deadline) {
            for (int i = 0; i < n; i++)
                if (r[i] != MPI_REQUEST_NULL) {
                    PMPI_Cancel(&r[i]);
                    PMPI_Request_free(&r[i]);
                }
            return -1;
        }
        sched_yield(); /* oversubscribed ranks: let the peer run */
    }
}

static int recv_until(void *buf, int n, int peer, int tag, uint64_t deadline)
{
    MPI_Request r;
    if (PMPI_Irecv(buf, n, MPI_BYTE, peer, tag, jm_g.pcomm, &r) != MPI_SUCCESS) return -1;
    return wait_all(&r, 1, deadline);
}

static uint8_t *read_whole(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    *n = 0;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long sz = ftell(f);
        if (sz > 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)sz)) && fread(b, 1, (size_t)sz, f) == (size_t)sz)
            *n = (size_t)sz;
        else {
            free(b);
            b = NULL;
        }
    }
    fclose(f);
    return b;
}

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); } /* little-endian hosts (x86-64, AArch64) */
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static int write_frame(FILE *f, const char *magic8, const void *body, uint32_t n)
{
    uint8_t h[16];
    put_u32(h, SKIP_MAGIC);
    put_u32(h + 4, 8 + n);
    memcpy(h + 8, magic8, 8);
    return fwrite(h, 1, 16, f) == 16 && (!n || fwrite(body, 1, n, f) == n) ? 0 : -1;
}

static int write_part_header(FILE *f, int64_t rank, uint64_t n)
{
    uint8_t b[16];
    put_u64(b, (uint64_t)rank);
    put_u64(b + 8, n);
    return write_frame(f, "JAGERPRT", b, 16);
}

/* Rank r ≠ 0: rank 0's go, the size, then the bytes in chunks, then rank 0's
 * acknowledgement. Waiting for the go keeps the parts from arriving all at once: a small
 * part goes eagerly, and P of them unasked would sit in MPI's unexpected-message buffers at
 * rank 0 (P × part size); rank 0 asks GO_AHEAD ranks ahead of the one it is writing, so at
 * most that many parts are in flight and the asking is not a round trip per rank (which
 * costs a scheduler slice each on an oversubscribed node). */
static int send_part(const uint8_t *buf, uint64_t n, int to, uint64_t deadline)
{
    int nchunks = (int)((n + CHUNK - 1) / CHUNK), ok = 0, go = 0;
    if (recv_until(&go, (int)sizeof go, to, TAG_GGO, deadline) || go != 1) return -1;
    MPI_Request *rq = calloc((size_t)nchunks + 1, sizeof *rq);
    if (!rq) return -1;
    if (PMPI_Isend(&n, 8, MPI_BYTE, to, TAG_GSIZE, jm_g.pcomm, &rq[0]) != MPI_SUCCESS) rq[0] = MPI_REQUEST_NULL;
    for (int i = 0; i < nchunks; i++) {
        uint64_t off = (uint64_t)i * CHUNK, len = n - off < CHUNK ? n - off : CHUNK;
        if (PMPI_Isend(buf + off, (int)len, MPI_BYTE, to, TAG_GDATA, jm_g.pcomm, &rq[i + 1]) != MPI_SUCCESS)
            rq[i + 1] = MPI_REQUEST_NULL;
    }
    int rc = wait_all(rq, nchunks + 1, deadline);
    free(rq);
    if (rc == 0 && recv_until(&ok, (int)sizeof ok, to, TAG_GACK, deadline) == 0 && ok == 1) return 0;
    return -1;
}

static int recv_part(FILE *f, int r, uint8_t **chunk, uint64_t *cap, uint64_t timeout);

/* A node's leader (gather tree, jm_g.tree): its own part and its node's, each as a PART
 * frame in rank order, in one bundle it sends rank 0 when asked — a size, the included
 * flags of its ranks, then the bytes in chunks; after rank 0's acknowledgement it
 * acknowledges the ranks it included. Memory: the node's parts. \return 0 acknowledged. */
static int send_bundle(const uint8_t *own, size_t own_n, uint64_t timeout, uint64_t deadline)
{
    int me = jm_g.rank, n = jm_g.node_size, go = 1;
    char *bundle = NULL;
    size_t bn = 0;
    FILE *ms = open_memstream(&bundle, &bn);
    uint8_t *inc = calloc((size_t)n + 8, 1), *chunk = NULL;
    uint64_t cap = 0;
    int bad = !ms || !inc;
    if (!bad) bad = write_part_header(ms, me, own_n) || (own_n && fwrite(own, 1, own_n, ms) != own_n);
    inc[8] = 1;
    for (int k = 1; k < n && !bad; k++) { /* each member when it is asked: one part in flight */
        MPI_Request rq;
        if (PMPI_Isend(&go, 1, MPI_INT, me + k, TAG_GGO, jm_g.pcomm, &rq) != MPI_SUCCESS) continue;
        long at = ftell(ms);
        if (recv_part(ms, me + k, &chunk, &cap, timeout) == 0) inc[8 + k] = 1;
        else if (at >= 0) { /* a part cut short is left out whole: its rank keeps its file */
            fflush(ms);
            fseek(ms, at, SEEK_SET);
        }
        wait_all(&rq, 1, mono_ns() + timeout);
    }
    long end = ms ? ftell(ms) : -1;
    if (ms && fclose(ms)) bad = 1;
    free(chunk);
    if (end >= 0) bn = (size_t)end;
    uint64_t nb = bad ? 0 : (uint64_t)bn;
    memcpy(inc, &nb, 8);
    int rc = -1, ack = 0;
    if (!bad && recv_until(&go, (int)sizeof go, 0, TAG_GGO, deadline) == 0 && go == 1) {
        int nchunks = (int)((nb + CHUNK - 1) / CHUNK);
        MPI_Request *rq = calloc((size_t)nchunks + 1, sizeof *rq);
        if (rq) {
            if (PMPI_Isend(inc, 8 + n, MPI_BYTE, 0, TAG_GSIZE, jm_g.pcomm, &rq[0]) != MPI_SUCCESS) rq[0] = MPI_REQUEST_NULL;
            for (int i = 0; i < nchunks; i++) {
                uint64_t off = (uint64_t)i * CHUNK, len = nb - off < CHUNK ? nb - off : CHUNK;
                if (PMPI_Isend(bundle + off, (int)len, MPI_BYTE, 0, TAG_GDATA, jm_g.pcomm, &rq[i + 1]) != MPI_SUCCESS)
                    rq[i + 1] = MPI_REQUEST_NULL;
            }
            if (wait_all(rq, nchunks + 1, deadline) == 0 && recv_until(&ack, (int)sizeof ack, 0, TAG_GACK, deadline) == 0 &&
                ack == 1)
                rc = 0;
            free(rq);
        }
    }
    for (int k = 1; k < n && rc == 0; k++) { /* the parts are safe in the job's file */
        int one = 1;
        MPI_Request rq;
        if (inc[8 + k] && PMPI_Isend(&one, 1, MPI_INT, me + k, TAG_GACK, jm_g.pcomm, &rq) == MPI_SUCCESS)
            wait_all(&rq, 1, mono_ns() + timeout);
    }
    free(inc);
    free(bundle);
    return rc;
}

/* \p n bytes of rank r's data messages into \p f, CHUNK bytes a message at most, through
 * one buffer (grown to the largest message seen). \return the bytes written: n when whole. */
static uint64_t recv_to_file(FILE *f, int r, uint64_t n, uint8_t **chunk, uint64_t *cap, uint64_t timeout)
{
    uint64_t got = 0;
    while (got < n) {
        uint64_t len = n - got < CHUNK ? n - got : CHUNK;
        if (*cap < len) {
            uint8_t *b = realloc(*chunk, len);
            if (!b) break;
            *chunk = b;
            *cap = len;
        }
        if (recv_until(*chunk, (int)len, r, TAG_GDATA, mono_ns() + timeout)) break;
        if (fwrite(*chunk, 1, len, f) != len) break;
        got += len;
    }
    return got;
}

/* Rank 0: leader r's bundle into f (its ranks' PART frames, as they are); ok[] and lost[]
 * get its ranks. A bundle that does not arrive whole is cut off the file: its ranks keep
 * their own files. */
static void recv_bundle(FILE *f, int r, int n, uint8_t *ok, uint32_t *lost, uint32_t *nlost, uint8_t **chunk,
                        uint64_t *cap, uint64_t timeout)
{
    uint8_t *inc = calloc((size_t)n + 8, 1);
    long at = ftell(f);
    int whole = 0;
    uint64_t deadline = mono_ns() + (uint64_t)(n + 1) * timeout; /* the leader waits for its ranks first */
    if (inc && recv_until(inc, 8 + n, r, TAG_GSIZE, deadline) == 0) {
        uint64_t nb;
        memcpy(&nb, inc, 8);
        whole = nb > 0 && recv_to_file(f, r, nb, chunk, cap, timeout) == nb;
    }
    if (!whole && at >= 0) { /* nothing of it stays */
        fflush(f);
        if (ftruncate(fileno(f), at) == 0) fseek(f, at, SEEK_SET);
    }
    for (int k = 0; k < n; k++) {
        if (whole && inc[8 + k]) ok[r + k] = 1;
        else lost[(*nlost)++] = (uint32_t)(r + k);
    }
    if (whole) ok[r] = 2; /* the leader: acknowledged for its node */
    free(inc);
}

/* Rank 0: rank r's part into f, as it arrives, through one buffer of at most CHUNK bytes
 * (grown to the largest message seen). \return 0 whole, -1 nothing or a cut part. */
static int recv_part(FILE *f, int r, uint8_t **chunk, uint64_t *cap, uint64_t timeout)
{
    uint64_t n = 0;
    if (recv_until(&n, 8, r, TAG_GSIZE, mono_ns() + timeout)) return -1;
    long at = ftell(f);
    if (write_part_header(f, r, n)) return -1;
    uint64_t got = recv_to_file(f, r, n, chunk, cap, timeout);
    if (got == n) return 0;
    /* keep what arrived (a readable prefix: whole frames), with its true length */
    long end = ftell(f);
    if (at >= 0 && fseek(f, at, SEEK_SET) == 0) {
        write_part_header(f, r, got);
        fseek(f, end, SEEK_SET);
    }
    return -1;
}

static void gather_root(const char *part, const uint8_t *own, size_t own_n, const uint8_t *missing, uint64_t timeout,
                        int keep)
{
    int P = jm_g.size;
    char job[4200], tmp[4300];
    /* %p in the job's name is rank 0's pid, as the core expands it in a rank's file */
    size_t o = 0;
    for (const char *p = jm_g.job_path; *p && o + 16 < sizeof job; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(job + o, sizeof job - o, "%d", (int)getpid());
            p++;
        } else {
            job[o++] = *p;
        }
    }
    job[o] = 0;
    snprintf(tmp, sizeof tmp, "%s.tmp%d", job, (int)getpid());
    uint64_t t0 = mono_ns();
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        jm_log(JAGER_DIAG_WARN, "cannot write the job's file %s: every rank keeps its own file", tmp);
        return; /* the others time out waiting for the acknowledgement and keep theirs */
    }
    uint8_t hdr[8];
    put_u32(hdr, 0x00000001u); /* u16 major 1, u16 minor 0 */
    put_u32(hdr + 4, (uint32_t)P);
    int bad = write_frame(f, "JAGERJOB", hdr, 8);
    bad |= write_part_header(f, 0, own_n);
    bad |= own_n && fwrite(own, 1, own_n, f) != own_n;
    uint8_t *ok = calloc((size_t)P, 1), *chunk = NULL;
    uint64_t cap = 0;
    uint32_t *lost = calloc((size_t)P, sizeof *lost), nlost = 0;
    if (!ok || !lost) {
        free(ok);
        free(lost);
        fclose(f);
        remove(tmp);
        jm_log(JAGER_DIAG_WARN, "out of memory gathering the ranks: every rank keeps its own file");
        return;
    }
    static const int go = 1; /* one send buffer for every go (MPI-3: concurrent sends may share it) */
    MPI_Request *goq = malloc((size_t)P * sizeof *goq);
    int asked = 1;
    for (int r = 0; goq && r < P; r++) goq[r] = MPI_REQUEST_NULL;
    /* who sends to rank 0: every rank, or with the tree its own node's ranks and the other
     * nodes' leaders (each for its node, `span` ranks); GO_AHEAD senders are asked ahead */
    int tree = jm_g.tree && jm_g.node_sizes, ahead = 0;
#define SPAN(k) (tree && (k) >= jm_g.node_size && jm_g.node_sizes[k] > 0 ? jm_g.node_sizes[k] : 1)
    for (int r = 1; r < P;) {
        int step = SPAN(r);
        for (; goq && asked < P && ahead < GO_AHEAD; ahead++) {
            if (!(missing && missing[asked]) &&
                PMPI_Isend(&go, 1, MPI_INT, asked, TAG_GGO, jm_g.pcomm, &goq[asked]) != MPI_SUCCESS)
                goq[asked] = MPI_REQUEST_NULL;
            asked += SPAN(asked);
        }
        ahead--;
        if (tree && r >= jm_g.node_size) {
            if (goq && !(missing && missing[r])) recv_bundle(f, r, step, ok, lost, &nlost, &chunk, &cap, timeout);
            else
                for (int k = 0; k < step; k++) lost[nlost++] = (uint32_t)(r + k);
        } else if (!goq || (missing && missing[r]) || recv_part(f, r, &chunk, &cap, timeout)) {
            lost[nlost++] = (uint32_t)r;
        } else {
            ok[r] = 1;
        }
        r += step;
    }
#undef SPAN
    if (goq) wait_all(goq, P, mono_ns() + timeout); /* small sends: done, unless a rank died unasked */
    free(goq);
    free(chunk);
    uint8_t *end = malloc(4 + 4 * (size_t)nlost);
    if (end) {
        put_u32(end, nlost);
        for (uint32_t i = 0; i < nlost; i++) put_u32(end + 4 + 4 * i, lost[i]);
        bad |= write_frame(f, "JAGEREND", end, 4 + 4 * nlost);
        free(end);
    } else {
        bad = 1;
    }
    long size = ftell(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, job)) {
        remove(tmp);
        memset(ok, 0, (size_t)P);
        jm_log(JAGER_DIAG_WARN, "cannot write the job's file %s: every rank keeps its own file", job);
    }
    /* acknowledge the parts that are safe in the job's file; the others keep theirs */
    for (int r = 1; r < P; r++) {
        int one = 1;
        MPI_Request rq;
        int direct = !tree || r < jm_g.node_size ? ok[r] != 0 : ok[r] == 2; /* a node's ranks hear from their leader */
        if (direct && PMPI_Isend(&one, 1, MPI_INT, r, TAG_GACK, jm_g.pcomm, &rq) == MPI_SUCCESS)
            wait_all(&rq, 1, mono_ns() + timeout);
    }
    if (!bad && !keep && strcmp(part, job)) remove(part);
    if (!bad) {
        char list[256] = "";
        size_t lo = 0;
        for (uint32_t i = 0; i < nlost && lo + 16 < sizeof list; i++)
            lo += (size_t)snprintf(list + lo, sizeof list - lo, "%s%u", i ? "," : "", lost[i]);
        if (nlost)
            jm_log(JAGER_DIAG_WARN, "job file %s: %u of %d rank(s) missing (%s); their own files keep what they recorded",
                   job, nlost, P, list);
        else if (env_on("JAGER_MPI_VERBOSE", 0))
            jm_log(JAGER_DIAG_INFO, "gathered %d ranks into %s: %ld bytes in %.3f ms", P, job, size,
                   (double)(mono_ns() - t0) / 1e6);
    }
    free(ok);
    free(lost);
}

void jm_gather(void)
{
    if (!jm_g.job_path[0] || !jm_g.host) return;
    const char *o = jm_g.host->metadata_get("jager.output");
    void (*sd)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "jager_shutdown");
    if (!o || !*o || !sd) return;
    char part[4096];
    snprintf(part, sizeof part, "%s", o);
    int P = jm_g.size, me = jm_g.rank, keep = env_on("JAGER_MPI_KEEP_PARTS", 0);
    uint64_t timeout = (uint64_t)jm_config_int("timeout_ms", 10000, 1, 3600000) * 1000000ull;
    uint8_t *missing = NULL;
    if (me == 0 && jm_g.missing && (missing = malloc((size_t)P))) memcpy(missing, jm_g.missing, (size_t)P);
    /* MPI_Finalize itself, as far as it is recorded: the core stops before it returns */
    jm_call c;
    memset(&c, 0, sizeof c);
    c.fn = JM_FN_MPI_Finalize;
    c.dest = c.tag = c.source = c.recv_tag = c.root = -1;
    c.start = c.end = jm_g.host->now_ns();
    c.comm = 1;
    c.comm_size = (uint64_t)P;
    jm_emit_call(&c);
    atomic_store(&jm_g.active, 0);
    sd(); /* closes this rank's file cleanly (END block); the plugin is shut down with it */
    size_t n = 0;
    uint8_t *buf = read_whole(part, &n);
    if (P == 1) {
        if (strcmp(part, jm_g.job_path) && rename(part, jm_g.job_path))
            jm_log(JAGER_DIAG_WARN, "cannot rename %s to %s", part, jm_g.job_path);
    } else if (me == 0) {
        gather_root(part, buf, n, missing, timeout, keep);
    } else {
        /* rank 0 takes the parts in rank order, each within timeout_ms (a node's leader its
         * node's first: twice the bound) */
        uint64_t deadline = mono_ns() + (uint64_t)(2 * P + 1) * timeout;
        int to = jm_g.tree && jm_g.node_leader != 0 ? jm_g.node_leader : 0;
        int rc = jm_g.tree && jm_g.node_leader == me && me != 0 ? send_bundle(buf, n, timeout, deadline)
                                                                 : send_part(buf, n, to, deadline);
        if (rc == 0 && !keep) remove(part);
    }
    free(buf);
    free(missing);
    free(jm_g.node_sizes);
    jm_g.node_sizes = NULL;
}
