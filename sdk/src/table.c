/* Append-only chunked tables: entries never move, so lock-free readers may hold pointers
 * while writers (serialised by the owner's mutex) append. */
#include <stdlib.h>

#include "internal.h"

#define CHUNK (1u << JG_TABLE_CHUNK_BITS)

uint32_t jg_table_count(jg_table *t) { return atomic_load_explicit(&t->count, memory_order_acquire); }

void *jg_table_append(jg_table *t, uint32_t *index_out)
{
    uint32_t index = atomic_load_explicit(&t->count, memory_order_relaxed);
    uint32_t c = index >> JG_TABLE_CHUNK_BITS;
    if (c >= JG_TABLE_MAX_CHUNKS) return NULL;
    uint8_t *chunk = atomic_load_explicit(&t->chunks[c], memory_order_relaxed);
    if (!chunk) {
        chunk = calloc(CHUNK, t->elem_size);
        if (!chunk) return NULL;
        atomic_store_explicit(&t->chunks[c], chunk, memory_order_release);
    }
    *index_out = index;
    return chunk + (size_t)(index & (CHUNK - 1)) * t->elem_size;
}

void jg_table_publish(jg_table *t, uint32_t new_count)
{
    atomic_store_explicit(&t->count, new_count, memory_order_release);
}
