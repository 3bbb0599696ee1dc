/* compare_jgr.c — per-site time of two recordings side by side, largest change first. */
#include "compare_jgr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jager_reader.h"
#include "model.h"
#include "model_map.h"
#include "toolutil.h"

typedef struct side {
    jager_reader *r;
    jm_model *m;
} side;

static int open_side(const char *path, side *s)
{
    memset(s, 0, sizeof *s);
    if (jager_reader_open(path, &s->r) != JAGER_OK) {
        fprintf(stderr, "jager compare: %s: %s\n", path, jager_last_error());
        s->r = NULL;
        return -1;
    }
    int rc = 0;
    if (jm_model_build(s->r, NULL, &s->m, &rc) != JAGER_OK) {
        fprintf(stderr, "jager compare: %s: out of memory\n", path);
        return -1;
    }
    if (rc < 0) fprintf(stderr, "jager compare: %s: %s (partial)\n", path, jager_reader_error(s->r));
    return 0;
}

static void close_side(side *s)
{
    jm_model_free(s->m);
    if (s->r) jager_reader_close(s->r);
}

typedef struct delta {
    const jm_site *b, *h;
    double change;   /* head total − base total, ns */
} delta;

static int by_change(const void *x, const void *y)
{
    double a = fabs(((const delta *)x)->change), b = fabs(((const delta *)y)->change);
    return (a < b) - (a > b);
}

static uint64_t fnv(const char *p)
{
    uint64_t h = 1469598103934665603ull;
    for (; p && *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return h;
}

/* Sites of one side by (name, file), through a hash map: matching 100k sites by a scan
 * each was quadratic. Names whose hashes collide chain through `next` (index + 1). */
typedef struct site_index {
    jm_map map;      /* (fnv(name), fnv(file)) -> first site index */
    uint32_t *next;  /* site index -> next site index with the same hashes, JM_NONE at the end */
} site_index;

static int index_sites(const jm_model *m, site_index *ix)
{
    memset(ix, 0, sizeof *ix);
    if (!(ix->next = malloc(((size_t)m->nsites + 1) * sizeof *ix->next))) return -1;
    for (uint32_t i = m->nsites; i-- > 1;) { /* from the end: the first index heads its chain */
        uint64_t a = fnv(m->sites[i].name), b = fnv(m->sites[i].file);
        uint32_t head = jm_map_get(&ix->map, a, b);
        ix->next[i] = head;
        if (head != JM_NONE) jm_map_del(&ix->map, a, b);
        if (jm_map_put(&ix->map, a, b, i)) return -1;
    }
    return 0;
}

static void index_free(site_index *ix)
{
    jm_map_free(&ix->map);
    free(ix->next);
}

static const jm_site *match(const jm_model *m, const site_index *ix, const jm_site *s)
{
    for (uint32_t i = jm_map_get(&ix->map, fnv(s->name), fnv(s->file)); i != JM_NONE; i = ix->next[i]) {
        const jm_site *c = &m->sites[i];
        if (!strcmp(c->name ? c->name : "", s->name ? s->name : "") && !strcmp(c->file ? c->file : "", s->file ? s->file : ""))
            return c;
    }
    return NULL;
}

int jc_compare_recordings(const char *base_path, const char *head_path, FILE *out)
{
    side b, h;
    if (open_side(base_path, &b)) { close_side(&b); return 2; }
    if (open_side(head_path, &h)) { close_side(&b); close_side(&h); return 2; }
    size_t cap = (size_t)b.m->nsites + h.m->nsites, n = 0;
    delta *d = calloc(cap ? cap : 1, sizeof *d);
    site_index bix, hix;
    int ixfail = index_sites(b.m, &bix);
    ixfail |= index_sites(h.m, &hix);
    if (!d || ixfail) {
        fprintf(stderr, "jager compare: out of memory\n");
        free(d);
        index_free(&bix);
        index_free(&hix);
        close_side(&b);
        close_side(&h);
        return 2;
    }
    for (uint32_t i = 1; i < h.m->nsites; i++) {
        const jm_site *hs = &h.m->sites[i], *bs = match(b.m, &bix, hs);
        if (!hs->calls && !(bs && bs->calls)) continue;
        d[n++] = (delta){bs, hs, (double)hs->total_ns - (bs ? (double)bs->total_ns : 0)};
    }
    for (uint32_t i = 1; i < b.m->nsites; i++)
        if (b.m->sites[i].calls && !match(h.m, &hix, &b.m->sites[i]))
            d[n++] = (delta){&b.m->sites[i], NULL, -(double)b.m->sites[i].total_ns};
    qsort(d, n, sizeof *d, by_change);
    char rb[32], rh[32];
    fprintf(out, "run: %s -> %s (one recording each: where time moved, not a verdict; use `jager bench run` for one)\n",
            tu_fmt_ns(rb, sizeof rb, (double)b.m->run_ns), tu_fmt_ns(rh, sizeof rh, (double)h.m->run_ns));
    fprintf(out, "%-36s %12s %12s %12s %9s %10s %10s\n", "site", "base total", "head total", "change", "per call", "base calls",
            "head calls");
    for (size_t i = 0; i < n; i++) {
        const jm_site *s = d[i].h ? d[i].h : d[i].b;
        char name[160], bt[32], ht[32], ch[32], pc[32];
        jm_text_fit(name, sizeof name, s->name, 36);
        double bn = d[i].b ? (double)d[i].b->total_ns : 0, hn = d[i].h ? (double)d[i].h->total_ns : 0;
        tu_fmt_ns(bt, sizeof bt, bn);
        tu_fmt_ns(ht, sizeof ht, hn);
        tu_fmt_ns(ch + 1, sizeof ch - 1, fabs(d[i].change));
        ch[0] = d[i].change < 0 ? '-' : '+';
        if (d[i].b && d[i].h && d[i].b->calls && d[i].h->calls)
            snprintf(pc, sizeof pc, "%+.1f%%", ((hn / (double)d[i].h->calls) / (bn / (double)d[i].b->calls) - 1) * 100);
        else snprintf(pc, sizeof pc, "%s", d[i].h ? "new" : "removed");
        fprintf(out, "%-36s %12s %12s %12s %9s %10llu %10llu\n", name, bt, ht, ch, pc,
                (unsigned long long)(d[i].b ? d[i].b->calls : 0), (unsigned long long)(d[i].h ? d[i].h->calls : 0));
    }
    free(d);
    index_free(&bix);
    index_free(&hix);
    close_side(&b);
    close_side(&h);
    return 0;
}
