/* sampler_hot.c — a program for the tools' sampler views: `in_step` runs inside spans of
 * site "step", `hidden_hot` as long outside any span, ROUNDS times (argv[1], default 300),
 * about 1 ms each. Built with frame pointers; records per the JAGER_* environment. */
#include <stdlib.h>

#include "jager.h"

static volatile unsigned long sink;

__attribute__((noinline)) void tick(void) { __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) void hidden_hot(long n)
{
    unsigned long x = sink;
    for (long k = 0; k < n; k++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        if ((x & 0xfffff) == 0) tick();
    }
    sink = x;
}

__attribute__((noinline)) void in_step(long n)
{
    unsigned long x = sink;
    for (long k = 0; k < n; k++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        if ((x & 0xfffff) == 0) tick();
    }
    sink = x;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    if (jager_init(NULL) != JAGER_OK) return 1;
    jager_site step = jager_site_register("step", __FILE__, __LINE__);
    for (int i = 0; i < rounds; i++) {
        jager_span s = jager_span_begin(step);
        in_step(1000000);
        jager_span_end(s);
        hidden_hot(1000000);
    }
    jager_shutdown();
    return 0;
}
