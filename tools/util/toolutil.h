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
/** A CSV text cell: as tu_csv_str, but a value a spreadsheet would run as a formula (first
 *  character = + - @ tab or CR) is written quoted after an apostrophe, as OWASP recommends;
 *  \p raw writes it unchanged. */
void tu_csv_cell(FILE *out, const char *s, size_t n, int raw);

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

/** Thread indexes up to this are taken as they are, whatever the file's thread table says. */
#define TU_THREAD_INDEX_DENSE 65536u

/** Whether a thread index an event names may size a per-thread array: one the file's
 *  thread table holds, or one up to TU_THREAD_INDEX_DENSE. A hostile file's index (2^31,
 *  10^8) is neither; the views that index arrays by thread leave its events out (as the
 *  model does), those that key threads by a hash map keep them. */
int tu_thread_index_ok(const jager_reader *r, uint32_t thread);
/** An interned string attribute (JAGER_ATTR_STR_ID) made a plain one: kind STR with the text
 *  of its id in \p r's string table ("" when unknown or \p r is NULL). Other kinds are left
 *  alone. \return \p v. */
jager_attr_view *tu_attr_resolve(const jager_reader *r, jager_attr_view *v);

/** The thread index whose OS thread id is \p os_tid, or \p fallback when none is (the gc
 *  plugin emits pauses from its own thread and names the triggering one by os_tid). */
uint32_t tu_thread_by_os_tid(const jager_reader *r, uint64_t os_tid, uint32_t fallback);

/** Site display name "name" or "name (file:line)" into buf. */
const char *tu_site_label(const jager_reader *r, jager_site site, char *buf, size_t size, int with_location);

/** 1 and the value in *out when \p v is a whole number that an int64_t holds exactly (not
 *  NaN, not infinite, within ±2^63): the test before a cast, which is undefined behaviour
 *  for any other double. */
int tu_double_as_i64(double v, int64_t *out);

/** As tu_double_as_i64, for [0, 2^64). */
int tu_double_as_u64(double v, uint64_t *out);
#endif
