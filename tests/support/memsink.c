#include "memsink.h"

#include <stdlib.h>
#include <string.h>

static jager_status ms_write(void *ctx, const jager_batch *b)
{
    memsink *m = ctx;
    if (m->bytes + b->bytes > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        while (cap < m->bytes + b->bytes) cap *= 2;
        uint8_t *d = realloc(m->data, cap);
        if (!d) return JAGER_E_NOMEM;
        m->data = d;
        m->cap = cap;
    }
    memcpy(m->data + m->bytes, b->data, b->bytes);
    size_t off = m->bytes;
    m->bytes += b->bytes;
    while (off < m->bytes) {
        const jager_record *r = (const jager_record *)(m->data + off);
        if (m->nrecs == m->threads_cap) {
            size_t c = m->threads_cap ? m->threads_cap * 2 : 1024;
            uint32_t *t = realloc(m->threads, c * sizeof *t);
            if (!t) return JAGER_E_NOMEM;
            m->threads = t;
            m->threads_cap = c;
        }
        m->threads[m->nrecs++] = b->thread;
        off += (size_t)r->words * 8u;
    }
    m->batches++;
    return JAGER_OK;
}
static jager_status ms_open(void *ctx) { ((memsink *)ctx)->opened++; return JAGER_OK; }
static void ms_flush(void *ctx) { ((memsink *)ctx)->flushes++; }
static void ms_close(void *ctx) { ((memsink *)ctx)->closed++; }

memsink *memsink_new(jager_sink *out)
{
    memsink *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->name = "memsink";
    out->ctx = m;
    out->open = ms_open;
    out->write = ms_write;
    out->flush = ms_flush;
    out->close = ms_close;
    return m;
}

void memsink_free(memsink *m)
{
    if (!m) return;
    free(m->data);
    free(m->threads);
    free(m);
}

memsink_rec memsink_at(const memsink *m, size_t i)
{
    memsink_rec r = {0, NULL};
    size_t off = 0;
    for (size_t k = 0; k < m->nrecs && off < m->bytes; k++) {
        const jager_record *rec = (const jager_record *)(m->data + off);
        if (k == i) {
            r.thread = m->threads[k];
            r.rec = rec;
            return r;
        }
        off += (size_t)rec->words * 8u;
    }
    return r;
}

size_t memsink_count(const memsink *m, uint16_t type, int aux_filter, uint32_t aux)
{
    size_t n = 0, off = 0;
    while (off < m->bytes) {
        const jager_record *rec = (const jager_record *)(m->data + off);
        if (rec->type == type && (!aux_filter || rec->aux == aux)) n++;
        off += (size_t)rec->words * 8u;
    }
    return n;
}
