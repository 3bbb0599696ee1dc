/* `jager export --format chrome|speedscope|pprof|parquet|csv|folded FILE.jgr [-o OUT]`
 *
 * One streaming pass over the recording through the chosen exporter (export.h). A
 * recording cut or damaged after a good prefix exports that prefix and exits 3 with the
 * reader's message; one with nothing readable exits 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
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
          "              pauses also OUT's name with .gc.pb.gz: GC time per trigger stack;\n"
          "              with sampler samples .cpu.pb.gz: CPU time per sampled stack\n"
          "  parquet     a folder with one .parquet file per event type\n"
          "  csv         a folder with one .csv file per event type\n"
          "  folded      the sampler's stacks folded for flamegraph.pl / inferno\n"
          "\n"
          "options:\n"
          "  -o, --output OUT          output file (folder for parquet/csv); default FILE's stem\n"
          "                            plus .trace.json, .speedscope.json, .pb.gz, .parquet/, .csv/,\n"
          "                            .folded\n"
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

static const cli_choice codecs[] = {{"none", 0}, {"uncompressed", 0}, {"zstd", 6}, {NULL, 0}};
static const cli_choice dict_modes[] = {
    {"auto", EXPORT_DICT_AUTO}, {"never", EXPORT_DICT_NEVER}, {"plain", EXPORT_DICT_NEVER},
    {"always", EXPORT_DICT_ALWAYS}, {NULL, 0}};

int cmd_export(int argc, char **argv)
{
    export_opts o = {.parquet_codec = 6, .zstd_level = 3, .dict_mode = EXPORT_DICT_AUTO, .row_group_rows = 65536};
    const char *format = NULL;
    uint64_t level = 3, rows = 65536;
    const cli_opt opts[] = {
        CLI_STRING_OPT("--format", "-f", &format),
        CLI_STRING_OPT("--output", "-o", &o.out),
        {.name = "--parquet-codec", .kind = CLI_CHOICE, .dest = &o.parquet_codec, .choices = codecs,
         .bad = "--parquet-codec must be none or zstd, not '%s'"},
        {.name = "--parquet-dict", .kind = CLI_CHOICE, .dest = &o.dict_mode, .choices = dict_modes,
         .bad = "--parquet-dict must be auto, never or always, not '%s'"},
        {.name = "--zstd-level", .kind = CLI_UINT, .dest = &level, .min = 1, .max = 19, .bad = "--zstd-level must be 1..19, not '%s'"},
        {.name = "--row-group-rows", .kind = CLI_UINT, .dest = &rows, .min = 1, .max = 1u << 30,
         .bad = "--row-group-rows must be 1..1073741824, not '%s'"},
    };
    const cli_spec spec = {"export", usage, opts, sizeof opts / sizeof opts[0], 1, 1, 0, NULL};
    size_t npos;
    int parsed = cli_parse(&spec, argc, argv, &o.input, &npos);
    if (parsed) return cli_parse_exit(parsed);
    o.zstd_level = (int)level;
    o.row_group_rows = (uint32_t)rows;
    if (!format) {
        fprintf(stderr, "jager export: --format is required (chrome, speedscope, pprof, parquet, csv, folded)\n");
        usage(stderr);
        return JAGER_EXIT_USAGE;
    }
    const exporter *ex = export_find(format);
    if (!ex) {
        fprintf(stderr, "jager export: unknown format '%s' (chrome, speedscope, pprof, parquet, csv)\n", format);
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
