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
 */
#define LZ4F_STATIC_LINKING_ONLY
#include <errno.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_format.h"
#include "internal.h"

/** Pending events older than this are written even if their block is not full. */
#define JG_FILE_MAX_DELAY_NS 1000000000ull
/** Pending events of all threads together above this are written out. */
#define JG_FILE_MAX_PENDING (8u << 20)
/** Thread indexes above this are not coalesced (written block by block). */
#define JG_FILE_MAX_COALESCED_THREADS 65536u
#define JG_FILE_STDIO_BUFFER (1u << 20)

/* Events waiting to be written for one thread. buf starts with room for the block and
 * events headers, filled in when the block is written. */
typedef struct fs_pending {
    uint8_t *buf;
    size_t len, cap; /* len == JG_EVENTS_PREFIX when empty */
    uint64_t events;
} fs_pending;

#define JG_EVENTS_PREFIX (JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES)

typedef struct file_sink {
    char *path;
    FILE *f;
    char *stdio_buf;
    int started;  /* preamble written */
    int failed;   /* sticky: an I/O error stopped the file */
    LZ4F_cctx *cctx;
    LZ4F_preferences_t prefs;
    uint8_t *out; /* compressed frame */
    size_t out_cap;

    /* the table block being built */
    uint8_t *blk;
    size_t blk_len, blk_cap;
    size_t blk_count_at; /* offset of the block's u32 entry count */
    uint32_t blk_entries;
    int blk_oom;

    /* what the file already holds ("written up to", exclusive) */
    uint32_t w_strings, w_sites, w_threads, w_counters, w_symbols;
    uint64_t w_stacks;
    uint32_t w_type_count;    /* jg_type_count() at the last types scan */
    uint8_t types_written[65536 / 8];
    uint16_t *type_ids;       /* scratch for one SCHEMA block */
    int meta_written;
    uint64_t w_meta_gen;
    char w_plugins[256];      /* jager.plugins as last written */

    /* coalescing */
    fs_pending *pend;         /* indexed by thread index */
    uint32_t npend;
    size_t pending_bytes;     /* record bytes waiting, all threads */
    size_t pending_cap;       /* bytes allocated for pending buffers, all threads */
    uint64_t oldest_pending_ns;
    int emitted;              /* a block was written since the last fflush */

    /* totals, for the END block and the failure report */
    uint64_t frames;          /* frames written, preamble included */
    uint64_t events_written;
    uint64_t events_lost;     /* accepted but never written (after a failure) */
} file_sink;

/* ---------------------------------------------------------------------------------- */
/* failure and raw output */

static void fs_fail(file_sink *fs, const char *what, int err)
{
    if (fs->failed) return;
    fs->failed = 1;
    for (uint32_t t = 0; t < fs->npend; t++)
        fs->events_lost += fs->pend[t].events;
    if (!jg_cfg.c.quiet)
        fprintf(stderr, "jager: file sink: %s: %s: %s (the recording stops here; later events are counted as dropped)\n",
                fs->path, what, err ? strerror(err) : "failed");
}

static int fs_fwrite(file_sink *fs, const void *p, size_t n)
{
    if (fs->failed) return -1;
    errno = 0;
    if (fwrite(p, 1, n, fs->f) != n) {
        fs_fail(fs, "write failed", errno ? errno : EIO);
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
    errno = 0;
    if (fflush(fs->f) != 0) {
        fs_fail(fs, "write failed", errno ? errno : EIO);
        return -1;
    }
    return 0;
}

/** Compress \p len bytes of block content into one LZ4 frame and write it. */
static int fs_emit_frame(file_sink *fs, const uint8_t *content, size_t len)
{
    if (fs->failed) return -1;
    fs->prefs.frameInfo.contentSize = len;
    size_t bound = LZ4F_compressFrameBound(len, &fs->prefs);
    if (bound > fs->out_cap) {
        size_t cap = fs->out_cap ? fs->out_cap : 64 * 1024;
        while (cap < bound) cap *= 2;
        uint8_t *o = realloc(fs->out, cap);
        if (!o) return -1; /* out of memory: retried with the next batch, not sticky */
        fs->out = o;
        fs->out_cap = cap;
    }
    size_t n = LZ4F_compressFrame_usingCDict(fs->cctx, fs->out, fs->out_cap, content, len, NULL, &fs->prefs);
    if (LZ4F_isError(n)) {
        if (!jg_cfg.c.quiet)
            fprintf(stderr, "jager: file sink: %s: lz4 compression failed: %s\n", fs->path, LZ4F_getErrorName(n));
        return -1;
    }
    if (fs_fwrite(fs, fs->out, n) != 0) return -1;
    fs->frames++;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* building table blocks */

static void blk_reserve(file_sink *fs, size_t n)
{
    if (fs->blk_oom) return;
    if (fs->blk_len + n <= fs->blk_cap) return;
    size_t cap = fs->blk_cap ? fs->blk_cap : 64 * 1024;
    while (cap < fs->blk_len + n) cap *= 2;
    uint8_t *b = realloc(fs->blk, cap);
    if (!b) {
        fs->blk_oom = 1;
        return;
    }
    fs->blk = b;
    fs->blk_cap = cap;
}

static void put_bytes(file_sink *fs, const void *p, size_t n)
{
    blk_reserve(fs, n);
    if (fs->blk_oom) return;
    if (n) memcpy(fs->blk + fs->blk_len, p, n);
    fs->blk_len += n;
}
static void put16(file_sink *fs, uint16_t v) { put_bytes(fs, &v, 2); }
static void put32(file_sink *fs, uint32_t v) { put_bytes(fs, &v, 4); }
static void put64(file_sink *fs, uint64_t v) { put_bytes(fs, &v, 8); }
static void put_str_n(file_sink *fs, const char *s, size_t n)
{
    if (!s) n = 0;
    if (n > JG_BLOCK_TARGET) n = JG_BLOCK_TARGET; /* a pathological string stays readable */
    put32(fs, (uint32_t)n);
    put_bytes(fs, s, n);
}
static void put_str(file_sink *fs, const char *s) { put_str_n(fs, s, s ? strlen(s) : 0); }

/** Start a table block: kind, reserved, and a u32 entry count patched at the end. */
static void blk_begin(file_sink *fs, uint32_t kind)
{
    fs->blk_len = 0;
    fs->blk_oom = 0;
    fs->blk_entries = 0;
    put32(fs, kind);
    put32(fs, 0);
    fs->blk_count_at = fs->blk_len;
    put32(fs, 0);
}

/** True while the block being built has room for more entries. */
static int blk_has_room(const file_sink *fs) { return fs->blk_len < JG_BLOCK_TARGET; }

/** Write the table block if it holds entries; 0 on success (or nothing to write). */
static int blk_emit(file_sink *fs)
{
    if (fs->blk_oom) return -1;
    if (!fs->blk_entries) return 0;
    jg_wr32(fs->blk + fs->blk_count_at, fs->blk_entries);
    return fs_emit_frame(fs, fs->blk, fs->blk_len);
}

/* ---------------------------------------------------------------------------------- */
/* table deltas */

static void put_meta_entry_once(file_sink *fs, const char *key, const char *value)
{
    if (jg_meta_get(key)) return; /* the registry's own value wins */
    put_str(fs, key);
    put_str(fs, value);
    fs->blk_entries++;
}

static int write_meta(file_sink *fs)
{
    const char *plugins = jg_plugins_loaded_names();
    if (!plugins) plugins = "";
    uint64_t gen = jg_meta_generation();
    if (fs->meta_written && gen == fs->w_meta_gen && !strncmp(plugins, fs->w_plugins, sizeof fs->w_plugins - 1))
        return 0;
    blk_begin(fs, JG_BLOCK_META);
    uint32_t n = jg_meta_count();
    for (uint32_t i = 0; i < n; i++) {
        const char *k = NULL, *v = NULL;
        if (!jg_meta_at(i, &k, &v) || !k) continue; /* 1 on success */
        put_str(fs, k);
        put_str(fs, v ? v : "");
        fs->blk_entries++;
    }
    /* What the reader needs even if the registry did not say it: the clock, and the
     * wall-clock time of clock.start_ns (the registry's anchor may precede it). */
    char num[64];
    uint64_t start_ns = jg_clock_state.ns0;
    const char *s = jg_meta_get("clock.start_ns");
    if (s) start_ns = strtoull(s, NULL, 10);
    snprintf(num, sizeof num, "%.17g", jg_clock_state.ticks_per_ns);
    put_meta_entry_once(fs, "clock.ticks_per_ns", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)start_ns);
    put_meta_entry_once(fs, "clock.start_ns", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)(jg_clock_state.unix_ns0 + (start_ns - jg_clock_state.ns0)));
    put_meta_entry_once(fs, "clock.start_unix_ns", num);
    put_meta_entry_once(fs, "clock.source", jg_clock_state.use_tsc ? "tsc" : "clock_gettime");
    put_meta_entry_once(fs, "jager.version", jager_version_string());
    if (*plugins) put_meta_entry_once(fs, "jager.plugins", plugins);
    if (blk_emit(fs) != 0) return -1;
    fs->meta_written = 1;
    fs->w_meta_gen = gen;
    snprintf(fs->w_plugins, sizeof fs->w_plugins, "%s", plugins);
    return 0;
}

static int write_types(file_sink *fs, int force)
{
    uint32_t count = jg_type_count();
    if (!force && count == fs->w_type_count) return 0;
    if (count > 65536) count = 65536;
    if (!fs->type_ids && !(fs->type_ids = malloc(65536 * sizeof *fs->type_ids))) return -1;
    uint32_t id = 0;
    while (id < count) {
        blk_begin(fs, JG_BLOCK_SCHEMA);
        uint32_t nids = 0;
        for (; id < count && blk_has_room(fs); id++) {
            if (fs->types_written[id >> 3] & (1u << (id & 7))) continue;
            const jager_type_desc *d = jg_type_get((uint16_t)id);
            if (!d) continue;
            uint32_t nf = d->nfields <= JAGER_MAX_FIELDS ? d->nfields : JAGER_MAX_FIELDS;
            put16(fs, d->id);
            put16(fs, d->builtin);
            put32(fs, d->fields ? nf : 0);
            put_str(fs, d->name);
            for (uint32_t i = 0; d->fields && i < nf; i++) {
                put16(fs, (uint16_t)d->fields[i].kind);
                put16(fs, 0);
                put_str(fs, d->fields[i].name);
            }
            fs->blk_entries++;
            fs->type_ids[nids++] = (uint16_t)id;
        }
        if (blk_emit(fs) != 0) return -1;
        for (uint32_t i = 0; i < nids; i++)
            fs->types_written[fs->type_ids[i] >> 3] |= (uint8_t)(1u << (fs->type_ids[i] & 7));
    }
    fs->w_type_count = count;
    return 0;
}

static int write_strings(file_sink *fs, uint32_t end)
{
    uint32_t id = fs->w_strings ? fs->w_strings : 1;
    while (id < end) {
        blk_begin(fs, JG_BLOCK_STRINGS);
        for (; id < end && blk_has_room(fs); id++) {
            const char *s = jg_string(id);
            if (!s) { end = id; break; } /* not yet visible: next time */
            put32(fs, id);
            put_str(fs, s);
            fs->blk_entries++;
        }
        if (blk_emit(fs) != 0) return -1;
        fs->w_strings = id;
    }
    return 0;
}

static int write_sites(file_sink *fs, uint32_t end)
{
    uint32_t id = fs->w_sites ? fs->w_sites : 1;
    while (id < end) {
        blk_begin(fs, JG_BLOCK_SITES);
        for (; id < end && blk_has_room(fs); id++) {
            const jg_site_info *s = jg_site_get(id);
            if (!s) { end = id; break; }
            put32(fs, id);
            put32(fs, s->name);
            put32(fs, s->file);
            put32(fs, s->line);
            fs->blk_entries++;
        }
        if (blk_emit(fs) != 0) return -1;
        fs->w_sites = id;
    }
    return 0;
}

static int write_threads(file_sink *fs, uint32_t end)
{
    uint32_t id = fs->w_threads ? fs->w_threads : 1;
    while (id < end) {
        blk_begin(fs, JG_BLOCK_THREADS);
        for (; id < end && blk_has_room(fs); id++) {
            const jg_thread_info *t = jg_thread_get(id);
            if (!t) { end = id; break; }
            put32(fs, id);
            put64(fs, t->os_tid);
            put_str_n(fs, t->name, strnlen(t->name, sizeof t->name));
            fs->blk_entries++;
        }
        if (blk_emit(fs) != 0) return -1;
        fs->w_threads = id;
    }
    return 0;
}

static int write_counters(file_sink *fs, uint32_t end)
{
    uint32_t id = fs->w_counters ? fs->w_counters : 1;
    while (id < end) {
        blk_begin(fs, JG_BLOCK_COUNTERS);
        for (; id < end && blk_has_room(fs); id++) {
            const jg_counter_info *c = jg_counter_get(id);
            if (!c) { end = id; break; }
            put32(fs, id);
            put32(fs, c->name);
            put32(fs, c->unit);
            put32(fs, c->kind);
            fs->blk_entries++;
        }
        if (blk_emit(fs) != 0) return -1;
        fs->w_counters = id;
    }
    return 0;
}

static int write_stacks(file_sink *fs, uint64_t end)
{
    uint64_t id = fs->w_stacks ? fs->w_stacks : 1;
    while (id < end) {
        blk_begin(fs, JG_BLOCK_STACKS);
        for (; id < end && blk_has_room(fs); id++) {
            const uint64_t *ips = NULL;
            uint32_t n = 0;
            if (!jg_stack_get(id, &ips, &n) || (n && !ips)) { end = id; break; } /* 1 on success */
            put64(fs, id);
            put32(fs, n);
            put_bytes(fs, ips, (size_t)n * 8u);
            fs->blk_entries++;
        }
        if (blk_emit(fs) != 0) return -1;
        fs->w_stacks = id;
    }
    return 0;
}

static int write_symbols(file_sink *fs, uint32_t end)
{
    uint32_t i = fs->w_symbols;
    while (i < end) {
        blk_begin(fs, JG_BLOCK_SYMBOLS);
        for (; i < end && blk_has_room(fs); i++) {
            const jg_symbol *s = jg_symbol_at(i);
            if (!s) { end = i; break; }
            put64(fs, s->ip);
            put32(fs, s->inline_depth);
            put32(fs, s->line);
            put32(fs, s->func);
            put32(fs, s->file);
            fs->blk_entries++;
        }
        if (blk_emit(fs) != 0) return -1;
        fs->w_symbols = i;
    }
    return 0;
}

/**
 * Write every table's growth since the last call. Counts of the tables that reference
 * strings are taken first and the string count last: a string an entry refers to was
 * interned before the entry was published, so the strings written cover them all.
 */
static int write_tables(file_sink *fs, int force_types)
{
    uint32_t sites = jg_site_count(), threads = jg_thread_count(), counters = jg_counter_count();
    uint32_t symbols = jg_symbol_count();
    uint64_t stacks = jg_stack_count();
    if (write_meta(fs) != 0) return -1;
    if (write_types(fs, force_types) != 0) return -1; /* field names are inline */
    if (write_strings(fs, jg_string_count()) != 0) return -1;
    if (write_sites(fs, sites) != 0) return -1;
    if (write_threads(fs, threads) != 0) return -1;
    if (write_counters(fs, counters) != 0) return -1;
    if (write_stacks(fs, stacks) != 0) return -1;
    if (write_symbols(fs, symbols) != 0) return -1;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* statistics and end */

static void put_site_stat(file_sink *fs, const jager_site_stat *ss)
{
    uint32_t nb = 0;
    for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++) nb += ss->hist[b] != 0;
    put32(fs, ss->site);
    put32(fs, JG_STATS_SITE_VALUES);
    put32(fs, nb);
    const uint64_t v[JG_STATS_SITE_VALUES] = {ss->calls, ss->total_ns, ss->min_ns, ss->max_ns, ss->bytes,
                                              ss->errors, ss->p50_ns, ss->p90_ns, ss->p99_ns};
    put_bytes(fs, v, sizeof v);
    for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++) {
        if (!ss->hist[b]) continue;
        put32(fs, b);
        put64(fs, ss->hist[b]);
    }
    fs->blk_entries++;
}

/** Start one part of a STATS set: flags (1 first part, 2 last part), then the core
 *  counters (first part only), the covered site range and the site entry count. */
static void stats_begin(file_sink *fs, int first, const jager_stat *st, int have_st)
{
    blk_begin(fs, JG_BLOCK_STATS); /* the entry count slot doubles as the flags word */
    fs->blk_len = fs->blk_count_at;
    put32(fs, first ? 1u : 0u);
    if (first && have_st) {
        put32(fs, JG_STATS_CORE_VALUES);
        const uint64_t v[JG_STATS_CORE_VALUES] = {
            st->threads, st->events_emitted, st->events_recorded, st->events_dropped,
            st->dropped[0], st->dropped[1], st->dropped[2], st->dropped[3],
            st->dropped[4], st->dropped[5], st->dropped[6], st->dropped[7],
            st->events_written, st->spans_total, st->span_cost_ns_x1000, st->ring_bytes};
        put_bytes(fs, v, sizeof v);
    } else {
        put32(fs, 0);
    }
    put32(fs, fs->w_sites ? fs->w_sites : 1); /* sites below this are covered (absent = zero) */
    fs->blk_count_at = fs->blk_len;
    put32(fs, 0);
}

static int stats_emit(file_sink *fs, int last)
{
    if (fs->blk_oom) return -1;
    jg_wr32(fs->blk + fs->blk_count_at, fs->blk_entries);
    if (last) jg_wr32(fs->blk + JG_BLOCK_HEADER_BYTES, jg_rd32(fs->blk + JG_BLOCK_HEADER_BYTES) | 2u);
    return fs_emit_frame(fs, fs->blk, fs->blk_len);
}

/** Write a STATS set (split into parts of about JG_BLOCK_TARGET) with every site that
 *  has activity. Tables are written first so each site in it resolves. */
static int write_stats(file_sink *fs)
{
    jager_stat st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    int have_st = jager_stats(&st) == JAGER_OK;
    uint32_t nsites = fs->w_sites ? fs->w_sites : 1;
    stats_begin(fs, 1, &st, have_st);
    for (uint32_t site = 1; site < nsites; site++) {
        jager_site_stat ss;
        memset(&ss, 0, sizeof ss);
        ss.struct_size = sizeof ss;
        if (jager_site_stats(site, &ss) != JAGER_OK) continue;
        if (!ss.calls && !ss.errors && !ss.bytes) continue;
        if (!blk_has_room(fs)) {
            if (stats_emit(fs, 0) != 0) return -1;
            stats_begin(fs, 0, &st, have_st);
        }
        put_site_stat(fs, &ss);
    }
    return stats_emit(fs, 1);
}

static int write_end(file_sink *fs)
{
    uint64_t end_ns = jager_now_ns();
    if (!end_ns) end_ns = jg_clock_gettime_ns();
    fs->blk_len = 0;
    fs->blk_oom = 0;
    put32(fs, JG_BLOCK_END);
    put32(fs, 0);
    put64(fs, end_ns);
    put64(fs, fs->events_written);
    put64(fs, fs->frames); /* frames before this one, preamble included */
    if (fs->blk_oom) return -1;
    return fs_emit_frame(fs, fs->blk, fs->blk_len);
}

/* ---------------------------------------------------------------------------------- */
/* events */

static int fs_start(file_sink *fs)
{
    if (fs->started) return fs->failed ? -1 : 0;
    fs->started = 1;
    uint8_t pre[JG_FILE_PREAMBLE_BYTES];
    jg_wr32(pre, JG_FILE_SKIPPABLE_MAGIC);
    jg_wr32(pre + 4, JG_FILE_PREAMBLE_DATA);
    memcpy(pre + 8, JG_FILE_MAGIC, JG_FILE_MAGIC_LEN);
    jg_wr16(pre + 16, JAGER_FORMAT_MAJOR);
    jg_wr16(pre + 18, JAGER_FORMAT_MINOR);
    jg_wr32(pre + 20, 0);
    if (fs_fwrite(fs, pre, sizeof pre) != 0) return -1;
    fs->frames = 1;
    if (write_tables(fs, 1) != 0) return -1;
    return fs_sync(fs);
}

/** Write thread \p t's pending events as one EVENTS block (tables first). */
static int emit_pending(file_sink *fs, uint32_t t)
{
    fs_pending *p = &fs->pend[t];
    if (!p->events) return 0;
    if (write_tables(fs, 0) != 0) return -1;
    jg_wr32(p->buf, JG_BLOCK_EVENTS);
    jg_wr32(p->buf + 4, 0);
    jg_wr32(p->buf + 8, t);
    jg_wr32(p->buf + 12, 0);
    jg_wr64(p->buf + 16, p->events);
    if (fs_emit_frame(fs, p->buf, p->len) != 0) return -1;
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
        uint32_t n = fs->npend ? fs->npend : 16;
        while (n <= thread) n *= 2;
        fs_pending *p = realloc(fs->pend, n * sizeof *p);
        if (!p) return NULL;
        memset(p + fs->npend, 0, (n - fs->npend) * sizeof *p);
        fs->pend = p;
        fs->npend = n;
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
    if (p->len + n > p->cap) {
        size_t cap = p->cap ? p->cap : 64 * 1024; /* 0 after emit_pending gave it back */
        while (cap < p->len + n) cap *= 2;
        uint8_t *b = realloc(p->buf, cap);
        if (!b) return -1;
        fs->pending_cap += cap - p->cap;
        p->buf = b;
        p->cap = cap;
    }
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
        if (write_tables(fs, 0) != 0) return -1;
        fs->blk_len = 0;
        fs->blk_oom = 0;
        put32(fs, JG_BLOCK_EVENTS);
        put32(fs, 0);
        put32(fs, thread);
        put32(fs, 0);
        put64(fs, n);
        put_bytes(fs, data + start, off - start);
        if (fs->blk_oom || fs_emit_frame(fs, fs->blk, fs->blk_len) != 0) return -1;
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
    (void)fs_start(ctx);
    return JAGER_OK;
}

static void fs_flush(void *ctx)
{
    file_sink *fs = ctx;
    if (fs_start(fs) != 0) return;
    if (emit_all_pending(fs) != 0) return;
    if (write_tables(fs, 1) != 0) return;
    if (write_stats(fs) != 0) return;
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
    if (fs_start(fs) == 0 && emit_all_pending(fs) == 0 && write_tables(fs, 1) == 0 && write_stats(fs) == 0)
        write_end(fs);
    fs_sync(fs);
    errno = 0;
    if (fclose(fs->f) != 0) fs_fail(fs, "close failed", errno ? errno : EIO);
    fs_free(fs);
}

/* ---------------------------------------------------------------------------------- */

/** "%p" in \p path becomes the process id (once per occurrence); caller frees. */
static char *expand_path(const char *path)
{
    size_t n = strlen(path), extra = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (path[i] == '%' && path[i + 1] == 'p') extra += 20;
    char *out = malloc(n + extra + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (path[i] == '%' && i + 1 < n && path[i + 1] == 'p') {
            o += (size_t)sprintf(out + o, "%ld", (long)getpid());
            i++;
        } else {
            out[o++] = path[i];
        }
    }
    out[o] = '\0';
    return out;
}

jager_status jg_file_sink_create(const char *path, jager_sink *out)
{
    if (!path || !*path || !out) return jg_error(JAGER_E_INVALID, "file sink: no output path");
    jager_status st = JAGER_E_NOMEM;
    file_sink *fs = calloc(1, sizeof *fs);
    if (!fs) goto fail;
    if (!(fs->path = expand_path(path))) goto free_sink;
    if (LZ4F_isError(LZ4F_createCompressionContext(&fs->cctx, LZ4F_VERSION))) {
        fs->cctx = NULL;
        goto free_sink;
    }
    fs->prefs.frameInfo.blockSizeID = LZ4F_max1MB;
    fs->prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    fs->prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    fs->prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
    fs->prefs.compressionLevel = 0;
    fs->f = fopen(fs->path, "wb");
    if (!fs->f) {
        st = jg_error(JAGER_E_IO, "cannot open output '%s': %s", fs->path, strerror(errno));
        goto free_sink;
    }
    if ((fs->stdio_buf = malloc(JG_FILE_STDIO_BUFFER)) != NULL)
        setvbuf(fs->f, fs->stdio_buf, _IOFBF, JG_FILE_STDIO_BUFFER);

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
