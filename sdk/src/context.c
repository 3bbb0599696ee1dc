/* W3C Trace Context (level 1): ids, traceparent format and strict parsing, the calling
 * thread's current context, and inject/extract over a string carrier. */
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "internal.h"

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

static int valid(const jager_trace_context *c)
{
    return c && !all_zero(c->trace_id, 16) && !all_zero(c->span_id, 8);
}

/* Random bytes from the kernel; if it cannot give them, a time-seeded mix (ids must only be
 * unique, not secret). Never returns all-zero ids. */
static void random_bytes(uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, GRND_NONBLOCK);
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got < n) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)p;
        for (size_t i = got; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            p[i] = (uint8_t)(x >> 24);
        }
    }
}

static void fresh(uint8_t *p, size_t n)
{
    do {
        random_bytes(p, n);
    } while (all_zero(p, n));
}

jager_status jager_trace_context_new(jager_trace_context *out)
{
    if (!out) return jg_error(JAGER_E_INVALID, "jager_trace_context_new: out is NULL");
    memset(out, 0, sizeof *out);
    fresh(out->trace_id, 16);
    fresh(out->span_id, 8);
    out->flags = 1;
    return JAGER_OK;
}

jager_status jager_trace_context_child(const jager_trace_context *parent, jager_trace_context *out)
{
    if (!valid(parent) || !out) return jg_error(JAGER_E_INVALID, "jager_trace_context_child: invalid parent");
    jager_trace_context c = *parent;
    fresh(c.span_id, 8);
    *out = c;
    return JAGER_OK;
}

static const char hexdig[] = "0123456789abcdef";

static void put_hex(char *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = hexdig[src[i] >> 4];
        dst[2 * i + 1] = hexdig[src[i] & 15];
    }
}

jager_status jager_traceparent_format(const jager_trace_context *ctx, char *buf, size_t size)
{
    if (!valid(ctx) || !buf || size < JAGER_TRACEPARENT_LEN + 1)
        return jg_error(JAGER_E_INVALID, "jager_traceparent_format: invalid context or buffer smaller than 56");
    buf[0] = '0';
    buf[1] = '0';
    buf[2] = '-';
    put_hex(buf + 3, ctx->trace_id, 16);
    buf[35] = '-';
    put_hex(buf + 36, ctx->span_id, 8);
    buf[52] = '-';
    put_hex(buf + 53, &ctx->flags, 1);
    buf[55] = 0;
    return JAGER_OK;
}

/* Lowercase hex only: the spec forbids uppercase in traceparent. */
static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static int get_hex(const char *s, uint8_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        dst[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

jager_status jager_traceparent_parse(const char *value, size_t len, jager_trace_context *out)
{
    if (!value || !out) return jg_error(JAGER_E_INVALID, "traceparent: NULL argument");
    if (len < JAGER_TRACEPARENT_LEN) return jg_error(JAGER_E_FORMAT, "traceparent: %zu characters, need 55", len);
    jager_trace_context c;
    memset(&c, 0, sizeof c);
    uint8_t version;
    if (get_hex(value, &version, 1)) return jg_error(JAGER_E_FORMAT, "traceparent: version is not lowercase hex");
    if (version == 0xff) return jg_error(JAGER_E_FORMAT, "traceparent: version ff is invalid");
    if (value[2] != '-' || value[35] != '-' || value[52] != '-')
        return jg_error(JAGER_E_FORMAT, "traceparent: fields must be separated by '-'");
    if (version == 0 && len != JAGER_TRACEPARENT_LEN)
        return jg_error(JAGER_E_FORMAT, "traceparent: version 00 must be exactly 55 characters");
    if (version > 0 && len > JAGER_TRACEPARENT_LEN && value[55] != '-')
        return jg_error(JAGER_E_FORMAT, "traceparent: unexpected data after the flags");
    if (get_hex(value + 3, c.trace_id, 16)) return jg_error(JAGER_E_FORMAT, "traceparent: trace-id is not 32 lowercase hex digits");
    if (get_hex(value + 36, c.span_id, 8)) return jg_error(JAGER_E_FORMAT, "traceparent: parent-id is not 16 lowercase hex digits");
    if (get_hex(value + 53, &c.flags, 1)) return jg_error(JAGER_E_FORMAT, "traceparent: trace-flags are not 2 lowercase hex digits");
    if (all_zero(c.trace_id, 16)) return jg_error(JAGER_E_FORMAT, "traceparent: all-zero trace-id");
    if (all_zero(c.span_id, 8)) return jg_error(JAGER_E_FORMAT, "traceparent: all-zero parent-id");
    c.version = version;
    *out = c;
    return JAGER_OK;
}

jager_status jager_context_current(jager_trace_context *out)
{
    if (!out) return jg_error(JAGER_E_INVALID, "jager_context_current: out is NULL");
    jg_tls *t = jg_tls_peek();
    if (!atomic_load_explicit(&jg_enabled, memory_order_acquire) || !t || !t->has_ctx)
        return jg_error(JAGER_E_NOTFOUND, "no current trace context");
    *out = t->ctx;
    return JAGER_OK;
}

static int same(const jager_trace_context *a, const jager_trace_context *b)
{
    return !memcmp(a->trace_id, b->trace_id, 16) && !memcmp(a->span_id, b->span_id, 8) && a->flags == b->flags;
}

void jager_context_set(const jager_trace_context *ctx)
{
    if (!atomic_load_explicit(&jg_enabled, memory_order_acquire)) return;
    jg_tls *t = jg_tls_fast();
    if (!t) return;
    if (ctx && valid(ctx)) {
        if (t->has_ctx && same(&t->ctx, ctx)) return; /* no change, no record */
        t->ctx = *ctx;
        t->has_ctx = 1;
        jg_record_context(ctx);
    } else {
        if (!t->has_ctx) return;
        t->has_ctx = 0;
        jg_record_context(NULL);
    }
}

jager_status jager_context_inject(void *carrier, jager_carrier_set_fn set)
{
    if (!set) return jg_error(JAGER_E_INVALID, "jager_context_inject: no setter");
    jager_trace_context c;
    jager_status st = jager_context_current(&c);
    if (st) return st;
    char buf[JAGER_TRACEPARENT_LEN + 1];
    c.version = 0; /* we speak version 00 */
    if ((st = jager_traceparent_format(&c, buf, sizeof buf))) return st;
    set(carrier, "traceparent", buf);
    return JAGER_OK;
}

jager_status jager_context_extract(void *carrier, jager_carrier_get_fn get)
{
    if (!get) return jg_error(JAGER_E_INVALID, "jager_context_extract: no getter");
    const char *v = get(carrier, "traceparent");
    if (!v) return jg_error(JAGER_E_NOTFOUND, "carrier has no traceparent");
    jager_trace_context c;
    /* Bound the scan: a traceparent is short; a longer value is malformed anyway. */
    size_t len = strnlen(v, 512);
    jager_status st = jager_traceparent_parse(v, len, &c);
    if (st) return st;
    jager_context_set(&c);
    return JAGER_OK;
}
