/* `jager export --format parquet`: OUT/ holds one <type>.parquet per event type present
 * (span.parquet, log.parquet, gc.pause.parquet, …) with the columns of export_table.h.
 *
 * Files follow formats.md §1: v1 data pages, one page per column chunk, flat schema
 * (REQUIRED columns without definition levels, OPTIONAL ones with RLE/bit-packed levels),
 * PLAIN values, and for string columns a per-row-group dictionary page plus RLE_DICTIONARY
 * indices when --parquet-dict allows it (auto: when the distinct values are at most half
 * the non-null values). Pages are optionally ZSTD-compressed; headers and footer never are.
 * Statistics: null counts for every column chunk, min/max for integer columns (so readers
 * skip row groups on time filters), with TYPE_ORDER column orders.
 *
 * Memory is bounded: rows are buffered column by column and flushed as a row group every
 * --row-group-rows rows or when the buffers reach 64 MiB, whichever comes first; only the
 * small per-chunk footer facts are kept until the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "export.h"
#include "enc_json.h"
#include "enc_parquet.h"
#include "enc_thrift.h"
#include "export_table.h"
#include "strdict.h"

#define PQ_MAX_BUFFERED (64u << 20)  /* flush a row group beyond this many buffered bytes */
#define PQ_DICT_MAX_BYTES (8u << 20) /* give up on a column's dictionary beyond this */

/* Parquet enum values (formats.md §1.3). */
enum { PT_BOOLEAN = 0, PT_INT64 = 2, PT_DOUBLE = 5, PT_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CT_UTF8 = 0, CT_UINT_64 = 14 };

typedef struct pq_chunk {
    int64_t data_page_offset;
    int64_t dict_page_offset; /* -1: no dictionary page */
    int64_t uncompressed, compressed; /* page headers included */
    int64_t num_values, null_count;
    int has_minmax;           /* integer columns with a non-null value */
    int64_t min, max;         /* signed or unsigned order per the column's kind */
} pq_chunk;

typedef struct pq_rowgroup {
    pq_chunk *chunks;
    int64_t rows, file_offset, uncompressed, compressed;
} pq_rowgroup;

typedef struct pq_colbuf {
    tu_buf values;   /* PLAIN non-null values; booleans one byte each until flushed */
    uint8_t *defs;   /* nullable columns: 1 present, 0 null, per row */
    size_t defs_cap;
    uint32_t *idx;   /* string columns: dictionary index of each non-null value */
    size_t nidx, idx_cap;
    tu_strdict dict;
    int dict_dead;   /* this row group's dictionary grew too large */
    int64_t nulls;
    int has_minmax;  /* integer statistics of this row group */
    int64_t min, max;
} pq_colbuf;

typedef struct pq_file {
    ex_table *t;
    FILE *f;
    char *path;
    int64_t off;
    pq_colbuf *cols;
    uint32_t rows;     /* buffered rows */
    size_t buffered;   /* buffered bytes */
    pq_rowgroup *rgs;
    size_t nrgs, rgs_cap;
    int64_t total_rows;
} pq_file;

typedef struct pq_state {
    jager_reader *r;
    const export_opts *o;
    pq_file *by_type[65536];
    uint8_t skip[65536];
    ex_cell *cells;
    uint32_t cells_cap;
    tu_buf scratch, page, comp, hdr;
    /* a job's output (o->job): as export_csv.c, a `rank` column first, one file per type */
    int64_t rank;
    const struct jm_mpi *clock; /* the job's clock (export_part.mpi): times mapped to it */
    uint32_t part_index;
    pq_file **retired;
    size_t nretired;
} pq_state;

static int write_raw(pq_file *pf, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, pf->f) != n) {
        fprintf(stderr, "jager export: writing %s failed: %s\n", pf->path, strerror(errno));
        return -1;
    }
    pf->off += (int64_t)n;
    return 0;
}

static int oom(void)
{
    fprintf(stderr, "jager export: out of memory\n");
    return -1;
}

/* Write one page (header + optionally compressed body); adds its sizes to \p ch. */
static int write_page(pq_state *s, pq_file *pf, int type, const tu_buf *body, int32_t num_values, int encoding,
                      pq_chunk *ch)
{
    const uint8_t *data = body->data ? body->data : (const uint8_t *)"";
    size_t len = body->len;
    if (len > INT32_MAX) {
        fprintf(stderr, "jager export: %s: page over 2 GiB (lower --row-group-rows)\n", pf->path);
        return -1;
    }
    if (s->o->parquet_codec == 6) {
        size_t bound = ZSTD_compressBound(len);
        s->comp.len = 0;
        if (s->comp.cap < bound) {
            uint8_t *d = realloc(s->comp.data, bound);
            if (!d) return oom();
            s->comp.data = d;
            s->comp.cap = bound;
        }
        size_t n = ZSTD_compress(s->comp.data, bound, data, len, s->o->zstd_level);
        if (ZSTD_isError(n)) {
            fprintf(stderr, "jager export: zstd: %s\n", ZSTD_getErrorName(n));
            return -1;
        }
        s->comp.len = n;
        data = s->comp.data;
    }
    size_t clen = s->o->parquet_codec == 6 ? s->comp.len : len;

    s->hdr.len = 0;
    th_writer w;
    th_init(&w, &s->hdr);
    th_field_i32(&w, 1, type);
    th_field_i32(&w, 2, (int32_t)len);
    th_field_i32(&w, 3, (int32_t)clen);
    if (type == PAGE_DATA) {
        th_field_struct_begin(&w, 5); /* DataPageHeader */
        th_field_i32(&w, 1, num_values);
        th_field_i32(&w, 2, encoding);
        th_field_i32(&w, 3, ENC_RLE); /* definition levels */
        th_field_i32(&w, 4, ENC_RLE); /* repetition levels */
        th_struct_end(&w);
    } else {
        th_field_struct_begin(&w, 7); /* DictionaryPageHeader */
        th_field_i32(&w, 1, num_values);
        th_field_i32(&w, 2, ENC_PLAIN);
        th_struct_end(&w);
    }
    if (th_finish(&w)) return oom();
    if (write_raw(pf, s->hdr.data, s->hdr.len) || write_raw(pf, data, clen)) return -1;
    ch->uncompressed += (int64_t)(s->hdr.len + len);
    ch->compressed += (int64_t)(s->hdr.len + clen);
    return 0;
}

static int use_dictionary(const pq_state *s, const ex_col *col, const pq_colbuf *cb)
{
    if (col->kind != EX_STR || cb->dict_dead || s->o->dict_mode == EXPORT_DICT_NEVER || cb->nidx == 0) return 0;
    if (s->o->dict_mode == EXPORT_DICT_ALWAYS) return 1;
    return (uint64_t)cb->dict.count * 2 <= cb->nidx;
}

static int flush_rowgroup(pq_state *s, pq_file *pf)
{
    if (pf->rows == 0) return 0;
    const ex_table *t = pf->t;
    if (pf->nrgs == pf->rgs_cap) {
        size_t cap = pf->rgs_cap ? pf->rgs_cap * 2 : 8;
        pq_rowgroup *g = realloc(pf->rgs, cap * sizeof *g);
        if (!g) return oom();
        pf->rgs = g;
        pf->rgs_cap = cap;
    }
    pq_rowgroup *rg = &pf->rgs[pf->nrgs];
    memset(rg, 0, sizeof *rg);
    rg->chunks = calloc(t->ncols, sizeof *rg->chunks);
    if (!rg->chunks) return oom();
    pf->nrgs++;
    rg->rows = pf->rows;
    rg->file_offset = pf->off;

    for (uint32_t c = 0; c < t->ncols; c++) {
        const ex_col *col = &t->cols[c];
        pq_colbuf *cb = &pf->cols[c];
        pq_chunk *ch = &rg->chunks[c];
        ch->dict_page_offset = -1;
        ch->num_values = pf->rows;
        ch->null_count = cb->nulls;
        ch->has_minmax = cb->has_minmax;
        ch->min = cb->min;
        ch->max = cb->max;
        int dict = use_dictionary(s, col, cb);
        if (dict) {
            ch->dict_page_offset = pf->off;
            if (write_page(s, pf, PAGE_DICTIONARY, &cb->dict.plain, (int32_t)cb->dict.count, ENC_PLAIN, ch)) return -1;
        }
        ch->data_page_offset = pf->off;

        tu_buf *p = &s->page;
        p->len = 0;
        if (col->nullable) {
            uint32_t zero = 0;
            size_t at = p->len;
            if (tu_buf_put(p, &zero, 4) || pq_hybrid_u8(p, cb->defs, pf->rows, 1)) return oom();
            uint32_t levels = (uint32_t)(p->len - at - 4);
            memcpy(p->data + at, &levels, 4);
        }
        int rc;
        if (dict) {
            uint8_t width = (uint8_t)pq_bit_width(cb->dict.count ? cb->dict.count - 1 : 0);
            rc = tu_buf_putc(p, width) || pq_hybrid_u32(p, cb->idx, cb->nidx, width);
        } else if (col->kind == EX_BOOL) {
            rc = pq_plain_bools(p, cb->values.data, cb->values.len);
        } else {
            rc = tu_buf_put(p, cb->values.data, cb->values.len);
        }
        if (rc) return oom();
        if (write_page(s, pf, PAGE_DATA, p, (int32_t)pf->rows, dict ? ENC_RLE_DICTIONARY : ENC_PLAIN, ch)) return -1;
        rg->uncompressed += ch->uncompressed;
        rg->compressed += ch->compressed;

        cb->values.len = 0;
        cb->nidx = 0;
        cb->nulls = 0;
        cb->has_minmax = 0;
        cb->dict_dead = 0;
        tu_strdict_clear(&cb->dict);
    }
    pf->total_rows += pf->rows;
    pf->rows = 0;
    pf->buffered = 0;
    return 0;
}

static int add_row(pq_state *s, pq_file *pf, const ex_cell *cells)
{
    const ex_table *t = pf->t;
    size_t before = 0;
    for (uint32_t c = 0; c < t->ncols; c++) {
        const ex_col *col = &t->cols[c];
        pq_colbuf *cb = &pf->cols[c];
        const ex_cell *v = &cells[c];
        before += cb->values.len;
        if (col->nullable) {
            if (pf->rows >= cb->defs_cap) {
                size_t cap = cb->defs_cap ? cb->defs_cap * 2 : 1024;
                uint8_t *d = realloc(cb->defs, cap);
                if (!d) return oom();
                cb->defs = d;
                cb->defs_cap = cap;
            }
            cb->defs[pf->rows] = !v->null;
            if (v->null) {
                cb->nulls++;
                continue;
            }
        }
        /* A REQUIRED column never gets a null from export_table; zero is the safe fill. */
        int rc = 0;
        switch (col->kind) {
        case EX_I64:
        case EX_U64: {
            int64_t x = v->null ? 0 : v->i;
            rc = tu_buf_put(&cb->values, &x, 8);
            /* min/max in the column's sort order: signed INT64, or unsigned for UINT_64 */
            int u = col->kind == EX_U64;
            if (!cb->has_minmax) {
                cb->min = cb->max = x;
                cb->has_minmax = 1;
            } else if (u) {
                if ((uint64_t)x < (uint64_t)cb->min) cb->min = x;
                if ((uint64_t)x > (uint64_t)cb->max) cb->max = x;
            } else {
                if (x < cb->min) cb->min = x;
                if (x > cb->max) cb->max = x;
            }
            break;
        }
        case EX_F64: {
            double x = v->null ? 0 : v->f;
            rc = tu_buf_put(&cb->values, &x, 8);
            break;
        }
        case EX_BOOL: rc = tu_buf_putc(&cb->values, v->null ? 0 : (uint8_t)(v->i != 0)); break;
        case EX_STR: {
            uint32_t n = v->null ? 0 : v->n;
            const char *str = v->null ? "" : v->s;
            rc = tu_buf_put(&cb->values, &n, 4) || tu_buf_put(&cb->values, str, n);
            if (rc || cb->dict_dead || s->o->dict_mode == EXPORT_DICT_NEVER) break;
            int64_t idx = tu_strdict_put(&cb->dict, str, n);
            if (idx < 0) return oom();
            if (cb->nidx == cb->idx_cap) {
                size_t cap = cb->idx_cap ? cb->idx_cap * 2 : 1024;
                uint32_t *d = realloc(cb->idx, cap * sizeof *d);
                if (!d) return oom();
                cb->idx = d;
                cb->idx_cap = cap;
            }
            cb->idx[cb->nidx++] = (uint32_t)idx;
            if (cb->dict.plain.len > PQ_DICT_MAX_BYTES) cb->dict_dead = 1;
            break;
        }
        }
        if (rc) return oom();
    }
    size_t after = 0;
    for (uint32_t c = 0; c < t->ncols; c++) after += pf->cols[c].values.len;
    pf->buffered += (after - before) + t->ncols * 5u; /* values + levels + indices */
    pf->rows++;
    if (pf->rows >= s->o->row_group_rows || pf->buffered >= PQ_MAX_BUFFERED) return flush_rowgroup(s, pf);
    return 0;
}

static void *pq_open(jager_reader *r, const export_opts *o)
{
    if (export_mkdirs(o->out) != 0) {
        fprintf(stderr, "jager export: cannot create folder %s: %s\n", o->out, strerror(errno));
        return NULL;
    }
    pq_state *s = calloc(1, sizeof *s);
    if (!s) {
        oom();
        return NULL;
    }
    s->r = r;
    s->o = o;
    return s;
}

static void pq_file_free(pq_file *pf)
{
    if (!pf) return;
    if (pf->f) fclose(pf->f);
    if (pf->cols)
        for (uint32_t c = 0; c < pf->t->ncols; c++) {
            tu_buf_free(&pf->cols[c].values);
            free(pf->cols[c].defs);
            free(pf->cols[c].idx);
            tu_strdict_free(&pf->cols[c].dict);
        }
    free(pf->cols);
    for (size_t i = 0; i < pf->nrgs; i++) free(pf->rgs[i].chunks);
    free(pf->rgs);
    free(pf->path);
    ex_table_free(pf->t);
    free(pf);
}

static pq_file *pq_file_for(pq_state *s, uint16_t type)
{
    if (s->by_type[type] || s->skip[type]) return s->by_type[type];
    ex_table *t = s->o->job ? ex_table_new_ranked(s->r, type, s->rank, s->clock, s->part_index) : ex_table_new(s->r, type);
    if (!t) {
        s->skip[type] = 1;
        return NULL;
    }
    char stem[200];
    ex_table_file_stem(t, stem, sizeof stem);
    int clash = 0;
    for (size_t i = 0; i < s->nretired; i++) { /* an earlier part's file of this type */
        pq_file *old = s->retired[i];
        if (ex_table_same_columns(old->t, t)) {
            ex_table_free(old->t);
            old->t = t;
            s->retired[i] = s->retired[--s->nretired];
            s->by_type[type] = old;
            return old;
        }
        char ostem[200];
        ex_table_file_stem(old->t, ostem, sizeof ostem);
        if (!strcmp(ostem, stem)) clash = 1; /* same name, other columns (another build): a file of its own */
    }
    if (clash) {
        size_t l = strlen(stem);
        snprintf(stem + l, sizeof stem - l, ".rank%lld", (long long)s->rank);
    }
    pq_file *pf = calloc(1, sizeof *pf);
    if (!pf) {
        ex_table_free(t);
        oom();
        return NULL;
    }
    pf->t = t;
    size_t plen = strlen(s->o->out) + strlen(stem) + 10;
    pf->path = malloc(plen);
    pf->cols = calloc(t->ncols, sizeof *pf->cols);
    if (t->ncols > s->cells_cap) {
        ex_cell *nc = realloc(s->cells, t->ncols * sizeof *nc);
        if (nc) {
            s->cells = nc;
            s->cells_cap = t->ncols;
        }
    }
    if (!pf->path || !pf->cols || s->cells_cap < t->ncols) {
        pq_file_free(pf);
        oom();
        return NULL;
    }
    snprintf(pf->path, plen, "%s/%s.parquet", s->o->out, stem);
    pf->f = fopen(pf->path, "wb");
    if (!pf->f) {
        fprintf(stderr, "jager export: cannot create %s: %s\n", pf->path, strerror(errno));
        pq_file_free(pf);
        return NULL;
    }
    if (write_raw(pf, "PAR1", 4)) {
        pq_file_free(pf);
        return NULL;
    }
    s->by_type[type] = pf;
    return pf;
}

static int pq_event(void *st, const jager_event *ev)
{
    pq_state *s = st;
    uint16_t type = ex_table_type(ev->type);
    if (s->skip[type]) return 0;
    pq_file *pf = pq_file_for(s, type);
    if (!pf) return s->skip[type] ? 0 : -1;
    int rc = ex_table_row(pf->t, s->r, ev, s->cells, &s->scratch);
    if (rc == 1) return 0;
    if (rc < 0) return oom();
    return add_row(s, pf, s->cells);
}

/* key_value_metadata entry with UTF-8-clean text. */
static void kv(th_writer *w, tu_buf *tmp, const char *key, const char *value)
{
    th_elem_struct_begin(w);
    tmp->len = 0;
    if (ex_utf8_clean(tmp, key, strlen(key))) w->err = 1;
    th_field_binary(w, 1, tmp->data, tmp->len);
    tmp->len = 0;
    if (ex_utf8_clean(tmp, value, strlen(value))) w->err = 1;
    th_field_binary(w, 2, tmp->data, tmp->len);
    th_struct_end(w);
}

static int write_footer(pq_state *s, pq_file *pf)
{
    const ex_table *t = pf->t;
    tu_buf *b = &s->hdr, tmp = {0};
    b->len = 0;
    th_writer w;
    th_init(&w, b);
    th_field_i32(&w, 1, 1); /* version */
    th_field_list_begin(&w, 2, TH_STRUCT, t->ncols + 1);
    th_elem_struct_begin(&w); /* root */
    th_field_string(&w, 4, "schema");
    th_field_i32(&w, 5, (int32_t)t->ncols);
    th_struct_end(&w);
    for (uint32_t c = 0; c < t->ncols; c++) {
        const ex_col *col = &t->cols[c];
        static const int ptype[] = {[EX_I64] = PT_INT64, [EX_U64] = PT_INT64, [EX_F64] = PT_DOUBLE,
                                    [EX_BOOL] = PT_BOOLEAN, [EX_STR] = PT_BYTE_ARRAY};
        th_elem_struct_begin(&w);
        th_field_i32(&w, 1, ptype[col->kind]);
        th_field_i32(&w, 3, col->nullable ? 1 : 0);
        th_field_string(&w, 4, col->name);
        if (col->kind == EX_STR) {
            th_field_i32(&w, 6, CT_UTF8);
            th_field_struct_begin(&w, 10); /* LogicalType */
            th_field_struct_begin(&w, 1);  /* STRING */
            th_struct_end(&w);
            th_struct_end(&w);
        } else if (col->kind == EX_U64) {
            th_field_i32(&w, 6, CT_UINT_64);
            th_field_struct_begin(&w, 10); /* LogicalType */
            th_field_struct_begin(&w, 10); /* INTEGER */
            th_field_i8(&w, 1, 64);
            th_field_bool(&w, 2, 0);
            th_struct_end(&w);
            th_struct_end(&w);
        }
        th_struct_end(&w);
    }
    th_field_i64(&w, 3, pf->total_rows);
    th_field_list_begin(&w, 4, TH_STRUCT, (uint32_t)pf->nrgs);
    for (size_t g = 0; g < pf->nrgs; g++) {
        const pq_rowgroup *rg = &pf->rgs[g];
        th_elem_struct_begin(&w);
        th_field_list_begin(&w, 1, TH_STRUCT, t->ncols);
        for (uint32_t c = 0; c < t->ncols; c++) {
            const ex_col *col = &t->cols[c];
            const pq_chunk *ch = &rg->chunks[c];
            static const int ptype[] = {[EX_I64] = PT_INT64, [EX_U64] = PT_INT64, [EX_F64] = PT_DOUBLE,
                                        [EX_BOOL] = PT_BOOLEAN, [EX_STR] = PT_BYTE_ARRAY};
            th_elem_struct_begin(&w);      /* ColumnChunk */
            th_field_i64(&w, 2, 0);        /* file_offset: deprecated, must be present */
            th_field_struct_begin(&w, 3);  /* ColumnMetaData */
            th_field_i32(&w, 1, ptype[col->kind]);
            int dict = ch->dict_page_offset >= 0;
            th_field_list_begin(&w, 2, TH_I32, dict ? 3 : 2);
            th_elem_i32(&w, ENC_PLAIN);
            th_elem_i32(&w, ENC_RLE);
            if (dict) th_elem_i32(&w, ENC_RLE_DICTIONARY);
            th_field_list_begin(&w, 3, TH_BINARY, 1);
            th_elem_binary(&w, col->name, strlen(col->name));
            th_field_i32(&w, 4, s->o->parquet_codec);
            th_field_i64(&w, 5, ch->num_values);
            th_field_i64(&w, 6, ch->uncompressed);
            th_field_i64(&w, 7, ch->compressed);
            th_field_i64(&w, 9, ch->data_page_offset);
            if (dict) th_field_i64(&w, 11, ch->dict_page_offset);
            th_field_struct_begin(&w, 12); /* Statistics: null_count; integer min/max (PLAIN) */
            th_field_i64(&w, 3, ch->null_count);
            if (ch->has_minmax) {
                th_field_binary(&w, 5, &ch->max, 8);
                th_field_binary(&w, 6, &ch->min, 8);
            }
            th_struct_end(&w);
            th_struct_end(&w);
            th_struct_end(&w);
        }
        th_field_i64(&w, 2, rg->uncompressed);
        th_field_i64(&w, 3, rg->rows);
        th_field_i64(&w, 5, rg->file_offset);
        th_field_i64(&w, 6, rg->compressed);
        th_struct_end(&w);
    }
    /* key_value_metadata: what the numbers mean, and the run's metadata. */
    size_t nmeta = jager_reader_meta_count(s->r);
    th_field_list_begin(&w, 5, TH_STRUCT, (uint32_t)(4 + nmeta));
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(s->r, &info);
    char num[32];
    kv(&w, &tmp, "jager.event_type", t->name);
    kv(&w, &tmp, "jager.time_base",
       t->clock ? "ns on the job's clock: MPI rank 0's monotonic clock, every rank's times aligned to it "
                  "(clock offsets, clock-condition repair; docs/mpi.md)"
                : "ns on the recording's monotonic clock (jager_now_ns); unix ns = t - jager.start_ns + jager.start_unix_ns");
    snprintf(num, sizeof num, "%llu", (unsigned long long)info.start_ns);
    kv(&w, &tmp, "jager.start_ns", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)info.start_unix_ns);
    kv(&w, &tmp, "jager.start_unix_ns", num);
    for (size_t i = 0; i < nmeta; i++) {
        const char *k = "", *v = "";
        if (jager_reader_meta_at(s->r, i, &k, &v) != JAGER_OK || !k) k = "";
        kv(&w, &tmp, k, v ? v : "");
    }
    th_field_string(&w, 6, "jager version " JAGER_VERSION_STRING " (build export)");
    /* column_orders: TYPE_ORDER for every leaf, which min_value/max_value require */
    th_field_list_begin(&w, 7, TH_STRUCT, t->ncols);
    for (uint32_t c = 0; c < t->ncols; c++) {
        th_elem_struct_begin(&w);
        th_field_struct_begin(&w, 1);
        th_struct_end(&w);
        th_struct_end(&w);
    }
    int rc = th_finish(&w);
    tu_buf_free(&tmp);
    if (rc) return oom();
    uint32_t len = (uint32_t)b->len;
    if (write_raw(pf, b->data, b->len) || write_raw(pf, &len, 4) || write_raw(pf, "PAR1", 4)) return -1;
    return 0;
}

/* Job mode: the next part's events follow (their type ids are that recording's). */
static int pq_part(void *st, jager_reader *r, const export_part *p)
{
    pq_state *s = st;
    size_t n = 0;
    for (uint32_t i = 0; i < 65536; i++) n += s->by_type[i] != NULL;
    if (n) {
        pq_file **v = realloc(s->retired, (s->nretired + n) * sizeof *v);
        if (!v) return oom();
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

static pq_file *pq_nth(const pq_state *s, size_t i)
{
    return i < 65536 ? s->by_type[i] : s->retired[i - 65536];
}

static int pq_finish(void *st)
{
    pq_state *s = st;
    int rc = 0;
    for (size_t i = 0; i < 65536 + s->nretired; i++) {
        pq_file *pf = pq_nth(s, i);
        if (!pf) continue;
        if (flush_rowgroup(s, pf) || write_footer(s, pf)) rc = -1;
        if (fclose(pf->f) != 0 && rc == 0) {
            fprintf(stderr, "jager export: closing %s failed: %s\n", pf->path, strerror(errno));
            rc = -1;
        }
        pf->f = NULL;
    }
    return rc;
}

static void pq_free(void *st)
{
    pq_state *s = st;
    if (!s) return;
    for (size_t i = 0; i < 65536 + s->nretired; i++) pq_file_free(pq_nth(s, i));
    free(s->retired);
    free(s->cells);
    tu_buf_free(&s->scratch);
    tu_buf_free(&s->page);
    tu_buf_free(&s->comp);
    tu_buf_free(&s->hdr);
    free(s);
}

const exporter export_parquet = {"parquet", ".parquet", 0, pq_open, pq_event, pq_finish, pq_free, pq_part};
