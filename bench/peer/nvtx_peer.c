/* nvtx_peer.c — a REFERENCE injection library for the benchmarks (bench_span_peer), not
 * product code: what an NVTX injection or a minimal tracer does per range, and nothing
 * more (nvtx_peer.h says why). push: one TSC read onto a per-thread stack. pop: one TSC
 * read and a 32-byte record stored at a per-thread cursor into a prefaulted buffer that
 * wraps (no consumer; what is overwritten is not counted). Thread state is initial-exec TLS,
 * as libjager's is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "nvtx_peer.h"

#define PEER_DEPTH 64
#define PEER_BUF_RECS (1u << 20) /* 32 MiB per thread */

typedef struct peer_rec {
    uint64_t start, end;
    const char *message;
    uint32_t thread, depth;
} peer_rec;

typedef struct peer_tls {
    uint32_t depth, thread;
    uint64_t cursor;
    peer_rec *buf;
    struct {
        uint64_t start;
        const char *message;
    } stack[PEER_DEPTH];
} peer_tls;

static __thread peer_tls *peer_t __attribute__((tls_model("initial-exec")));
static uint32_t peer_threads;

static __attribute__((noinline, cold)) peer_tls *peer_make(void)
{
    peer_tls *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->buf = malloc(sizeof(peer_rec) * PEER_BUF_RECS);
    if (!t->buf) {
        free(t);
        return NULL;
    }
    memset(t->buf, 0, sizeof(peer_rec) * PEER_BUF_RECS); /* prefaulted, like Jäger's rings */
    t->thread = __atomic_add_fetch(&peer_threads, 1, __ATOMIC_RELAXED);
    peer_t = t;
    return t;
}

static int peer_push(const char *message)
{
    peer_tls *t = peer_t;
    if (__builtin_expect(!t, 0) && !(t = peer_make())) return -1;
    uint32_t d = t->depth++;
    if (__builtin_expect(d < PEER_DEPTH, 1)) {
        t->stack[d].start = __rdtsc();
        t->stack[d].message = message;
    }
    return (int)d;
}

static int peer_pop(void)
{
    uint64_t end = __rdtsc();
    peer_tls *t = peer_t;
    if (__builtin_expect(!t || !t->depth, 0)) return -1;
    uint32_t d = --t->depth;
    if (__builtin_expect(d >= PEER_DEPTH, 0)) return (int)d;
    peer_rec *r = &t->buf[t->cursor++ & (PEER_BUF_RECS - 1)];
    r->start = t->stack[d].start;
    r->end = end;
    r->message = t->stack[d].message;
    r->thread = t->thread;
    r->depth = d;
    return (int)d;
}

/* The injection's entry: fills the program's table (NVTX: InitializeInjectionNvtx2). */
int nvtxp_initialize_injection(nvtxp_push_fn *push, nvtxp_pop_fn *pop);
int nvtxp_initialize_injection(nvtxp_push_fn *push, nvtxp_pop_fn *pop)
{
    *push = peer_push;
    *pop = peer_pop;
    return 0;
}

/* For the benchmark's check that the peer recorded what it was asked to: ranges popped on
 * the calling thread. */
uint64_t nvtxp_recorded(void);
uint64_t nvtxp_recorded(void) { return peer_t ? peer_t->cursor : 0; }
