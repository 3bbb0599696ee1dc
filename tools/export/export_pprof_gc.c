#include "export_pprof_gc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_pprof_profile.h"
#include "model_map.h"
#include "plugin_events.h"

typedef struct gc_entry {
    uint64_t stack;
    uint64_t count, ns;
} gc_entry;

const pp_stack_kind pp_kind_gc = {&jp_gc, JP_GC_PAUSE, JP_PAUSE_STACK, JP_PAUSE_DURATION_NS, "pauses", "gc",
                                  ".gc.pb.gz", "jager: GC pauses by triggering allocation stack"};
const pp_stack_kind pp_kind_cpu = {&jp_sampler, JP_SAMPLER_SAMPLE, JP_SMP_STACK, JP_SMP_CPU_NS, "samples", "cpu",
                                   ".cpu.pb.gz", "jager: CPU samples by stack (sampler plugin)"};

struct pp_gc {
    const pp_stack_kind *k;
    int resolved;        /* the gc.pause type was looked up */
    uint16_t type;       /* 0: absent */
    int f_stack, f_dur;  /* field indexes, -1 if absent */
    jm_map by_stack; /* (stack, 0) -> index into v */
    gc_entry *v;
    uint32_t n, cap;
    uint64_t pauses;
};

pp_gc *pp_gc_new(const pp_stack_kind *kind)
{
    pp_gc *g = calloc(1, sizeof(pp_gc));
    if (g) g->k = kind;
    return g;
}

void pp_gc_free(pp_gc *g)
{
    if (!g) return;
    jm_map_free(&g->by_stack);
    free(g->v);
    free(g);
}

static gc_entry *slot(pp_gc *g, uint64_t stack)
{
    uint32_t k = jm_map_get(&g->by_stack, stack, 0);
    if (k != JM_NONE) return &g->v[k];
    if (g->n == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 64;
        gc_entry *v = realloc(g->v, cap * sizeof *v);
        if (!v) return NULL;
        g->v = v;
        g->cap = cap;
    }
    if (jm_map_put(&g->by_stack, stack, 0, g->n)) return NULL;
    g->v[g->n] = (gc_entry){.stack = stack};
    return &g->v[g->n++];
}

uint16_t pp_gc_type(const pp_gc *g) { return g ? g->type : 0; }

int pp_gc_event(pp_gc *g, const jager_reader *r, const jager_event *ev)
{
    if (!g->resolved) {
        g->resolved = 1;
        const pp_stack_kind *k = g->k;
        g->type = jager_reader_type_by_name(r, jp_name(k->plugin, k->event));
        g->f_stack = g->f_dur = -1;
        const jager_type_desc *d = g->type ? jager_reader_type(r, g->type) : NULL;
        uint32_t fs = jp_field_index(d, k->plugin, k->event, k->f_stack);
        uint32_t fd = jp_field_index(d, k->plugin, k->event, k->f_value);
        if (fs != UINT32_MAX && d->fields[fs].kind == JAGER_FIELD_STACK) g->f_stack = (int)fs;
        if (fd != UINT32_MAX && (d->fields[fd].kind == JAGER_FIELD_DURATION_NS || d->fields[fd].kind == JAGER_FIELD_U64))
            g->f_dur = (int)fd;
    }
    if (!g->type || ev->type != g->type) return 0;
    const jager_rec_plugin *p = (const void *)ev->rec;
    size_t total = (size_t)ev->rec->words * 8u;
    size_t have = total >= sizeof *p ? (total - sizeof *p) / 8u : 0;
    uint64_t stack = g->f_stack >= 0 && (size_t)g->f_stack < have ? p->fields[g->f_stack] : 0;
    uint64_t ns = g->f_dur >= 0 && (size_t)g->f_dur < have ? p->fields[g->f_dur] : 0;
    gc_entry *e = slot(g, stack);
    if (!e) {
        fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    e->count++;
    e->ns += ns;
    g->pauses++;
    return 0;
}

/* "x.pb.gz" -> "x<suffix>" (".gc.pb.gz"); anything else gets the suffix appended. */
static char *gc_path(const char *out, const char *with)
{
    size_t n = strlen(out);
    const char *suffix = ".pb.gz";
    size_t sl = strlen(suffix);
    if (n > sl && !strcmp(out + n - sl, suffix)) n -= sl;
    size_t cap = n + strlen(with) + 1;
    char *s = malloc(cap);
    if (s) snprintf(s, cap, "%.*s%s", (int)n, out, with);
    return s;
}

/* Location and function ids: 1, 2, … in order of first use, keyed in a jm_map. */
typedef struct ids {
    jm_map m;
    uint32_t n;
} ids;

/* The id of \p key (\p *is_new when just given); 0 on out of memory. */
static uint32_t id_of(ids *t, uint64_t key, int *is_new)
{
    uint32_t v = jm_map_get(&t->m, key, 0);
    *is_new = v == JM_NONE;
    if (!*is_new) return v;
    if (jm_map_put(&t->m, key, 0, t->n + 1)) return 0;
    return ++t->n;
}

int pp_gc_write(pp_gc *g, const jager_reader *r, const export_opts *o)
{
    if (!g->pauses || !strcmp(o->out, "-")) return 0;
    int rc = -1;
    const pp_stack_kind *kind = g->k;
    char *path = gc_path(o->out, kind->suffix);
    pp_profile pr = {0};
    ids locs = {0}, funcs = {0};
    uint64_t *path_ids = NULL;
    if (!path || pp_profile_init(&pr)) goto oom;
    pp_sample_type(&pr, kind->count_type, "count");
    pp_sample_type(&pr, kind->value_type, "nanoseconds");
    for (uint32_t i = 0; i < g->n; i++) {
        const gc_entry *e = &g->v[i];
        const uint64_t *ips = NULL;
        uint32_t n = 0;
        static const uint64_t none = 0;
        if (!e->stack || jager_reader_stack(r, e->stack, &ips, &n) != JAGER_OK || n == 0) {
            ips = &none; /* a pause without a stack: one "(no stack)" location at address 0 */
            n = 1;
        }
        uint64_t *pi = realloc(path_ids, n * sizeof *pi);
        if (!pi) goto oom;
        path_ids = pi;
        for (uint32_t k = 0; k < n; k++) {
            int is_new;
            uint32_t lid = id_of(&locs, ips[k], &is_new);
            if (!lid) goto oom;
            path_ids[k] = lid;
            if (!is_new) continue;
            /* a new location: its frames, inlined callee first (pprof's order) */
            jager_frame fr[16];
            pp_line lines[16];
            uint32_t nf = ips[k] ? jager_reader_symbolize(r, ips[k], fr, 16) : 0;
            if (!ips[k]) {
                fr[0] = (jager_frame){.func = "(no stack)", .file = ""};
                nf = 1;
            }
            for (uint32_t f = 0; f < nf; f++) {
                const jager_frame *fp = &fr[nf - 1 - f]; /* the reader gives the outermost first */
                char key[1024];
                snprintf(key, sizeof key, "%s\x1f%s", fp->func, fp->file);
                uint64_t fkey = (uint64_t)pp_str(&pr, key); /* the key's string id names the function uniquely */
                int fnew;
                uint32_t fid = id_of(&funcs, fkey, &fnew);
                if (!fid) goto oom;
                if (fnew) pp_add_function(&pr, fid, fp->func, fp->file, 0);
                lines[f] = (pp_line){fid, fp->line};
            }
            pp_add_location(&pr, lid, ips[k], lines, nf);
        }
        int64_t vals[2] = {(int64_t)e->count, (int64_t)e->ns};
        pp_add_sample(&pr, path_ids, n, vals, 2);
    }
    pp_period(&pr, kind->value_type, "nanoseconds", 1);
    pp_comment(&pr, kind->comment);
    pr.msg.default_sample_type = pp_str(&pr, kind->value_type);
    rc = pp_profile_write(&pr, path);
    goto done;
oom:
    fprintf(stderr, "jager export: out of memory\n");
done:
    pp_profile_free(&pr);
    free(path);
    free(path_ids);
    jm_map_free(&locs.m);
    jm_map_free(&funcs.m);
    return rc;
}
