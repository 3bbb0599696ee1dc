/*
 * file_tables.c — the `.jgr` writer's table blocks: the part of every registry table that
 * grew since the last write (META, SCHEMA, STRINGS, SITES, THREADS, COUNTERS, STACKS,
 * SYMBOLS), and the STATS and END blocks; see file_sink.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "file_sink_priv.h"

/* ---------------------------------------------------------------------------------- */
/* building table blocks */

static void blk_reserve(file_sink *fs, size_t n)
{
    if (fs->blk_oom) return;
    uint8_t *b = jg_grow(fs->blk, &fs->blk_cap, fs->blk_len + n, 1, 64 * 1024);
    if (!b) {
        fs->blk_oom = 1;
        return;
    }
    fs->blk = b;
}

void jg_fs_put_bytes(file_sink *fs, const void *p, size_t n)
{
    blk_reserve(fs, n);
    if (fs->blk_oom) return;
    if (n) memcpy(fs->blk + fs->blk_len, p, n);
    fs->blk_len += n;
}
static void put16(file_sink *fs, uint16_t v) { jg_fs_put_bytes(fs, &v, 2); }
void jg_fs_put32(file_sink *fs, uint32_t v) { jg_fs_put_bytes(fs, &v, 4); }
void jg_fs_put64(file_sink *fs, uint64_t v) { jg_fs_put_bytes(fs, &v, 8); }
static void put_str_n(file_sink *fs, const char *s, size_t n)
{
    if (!s) n = 0;
    if (n > JG_BLOCK_TARGET) n = JG_BLOCK_TARGET; /* a pathological string stays readable */
    jg_fs_put32(fs, (uint32_t)n);
    jg_fs_put_bytes(fs, s, n);
}
static void put_str(file_sink *fs, const char *s) { put_str_n(fs, s, s ? strlen(s) : 0); }

/** Start a table block: kind, reserved, and a u32 entry count patched at the end. */
static void blk_begin(file_sink *fs, uint32_t kind)
{
    fs->blk_len = 0;
    fs->blk_oom = 0;
    fs->blk_entries = 0;
    jg_fs_put32(fs, kind);
    jg_fs_put32(fs, 0);
    fs->blk_count_at = fs->blk_len;
    jg_fs_put32(fs, 0);
}

/** True while the block being built has room for more entries. */
static int blk_has_room(const file_sink *fs) { return fs->blk_len < JG_BLOCK_TARGET; }

/** Write the table block if it holds entries; 0 on success (or nothing to write). */
static int blk_emit(file_sink *fs)
{
    if (fs->blk_oom) return -1;
    if (!fs->blk_entries) return 0;
    jg_wr32(fs->blk + fs->blk_count_at, fs->blk_entries);
    return jg_fs_emit_frame(fs, fs->blk, fs->blk_len);
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
    /* The first block: every entry. Later ones: only the entries set since this sink's last
     * META block, from the registry's log of sets (a reader replaces values by key): a
     * program setting K keys while recording wrote K^2/2 entries before. */
    int complete = 0;
    uint32_t logged = jg_meta_log_count(&complete);
    int all = !fs->meta_written || !complete || fs->w_meta_log > logged; /* > : the registry was reset */
    uint32_t n = all ? jg_meta_count() : logged;
    for (uint32_t i = all ? 0 : fs->w_meta_log; i < n; i++) {
        const char *k = NULL, *v = NULL;
        if (!(all ? jg_meta_at(i, &k, &v) : jg_meta_log_at(i, &k, &v)) || !k) continue; /* 1 on success */
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
    fs->w_meta_log = logged;
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
            jg_fs_put32(fs, d->fields ? nf : 0);
            put_str(fs, d->name);
            for (uint32_t i = 0; d->fields && i < nf; i++) {
                put16(fs, (uint16_t)d->fields[i].kind);
                put16(fs, (uint16_t)d->fields[i].flags); /* JAGER_FIELD_FLAG_* (0 before plugin ABI 1.2) */
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
            jg_fs_put32(fs, id);
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
            jg_fs_put32(fs, id);
            jg_fs_put32(fs, s->name);
            jg_fs_put32(fs, s->file);
            jg_fs_put32(fs, s->line);
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
            jg_fs_put32(fs, id);
            jg_fs_put64(fs, t->os_tid);
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
            jg_fs_put32(fs, id);
            jg_fs_put32(fs, c->name);
            jg_fs_put32(fs, c->unit);
            jg_fs_put32(fs, c->kind);
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
            jg_fs_put64(fs, id);
            jg_fs_put32(fs, n);
            jg_fs_put_bytes(fs, ips, (size_t)n * 8u);
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
            jg_fs_put64(fs, s->ip);
            jg_fs_put32(fs, s->inline_depth);
            jg_fs_put32(fs, s->line);
            jg_fs_put32(fs, s->func);
            jg_fs_put32(fs, s->file);
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
int jg_fs_write_tables(file_sink *fs, int force_types)
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
    jg_fs_put32(fs, ss->site);
    jg_fs_put32(fs, JG_STATS_SITE_VALUES);
    jg_fs_put32(fs, nb);
    const uint64_t v[JG_STATS_SITE_VALUES] = {ss->calls, ss->total_ns, ss->min_ns, ss->max_ns, ss->bytes,
                                              ss->errors, ss->p50_ns, ss->p90_ns, ss->p99_ns,
                                              ss->thinned, ss->dropped};
    jg_fs_put_bytes(fs, v, sizeof v);
    for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++) {
        if (!ss->hist[b]) continue;
        jg_fs_put32(fs, b);
        jg_fs_put64(fs, ss->hist[b]);
    }
    fs->blk_entries++;
}

/** Start one part of a STATS set: flags (1 first part, 2 last part), then the core
 *  counters (first part only), the covered site range and the site entry count. */
static void stats_begin(file_sink *fs, int first, const jager_stat *st, int have_st)
{
    blk_begin(fs, JG_BLOCK_STATS); /* the entry count slot doubles as the flags word */
    fs->blk_len = fs->blk_count_at;
    jg_fs_put32(fs, first ? 1u : 0u);
    if (first && have_st) {
        uint32_t nsinks = st->sinks < JG_STATS_SINKS_MAX ? st->sinks : JG_STATS_SINKS_MAX;
        uint64_t v[JG_STATS_CORE_MAX] = {
            st->threads, st->events_emitted, st->events_recorded, st->events_dropped,
            st->dropped[0], st->dropped[1], st->dropped[2], st->dropped[3],
            st->dropped[4], st->dropped[5], st->dropped[6], st->dropped[7],
            st->events_written, st->spans_total, st->span_cost_ns_x1000, st->ring_bytes,
            st->events_pending, st->drop_reports, st->spans_cross_thread, 0};
        uint32_t n = JG_STATS_CORE_VALUES_1_1;
        for (uint32_t i = 0; i < nsinks; i++) {
            jager_sink_stat ks = {.struct_size = sizeof ks};
            if (jager_sink_stats(i, &ks) != JAGER_OK) break;
            v[n++] = ks.events_delivered;
            v[n++] = ks.events_failed;
            v[n++] = ks.batches_failed;
            v[JG_STATS_CORE_VALUES_1_1 - 1] = i + 1u;
        }
        jg_fs_put32(fs, n);
        jg_fs_put_bytes(fs, v, n * sizeof v[0]);
    } else {
        jg_fs_put32(fs, 0);
    }
    jg_fs_put32(fs, fs->w_sites ? fs->w_sites : 1); /* sites below this are covered (absent = zero) */
    fs->blk_count_at = fs->blk_len;
    jg_fs_put32(fs, 0);
}

static int stats_emit(file_sink *fs, int last)
{
    if (fs->blk_oom) return -1;
    jg_wr32(fs->blk + fs->blk_count_at, fs->blk_entries);
    if (last) jg_wr32(fs->blk + JG_BLOCK_HEADER_BYTES, jg_rd32(fs->blk + JG_BLOCK_HEADER_BYTES) | 2u);
    return jg_fs_emit_frame(fs, fs->blk, fs->blk_len);
}

/** Write a STATS set (split into parts of about JG_BLOCK_TARGET) with every site that
 *  has activity. Tables are written first so each site in it resolves. */
int jg_fs_write_stats(file_sink *fs)
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

int jg_fs_write_end(file_sink *fs)
{
    uint64_t end_ns = jager_now_ns();
    if (!end_ns) end_ns = jg_clock_gettime_ns();
    fs->blk_len = 0;
    fs->blk_oom = 0;
    jg_fs_put32(fs, JG_BLOCK_END);
    jg_fs_put32(fs, 0);
    jg_fs_put64(fs, end_ns);
    jg_fs_put64(fs, fs->events_written);
    jg_fs_put64(fs, fs->frames); /* frames before this one, preamble included */
    if (fs->blk_oom) return -1;
    return jg_fs_emit_frame(fs, fs->blk, fs->blk_len);
}
