/* Reading speed of the .jgr reader against liblz4 alone on the same file, side by side
 * in one run (issue 5's target: reading + iterating ≥ 1/4 of `lz4 -d`'s speed).
 * usage: file_bench_reader [FILE [EVENTS]] — records EVENTS spans (default 10 million)
 * into FILE first when EVENTS > 0. Not a test: figures, not assertions. */
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jager_reader.h"
#include "testutil.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : tu_tmp_path(".jgr");
    long events = argc > 2 ? atol(argv[2]) : 10000000;
    if (events > 0) {
        jager_config c = tu_config(64u << 20);
        c.output = path;
        if (jager_init(&c) != JAGER_OK) return 1;
        jager_site s = jager_site_register("bench", "bench.c", 1);
        for (long i = 0; i < events; i++) jager_span_end(jager_span_begin(s));
        jager_shutdown();
    }
    size_t size;
    uint8_t *d = tu_read_file(path, &size);
    if (!d) return 1;
    size_t cap = 8u << 20;
    uint8_t *out = malloc(cap);
    LZ4F_dctx *dc;
    LZ4F_createDecompressionContext(&dc, LZ4F_VERSION);
    printf("%-28s %10s %10s %12s\n", "", "seconds", "MB/s", "vs liblz4");
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        size_t off = 0, content = 0;
        while (off < size) { /* every frame, checksums verified, as `lz4 -d` does */
            size_t in = size - off, o = cap;
            size_t rc = LZ4F_decompress(dc, out, &o, d + off, &in, NULL);
            if (LZ4F_isError(rc)) return 1;
            off += in;
            content += o;
        }
        double t_lz4 = now() - t0;
        t0 = now();
        jager_reader *r;
        if (jager_reader_open_memory(d, size, &r) != JAGER_OK) return 1;
        jager_event ev;
        uint64_t n = 0, sum = 0;
        while (jager_reader_next(r, &ev) > 0) {
            n++;
            sum += ev.end_ns - ev.time_ns;
        }
        jager_reader_close(r);
        double t_mem = now() - t0;
        t0 = now();
        if (jager_reader_open(path, &r) != JAGER_OK) return 1;
        while (jager_reader_next(r, &ev) > 0) sum += ev.time_ns;
        jager_reader_close(r);
        double t_file = now() - t0;
        printf("%zu bytes, %zu decompressed, %llu events (checksum %llu)\n", size, content, (unsigned long long)n,
               (unsigned long long)(sum & 0xff));
        printf("%-28s %10.3f %10.0f %12s\n", "liblz4 decompress (memory)", t_lz4, content / t_lz4 / 1e6, "1.00");
        printf("%-28s %10.3f %10.0f %12.2f\n", "reader + iterate (memory)", t_mem, content / t_mem / 1e6, t_lz4 / t_mem);
        printf("%-28s %10.3f %10.0f %12.2f\n", "reader + iterate (file)", t_file, content / t_file / 1e6, t_lz4 / t_file);
    }
    LZ4F_freeDecompressionContext(dc);
    free(out);
    free(d);
    return 0;
}
