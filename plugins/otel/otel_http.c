/* OTLP/HTTP with libcurl, on the exporter thread: one request, retried exactly as the OTLP
 * specification says (429, 502, 503, 504 and lost connections; jittered exponential
 * backoff; Retry-After in seconds or as an HTTP date; never 400 or another 4xx), every
 * wait bounded by the batch's deadline; partial_success read from the response. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#include "otel_curl.h"
#include "otel_internal.h"

uint64_t ot_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void ot_buf_put(ot_buf *b, const void *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n + 1) c *= 2;
        uint8_t *p = realloc(b->p, c);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void ot_buf_str(ot_buf *b, const char *s) { ot_buf_put(b, s, strlen(s)); }

void ot_buf_fmt(ot_buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        ot_buf_put(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ot_buf_put(b, big, (size_t)n);
    free(big);
}

int64_t ot_retry_after_ms(const char *v, int64_t now_unix_s)
{
    while (*v == ' ' || *v == '\t') v++;
    if (!*v) return -1;
    if (isdigit((unsigned char)*v)) {
        const char *p = v;
        int64_t s = 0;
        while (isdigit((unsigned char)*p) && s < 100000000) s = s * 10 + (*p++ - '0');
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        return *p ? -1 : s * 1000;
    }
    time_t t = ot_curl.getdate(v, NULL);
    if (t == (time_t)-1) return -1;
    return (int64_t)t <= now_unix_s ? 0 : ((int64_t)t - now_unix_s) * 1000;
}

typedef struct reply {
    ot_buf body;
    size_t cap;
    char retry_after[128];
    ot_state *st;
} reply;

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
    reply *r = arg;
    size_t len = sz * n;
    if (r->body.n < r->cap) ot_buf_put(&r->body, p, len < r->cap - r->body.n ? len : r->cap - r->body.n);
    return len; /* the rest is read and cut off */
}

static size_t on_header(char *p, size_t sz, size_t n, void *arg)
{
    reply *r = arg;
    size_t len = sz * n;
    if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
        size_t k = len - 12 < sizeof r->retry_after - 1 ? len - 12 : sizeof r->retry_after - 1;
        memcpy(r->retry_after, p + 12, k);
        r->retry_after[k] = 0;
        char *e = r->retry_after + strlen(r->retry_after);
        while (e > r->retry_after && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ')) *--e = 0;
    }
    return len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    ot_state *st = arg;
    return atomic_load(&st->abort_io) ? 1 : 0;
}

int ot_http_init(ot_state *st, int sig)
{
    st->curl[sig] = ot_curl.easy_init();
    return st->curl[sig] ? 0 : -1;
}

void ot_http_free(ot_state *st, int sig)
{
    if (st->curl[sig]) ot_curl.easy_cleanup(st->curl[sig]);
    st->curl[sig] = NULL;
}

static int gzip(const uint8_t *in, size_t n, ot_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    size_t cap = deflateBound(&z, (uLong)n) + 32;
    out->p = malloc(cap);
    if (!out->p) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out->p;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    out->n = cap - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

/* partial_success.rejected_* from a protobuf response (field 1 → field 1, both versions). */
static uint64_t rejected_pb(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t tag = 0;
        for (int s = 0; i < n && s < 64; s += 7) {
            tag |= (uint64_t)(p[i] & 0x7f) << s;
            if (!(p[i++] & 0x80)) break;
        }
        uint32_t field = (uint32_t)(tag >> 3), wt = (uint32_t)(tag & 7);
        uint64_t v = 0;
        if (wt == 0) {
            for (int s = 0; i < n && s < 64; s += 7) {
                v |= (uint64_t)(p[i] & 0x7f) << s;
                if (!(p[i++] & 0x80)) break;
            }
            continue;
        }
        if (wt == 1) { i += 8; continue; }
        if (wt == 5) { i += 4; continue; }
        if (wt != 2) return 0;
        for (int s = 0; i < n && s < 64; s += 7) {
            v |= (uint64_t)(p[i] & 0x7f) << s;
            if (!(p[i++] & 0x80)) break;
        }
        if (v > n - i) return 0;
        if (field == 1) {
            /* ExportXPartialSuccess: field 1 varint = rejected count */
            const uint8_t *q = p + i;
            size_t m = (size_t)v, j = 0;
            while (j < m) {
                uint64_t t = 0, x = 0;
                for (int s = 0; j < m && s < 64; s += 7) {
                    t |= (uint64_t)(q[j] & 0x7f) << s;
                    if (!(q[j++] & 0x80)) break;
                }
                if ((t & 7) == 0) {
                    for (int s = 0; j < m && s < 64; s += 7) {
                        x |= (uint64_t)(q[j] & 0x7f) << s;
                        if (!(q[j++] & 0x80)) break;
                    }
                    if ((t >> 3) == 1) return x;
                } else if ((t & 7) == 2) {
                    for (int s = 0; j < m && s < 64; s += 7) {
                        x |= (uint64_t)(q[j] & 0x7f) << s;
                        if (!(q[j++] & 0x80)) break;
                    }
                    j += (size_t)x;
                } else {
                    return 0;
                }
            }
            return 0;
        }
        i += (size_t)v;
    }
    return 0;
}

static uint64_t rejected_json(const char *s, int sig)
{
    static const char *const keys[OT_NSIG] = {"\"rejectedSpans\"", "\"rejectedLogRecords\"", "\"rejectedDataPoints\""};
    const char *k = strstr(s, keys[sig]);
    if (!k) return 0;
    k += strlen(keys[sig]);
    while (*k == ' ' || *k == ':' || *k == '"' || *k == '\t' || *k == '\n') k++;
    return strtoull(k, NULL, 10);
}

static void wait_until(ot_state *st, uint64_t until)
{
    pthread_mutex_lock(&st->lock);
    while (!atomic_load(&st->abort_io)) {
        uint64_t now = ot_now();
        if (now >= until) break;
        if (st->hard_deadline_ns && now >= st->hard_deadline_ns) break;
        uint64_t t = until;
        if (st->hard_deadline_ns && st->hard_deadline_ns < t) t = st->hard_deadline_ns;
        struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
        pthread_cond_timedwait(&st->cond, &st->lock, &ts);
    }
    pthread_mutex_unlock(&st->lock);
}

static uint64_t rnd(ot_state *st, int sig)
{
    uint64_t x = st->rng[sig] ? st->rng[sig] : 0x2545f4914f6cdd1dull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return st->rng[sig] = x;
}

int ot_http_send(ot_state *st, int sig, const uint8_t *body, size_t len, uint64_t deadline_ns,
                 uint64_t *rejected, char *cause, size_t causecap)
{
    const ot_endpoint *ep = &st->cfg.ep[sig];
    CURL *c = st->curl[sig];
    ot_buf z = {0};
    *rejected = 0;
    snprintf(cause, causecap, "other");
    if (!c || !ep->url) return -1;
    if (ep->gzip) {
        if (gzip(body, len, &z)) {
            free(z.p);
            return -1;
        }
        body = z.p;
        len = z.n;
    }
    struct curl_slist *h = NULL;
    h = ot_curl.slist_append(h, ep->protocol == OT_PROTO_JSON ? "Content-Type: application/json" : "Content-Type: application/x-protobuf");
    if (ep->gzip) h = ot_curl.slist_append(h, "Content-Encoding: gzip");
    h = ot_curl.slist_append(h, "Expect:");
    for (size_t i = 0; i < ep->nheaders; i++) h = ot_curl.slist_append(h, ep->headers[i]);

    int result = -1;
    for (uint32_t attempt = 0;; attempt++) {
        uint64_t now = ot_now();
        uint64_t end = deadline_ns;
        if (st->hard_deadline_ns && st->hard_deadline_ns < end) end = st->hard_deadline_ns;
        if (now >= end || atomic_load(&st->abort_io)) {
            if (attempt == 0 || atomic_load(&st->abort_io)) snprintf(cause, causecap, atomic_load(&st->abort_io) ? "shutdown" : "timeout");
            break;
        }
        reply r = {.cap = st->cfg.response_cap, .st = st};
        ot_curl.easy_reset(c);
        ot_curl.easy_setopt(c, CURLOPT_URL, ep->url);
        ot_curl.easy_setopt(c, CURLOPT_POST, 1L);
        ot_curl.easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)body);
        ot_curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        ot_curl.easy_setopt(c, CURLOPT_HTTPHEADER, h);
        ot_curl.easy_setopt(c, CURLOPT_USERAGENT, "jager-otel/1.0");
        long ms = (long)((end - now) / 1000000u);
        ot_curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
        ot_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        ot_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        ot_curl.easy_setopt(c, CURLOPT_WRITEDATA, &r);
        ot_curl.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        ot_curl.easy_setopt(c, CURLOPT_HEADERDATA, &r);
        ot_curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        ot_curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        ot_curl.easy_setopt(c, CURLOPT_XFERINFODATA, st);
        atomic_fetch_add(&st->cnt[sig].requests, 1);
        CURLcode rc = ot_curl.easy_perform(c);
        long status = 0;
        int retry = 0;
        if (rc == CURLE_OK) {
            ot_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
            if (status >= 200 && status < 300) {
                if (r.body.n) {
                    *rejected = ep->protocol == OT_PROTO_JSON ? rejected_json((const char *)r.body.p, sig)
                                                              : rejected_pb(r.body.p, r.body.n);
                }
                free(r.body.p);
                result = 0;
                break;
            }
            snprintf(cause, causecap, "%ld", status);
            retry = status == 429 || status == 502 || status == 503 || status == 504;
        } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
            snprintf(cause, causecap, "shutdown");
        } else if (rc == CURLE_OPERATION_TIMEDOUT) {
            snprintf(cause, causecap, "timeout");
        } else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR ||
                   rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE) {
            snprintf(cause, causecap, "connection");
            retry = 1;
        } else {
            snprintf(cause, causecap, rc == CURLE_COULDNT_RESOLVE_HOST ? "connection" : "other");
        }
        free(r.body.p);
        if (!retry) break;
        /* Wait: Retry-After when the server gave one, else jittered exponential backoff. */
        uint64_t wait_ms = 0;
        int64_t ra = r.retry_after[0] ? ot_retry_after_ms(r.retry_after, (int64_t)time(NULL)) : -1;
        if (ra >= 0) {
            wait_ms = (uint64_t)ra;
        } else {
            uint64_t base = st->cfg.backoff_ms << (attempt < 5 ? attempt : 5);
            wait_ms = base / 2 + rnd(st, sig) % (base / 2 + 1);
        }
        now = ot_now();
        if (now + wait_ms * 1000000u >= end) break; /* the wait would pass the deadline: give up now */
        atomic_fetch_add(&st->cnt[sig].retries, 1);
        wait_until(st, now + wait_ms * 1000000u);
    }
    ot_curl.slist_free_all(h);
    free(z.p);
    return result;
}
