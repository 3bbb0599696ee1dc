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
#include "plugin_events.h"

typedef struct fo_entry {
    uint64_t stack, weight;
} fo_entry;

typedef struct fo_state {
    jager_reader *r;
    FILE *f;
    int resolved;
    uint16_t type;
    int f_stack, f_weight;
    fo_entry *v; /* open addressing by stack id; stack 0 = empty */
    uint32_t nslots, n;
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

static uint32_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

static fo_entry *slot(fo_state *s, uint64_t stack)
{
    if ((s->n + 1) * 2 > s->nslots) {
        uint32_t n = s->nslots ? s->nslots * 2 : 256;
        fo_entry *v = calloc(n, sizeof *v);
        if (!v) return NULL;
        for (uint32_t i = 0; i < s->nslots; i++) {
            if (!s->v[i].stack) continue;
            uint32_t k = hash64(s->v[i].stack) & (n - 1);
            while (v[k].stack) k = (k + 1) & (n - 1);
            v[k] = s->v[i];
        }
        free(s->v);
        s->v = v;
        s->nslots = n;
    }
    uint32_t k = hash64(stack) & (s->nslots - 1);
    while (s->v[k].stack && s->v[k].stack != stack) k = (k + 1) & (s->nslots - 1);
    if (!s->v[k].stack) {
        s->v[k].stack = stack;
        s->n++;
    }
    return &s->v[k];
}

static int fo_event(void *st, const jager_event *ev)
{
    fo_state *s = st;
    if (!s->resolved) {
        s->resolved = 1;
        s->type = jager_reader_type_by_name(s->r, jp_name(&jp_sampler, JP_SAMPLER_SAMPLE));
        const jager_type_desc *d = s->type ? jager_reader_type(s->r, s->type) : NULL;
        uint32_t fs = jp_field_index(d, &jp_sampler, JP_SAMPLER_SAMPLE, JP_SMP_STACK);
        uint32_t fw = jp_field_index(d, &jp_sampler, JP_SAMPLER_SAMPLE, JP_SMP_WEIGHT);
        s->f_stack = fs != UINT32_MAX && d->fields[fs].kind == JAGER_FIELD_STACK ? (int)fs : -1;
        s->f_weight = fw != UINT32_MAX ? (int)fw : -1;
        if (s->f_stack < 0) s->type = 0;
    }
    if (!s->type || ev->type != s->type) return 0;
    const jager_rec_plugin *p = (const void *)ev->rec;
    size_t total = (size_t)ev->rec->words * 8u;
    size_t have = total >= sizeof *p ? (total - sizeof *p) / 8u : 0;
    uint64_t stack = (size_t)s->f_stack < have ? p->fields[s->f_stack] : 0;
    uint64_t w = s->f_weight >= 0 && (size_t)s->f_weight < have ? p->fields[s->f_weight] : 1;
    if (!stack) return 0;
    fo_entry *e = slot(s, stack);
    if (!e) {
        fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    e->weight += w ? w : 1;
    return 0;
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

/* The folded text of one stack (malloc'd), or NULL on out of memory. */
static char *fold(fo_state *s, const uint64_t *ips, uint32_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return NULL;
    int first = 1;
    for (uint32_t k = n; k-- > 0;) { /* outermost first */
        jager_frame fr[16];
        uint32_t nf = jager_reader_symbolize(s->r, ips[k], fr, 16);
        if (nf == 0) {
            fprintf(m, "%s0x%" PRIx64, first ? "" : ";", ips[k] - 1);
            first = 0;
            continue;
        }
        for (uint32_t j = 0; j < nf; j++) { /* the containing function, then what is inlined into it */
            if (!first) fputc(';', m);
            put_name(m, fr[j].func);
            first = 0;
        }
    }
    if (fclose(m)) {
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
    for (uint32_t i = 0; i < s->nslots; i++) {
        const fo_entry *e = &s->v[i];
        if (!e->stack) continue;
        const uint64_t *ips = NULL;
        uint32_t n = 0;
        if (jager_reader_stack(s->r, e->stack, &ips, &n) != JAGER_OK || n == 0) continue;
        char *t = fold(s, ips, n);
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
    free(s->v);
    free(s);
}

const exporter export_folded = {"folded", ".folded", 1, fo_open, fo_event, fo_finish, fo_free};
