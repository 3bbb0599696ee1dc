/*
 * file_sink_priv.h — what the `.jgr` writer's files share (file_sink.c, file_tables.c):
 * the sink's state and its hidden helpers. Not installed.
 */
#ifndef JAGER_FILE_SINK_PRIV_H
#define JAGER_FILE_SINK_PRIV_H

#define LZ4F_STATIC_LINKING_ONLY
#include <lz4frame.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "file_format.h"
#include "internal.h"
#include "jager_reader.h" /* JAGER_FORMAT_*: the version the writer writes and the reader reads */

/** Pending events older than this are written even if their block is not full. */
#define JG_FILE_MAX_DELAY_NS 1000000000ull
/** Pending events of all threads together above this are written out. */
#define JG_FILE_MAX_PENDING (8u << 20)
/** Thread indexes above this are not coalesced (written block by block). */
#define JG_FILE_MAX_COALESCED_THREADS 65536u
#define JG_FILE_STDIO_BUFFER (1u << 20)

/* Events waiting to be written for one thread. buf starts with room for the block and
 * events headers, filled in when the block is written. */
typedef struct fs_pending {
    uint8_t *buf;
    size_t len, cap; /* len == JG_EVENTS_PREFIX when empty */
    uint64_t events;
} fs_pending;

#define JG_EVENTS_PREFIX (JG_BLOCK_HEADER_BYTES + JG_EVENTS_HEADER_BYTES)

typedef struct file_sink {
    char *path;
    FILE *f;
    char *stdio_buf;
    int started;  /* preamble written */
    int failed;   /* sticky: an I/O error stopped the file */
    int lazy;     /* zero-code mode: the file is claimed at the first event */
    int soft;     /* an empty recording at exit: a file another process has is left quietly */
    LZ4F_cctx *cctx;
    LZ4F_preferences_t prefs;
    uint8_t *out; /* compressed frame */
    size_t out_cap;

    /* the table block being built */
    uint8_t *blk;
    size_t blk_len, blk_cap;
    size_t blk_count_at; /* offset of the block's u32 entry count */
    uint32_t blk_entries;
    int blk_oom;

    /* what the file already holds ("written up to", exclusive) */
    uint32_t w_strings, w_sites, w_threads, w_counters, w_symbols;
    uint64_t w_stacks;
    uint32_t w_type_count;    /* jg_type_count() at the last types scan */
    uint8_t types_written[65536 / 8];
    uint16_t *type_ids;       /* scratch for one SCHEMA block */
    int meta_written;
    uint64_t w_meta_gen;
    uint32_t w_meta_log; /* metadata sets (jg_meta_log_count) covered by the last META block */
    char w_plugins[256];      /* jager.plugins as last written */

    /* coalescing */
    fs_pending *pend;         /* indexed by thread index */
    uint32_t npend;
    size_t pending_bytes;     /* record bytes waiting, all threads */
    size_t pending_cap;       /* bytes allocated for pending buffers, all threads */
    uint64_t oldest_pending_ns;
    int emitted;              /* a block was written since the last fflush */

    /* totals, for the END block and the failure report */
    uint64_t frames;          /* frames written, preamble included */
    uint64_t events_written;
    uint64_t events_lost;     /* accepted but never written (after a failure) */
} file_sink;

/* file_sink.c: failure and raw output */
JG_HIDDEN int jg_fs_emit_frame(file_sink *fs, const uint8_t *content, size_t len);

/* file_tables.c: table deltas, statistics and end */
JG_HIDDEN void jg_fs_put_bytes(file_sink *fs, const void *p, size_t n);
JG_HIDDEN void jg_fs_put32(file_sink *fs, uint32_t v);
JG_HIDDEN void jg_fs_put64(file_sink *fs, uint64_t v);
JG_HIDDEN int jg_fs_write_tables(file_sink *fs, int force_types);
JG_HIDDEN int jg_fs_write_stats(file_sink *fs);
JG_HIDDEN int jg_fs_write_end(file_sink *fs);

/* file_paths.c: exact call paths, and the collector's cost as metadata */
JG_HIDDEN int jg_fs_write_paths(file_sink *fs);
JG_HIDDEN int jg_fs_write_cost_meta(file_sink *fs);

#endif /* JAGER_FILE_SINK_PRIV_H */
