/* Compiled as C and C++ in every standard by headers-test.sh with -Wall -Wextra -pedantic
 * -Werror (GCC and Clang); linked and run, it checks the scoped macro still counts. */
#include "jager.h"
#include "jager_plugin.h"
#include "jager_reader.h"

#include <stdio.h>

static int spans(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        JAGER_SPAN("probe.a");
        JAGER_SPAN("probe.b");
        s += i;
    }
    return s;
}

int main(void)
{
    jager_config c;
    jager_config_init(&c);
    c.quiet = 1;
    if (jager_init(&c) != JAGER_OK) return 1;
    spans(4);
    int bad = 0;
    const char *names[2] = {"probe.a", "probe.b"};
    for (int k = 0; k < 2; k++) {
        jager_site_stat st;
        jager_site s = jager_site_register(names[k], __FILE__, (uint32_t)(13 + k)); /* the lines of the two spans */
        st.struct_size = sizeof st;
        if (jager_site_stats(s, &st) != JAGER_OK || st.calls != 4) {
            printf("%s: %lu calls, expected 4\n", names[k], (unsigned long)st.calls);
            bad = 1;
        }
    }
    jager_shutdown();
    return bad;
}
