/* `jager export --format chrome|speedscope|pprof|parquet|csv|folded FILE.jgr [-o OUT]`
 *
 * One streaming pass over the recording through the chosen exporter (export.h). A
 * recording cut or damaged after a good prefix exports that prefix and exits 3 with the
 * reader's message; one with nothing readable exits 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "job.h"
#include "export.h"
#include "model_mpi.h"
#include "toolutil.h"

static void usage(FILE *out)
{
    fputs("usage: jager export --format FORMAT FILE.jgr… | FOLDER [-o OUT] [options]\n"
          "  a job (job file, several rank files, folder): chrome, pprof, parquet and csv write one output\n"
          "  for the job (ranks as processes, a rank label or column, MPI messages as flow arrows);\n"
          "  speedscope and folded one output per rank, OUT with .rank<R> before its suffix\n"
          "\n"
          "formats:\n"
          "  chrome      Chrome Trace Event JSON (Perfetto UI, chrome://tracing)\n"
          "  speedscope  speedscope evented profile, one profile per thread; with sampler samples\n"
          "              also one sampled profile per sampled thread\n"
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
          "  --csv-raw                 CSV text cells as recorded: no apostrophe before a cell that\n"
          "                            starts with = + - @ tab or CR (a spreadsheet runs those)\n"
          "  --sample-weight time|samples\n"
          "                            speedscope's sampled profiles: CPU time per sample (default)\n"
          "                            or 1 per sample\n"
          "\n"
          "Parquet and CSV columns: thread, time_ns (or start_ns/end_ns) in ns on the\n"
          "recording's monotonic clock (INT64, exact; not a wall-clock timestamp), then the\n"
          "event's fields with ids resolved to names. Chrome times are us since the start.\n"
          "\n"
          "exit codes: 0 ok, 1 usage or the output cannot be written, 2 unreadable input,\n"
          "3 partial (cut or damaged after a good prefix: the good prefix was exported)\n",
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
static const cli_choice sample_weights[] = {
    {"time", EXPORT_SAMPLE_WEIGHT_TIME}, {"samples", EXPORT_SAMPLE_WEIGHT_SAMPLES}, {NULL, 0}};
static const cli_choice dict_modes[] = {
    {"auto", EXPORT_DICT_AUTO}, {"never", EXPORT_DICT_NEVER}, {"plain", EXPORT_DICT_NEVER},
    {"always", EXPORT_DICT_ALWAYS}, {NULL, 0}};

/* errno values that blame the output, not the recording (see cmd_export). */
static int output_errno(int e)
{
    switch (e) {
    case ENOSPC: case EDQUOT: case EFBIG: case EIO: case EPIPE: case EACCES: case EPERM: case EROFS:
    case ENOENT: case ENOTDIR: case EISDIR: case EEXIST: case ENXIO: case ENAMETOOLONG: case ELOOP:
    case ETXTBSY: case EBADF:
        return 1;
    default:
        return 0;
    }
}

/* One recording through one exporter. */
static int export_one(const exporter *ex, jager_reader *r, const export_opts *o)
{
    /* Stacks and symbols are written late; a format that resolves them reads the tables
     * first. An error here is met again (and reported) by the streaming pass. */
    if (ex->needs_tables && jager_reader_load_tables(r) != JAGER_OK) jager_reader_rewind(r);
    /* The output is the exporter's to open and write: when that fails for the output's
     * sake (a missing folder, no permission, a full disk, a closed pipe: the errno says
     * so) the exit is 1, as `report`'s; out of memory or a bad record stays 2. */
    errno = 0;
    void *st = ex->open(r, o);
    if (!st) return output_errno(errno) ? JAGER_EXIT_USAGE : JAGER_EXIT_INPUT;
    jager_event ev;
    int rc, write_failed = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        if (ex->event(st, &ev) != 0) {
            write_failed = 1;
            break;
        }
    }
    if (!write_failed && ex->finish(st) != 0) write_failed = 1;
    int e = errno; /* the exporter said why */
    ex->free(st);
    if (write_failed) return output_errno(e) ? JAGER_EXIT_USAGE : JAGER_EXIT_INPUT;
    /* As every command: a file cut or damaged after a good prefix exported that prefix
     * (exit 3, partial), one with nothing readable is bad input (exit 2). */
    return cli_finish("export", o->input, r, rc);
}

/* Every part of a job through one exporter into one output (ex->part given). */
static int export_job(const exporter *ex, const jm_job *job, export_opts *o)
{
    jm_mpi *mpi = NULL;
    if (jm_mpi_build(job, &mpi)) {
        fprintf(stderr, "jager export: out of memory\n");
        return JAGER_EXIT_INPUT;
    }
    const jm_mpi *mv = mpi && mpi->ncalls ? mpi : NULL;
    /* the job's time origin: the earliest part start on the job's clock */
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < job->n; i++) {
        jager_reader_info info = {.struct_size = sizeof info};
        jager_reader_get_info(job->parts[i].r, &info);
        uint64_t t = mv ? jm_mpi_job_time(mv, (uint32_t)i, info.start_ns) : info.start_ns;
        if (info.start_ns && t < base) base = t;
    }
    if (base == UINT64_MAX) base = 0;
    o->job = 1;
    jager_reader *r0 = job->parts[0].r;
    if (ex->needs_tables)
        for (size_t i = 0; i < job->n; i++)
            if (jager_reader_load_tables(job->parts[i].r) != JAGER_OK) jager_reader_rewind(job->parts[i].r);
    errno = 0;
    void *st = ex->open(r0, o);
    if (!st) {
        jm_mpi_free(mpi);
        return output_errno(errno) ? JAGER_EXIT_USAGE : JAGER_EXIT_INPUT;
    }
    int code = JAGER_EXIT_OK, write_failed = 0;
    for (size_t i = 0; i < job->n && !write_failed; i++) {
        jager_reader *r = job->parts[i].r;
        export_part ep = {(uint32_t)i, (uint32_t)job->n, job->parts[i].rank, job->parts[i].label, mv, base,
                          job->missing, job->nmissing};
        if (ex->part(st, r, &ep) != 0) {
            write_failed = 1;
            break;
        }
        jager_event ev;
        int rc;
        while ((rc = jager_reader_next(r, &ev)) > 0) {
            if (ex->event(st, &ev) != 0) {
                write_failed = 1;
                break;
            }
        }
        if (!write_failed) {
            int c = cli_finish("export", job->parts[i].label, r, rc);
            if (c > code) code = c;
        }
    }
    if (!write_failed && ex->finish(st) != 0) write_failed = 1;
    int e = errno;
    ex->free(st);
    if (!write_failed) {
        fprintf(stderr, "jager export: %zu rank(s)", job->n);
        if (mv) fprintf(stderr, ", %zu message(s)", mv->nmsgs);
        fprintf(stderr, " -> %s\n", o->out);
    }
    jm_mpi_free(mpi);
    if (write_failed) return output_errno(e) ? JAGER_EXIT_USAGE : JAGER_EXIT_INPUT;
    return code;
}

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
        {.name = "--sample-weight", .kind = CLI_CHOICE, .dest = &o.sample_weight, .choices = sample_weights,
         .bad = "--sample-weight must be time or samples, not '%s'"},
        {.name = "--zstd-level", .kind = CLI_UINT, .dest = &level, .min = 1, .max = 19, .bad = "--zstd-level must be 1..19, not '%s'"},
        {.name = "--csv-raw", .kind = CLI_FLAG, .dest = &o.csv_raw, .flag_value = 1},
        {.name = "--row-group-rows", .kind = CLI_UINT, .dest = &rows, .min = 1, .max = 1u << 30,
         .bad = "--row-group-rows must be 1..1073741824, not '%s'"},
    };
    const cli_spec spec = {"export", usage, opts, sizeof opts / sizeof opts[0], 1, (size_t)argc, 0, NULL};
    size_t npos;
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (!inputs) return JAGER_EXIT_INPUT;
    int parsed = cli_parse(&spec, argc, argv, inputs, &npos);
    o.input = inputs[0];
    if (parsed) {
        free(inputs);
        return cli_parse_exit(parsed);
    }
    o.zstd_level = (int)level;
    o.row_group_rows = (uint32_t)rows;
    if (!format) {
        fprintf(stderr, "jager export: --format is required (%s)\n", export_format_names());
        usage(stderr);
        free(inputs);
        return JAGER_EXIT_USAGE;
    }
    const exporter *ex = export_find(format);
    if (!ex) {
        fprintf(stderr, "jager export: unknown format '%s' (%s)\n", format, export_format_names());
        free(inputs);
        return JAGER_EXIT_USAGE;
    }

    jm_job *job = cli_open_job("export", inputs, npos);
    free(inputs);
    if (!job) return JAGER_EXIT_INPUT;
    char *owned_out = NULL;
    int code = JAGER_EXIT_OK;
    if (!o.out) {
        if (!(owned_out = default_output(o.input, ex->default_suffix))) {
            fprintf(stderr, "jager export: out of memory\n");
            jm_job_free(job);
            return JAGER_EXIT_INPUT;
        }
        o.out = owned_out;
    }
    if (job->n == 1 && !job->from_job_file && npos == 1) {
        code = export_one(ex, job->parts[0].r, &o);
    } else if (ex->part) {
        code = export_job(ex, job, &o);
    } else { /* a job file: one output per rank, "trace.json" -> "trace.rank3.json" */
        const char *base = o.out;
        for (size_t i = 0; i < job->n; i++) {
            size_t n = strlen(base) + 32;
            char *rank_out = malloc(n);
            if (!rank_out) {
                code = JAGER_EXIT_INPUT;
                break;
            }
            const char *dot = strrchr(base, '.'), *slash = strrchr(base, '/');
            size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - base) : strlen(base);
            snprintf(rank_out, n, "%.*s.rank%lld%s", (int)stem, base, (long long)job->parts[i].rank, base + stem);
            export_opts po = o;
            po.out = rank_out;
            po.input = job->parts[i].label;
            int c = export_one(ex, job->parts[i].r, &po);
            if (c == JAGER_EXIT_OK) fprintf(stderr, "jager export: rank %lld -> %s\n", (long long)job->parts[i].rank, rank_out);
            if (c > code) code = c;
            free(rank_out);
        }
    }
    jm_job_free(job);
    free(owned_out);
    return code;
}
