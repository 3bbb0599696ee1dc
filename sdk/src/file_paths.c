/*
 * file_paths.c — the `.jgr` writer's PATHS blocks (format 1.1): the exact per-call-path
 * aggregates of every thread (paths.c), one block per thread, written after each STATS
 * set; and the collector's CPU time as metadata. See docs/file-format.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_sink_priv.h"

typedef struct paths_acc {
    file_sink *fs;
    uint8_t *seen;   /* thread indexes already written (a table may be visited twice) */
    uint32_t nseen;
    uint32_t blocks;
    int failed;
} paths_acc;

static int emit(file_sink *fs, uint32_t flags)
{
    if (fs->blk_oom) return -1;
    jg_wr32(fs->blk + JG_BLOCK_HEADER_BYTES, flags);
    return jg_fs_emit_frame(fs, fs->blk, fs->blk_len);
}

/* One thread's block; the flags word is patched when it is emitted (first/last known
 * only then), so a block is built, and the previous one emitted, here. */
static void put_thread(const jg_paths_view *v, void *arg)
{
    paths_acc *acc = arg;
    file_sink *fs = acc->fs;
    if (acc->failed || v->count < 2) return;
    if (v->thread < acc->nseen) {
        if (acc->seen[v->thread]) return;
        acc->seen[v->thread] = 1;
    }
    if (acc->blocks && emit(fs, acc->blocks == 1 ? JG_PATHS_FIRST : 0) != 0) {
        acc->failed = 1;
        return;
    }
    fs->blk_len = 0;
    fs->blk_oom = 0;
    jg_fs_put32(fs, JG_BLOCK_PATHS);
    jg_fs_put32(fs, 0);
    jg_fs_put32(fs, 0); /* flags */
    jg_fs_put32(fs, v->thread);
    jg_fs_put32(fs, JG_PATHS_VALUES);
    jg_fs_put32(fs, v->count - 1);
    /* Node i of the table is entry i (entries count from 1; parent 0 is the top level). */
    for (uint32_t i = 1; i < v->count; i++) {
        const jg_path *n = jg_paths_node(v->p, i);
        uint64_t val[JG_PATHS_VALUES] = {0, 0, 0};
        uint32_t parent = 0, site = 0;
        if (n) {
            parent = n->parent;
            site = n->site;
            val[0] = atomic_load_explicit(&n->calls, memory_order_relaxed);
            val[1] = atomic_load_explicit(&n->total_ns, memory_order_relaxed);
            val[2] = atomic_load_explicit(&n->bytes, memory_order_relaxed);
        }
        jg_fs_put32(fs, parent);
        jg_fs_put32(fs, site);
        jg_fs_put_bytes(fs, val, sizeof val);
    }
    acc->blocks++;
}

static void set_cost_meta(void)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)jg_collector_cpu_ns());
    (void)jg_meta_set("jager.collector_cpu_ns", buf);
    jager_stat st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    if (jager_stats(&st) == JAGER_OK) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)st.spans_total);
        (void)jg_meta_set("jager.collector_cpu_spans", buf);
    }
}

int jg_fs_write_cost_meta(file_sink *fs)
{
    (void)fs;
    set_cost_meta();
    return 0;
}

/** Write a PATHS set: one block per thread with a table; a set with no table is one empty
 *  block (thread 0, no nodes), so a reader knows the file carries paths. */
int jg_fs_write_paths(file_sink *fs)
{
    paths_acc acc = {fs, NULL, 0, 0, 0};
    acc.nseen = jg_thread_count() + 1;
    acc.seen = calloc(acc.nseen, 1);
    if (!acc.seen) acc.nseen = 0;
    jg_paths_foreach(put_thread, &acc);
    free(acc.seen);
    if (acc.failed) return -1;
    if (!acc.blocks) {
        fs->blk_len = 0;
        fs->blk_oom = 0;
        jg_fs_put32(fs, JG_BLOCK_PATHS);
        jg_fs_put32(fs, 0);
        jg_fs_put32(fs, 0);
        jg_fs_put32(fs, 0);
        jg_fs_put32(fs, JG_PATHS_VALUES);
        jg_fs_put32(fs, 0);
        acc.blocks = 1;
    }
    return emit(fs, (acc.blocks == 1 ? JG_PATHS_FIRST : 0) | JG_PATHS_LAST);
}
