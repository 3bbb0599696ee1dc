#include "toolutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

size_t tu_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { len = 2; min = 0x80; c &= 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; min = 0x800; c &= 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; min = 0x10000; c &= 0x07; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    return len;
}

int tu_json_escape(const char *s, size_t n, int (*put)(void *ctx, const char *p, size_t n), void *ctx)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0; /* start of the pending run copied as is */
    char esc[8];
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t l = 1;
        const char *rep = NULL;
        if (c < 0x80) {
            switch (c) {
            case '"': rep = "\\\""; break;
            case '\\': rep = "\\\\"; break;
            case '\n': rep = "\\n"; break;
            case '\r': rep = "\\r"; break;
            case '\t': rep = "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&') {
                    snprintf(esc, sizeof esc, "\\u%04x", c);
                    rep = esc;
                }
            }
        } else {
            l = tu_utf8_len(p + i, n - i);
            if (!l) {
                rep = "\\ufffd";
                l = 1;
            } else if (l == 3 && p[i] == 0xE2 && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9)) {
                rep = p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
            }
        }
        if (rep) {
            int rc = put(ctx, s + run, i - run);
            if (!rc) rc = put(ctx, rep, strlen(rep));
            if (rc) return rc;
            run = i + l;
        }
        i += l;
    }
    return put(ctx, s + run, n - run);
}

static int put_file(void *ctx, const char *p, size_t n) { return n && fwrite(p, 1, n, ctx) != n ? -1 : 0; }

void tu_json_str(FILE *out, const char *s, size_t n)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    tu_json_escape(s, n == (size_t)-1 ? strlen(s) : n, put_file, out);
    fputc('"', out);
}

void tu_html_str(FILE *out, const char *s, size_t n)
{
    if (!s) return;
    if (n == (size_t)-1) n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(s[i], out);
        }
    }
}

void tu_csv_str(FILE *out, const char *s, size_t n)
{
    if (!s) return;
    if (n == (size_t)-1) n = strlen(s);
    int quote = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') quote = 1;
    if (!quote) { fwrite(s, 1, n, out); return; }
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') fputc('"', out);
        fputc(s[i], out);
    }
    fputc('"', out);
}

/* OWASP's list of the first characters that make a spreadsheet read a cell as a formula
 * (=cmd|' /C calc'!A0, +HYPERLINK(…), -2+3, @SUM(…), and a leading tab or CR). */
static int formula_lead(char c) { return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r'; }

void tu_csv_cell(FILE *out, const char *s, size_t n, int raw)
{
    if (!s) return;
    if (n == (size_t)-1) n = strlen(s);
    if (raw || !n || !formula_lead(s[0])) {
        tu_csv_str(out, s, n);
        return;
    }
    /* Neutralised: quoted, with a leading apostrophe, so it is text in every spreadsheet. */
    fputs("\"'", out);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') fputc('"', out);
        fputc(s[i], out);
    }
    fputc('"', out);
}

const char *tu_fmt_ns(char *buf, size_t size, double ns)
{
    if (ns < 1e3) snprintf(buf, size, "%.0f ns", ns);
    else if (ns < 1e6) snprintf(buf, size, "%.2f us", ns / 1e3);
    else if (ns < 1e9) snprintf(buf, size, "%.2f ms", ns / 1e6);
    else snprintf(buf, size, "%.3f s", ns / 1e9);
    return buf;
}

const char *tu_fmt_bytes(char *buf, size_t size, double b)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4) { b /= 1024; i++; }
    if (i == 0) snprintf(buf, size, "%.0f B", b);
    else snprintf(buf, size, "%.1f %s", b, u[i]);
    return buf;
}

int tu_buf_put(tu_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) return -1;
        b->data = d;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int tu_buf_putc(tu_buf *b, uint8_t c) { return tu_buf_put(b, &c, 1); }

int tu_buf_printf(tu_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    if ((size_t)n < sizeof tmp) return tu_buf_put(b, tmp, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) return -1;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = tu_buf_put(b, big, (size_t)n);
    free(big);
    return rc;
}

void tu_buf_free(tu_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

const char *tu_site_label(const jager_reader *r, jager_site site, char *buf, size_t size, int with_location)
{
    const char *name = NULL, *file = NULL;
    uint32_t line = 0;
    if (jager_reader_site(r, site, &name, &file, &line) != JAGER_OK || !name) {
        snprintf(buf, size, "site#%u", site);
        return buf;
    }
    if (with_location && file && *file) snprintf(buf, size, "%s (%s:%u)", name, file, line);
    else snprintf(buf, size, "%s", name);
    return buf;
}

jager_attr_view *tu_attr_resolve(const jager_reader *r, jager_attr_view *v)
{
    if (v->kind != JAGER_ATTR_STR_ID) return v;
    const char *s = r && v->i64 > 0 && v->i64 <= UINT32_MAX ? jager_reader_string(r, (uint32_t)v->i64) : NULL;
    size_t n = s ? strlen(s) : 0;
    v->kind = JAGER_ATTR_STR;
    v->str = s ? s : "";
    v->str_len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    return v;
}

int tu_thread_index_ok(const jager_reader *r, uint32_t thread)
{
    return thread <= TU_THREAD_INDEX_DENSE || (r && thread <= jager_reader_thread_count(r));
}

uint32_t tu_thread_by_os_tid(const jager_reader *r, uint64_t os_tid, uint32_t fallback)
{
    uint32_t n = (r && os_tid) ? jager_reader_thread_count(r) : 0;
    for (uint32_t t = 1; t <= n; t++) {
        uint64_t tid = 0;
        if (jager_reader_thread(r, t, &tid, NULL) == JAGER_OK && tid == os_tid) return t;
    }
    return fallback;
}

/* Range first, then the cast: (int64_t)v is undefined outside (-2^63 - 1, 2^63), NaN
 * included (the fuzzer's report: `jager hunt` on a crafted file). */
int tu_double_as_i64(double v, int64_t *out)
{
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return 0;
    int64_t i = (int64_t)v;
    if ((double)i != v) return 0;
    if (out) *out = i;
    return 1;
}

int tu_double_as_u64(double v, uint64_t *out)
{
    if (!(v >= 0.0 && v < 18446744073709551616.0)) return 0;
    uint64_t u = (uint64_t)v;
    if ((double)u != v) return 0;
    if (out) *out = u;
    return 1;
}
