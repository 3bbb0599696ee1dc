/* The Chrome Trace exporter's plugin events (see export_chrome.c for the whole mapping):
 * gc.* slices on the "GC" lane, dispatch.* on "Compiler" lanes that nest strictly, other
 * types with a duration_ns field on a lane of their own, all-numeric types as counter
 * tracks, the rest as instants with their fields as args. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "enc_json.h"
#include "export_chrome_priv.h"
#include "plugin_events.h"

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
            ex_json_str(&s->b, ch_site_name(s, v <= UINT32_MAX ? (uint32_t)v : 0, nb, sizeof nb), (size_t)-1);
            break;
        }
        case JAGER_FIELD_STACK: ch_put_stack(s, v); break;
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

void ch_on_plugin(chrome_state *s, const jager_event *ev)
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
        ch_begin_event(s, sig && key == LANE_KEY_COMPILER ? sig : name, (size_t)-1, d->name, "X", ev->time_ns, lane);
        TU_PUTS(&s->b, ",\"dur\":");
        ch_put_time(&s->b, (int64_t)dur);
        tu_buf_printf(&s->b, ",\"args\":{\"thread\":%u,\"duration_ns\":%" PRIu64, ev->thread,
                      (size_t)df < have ? p->fields[df] : 0);
        put_fields(s, d, p, have, df, 0);
        tu_buf_putc(&s->b, '}');
        break;
    }
    case STYLE_COUNTER:
        /* one counter track per field ("gc.sample.live_bytes"): the series of a sample
         * type have unrelated scales, and chrome://tracing stacks series of one event */
        for (uint32_t f = 0; f < d->nfields && f < have; f++) {
            s->tmp.len = 0;
            tu_buf_printf(&s->tmp, "%s.%s", d->name, d->fields[f].name ? d->fields[f].name : "field");
            ch_begin_event(s, (const char *)s->tmp.data, s->tmp.len, d->name, "C", ev->time_ns, ev->thread);
            TU_PUTS(&s->b, ",\"args\":{\"value\":");
            uint64_t v = p->fields[f];
            if (d->fields[f].kind == JAGER_FIELD_F64) {
                double x;
                memcpy(&x, &v, sizeof x);
                ex_json_f64(&s->b, x);
            } else if (d->fields[f].kind == JAGER_FIELD_I64) ex_put_i64(&s->b, (int64_t)v);
            else ex_put_u64(&s->b, v);
            tu_buf_putc(&s->b, '}');
            if (f + 1 < d->nfields && f + 1 < have && ch_end_event(s)) return;
        }
        break;
    default:
        ch_begin_event(s, d->name, (size_t)-1, d->name, "i", ev->time_ns, ev->thread);
        TU_PUTS(&s->b, ",\"s\":\"t\",\"args\":{");
        put_fields(s, d, p, have, -1, 1);
        tu_buf_putc(&s->b, '}');
    }
    ch_end_event(s);
}
