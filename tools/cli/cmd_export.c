/* `jager export --format chrome|speedscope|pprof|parquet|csv FILE.jgr [-o OUT]`
 *
 * One streaming pass over the recording through the chosen exporter (export.h). A
 * recording cut or damaged after a good prefix exports that prefix and exits 3 with the
 * reader's message; one with nothing readable exits 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "export.h"
#include "toolutil.h"

static void usage(FILE *out)
{
    fputs("usage: jager export --format FORMAT FILE.jgr [-o OUT] [options]\n"
          "\n"
          "formats:\n"
          "  chrome      Chrome Trace Event JSON (Perfetto UI, chrome://tracing)\n"
          "  speedscope  speedscope evented profile, one profile per thread\n"
          "  pprof       gzip'd profile.proto: exclusive wall time per span path; with GC\n"
          "              pauses also OUT's name with .gc.pb.gz: GC time per trigger stack\n"
          "  parquet     a folder with one .parquet file per event type\n"
          "  csv         a folder with one .csv file per event type\n"
          "\n"
          "options:\n"
          "  -o, --output OUT          output file (folder for parquet/csv); default FILE's stem\n"
          "                            plus .trace.json, .speedscope.json, .pb.gz, .parquet/, .csv/\n"
          "  --parquet-codec none|zstd page compression (default zstd)\n"
          "  --parquet-dict auto|never|always\n"
          "                            dictionary encoding of string columns (default auto:\n"
          "                            when distinct values are at most half the rows)\n"
          "  --zstd-level N            1..19 (default 3)\n"
          "  --row-group-rows N        rows per Parquet row group (default 65536); bounds memory\n"
          "\n"
          "Parquet and CSV columns: thread, time_ns (or start_ns/end_ns) in ns on the\n"
          "recording's monotonic clock (INT64, exact; not a wall-clock timestamp), then the\n"
          "event's fields with ids resolved to names. Chrome times are us since the start.\n"
          "\n"
          "exit codes: 0 ok, 1 usage, 2 unreadable input, 3 partial (cut or damaged after a good prefix)\n"
          "(the good prefix was exported)\n",
          out);
}

/* "dir/run.jgr" + ".trace.json" -> "dir/run.trace.json" (malloc'd). */
static char *default_output(const char *input, const char *suffix)
{
    size_t n = strlen(input);
    const char *slash = strrchr(input, '/');
    const char *dot = strrchr(input, '.');
    if (dot && (!slash || dot > slash) && dot != input) n = (size_t)(dot - input);
    size_t sl = strlen(suffix);
    char *s = malloc(n + sl + 1);
    if (!s) return NULL;
    memcpy(s, input, n);
    memcpy(s + n, suffix, sl + 1);
    return s;
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (uint32_t)v;
    return 0;
}

int cmd_export(int argc, char **argv)
{
    export_opts o = {.parquet_codec = 6, .zstd_level = 3, .dict_mode = EXPORT_DICT_AUTO, .row_group_rows = 65536};
    const char *format = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return JAGER_EXIT_OK;
        }
        int takes = !strcmp(a, "--format") || !strcmp(a, "-f") || !strcmp(a, "-o") || !strcmp(a, "--output") ||
                    !strcmp(a, "--parquet-codec") || !strcmp(a, "--parquet-dict") || !strcmp(a, "--zstd-level") ||
                    !strcmp(a, "--row-group-rows");
        if (takes && !val) {
            fprintf(stderr, "jager export: %s needs a value\n", a);
            return JAGER_EXIT_USAGE;
        }
        if (!strcmp(a, "--format") || !strcmp(a, "-f")) format = val;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) o.out = val;
        else if (!strcmp(a, "--parquet-codec")) {
            if (!strcmp(val, "none") || !strcmp(val, "uncompressed")) o.parquet_codec = 0;
            else if (!strcmp(val, "zstd")) o.parquet_codec = 6;
            else {
                fprintf(stderr, "jager export: --parquet-codec must be none or zstd, not '%s'\n", val);
                return JAGER_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--parquet-dict")) {
            if (!strcmp(val, "auto")) o.dict_mode = EXPORT_DICT_AUTO;
            else if (!strcmp(val, "never") || !strcmp(val, "plain")) o.dict_mode = EXPORT_DICT_NEVER;
            else if (!strcmp(val, "always")) o.dict_mode = EXPORT_DICT_ALWAYS;
            else {
                fprintf(stderr, "jager export: --parquet-dict must be auto, never or always, not '%s'\n", val);
                return JAGER_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--zstd-level")) {
            uint32_t v;
            if (parse_u32(val, 1, 19, &v)) {
                fprintf(stderr, "jager export: --zstd-level must be 1..19, not '%s'\n", val);
                return JAGER_EXIT_USAGE;
            }
            o.zstd_level = (int)v;
        } else if (!strcmp(a, "--row-group-rows")) {
            if (parse_u32(val, 1, 1u << 30, &o.row_group_rows)) {
                fprintf(stderr, "jager export: --row-group-rows must be 1..%u, not '%s'\n", 1u << 30, val);
                return JAGER_EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "jager export: unknown option '%s'\n", a);
            usage(stderr);
            return JAGER_EXIT_USAGE;
        } else if (!o.input) {
            o.input = a;
            continue;
        } else {
            fprintf(stderr, "jager export: one recording at a time ('%s' and '%s')\n", o.input, a);
            return JAGER_EXIT_USAGE;
        }
        if (takes) i++;
    }
    if (!format) {
        fprintf(stderr, "jager export: --format is required (chrome, speedscope, pprof, parquet, csv)\n");
        usage(stderr);
        return JAGER_EXIT_USAGE;
    }
    const exporter *ex = export_find(format);
    if (!ex) {
        fprintf(stderr, "jager export: unknown format '%s' (chrome, speedscope, pprof, parquet, csv)\n", format);
        return JAGER_EXIT_USAGE;
    }
    if (!o.input) {
        fprintf(stderr, "jager export: no recording given\n");
        usage(stderr);
        return JAGER_EXIT_USAGE;
    }

    int code = JAGER_EXIT_INPUT;
    char *owned_out = NULL;
    void *st = NULL;
    jager_reader *r = cli_open("export", o.input);
    if (!r) goto out;
    if (!o.out) {
        owned_out = default_output(o.input, ex->default_suffix);
        if (!owned_out) {
            fprintf(stderr, "jager export: out of memory\n");
            goto out;
        }
        o.out = owned_out;
    }
    /* Stacks and symbols are written late; a format that resolves them reads the tables
     * first. An error here is met again (and reported) by the streaming pass. */
    if (ex->needs_tables && jager_reader_load_tables(r) != JAGER_OK) jager_reader_rewind(r);

    st = ex->open(r, &o);
    if (!st) goto out;
    jager_event ev;
    int rc;
    int write_failed = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        if (ex->event(st, &ev) != 0) {
            write_failed = 1;
            break;
        }
    }
    if (!write_failed && ex->finish(st) != 0) write_failed = 1;
    if (write_failed) {
        code = JAGER_EXIT_INPUT;
        goto out;
    }
    /* As every command: a file cut or damaged after a good prefix exported that prefix
     * (exit 3, partial), one with nothing readable is bad input (exit 2). */
    code = cli_finish("export", o.input, r, rc);
out:
    if (ex && st) ex->free(st);
    jager_reader_close(r);
    free(owned_out);
    return code;
}
