/*
 * file_sink.c — the `.jgr` writer, a jager_sink (layout: file_format.h, docs/file-format.md).
 *
 * The collector hands us one batch per thread ring per drain. Records are coalesced per
 * thread into EVENTS blocks of up to JG_BLOCK_TARGET bytes (bigger frames compress
 * better), and every block becomes one LZ4 frame. Before each EVENTS block we write the
 * part of every registry table that grew since the last write, so each id an event
 * carries resolves to an earlier frame: the registry's tables are append-only with dense
 * ids, so "written up to" counters suffice.
 *
 * Durability: a block is fwrite()n and fflush()ed as soon as it is complete; pending
 * (coalescing) events are forced out after JG_FILE_MAX_DELAY_NS, at every sink flush and
 * at close, so a crash loses at most that much of what already left the rings.
 *
 * I/O errors never abort: the first one is reported once on stderr, the sink stops
 * writing (the file is then a cleanly truncated recording), and every later batch is
 * refused so the core counts it as JAGER_DROP_SINK.
 *
 * Thread model: every callback runs on the collector thread (or the thread running
 * jager_shutdown), never concurrently, so the sink needs no lock.
 *
 * This file holds the sink callbacks, raw output and coalescing; file_tables.c the table,
 * STATS and END blocks; file_sink_priv.h what they share.
 */
#define LZ4F_STATIC_LINKING_ONLY
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lz4frame.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "containers.h"
#include "file_sink_priv.h"

/* ---------------------------------------------------------------------------------- */
/* failure and raw output */

static void fs_fail(file_sink *fs, const char *what, int err)
{
    if (fs->failed) return;
    fs->failed = 1;
    for (uint32_t t = 0; t < fs->npend; t++)
        fs->events_lost += fs->pend[t].events;
    if (!JG_CFG(quiet))
        fprintf(stderr, "jager: file sink: %s: %s%s%s (the recording stops here; later events are counted as dropped)\n",
                fs->path, what, err ? ": " : "", err ? strerror(err) : "");
}

/* Writes from Jäger's threads never raise SIGPIPE in the host (a FIFO or pipe whose reader
 * left): the collector runs with SIGPIPE blocked, and a write from a program thread (the
 * final drain in jager_shutdown) blocks it around the write and takes back the SIGPIPE the
 * write raised, unless one was pending already. The write then fails with EPIPE: one
 * diagnostic, the sink stops, later events are counted as dropped. */
typedef struct nosigpipe {
    sigset_t old;
    int was_pending;
} nosigpipe;

static void nosigpipe_begin(nosigpipe *g)
{
    sigset_t set, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

static void nosigpipe_end(nosigpipe *g, int err)
{
    if (err == EPIPE && !g->was_pending) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        struct timespec zero = {0, 0};
        while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static int fs_fwrite(file_sink *fs, const void *p, size_t n)
{
    if (fs->failed) return -1;
    nosigpipe g;
    nosigpipe_begin(&g);
    errno = 0;
    int ok = fwrite(p, 1, n, fs->f) == n;
    int err = errno;
    nosigpipe_end(&g, err);
    if (!ok) {
        fs_fail(fs, "write failed", err ? err : EIO);
        return -1;
    }
    fs->emitted = 1;
    return 0;
}

static int fs_sync(file_sink *fs)
{
    if (fs->failed) return -1;
    if (!fs->emitted) return 0;
    fs->emitted = 0;
    nosigpipe g;
    nosigpipe_begin(&g);
    errno = 0;
    int ok = fflush(fs->f) == 0;
    int err = errno;
    nosigpipe_end(&g, err);
    if (!ok) {
        fs_fail(fs, "write failed", err ? err : EIO);
        return -1;
    }
    return 0;
}

/** Compress \p len bytes of block content into one LZ4 frame and write it. */
int jg_fs_emit_frame(file_sink *fs, const uint8_t *content, size_t len)
{
    if (fs->failed) return -1;
    fs->prefs.frameInfo.contentSize = len;
    size_t bound = LZ4F_compressFrameBound(len, &fs->prefs);
    uint8_t *o = jg_grow(fs->out, &fs->out_cap, bound, 1, 64 * 1024);
    if (!o) return -1; /* out of memory: retried with the next batch, not sticky */
    fs->out = o;
    size_t n = LZ4F_compressFrame_usingCDict(fs->cctx, fs->out, fs->out_cap, content, len, NULL, &fs->prefs);
    if (LZ4F_isError(n)) {
        if (!JG_CFG(quiet))
            fprintf(stderr, "jager: file sink: %s: lz4 compression failed: %s\n", fs->path, LZ4F_getErrorName(n));
        return -1;
    }
    if (fs_fwrite(fs, fs->out, n) != 0) return -1;
    fs->frames++;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* events */

static int open_output(file_sink *fs, int lazy);

static int fs_start(file_sink *fs)
{
    if (fs->started) return fs->failed ? -1 : 0;
    fs->started = 1;
    if (!fs->f && !fs->failed && open_output(fs, 1) != 0) return -1;
    if (fs->failed) return -1;
    uint8_t pre[JG_FILE_PREAMBLE_BYTES];
    jg_wr32(pre, JG_FILE_SKIPPABLE_MAGIC);
    jg_wr32(pre + 4, JG_FILE_PREAMBLE_DATA);
    memcpy(pre + 8, JG_FILE_MAGIC, JG_FILE_MAGIC_LEN);
    jg_wr16(pre + 16, JAGER_FORMAT_MAJOR);
    jg_wr16(pre + 18, JAGER_FORMAT_MINOR);
    jg_wr32(pre + 20, JG_FILE_FLAG_PACKED_SPANS); /* its EVENTS blocks pack span records */
    if (fs_fwrite(fs, pre, sizeof pre) != 0) return -1;
    fs->frames = 1;
    if (jg_fs_write_tables(fs, 1) != 0) return -1;
    return fs_sync(fs);
}

/** Write thread \p t's pending events as one EVENTS block (tables first). */
static int emit_pending(file_sink *fs, uint32_t t)
{
    fs_pending *p = &fs->pend[t];
    if (!p->events) return 0;
    if (jg_fs_write_tables(fs, 0) != 0) return -1;
    jg_wr32(p->buf, JG_BLOCK_EVENTS);
    jg_wr32(p->buf + 4, 0);
    jg_wr32(p->buf + 8, t);
    jg_wr32(p->buf + 12, JG_EVENTS_ENC_PACKED_SPANS);
    jg_wr64(p->buf + 16, p->events);
    jg_span_pack(p->buf + JG_EVENTS_PREFIX, p->buf + p->len, 0);
    if (jg_fs_emit_frame(fs, p->buf, p->len) != 0) {
        /* kept for the next try, as the rings produced it */
        jg_span_pack(p->buf + JG_EVENTS_PREFIX, p->buf + p->len, 1);
        return -1;
    }
    fs->events_written += p->events;
    fs->pending_bytes -= p->len - JG_EVENTS_PREFIX;
    p->len = JG_EVENTS_PREFIX;
    p->events = 0;
    if (fs->pending_cap > 2 * JG_FILE_MAX_PENDING && p->cap > 64 * 1024) {
        /* many threads once had big bursts: give memory back (bounded by the pending cap) */
        fs->pending_cap -= p->cap;
        free(p->buf);
        p->buf = NULL;
        p->cap = 0;
    }
    return 0;
}

static int emit_all_pending(file_sink *fs)
{
    for (uint32_t t = 0; t < fs->npend; t++)
        if (emit_pending(fs, t) != 0) return -1;
    fs->oldest_pending_ns = 0;
    return 0;
}

static fs_pending *pending_for(file_sink *fs, uint32_t thread)
{
    if (thread >= JG_FILE_MAX_COALESCED_THREADS) return NULL;
    if (thread >= fs->npend) {
        size_t n = fs->npend;
        fs_pending *p = jg_grow(fs->pend, &n, (size_t)thread + 1, sizeof *p, 16); /* zeroed */
        if (!p) return NULL;
        fs->pend = p;
        fs->npend = (uint32_t)n;
    }
    fs_pending *p = &fs->pend[thread];
    if (!p->buf) {
        if (!(p->buf = malloc(64 * 1024))) return NULL;
        p->cap = 64 * 1024;
        p->len = JG_EVENTS_PREFIX;
        fs->pending_cap += p->cap;
    }
    return p;
}

static int pending_append(file_sink *fs, fs_pending *p, const uint8_t *src, size_t n)
{
    size_t was = p->cap; /* 0 after emit_pending gave it back */
    uint8_t *b = jg_grow(p->buf, &p->cap, p->len + n, 1, 64 * 1024);
    if (!b) return -1;
    fs->pending_cap += p->cap - was;
    p->buf = b;
    memcpy(p->buf + p->len, src, n);
    p->len += n;
    return 0;
}

/** Write a batch without coalescing (huge thread index or out of memory). */
static int write_direct(file_sink *fs, uint32_t thread, const uint8_t *data, size_t bytes)
{
    size_t off = 0;
    while (off < bytes) {
        size_t start = off;
        uint64_t n = 0;
        while (off < bytes) {
            size_t sz = (size_t)((const jager_record *)(data + off))->words * 8u;
            if (off > start && off - start + sz > JG_BLOCK_TARGET - JG_EVENTS_PREFIX) break;
            off += sz;
            n++;
        }
        if (jg_fs_write_tables(fs, 0) != 0) return -1;
        fs->blk_len = 0;
        fs->blk_oom = 0;
        jg_fs_put32(fs, JG_BLOCK_EVENTS);
        jg_fs_put32(fs, 0);
        jg_fs_put32(fs, thread);
        jg_fs_put32(fs, JG_EVENTS_ENC_PACKED_SPANS);
        jg_fs_put64(fs, n);
        jg_fs_put_bytes(fs, data + start, off - start);
        if (fs->blk_oom) return -1;
        jg_span_pack(fs->blk + JG_EVENTS_PREFIX, fs->blk + fs->blk_len, 0);
        if (jg_fs_emit_frame(fs, fs->blk, fs->blk_len) != 0) return -1;
        fs->events_written += n;
    }
    return 0;
}

/*
 * Accept a batch: its records join the thread's pending block, which is written when it
 * is full (and older blocks when they are due). Returns non-zero only when some of the
 * batch's records are neither written nor pending (the core then counts the batch as
 * dropped): after a sticky I/O failure, or when memory ran out for them. Pending records
 * whose block could not be written yet for lack of memory stay pending and are retried.
 */
static jager_status fs_write(void *ctx, const jager_batch *b)
{
    file_sink *fs = ctx;
    if (fs->lazy && !fs->started && (!b || !b->bytes)) return JAGER_OK; /* not yet: no event */
    if (fs_start(fs) != 0 || fs->failed) return JAGER_E_IO;
    if (!b || !b->bytes) return JAGER_OK;
    if (!b->data) return JAGER_E_INVALID;
    /* Refuse a malformed batch whole rather than writing a block readers reject. */
    for (size_t off = 0; off < b->bytes;) {
        const jager_record *r = (const jager_record *)(b->data + off);
        if (b->bytes - off < sizeof *r || !r->words || (size_t)r->words * 8u > b->bytes - off) return JAGER_E_INVALID;
        off += (size_t)r->words * 8u;
    }

    int lost = 0;
    fs_pending *p = pending_for(fs, b->thread);
    size_t off = 0;
    while (p && off < b->bytes) {
        /* the longest run of whole records that fits in this thread's block */
        size_t start = off;
        uint64_t n = 0;
        while (off < b->bytes) {
            size_t sz = (size_t)((const jager_record *)(b->data + off))->words * 8u;
            if (p->len + (off - start) + sz > JG_BLOCK_TARGET) break;
            off += sz;
            n++;
        }
        if (n && pending_append(fs, p, b->data + start, off - start) != 0) {
            off = start; /* out of memory: the rest goes out directly below */
            break;
        }
        if (n) {
            if (!p->events && !fs->oldest_pending_ns) fs->oldest_pending_ns = jager_now_ns();
            p->events += n;
            fs->pending_bytes += off - start;
        }
        if ((off < b->bytes || p->len + 64 > JG_BLOCK_TARGET) && emit_pending(fs, b->thread) != 0)
            break; /* the block stays pending; the rest is retried below */
        if (!n && !p->events) break; /* cannot happen (records are ≤ 64 KiB); never spin */
    }
    if (off < b->bytes) { /* the thread's pending records first, to keep its order */
        if ((p && p->events && emit_pending(fs, b->thread) != 0) ||
            write_direct(fs, b->thread, b->data + off, b->bytes - off) != 0)
            lost = 1;
    }
    if (fs->pending_bytes > JG_FILE_MAX_PENDING ||
        (fs->oldest_pending_ns && jager_now_ns() - fs->oldest_pending_ns > JG_FILE_MAX_DELAY_NS))
        (void)emit_all_pending(fs); /* a failure keeps them pending (or is sticky) */
    fs_sync(fs);
    if (fs->failed) return JAGER_E_IO;
    return lost ? JAGER_E_NOMEM : JAGER_OK;
}

/* Always OK: a failure is sticky inside the sink and every later write reports it, so
 * the core counts the lost events and still calls close (which frees the sink). */
static jager_status fs_open(void *ctx)
{
    file_sink *fs = ctx;
    if (!fs->lazy) (void)fs_start(fs);
    return JAGER_OK;
}

static void fs_flush(void *ctx)
{
    file_sink *fs = ctx;
    if (fs->lazy && !fs->started) return; /* no event yet: nothing of this process to keep */
    if (fs_start(fs) != 0) return;
    if (emit_all_pending(fs) != 0) return;
    (void)jg_fs_write_cost_meta(fs);
    if (jg_fs_write_tables(fs, 1) != 0) return;
    if (jg_fs_write_stats(fs) != 0) return;
    if (jg_fs_write_paths(fs) != 0) return;
    fs_sync(fs);
}

static void fs_free(file_sink *fs)
{
    if (!fs) return;
    for (uint32_t t = 0; t < fs->npend; t++) free(fs->pend[t].buf);
    free(fs->pend);
    free(fs->type_ids);
    free(fs->blk);
    free(fs->out);
    if (fs->cctx) LZ4F_freeCompressionContext(fs->cctx);
    free(fs->stdio_buf);
    free(fs->path);
    free(fs);
}

static void fs_close(void *ctx)
{
    file_sink *fs = ctx;
    if (fs->lazy && !fs->started) {
        /* No event of its own: a wrapper, or a child, leaves no file; the program run bare
         * writes its empty recording, unless another process has the file (then quietly:
         * nothing is lost). */
        if (!jg_launch_keep_empty()) {
            fs_free(fs);
            return;
        }
        fs->soft = 1;
    }
    if (fs_start(fs) == 0 && emit_all_pending(fs) == 0 && jg_fs_write_cost_meta(fs) == 0 &&
        jg_fs_write_tables(fs, 1) == 0 && jg_fs_write_stats(fs) == 0 && jg_fs_write_paths(fs) == 0)
        jg_fs_write_end(fs);
    fs_sync(fs);
    if (fs->f) {
        nosigpipe g;
        nosigpipe_begin(&g);
        errno = 0;
        int ok = fclose(fs->f) == 0;
        int err = errno;
        nosigpipe_end(&g, err);
        if (!ok && !fs->failed) fs_fail(fs, "close failed", err ? err : EIO);
    }
    fs_free(fs);
}

/* A child made by fork() (single-threaded): what the parent's collector had buffered in
 * stdio is discarded, never written — the child's exit() flushes every stream, which would
 * append those bytes to the parent's file a second time — and the descriptor closed (an
 * OFD lock is the parent's open file description's, and stays with it). The sink's memory
 * is left alone: the collector may have been changing it. */
void jg_file_sink_forget(void *ctx)
{
    file_sink *fs = ctx;
    if (!fs || !fs->f) return;
    __fpurge(fs->f);
    fclose(fs->f);
    fs->f = NULL;
}

/* ---------------------------------------------------------------------------------- */

/* Open the output: a FIFO without blocking, anything else claimed (launch.c: a write lock
 * on a regular file, refused when another process of this run has it). Lazy (from the
 * first event, on the collector thread): a failure is one diagnostic and a failed sink
 * whose events count as dropped. Eager (jager_init): an error for jager_init to report. */
static int open_output(file_sink *fs, int lazy)
{
    struct stat sb;
    if (stat(fs->path, &sb) == 0 && S_ISFIFO(sb.st_mode)) {
        /* A FIFO: opening it for writing blocks until a reader comes, so open it
         * non-blocking. No reader: one diagnostic, the sink starts failed (its events are
         * counted as dropped) and the program runs on. */
        int fd = open(fs->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* then ordinary writes */
            if (!(fs->f = fdopen(fd, "wb"))) close(fd);
        }
        int err = fd < 0 ? errno : (fs->f ? 0 : errno);
        if (!fs->f) fs_fail(fs, err == ENXIO ? "a FIFO with no reader" : "cannot open", err == ENXIO ? 0 : err);
    } else {
        char why[PATH_MAX + 256];
        int fd = jg_launch_claim(fs->path, why, sizeof why);
        if (fd >= 0 && !(fs->f = fdopen(fd, "wb"))) {
            snprintf(why, sizeof why, "cannot open output '%s': %s", fs->path, strerror(errno));
            close(fd);
            fd = -1;
        }
        if (fd < 0) {
            if (!lazy) return jg_error(JAGER_E_IO, "%s", why);
            if (!JG_CFG(quiet) && !(fs->soft && fd == -2)) fprintf(stderr, "jager: %s\n", why);
            fs->failed = 1; /* said once; its events count as sink drops */
            return -1;
        }
    }
    if (fs->f && (fs->stdio_buf = malloc(JG_FILE_STDIO_BUFFER)) != NULL)
        setvbuf(fs->f, fs->stdio_buf, _IOFBF, JG_FILE_STDIO_BUFFER);
    return 0;
}

jager_status jg_file_sink_create(const char *path, int lazy, jager_sink *out)
{
    if (!path || !*path || !out) return jg_error(JAGER_E_INVALID, "file sink: no output path");
    jager_status st = JAGER_E_NOMEM;
    file_sink *fs = calloc(1, sizeof *fs);
    if (!fs) goto fail;
    if (!(fs->path = strdup(path))) goto free_sink;
    fs->lazy = lazy;
    if (LZ4F_isError(LZ4F_createCompressionContext(&fs->cctx, LZ4F_VERSION))) {
        fs->cctx = NULL;
        goto free_sink;
    }
    fs->prefs.frameInfo.blockSizeID = LZ4F_max1MB;
    fs->prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    fs->prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    fs->prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
    fs->prefs.compressionLevel = 0;
    if (!lazy && (st = (jager_status)open_output(fs, 0)) != JAGER_OK) goto free_sink;

    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->name = "file";
    out->ctx = fs;
    out->open = fs_open;
    out->write = fs_write;
    out->flush = fs_flush;
    out->close = fs_close;
    return JAGER_OK;

free_sink:
    fs_free(fs);
fail:
    if (st == JAGER_E_NOMEM) jg_error(st, "file sink: out of memory");
    return st;
}
