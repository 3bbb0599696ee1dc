/* `jager export --format chrome`: Chrome Trace Event JSON (object form) for Perfetto UI and
 * chrome://tracing (formats.md §4).
 *
 *   spans        "X" complete events on their thread's lane (pid = process, tid = thread
 *                index), args: site, file, line, span_id, parent_id, bytes, attributes, error;
 *                in a recording with tasks (jager_task_set: Julia tasks) the spans, logs,
 *                marks and span extras a task emitted go on the task's own lane (tid =
 *                TASK_BASE + task id, named "task N · name"), wherever it ran: a task that
 *                migrated between threads is one lane, nested as its own tree
 *   GC counters  the Julia binding's gc.* attributes on logs and marks: "C" counter tracks
 *                julia.gc.allocated_bytes, julia.gc.pauses, julia.gc.time_ns, julia.gc.full_sweeps
 *   gc.* types   "X" on a lane named "GC";  dispatch.* types with a duration: "Compiler"
 *                (slices that overlap without nesting go to "Compiler (2)", … so every
 *                lane nests strictly, as Perfetto requires)
 *                (a dispatch.compile slice starts when inference began and lasts
 *                inference_ns + duration_ns)
 *   other plugin types with a `duration_ns` field: "X" on a lane named after the type;
 *                all-numeric types (gc.sample): "C" counters, one track per field named
 *                "<type>.<field>"; others: "i" instants with the fields as args
 *   counters     "C" events, one track per counter (a monotonic one's value is the process's
 *                running total, whatever thread sampled it)
 *   logs, marks, drops, diagnostics: "i" instants (marks process-wide)
 *   process_name / thread_name / thread_sort_index "M" metadata at the end
 *
 * A job (export_opts.job: the ranks of an MPI run) goes into one file: each rank is a
 * process (pid = rank, process_name "rank R · host · exe", process_sort_index R), every
 * time is on the job's clock (rank 0's, model_mpi.h), and each matched point-to-point
 * message is a flow arrow ("s" → "f", cat "mpi.message") from the sending call's slice to
 * the slice of the call that completed the receive (Recv, or the Wait of an Irecv).
 *
 * Times are microseconds since the recording's start with three decimals (ns precision).
 * Events are written as they are read: X events need no order, and attributes or errors
 * of a span (recorded while it is open, before its own record) wait in a bounded table
 * keyed by (thread, span id) until the span arrives. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "enc_json.h"
#include "model_map.h"
#include "model_mpi.h"
#include "plugin_events.h"

/* Extra lanes (tids): lane key 0 = GC, 1 = Compiler, 2 + type = a plugin type; each key
 * has up to LANE_SUBS sub-lanes so that slices which overlap without nesting (compiles on
 * two threads) never share one (Perfetto requires strict nesting per thread). */
#define LANE_BASE 1000000000u
#define LANE_SUBS 64u
#define LANE_KEY_GC 0u
#define LANE_KEY_COMPILER 1u
#define LANE_KEYS (2u + 65536u)
#define PENDING_MAX 65536u /* attribute sets of open spans kept at most */
/* Task lanes: tid TASK_BASE + task id (ids above TASK_MAX share the last lane's tid range
 * modulo: never in practice, Julia's are 1, 2, …). */
#define TASK_BASE 2000000000ull
#define TASK_MAX 1000000000000ull
#define TASK_SORT_BASE 500000000ll /* after the threads, before the GC and plugin lanes */

typedef struct pending { /* in chrome_state.pend, keyed by (thread, span id) */
    tu_buf attrs; /* JSON members "k":v,… without braces */
    tu_buf error; /* JSON string of the last error message */
} pending;

enum type_style { STYLE_UNSET = 0, STYLE_INSTANT, STYLE_COMPLETE, STYLE_COUNTER };

/* Job mode: where each MPI call's slice went, for the message arrows. */
typedef struct call_slice {
    uint32_t part, thread;
    uint64_t local_t0; /* the event's time_ns */
    uint64_t tid;      /* the lane it was drawn on (pid = the part's) */
    uint64_t t0, dur;  /* job clock */
} call_slice;

typedef struct chrome_state {
    jager_reader *r;
    const export_opts *o;
    FILE *f;
    uint64_t base_ns;
    long long pid;
    uint64_t events;
    tu_buf b, tmp;
    jm_pool pend; /* pending records */
    uint8_t style[65536];
    uint64_t *lane_end[LANE_KEYS]; /* per lane key: end of the last slice of each sub-lane */
    uint8_t lane_subs[LANE_KEYS];  /* sub-lanes in use */
    int failed;
    /* job mode (o->job): the current part, and every MPI call slice written */
    int job, have_part;
    export_part part;
    uint16_t mpi_call_type;
    call_slice *slices;
    size_t nslices, slices_cap;
    /* tasks (task records) of the current part */
    uint64_t *cur_task; /* by thread index: the task set on it now, 0 none */
    uint32_t ncur_task;
    uint64_t *tasks;    /* distinct task ids seen, in order of first sight */
    size_t ntasks, tasks_cap;
    jm_map task_seen;   /* task id → index in tasks */
} chrome_state;

/* ---- pending span attributes ---- */

static pending *pend_find(chrome_state *s, uint32_t thread, uint32_t span_id, int create)
{
    if (create && s->pend.n >= PENDING_MAX) return NULL;
    pending *p = jm_pool_get(&s->pend, thread, span_id);
    if (p || !create) return p;
    return jm_pool_add(&s->pend, thread, span_id);
}

static void pend_remove(chrome_state *s, pending *p)
{
    tu_buf_free(&p->attrs);
    tu_buf_free(&p->error);
    jm_pool_del(&s->pend, p);
}

/* ---- output helpers ---- */

/* ns as microseconds with exactly three decimals. */
static void put_time(tu_buf *b, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
    char frac[4] = {'.', (char)('0' + a % 1000 / 100), (char)('0' + a % 100 / 10), (char)('0' + a % 10)};
    if (ns < 0) tu_buf_putc(b, '-');
    ex_put_u64(b, a / 1000);
    tu_buf_put(b, frac, 4);
}

/* A time of the current recording on the output's clock (the job's in job mode). */
static uint64_t out_time(const chrome_state *s, uint64_t t)
{
    return s->job && s->part.mpi ? jm_mpi_job_time(s->part.mpi, s->part.index, t) : t;
}

static void put_ts(chrome_state *s, uint64_t t) { put_time(&s->b, (int64_t)(out_time(s, t) - s->base_ns)); }

/* The length of [t, t + d] of the current recording on the output's clock: ts + dur is the
 * mapped end (the job's clock can stretch a stretch of a rank, docs/mpi.md). */
static uint64_t out_dur(const chrome_state *s, uint64_t t, uint64_t d) { return out_time(s, t + d) - out_time(s, t); }

/* Start an event object: {"name":…,"cat":…,"ph":…,"ts":…,"pid":…,"tid":… */
static void begin_event(chrome_state *s, const char *name, size_t name_len, const char *cat, const char *ph,
                        uint64_t ts, uint64_t tid)
{
    tu_buf *b = &s->b;
    b->len = 0;
    if (s->events++) TU_PUTS(b, ",\n");
    TU_PUTS(b, "{\"name\":");
    ex_json_str(b, name, name_len);
    TU_PUTS(b, ",\"cat\":");
    ex_json_str(b, cat, (size_t)-1);
    TU_PUTS(b, ",\"ph\":\"");
    tu_buf_put(b, ph, strlen(ph));
    TU_PUTS(b, "\",\"ts\":");
    put_ts(s, ts);
    TU_PUTS(b, ",\"pid\":");
    ex_put_i64(b, s->pid);
    TU_PUTS(b, ",\"tid\":");
    ex_put_u64(b, tid);
}

static int end_event(chrome_state *s)
{
    if (tu_buf_putc(&s->b, '}')) {
        fprintf(stderr, "jager export: out of memory\n");
        s->failed = 1;
        return -1;
    }
    if (fwrite(s->b.data, 1, s->b.len, s->f) != s->b.len) {
        fprintf(stderr, "jager export: writing %s failed: %s\n", s->o->out, strerror(errno));
        s->failed = 1;
        return -1;
    }
    return 0;
}

static void put_site_args(chrome_state *s, uint32_t site)
{
    const char *name = NULL, *file = NULL;
    uint32_t line = 0;
    TU_PUTS(&s->b, "\"site\":");
    ex_put_u64(&s->b, site);
    if (site && jager_reader_site(s->r, site, &name, &file, &line) == JAGER_OK) {
        if (file && *file) {
            TU_PUTS(&s->b, ",\"file\":");
            ex_json_str(&s->b, file, (size_t)-1);
        }
        TU_PUTS(&s->b, ",\"line\":");
        ex_put_u64(&s->b, line);
    }
}

static const char *site_name(chrome_state *s, uint32_t site, char *buf, size_t size)
{
    const char *name = NULL;
    if (site && jager_reader_site(s->r, site, &name, NULL, NULL) == JAGER_OK && name) return name;
    return tu_site_label(s->r, site, buf, size, 0);
}

/* A stack as ["func (file:line)", …], innermost first. */
static void put_stack(chrome_state *s, jager_stack_id id)
{
    const uint64_t *ips = NULL;
    uint32_t n = 0;
    tu_buf *b = &s->b;
    if (!id || jager_reader_stack(s->r, id, &ips, &n) != JAGER_OK) {
        tu_buf_printf(b, "%" PRIu64, (uint64_t)id);
        return;
    }
    tu_buf_putc(b, '[');
    int first = 1;
    for (uint32_t i = 0; i < n && i < 64; i++) {
        jager_frame fr[8];
        uint32_t nf = jager_reader_symbolize(s->r, ips[i], fr, 8);
        char tmp[64];
        if (nf == 0) {
            snprintf(tmp, sizeof tmp, "0x%" PRIx64, ips[i]);
            if (!first) tu_buf_putc(b, ',');
            ex_json_str(b, tmp, (size_t)-1);
            first = 0;
            continue;
        }
        for (uint32_t k = nf; k-- > 0;) { /* innermost (most inlined) first */
            s->tmp.len = 0;
            tu_buf_printf(&s->tmp, "%s", fr[k].func);
            if (fr[k].file && *fr[k].file) tu_buf_printf(&s->tmp, " (%s:%u)", fr[k].file, fr[k].line);
            if (!first) tu_buf_putc(b, ',');
            ex_json_str(b, (const char *)s->tmp.data, s->tmp.len);
            first = 0;
        }
    }
    tu_buf_putc(b, ']');
}

/* ---- tasks ---- */

/* The lane (tid) of an event of \p thread: its current task's, else the thread's. */
static uint64_t ev_tid(const chrome_state *s, uint32_t thread)
{
    uint64_t task = thread < s->ncur_task ? s->cur_task[thread] : 0;
    return task ? TASK_BASE + (task % TASK_MAX) : thread;
}

static void on_task(chrome_state *s, const jager_event *ev)
{
    const jager_rec_task *k = (const void *)ev->rec;
    if (ev->thread >= s->ncur_task) {
        uint32_t n = ev->thread + 16;
        uint64_t *c = realloc(s->cur_task, n * sizeof *c);
        if (!c) goto oom;
        memset(c + s->ncur_task, 0, (n - s->ncur_task) * sizeof *c);
        s->cur_task = c;
        s->ncur_task = n;
    }
    s->cur_task[ev->thread] = k->task;
    if (!k->task || jm_map_get(&s->task_seen, k->task, 0) != JM_NONE) return;
    if (s->ntasks == s->tasks_cap) {
        size_t c = s->tasks_cap ? s->tasks_cap * 2 : 64;
        uint64_t *t = realloc(s->tasks, c * sizeof *t);
        if (!t) goto oom;
        s->tasks = t;
        s->tasks_cap = c;
    }
    if (jm_map_put(&s->task_seen, k->task, 0, (uint32_t)s->ntasks)) goto oom;
    s->tasks[s->ntasks++] = k->task;
    return;
oom:
    fprintf(stderr, "jager export: out of memory\n");
    s->failed = 1;
}

/* The Julia binding's GC counters in an attribute list: one "C" event per counter. */
static void gc_counters(chrome_state *s, const uint8_t *a, const uint8_t *ae, uint64_t t, uint32_t thread)
{
    const char *const *keys = jp_julia_gc_keys;
    jager_attr_view v;
    while (a && a < ae && jager_attr_next(&a, ae, &v) == 1) {
        int i = v.kind == JAGER_ATTR_I64 ? jp_julia_gc_key(v.key, v.key_len) : -1;
        if (i < 0) continue;
        char name[40];
        snprintf(name, sizeof name, "julia.%s", keys[i]);
        begin_event(s, name, (size_t)-1, "counter", "C", t, thread);
        TU_PUTS(&s->b, ",\"args\":{\"value\":");
        ex_put_i64(&s->b, v.i64);
        tu_buf_putc(&s->b, '}');
        end_event(s);
    }
}

/* ---- events ---- */

/* A span, or a span_x (a task that moved between threads, model.h): Chrome nests X events
 * by time within a tid, so a span_x goes where its parent is — its task's lane (the task
 * the ending thread runs), or without one its begin thread's — with the threads that number
 * its ids in its args. */
static void on_span(chrome_state *s, const jager_event *ev, const jm_span_view *v)
{
    const jager_rec_span *sp = v->rec;
    char nb[256];
    const char *name = site_name(s, sp->h.aux, nb, sizeof nb);
    uint64_t tid = ev_tid(s, ev->thread);
    if (v->moved && tid == ev->thread) tid = v->thread;
    begin_event(s, name, (size_t)-1, "span", "X", sp->start_ns, tid);
    TU_PUTS(&s->b, ",\"dur\":");
    put_time(&s->b, sp->end_ns >= sp->start_ns ? (int64_t)out_dur(s, sp->start_ns, sp->end_ns - sp->start_ns)
                                               : (int64_t)(sp->end_ns - sp->start_ns));
    TU_PUTS(&s->b, ",\"args\":{");
    put_site_args(s, sp->h.aux);
    TU_PUTS(&s->b, ",\"span_id\":");
    ex_put_u64(&s->b, sp->span_id);
    TU_PUTS(&s->b, ",\"parent_id\":");
    ex_put_u64(&s->b, sp->parent_id);
    if (v->moved) {
        TU_PUTS(&s->b, ",\"begin_thread\":");
        ex_put_u64(&s->b, v->thread);
        TU_PUTS(&s->b, ",\"parent_thread\":");
        ex_put_u64(&s->b, v->parent_thread);
    }
    if (sp->bytes) {
        TU_PUTS(&s->b, ",\"bytes\":");
        ex_put_u64(&s->b, sp->bytes);
    }
    pending *p = pend_find(s, v->thread, sp->span_id, 0); /* set where it began */
    if (p) {
        if (p->attrs.len) {
            TU_PUTS(&s->b, ",\"attributes\":{");
            tu_buf_put(&s->b, p->attrs.data, p->attrs.len);
            tu_buf_putc(&s->b, '}');
        }
        if (p->error.len) {
            TU_PUTS(&s->b, ",\"error\":");
            tu_buf_put(&s->b, p->error.data, p->error.len);
        }
        pend_remove(s, p);
    }
    tu_buf_putc(&s->b, '}');
    end_event(s);
}

/* Attributes or an error of an open span: kept for its X event, or (table full) shown as
 * an instant so nothing is lost. */
static void on_span_extra(chrome_state *s, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    size_t total = (size_t)h->words * 8u;
    int is_attr = ev->type == JAGER_EV_SPAN_ATTR;
    uint32_t span_id;
    const uint8_t *a = NULL, *ae = (const uint8_t *)h + total;
    const char *msg = "";
    uint32_t msg_len = 0;
    if (is_attr) {
        const jager_rec_span_attr *sa = (const void *)h;
        if (total < sizeof *sa) return;
        span_id = sa->span_id;
        a = (const uint8_t *)h + sizeof *sa;
    } else {
        const jager_rec_span_error *se = (const void *)h;
        if (total < sizeof *se) return;
        span_id = se->span_id;
        msg = (const char *)h + sizeof *se;
        msg_len = se->msg_len <= total - sizeof *se ? se->msg_len : (uint32_t)(total - sizeof *se);
    }
    s->tmp.len = 0;
    if (is_attr) ex_json_attrs(&s->tmp, a, ae, s->r);
    else ex_json_str(&s->tmp, msg, msg_len);
    uint32_t thread;
    (void)jm_span_ref(ev, &thread); /* the thread that numbers span_id: its span_x looks there */
    pending *p = pend_find(s, thread, span_id, 1);
    if (p) {
        if (is_attr) {
            if (s->tmp.len > 2) { /* strip the braces, join with earlier sets */
                if (p->attrs.len) tu_buf_putc(&p->attrs, ',');
                tu_buf_put(&p->attrs, s->tmp.data + 1, s->tmp.len - 2);
            }
        } else {
            p->error.len = 0;
            tu_buf_put(&p->error, s->tmp.data, s->tmp.len);
        }
        return;
    }
    char nb[256];
    begin_event(s, is_attr ? "span attributes" : "span error", (size_t)-1, "span", "i", ev->time_ns, ev_tid(s, ev->thread));
    TU_PUTS(&s->b, ",\"s\":\"t\",\"args\":{");
    TU_PUTS(&s->b, "\"site\":");
    ex_json_str(&s->b, site_name(s, h->aux, nb, sizeof nb), (size_t)-1);
    tu_buf_printf(&s->b, ",\"span_id\":%u,\"%s\":", span_id, is_attr ? "attributes" : "error");
    tu_buf_put(&s->b, s->tmp.data, s->tmp.len);
    tu_buf_putc(&s->b, '}');
    end_event(s);
}

static void on_log(chrome_state *s, const jager_event *ev)
{
    const jager_rec_log *l = (const void *)ev->rec;
    const char *body = "";
    uint32_t blen = 0;
    const uint8_t *a = NULL, *ae = NULL;
    if (jager_log_body(l, &body, &blen, &a, &ae) != JAGER_OK) { body = ""; blen = 0; a = NULL; }
    uint32_t sev = l->h.aux & 0xFFu;
    /* The event name is the body's first line, cut at 80 bytes (args keep it whole). */
    size_t nlen = 0;
    while (nlen < blen && nlen < 80 && body[nlen] != '\n') nlen++;
    while (nlen < blen && nlen > 0 && ((unsigned char)body[nlen] & 0xC0) == 0x80) nlen--; /* whole chars */
    begin_event(s, nlen ? body : ex_severity_text(sev), nlen ? nlen : (size_t)-1, "log", "i", ev->time_ns,
                ev_tid(s, ev->thread));
    tu_buf_printf(&s->b, ",\"s\":\"t\",\"args\":{\"severity\":\"%s\",\"severity_number\":%u,\"body\":",
                  ex_severity_text(sev), sev);
    ex_json_str(&s->b, body, blen);
    if (l->h.aux & JAGER_LOG_TRUNCATED) TU_PUTS(&s->b, ",\"truncated\":true");
    if (l->nattrs && a) {
        TU_PUTS(&s->b, ",\"attributes\":");
        ex_json_attrs(&s->b, a, ae, s->r);
    }
    if (l->site) {
        char nb[256];
        TU_PUTS(&s->b, ",\"site\":");
        ex_json_str(&s->b, site_name(s, l->site, nb, sizeof nb), (size_t)-1);
        tu_buf_printf(&s->b, ",\"span_id\":%u", l->span_id);
    }
    char hex[33];
    if (ex_hex(l->trace_id, 16, hex)) tu_buf_printf(&s->b, ",\"trace_id\":\"%s\"", hex);
    if (ex_hex(l->ctx_span_id, 8, hex)) tu_buf_printf(&s->b, ",\"trace_span_id\":\"%s\"", hex);
    tu_buf_putc(&s->b, '}');
    end_event(s);
    if (l->nattrs && a) gc_counters(s, a, ae, ev->time_ns, ev->thread);
}

static void on_counter(chrome_state *s, const jager_event *ev)
{
    const jager_rec_counter *c = (const void *)ev->rec;
    const char *name = NULL, *unit = NULL;
    uint32_t kind = JAGER_COUNTER_GAUGE;
    char nb[32];
    if (jager_reader_counter(s->r, c->h.aux, &name, &unit, &kind) != JAGER_OK || !name) {
        snprintf(nb, sizeof nb, "counter#%u", c->h.aux);
        name = nb;
    }
    /* One track per counter, whatever thread sampled it: a monotonic counter's sample is the
     * process's running total, so the track's value at any time is its latest sample's. */
    begin_event(s, name, (size_t)-1, "counter", "C", ev->time_ns, ev->thread);
    TU_PUTS(&s->b, ",\"args\":{\"value\":");
    ex_json_f64(&s->b, c->value);
    tu_buf_putc(&s->b, '}');
    end_event(s);
}

static void on_simple_instant(chrome_state *s, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    size_t total = (size_t)h->words * 8u;
    char nb[64];
    if (ev->type == JAGER_EV_MARK) {
        const char *name = jager_reader_string(s->r, h->aux);
        if (!name) {
            snprintf(nb, sizeof nb, "mark#%u", h->aux);
            name = nb;
        }
        begin_event(s, name, (size_t)-1, "mark", "i", ev->time_ns, ev_tid(s, ev->thread));
        TU_PUTS(&s->b, ",\"s\":\"p\"");
        if (total >= sizeof(jager_rec_mark) + 8) { /* jager_mark_attrs(): its attributes, its GC counters */
            const uint8_t *a = (const uint8_t *)h + sizeof(jager_rec_mark) + 8, *ae = (const uint8_t *)h + total;
            TU_PUTS(&s->b, ",\"args\":{\"attributes\":");
            ex_json_attrs(&s->b, a, ae, s->r);
            tu_buf_putc(&s->b, '}');
            end_event(s);
            gc_counters(s, a, ae, ev->time_ns, ev->thread);
            return;
        }
    } else if (ev->type == JAGER_EV_DROP) {
        static const char *const reasons[] = {"ring_full", "overwritten", "no_ring", "too_large", "sink", "bad_emit", "after_stop"};
        const jager_rec_drop *d = (const void *)h;
        begin_event(s, "events dropped", (size_t)-1, "jager", "i", ev->time_ns, ev->thread);
        tu_buf_printf(&s->b, ",\"s\":\"t\",\"args\":{\"reason\":\"%s\",\"count\":%" PRIu64 "}",
                      h->aux < 7 ? reasons[h->aux] : "unknown", total >= sizeof *d ? d->count : 0);
    } else { /* diag */
        const jager_rec_diag *d = (const void *)h;
        const char *src = jager_reader_string(s->r, d->source);
        uint32_t n = d->text_len <= total - sizeof *d ? d->text_len : (uint32_t)(total - sizeof *d);
        begin_event(s, "diagnostic", (size_t)-1, "jager", "i", ev->time_ns, ev->thread);
        tu_buf_printf(&s->b, ",\"s\":\"t\",\"args\":{\"severity\":\"%s\",\"source\":", ex_severity_text(h->aux));
        ex_json_str(&s->b, src ? src : "", (size_t)-1);
        TU_PUTS(&s->b, ",\"text\":");
        ex_json_str(&s->b, (const char *)h + sizeof *d, n);
        tu_buf_putc(&s->b, '}');
    }
    end_event(s);
}

static int duration_field(const jager_type_desc *d)
{
    for (uint32_t f = 0; f < d->nfields; f++)
        if (d->fields[f].kind == JAGER_FIELD_DURATION_NS && d->fields[f].name && !strcmp(d->fields[f].name, "duration_ns"))
            return (int)f;
    return -1;
}

static int classify(const jager_type_desc *d)
{
    if (duration_field(d) >= 0) return STYLE_COMPLETE;
    if (d->nfields == 0) return STYLE_INSTANT;
    for (uint32_t f = 0; f < d->nfields; f++) {
        uint32_t k = d->fields[f].kind;
        if (k != JAGER_FIELD_U64 && k != JAGER_FIELD_I64 && k != JAGER_FIELD_F64 && k != JAGER_FIELD_BYTES &&
            k != JAGER_FIELD_DURATION_NS)
            return STYLE_INSTANT;
    }
    return STYLE_COUNTER;
}

/* Plugin fields as JSON members. */
static void put_fields(chrome_state *s, const jager_type_desc *d, const jager_rec_plugin *p, size_t have, int skip,
                       int first)
{
    for (uint32_t f = 0; f < d->nfields && f < have; f++) {
        if ((int)f == skip) continue;
        const jager_field_desc *fd = &d->fields[f];
        uint64_t v = p->fields[f];
        if (!first) tu_buf_putc(&s->b, ',');
        first = 0;
        ex_json_str(&s->b, fd->name ? fd->name : "field", (size_t)-1);
        tu_buf_putc(&s->b, ':');
        switch (fd->kind) {
        case JAGER_FIELD_I64:
        case JAGER_FIELD_TIME_NS:
        case JAGER_FIELD_DURATION_NS: tu_buf_printf(&s->b, "%" PRId64, (int64_t)v); break;
        case JAGER_FIELD_F64: {
            double x;
            memcpy(&x, &v, sizeof x);
            ex_json_f64(&s->b, x);
            break;
        }
        case JAGER_FIELD_STRING: {
            const char *str = v <= UINT32_MAX ? jager_reader_string(s->r, (uint32_t)v) : NULL;
            ex_json_str(&s->b, str, (size_t)-1);
            break;
        }
        case JAGER_FIELD_SITE: {
            char nb[256];
            ex_json_str(&s->b, site_name(s, v <= UINT32_MAX ? (uint32_t)v : 0, nb, sizeof nb), (size_t)-1);
            break;
        }
        case JAGER_FIELD_STACK: put_stack(s, v); break;
        case JAGER_FIELD_BOOL: tu_buf_put(&s->b, v ? "true" : "false", v ? 4 : 5); break;
        default: tu_buf_printf(&s->b, "%" PRIu64, v);
        }
    }
}

/* The tid for a slice [start, end) of lane \p key: the first sub-lane whose slices all end
 * by \p start (slices of one sub-lane are disjoint and in order). */
static uint64_t lane_for(chrome_state *s, uint32_t key, uint64_t start, uint64_t end)
{
    if (!s->lane_end[key]) {
        s->lane_end[key] = calloc(LANE_SUBS, sizeof *s->lane_end[key]);
        if (!s->lane_end[key]) return LANE_BASE + (uint64_t)key * LANE_SUBS; /* degrade: shared lane */
    }
    uint32_t k = 0;
    while (k < s->lane_subs[key] && s->lane_end[key][k] > start) k++;
    if (k == LANE_SUBS) k = LANE_SUBS - 1; /* pathological overlap: the last sub-lane */
    if (k >= s->lane_subs[key]) s->lane_subs[key] = (uint8_t)(k + 1);
    if (end > s->lane_end[key][k]) s->lane_end[key][k] = end;
    return LANE_BASE + (uint64_t)key * LANE_SUBS + k;
}

static uint32_t field_named(const jager_type_desc *d, const char *name, size_t have)
{
    for (uint32_t f = 0; f < d->nfields && f < have; f++)
        if (d->fields[f].name && !strcmp(d->fields[f].name, name)) return f;
    return UINT32_MAX;
}

/* cuda.kernel: a flow from the launch (bound to the span open on the launching thread at
 * launch_ns) to the kernel's slice on its GPU lane; id = the correlation id. */
static void kernel_flow(chrome_state *s, const jager_type_desc *d, const jager_rec_plugin *p, size_t have,
                        uint64_t kernel_ns, uint64_t lane)
{
    uint32_t fc = field_named(d, "correlation_id", have), fl = field_named(d, "launch_ns", have),
             ft = field_named(d, "launch_os_tid", have);
    if (fc == UINT32_MAX || fl == UINT32_MAX || ft == UINT32_MAX || !p->fields[fl] || !p->fields[fc]) return;
    uint32_t thread = tu_thread_by_os_tid(s->r, p->fields[ft], 0);
    if (!thread || p->fields[fl] < s->base_ns || end_event(s)) return;
    begin_event(s, "launch", (size_t)-1, "cuda.flow", "s", p->fields[fl], thread);
    tu_buf_printf(&s->b, ",\"id\":%" PRIu64 ",\"bp\":\"e\"", p->fields[fc]);
    if (end_event(s)) return;
    begin_event(s, "launch", (size_t)-1, "cuda.flow", "f", kernel_ns, lane);
    tu_buf_printf(&s->b, ",\"id\":%" PRIu64 ",\"bp\":\"e\"", p->fields[fc]);
    /* the caller's end_event closes it */
}

static void remember_slice(chrome_state *s, const jager_event *ev, uint64_t lane, uint64_t dur)
{
    if (s->nslices == s->slices_cap) {
        size_t c = s->slices_cap ? 2 * s->slices_cap : 4096;
        call_slice *n = realloc(s->slices, c * sizeof *n);
        if (!n) return; /* an arrow fewer, said at the end (arrows vs messages) */
        s->slices = n;
        s->slices_cap = c;
    }
    s->slices[s->nslices++] = (call_slice){s->part.index, ev->thread, ev->time_ns, lane, out_time(s, ev->time_ns), dur};
}

static void on_plugin(chrome_state *s, const jager_event *ev)
{
    const jager_type_desc *d = jager_reader_type(s->r, ev->type);
    if (!d || !d->name || d->builtin) return;
    /* gc.stall is the same pause as gc.pause, seen from the stalled thread's ring: the
     * GC lane draws each collection once. */
    if (jp_is(d->name, &jp_gc, JP_GC_STALL)) return;
    if (!s->style[ev->type]) s->style[ev->type] = (uint8_t)classify(d);
    const jager_rec_plugin *p = (const void *)ev->rec;
    size_t total = (size_t)ev->rec->words * 8u;
    size_t have = total >= sizeof *p ? (total - sizeof *p) / 8u : 0;
    int style = s->style[ev->type];
    if (style == STYLE_COUNTER && have == 0) style = STYLE_INSTANT; /* a record cut short */
    switch (style) {
    case STYLE_COMPLETE: {
        int df = duration_field(d);
        uint64_t dur = (size_t)df < have ? p->fields[df] : 0;
        /* dispatch.compile: time_ns is when inference began; codegen (duration_ns) follows
         * it, so the slice covers both (docs/event-types.md, the Julia binding's sensor). */
        if (jp_is(d->name, &jp_dispatch, JP_DISPATCH_COMPILE)) {
            uint32_t f = jp_field_index(d, &jp_dispatch, JP_DISPATCH_COMPILE, JP_COMPILE_INFERENCE_NS);
            if (f < have && d->fields[f].kind == JAGER_FIELD_DURATION_NS) dur += p->fields[f];
        }
        uint32_t key;
        const char *name = d->name;
        if (jp_in_plugin(d->name, &jp_gc)) {
            key = LANE_KEY_GC;
            if (jp_is(d->name, &jp_gc, JP_GC_PAUSE)) name = "GC pause";
        } else if (jp_in_plugin(d->name, &jp_dispatch)) {
            key = LANE_KEY_COMPILER;
        } else {
            key = 2u + ev->type;
        }
        uint64_t lane = lane_for(s, key, ev->time_ns, ev->time_ns + dur);
        /* a compile is named after what it compiled */
        const char *sig = NULL;
        for (uint32_t f = 0; f < d->nfields && f < have; f++)
            if (d->fields[f].kind == JAGER_FIELD_STRING && d->fields[f].name && !strcmp(d->fields[f].name, "signature"))
                sig = jager_reader_string(s->r, (uint32_t)p->fields[f]);
        /* a kernel is named after its function; an arrow leads from the launching thread to it */
        int kernel = jp_is(d->name, &jp_cuda, JP_CUDA_KERNEL);
        const char *kname = NULL;
        if (kernel) {
            uint32_t f = jp_field_index(d, &jp_cuda, JP_CUDA_KERNEL, JP_KERNEL_NAME);
            if (f < have) kname = jager_reader_string(s->r, (uint32_t)p->fields[f]);
        }
        dur = out_dur(s, ev->time_ns, dur);
        if (s->job && ev->type == s->mpi_call_type) remember_slice(s, ev, lane, dur);
        begin_event(s, kname ? kname : sig && key == LANE_KEY_COMPILER ? sig : name, (size_t)-1, d->name, "X",
                    ev->time_ns, lane);
        TU_PUTS(&s->b, ",\"dur\":");
        put_time(&s->b, (int64_t)dur);
        tu_buf_printf(&s->b, ",\"args\":{\"thread\":%u,\"duration_ns\":%" PRIu64, ev->thread,
                      (size_t)df < have ? p->fields[df] : 0);
        put_fields(s, d, p, have, df, 0);
        tu_buf_putc(&s->b, '}');
        if (kernel) kernel_flow(s, d, p, have, ev->time_ns, lane);
        break;
    }
    case STYLE_COUNTER:
        /* one counter track per field ("gc.sample.live_bytes"): the series of a sample
         * type have unrelated scales, and chrome://tracing stacks series of one event */
        for (uint32_t f = 0; f < d->nfields && f < have; f++) {
            s->tmp.len = 0;
            tu_buf_printf(&s->tmp, "%s.%s", d->name, d->fields[f].name ? d->fields[f].name : "field");
            begin_event(s, (const char *)s->tmp.data, s->tmp.len, d->name, "C", ev->time_ns, ev->thread);
            TU_PUTS(&s->b, ",\"args\":{\"value\":");
            uint64_t v = p->fields[f];
            if (d->fields[f].kind == JAGER_FIELD_F64) {
                double x;
                memcpy(&x, &v, sizeof x);
                ex_json_f64(&s->b, x);
            } else if (d->fields[f].kind == JAGER_FIELD_I64) ex_put_i64(&s->b, (int64_t)v);
            else ex_put_u64(&s->b, v);
            tu_buf_putc(&s->b, '}');
            if (f + 1 < d->nfields && f + 1 < have && end_event(s)) return;
        }
        break;
    default:
        begin_event(s, d->name, (size_t)-1, d->name, "i", ev->time_ns, ev->thread);
        TU_PUTS(&s->b, ",\"s\":\"t\",\"args\":{");
        put_fields(s, d, p, have, -1, 1);
        tu_buf_putc(&s->b, '}');
    }
    end_event(s);
}

static int chrome_event(void *st, const jager_event *ev)
{
    chrome_state *s = st;
    size_t total = (size_t)ev->rec->words * 8u;
    if (!s->base_ns && !s->job) s->base_ns = ev->time_ns; /* start unknown: the first event's time */
    switch (ev->type) {
    case JAGER_EV_SPAN: case JAGER_EV_SPAN_X: {
        jm_span_view v;
        if (jm_span_of(ev, &v)) on_span(s, ev, &v);
        break;
    }
    case JAGER_EV_SPAN_ATTR:
    case JAGER_EV_SPAN_ERROR: on_span_extra(s, ev); break;
    case JAGER_EV_LOG:
        if (total >= sizeof(jager_rec_log)) on_log(s, ev);
        break;
    case JAGER_EV_COUNTER:
        if (total >= sizeof(jager_rec_counter)) on_counter(s, ev);
        break;
    case JAGER_EV_MARK:
        if (total >= sizeof(jager_rec_mark)) on_simple_instant(s, ev);
        break;
    case JAGER_EV_DROP:
        if (total >= sizeof(jager_rec_drop)) on_simple_instant(s, ev);
        break;
    case JAGER_EV_DIAG:
        if (total >= sizeof(jager_rec_diag)) on_simple_instant(s, ev);
        break;
    case JAGER_EV_TASK:
        if (total >= sizeof(jager_rec_task)) on_task(s, ev);
        break;
    default:
        if (ev->type >= JAGER_EV_FIRST_PLUGIN) on_plugin(s, ev);
    }
    return s->failed ? -1 : 0;
}

static long long process_id(const jager_reader *r)
{
    const char *v = jager_reader_meta(r, "process.pid");
    if (!v || !*v) v = jager_reader_meta(r, jp_mpi_meta[JP_MPI_META_RANK]);
    char *end;
    long long x = v ? strtoll(v, &end, 10) : 0;
    return (v && *v && !*end && x >= 0) ? x : 1;
}

static void *chrome_open(jager_reader *r, const export_opts *o)
{
    chrome_state *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "jager export: out of memory\n");
        return NULL;
    }
    s->r = r;
    s->o = o;
    s->pend.size = sizeof(pending);
    s->f = strcmp(o->out, "-") ? fopen(o->out, "wb") : stdout;
    if (!s->f) {
        fprintf(stderr, "jager export: cannot create %s: %s\n", o->out, strerror(errno));
        free(s);
        return NULL;
    }
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    s->base_ns = info.start_ns;
    s->pid = process_id(r);
    s->job = o->job;
    fputs("{\"traceEvents\":[\n", s->f);
    return s;
}

static void meta_event(chrome_state *s, const char *what, uint64_t tid, const char *key, const char *name,
                       long long sort)
{
    tu_buf *b = &s->b;
    b->len = 0;
    if (s->events++) TU_PUTS(b, ",\n");
    tu_buf_printf(b, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%lld", what, s->pid);
    if (tid) tu_buf_printf(b, ",\"tid\":%" PRIu64, tid);
    tu_buf_printf(b, ",\"args\":{\"%s\":", key);
    if (name) ex_json_str(b, name, (size_t)-1);
    else tu_buf_printf(b, "%lld", sort);
    tu_buf_putc(b, '}');
    end_event(s);
}

/* What closes one recording's part of the output: attributes of spans that never ended,
 * the process's and its lanes' names. */
static void finish_part(chrome_state *s)
{
    /* Attributes of spans that never ended (a truncated file) are not lost. */
    for (uint32_t i = 0; i < s->pend.n; i++) { /* in the order they were first seen */
        pending *p = jm_pool_at(&s->pend, i);
        uint64_t thread = s->pend.key[2 * i], span_id = s->pend.key[2 * i + 1];
        int job = s->job;
        s->job = 0; /* base_ns is on the output's clock already: ts 0 */
        begin_event(s, "unfinished span", (size_t)-1, "span", "i", s->base_ns, thread);
        s->job = job;
        tu_buf_printf(&s->b, ",\"s\":\"t\",\"args\":{\"span_id\":%u", (uint32_t)span_id);
        if (p->attrs.len) {
            TU_PUTS(&s->b, ",\"attributes\":{");
            tu_buf_put(&s->b, p->attrs.data, p->attrs.len);
            tu_buf_putc(&s->b, '}');
        }
        if (p->error.len) {
            TU_PUTS(&s->b, ",\"error\":");
            tu_buf_put(&s->b, p->error.data, p->error.len);
        }
        tu_buf_putc(&s->b, '}');
        end_event(s);
        tu_buf_free(&p->attrs);
        tu_buf_free(&p->error);
    }
    jm_pool_free(&s->pend);
    /* process and lane names */
    const char *proc = jager_reader_meta(s->r, "process.name");
    if (!proc || !*proc) proc = jager_reader_meta(s->r, "process.command_line");
    const char *rank = jager_reader_meta(s->r, jp_mpi_meta[JP_MPI_META_RANK]);
    s->tmp.len = 0;
    if (s->job) { /* "rank 3 · host · exe" */
        const char *host = jager_reader_meta(s->r, jp_mpi_meta[JP_MPI_META_HOST]);
        if (!host || !*host) host = jager_reader_meta(s->r, "host.name");
        if (s->part.rank >= 0) tu_buf_printf(&s->tmp, "rank %lld", (long long)s->part.rank);
        else tu_buf_printf(&s->tmp, "part %u", s->part.index + 1);
        if (host && *host) tu_buf_printf(&s->tmp, " \xc2\xb7 %s", host);
        tu_buf_printf(&s->tmp, " \xc2\xb7 %s", proc && *proc ? proc : s->part.label ? s->part.label : s->o->input);
    } else {
        tu_buf_printf(&s->tmp, "%s", proc && *proc ? proc : s->o->input);
        if (rank && *rank) tu_buf_printf(&s->tmp, " (rank %s)", rank);
    }
    tu_buf_putc(&s->tmp, '\0');
    meta_event(s, "process_name", 0, "name", (const char *)s->tmp.data, 0);
    if (s->job) meta_event(s, "process_sort_index", 0, "sort_index", NULL, s->pid);
    uint32_t nthreads = jager_reader_thread_count(s->r);
    for (uint32_t t = 1; t <= nthreads; t++) {
        uint64_t os_tid = 0;
        const char *tname = NULL;
        if (jager_reader_thread(s->r, t, &os_tid, &tname) != JAGER_OK) continue;
        char nb[300];
        if (tname && *tname) snprintf(nb, sizeof nb, "%s (thread %u, tid %" PRIu64 ")", tname, t, os_tid);
        else snprintf(nb, sizeof nb, "thread %u (tid %" PRIu64 ")", t, os_tid);
        meta_event(s, "thread_name", t, "name", nb, 0);
        meta_event(s, "thread_sort_index", t, "sort_index", NULL, t);
    }
    for (size_t i = 0; i < s->ntasks; i++) { /* "task 3 · solver" (julia.task.<id>.name) */
        char key[64], nb[300];
        snprintf(key, sizeof key, "julia.task.%" PRIu64 ".name", s->tasks[i]);
        const char *tn = jager_reader_meta(s->r, key);
        if (tn && *tn) snprintf(nb, sizeof nb, "task %" PRIu64 " \xc2\xb7 %.200s", s->tasks[i], tn);
        else snprintf(nb, sizeof nb, "task %" PRIu64, s->tasks[i]);
        uint64_t tid = TASK_BASE + s->tasks[i] % TASK_MAX;
        meta_event(s, "thread_name", tid, "name", nb, 0);
        meta_event(s, "thread_sort_index", tid, "sort_index", NULL, TASK_SORT_BASE + (long long)(s->tasks[i] % TASK_MAX));
    }
    for (uint32_t key = 0; key < LANE_KEYS; key++) {
        const jager_type_desc *d = key >= 2 ? jager_reader_type(s->r, (uint16_t)(key - 2)) : NULL;
        const char *base = key == LANE_KEY_GC ? "GC" : key == LANE_KEY_COMPILER ? "Compiler" : d && d->name ? d->name : "plugin";
        for (uint32_t k = 0; k < s->lane_subs[key]; k++) {
            uint64_t tid = LANE_BASE + (uint64_t)key * LANE_SUBS + k;
            char nb[300];
            if (k) snprintf(nb, sizeof nb, "%s (%u)", base, k + 1);
            else snprintf(nb, sizeof nb, "%s", base);
            meta_event(s, "thread_name", tid, "name", nb, 0);
            meta_event(s, "thread_sort_index", tid, "sort_index", NULL, (long long)tid);
        }
    }
}

static int cmp_slice(const void *a, const void *b)
{
    const call_slice *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->local_t0 < y->local_t0 ? -1 : x->local_t0 > y->local_t0;
}

static const call_slice *find_slice(const chrome_state *s, const jm_mpi_call *c)
{
    size_t lo = 0, hi = s->nslices;
    call_slice key = {c->part, c->thread, c->local_t0, 0, 0, 0};
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = cmp_slice(&s->slices[mid], &key);
        if (!r) return &s->slices[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* One flow arrow per matched message, from the middle of the sending call's slice to the
 * middle of the completing call's (a flow binds to the slice that encloses its time). */
static uint64_t write_arrows(chrome_state *s)
{
    const jm_mpi *m = s->part.mpi;
    uint64_t arrows = 0;
    if (!m || !m->nmsgs) return 0;
    if (s->nslices > 1) qsort(s->slices, s->nslices, sizeof *s->slices, cmp_slice);
    for (size_t i = 0; i < m->nmsgs && !s->failed; i++) {
        const jm_mpi_msg *x = &m->msgs[i];
        if (x->send_call >= m->ncalls || x->recv_call >= m->ncalls) continue;
        const jm_mpi_call *sc = &m->calls[x->send_call], *rc = &m->calls[x->recv_call];
        const call_slice *a = find_slice(s, sc), *b = find_slice(s, rc);
        if (!a || !b) continue;
        int64_t sp = m->ranks[sc->part].rank >= 0 ? m->ranks[sc->part].rank : (int64_t)sc->part;
        int64_t rp = m->ranks[rc->part].rank >= 0 ? m->ranks[rc->part].rank : (int64_t)rc->part;
        for (int side = 0; side < 2 && !s->failed; side++) {
            const call_slice *c = side ? b : a;
            tu_buf *o = &s->b;
            o->len = 0;
            if (s->events++) TU_PUTS(o, ",\n");
            TU_PUTS(o, "{\"name\":\"MPI message\",\"cat\":\"mpi.message\",\"ph\":\"");
            tu_buf_putc(o, side ? 'f' : 's');
            TU_PUTS(o, "\",\"bp\":\"e\",\"id\":");
            ex_put_u64(o, (uint64_t)i + 1);
            TU_PUTS(o, ",\"ts\":");
            put_time(o, (int64_t)(c->t0 + c->dur / 2 - s->base_ns));
            TU_PUTS(o, ",\"pid\":");
            ex_put_i64(o, side ? rp : sp);
            TU_PUTS(o, ",\"tid\":");
            ex_put_u64(o, c->tid);
            if (!side) tu_buf_printf(o, ",\"args\":{\"bytes\":%" PRIu64 ",\"to\":%lld,\"tag\":%lld}", x->bytes,
                                     (long long)rp, (long long)sc->tag);
            end_event(s);
        }
        arrows++;
    }
    return arrows;
}

/* Job mode: the next part's events follow, read from \p r. */
static int chrome_part(void *st, jager_reader *r, const export_part *p)
{
    chrome_state *s = st;
    if (s->have_part) {
        finish_part(s);
        for (uint32_t key = 0; key < LANE_KEYS; key++) {
            free(s->lane_end[key]);
            s->lane_end[key] = NULL;
        }
        memset(s->lane_subs, 0, sizeof s->lane_subs);
    }
    if (s->ncur_task) memset(s->cur_task, 0, s->ncur_task * sizeof *s->cur_task);
    s->ntasks = 0;
    jm_map_clear(&s->task_seen);
    memset(s->style, 0, sizeof s->style);
    s->have_part = 1;
    s->part = *p;
    s->r = r;
    s->pid = p->rank >= 0 ? p->rank : (long long)p->index;
    s->base_ns = p->base_ns;
    s->mpi_call_type = jager_reader_type_by_name(r, jp_name(&jp_mpi, JP_MPI_CALL));
    if (!s->mpi_call_type) s->mpi_call_type = UINT16_MAX;
    return s->failed ? -1 : 0;
}

static int chrome_finish(void *st)
{
    chrome_state *s = st;
    finish_part(s);
    uint64_t arrows = s->job ? write_arrows(s) : 0;
    /* trailer: display unit and the run's metadata */
    tu_buf *b = &s->b;
    b->len = 0;
    /* No displayTimeUnit: it only changes the display, but Perfetto before 2022 read "ns"
     * as the unit of ts (formats.md §8.4); ts and dur carry ns precision anyway. */
    TU_PUTS(b, "\n],\"otherData\":{\"jager.source\":");
    ex_json_str(b, s->o->input, (size_t)-1);
    if (s->job) { /* several recordings: their metadata stays in them (jager info) */
        tu_buf_printf(b, ",\"jager.ranks\":\"%u\",\"mpi.messages\":\"%zu\",\"mpi.arrows\":\"%" PRIu64 "\",\"mpi.missing_ranks\":\"",
                      s->part.nparts, s->part.mpi ? s->part.mpi->nmsgs : (size_t)0, arrows);
        for (size_t i = 0; i < s->part.nmissing; i++) tu_buf_printf(b, "%s%u", i ? "," : "", s->part.missing[i]);
        TU_PUTS(b, "\"}}\n");
        goto write_trailer;
    }
    size_t nmeta = jager_reader_meta_count(s->r);
    for (size_t i = 0; i < nmeta; i++) {
        const char *k = NULL, *v = NULL;
        if (jager_reader_meta_at(s->r, i, &k, &v) != JAGER_OK || !k) continue;
        tu_buf_putc(b, ',');
        ex_json_str(b, k, (size_t)-1);
        tu_buf_putc(b, ':');
        ex_json_str(b, v ? v : "", (size_t)-1);
    }
    TU_PUTS(b, "}}\n");
write_trailer:
    if (fwrite(b->data, 1, b->len, s->f) != b->len) s->failed = 1;
    if (s->f != stdout) {
        if (fclose(s->f) != 0) s->failed = 1;
    } else if (fflush(s->f) != 0) s->failed = 1;
    s->f = NULL;
    if (s->failed) fprintf(stderr, "jager export: writing %s failed\n", s->o->out);
    return s->failed ? -1 : 0;
}

static void chrome_free(void *st)
{
    chrome_state *s = st;
    if (!s) return;
    if (s->f && s->f != stdout) fclose(s->f);
    for (uint32_t i = 0; i < s->pend.n; i++) {
        pending *p = jm_pool_at(&s->pend, i);
        tu_buf_free(&p->attrs);
        tu_buf_free(&p->error);
    }
    jm_pool_free(&s->pend);
    for (uint32_t key = 0; key < LANE_KEYS; key++) free(s->lane_end[key]);
    free(s->slices);
    free(s->cur_task);
    free(s->tasks);
    jm_map_free(&s->task_seen);
    tu_buf_free(&s->b);
    tu_buf_free(&s->tmp);
    free(s);
}

const exporter export_chrome = {"chrome", ".trace.json", 1, chrome_open, chrome_event, chrome_finish, chrome_free,
                                chrome_part};
