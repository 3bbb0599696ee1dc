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
/** 1.1: EVENTS blocks may hold packed span records (JG_EVENTS_ENC_PACKED_SPANS), which a
 *  1.0 reader would misread, so it refuses the file. */
#define JG_FILE_FLAG_PACKED_SPANS 0x00010000u
/** The incompatible flags this reader knows. */
#define JG_FILE_FLAGS_KNOWN_INCOMPAT JG_FILE_FLAG_PACKED_SPANS

/* ---- blocks ---- */
typedef enum jg_block_kind {
    JG_BLOCK_META = 1,     /* u32 n, n × (str key, str value); replaces values by key */
    JG_BLOCK_SCHEMA = 2,   /* u32 n, n × (u16 id, u16 builtin, u32 nfields, str name, nfields × (u16 kind, u16 flags, str name)) */
    JG_BLOCK_STRINGS = 3,  /* u32 n, n × (u32 id, str text) */
    JG_BLOCK_SITES = 4,    /* u32 n, n × (u32 site, u32 name sid, u32 file sid, u32 line) */
    JG_BLOCK_THREADS = 5,  /* u32 n, n × (u32 index, u64 os_tid, str name) */
    JG_BLOCK_COUNTERS = 6, /* u32 n, n × (u32 id, u32 name sid, u32 unit sid, u32 kind) */
    JG_BLOCK_EVENTS = 7,   /* u32 thread, u32 encoding (JG_EVENTS_ENC_*), u64 nevents, records */
    JG_BLOCK_STACKS = 8,   /* u32 n, n × (u64 id, u32 depth, depth × u64 ip) */
    JG_BLOCK_SYMBOLS = 9,  /* u32 n, n × (u64 ip, u32 inline_depth, u32 line, u32 func sid, u32 file sid) */
    JG_BLOCK_STATS = 10,   /* see docs/file-format.md */
    JG_BLOCK_END = 11,     /* u64 end_ns, u64 events, u64 frames */
    JG_BLOCK_PATHS = 12    /* since 1.1: u32 flags, u32 thread, u32 nvalues, u32 n, n × (u32 parent, u32 site, nvalues × u64) */
} jg_block_kind;

#define JG_BLOCK_HEADER_BYTES 8
#define JG_EVENTS_HEADER_BYTES 16 /* after the block header */
/** Largest decompressed block a reader accepts (writers stay far below). */
#define JG_BLOCK_MAX_CONTENT (64u << 20)
/** Writers aim at this decompressed size per block (events are coalesced up to it). */
#define JG_BLOCK_TARGET (1u << 20)
/** Values per site in a STATS block: calls, total, min, max, bytes, errors, p50, p90, p99. */
#define JG_STATS_SITE_VALUES 11 /* 9 in 1.0; thinned and dropped appended in 1.1 */
/** u64 values of jager_stat in a STATS block, in this order: threads, events_emitted,
 *  events_recorded, events_dropped, dropped[8], events_written, spans_total,
 *  span_cost_ns_x1000, ring_bytes. */
#define JG_STATS_CORE_VALUES 16
/** Since 1.1 these follow: events_pending, drop_reports, spans_cross_thread, sinks, then
 *  per sink (metadata jager.sink.<i> names it) events_delivered, events_failed,
 *  batches_failed. */
#define JG_STATS_CORE_VALUES_1_1 20
#define JG_STATS_SINK_VALUES 3
#define JG_STATS_SINKS_MAX 16
#define JG_STATS_CORE_MAX (JG_STATS_CORE_VALUES_1_1 + JG_STATS_SINK_VALUES * JG_STATS_SINKS_MAX)
/** Values per node in a PATHS block (1.1): calls, total_ns, bytes. */
#define JG_PATHS_VALUES 3
/** PATHS flags: the first block of a set (earlier sets are replaced), the last one. */
#define JG_PATHS_FIRST 1u
#define JG_PATHS_LAST 2u

/* ---- EVENTS block encodings (the u32 after the thread index) ---- */
#define JG_EVENTS_ENC_RAW 0          /* the records as the rings produced them (1.0) */
#define JG_EVENTS_ENC_PACKED_SPANS 1 /* 1.1: span records delta-coded in place, below */

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

/*
 * Packed spans: every span record (type 1, at least 40 bytes) keeps its size and header,
 * but its four words hold differences that are small and repetitive in a loop, so LZ4
 * finds long matches (a tight loop: 13 bytes per span raw, about 6 packed):
 *   word 1: start_ns − the previous span record's start_ns in the block (0 before the first)
 *   word 2: end_ns − start_ns
 *   word 3: span_id − the previous span_id (low half), parent_id − the previous
 *           parent_id (high half), both modulo 2^32
 *   word 4: bytes, as is
 * All modulo 2^64 / 2^32, so any record packs and unpacks exactly. Other records are
 * untouched. Both walk the records by their header's words, which must have been
 * validated (non-zero, within the block) by the caller.
 */
static inline void jg_span_pack(uint8_t *rec, const uint8_t *end, int unpack)
{
    uint64_t prev_start = 0;
    uint32_t prev_id = 0, prev_parent = 0;
    while (rec + 8 <= end) {
        size_t size = (size_t)jg_rd16(rec + 2) * 8u;
        if (!size || size > (size_t)(end - rec)) return;
        if (jg_rd16(rec) == 1 && size >= 40) {
            uint64_t a = jg_rd64(rec + 8), b = jg_rd64(rec + 16), ids = jg_rd64(rec + 24);
            uint32_t id = (uint32_t)ids, parent = (uint32_t)(ids >> 32);
            if (!unpack) {
                jg_wr64(rec + 8, a - prev_start);
                jg_wr64(rec + 16, b - a);
                jg_wr64(rec + 24, (uint64_t)(uint32_t)(id - prev_id) | (uint64_t)(uint32_t)(parent - prev_parent) << 32);
                prev_start = a;
                prev_id = id;
                prev_parent = parent;
            } else {
                uint64_t start = prev_start + a;
                id = prev_id + id;
                parent = prev_parent + parent;
                jg_wr64(rec + 8, start);
                jg_wr64(rec + 16, start + b);
                jg_wr64(rec + 24, (uint64_t)id | (uint64_t)parent << 32);
                prev_start = start;
                prev_id = id;
                prev_parent = parent;
            }
        }
        rec += size;
    }
}

#endif /* JAGER_FILE_FORMAT_H */
