/* cmd_bench.c — `jager bench run` (measure) and `jager bench store` (keep a baseline). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench_doc.h"
#include "bench_run.h"
#include "commands.h"

#define EXIT_BAD 2

static void usage(FILE *out)
{
    fputs("usage: jager bench run [options] -o RESULT.json -- COMMAND [ARGS...]\n"
          "       jager bench store RESULT.json BASELINE.json\n"
          "run: runs COMMAND under a fresh recording each time (JAGER_OUTPUT is set for it); every site is a\n"
          "kernel, its values per run taken from the recording's exact per-site statistics.\n"
          "  -n, --runs N        measured runs (default 10; 5 or more per side for a verdict)\n"
          "  -w, --warmup N      runs discarded first (default 1)\n"
          "  --budget SECONDS    stop starting runs after this long (default: no budget)\n"
          "  --base-cmd 'SHELL'  a second command, run interleaved with COMMAND (base, head, base, head, ...)\n"
          "  --base-out FILE     where the base command's result goes (required with --base-cmd)\n"
          "  --threshold X       the result's default threshold for `jager compare` (e.g. 0.05 or 5%)\n"
          "  --keep DIR          keep the recordings in DIR\n"
          "  --show-output       show COMMAND's standard output (discarded by default)\n"
          "store: puts RESULT into BASELINE, replacing BASELINE's result of the same machine class\n"
          "(BASELINE is created when missing), so one baseline file can hold several machines.\n"
          "exit status: 0 done, 1 usage, 2 a run failed or a file is bad\n",
          out);
}

static int save_one(jb_result *r, const char *path)
{
    jb_doc d = {0};
    char err[1024];
    jb_result *slot = jb_doc_add_result(&d);
    if (!slot) return -1;
    jb_result_free(slot);
    *slot = *r;
    memset(r, 0, sizeof *r);
    int rc = jb_doc_save(&d, path, err, sizeof err);
    if (rc) fprintf(stderr, "jager bench: %s\n", err);
    jb_doc_free(&d);
    return rc;
}

static int bench_run(int argc, char **argv)
{
    jb_run_opts o = {10, 1, 0, NULL, 0};
    const char *out = NULL, *base_cmd = NULL, *base_out = NULL, *threshold_s = NULL;
    uint64_t runs = 10, warmup = 1;
    double threshold = -1;
    const cli_opt opts[] = {
        {.name = "--runs", .alias = "-n", .kind = CLI_UINT, .dest = &runs, .min = 1, .max = 100000,
         .bad = "--runs wants a number of runs (1..100000), not '%s'"},
        {.name = "--warmup", .alias = "-w", .kind = CLI_UINT, .dest = &warmup, .min = 0, .max = 100000,
         .bad = "--warmup wants a number of runs, not '%s'"},
        {.name = "--budget", .kind = CLI_DOUBLE, .dest = &o.budget_s, .min = 0.001, .max = 1e9,
         .bad = "--budget wants seconds, not '%s'"},
        CLI_STRING_OPT("--output", "-o", &out), CLI_STRING_OPT("--base-cmd", NULL, &base_cmd),
        CLI_STRING_OPT("--base-out", NULL, &base_out), CLI_STRING_OPT("--keep", NULL, &o.keep_dir),
        CLI_STRING_OPT("--threshold", NULL, &threshold_s),
        {.name = "--show-output", .kind = CLI_FLAG, .dest = &o.show_output, .flag_value = 1},
    };
    /* Everything from the command on is the command's: its own options are not ours. */
    const cli_spec spec = {"bench run", usage, opts, sizeof opts / sizeof opts[0], 1, (size_t)argc, 1, "command"};
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    size_t npos = 0;
    if (!pos) return EXIT_BAD;
    int parsed = cli_parse(&spec, argc, argv, pos, &npos);
    if (parsed) { free(pos); return cli_parse_exit(parsed); }
    o.runs = (unsigned)runs;
    o.warmup = (unsigned)warmup;
    if (threshold_s) {
        char *end;
        threshold = strtod(threshold_s, &end);
        if (end != threshold_s && *end == '%') { threshold /= 100; end++; }
        if (end == threshold_s || *end || !(threshold > 0 && threshold < 10)) {
            fprintf(stderr, "jager bench run: --threshold '%s': expected e.g. 0.05 or 5%%\n", threshold_s);
            free(pos);
            return JAGER_EXIT_USAGE;
        }
    }
    int bad = 0;
    if (!out) { fprintf(stderr, "jager bench run: -o RESULT.json is required\n"); bad = 1; }
    if (!base_cmd != !base_out) { fprintf(stderr, "jager bench run: --base-cmd and --base-out go together\n"); bad = 1; }
    if (bad) { free(pos); return JAGER_EXIT_USAGE; }
    char **cmd = (char **)pos;   /* NULL-terminated by calloc */
    jb_doc tmp = {0};
    jb_result *head = jb_doc_add_result(&tmp), *base = base_cmd ? jb_doc_add_result(&tmp) : NULL;
    if (!head || (base_cmd && !base)) {
        fprintf(stderr, "jager bench: out of memory\n");
        jb_doc_free(&tmp);
        free(pos);
        return EXIT_BAD;
    }
    char err[1024];
    int rc = jb_bench_run(&o, cmd, base_cmd, head, base, err, sizeof err);
    free(pos);
    if (rc) {
        fprintf(stderr, "jager bench run: %s\n", err);
        jb_doc_free(&tmp);
        return EXIT_BAD;
    }
    head->threshold = threshold;
    if (base) base->threshold = threshold;
    size_t nk = head->nkernels;
    rc = save_one(head, out) || (base && save_one(base, base_out));
    jb_doc_free(&tmp);
    if (rc) return EXIT_BAD;
    fprintf(stderr, "jager bench run: %u runs, %zu kernels -> %s%s%s\n", o.runs, nk, out, base_out ? " and " : "",
            base_out ? base_out : "");
    return 0;
}

static int bench_store(int argc, char **argv)
{
    /* Two positionals and no options: the shared parser still gives --help, `--` and its
     * messages, as every command does. */
    const cli_spec spec = {"bench store", usage, NULL, 0, 2, 2, 0, "file"};
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    size_t npos = 0;
    if (!pos) return EXIT_BAD;
    int parsed = cli_parse(&spec, argc, argv, pos, &npos);
    char *files[3] = {argv[0], (char *)pos[0], (char *)pos[1]};
    free(pos);
    if (parsed) return cli_parse_exit(parsed);
    argv = files;
    char err[1024];
    jb_doc result, baseline;
    if (jb_doc_load(argv[1], &result, err, sizeof err)) { fprintf(stderr, "jager bench store: %s\n", err); return EXIT_BAD; }
    if (access(argv[2], F_OK) == 0) {
        if (jb_doc_load(argv[2], &baseline, err, sizeof err)) {
            fprintf(stderr, "jager bench store: %s\n", err);
            jb_doc_free(&result);
            return EXIT_BAD;
        }
    } else {
        memset(&baseline, 0, sizeof baseline);
    }
    int rc = 0;
    for (size_t i = 0; i < result.nresults && !rc; i++) {
        printf("%s: %s \"%s\"\n", argv[2], jb_doc_find(&baseline, result.results[i].machine_class) ? "replaced" : "added",
               result.results[i].machine_class);
        rc = jb_doc_store(&baseline, &result.results[i]);
    }
    if (rc) snprintf(err, sizeof err, "out of memory");
    else rc = jb_doc_save(&baseline, argv[2], err, sizeof err);
    if (rc) fprintf(stderr, "jager bench store: %s\n", err);
    jb_doc_free(&result);
    jb_doc_free(&baseline);
    return rc ? EXIT_BAD : 0;
}

int cmd_bench(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? JAGER_EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "run")) return bench_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "store")) return bench_store(argc - 1, argv + 1);
    fprintf(stderr, "jager bench: unknown subcommand '%s' (run, store)\n", argv[1]);
    return JAGER_EXIT_USAGE;
}
