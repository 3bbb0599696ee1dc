/* Rewrite a .jgr file block by block, for tests and benchmarks that need a file no writer
 * would produce (hostile ids): every LZ4 frame is decompressed, handed to a callback that
 * may change its bytes in place, and compressed again (content size and checksum set, as
 * the file sink writes them); skippable frames (the preamble) are copied as they are. */
#ifndef JAGER_TEST_JGR_EDIT_H
#define JAGER_TEST_JGR_EDIT_H
#include <stddef.h>
#include <stdint.h>

/** Called with one block's content (8-byte block header first: u32 kind, u32 reserved);
 *  may modify the \p len bytes in place. */
typedef void (*tu_jgr_block_fn)(uint8_t *block, size_t len, void *ctx);

/** Rewrite \p in (\p n bytes) into a malloc'd *out (*out_n bytes). 0, or -1 when the
 *  input does not decode as whole frames or memory runs out. */
int tu_jgr_edit(const uint8_t *in, size_t n, tu_jgr_block_fn fn, void *ctx, uint8_t **out, size_t *out_n);

/** The same, file to file. 0 or -1. */
int tu_jgr_edit_file(const char *from, const char *to, tu_jgr_block_fn fn, void *ctx);

/** A tu_jgr_block_fn: every EVENTS block of thread index ids[0] gets thread index ids[1]
 *  (ids[0] == 0: every EVENTS block). \p ctx is a uint32_t[2]. */
void tu_jgr_retarget_thread(uint8_t *block, size_t len, void *ctx);
/** State of tu_jgr_to_chain(): set n, zero the rest. */
typedef struct tu_jgr_chain {
    uint32_t n;  /**< span records in the file (one thread, ids 1..n in file order) */
    uint32_t k;  /**< records rewritten so far */
    uint64_t t0; /**< the first record's start */
} tu_jgr_chain;

/** A tu_jgr_block_fn: a recording of n sibling spans on one thread becomes a chain, each
 *  span the parent of the one before it in the file (the k-th record at depth n-1-k, id
 *  n-k, nested in time, as a real chain is written: innermost first), EVENTS blocks
 *  re-encoded raw; PATHS blocks
 *  get a kind the reader skips, so the tree is built from the events. \p ctx is a
 *  tu_jgr_chain. */
void tu_jgr_to_chain(uint8_t *block, size_t len, void *ctx);
#endif
