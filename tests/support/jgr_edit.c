#include "jgr_edit.h"

#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_format.h"
#include "jager_record.h"
#include "testutil.h"

typedef struct obuf {
    uint8_t *d;
    size_t n, cap;
} obuf;

static int put(obuf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = (b->n + n) * 2 + 4096;
        uint8_t *d = realloc(b->d, cap);
        if (!d) return -1;
        b->d = d;
        b->cap = cap;
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
    return 0;
}

int tu_jgr_edit(const uint8_t *in, size_t n, tu_jgr_block_fn fn, void *ctx, uint8_t **out, size_t *out_n)
{
    LZ4F_dctx *d;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION))) return -1;
    obuf o = {0}, blk = {0};
    uint8_t *z = NULL;
    int rc = -1;
    size_t off = 0;
    const size_t chunk = 1u << 20;
    uint8_t *tmp = malloc(chunk);
    if (!tmp) goto out;
    while (off < n) {
        uint32_t magic;
        if (n - off < 8) goto out;
        memcpy(&magic, in + off, 4);
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) { /* skippable: copied */
            uint32_t len;
            memcpy(&len, in + off + 4, 4);
            if (len > n - off - 8 || put(&o, in + off, 8u + len)) goto out;
            off += 8u + len;
            continue;
        }
        blk.n = 0;
        for (;;) {
            size_t inl = n - off, ol = chunk;
            size_t r = LZ4F_decompress(d, tmp, &ol, in + off, &inl, NULL);
            if (LZ4F_isError(r) || (inl == 0 && ol == 0)) goto out;
            off += inl;
            if (ol && put(&blk, tmp, ol)) goto out;
            if (r == 0) break;
        }
        if (fn) fn(blk.d, blk.n, ctx);
        LZ4F_preferences_t p;
        memset(&p, 0, sizeof p);
        p.frameInfo.contentSize = blk.n;
        p.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
        p.frameInfo.blockMode = LZ4F_blockIndependent;
        p.frameInfo.blockSizeID = LZ4F_max1MB;
        size_t bound = LZ4F_compressFrameBound(blk.n, &p);
        free(z);
        if (!(z = malloc(bound))) goto out;
        size_t zn = LZ4F_compressFrame(z, bound, blk.d, blk.n, &p);
        if (LZ4F_isError(zn) || put(&o, z, zn)) goto out;
    }
    *out = o.d;
    *out_n = o.n;
    o.d = NULL;
    rc = 0;
out:
    free(o.d);
    free(blk.d);
    free(z);
    free(tmp);
    LZ4F_freeDecompressionContext(d);
    return rc;
}

int tu_jgr_edit_file(const char *from, const char *to, tu_jgr_block_fn fn, void *ctx)
{
    size_t n, on;
    uint8_t *in = tu_read_file(from, &n), *o = NULL;
    if (!in) return -1;
    int rc = tu_jgr_edit(in, n, fn, ctx, &o, &on);
    free(in);
    if (rc == 0) rc = tu_write_file(to, o, on);
    free(o);
    return rc;
}

void tu_jgr_retarget_thread(uint8_t *block, size_t len, void *ctx)
{
    const uint32_t *ids = ctx;
    uint32_t kind, thread;
    if (len < 12) return;
    memcpy(&kind, block, 4);
    memcpy(&thread, block + 8, 4);
    if (kind == 7 && (ids[0] == 0 || thread == ids[0])) memcpy(block + 8, &ids[1], 4);
}

void tu_jgr_to_chain(uint8_t *block, size_t len, void *ctx)
{
    tu_jgr_chain *c = ctx;
    uint32_t kind, enc;
    if (len < JG_BLOCK_HEADER_BYTES) return;
    memcpy(&kind, block, 4);
    if (kind == JG_BLOCK_PATHS) {
        kind = 99; /* a kind of a newer minor: the reader skips it */
        memcpy(block, &kind, 4);
        return;
    }
    if (kind != JG_BLOCK_EVENTS || len < JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES) return;
    uint8_t *rec = block + JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES, *end = block + len;
    memcpy(&enc, block + JG_BLOCK_HEADER_BYTES + 4, 4);
    if (enc == JG_EVENTS_ENC_PACKED_SPANS) {
        jg_span_pack(rec, end, 1);
        enc = JG_EVENTS_ENC_RAW;
        memcpy(block + JG_BLOCK_HEADER_BYTES + 4, &enc, 4);
    }
    while (rec < end) {
        jager_record *h = (jager_record *)rec;
        if (!h->words) break;
        if (h->type == JAGER_EV_SPAN && c->k < c->n) {
            jager_rec_span *s = (jager_rec_span *)h;
            if (!c->t0) c->t0 = s->start_ns;
            uint64_t d = c->n - 1 - c->k;
            s->start_ns = c->t0 + d;
            s->end_ns = c->t0 + 2ull * c->n + 10 - d;
            s->span_id = c->n - c->k; /* ids grow in begin order: the outermost began first */
            s->parent_id = c->n - c->k - 1;
            c->k++;
        }
        rec += (size_t)h->words * 8u;
    }
}
