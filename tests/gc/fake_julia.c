/* fake_julia.c — see fake_julia.h. The exported names and signatures are libjulia 1.5's. */
#include "fake_julia.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* jl_gc_num_t of Julia 1.5 (104 bytes). */
typedef struct fake_gc_num {
    int64_t allocd, deferred_alloc, freed;
    uint64_t malloc, realloc, poolalloc, bigalloc, freecall;
    uint64_t total_time, total_allocd, since_sweep;
    size_t interval;
    int32_t pause, full_sweep;
} fake_gc_num;
_Static_assert(sizeof(fake_gc_num) == 104, "Julia 1.5 jl_gc_num_t is 104 bytes");

static pthread_mutex_t safepoint = PTHREAD_MUTEX_INITIALIZER; /* one collection at a time */
static _Atomic(fake_cb) pre_cb, post_cb;
static _Atomic(int) initialized;
static _Atomic(int64_t) live, total, since; /* since: allocated since the last collection */
static _Atomic(unsigned) reg[4];
static fake_gc_num num;
static pthread_mutex_t num_lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT void jl_gc_set_cb_pre_gc(fake_cb cb, int enable)
{
    atomic_fetch_add(&reg[enable ? 0 : 1], 1);
    if (enable) atomic_store(&pre_cb, cb);
    else if (atomic_load(&pre_cb) == cb) atomic_store(&pre_cb, (fake_cb)NULL);
}
EXPORT void jl_gc_set_cb_post_gc(fake_cb cb, int enable)
{
    atomic_fetch_add(&reg[enable ? 2 : 3], 1);
    if (enable) atomic_store(&post_cb, cb);
    else if (atomic_load(&post_cb) == cb) atomic_store(&post_cb, (fake_cb)NULL);
}
EXPORT int jl_is_initialized(void) { return atomic_load(&initialized); }
EXPORT int64_t jl_gc_live_bytes(void) { return atomic_load(&live); }
EXPORT void jl_gc_get_total_bytes(int64_t *out) { *out = atomic_load(&total); }
EXPORT uint64_t jl_gc_total_hrtime(void)
{
    pthread_mutex_lock(&num_lock);
    uint64_t t = num.total_time;
    pthread_mutex_unlock(&num_lock);
    return t;
}
EXPORT fake_gc_num jl_gc_num(void)
{
    pthread_mutex_lock(&num_lock);
    fake_gc_num n = num;
    pthread_mutex_unlock(&num_lock);
    return n;
}
EXPORT int jl_ver_major(void) { return 1; }
EXPORT int jl_ver_minor(void) { return 5; }
EXPORT int jl_ver_patch(void) { return 3; }

void fake_julia_reset(int init, int64_t live_bytes)
{
    atomic_store(&pre_cb, (fake_cb)NULL);
    atomic_store(&post_cb, (fake_cb)NULL);
    atomic_store(&initialized, init);
    atomic_store(&live, live_bytes);
    atomic_store(&total, live_bytes);
    atomic_store(&since, 0);
    for (int i = 0; i < 4; i++) atomic_store(&reg[i], 0);
    pthread_mutex_lock(&num_lock);
    num = (fake_gc_num){0};
    pthread_mutex_unlock(&num_lock);
}

void fake_julia_set_initialized(int init) { atomic_store(&initialized, init); }

void fake_julia_alloc(int64_t bytes)
{
    /* As in Julia, the live size moves only at a collection; the total moves at once.
     * Allocation waits while a collection runs (the world is stopped). */
    pthread_mutex_lock(&safepoint);
    atomic_fetch_add(&total, bytes);
    atomic_fetch_add(&since, bytes);
    pthread_mutex_unlock(&safepoint);
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {}
}

/* noinline: its frame must show in the captured stack, right below the plugin's. */
__attribute__((noinline)) EXPORT void fake_julia_collect(int requested, int full_sweep, int64_t freed, uint64_t pause_ns)
{
    pthread_mutex_lock(&safepoint);
    fake_cb pre = atomic_load(&pre_cb);
    if (pre) pre(requested);
    sleep_ns(pause_ns);
    atomic_fetch_add(&live, atomic_exchange(&since, 0) - freed);
    pthread_mutex_lock(&num_lock);
    num.pause++;
    num.full_sweep += full_sweep ? 1 : 0;
    num.total_time += pause_ns;
    pthread_mutex_unlock(&num_lock);
    fake_cb post = atomic_load(&post_cb);
    if (post) post(requested);
    pthread_mutex_unlock(&safepoint);
    __asm__ volatile("" ::: "memory"); /* keep the call above from becoming a tail call */
}

fake_cb fake_julia_pre(void) { return atomic_load(&pre_cb); }
fake_cb fake_julia_post(void) { return atomic_load(&post_cb); }
void fake_julia_reg_calls(unsigned out[4])
{
    for (int i = 0; i < 4; i++) out[i] = atomic_load(&reg[i]);
}
uint64_t fake_julia_collections(void)
{
    pthread_mutex_lock(&num_lock);
    uint64_t n = (uint64_t)num.pause;
    pthread_mutex_unlock(&num_lock);
    return n;
}
