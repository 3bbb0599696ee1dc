/* supply_prog.c — a C program for the JAGER_LOCK tests: jager_init from the environment,
 * then its "work" (a line on stdout) unless init refused. */
#include <stdio.h>

#include "jager.h"

int victim_value(void);

int main(void)
{
    jager_status st = jager_init(NULL);
    printf("init %d %s\n", (int)st, st == JAGER_E_SUPPLY_CHAIN ? "JAGER_E_SUPPLY_CHAIN" : jager_strerror(st));
    if (st != JAGER_OK) return 3;
    printf("work %d\n", victim_value());
    jager_shutdown();
    return 0;
}
