/*
 * reader_tables.c — the `.jgr` reader's table lookups (jager_reader_get_info, meta, strings,
 * sites, types, threads, counters, stacks, symbols, stats); see reader.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "reader_priv.h"

/* ---------------------------------------------------------------------------------- */
/* public API: tables */

jager_status jager_reader_get_info(const jager_reader *r, jager_reader_info *out)
{
    if (!r || !out || out->struct_size < 8) return JAGER_E_INVALID;
    jager_reader_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = out->struct_size;
    i.format_major = r->fmt_major;
    i.format_minor = r->fmt_minor;
    i.file_bytes = r->mem ? r->mem_size : r->file_bytes;
    i.frames = r->frames;
    i.events = r->events;
    i.bytes_consumed = r->consumed;
    i.clean_end = (uint32_t)r->clean_end;
    i.truncated = (uint32_t)r->truncated;
    i.ticks_per_ns = r->ticks_per_ns;
    i.start_ns = r->start_ns;
    i.start_unix_ns = r->start_unix_ns;
    i.end_ns = r->end_ns;
    size_t n = out->struct_size < sizeof i ? out->struct_size : sizeof i;
    memcpy(out, &i, n);
    return JAGER_OK;
}

const char *jager_reader_meta(const jager_reader *r, const char *key)
{
    if (!r || !key) return NULL;
    uint64_t h;
    uint32_t id = jg_idmap_id(&r->meta_map, jg_rd_meta_find(r, key, &h));
    return id ? ((const rd_meta *)r->meta.data)[id - 1].value : NULL;
}

size_t jager_reader_meta_count(const jager_reader *r) { return r ? r->meta.n : 0; }

jager_status jager_reader_meta_at(const jager_reader *r, size_t i, const char **key, const char **value)
{
    if (!r) return JAGER_E_INVALID;
    if (i >= r->meta.n) return JAGER_E_NOTFOUND;
    const rd_meta *m = (const rd_meta *)r->meta.data + i;
    if (key) *key = m->key;
    if (value) *value = m->value;
    return JAGER_OK;
}

const char *jager_reader_string(const jager_reader *r, uint32_t id)
{
    if (!r || id == 0 || id >= r->strings.n) return NULL;
    return ((const char *const *)r->strings.data)[id];
}

uint32_t jager_reader_site_count(const jager_reader *r) { return r && r->sites.n ? (uint32_t)r->sites.n - 1 : 0; }

jager_status jager_reader_site(const jager_reader *r, jager_site site, const char **name, const char **file,
                               uint32_t *line)
{
    if (!r) return JAGER_E_INVALID;
    if (site == 0 || site >= r->sites.n) return JAGER_E_NOTFOUND;
    const rd_site *s = (const rd_site *)r->sites.data + site;
    if (name) *name = jager_reader_string(r, s->name);
    if (file) *file = s->file ? jager_reader_string(r, s->file) : NULL;
    if (line) *line = s->line;
    return JAGER_OK;
}

const jager_type_desc *jager_reader_type(const jager_reader *r, uint16_t type)
{
    if (!r || type >= r->ntypes || !r->types[type]) return NULL;
    return &r->types[type]->desc;
}

uint16_t jager_reader_type_by_name(const jager_reader *r, const char *name)
{
    if (!r || !name) return 0;
    for (uint32_t id = 1; id < r->ntypes; id++)
        if (r->types[id] && !strcmp(r->types[id]->desc.name, name)) return (uint16_t)id;
    return 0;
}

uint32_t jager_reader_thread_count(const jager_reader *r) { return r && r->threads.n ? (uint32_t)r->threads.n - 1 : 0; }

jager_status jager_reader_thread(const jager_reader *r, uint32_t thread, uint64_t *os_tid, const char **name)
{
    if (!r) return JAGER_E_INVALID;
    if (thread == 0 || thread >= r->threads.n) return JAGER_E_NOTFOUND;
    const rd_thread *t = (const rd_thread *)r->threads.data + thread;
    if (os_tid) *os_tid = t->os_tid;
    if (name) *name = t->name;
    return JAGER_OK;
}

uint32_t jager_reader_counter_count(const jager_reader *r)
{
    return r && r->counters.n ? (uint32_t)r->counters.n - 1 : 0;
}

jager_status jager_reader_counter(const jager_reader *r, jager_counter counter, const char **name, const char **unit,
                                  uint32_t *kind)
{
    if (!r) return JAGER_E_INVALID;
    if (counter == 0 || counter >= r->counters.n) return JAGER_E_NOTFOUND;
    const rd_counter *c = (const rd_counter *)r->counters.data + counter;
    if (name) *name = jager_reader_string(r, c->name);
    if (unit) *unit = c->unit ? jager_reader_string(r, c->unit) : NULL;
    if (kind) *kind = c->kind;
    return JAGER_OK;
}

jager_status jager_reader_stack(const jager_reader *r, jager_stack_id id, const uint64_t **ips, uint32_t *n)
{
    if (!r) return JAGER_E_INVALID;
    if (id == 0 || id >= r->stacks.n) return JAGER_E_NOTFOUND;
    const rd_stack *s = (const rd_stack *)r->stacks.data + id;
    if (ips) *ips = s->ips;
    if (n) *n = s->n;
    return JAGER_OK;
}

/* out[0..k) as a max-heap on inline depth: the deepest kept frame on top. */
static void frame_sift_down(jager_frame *h, uint32_t k, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < k && h[l].inline_depth > h[m].inline_depth) m = l;
        if (r < k && h[r].inline_depth > h[m].inline_depth) m = r;
        if (m == i) return;
        jager_frame t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void frame_sift_up(jager_frame *h, uint32_t i)
{
    while (i && h[(i - 1) / 2].inline_depth < h[i].inline_depth) {
        jager_frame t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

uint32_t jager_reader_symbolize(const jager_reader *r, uint64_t ip, jager_frame *out, uint32_t cap)
{
    if (!r || !out || !cap) return 0;
    size_t slot = jg_rd_sym_find(r, ip);
    const rd_symbol *tab = r->symbols.data;
    uint32_t k = 0;
    /* keep the cap shallowest frames in a max-heap (O(frames · log cap), whatever the
     * order they were added in), then sort them by inline depth */
    for (uint32_t at = jg_idmap_id(&r->sym_map, slot); at; at = tab[at - 1].next) {
        const rd_symbol *s = &tab[at - 1];
        if (k == cap && s->inline_depth >= out[0].inline_depth) continue;
        const char *func = jager_reader_string(r, s->func), *file = jager_reader_string(r, s->file);
        jager_frame f = {.func = func ? func : "??", .file = file ? file : "", .line = s->line,
                         .inline_depth = s->inline_depth};
        if (k < cap) {
            out[k] = f;
            frame_sift_up(out, k++);
        } else {
            out[0] = f;
            frame_sift_down(out, k, 0);
        }
    }
    for (uint32_t n = k; n > 1; n--) { /* heap sort: ascending depth */
        jager_frame t = out[0];
        out[0] = out[n - 1];
        out[n - 1] = t;
        frame_sift_down(out, n - 1, 0);
    }
    return k;
}

jager_status jager_reader_site_stats(const jager_reader *r, jager_site site, jager_site_stat *out)
{
    /* a 1.0 caller's struct ends before thinned: filled up to its own size */
    if (!r || !out || out->struct_size < offsetof(jager_site_stat, thinned)) return JAGER_E_INVALID;
    const rd_stats *st = &r->stats;
    if (!st->have || site == 0 || site >= st->site_limit) return JAGER_E_NOTFOUND;
    uint32_t size = out->struct_size;
    memset(out, 0, size < sizeof *out ? size : sizeof *out);
    out->struct_size = size;
    out->site = site;
    size_t lo = 0, hi = st->nsites;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->sites[mid].site < site) lo = mid + 1;
        else hi = mid;
    }
    if (lo == st->nsites || st->sites[lo].site != site) return JAGER_OK; /* covered, no activity */
    const rd_site_stat *e = &st->sites[lo];
    out->calls = e->v[0];
    out->total_ns = e->v[1];
    out->min_ns = e->v[2];
    out->max_ns = e->v[3];
    out->bytes = e->v[4];
    out->errors = e->v[5];
    out->p50_ns = e->v[6];
    out->p90_ns = e->v[7];
    out->p99_ns = e->v[8];
    if (size >= offsetof(jager_site_stat, dropped) + sizeof out->dropped) {
        out->thinned = e->v[9]; /* 0 in a 1.0 file, which had 9 values */
        out->dropped = e->v[10];
    }
    for (uint32_t k = 0; k < e->nbuckets; k++) out->hist[st->hb_index[e->hist_at + k]] = st->hb_count[e->hist_at + k];
    return JAGER_OK;
}

jager_status jager_reader_stats(const jager_reader *r, jager_stat *out)
{
    /* A 1.0 caller's struct ends after ring_bytes: filled up to its own size. */
    if (!r || !out || out->struct_size < offsetof(jager_stat, events_pending)) return JAGER_E_INVALID;
    const rd_stats *st = &r->stats;
    if (!st->have || !st->have_core) return JAGER_E_NOTFOUND;
    jager_stat o;
    memset(&o, 0, sizeof o);
    o.struct_size = out->struct_size;
    const uint64_t *v = st->core; /* values the file did not give are 0 */
    o.threads = (uint32_t)v[0];
    o.events_emitted = v[1];
    o.events_recorded = v[2];
    o.events_dropped = v[3];
    for (int i = 0; i < JAGER_DROP_REASONS; i++) o.dropped[i] = v[4 + i];
    o.events_written = v[12];
    o.spans_total = v[13];
    o.span_cost_ns_x1000 = v[14];
    o.ring_bytes = v[15];
    o.events_pending = v[16];
    o.drop_reports = v[17];
    o.spans_cross_thread = v[18];
    uint32_t room = st->ncore > JG_STATS_CORE_VALUES_1_1 ? (st->ncore - JG_STATS_CORE_VALUES_1_1) / JG_STATS_SINK_VALUES : 0;
    o.sinks = (uint32_t)(v[19] < room ? v[19] : room); /* never more than the values present */
    memcpy(out, &o, out->struct_size < sizeof o ? out->struct_size : sizeof o);
    return JAGER_OK;
}

jager_status jager_reader_sink_stats(const jager_reader *r, uint32_t index, jager_sink_stat *out)
{
    if (!r || !out || out->struct_size < offsetof(jager_sink_stat, batches_failed) + sizeof out->batches_failed)
        return JAGER_E_INVALID;
    jager_stat st = {.struct_size = sizeof st};
    jager_status rc = jager_reader_stats(r, &st);
    if (rc != JAGER_OK) return rc;
    if (index >= st.sinks) return JAGER_E_NOTFOUND;
    jager_sink_stat o;
    memset(&o, 0, sizeof o);
    o.struct_size = out->struct_size;
    o.index = index;
    char key[32];
    snprintf(key, sizeof key, "jager.sink.%u", index);
    const char *name = jager_reader_meta(r, key);
    snprintf(o.name, sizeof o.name, "%s", name ? name : "?");
    const uint64_t *v = r->stats.core + JG_STATS_CORE_VALUES_1_1 + (size_t)index * JG_STATS_SINK_VALUES;
    o.events_delivered = v[0];
    o.events_failed = v[1];
    o.batches_failed = v[2];
    memcpy(out, &o, out->struct_size < sizeof o ? out->struct_size : sizeof o);
    return JAGER_OK;
}

size_t jager_reader_path_count(const jager_reader *r) { return r && r->paths.have ? r->paths.n : 0; }

jager_status jager_reader_path(const jager_reader *r, size_t index, jager_path_stat *out)
{
    if (!r || !out || out->struct_size < sizeof(jager_path_stat)) return JAGER_E_INVALID;
    if (!r->paths.have || index >= r->paths.n) return JAGER_E_NOTFOUND;
    const rd_path *p = &r->paths.v[index];
    uint32_t size = out->struct_size;
    memset(out, 0, size);
    out->struct_size = size;
    out->thread = p->thread;
    out->parent = p->parent == RD_PATH_TOP ? JAGER_PATH_TOP : p->parent;
    out->site = p->site;
    out->calls = p->calls;
    out->total_ns = p->total_ns;
    out->self_ns = p->site ? p->self_ns : 0;
    out->bytes = p->bytes;
    return JAGER_OK;
}
