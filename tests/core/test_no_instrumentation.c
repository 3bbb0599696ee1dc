/* With JAGER_NO_INSTRUMENTATION the macros compile to nothing: no site is registered. */
#define JAGER_NO_INSTRUMENTATION 1
#include <stdio.h>

#include "jager.h"

int main(void)
{
    jager_config c;
    jager_config_init(&c);
    c.quiet = 1;
    if (jager_init(&c) != JAGER_OK) return 1;
    for (int i = 0; i < 3; i++) {
        JAGER_SPAN("never");
        JAGER_LOG(JAGER_SEV_INFO, "never");
        JAGER_MARK("never");
    }
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    /* the only site is the core's own calibration site; nothing was emitted */
    if (st.events_emitted != 0 || jager_site_register("never", __FILE__, 14) != 2) {
        printf("macros were not compiled out: %llu events\n", (unsigned long long)st.events_emitted);
        return 1;
    }
    puts("1 passed, 0 failed");
    return 0;
}
