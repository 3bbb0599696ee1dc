/* `jager report FILE.jgr... [-o report.html]`: one self-contained HTML page — run overview,
 * findings, a timeline with one lane per thread, a flame graph and a sortable site table.
 * Several recordings (the ranks or processes of one run) share one page: lanes grouped
 * per process on a common wall-clock axis, findings ranked together, one flame graph
 * with a node per process.
 *
 * One pass over the recording feeds both the analysis model (aggregates, call tree,
 * findings) and the timeline data (spans reduced to a drawing budget, see
 * report_timeline.h). The page is the embedded template (tools/report/) with the data as
 * JSON in a <script type="application/json"> block; the page's script only ever inserts
 * program strings with textContent or canvas fillText. A Content-Security-Policy allows
 * exactly the embedded script and style (by hash) and nothing else: no network at all. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "hunt_rules.h"
#include "model.h"
#include "report_assets.h"
#include "report_diff.h"
#include "report_model.h"
#include "report_timeline.h"
#include "toolutil.h"

#define REPORT_MAX_INPUTS 4096

typedef struct report_args {
    const char **inputs;
    size_t ninputs;
    const char *input, *output, *title; /* input: the first recording */
    const char *baseline;               /* --baseline: the recording head is compared with */
    rt_opts lod;
    double min_pct;
} report_args;

static void usage(FILE *out)
{
    fputs("usage: jager report FILE.jgr... [-o REPORT.html] [options]\n"
          "\n"
          "Writes one self-contained HTML file (no network access, no external files): run overview,\n"
          "ranked findings, a zoomable timeline per thread with GC pauses, compiles, logs and counters,\n"
          "a flame graph of the span tree and a sortable per-site table. Several recordings (the ranks\n"
          "of an MPI run, cooperating processes) go on one page, one group of lanes per process.\n"
          "\n"
          "  -o, --output FILE   where to write (default: the first FILE with .html instead of .jgr)\n"
          "  --title TEXT        page title (default: the recorded command line)\n"
          "  --max-spans N       spans drawn exactly on the timeline (default 150000); shorter spans\n"
          "                      beyond it are merged into \"N spans\" blocks. Totals stay exact.\n"
          "  --min-pct P         hide findings cheaper than P % of the run (default: the hunt's)\n"
          "  --baseline BASE.jgr a differential page: the flame graph coloured by change against BASE\n"
          "                      (red slower, blue faster) and the sites whose time moved most\n",
          out);
}

static int parse_args(int argc, char **argv, report_args *a)
{
    memset(a, 0, sizeof *a);
    a->min_pct = -1;
    a->inputs = calloc((size_t)argc, sizeof *a->inputs);
    if (!a->inputs) { fprintf(stderr, "jager report: out of memory\n"); return -1; }
    uint64_t max_spans = 0;
    const cli_opt opts[] = {
        CLI_STRING_OPT("--output", "-o", &a->output),
        CLI_STRING_OPT("--title", NULL, &a->title),
        CLI_STRING_OPT("--baseline", NULL, &a->baseline),
        {.name = "--max-spans", .kind = CLI_UINT, .dest = &max_spans, .min = 1, .max = (double)UINT64_MAX,
         .bad = "--max-spans: '%s' is not a positive integer"},
        {.name = "--min-pct", .kind = CLI_DOUBLE, .dest = &a->min_pct, .min = 0, .max = 1e300, .bad = "--min-pct: '%s' is not a percentage"},
    };
    const cli_spec spec = {"report", usage, opts, sizeof opts / sizeof opts[0], 1, REPORT_MAX_INPUTS, 0, NULL};
    int parsed = cli_parse(&spec, argc, argv, a->inputs, &a->ninputs);
    a->lod.max_spans = max_spans;
    if (a->ninputs) a->input = a->inputs[0];
    return parsed;
}

/* "run.jgr" → "run.html"; anything else gets ".html" appended. Caller frees. */
static char *default_output(const char *in)
{
    size_t n = strlen(in);
    if (n > 4 && !strcmp(in + n - 4, ".jgr")) n -= 4;
    char *out = malloc(n + 6);
    if (!out) return NULL;
    memcpy(out, in, n);
    memcpy(out + n, ".html", 6);
    return out;
}

/* CSP source expressions want base64 of the digest; the build gives hex. */
static void hex_to_base64(const char *hex, char *out, size_t size)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint8_t bytes[32];
    size_t n = 0;
    for (; n < 32 && hex[2 * n] && hex[2 * n + 1]; n++) {
        unsigned v;
        if (sscanf(hex + 2 * n, "%2x", &v) != 1) break;
        bytes[n] = (uint8_t)v;
    }
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < size; i += 3) {
        uint32_t v = (uint32_t)bytes[i] << 16 | (i + 1 < n ? (uint32_t)bytes[i + 1] << 8 : 0) | (i + 2 < n ? bytes[i + 2] : 0);
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = 0;
}

typedef struct report_ctx {
    const report_args *a;
    rm_input *in;
    size_t n;
    rm_input *base;     /* --baseline, or NULL */
} report_ctx;

static int write_data(FILE *out, const report_ctx *c)
{
    fprintf(out, "{\"v\":1,\"generator\":\"jager %s\",", jager_version_string());
    rm_layout(c->in, c->n);
    rm_write_runs(out, c->in, c->n);
    fputc(',', out);
    rm_write_sites(out, c->in, c->n);
    fputc(',', out);
    if (rm_write_tree(out, c->in, c->n)) return -1;
    fputc(',', out);
    rm_write_table(out, c->in, c->n);
    fputc(',', out);
    if (rm_write_findings(out, c->in, c->n)) return -1;
    if (c->base) {
        fputc(',', out);
        rm_write_baseline(out, c->base);
    }
    /* the timeline: every recording's lanes, counters and strings in one array each */
    uint32_t str_base = 0;
    rt_json_ctx *jc = calloc(c->n, sizeof *jc);
    char(*prefix)[96] = calloc(c->n, sizeof *prefix);
    if (!jc || !prefix) {
        free(jc);
        free(prefix);
        return -1;
    }
    for (size_t i = 0; i < c->n; i++) {
        const rm_input *in = &c->in[i];
        if (c->n > 1) {
            if (in->rank) snprintf(prefix[i], sizeof prefix[i], "rank %.32s: ", in->rank);
            else snprintf(prefix[i], sizeof prefix[i], "process %zu: ", i + 1);
        }
        jc[i] = (rt_json_ctx){in->t0, (uint32_t)i, in->site_base, str_base, c->n > 1 ? prefix[i] : NULL};
        str_base += rt_string_count(in->rt);
    }
    int first = 1;
    fputs(",\"lanes\":[", out);
    for (size_t i = 0; i < c->n; i++) rt_write_lanes(c->in[i].rt, out, &jc[i], &first);
    fputs("],\"counters\":[", out);
    first = 1;
    for (size_t i = 0; i < c->n; i++) rt_write_counters(c->in[i].rt, out, &jc[i], &first);
    fputs("],\"strings\":[", out);
    first = 1;
    for (size_t i = 0; i < c->n; i++) rt_write_strings(c->in[i].rt, out, &first);
    fputs("]}", out);
    free(jc);
    free(prefix);
    return ferror(out) ? -1 : 0;
}

/* The template with {{CSP}} {{GENERATOR}} {{TITLE}} {{CSS}} {{DATA}} {{JS}} filled in. */
static int write_page(FILE *out, const report_ctx *c)
{
    const char *t = (const char *)jr_asset_template, *end = t + jr_asset_template_len;
    char js_hash[64], css_hash[64];
    hex_to_base64(jr_asset_js_sha256, js_hash, sizeof js_hash);
    hex_to_base64(jr_asset_css_sha256, css_hash, sizeof css_hash);
    while (t < end) {
        const char *open = strstr(t, "{{");
        if (!open || open >= end) { fwrite(t, 1, (size_t)(end - t), out); break; }
        fwrite(t, 1, (size_t)(open - t), out);
        const char *close = strstr(open, "}}");
        if (!close) { fwrite(open, 1, (size_t)(end - open), out); break; }
        size_t n = (size_t)(close - open - 2);
        const char *name = open + 2;
        if (n == 3 && !memcmp(name, "CSP", 3))
            fprintf(out,
                    "default-src 'none'; script-src 'sha256-%s'; style-src 'sha256-%s'; img-src 'none'; "
                    "connect-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'",
                    js_hash, css_hash);
        else if (n == 9 && !memcmp(name, "GENERATOR", 9))
            fprintf(out, "jager %s", jager_version_string());
        else if (n == 5 && !memcmp(name, "TITLE", 5)) {
            const char *cmd = jager_reader_meta(c->in[0].r, "process.command_line");
            const char *title = c->a->title ? c->a->title : cmd && *cmd ? cmd : c->a->input;
            fputs("Jäger report — ", out);
            tu_html_str(out, title, (size_t)-1);
        } else if (n == 3 && !memcmp(name, "CSS", 3))
            fwrite(jr_asset_css, 1, jr_asset_css_len, out);
        else if (n == 2 && !memcmp(name, "JS", 2))
            fwrite(jr_asset_js, 1, jr_asset_js_len, out);
        else if (n == 4 && !memcmp(name, "DATA", 4)) {
            if (write_data(out, c)) return -1;
        } else
            fwrite(open, 1, n + 4, out); /* not a placeholder: copy as is */
        t = close + 2;
    }
    return ferror(out) ? -1 : 0;
}

/* Read one recording into \p in: the model, the timeline data and the findings.
 * \return JAGER_EXIT_OK, JAGER_EXIT_PARTIAL (truncated or corrupt after a good prefix:
 *         what was read is kept) or JAGER_EXIT_INPUT (unreadable, message printed). */
static int read_input(rm_input *in, const report_args *a)
{
    jager_event ev;
    int rc;
    if (!(in->r = cli_open("report", in->path))) return JAGER_EXIT_INPUT;
    /* Stacks and symbols are written late; read them first so GC findings can name frames. */
    jager_reader_load_tables(in->r);
    if (jager_reader_rewind(in->r) != JAGER_OK) {
        fprintf(stderr, "jager report: %s: %s\n", in->path, jager_reader_error(in->r));
        return JAGER_EXIT_INPUT;
    }
    if (jm_model_new(in->r, NULL, &in->m) != JAGER_OK || !(in->rt = rt_new(in->r, &a->lod))) goto oom;
    while ((rc = jager_reader_next(in->r, &ev)) > 0)
        if (jm_model_add(in->m, &ev) != JAGER_OK || rt_add(in->rt, &ev)) goto oom;
    int code = JAGER_EXIT_OK;
    if (rc < 0) {
        jager_reader_info info = {.struct_size = sizeof info};
        jager_reader_get_info(in->r, &info);
        code = cli_finish("report", in->path, in->r, rc); /* prints why */
        if (!info.events && rc != JAGER_E_TRUNCATED) return JAGER_EXIT_INPUT; /* corrupt before any event */
        code = JAGER_EXIT_PARTIAL;
        in->truncated = 1;
        in->read_error = jager_reader_error(in->r);
    }
    if (jm_model_finish(in->m) != JAGER_OK || rt_finish(in->rt)) goto oom;
    hunt_options ho;
    hunt_options_default(&ho);
    if (a->min_pct >= 0) ho.min_pct = a->min_pct;
    if (hunt_run(in->m, &ho, &in->findings, &in->nfindings)) goto oom;
    return code;
oom:
    fprintf(stderr, "jager report: %s: out of memory\n", in->path);
    return JAGER_EXIT_INPUT;
}

static void free_input(rm_input *in)
{
    hunt_free(in->findings, in->nfindings);
    rt_free(in->rt);
    jm_model_free(in->m);
    jager_reader_close(in->r);
}

int cmd_report(int argc, char **argv)
{
    report_args a;
    int pr = parse_args(argc, argv, &a);
    if (pr) {
        free(a.inputs);
        return cli_parse_exit(pr);
    }
    int exit_code = JAGER_EXIT_OK;
    char *owned_out = NULL, *tmp = NULL;
    FILE *out = NULL;
    report_ctx c = {.a = &a, .n = a.ninputs};
    rm_input base = {0};
    if (a.baseline && a.ninputs != 1) {
        fprintf(stderr, "jager report: --baseline compares one recording with it (%zu given)\n", a.ninputs);
        free(a.inputs);
        return JAGER_EXIT_USAGE;
    }
    if (a.baseline) {
        base.path = a.baseline;
        int code = read_input(&base, &a);
        if (code == JAGER_EXIT_INPUT) {
            free_input(&base);
            free(a.inputs);
            return JAGER_EXIT_INPUT;
        }
        if (code > exit_code) exit_code = code;
        c.base = &base;
    }
    if (!(c.in = calloc(a.ninputs, sizeof *c.in))) {
        fprintf(stderr, "jager report: out of memory\n");
        exit_code = JAGER_EXIT_INPUT;
        goto done;
    }
    for (size_t i = 0; i < a.ninputs; i++) {
        c.in[i].path = a.inputs[i];
        int code = read_input(&c.in[i], &a);
        if (code == JAGER_EXIT_INPUT) { /* a page without one of the recordings would mislead */
            exit_code = JAGER_EXIT_INPUT;
            goto done;
        }
        if (code > exit_code) exit_code = code;
    }
    if (!a.output) {
        if (!(owned_out = default_output(a.input))) goto oom;
        a.output = owned_out;
    }

    /* Write next to the target, then rename: a failed run never leaves half a report. */
    size_t n = strlen(a.output) + 16;
    if (!(tmp = malloc(n))) goto oom;
    snprintf(tmp, n, "%s.tmp", a.output);
    if (!(out = fopen(tmp, "w"))) {
        fprintf(stderr, "jager report: cannot write %s: %s\n", a.output, strerror(errno));
        exit_code = JAGER_EXIT_USAGE;
        goto done;
    }
    int werr = write_page(out, &c);
    if (fclose(out) != 0) werr = -1;
    out = NULL;
    if (werr || rename(tmp, a.output) != 0) {
        fprintf(stderr, "jager report: %s: write failed: %s\n", a.output, werr && !errno ? "out of memory" : strerror(errno));
        remove(tmp);
        exit_code = JAGER_EXIT_USAGE;
    }
    goto done;

oom:
    fprintf(stderr, "jager report: out of memory\n");
    exit_code = JAGER_EXIT_INPUT;
done:
    if (out) {
        fclose(out);
        remove(tmp);
    }
    for (size_t i = 0; c.in && i < c.n; i++) free_input(&c.in[i]);
    if (c.base) free_input(c.base);
    free(c.in);
    free(tmp);
    free(owned_out);
    free(a.inputs);
    return exit_code;
}
