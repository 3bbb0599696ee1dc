/* Everything recorded besides spans: logs, counters, marks, span attributes and errors,
 * plugin events and diagnostics. Each copies into the calling thread's ring; none locks
 * except where a name must be interned (marks, diagnostics). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define LOG_BODY_MAX 4096u
#define ATTR_STR_MAX 1024u
#define PAD8(n) (((n) + 7u) & ~(size_t)7u)

/* Reserve a record on the calling thread's ring, counting emitted/dropped. */
static void *jg_record_reserve(uint32_t bytes, jg_tls **t_out)
{
    *t_out = NULL;
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire))) return NULL;
    jg_tls *t = jg_tls_fast();
    if (JG_UNLIKELY(!t)) return NULL;
    if (JG_UNLIKELY(!t->ring)) {
        jg_bump(&t->no_ring_drops, 1);
        return NULL;
    }
    void *p = jg_ring_reserve(t->ring, bytes);
    if (p) *t_out = t;
    return p;
}

static void jg_record_commit(jg_tls *t, uint32_t bytes) { jg_ring_commit(t->ring, bytes); }

static size_t attr_str_len(const jager_attr *a, size_t max_str)
{
    size_t n = a->value.str ? strlen(a->value.str) : 0;
    return n > max_str ? max_str : n;
}

/* Encode an attribute list at dst (NULL: only measure); returns the bytes. */
static size_t jg_attrs_encode(uint8_t *dst, const jager_attr *attrs, size_t nattrs, size_t max_str)
{
    size_t off = 0;
    for (size_t i = 0; i < nattrs; i++) {
        const jager_attr *a = &attrs[i];
        size_t klen = a->key ? strlen(a->key) : 0;
        if (klen > 255) klen = 255;
        uint32_t kind = a->kind;
        size_t vlen = kind == JAGER_ATTR_STR ? attr_str_len(a, max_str) : 8;
        if (kind < JAGER_ATTR_I64 || kind > JAGER_ATTR_STR_ID) {
            kind = JAGER_ATTR_STR; /* an unknown kind is recorded as an empty string */
            vlen = 0;
        }
        size_t total = PAD8(8 + klen + vlen);
        if (dst) {
            uint8_t *p = dst + off;
            uint16_t k16 = (uint16_t)klen, kind16 = (uint16_t)kind;
            uint32_t v32 = (uint32_t)vlen;
            memcpy(p, &k16, 2);
            memcpy(p + 2, &kind16, 2);
            memcpy(p + 4, &v32, 4);
            if (klen) memcpy(p + 8, a->key, klen);
            if (kind == JAGER_ATTR_STR) {
                if (vlen) memcpy(p + 8 + klen, a->value.str, vlen);
            } else if (kind == JAGER_ATTR_F64) {
                memcpy(p + 8 + klen, &a->value.f64, 8);
            } else {
                int64_t v = kind == JAGER_ATTR_BOOL ? (a->value.boolean != 0) : a->value.i64;
                memcpy(p + 8 + klen, &v, 8);
            }
            memset(p + 8 + klen + vlen, 0, total - (8 + klen + vlen));
        }
        off += total;
    }
    return off;
}

void jager_log(jager_severity severity, const char *body, const jager_attr *attrs, size_t nattrs)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire))) return;
    if (!attrs) nattrs = 0;
    if (severity < 1) severity = 1;
    if (severity > 24) severity = 24;
    size_t blen = body ? strlen(body) : 0;
    uint32_t flags = 0;
    if (blen > LOG_BODY_MAX) {
        blen = LOG_BODY_MAX;
        flags |= JAGER_LOG_TRUNCATED;
    }
    size_t alen = jg_attrs_encode(NULL, attrs, nattrs, ATTR_STR_MAX);
    size_t total = sizeof(jager_rec_log) + PAD8(blen) + alen;
    if (total > JAGER_RECORD_MAX_BYTES) { /* keep the body, drop attributes that do not fit */
        nattrs = 0;
        alen = 0;
        total = sizeof(jager_rec_log) + PAD8(blen);
        flags |= JAGER_LOG_TRUNCATED;
    }
    jg_tls *t;
    jager_rec_log *r = jg_record_reserve((uint32_t)total, &t);
    if (!r) return;
    r->h.type = JAGER_EV_LOG;
    r->h.words = (uint16_t)(total / 8);
    r->h.aux = (uint32_t)severity | flags;
    r->time_ns = jg_now_ns();
    r->span_id = 0;
    r->site = 0;
    if (JG_UNLIKELY(t->nforeign)) { /* the task moved here: its innermost span may be another thread's */
        uint32_t begin_thread;
        r->span_id = jg_task_top_span(t, &r->site, &begin_thread);
        if (r->span_id && begin_thread != t->thread)
            r->h.aux |= JAGER_LOG_SPAN_MOVED | (begin_thread <= 0xffffu ? begin_thread << 16 : 0);
    } else {
        int64_t top = jg_stack_top_of_task(t, jg_stack_top(t), t->task); /* the innermost open span of the task running now */
        if (top >= 0) {
            r->span_id = jg_stack_id(t, (uint32_t)top);
            r->site = jg_stack_site(t, (uint32_t)top);
        }
    }
    if (t->has_ctx) {
        memcpy(r->trace_id, t->ctx.trace_id, 16);
        memcpy(r->ctx_span_id, t->ctx.span_id, 8);
    } else {
        memset(r->trace_id, 0, 16);
        memset(r->ctx_span_id, 0, 8);
    }
    r->body_len = (uint32_t)blen;
    r->nattrs = (uint32_t)nattrs;
    uint8_t *p = (uint8_t *)(r + 1);
    if (blen) memcpy(p, body, blen);
    memset(p + blen, 0, PAD8(blen) - blen);
    jg_attrs_encode(p + PAD8(blen), attrs, nattrs, ATTR_STR_MAX);
    jg_record_commit(t, (uint32_t)total);
}

static void counter_sample(jager_counter counter, uint64_t time_ns, double value)
{
    jg_tls *t;
    jager_rec_counter *r = jg_record_reserve(sizeof *r, &t);
    if (!r) return;
    r->h.type = JAGER_EV_COUNTER;
    r->h.words = sizeof *r / 8;
    r->h.aux = counter;
    r->time_ns = time_ns;
    r->value = value;
    jg_record_commit(t, sizeof *r);
}

void jager_counter_add(jager_counter counter, double delta)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire))) return;
    if (JG_UNLIKELY(!(delta >= 0))) return; /* a monotonic counter only grows; NaN would stick */
    jg_counter_info *c = (jg_counter_info *)jg_counter_get(counter);
    if (!c) return;
    /* One running total for the whole process (reset by jager_init): a CAS loop on the
     * double's bits. The time is read between the load and the CAS, so a sample stamped
     * later never carries a smaller total: a CAS that succeeds saw no other add since its
     * load, and any add that follows loads after it and stamps after it. The tools take a
     * monotonic counter's value at any time as the latest sample's total (all threads). */
    uint64_t old = atomic_load_explicit(&c->total_bits, memory_order_relaxed), nw, when;
    double v;
    do {
        when = jg_now_ns_ordered();
        memcpy(&v, &old, 8);
        v += delta;
        memcpy(&nw, &v, 8);
    } while (!atomic_compare_exchange_weak_explicit(&c->total_bits, &old, nw, memory_order_relaxed, memory_order_relaxed));
    counter_sample(counter, when, v);
}

void jager_counter_set(jager_counter counter, double value)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire))) return;
    if (!jg_counter_get(counter)) return;
    counter_sample(counter, jg_now_ns(), value);
}

void jager_mark(const char *name)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire)) || !name) return;
    uint32_t id = jg_intern(name);
    if (!id) return;
    jg_tls *t;
    jager_rec_mark *r = jg_record_reserve(sizeof *r, &t);
    if (!r) return;
    r->h.type = JAGER_EV_MARK;
    r->h.words = sizeof *r / 8;
    r->h.aux = id;
    r->time_ns = jg_now_ns();
    jg_record_commit(t, sizeof *r);
}

void jager_mark_attrs(const char *name, const jager_attr *attrs, size_t nattrs)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire)) || !name) return;
    if (!attrs) nattrs = 0;
    uint32_t id = jg_intern(name);
    if (!id) return;
    size_t alen = jg_attrs_encode(NULL, attrs, nattrs, ATTR_STR_MAX);
    size_t total = sizeof(jager_rec_mark) + 8 + alen;
    if (total > JAGER_RECORD_MAX_BYTES) { /* the mark without its attributes */
        nattrs = 0;
        alen = 0;
        total = sizeof(jager_rec_mark) + 8;
    }
    jg_tls *t;
    jager_rec_mark *r = jg_record_reserve((uint32_t)total, &t);
    if (!r) return;
    r->h.type = JAGER_EV_MARK;
    r->h.words = (uint16_t)(total / 8);
    r->h.aux = id;
    r->time_ns = jg_now_ns();
    uint32_t head[2] = {(uint32_t)nattrs, 0};
    memcpy(r + 1, head, 8);
    jg_attrs_encode((uint8_t *)(r + 1) + 8, attrs, nattrs, ATTR_STR_MAX);
    jg_record_commit(t, (uint32_t)total);
}

void jager_task_set(uint64_t task)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire))) return;
    jg_tls *t = jg_tls_fast();
    if (JG_UNLIKELY(!t) || t->task == task) return;
    jg_task_switch(t, task); /* a task that leaves open spans, or resumes where it did not leave them */
    t->task = task;
    jager_rec_task *r = jg_record_reserve(sizeof *r, &t);
    if (!r) return; /* counted as a drop; the parents of spans still follow the task */
    r->h.type = JAGER_EV_TASK;
    r->h.words = sizeof *r / 8;
    r->h.aux = 0;
    r->time_ns = jg_now_ns();
    r->task = task;
    r->first_span = t->next_span + 1 ? t->next_span + 1 : 1;
    r->reserved = 0;
    jg_record_commit(t, sizeof *r);
}

uint32_t jager_span_current(jager_site *site)
{
    if (site) *site = 0;
    if (!atomic_load_explicit(&jg_enabled, memory_order_acquire)) return 0;
    jg_tls *t = jg_tls_peek();
    if (!t || t->generation != atomic_load_explicit(&jg_generation, memory_order_relaxed)) return 0;
    if (t->nforeign) { /* the task moved here: its innermost span may be another thread's */
        jager_site s;
        uint32_t begin_thread, id = jg_task_top_span(t, &s, &begin_thread);
        if (site) *site = id ? s : 0;
        return id;
    }
    int64_t top = jg_stack_top_of_task(t, jg_stack_top(t), t->task);
    if (top < 0) return 0;
    if (site) *site = jg_stack_site(t, (uint32_t)top);
    return jg_stack_id(t, (uint32_t)top);
}

uint64_t jager_task_current(void)
{
    if (!atomic_load_explicit(&jg_enabled, memory_order_acquire)) return 0;
    jg_tls *t = jg_tls_peek();
    return t ? t->task : 0;
}

/* The thread's trace context changed: say so in its own ring, in order with its spans (which
 * carry no trace id), so readers and sinks know which trace each later span joined. */
void jg_record_context(const jager_trace_context *c)
{
    jg_tls *t;
    jager_rec_context *r = jg_record_reserve(sizeof *r, &t);
    if (!r) return;
    memset(r, 0, sizeof *r);
    r->h.type = JAGER_EV_CONTEXT;
    r->h.words = sizeof *r / 8;
    r->h.aux = c ? 1 : 0;
    r->time_ns = jg_now_ns();
    if (c) {
        memcpy(r->trace_id, c->trace_id, 16);
        memcpy(r->span_id, c->span_id, 8);
        r->flags = c->flags;
    }
    /* The id the thread's next span will get (span.c hands out ++next_span, skipping 0). */
    r->first_span = t->next_span + 1 ? t->next_span + 1 : 1;
    jg_record_commit(t, sizeof *r);
}

void jager_span_set_attrs(jager_span span, const jager_attr *attrs, size_t nattrs)
{
    if (!span.site || !attrs || !nattrs || !atomic_load_explicit(&jg_enabled, memory_order_acquire)) return;
    size_t alen = jg_attrs_encode(NULL, attrs, nattrs, ATTR_STR_MAX);
    size_t total = sizeof(jager_rec_span_attr) + alen;
    if (total > JAGER_RECORD_MAX_BYTES) return;
    jg_tls *t;
    jager_rec_span_attr *r = jg_record_reserve((uint32_t)total, &t);
    if (!r) return;
    r->h.type = JAGER_EV_SPAN_ATTR;
    r->h.words = (uint16_t)(total / 8);
    r->h.aux = jg_span_ref_aux(t, span.site, span.id); /* a span its task brought here: which thread's id */
    r->span_id = span.id;
    r->nattrs = (uint32_t)nattrs;
    jg_attrs_encode((uint8_t *)(r + 1), attrs, nattrs, ATTR_STR_MAX);
    jg_record_commit(t, (uint32_t)total);
}

void jager_span_error(jager_span span, const char *message)
{
    if (!span.site || !atomic_load_explicit(&jg_enabled, memory_order_acquire)) return;
    jg_tls *t = jg_tls_fast();
    if (!t) return;
    jg_site_agg *a = jg_site_agg_fast(t, span.site);
    if (a) jg_bump(&a->errors, 1);
    size_t mlen = message ? strlen(message) : 0;
    if (mlen > LOG_BODY_MAX) mlen = LOG_BODY_MAX;
    size_t total = sizeof(jager_rec_span_error) + PAD8(mlen);
    jager_rec_span_error *r = jg_record_reserve((uint32_t)total, &t);
    if (!r) return;
    r->h.type = JAGER_EV_SPAN_ERROR;
    r->h.words = (uint16_t)(total / 8);
    r->h.aux = jg_span_ref_aux(t, span.site, span.id); /* a span its task brought here: which thread's id */
    r->time_ns = jg_now_ns();
    r->span_id = span.id;
    r->msg_len = (uint32_t)mlen;
    uint8_t *p = (uint8_t *)(r + 1);
    if (mlen) memcpy(p, message, mlen);
    memset(p + mlen, 0, PAD8(mlen) - mlen);
    jg_record_commit(t, (uint32_t)total);
}

/* A plugin event: refused (counted bad_emit, said once per type) when its type or field
 * count is wrong, lost (counted after_stop) once the plugins' stop has returned. */
jager_status jg_emit_plugin_status(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields)
{
    if (JG_UNLIKELY(!atomic_load_explicit(&jg_enabled, memory_order_acquire))) return jg_plugin_event_lost(type);
    const jager_type_desc *td = jg_type_get(type);
    /* A type that is not registered, or a field count that does not match it, would make
     * the record undecodable: refuse it rather than write garbage. */
    if (JG_UNLIKELY(!td || td->builtin || td->nfields != nfields || (nfields && !fields)))
        return jg_plugin_event_refused(type, td, nfields, fields != NULL);
    uint32_t total = (uint32_t)(sizeof(jager_rec_plugin) + 8u * nfields);
    jg_tls *t;
    jager_rec_plugin *r = jg_record_reserve(total, &t);
    if (!r) return JAGER_E_FULL; /* counted by the ring (full, too large) or as no_ring */
    r->h.type = type;
    r->h.words = (uint16_t)(total / 8);
    r->h.aux = 0;
    r->time_ns = time_ns ? time_ns : jg_now_ns();
    if (nfields) memcpy(r->fields, fields, 8u * nfields);
    jg_record_commit(t, total);
    return JAGER_OK;
}

void jg_emit_plugin(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields)
{
    (void)jg_emit_plugin_status(type, time_ns, fields, nfields);
}

void jg_diag(const char *source, jager_severity level, const char *msg)
{
    if (!source) source = "core";
    if (!msg) msg = "";
    if (!JG_CFG(quiet)) fprintf(stderr, "jager: %s: %s\n", source, msg);
    if (!atomic_load_explicit(&jg_enabled, memory_order_acquire)) return;
    size_t mlen = strlen(msg);
    if (mlen > LOG_BODY_MAX) mlen = LOG_BODY_MAX;
    uint32_t src = jg_intern(source);
    size_t total = sizeof(jager_rec_diag) + PAD8(mlen);
    jg_tls *t;
    jager_rec_diag *r = jg_record_reserve((uint32_t)total, &t);
    if (!r) return;
    r->h.type = JAGER_EV_DIAG;
    r->h.words = (uint16_t)(total / 8);
    r->h.aux = (uint32_t)level;
    r->time_ns = jg_now_ns();
    r->source = src;
    r->text_len = (uint32_t)mlen;
    uint8_t *p = (uint8_t *)(r + 1);
    memcpy(p, msg, mlen);
    memset(p + mlen, 0, PAD8(mlen) - mlen);
    jg_record_commit(t, (uint32_t)total);
}
