/*
 * reader_priv.h — what the `.jgr` reader's files share (reader.c, reader_input.c,
 * reader_absorb.c, reader_tables.c): the reader's state and its hidden helpers.
 * Not installed; nothing outside sdk/src/reader/ includes it. The reader shares only
 * file_format.h (the bytes), status.h (jg_error) and containers.h (jg_vec, jg_idmap) with
 * the recorder.
 */
#ifndef JAGER_READER_PRIV_H
#define JAGER_READER_PRIV_H

#define LZ4F_STATIC_LINKING_ONLY
#include <lz4frame.h>
#include <stddef.h>
#include <stdint.h>

#include "containers.h"
#include "file_format.h"
#include "jager_reader.h"
#include "status.h"

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
    uint32_t last; /* in an ip's first frame: index + 1 of its chain's last frame (appends are O(1)) */
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
    uint64_t core[JG_STATS_CORE_MAX];
    uint32_t ncore;   /* values of core[] the file gave (the rest 0) */
    uint32_t site_limit;
    rd_site_stat *sites;
    size_t nsites, sites_cap;
    uint32_t *hb_index;
    uint64_t *hb_count;
    size_t nhb, hb_cap;
} rd_stats;

/* One call path of a PATHS set (format 1.1): parent is an index into the same set (parents
 * come first), RD_PATH_TOP for a top-level path. */
#define RD_PATH_TOP UINT32_MAX
typedef struct rd_path {
    uint32_t thread, parent, site, reserved;
    uint64_t calls, total_ns, self_ns, bytes;
} rd_path;
typedef struct rd_paths {
    int have;
    rd_path *v;
    size_t n, cap;
} rd_paths;

/* A growable array of fixed-size elements (the tables): the core's jg_vec. */
typedef jg_vec rd_vec;

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
    int packed_spans; /* the preamble's JG_FILE_FLAG_PACKED_SPANS */
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
    jg_idmap sym_map;   /* ip → index + 1 of its first frame (frames chain by next) */
    jg_idmap sym_depth_map; /* (ip, inline depth) → index + 1: a repeated frame found without a walk */
    jg_idmap meta_map;  /* key → index + 1 in meta */
    rd_type **types; /* indexed by type id */
    rd_tfast *tfast;
    uint32_t ntypes; /* capacity of both, largest id + 1 */
    rd_stats stats, staging;
    rd_paths paths, paths_staging; /* the last complete PATHS set, the one being read */
};

typedef struct rd_frame {
    uint64_t len;          /* compressed bytes, headers included */
    int skippable;
    uint64_t content_size; /* LZ4 frames */
    uint64_t block_max;    /* the frame's largest block */
    size_t header_len;
} rd_frame;

typedef struct rd_cur {
    const uint8_t *p, *end;
    int bad;
} rd_cur;

static inline uint64_t pad8(uint64_t n) { return (n + 7) & ~7ull; }

/* reader_input.c: small helpers, input, frames */
JG_HIDDEN void *jg_rd_arena_alloc(jager_reader *r, size_t size);
JG_HIDDEN const char *jg_rd_arena_str(jager_reader *r, const uint8_t *s, size_t n);
JG_HIDDEN int jg_rd_fail(jager_reader *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
JG_HIDDEN const char *jg_rd_kind_name(uint32_t kind);
JG_HIDDEN const uint8_t *jg_rd_in_get(jager_reader *r, uint64_t off, size_t n);
JG_HIDDEN uint64_t jg_rd_in_available(jager_reader *r, uint64_t off);
JG_HIDDEN int jg_rd_in_status(const jager_reader *r);
JG_HIDDEN int jg_rd_in_fail(jager_reader *r, uint64_t off);
JG_HIDDEN int jg_rd_frame_extent(jager_reader *r, rd_frame *f);
JG_HIDDEN int jg_rd_frame_decompress(jager_reader *r, const rd_frame *f);
JG_HIDDEN int jg_rd_frame_peek(jager_reader *r, const rd_frame *f, uint8_t *out, size_t want);

/* reader_absorb.c: table blocks */
JG_HIDDEN int jg_rd_types_init_core(jager_reader *r);
JG_HIDDEN size_t jg_rd_sym_find(const jager_reader *r, uint64_t ip);
/** The meta map's slot for \p key (its hash in *h): jg_idmap_id() is its index + 1, 0 when absent. */
JG_HIDDEN size_t jg_rd_meta_find(const jager_reader *r, const char *key, uint64_t *h);
JG_HIDDEN void jg_rd_stats_free(rd_stats *s);
JG_HIDDEN void jg_rd_paths_free(rd_paths *p);
JG_HIDDEN int jg_rd_absorb_end(jager_reader *r, rd_cur *c);
JG_HIDDEN int jg_rd_absorb_block(jager_reader *r, uint32_t kind);

#endif /* JAGER_READER_PRIV_H */
