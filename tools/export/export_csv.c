/* `jager export --format csv`: OUT/ holds one <type>.csv per event type present, with the
 * columns of export_table.h, a header row, RFC 4180 quoting and CRLF line ends. Nulls are
 * empty fields; empty strings are written as "" so the two stay distinct. Streaming: each
 * row is written as it is read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_table.h"

typedef struct csv_file {
    ex_table *t;
    FILE *f;
} csv_file;

typedef struct csv_state {
    jager_reader *r;
    const export_opts *o;
    csv_file *by_type[65536]; /* lazily opened per type */
    uint8_t skip[65536];      /* types without a table (unknown) */
    ex_cell *cells;
    uint32_t cells_cap;
    tu_buf scratch;
    /* a job's output (o->job): each part's rows go into the files of the parts before, a
     * `rank` column first; files of earlier parts wait here until a part has the type */
    int64_t rank;
    const struct jm_mpi *clock; /* the job's clock (export_part.mpi): times mapped to it */
    uint32_t part_index;
    csv_file **retired;
    size_t nretired;
} csv_state;

static void *csv_open(jager_reader *r, const export_opts *o)
{
    if (export_mkdirs(o->out) != 0) {
        fprintf(stderr, "jager export: cannot create folder %s: %s\n", o->out, strerror(errno));
        return NULL;
    }
    csv_state *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "jager export: out of memory\n");
        return NULL;
    }
    s->r = r;
    s->o = o;
    return s;
}

static csv_file *csv_file_for(csv_state *s, uint16_t type)
{
    if (s->by_type[type] || s->skip[type]) return s->by_type[type];
    ex_table *t = s->o->job ? ex_table_new_ranked(s->r, type, s->rank, s->clock, s->part_index) : ex_table_new(s->r, type);
    if (!t) {
        s->skip[type] = 1;
        return NULL;
    }
    char stem[200], path[4096];
    ex_table_file_stem(t, stem, sizeof stem);
    snprintf(path, sizeof path, "%s/%s.csv", s->o->out, stem);
    for (size_t i = 0; i < s->nretired; i++) { /* an earlier part's file of this type */
        csv_file *old = s->retired[i];
        if (ex_table_same_columns(old->t, t)) {
            ex_table_free(old->t);
            old->t = t;
            s->retired[i] = s->retired[--s->nretired];
            s->by_type[type] = old;
            return old;
        }
        char ostem[200];
        ex_table_file_stem(old->t, ostem, sizeof ostem);
        if (!strcmp(ostem, stem)) /* same name, other columns (another build): a file of its own */
            snprintf(path, sizeof path, "%s/%s.rank%lld.csv", s->o->out, stem, (long long)s->rank);
    }
    csv_file *cf = calloc(1, sizeof *cf);
    FILE *f = cf ? fopen(path, "wb") : NULL;
    if (!f) {
        fprintf(stderr, "jager export: cannot create %s: %s\n", path, strerror(errno));
        free(cf);
        ex_table_free(t);
        return NULL;
    }
    cf->t = t;
    cf->f = f;
    for (uint32_t c = 0; c < t->ncols; c++) {
        if (c) fputc(',', f);
        tu_csv_cell(f, t->cols[c].name, (size_t)-1, s->o->csv_raw);
    }
    fputs("\r\n", f);
    if (t->ncols > s->cells_cap) {
        ex_cell *nc = realloc(s->cells, t->ncols * sizeof *nc);
        if (!nc) {
            fclose(f);
            free(cf);
            ex_table_free(t);
            fprintf(stderr, "jager export: out of memory\n");
            return NULL;
        }
        s->cells = nc;
        s->cells_cap = t->ncols;
    }
    s->by_type[type] = cf;
    return cf;
}

static int csv_event(void *st, const jager_event *ev)
{
    csv_state *s = st;
    uint16_t type = ex_table_type(ev->type);
    if (s->skip[type]) return 0;
    csv_file *cf = csv_file_for(s, type);
    if (!cf) return s->skip[type] ? 0 : -1;
    int rc = ex_table_row(cf->t, s->r, ev, s->cells, &s->scratch);
    if (rc == 1) return 0;
    if (rc < 0) {
        fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    FILE *f = cf->f;
    for (uint32_t c = 0; c < cf->t->ncols; c++) {
        const ex_cell *v = &s->cells[c];
        if (c) fputc(',', f);
        if (v->null) continue;
        switch (cf->t->cols[c].kind) {
        case EX_I64:
        case EX_U64: {
            /* the hot path: integers without printf */
            char tmp[24];
            size_t k = sizeof tmp;
            int neg = cf->t->cols[c].kind == EX_I64 && v->i < 0;
            uint64_t x = neg ? (uint64_t)(-(v->i + 1)) + 1 : (uint64_t)v->i;
            do {
                tmp[--k] = (char)('0' + x % 10);
                x /= 10;
            } while (x);
            if (neg) tmp[--k] = '-';
            fwrite(tmp + k, 1, sizeof tmp - k, f);
            break;
        }
        case EX_F64: fprintf(f, "%.17g", v->f); break;
        case EX_BOOL: fputs(v->i ? "true" : "false", f); break;
        case EX_STR:
            if (v->n == 0) fputs("\"\"", f);
            else tu_csv_cell(f, v->s, v->n, s->o->csv_raw);
            break;
        }
    }
    fputs("\r\n", f);
    if (ferror(f)) {
        fprintf(stderr, "jager export: writing %s/%s.csv failed: %s\n", s->o->out, cf->t->name, strerror(errno));
        return -1;
    }
    return 0;
}

/* Job mode: the next part's events follow (their type ids are that recording's). */
static int csv_part(void *st, jager_reader *r, const export_part *p)
{
    csv_state *s = st;
    size_t n = 0;
    for (uint32_t i = 0; i < 65536; i++) n += s->by_type[i] != NULL;
    if (n) {
        csv_file **v = realloc(s->retired, (s->nretired + n) * sizeof *v);
        if (!v) {
            fprintf(stderr, "jager export: out of memory\n");
            return -1;
        }
        s->retired = v;
        for (uint32_t i = 0; i < 65536; i++)
            if (s->by_type[i]) s->retired[s->nretired++] = s->by_type[i];
    }
    memset(s->by_type, 0, sizeof s->by_type);
    memset(s->skip, 0, sizeof s->skip);
    s->r = r;
    s->rank = p->rank >= 0 ? p->rank : (int64_t)p->index;
    s->clock = p->mpi;
    s->part_index = p->index;
    return 0;
}

static csv_file *csv_nth(const csv_state *s, size_t i)
{
    return i < 65536 ? s->by_type[i] : s->retired[i - 65536];
}

static int csv_finish(void *st)
{
    csv_state *s = st;
    int rc = 0;
    for (size_t i = 0; i < 65536 + s->nretired; i++) {
        csv_file *cf = csv_nth(s, i);
        if (!cf) continue;
        if (fclose(cf->f) != 0) {
            fprintf(stderr, "jager export: closing %s.csv failed: %s\n", cf->t->name, strerror(errno));
            rc = -1;
        }
        cf->f = NULL;
    }
    return rc;
}

static void csv_free(void *st)
{
    csv_state *s = st;
    if (!s) return;
    for (size_t i = 0; i < 65536 + s->nretired; i++) {
        csv_file *cf = csv_nth(s, i);
        if (!cf) continue;
        if (cf->f) fclose(cf->f);
        ex_table_free(cf->t);
        free(cf);
    }
    free(s->retired);
    free(s->cells);
    tu_buf_free(&s->scratch);
    free(s);
}

const exporter export_csv = {"csv", ".csv", 0, csv_open, csv_event, csv_finish, csv_free, csv_part};
