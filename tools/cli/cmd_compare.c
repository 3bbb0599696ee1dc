/* cmd_compare.c — `jager compare BASE HEAD`: benchmark results (JSON) or two recordings. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench_doc.h"
#include "commands.h"
#include "outfile.h"
#include "compare.h"
#include "compare_jgr.h"
#include "history.h"

/* compare's own exit codes: a CI gate must tell a regression from a broken input. */
#define EXIT_REGRESSION 1
#define EXIT_BAD 2

static void usage(FILE *out)
{
    fputs("usage: jager compare [options] BASE.json HEAD.json\n"
          "       jager compare BASE.jgr HEAD.jgr            sites whose time changed most (one run each)\n"
          "       jager compare --calibrate A.json B.json -o BASELINE.json   A/A: measure the noise floor\n"
          "  --threshold X     relative change that matters (0.03 or 3%; default 3 %, a kernel's own wins)\n"
          "  --alpha X         significance level (default 0.05)\n"
          "  --markdown FILE   write the Markdown table to FILE (also appended to $GITHUB_STEP_SUMMARY when set)\n"
          "  --comment FILE    write a pull-request comment body to FILE\n"
          "  --annotations     print ::error/::notice workflow commands (default when GITHUB_ACTIONS=true)\n"
          "  --no-annotations  never print them\n"
          "  --any-machine     compare even when BASE has no result for HEAD's machine class\n"
          "  --history F1 F2 … change points in a series of results (oldest first): slow drifts, no gate\n"
          "exit status: 0 no regression, 1 a kernel regressed (time or bytes per call), 2 bad input or usage\n",
          out);
}

static int parse_fraction(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno) return -1;
    if (*end == '%') { v /= 100; end++; }
    if (*end || !isfinite(v) || v <= 0 || v >= 10) return -1;
    *out = v;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* --history: per kernel, one value per file (the median of its runs), searched for steps. */
static int history(const char **paths, size_t n, const jc_options *o, int annotations)
{
    jb_doc *docs = calloc(n, sizeof *docs);
    if (!docs) return EXIT_BAD;
    int rc = 0;
    char err[1024];
    for (size_t i = 0; i < n && !rc; i++)
        if (jb_doc_load(paths[i], &docs[i], err, sizeof err)) { fprintf(stderr, "jager compare: %s\n", err); rc = EXIT_BAD; }
    const jb_result *first = rc ? NULL : &docs[0].results[0];
    double *v = malloc(n * sizeof *v);
    size_t *idx = malloc(n * sizeof *idx);
    if (!rc && (!v || !idx)) rc = EXIT_BAD;
    size_t changed = 0, kernels = 0;
    if (!rc) printf("history: %zu results, machine class \"%s\"\n", n, first->machine_class);
    for (size_t k = 0; !rc && k < first->nkernels; k++) {
        const jb_kernel *want = &first->kernels[k];
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const jb_result *r = jb_doc_find(&docs[i], first->machine_class);
            const jb_kernel *got = NULL;
            for (size_t j = 0; r && j < r->nkernels && !got; j++)
                if (!strcmp(r->kernels[j].name, want->name) && !strcmp(r->kernels[j].file, want->file)) got = &r->kernels[j];
            if (!got || !got->nruns) continue;
            double *runs = malloc(got->nruns * sizeof *runs);
            if (!runs) { rc = EXIT_BAD; break; }
            for (size_t j = 0; j < got->nruns; j++) runs[j] = got->runs[j].median_ns;
            v[m] = jc_median(runs, got->nruns);
            idx[m++] = i;
            free(runs);
        }
        jh_change ch[16];
        int nc = rc ? 0 : jh_find_changes(v, m, o->threshold, o->alpha, ch, 16);
        if (nc < 0) { rc = EXIT_BAD; break; }
        kernels++;
        for (int c = 0; c < nc; c++) {
            const jb_result *r = jb_doc_find(&docs[idx[ch[c].at]], first->machine_class);
            printf("%s (%s:%u): %+.1f %% from %s (commit %s, %s), p = %.3g\n", want->name, want->file, want->line,
                   (ch[c].ratio - 1) * 100, paths[idx[ch[c].at]], *r->commit ? r->commit : "?", *r->date ? r->date : "?",
                   ch[c].p);
            if (annotations && ch[c].ratio > 1)
                printf("::warning title=%s drifted::%+.1f %% since %s\n", want->name, (ch[c].ratio - 1) * 100,
                       *r->commit ? r->commit : paths[idx[ch[c].at]]);
            changed++;
        }
    }
    if (!rc) printf("%zu change points in %zu kernels\n", changed, kernels);
    free(v);
    free(idx);
    for (size_t i = 0; i < n; i++) jb_doc_free(&docs[i]);
    free(docs);
    return rc;
}

/* "w": atomically onto a regular file, straight onto a device or pipe (outfile.h); "a"
 * (the CI step summary) appends in place. */
static int write_markdown_file(const char *path, const jc_report *r, const char *mode, int comment)
{
    if (!strcmp(mode, "w")) {
        tu_outfile o;
        char err[1024];
        if (tu_outfile_open(&o, path, err, sizeof err) != 0) {
            fprintf(stderr, "jager compare: %s\n", err);
            return -1;
        }
        if (comment) fputs("<!-- jager-compare -->\n", o.f);
        jc_print_markdown(o.f, r);
        if (tu_outfile_close(&o, 1, err, sizeof err) != 0) {
            fprintf(stderr, "jager compare: %s: write failed%s%s\n", path, err[0] ? ": " : "", err);
            return -1;
        }
        return 0;
    }
    FILE *f = fopen(path, mode);
    if (!f) { fprintf(stderr, "jager compare: %s: %s\n", path, strerror(errno)); return -1; }
    if (comment) fputs("<!-- jager-compare -->\n", f);
    jc_print_markdown(f, r);
    if (fclose(f) != 0) { fprintf(stderr, "jager compare: %s: write failed\n", path); return -1; }
    return 0;
}

/* The A/A calibration: each kernel's noise floor is how far from 1 its interval reaches
 * when nothing changed; written into a copy of A as the baseline's per-kernel noise. */
static int calibrate(jb_doc *a, const jb_doc *b, const char *out_path, const jc_options *o)
{
    if (a->nresults != 1 || b->nresults != 1) {
        fprintf(stderr, "jager compare --calibrate: each file must hold one result\n");
        return EXIT_BAD;
    }
    jc_report rep;
    if (jc_compare(&a->results[0], &b->results[0], o, &rep)) { fprintf(stderr, "jager compare: out of memory\n"); return EXIT_BAD; }
    printf("%-32s %8s  %s\n", "kernel", "noise", "A/A change [95% CI]");
    for (size_t i = 0; i < rep.nrows; i++) {
        jc_row *row = &rep.rows[i];
        if (!row->base || !row->head || !row->have_shift) continue;
        double noise = fmax(row->shift.hi - 1, 1 - row->shift.lo);
        ((jb_kernel *)row->base)->noise = noise;
        printf("%-32.32s %7.2f%%  %+.2f %% [%+.2f, %+.2f]\n", row->base->name, noise * 100, (row->shift.ratio - 1) * 100,
               (row->shift.lo - 1) * 100, (row->shift.hi - 1) * 100);
    }
    jc_report_free(&rep);
    if (out_path) {
        char err[512];
        if (jb_doc_save(a, out_path, err, sizeof err)) { fprintf(stderr, "jager compare: %s\n", err); return EXIT_BAD; }
        printf("noise floors written into %s\n", out_path);
    }
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    jc_options o;
    jc_options_default(&o);
    const char *markdown = NULL, *comment = NULL, *out_path = NULL, *threshold = NULL, *alpha = NULL;
    const char *gha = getenv("GITHUB_ACTIONS");
    int annotations = gha && !strcmp(gha, "true"), any_machine = 0, do_calibrate = 0, do_history = 0;
    const cli_opt opts[] = {
        CLI_STRING_OPT("--threshold", NULL, &threshold), CLI_STRING_OPT("--alpha", NULL, &alpha),
        CLI_STRING_OPT("--markdown", NULL, &markdown), CLI_STRING_OPT("--comment", NULL, &comment),
        CLI_STRING_OPT("--output", "-o", &out_path),
        {.name = "--annotations", .kind = CLI_FLAG, .dest = &annotations, .flag_value = 1},
        {.name = "--no-annotations", .kind = CLI_FLAG, .dest = &annotations, .flag_value = 0},
        {.name = "--any-machine", .kind = CLI_FLAG, .dest = &any_machine, .flag_value = 1},
        {.name = "--calibrate", .kind = CLI_FLAG, .dest = &do_calibrate, .flag_value = 1},
        {.name = "--history", .kind = CLI_FLAG, .dest = &do_history, .flag_value = 1},
    };
    /* Any number of files for --history, wherever it stands: counted after the parse. */
    const cli_spec spec = {"compare", usage, opts, sizeof opts / sizeof opts[0], 2, (size_t)argc, 0, "file"};
    const char *pos[2] = {0};
    const char **posv = calloc((size_t)argc + 1, sizeof *posv);
    size_t npos = 0;
    if (!posv) return EXIT_BAD;
    int parsed = cli_parse(&spec, argc, argv, posv, &npos);
    if (parsed == 0 && !do_history && npos > 2) {
        fprintf(stderr, "jager compare: at most 2 files\n");
        parsed = -1;
    }
    if (parsed == 0 && do_history) {
        jc_options ho;
        jc_options_default(&ho);
        if (threshold && parse_fraction(threshold, &ho.threshold)) parsed = -1;
        int hrc = parsed ? EXIT_BAD : history(posv, npos, &ho, annotations);
        free((void *)posv);
        return hrc;
    }
    if (parsed == 0) { pos[0] = posv[0]; pos[1] = posv[1]; }
    free((void *)posv);
    if (parsed) return parsed > 0 ? 0 : EXIT_BAD;   /* a usage error is not a regression */
    if (threshold && parse_fraction(threshold, &o.threshold)) {
        fprintf(stderr, "jager compare: --threshold '%s': expected e.g. 0.03 or 3%%\n", threshold);
        return EXIT_BAD;
    }
    if (alpha && (parse_fraction(alpha, &o.alpha) || o.alpha >= 1)) {
        fprintf(stderr, "jager compare: --alpha '%s': expected a level in (0, 1)\n", alpha);
        return EXIT_BAD;
    }
    const char *base_path = pos[0], *head_path = pos[1];
    if (ends_with(base_path, ".jgr") || ends_with(head_path, ".jgr"))
        return jc_compare_recordings(base_path, head_path, stdout);

    char err[1024];
    jb_doc base, head;
    if (jb_doc_load(base_path, &base, err, sizeof err)) { fprintf(stderr, "jager compare: %s\n", err); return EXIT_BAD; }
    if (jb_doc_load(head_path, &head, err, sizeof err)) {
        fprintf(stderr, "jager compare: %s\n", err);
        jb_doc_free(&base);
        return EXIT_BAD;
    }
    int rc = EXIT_BAD;
    if (do_calibrate) { rc = calibrate(&base, &head, out_path, &o); goto out; }
    if (head.nresults != 1) {
        fprintf(stderr, "jager compare: %s holds %zu results; HEAD must hold one\n", head_path, head.nresults);
        goto out;
    }
    const jb_result *h = &head.results[0], *b = jb_doc_find(&base, h->machine_class);
    if (!b && (base.nresults == 1 || any_machine)) {
        b = &base.results[0];   /* compared, and the table's warnings say the machines differ */
    } else if (!b) {
        fprintf(stderr, "jager compare: %s has no result for this machine class \"%s\" (it has:", base_path, h->machine_class);
        for (size_t i = 0; i < base.nresults; i++) fprintf(stderr, "%s \"%s\"", i ? "," : "", base.results[i].machine_class);
        fprintf(stderr, "); --any-machine compares with the first\n");
        goto out;
    }
    jc_report rep;
    if (jc_compare(b, h, &o, &rep)) { fprintf(stderr, "jager compare: out of memory\n"); goto out; }
    jc_print_table(stdout, &rep);
    if (annotations) jc_print_annotations(stdout, &rep);
    const char *summary = getenv("GITHUB_STEP_SUMMARY");
    int write_failed = (markdown && write_markdown_file(markdown, &rep, "w", 0))
                    || (summary && *summary && write_markdown_file(summary, &rep, "a", 0))
                    || (comment && write_markdown_file(comment, &rep, "w", 1));
    rc = write_failed ? EXIT_BAD : jc_report_failed(&rep) ? EXIT_REGRESSION : 0;
    jc_report_free(&rep);
out:
    jb_doc_free(&base);
    jb_doc_free(&head);
    return rc;
}
