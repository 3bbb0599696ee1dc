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
 *
 * This file holds the frame loop, open/close and iteration; reader_input.c the input,
 * frames and errors; reader_absorb.c the table blocks; reader_tables.c the table lookups;
 * reader_attrs.c attribute lists and log bodies; reader_priv.h what they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_priv.h"

/* ---------------------------------------------------------------------------------- */
/* events blocks */

/** Check every record of the EVENTS block in r->blk before any is handed out. */
static int events_check(jager_reader *r, uint64_t *nevents_out)
{
    if (r->blk_len < JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES)
        return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block of %zu bytes is shorter than its header", r->blk_len);
    const uint8_t *b = r->blk + JG_BLOCK_HEADER_BYTES;
    uint32_t thread = jg_rd32(b), enc = jg_rd32(b + 4);
    uint64_t nevents = jg_rd64(b + 8);
    /* Packed spans only where the preamble announced them (a 1.0 file's word is 0). */
    if (enc != JG_EVENTS_ENC_RAW && !(enc == JG_EVENTS_ENC_PACKED_SPANS && r->packed_spans))
        return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block: unknown encoding %u", enc);
    const uint8_t *p = b + JG_EVENTS_HEADER_BYTES, *end = r->blk + r->blk_len;
    uint64_t count = 0;
    while (p < end) {
        size_t left = (size_t)(end - p);
        if (left < sizeof(jager_record))
            return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block: %zu stray bytes after record %llu", left,
                        (unsigned long long)count);
        const jager_record *h = (const jager_record *)p;
        size_t size = (size_t)h->words * 8u;
        if (!size || size > left)
            return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu (at content byte %zu) has %u words, %zu bytes left",
                        (unsigned long long)count, (size_t)(p - r->blk), h->words, left);
        uint16_t type = h->type;
        const rd_tfast *tf = type < r->ntypes ? &r->tfast[type] : NULL;
        if (!tf || !tf->known)
            return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu has type %u, which the schema does not define",
                        (unsigned long long)count, type);
        if (size < tf->min_bytes)
            return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu of type %u has %zu bytes (at least %u)",
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
            return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block: record %llu of type %u: %llu text bytes overrun its %zu bytes",
                        (unsigned long long)count, type, (unsigned long long)var, size);
        p += size;
        count++;
    }
    if (count != nevents)
        return jg_rd_fail(r, JAGER_E_FORMAT, "EVENTS block declares %llu events but holds %llu", (unsigned long long)nevents,
                    (unsigned long long)count);
    if (enc == JG_EVENTS_ENC_PACKED_SPANS) { /* every size is checked above: unpack in place, once */
        jg_span_pack(r->blk + JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES, r->blk + r->blk_len, 1);
        jg_wr32(r->blk + JG_BLOCK_HEADER_BYTES + 4, JG_EVENTS_ENC_RAW);
    }
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
            if (jg_rd_in_get(r, r->pos, 1) || r->in_errno)
                return r->state = r->in_errno ? jg_rd_in_fail(r, r->pos) : jg_rd_fail(r, JAGER_E_FORMAT, "data after the END block");
            r->state = 1;
            return 0;
        }
        rd_frame f;
        int rc = jg_rd_frame_extent(r, &f);
        if (rc == 0) {
            r->truncated = 1;
            r->state = jg_rd_fail(r, JAGER_E_TRUNCATED, "file ends after %llu whole frames without an END block "
                            "(the recording was not closed)", (unsigned long long)r->frame_no);
            return r->state;
        }
        if (rc < 0) return r->state = rc;
        uint64_t frame_end = r->pos + f.len;
        int have_events = 0;
        if (!f.skippable) {
            uint8_t head[JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES];
            if (r->tables_only && jg_rd_frame_peek(r, &f, head, sizeof head) == 0 && jg_rd32(head) == JG_BLOCK_EVENTS) {
                /* load_tables: an events frame is skipped unread (next() checks it) */
                r->pass_events += jg_rd64(head + 16);
            } else {
                if ((rc = jg_rd_frame_decompress(r, &f)) < 0) return r->state = rc;
                uint32_t kind = jg_rd32(r->blk);
                if (kind == JG_BLOCK_EVENTS) {
                    uint64_t n = 0;
                    if ((rc = events_check(r, &n)) < 0) return r->state = rc;
                    r->pass_events += n;
                    have_events = n > 0 && !r->tables_only;
                } else if (kind == JG_BLOCK_END) {
                    if ((rc = jg_rd_absorb_end(r, &(rd_cur){r->blk + 8, r->blk + r->blk_len, 0})) < 0) return r->state = rc;
                } else if (is_table_kind(kind) && frame_end > r->tables_until) {
                    if ((rc = jg_rd_absorb_block(r, kind)) < 0) return r->state = rc;
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
    const uint8_t *p = jg_rd_in_get(r, 0, 8);
    if (!p) {
        if (r->in_errno) return jg_rd_fail(r, jg_rd_in_status(r), "read failed: %s", strerror(r->in_errno));
        return jg_rd_fail(r, JAGER_E_FORMAT, "not a .jgr recording (%llu bytes, shorter than the preamble)",
                    (unsigned long long)jg_rd_in_available(r, 0));
    }
    if (jg_rd32(p) != JG_FILE_SKIPPABLE_MAGIC)
        return jg_rd_fail(r, JAGER_E_FORMAT, "not a .jgr recording (starts with 0x%08x, not the preamble frame)", jg_rd32(p));
    uint32_t size = jg_rd32(p + 4);
    if (size < JG_FILE_PREAMBLE_DATA || size > JG_FILE_PREAMBLE_MAX_DATA)
        return jg_rd_fail(r, JAGER_E_FORMAT, "not a .jgr recording (preamble of %u bytes)", size);
    if (!(p = jg_rd_in_get(r, 0, 8 + (size_t)size))) {
        if (r->in_errno) return jg_rd_fail(r, jg_rd_in_status(r), "read failed: %s", strerror(r->in_errno));
        return jg_rd_fail(r, JAGER_E_FORMAT, "not a .jgr recording (file ends inside the preamble)");
    }
    if (memcmp(p + 8, JG_FILE_MAGIC, JG_FILE_MAGIC_LEN) != 0)
        return jg_rd_fail(r, JAGER_E_FORMAT, "not a .jgr recording (no JAGERJGR magic)");
    r->fmt_major = jg_rd16(p + 16);
    r->fmt_minor = jg_rd16(p + 18);
    uint32_t flags = jg_rd32(p + 20);
    if (r->fmt_major != JAGER_FORMAT_MAJOR)
        return jg_rd_fail(r, JAGER_E_FORMAT, "format version %u.%u; this library reads %u.x", r->fmt_major, r->fmt_minor,
                    JAGER_FORMAT_MAJOR);
    if (flags & JG_FILE_FLAGS_INCOMPAT_MASK & ~JG_FILE_FLAGS_KNOWN_INCOMPAT)
        return jg_rd_fail(r, JAGER_E_FORMAT, "preamble flags 0x%08x need a newer reader", flags);
    r->packed_spans = (flags & JG_FILE_FLAG_PACKED_SPANS) != 0;
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
    if (jg_rd_types_init_core(r)) goto fail_nomem;
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
    jg_idmap_free(&r->sym_map);
    jg_idmap_free(&r->sym_depth_map);
    jg_idmap_free(&r->meta_map);
    free(r->types);
    free(r->tfast);
    jg_rd_stats_free(&r->stats);
    jg_rd_stats_free(&r->staging);
    jg_rd_paths_free(&r->paths);
    jg_rd_paths_free(&r->paths_staging);
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
    case JAGER_EV_SPAN: case JAGER_EV_SPAN_X:
        ev->time_ns = w[1];
        ev->end_ns = w[2];
        break;
    case JAGER_EV_LOG: case JAGER_EV_COUNTER: case JAGER_EV_MARK:
    case JAGER_EV_DROP: case JAGER_EV_DIAG: case JAGER_EV_SPAN_ERROR: case JAGER_EV_CONTEXT: case JAGER_EV_TASK:
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
