/* cuda_activity.c — CUPTI activity buffers: a preallocated pool handed to CUPTI, a worker
 * thread that flushes every flush_ms and decodes completed buffers, and the decoder of the
 * CUDA 13 record layouts (CUpti_ActivityKernel10, Memcpy6, Memset4, Synchronization2,
 * Memory4, Overhead3, ExternalCorrelation). Unknown kinds are counted per kind, never read.
 *
 * CUPTI's thread only moves pointers under pool_lock (no I/O, no allocation); decoding,
 * interning and emitting happen on the worker. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_internal.h"

/* ---- clock ---- */

static uint64_t (*ts_now)(void); /* the Jäger clock, for CUPTI's timestamp callback */
static int ts_registered;        /* once per process: re-registering corrupts kernel records */

static uint64_t CUPTIAPI cu_timestamp(void) { return ts_now ? ts_now() : 0; }

uint64_t cu_to_jager(cu_state *st, uint64_t t)
{
    if (st->clock_mode == 1) return t;
    double v = st->fit_slope * ((double)t - st->fit_x0) + st->fit_offset + st->fit_y0;
    return v <= 0 ? 1 : (uint64_t)v;
}

/* One paired sample (cuptiGetTimestamp against the Jäger clock, bracketed); refits and
 * records the sample with its residual against the fit before it. */
void cu_clock_sample(cu_state *st)
{
    if (st->clock_mode != 2) return;
    uint64_t a = st->host->now_ns(), c = 0;
    if (st->api.GetTimestamp(&c) != CUPTI_SUCCESS) return;
    uint64_t b = st->host->now_ns();
    uint64_t j = a + (b - a) / 2;
    if (st->fit_n == 0) {
        st->fit_x0 = (double)c;
        st->fit_y0 = (double)j;
        st->fit_slope = 1.0;
        st->fit_offset = 0;
    }
    int64_t resid = (int64_t)j - (int64_t)cu_to_jager(st, c);
    double x = (double)c - st->fit_x0, y = (double)j - st->fit_y0;
    st->fit_n += 1;
    st->fit_sx += x;
    st->fit_sy += y;
    st->fit_sxx += x * x;
    st->fit_sxy += x * y;
    if (x < st->fit_xmin) st->fit_xmin = x;
    if (x > st->fit_xmax) st->fit_xmax = x;
    double den = st->fit_n * st->fit_sxx - st->fit_sx * st->fit_sx;
    if (st->fit_n >= 2 && den > 0 && st->fit_xmax - st->fit_xmin >= 1e8) {
        /* samples 100 ms apart or more: fit the rate too */
        st->fit_slope = (st->fit_n * st->fit_sxy - st->fit_sx * st->fit_sy) / den;
        st->fit_offset = (st->fit_sy - st->fit_slope * st->fit_sx) / st->fit_n;
    } else { /* too close together to tell rates apart: same rate, mean offset */
        st->fit_slope = 1.0;
        st->fit_offset = (st->fit_sy - st->fit_sx) / st->fit_n;
    }
    uint64_t f[] = {c, (uint64_t)resid, b - a};
    st->host->emit(st->t_clock, j, f, CU_N(f));
}

/* ---- buffers ---- */

static cu_state *cb_state; /* CUPTI's buffer callbacks carry no user pointer */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    cu_state *st = cb_state;
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    if (!st) return;
    pthread_mutex_lock(&st->pool_lock);
    if (st->nfree) *buffer = st->free_bufs[--st->nfree];
    pthread_mutex_unlock(&st->pool_lock);
    if (*buffer)
        *size = st->buffer_bytes;
    else
        atomic_fetch_add_explicit(&st->pool_exhausted, 1, memory_order_relaxed); /* CUPTI drops and counts */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    cu_state *st = cb_state;
    (void)size;
    if (!st || !buffer) return;
    size_t dropped = 0;
    st->api.ActivityGetNumDroppedRecords(ctx, stream, &dropped); /* resets when read */
    atomic_fetch_add_explicit(&st->buffers_completed, 1, memory_order_relaxed);
    pthread_mutex_lock(&st->pool_lock);
    if (st->full_count < st->nbufs) { /* always true: at most nbufs buffers exist */
        cu_full *e = &st->full[(st->full_head + st->full_count) % st->nbufs];
        e->buf = buffer;
        e->valid = valid;
        e->stream = stream;
        e->ctx_id = ctx ? 1u : 0u;
        e->dropped = dropped;
        st->full_count++;
    }
    pthread_cond_signal(&st->pool_cond);
    pthread_mutex_unlock(&st->pool_lock);
}

/* ---- the decoder ---- */

static uint32_t kernel_name_id(cu_state *st, const char *name)
{
    if (!name) return 0;
    uintptr_t h = (uintptr_t)name;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15ull;
    for (uint32_t i = 0; i <= st->name_mask; i++) {
        uint32_t k = (uint32_t)(h + i) & st->name_mask;
        if (st->name_ptr[k] == name) return st->name_id[k];
        if (!st->name_ptr[k]) {
            st->name_ptr[k] = name;
            st->name_id[k] = st->host->intern(name);
            return st->name_id[k];
        }
    }
    return st->host->intern(name); /* cache full: still right, only slower */
}

static void ext_put(cu_state *st, uint32_t corr, uint64_t ext)
{
    uint32_t k = corr & st->corr_mask;
    st->ext_corr[k] = corr;
    st->ext_id[k] = ext;
}

/* The launch behind a record: the callback's slot, else an external id from an
 * EXTERNAL_CORRELATION record of this or an earlier buffer. Counts hits and misses. */
static void find_launch(cu_state *st, uint32_t corr, cu_launch_info *li)
{
    cu_corr_get(st, corr, li);
    if (!li->found) {
        uint32_t k = corr & st->corr_mask;
        if (corr && st->ext_corr[k] == corr) {
            li->external_id = st->ext_id[k];
            li->found = 1;
        }
    }
    if (li->found)
        st->corr_hits++;
    else
        st->corr_misses++;
}

/* Times of a device record; 0 when a timestamp is missing or reversed (counted). */
static int record_times(cu_state *st, uint64_t start, uint64_t end, uint64_t *t0, uint64_t *dur)
{
    if (!start || !end || end < start) {
        st->zero_ts++;
        return 0;
    }
    *t0 = cu_to_jager(st, start);
    uint64_t t1 = cu_to_jager(st, end);
    *dur = t1 >= *t0 ? t1 - *t0 : 0;
    return 1;
}

static void decode_one(cu_state *st, const CUpti_Activity *rec)
{
    const jager_host_api *h = st->host;
    cu_launch_info li;
    uint64_t t0, dur;
    st->records++;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        break; /* taken in the first pass */
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)rec;
        st->kernels++;
        find_launch(st, k->correlationId, &li);
        if (!record_times(st, k->start, k->end, &t0, &dur)) break;
        uint64_t f[] = {dur, kernel_name_id(st, k->name), k->deviceId, k->contextId, k->streamId,
                        (uint64_t)k->gridX, (uint64_t)k->gridY, (uint64_t)k->gridZ, (uint64_t)k->blockX,
                        (uint64_t)k->blockY, (uint64_t)k->blockZ, k->registersPerThread,
                        (uint64_t)k->staticSharedMemory, (uint64_t)k->dynamicSharedMemory, k->correlationId,
                        li.external_id, li.launch_ns, li.stack, li.site, li.os_tid, k->graphId, k->launchType};
        h->emit(st->t_kernel, t0, f, CU_N(f));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)rec;
        st->memcpys++;
        find_launch(st, m->correlationId, &li);
        if (!record_times(st, m->start, m->end, &t0, &dur)) break;
        uint64_t f[] = {dur, m->bytes, m->copyKind, m->srcKind, m->dstKind,
                        (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1u : 0u, m->deviceId, m->contextId,
                        m->streamId, m->correlationId, li.external_id, li.launch_ns, li.stack, li.site, li.os_tid,
                        m->graphId};
        h->emit(st->t_memcpy, t0, f, CU_N(f));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)rec;
        st->memsets++;
        find_launch(st, m->correlationId, &li);
        if (!record_times(st, m->start, m->end, &t0, &dur)) break;
        uint64_t f[] = {dur, m->bytes, m->value, m->memoryKind, m->deviceId, m->contextId, m->streamId,
                        m->correlationId, li.external_id, li.launch_ns, li.stack, li.site, li.os_tid, m->graphId};
        h->emit(st->t_memset, t0, f, CU_N(f));
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const void *)rec;
        st->syncs++;
        find_launch(st, s->correlationId, &li);
        if (!record_times(st, s->start, s->end, &t0, &dur)) break;
        uint64_t f[] = {dur, (uint64_t)s->type, s->contextId, s->streamId, s->cudaEventId, s->correlationId,
                        li.external_id, li.launch_ns, li.stack, li.site, li.os_tid};
        h->emit(st->t_sync, t0, f, CU_N(f));
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const CUpti_ActivityMemory4 *m = (const void *)rec;
        st->memories++;
        find_launch(st, m->correlationId, &li);
        if (!m->timestamp) {
            st->zero_ts++;
            break;
        }
        uint64_t f[] = {(uint64_t)m->memoryOperationType, (uint64_t)m->memoryKind, m->address, m->bytes,
                        m->deviceId, m->contextId, m->streamId, m->isAsync, m->correlationId, li.external_id,
                        li.stack, li.site, li.os_tid};
        h->emit(st->t_memory, cu_to_jager(st, m->timestamp), f, CU_N(f));
        break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *o = (const void *)rec;
        st->overheads++;
        if (!record_times(st, o->start, o->end, &t0, &dur)) break;
        uint64_t f[] = {dur, (uint64_t)o->overheadKind, (uint64_t)o->objectKind, o->correlationId};
        h->emit(st->t_overhead, t0, f, CU_N(f));
        break;
    }
    default:
        st->others++;
        if ((uint32_t)rec->kind < CU_MAX_KIND)
            st->other_by_kind[rec->kind]++;
        else
            st->other_unlisted++;
        break;
    }
}

void cu_decode_buffer(cu_state *st, uint8_t *buf, size_t valid)
{
    CUpti_Activity *rec = NULL;
    /* pass 1: correlations, so that a record before its EXTERNAL_CORRELATION still matches */
    while (st->api.ActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
            const CUpti_ActivityExternalCorrelation *e = (const void *)rec;
            ext_put(st, e->correlationId, e->externalId);
            st->ext_records++;
        }
    }
    rec = NULL;
    while (st->api.ActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) decode_one(st, rec);
    st->bytes_decoded += valid;
    if (valid > st->max_valid) st->max_valid = valid;
}

/* ---- the worker ---- */

static void emit_drop(cu_state *st, const cu_full *e)
{
    uint64_t now = st->host->now_ns();
    uint64_t f[] = {st->window_start_ns, e->ctx_id, e->stream, e->dropped, 1 /* CUPTI */, 0 /* all kinds */};
    st->host->emit(st->t_drop, now, f, CU_N(f));
    st->dropped += e->dropped;
}

/* Decode everything completed so far. Returns the buffers to the pool. */
static void drain(cu_state *st)
{
    for (;;) {
        pthread_mutex_lock(&st->pool_lock);
        if (!st->full_count) {
            pthread_mutex_unlock(&st->pool_lock);
            break;
        }
        cu_full e = st->full[st->full_head];
        st->full_head = (st->full_head + 1) % st->nbufs;
        st->full_count--;
        pthread_mutex_unlock(&st->pool_lock);
        if (e.dropped) emit_drop(st, &e);
        cu_decode_buffer(st, e.buf, e.valid);
        pthread_mutex_lock(&st->pool_lock);
        st->free_bufs[st->nfree++] = e.buf;
        pthread_mutex_unlock(&st->pool_lock);
    }
    st->window_start_ns = st->host->now_ns();
}

static void *worker_main(void *arg)
{
    cu_state *st = arg;
    uint64_t last_flush = st->host->now_ns();
    pthread_mutex_lock(&st->pool_lock);
    while (!st->worker_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)st->flush_ms * 1000000u;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        int rc = 0;
        while (!st->worker_stop && !st->full_count && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&st->pool_cond, &st->pool_lock, &ts);
        if (st->worker_stop) break;
        pthread_mutex_unlock(&st->pool_lock);
        uint64_t now = st->host->now_ns();
        if (now - last_flush >= (uint64_t)st->flush_ms * 1000000u) {
            st->api.ActivityFlushAll(0); /* completed buffers come back through buffer_completed */
            cu_clock_sample(st);
            last_flush = now;
        }
        drain(st);
        pthread_mutex_lock(&st->pool_lock);
    }
    pthread_mutex_unlock(&st->pool_lock);
    return NULL;
}

static const CUpti_ActivityKind kinds_always[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

static jager_status enable_kinds(cu_state *st, int on)
{
    CUptiResult (*fn)(CUpti_ActivityKind) = on ? st->api.ActivityEnable : st->api.ActivityDisable;
    for (uint32_t i = 0; i < CU_N(kinds_always); i++)
        if (fn(kinds_always[i]) != CUPTI_SUCCESS && on) return JAGER_E_UNSUPPORTED;
    if (st->kinds_sync) fn(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    if (st->kinds_memory) fn(CUPTI_ACTIVITY_KIND_MEMORY2);
    if (st->kinds_overhead) fn(CUPTI_ACTIVITY_KIND_OVERHEAD);
    return JAGER_OK;
}

jager_status cu_activity_start(cu_state *st)
{
    char msg[256];
    st->nbufs = (uint32_t)(st->memory_cap / st->buffer_bytes);
    if (st->nbufs < 2) st->nbufs = 2;
    st->corr_mask = st->corr_slots - 1;
    st->name_mask = 4095;
    st->pool_mem = aligned_alloc(8, (size_t)st->nbufs * st->buffer_bytes);
    st->free_bufs = calloc(st->nbufs, sizeof *st->free_bufs);
    st->full = calloc(st->nbufs, sizeof *st->full);
    st->corr = calloc(st->corr_slots, sizeof *st->corr);
    st->ext_corr = calloc(st->corr_slots, sizeof *st->ext_corr);
    st->ext_id = calloc(st->corr_slots, sizeof *st->ext_id);
    st->name_ptr = calloc(st->name_mask + 1u, sizeof *st->name_ptr);
    st->name_id = calloc(st->name_mask + 1u, sizeof *st->name_id);
    if (!st->pool_mem || !st->free_bufs || !st->full || !st->corr || !st->ext_corr || !st->ext_id || !st->name_ptr ||
        !st->name_id) {
        st->host->log(st->self, JAGER_DIAG_ERROR, "out of memory for the activity buffers: no GPU activity recorded");
        return JAGER_E_NOMEM;
    }
    memset(st->pool_mem, 0, (size_t)st->nbufs * st->buffer_bytes); /* prefault */
    for (uint32_t i = 0; i < st->nbufs; i++) st->free_bufs[i] = st->pool_mem + (size_t)i * st->buffer_bytes;
    st->nfree = st->nbufs;
    pthread_mutex_init(&st->pool_lock, NULL);
    pthread_cond_init(&st->pool_cond, NULL);
    cb_state = st;
    ts_now = st->host->now_ns;

    if (st->api.ActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
        st->host->log(st->self, JAGER_DIAG_ERROR, "cuptiActivityRegisterCallbacks failed: no GPU activity recorded");
        return JAGER_E_UNSUPPORTED;
    }
    /* The clock: the timestamp callback once per process, before any kind is enabled. */
    if (ts_registered) {
        st->clock_mode = 1;
    } else if (st->api.ActivityRegisterTimestampCallback &&
               st->api.ActivityRegisterTimestampCallback(cu_timestamp) == CUPTI_SUCCESS) {
        ts_registered = 1;
        st->clock_mode = 1;
    } else {
        st->clock_mode = 2;
        st->host->log(st->self, JAGER_DIAG_INFO,
                      "CUPTI timestamp callback unavailable: GPU times are mapped by a paired-sample fit "
                      "(cuda.clock_sample events hold the residuals)");
        for (int i = 0; i < 4; i++) cu_clock_sample(st);
    }
    st->host->metadata_set("cuda.clock", st->clock_mode == 1 ? "cupti-timestamp-callback" : "paired-sample-fit");
    if (enable_kinds(st, 1) != JAGER_OK) {
        st->host->log(st->self, JAGER_DIAG_ERROR, "cuptiActivityEnable failed: no GPU activity recorded");
        return JAGER_E_UNSUPPORTED;
    }
    st->window_start_ns = st->host->now_ns();
    if (pthread_create(&st->worker, NULL, worker_main, st) != 0) {
        st->host->log(st->self, JAGER_DIAG_ERROR, "cannot start the activity thread: no GPU activity recorded");
        enable_kinds(st, 0);
        return JAGER_E_NOMEM;
    }
    st->worker_started = 1;
    snprintf(msg, sizeof msg, "recording %d device(s), CUPTI %u, %u buffers of %llu KiB", st->ndevices,
             st->cupti_version, st->nbufs, (unsigned long long)(st->buffer_bytes >> 10));
    st->host->log(st->self, JAGER_DIAG_DEBUG, msg);
    return JAGER_OK;
}

void cu_activity_stop(cu_state *st)
{
    if (!st->worker_started) return;
    enable_kinds(st, 0); /* no new records, then hand back every buffer, partly filled ones too */
    st->api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&st->pool_lock);
    st->worker_stop = 1;
    pthread_cond_signal(&st->pool_cond);
    pthread_mutex_unlock(&st->pool_lock);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)st->flush_timeout_ms * 1000000u;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    if (pthread_timedjoin_np(st->worker, NULL, &ts) != 0) {
        st->host->log(st->self, JAGER_DIAG_WARN, "the activity thread did not stop in time; its last buffers are lost");
        pthread_detach(st->worker);
        st->worker_started = 0;
        st->pool_leaked = 1; /* the thread may still touch the buffers: never free them */
        return;
    }
    st->worker_started = 0;
    cu_clock_sample(st); /* the fit's last point (fallback clock only) */
    drain(st);           /* what the forced flush completed */
    cb_state = NULL;
}

void cu_activity_free(cu_state *st)
{
    if (st->pool_leaked) return;
    free(st->pool_mem);
    free(st->free_bufs);
    free(st->full);
    free(st->corr);
    free(st->ext_corr);
    free(st->ext_id);
    free(st->name_ptr);
    free(st->name_id);
    st->pool_mem = NULL;
    st->free_bufs = NULL;
    st->full = NULL;
    st->corr = NULL;
    st->ext_corr = NULL;
    st->ext_id = NULL;
    st->name_ptr = NULL;
    st->name_id = NULL;
}
