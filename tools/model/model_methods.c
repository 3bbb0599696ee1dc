/* model_methods.c — log records and span errors grouped by the innermost method at the event
 * (the attribute `code.method`: the Julia binding's MethodInstance signature), for `jager
 * summary --by method` and the report's "By method" table. Counted in the model's one pass:
 * a log record's own attribute; a span error by the code.method attribute its span carries
 * (the binding sets it before jager_span_error), remembered per (thread, span id) until the
 * span's record. Bounded: JM_CODE_METHODS methods, the rest counted as folded; texts are cut at
 * JM_CODE_METHOD_TEXT bytes (whole characters). */
#include <stdlib.h>
#include <string.h>

#include "model_map.h"
#include "model_priv.h"
#include "toolutil.h"

#define KEY "code.method"

typedef struct jm_method_pass {
    jm_map by_text; /* (hash, length) → group index */
    jm_map open;    /* (thread, span id) → group index of the span's code.method */
    size_t cap;
} jm_method_pass;

static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static jm_method_pass *pass_of(jm_model *m)
{
    jm_priv *p = m->priv;
    if (!p->code_methods && !(p->code_methods = calloc(1, sizeof(jm_method_pass)))) p->oom = 1;
    return p->code_methods;
}

/* The group of method text \p s (n bytes), made when new; NULL when folded or out of memory. */
static jm_code_method *group(jm_model *m, const char *s, size_t n)
{
    jm_method_pass *mp = pass_of(m);
    if (!mp) return NULL;
    if (n >= JM_CODE_METHOD_TEXT) { /* cut at a character boundary */
        n = JM_CODE_METHOD_TEXT - 1;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    uint64_t h = text_hash(s, n);
    uint32_t i = jm_map_get(&mp->by_text, h, n);
    if (i != JM_NONE) {
        jm_code_method *g = &m->code_methods[i];
        return strlen(g->method) == n && !memcmp(g->method, s, n) ? g : NULL; /* a hash collision: folded */
    }
    if (m->ncode_methods >= JM_CODE_METHODS) return NULL;
    if (m->ncode_methods == mp->cap) {
        size_t c = mp->cap ? mp->cap * 2 : 32;
        jm_code_method *g = realloc(m->code_methods, c * sizeof *g);
        if (!g) { ((jm_priv *)m->priv)->oom = 1; return NULL; }
        m->code_methods = g;
        mp->cap = c;
    }
    if (jm_map_put(&mp->by_text, h, n, (uint32_t)m->ncode_methods)) { ((jm_priv *)m->priv)->oom = 1; return NULL; }
    jm_code_method *g = &m->code_methods[m->ncode_methods++];
    memset(g, 0, sizeof *g);
    memcpy(g->method, s, n);
    g->method[n] = 0;
    return g;
}

/* The code.method string attribute of an attribute list (a plain string, or one interned
 * once in the file's string table: JAGER_ATTR_STR_ID), or NULL. */
static const char *find_method(const jm_model *m, const uint8_t *a, const uint8_t *ae, uint32_t *len)
{
    jager_attr_view v;
    while (a && a < ae && jager_attr_next(&a, ae, &v) == 1)
        if (tu_attr_resolve(m->reader, &v)->kind == JAGER_ATTR_STR && v.key_len == sizeof KEY - 1 && !memcmp(v.key, KEY, sizeof KEY - 1)) {
            *len = v.str_len;
            return v.str;
        }
    return NULL;
}

void jm_methods_add(jm_model *m, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    size_t size = (size_t)h->words * 8u;
    uint32_t len = 0;
    const char *s;
    jm_method_pass *mp;
    switch (ev->type) {
    case JAGER_EV_LOG: {
        const uint8_t *a, *ae;
        if (jager_log_body((const jager_rec_log *)h, NULL, NULL, &a, &ae) != JAGER_OK || !(s = find_method(m, a, ae, &len))) return;
        jm_code_method *g = group(m, s, len);
        if (!g) { m->code_methods_folded++; return; }
        uint32_t sev = h->aux & 0xFFu;
        g->logs++;
        if (sev >= JAGER_SEV_ERROR) g->errors++;
        else if (sev >= JAGER_SEV_WARN) g->warnings++;
        return;
    }
    case JAGER_EV_SPAN_ATTR: {
        if (size < sizeof(jager_rec_span_attr)) return;
        const jager_rec_span_attr *r = (const jager_rec_span_attr *)h;
        if (!(s = find_method(m, (const uint8_t *)(r + 1), (const uint8_t *)h + size, &len)) || !(mp = pass_of(m))) return;
        jm_code_method *g = group(m, s, len);
        if (!g) { m->code_methods_folded++; return; }
        uint32_t th;
        (void)jm_span_ref(ev, &th); /* keyed as its span: a moved task's by its begin thread */
        jm_map_del(&mp->open, th, r->span_id);
        if (jm_map_put(&mp->open, th, r->span_id, (uint32_t)(g - m->code_methods))) ((jm_priv *)m->priv)->oom = 1;
        return;
    }
    case JAGER_EV_SPAN_ERROR: {
        mp = ((jm_priv *)m->priv)->code_methods;
        if (size < sizeof(jager_rec_span_error) || !mp) return;
        uint32_t th;
        (void)jm_span_ref(ev, &th);
        uint32_t i = jm_map_get(&mp->open, th, ((const jager_rec_span_error *)h)->span_id);
        if (i != JM_NONE) m->code_methods[i].span_errors++;
        return;
    }
    case JAGER_EV_SPAN: case JAGER_EV_SPAN_X: { /* keyed as its attributes were: by its begin thread (model.h) */
        jm_span_view v;
        mp = ((jm_priv *)m->priv)->code_methods;
        if (mp && mp->open.count && jm_span_of(ev, &v)) jm_map_del(&mp->open, v.thread, v.rec->span_id);
        return;
    }
    default:
        return;
    }
}

static int by_events(const void *x, const void *y)
{
    const jm_code_method *a = x, *b = y;
    uint64_t ea = a->errors + a->span_errors, eb = b->errors + b->span_errors;
    if (ea != eb) return ea < eb ? 1 : -1;
    if (a->logs != b->logs) return a->logs < b->logs ? 1 : -1;
    return strcmp(a->method, b->method);
}

void jm_methods_pass_free(struct jm_method_pass *mp)
{
    if (!mp) return;
    jm_map_free(&mp->by_text);
    jm_map_free(&mp->open);
    free(mp);
}

void jm_methods_finish(jm_model *m)
{
    jm_priv *p = m->priv;
    jm_methods_pass_free(p->code_methods);
    p->code_methods = NULL;
    if (m->ncode_methods > 1) qsort(m->code_methods, m->ncode_methods, sizeof *m->code_methods, by_events);
}

void jm_methods_free(jm_model *m)
{
    free(m->code_methods);
    m->code_methods = NULL;
    m->ncode_methods = 0;
}
