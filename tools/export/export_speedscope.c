/* `jager export --format speedscope`: the speedscope file format (formats.md §5), one
 * evented profile per thread, frames shared (one per site: name, file, line).
 *
 * Spans are ordered with export_spans (parents before children) and walked as a nested
 * tree, so every thread's O/C events balance like a stack with non-decreasing `at`
 * (nanoseconds since the recording's start). The JSON is assembled at the end, thread by
 * thread, so the events of each thread are kept while reading: in a small buffer per
 * thread, moved in chunks into ONE temporary file shared by all threads once a buffer
 * passes SS_CHUNK or all buffers together pass SS_BUFFERED. So a recording of thousands
 * of threads holds one descriptor (not one per thread: `ulimit -n` never limits it), and
 * memory stays bounded by the buffers and the largest top-level span tree. Thread
 * indices are what the file says: they are looked up through a hash map, never used to
 * size anything.
 *
 * With the sampler's samples, one "sampled" profile per sampled thread follows the evented
 * ones (export_speedscope_samples.c), its frames after the sites' frames. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "enc_json.h"
#include "export_spans.h"
#include "export_speedscope_samples.h"
#include "plugin_events.h"
#include "model_map.h"
#include "outfile.h"

#define SS_CHUNK (64u << 10)     /* a thread's buffer moves to the spill file past this */
#define SS_BUFFERED (32u << 20)  /* all buffers together: past this every buffer moves */

/** A run of one thread's events in the spill file. */
typedef struct ss_chunk {
    uint64_t off, len;
} ss_chunk;

typedef struct ss_thread {
    uint32_t thread; /* the index the file names */
    uint64_t events;
    uint64_t last_at;
    tu_buf pend;      /* events not yet in the spill file */
    ss_chunk *chunks; /* then these runs of the spill file, in order */
    size_t nchunks, cap_chunks;
} ss_thread;

typedef struct ss_state {
    jager_reader *r;
    const export_opts *o;
    tu_outfile out;
    FILE *f;
    sp_orderer *ord;
    uint64_t base_ns;
    ss_thread *threads;
    uint32_t nthreads, cap_threads;
    jm_map slot;      /* (thread index, 0) -> index in threads */
    FILE *spill;      /* the one temporary file (made when first needed) */
    uint64_t spill_end;
    uint64_t buffered; /* bytes in all pend buffers */
    ss_thread *cur; /* the thread being walked */
    tu_buf b;
    ss_samples *samples;
    int failed;   /* a write failed or memory ran out: said once (reported) */
    int reported;
    uint64_t left_plugin, left_core; /* events speedscope cannot show (said in one line) */
} ss_state;

/* Say what failed, once, with the errno of the failing call. */
static int fail(ss_state *s, const char *what)
{
    int e = errno ? errno : ENOMEM;
    if (!s->reported) fprintf(stderr, "jager export: %s: %s\n", what, strerror(e));
    s->reported = 1;
    s->failed = 1;
    errno = e;
    return -1;
}

static ss_thread *thread_slot(ss_state *s, uint32_t t)
{
    uint32_t k = jm_map_get(&s->slot, t, 0);
    if (k != JM_NONE) return &s->threads[k];
    if (s->nthreads == s->cap_threads) {
        uint32_t cap = s->cap_threads ? s->cap_threads * 2 : 16;
        ss_thread *v = cap > s->cap_threads ? realloc(s->threads, (size_t)cap * sizeof *v) : NULL;
        if (!v) return NULL;
        s->threads = v;
        s->cap_threads = cap;
    }
    if (jm_map_put(&s->slot, t, 0, s->nthreads)) return NULL;
    ss_thread *th = &s->threads[s->nthreads++];
    memset(th, 0, sizeof *th);
    th->thread = t;
    return th;
}

/* The spill file: made in $TMPDIR (else /tmp) and unlinked at once, so it never outlives us. */
static int spill_open(ss_state *s)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    char path[4096], what[4200];
    snprintf(path, sizeof path, "%s/jager-speedscope-XXXXXX", dir);
    snprintf(what, sizeof what, "cannot create a temporary file in %s", dir);
    int fd = mkstemp(path);
    if (fd < 0) return fail(s, what);
    unlink(path);
    if (!(s->spill = fdopen(fd, "w+b"))) {
        int e = errno;
        close(fd);
        errno = e;
        return fail(s, what);
    }
    return 0;
}

/* Move a thread's buffered events to the end of the spill file. */
static int spill(ss_state *s, ss_thread *th)
{
    if (!th->pend.len) return 0;
    errno = 0;
    if (!s->spill && spill_open(s)) return -1;
    if (fwrite(th->pend.data, 1, th->pend.len, s->spill) != th->pend.len)
        return fail(s, "writing the temporary file failed");
    ss_chunk *last = th->nchunks ? &th->chunks[th->nchunks - 1] : NULL;
    if (last && last->off + last->len == s->spill_end) {
        last->len += th->pend.len; /* the thread wrote last: one run */
    } else {
        if (th->nchunks == th->cap_chunks) {
            size_t cap = th->cap_chunks ? th->cap_chunks * 2 : 8;
            ss_chunk *v = realloc(th->chunks, cap * sizeof *v);
            if (!v) return fail(s, "out of memory");
            th->chunks = v;
            th->cap_chunks = cap;
        }
        th->chunks[th->nchunks++] = (ss_chunk){s->spill_end, th->pend.len};
    }
    s->spill_end += th->pend.len;
    s->buffered -= th->pend.len;
    th->pend.len = 0;
    if (th->pend.cap > 2 * SS_CHUNK) { /* a huge tree's buffer: give it back */
        tu_buf_free(&th->pend);
    }
    return 0;
}

static uint64_t rel(const ss_state *s, uint64_t t) { return t >= s->base_ns ? t - s->base_ns : 0; }

static void emit(ss_state *s, char type, uint32_t site, uint64_t at)
{
    ss_thread *th = s->cur;
    if (at < th->last_at) at = th->last_at; /* never backwards (the walker guarantees it; belt and braces) */
    th->last_at = at;
    tu_buf *b = &th->pend;
    size_t before = b->len;
    if (th->events++) tu_buf_putc(b, ',');
    TU_PUTS(b, "{\"type\":\"");
    tu_buf_putc(b, (uint8_t)type);
    TU_PUTS(b, "\",\"frame\":");
    ex_put_u64(b, site ? site - 1 : 0);
    TU_PUTS(b, ",\"at\":");
    ex_put_u64(b, at);
    if (tu_buf_putc(b, '}')) {
        errno = ENOMEM;
        fail(s, "out of memory");
    }
    s->buffered += b->len - before;
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
        errno = ENOMEM;
        return fail(s, "out of memory");
    }
    static const sp_walker w = {on_open, on_close};
    if (sp_walk(spans, n, &w, s)) return s->failed ? -1 : (errno = ENOMEM, fail(s, "out of memory"));
    if (s->cur->pend.len >= SS_CHUNK && spill(s, s->cur)) return -1;
    if (s->buffered >= SS_BUFFERED)
        for (uint32_t i = 0; i < s->nthreads; i++)
            if (spill(s, &s->threads[i])) return -1;
    return s->failed ? -1 : 0;
}

static void *ss_open(jager_reader *r, const export_opts *o)
{
    ss_state *s = calloc(1, sizeof *s);
    if (!s || !(s->ord = sp_new(on_batch, s)) || !(s->samples = ss_samples_new(r, o->sample_weight))) {
        if (s) sp_free(s->ord);
        free(s);
        fprintf(stderr, "jager export: out of memory\n");
        return NULL;
    }
    s->r = r;
    s->o = o;
    char why[512];
    if (tu_outfile_open(&s->out, o->out, why, sizeof why) != 0) {
        int e = errno;
        fprintf(stderr, "jager export: cannot create %s\n", why);
        sp_free(s->ord);
        ss_samples_free(s->samples);
        free(s);
        errno = e;
        return NULL;
    }
    s->f = s->out.f;
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    s->base_ns = info.start_ns; /* 0 when unknown: `at` is then the raw clock */
    return s;
}

static int ss_event(void *st, const jager_event *ev)
{
    ss_state *s = st;
    if (ev->type >= JAGER_EV_FIRST_PLUGIN) {
        const jager_type_desc *d = jager_reader_type(s->r, ev->type);
        if (!d || !d->name || !jp_is(d->name, &jp_sampler, JP_SAMPLER_SAMPLE)) s->left_plugin++; /* said at the end */
        return ss_samples_event(s->samples, ev);
    }
    jm_span_view sv; /* a span, or a span_x (a task that moved): in its begin thread's profile */
    if (!jm_span_of(ev, &sv)) {
        if (ev->type == JAGER_EV_LOG || ev->type == JAGER_EV_COUNTER || ev->type == JAGER_EV_MARK) s->left_core++;
        return 0;
    }
    if (sp_add_view(s->ord, &sv)) return s->failed ? -1 : (errno = ENOMEM, fail(s, "out of memory"));
    return s->failed ? -1 : 0;
}

/* Copy a thread's runs of the spill file, then its buffer, to the output. */
static int copy_thread(ss_state *s, ss_thread *th, FILE *to)
{
    char buf[65536];
    if (th->nchunks && fflush(s->spill)) return fail(s, "writing the temporary file failed");
    for (size_t i = 0; i < th->nchunks; i++) {
        if (fseeko(s->spill, (off_t)th->chunks[i].off, SEEK_SET)) return fail(s, "reading the temporary file failed");
        for (uint64_t left = th->chunks[i].len; left;) {
            size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
            errno = 0;
            if (fread(buf, 1, want, s->spill) != want) return fail(s, "reading the temporary file failed");
            if (fwrite(buf, 1, want, to) != want) return -1;
            left -= want;
        }
    }
    if (th->pend.len && fwrite(th->pend.data, 1, th->pend.len, to) != th->pend.len) return -1;
    return 0;
}

static int cmp_thread(const void *a, const void *b)
{
    const ss_thread *x = a, *y = b;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int ss_finish(void *st)
{
    const ss_state *ls = st;
    /* One line on what a speedscope file cannot hold, so nothing vanishes silently. */
    if (ls->left_plugin || ls->left_core)
        fprintf(stderr, "jager export speedscope: left out %" PRIu64 " plugin event%s and %" PRIu64 " logs, counters and marks "
                        "(speedscope shows spans and sampler.sample; see jager report)\n",
                ls->left_plugin, ls->left_plugin == 1 ? "" : "s", ls->left_core);
    ss_state *s = st;
    if (sp_finish(s->ord)) return s->failed ? -1 : (errno = ENOMEM, fail(s, "out of memory"));
    if (s->nthreads) /* threads is NULL for a part with no spans */
        qsort(s->threads, s->nthreads, sizeof *s->threads, cmp_thread); /* profiles in index order */
    jm_map_free(&s->slot);
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
    if (ss_samples_frames(s->samples, b, nsites ? nsites : 1)) return (errno = ENOMEM, fail(s, "out of memory"));
    TU_PUTS(b, "]},\"profiles\":[");
    int wfail = fwrite(b->data, 1, b->len, f) != b->len;
    int first = 1;
    for (uint32_t i = 0; i < s->nthreads && !wfail && !s->failed; i++) {
        ss_thread *th = &s->threads[i];
        uint32_t t = th->thread;
        if (!th->events) continue;
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
        if (fwrite(b->data, 1, b->len, f) != b->len || copy_thread(s, th, f) || fputs("]}", f) < 0) wfail = 1;
    }
    if (!wfail && !s->failed && ss_samples_profiles(s->samples, f, &first)) wfail = 1;
    if (!wfail && fputs("]}\n", f) < 0) wfail = 1;
    if (!wfail && fflush(f) != 0) wfail = 1;
    int e = errno;
    if (wfail && !s->reported) fprintf(stderr, "jager export: writing %s failed: %s\n", s->o->out, strerror(e));
    char why[512];
    int ok = !wfail && !s->failed;
    if (tu_outfile_close(&s->out, ok, why, sizeof why) != 0 && ok) {
        e = errno;
        fprintf(stderr, "jager export: %s\n", why);
        ok = 0;
    }
    s->f = NULL;
    errno = e;
    return ok ? 0 : -1;
}

static void ss_free(void *st)
{
    ss_state *s = st;
    if (!s) return;
    if (s->f) {
        char why[512];
        tu_outfile_close(&s->out, 0, why, sizeof why); /* a failed run leaves no partial file */
    }
    if (s->spill) fclose(s->spill);
    for (uint32_t t = 0; t < s->nthreads; t++) {
        tu_buf_free(&s->threads[t].pend);
        free(s->threads[t].chunks);
    }
    free(s->threads);
    jm_map_free(&s->slot);
    sp_free(s->ord);
    ss_samples_free(s->samples);
    tu_buf_free(&s->b);
    free(s);
}

const exporter export_speedscope = {"speedscope", ".speedscope.json", 1, ss_open, ss_event, ss_finish, ss_free, NULL};
