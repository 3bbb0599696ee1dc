#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *tu_tmp_path(const char *suffix)
{
    static __thread char buf[8][512];
    static __thread int slot;
    static int counter;
    /* A salt from the clock: a pid is reused within one suite run, and a file some earlier
     * process of that pid left behind would be taken for one this test made. */
    static unsigned long salt;
    if (!__atomic_load_n(&salt, __ATOMIC_RELAXED)) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        __atomic_store_n(&salt, ((unsigned long)t.tv_sec * 1000000000ul + (unsigned long)t.tv_nsec) | 1ul, __ATOMIC_RELAXED);
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    char *b = buf[slot++ & 7];
    snprintf(b, sizeof buf[0], "%s/jager-test-%d-%lx-%d%s", dir, (int)getpid(), __atomic_load_n(&salt, __ATOMIC_RELAXED),
             __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED), suffix ? suffix : "");
    return b;
}

jager_config tu_config(uint64_t ring_bytes)
{
    jager_config c;
    jager_config_init(&c);
    c.quiet = 1;
    /* The recording's mechanism is tested event for event: every span an event. The default
     * (JAGER_SAMPLE_AUTO, thinning hot sites) has its own cases in test_spans.c. */
    c.sample_mode = JAGER_SAMPLE_ALL;
    c.sample_n = 1;
    if (ring_bytes) c.ring_bytes = ring_bytes;
    return c;
}

uint8_t *tu_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(n > 0 ? (size_t)n : 1);
    if (d && n > 0 && fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        d = NULL;
    }
    fclose(f);
    if (d && size) *size = (size_t)n;
    return d;
}

int tu_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, size, f);
    return (fclose(f) == 0 && w == size) ? 0 : -1;
}

void tu_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
