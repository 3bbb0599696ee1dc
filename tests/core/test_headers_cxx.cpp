// The public headers compile as C++ and the scoped macro works there too.
#include "jager.h"
#include "jager_record.h"
#include "jager_reader.h"
#include "jager_plugin.h"

#include <cstdio>
#include <cstring>
static int scoped_calls(int n)
{
    for (int i = 0; i < n; i++) {
        JAGER_SPAN("cxx.scoped");
    }
    return n;
}

int main()
{
    jager_config c;
    jager_config_init(&c);
    c.quiet = 1;
    if (jager_init(&c) != JAGER_OK) return 1;
    scoped_calls(5);
    jager_site s = jager_site_register("cxx.scoped", __FILE__, 12);
    jager_site_stat st;
    std::memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    if (jager_site_stats(s, &st) != JAGER_OK || st.calls != 5) {
        std::printf("expected 5 calls, got %llu\n", (unsigned long long)st.calls);
        return 1;
    }
    jager_shutdown();
    std::puts("1 passed, 0 failed");
    return 0;
}
