#include "export_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc_json.h"
#include "model.h"
#include "model_mpi.h"

typedef struct col_spec {
    const char *name;
    uint8_t kind, nullable;
} col_spec;

/* Core tables. Every core table starts with `thread`. */
static const col_spec span_cols[] = {
    {"thread", EX_I64, 0},   {"site", EX_I64, 0},        {"name", EX_STR, 1},    {"file", EX_STR, 1},
    {"line", EX_I64, 0},     {"start_ns", EX_I64, 0},    {"end_ns", EX_I64, 0},  {"duration_ns", EX_I64, 0},
    {"span_id", EX_I64, 0},  {"parent_id", EX_I64, 0},   {"bytes", EX_I64, 0},
    /* the threads that number span_id and parent_id: the recording thread, or for a span of
     * a task that moved (JAGER_EV_SPAN_X) its begin thread and its parent's */
    {"begin_thread", EX_I64, 0}, {"parent_thread", EX_I64, 0},
};
static const col_spec log_cols[] = {
    {"thread", EX_I64, 0},      {"time_ns", EX_I64, 0},     {"severity", EX_I64, 0},
    {"severity_text", EX_STR, 0}, {"truncated", EX_BOOL, 0}, {"span_id", EX_I64, 0},
    {"site", EX_I64, 0},        {"site_name", EX_STR, 1},   {"trace_id", EX_STR, 1},
    {"ctx_span_id", EX_STR, 1}, {"body", EX_STR, 0},        {"attributes", EX_STR, 1},
};
static const col_spec counter_cols[] = {
    {"thread", EX_I64, 0}, {"time_ns", EX_I64, 0}, {"counter", EX_I64, 0}, {"name", EX_STR, 1},
    {"unit", EX_STR, 1},   {"kind", EX_STR, 1},    {"value", EX_F64, 0},
};
static const col_spec mark_cols[] = {{"thread", EX_I64, 0}, {"time_ns", EX_I64, 0}, {"name", EX_STR, 1}};
static const col_spec drop_cols[] = {
    {"thread", EX_I64, 0}, {"time_ns", EX_I64, 0}, {"reason", EX_STR, 0}, {"count", EX_I64, 0}};
static const col_spec diag_cols[] = {{"thread", EX_I64, 0},   {"time_ns", EX_I64, 0}, {"severity", EX_I64, 0},
                                     {"source", EX_STR, 1},   {"text", EX_STR, 0}};
/* span_thread: the thread that numbers span_id — the recording thread, or the span's begin
 * thread when set after its task moved (JAGER_SPAN_REF_MOVED): join spans on (begin_thread, span_id) */
static const col_spec span_attr_cols[] = {{"thread", EX_I64, 0},  {"site", EX_I64, 0},
                                          {"site_name", EX_STR, 1}, {"span_id", EX_I64, 0},
                                          {"attributes", EX_STR, 0}, {"span_thread", EX_I64, 0}};
static const col_spec span_error_cols[] = {{"thread", EX_I64, 0},   {"time_ns", EX_I64, 0},
                                           {"site", EX_I64, 0},     {"site_name", EX_STR, 1},
                                           {"span_id", EX_I64, 0},  {"message", EX_STR, 0},
                                           {"span_thread", EX_I64, 0}};
static const col_spec context_cols[] = {{"thread", EX_I64, 0},   {"time_ns", EX_I64, 0},  {"set", EX_BOOL, 0},
                                        {"trace_id", EX_STR, 1}, {"ctx_span_id", EX_STR, 1},
                                        {"first_span", EX_I64, 0}, {"flags", EX_I64, 0}};
static const col_spec task_cols[] = {{"thread", EX_I64, 0}, {"time_ns", EX_I64, 0}, {"task", EX_I64, 0},
                                     {"first_span", EX_I64, 0}};

static const struct {
    uint16_t type;
    const col_spec *cols;
    uint32_t n;
} core_tables[] = {
#define T(id, arr) {id, arr, sizeof arr / sizeof arr[0]}
    T(JAGER_EV_SPAN, span_cols),      T(JAGER_EV_LOG, log_cols),
    T(JAGER_EV_COUNTER, counter_cols), T(JAGER_EV_MARK, mark_cols),
    T(JAGER_EV_DROP, drop_cols),      T(JAGER_EV_DIAG, diag_cols),
    T(JAGER_EV_SPAN_ATTR, span_attr_cols), T(JAGER_EV_SPAN_ERROR, span_error_cols),
    T(JAGER_EV_CONTEXT, context_cols), T(JAGER_EV_TASK, task_cols),
#undef T
};

static const char *const core_names[] = {"pad", "span", "log", "counter", "mark", "drop", "diag", "span_attr",
                                         "span_error", "context", "task"};

static int add_col(ex_table *t, const char *name, size_t len, uint8_t kind, uint8_t nullable)
{
    char *n = malloc(len + 1);
    if (!n) return -1;
    memcpy(n, name, len);
    n[len] = '\0';
    /* Field names are unique within a type, but may collide with thread/time_ns or a
     * generated `<site>_name`: suffix until unique. */
    for (int k = 2; k < 100; k++) {
        int clash = 0;
        for (uint32_t c = 0; c < t->ncols; c++)
            if (!strcmp(t->cols[c].name, n)) clash = 1;
        if (!clash) break;
        char *m = malloc(len + 8);
        if (!m) { free(n); return -1; }
        snprintf(m, len + 8, "%.*s_%d", (int)len, name, k);
        free(n);
        n = m;
    }
    t->cols[t->ncols++] = (ex_col){.name = n, .kind = kind, .nullable = nullable};
    return 0;
}

static ex_table *table_new(const jager_reader *r, uint16_t type, int ranked, int64_t rank, const jm_mpi *clock,
                           uint32_t part)
{
    if (type == JAGER_EV_PAD) return NULL;
    ex_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->type = type;
    t->ranked = (uint8_t)ranked;
    t->rank = rank;
    t->clock = clock;
    t->part = part;
    const jager_type_desc *d = jager_reader_type(r, type);
    for (size_t i = 0; i < sizeof core_tables / sizeof core_tables[0]; i++) {
        if (core_tables[i].type != type) continue;
        t->builtin = 1;
        t->cols = calloc(core_tables[i].n + 1u, sizeof *t->cols);
        t->name = strdup(d && d->name ? d->name : core_names[type]);
        if (!t->cols || !t->name) goto fail;
        if (ranked && add_col(t, "rank", 4, EX_I64, 0)) goto fail;
        for (uint32_t c = 0; c < core_tables[i].n; c++) {
            const col_spec *s = &core_tables[i].cols[c];
            if (add_col(t, s->name, strlen(s->name), s->kind, s->nullable)) goto fail;
        }
        return t;
    }
    if (!d || d->builtin || !d->name || d->nfields > JAGER_MAX_FIELDS) goto fail; /* unknown core type */
    t->desc = d;
    t->name = strdup(d->name);
    /* A plugin type named like a core table ("span") or like another type of the file: its
     * file must still be its own (ex_table_file_stem). */
    for (size_t i = 0; i < sizeof core_names / sizeof core_names[0]; i++)
        if (strcmp(d->name, core_names[i]) == 0) t->shared_name = 1;
    if (jager_reader_type_by_name(r, d->name) != type) t->shared_name = 1;
    t->cols = calloc(3 + 2 * (size_t)d->nfields, sizeof *t->cols);
    if (!t->name || !t->cols) goto fail;
    if (ranked && add_col(t, "rank", 4, EX_I64, 0)) goto fail;
    if (add_col(t, "thread", 6, EX_I64, 0) || add_col(t, "time_ns", 7, EX_I64, 0)) goto fail;
    for (uint32_t f = 0; f < d->nfields; f++) {
        const jager_field_desc *fd = &d->fields[f];
        const char *fname = fd->name ? fd->name : "field";
        uint8_t kind;
        switch (fd->kind) {
        case JAGER_FIELD_U64:
        case JAGER_FIELD_STACK: kind = EX_U64; break;
        case JAGER_FIELD_F64: kind = EX_F64; break;
        case JAGER_FIELD_STRING: kind = EX_STR; break;
        case JAGER_FIELD_BOOL: kind = EX_BOOL; break;
        default: kind = EX_I64; /* I64, TIME_NS, DURATION_NS, BYTES, SITE, unknown kinds */
        }
        t->field_col[f] = (uint8_t)t->ncols;
        /* Every plugin column is nullable: a record shorter than its type (a damaged or
         * older writer) yields nulls rather than invented zeros. */
        if (add_col(t, fname, strlen(fname), kind, 1)) goto fail;
        if (fd->kind == JAGER_FIELD_SITE) {
            char nm[160];
            int l = snprintf(nm, sizeof nm, "%s_name", fname);
            if (l < 0 || (size_t)l >= sizeof nm || add_col(t, nm, (size_t)l, EX_STR, 1)) goto fail;
        }
    }
    return t;
fail:
    ex_table_free(t);
    return NULL;
}

ex_table *ex_table_new(const jager_reader *r, uint16_t type) { return table_new(r, type, 0, -1, NULL, 0); }

ex_table *ex_table_new_ranked(const jager_reader *r, uint16_t type, int64_t rank, const jm_mpi *clock, uint32_t part)
{
    return table_new(r, type, 1, rank, clock, part);
}

int ex_table_same_columns(const ex_table *a, const ex_table *b)
{
    if (a->ncols != b->ncols || a->builtin != b->builtin || a->ranked != b->ranked || strcmp(a->name, b->name))
        return 0;
    for (uint32_t c = 0; c < a->ncols; c++)
        if (strcmp(a->cols[c].name, b->cols[c].name) || a->cols[c].kind != b->cols[c].kind ||
            a->cols[c].nullable != b->cols[c].nullable)
            return 0;
    return 1;
}

void ex_table_free(ex_table *t)
{
    if (!t) return;
    for (uint32_t c = 0; c < t->ncols; c++) free(t->cols[c].name);
    free(t->cols);
    free(t->name);
    free(t);
}

/* Distinct types always get distinct files (issue 16 item 9): a name kept as it is
 * ([a-z0-9._-], the registered form) is unique among the file's types, so it is the stem;
 * a name that had to be changed (a '/', a space, upper case that a case-insensitive file
 * system would fold), or that a core table or another type shares, gets "~<type id>",
 * and '~' never survives in a kept name. */
void ex_table_file_stem(const ex_table *t, char *buf, size_t size)
{
    size_t j = 0;
    int changed = 0;
    for (const char *p = t->name; *p && j + 1 < size; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        changed |= !ok;
        buf[j++] = ok ? c : '_';
    }
    if (j == 0 || buf[0] == '.') { /* never "", ".", ".." or a hidden file */
        snprintf(buf, size, "type_%u", t->type);
        return;
    }
    if (j + 1 >= size && t->name[j]) changed = 1; /* cut short */
    buf[j] = '\0';
    if (!t->builtin && (changed || t->shared_name)) {
        if (j + 8 >= size) j = size > 9 ? size - 9 : 0;
        snprintf(buf + j, size - j, "~%u", t->type);
    }
}

/* ---- row filling ---- */

typedef struct row {
    ex_cell *c;
    uint32_t k; /* next column */
    tu_buf *scratch;
    int oom;
    const ex_table *t;
} row;

/* A time of the part on the table's clock: the job's (jm_mpi_job_time, the one mapping every
 * job output uses) or as recorded. */
static int64_t out_time(const row *w, uint64_t t)
{
    return (int64_t)(w->t->clock ? jm_mpi_job_time(w->t->clock, w->t->part, t) : t);
}

static void put_null(row *w) { w->c[w->k++] = (ex_cell){.null = 1}; }
static void put_i64(row *w, int64_t v) { w->c[w->k++] = (ex_cell){.i = v}; }
static void put_f64(row *w, double v) { w->c[w->k++] = (ex_cell){.f = v}; }
static void put_bool(row *w, int v) { w->c[w->k++] = (ex_cell){.i = v ? 1 : 0}; }

/* A string that outlives the row (reader tables or the current record); copied into the
 * scratch buffer only when it is not valid UTF-8. NULL becomes a null cell. */
static void put_str(row *w, const char *s, size_t n)
{
    if (!s) { put_null(w); return; }
    if (n == (size_t)-1) n = strlen(s);
    if (ex_utf8_valid(s, n)) {
        w->c[w->k++] = (ex_cell){.s = s, .n = (uint32_t)n};
        return;
    }
    size_t off = w->scratch->len;
    if (ex_utf8_clean(w->scratch, s, n)) w->oom = 1;
    w->c[w->k++] = (ex_cell){.in_scratch = 1, .i = (int64_t)off, .n = (uint32_t)(w->scratch->len - off)};
}

/* Begin/end a string built in the scratch buffer (already valid UTF-8). */
static size_t scratch_mark(row *w) { return w->scratch->len; }
static void put_scratch(row *w, size_t off)
{
    w->c[w->k++] = (ex_cell){.in_scratch = 1, .i = (int64_t)off, .n = (uint32_t)(w->scratch->len - off)};
}

/* A trace or span id as lowercase hex, or NULL when all zero (none). */
static void put_hex_id(row *w, const uint8_t *id, size_t n)
{
    char hex[33];
    if (!ex_hex(id, n, hex)) {
        put_null(w);
        return;
    }
    size_t off = scratch_mark(w);
    if (tu_buf_put(w->scratch, hex, 2 * n)) w->oom = 1;
    put_scratch(w, off);
}

static void put_site_name(row *w, const jager_reader *r, uint32_t site)
{
    const char *name = NULL;
    if (site && jager_reader_site(r, site, &name, NULL, NULL) != JAGER_OK) name = NULL;
    put_str(w, name, (size_t)-1);
}

static const char *drop_reason_name(uint32_t reason)
{
    static const char *const names[] = {"ring_full", "overwritten", "no_ring", "too_large", "sink", "bad_emit", "after_stop"};
    return reason < sizeof names / sizeof names[0] ? names[reason] : "unknown";
}

/* Trailing bytes of a record after its fixed part, bounded by the record. */
static const char *tail(const jager_record *h, size_t fixed, uint32_t len, uint32_t *out_len)
{
    size_t total = (size_t)h->words * 8u;
    if (fixed > total) { *out_len = 0; return ""; }
    if (len > total - fixed) len = (uint32_t)(total - fixed);
    *out_len = len;
    return (const char *)h + fixed;
}

static void fill_core(const ex_table *t, const jager_reader *r, const jager_event *ev, row *w)
{
    const jager_record *h = ev->rec;
    size_t total = (size_t)h->words * 8u;
    put_i64(w, ev->thread);
    switch (t->type) {
    case JAGER_EV_SPAN: {
        const jager_rec_span *s = (const void *)h;
        const char *name = NULL, *file = NULL;
        uint32_t line = 0;
        if (jager_reader_site(r, h->aux, &name, &file, &line) != JAGER_OK) name = file = NULL;
        put_i64(w, h->aux);
        put_str(w, name, (size_t)-1);
        put_str(w, file && *file ? file : NULL, (size_t)-1);
        put_i64(w, line);
        int64_t t0 = out_time(w, s->start_ns), t1 = out_time(w, s->end_ns);
        put_i64(w, t0);
        put_i64(w, t1);
        put_i64(w, t1 - t0);
        put_i64(w, s->span_id);
        put_i64(w, s->parent_id);
        put_i64(w, (int64_t)s->bytes);
        jm_span_view v;
        if (!jm_span_of(ev, &v)) v = (jm_span_view){s, ev->thread, ev->thread, 0}; /* a short span_x: see ex_table_row */
        put_i64(w, v.thread);
        put_i64(w, v.parent_thread);
        break;
    }
    case JAGER_EV_LOG: {
        const jager_rec_log *l = (const void *)h;
        const char *body = "";
        uint32_t blen = 0;
        const uint8_t *a = NULL, *ae = NULL;
        if (jager_log_body(l, &body, &blen, &a, &ae) != JAGER_OK) { body = ""; blen = 0; a = ae = NULL; }
        uint32_t sev = h->aux & 0xFFu;
        put_i64(w, out_time(w, ev->time_ns));
        put_i64(w, sev);
        put_str(w, ex_severity_text(sev), (size_t)-1);
        put_bool(w, (h->aux & JAGER_LOG_TRUNCATED) != 0);
        put_i64(w, l->span_id);
        put_i64(w, l->site);
        put_site_name(w, r, l->site);
        put_hex_id(w, l->trace_id, 16);
        put_hex_id(w, l->ctx_span_id, 8);
        put_str(w, body, blen);
        if (l->nattrs && a) {
            size_t off = scratch_mark(w);
            if (ex_json_attrs(w->scratch, a, ae, r)) w->oom = 1;
            put_scratch(w, off);
        } else put_null(w);
        break;
    }
    case JAGER_EV_COUNTER: {
        const jager_rec_counter *c = (const void *)h;
        const char *name = NULL, *unit = NULL;
        uint32_t kind = 0;
        int known = jager_reader_counter(r, h->aux, &name, &unit, &kind) == JAGER_OK;
        put_i64(w, out_time(w, ev->time_ns));
        put_i64(w, h->aux);
        put_str(w, known ? name : NULL, (size_t)-1);
        put_str(w, known && unit && *unit ? unit : NULL, (size_t)-1);
        put_str(w, !known ? NULL : kind == JAGER_COUNTER_GAUGE ? "gauge" : "monotonic", (size_t)-1);
        put_f64(w, c->value);
        break;
    }
    case JAGER_EV_MARK:
        put_i64(w, out_time(w, ev->time_ns));
        put_str(w, jager_reader_string(r, h->aux), (size_t)-1);
        break;
    case JAGER_EV_DROP: {
        const jager_rec_drop *d = (const void *)h;
        put_i64(w, out_time(w, ev->time_ns));
        put_str(w, drop_reason_name(h->aux), (size_t)-1);
        put_i64(w, total >= sizeof *d ? (int64_t)d->count : 0);
        break;
    }
    case JAGER_EV_DIAG: {
        const jager_rec_diag *d = (const void *)h;
        uint32_t n;
        const char *text = tail(h, sizeof *d, d->text_len, &n);
        put_i64(w, out_time(w, ev->time_ns));
        put_i64(w, h->aux);
        put_str(w, jager_reader_string(r, d->source), (size_t)-1);
        put_str(w, text, n);
        break;
    }
    case JAGER_EV_SPAN_ATTR: {
        const jager_rec_span_attr *s = (const void *)h;
        uint32_t sth, site = jm_span_ref(ev, &sth);
        put_i64(w, site);
        put_site_name(w, r, site);
        put_i64(w, s->span_id);
        size_t off = scratch_mark(w);
        const uint8_t *a = (const uint8_t *)h + sizeof *s;
        if (ex_json_attrs(w->scratch, a <= (const uint8_t *)h + total ? a : NULL, (const uint8_t *)h + total, r))
            w->oom = 1;
        put_scratch(w, off);
        put_i64(w, sth);
        break;
    }
    case JAGER_EV_CONTEXT: {
        const jager_rec_context *c = (const void *)h;
        put_i64(w, out_time(w, ev->time_ns));
        put_bool(w, h->aux != 0);
        put_hex_id(w, c->trace_id, 16);
        put_hex_id(w, c->span_id, 8);
        put_i64(w, c->first_span);
        put_i64(w, c->flags);
        break;
    }
    case JAGER_EV_TASK: {
        const jager_rec_task *k = (const void *)h;
        put_i64(w, out_time(w, ev->time_ns));
        put_i64(w, (int64_t)k->task);
        put_i64(w, k->first_span);
        break;
    }
    case JAGER_EV_SPAN_ERROR: {
        const jager_rec_span_error *s = (const void *)h;
        uint32_t n;
        const char *msg = tail(h, sizeof *s, s->msg_len, &n);
        uint32_t sth, site = jm_span_ref(ev, &sth);
        put_i64(w, out_time(w, ev->time_ns));
        put_i64(w, site);
        put_site_name(w, r, site);
        put_i64(w, s->span_id);
        put_str(w, msg, n);
        put_i64(w, sth);
        break;
    }
    }
}

static void fill_plugin(const ex_table *t, const jager_reader *r, const jager_event *ev, row *w)
{
    const jager_record *h = ev->rec;
    const jager_rec_plugin *p = (const void *)h;
    size_t total = (size_t)h->words * 8u;
    size_t have = total >= sizeof *p ? (total - sizeof *p) / 8u : 0;
    put_i64(w, ev->thread);
    put_i64(w, out_time(w, ev->time_ns));
    for (uint32_t f = 0; f < t->desc->nfields; f++) {
        uint32_t kind = t->desc->fields[f].kind;
        if (f >= have) {
            put_null(w);
            if (kind == JAGER_FIELD_SITE) put_null(w);
            continue;
        }
        uint64_t v = p->fields[f];
        switch (kind) {
        case JAGER_FIELD_F64: {
            double d;
            memcpy(&d, &v, sizeof d);
            put_f64(w, d);
            break;
        }
        case JAGER_FIELD_STRING:
            put_str(w, v <= UINT32_MAX ? jager_reader_string(r, (uint32_t)v) : NULL, (size_t)-1);
            break;
        case JAGER_FIELD_BOOL: put_bool(w, v != 0); break;
        case JAGER_FIELD_SITE:
            put_i64(w, (int64_t)v);
            put_site_name(w, r, v <= UINT32_MAX ? (uint32_t)v : 0);
            break;
        case JAGER_FIELD_TIME_NS: put_i64(w, v ? out_time(w, v) : 0); break;
        case JAGER_FIELD_DURATION_NS:
            /* the event's own extent [time_ns, time_ns + v]: its mapped ends' difference */
            if (t->clock && (t->desc->fields[f].flags & JAGER_FIELD_FLAG_EXTENT))
                put_i64(w, out_time(w, ev->time_ns + v) - out_time(w, ev->time_ns));
            else put_i64(w, (int64_t)v);
            break;
        default: put_i64(w, (int64_t)v);
        }
    }
}

/* Smallest valid record of each core type: a shorter one is skipped, never read past. */
static size_t core_min_bytes(uint16_t type)
{
    switch (type) {
    case JAGER_EV_SPAN: return sizeof(jager_rec_span);
    case JAGER_EV_SPAN_X: return sizeof(jager_rec_span_x);
    case JAGER_EV_LOG: return sizeof(jager_rec_log);
    case JAGER_EV_COUNTER: return sizeof(jager_rec_counter);
    case JAGER_EV_MARK: return sizeof(jager_rec_mark);
    case JAGER_EV_DROP: return sizeof(jager_rec_drop);
    case JAGER_EV_DIAG: return sizeof(jager_rec_diag);
    case JAGER_EV_SPAN_ATTR: return sizeof(jager_rec_span_attr);
    case JAGER_EV_SPAN_ERROR: return sizeof(jager_rec_span_error);
    case JAGER_EV_CONTEXT: return sizeof(jager_rec_context);
    case JAGER_EV_TASK: return sizeof(jager_rec_task);
    default: return sizeof(jager_record);
    }
}

int ex_table_row(const ex_table *t, const jager_reader *r, const jager_event *ev, ex_cell *cells, tu_buf *scratch)
{
    row w = {.c = cells, .scratch = scratch, .t = t};
    scratch->len = 0;
    if (t->builtin && (size_t)ev->rec->words * 8u < core_min_bytes(ev->type)) return 1;
    if (t->ranked) put_i64(&w, t->rank);
    if (t->builtin) fill_core(t, r, ev, &w);
    else fill_plugin(t, r, ev, &w);
    while (w.k < t->ncols) put_null(&w); /* defensive: never leave a cell unset */
    if (w.oom) return -1;
    for (uint32_t c = 0; c < t->ncols; c++) {
        if (!cells[c].in_scratch) continue;
        cells[c].s = (const char *)scratch->data + cells[c].i;
        if (!scratch->data) cells[c].s = "";
        cells[c].in_scratch = 0;
        cells[c].i = 0;
    }
    return 0;
}
