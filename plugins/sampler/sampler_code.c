/* sampler_code.c — where code is: the executable mappings of /proc/self/maps (file-backed
 * or anonymous, so JIT code counts), sorted, for the drain (never the handler).
 *
 * A frame-pointer walk through code built without frame pointers reads whatever the
 * register held as the next frame; as long as those words stay inside the stack, the walk
 * goes on and records "return addresses" that are small integers or stack addresses
 * (XSBench's OpenMP workers through libgomp: 0x43, then 0x7ffd…). perf's own frame-pointer
 * call graphs show the same junk. The drain cuts a stack at its first return address that
 * lies in no executable mapping and marks the sample SMP_F_NOT_CODE, so flame graphs do not
 * grow roots out of junk. A miss re-reads the mappings first (a library loaded since the
 * last read is not mistaken for junk), but at most once per drain and per scan period:
 * junk misses on every sample, and /proc/self/maps is not free to parse. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sampler_internal.h"

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void smp_code_refresh(smp_state *st)
{
    st->code_read_ms = mono_ms();
    st->code_read = 1;
    st->code_n = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) < 3 || perms[2] != 'x') continue;
        if (st->code_n == st->code_cap) {
            uint32_t cap = st->code_cap ? st->code_cap * 2 : 256;
            smp_region *v = realloc(st->code, cap * sizeof *v);
            if (!v) break; /* keep what fits: a miss then only cuts less precisely */
            st->code = v;
            st->code_cap = cap;
        }
        st->code[st->code_n++] = (smp_region){lo, hi}; /* /proc lists mappings in address order */
    }
    fclose(f);
}

static int in_code(const smp_state *st, uint64_t addr)
{
    uint32_t lo = 0, hi = st->code_n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (addr < st->code[mid].lo) hi = mid;
        else if (addr >= st->code[mid].hi) lo = mid + 1;
        else return 1;
    }
    return 0;
}

uint32_t smp_code_cut(smp_state *st, const uint64_t *ips, uint32_t n, int *refreshed, uint16_t *flags)
{
    for (uint32_t k = 1; k < n; k++) { /* ips[0] is the interrupted pc: code by definition */
        uint64_t a = ips[k] - 1;        /* a return address points after its call */
        if (in_code(st, a)) continue;
        /* junk misses every time: re-read at most once per drain and once per scan period */
        if (!*refreshed && (!st->code_read || mono_ms() - st->code_read_ms >= st->scan_ms)) {
            *refreshed = 1;
            smp_code_refresh(st);
            if (in_code(st, a)) continue;
        }
        *flags |= SMP_F_NOT_CODE;
        return k;
    }
    return n;
}

void smp_code_free(smp_state *st)
{
    free(st->code);
    st->code = NULL;
    st->code_n = st->code_cap = 0;
}
