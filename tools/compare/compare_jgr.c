/* compare_jgr.c — per-site time of two recordings side by side, largest change first. */
#include "compare_jgr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jager_reader.h"
#include "model.h"
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

static const jm_site *match(const jm_model *m, const jm_site *s)
{
    for (uint32_t i = 1; i < m->nsites; i++)
        if (!strcmp(m->sites[i].name, s->name) && !strcmp(m->sites[i].file, s->file)) return &m->sites[i];
    return NULL;
}

int jc_compare_recordings(const char *base_path, const char *head_path, FILE *out)
{
    side b, h;
    if (open_side(base_path, &b)) { close_side(&b); return 2; }
    if (open_side(head_path, &h)) { close_side(&b); close_side(&h); return 2; }
    size_t cap = (size_t)b.m->nsites + h.m->nsites, n = 0;
    delta *d = calloc(cap ? cap : 1, sizeof *d);
    if (!d) { close_side(&b); close_side(&h); return 2; }
    for (uint32_t i = 1; i < h.m->nsites; i++) {
        const jm_site *hs = &h.m->sites[i], *bs = match(b.m, hs);
        if (!hs->calls && !(bs && bs->calls)) continue;
        d[n++] = (delta){bs, hs, (double)hs->total_ns - (bs ? (double)bs->total_ns : 0)};
    }
    for (uint32_t i = 1; i < b.m->nsites; i++)
        if (b.m->sites[i].calls && !match(h.m, &b.m->sites[i]))
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
    close_side(&b);
    close_side(&h);
    return 0;
}
