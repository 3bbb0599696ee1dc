/* `jager export --format pprof`: a gzip'd profile.proto (formats.md §6) written by our own
 * protobuf encoder (export_proto) and zlib's gzip (deflateInit2, windowBits 31).
 *
 * Sample types: spans/count and wall/nanoseconds (the default), plus alloc_space/bytes
 * when spans carried allocation bytes. One sample per distinct span path (sites, leaf
 * first) with the spans ended on it and their exclusive time (and bytes): a span's
 * duration minus its children's. `go tool pprof -top` therefore lists the site where the
 * time was really spent first. Locations and functions are the sites (name, file, line).
 *
 * Paths come from export_spans (trees in time order); the profile keeps one node per
 * distinct path, so memory grows with the program's structure, not the run's length.
 *
 * When the recording has gc.pause events with trigger stacks, a second profile goes next
 * to OUT (OUT's name with .gc.pb.gz for .pb.gz): pauses/count and gc/nanoseconds per
 * distinct triggering stack, frames symbolized from the recording (export_pprof_gc.c); with
 * sampler.sample events, "<stem>.cpu.pb.gz": samples/count and cpu/nanoseconds per distinct
 * sampled stack, the profile `go tool pprof -top` reads like a perf or gperftools one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_pprof_gc.h"
#include "export_pprof_profile.h"
#include "enc_protobuf.h"
#include "export_spans.h"

#define UNKNOWN_SITE_ID 0xFFFFFFFFu

typedef struct pp_node {
    uint32_t parent; /* node index; 0 = the root */
    uint32_t site;
    uint64_t count, wall_ns, bytes;
} pp_node;

typedef struct pp_state {
    jager_reader *r;
    const export_opts *o;
    sp_orderer *ord;
    pp_node *nodes; /* [0] is the root */
    uint32_t nnodes, nodes_cap;
    uint32_t *slots; /* (parent, site) -> node index + 1 */
    uint32_t nslots;
    int oom;
    int any_bytes;
    pp_profile prof;
    pp_gc *gc;
    pp_gc *cpu;
} pp_state;

static uint32_t slot_hash(uint32_t parent, uint32_t site)
{
    uint64_t k = ((uint64_t)parent << 32 | site) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(k >> 32);
}

static int grow_slots(pp_state *s)
{
    uint32_t n = s->nslots ? s->nslots * 2 : 1024;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t) return -1;
    for (uint32_t i = 1; i < s->nnodes; i++) {
        uint32_t k = slot_hash(s->nodes[i].parent, s->nodes[i].site) & (n - 1);
        while (t[k]) k = (k + 1) & (n - 1);
        t[k] = i + 1;
    }
    free(s->slots);
    s->slots = t;
    s->nslots = n;
    return 0;
}

static uint32_t child_node(pp_state *s, uint32_t parent, uint32_t site)
{
    if ((uint64_t)(s->nnodes + 1) * 2 > s->nslots && grow_slots(s)) return 0;
    uint32_t mask = s->nslots - 1, k = slot_hash(parent, site) & mask;
    while (s->slots[k]) {
        const pp_node *n = &s->nodes[s->slots[k] - 1];
        if (n->parent == parent && n->site == site) return s->slots[k] - 1;
        k = (k + 1) & mask;
    }
    if (s->nnodes == s->nodes_cap) {
        uint32_t cap = s->nodes_cap * 2;
        pp_node *v = realloc(s->nodes, cap * sizeof *v);
        if (!v) return 0;
        s->nodes = v;
        s->nodes_cap = cap;
    }
    s->nodes[s->nnodes] = (pp_node){.parent = parent, .site = site};
    s->slots[k] = s->nnodes + 1;
    return s->nnodes++;
}

static uint64_t on_open(void *ctx, const sp_span *sp, uint32_t depth, uint64_t parent_user)
{
    pp_state *s = ctx;
    uint32_t n = child_node(s, (uint32_t)parent_user, sp->site ? sp->site : UNKNOWN_SITE_ID);
    if (!n) s->oom = 1;
    return n;
}

static int on_close(void *ctx, const sp_span *sp, uint64_t end, uint64_t child_ns, uint64_t child_bytes,
                    uint32_t depth, uint64_t user)
{
    pp_state *s = ctx;
    if (s->oom) return -1;
    pp_node *n = &s->nodes[user];
    uint64_t dur = end - sp->start;
    n->count++;
    n->wall_ns += dur > child_ns ? dur - child_ns : 0;
    if (sp->bytes) {
        s->any_bytes = 1;
        n->bytes += sp->bytes > child_bytes ? sp->bytes - child_bytes : 0;
    }
    return 0;
}

static int on_batch(void *ctx, uint32_t thread, const sp_span *spans, size_t n)
{
    static const sp_walker w = {on_open, on_close};
    return sp_walk(spans, n, &w, ctx);
}

static void *pp_open(jager_reader *r, const export_opts *o)
{
    pp_state *s = calloc(1, sizeof *s);
    if (s) {
        s->nodes_cap = 1024;
        s->nodes = calloc(s->nodes_cap, sizeof *s->nodes);
        s->nnodes = 1;
        s->ord = sp_new(on_batch, s);
    }
    if (s) s->gc = pp_gc_new(&pp_kind_gc);
    if (s) s->cpu = pp_gc_new(&pp_kind_cpu);
    if (!s || !s->nodes || !s->ord || !s->gc || !s->cpu || pp_profile_init(&s->prof)) {
        if (s) {
            sp_free(s->ord);
            free(s->nodes);
            pp_gc_free(s->gc);
            pp_gc_free(s->cpu);
            pp_profile_free(&s->prof);
        }
        free(s);
        fprintf(stderr, "jager export: out of memory\n");
        return NULL;
    }
    s->r = r;
    s->o = o;
    return s;
}

static int pp_event(void *st, const jager_event *ev)
{
    pp_state *s = st;
    if (ev->type >= JAGER_EV_FIRST_PLUGIN) return pp_gc_event(s->gc, s->r, ev) || pp_gc_event(s->cpu, s->r, ev) ? -1 : 0;
    if (ev->type != JAGER_EV_SPAN || (size_t)ev->rec->words * 8u < sizeof(jager_rec_span)) return 0;
    if (sp_add(s->ord, ev->thread, (const jager_rec_span *)ev->rec)) {
        fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    return 0;
}

/* The Profile message body (everything but the gzip). */
static int build_profile(pp_state *s)
{
    pp_profile *pr = &s->prof;
    tu_buf *p = &pr->body;
    int rc = -1;
    tu_buf m = {0}, sub = {0};
    uint64_t *path = NULL, vals[3];
    uint8_t *site_used = NULL;
    uint32_t nsites = jager_reader_site_count(s->r);
    path = malloc(((size_t)s->nnodes + 1) * sizeof *path);
    site_used = calloc((size_t)nsites + 2, 1);
    if (!path || !site_used) goto done;

    pp_value_type(pr, 1, "spans", "count");
    pp_value_type(pr, 1, "wall", "nanoseconds");
    if (s->any_bytes) pp_value_type(pr, 1, "alloc_space", "bytes");
    size_t nvals = s->any_bytes ? 3 : 2;

    /* samples: one per path node, locations leaf first */
    for (uint32_t i = 1; i < s->nnodes; i++) {
        const pp_node *n = &s->nodes[i];
        size_t depth = 0;
        for (uint32_t k = i; k; k = s->nodes[k].parent) {
            uint32_t site = s->nodes[k].site;
            int known = site >= 1 && site <= nsites;
            path[depth++] = known ? site : UNKNOWN_SITE_ID;
            site_used[known ? site : nsites + 1] = 1;
        }
        vals[0] = n->count;
        vals[1] = n->wall_ns;
        vals[2] = n->bytes;
        m.len = 0;
        if (pb_packed(&m, 1, path, depth) || pb_packed(&m, 2, vals, nvals) || pb_bytes(p, 2, m.data, m.len)) goto done;
    }
    /* locations and functions: one per site (id = site) */
    for (uint32_t site = 1; site <= nsites + 1; site++) {
        if (!site_used[site]) continue;
        uint32_t id = site <= nsites ? site : UNKNOWN_SITE_ID;
        const char *name = NULL, *file = NULL;
        uint32_t line = 0;
        char nb[32];
        if (id == UNKNOWN_SITE_ID || jager_reader_site(s->r, site, &name, &file, &line) != JAGER_OK || !name) {
            snprintf(nb, sizeof nb, id == UNKNOWN_SITE_ID ? "(unknown site)" : "site#%u", site);
            name = nb;
            file = "";
            line = 0;
        }
        sub.len = 0;
        m.len = 0;
        if (pb_varint(&sub, 1, id) || pb_varint(&sub, 2, line)) goto done; /* Line */
        if (pb_varint(&m, 1, id) || pb_bytes(&m, 4, sub.data, sub.len) || pb_bytes(p, 4, m.data, m.len)) goto done;
        m.len = 0;
        uint64_t sname = pp_str(pr, name);
        if (pb_varint(&m, 1, id) || pb_varint(&m, 2, sname) || pb_varint(&m, 3, sname) ||
            pb_varint(&m, 4, pp_str(pr, file ? file : "")) || pb_varint(&m, 5, line) || pb_bytes(p, 5, m.data, m.len))
            goto done;
    }
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(s->r, &info);
    if (info.start_unix_ns && pb_varint(p, 9, info.start_unix_ns)) goto done;
    if (info.end_ns > info.start_ns && info.start_ns && pb_varint(p, 10, info.end_ns - info.start_ns)) goto done;
    pp_value_type(pr, 11, "wall", "nanoseconds");
    if (pb_varint(p, 12, 1)) goto done;
    char comment[512];
    snprintf(comment, sizeof comment, "jager %s export of %s: exclusive time per span path", JAGER_VERSION_STRING,
             s->o->input);
    if (pb_varint(p, 13, pp_str(pr, comment)) || pb_varint(p, 14, pp_str(pr, "wall"))) goto done;
    rc = pr->oom ? -1 : 0;
done:
    tu_buf_free(&m);
    tu_buf_free(&sub);
    free(path);
    free(site_used);
    return rc;
}

static int pp_finish(void *st)
{
    pp_state *s = st;
    if (sp_finish(s->ord) || s->oom) {
        fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    if (build_profile(s)) {
        fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    if (pp_profile_write(&s->prof, s->o->out)) return -1;
    return pp_gc_write(s->gc, s->r, s->o) || pp_gc_write(s->cpu, s->r, s->o) ? -1 : 0;
}

static void pp_free(void *st)
{
    pp_state *s = st;
    if (!s) return;
    sp_free(s->ord);
    free(s->nodes);
    free(s->slots);
    pp_profile_free(&s->prof);
    pp_gc_free(s->gc);
    pp_gc_free(s->cpu);
    free(s);
}

const exporter export_pprof = {"pprof", ".pb.gz", 1, pp_open, pp_event, pp_finish, pp_free};
