/* hotspots — a small C program with three known performance problems, for `jager hunt`.
 *
 *   JAGER_OUTPUT=hotspots.jgr ./hotspots [steps]
 *   jager hunt hotspots.jgr
 *
 * Each step of `simulate`:
 *   - `lookup` (a hash-table probe) usually takes microseconds, but every 5th call rebuilds
 *     the table first: a slow tail            → hunt: slow_region in `lookup`
 *   - `assemble` allocates, fills and frees an 8 MiB scratch matrix on every call and says
 *     so with jager_span_end_bytes()           → hunt: allocation_hotspot in `assemble`
 *   - `parse_row` parses text rows; a quarter of them are malformed and fail with
 *     jager_span_error()                      → hunt: exception_hotspot in `parse_row`
 *   - `relax` is a plain, well-behaved stencil sweep: no finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager.h"

#define TABLE 4096
#define SCRATCH_BYTES (8u << 20)
#define ROWS 64
#define GRID 128

static jager_site s_simulate, s_step, s_lookup, s_assemble, s_parse, s_relax;
static uint64_t table[TABLE];
static volatile double sink;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* A probe; every 5th call rebuilds the whole table many times over (the slow tail). */
static uint64_t lookup(uint64_t key, int call)
{
    jager_span sp = jager_span_begin(s_lookup);
    if (call % 5 == 4)
        for (int round = 0; round < 64; round++)
            for (int i = 0; i < TABLE; i++) table[i] = mix(table[i] + (uint64_t)round);
    uint64_t h = 0;
    for (int i = 0; i < 512; i++) h += table[mix(key + (uint64_t)i) % TABLE];
    jager_span_end(sp);
    return h;
}

/* Allocates a fresh scratch matrix per call: page faults and allocator work every time. */
static double assemble(int step)
{
    jager_span sp = jager_span_begin(s_assemble);
    double *m = malloc(SCRATCH_BYTES);
    double sum = 0;
    if (m) {
        size_t n = SCRATCH_BYTES / sizeof *m;
        for (size_t i = 0; i < n; i++) m[i] = (double)(i + (size_t)step);
        for (size_t i = 0; i < n; i += 512) sum += m[i];
        free(m);
    }
    jager_span_end_bytes(sp, SCRATCH_BYTES);
    return sum;
}

/* Parses a row of numbers; malformed rows fail (the error path taken in a loop). */
static double parse_row(int row)
{
    jager_span sp = jager_span_begin(s_parse);
    char text[2048];
    size_t o = 0;
    for (int i = 0; i < 120 && o < sizeof text - 32; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%d.%03d ", row + i, (row * 7 + i) % 1000);
    if (row % 4 == 3) snprintf(text + o / 2, sizeof text - o / 2, "x%d oops", row); /* cut and spoil it */
    double sum = 0;
    char *p = text, *end;
    for (;;) {
        double v = strtod(p, &end);
        if (end == p) break;
        sum += v;
        p = end;
    }
    while (*p == ' ') p++;
    if (*p) {
        char msg[64];
        snprintf(msg, sizeof msg, "bad value at column %d", (int)(p - text));
        jager_span_error(sp, msg);
    }
    jager_span_end(sp);
    return sum;
}

static double grid_a[GRID][GRID], grid_b[GRID][GRID];

static void relax(void)
{
    jager_span sp = jager_span_begin(s_relax);
    for (int it = 0; it < 4; it++) {
        for (int i = 1; i < GRID - 1; i++)
            for (int j = 1; j < GRID - 1; j++)
                grid_b[i][j] = 0.25 * (grid_a[i - 1][j] + grid_a[i + 1][j] + grid_a[i][j - 1] + grid_a[i][j + 1]);
        memcpy(grid_a, grid_b, sizeof grid_a);
    }
    jager_span_end(sp);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    if (steps < 1) steps = 1;
    jager_init(NULL);
    s_simulate = jager_site_register("simulate", __FILE__, __LINE__);
    s_step = jager_site_register("step", __FILE__, __LINE__);
    s_lookup = jager_site_register("lookup", __FILE__, __LINE__);
    s_assemble = jager_site_register("assemble", __FILE__, __LINE__);
    s_parse = jager_site_register("parse_row", __FILE__, __LINE__);
    s_relax = jager_site_register("relax", __FILE__, __LINE__);
    for (int i = 0; i < TABLE; i++) table[i] = mix((uint64_t)i);
    grid_a[0][GRID / 2] = 1.0;

    double acc = 0;
    int call = 0, row = 0;
    jager_span sim = jager_span_begin(s_simulate);
    for (int step = 0; step < steps; step++) {
        jager_span st = jager_span_begin(s_step);
        for (int k = 0; k < 32; k++) acc += (double)(lookup((uint64_t)k, call++) & 0xff);
        acc += assemble(step);
        for (int r = 0; r < ROWS; r++) acc += parse_row(row++);
        relax();
        jager_span_end(st);
    }
    jager_span_end(sim);
    sink = acc + grid_a[GRID / 2][GRID / 2];
    printf("hotspots: %d steps done\n", steps);
    jager_shutdown();
    return 0;
}
