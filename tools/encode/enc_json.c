#include "enc_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "toolutil.h"

int ex_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) { i++; continue; }
        size_t l = tu_utf8_len(p + i, n - i);
        if (!l) return 0;
        i += l;
    }
    return 1;
}

int ex_utf8_clean(tu_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0; /* start of the pending valid run */
    for (size_t i = 0; i < n;) {
        size_t l = p[i] < 0x80 ? 1 : tu_utf8_len(p + i, n - i);
        if (l) { i += l; continue; }
        if (tu_buf_put(b, s + run, i - run) || TU_PUTS(b, "\xEF\xBF\xBD")) return -1;
        run = ++i;
    }
    return tu_buf_put(b, s + run, n - run);
}

static int put_buf(void *ctx, const char *p, size_t n) { return tu_buf_put(ctx, p, n); }

int ex_json_str(tu_buf *b, const char *s, size_t n)
{
    if (!s) return TU_PUTS(b, "null");
    if (tu_buf_putc(b, '"') || tu_json_escape(s, n == (size_t)-1 ? strlen(s) : n, put_buf, b)) return -1;
    return tu_buf_putc(b, '"');
}

int ex_put_u64(tu_buf *b, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return tu_buf_put(b, tmp + i, sizeof tmp - i);
}

int ex_put_i64(tu_buf *b, int64_t v)
{
    if (v >= 0) return ex_put_u64(b, (uint64_t)v);
    return tu_buf_putc(b, '-') || ex_put_u64(b, (uint64_t)(-(v + 1)) + 1) ? -1 : 0;
}

int ex_json_f64(tu_buf *b, double v)
{
    if (!isfinite(v)) return TU_PUTS(b, "null");
    return tu_buf_printf(b, "%.17g", v);
}

int ex_json_attrs(tu_buf *b, const uint8_t *cur, const uint8_t *end, const jager_reader *r)
{
    if (tu_buf_putc(b, '{')) return -1;
    jager_attr_view a;
    int first = 1;
    while (cur && jager_attr_next(&cur, end, &a) == 1) {
        if (!first && tu_buf_putc(b, ',')) return -1;
        first = 0;
        tu_attr_resolve(r, &a); /* an interned string (JAGER_ATTR_STR_ID): its text */
        if (ex_json_str(b, a.key, a.key_len) || tu_buf_putc(b, ':')) return -1;
        int rc;
        switch (a.kind) {
        case JAGER_ATTR_I64: rc = tu_buf_printf(b, "%lld", (long long)a.i64); break;
        case JAGER_ATTR_F64: rc = ex_json_f64(b, a.f64); break;
        case JAGER_ATTR_BOOL: rc = tu_buf_put(b, a.i64 ? "true" : "false", a.i64 ? 4 : 5); break;
        case JAGER_ATTR_STR: rc = ex_json_str(b, a.str, a.str_len); break;
        default: rc = TU_PUTS(b, "null");
        }
        if (rc) return -1;
    }
    return tu_buf_putc(b, '}');
}

const char *ex_severity_text(uint32_t sev)
{
    static const char *const names[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
    if (sev < 1) return "UNSPECIFIED";
    if (sev > 24) sev = 24;
    return names[(sev - 1) / 4];
}

int ex_hex(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
        any |= p[i] != 0;
    }
    out[2 * n] = '\0';
    return any;
}
