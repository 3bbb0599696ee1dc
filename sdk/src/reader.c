/*
 * reader.c — the `.jgr` reader (jager_reader.h; layout in file_format.h and
 * docs/file-format.md).
 *
 * The reader streams a recording frame by frame with bounded memory: one window of
 * compressed input (a file) or the caller's buffer (memory), one decompression buffer
 * reused for every block, and the tables (strings, sites, types, …) which are kept.
 * Event blocks are validated whole when loaded (record sizes against the block, type ids
 * against the schema, variable-length payloads against their record) and then handed out
 * record by record without copying or allocating.
 *
 * Hostile input: every length is checked before use, allocations are bounded by what the
 * input can justify, and any error is reported with the frame number and byte offset
 * ("frame 12 at byte 40960: checksum mismatch") and becomes the reader's terminal state.
 */
#define LZ4F_STATIC_LINKING_ONLY
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <lz4frame.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_format.h"
#include "internal.h"
#include "jager_reader.h"

/** A compressed frame longer than this is refused (ours are ~1 MiB at most). */
#define RD_FRAME_MAX_BYTES (2ull * JG_BLOCK_MAX_CONTENT)
/** Skippable frames longer than this are refused. */
#define RD_SKIPPABLE_MAX (16u << 20)
#define RD_WINDOW_MIN (4u << 20)
#define RD_ARENA_CHUNK (64u * 1024)

/* ---------------------------------------------------------------------------------- */
/* types */

/* A chunked arena: what the reader hands out never moves and lives until close. */
typedef struct rd_chunk {
    struct rd_chunk *next;
    size_t used, cap;
    _Alignas(8) uint8_t data[];
} rd_chunk;

typedef struct rd_type {
    jager_type_desc desc;
    int from_file;      /* 0: the reader's built-in description of a core type */
} rd_type;

/* What next() and the block check need per type id, kept dense and small. */
typedef struct rd_tfast {
    uint8_t known;      /* 1 core layout, 2 plugin layout, 3 future builtin (opaque) */
    int8_t dur_field;   /* plugin: index of the first DURATION_NS field, -1 if none */
    uint16_t min_bytes; /* smallest valid record */
} rd_tfast;

typedef struct rd_site { uint32_t name, file, line; } rd_site;
typedef struct rd_thread { uint64_t os_tid; const char *name; } rd_thread;
typedef struct rd_counter { uint32_t name, unit, kind; } rd_counter;
typedef struct rd_stack { const uint64_t *ips; uint32_t n; } rd_stack;
typedef struct rd_symbol {
    uint64_t ip;
    uint32_t inline_depth, line, func, file;
    uint32_t next; /* index + 1 of the next frame of the same ip, 0 at the end */
} rd_symbol;
typedef struct rd_meta { const char *key, *value; } rd_meta;

typedef struct rd_site_stat {
    uint32_t site, nbuckets;
    uint64_t v[JG_STATS_SITE_VALUES];
    size_t hist_at; /* index into the set's bucket arrays */
} rd_site_stat;

/* One complete STATS set (a STATS block, or several parts flagged first/last). */
typedef struct rd_stats {
    int have, have_core;
    uint64_t core[JG_STATS_CORE_VALUES];
    uint32_t site_limit;
    rd_site_stat *sites;
    size_t nsites, sites_cap;
    uint32_t *hb_index;
    uint64_t *hb_count;
    size_t nhb, hb_cap;
} rd_stats;

/* A growable array of fixed-size elements (the tables). */
typedef struct rd_vec {
    void *data;
    size_t n, cap;
} rd_vec;

struct jager_reader {
    /* input: the caller's memory, or a file read through a window */
    const uint8_t *mem;
    uint64_t mem_size;
    int fd;
    uint64_t file_bytes;
    uint8_t *win;
    size_t win_cap, win_len;
    uint64_t win_off;
    uint64_t frame_base; /* the window keeps bytes from here on */
    int in_errno;        /* why the last in_get failed: 0 end of input, else errno */
    int seekable;        /* 0 for pipes: read strictly forward, no rewind */
    uint64_t fd_pos;     /* bytes read so far from a pipe */

    LZ4F_dctx *dctx;
    uint8_t *blk; /* decompressed block, 8-byte aligned (malloc) */
    size_t blk_cap, blk_len;

    /* position in the current pass */
    uint64_t first_pos; /* the first block after the preamble */
    uint64_t pos;       /* the next frame */
    uint64_t frame_no;  /* number of the next frame (the preamble is frame 0) */
    uint64_t cur_frame, cur_pos; /* the frame being processed, for messages */
    uint64_t pass_events;        /* events declared by EVENTS blocks of this pass */
    uint64_t tables_until;       /* table frames ending at or before this were absorbed */
    int after_end;
    int tables_only;             /* load_tables pass: skip event frames unread */
    int state;                   /* 0 running, 1 clean end, < 0 terminal error */

    /* the events block being handed out */
    const uint8_t *ev, *ev_end;
    uint32_t ev_thread;

    char err[384];

    /* what the file says about itself */
    uint16_t fmt_major, fmt_minor;
    uint64_t frames, events, consumed;
    int clean_end, truncated, meta_seen;
    double ticks_per_ns;
    uint64_t start_ns, start_unix_ns, end_ns;

    /* tables */
    rd_chunk *arena;
    rd_vec meta;     /* rd_meta, insertion order */
    rd_vec strings;  /* const char *, index = id (0 unused) */
    rd_vec sites;    /* rd_site */
    rd_vec threads;  /* rd_thread */
    rd_vec counters; /* rd_counter */
    rd_vec stacks;   /* rd_stack */
    rd_vec symbols;  /* rd_symbol */
    uint32_t *sym_hash; /* open addressing: index + 1 of an ip's first frame */
    size_t sym_hash_cap;
    rd_type **types; /* indexed by type id */
    rd_tfast *tfast;
    uint32_t ntypes; /* capacity of both, largest id + 1 */
    rd_stats stats, staging;
};

/* ---------------------------------------------------------------------------------- */
/* small helpers */

static void *arena_alloc(jager_reader *r, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    if (!r->arena || r->arena->cap - r->arena->used < size) {
        size_t cap = size > RD_ARENA_CHUNK ? size : RD_ARENA_CHUNK;
        rd_chunk *c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = r->arena;
        c->used = 0;
        c->cap = cap;
        r->arena = c;
    }
    void *p = r->arena->data + r->arena->used;
    r->arena->used += size;
    return p;
}

static const char *arena_str(jager_reader *r, const uint8_t *s, size_t n)
{
    char *p = arena_alloc(r, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/** Make room for index \p i in \p v (elements of \p elem bytes, new ones zeroed). */
static int vec_reserve(rd_vec *v, size_t elem, size_t i)
{
    if (i < v->cap) return 0;
    size_t cap = v->cap ? v->cap : 64;
    while (cap <= i) cap *= 2;
    void *d = realloc(v->data, cap * elem);
    if (!d) return -1;
    memset((uint8_t *)d + v->cap * elem, 0, (cap - v->cap) * elem);
    v->data = d;
    v->cap = cap;
    return 0;
}

static int fail(jager_reader *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** Record a terminal error about the current frame and return \p status. */
static int fail(jager_reader *r, int status, const char *fmt, ...)
{
    int n = snprintf(r->err, sizeof r->err, "frame %llu at byte %llu: ", (unsigned long long)r->cur_frame,
                     (unsigned long long)r->cur_pos);
    if (n < 0 || (size_t)n >= sizeof r->err) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return status;
}

static const char *kind_name(uint32_t kind)
{
    static const char *names[] = {"?", "META", "SCHEMA", "STRINGS", "SITES", "THREADS", "COUNTERS",
                                  "EVENTS", "STACKS", "SYMBOLS", "STATS", "END"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

/* ---------------------------------------------------------------------------------- */
/* input */

/** \p n bytes at offset \p off, or NULL when the input ends first (in_errno 0) or
 *  cannot be read (in_errno set). In file mode the pointer is valid until the next call
 *  and the window keeps everything from frame_base (≤ off) on. */
static const uint8_t *in_get(jager_reader *r, uint64_t off, size_t n)
{
    r->in_errno = 0;
    if (r->mem) return (off <= r->mem_size && n <= r->mem_size - off) ? r->mem + off : NULL;
    uint64_t end = off + n;
    if (off >= r->win_off && end <= r->win_off + r->win_len) return r->win + (off - r->win_off);
    uint64_t base = r->frame_base <= off ? r->frame_base : off;
    if (base < r->win_off || base > r->win_off + r->win_len) {
        r->win_off = base;
        r->win_len = 0;
    } else if (end - r->win_off > r->win_cap && base > r->win_off) {
        size_t drop = (size_t)(base - r->win_off);
        memmove(r->win, r->win + drop, r->win_len - drop);
        r->win_off = base;
        r->win_len -= drop;
    }
    if (end - r->win_off > r->win_cap) {
        if (end - r->win_off > RD_FRAME_MAX_BYTES + RD_WINDOW_MIN) {
            r->in_errno = EFBIG;
            return NULL;
        }
        size_t cap = r->win_cap ? r->win_cap : RD_WINDOW_MIN;
        while (cap < end - r->win_off) cap *= 2;
        uint8_t *w = realloc(r->win, cap);
        if (!w) {
            r->in_errno = ENOMEM;
            return NULL;
        }
        r->win = w;
        r->win_cap = cap;
    }
    while (r->win_off + r->win_len < end) {
        uint64_t at = r->win_off + r->win_len;
        ssize_t k;
        if (r->seekable) {
            k = pread(r->fd, r->win + r->win_len, r->win_cap - r->win_len, (off_t)at);
        } else if (at == r->fd_pos) {
            k = read(r->fd, r->win + r->win_len, r->win_cap - r->win_len);
            if (k > 0) r->fd_pos += (uint64_t)k;
        } else {
            r->in_errno = ESPIPE; /* a pipe cannot go back (rewind) */
            return NULL;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            r->in_errno = errno ? errno : EIO;
            return NULL;
        }
        if (k == 0) return NULL;
        r->win_len += (size_t)k;
    }
    return r->win + (off - r->win_off);
}

/** Bytes available from \p off (after an in_get at or past the end failed). */
static uint64_t in_available(jager_reader *r, uint64_t off)
{
    if (r->mem) return off < r->mem_size ? r->mem_size - off : 0;
    uint64_t end = r->win_off + r->win_len;
    return off < end ? end - off : 0;
}

/** The status for an input error: out of memory or I/O. */
static int in_status(const jager_reader *r) { return r->in_errno == ENOMEM ? JAGER_E_NOMEM : JAGER_E_IO; }

/** The error for an in_get that returned NULL inside a frame. */
static int in_fail(jager_reader *r, uint64_t off)
{
    if (r->in_errno == EFBIG) return fail(r, JAGER_E_FORMAT, "frame longer than %llu bytes", RD_FRAME_MAX_BYTES);
    if (r->in_errno == ENOMEM) return fail(r, JAGER_E_NOMEM, "out of memory reading the frame");
    if (r->in_errno) return fail(r, JAGER_E_IO, "read failed: %s", strerror(r->in_errno));
    r->truncated = 1;
    (void)off;
    return fail(r, JAGER_E_TRUNCATED, "file ends inside the frame (%llu of its bytes present)",
                (unsigned long long)(in_available(r, r->cur_pos)));
}

/* ---------------------------------------------------------------------------------- */
/* frames */

typedef struct rd_frame {
    uint64_t len;          /* compressed bytes, headers included */
    int skippable;
    uint64_t content_size; /* LZ4 frames */
    uint64_t block_max;    /* the frame's largest block */
    size_t header_len;
} rd_frame;

/** Find the extent of the frame at r->pos without decompressing it.
 *  \return 1 with \p f filled, 0 at the end of input exactly at r->pos, < 0 on error. */
static int frame_extent(jager_reader *r, rd_frame *f)
{
    uint64_t pos = r->pos;
    memset(f, 0, sizeof *f);
    const uint8_t *p = in_get(r, pos, 1);
    if (!p) return r->in_errno ? in_fail(r, pos) : 0;
    if (!(p = in_get(r, pos, 4))) return in_fail(r, pos);
    uint32_t magic = jg_rd32(p);
    if ((magic & JG_FILE_SKIPPABLE_MASK) == JG_FILE_SKIPPABLE_MAGIC) {
        if (!(p = in_get(r, pos, 8))) return in_fail(r, pos);
        uint32_t size = jg_rd32(p + 4);
        if (size > RD_SKIPPABLE_MAX) return fail(r, JAGER_E_FORMAT, "skippable frame of %u bytes is too large", size);
        f->skippable = 1;
        f->len = 8 + (uint64_t)size;
        if (!in_get(r, pos, (size_t)f->len)) return in_fail(r, pos);
        return 1;
    }
    if (magic != JG_FILE_LZ4_MAGIC) return fail(r, JAGER_E_FORMAT, "not an LZ4 frame (magic 0x%08x)", magic);
    if (!(p = in_get(r, pos, 7))) return in_fail(r, pos);
    uint8_t flg = p[4], bd = p[5];
    if ((flg >> 6) != 1) return fail(r, JAGER_E_FORMAT, "unsupported LZ4 frame version %u", flg >> 6);
    if (!(flg & 0x08)) return fail(r, JAGER_E_FORMAT, "LZ4 frame without a content size");
    if (!(flg & 0x04)) return fail(r, JAGER_E_FORMAT, "LZ4 frame without a content checksum");
    unsigned bsid = (bd >> 4) & 7;
    if (bsid < 4) return fail(r, JAGER_E_FORMAT, "invalid LZ4 block size id %u", bsid);
    uint64_t block_max = f->block_max = 1ull << (8 + 2 * bsid);
    f->header_len = 7 + 8 + ((flg & 0x01) ? 4 : 0);
    if (!(p = in_get(r, pos, f->header_len))) return in_fail(r, pos);
    f->content_size = jg_rd64(p + 6);
    uint64_t off = pos + f->header_len;
    for (;;) {
        if (!(p = in_get(r, off, 4))) return in_fail(r, pos);
        uint32_t bs = jg_rd32(p);
        off += 4;
        if (bs == 0) break;
        uint64_t sz = bs & 0x7FFFFFFFu;
        if (sz > block_max)
            return fail(r, JAGER_E_FORMAT, "LZ4 block of %llu bytes exceeds the frame's %llu-byte maximum",
                        (unsigned long long)sz, (unsigned long long)block_max);
        off += sz + ((flg & 0x10) ? 4 : 0);
        if (off - pos > RD_FRAME_MAX_BYTES)
            return fail(r, JAGER_E_FORMAT, "frame longer than %llu bytes", RD_FRAME_MAX_BYTES);
    }
    off += 4; /* content checksum */
    f->len = off - pos;
    if (!in_get(r, pos, (size_t)f->len)) return in_fail(r, pos);
    return 1;
}

/** Decompress the LZ4 frame \p f at r->pos into r->blk, verifying its checksums. */
static int frame_decompress(jager_reader *r, const rd_frame *f)
{
    if (f->content_size < JG_BLOCK_HEADER_BYTES)
        return fail(r, JAGER_E_FORMAT, "block of %llu bytes is shorter than its header",
                    (unsigned long long)f->content_size);
    /* LZ4 expands at most ~255:1, so a size beyond that is a lie: refuse it before
     * allocating for it. */
    if (f->content_size > JG_BLOCK_MAX_CONTENT || f->content_size > f->len * 256 + 1024)
        return fail(r, JAGER_E_FORMAT, "declared block size %llu is impossible here",
                    (unsigned long long)f->content_size);
    /* Room for one more block past the content lets liblz4 decode every block in
     * place instead of through its staging buffer. */
    size_t need = (size_t)(f->content_size + f->block_max);
    if (need > r->blk_cap) {
        size_t cap = r->blk_cap ? r->blk_cap : 64 * 1024;
        while (cap < need) cap *= 2;
        free(r->blk);
        r->blk_cap = 0;
        if (!(r->blk = malloc(cap))) return fail(r, JAGER_E_NOMEM, "out of memory for a %zu-byte block", cap);
        r->blk_cap = cap;
    }
    const uint8_t *src = in_get(r, r->pos, (size_t)f->len);
    if (!src) return in_fail(r, r->pos);
    LZ4F_resetDecompressionContext(r->dctx);
    LZ4F_decompressOptions_t opt;
    memset(&opt, 0, sizeof opt);
    opt.stableDst = 1;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    opt.skipChecksums = 1; /* fuzzing only: let mutated content reach the block parsers */
#endif
    size_t dst_len = r->blk_cap, src_len = (size_t)f->len;
    size_t ret = LZ4F_decompress(r->dctx, r->blk, &dst_len, src, &src_len, &opt);
    if (LZ4F_isError(ret)) {
        LZ4F_errorCodes code = LZ4F_getErrorCode(ret);
        LZ4F_resetDecompressionContext(r->dctx);
        if (code == LZ4F_ERROR_contentChecksum_invalid || code == LZ4F_ERROR_blockChecksum_invalid ||
            code == LZ4F_ERROR_headerChecksum_invalid)
            return fail(r, JAGER_E_CHECKSUM, "checksum mismatch (%s)", LZ4F_getErrorName(ret));
        return fail(r, JAGER_E_FORMAT, "LZ4 decoding failed (%s)", LZ4F_getErrorName(ret));
    }
    if (ret != 0 || src_len != f->len || dst_len != f->content_size) {
        LZ4F_resetDecompressionContext(r->dctx);
        return fail(r, JAGER_E_FORMAT, "frame does not decode to its declared %llu bytes",
                    (unsigned long long)f->content_size);
    }
    r->blk_len = dst_len;
    return 0;
}

/** The first \p want (≤ 32) content bytes of frame \p f, decoding only its first block. */
static int frame_peek(jager_reader *r, const rd_frame *f, uint8_t *out, size_t want)
{
    const uint8_t *p = in_get(r, r->pos, (size_t)f->len);
    if (!p || f->header_len + 4 > f->len) return -1;
    uint32_t bs = jg_rd32(p + f->header_len);
    uint32_t sz = bs & 0x7FFFFFFFu;
    if (!bs || f->header_len + 4 + (uint64_t)sz > f->len) return -1;
    const uint8_t *blk = p + f->header_len + 4;
    if (bs & 0x80000000u) {
        if (sz < want) return -1;
        memcpy(out, blk, want);
        return 0;
    }
    char tmp[64];
    int n = LZ4_decompress_safe_partial((const char *)blk, tmp, (int)sz, (int)want, (int)sizeof tmp);
    if (n < (int)want) return -1;
    memcpy(out, tmp, want);
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* block bodies */

typedef struct rd_cur {
    const uint8_t *p, *end;
    int bad;
} rd_cur;

static uint16_t cur16(rd_cur *c)
{
    if (c->bad || c->end - c->p < 2) { c->bad = 1; return 0; }
    uint16_t v = jg_rd16(c->p);
    c->p += 2;
    return v;
}
static uint32_t cur32(rd_cur *c)
{
    if (c->bad || c->end - c->p < 4) { c->bad = 1; return 0; }
    uint32_t v = jg_rd32(c->p);
    c->p += 4;
    return v;
}
static uint64_t cur64(rd_cur *c)
{
    if (c->bad || c->end - c->p < 8) { c->bad = 1; return 0; }
    uint64_t v = jg_rd64(c->p);
    c->p += 8;
    return v;
}
/** A string's bytes (not terminated); NULL (and bad) if it overruns. */
static const uint8_t *cur_str(rd_cur *c, uint32_t *len)
{
    uint32_t n = cur32(c);
    if (c->bad || (uint64_t)(c->end - c->p) < n) { c->bad = 1; *len = 0; return NULL; }
    const uint8_t *s = c->p;
    c->p += n;
    *len = n;
    return s;
}

/** The entry count of a table block, checked against the smallest entry size. */
static int table_count(jager_reader *r, rd_cur *c, uint32_t kind, size_t min_entry, uint32_t *n)
{
    *n = cur32(c);
    if (c->bad) return fail(r, JAGER_E_FORMAT, "%s block has no entry count", kind_name(kind));
    if ((uint64_t)*n * min_entry > (uint64_t)(c->end - c->p))
        return fail(r, JAGER_E_FORMAT, "%s block claims %u entries, more than its %zu bytes hold", kind_name(kind),
                    *n, (size_t)(c->end - c->p));
    return 0;
}

static int entry_bad(jager_reader *r, uint32_t kind, uint32_t i)
{
    return fail(r, JAGER_E_FORMAT, "%s block: entry %u runs past the end of the block", kind_name(kind), i);
}

static int oom(jager_reader *r) { return fail(r, JAGER_E_NOMEM, "out of memory for the tables"); }

static int absorb_meta(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_META, 8, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t kl, vl;
        const uint8_t *k = cur_str(c, &kl), *v = cur_str(c, &vl);
        if (c->bad) return entry_bad(r, JG_BLOCK_META, i);
        const char *ks = arena_str(r, k, kl), *vs = arena_str(r, v, vl);
        if (!ks || !vs) return oom(r);
        rd_meta *m = r->meta.data;
        size_t j = 0;
        while (j < r->meta.n && strcmp(m[j].key, ks) != 0) j++;
        if (j == r->meta.n) {
            if (vec_reserve(&r->meta, sizeof(rd_meta), j)) return oom(r);
            r->meta.n++;
            m = r->meta.data;
            m[j].key = ks;
        }
        m[j].value = vs;
        if (!strcmp(ks, "clock.ticks_per_ns")) r->ticks_per_ns = strtod(vs, NULL);
        else if (!strcmp(ks, "clock.start_ns")) r->start_ns = strtoull(vs, NULL, 10);
        else if (!strcmp(ks, "clock.start_unix_ns")) r->start_unix_ns = strtoull(vs, NULL, 10);
    }
    r->meta_seen = 1;
    return 0;
}

static int types_reserve(jager_reader *r, uint32_t id)
{
    if (id < r->ntypes) return 0;
    uint32_t n = r->ntypes ? r->ntypes : 512;
    while (n <= id) n *= 2;
    if (n > 65536) n = 65536;
    rd_type **t = realloc(r->types, n * sizeof *t);
    if (!t) return -1;
    r->types = t;
    rd_tfast *f = realloc(r->tfast, n * sizeof *f);
    if (!f) return -1;
    r->tfast = f;
    memset(r->types + r->ntypes, 0, (n - r->ntypes) * sizeof *t);
    memset(r->tfast + r->ntypes, 0, (n - r->ntypes) * sizeof *f);
    r->ntypes = n;
    return 0;
}

/* Smallest record of each core type (fixed part). */
static const uint16_t core_min_bytes[] = {
    [JAGER_EV_SPAN] = sizeof(jager_rec_span),       [JAGER_EV_LOG] = sizeof(jager_rec_log),
    [JAGER_EV_COUNTER] = sizeof(jager_rec_counter), [JAGER_EV_MARK] = sizeof(jager_rec_mark),
    [JAGER_EV_DROP] = sizeof(jager_rec_drop),       [JAGER_EV_DIAG] = sizeof(jager_rec_diag),
    [JAGER_EV_SPAN_ATTR] = sizeof(jager_rec_span_attr), [JAGER_EV_SPAN_ERROR] = sizeof(jager_rec_span_error),
};
static const char *const core_names[] = {
    [JAGER_EV_SPAN] = "span", [JAGER_EV_LOG] = "log",   [JAGER_EV_COUNTER] = "counter", [JAGER_EV_MARK] = "mark",
    [JAGER_EV_DROP] = "drop", [JAGER_EV_DIAG] = "diag", [JAGER_EV_SPAN_ATTR] = "span_attr",
    [JAGER_EV_SPAN_ERROR] = "span_error",
};
#define RD_CORE_LAST JAGER_EV_SPAN_ERROR

/** Describe the core types before any schema block, so files that omit them still read. */
static int types_init_core(jager_reader *r)
{
    if (types_reserve(r, 511)) return -1;
    for (uint16_t id = 1; id <= RD_CORE_LAST; id++) {
        rd_type *t = arena_alloc(r, sizeof *t);
        if (!t) return -1;
        memset(t, 0, sizeof *t);
        t->desc.struct_size = sizeof t->desc;
        t->desc.id = id;
        t->desc.builtin = 1;
        t->desc.name = core_names[id];
        r->types[id] = t;
        r->tfast[id].known = 1;
        r->tfast[id].dur_field = -1;
        r->tfast[id].min_bytes = core_min_bytes[id];
    }
    return 0;
}

static int same_type(const jager_type_desc *a, const char *name, uint32_t nf, const jager_field_desc *fields)
{
    if (strcmp(a->name, name) != 0 || a->nfields != nf) return 0;
    for (uint32_t i = 0; i < nf; i++)
        if (a->fields[i].kind != fields[i].kind || strcmp(a->fields[i].name, fields[i].name) != 0) return 0;
    return 1;
}

static int absorb_schema(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_SCHEMA, 12, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t id = cur16(c), builtin = cur16(c);
        uint32_t nf = cur32(c), nl;
        const uint8_t *name = cur_str(c, &nl);
        if (c->bad) return entry_bad(r, JG_BLOCK_SCHEMA, i);
        if (id == 0) return fail(r, JAGER_E_FORMAT, "SCHEMA block: type id 0 is reserved");
        if ((id < JAGER_EV_FIRST_PLUGIN) != (builtin != 0))
            return fail(r, JAGER_E_FORMAT, "SCHEMA block: type %u is %s but marked builtin=%u", id,
                        id < JAGER_EV_FIRST_PLUGIN ? "a core id" : "a plugin id", builtin);
        if (nf > JAGER_MAX_FIELDS)
            return fail(r, JAGER_E_FORMAT, "SCHEMA block: type %u has %u fields (at most %u)", id, nf, JAGER_MAX_FIELDS);
        jager_field_desc *fields = nf ? arena_alloc(r, nf * sizeof *fields) : NULL;
        const char *tname = arena_str(r, name, nl);
        if ((nf && !fields) || !tname) return oom(r);
        int dur = -1;
        for (uint32_t k = 0; k < nf; k++) {
            uint16_t kind = cur16(c);
            (void)cur16(c);
            uint32_t fl;
            const uint8_t *fname = cur_str(c, &fl);
            if (c->bad) return entry_bad(r, JG_BLOCK_SCHEMA, i);
            if (!(fields[k].name = arena_str(r, fname, fl))) return oom(r);
            fields[k].kind = kind;
            fields[k].reserved = 0;
            if (kind == JAGER_FIELD_DURATION_NS && dur < 0) dur = (int)k;
        }
        if (types_reserve(r, id)) return oom(r);
        rd_type *t = r->types[id];
        if (t && t->from_file) {
            if (!same_type(&t->desc, tname, nf, fields))
                return fail(r, JAGER_E_FORMAT, "SCHEMA block: type %u redefined differently", id);
            continue;
        }
        if (!t) {
            if (!(t = arena_alloc(r, sizeof *t))) return oom(r);
            memset(t, 0, sizeof *t);
            r->types[id] = t;
        }
        t->from_file = 1;
        t->desc.struct_size = sizeof t->desc;
        t->desc.id = id;
        t->desc.builtin = builtin ? 1 : 0;
        t->desc.name = tname;
        t->desc.nfields = nf;
        t->desc.fields = fields;
        rd_tfast *f = &r->tfast[id];
        if (id <= RD_CORE_LAST) continue; /* the layout is the reader's own */
        if (builtin) {
            f->known = 3; /* a core type of a newer format minor: passed through opaque */
            f->min_bytes = 8;
            f->dur_field = -1;
        } else {
            f->known = 2;
            f->min_bytes = (uint16_t)(16 + 8 * nf);
            f->dur_field = (int8_t)dur;
        }
    }
    return 0;
}

/** Dense tables: entries arrive in id order; a repeat of an id already read must match. */
static int dense_check(jager_reader *r, uint32_t kind, uint64_t id, size_t next)
{
    if (id == 0) return fail(r, JAGER_E_FORMAT, "%s block: id 0 is reserved", kind_name(kind));
    if (id > next)
        return fail(r, JAGER_E_FORMAT, "%s block: id %llu skips ahead (expected %zu)", kind_name(kind),
                    (unsigned long long)id, next);
    return 0;
}

static int absorb_strings(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_STRINGS, 8, &n)) return JAGER_E_FORMAT;
    if (!r->strings.n) r->strings.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = cur32(c), len;
        const uint8_t *s = cur_str(c, &len);
        if (c->bad) return entry_bad(r, JG_BLOCK_STRINGS, i);
        if (dense_check(r, JG_BLOCK_STRINGS, id, r->strings.n)) return JAGER_E_FORMAT;
        const char **tab = r->strings.data;
        if (id < r->strings.n) {
            if (strlen(tab[id]) != strnlen((const char *)s, len) || memcmp(tab[id], s, strlen(tab[id])) != 0)
                return fail(r, JAGER_E_FORMAT, "STRINGS block: string %u redefined differently", id);
            continue;
        }
        if (vec_reserve(&r->strings, sizeof(char *), id)) return oom(r);
        const char *t = arena_str(r, s, len);
        if (!t) return oom(r);
        ((const char **)r->strings.data)[id] = t;
        r->strings.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_sites(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_SITES, 16, &n)) return JAGER_E_FORMAT;
    if (!r->sites.n) r->sites.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        rd_site s;
        uint32_t id = cur32(c);
        s.name = cur32(c);
        s.file = cur32(c);
        s.line = cur32(c);
        if (c->bad) return entry_bad(r, JG_BLOCK_SITES, i);
        if (dense_check(r, JG_BLOCK_SITES, id, r->sites.n)) return JAGER_E_FORMAT;
        if (id < r->sites.n) {
            const rd_site *o = (const rd_site *)r->sites.data + id;
            if (o->name != s.name || o->file != s.file || o->line != s.line)
                return fail(r, JAGER_E_FORMAT, "SITES block: site %u redefined differently", id);
            continue;
        }
        if (vec_reserve(&r->sites, sizeof s, id)) return oom(r);
        ((rd_site *)r->sites.data)[id] = s;
        r->sites.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_threads(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_THREADS, 16, &n)) return JAGER_E_FORMAT;
    if (!r->threads.n) r->threads.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = cur32(c), len;
        uint64_t tid = cur64(c);
        const uint8_t *name = cur_str(c, &len);
        if (c->bad) return entry_bad(r, JG_BLOCK_THREADS, i);
        if (dense_check(r, JG_BLOCK_THREADS, id, r->threads.n)) return JAGER_E_FORMAT;
        if (id < r->threads.n) continue; /* a re-read; the first description stands */
        if (vec_reserve(&r->threads, sizeof(rd_thread), id)) return oom(r);
        rd_thread *t = (rd_thread *)r->threads.data + id;
        t->os_tid = tid;
        if (!(t->name = arena_str(r, name, len))) return oom(r);
        r->threads.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_counters(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_COUNTERS, 16, &n)) return JAGER_E_FORMAT;
    if (!r->counters.n) r->counters.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        rd_counter k;
        uint32_t id = cur32(c);
        k.name = cur32(c);
        k.unit = cur32(c);
        k.kind = cur32(c);
        if (c->bad) return entry_bad(r, JG_BLOCK_COUNTERS, i);
        if (dense_check(r, JG_BLOCK_COUNTERS, id, r->counters.n)) return JAGER_E_FORMAT;
        if (id < r->counters.n) continue;
        if (vec_reserve(&r->counters, sizeof k, id)) return oom(r);
        ((rd_counter *)r->counters.data)[id] = k;
        r->counters.n = (size_t)id + 1;
    }
    return 0;
}

static int absorb_stacks(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_STACKS, 12, &n)) return JAGER_E_FORMAT;
    if (!r->stacks.n) r->stacks.n = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = cur64(c);
        uint32_t depth = cur32(c);
        if (c->bad || (uint64_t)(c->end - c->p) < (uint64_t)depth * 8u) return entry_bad(r, JG_BLOCK_STACKS, i);
        const uint8_t *ips = c->p;
        c->p += (size_t)depth * 8u;
        if (dense_check(r, JG_BLOCK_STACKS, id, r->stacks.n)) return JAGER_E_FORMAT;
        if (id < r->stacks.n) continue;
        if (vec_reserve(&r->stacks, sizeof(rd_stack), (size_t)id)) return oom(r);
        rd_stack *s = (rd_stack *)r->stacks.data + id;
        uint64_t *copy = depth ? arena_alloc(r, (size_t)depth * 8u) : NULL;
        if (depth && !copy) return oom(r);
        if (depth) memcpy(copy, ips, (size_t)depth * 8u);
        s->ips = copy;
        s->n = depth;
        r->stacks.n = (size_t)id + 1;
    }
    return 0;
}

static size_t sym_slot(uint64_t ip, size_t cap)
{
    uint64_t h = ip * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static int sym_hash_grow(jager_reader *r)
{
    size_t cap = r->sym_hash_cap ? r->sym_hash_cap * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h) return -1;
    const rd_symbol *s = r->symbols.data;
    for (size_t i = 0; i < r->sym_hash_cap; i++) {
        uint32_t head = r->sym_hash[i];
        if (!head) continue;
        size_t j = sym_slot(s[head - 1].ip, cap);
        while (h[j]) j = (j + 1) & (cap - 1);
        h[j] = head;
    }
    free(r->sym_hash);
    r->sym_hash = h;
    r->sym_hash_cap = cap;
    return 0;
}

/** The slot holding \p ip's first frame, or the empty slot where it would go. */
static size_t sym_find(const jager_reader *r, uint64_t ip)
{
    const rd_symbol *s = r->symbols.data;
    size_t j = sym_slot(ip, r->sym_hash_cap);
    while (r->sym_hash[j] && s[r->sym_hash[j] - 1].ip != ip) j = (j + 1) & (r->sym_hash_cap - 1);
    return j;
}

static int absorb_symbols(jager_reader *r, rd_cur *c)
{
    uint32_t n;
    if (table_count(r, c, JG_BLOCK_SYMBOLS, 24, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        rd_symbol s;
        s.ip = cur64(c);
        s.inline_depth = cur32(c);
        s.line = cur32(c);
        s.func = cur32(c);
        s.file = cur32(c);
        s.next = 0;
        if (c->bad) return entry_bad(r, JG_BLOCK_SYMBOLS, i);
        if (r->symbols.n >= UINT32_MAX - 1) return oom(r);
        if ((r->symbols.n + 1) * 2 > r->sym_hash_cap && sym_hash_grow(r)) return oom(r);
        size_t slot = sym_find(r, s.ip);
        rd_symbol *tab = r->symbols.data;
        int dup = 0;
        uint32_t *link = &r->sym_hash[slot];
        while (*link) { /* the same (ip, depth) twice: the first one stands */
            if (tab[*link - 1].inline_depth == s.inline_depth) { dup = 1; break; }
            link = &tab[*link - 1].next;
        }
        if (dup) continue;
        if (vec_reserve(&r->symbols, sizeof s, r->symbols.n)) return oom(r);
        tab = r->symbols.data;
        link = &r->sym_hash[slot];
        while (*link) link = &tab[*link - 1].next;
        tab[r->symbols.n] = s;
        *link = (uint32_t)(r->symbols.n + 1);
        r->symbols.n++;
    }
    return 0;
}

static void stats_clear(rd_stats *s)
{
    s->have = s->have_core = 0;
    s->site_limit = 0;
    s->nsites = 0;
    s->nhb = 0;
}

static void stats_free(rd_stats *s)
{
    free(s->sites);
    free(s->hb_index);
    free(s->hb_count);
    memset(s, 0, sizeof *s);
}

static int absorb_stats(jager_reader *r, rd_cur *c)
{
    rd_stats *st = &r->staging;
    uint32_t flags = cur32(c), ncore = cur32(c);
    if (c->bad || (uint64_t)ncore * 8u > (uint64_t)(c->end - c->p))
        return fail(r, JAGER_E_FORMAT, "STATS block: header runs past the end of the block");
    if (flags & 1u) stats_clear(st);
    else if (!st->have) return fail(r, JAGER_E_FORMAT, "STATS block: a continuation part without a first part");
    st->have = 1;
    for (uint32_t i = 0; i < ncore; i++) {
        uint64_t v = cur64(c);
        if (i < JG_STATS_CORE_VALUES) st->core[i] = v;
    }
    if (ncore) st->have_core = 1;
    uint32_t limit = cur32(c), n;
    if (c->bad) return fail(r, JAGER_E_FORMAT, "STATS block: header runs past the end of the block");
    if (flags & 1u) st->site_limit = limit;
    if (table_count(r, c, JG_BLOCK_STATS, 12, &n)) return JAGER_E_FORMAT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t site = cur32(c), nv = cur32(c), nb = cur32(c);
        if (c->bad || (uint64_t)nv * 8u + (uint64_t)nb * 12u > (uint64_t)(c->end - c->p))
            return entry_bad(r, JG_BLOCK_STATS, i);
        if (site == 0 || site >= st->site_limit || (st->nsites && site <= st->sites[st->nsites - 1].site))
            return fail(r, JAGER_E_FORMAT, "STATS block: site %u out of order or out of range", site);
        if (st->nsites == st->sites_cap) {
            size_t cap = st->sites_cap ? st->sites_cap * 2 : 64;
            rd_site_stat *e = realloc(st->sites, cap * sizeof *e);
            if (!e) return oom(r);
            st->sites = e;
            st->sites_cap = cap;
        }
        rd_site_stat *e = &st->sites[st->nsites];
        memset(e, 0, sizeof *e);
        e->site = site;
        for (uint32_t k = 0; k < nv; k++) {
            uint64_t v = cur64(c);
            if (k < JG_STATS_SITE_VALUES) e->v[k] = v;
        }
        if (st->nhb + nb > st->hb_cap) {
            size_t cap = st->hb_cap ? st->hb_cap : 256;
            while (cap < st->nhb + nb) cap *= 2;
            uint32_t *bi = realloc(st->hb_index, cap * sizeof *bi);
            if (!bi) return oom(r);
            st->hb_index = bi;
            uint64_t *bc = realloc(st->hb_count, cap * sizeof *bc);
            if (!bc) return oom(r);
            st->hb_count = bc;
            st->hb_cap = cap;
        }
        e->hist_at = st->nhb;
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t b = cur32(c);
            uint64_t cnt = cur64(c);
            if (b >= JAGER_HIST_BUCKETS)
                return fail(r, JAGER_E_FORMAT, "STATS block: site %u has histogram bucket %u (at most %u)", site, b,
                            JAGER_HIST_BUCKETS - 1);
            st->hb_index[st->nhb] = b;
            st->hb_count[st->nhb] = cnt;
            st->nhb++;
        }
        e->nbuckets = nb;
        st->nsites++;
    }
    if (flags & 2u) { /* last part: this set becomes the current one */
        rd_stats tmp = r->stats;
        r->stats = *st;
        *st = tmp;
        stats_clear(st);
    }
    return 0;
}

static int absorb_end(jager_reader *r, rd_cur *c)
{
    uint64_t end_ns = cur64(c), events = cur64(c), frames = cur64(c);
    if (c->bad) return fail(r, JAGER_E_FORMAT, "END block is too short");
    if (events != r->pass_events || frames != r->cur_frame)
        return fail(r, JAGER_E_FORMAT,
                    "END block counts %llu events in %llu frames, but the file holds %llu events in %llu frames "
                    "(frames are missing)",
                    (unsigned long long)events, (unsigned long long)frames, (unsigned long long)r->pass_events,
                    (unsigned long long)r->cur_frame);
    r->end_ns = end_ns;
    r->clean_end = 1;
    r->after_end = 1;
    return 0;
}

/** Absorb a table block into the reader's tables. */
static int absorb_block(jager_reader *r, uint32_t kind)
{
    rd_cur c = {r->blk + JG_BLOCK_HEADER_BYTES, r->blk + r->blk_len, 0};
    switch (kind) {
    case JG_BLOCK_META: return absorb_meta(r, &c);
    case JG_BLOCK_SCHEMA: return absorb_schema(r, &c);
    case JG_BLOCK_STRINGS: return absorb_strings(r, &c);
    case JG_BLOCK_SITES: return absorb_sites(r, &c);
    case JG_BLOCK_THREADS: return absorb_threads(r, &c);
    case JG_BLOCK_COUNTERS: return absorb_counters(r, &c);
    case JG_BLOCK_STACKS: return absorb_stacks(r, &c);
    case JG_BLOCK_SYMBOLS: return absorb_symbols(r, &c);
    case JG_BLOCK_STATS: return absorb_stats(r, &c);
    default: return 0; /* a block kind of a newer minor: skipped */
    }
}

/* ---------------------------------------------------------------------------------- */
/* events blocks */

static inline uint64_t pad8(uint64_t n) { return (n + 7) & ~7ull; }

/** Check every record of the EVENTS block in r->blk before any is handed out. */
static int events_check(jager_reader *r, uint64_t *nevents_out)
{
    if (r->blk_len < JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES)
        return fail(r, JAGER_E_FORMAT, "EVENTS block of %zu bytes is shorter than its header", r->blk_len);
    const uint8_t *b = r->blk + JG_BLOCK_HEADER_BYTES;
    uint32_t thread = jg_rd32(b);
    uint64_t nevents = jg_rd64(b + 8);
    const uint8_t *p = b + JG_EVENTS_HEADER_BYTES, *end = r->blk + r->blk_len;
    uint64_t count = 0;
    while (p < end) {
        size_t left = (size_t)(end - p);
        if (left < sizeof(jager_record))
            return fail(r, JAGER_E_FORMAT, "EVENTS block: %zu stray bytes after record %llu", left,
                        (unsigned long long)count);
        const jager_record *h = (const jager_record *)p;
        size_t size = (size_t)h->words * 8u;
        if (!size || size > left)
            return fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu (at content byte %zu) has %u words, %zu bytes left",
                        (unsigned long long)count, (size_t)(p - r->blk), h->words, left);
        uint16_t type = h->type;
        const rd_tfast *tf = type < r->ntypes ? &r->tfast[type] : NULL;
        if (!tf || !tf->known)
            return fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu has type %u, which the schema does not define",
                        (unsigned long long)count, type);
        if (size < tf->min_bytes)
            return fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu of type %u has %zu bytes (at least %u)",
                        (unsigned long long)count, type, size, tf->min_bytes);
        uint64_t var = 0, fixed = 0;
        switch (type) {
        case JAGER_EV_LOG:
            var = ((const jager_rec_log *)h)->body_len;
            fixed = sizeof(jager_rec_log);
            break;
        case JAGER_EV_DIAG:
            var = ((const jager_rec_diag *)h)->text_len;
            fixed = sizeof(jager_rec_diag);
            break;
        case JAGER_EV_SPAN_ERROR:
            var = ((const jager_rec_span_error *)h)->msg_len;
            fixed = sizeof(jager_rec_span_error);
            break;
        default: break;
        }
        if (fixed && pad8(var) > size - fixed)
            return fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu of type %u: %llu text bytes overrun its %zu bytes",
                        (unsigned long long)count, type, (unsigned long long)var, size);
        p += size;
        count++;
    }
    if (count != nevents)
        return fail(r, JAGER_E_FORMAT, "EVENTS block declares %llu events but holds %llu", (unsigned long long)nevents,
                    (unsigned long long)count);
    r->ev = b + JG_EVENTS_HEADER_BYTES;
    r->ev_end = end;
    r->ev_thread = thread;
    *nevents_out = nevents;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* the frame loop */

static int is_table_kind(uint32_t kind) { return kind != JG_BLOCK_EVENTS && kind != JG_BLOCK_END; }

/**
 * Process frames until an EVENTS block with events is ready (1), the clean end (0), or
 * an error (< 0, also kept as the terminal state).
 */
static int advance(jager_reader *r)
{
    if (r->state) return r->state > 0 ? 0 : r->state;
    for (;;) {
        r->cur_frame = r->frame_no;
        r->cur_pos = r->pos;
        r->frame_base = r->pos;
        if (r->after_end) {
            if (in_get(r, r->pos, 1) || r->in_errno)
                return r->state = r->in_errno ? in_fail(r, r->pos) : fail(r, JAGER_E_FORMAT, "data after the END block");
            r->state = 1;
            return 0;
        }
        rd_frame f;
        int rc = frame_extent(r, &f);
        if (rc == 0) {
            r->truncated = 1;
            r->state = fail(r, JAGER_E_TRUNCATED, "file ends after %llu whole frames without an END block "
                            "(the recording was not closed)", (unsigned long long)r->frame_no);
            return r->state;
        }
        if (rc < 0) return r->state = rc;
        uint64_t frame_end = r->pos + f.len;
        int have_events = 0;
        if (!f.skippable) {
            uint8_t head[JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES];
            if (r->tables_only && frame_peek(r, &f, head, sizeof head) == 0 && jg_rd32(head) == JG_BLOCK_EVENTS) {
                /* load_tables: an events frame is skipped unread (next() checks it) */
                r->pass_events += jg_rd64(head + 16);
            } else {
                if ((rc = frame_decompress(r, &f)) < 0) return r->state = rc;
                uint32_t kind = jg_rd32(r->blk);
                if (kind == JG_BLOCK_EVENTS) {
                    uint64_t n = 0;
                    if ((rc = events_check(r, &n)) < 0) return r->state = rc;
                    r->pass_events += n;
                    have_events = n > 0 && !r->tables_only;
                } else if (kind == JG_BLOCK_END) {
                    if ((rc = absorb_end(r, &(rd_cur){r->blk + 8, r->blk + r->blk_len, 0})) < 0) return r->state = rc;
                } else if (is_table_kind(kind) && frame_end > r->tables_until) {
                    if ((rc = absorb_block(r, kind)) < 0) return r->state = rc;
                    r->tables_until = frame_end;
                }
            }
        }
        r->pos = frame_end;
        r->frame_no++;
        r->frames = r->frame_no;
        r->consumed = frame_end;
        if (have_events) return 1;
    }
}

/* ---------------------------------------------------------------------------------- */
/* public API: open and close */

static void rewind_state(jager_reader *r)
{
    r->pos = r->first_pos;
    r->frame_no = 1;
    r->frames = 1;
    r->events = 0;
    r->pass_events = 0;
    r->consumed = r->first_pos;
    r->after_end = 0;
    r->state = 0;
    r->err[0] = '\0';
    r->ev = r->ev_end = NULL;
}

/** Read the preamble; \return JAGER_OK or an error with r->err set. */
static jager_status read_preamble(jager_reader *r)
{
    r->cur_frame = 0;
    r->cur_pos = 0;
    r->frame_base = 0;
    const uint8_t *p = in_get(r, 0, 8);
    if (!p) {
        if (r->in_errno) return fail(r, in_status(r), "read failed: %s", strerror(r->in_errno));
        return fail(r, JAGER_E_FORMAT, "not a .jgr recording (%llu bytes, shorter than the preamble)",
                    (unsigned long long)in_available(r, 0));
    }
    if (jg_rd32(p) != JG_FILE_SKIPPABLE_MAGIC)
        return fail(r, JAGER_E_FORMAT, "not a .jgr recording (starts with 0x%08x, not the preamble frame)", jg_rd32(p));
    uint32_t size = jg_rd32(p + 4);
    if (size < JG_FILE_PREAMBLE_DATA || size > JG_FILE_PREAMBLE_MAX_DATA)
        return fail(r, JAGER_E_FORMAT, "not a .jgr recording (preamble of %u bytes)", size);
    if (!(p = in_get(r, 0, 8 + (size_t)size))) {
        if (r->in_errno) return fail(r, in_status(r), "read failed: %s", strerror(r->in_errno));
        return fail(r, JAGER_E_FORMAT, "not a .jgr recording (file ends inside the preamble)");
    }
    if (memcmp(p + 8, JG_FILE_MAGIC, JG_FILE_MAGIC_LEN) != 0)
        return fail(r, JAGER_E_FORMAT, "not a .jgr recording (no JAGERJGR magic)");
    r->fmt_major = jg_rd16(p + 16);
    r->fmt_minor = jg_rd16(p + 18);
    uint32_t flags = jg_rd32(p + 20);
    if (r->fmt_major != JAGER_FORMAT_MAJOR)
        return fail(r, JAGER_E_FORMAT, "format version %u.%u; this library reads %u.x", r->fmt_major, r->fmt_minor,
                    JAGER_FORMAT_MAJOR);
    if (flags & JG_FILE_FLAGS_INCOMPAT_MASK)
        return fail(r, JAGER_E_FORMAT, "preamble flags 0x%08x need a newer reader", flags);
    r->first_pos = 8 + (uint64_t)size;
    rewind_state(r);
    return JAGER_OK;
}

static jager_status reader_start(jager_reader *r, jager_reader **out)
{
    jager_status st = JAGER_E_NOMEM;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&r->dctx, LZ4F_VERSION))) {
        r->dctx = NULL;
        goto fail_nomem;
    }
    if (types_init_core(r)) goto fail_nomem;
    if ((st = read_preamble(r)) != JAGER_OK) {
        jg_error(st, "%s", r->err);
        goto fail_close;
    }
    /* Absorb the leading table blocks (metadata, schema, …); the first events block
     * stays loaded for next(). An error here becomes next()'s answer. */
    (void)advance(r);
    *out = r;
    return JAGER_OK;

fail_nomem:
    jg_error(JAGER_E_NOMEM, "out of memory opening a recording");
fail_close:
    jager_reader_close(r);
    return st;
}

jager_status jager_reader_open(const char *path, jager_reader **out)
{
    if (!out) return jg_error(JAGER_E_INVALID, "jager_reader_open: out is NULL");
    *out = NULL;
    if (!path) return jg_error(JAGER_E_INVALID, "jager_reader_open: path is NULL");
    jager_reader *r = calloc(1, sizeof *r);
    if (!r) return jg_error(JAGER_E_NOMEM, "out of memory opening a recording");
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        int e = errno;
        free(r);
        return jg_error(JAGER_E_IO, "cannot open '%s': %s", path, strerror(e));
    }
    struct stat sb;
    if (fstat(r->fd, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            close(r->fd);
            free(r);
            return jg_error(JAGER_E_IO, "cannot read '%s': it is a directory", path);
        }
        r->file_bytes = (uint64_t)sb.st_size;
    }
    r->seekable = lseek(r->fd, 0, SEEK_CUR) >= 0;
    return reader_start(r, out);
}

jager_status jager_reader_open_memory(const void *data, size_t size, jager_reader **out)
{
    if (!out) return jg_error(JAGER_E_INVALID, "jager_reader_open_memory: out is NULL");
    *out = NULL;
    if (!data && size) return jg_error(JAGER_E_INVALID, "jager_reader_open_memory: data is NULL");
    static const uint8_t empty[1];
    jager_reader *r = calloc(1, sizeof *r);
    if (!r) return jg_error(JAGER_E_NOMEM, "out of memory opening a recording");
    r->fd = -1;
    r->mem = data ? data : empty;
    r->mem_size = size;
    r->file_bytes = size;
    return reader_start(r, out);
}

void jager_reader_close(jager_reader *r)
{
    if (!r) return;
    if (r->fd >= 0 && !r->mem) close(r->fd);
    if (r->dctx) LZ4F_freeDecompressionContext(r->dctx);
    free(r->win);
    free(r->blk);
    while (r->arena) {
        rd_chunk *n = r->arena->next;
        free(r->arena);
        r->arena = n;
    }
    free(r->meta.data);
    free(r->strings.data);
    free(r->sites.data);
    free(r->threads.data);
    free(r->counters.data);
    free(r->stacks.data);
    free(r->symbols.data);
    free(r->sym_hash);
    free(r->types);
    free(r->tfast);
    stats_free(&r->stats);
    stats_free(&r->staging);
    free(r);
}

const char *jager_reader_error(const jager_reader *r) { return r ? r->err : ""; }

/* ---------------------------------------------------------------------------------- */
/* public API: iteration */

int jager_reader_next(jager_reader *r, jager_event *ev)
{
    if (!r || !ev) return JAGER_E_INVALID;
    if (r->ev == r->ev_end) {
        r->ev = r->ev_end = NULL;
        int rc = advance(r);
        if (rc <= 0) return rc;
    }
    const jager_record *h = (const jager_record *)r->ev;
    const uint64_t *w = (const uint64_t *)r->ev; /* records are 8-byte aligned in r->blk */
    r->ev += (size_t)h->words * 8u;
    ev->rec = h;
    ev->thread = r->ev_thread;
    ev->type = h->type;
    ev->reserved = 0;
    switch (h->type) {
    case JAGER_EV_SPAN:
        ev->time_ns = w[1];
        ev->end_ns = w[2];
        break;
    case JAGER_EV_LOG: case JAGER_EV_COUNTER: case JAGER_EV_MARK:
    case JAGER_EV_DROP: case JAGER_EV_DIAG: case JAGER_EV_SPAN_ERROR:
        ev->time_ns = ev->end_ns = w[1];
        break;
    default: {
        const rd_tfast *tf = &r->tfast[h->type]; /* checked by events_check */
        if (tf->known == 2) {
            ev->time_ns = w[1];
            ev->end_ns = w[1] + (tf->dur_field >= 0 ? w[2 + tf->dur_field] : 0);
        } else {
            ev->time_ns = ev->end_ns = 0;
        }
    }
    }
    r->events++;
    return 1;
}

jager_status jager_reader_rewind(jager_reader *r)
{
    if (!r) return JAGER_E_INVALID;
    rewind_state(r);
    return JAGER_OK;
}

jager_status jager_reader_load_tables(jager_reader *r)
{
    if (!r) return JAGER_E_INVALID;
    rewind_state(r);
    r->tables_only = 1;
    int rc;
    while ((rc = advance(r)) > 0) {
    }
    r->tables_only = 0;
    char err[sizeof r->err];
    memcpy(err, r->err, sizeof err);
    rewind_state(r);
    if (rc < 0) memcpy(r->err, err, sizeof err); /* next() will meet it again */
    return rc < 0 ? rc : JAGER_OK;
}

/* ---------------------------------------------------------------------------------- */
/* public API: tables */

jager_status jager_reader_get_info(const jager_reader *r, jager_reader_info *out)
{
    if (!r || !out || out->struct_size < 8) return JAGER_E_INVALID;
    jager_reader_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = out->struct_size;
    i.format_major = r->fmt_major;
    i.format_minor = r->fmt_minor;
    i.file_bytes = r->mem ? r->mem_size : r->file_bytes;
    i.frames = r->frames;
    i.events = r->events;
    i.bytes_consumed = r->consumed;
    i.clean_end = (uint32_t)r->clean_end;
    i.truncated = (uint32_t)r->truncated;
    i.ticks_per_ns = r->ticks_per_ns;
    i.start_ns = r->start_ns;
    i.start_unix_ns = r->start_unix_ns;
    i.end_ns = r->end_ns;
    size_t n = out->struct_size < sizeof i ? out->struct_size : sizeof i;
    memcpy(out, &i, n);
    return JAGER_OK;
}

const char *jager_reader_meta(const jager_reader *r, const char *key)
{
    if (!r || !key) return NULL;
    const rd_meta *m = r->meta.data;
    for (size_t i = 0; i < r->meta.n; i++)
        if (!strcmp(m[i].key, key)) return m[i].value;
    return NULL;
}

size_t jager_reader_meta_count(const jager_reader *r) { return r ? r->meta.n : 0; }

jager_status jager_reader_meta_at(const jager_reader *r, size_t i, const char **key, const char **value)
{
    if (!r) return JAGER_E_INVALID;
    if (i >= r->meta.n) return JAGER_E_NOTFOUND;
    const rd_meta *m = (const rd_meta *)r->meta.data + i;
    if (key) *key = m->key;
    if (value) *value = m->value;
    return JAGER_OK;
}

const char *jager_reader_string(const jager_reader *r, uint32_t id)
{
    if (!r || id == 0 || id >= r->strings.n) return NULL;
    return ((const char *const *)r->strings.data)[id];
}

uint32_t jager_reader_site_count(const jager_reader *r) { return r && r->sites.n ? (uint32_t)r->sites.n - 1 : 0; }

jager_status jager_reader_site(const jager_reader *r, jager_site site, const char **name, const char **file,
                               uint32_t *line)
{
    if (!r) return JAGER_E_INVALID;
    if (site == 0 || site >= r->sites.n) return JAGER_E_NOTFOUND;
    const rd_site *s = (const rd_site *)r->sites.data + site;
    if (name) *name = jager_reader_string(r, s->name);
    if (file) *file = s->file ? jager_reader_string(r, s->file) : NULL;
    if (line) *line = s->line;
    return JAGER_OK;
}

const jager_type_desc *jager_reader_type(const jager_reader *r, uint16_t type)
{
    if (!r || type >= r->ntypes || !r->types[type]) return NULL;
    return &r->types[type]->desc;
}

uint16_t jager_reader_type_by_name(const jager_reader *r, const char *name)
{
    if (!r || !name) return 0;
    for (uint32_t id = 1; id < r->ntypes; id++)
        if (r->types[id] && !strcmp(r->types[id]->desc.name, name)) return (uint16_t)id;
    return 0;
}

uint32_t jager_reader_thread_count(const jager_reader *r) { return r && r->threads.n ? (uint32_t)r->threads.n - 1 : 0; }

jager_status jager_reader_thread(const jager_reader *r, uint32_t thread, uint64_t *os_tid, const char **name)
{
    if (!r) return JAGER_E_INVALID;
    if (thread == 0 || thread >= r->threads.n) return JAGER_E_NOTFOUND;
    const rd_thread *t = (const rd_thread *)r->threads.data + thread;
    if (os_tid) *os_tid = t->os_tid;
    if (name) *name = t->name;
    return JAGER_OK;
}

uint32_t jager_reader_counter_count(const jager_reader *r)
{
    return r && r->counters.n ? (uint32_t)r->counters.n - 1 : 0;
}

jager_status jager_reader_counter(const jager_reader *r, jager_counter counter, const char **name, const char **unit,
                                  uint32_t *kind)
{
    if (!r) return JAGER_E_INVALID;
    if (counter == 0 || counter >= r->counters.n) return JAGER_E_NOTFOUND;
    const rd_counter *c = (const rd_counter *)r->counters.data + counter;
    if (name) *name = jager_reader_string(r, c->name);
    if (unit) *unit = c->unit ? jager_reader_string(r, c->unit) : NULL;
    if (kind) *kind = c->kind;
    return JAGER_OK;
}

jager_status jager_reader_stack(const jager_reader *r, jager_stack_id id, const uint64_t **ips, uint32_t *n)
{
    if (!r) return JAGER_E_INVALID;
    if (id == 0 || id >= r->stacks.n) return JAGER_E_NOTFOUND;
    const rd_stack *s = (const rd_stack *)r->stacks.data + id;
    if (ips) *ips = s->ips;
    if (n) *n = s->n;
    return JAGER_OK;
}

uint32_t jager_reader_symbolize(const jager_reader *r, uint64_t ip, jager_frame *out, uint32_t cap)
{
    if (!r || !out || !cap || !r->sym_hash_cap) return 0;
    size_t slot = sym_find(r, ip);
    const rd_symbol *tab = r->symbols.data;
    uint32_t k = 0;
    for (uint32_t at = r->sym_hash[slot]; at; at = tab[at - 1].next) {
        const rd_symbol *s = &tab[at - 1];
        /* keep the cap shallowest frames, sorted by inline depth */
        if (k == cap && s->inline_depth >= out[k - 1].inline_depth) continue;
        uint32_t j = k < cap ? k++ : k - 1;
        while (j > 0 && out[j - 1].inline_depth > s->inline_depth) {
            out[j] = out[j - 1];
            j--;
        }
        const char *func = jager_reader_string(r, s->func), *file = jager_reader_string(r, s->file);
        out[j].func = func ? func : "??";
        out[j].file = file ? file : "";
        out[j].line = s->line;
        out[j].inline_depth = s->inline_depth;
    }
    return k;
}

jager_status jager_reader_site_stats(const jager_reader *r, jager_site site, jager_site_stat *out)
{
    if (!r || !out || out->struct_size < sizeof(jager_site_stat)) return JAGER_E_INVALID;
    const rd_stats *st = &r->stats;
    if (!st->have || site == 0 || site >= st->site_limit) return JAGER_E_NOTFOUND;
    uint32_t size = out->struct_size;
    memset(out, 0, size);
    out->struct_size = size;
    out->site = site;
    size_t lo = 0, hi = st->nsites;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->sites[mid].site < site) lo = mid + 1;
        else hi = mid;
    }
    if (lo == st->nsites || st->sites[lo].site != site) return JAGER_OK; /* covered, no activity */
    const rd_site_stat *e = &st->sites[lo];
    out->calls = e->v[0];
    out->total_ns = e->v[1];
    out->min_ns = e->v[2];
    out->max_ns = e->v[3];
    out->bytes = e->v[4];
    out->errors = e->v[5];
    out->p50_ns = e->v[6];
    out->p90_ns = e->v[7];
    out->p99_ns = e->v[8];
    for (uint32_t k = 0; k < e->nbuckets; k++) out->hist[st->hb_index[e->hist_at + k]] = st->hb_count[e->hist_at + k];
    return JAGER_OK;
}

jager_status jager_reader_stats(const jager_reader *r, jager_stat *out)
{
    if (!r || !out || out->struct_size < sizeof(jager_stat)) return JAGER_E_INVALID;
    const rd_stats *st = &r->stats;
    if (!st->have || !st->have_core) return JAGER_E_NOTFOUND;
    uint32_t size = out->struct_size;
    memset(out, 0, size);
    out->struct_size = size;
    const uint64_t *v = st->core;
    out->threads = (uint32_t)v[0];
    out->events_emitted = v[1];
    out->events_recorded = v[2];
    out->events_dropped = v[3];
    for (int i = 0; i < JAGER_DROP_REASONS; i++) out->dropped[i] = v[4 + i];
    out->events_written = v[12];
    out->spans_total = v[13];
    out->span_cost_ns_x1000 = v[14];
    out->ring_bytes = v[15];
    return JAGER_OK;
}

/* ---------------------------------------------------------------------------------- */
/* attribute lists and log bodies (any-thread: no reader state) */

int jager_attr_next(const uint8_t **cursor, const uint8_t *end, jager_attr_view *out)
{
    if (!cursor || !*cursor || !end || !out) return JAGER_E_INVALID;
    const uint8_t *p = *cursor;
    if (p == end) return 0;
    if (p > end || (size_t)(end - p) < 8) return JAGER_E_FORMAT;
    uint16_t key_len = jg_rd16(p), kind = jg_rd16(p + 2);
    uint32_t value_len = jg_rd32(p + 4);
    uint64_t total = 8 + pad8((uint64_t)key_len + value_len);
    if (total > (uint64_t)(end - p)) return JAGER_E_FORMAT;
    if (kind < JAGER_ATTR_I64 || kind > JAGER_ATTR_BOOL) return JAGER_E_FORMAT;
    if (kind != JAGER_ATTR_STR && value_len != 8) return JAGER_E_FORMAT;
    memset(out, 0, sizeof *out);
    out->key = (const char *)p + 8;
    out->key_len = key_len;
    out->kind = kind;
    const uint8_t *v = p + 8 + key_len;
    switch (kind) {
    case JAGER_ATTR_I64:
    case JAGER_ATTR_BOOL: out->i64 = (int64_t)jg_rd64(v); break;
    case JAGER_ATTR_F64: memcpy(&out->f64, v, 8); break;
    default:
        out->str = (const char *)v;
        out->str_len = value_len;
    }
    *cursor = p + total;
    return 1;
}

jager_status jager_log_body(const jager_rec_log *rec, const char **body, uint32_t *body_len, const uint8_t **attrs,
                            const uint8_t **attrs_end)
{
    if (!rec) return JAGER_E_INVALID;
    uint64_t size = (uint64_t)rec->h.words * 8u;
    if (rec->h.type != JAGER_EV_LOG || size < sizeof *rec || pad8(rec->body_len) > size - sizeof *rec)
        return JAGER_E_FORMAT;
    const uint8_t *base = (const uint8_t *)rec;
    if (body) *body = (const char *)(base + sizeof *rec);
    if (body_len) *body_len = rec->body_len;
    if (attrs) *attrs = base + sizeof *rec + pad8(rec->body_len);
    if (attrs_end) *attrs_end = base + size;
    return JAGER_OK;
}
