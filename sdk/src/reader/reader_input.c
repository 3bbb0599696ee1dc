/*
 * reader_input.c — the `.jgr` reader's input (a file through a window, or the caller's memory),
 * its frames (extent, LZ4 decompression with checksums) and its error reporting; see reader.c.
 */
#include <errno.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader_priv.h"

/* ---------------------------------------------------------------------------------- */
/* small helpers */

void *jg_rd_arena_alloc(jager_reader *r, size_t size)
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

const char *jg_rd_arena_str(jager_reader *r, const uint8_t *s, size_t n)
{
    char *p = jg_rd_arena_alloc(r, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/** Record a terminal error about the current frame and return \p status. */
int jg_rd_fail(jager_reader *r, int status, const char *fmt, ...)
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

const char *jg_rd_kind_name(uint32_t kind)
{
    static const char *names[] = {"?", "META", "SCHEMA", "STRINGS", "SITES", "THREADS", "COUNTERS",
                                  "EVENTS", "STACKS", "SYMBOLS", "STATS", "END", "PATHS"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

/* ---------------------------------------------------------------------------------- */
/* input */

/** \p n bytes at offset \p off, or NULL when the input ends first (in_errno 0) or
 *  cannot be read (in_errno set). In file mode the pointer is valid until the next call
 *  and the window keeps everything from frame_base (≤ off) on. */
const uint8_t *jg_rd_in_get(jager_reader *r, uint64_t off, size_t n)
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
        size_t cap = r->win_cap;
        uint8_t *w = jg_grow(r->win, &cap, (size_t)(end - r->win_off), 1, RD_WINDOW_MIN);
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
uint64_t jg_rd_in_available(jager_reader *r, uint64_t off)
{
    if (r->mem) return off < r->mem_size ? r->mem_size - off : 0;
    uint64_t end = r->win_off + r->win_len;
    return off < end ? end - off : 0;
}

/** The status for an input error: out of memory or I/O. */
int jg_rd_in_status(const jager_reader *r) { return r->in_errno == ENOMEM ? JAGER_E_NOMEM : JAGER_E_IO; }

/** The error for an in_get that returned NULL inside a frame. */
int jg_rd_in_fail(jager_reader *r, uint64_t off)
{
    if (r->in_errno == EFBIG) return jg_rd_fail(r, JAGER_E_FORMAT, "frame longer than %llu bytes", RD_FRAME_MAX_BYTES);
    if (r->in_errno == ENOMEM) return jg_rd_fail(r, JAGER_E_NOMEM, "out of memory reading the frame");
    if (r->in_errno) return jg_rd_fail(r, JAGER_E_IO, "read failed: %s", strerror(r->in_errno));
    r->truncated = 1;
    (void)off;
    return jg_rd_fail(r, JAGER_E_TRUNCATED, "file ends inside the frame (%llu of its bytes present)",
                (unsigned long long)(jg_rd_in_available(r, r->cur_pos)));
}

/* ---------------------------------------------------------------------------------- */
/* frames */

/** Find the extent of the frame at r->pos without decompressing it.
 *  \return 1 with \p f filled, 0 at the end of input exactly at r->pos, < 0 on error. */
int jg_rd_frame_extent(jager_reader *r, rd_frame *f)
{
    uint64_t pos = r->pos;
    memset(f, 0, sizeof *f);
    const uint8_t *p = jg_rd_in_get(r, pos, 1);
    if (!p) return r->in_errno ? jg_rd_in_fail(r, pos) : 0;
    if (!(p = jg_rd_in_get(r, pos, 4))) return jg_rd_in_fail(r, pos);
    uint32_t magic = jg_rd32(p);
    if ((magic & JG_FILE_SKIPPABLE_MASK) == JG_FILE_SKIPPABLE_MAGIC) {
        if (!(p = jg_rd_in_get(r, pos, 8))) return jg_rd_in_fail(r, pos);
        uint32_t size = jg_rd32(p + 4);
        if (size > RD_SKIPPABLE_MAX) return jg_rd_fail(r, JAGER_E_FORMAT, "skippable frame of %u bytes is too large", size);
        f->skippable = 1;
        f->len = 8 + (uint64_t)size;
        if (!jg_rd_in_get(r, pos, (size_t)f->len)) return jg_rd_in_fail(r, pos);
        return 1;
    }
    if (magic != JG_FILE_LZ4_MAGIC) return jg_rd_fail(r, JAGER_E_FORMAT, "not an LZ4 frame (magic 0x%08x)", magic);
    if (!(p = jg_rd_in_get(r, pos, 7))) return jg_rd_in_fail(r, pos);
    uint8_t flg = p[4], bd = p[5];
    if ((flg >> 6) != 1) return jg_rd_fail(r, JAGER_E_FORMAT, "unsupported LZ4 frame version %u", flg >> 6);
    if (!(flg & 0x08)) return jg_rd_fail(r, JAGER_E_FORMAT, "LZ4 frame without a content size");
    if (!(flg & 0x04)) return jg_rd_fail(r, JAGER_E_FORMAT, "LZ4 frame without a content checksum");
    unsigned bsid = (bd >> 4) & 7;
    if (bsid < 4) return jg_rd_fail(r, JAGER_E_FORMAT, "invalid LZ4 block size id %u", bsid);
    uint64_t block_max = f->block_max = 1ull << (8 + 2 * bsid);
    f->header_len = 7 + 8 + ((flg & 0x01) ? 4 : 0);
    if (!(p = jg_rd_in_get(r, pos, f->header_len))) return jg_rd_in_fail(r, pos);
    f->content_size = jg_rd64(p + 6);
    uint64_t off = pos + f->header_len;
    for (;;) {
        if (!(p = jg_rd_in_get(r, off, 4))) return jg_rd_in_fail(r, pos);
        uint32_t bs = jg_rd32(p);
        off += 4;
        if (bs == 0) break;
        uint64_t sz = bs & 0x7FFFFFFFu;
        if (sz > block_max)
            return jg_rd_fail(r, JAGER_E_FORMAT, "LZ4 block of %llu bytes exceeds the frame's %llu-byte maximum",
                        (unsigned long long)sz, (unsigned long long)block_max);
        off += sz + ((flg & 0x10) ? 4 : 0);
        if (off - pos > RD_FRAME_MAX_BYTES)
            return jg_rd_fail(r, JAGER_E_FORMAT, "frame longer than %llu bytes", RD_FRAME_MAX_BYTES);
    }
    off += 4; /* content checksum */
    f->len = off - pos;
    if (!jg_rd_in_get(r, pos, (size_t)f->len)) return jg_rd_in_fail(r, pos);
    return 1;
}

/** Decompress the LZ4 frame \p f at r->pos into r->blk, verifying its checksums. */
int jg_rd_frame_decompress(jager_reader *r, const rd_frame *f)
{
    if (f->content_size < JG_BLOCK_HEADER_BYTES)
        return jg_rd_fail(r, JAGER_E_FORMAT, "block of %llu bytes is shorter than its header",
                    (unsigned long long)f->content_size);
    /* LZ4 expands at most ~255:1, so a size beyond that is a lie: refuse it before
     * allocating for it. */
    if (f->content_size > JG_BLOCK_MAX_CONTENT || f->content_size > f->len * 256 + 1024)
        return jg_rd_fail(r, JAGER_E_FORMAT, "declared block size %llu is impossible here",
                    (unsigned long long)f->content_size);
    /* Room for one more block past the content lets liblz4 decode every block in
     * place instead of through its staging buffer. */
    size_t need = (size_t)(f->content_size + f->block_max);
    if (need > r->blk_cap) {
        size_t cap = r->blk_cap ? r->blk_cap : 64 * 1024;
        while (cap < need) cap *= 2;
        free(r->blk);
        r->blk_cap = 0;
        if (!(r->blk = malloc(cap))) return jg_rd_fail(r, JAGER_E_NOMEM, "out of memory for a %zu-byte block", cap);
        r->blk_cap = cap;
    }
    const uint8_t *src = jg_rd_in_get(r, r->pos, (size_t)f->len);
    if (!src) return jg_rd_in_fail(r, r->pos);
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
            return jg_rd_fail(r, JAGER_E_CHECKSUM, "checksum mismatch (%s)", LZ4F_getErrorName(ret));
        return jg_rd_fail(r, JAGER_E_FORMAT, "LZ4 decoding failed (%s)", LZ4F_getErrorName(ret));
    }
    if (ret != 0 || src_len != f->len || dst_len != f->content_size) {
        LZ4F_resetDecompressionContext(r->dctx);
        return jg_rd_fail(r, JAGER_E_FORMAT, "frame does not decode to its declared %llu bytes",
                    (unsigned long long)f->content_size);
    }
    r->blk_len = dst_len;
    return 0;
}

/** The first \p want (≤ 32) content bytes of frame \p f, decoding only its first block. */
int jg_rd_frame_peek(jager_reader *r, const rd_frame *f, uint8_t *out, size_t want)
{
    const uint8_t *p = jg_rd_in_get(r, r->pos, (size_t)f->len);
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
