/* mpi_sync.c — what the ranks agree on: one W3C trace for the job (rank 0 makes it, or
 * continues TRACEPARENT, and broadcasts it with its start time), and each rank's clock
 * offset to rank 0 at MPI_Init and MPI_Finalize.
 *
 * Clocks: a binomial tree in ceil(log2 P) rounds; in round k every rank r < 2^k measures
 * rank r + 2^k by `clock_rounds` ping-pongs and keeps the one with the smallest round
 * trip (Score-P, Scalasca): offset = t_parent - (t_send + t_recv) / 2, error = rtt / 2.
 * The child's offset to rank 0 is its offset to the parent plus the parent's own, and the
 * error bounds add up. All pairs of a round run at once, so the whole job takes
 * O(log P) round trips, not rank 0 pinging P ranks in turn. Every step is bounded by
 * timeout_ms (a child in round k waits (k + 1) × timeout_ms: its parent may have timed
 * out in each earlier round): a rank that does not answer leaves its subtree's offsets
 * unknown (ok = 0), it never hangs the others. All traffic is on the plugin's own duplicate of
 * MPI_COMM_WORLD through PMPI, so it is never recorded as the program's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sched.h>
#include <unistd.h>

#include "mpi_internal.h"

#define TAG_PING 101
#define TAG_PONG 102
#define TAG_RESULT 103
#define TAG_CENSUS 104

int jm_config_int(const char *key, int def, int lo, int hi)
{
    const char *v = jm_g.host ? jm_g.host->config(jm_g.self, key) : NULL;
    char *end;
    if (!v || !*v) return def;
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi) {
        jm_log(JAGER_DIAG_WARN, "JAGER_MPI_%s='%s' is not a whole number in [%d, %d]: using %d", key, v, lo, hi, def);
        return def;
    }
    return (int)x;
}

static uint64_t now(void) { return jm_g.host->now_ns(); }

/* Wait for r until deadline; on time-out cancel it and return -1. */
static int wait_until(MPI_Request *r, uint64_t deadline)
{
    int flag = 0;
    while (!flag) {
        if (PMPI_Test(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
        if (!flag) sched_yield(); /* oversubscribed ranks: let the peer run */
        if (!flag && now() > deadline) {
            PMPI_Cancel(r);
            PMPI_Request_free(r);
            return -1;
        }
    }
    return 0;
}

static int xsend(const void *buf, int n, int peer, int tag, uint64_t deadline)
{
    MPI_Request r;
    if (PMPI_Isend(buf, n, MPI_BYTE, peer, tag, jm_g.pcomm, &r) != MPI_SUCCESS) return -1;
    return wait_until(&r, deadline);
}

static int xrecv(void *buf, int n, int peer, int tag, uint64_t deadline)
{
    MPI_Request r;
    if (PMPI_Irecv(buf, n, MPI_BYTE, peer, tag, jm_g.pcomm, &r) != MPI_SUCCESS) return -1;
    return wait_until(&r, deadline);
}

static void random_bytes(void *p, size_t n)
{
    if (getrandom(p, n, 0) != (ssize_t)n) { /* no entropy source: time and pid */
        uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ now();
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            ((uint8_t *)p)[i] = (uint8_t)x;
        }
    }
}

static uint64_t random_span(void)
{
    uint64_t s = 0;
    while (!s) random_bytes(&s, sizeof s);
    return s;
}

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

/* "00-<32 hex>-<16 hex>-<2 hex>": the trace id and parent span; 0 when malformed. */
static int parse_traceparent(const char *v, uint8_t trace[16], uint64_t *parent)
{
    if (!v || strlen(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' || hexval(v[0]) < 0) return 0;
    int nz = 0;
    for (int i = 0; i < 16; i++) {
        int a = hexval(v[3 + 2 * i]), b = hexval(v[4 + 2 * i]);
        if (a < 0 || b < 0) return 0;
        trace[i] = (uint8_t)(a << 4 | b);
        nz |= trace[i];
    }
    uint64_t p = 0;
    for (int i = 0; i < 16; i++) {
        int a = hexval(v[36 + i]);
        if (a < 0) return 0;
        p = p << 4 | (uint64_t)a;
    }
    if (!nz || !p) return 0;
    *parent = p;
    return 1;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", p[i]);
}

static void meta_u64(const char *key, uint64_t v, int as_hex)
{
    char b[32];
    snprintf(b, sizeof b, as_hex ? "%016llx" : "%llu", (unsigned long long)v);
    jm_g.host->metadata_set(key, b);
}

static void meta_u64(const char *key, uint64_t v, int as_hex);

void jm_sync_nodes(void)
{
    int P = jm_g.size, me = jm_g.rank;
    jm_g.tree = 0;
    jm_g.node_leader = 0;
    jm_g.node_size = P;
    if (P < 3 || !jm_g.job_path[0]) return; /* no gather (JAGER_MPI_AGGREGATE=0): no tree to set up */
    /* the node key: a hash of the host name, or (testing aid) rank / JAGER_MPI_TEST_NODE_SIZE */
    uint64_t key = 1469598103934665603ull;
    const char *fake = getenv("JAGER_MPI_TEST_NODE_SIZE");
    if (fake && atoi(fake) > 0) key = (uint64_t)(me / atoi(fake));
    else {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        for (const char *c = host; *c; c++) key = (key ^ (uint8_t)*c) * 1099511628211ull;
    }
    uint64_t *all = malloc((size_t)P * sizeof *all);
    int *sizes = calloc((size_t)P, sizeof *sizes);
    MPI_Request r;
    uint64_t deadline = now() + (uint64_t)jm_config_int("timeout_ms", 10000, 1, 3600000) * 1000000ull;
    if (!all || !sizes || PMPI_Iallgather(&key, 8, MPI_BYTE, all, 8, MPI_BYTE, jm_g.pcomm, &r) != MPI_SUCCESS ||
        wait_until(&r, deadline)) {
        free(all);
        free(sizes);
        return;
    }
    /* contiguous nodes: a node starts where the key changes, and no key comes back later */
    int nodes = 0, ok = 1;
    for (int i = 0, lead = 0; i < P; i++) {
        if (i == 0 || all[i] != all[i - 1]) {
            lead = i;
            nodes++;
            for (int j = 0; j < i && ok; j++)
                if (all[j] == all[i]) ok = 0;
        }
        sizes[lead]++;
        if (i == me) jm_g.node_leader = lead;
    }
    if (!ok || nodes < 2 || nodes == P) {
        free(all);
        free(sizes);
        return;
    }
    jm_g.node_size = sizes[jm_g.node_leader];
    jm_g.node_sizes = sizes;
    jm_g.tree = 1;
    free(all);
    meta_u64("mpi.nodes", (uint64_t)nodes, 0);
    meta_u64("mpi.node_leader", (uint64_t)jm_g.node_leader, 0);
}

void jm_sync_job(void)
{
    struct {
        uint8_t trace[16];
        uint64_t root_span, parent_span, start;
    } m;
    memset(&m, 0, sizeof m);
    if (jm_g.rank == 0) {
        const char *tp = getenv("TRACEPARENT");
        if (!tp) tp = getenv("traceparent");
        if (!parse_traceparent(tp, m.trace, &m.parent_span)) {
            if (tp) jm_log(JAGER_DIAG_WARN, "TRACEPARENT='%.80s' is not a W3C traceparent: starting a new trace", tp);
            random_bytes(m.trace, sizeof m.trace);
            m.parent_span = 0;
        }
        m.root_span = random_span();
        m.start = jm_g.init_start;
    }
    MPI_Request r;
    uint64_t deadline = now() + (uint64_t)jm_config_int("timeout_ms", 10000, 1, 3600000) * 1000000ull;
    if (PMPI_Ibcast(&m, (int)sizeof m, MPI_BYTE, 0, jm_g.pcomm, &r) != MPI_SUCCESS || wait_until(&r, deadline)) {
        jm_log(JAGER_DIAG_WARN, "rank 0's trace id did not arrive in time: this rank starts a trace of its own");
        random_bytes(m.trace, sizeof m.trace);
        m.root_span = random_span();
    }
    memcpy(jm_g.trace_id, m.trace, 16);
    jm_g.root_span = m.root_span;
    jm_g.parent_span = m.parent_span;
    jm_g.run_start_ns = m.start;
    jm_g.rank_span = random_span();

    char t[33], tp[64], host[256] = "";
    hex(t, m.trace, 16);
    jm_g.host->metadata_set("mpi.trace_id", t);
    snprintf(tp, sizeof tp, "00-%s-%016llx-01", t, (unsigned long long)jm_g.rank_span);
    jm_g.host->metadata_set("mpi.traceparent", tp);
    meta_u64("mpi.root_span_id", jm_g.root_span, 1);
    meta_u64("mpi.rank_span_id", jm_g.rank_span, 1);
    if (jm_g.parent_span) meta_u64("mpi.parent_span_id", jm_g.parent_span, 1);
    meta_u64("mpi.rank", (uint64_t)jm_g.rank, 0);
    meta_u64("mpi.world_size", (uint64_t)jm_g.size, 0);
    meta_u64("mpi.pid", (uint64_t)getpid(), 0);
    meta_u64("mpi.job_start_ns", jm_g.run_start_ns, 0);
    gethostname(host, sizeof host - 1);
    jm_g.host->metadata_set("mpi.host", host);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
        lib[strcspn(lib, "\n")] = 0;
        jm_g.host->metadata_set("mpi.library", lib);
    }
}

/* The rank's span (parent: the job's root span) and, on rank 0, the job's root span. */
void jm_sync_finish(void)
{
    uint64_t t = now(), d = t > jm_g.init_start ? t - jm_g.init_start : 0;
    uint64_t f[6] = {(uint64_t)jm_g.rank, (uint64_t)jm_g.size, d, jm_g.rank_span, jm_g.root_span, (uint64_t)getpid()};
    jm_g.host->emit(jm_g.t_rank, jm_g.init_start, f, 6);
    if (jm_g.rank == 0) {
        uint64_t j[4] = {(uint64_t)jm_g.size, d, jm_g.root_span, jm_g.parent_span};
        jm_g.host->emit(jm_g.t_job, jm_g.init_start, j, 4);
    }
}

/* One measurement of child → parent; called on both sides. */
static int pingpong(int peer, int child, int rounds, uint64_t deadline, int64_t *off, uint64_t *rtt)
{
    uint64_t best = ~0ull;
    int64_t best_off = 0;
    for (int i = 0; i < rounds; i++) {
        uint64_t tp = 0, t0, t1;
        if (child) {
            t0 = now();
            if (xsend(&t0, 8, peer, TAG_PING, deadline) || xrecv(&tp, 8, peer, TAG_PONG, deadline)) return -1;
            t1 = now();
            if (t1 - t0 < best) {
                best = t1 - t0;
                best_off = (int64_t)(tp - t0) - (int64_t)((t1 - t0) / 2);
            }
        } else {
            if (xrecv(&t0, 8, peer, TAG_PING, deadline)) return -1;
            tp = now();
            if (xsend(&tp, 8, peer, TAG_PONG, deadline)) return -1;
        }
    }
    *off = best_off;
    *rtt = best;
    return 0;
}

void jm_sync_clocks(int phase)
{
    int P = jm_g.size, r = jm_g.rank, rounds = jm_config_int("clock_rounds", 10, 1, 1000);
    uint64_t timeout = (uint64_t)jm_config_int("timeout_ms", 10000, 1, 3600000) * 1000000ull;
    struct {
        int64_t off;
        uint64_t err;
        int64_t ok;
    } mine = {0, 0, 1}, res;
    int parent = -1;
    uint64_t rtt = 0, rtt_c = 0;
    int64_t o = 0, o_c = 0;
    /* my parent: r minus its highest set bit; I learn my offset in that round */
    int k_me = -1;
    if (r > 0) {
        k_me = 31 - __builtin_clz((unsigned)r);
        parent = r - (1 << k_me);
    }
    for (int k = 0; (1 << k) < P; k++) {
        int half = 1 << k;
        /* a child waits for a parent that may have spent a timeout in each earlier round */
        uint64_t deadline = now() + (r < half ? 1 : (uint64_t)k + 1) * timeout;
        if (r < half && r + half < P) { /* parent in this round */
            int c = r + half;
            if (mine.ok && pingpong(c, 0, rounds, deadline, &o_c, &rtt_c) == 0) {
                res = mine;
            } else {
                res.ok = 0;
                res.off = 0;
                res.err = 0;
            }
            xsend(&res, (int)sizeof res, c, TAG_RESULT, deadline);
        } else if (k == k_me) { /* child in this round */
            if (pingpong(parent, 1, rounds, deadline, &o, &rtt) == 0 &&
                xrecv(&res, (int)sizeof res, parent, TAG_RESULT, deadline) == 0 && res.ok) {
                mine.off = o + res.off;
                mine.err = rtt / 2 + res.err;
                mine.ok = 1;
            } else {
                mine.ok = 0;
                mine.off = 0;
                mine.err = 0;
            }
        }
    }
    /* JAGER_MPI_TEST_SKEW_NS: a testing aid that records a wrong offset on ranks > 0, as a
     * clock the measurement misjudged would (tests/mpi: clock-condition repair) */
    const char *skew = getenv("JAGER_MPI_TEST_SKEW_NS");
    if (skew && r > 0 && mine.ok) mine.off += strtoll(skew, NULL, 10);
    /* JAGER_MPI_TEST_DRIFT_NS: the same at MPI_Finalize only, as a clock drifting away from
     * rank 0's over the run would (tests/mpi: the linear drift correction) */
    const char *drift = getenv("JAGER_MPI_TEST_DRIFT_NS");
    if (drift && phase && r > 0 && mine.ok) mine.off += strtoll(drift, NULL, 10);
    uint64_t f[6] = {(uint64_t)phase, (uint64_t)mine.off, mine.err, r > 0 ? rtt : 0, (uint64_t)(int64_t)parent,
                     (uint64_t)(mine.ok != 0)};
    jm_g.host->emit(jm_g.t_clock, 0, f, 6);
    char key[64], v[64];
    snprintf(key, sizeof key, "mpi.clock.%s", phase ? "finalize" : "init");
    if (mine.ok) snprintf(v, sizeof v, "offset_ns=%lld error_ns=%llu", (long long)mine.off, (unsigned long long)mine.err);
    else snprintf(v, sizeof v, "unknown (a step timed out)");
    jm_g.host->metadata_set(key, v);
    if (!mine.ok) jm_log(JAGER_DIAG_WARN, "clock offset to rank 0 at %s: a step timed out", phase ? "MPI_Finalize" : "MPI_Init");
}

/* At MPI_Finalize rank 0 learns which ranks got there with recording on, within
 * (ceil(log2 P) + 1) × timeout_ms, and names the others (metadata mpi.missing_ranks, a
 * warning). */
void jm_census(void)
{
    int P = jm_g.size, me = jm_g.rank, rounds = 0;
    while ((1 << rounds) < P) rounds++;
    /* a rank may still be in the clock tree up to `rounds` timeouts after rank 0 left it */
    uint64_t deadline =
        now() + (uint64_t)(rounds + 1) * (uint64_t)jm_config_int("timeout_ms", 10000, 1, 3600000) * 1000000ull;
    if (me != 0) {
        xsend(&me, (int)sizeof me, 0, TAG_CENSUS, deadline);
        return;
    }
    int *buf = calloc((size_t)P, sizeof *buf);
    MPI_Request *rq = calloc((size_t)P, sizeof *rq);
    char list[1024] = "";
    size_t o = 0;
    int missing = 0;
    if (!buf || !rq) {
        free(buf);
        free(rq);
        jm_log(JAGER_DIAG_WARN, "out of memory: the ranks that reached MPI_Finalize are not checked");
        return;
    }
    for (int r = 1; r < P; r++)
        if (PMPI_Irecv(&buf[r], 1, MPI_INT, r, TAG_CENSUS, jm_g.pcomm, &rq[r]) != MPI_SUCCESS) rq[r] = MPI_REQUEST_NULL;
    free(jm_g.missing);
    jm_g.missing = calloc((size_t)P, 1);
    for (int r = 1; r < P; r++) {
        if (rq[r] != MPI_REQUEST_NULL && wait_until(&rq[r], deadline) == 0) continue;
        missing++;
        if (jm_g.missing) jm_g.missing[r] = 1;
        if (o + 16 < sizeof list) o += (size_t)snprintf(list + o, sizeof list - o, "%s%d", o ? "," : "", r);
    }
    jm_g.host->metadata_set("mpi.missing_ranks", list);
    if (missing)
        jm_log(JAGER_DIAG_WARN, "%d rank(s) did not reach MPI_Finalize with recording on within timeout_ms: %s%s "
               "(their own files keep what they recorded)", missing, list, o + 16 >= sizeof list ? ",…" : "");
    free(buf);
    free(rq);
}
