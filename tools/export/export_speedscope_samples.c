#include "export_speedscope_samples.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "enc_json.h"
#include "model_map.h"
#include "sample_events.h"
#include "strdict.h"

typedef struct smp {
    uint64_t tid, time, stack, weight, cpu_ns;
} smp;

/* One distinct stack: its frames (root first) at pool[off .. off+n). */
typedef struct stk {
    uint32_t off, n;
} stk;

struct ss_samples {
    jager_reader *r;
    int weight;
    jm_sample_reader sr;
    smp *v;
    size_t n, cap;
    jm_map by_stack; /* (stack, 0) -> index into stacks */
    stk *stacks;
    uint32_t nstacks, stacks_cap;
    uint32_t *pool;
    size_t npool, pool_cap;
    tu_strdict frames; /* "func\x1f file" -> frame number - base */
    tu_buf *out;       /* where new frames go (ss_samples_frames) */
    uint32_t base;
    int oom;
};

ss_samples *ss_samples_new(jager_reader *r, int weight)
{
    ss_samples *s = calloc(1, sizeof *s);
    if (s) {
        s->r = r;
        s->weight = weight;
    }
    return s;
}

void ss_samples_free(ss_samples *s)
{
    if (!s) return;
    free(s->v);
    jm_map_free(&s->by_stack);
    free(s->stacks);
    free(s->pool);
    tu_strdict_free(&s->frames);
    free(s);
}

int ss_samples_event(ss_samples *s, const jager_event *ev)
{
    jm_sample_ev e;
    if (!jm_sample_decode(&s->sr, s->r, ev, &e) || !e.stack) return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        smp *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "jager export: out of memory\n");
            return -1;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (smp){e.tid, e.time_ns, e.stack, e.weight, e.cpu_ns};
    return 0;
}

static int pool_push(ss_samples *s, uint32_t v)
{
    if (s->npool == s->pool_cap) {
        size_t cap = s->pool_cap ? s->pool_cap * 2 : 1024;
        uint32_t *p = realloc(s->pool, cap * sizeof *p);
        if (!p) return -1;
        s->pool = p;
        s->pool_cap = cap;
    }
    s->pool[s->npool++] = v;
    return 0;
}

/* jm_stack_frames' callback: the frame's number (its JSON appended when new) to the pool. */
static int on_frame(void *ctx, const jager_frame *fr)
{
    ss_samples *s = ctx;
    tu_buf *b = s->out;
    char key[1024];
    int kn = snprintf(key, sizeof key, "%s\x1f%s", fr->func, fr->file);
    if (kn < 0 || (size_t)kn >= sizeof key) kn = (int)sizeof key - 1;
    uint32_t before = s->frames.count;
    int64_t i = tu_strdict_put(&s->frames, key, (uint32_t)kn);
    if (i < 0) return -1;
    if ((uint32_t)i == before) { /* new */
        if (TU_PUTS(b, ",{\"name\":") || ex_json_str(b, fr->func, (size_t)-1)) return -1;
        if (*fr->file && (TU_PUTS(b, ",\"file\":") || ex_json_str(b, fr->file, (size_t)-1))) return -1;
        if (*fr->file && fr->line && tu_buf_printf(b, ",\"line\":%u", fr->line)) return -1;
        if (tu_buf_putc(b, '}')) return -1;
    }
    return pool_push(s, s->base + (uint32_t)i);
}

int ss_samples_frames(ss_samples *s, tu_buf *b, uint32_t base)
{
    s->out = b;
    s->base = base;
    for (size_t i = 0; i < s->n; i++) {
        if (jm_map_get(&s->by_stack, s->v[i].stack, 0) != JM_NONE) continue;
        if (s->nstacks == s->stacks_cap) {
            uint32_t cap = s->stacks_cap ? s->stacks_cap * 2 : 256;
            stk *v = realloc(s->stacks, cap * sizeof *v);
            if (!v) goto oom;
            s->stacks = v;
            s->stacks_cap = cap;
        }
        uint32_t off = (uint32_t)s->npool;
        if (jm_stack_frames(s->r, s->v[i].stack, on_frame, s) ||
            jm_map_put(&s->by_stack, s->v[i].stack, 0, s->nstacks))
            goto oom;
        s->stacks[s->nstacks++] = (stk){off, (uint32_t)(s->npool - off)};
    }
    return 0;
oom:
    fprintf(stderr, "jager export: out of memory\n");
    return -1;
}

static int by_thread_time(const void *a, const void *b)
{
    const smp *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* "name (tid N)" when some recording thread has that OS id and a name, else "tid N". */
static void thread_name(const ss_samples *s, uint64_t tid, char *out, size_t size)
{
    uint32_t nt = jager_reader_thread_count(s->r);
    for (uint32_t t = 0; t < nt; t++) {
        uint64_t os = 0;
        const char *name = NULL;
        if (jager_reader_thread(s->r, t, &os, &name) == JAGER_OK && os == tid && name && *name) {
            snprintf(out, size, "samples: %s (tid %" PRIu64 ")", name, tid);
            return;
        }
    }
    snprintf(out, size, "samples: tid %" PRIu64, tid);
}

int ss_samples_profiles(ss_samples *s, FILE *f, int *first)
{
    if (!s->n) return 0;
    qsort(s->v, s->n, sizeof *s->v, by_thread_time); /* the sampler drains in batches: time order per thread */
    tu_buf b = {0};
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc;) {
        size_t j = i;
        uint64_t total = 0;
        for (; j < s->n && s->v[j].tid == s->v[i].tid; j++) total += s->weight == EXPORT_SAMPLE_WEIGHT_SAMPLES ? 1 : s->v[j].cpu_ns;
        char name[320];
        thread_name(s, s->v[i].tid, name, sizeof name);
        b.len = 0;
        if (!*first) tu_buf_putc(&b, ',');
        *first = 0;
        TU_PUTS(&b, "{\"type\":\"sampled\",\"name\":");
        ex_json_str(&b, name, (size_t)-1);
        tu_buf_printf(&b, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
                      s->weight == EXPORT_SAMPLE_WEIGHT_SAMPLES ? "none" : "nanoseconds", total);
        for (size_t k = i; k < j; k++) {
            const stk *e = &s->stacks[jm_map_get(&s->by_stack, s->v[k].stack, 0)]; /* ss_samples_frames added every stack */
            if (k > i) tu_buf_putc(&b, ',');
            tu_buf_putc(&b, '[');
            for (uint32_t q = 0; q < e->n; q++) {
                if (q) tu_buf_putc(&b, ',');
                ex_put_u64(&b, s->pool[e->off + q]);
            }
            tu_buf_putc(&b, ']');
            if (b.len > (1u << 20)) {
                if (fwrite(b.data, 1, b.len, f) != b.len) rc = -1;
                b.len = 0;
            }
        }
        TU_PUTS(&b, "],\"weights\":[");
        for (size_t k = i; k < j; k++) {
            if (k > i) tu_buf_putc(&b, ',');
            ex_put_u64(&b, s->weight == EXPORT_SAMPLE_WEIGHT_SAMPLES ? 1 : s->v[k].cpu_ns);
            if (b.len > (1u << 20)) {
                if (fwrite(b.data, 1, b.len, f) != b.len) rc = -1;
                b.len = 0;
            }
        }
        if (TU_PUTS(&b, "]}") || fwrite(b.data, 1, b.len, f) != b.len) rc = -1;
        i = j;
    }
    tu_buf_free(&b);
    return rc;
}
