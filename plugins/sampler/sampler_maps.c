/* sampler_maps.c — the readable memory the handler may walk: a snapshot of the anonymous
 * read-write mappings of /proc/self/maps (thread stacks, Julia task stacks, the main
 * stack), one entry per mapping, sorted. File mappings are left out (a load past a
 * file's end raises SIGBUS), and a stack that appeared after the snapshot makes the
 * handler record the leaf only and ask for a refresh. The handler also checks, once per
 * stack and snapshot, that the mapping's last bytes can still be read (sampler_signal.c):
 * a stack is one mapping, so a stale entry (the mapping replaced by a smaller one since the
 * snapshot) shows there.
 *
 * Two buffers: the plugin thread fills the one not published, publishes it, and reuses the
 * other only once no handler reads it (per-buffer reader counts; a handler that took a
 * buffer after the switch sees the switch and moves to the new one). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler_internal.h"

#define SMP_MAPS_CAP 65536u

static _Atomic(int) g_readers[2];
static uint32_t g_gen;

static void fill(smp_maps *m)
{
    m->n = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off, inode;
        char perms[8];
        unsigned dmaj, dmin;
        int path_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &dmaj, &dmin, &inode, &path_at) < 7)
            continue;
        if (perms[0] != 'r' || perms[1] != 'w' || inode != 0) continue;
        const char *path = path_at ? line + path_at : "";
        if (path[0] && path[0] != '\n' && path[0] != '[') continue; /* a named anonymous mapping we do not know */
        if (m->n < m->cap) { /* one mapping each, never merged: a stack is one mapping */
            m->r[m->n].lo = lo;
            m->r[m->n].hi = hi;
            m->n++;
        }
    }
    fclose(f);
}

void smp_maps_refresh(smp_state *st)
{
    int cur = atomic_load(&st->maps_cur);
    int next = cur == 0 ? 1 : 0;
    if (!st->maps[next]) {
        st->maps[next] = malloc(sizeof(smp_maps) + SMP_MAPS_CAP * sizeof(smp_region));
        if (!st->maps[next]) return;
        st->maps[next]->cap = SMP_MAPS_CAP;
        st->maps[next]->n = 0;
    }
    while (atomic_load(&g_readers[next]) > 0) sched_yield();
    atomic_store(&st->maps_stale, 0);
    fill(st->maps[next]);
    /* unchanged memory keeps its generation, so handlers keep their checked stacks */
    const smp_maps *old = cur >= 0 ? st->maps[cur] : NULL;
    int same = old && old->n == st->maps[next]->n &&
               memcmp(old->r, st->maps[next]->r, (size_t)old->n * sizeof(smp_region)) == 0;
    st->maps[next]->gen = same ? old->gen : ++g_gen;
    atomic_store(&st->maps_cur, next);
}

void smp_maps_free(smp_state *st)
{
    atomic_store(&st->maps_cur, -1);
    for (int i = 0; i < 2; i++) {
        while (atomic_load(&g_readers[i]) > 0) sched_yield();
        free(st->maps[i]);
        st->maps[i] = NULL;
    }
}

uint64_t smp_maps_find(smp_state *st, uint64_t addr, uint64_t *lo_out, uint32_t *gen_out)
{
    int b;
    for (;;) {
        b = atomic_load(&st->maps_cur);
        if (b < 0) return 0;
        atomic_fetch_add(&g_readers[b], 1);
        if (atomic_load(&st->maps_cur) == b) break;
        atomic_fetch_sub(&g_readers[b], 1);
    }
    const smp_maps *m = st->maps[b];
    uint64_t end = 0;
    uint32_t lo = 0, hi = m ? m->n : 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (addr < m->r[mid].lo) hi = mid;
        else if (addr >= m->r[mid].hi) lo = mid + 1;
        else {
            end = m->r[mid].hi;
            *lo_out = m->r[mid].lo;
            *gen_out = m->gen;
            break;
        }
    }
    atomic_fetch_sub(&g_readers[b], 1);
    return end;
}
