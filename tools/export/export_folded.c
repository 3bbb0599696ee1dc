/* `jager export --format folded`: the sampler's stacks as folded stacks, one line per
 * distinct stack, "outermost;…;innermost COUNT", the input of Brendan Gregg's
 * flamegraph.pl and of inferno. COUNT is the trigger periods the samples stand for (their
 * weight: a timer's overruns included), so widths are CPU time. Frames come from the
 * recording's symbol table, inlined ones included; an address without a name is written
 * as its hex value. Memory: one entry per distinct stack. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "model_map.h"
#include "sample_events.h"

typedef struct fo_entry {
    uint64_t stack, weight;
} fo_entry;

typedef struct fo_state {
    jager_reader *r;
    FILE *f;
    jm_sample_reader sr;
    jm_map by_stack; /* (stack, 0) -> index into v */
    fo_entry *v;
    uint32_t n, cap;
} fo_state;

static void *fo_open(jager_reader *r, const export_opts *o)
{
    fo_state *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "jager export: out of memory\n");
        return NULL;
    }
    s->r = r;
    s->f = strcmp(o->out, "-") ? fopen(o->out, "w") : stdout;
    if (!s->f) {
        fprintf(stderr, "jager export: cannot create '%s'\n", o->out);
        free(s);
        return NULL;
    }
    return s;
}

static int fo_event(void *st, const jager_event *ev)
{
    fo_state *s = st;
    jm_sample_ev e;
    if (!jm_sample_decode(&s->sr, s->r, ev, &e) || !e.stack) return 0;
    uint32_t k = jm_map_get(&s->by_stack, e.stack, 0);
    if (k == JM_NONE) {
        if (s->n == s->cap) {
            uint32_t cap = s->cap ? s->cap * 2 : 256;
            fo_entry *v = realloc(s->v, cap * sizeof *v);
            if (!v) goto oom;
            s->v = v;
            s->cap = cap;
        }
        if (jm_map_put(&s->by_stack, e.stack, 0, s->n)) goto oom;
        k = s->n++;
        s->v[k] = (fo_entry){e.stack, 0};
    }
    s->v[k].weight += e.weight;
    return 0;
oom:
    fprintf(stderr, "jager export: out of memory\n");
    return -1;
}

/* A frame name without the separators folded stacks use (';' between frames, ' ' before
 * the count). */
static void put_name(FILE *f, const char *name)
{
    for (const char *c = name; *c; c++) fputc(*c == ';' ? ':' : *c == '\n' ? ' ' : *c, f);
}

typedef struct fo_line {
    char *text;
    uint64_t weight;
} fo_line;

static int by_text(const void *a, const void *b) { return strcmp(((const fo_line *)a)->text, ((const fo_line *)b)->text); }

typedef struct fo_fold {
    FILE *m;
    int first;
} fo_fold;

static int on_frame(void *ctx, const jager_frame *fr)
{
    fo_fold *f = ctx;
    if (!f->first) fputc(';', f->m);
    put_name(f->m, fr->func);
    f->first = 0;
    return 0;
}

/* The folded text of one stack, outermost first (malloc'd), or NULL on out of memory. */
static char *fold(fo_state *s, uint64_t stack)
{
    char *buf = NULL;
    size_t len = 0;
    fo_fold f = {open_memstream(&buf, &len), 1};
    if (!f.m) return NULL;
    jm_stack_frames(s->r, stack, on_frame, &f);
    if (fclose(f.m)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Stacks that differ only in addresses inside the same functions fold into one line. */
static int fo_finish(void *st)
{
    fo_state *s = st;
    int rc = -1;
    fo_line *lines = calloc(s->n ? s->n : 1, sizeof *lines);
    size_t nl = 0;
    if (!lines) goto oom;
    for (uint32_t i = 0; i < s->n; i++) {
        const fo_entry *e = &s->v[i];
        const uint64_t *ips = NULL;
        uint32_t n = 0;
        if (jager_reader_stack(s->r, e->stack, &ips, &n) != JAGER_OK || n == 0) continue;
        char *t = fold(s, e->stack);
        if (!t) goto oom;
        lines[nl++] = (fo_line){t, e->weight};
    }
    qsort(lines, nl, sizeof *lines, by_text);
    for (size_t i = 0; i < nl;) {
        size_t j = i;
        uint64_t w = 0;
        while (j < nl && !strcmp(lines[j].text, lines[i].text)) w += lines[j++].weight;
        fprintf(s->f, "%s %" PRIu64 "\n", lines[i].text, w);
        i = j;
    }
    if (fflush(s->f) || ferror(s->f)) {
        fprintf(stderr, "jager export: write error\n");
        goto done;
    }
    rc = 0;
    goto done;
oom:
    fprintf(stderr, "jager export: out of memory\n");
done:
    for (size_t i = 0; lines && i < nl; i++) free(lines[i].text);
    free(lines);
    return rc;
}

static void fo_free(void *st)
{
    fo_state *s = st;
    if (!s) return;
    if (s->f && s->f != stdout) fclose(s->f);
    jm_map_free(&s->by_stack);
    free(s->v);
    free(s);
}

const exporter export_folded = {"folded", ".folded", 1, fo_open, fo_event, fo_finish, fo_free, NULL};
