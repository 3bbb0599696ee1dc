/* The report's sampled views (report_samples.h). Strings reach the page only through
 * tu_json_str (escaped for a <script> data block). */
#include "report_samples.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model_map.h"
#include "report_model.h"
#include "sample_events.h"
#include "strdict.h"
#include "toolutil.h"

#define RS_NONE UINT32_MAX
#define RS_ROOT_PARENT 0xFFFFFFFEu /* parent key of the per-site roots */

typedef struct rs_smp {
    uint64_t tid, time, stack, weight, cpu_ns;
    uint32_t site;
} rs_smp;

struct rs_data {
    jager_reader *r;
    jm_sample_reader sr;
    rs_smp *v;
    size_t n, cap;
};

rs_data *rs_new(jager_reader *r)
{
    rs_data *d = calloc(1, sizeof *d);
    if (d) d->r = r;
    return d;
}

void rs_free(rs_data *d)
{
    if (!d) return;
    free(d->v);
    free(d);
}

uint64_t rs_count(const rs_data *d) { return d ? d->n : 0; }

int rs_add(rs_data *d, const jager_event *ev)
{
    jm_sample_ev e;
    if (!jm_sample_decode(&d->sr, d->r, ev, &e)) return 0;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        rs_smp *v = realloc(d->v, cap * sizeof *v);
        if (!v) return -1;
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = (rs_smp){e.tid, e.time_ns, e.stack, e.weight, e.cpu_ns, (uint32_t)e.site};
    return 0;
}

/* ---- the page's tree: nodes keyed by (parent, function) ---- */

typedef struct rs_node {
    uint32_t parent, fn; /* parent RS_NONE for the all-samples root; RS_ROOT_PARENT marks a site root (fn = site index) */
    uint64_t t, c, s;
} rs_node;

typedef struct rs_tree {
    rs_node *v;
    uint32_t n, cap;
    jm_map nodes;      /* (parent, fn) -> node index */
    tu_strdict names;  /* "func\x1f file" -> function index */
    jager_frame *fn_store; /* each function's first frame seen (name, file, line), strings owned */
    uint32_t nfns, fns_cap;
    /* one input's stacks while it is added: (stack, 0) -> its functions at pool[off…] */
    jm_map paths;
    uint32_t *pool, *path_off, *path_n;
    size_t npool, pool_cap;
    uint32_t npaths, paths_cap;
} rs_tree;

/* The node (parent, fn), added when new; RS_NONE on OOM. */
static uint32_t tree_node(rs_tree *t, uint32_t parent, uint32_t fn)
{
    uint32_t k = jm_map_get(&t->nodes, parent, fn);
    if (k != JM_NONE) return k;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 1024;
        rs_node *v = realloc(t->v, cap * sizeof *v);
        if (!v) return RS_NONE;
        t->v = v;
        t->cap = cap;
    }
    if (jm_map_put(&t->nodes, parent, fn, t->n)) return RS_NONE;
    t->v[t->n] = (rs_node){parent, fn, 0, 0, 0};
    return t->n++;
}

/* jm_stack_frames' callback: the frame's page-wide function index onto the pool. */
static int on_frame(void *ctx, const jager_frame *fr)
{
    rs_tree *t = ctx;
    char key[1024];
    int kn = snprintf(key, sizeof key, "%s\x1f%s", fr->func, fr->file);
    if (kn < 0 || (size_t)kn >= sizeof key) kn = (int)sizeof key - 1;
    int64_t i = tu_strdict_put(&t->names, key, (uint32_t)kn);
    if (i < 0) return -1;
    if ((uint32_t)i == t->nfns) {
        if (t->nfns == t->fns_cap) {
            uint32_t cap = t->fns_cap ? t->fns_cap * 2 : 256;
            jager_frame *v = realloc(t->fn_store, cap * sizeof *v);
            if (!v) return -1;
            t->fn_store = v;
            t->fns_cap = cap;
        }
        /* own the strings: an unnamed frame's hex name lives only during the callback */
        char *name = strdup(fr->func), *file = strdup(fr->file);
        if (!name || !file) {
            free(name);
            free(file);
            return -1;
        }
        t->fn_store[t->nfns++] = (jager_frame){name, file, fr->line, fr->inline_depth};
    }
    if (t->npool == t->pool_cap) {
        size_t cap = t->pool_cap ? t->pool_cap * 2 : 1024;
        uint32_t *q = realloc(t->pool, cap * sizeof *q);
        if (!q) return -1;
        t->pool = q;
        t->pool_cap = cap;
    }
    t->pool[t->npool++] = (uint32_t)i;
    return 0;
}

/* The index of \p stack's function list (root first) of reader \p r; RS_NONE on OOM. */
static uint32_t stack_path(rs_tree *t, const jager_reader *r, uint64_t stack)
{
    uint32_t k = jm_map_get(&t->paths, stack, 0);
    if (k != JM_NONE) return k;
    if (t->npaths == t->paths_cap) {
        uint32_t cap = t->paths_cap ? t->paths_cap * 2 : 256;
        uint32_t *o = realloc(t->path_off, cap * sizeof *o);
        if (!o) return RS_NONE;
        t->path_off = o;
        uint32_t *n = realloc(t->path_n, cap * sizeof *n);
        if (!n) return RS_NONE;
        t->path_n = n;
        t->paths_cap = cap;
    }
    uint32_t off = (uint32_t)t->npool; /* a sample without a stack counts at the root only */
    if (jm_stack_frames(r, stack, on_frame, t) || jm_map_put(&t->paths, stack, 0, t->npaths)) return RS_NONE;
    t->path_off[t->npaths] = off;
    t->path_n[t->npaths] = (uint32_t)(t->npool - off);
    return t->npaths++;
}

static void tree_free(rs_tree *t)
{
    for (uint32_t i = 0; i < t->nfns; i++) {
        free((char *)t->fn_store[i].func);
        free((char *)t->fn_store[i].file);
    }
    free(t->v);
    jm_map_free(&t->nodes);
    jm_map_free(&t->paths);
    free(t->pool);
    free(t->path_off);
    free(t->path_n);
    free(t->fn_store);
    tu_strdict_free(&t->names);
}

/* Add one sample's weights along root → path in the tree rooted at \p root. */
static int add_path(rs_tree *t, uint32_t root, uint32_t path, const rs_smp *s)
{
    uint32_t node = root;
    t->v[node].t += s->cpu_ns;
    t->v[node].c += s->weight;
    for (uint32_t i = 0; i < t->path_n[path]; i++) {
        node = tree_node(t, node, t->pool[t->path_off[path] + i]);
        if (node == RS_NONE) return -1;
        t->v[node].t += s->cpu_ns;
        t->v[node].c += s->weight;
    }
    t->v[node].s += s->cpu_ns;
    return 0;
}

static int add_input(rs_tree *t, const rm_input *in)
{
    const rs_data *d = in->rs;
    int rc = 0;
    jm_map_clear(&t->paths); /* stack ids are per recording */
    t->npaths = 0;
    t->npool = 0;
    for (size_t i = 0; d && i < d->n && !rc; i++) {
        const rs_smp *s = &d->v[i];
        uint32_t path = stack_path(t, in->r, s->stack);
        if (path == RS_NONE) return -1;
        rc = add_path(t, 0, path, s);
        if (!rc && s->site && s->site < in->m->nsites) {
            uint32_t root = tree_node(t, RS_ROOT_PARENT, in->site_base + s->site);
            rc = root == RS_NONE ? -1 : add_path(t, root, path, s);
        }
    }
    return rc;
}

/* ---- JSON ---- */

static void put_u64s(FILE *out, const char *key, const rs_tree *t, int which)
{
    fprintf(out, ",\"%s\":[", key);
    for (uint32_t i = 0; i < t->n; i++) {
        const rs_node *e = &t->v[i];
        uint64_t v = which == 0 ? e->t : which == 1 ? e->c : e->s;
        fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, v);
    }
    fputc(']', out);
}

/* Children after their parents, as the page's flame graph reads them: nodes are created
 * parent first, so insertion order already is. Parents are written as indexes (-1 for roots). */
static void write_tree(FILE *out, const rs_tree *t)
{
    fputs(",\"fns\":[", out);
    for (uint32_t i = 0; i < t->nfns; i++) {
        const jager_frame *f = &t->fn_store[i];
        fputs(i ? ",[" : "[", out);
        tu_json_str(out, f->func, (size_t)-1);
        fputc(',', out);
        tu_json_str(out, f->file, (size_t)-1);
        fprintf(out, ",%u]", f->line);
    }
    fputs("],\"p\":[", out);
    for (uint32_t i = 0; i < t->n; i++) {
        uint32_t pa = t->v[i].parent;
        int64_t v = pa == RS_NONE || pa == RS_ROOT_PARENT ? -1 : (int64_t)pa;
        fprintf(out, i ? ",%" PRId64 : "%" PRId64, v);
    }
    fputs("],\"k\":[", out);
    for (uint32_t i = 0; i < t->n; i++) {
        int64_t v = t->v[i].parent == RS_NONE || t->v[i].parent == RS_ROOT_PARENT ? -1 : (int64_t)t->v[i].fn;
        fprintf(out, i ? ",%" PRId64 : "%" PRId64, v);
    }
    fputc(']', out);
    put_u64s(out, "t", t, 0);
    put_u64s(out, "c", t, 1);
    put_u64s(out, "s", t, 2);
    fputs(",\"roots\":[", out);
    int first = 1;
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->v[i].parent != RS_ROOT_PARENT) continue;
        fprintf(out, "%s[%u,%u]", first ? "" : ",", t->v[i].fn, i);
        first = 0;
    }
    fputc(']', out);
}

/* The name of the recording thread with OS id \p tid, or NULL. */
static const char *thread_name(const jager_reader *r, uint64_t tid)
{
    for (uint32_t t = 0, nt = jager_reader_thread_count(r); t < nt; t++) {
        uint64_t os = 0;
        const char *name = NULL;
        if (jager_reader_thread(r, t, &os, &name) == JAGER_OK && os == tid && name && *name) return name;
    }
    return NULL;
}

/* One lane per (process, sampled thread), threads in order of first sample: Σ weight per
 * time bin of the page's duration. */
static int write_density(FILE *out, const rm_input *in, size_t n, uint64_t dur)
{
    uint64_t dt = dur / RS_DENSITY_BINS + 1;
    uint64_t *bins = NULL, *tids = NULL;
    size_t ntids = 0, cap = 0;
    int rc = -1, first = 1;
    if (!(bins = malloc((size_t)RS_DENSITY_BINS * sizeof *bins))) goto done;
    fprintf(out, ",\"density\":{\"bins\":%u,\"dt\":%" PRIu64 ",\"lanes\":[", RS_DENSITY_BINS, dt);
    for (size_t p = 0; p < n; p++) {
        const rs_data *d = in[p].rs;
        ntids = 0;
        for (size_t i = 0; d && i < d->n; i++) { /* distinct threads: few, a linear list */
            size_t k = 0;
            while (k < ntids && tids[k] != d->v[i].tid) k++;
            if (k < ntids) continue;
            if (ntids == cap) {
                size_t c = cap ? cap * 2 : 16;
                uint64_t *v = realloc(tids, c * sizeof *v);
                if (!v) goto done;
                tids = v;
                cap = c;
            }
            tids[ntids++] = d->v[i].tid;
        }
        for (size_t q = 0; q < ntids; q++) {
            uint64_t tid = tids[q], total = 0;
            memset(bins, 0, (size_t)RS_DENSITY_BINS * sizeof *bins);
            for (size_t k = 0; k < d->n; k++) {
                if (d->v[k].tid != tid) continue;
                uint64_t rel = d->v[k].time > in[p].t0 ? d->v[k].time - in[p].t0 : 0, b = rel / dt;
                bins[b < RS_DENSITY_BINS ? b : RS_DENSITY_BINS - 1] += d->v[k].weight;
                total += d->v[k].weight;
            }
            const char *tname = thread_name(in[p].r, tid);
            char label[400];
            snprintf(label, sizeof label, "%s%s%s%stid %" PRIu64 "%s", n > 1 ? in[p].name : "", n > 1 ? ": " : "",
                     tname ? tname : "", tname ? " (" : "", tid, tname ? ")" : "");
            fputs(first ? "{\"name\":" : ",{\"name\":", out);
            first = 0;
            tu_json_str(out, label, (size_t)-1);
            fprintf(out, ",\"tid\":%" PRIu64 ",\"proc\":%zu,\"total\":%" PRIu64 ",\"n\":[", tid, p, total);
            for (uint32_t b = 0; b < RS_DENSITY_BINS; b++) fprintf(out, b ? ",%" PRIu64 : "%" PRIu64, bins[b]);
            fputs("]}", out);
        }
    }
    fputs("]}", out);
    rc = 0;
done:
    free(bins);
    free(tids);
    return rc;
}

int rs_write_json(FILE *out, const rm_input *in, size_t n)
{
    uint64_t count = 0, dur = 0;
    for (size_t i = 0; i < n; i++) {
        count += rs_count(in[i].rs);
        if (in[i].end > dur) dur = in[i].end;
    }
    if (!count) return 0;
    rs_tree t = {0};
    int rc = -1;
    if (tree_node(&t, RS_NONE, 0) != 0) goto done; /* node 0: all samples */
    for (size_t i = 0; i < n; i++)
        if (add_input(&t, &in[i])) goto done;
    fputs(",\"samples\":{\"count\":", out);
    fprintf(out, "%" PRIu64, count);
    write_tree(out, &t);
    if (write_density(out, in, n, dur)) goto done;
    fputc('}', out);
    rc = 0;
done:
    tree_free(&t);
    return rc;
}
