#include "export_pprof_profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "enc_protobuf.h"

int pp_profile_init(pp_profile *p)
{
    memset(p, 0, sizeof *p);
    return tu_strdict_put(&p->strings, "", 0) == 0 ? 0 : -1;
}

uint64_t pp_str(pp_profile *p, const char *s)
{
    int64_t i = tu_strdict_put(&p->strings, s ? s : "", s ? (uint32_t)strlen(s) : 0);
    if (i < 0) {
        p->oom = 1;
        return 0;
    }
    return (uint64_t)i;
}

void pp_value_type(pp_profile *p, uint32_t field, const char *type, const char *unit)
{
    tu_buf m = {0};
    if (pb_varint(&m, 1, pp_str(p, type)) || pb_varint(&m, 2, pp_str(p, unit)) || pb_bytes(&p->body, field, m.data, m.len))
        p->oom = 1;
    tu_buf_free(&m);
}

static int gzip_to_file(const uint8_t *data, size_t len, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "jager export: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31 /* gzip wrapper */, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        fprintf(stderr, "jager export: zlib: deflateInit2 failed\n");
        if (f != stdout) fclose(f);
        return -1;
    }
    unsigned char out[65536];
    int rc = 0, zr;
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len; /* profiles stay far below 4 GiB */
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        zr = deflate(&z, Z_FINISH);
        size_t n = sizeof out - z.avail_out;
        if (zr == Z_STREAM_ERROR || fwrite(out, 1, n, f) != n) {
            rc = -1;
            break;
        }
    } while (zr != Z_STREAM_END);
    deflateEnd(&z);
    if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) rc = -1;
    if (rc) fprintf(stderr, "jager export: writing %s failed: %s\n", path, strerror(errno));
    return rc;
}

int pp_profile_write(pp_profile *p, const char *path)
{
    /* the string table last: every string is interned by now */
    for (uint32_t i = 0; i < p->strings.count && !p->oom; i++) {
        uint32_t len;
        const char *e = tu_strdict_get(&p->strings, i, &len);
        if (pb_bytes(&p->body, 6, e, len)) p->oom = 1;
    }
    if (p->oom) {
        fprintf(stderr, "jager export: out of memory\n");
        return -1;
    }
    return gzip_to_file(p->body.data, p->body.len, path);
}

void pp_profile_free(pp_profile *p)
{
    tu_buf_free(&p->body);
    tu_strdict_free(&p->strings);
}
