/* Writes the fuzzer's seed corpus: small real recordings made through the core, their
 * truncated halves, and the same recordings re-framed with *uncompressed* LZ4 blocks
 * (same bytes, same checksums) so that the fuzzer's byte mutations land directly in block
 * contents; and the first one with its EVENTS blocks naming thread indexes the thread table
 * lacks (2^31, 10^8, 2^32 - 1: issue 16 item 5, once a loop and GBs in the tools).
 * usage: DIR */
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_fixture.h"
#include "jgr_edit.h"
#include "testutil.h"

/* Re-frame every LZ4 frame of \p d as header + one stored block + end mark + the
 * original content checksum (valid: the content is unchanged). */
static int write_stored(const char *path, const uint8_t *d, size_t size)
{
    fx_frame fr[256];
    int n = fx_frames(d, size, fr, 256);
    if (n <= 0) return -1;
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    LZ4F_dctx *dc;
    LZ4F_createDecompressionContext(&dc, LZ4F_VERSION);
    uint8_t *buf = malloc(8u << 20);
    int rc = 0;
    for (int i = 0; i < n && buf; i++) {
        const uint8_t *p = d + fr[i].offset;
        if (fr[i].kind == 0) { /* the preamble as is */
            fwrite(p, 1, fr[i].len, f);
            continue;
        }
        size_t out = 8u << 20, in = fr[i].len;
        LZ4F_decompress(dc, buf, &out, p, &in, NULL);
        size_t hdr = 7 + ((p[4] & 0x08) ? 8 : 0) + ((p[4] & 0x01) ? 4 : 0);
        size_t max = (size_t)1 << (8 + 2 * ((p[5] >> 4) & 7));
        if (out > max) { rc = -1; break; }
        fwrite(p, 1, hdr, f);
        uint32_t bs = (uint32_t)out | 0x80000000u, zero = 0;
        fwrite(&bs, 4, 1, f);
        fwrite(buf, 1, out, f);
        fwrite(&zero, 4, 1, f);
        fwrite(p + fr[i].len - 4, 1, 4, f);
    }
    free(buf);
    LZ4F_freeDecompressionContext(dc);
    return (fclose(f) == 0 && rc == 0) ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 1;
    }
    static const int shapes[][2] = {{1, 2}, {2, 5}, {1, 20}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed-%zu.jgr", argv[1], i);
        fx_expect ex;
        if (fx_record(path, shapes[i][0], shapes[i][1], &ex) != 0) {
            fprintf(stderr, "fuzz_seeds: cannot record %s\n", path);
            return 1;
        }
        size_t size;
        uint8_t *d = tu_read_file(path, &size);
        if (!d) return 1;
        snprintf(path, sizeof path, "%s/seed-%zu-half.jgr", argv[1], i);
        if (tu_write_file(path, d, size / 2) != 0) return 1;
        snprintf(path, sizeof path, "%s/seed-%zu-stored.jgr", argv[1], i);
        if (write_stored(path, d, size) != 0) {
            fprintf(stderr, "fuzz_seeds: cannot re-frame %s\n", path);
            return 1;
        }
        if (i == 0) {
            static const uint32_t hostile[] = {2147483648u, 100000000u, 4294967295u};
            for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
                uint32_t ids[2] = {1, hostile[k]};
                uint8_t *o;
                size_t on;
                snprintf(path, sizeof path, "%s/seed-%zu-thread-%u.jgr", argv[1], i, hostile[k]);
                if (tu_jgr_edit(d, size, tu_jgr_retarget_thread, ids, &o, &on) != 0 || tu_write_file(path, o, on) != 0) {
                    fprintf(stderr, "fuzz_seeds: cannot write %s\n", path);
                    return 1;
                }
                free(o);
            }
        }
        free(d);
    }
    return 0;
}
