/*
 * reader_absorb.c — the `.jgr` reader's table blocks (META, SCHEMA, STRINGS, SITES, THREADS,
 * COUNTERS, STACKS, SYMBOLS, STATS, END) absorbed into its tables; see reader.c.
 */
#include <stdlib.h>
#include <string.h>

#include "reader_priv.h"

/* ---------------------------------------------------------------------------------- */
/* block bodies */

static uint16_t cur16(rd_cur *c)
{
    if (c->bad || c->end - c->p < 2) { c->bad = 1; return 0; }
    uint16_t v = jg_rd16(c->p);
    c->p += 2;
    return v;
}
static uint32_t cur32(rd_cur *c)
{
    if (c->bad || c->end - c->p < 4) { c->bad = 1; return 0; }
    uint32_t v = jg_rd32(c->p);
    c->p += 4;
    return v;
}
static uint64_t cur64(rd_cur *c)
{
    if (c->bad || c->end - c->p < 8) { c->bad = 1; return 0; }
    uint64_t v = jg_rd64(c->p);
    c->p += 8;
    return v;
}
/** A string's bytes (not terminated); NULL (and bad) if it overruns. */
static const uint8_t *cur_str(rd_cur *c, uint32_t *len)
{
    uint32_t n = cur32(c);
    if (c->bad || (uint64_t)(c->end - c->p) < n) { c->bad = 1; *len = 0; return NULL; }
    const uint8_t *s = c->p;
    c->p += n;
    *len = n;
    return s;
}

/** The entry count of a table block, checked against the smallest entry size. */
static int table_count(jager_reader *r, rd_cur *c, uint32_t kind, size_t min_entry, uint32_t *n)
{
    *n = cur32(c);
    if (c->bad) return jg_rd_fail(r, JAGER_E_FORMAT, "%s block has no entry count", jg_rd_kind_name(kind));
    if ((uint64_t)*n * min_entry > (uint64_t)(c->end - c->p))
        return jg_rd_fail(r, JAGER_E_FORMAT, "%s block claims %u entries, more than its %zu bytes hold", jg_rd_kind_name(kind),
                    *n, (size_t)(c->end - c->p));
    return 0;
}

static int entry_bad(jager_reader *r, uint32_t kind, uint32_t i)
{
    return jg_rd_fail(r, JAGER_E_FORMAT, "%s block: entry %u runs past the end of the block", jg_rd_kind_name(kind), i);
}

static int oom(jager_reader *r) { return jg_rd_fail(r, JAGER_E_NOMEM, "out of memory for the tables"); }

static int meta_eq(uint32_t id, const void *key, void *ctx)
{
    return !strcmp(((const rd_meta *)ctx)[id - 1].key, key);
}

/** The meta map's slot for \p key: its entry (index + 1), or the empty slot where it goes. */
size_t jg_rd_meta_find(const jager_reader *r, const char *key, uint64_t *h)
{
    *h = jg_hash_bytes(key, strlen(key), JG_HASH_SEED);
    return jg_idmap_find(&r->meta_map, *h, meta_eq, key, r->meta.data);
}

static int absorb_meta(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_META, 8, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t kl, vl;
        const uint8_t *k = cur_str(c, &kl), *v = cur_str(c, &vl);
        if (c->bad) return entry_bad(r, JG_BLOCK_META, i);
        const char *ks = jg_rd_arena_str(r, k, kl), *vs = jg_rd_arena_str(r, v, vl);
        if (!ks || !vs) return oom(r);
        if (jg_idmap_reserve(&r->meta_map) || r->meta.n >= UINT32_MAX - 1) return oom(r);
        uint64_t h;
        size_t slot = jg_rd_meta_find(r, ks, &h);
        size_t j = jg_idmap_id(&r->meta_map, slot);
        if (j) {
            j--; /* a key seen before: the later value replaces it */
        } else {
            j = r->meta.n;
            if (jg_vec_reserve(&r->meta, sizeof(rd_meta), j)) return oom(r);
            r->meta.n++;
            ((rd_meta *)r->meta.data)[j].key = ks;
            jg_idmap_put(&r->meta_map, slot, h, (uint32_t)(j + 1));
        }
        rd_meta *m = r->meta.data;
        m[j].value = vs;
        if (!strcmp(ks, "clock.ticks_per_ns")) r->ticks_per_ns = strtod(vs, NULL);
        else if (!strcmp(ks, "clock.start_ns")) r->start_ns = strtoull(vs, NULL, 10);
        else if (!strcmp(ks, "clock.start_unix_ns")) r->start_unix_ns = strtoull(vs, NULL, 10);
    }
    r->meta_seen = 1;
    return 0;
}

/* types and tfast, indexed by a type id (16 bits: at most 65536 entries), both with room
 * for ntypes. When the second fails the first keeps its larger block, unused past ntypes. */
static int types_reserve(jager_reader *r, uint32_t id)
{
    if (id < r->ntypes) return 0;
    if (id > UINT16_MAX) return -1;
    size_t tcap = r->ntypes, fcap = r->ntypes;
    rd_type **t = jg_grow(r->types, &tcap, (size_t)id + 1, sizeof *t, 512);
    if (!t) return -1;
    r->types = t;
    rd_tfast *f = jg_grow(r->tfast, &fcap, (size_t)id + 1, sizeof *f, 512);
    if (!f) return -1;
    r->tfast = f;
    r->ntypes = (uint32_t)fcap;
    return 0;
}

/* Smallest record of each core type (fixed part). */
static const uint16_t core_min_bytes[] = {
    [JAGER_EV_SPAN] = sizeof(jager_rec_span),       [JAGER_EV_LOG] = sizeof(jager_rec_log),
    [JAGER_EV_COUNTER] = sizeof(jager_rec_counter), [JAGER_EV_MARK] = sizeof(jager_rec_mark),
    [JAGER_EV_DROP] = sizeof(jager_rec_drop),       [JAGER_EV_DIAG] = sizeof(jager_rec_diag),
    [JAGER_EV_SPAN_ATTR] = sizeof(jager_rec_span_attr), [JAGER_EV_SPAN_ERROR] = sizeof(jager_rec_span_error),
    [JAGER_EV_CONTEXT] = sizeof(jager_rec_context), [JAGER_EV_TASK] = sizeof(jager_rec_task),
    [JAGER_EV_SPAN_X] = sizeof(jager_rec_span_x),
};
static const char *const core_names[] = {
    [JAGER_EV_SPAN] = "span", [JAGER_EV_LOG] = "log",   [JAGER_EV_COUNTER] = "counter", [JAGER_EV_MARK] = "mark",
    [JAGER_EV_DROP] = "drop", [JAGER_EV_DIAG] = "diag", [JAGER_EV_SPAN_ATTR] = "span_attr",
    [JAGER_EV_SPAN_ERROR] = "span_error", [JAGER_EV_CONTEXT] = "context", [JAGER_EV_TASK] = "task",
    [JAGER_EV_SPAN_X] = "span_x",
};
#define RD_CORE_LAST JAGER_EV_SPAN_X

/** Describe the core types before any schema block, so files that omit them still read. */
int jg_rd_types_init_core(jager_reader *r)
{
    if (types_reserve(r, 511)) return -1;
    for (uint16_t id = 1; id <= RD_CORE_LAST; id++) {
        rd_type *t = jg_rd_arena_alloc(r, sizeof *t);
        if (!t) return -1;
        memset(t, 0, sizeof *t);
        t->desc.struct_size = sizeof t->desc;
        t->desc.id = id;
        t->desc.builtin = 1;
        t->desc.name = core_names[id];
        r->types[id] = t;
        r->tfast[id].known = 1;
        r->tfast[id].dur_field = -1;
        r->tfast[id].min_bytes = core_min_bytes[id];
    }
    return 0;
}

static int same_type(const jager_type_desc *a, const char *name, uint32_t nf, const jager_field_desc *fields)
{
    if (strcmp(a->name, name) != 0 || a->nfields != nf) return 0;
    for (uint32_t i = 0; i < nf; i++)
        if (a->fields[i].kind != fields[i].kind || strcmp(a->fields[i].name, fields[i].name) != 0) return 0;
    return 1;
}

static int absorb_schema(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_SCHEMA, 12, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t id = cur16(c), builtin = cur16(c);
        uint32_t nf = cur32(c), nl;
        const uint8_t *name = cur_str(c, &nl);
        if (c->bad) return entry_bad(r, JG_BLOCK_SCHEMA, i);
        if (id == 0) return jg_rd_fail(r, JAGER_E_FORMAT, "SCHEMA block: type id 0 is reserved");
        if ((id < JAGER_EV_FIRST_PLUGIN) != (builtin != 0))
            return jg_rd_fail(r, JAGER_E_FORMAT, "SCHEMA block: type %u is %s but marked builtin=%u", id,
                        id < JAGER_EV_FIRST_PLUGIN ? "a core id" : "a plugin id", builtin);
        if (nf > JAGER_MAX_FIELDS)
            return jg_rd_fail(r, JAGER_E_FORMAT, "SCHEMA block: type %u has %u fields (at most %u)", id, nf, JAGER_MAX_FIELDS);
        jager_field_desc *fields = nf ? jg_rd_arena_alloc(r, nf * sizeof *fields) : NULL;
        const char *tname = jg_rd_arena_str(r, name, nl);
        if ((nf && !fields) || !tname) return oom(r);
        int dur = -1;
        for (uint32_t k = 0; k < nf; k++) {
            uint16_t kind = cur16(c), flags = cur16(c);
            uint32_t fl;
            const uint8_t *fname = cur_str(c, &fl);
            if (c->bad) return entry_bad(r, JG_BLOCK_SCHEMA, i);
            if (!(fields[k].name = jg_rd_arena_str(r, fname, fl))) return oom(r);
            fields[k].kind = kind;
            fields[k].flags = flags;
            /* Only a field marked as the event's duration gives it an extent: a CPU time or
             * a running total (a DURATION_NS field too) must not. */
            if (kind == JAGER_FIELD_DURATION_NS && (flags & JAGER_FIELD_FLAG_EXTENT) && dur < 0) dur = (int)k;
        }
        if (types_reserve(r, id)) return oom(r);
        rd_type *t = r->types[id];
        if (t && t->from_file) {
            if (!same_type(&t->desc, tname, nf, fields))
                return jg_rd_fail(r, JAGER_E_FORMAT, "SCHEMA block: type %u redefined differently", id);
            continue;
        }
        if (!t) {
            if (!(t = jg_rd_arena_alloc(r, sizeof *t))) return oom(r);
            memset(t, 0, sizeof *t);
            r->types[id] = t;
        }
        t->from_file = 1;
        t->desc.struct_size = sizeof t->desc;
        t->desc.id = id;
        t->desc.builtin = builtin ? 1 : 0;
        t->desc.name = tname;
        t->desc.nfields = nf;
        t->desc.fields = fields;
        rd_tfast *f = &r->tfast[id];
        if (id <= RD_CORE_LAST) continue; /* the layout is the reader's own */
        if (builtin) {
            f->known = 3; /* a core type of a newer format minor: passed through opaque */
            f->min_bytes = 8;
            f->dur_field = -1;
        } else {
            f->known = 2;
            f->min_bytes = (uint16_t)(16 + 8 * nf);
            f->dur_field = (int8_t)dur;
        }
    }
    return 0;
}

/** Dense tables: entries arrive in id order; a repeat of an id already read must match. */
static int dense_check(jager_reader *r, uint32_t kind, uint64_t id, size_t next)
{
    if (id == 0) return jg_rd_fail(r, JAGER_E_FORMAT, "%s block: id 0 is reserved", jg_rd_kind_name(kind));
    if (id > next)
        return jg_rd_fail(r, JAGER_E_FORMAT, "%s block: id %llu skips ahead (expected %zu)", jg_rd_kind_name(kind),
                    (unsigned long long)id, next);
    return 0;
}

static int absorb_strings(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_STRINGS, 8, &n)) return JAGER_E_FORMAT;
    if (!r->strings.n) r->strings.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = cur32(c), len;
        const uint8_t *s = cur_str(c, &len);
        if (c->bad) return entry_bad(r, JG_BLOCK_STRINGS, i);
        if (dense_check(r, JG_BLOCK_STRINGS, id, r->strings.n)) return JAGER_E_FORMAT;
        const char **tab = r->strings.data;
        if (id < r->strings.n) {
            if (strlen(tab[id]) != strnlen((const char *)s, len) || memcmp(tab[id], s, strlen(tab[id])) != 0)
                return jg_rd_fail(r, JAGER_E_FORMAT, "STRINGS block: string %u redefined differently", id);
            continue;
        }
        if (jg_vec_reserve(&r->strings, sizeof(char *), id)) return oom(r);
        const char *t = jg_rd_arena_str(r, s, len);
        if (!t) return oom(r);
        ((const char **)r->strings.data)[id] = t;
        r->strings.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_sites(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_SITES, 16, &n)) return JAGER_E_FORMAT;
    if (!r->sites.n) r->sites.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        rd_site s;
        uint32_t id = cur32(c);
        s.name = cur32(c);
        s.file = cur32(c);
        s.line = cur32(c);
        if (c->bad) return entry_bad(r, JG_BLOCK_SITES, i);
        if (dense_check(r, JG_BLOCK_SITES, id, r->sites.n)) return JAGER_E_FORMAT;
        if (id < r->sites.n) {
            const rd_site *o = (const rd_site *)r->sites.data + id;
            if (o->name != s.name || o->file != s.file || o->line != s.line)
                return jg_rd_fail(r, JAGER_E_FORMAT, "SITES block: site %u redefined differently", id);
            continue;
        }
        if (jg_vec_reserve(&r->sites, sizeof s, id)) return oom(r);
        ((rd_site *)r->sites.data)[id] = s;
        r->sites.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_threads(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_THREADS, 16, &n)) return JAGER_E_FORMAT;
    if (!r->threads.n) r->threads.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = cur32(c), len;
        uint64_t tid = cur64(c);
        const uint8_t *name = cur_str(c, &len);
        if (c->bad) return entry_bad(r, JG_BLOCK_THREADS, i);
        if (dense_check(r, JG_BLOCK_THREADS, id, r->threads.n)) return JAGER_E_FORMAT;
        if (id < r->threads.n) continue; /* a re-read; the first description stands */
        if (jg_vec_reserve(&r->threads, sizeof(rd_thread), id)) return oom(r);
        rd_thread *t = (rd_thread *)r->threads.data + id;
        t->os_tid = tid;
        if (!(t->name = jg_rd_arena_str(r, name, len))) return oom(r);
        r->threads.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_counters(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_COUNTERS, 16, &n)) return JAGER_E_FORMAT;
    if (!r->counters.n) r->counters.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        rd_counter k;
        uint32_t id = cur32(c);
        k.name = cur32(c);
        k.unit = cur32(c);
        k.kind = cur32(c);
        if (c->bad) return entry_bad(r, JG_BLOCK_COUNTERS, i);
        if (dense_check(r, JG_BLOCK_COUNTERS, id, r->counters.n)) return JAGER_E_FORMAT;
        if (id < r->counters.n) continue;
        if (jg_vec_reserve(&r->counters, sizeof k, id)) return oom(r);
        ((rd_counter *)r->counters.data)[id] = k;
        r->counters.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_stacks(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_STACKS, 12, &n)) return JAGER_E_FORMAT;
    if (!r->stacks.n) r->stacks.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = cur64(c);
        uint32_t depth = cur32(c);
        if (c->bad || (uint64_t)(c->end - c->p) < (uint64_t)depth * 8u) return entry_bad(r, JG_BLOCK_STACKS, i);
        const uint8_t *ips = c->p;
        c->p += (size_t)depth * 8u;
        if (dense_check(r, JG_BLOCK_STACKS, id, r->stacks.n)) return JAGER_E_FORMAT;
        if (id < r->stacks.n) continue;
        if (jg_vec_reserve(&r->stacks, sizeof(rd_stack), (size_t)id)) return oom(r);
        rd_stack *s = (rd_stack *)r->stacks.data + id;
        uint64_t *copy = depth ? jg_rd_arena_alloc(r, (size_t)depth * 8u) : NULL;
        if (depth && !copy) return oom(r);
        if (depth) memcpy(copy, ips, (size_t)depth * 8u);
        s->ips = copy;
        s->n = depth;
        r->stacks.n = (size_t)id + 1;
    }
    return 0;
}

static int sym_eq(uint32_t id, const void *key, void *ctx)
{
    return ((const rd_symbol *)ctx)[id - 1].ip == *(const uint64_t *)key;
}

static int sym_depth_eq(uint32_t id, const void *key, void *ctx)
{
    const rd_symbol *s = &((const rd_symbol *)ctx)[id - 1], *k = key;
    return s->ip == k->ip && s->inline_depth == k->inline_depth;
}

/** The symbol map's slot for \p ip: its first frame (index + 1), or the empty slot where it goes. */
size_t jg_rd_sym_find(const jager_reader *r, uint64_t ip)
{
    return jg_idmap_find(&r->sym_map, jg_hash_mix(0, ip), sym_eq, &ip, r->symbols.data);
}

static int absorb_symbols(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_SYMBOLS, 24, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        rd_symbol s;
        s.ip = cur64(c);
        s.inline_depth = cur32(c);
        s.line = cur32(c);
        s.func = cur32(c);
        s.file = cur32(c);
        s.next = 0;
        if (c->bad) return entry_bad(r, JG_BLOCK_SYMBOLS, i);
        if (r->symbols.n >= UINT32_MAX - 1) return oom(r);
        if (jg_idmap_reserve(&r->sym_map) || jg_idmap_reserve(&r->sym_depth_map)) return oom(r);
        /* the same (ip, depth) twice: the first one stands (found in a map: an address with
         * 100k inline frames costs no walk of its chain per frame) */
        uint64_t hd = jg_hash_mix(jg_hash_mix(0, s.ip), s.inline_depth);
        size_t dslot = jg_idmap_find(&r->sym_depth_map, hd, sym_depth_eq, &s, r->symbols.data);
        if (jg_idmap_id(&r->sym_depth_map, dslot)) continue;
        size_t slot = jg_rd_sym_find(r, s.ip);
        uint32_t first = jg_idmap_id(&r->sym_map, slot);
        if (jg_vec_reserve(&r->symbols, sizeof s, r->symbols.n)) return oom(r);
        rd_symbol *tab = r->symbols.data;
        uint32_t id = (uint32_t)(r->symbols.n + 1);
        s.last = id;
        tab[r->symbols.n] = s;
        if (!first) {
            jg_idmap_put(&r->sym_map, slot, jg_hash_mix(0, s.ip), id);
        } else {
            tab[tab[first - 1].last - 1].next = id;
            tab[first - 1].last = id;
        }
        jg_idmap_put(&r->sym_depth_map, dslot, hd, id);
        r->symbols.n++;
    }
    return 0;
}

static void stats_clear(rd_stats *s)
{
    s->have = s->have_core = 0;
    memset(s->core, 0, sizeof s->core);
    s->ncore = 0;
    s->site_limit = 0;
    s->nsites = 0;
    s->nhb = 0;
}

void jg_rd_stats_free(rd_stats *s)
{
    free(s->sites);
    free(s->hb_index);
    free(s->hb_count);
    memset(s, 0, sizeof *s);
}

static int absorb_stats(jager_reader *r, rd_cur *c)
{
    rd_stats *st = &r->staging;
    uint32_t flags = cur32(c), ncore = cur32(c);
    if (c->bad || (uint64_t)ncore * 8u > (uint64_t)(c->end - c->p))
        return jg_rd_fail(r, JAGER_E_FORMAT, "STATS block: header runs past the end of the block");
    if (flags & 1u) stats_clear(st);
    else if (!st->have) return jg_rd_fail(r, JAGER_E_FORMAT, "STATS block: a continuation part without a first part");
    st->have = 1;
    for (uint32_t i = 0; i < ncore; i++) {
        uint64_t v = cur64(c);
        if (i < JG_STATS_CORE_MAX) st->core[i] = v;
    }
    if (ncore) {
        st->have_core = 1;
        st->ncore = ncore < JG_STATS_CORE_MAX ? ncore : JG_STATS_CORE_MAX;
    }
    uint32_t limit = cur32(c), n;
    if (c->bad) return jg_rd_fail(r, JAGER_E_FORMAT, "STATS block: header runs past the end of the block");
    if (flags & 1u) st->site_limit = limit;
    if (table_count(r, c, JG_BLOCK_STATS, 12, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t site = cur32(c), nv = cur32(c), nb = cur32(c);
        if (c->bad || (uint64_t)nv * 8u + (uint64_t)nb * 12u > (uint64_t)(c->end - c->p))
            return entry_bad(r, JG_BLOCK_STATS, i);
        if (site == 0 || site >= st->site_limit || (st->nsites && site <= st->sites[st->nsites - 1].site))
            return jg_rd_fail(r, JAGER_E_FORMAT, "STATS block: site %u out of order or out of range", site);
        rd_site_stat *grown = jg_grow(st->sites, &st->sites_cap, st->nsites + 1, sizeof *grown, 64);
        if (!grown) return oom(r);
        st->sites = grown;
        rd_site_stat *e = &st->sites[st->nsites];
        memset(e, 0, sizeof *e);
        e->site = site;
        for (uint32_t k = 0; k < nv; k++) {
            uint64_t v = cur64(c);
            if (k < JG_STATS_SITE_VALUES) e->v[k] = v;
        }
        if (st->nhb + nb > st->hb_cap) { /* two arrays, one capacity: hb_cap moves once both grew */
            size_t icap = st->hb_cap, ccap = st->hb_cap;
            uint32_t *bi = jg_grow(st->hb_index, &icap, st->nhb + nb, sizeof *bi, 256);
            if (!bi) return oom(r);
            st->hb_index = bi;
            uint64_t *bc = jg_grow(st->hb_count, &ccap, st->nhb + nb, sizeof *bc, 256);
            if (!bc) return oom(r);
            st->hb_count = bc;
            st->hb_cap = ccap;
        }
        e->hist_at = st->nhb;
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t b = cur32(c);
            uint64_t cnt = cur64(c);
            if (b >= JAGER_HIST_BUCKETS)
                return jg_rd_fail(r, JAGER_E_FORMAT, "STATS block: site %u has histogram bucket %u (at most %u)", site, b,
                            JAGER_HIST_BUCKETS - 1);
            st->hb_index[st->nhb] = b;
            st->hb_count[st->nhb] = cnt;
            st->nhb++;
        }
        e->nbuckets = nb;
        st->nsites++;
    }
    if (flags & 2u) { /* last part: this set becomes the current one */
        rd_stats tmp = r->stats;
        r->stats = *st;
        *st = tmp;
        stats_clear(st);
    }
    return 0;
}

void jg_rd_paths_free(rd_paths *p)
{
    free(p->v);
    memset(p, 0, sizeof *p);
}

/* A PATHS block (1.1): one thread's call paths; blocks flagged first/last make a set that
 * replaces the previous one when its last block is read. Entries count from 1 within the
 * block; a parent is 0 (top level) or an earlier entry. Self time is the total minus the
 * children's totals, never below 0. */
static int absorb_paths(jager_reader *r, rd_cur *c)
{
    rd_paths *st = &r->paths_staging;
    uint32_t flags = cur32(c), thread = cur32(c), nv = cur32(c), n;
    if (c->bad) return jg_rd_fail(r, JAGER_E_FORMAT, "PATHS block: header runs past the end of the block");
    if (flags & JG_PATHS_FIRST) {
        st->n = 0;
        st->have = 1;
    } else if (!st->have) {
        return jg_rd_fail(r, JAGER_E_FORMAT, "PATHS block: a continuation block without a first one");
    }
    if (nv > 1024 || table_count(r, c, JG_BLOCK_PATHS, 8 + 8 * (size_t)nv, &n)) return JAGER_E_FORMAT;
    size_t base = st->n;
    if (base + n > st->cap) { /* (an empty block on an empty array needs nothing) */
        rd_path *grown = jg_grow(st->v, &st->cap, base + n, sizeof *grown, 256);
        if (!grown) return oom(r);
        st->v = grown;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t parent = cur32(c), site = cur32(c);
        uint64_t v[JG_PATHS_VALUES] = {0, 0, 0};
        for (uint32_t k = 0; k < nv; k++) {
            uint64_t x = cur64(c);
            if (k < JG_PATHS_VALUES) v[k] = x;
        }
        if (c->bad) return entry_bad(r, JG_BLOCK_PATHS, i);
        if (parent > i) return jg_rd_fail(r, JAGER_E_FORMAT, "PATHS block: entry %u names parent %u, not an earlier one", i + 1, parent);
        rd_path *e = &st->v[base + i];
        memset(e, 0, sizeof *e);
        e->thread = thread;
        e->parent = parent ? (uint32_t)(base + parent - 1) : RD_PATH_TOP;
        e->site = site;
        e->calls = v[0];
        e->total_ns = e->self_ns = v[1];
        e->bytes = v[2];
    }
    st->n = base + n;
    for (size_t i = base; i < st->n; i++) { /* children after parents: one pass */
        rd_path *e = &st->v[i];
        if (e->parent == RD_PATH_TOP) continue;
        rd_path *p = &st->v[e->parent];
        p->self_ns = p->self_ns > e->total_ns ? p->self_ns - e->total_ns : 0;
    }
    if (flags & JG_PATHS_LAST) {
        rd_paths tmp = r->paths;
        r->paths = *st;
        *st = tmp;
        st->n = 0;
        st->have = 0;
    }
    return 0;
}

int jg_rd_absorb_end(jager_reader *r, rd_cur *c)
{
    uint64_t end_ns = cur64(c), events = cur64(c), frames = cur64(c);
    if (c->bad) return jg_rd_fail(r, JAGER_E_FORMAT, "END block is too short");
    if (events != r->pass_events || frames != r->cur_frame)
        return jg_rd_fail(r, JAGER_E_FORMAT,
                    "END block counts %llu events in %llu frames, but the file holds %llu events in %llu frames "
                    "(frames are missing)",
                    (unsigned long long)events, (unsigned long long)frames, (unsigned long long)r->pass_events,
                    (unsigned long long)r->cur_frame);
    r->end_ns = end_ns;
    r->clean_end = 1;
    r->after_end = 1;
    return 0;
}

/** Absorb a table block into the reader's tables. */
int jg_rd_absorb_block(jager_reader *r, uint32_t kind)
{
    rd_cur c = {r->blk + JG_BLOCK_HEADER_BYTES, r->blk + r->blk_len, 0};
    switch (kind) {
    case JG_BLOCK_META: return absorb_meta(r, &c);
    case JG_BLOCK_SCHEMA: return absorb_schema(r, &c);
    case JG_BLOCK_STRINGS: return absorb_strings(r, &c);
    case JG_BLOCK_SITES: return absorb_sites(r, &c);
    case JG_BLOCK_THREADS: return absorb_threads(r, &c);
    case JG_BLOCK_COUNTERS: return absorb_counters(r, &c);
    case JG_BLOCK_STACKS: return absorb_stacks(r, &c);
    case JG_BLOCK_SYMBOLS: return absorb_symbols(r, &c);
    case JG_BLOCK_STATS: return absorb_stats(r, &c);
    case JG_BLOCK_PATHS: return absorb_paths(r, &c);
    default: return 0; /* a block kind of a newer minor: skipped */
    }
}
