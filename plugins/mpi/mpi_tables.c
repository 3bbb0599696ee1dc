/* mpi_tables.c — the plugin's lookup tables, all preallocated at init so the call path
 * never allocates: communicators (id, size, world ranks), requests in flight, per-pair
 * message sequence numbers, and interned caller addresses.
 *
 * Requests and pairs are guarded by one spinlock each (uncontended: a few ns); the
 * communicator table and the caller cache are read without a lock (insert-only slots
 * published with a release store). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define JM_COMMS 1024u     /* power of two */
#define JM_REQS (1u << 15) /* requests in flight at once */
#define JM_PERSIST 4096u  /* persistent requests at once */
#define JM_PAIRS (1u << 16)
#define JM_CALLERS 4096u
#define JM_TOMB (~(uint64_t)0)

typedef struct {
    atomic_flag f;
} jm_spin;
static void spin_lock(jm_spin *s)
{
    while (atomic_flag_test_and_set_explicit(&s->f, memory_order_acquire)) __builtin_ia32_pause();
}
static void spin_unlock(jm_spin *s) { atomic_flag_clear_explicit(&s->f, memory_order_release); }

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}
/* Handle bits (an int in MPICH, a pointer in Open MPI), +1 so that 0 means empty. */
#define JM_KEY(h) jm_key_of(&(h), sizeof(h))
static inline uint64_t jm_key_of(const void *p, size_t n)
{
    uint64_t k = 0;
    memcpy(&k, p, n < sizeof k ? n : sizeof k);
    return k + 1;
}

/* ---------------- communicators ---------------- */
typedef struct {
    _Atomic uint64_t key;
    jm_comm c;
} comm_slot;
static comm_slot *comms;
static jm_comm world_c, self_c;
static jm_spin comm_lock;
static uint64_t comm_local_next, comm_lead_next;

static int *world_of(MPI_Comm comm, int *size, int *inter)
{
    MPI_Group g, wg;
    int n = 0, *loc, *w;
    PMPI_Comm_test_inter(comm, inter);
    if (*inter) {
        PMPI_Comm_remote_size(comm, &n);
        PMPI_Comm_remote_group(comm, &g);
    } else {
        PMPI_Comm_size(comm, &n);
        PMPI_Comm_group(comm, &g);
    }
    *size = n;
    loc = malloc((size_t)(n > 0 ? n : 1) * sizeof *loc);
    w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    if (!loc || !w) {
        free(loc);
        free(w);
        PMPI_Group_free(&g);
        return NULL;
    }
    for (int i = 0; i < n; i++) loc[i] = i;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, n, loc, wg, w);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    free(loc);
    return w;
}

static const jm_comm *comm_insert(MPI_Comm comm, uint64_t id)
{
    uint64_t key = JM_KEY(comm);
    int size = 0, inter = 0;
    int *w = world_of(comm, &size, &inter);
    const jm_comm *out = NULL;
    spin_lock(&comm_lock);
    for (uint32_t i = 0, h = (uint32_t)mix(key); i < JM_COMMS; i++, h++) {
        comm_slot *s = &comms[h & (JM_COMMS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
        if (k == key) { /* a handle reused without our Comm_free: replace */
            atomic_store_explicit(&s->key, JM_TOMB, memory_order_relaxed);
            free(s->c.world);
            k = JM_TOMB;
        }
        if (k == 0 || k == JM_TOMB) {
            s->c = (jm_comm){.key = key, .id = id, .size = size, .inter = inter, .world = w};
            atomic_store_explicit(&s->key, key, memory_order_release);
            out = &s->c;
            w = NULL;
            break;
        }
    }
    spin_unlock(&comm_lock);
    free(w);
    if (!out) jm_log(JAGER_DIAG_WARN, "more than %u communicators at once: the rest are recorded as comm 0", JM_COMMS);
    return out;
}

static jm_comm none_c = {.id = 0, .size = 0};

const jm_comm *jm_comm_get(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD) return &world_c;
    if (comm == MPI_COMM_SELF) return &self_c;
    if (comm == MPI_COMM_NULL || !comms) return &none_c;
    uint64_t key = JM_KEY(comm);
    for (uint32_t i = 0, h = (uint32_t)mix(key); i < JM_COMMS; i++, h++) {
        comm_slot *s = &comms[h & (JM_COMMS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key) return &s->c;
        if (k == 0) break;
    }
    /* Made by a call we do not wrap (Cart_create, Intercomm_merge, …): a local id. */
    uint64_t id = (1ull << 63) | ((uint64_t)(uint32_t)jm_g.rank << 24) |
                  (__atomic_add_fetch(&comm_local_next, 1, __ATOMIC_RELAXED) & 0xffffff);
    const jm_comm *c = comm_insert(comm, id);
    return c ? c : &none_c;
}

void jm_comm_register(MPI_Comm comm, MPI_Comm parent)
{
    if (comm == MPI_COMM_NULL || !comms) return;
    int inter = 0, lr = 0;
    uint64_t id = 0;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_rank(comm, &lr);
    if (!inter) {
        /* The same id on every member: its rank 0 names it (world rank + its own count). */
        if (lr == 0)
            id = ((uint64_t)(uint32_t)(jm_g.rank + 1) << 32) |
                 (uint32_t)__atomic_add_fetch(&comm_lead_next, 1, __ATOMIC_RELAXED);
        PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, comm);
    } else {
        id = (1ull << 63) | ((uint64_t)(uint32_t)jm_g.rank << 24) |
             (__atomic_add_fetch(&comm_local_next, 1, __ATOMIC_RELAXED) & 0xffffff);
    }
    const jm_comm *c = comm_insert(comm, id);
    if (c && jm_g.host && atomic_load(&jm_g.active)) {
        uint64_t f[4] = {c->id, (uint64_t)c->size, jm_comm_get(parent)->id, 0};
        jm_g.host->emit(jm_g.t_comm, 0, f, 4);
    }
}

void jm_comm_forget(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || !comms) return;
    uint64_t key = JM_KEY(comm);
    spin_lock(&comm_lock);
    for (uint32_t i = 0, h = (uint32_t)mix(key); i < JM_COMMS; i++, h++) {
        comm_slot *s = &comms[h & (JM_COMMS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
        if (k == key) {
            atomic_store_explicit(&s->key, JM_TOMB, memory_order_release);
            free(s->c.world);
            s->c.world = NULL;
            break;
        }
        if (k == 0) break;
    }
    spin_unlock(&comm_lock);
}

void jm_comm_set_name(MPI_Comm comm, const char *name)
{
    jm_comm *c = (jm_comm *)jm_comm_get(comm);
    if (!c || c == &none_c || !name || !jm_g.host) return;
    c->name = jm_g.host->intern(name);
    uint64_t f[4] = {c->id, (uint64_t)c->size, 0, c->name};
    jm_g.host->emit(jm_g.t_comm, 0, f, 4);
}

int64_t jm_world_rank(const jm_comm *c, int rank)
{
    if (rank < 0) return rank == MPI_ANY_SOURCE ? -2 : -1;
    if (c == &world_c) return rank;
    if (c == &self_c) return jm_g.rank;
    if (!c->world || rank >= c->size) return -1;
    return c->world[rank];
}

/* ---------------- message sequence numbers ---------------- */
typedef struct {
    uint64_t comm;
    int64_t peer, tag; /* tag | dir << 62 */
    uint64_t n;
} pair_slot;
static pair_slot *pairs;
static jm_spin pair_lock;

uint64_t jm_pair_next(int64_t peer, uint64_t comm, int64_t tag, int dir)
{
    if (!pairs || peer < 0) return 0;
    int64_t t = tag ^ ((int64_t)dir << 62);
    uint64_t h = mix((uint64_t)peer * 0x9e3779b97f4a7c15ull ^ comm * 0x632be59bd9b4e019ull ^ (uint64_t)t), n = 0;
    spin_lock(&pair_lock);
    for (uint32_t i = 0; i < JM_PAIRS; i++, h++) {
        pair_slot *s = &pairs[h & (JM_PAIRS - 1)];
        if (s->n && s->peer == peer && s->comm == comm && s->tag == t) {
            n = ++s->n;
            break;
        }
        if (!s->n) {
            *s = (pair_slot){.comm = comm, .peer = peer, .tag = t, .n = 1};
            n = 1;
            break;
        }
    }
    spin_unlock(&pair_lock);
    if (!n) jm_g.lost_pairs++;
    return n;
}

/* ---------------- requests in flight (linear probing, backward-shift delete) ---------------- */
typedef struct {
    jm_req *slot;
    jm_spin lock;
    uint32_t count, cap; /* cap: a power of two */
} req_table;
static req_table inflight, persist; /* requests started; persistent requests' templates */

static void rt_add(req_table *t, MPI_Request r, const jm_req *e)
{
    if (!t->slot || r == MPI_REQUEST_NULL) return;
    uint64_t key = JM_KEY(r);
    int ok = 0;
    spin_lock(&t->lock);
    if (t->count < t->cap - t->cap / 8) {
        for (uint32_t i = 0, h = (uint32_t)mix(key); i < t->cap; i++, h++) {
            jm_req *s = &t->slot[h & (t->cap - 1)];
            /* MPICH hands one built-in handle to every request that completed at once:
             * equal keys get slots of their own, taken in insertion order */
            if (!s->key) {
                t->count++;
                *s = *e;
                s->key = key;
                ok = 1;
                break;
            }
        }
    }
    spin_unlock(&t->lock);
    if (!ok) jm_g.lost_reqs++;
}

/* Find r; copy it out; remove it when take (backward-shift deletion keeps probe chains). */
static int rt_find(req_table *t, MPI_Request r, jm_req *out, int take)
{
    if (!t->slot || r == MPI_REQUEST_NULL) return 0;
    uint64_t key = JM_KEY(r);
    uint32_t m = t->cap - 1;
    int found = 0;
    spin_lock(&t->lock);
    if (t->count) {
        uint32_t i = (uint32_t)mix(key) & m;
        for (uint32_t n = 0; n < t->cap && t->slot[i].key; n++, i = (i + 1) & m) {
            if (t->slot[i].key != key) continue;
            *out = t->slot[i];
            found = 1;
            if (!take) break;
            uint32_t j = i;
            for (;;) {
                t->slot[i].key = 0;
                for (;;) {
                    j = (j + 1) & m;
                    if (!t->slot[j].key) goto done;
                    uint32_t home = (uint32_t)mix(t->slot[j].key) & m;
                    /* move j to i unless home lies cyclically in (i, j] */
                    if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) break;
                }
                t->slot[i] = t->slot[j];
                i = j;
            }
        }
    }
done:
    if (found && take) t->count--;
    spin_unlock(&t->lock);
    return found;
}

void jm_req_add(MPI_Request r, const jm_req *e) { rt_add(&inflight, r, e); }
int jm_req_take(MPI_Request r, jm_req *out) { return rt_find(&inflight, r, out, 1); }
void jm_persist_add(MPI_Request r, const jm_req *e) { rt_add(&persist, r, e); }
int jm_persist_get(MPI_Request r, jm_req *out) { return rt_find(&persist, r, out, 0); }
int jm_persist_drop(MPI_Request r)
{
    jm_req e;
    return rt_find(&persist, r, &e, 1);
}

/* ---------------- caller addresses → interned one-frame stacks ---------------- */
#ifdef JM_HAVE_DW
#include "omp_sym.h"
#endif
typedef struct {
    _Atomic uint64_t ip;
    _Atomic uint32_t id;
} caller_slot;
static caller_slot *callers;

uint64_t jm_caller(void *ipp)
{
    uint64_t ip = (uint64_t)(uintptr_t)ipp;
    if (!callers || !ip) return 0;
    uint32_t h = (uint32_t)mix(ip);
    for (uint32_t i = 0; i < 16; i++, h++) {
        caller_slot *s = &callers[h & (JM_CALLERS - 1)];
        uint64_t k = atomic_load_explicit(&s->ip, memory_order_acquire);
        if (k == ip) {
            uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
            if (id) return id;
            break;
        }
        if (k == 0) {
            uint64_t zero = 0;
            if (!atomic_compare_exchange_strong(&s->ip, &zero, ip) && zero != ip) continue;
            uint64_t one = ip - 1; /* a return address: the call is the byte before */
            uint32_t id = (uint32_t)jm_g.host->stack_intern(&one, 1);
            atomic_store_explicit(&s->id, id, memory_order_release);
            return id;
        }
    }
    uint64_t one = ip - 1; /* the cache is full around this slot: intern (deduplicated) */
    return jm_g.host->stack_intern(&one, 1);
}

/* ---------------- set-up ---------------- */
int jm_tables_init(void)
{
    comms = calloc(JM_COMMS, sizeof *comms);
    inflight = (req_table){.slot = calloc(JM_REQS, sizeof(jm_req)), .cap = JM_REQS};
    persist = (req_table){.slot = calloc(JM_PERSIST, sizeof(jm_req)), .cap = JM_PERSIST};
    pairs = calloc(JM_PAIRS, sizeof *pairs);
    callers = calloc(JM_CALLERS, sizeof *callers);
    if (!comms || !inflight.slot || !persist.slot || !pairs || !callers) {
        jm_tables_free();
        return -1;
    }
    world_c = (jm_comm){.id = 1, .size = jm_g.size};
    self_c = (jm_comm){.id = 2, .size = 1};
    return 0;
}

/* Name every caller seen with its source file and line (libdw: the line table of a -g
 * build) before the recording is written: the core's own naming at the end of the run is
 * dladdr's, a function and its module. Once, at MPI_Finalize, never on the call path. */
void jm_callers_name(void)
{
#ifdef JM_HAVE_DW
    typedef jager_status (*add_fn)(uint64_t, uint32_t, const char *, const char *, uint32_t);
    add_fn add = (add_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "jager_symbol_add");
    if (!callers || !add) return;
    char func[256], file[512];
    for (uint32_t i = 0; i < JM_CALLERS; i++) {
        uint64_t ip = atomic_load_explicit(&callers[i].ip, memory_order_acquire);
        if (!ip || !atomic_load_explicit(&callers[i].id, memory_order_acquire)) continue;
        uint32_t line = 0;
        file[0] = 0;
        /* the interned address is the call's last byte (jm_caller) */
        if (jgx_symbolize((const void *)(uintptr_t)(ip - 1), func, sizeof func, file, sizeof file, &line) && file[0])
            add(ip - 1, 0, func, file, line);
    }
    jgx_symbolize_end();
#endif
}

void jm_tables_free(void)
{
    if (comms)
        for (uint32_t i = 0; i < JM_COMMS; i++) free(comms[i].c.world);
    free(comms);
    free(inflight.slot);
    free(persist.slot);
    free(pairs);
    free(callers);
    comms = NULL;
    inflight.slot = persist.slot = NULL;
    pairs = NULL;
    callers = NULL;
}

void jm_tables_world(int size) { world_c.size = size; }
