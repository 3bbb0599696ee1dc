#include "export_pprof_gc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_pprof_profile.h"
#include "enc_protobuf.h"
#include "plugin_events.h"

typedef struct gc_entry {
    uint64_t stack; /* 0 = empty slot marker is `used` */
    uint64_t count, ns;
    int used;
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
    gc_entry *v;
    uint32_t nslots, n;
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
    free(g->v);
    free(g);
}

static uint32_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

static gc_entry *slot(pp_gc *g, uint64_t stack)
{
    if ((g->n + 1) * 2 > g->nslots) {
        uint32_t n = g->nslots ? g->nslots * 2 : 64;
        gc_entry *v = calloc(n, sizeof *v);
        if (!v) return NULL;
        for (uint32_t i = 0; i < g->nslots; i++) {
            if (!g->v[i].used) continue;
            uint32_t k = hash64(g->v[i].stack) & (n - 1);
            while (v[k].used) k = (k + 1) & (n - 1);
            v[k] = g->v[i];
        }
        free(g->v);
        g->v = v;
        g->nslots = n;
    }
    uint32_t k = hash64(stack) & (g->nslots - 1);
    while (g->v[k].used && g->v[k].stack != stack) k = (k + 1) & (g->nslots - 1);
    if (!g->v[k].used) {
        g->v[k] = (gc_entry){.stack = stack, .used = 1};
        g->n++;
    }
    return &g->v[k];
}

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

typedef struct ids {
    uint64_t *key;
    uint32_t n, cap;
} ids;

/* Index + 1 of key in a small list (linear: stacks have few distinct frames). */
static uint32_t id_of(ids *t, uint64_t key, int *is_new)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->key[i] == key) {
            *is_new = 0;
            return i + 1;
        }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        uint64_t *k = realloc(t->key, cap * sizeof *k);
        if (!k) return 0;
        t->key = k;
        t->cap = cap;
    }
    t->key[t->n++] = key;
    *is_new = 1;
    return t->n;
}

int pp_gc_write(pp_gc *g, const jager_reader *r, const export_opts *o)
{
    if (!g->pauses || !strcmp(o->out, "-")) return 0;
    int rc = -1;
    const pp_stack_kind *kind = g->k;
    char *path = gc_path(o->out, kind->suffix);
    pp_profile pr = {0};
    ids locs = {0}, funcs = {0};
    tu_buf m = {0}, line = {0}, locs_buf = {0}, funcs_buf = {0};
    uint64_t *path_ids = NULL;
    if (!path || pp_profile_init(&pr)) goto oom;
    pp_value_type(&pr, 1, kind->count_type, "count");
    pp_value_type(&pr, 1, kind->value_type, "nanoseconds");
    for (uint32_t i = 0; i < g->nslots; i++) {
        const gc_entry *e = &g->v[i];
        if (!e->used) continue;
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
            uint32_t nf = ips[k] ? jager_reader_symbolize(r, ips[k], fr, 16) : 0;
            m.len = 0;
            if (pb_varint(&m, 1, lid) || pb_varint(&m, 3, ips[k])) goto oom;
            if (!ips[k]) {
                fr[0] = (jager_frame){.func = "(no stack)", .file = ""};
                nf = 1;
            }
            for (uint32_t f = nf; f-- > 0;) {
                char key[1024];
                snprintf(key, sizeof key, "%s\x1f%s", fr[f].func, fr[f].file);
                uint64_t fkey = pp_str(&pr, key); /* the key's string id names the function uniquely */
                int fnew;
                uint32_t fid = id_of(&funcs, fkey, &fnew);
                if (!fid) goto oom;
                if (fnew) {
                    line.len = 0;
                    if (pb_varint(&line, 1, fid) || pb_varint(&line, 2, pp_str(&pr, fr[f].func)) ||
                        pb_varint(&line, 3, pp_str(&pr, fr[f].func)) || pb_varint(&line, 4, pp_str(&pr, fr[f].file)) ||
                        pb_bytes(&funcs_buf, 5, line.data, line.len))
                        goto oom;
                }
                line.len = 0;
                if (pb_varint(&line, 1, fid) || pb_varint(&line, 2, fr[f].line) || pb_bytes(&m, 4, line.data, line.len))
                    goto oom;
            }
            if (pb_bytes(&locs_buf, 4, m.data, m.len)) goto oom;
        }
        uint64_t vals[2] = {e->count, e->ns};
        m.len = 0;
        if (pb_packed(&m, 1, path_ids, n) || pb_packed(&m, 2, vals, 2) || pb_bytes(&pr.body, 2, m.data, m.len)) goto oom;
    }
    if (tu_buf_put(&pr.body, locs_buf.data, locs_buf.len) || tu_buf_put(&pr.body, funcs_buf.data, funcs_buf.len))
        goto oom;
    pp_value_type(&pr, 11, kind->value_type, "nanoseconds");
    if (pb_varint(&pr.body, 12, 1) || pb_varint(&pr.body, 13, pp_str(&pr, kind->comment)) ||
        pb_varint(&pr.body, 14, pp_str(&pr, kind->value_type)))
        goto oom;
    rc = pp_profile_write(&pr, path);
    goto done;
oom:
    fprintf(stderr, "jager export: out of memory\n");
done:
    pp_profile_free(&pr);
    free(path);
    free(path_ids);
    free(locs.key);
    free(funcs.key);
    tu_buf_free(&m);
    tu_buf_free(&line);
    tu_buf_free(&locs_buf);
    tu_buf_free(&funcs_buf);
    return rc;
}
