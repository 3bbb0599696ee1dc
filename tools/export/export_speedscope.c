/* `jager export --format speedscope`: the speedscope file format (formats.md §5), one
 * evented profile per thread, frames shared (one per site: name, file, line).
 *
 * Spans are ordered with export_spans (parents before children) and walked as a nested
 * tree, so every thread's O/C events balance like a stack with non-decreasing `at`
 * (nanoseconds since the recording's start). Each thread's events go to a temporary file
 * while reading; the JSON is assembled at the end, so memory stays bounded by the
 * largest top-level span tree. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "enc_json.h"
#include "export_spans.h"

typedef struct ss_thread {
    FILE *tmp;
    uint64_t events;
    uint64_t last_at;
} ss_thread;

typedef struct ss_state {
    jager_reader *r;
    const export_opts *o;
    FILE *f;
    sp_orderer *ord;
    uint64_t base_ns;
    ss_thread *threads;
    uint32_t nthreads;
    ss_thread *cur; /* the thread being walked */
    tu_buf b, ev;
    int failed;
} ss_state;

static ss_thread *thread_slot(ss_state *s, uint32_t t)
{
    if (t >= s->nthreads) {
        uint32_t n = s->nthreads ? s->nthreads : 16;
        while (n <= t) n *= 2;
        ss_thread *v = realloc(s->threads, n * sizeof *v);
        if (!v) return NULL;
        memset(v + s->nthreads, 0, (n - s->nthreads) * sizeof *v);
        s->threads = v;
        s->nthreads = n;
    }
    ss_thread *th = &s->threads[t];
    if (!th->tmp) th->tmp = tmpfile();
    return th->tmp ? th : NULL;
}

static uint64_t rel(const ss_state *s, uint64_t t) { return t >= s->base_ns ? t - s->base_ns : 0; }

static void emit(ss_state *s, char type, uint32_t site, uint64_t at)
{
    ss_thread *th = s->cur;
    if (at < th->last_at) at = th->last_at; /* never backwards (the walker guarantees it; belt and braces) */
    th->last_at = at;
    tu_buf *b = &s->ev;
    b->len = 0;
    if (th->events++) tu_buf_putc(b, ',');
    TU_PUTS(b, "{\"type\":\"");
    tu_buf_putc(b, (uint8_t)type);
    TU_PUTS(b, "\",\"frame\":");
    ex_put_u64(b, site ? site - 1 : 0);
    TU_PUTS(b, ",\"at\":");
    ex_put_u64(b, at);
    if (tu_buf_putc(b, '}') || fwrite(b->data, 1, b->len, th->tmp) != b->len) s->failed = 1;
}

static uint64_t on_open(void *ctx, const sp_span *sp, uint32_t depth, uint64_t parent_user)
{
    ss_state *s = ctx;
    emit(s, 'O', sp->site, rel(s, sp->start));
    return 0;
}

static int on_close(void *ctx, const sp_span *sp, uint64_t end, uint64_t child_ns, uint64_t child_bytes,
                    uint32_t depth, uint64_t user)
{
    ss_state *s = ctx;
    emit(s, 'C', sp->site, rel(s, end));
    return s->failed ? -1 : 0;
}

static int on_batch(void *ctx, uint32_t thread, const sp_span *spans, size_t n)
{
    ss_state *s = ctx;
    s->cur = thread_slot(s, thread);
    if (!s->cur) {
        fprintf(stderr, "jager export: cannot create a temporary file: %s\n", strerror(errno));
        return -1;
    }
    static const sp_walker w = {on_open, on_close};
    return sp_walk(spans, n, &w, s);
}

static void *ss_open(jager_reader *r, const export_opts *o)
{
    ss_state *s = calloc(1, sizeof *s);
    if (!s || !(s->ord = sp_new(on_batch, s))) {
        free(s);
        fprintf(stderr, "jager export: out of memory\n");
        return NULL;
    }
    s->r = r;
    s->o = o;
    s->f = strcmp(o->out, "-") ? fopen(o->out, "wb") : stdout;
    if (!s->f) {
        fprintf(stderr, "jager export: cannot create %s: %s\n", o->out, strerror(errno));
        sp_free(s->ord);
        free(s);
        return NULL;
    }
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    s->base_ns = info.start_ns; /* 0 when unknown: `at` is then the raw clock */
    return s;
}

static int ss_event(void *st, const jager_event *ev)
{
    ss_state *s = st;
    if (ev->type != JAGER_EV_SPAN || (size_t)ev->rec->words * 8u < sizeof(jager_rec_span)) return 0;
    const jager_rec_span *sp = (const void *)ev->rec;
    if (sp_add(s->ord, ev->thread, sp)) {
        if (!s->failed) fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    return s->failed ? -1 : 0;
}

static int copy_file(FILE *from, FILE *to)
{
    char buf[65536];
    size_t n;
    if (fflush(from) || fseek(from, 0, SEEK_SET)) return -1;
    while ((n = fread(buf, 1, sizeof buf, from)) > 0)
        if (fwrite(buf, 1, n, to) != n) return -1;
    return ferror(from) ? -1 : 0;
}

static int ss_finish(void *st)
{
    ss_state *s = st;
    if (sp_finish(s->ord)) {
        if (!s->failed) fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    FILE *f = s->f;
    tu_buf *b = &s->b;
    b->len = 0;
    TU_PUTS(b, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"jager@");
    tu_buf_printf(b, "%s\",\"name\":", JAGER_VERSION_STRING);
    ex_json_str(b, s->o->input, (size_t)-1);
    TU_PUTS(b, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
    uint32_t nsites = jager_reader_site_count(s->r);
    for (uint32_t site = 1; site <= nsites; site++) {
        const char *name = NULL, *file = NULL;
        uint32_t line = 0;
        char nb[32];
        if (jager_reader_site(s->r, site, &name, &file, &line) != JAGER_OK || !name) {
            snprintf(nb, sizeof nb, "site#%u", site);
            name = nb;
            file = NULL;
        }
        if (site > 1) tu_buf_putc(b, ',');
        TU_PUTS(b, "{\"name\":");
        ex_json_str(b, name, (size_t)-1);
        if (file && *file) {
            TU_PUTS(b, ",\"file\":");
            ex_json_str(b, file, (size_t)-1);
            if (line) tu_buf_printf(b, ",\"line\":%u", line);
        }
        tu_buf_putc(b, '}');
    }
    if (nsites == 0) TU_PUTS(b, "{\"name\":\"(none)\"}");
    TU_PUTS(b, "]},\"profiles\":[");
    if (fwrite(b->data, 1, b->len, f) != b->len) s->failed = 1;
    int first = 1;
    for (uint32_t t = 0; t < s->nthreads && !s->failed; t++) {
        ss_thread *th = &s->threads[t];
        if (!th->tmp || !th->events) continue;
        uint64_t os_tid = 0;
        const char *tname = NULL;
        char nb[300];
        if (jager_reader_thread(s->r, t, &os_tid, &tname) == JAGER_OK && tname && *tname)
            snprintf(nb, sizeof nb, "%s (thread %u)", tname, t);
        else snprintf(nb, sizeof nb, "thread %u", t);
        b->len = 0;
        if (!first) tu_buf_putc(b, ',');
        first = 0;
        TU_PUTS(b, "{\"type\":\"evented\",\"name\":");
        ex_json_str(b, nb, (size_t)-1);
        tu_buf_printf(b, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"events\":[",
                      th->last_at);
        if (fwrite(b->data, 1, b->len, f) != b->len || copy_file(th->tmp, f) || fputs("]}", f) < 0) s->failed = 1;
    }
    if (fputs("]}\n", f) < 0) s->failed = 1;
    if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) s->failed = 1;
    s->f = NULL;
    if (s->failed) fprintf(stderr, "jager export: writing %s failed: %s\n", s->o->out, strerror(errno));
    return s->failed ? -1 : 0;
}

static void ss_free(void *st)
{
    ss_state *s = st;
    if (!s) return;
    if (s->f && s->f != stdout) fclose(s->f);
    for (uint32_t t = 0; t < s->nthreads; t++)
        if (s->threads[t].tmp) fclose(s->threads[t].tmp);
    free(s->threads);
    sp_free(s->ord);
    tu_buf_free(&s->b);
    tu_buf_free(&s->ev);
    free(s);
}

const exporter export_speedscope = {"speedscope", ".speedscope.json", 0, ss_open, ss_event, ss_finish, ss_free};
