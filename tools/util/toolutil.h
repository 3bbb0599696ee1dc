/* util — the bottom layer of the tools (tools/README.md): escaping for JSON/HTML/CSV,
 * human-readable durations and sizes, a growable buffer, reader look-ups every layer
 * needs. Uses no other layer of the tools, only the sdk's reader header. */
#ifndef JAGER_TOOLS_UTIL_H
#define JAGER_TOOLS_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jager_reader.h"

/** Write \p s (n bytes, or NUL-terminated when n == (size_t)-1) as a JSON string with quotes.
 *  Control characters, quotes, backslashes are escaped; '<', '>', '&' and U+2028/2029 as
 *  \uXXXX too, so the result is also safe inside an HTML <script> block. Invalid UTF-8
 *  bytes become U+FFFD. */
void tu_json_str(FILE *out, const char *s, size_t n);
/** The escaping behind tu_json_str (without the quotes): \p put receives the bytes to
 *  write in order, runs copied as they are and escapes. \return 0, or the first nonzero
 *  value \p put returned (writing stops there). */
int tu_json_escape(const char *s, size_t n, int (*put)(void *ctx, const char *p, size_t n), void *ctx);
/** Length of the valid UTF-8 sequence at \p s (at most \p n bytes, n ≥ 1), 0 if invalid
 *  (overlong forms, surrogates and values past U+10FFFF are invalid). */
size_t tu_utf8_len(const unsigned char *s, size_t n);
/** Write \p s escaped for HTML text and attribute values (& < > " ' ). */
void tu_html_str(FILE *out, const char *s, size_t n);
/** Write \p s as one CSV field (RFC 4180: quoted when needed, quotes doubled). */
void tu_csv_str(FILE *out, const char *s, size_t n);

/** "1.23 ms", "850 ns", "2.5 s" into buf. */
const char *tu_fmt_ns(char *buf, size_t size, double ns);
/** "1.5 MiB" into buf. */
const char *tu_fmt_bytes(char *buf, size_t size, double bytes);

/** A growable byte buffer. */
typedef struct tu_buf {
    uint8_t *data;
    size_t len, cap;
} tu_buf;
int tu_buf_put(tu_buf *b, const void *p, size_t n); /* 0 or -1 on OOM */
int tu_buf_putc(tu_buf *b, uint8_t c);
int tu_buf_printf(tu_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tu_buf_free(tu_buf *b);

/** The thread index whose OS thread id is \p os_tid, or \p fallback when none is (the gc
 *  plugin emits pauses from its own thread and names the triggering one by os_tid). */
uint32_t tu_thread_by_os_tid(const jager_reader *r, uint64_t os_tid, uint32_t fallback);

/** Site display name "name" or "name (file:line)" into buf. */
const char *tu_site_label(const jager_reader *r, jager_site site, char *buf, size_t size, int with_location);
#endif
