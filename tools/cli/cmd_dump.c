/* cmd_dump.c — `jager dump FILE [--type NAME] [--limit N]`: every event as one JSON object
 * per line, in file order, with names resolved from the recording's tables: the type's
 * name, the thread, times, the site, and for plugin types each field by its schema name.
 * Every string from the file goes through tu_json_str, so hostile names and messages stay
 * inert JSON (also inside HTML). A truncated file prints the good prefix and exits 3. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "job.h"
#include "toolutil.h"

static void usage(FILE *out)
{
    fputs("usage: jager dump FILE.jgr… | FOLDER [--type NAME] [--limit N]\n"
          "  one JSON object per event and line, in file order\n"
          "  several files, a job file or a folder: the ranks in order, each line with its \"rank\"\n"
          "  --type NAME  only events of this type (\"span\", \"log\", \"gc.pause\", ...)\n"
          "  --limit N    stop after N events\n",
          out);
}

static void put_double(FILE *out, double v)
{
    if (isfinite(v)) fprintf(out, "%.17g", v);
    else fputs("null", out); /* JSON has no NaN or infinity */
}

/* A string id as its text, or null. */
static void put_string_id(FILE *out, const jager_reader *r, uint32_t id)
{
    tu_json_str(out, id ? jager_reader_string(r, id) : NULL, (size_t)-1);
}

static void put_site(FILE *out, const jager_reader *r, jager_site site)
{
    const char *name = NULL;
    if (site) jager_reader_site(r, site, &name, NULL, NULL);
    fprintf(out, ",\"site_id\":%" PRIu32 ",\"site\":", site);
    tu_json_str(out, name, (size_t)-1);
}

/* The span an attribute or error record names: its site, its id, and with
 * JAGER_SPAN_REF_MOVED (1.2: set after its task moved) the begin thread that numbers the id. */
static void put_span_ref(FILE *out, const jager_reader *r, uint32_t aux, uint32_t span_id)
{
    put_site(out, r, aux & JAGER_SPAN_REF_MOVED ? JAGER_SPAN_REF_SITE(aux) : aux);
    fprintf(out, ",\"span_id\":%" PRIu32, span_id);
    if (aux & JAGER_SPAN_REF_MOVED) fprintf(out, ",\"span_thread\":%" PRIu32, JAGER_SPAN_REF_THREAD(aux));
}

static void put_attrs(FILE *out, const uint8_t *a, const uint8_t *end)
{
    fputs(",\"attrs\":{", out);
    jager_attr_view v;
    int rc, first = 1;
    while ((rc = jager_attr_next(&a, end, &v)) > 0) {
        if (!first) fputc(',', out);
        first = 0;
        tu_json_str(out, v.key, v.key_len);
        fputc(':', out);
        switch (v.kind) {
        case JAGER_ATTR_I64: fprintf(out, "%" PRId64, v.i64); break;
        case JAGER_ATTR_F64: put_double(out, v.f64); break;
        case JAGER_ATTR_BOOL: fputs(v.i64 ? "true" : "false", out); break;
        case JAGER_ATTR_STR_ID: fprintf(out, "{\"string_id\":%" PRId64 "}", v.i64); break; /* as recorded: the id */
        default: tu_json_str(out, v.str, v.str_len);
        }
    }
    fputc('}', out);
    if (rc < 0) fputs(",\"attrs_error\":\"malformed attribute list\"", out);
}

static const char *drop_reason(uint32_t reason)
{
    static const char *names[] = {"ring_full", "overwritten", "no_ring", "too_large", "sink", "bad_emit", "after_stop"};
    return reason < sizeof names / sizeof names[0] ? names[reason] : "unknown";
}

static void put_plugin_fields(FILE *out, const jager_reader *r, const jager_type_desc *td, const jager_record *rec)
{
    const jager_rec_plugin *p = (const jager_rec_plugin *)rec;
    uint32_t have = rec->words >= 2 ? rec->words - 2u : 0, n = td->nfields < have ? td->nfields : have;
    fputs(",\"fields\":{", out);
    for (uint32_t i = 0; i < n; i++) {
        if (i) fputc(',', out);
        tu_json_str(out, td->fields[i].name, (size_t)-1);
        fputc(':', out);
        uint64_t v = p->fields[i];
        switch (td->fields[i].kind) {
        case JAGER_FIELD_I64: fprintf(out, "%" PRId64, (int64_t)v); break;
        case JAGER_FIELD_F64: {
            double d;
            memcpy(&d, &v, 8);
            put_double(out, d);
            break;
        }
        case JAGER_FIELD_STRING: put_string_id(out, r, (uint32_t)v); break;
        case JAGER_FIELD_SITE: {
            const char *name = NULL;
            if (v && v <= UINT32_MAX) jager_reader_site(r, (jager_site)v, &name, NULL, NULL);
            tu_json_str(out, name, (size_t)-1);
            break;
        }
        case JAGER_FIELD_BOOL: fputs(v ? "true" : "false", out); break;
        default: fprintf(out, "%" PRIu64, v); /* U64, STACK, TIME_NS, DURATION_NS, BYTES, future kinds */
        }
    }
    fputc('}', out);
}

/* ,"key":"<lowercase hex of n bytes>" */
static void put_hex(FILE *out, const char *key, const uint8_t *p, size_t n)
{
    fprintf(out, ",\"%s\":\"", key);
    for (size_t i = 0; i < n; i++) fprintf(out, "%02x", p[i]);
    fputc('"', out);
}

/* The body of one event after "type", "thread" and the times. */
static void put_body(FILE *out, const jager_reader *r, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    const uint8_t *base = (const uint8_t *)h, *end = base + (size_t)h->words * 8u;
    switch (ev->type) {
    case JAGER_EV_SPAN: case JAGER_EV_SPAN_X: { /* span_x: the reader checked its whole size */
        const jager_rec_span *s = (const jager_rec_span *)h;
        put_site(out, r, h->aux);
        fprintf(out, ",\"dur_ns\":%" PRIu64 ",\"span_id\":%" PRIu32 ",\"parent_id\":%" PRIu32 ",\"bytes\":%" PRIu64,
                s->end_ns - s->start_ns, s->span_id, s->parent_id, s->bytes);
        if (ev->type == JAGER_EV_SPAN_X) { /* the threads that number its ids (a task that moved) */
            const jager_rec_span_x *x = (const jager_rec_span_x *)h;
            fprintf(out, ",\"begin_thread\":%" PRIu32 ",\"parent_thread\":%" PRIu32, x->begin_thread, x->parent_thread);
        }
        break;
    }
    case JAGER_EV_LOG: {
        const jager_rec_log *l = (const jager_rec_log *)h;
        fprintf(out, ",\"severity\":%" PRIu32 ",\"truncated\":%s,\"span_id\":%" PRIu32, h->aux & 0xffu,
                (h->aux & JAGER_LOG_TRUNCATED) ? "true" : "false", l->span_id);
        if (h->aux & JAGER_LOG_SPAN_MOVED) /* its span began on another thread, which numbers span_id */
            fprintf(out, ",\"span_thread\":%" PRIu32, JAGER_LOG_SPAN_THREAD(h->aux));
        put_site(out, r, l->site);
        static const uint8_t zero[16];
        if (memcmp(l->trace_id, zero, 16) != 0) {
            put_hex(out, "trace_id", l->trace_id, 16);
            put_hex(out, "trace_span_id", l->ctx_span_id, 8);
        }
        const char *body;
        uint32_t blen;
        const uint8_t *a, *ae;
        if (jager_log_body(l, &body, &blen, &a, &ae) == JAGER_OK) {
            fputs(",\"body\":", out);
            tu_json_str(out, body, blen);
            put_attrs(out, a, ae);
        }
        break;
    }
    case JAGER_EV_COUNTER: {
        const jager_rec_counter *c = (const jager_rec_counter *)h;
        const char *name = NULL, *unit = NULL;
        jager_reader_counter(r, h->aux, &name, &unit, NULL);
        fprintf(out, ",\"counter_id\":%" PRIu32 ",\"counter\":", h->aux);
        tu_json_str(out, name, (size_t)-1);
        fputs(",\"unit\":", out);
        tu_json_str(out, unit, (size_t)-1);
        fputs(",\"value\":", out);
        put_double(out, c->value);
        break;
    }
    case JAGER_EV_MARK:
        fputs(",\"name\":", out);
        put_string_id(out, r, h->aux);
        if ((size_t)h->words * 8u >= sizeof(jager_rec_mark) + 8u) /* jager_mark_attrs() */
            put_attrs(out, (const uint8_t *)h + sizeof(jager_rec_mark) + 8u, end);
        break;
    case JAGER_EV_TASK: {
        const jager_rec_task *k = (const jager_rec_task *)h;
        fprintf(out, ",\"task\":%" PRIu64 ",\"first_span\":%" PRIu32, k->task, k->first_span);
        break;
    }
    case JAGER_EV_DROP:
        fprintf(out, ",\"reason\":\"%s\",\"count\":%" PRIu64, drop_reason(h->aux), ((const jager_rec_drop *)h)->count);
        break;
    case JAGER_EV_DIAG: {
        const jager_rec_diag *d = (const jager_rec_diag *)h;
        fprintf(out, ",\"severity\":%" PRIu32 ",\"source\":", h->aux);
        put_string_id(out, r, d->source);
        fputs(",\"text\":", out);
        tu_json_str(out, (const char *)(d + 1), d->text_len); /* bounds checked by the reader */
        break;
    }
    case JAGER_EV_SPAN_ATTR: {
        const jager_rec_span_attr *s = (const jager_rec_span_attr *)h;
        put_span_ref(out, r, h->aux, s->span_id);
        put_attrs(out, (const uint8_t *)(s + 1), end);
        break;
    }
    case JAGER_EV_SPAN_ERROR: {
        const jager_rec_span_error *e = (const jager_rec_span_error *)h;
        put_span_ref(out, r, h->aux, e->span_id);
        fputs(",\"message\":", out);
        tu_json_str(out, (const char *)(e + 1), e->msg_len);
        break;
    }
    case JAGER_EV_CONTEXT: {
        const jager_rec_context *c = (const jager_rec_context *)h;
        fprintf(out, ",\"set\":%s", h->aux ? "true" : "false");
        put_hex(out, "trace_id", c->trace_id, 16);
        put_hex(out, "trace_span_id", c->span_id, 8);
        fprintf(out, ",\"first_span\":%" PRIu32 ",\"flags\":%u", c->first_span, c->flags);
        break;
    }
    default: {
        const jager_type_desc *td = jager_reader_type(r, ev->type);
        if (td && !td->builtin) put_plugin_fields(out, r, td, h);
        else fprintf(out, ",\"aux\":%" PRIu32 ",\"words\":%u", h->aux, h->words);
    }
    }
}

int cmd_dump(int argc, char **argv)
{
    const char *type_name = NULL;
    uint64_t limit = UINT64_MAX;
    const cli_opt opts[] = {
        CLI_STRING_OPT("--type", NULL, &type_name),
        {.name = "--limit", .kind = CLI_UINT, .dest = &limit, .min = 0, .max = (double)UINT64_MAX, .bad = "--limit wants a number"},
    };
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    if (!paths) return JAGER_EXIT_INPUT;
    const cli_spec spec = {"dump", usage, opts, sizeof opts / sizeof opts[0], 1, (size_t)argc, 0, NULL};
    size_t npos;
    int parsed = cli_parse(&spec, argc, argv, paths, &npos);
    if (parsed) {
        free(paths);
        return cli_parse_exit(parsed);
    }
    jm_job *j = cli_open_job("dump", paths, npos);
    free(paths);
    if (!j) return JAGER_EXIT_INPUT;
    /* the parts of a job: each line says its rank ("rank" first), parts in rank order */
    int tag = j->n > 1 || j->from_job_file, code = JAGER_EXIT_OK;
    FILE *out = stdout;
    uint64_t n = 0;
    for (size_t p = 0; p < j->n; p++) {
        jager_reader *r = j->parts[p].r;
        jager_event ev;
        int rc = 0;
        while (n < limit && (rc = jager_reader_next(r, &ev)) > 0) {
            const jager_type_desc *td = jager_reader_type(r, ev.type);
            if (type_name && (!td || strcmp(td->name, type_name) != 0)) continue;
            if (tag) fprintf(out, "{\"rank\":%lld,\"type\":", (long long)j->parts[p].rank);
            else fputs("{\"type\":", out);
            tu_json_str(out, td ? td->name : NULL, (size_t)-1);
            fprintf(out, ",\"type_id\":%u,\"thread\":%" PRIu32, ev.type, ev.thread);
            if (ev.type != JAGER_EV_SPAN_ATTR)
                fprintf(out, ",\"time_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64, ev.time_ns, ev.end_ns);
            put_body(out, r, &ev);
            fputs("}\n", out);
            n++;
        }
        if (n == limit) rc = 0;
        fflush(out);
        int c = cli_finish("dump", j->parts[p].label, r, rc);
        if (c > code) code = c;
    }
    if (ferror(out) && code == JAGER_EXIT_OK) {
        fprintf(stderr, "jager dump: write error on standard output\n");
        code = JAGER_EXIT_INPUT;
    }
    jm_job_free(j);
    return code;
}
