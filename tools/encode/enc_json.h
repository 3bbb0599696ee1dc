/* JSON and UTF-8 helpers for the exporters, writing into a tu_buf (the formats build each
 * event in memory, then write it in one call). */
#ifndef JAGER_TOOLS_EXPORT_JSON_H
#define JAGER_TOOLS_EXPORT_JSON_H
#include <stddef.h>
#include <stdint.h>

#include "toolutil.h"

/** Append a string literal (its length computed at compile time). 0 or -1. */
#define TU_PUTS(b, lit) tu_buf_put((b), (lit), sizeof(lit) - 1)

/** Append \p s (n bytes; NUL-terminated when n == (size_t)-1; NULL writes null) as a JSON
 *  string, escaped exactly like tu_json_str (also safe inside HTML <script>). 0 or -1 (OOM). */
int ex_json_str(tu_buf *b, const char *s, size_t n);

/** Append the attribute list [cur, end) as a JSON object {"key": value, …}; a malformed
 *  list ends the object early. 0 or -1 (OOM). */
int ex_json_attrs(tu_buf *b, const uint8_t *cur, const uint8_t *end, const jager_reader *r);

/** Append an integer in decimal (fast path for the exporters' hot loops). 0 or -1. */
int ex_put_u64(tu_buf *b, uint64_t v);
int ex_put_i64(tu_buf *b, int64_t v);

/** Append a double as JSON (round-trip precision; NaN and infinities become null). */
int ex_json_f64(tu_buf *b, double v);

/** 1 if s[0..n) is valid UTF-8. */
int ex_utf8_valid(const char *s, size_t n);

/** Append s[0..n) with every invalid UTF-8 byte replaced by U+FFFD. 0 or -1. */
int ex_utf8_clean(tu_buf *b, const char *s, size_t n);

/** OpenTelemetry severity name of a severity number: TRACE, DEBUG, INFO, WARN, ERROR, FATAL. */
const char *ex_severity_text(uint32_t sev);

/** Lowercase hex of \p n bytes into \p out (2n+1 bytes); returns 0 if all bytes are zero. */
int ex_hex(const uint8_t *p, size_t n, char *out);
#endif
