/* rec_split: slow calls that are designed work, and one that is a real tail.
 *   ordinal FILE   40 cycles × 5 calls of `eos`; the 3rd call of every cycle does SLOW× the
 *                  work (one material region is larger) → calls_differ_by_input, no slow_region
 *   attr FILE      the same calls in a shuffled order each cycle, each with attribute
 *                  region = 0..4; region 3 does SLOW× the work → calls_differ_by_input by region
 *   path FILE      40 cycles: one call of `eos` inside `coarse` doing SLOW× the work, then four
 *                  inside `fine` → calls_differ_by_input by call path (the parent), no slow_region
 *   attrtail FILE  attr, and a pseudo-random quarter of the region-3 calls 10× slower again
 *                  (prints how many) → calls_differ_by_input by region and a slow_region in the
 *                  region = 3 group: a tail inside one side of the split
 *   tail FILE      the same loop, a pseudo-random fifth of the calls SLOW× slower, wherever they
 *                  fall → slow_region (a tail no input explains) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager.h"

/* The slow calls' work in units (~65 µs each): long enough (~6 ms) that a loaded machine's
 * time slices even out over a call, so the slow calls of a split have no tail of their own
 * unless the program makes one (hunt_rules_time.c judges each group's tail too). */
#define SLOW 100

static volatile double sink;

static void work(int units)
{
    for (int u = 0; u < units; u++)
        for (int i = 0; i < 20000; i++) sink += (double)i * 1e-9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    setenv("JAGER_OUTPUT", argv[2], 1);
    if (jager_init(NULL) != JAGER_OK) return 3;
    jager_site cycle = jager_site_register("cycle", __FILE__, __LINE__);
    jager_site eos = jager_site_register("eos", __FILE__, __LINE__);
    int attrtail = !strcmp(argv[1], "attrtail");
    int mode = !strcmp(argv[1], "ordinal") ? 0 : !strcmp(argv[1], "attr") || attrtail ? 1 : 2;
    if (!strcmp(argv[1], "path")) {
        jager_site coarse = jager_site_register("coarse", __FILE__, __LINE__);
        jager_site fine = jager_site_register("fine", __FILE__, __LINE__);
        for (int c = 0; c < 40; c++) {
            jager_span cs = jager_span_begin(cycle);
            jager_span p = jager_span_begin(coarse), s = jager_span_begin(eos);
            work(SLOW);
            jager_span_end(s);
            jager_span_end(p);
            p = jager_span_begin(fine);
            for (int k = 0; k < 4; k++) {
                s = jager_span_begin(eos);
                work(1);
                jager_span_end(s);
            }
            jager_span_end(p);
            jager_span_end(cs);
        }
        jager_shutdown();
        return 0;
    }
    int tails = 0;
    for (int c = 0; c < 40; c++) {
        jager_span cs = jager_span_begin(cycle);
        int order[5] = {0, 1, 2, 3, 4};
        if (mode == 1)
            for (int i = 4; i > 0; i--) {
                int j = (int)(next() % (uint64_t)(i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        for (int k = 0; k < 5; k++) {
            int region = order[k];
            jager_span s = jager_span_begin(eos);
            if (mode == 1) {
                jager_attr a = {.key = "region", .kind = JAGER_ATTR_I64, .value.i64 = region};
                jager_span_set_attrs(s, &a, 1);
            }
            int slow = mode == 0 ? k == 2 : mode == 1 ? region == 3 : next() % 5 == 0;
            int tail = slow && attrtail && next() % 4 == 0;
            tails += tail;
            work(slow ? (tail ? 10 * SLOW : SLOW) : 1);
            jager_span_end(s);
        }
        jager_span_end(cs);
    }
    jager_shutdown();
    if (attrtail) printf("%d\n", tails);
    return 0;
}
