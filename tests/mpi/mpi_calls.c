/* mpi_calls.c — a plain MPI program (no Jäger in it) that makes a known number of each
 * wrapped call on 4 ranks. It writes what it did to <argv[1]>.<rank>.expect: one line
 * per function ("MPI_Send 6"), then one line per message it sent or received
 * ("send dest tag bytes", "recv source tag bytes"), in world ranks, then its pid and host. test_mpi_calls.js
 * compares that with the recording, count for count, and matches every send to its
 * receive by message id. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXF 160
static const char *fname[MAXF];
static int fcount[MAXF], nf;
static FILE *ex;

static void did(const char *f)
{
    for (int i = 0; i < nf; i++)
        if (!strcmp(fname[i], f)) {
            fcount[i]++;
            return;
        }
    fname[nf] = f;
    fcount[nf++] = 1;
}
#define CALL(f, ...) (did(#f), f(__VA_ARGS__))
static void sent(int dest, int tag, int bytes) { fprintf(ex, "send %d %d %d\n", dest, tag, bytes); }
static void got(int source, int tag, int bytes) { fprintf(ex, "recv %d %d %d\n", source, tag, bytes); }
/* bytes sent and received by a function's calls, summed ("bytes MPI_Igatherv 8 40") */
static const char *bname[MAXF];
static long bsent[MAXF], brecv[MAXF];
static int nb;
static void moved(const char *f, long b, long rb)
{
    int i = 0;
    while (i < nb && strcmp(bname[i], f)) i++;
    if (i == nb) bname[nb++] = f;
    bsent[i] += b;
    brecv[i] += rb;
}

int main(int argc, char **argv)
{
    int rank, size, buf[64] = {0}, rbuf[64] = {0};
    double d[128] = {0}, rd[128] = {0};
    MPI_Status st;
    MPI_Request rq[16];
    CALL(MPI_Init, &argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4 || argc < 2) {
        if (!rank) fprintf(stderr, "run on 4 ranks with an output prefix\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s.%d.expect", argv[1], rank);
    ex = fopen(path, "w");
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* 5 × Send/Recv around the ring: 3 ints, tag 7 */
    for (int i = 0; i < 5; i++) {
        CALL(MPI_Send, buf, 3, MPI_INT, right, 7, MPI_COMM_WORLD);
        sent(right, 7, 12);
        CALL(MPI_Recv, rbuf, 3, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
        got(left, 7, 12);
    }
    /* 2 × Ssend: even ranks send first */
    for (int i = 0; i < 2; i++) {
        if (rank % 2 == 0) {
            CALL(MPI_Ssend, buf, 2, MPI_INT, right, 8, MPI_COMM_WORLD);
            CALL(MPI_Recv, rbuf, 2, MPI_INT, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            CALL(MPI_Recv, rbuf, 2, MPI_INT, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CALL(MPI_Ssend, buf, 2, MPI_INT, right, 8, MPI_COMM_WORLD);
        }
        sent(right, 8, 8);
        got(left, 8, 8);
    }
    /* Bsend */
    static char bsbuf[4096];
    MPI_Buffer_attach(bsbuf, sizeof bsbuf);
    CALL(MPI_Bsend, buf, 4, MPI_INT, right, 11, MPI_COMM_WORLD);
    sent(right, 11, 16);
    CALL(MPI_Recv, rbuf, 4, MPI_INT, left, 11, MPI_COMM_WORLD, &st);
    got(left, 11, 16);
    void *bp;
    int bs;
    MPI_Buffer_detach(&bp, &bs);
    /* Rsend into a posted receive */
    CALL(MPI_Irecv, rbuf, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rq[0]);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_Rsend, buf, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    sent(right, 9, 4);
    CALL(MPI_Wait, &rq[0], &st);
    got(left, 9, 4);
    /* 4 × Isend + 4 × Irecv, 100 doubles, one Waitall */
    for (int i = 0; i < 4; i++) {
        CALL(MPI_Irecv, rd + i, 100 - i * 10, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, &rq[i]);
        CALL(MPI_Isend, d, 100 - i * 10, MPI_DOUBLE, right, 10, MPI_COMM_WORLD, &rq[4 + i]);
        sent(right, 10, (100 - i * 10) * 8);
        got(left, 10, (100 - i * 10) * 8);
    }
    CALL(MPI_Waitall, 8, rq, MPI_STATUSES_IGNORE);
    /* Issend + Irecv, completed by two Waitany */
    CALL(MPI_Irecv, rbuf, 5, MPI_INT, left, 12, MPI_COMM_WORLD, &rq[0]);
    CALL(MPI_Issend, buf, 5, MPI_INT, right, 12, MPI_COMM_WORLD, &rq[1]);
    sent(right, 12, 20);
    got(left, 12, 20);
    for (int i = 0, idx; i < 2; i++) CALL(MPI_Waitany, 2, rq, &idx, &st);
    /* ANY_SOURCE / ANY_TAG: rank 0 receives one message from each other rank */
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            CALL(MPI_Recv, rbuf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            got(st.MPI_SOURCE, st.MPI_TAG, st.MPI_SOURCE * 2 * 4);
        }
    } else {
        CALL(MPI_Send, buf, rank * 2, MPI_INT, 0, 20 + rank, MPI_COMM_WORLD);
        sent(0, 20 + rank, rank * 8);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD); /* nothing else may reach the wildcard receives */
    /* Irecv(ANY_SOURCE) on rank 1, completed by Waitany */
    if (rank == 1) {
        for (int i = 0; i < 3; i++) CALL(MPI_Irecv, rbuf + 8 * i, 8, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &rq[i]);
        for (int i = 0, idx; i < 3; i++) {
            CALL(MPI_Waitany, 3, rq, &idx, &st);
            got(st.MPI_SOURCE, 30, 4 * (st.MPI_SOURCE + 1));
        }
    } else {
        CALL(MPI_Send, buf, rank + 1, MPI_INT, 1, 30, MPI_COMM_WORLD);
        sent(1, 30, 4 * (rank + 1));
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    /* 2 × Sendrecv, 1 × Sendrecv_replace */
    for (int i = 0; i < 2; i++) {
        CALL(MPI_Sendrecv, buf, 6, MPI_INT, right, 40, rbuf, 6, MPI_INT, left, 40, MPI_COMM_WORLD, &st);
        sent(right, 40, 24);
        got(left, 40, 24);
    }
    CALL(MPI_Sendrecv_replace, buf, 7, MPI_INT, right, 41, left, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sent(right, 41, 28);
    got(left, 41, 28);
    /* Probe + Iprobe + Recv on rank 3; Mprobe + Mrecv on rank 2 */
    if (rank == 2) {
        CALL(MPI_Send, buf, 9, MPI_INT, 3, 50, MPI_COMM_WORLD);
        sent(3, 50, 36);
    }
    if (rank == 3) {
        int flag = 0;
        CALL(MPI_Probe, 2, 50, MPI_COMM_WORLD, &st);
        CALL(MPI_Iprobe, 2, 50, MPI_COMM_WORLD, &flag, &st);
        CALL(MPI_Recv, rbuf, 9, MPI_INT, 2, 50, MPI_COMM_WORLD, &st);
        got(2, 50, 36);
    }
    if (rank == 0) {
        CALL(MPI_Send, buf, 10, MPI_INT, 2, 60, MPI_COMM_WORLD);
        sent(2, 60, 40);
    }
    if (rank == 2) {
        MPI_Message m;
        CALL(MPI_Mprobe, 0, 60, MPI_COMM_WORLD, &m, &st);
        CALL(MPI_Mrecv, rbuf, 10, MPI_INT, &m, &st);
        got(0, 60, 40);
    }
    /* Test until done (the count is whatever it took; the program counts it) */
    {
        int flag = 0;
        CALL(MPI_Irecv, rbuf, 1, MPI_INT, left, 70, MPI_COMM_WORLD, &rq[0]);
        CALL(MPI_Isend, buf, 1, MPI_INT, right, 70, MPI_COMM_WORLD, &rq[1]);
        sent(right, 70, 4);
        got(left, 70, 4);
        while (!flag) {
            CALL(MPI_Testall, 2, rq, &flag, MPI_STATUSES_IGNORE);
            if (!flag) usleep(200);
        }
        CALL(MPI_Test, &rq[0], &flag, &st); /* a null request: flag = 1 at once */
    }
#if MPI_VERSION >= 4
    /* MPI-4 large-count variants: one each around the ring */
    {
        MPI_Request q[2];
        CALL(MPI_Send_c, buf, (MPI_Count)5, MPI_INT, right, 95, MPI_COMM_WORLD);
        sent(right, 95, 20);
        CALL(MPI_Recv_c, rbuf, (MPI_Count)5, MPI_INT, left, 95, MPI_COMM_WORLD, &st);
        got(left, 95, 20);
        CALL(MPI_Irecv_c, rbuf, (MPI_Count)6, MPI_INT, left, 96, MPI_COMM_WORLD, &q[0]);
        CALL(MPI_Isend_c, buf, (MPI_Count)6, MPI_INT, right, 96, MPI_COMM_WORLD, &q[1]);
        sent(right, 96, 24);
        got(left, 96, 24);
        CALL(MPI_Waitall, 2, q, MPI_STATUSES_IGNORE);
        CALL(MPI_Allreduce_c, d, rd, (MPI_Count)4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CALL(MPI_Bcast_c, buf, (MPI_Count)2, MPI_INT, 0, MPI_COMM_WORLD);
    }
#endif
    /* persistent requests: 3 × Startall of a send and a receive, then 2 × Start, all waited */
    {
        MPI_Request p[2];
        CALL(MPI_Recv_init, rbuf, 3, MPI_INT, left, 90, MPI_COMM_WORLD, &p[0]);
        CALL(MPI_Send_init, buf, 3, MPI_INT, right, 90, MPI_COMM_WORLD, &p[1]);
        for (int i = 0; i < 3; i++) {
            CALL(MPI_Startall, 2, p);
            CALL(MPI_Waitall, 2, p, MPI_STATUSES_IGNORE);
            sent(right, 90, 12);
            got(left, 90, 12);
        }
        CALL(MPI_Start, &p[0]);
        CALL(MPI_Start, &p[1]);
        CALL(MPI_Waitall, 2, p, MPI_STATUSES_IGNORE);
        sent(right, 90, 12);
        got(left, 90, 12);
        CALL(MPI_Request_free, &p[0]);
        CALL(MPI_Request_free, &p[1]);
    }
    /* Waitsome, Testany, Testsome, Ibsend, Irsend, Improbe */
    {
        MPI_Request q[4];
        int outc = 0, idx[4], flag = 0, done = 0, any;
        CALL(MPI_Irecv, rbuf, 2, MPI_INT, left, 101, MPI_COMM_WORLD, &q[0]);
        CALL(MPI_Irecv, rbuf + 2, 2, MPI_INT, left, 102, MPI_COMM_WORLD, &q[1]);
        CALL(MPI_Barrier, MPI_COMM_WORLD); /* both receives posted everywhere (Irsend) */
        MPI_Buffer_attach(bsbuf, sizeof bsbuf);
        CALL(MPI_Ibsend, buf, 2, MPI_INT, right, 101, MPI_COMM_WORLD, &q[2]);
        CALL(MPI_Irsend, buf, 2, MPI_INT, right, 102, MPI_COMM_WORLD, &q[3]);
        sent(right, 101, 8);
        sent(right, 102, 8);
        got(left, 101, 8);
        got(left, 102, 8);
        while (done < 4) { /* the counts are whatever it took: the program counts them */
            CALL(MPI_Waitsome, 4, q, &outc, idx, MPI_STATUSES_IGNORE);
            if (outc != MPI_UNDEFINED) done += outc;
        }
        MPI_Buffer_detach(&bp, &bs);
        CALL(MPI_Irecv, rbuf, 1, MPI_INT, left, 103, MPI_COMM_WORLD, &q[0]);
        CALL(MPI_Irecv, rbuf + 1, 1, MPI_INT, left, 104, MPI_COMM_WORLD, &q[1]);
        CALL(MPI_Send, buf, 1, MPI_INT, right, 103, MPI_COMM_WORLD);
        CALL(MPI_Send, buf, 1, MPI_INT, right, 104, MPI_COMM_WORLD);
        sent(right, 103, 4);
        sent(right, 104, 4);
        got(left, 103, 4);
        got(left, 104, 4);
        for (done = 0; done < 1;) {
            CALL(MPI_Testany, 2, q, &any, &flag, &st);
            if (flag && any != MPI_UNDEFINED) done++;
            else usleep(200);
        }
        for (done = 0; done < 1;) {
            CALL(MPI_Testsome, 2, q, &outc, idx, MPI_STATUSES_IGNORE);
            if (outc > 0) done += outc;
            else usleep(200);
        }
        /* Improbe until the message is there, then Mrecv */
        CALL(MPI_Send, buf, 3, MPI_INT, right, 105, MPI_COMM_WORLD);
        sent(right, 105, 12);
        MPI_Message m;
        for (flag = 0; !flag;) {
            CALL(MPI_Improbe, left, 105, MPI_COMM_WORLD, &flag, &m, &st);
            if (!flag) usleep(200);
        }
        CALL(MPI_Mrecv, rbuf, 3, MPI_INT, &m, &st);
        got(left, 105, 12);
        /* persistent synchronous/buffered/ready sends */
        MPI_Request p[4];
        MPI_Buffer_attach(bsbuf, sizeof bsbuf);
        CALL(MPI_Recv_init, rbuf, 1, MPI_INT, left, 106, MPI_COMM_WORLD, &p[0]);
        CALL(MPI_Recv_init, rbuf + 1, 1, MPI_INT, left, 107, MPI_COMM_WORLD, &p[1]);
        CALL(MPI_Startall, 2, p);
        CALL(MPI_Barrier, MPI_COMM_WORLD);
        CALL(MPI_Ssend_init, buf, 1, MPI_INT, right, 106, MPI_COMM_WORLD, &p[2]);
        CALL(MPI_Rsend_init, buf, 1, MPI_INT, right, 107, MPI_COMM_WORLD, &p[3]);
        CALL(MPI_Startall, 2, p + 2);
        CALL(MPI_Waitall, 4, p, MPI_STATUSES_IGNORE);
        sent(right, 106, 4);
        sent(right, 107, 4);
        got(left, 106, 4);
        got(left, 107, 4);
        CALL(MPI_Bsend_init, buf, 1, MPI_INT, right, 108, MPI_COMM_WORLD, &p[2]);
        CALL(MPI_Start, &p[2]);
        CALL(MPI_Recv, rbuf, 1, MPI_INT, left, 108, MPI_COMM_WORLD, &st);
        CALL(MPI_Wait, &p[2], &st);
        sent(right, 108, 4);
        got(left, 108, 4);
        for (int i = 0; i < 3; i++) CALL(MPI_Request_free, &p[i]);
        MPI_Buffer_detach(&bp, &bs);
    }
    /* the other non-blocking collectives, completed by one Waitall */
    {
        MPI_Request q[8];
        CALL(MPI_Ireduce, d, rd, 2, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD, &q[0]);
        CALL(MPI_Iscan, d + 10, rd + 10, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[1]);
        CALL(MPI_Iexscan, d + 20, rd + 20, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[2]);
        CALL(MPI_Igather, buf, 1, MPI_INT, rbuf, 1, MPI_INT, 2, MPI_COMM_WORLD, &q[3]);
        CALL(MPI_Iscatter, buf + 8, 1, MPI_INT, rbuf + 8, 1, MPI_INT, 3, MPI_COMM_WORLD, &q[4]);
        CALL(MPI_Iallgather, buf + 16, 1, MPI_INT, rbuf + 16, 1, MPI_INT, MPI_COMM_WORLD, &q[5]);
        CALL(MPI_Ialltoall, buf + 24, 1, MPI_INT, rbuf + 24, 1, MPI_INT, MPI_COMM_WORLD, &q[6]);
        CALL(MPI_Ireduce_scatter_block, d + 40, rd + 40, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[7]);
        CALL(MPI_Waitall, 8, q, MPI_STATUSES_IGNORE);
    }
#if MPI_VERSION >= 4
    if (rank % 2 == 0) { /* synchronous: even ranks send first */
        CALL(MPI_Ssend_c, buf, (MPI_Count)1, MPI_INT, right, 109, MPI_COMM_WORLD);
        CALL(MPI_Recv, rbuf, 1, MPI_INT, left, 109, MPI_COMM_WORLD, &st);
    } else {
        CALL(MPI_Recv, rbuf, 1, MPI_INT, left, 109, MPI_COMM_WORLD, &st);
        CALL(MPI_Ssend_c, buf, (MPI_Count)1, MPI_INT, right, 109, MPI_COMM_WORLD);
    }
    sent(right, 109, 4);
    got(left, 109, 4);
    CALL(MPI_Reduce_c, d, rd, (MPI_Count)3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
#endif
    /* the v/w non-blocking collectives (distinct receive buffers: all in flight at once) */
    {
        MPI_Request q[6];
        int cn[4] = {1, 2, 3, 4}, dp[4] = {0, 1, 3, 6}, on[4] = {1, 1, 1, 1}, sq[4] = {0, 1, 2, 3}, bd[4] = {0, 4, 8, 12};
        MPI_Datatype ty[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
        CALL(MPI_Igatherv, buf, rank + 1, MPI_INT, rbuf, cn, dp, MPI_INT, 1, MPI_COMM_WORLD, &q[0]);
        moved("MPI_Igatherv", 4 * (rank + 1), rank == 1 ? 40 : 0);
        CALL(MPI_Iscatterv, buf, cn, dp, MPI_INT, rbuf + 16, rank + 1, MPI_INT, 2, MPI_COMM_WORLD, &q[1]);
        moved("MPI_Iscatterv", rank == 2 ? 40 : 0, 4 * (rank + 1));
        CALL(MPI_Iallgatherv, buf, rank + 1, MPI_INT, rbuf + 32, cn, dp, MPI_INT, MPI_COMM_WORLD, &q[2]);
        moved("MPI_Iallgatherv", 4 * (rank + 1), 40);
        CALL(MPI_Ialltoallv, buf, on, sq, MPI_INT, rbuf + 48, on, sq, MPI_INT, MPI_COMM_WORLD, &q[3]);
        moved("MPI_Ialltoallv", 16, 16);
        CALL(MPI_Ialltoallw, buf, on, bd, ty, rbuf + 56, on, bd, ty, MPI_COMM_WORLD, &q[4]);
        moved("MPI_Ialltoallw", 16, 16);
        CALL(MPI_Ireduce_scatter, d, rd, cn, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[5]);
        moved("MPI_Ireduce_scatter", 80, 8 * (rank + 1));
        CALL(MPI_Waitall, 6, q, MPI_STATUSES_IGNORE);
    }
    /* neighbourhood collectives: on a directed ring (MPI_Dist_graph_create: one edge to the
     * right, so one neighbour in and one out) and on a periodic 1-D Cartesian grid (two) */
    {
        MPI_Comm g, cg;
        MPI_Request q[2];
        int src[1] = {rank}, deg[1] = {1}, dst[1] = {right}, dims[1] = {4}, periods[1] = {1};
        CALL(MPI_Dist_graph_create, MPI_COMM_WORLD, 1, src, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
        CALL(MPI_Neighbor_allgather, buf, 2, MPI_INT, rbuf, 2, MPI_INT, g);
        moved("MPI_Neighbor_allgather", 8, 8);
        CALL(MPI_Neighbor_alltoall, buf, 3, MPI_INT, rbuf, 3, MPI_INT, g);
        moved("MPI_Neighbor_alltoall", 12, 12);
        CALL(MPI_Cart_create, MPI_COMM_WORLD, 1, dims, periods, 0, &cg);
        CALL(MPI_Ineighbor_allgather, buf, 2, MPI_INT, rbuf, 2, MPI_INT, cg, &q[0]);
        CALL(MPI_Ineighbor_alltoall, buf, 1, MPI_INT, rbuf + 8, 1, MPI_INT, cg, &q[1]);
        moved("MPI_Ineighbor_allgather", 16, 16);
        moved("MPI_Ineighbor_alltoall", 8, 8);
        CALL(MPI_Waitall, 2, q, MPI_STATUSES_IGNORE);
        CALL(MPI_Comm_free, &g);
        CALL(MPI_Comm_free, &cg);
    }
#if MPI_VERSION >= 4
    /* the other MPI-4 large-count functions */
    {
        MPI_Request q[7];
        MPI_Buffer_attach(bsbuf, sizeof bsbuf);
        CALL(MPI_Bsend_c, buf, (MPI_Count)2, MPI_INT, right, 120, MPI_COMM_WORLD);
        CALL(MPI_Recv, rbuf, 2, MPI_INT, left, 120, MPI_COMM_WORLD, &st);
        sent(right, 120, 8);
        got(left, 120, 8);
        CALL(MPI_Irecv, rbuf, 1, MPI_INT, left, 121, MPI_COMM_WORLD, &q[0]);
        CALL(MPI_Irecv, rbuf + 1, 2, MPI_INT, left, 122, MPI_COMM_WORLD, &q[1]);
        CALL(MPI_Irecv, rbuf + 3, 3, MPI_INT, left, 123, MPI_COMM_WORLD, &q[2]);
        CALL(MPI_Irecv, rbuf + 6, 4, MPI_INT, left, 124, MPI_COMM_WORLD, &q[3]);
        CALL(MPI_Barrier, MPI_COMM_WORLD); /* the receives posted everywhere (ready sends) */
        CALL(MPI_Rsend_c, buf, (MPI_Count)1, MPI_INT, right, 121, MPI_COMM_WORLD);
        CALL(MPI_Issend_c, buf, (MPI_Count)2, MPI_INT, right, 122, MPI_COMM_WORLD, &q[4]);
        CALL(MPI_Ibsend_c, buf, (MPI_Count)3, MPI_INT, right, 123, MPI_COMM_WORLD, &q[5]);
        CALL(MPI_Irsend_c, buf, (MPI_Count)4, MPI_INT, right, 124, MPI_COMM_WORLD, &q[6]);
        CALL(MPI_Waitall, 7, q, MPI_STATUSES_IGNORE);
        for (int t = 121; t <= 124; t++) {
            sent(right, t, 4 * (t - 120));
            got(left, t, 4 * (t - 120));
        }
        CALL(MPI_Sendrecv_c, buf, (MPI_Count)3, MPI_INT, right, 125, rbuf, (MPI_Count)3, MPI_INT, left, 125,
             MPI_COMM_WORLD, &st);
        sent(right, 125, 12);
        got(left, 125, 12);
        MPI_Buffer_detach(&bp, &bs);
        CALL(MPI_Gather_c, buf, (MPI_Count)2, MPI_INT, rbuf, (MPI_Count)2, MPI_INT, 0, MPI_COMM_WORLD);
        moved("MPI_Gather_c", 8, rank == 0 ? 32 : 0);
        CALL(MPI_Scatter_c, buf, (MPI_Count)2, MPI_INT, rbuf, (MPI_Count)2, MPI_INT, 3, MPI_COMM_WORLD);
        moved("MPI_Scatter_c", rank == 3 ? 32 : 0, 8);
        CALL(MPI_Allgather_c, buf, (MPI_Count)1, MPI_INT, rbuf, (MPI_Count)1, MPI_INT, MPI_COMM_WORLD);
        moved("MPI_Allgather_c", 4, 16);
        CALL(MPI_Alltoall_c, buf, (MPI_Count)1, MPI_INT, rbuf, (MPI_Count)1, MPI_INT, MPI_COMM_WORLD);
        moved("MPI_Alltoall_c", 16, 16);
        CALL(MPI_Scan_c, d, rd, (MPI_Count)3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        moved("MPI_Scan_c", 24, 24);
        CALL(MPI_Exscan_c, d, rd, (MPI_Count)3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        moved("MPI_Exscan_c", 24, 24);
        CALL(MPI_Reduce_scatter_block_c, d, rd, (MPI_Count)2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        moved("MPI_Reduce_scatter_block_c", 64, 16);
        CALL(MPI_Ibcast_c, buf, (MPI_Count)3, MPI_INT, 0, MPI_COMM_WORLD, &q[0]);
        moved("MPI_Ibcast_c", rank == 0 ? 12 : 0, rank == 0 ? 0 : 12);
        CALL(MPI_Ireduce_c, d, rd, (MPI_Count)2, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD, &q[1]);
        moved("MPI_Ireduce_c", 16, rank == 1 ? 16 : 0);
        CALL(MPI_Iallreduce_c, d + 8, rd + 8, (MPI_Count)2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[2]);
        moved("MPI_Iallreduce_c", 16, 16);
        CALL(MPI_Waitall, 3, q, MPI_STATUSES_IGNORE);
    }
#endif
    /* collectives */
    for (int i = 0; i < 3; i++) CALL(MPI_Barrier, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++) CALL(MPI_Bcast, buf, 4, MPI_INT, 1, MPI_COMM_WORLD);
    CALL(MPI_Reduce, d, rd, 8, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++) CALL(MPI_Allreduce, d, rd, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6};
    CALL(MPI_Gather, buf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD);
    CALL(MPI_Gatherv, buf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    CALL(MPI_Scatter, buf, 2, MPI_INT, rbuf, 2, MPI_INT, 3, MPI_COMM_WORLD);
    CALL(MPI_Scatterv, buf, counts, displs, MPI_INT, rbuf, rank + 1, MPI_INT, 3, MPI_COMM_WORLD);
    CALL(MPI_Allgather, buf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD);
    CALL(MPI_Allgatherv, buf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
    CALL(MPI_Alltoall, buf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
    int ones[4] = {1, 1, 1, 1}, seq4[4] = {0, 1, 2, 3};
    CALL(MPI_Alltoallv, buf, ones, seq4, MPI_INT, rbuf, ones, seq4, MPI_INT, MPI_COMM_WORLD);
    int bdis[4] = {0, 4, 8, 12};
    MPI_Datatype ty[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    CALL(MPI_Alltoallw, buf, ones, bdis, ty, rbuf, ones, bdis, ty, MPI_COMM_WORLD);
    CALL(MPI_Reduce_scatter, d, rd, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CALL(MPI_Reduce_scatter_block, d, rd, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CALL(MPI_Scan, d, rd, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CALL(MPI_Exscan, d, rd, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CALL(MPI_Ibarrier, MPI_COMM_WORLD, &rq[0]);
    CALL(MPI_Iallreduce, d, rd, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
    CALL(MPI_Ibcast, buf, 3, MPI_INT, 0, MPI_COMM_WORLD, &rq[2]);
    CALL(MPI_Waitall, 3, rq, MPI_STATUSES_IGNORE);
    /* communicators: split even/odd, a message inside it in local ranks, dup, create, free */
    MPI_Comm half, dup, made;
    MPI_Group wg, g01;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, rank % 2, rank, &half);
    CALL(MPI_Comm_set_name, half, rank % 2 ? "odd" : "even");
    if (rank < 2) { /* local rank 0 → local rank 1: world rank+2 */
        CALL(MPI_Send, buf, 2, MPI_INT, 1, 80, half);
        sent(rank + 2, 80, 8);
    } else {
        CALL(MPI_Recv, rbuf, 2, MPI_INT, 0, 80, half, &st);
        got(rank - 2, 80, 8);
    }
    CALL(MPI_Allreduce, d, rd, 1, MPI_DOUBLE, MPI_SUM, half);
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int two[2] = {0, 1};
    MPI_Group_incl(wg, 2, two, &g01);
    CALL(MPI_Comm_create, MPI_COMM_WORLD, g01, &made);
    CALL(MPI_Barrier, dup);
    CALL(MPI_Comm_free, &dup);
    CALL(MPI_Comm_free, &half);
    if (made != MPI_COMM_NULL) CALL(MPI_Comm_free, &made);
    MPI_Group_free(&g01);
    MPI_Group_free(&wg);
    /* topologies and the other communicator constructors: their messages match by id too */
    {
        MPI_Comm cart, shm, inf, sub;
        int dims[1] = {4}, periods[1] = {1}, cr, src, dst, keep[1] = {1};
        CALL(MPI_Cart_create, MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
        MPI_Comm_rank(cart, &cr);
        MPI_Cart_shift(cart, 0, 1, &src, &dst);
        CALL(MPI_Sendrecv, buf, 3, MPI_INT, dst, 110, rbuf, 3, MPI_INT, src, 110, cart, &st);
        sent(dst, 110, 12); /* no reorder: cart ranks are world ranks */
        got(src, 110, 12);
        CALL(MPI_Cart_sub, cart, keep, &sub);
        CALL(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
        CALL(MPI_Comm_dup_with_info, MPI_COMM_WORLD, MPI_INFO_NULL, &inf);
        CALL(MPI_Barrier, shm);
        CALL(MPI_Barrier, inf);
        CALL(MPI_Barrier, sub);
        CALL(MPI_Comm_free, &cart);
        CALL(MPI_Comm_free, &sub);
        CALL(MPI_Comm_free, &shm);
        CALL(MPI_Comm_free, &inf);
    }
    /* one-sided */
    MPI_Win win;
    int wbuf[8] = {0};
    MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Put, buf, 2, MPI_INT, right, 0, 2, MPI_INT, win);
    CALL(MPI_Get, rbuf, 2, MPI_INT, left, 2, 2, MPI_INT, win);
    CALL(MPI_Accumulate, buf, 2, MPI_INT, right, 4, 2, MPI_INT, MPI_SUM, win);
    CALL(MPI_Win_fence, 0, win);
    MPI_Win_free(&win);
    /* MPI-IO */
    MPI_File fh;
    snprintf(path, sizeof path, "%s.io", argv[1]);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CALL(MPI_File_write_at, fh, rank * 64, buf, 4, MPI_INT, &st);
    CALL(MPI_File_write_at_all, fh, rank * 64 + 16, buf, 4, MPI_INT, &st);
    CALL(MPI_File_read_at, fh, rank * 64, rbuf, 4, MPI_INT, &st);
    CALL(MPI_File_read_at_all, fh, rank * 64 + 16, rbuf, 4, MPI_INT, &st);
    MPI_File_seek(fh, rank * 64 + 32, MPI_SEEK_SET);
    CALL(MPI_File_write, fh, buf, 2, MPI_INT, &st);
    CALL(MPI_File_write_all, fh, buf, 2, MPI_INT, &st);
    MPI_File_seek(fh, rank * 64 + 32, MPI_SEEK_SET);
    CALL(MPI_File_read, fh, rbuf, 2, MPI_INT, &st);
    CALL(MPI_File_read_all, fh, rbuf, 2, MPI_INT, &st);
    MPI_File_close(&fh);
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);

    did("MPI_Finalize");
    for (int i = 0; i < nf; i++) fprintf(ex, "call %s %d\n", fname[i], fcount[i]);
    for (int i = 0; i < nb; i++) fprintf(ex, "bytes %s %ld %ld\n", bname[i], bsent[i], brecv[i]);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    fprintf(ex, "pid %ld\nhost %s\n", (long)getpid(), host); /* the metadata mpi.pid and mpi.host */
    fclose(ex);
    MPI_Finalize();
    return 0;
}
