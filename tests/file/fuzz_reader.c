/* libFuzzer target for the .jgr reader: open any bytes as a recording, iterate every
 * event, decode what each event refers to (strings, sites, counters, threads, stacks,
 * symbols, log bodies, attribute lists, plugin fields), load the tables, read the
 * statistics. Any crash, overread or leak is a bug. Built with -fsanitize=fuzzer,address
 * (JAGER_FUZZ=ON with clang, or by run_fuzz.sh from the tests). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jager_reader.h"

static volatile uint64_t sink;

static void touch(const char *s)
{
    if (s) sink += strlen(s);
}

static void walk_attrs(const uint8_t *a, const uint8_t *end)
{
    jager_attr_view v;
    while (jager_attr_next(&a, end, &v) > 0) {
        for (uint32_t i = 0; i < v.key_len; i++) sink += (uint8_t)v.key[i];
        if (v.kind == JAGER_ATTR_STR)
            for (uint32_t i = 0; i < v.str_len; i++) sink += (uint8_t)v.str[i];
    }
}

static void decode(const jager_reader *r, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    const uint8_t *end = (const uint8_t *)h + (size_t)h->words * 8u;
    const char *a, *b;
    uint32_t line, kind;
    sink += ev->time_ns + ev->end_ns + ev->thread;
    switch (ev->type) {
    case JAGER_EV_SPAN:
    case JAGER_EV_SPAN_ERROR:
        if (jager_reader_site(r, h->aux, &a, &b, &line) == JAGER_OK) { touch(a); touch(b); }
        if (ev->type == JAGER_EV_SPAN_ERROR) {
            const jager_rec_span_error *e = (const jager_rec_span_error *)h;
            for (uint32_t i = 0; i < e->msg_len; i++) sink += ((const uint8_t *)(e + 1))[i];
        }
        break;
    case JAGER_EV_LOG: {
        const char *body;
        uint32_t blen;
        const uint8_t *at, *ae;
        if (jager_log_body((const jager_rec_log *)h, &body, &blen, &at, &ae) == JAGER_OK) {
            for (uint32_t i = 0; i < blen; i++) sink += (uint8_t)body[i];
            walk_attrs(at, ae);
        }
        break;
    }
    case JAGER_EV_SPAN_ATTR:
        walk_attrs((const uint8_t *)h + sizeof(jager_rec_span_attr), end);
        break;
    case JAGER_EV_COUNTER:
        if (jager_reader_counter(r, h->aux, &a, &b, &kind) == JAGER_OK) { touch(a); touch(b); }
        break;
    case JAGER_EV_MARK:
        touch(jager_reader_string(r, h->aux));
        break;
    case JAGER_EV_DIAG: {
        const jager_rec_diag *d = (const jager_rec_diag *)h;
        touch(jager_reader_string(r, d->source));
        for (uint32_t i = 0; i < d->text_len; i++) sink += ((const uint8_t *)(d + 1))[i];
        break;
    }
    default: {
        const jager_type_desc *td = jager_reader_type(r, ev->type);
        if (!td || td->builtin) break;
        touch(td->name);
        const jager_rec_plugin *p = (const jager_rec_plugin *)h;
        for (uint32_t i = 0; i < td->nfields; i++) {
            uint64_t v = p->fields[i]; /* the reader guarantees the record holds them */
            touch(td->fields[i].name);
            if (td->fields[i].kind == JAGER_FIELD_STRING) touch(jager_reader_string(r, (uint32_t)v));
            if (td->fields[i].kind == JAGER_FIELD_SITE && jager_reader_site(r, (jager_site)v, &a, &b, &line) == JAGER_OK)
                touch(a);
            if (td->fields[i].kind == JAGER_FIELD_STACK) {
                const uint64_t *ips;
                uint32_t n;
                if (jager_reader_stack(r, v, &ips, &n) == JAGER_OK)
                    for (uint32_t k = 0; k < n; k++) {
                        jager_frame fr[4];
                        uint32_t nf = jager_reader_symbolize(r, ips[k], fr, 4);
                        for (uint32_t j = 0; j < nf; j++) { touch(fr[j].func); touch(fr[j].file); }
                    }
            }
        }
    }
    }
}

static void drain(jager_reader *r)
{
    jager_event ev;
    uint64_t n = 0;
    while (n++ < 2000000 && jager_reader_next(r, &ev) > 0) decode(r, &ev);
    touch(jager_reader_error(r));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jager_reader *r;
    if (jager_reader_open_memory(data, size, &r) != JAGER_OK) return 0;
    drain(r);
    jager_reader_load_tables(r);
    drain(r);
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    jager_stat st = {.struct_size = sizeof st};
    if (jager_reader_stats(r, &st) == JAGER_OK) sink += st.events_written;
    for (uint32_t s = 0; s <= jager_reader_site_count(r) + 1; s++) {
        jager_site_stat ss = {.struct_size = sizeof ss};
        if (jager_reader_site_stats(r, s, &ss) == JAGER_OK) sink += ss.calls + ss.hist[0];
    }
    for (size_t i = 0; i < jager_reader_meta_count(r); i++) {
        const char *k, *v;
        if (jager_reader_meta_at(r, i, &k, &v) == JAGER_OK) { touch(k); touch(v); }
    }
    for (uint32_t t = 0; t <= jager_reader_thread_count(r); t++) {
        uint64_t tid;
        const char *name;
        if (jager_reader_thread(r, t, &tid, &name) == JAGER_OK) touch(name);
    }
    for (uint32_t id = 0; id < 1024; id++) {
        const jager_type_desc *td = jager_reader_type(r, (uint16_t)id);
        if (td) sink += jager_reader_type_by_name(r, td->name);
    }
    jager_reader_close(r);
    return 0;
}
