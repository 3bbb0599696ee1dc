/*
 * file_format.h — the `.jgr` layout shared by the writer (file_sink.c) and the reader
 * (reader.c). Never installed. docs/file-format.md describes the same bytes for people.
 *
 * A file is a concatenation of LZ4 frames: one skippable preamble frame, then one LZ4
 * frame per block. A block's decompressed content is `u32 kind, u32 reserved, body`.
 * All integers are little-endian; strings are `u32 length, bytes` (no terminator).
 */
#ifndef JAGER_FILE_FORMAT_H
#define JAGER_FILE_FORMAT_H

#include <stdint.h>
#include <string.h>

/* ---- preamble: an LZ4 skippable frame ---- */
#define JG_FILE_SKIPPABLE_MAGIC 0x184D2A50u /* first of the 16 skippable magics */
#define JG_FILE_SKIPPABLE_MASK 0xFFFFFFF0u
#define JG_FILE_LZ4_MAGIC 0x184D2204u       /* LZ4 frame magic */
#define JG_FILE_MAGIC "JAGERJGR"            /* 8 bytes, no terminator in the file */
#define JG_FILE_MAGIC_LEN 8
#define JG_FILE_PREAMBLE_DATA 16            /* magic 8 + major 2 + minor 2 + flags 4 */
#define JG_FILE_PREAMBLE_BYTES (8 + JG_FILE_PREAMBLE_DATA)
#define JG_FILE_PREAMBLE_MAX_DATA 4096      /* a later minor may append; readers skip it */
/** Preamble flags: bits 0-15 may be ignored by readers that do not know them, bits
 *  16-31 must be understood (a reader refuses a file with an unknown one). None in 1.0. */
#define JG_FILE_FLAGS_INCOMPAT_MASK 0xFFFF0000u

/* ---- blocks ---- */
typedef enum jg_block_kind {
    JG_BLOCK_META = 1,     /* u32 n, n × (str key, str value); replaces values by key */
    JG_BLOCK_SCHEMA = 2,   /* u32 n, n × (u16 id, u16 builtin, u32 nfields, str name, nfields × (u16 kind, u16 0, str name)) */
    JG_BLOCK_STRINGS = 3,  /* u32 n, n × (u32 id, str text) */
    JG_BLOCK_SITES = 4,    /* u32 n, n × (u32 site, u32 name sid, u32 file sid, u32 line) */
    JG_BLOCK_THREADS = 5,  /* u32 n, n × (u32 index, u64 os_tid, str name) */
    JG_BLOCK_COUNTERS = 6, /* u32 n, n × (u32 id, u32 name sid, u32 unit sid, u32 kind) */
    JG_BLOCK_EVENTS = 7,   /* u32 thread, u32 0, u64 nevents, records */
    JG_BLOCK_STACKS = 8,   /* u32 n, n × (u64 id, u32 depth, depth × u64 ip) */
    JG_BLOCK_SYMBOLS = 9,  /* u32 n, n × (u64 ip, u32 inline_depth, u32 line, u32 func sid, u32 file sid) */
    JG_BLOCK_STATS = 10,   /* see docs/file-format.md */
    JG_BLOCK_END = 11      /* u64 end_ns, u64 events, u64 frames */
} jg_block_kind;

#define JG_BLOCK_HEADER_BYTES 8
#define JG_EVENTS_HEADER_BYTES 16 /* after the block header */
/** Largest decompressed block a reader accepts (writers stay far below). */
#define JG_BLOCK_MAX_CONTENT (64u << 20)
/** Writers aim at this decompressed size per block (events are coalesced up to it). */
#define JG_BLOCK_TARGET (1u << 20)
/** Values per site in a STATS block: calls, total, min, max, bytes, errors, p50, p90, p99. */
#define JG_STATS_SITE_VALUES 9
/** u64 values of jager_stat in a STATS block, in this order: threads, events_emitted,
 *  events_recorded, events_dropped, dropped[8], events_written, spans_total,
 *  span_cost_ns_x1000, ring_bytes. */
#define JG_STATS_CORE_VALUES 16

/* ---- little-endian access (the supported hosts are little-endian; memcpy keeps
 * unaligned access defined) ---- */
static inline uint16_t jg_rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t jg_rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t jg_rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void jg_wr16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void jg_wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void jg_wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .jgr format is little-endian; a big-endian port must byte-swap in jg_rd*/jg_wr*"
#endif

#endif /* JAGER_FILE_FORMAT_H */
