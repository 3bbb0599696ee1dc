/* mpi_wrap.c — the PMPI wrappers, generated from mpi_calls.def.
 *
 * Every wrapper: when the plugin is not recording, or when it runs inside another wrapper
 * (an MPI library calling its own MPI_ entry points, the Fortran layer calling the C one,
 * the plugin's own traffic), it calls PMPI_<name> and nothing else. Otherwise it times
 * the PMPI call and writes one mpi.call event (fields in mpi_plugin.c), plus one
 * mpi.request event per tracked request a Wait or Test completed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

#define JM_EXPORT __attribute__((visibility("default")))

__thread int jm_depth __attribute__((tls_model("initial-exec")));

static inline int jm_enter(void)
{
    if (__builtin_expect(!atomic_load_explicit(&jm_g.active, memory_order_relaxed) || jm_depth, 0)) return 0;
    jm_depth = 1;
    return 1;
}

static inline void jm_call_init(jm_call *c, uint32_t fn)
{
    c->fn = fn;
    c->bytes = c->recv_bytes = 0;
    c->dest = c->tag = c->source = c->recv_tag = c->root = -1;
    c->seq = c->recv_seq = c->post = 0;
    c->comm = c->comm_size = 0;
    c->req = c->count = 0;
    c->start = jm_g.host->now_ns();
}

static inline void jm_set_comm(jm_call *c, const jm_comm *cm)
{
    c->comm = cm->id;
    c->comm_size = (uint64_t)cm->size;
}

static inline int jm_crank(MPI_Comm comm)
{
    int r = -1;
    if (comm == MPI_COMM_WORLD) return jm_g.rank;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static uint64_t jm_wsum(const int *counts, const MPI_Datatype *types, int n)
{
    uint64_t s = 0;
    if (counts && types)
        for (int i = 0; i < n; i++)
            if (counts[i] > 0) s += (uint64_t)counts[i] * jm_tsize(types[i]);
    return s;
}

static uint64_t jm_ucount(int64_t count, MPI_Datatype dt) { return count > 0 ? (uint64_t)count * jm_tsize(dt) : 0; }

/* A topology communicator's in- or out-degree (neighbourhood collectives); 0 for none. */
static uint64_t jm_degree(MPI_Comm comm, int out)
{
    int kind = MPI_UNDEFINED, in = 0, o = 0, w = 0;
    if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return 0;
    if (kind == MPI_CART) { /* two neighbours per dimension (MPI_PROC_NULL ones included) */
        if (PMPI_Cartdim_get(comm, &in) != MPI_SUCCESS) return 0;
        return 2 * (uint64_t)(in > 0 ? in : 0);
    }
    if (kind == MPI_GRAPH) {
        int r = -1;
        if (PMPI_Comm_rank(comm, &r) != MPI_SUCCESS || PMPI_Graph_neighbors_count(comm, r, &in) != MPI_SUCCESS) return 0;
        return (uint64_t)(in > 0 ? in : 0);
    }
    if (kind == MPI_DIST_GRAPH && PMPI_Dist_graph_neighbors_count(comm, &in, &o, &w) == MPI_SUCCESS) {
        int d = out ? o : in;
        return (uint64_t)(d > 0 ? d : 0);
    }
    return 0;
}

static void jm_send(jm_call *c, int64_t count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    const jm_comm *cm = jm_comm_get(comm);
    jm_set_comm(c, cm);
    c->bytes += jm_ucount(count, dt);
    if (dest == MPI_PROC_NULL) return;
    c->dest = jm_world_rank(cm, dest);
    c->tag = tag;
    c->seq = jm_pair_next(c->dest, cm->id, tag, 0);
}

static void jm_recv(jm_call *c, MPI_Datatype dt, MPI_Comm comm, const MPI_Status *st, int match)
{
    const jm_comm *cm = jm_comm_get(comm);
    jm_set_comm(c, cm);
    if (st->MPI_SOURCE < 0) return; /* MPI_PROC_NULL */
    int n = 0;
    c->source = jm_world_rank(cm, st->MPI_SOURCE);
    c->recv_tag = st->MPI_TAG;
    if (PMPI_Get_count(st, dt, &n) == MPI_SUCCESS && n > 0) c->recv_bytes = (uint64_t)n * jm_tsize(dt);
    if (match) c->recv_seq = jm_pair_next(c->source, cm->id, st->MPI_TAG, 1);
}

static void jm_isend(jm_call *c, int64_t count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int rc,
                     const MPI_Request *r)
{
    jm_send(c, count, dt, dest, tag, comm);
    if (rc != MPI_SUCCESS) return;
    jm_req e = {.id = __atomic_add_fetch(&jm_g.req_next, 1, __ATOMIC_RELAXED), .start = c->start,
                .bytes = c->bytes, .comm = c->comm, .seq = c->seq, .dest = c->dest, .tag = c->tag,
                .source = -1, .recv_tag = -1, .dt = MPI_DATATYPE_NULL, .fn = c->fn, .kind = JM_REQ_SEND};
    c->req = e.id;
    jm_req_add(*r, &e);
}

static void jm_irecv(jm_call *c, MPI_Datatype dt, int source, int tag, MPI_Comm comm, int rc, const MPI_Request *r)
{
    const jm_comm *cm = jm_comm_get(comm);
    jm_set_comm(c, cm);
    c->post = __atomic_add_fetch(&jm_g.post_next, 1, __ATOMIC_RELAXED);
    c->source = jm_world_rank(cm, source);
    c->recv_tag = tag;
    if (rc != MPI_SUCCESS) return;
    jm_req e = {.id = __atomic_add_fetch(&jm_g.req_next, 1, __ATOMIC_RELAXED), .start = c->start,
                .comm = c->comm, .post = c->post, .dest = -1, .tag = -1, .source = c->source,
                .recv_tag = tag, .dt = dt, .cm = cm, .fn = c->fn, .kind = JM_REQ_RECV};
    c->req = e.id;
    jm_req_add(*r, &e);
}

static void jm_pinit_send(jm_call *c, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int rc,
                          const MPI_Request *r)
{
    const jm_comm *cm = jm_comm_get(comm);
    jm_set_comm(c, cm);
    c->bytes = jm_ucount(count, dt);
    c->dest = dest == MPI_PROC_NULL ? -1 : jm_world_rank(cm, dest);
    c->tag = dest == MPI_PROC_NULL ? -1 : tag;
    if (rc != MPI_SUCCESS) return;
    jm_req e = {.bytes = c->bytes, .comm = c->comm, .dest = c->dest, .tag = c->tag, .source = -1, .recv_tag = -1,
                .dt = MPI_DATATYPE_NULL, .fn = c->fn, .kind = JM_REQ_SEND};
    jm_persist_add(*r, &e);
}

static void jm_pinit_recv(jm_call *c, MPI_Datatype dt, int source, int tag, MPI_Comm comm, int rc, const MPI_Request *r)
{
    const jm_comm *cm = jm_comm_get(comm);
    jm_set_comm(c, cm);
    c->source = jm_world_rank(cm, source);
    c->recv_tag = tag;
    if (rc != MPI_SUCCESS) return;
    jm_req e = {.comm = c->comm, .dest = -1, .tag = -1, .source = c->source, .recv_tag = tag, .dt = dt, .cm = cm,
                .fn = c->fn, .kind = JM_REQ_RECV};
    jm_persist_add(*r, &e);
}

/* MPI_Start/Startall: each started persistent request becomes a request in flight. */
static void jm_start(jm_call *c, int n, const MPI_Request *r, int rc)
{
    if (rc != MPI_SUCCESS) return;
    for (int i = 0; i < n; i++) {
        jm_req e;
        if (!jm_persist_get(r[i], &e)) continue;
        e.id = __atomic_add_fetch(&jm_g.req_next, 1, __ATOMIC_RELAXED);
        e.start = c->start;
        if (e.kind == JM_REQ_SEND && e.dest >= 0) e.seq = jm_pair_next(e.dest, e.comm, e.tag, 0);
        if (e.kind == JM_REQ_RECV) e.post = __atomic_add_fetch(&jm_g.post_next, 1, __ATOMIC_RELAXED);
        jm_req_add(r[i], &e);
        c->req = e.id;
        c->count++;
        if (e.kind == JM_REQ_SEND) {
            c->bytes += e.bytes;
            c->dest = e.dest;
            c->tag = e.tag;
            c->seq = e.seq;
        } else {
            c->source = e.source;
            c->recv_tag = e.recv_tag;
            c->post = e.post;
        }
        c->comm = e.comm;
    }
}

static void jm_coll(jm_call *c, MPI_Comm comm, uint64_t bytes, uint64_t rbytes, int root)
{
    const jm_comm *cm = jm_comm_get(comm);
    jm_set_comm(c, cm);
    c->bytes = bytes;
    c->recv_bytes = rbytes;
    c->root = root >= 0 ? jm_world_rank(cm, root) : -1;
}

static void jm_icoll(jm_call *c, MPI_Comm comm, uint64_t bytes, uint64_t rbytes, int root, int rc,
                     const MPI_Request *r)
{
    jm_coll(c, comm, bytes, rbytes, root);
    if (rc != MPI_SUCCESS) return;
    jm_req e = {.id = __atomic_add_fetch(&jm_g.req_next, 1, __ATOMIC_RELAXED), .start = c->start,
                .bytes = bytes, .recv_bytes = rbytes, .comm = c->comm, .dest = -1, .tag = -1,
                .source = c->root, .recv_tag = -1, .dt = MPI_DATATYPE_NULL, .fn = c->fn, .kind = JM_REQ_COLL};
    c->req = e.id;
    jm_req_add(*r, &e);
}

static int64_t jm_win_world(MPI_Win win, int target)
{
    MPI_Group g, wg;
    int w = -1;
    if (target < 0 || PMPI_Win_get_group(win, &g) != MPI_SUCCESS) return -1;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, 1, &target, wg, &w);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    return w < 0 ? -1 : w;
}

/* Request handles saved before a Wait or Test (the call overwrites them). Up to
 * JM_INLINE_REQS on the wrapper's stack; beyond, in this thread's buffer, which grows to
 * the largest count the thread has waited on and is then reused: no allocation on the
 * call path after warm-up (tests/mpi/test_mpi_noalloc.js). A wrapper never runs inside
 * another on the same thread (jm_depth), so one buffer per thread is enough. */
#define JM_INLINE_REQS 32
typedef struct {
    int n, any;
    MPI_Request *h;
    MPI_Status *st;  /* our statuses (when the caller passed none) */
    MPI_Status *use; /* the statuses the call fills, read at completion */
    MPI_Request h_in[JM_INLINE_REQS];
    MPI_Status st_in[JM_INLINE_REQS];
} jm_saved;

typedef struct {
    MPI_Request *h;
    MPI_Status *st;
    size_t cap;
} jm_tbuf;
static __thread jm_tbuf jm_tb __attribute__((tls_model("initial-exec")));
static pthread_key_t jm_tb_key;
static pthread_once_t jm_tb_once = PTHREAD_ONCE_INIT;

static void jm_tb_free(void *p)
{
    jm_tbuf *b = p;
    free(b->h);
    free(b->st);
    b->h = NULL;
    b->st = NULL;
    b->cap = 0;
}
static void jm_tb_key_make(void) { (void)pthread_key_create(&jm_tb_key, jm_tb_free); }

/* This thread's buffer with room for n handles and statuses; 0 when out of memory. */
static int jm_tb_reserve(size_t n)
{
    jm_tbuf *b = &jm_tb;
    if (n <= b->cap) return 1;
    if (!b->cap) { /* the thread's first: free the buffer when it exits */
        pthread_once(&jm_tb_once, jm_tb_key_make);
        (void)pthread_setspecific(jm_tb_key, b);
    }
    MPI_Request *h = realloc(b->h, n * sizeof *h);
    if (h) b->h = h;
    MPI_Status *st = h ? realloc(b->st, n * sizeof *st) : NULL;
    if (st) b->st = st;
    if (!h || !st) return 0;
    b->cap = n;
    return 1;
}

/* Save n handles; when with_status and the caller passed no statuses, hand ours. */
static MPI_Status *jm_save(jm_saved *s, int n, const MPI_Request *r, MPI_Status *user_st, int with_status)
{
    s->n = n > 0 ? n : 0;
    s->any = 0;
    s->h = s->h_in;
    s->st = s->st_in;
    s->use = user_st;
    if (s->n > JM_INLINE_REQS) {
        if (!jm_tb_reserve((size_t)s->n)) { /* no memory: record the call, not its requests */
            s->n = 0;
            return user_st;
        }
        s->h = jm_tb.h;
        s->st = jm_tb.st;
    }
    if (s->n) memcpy(s->h, r, (size_t)s->n * sizeof *s->h);
    s->any = 1;
    s->use = (!with_status || user_st != MPI_STATUSES_IGNORE) ? user_st : s->st;
    return s->use;
}

static void jm_complete(jm_call *c, const jm_saved *s, int i, const MPI_Status *st)
{
    jm_req e;
    if (!s->any || i < 0 || i >= s->n) return;
    if (!jm_req_take(s->h[i], &e)) return;
    jm_req_done(&e, st, c->fn, c->end);
    c->req = e.id;
    c->count++;
    if (e.kind == JM_REQ_RECV && e.cm) { /* the wait shows what arrived */
        c->source = e.source;
        c->recv_tag = e.recv_tag;
        c->recv_bytes += e.recv_bytes;
        c->comm = e.comm;
    }
}

/* e is the request's record; fills the receive side from the status and emits mpi.request. */
void jm_req_done(const jm_req *e0, const MPI_Status *st, uint32_t done_fn, uint64_t now)
{
    jm_req *e = (jm_req *)e0;
    if (e->kind == JM_REQ_RECV && st) {
        int cancelled = 0;
        PMPI_Test_cancelled(st, &cancelled);
        if (!cancelled && st->MPI_SOURCE >= 0) {
            int n = 0;
            e->source = jm_world_rank(e->cm, st->MPI_SOURCE);
            e->recv_tag = st->MPI_TAG;
            if (PMPI_Get_count(st, e->dt, &n) == MPI_SUCCESS && n > 0) e->recv_bytes = (uint64_t)n * jm_tsize(e->dt);
            e->seq = jm_pair_next(e->source, e->comm, st->MPI_TAG, 1);
        } else {
            e->source = -1;
            e->cm = NULL;
        }
    }
    uint64_t f[15] = {e->id,
                      jm_g.fn_name[e->fn],
                      jm_g.fn_name[done_fn],
                      e->kind,
                      now,
                      now > e->start ? now - e->start : 0,
                      e->bytes,
                      (uint64_t)e->dest,
                      (uint64_t)e->tag,
                      (uint64_t)e->source,
                      (uint64_t)e->recv_tag,
                      e->recv_bytes,
                      e->comm,
                      e->seq,
                      e->post};
    jm_g.host->emit(jm_g.t_req, e->start, f, 15);
}

/* ---- the helpers the table names ---- */
#define JM_STATUS(st)                                                                                              \
    MPI_Status jm_st_;                                                                                             \
    if ((st) == MPI_STATUS_IGNORE) (st) = &jm_st_;
#define JM_SAVE(n, r, st)                                                                                          \
    jm_saved sv_;                                                                                                  \
    (st) = jm_save(&sv_, (n), (r), (st), 1);
#define JM_SAVE1(n, r)                                                                                             \
    jm_saved sv_;                                                                                                  \
    jm_save(&sv_, (n), (r), NULL, 0);
#define JM_DONE_ALL(n)                                                                                             \
    do {                                                                                                           \
        for (int i_ = 0; i_ < (n); i_++) jm_complete(&c_, &sv_, i_, &sv_.use[i_]);                                \
    } while (0)
#define JM_DONE_ANY(idx, st)                                                                                       \
    do {                                                                                                           \
        if ((idx) != MPI_UNDEFINED) jm_complete(&c_, &sv_, (idx), (st));                                           \
    } while (0)
#define JM_DONE_SOME(outc, idx)                                                                                    \
    do {                                                                                                           \
        if ((outc) != MPI_UNDEFINED)                                                                               \
            for (int k_ = 0; k_ < (outc); k_++) jm_complete(&c_, &sv_, (idx)[k_], &sv_.use[k_]);                \
    } while (0)
#define JM_FORGET(r)                                                                                               \
    do {                                                                                                           \
        jm_req e_;                                                                                                 \
        if (jm_req_take((r), &e_)) c_.req = e_.id;                                                                 \
        jm_persist_drop(r);                                                                                        \
    } while (0)
#define JM_PINIT_SEND(count, dt, dest, tag, comm, r) jm_pinit_send(&c_, (count), (dt), (dest), (tag), (comm), rc_, (r))
#define JM_PINIT_RECV(dt, source, tag, comm, r) jm_pinit_recv(&c_, (dt), (source), (tag), (comm), rc_, (r))
#define JM_START(n, r) jm_start(&c_, (n), (r), rc_)
#define JM_SEND(count, dt, dest, tag, comm) jm_send(&c_, (count), (dt), (dest), (tag), (comm))
#define JM_RECV(dt, comm, st, match) jm_recv(&c_, (dt), (comm), (st), (match))
#define JM_ISEND(count, dt, dest, tag, comm, r) jm_isend(&c_, (count), (dt), (dest), (tag), (comm), rc_, (r))
#define JM_IRECV(dt, source, tag, comm, r) jm_irecv(&c_, (dt), (source), (tag), (comm), rc_, (r))
#define JM_COLL(comm, b, rb, root) jm_coll(&c_, (comm), (uint64_t)(b), (uint64_t)(rb), (root))
#define JM_ICOLL(comm, b, rb, root, r) jm_icoll(&c_, (comm), (uint64_t)(b), (uint64_t)(rb), (root), rc_, (r))
#define JM_COMM(comm) jm_set_comm(&c_, jm_comm_get(comm))
#define JM_NEWCOMM(nc, parent)                                                                                     \
    do {                                                                                                           \
        if (rc_ == MPI_SUCCESS && (nc) != MPI_COMM_NULL) jm_comm_register((nc), (parent));                         \
    } while (0)
#define JM_IS_ROOT(comm, root) (jm_crank(comm) == (root))
#define JM_CSIZE(comm) ((uint64_t)jm_comm_get(comm)->size)
#define JM_CRANK(comm) jm_crank(comm)
#define JM_OUTDEG(comm) jm_degree((comm), 1)
#define JM_INDEG(comm) jm_degree((comm), 0)
#define JM_RMA(b, rb, target, win)                                                                                 \
    do {                                                                                                           \
        c_.bytes = (uint64_t)(b);                                                                                  \
        c_.recv_bytes = (uint64_t)(rb);                                                                            \
        c_.dest = jm_win_world((win), (target));                                                                   \
    } while (0)
#define JM_IO(b, rb)                                                                                               \
    do {                                                                                                           \
        c_.bytes = (uint64_t)(b);                                                                                  \
        c_.recv_bytes = (uint64_t)(rb);                                                                            \
    } while (0)

static uint64_t jm_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the wrappers ---- */
#define JM_CALL(NAME, PARAMS, ARGS, PRE, POST)                                                                     \
    JM_EXPORT int NAME PARAMS                                                                                      \
    {                                                                                                              \
        if (!jm_enter()) return P##NAME ARGS;                                                                      \
        jm_call c_;                                                                                                \
        jm_call_init(&c_, JM_FN_##NAME);                                                                           \
        PRE                                                                                                        \
        int rc_ = P##NAME ARGS;                                                                                    \
        c_.end = jm_g.host->now_ns();                                                                              \
        POST c_.caller = jm_caller(__builtin_return_address(0));                                                   \
        jm_emit_call(&c_);                                                                                         \
        jm_depth = 0;                                                                                              \
        return rc_;                                                                                                \
    }
/* Init/Finalize: their hooks run whenever no other wrapper is on the stack; the call is
 * recorded when the plugin records by the time it returns (Init turns recording on). */
#define JM_LIFE(NAME, PARAMS, ARGS, PRE, POST)                                                                     \
    JM_EXPORT int NAME PARAMS                                                                                      \
    {                                                                                                              \
        if (jm_depth) return P##NAME ARGS;                                                                         \
        jm_depth = 1;                                                                                              \
        jm_call c_;                                                                                                \
        /* Finalize's caller is interned (and so named, jm_callers_name) before PRE writes the file */             \
        uint64_t caller_ = jm_caller(__builtin_return_address(0));                                                 \
        PRE;                                                                                                       \
        int was_ = atomic_load(&jm_g.active);                                                                      \
        uint64_t t0_ = was_ ? jm_g.host->now_ns() : jm_mono_ns();                                                  \
        int rc_ = P##NAME ARGS;                                                                                    \
        POST;                                                                                                      \
        if (was_ || atomic_load(&jm_g.active)) {                                                                   \
            jm_call_init(&c_, JM_FN_##NAME);                                                                       \
            c_.start = t0_;                                                                                        \
            c_.end = jm_g.host->now_ns();                                                                          \
            c_.comm = 1;                                                                                           \
            c_.comm_size = (uint64_t)jm_g.size;                                                                    \
            c_.caller = caller_ ? caller_ : jm_caller(__builtin_return_address(0));                                \
            jm_emit_call(&c_);                                                                                     \
        }                                                                                                          \
        if (JM_FN_##NAME == JM_FN_MPI_Finalize) atomic_store(&jm_g.active, 0);                                     \
        jm_depth = 0;                                                                                              \
        return rc_;                                                                                                \
    }

#include "mpi_calls.def"

/* Our own entry points by hidden aliases: `&MPI_Init` written in this library resolves
 * through the global scope (to the MPI library's when we were opened RTLD_LOCAL). */
#undef JM_CALL
#undef JM_LIFE
#define JM_CALL(NAME, PARAMS, ARGS, PRE, POST) \
    __typeof(NAME) jm_own_##NAME __attribute__((alias(#NAME), visibility("hidden")));
#include "mpi_calls.def"
