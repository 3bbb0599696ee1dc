/* mpi_internal.h — shared state of the mpi plugin (PMPI wrappers + Jäger plugin in one
 * library). Only the plugin's own files include it. */
#ifndef JAGER_MPI_INTERNAL_H
#define JAGER_MPI_INTERNAL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include <jager_plugin.h>

#define JM_HIDDEN __attribute__((visibility("hidden")))

/* The function ids: one per row of mpi_calls.def, in table order. */
enum jm_fn {
#define JM_CALL(NAME, PARAMS, ARGS, PRE, POST) JM_FN_##NAME,
#include "mpi_calls.def"
#undef JM_CALL
    JM_FN_COUNT
};

/* Request kinds (mpi.request's kind field). */
enum { JM_REQ_SEND = 1, JM_REQ_RECV = 2, JM_REQ_COLL = 3 };

/* One wrapped call in flight (on the wrapper's stack). */
typedef struct jm_call {
    uint64_t start, end;
    uint64_t bytes, recv_bytes;
    int64_t dest, tag, source, recv_tag, root;
    uint64_t seq, recv_seq, post;
    uint64_t comm, comm_size;
    uint64_t req, count;
    uint64_t caller;
    uint32_t fn;
} jm_call;

typedef struct jm_state {
    const jager_host_api *host;
    jager_plugin_handle *self;
    atomic_int active;             /* host initialised us and MPI is up: wrappers record */
    int plugin_up;                 /* init succeeded */
    int mpi_up;                    /* between our MPI_Init and MPI_Finalize */
    int rank, size;                /* world rank/size (env before MPI_Init, MPI after) */
    int env_rank;                  /* rank from the launcher's variables, -1 unknown */
    const char *env_rank_var;      /* which variable gave it */
    uint16_t t_call, t_req, t_comm, t_clock, t_rank, t_job;
    uint32_t fn_name[JM_FN_COUNT]; /* interned function names */
    MPI_Comm pcomm;                /* the plugin's private duplicate of MPI_COMM_WORLD */
    uint64_t init_start, init_end; /* our MPI_Init span, on the local clock */
    uint8_t trace_id[16];
    uint64_t root_span, rank_span, parent_span;
    uint64_t run_start_ns;         /* rank 0's clock at the job's start, broadcast */
    uint64_t req_next;             /* request ids */
    uint64_t post_next;            /* receive post order */
    uint64_t lost_reqs, lost_pairs;
    int no_hooks;                  /* JAGER_MPI_NO_PATCH=1: dlsym/dlopen hooks forward only */
    uint8_t *missing;              /* rank 0, after jm_census: 1 for each rank that did not report */
    char job_path[4096];           /* aggregation on: where rank 0 writes the job's file ("" off) */
    /* the gather tree (jm_sync_nodes): ranks grouped by node, each node's ranks contiguous */
    int tree;                      /* 1: gather through one leader per node */
    int node_leader, node_size;    /* this rank's node: its lowest rank, how many */
    int *node_sizes;               /* tree: ranks on the node led by r (0 for a non-leader), per rank */
} jm_state;

extern JM_HIDDEN jm_state jm_g;
extern JM_HIDDEN __thread int jm_depth __attribute__((tls_model("initial-exec")));

/* ---- mpi_plugin.c ---- */
JM_HIDDEN void jm_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
JM_HIDDEN void jm_emit_call(const jm_call *c);
JM_HIDDEN void jm_after_init(void);
JM_HIDDEN void jm_before_finalize(void);

/* ---- mpi_tables.c ---- */
JM_HIDDEN int jm_tables_init(void);
JM_HIDDEN void jm_tables_free(void);
JM_HIDDEN void jm_callers_name(void);
JM_HIDDEN void jm_tables_world(int size);
JM_HIDDEN uint64_t jm_caller(void *ip);
/* Communicators: id, size, world rank of a local rank. */
typedef struct jm_comm {
    uint64_t key;      /* handle bits */
    uint64_t id;       /* same on every member */
    int size, inter;
    int *world;        /* world rank of each (remote, for inter) rank; NULL = identity */
    uint32_t name;
} jm_comm;
JM_HIDDEN const jm_comm *jm_comm_get(MPI_Comm comm);
JM_HIDDEN void jm_comm_register(MPI_Comm comm, MPI_Comm parent);
JM_HIDDEN void jm_comm_forget(MPI_Comm comm);
JM_HIDDEN void jm_comm_set_name(MPI_Comm comm, const char *name);
JM_HIDDEN int64_t jm_world_rank(const jm_comm *c, int rank);
JM_HIDDEN uint64_t jm_pair_next(int64_t peer, uint64_t comm, int64_t tag, int dir);
/* Requests in flight. */
typedef struct jm_req {
    uint64_t key;
    uint64_t id, start, bytes, recv_bytes, comm, seq, post;
    int64_t dest, tag, source, recv_tag;
    MPI_Datatype dt;   /* receive type, for the received size */
    const jm_comm *cm; /* receive comm, for the sender's world rank */
    uint32_t fn, kind;
} jm_req;
JM_HIDDEN void jm_req_add(MPI_Request r, const jm_req *e);
JM_HIDDEN int jm_req_take(MPI_Request r, jm_req *out);
/* Persistent requests (Send_init, Recv_init, …): their template until Request_free. */
JM_HIDDEN void jm_persist_add(MPI_Request r, const jm_req *e);
JM_HIDDEN int jm_persist_get(MPI_Request r, jm_req *out);
JM_HIDDEN int jm_persist_drop(MPI_Request r);
JM_HIDDEN void jm_req_done(const jm_req *e, const MPI_Status *st, uint32_t done_fn, uint64_t now);

/* ---- mpi_wrap.c ---- */
extern JM_HIDDEN __typeof(MPI_Init) jm_own_MPI_Init;
extern JM_HIDDEN __typeof(MPI_Send) jm_own_MPI_Send;

/* ---- mpi_got.c ---- */
JM_HIDDEN int jm_got_patch(int mode);
JM_HIDDEN void *jm_got_own(const char *name);

/* ---- mpi_hooks.c ---- */
JM_HIDDEN void *jm_real_dlsym(void *h, const char *name);

/* ---- mpi_sync.c ---- */
JM_HIDDEN void jm_sync_job(void);
JM_HIDDEN void jm_sync_clocks(int phase);
JM_HIDDEN void jm_sync_finish(void);
JM_HIDDEN void jm_census(void);
JM_HIDDEN int jm_config_int(const char *key, int def, int lo, int hi);

/* ---- mpi_gather.c ---- */
/* Decide where the rank's file and the job's file go (JAGER_MPI_AGGREGATE, JAGER_OUTPUT);
 * \p global: the wrappers are in the global scope, so JAGER_OUTPUT may still be changed. */
JM_HIDDEN void jm_gather_setup(int global);
/* At MPI_Finalize: close this rank's recording and gather every rank's file into one. */
JM_HIDDEN void jm_gather(void);
/* At MPI_Init: which ranks share a node (a bounded Iallgather of a host key); sets the
 * gather tree up when every node's ranks are contiguous and there are several nodes. */
JM_HIDDEN void jm_sync_nodes(void);

/* helpers for the table */
static inline uint64_t jm_tsize(MPI_Datatype dt)
{
    int s = 0;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &s) != MPI_SUCCESS || s < 0) return 0;
    return (uint64_t)s;
}
static inline uint64_t jm_sum(const int *v, int n)
{
    uint64_t s = 0;
    if (v)
        for (int i = 0; i < n; i++) s += v[i] > 0 ? (uint64_t)v[i] : 0;
    return s;
}

#endif
