#define LZ4F_STATIC_LINKING_ONLY
#include "file_fixture.h"

#include <lz4frame.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "memsink.h"
#include "testutil.h"

typedef struct fx_thread_arg {
    const fx_expect *ex;
    int iters, index;
    jager_counter counter;
} fx_thread_arg;

static void *fx_worker(void *p)
{
    fx_thread_arg *a = p;
    const fx_expect *ex = a->ex;
    for (int i = 0; i < a->iters; i++) {
        jager_span outer = jager_span_begin(ex->site_outer);
        jager_span inner = jager_span_begin(ex->site_inner);
        if (i % 4 == 0) {
            jager_attr at[3] = {
                {.key = "iter", .kind = JAGER_ATTR_I64, .value.i64 = i},
                {.key = "thread", .kind = JAGER_ATTR_I64, .value.i64 = a->index},
                {.key = "tag", .kind = JAGER_ATTR_STR, .value.str = "</script>\"\n"},
            };
            jager_span_set_attrs(inner, at, 3);
        }
        jager_span_end_bytes(inner, 64);
        if (i % 5 == 0) jager_span_error(outer, "diverged <b>");
        jager_span_end(outer);
        if (i % 3 == 0) {
            jager_attr at[2] = {
                {.key = "residual", .kind = JAGER_ATTR_F64, .value.f64 = 0.5 / (i + 1)},
                {.key = "ok", .kind = JAGER_ATTR_BOOL, .value.boolean = i % 2},
            };
            jager_log(JAGER_SEV_INFO, "step \"done\" <&>\x01", at, 2);
        }
        jager_counter_add(a->counter, 1.0);
        if (i % 10 == 0) jager_mark("checkpoint");
        uint64_t fields[4] = {1000u + (uint64_t)i, 4096, ex->stack, (uint64_t)(i & 1)};
        jg_emit_plugin(ex->plugin_type, 0, fields, 4);
    }
    return NULL;
}

int fx_record(const char *path, int threads, int iters, fx_expect *ex)
{
    memset(ex, 0, sizeof *ex);
    jager_sink ms;
    memsink *m = memsink_new(&ms);
    if (!m || jager_sink_add(&ms) != JAGER_OK) return -1;
    jager_config c = tu_config(4u << 20);
    c.output = path;
    if (jager_init(&c) != JAGER_OK) return -1;
    ex->site_outer = jager_site_register("solve", "solver.c", 42);
    ex->site_inner = jager_site_register("kernel<\"&\">", NULL, 0);
    jager_counter ctr = jager_counter_register("iterations", "1", JAGER_COUNTER_MONOTONIC);
    static const jager_field_desc f[4] = {{"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
                                          {"bytes", JAGER_FIELD_BYTES, 0},
                                          {"stack", JAGER_FIELD_STACK, 0},
                                          {"ok", JAGER_FIELD_BOOL, 0}};
    if (jg_type_register("test.kernel", f, 4, 0, &ex->plugin_type) != JAGER_OK) return -1;
    ex->stack_ips[0] = (uint64_t)(uintptr_t)&fopen + 1;
    ex->stack_ips[1] = (uint64_t)(uintptr_t)&strlen + 1;
    ex->stack_ips[2] = (uint64_t)(uintptr_t)&malloc + 1;
    ex->stack = jager_stack_intern(ex->stack_ips, 3);

    pthread_t th[16];
    fx_thread_arg args[16];
    if (threads > 16) threads = 16;
    for (int t = 0; t < threads; t++) {
        args[t] = (fx_thread_arg){ex, iters, t, ctr};
        pthread_create(&th[t], NULL, fx_worker, &args[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    jager_metadata_set("test.evil", "</script>\n\x1b[31m\"");
    jager_flush(); /* a STATS block mid-file, then more events after it */
    jager_mark("after flush");
    jager_shutdown();

    for (int i = 0; i < iters; i++) {
        ex->spans += 2;
        ex->span_attrs += i % 4 == 0;
        ex->span_errors += i % 5 == 0;
        ex->logs += i % 3 == 0;
        ex->counters += 1;
        ex->marks += i % 10 == 0;
        ex->plugin += 1;
    }
    ex->spans *= (uint64_t)threads;
    ex->span_attrs *= (uint64_t)threads;
    ex->span_errors *= (uint64_t)threads;
    ex->logs *= (uint64_t)threads;
    ex->counters *= (uint64_t)threads;
    ex->marks = ex->marks * (uint64_t)threads + 1;
    ex->plugin *= (uint64_t)threads;
    for (size_t off = 0; off < m->bytes;) {
        const jager_record *r = (const jager_record *)(m->data + off);
        if (r->type < 512) ex->by_type[r->type]++;
        off += (size_t)r->words * 8u;
    }
    memsink_free(m);
    return 0;
}

int fx_frames(const uint8_t *data, size_t size, fx_frame *out, int cap)
{
    LZ4F_dctx *d;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION))) return -1;
    size_t off = 0;
    int n = 0;
    uint8_t *buf = malloc(64u << 20);
    while (off < size && n < cap && buf) {
        uint32_t magic;
        memcpy(&magic, data + off, 4);
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
            uint32_t len;
            memcpy(&len, data + off + 4, 4);
            out[n++] = (fx_frame){off, 8u + len, 0, 0, 0, 0};
            off += 8u + len;
            continue;
        }
        size_t produced = 0, start = off;
        for (;;) {
            size_t in = size - off, o = (64u << 20) - produced;
            size_t rc = LZ4F_decompress(d, buf + produced, &o, data + off, &in, NULL);
            if (LZ4F_isError(rc) || (in == 0 && o == 0)) {
                n = -1;
                goto out;
            }
            off += in;
            produced += o;
            if (rc == 0) break;
        }
        fx_frame f = {start, off - start, 0, 0, 1469598103934665603ull, produced};
        for (size_t i = 0; i < produced; i++) f.hash = (f.hash ^ buf[i]) * 1099511628211ull;
        memcpy(&f.kind, buf, 4);
        if (f.kind == 7) memcpy(&f.events, buf + 16, 8);
        out[n++] = f;
    }
out:
    free(buf);
    LZ4F_freeDecompressionContext(d);
    return n;
}

int fx_drain(jager_reader *r, uint64_t *by_type, uint64_t *n)
{
    jager_event ev;
    int rc;
    *n = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        (*n)++;
        if (by_type && ev.type < 512) by_type[ev.type]++;
    }
    return rc;
}
