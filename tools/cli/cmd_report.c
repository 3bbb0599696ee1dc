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
#include "job.h"
#include "model.h"
#include "model_mpi.h"
#include "report_assets.h"
#include "report_diff.h"
#include "report_model.h"
#include "report_timeline.h"
#include "outfile.h"
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
    const jm_mpi *mpi;  /* a job's MPI view (messages for the arrows), or NULL */
    const jm_mpi *clock; /* mpi when the page is on the job's clock (a job with MPI calls), else NULL */
    uint64_t origin;    /* with clock: the page's time origin on the job's clock */
} report_ctx;

/* A part's times on the job's clock: jm_mpi_job_time, the mapping of every job output. */
typedef struct job_clock {
    const jm_mpi *m;
    uint32_t part;
} job_clock;

static uint64_t job_map(const void *arg, uint64_t t)
{
    const job_clock *k = arg;
    return jm_mpi_job_time(k->m, k->part, t);
}

/* A job with MPI calls is drawn on the job's clock: the origin is the earliest part's first
 * event there. */
static void job_clock_setup(report_ctx *c)
{
    if (!c->mpi || !c->mpi->ncalls || c->n < 2) return;
    uint64_t o = UINT64_MAX;
    for (size_t i = 0; i < c->n; i++) {
        uint64_t t = jm_mpi_job_time(c->mpi, (uint32_t)i, c->in[i].m->first_ns);
        if (t < o) o = t;
    }
    c->clock = c->mpi;
    c->origin = o;
}

/* After rm_layout, on the job's clock: each part's own origin (its samples, its run length)
 * is the local time at the page's origin by its offset at its first event. */
static void job_layout(const report_ctx *c)
{
    if (!c->clock) return;
    for (size_t i = 0; i < c->n; i++) {
        const jm_model *m = c->in[i].m;
        int64_t off = (int64_t)jm_mpi_job_time(c->clock, (uint32_t)i, m->first_ns) - (int64_t)m->first_ns;
        int64_t t0 = (int64_t)c->origin - off;
        c->in[i].t0 = t0 > 0 ? (uint64_t)t0 : 0;
        uint64_t last = m->first_ns + m->run_ns;
        c->in[i].end = last > c->in[i].t0 ? last - c->in[i].t0 : 0;
    }
}

/* Arrows drawn at most: beyond this every k-th message is drawn (the count says so). */
#define REPORT_MAX_ARROWS 4000

/* `"messages":{"n":N,"drawn":K,"a":[sp,st,t,rp,rt,t,…]}`: the job's matched messages as
 * arrows from the sending call's start (process, thread, time on that process's page
 * clock) to the end of the call that completed the receive. */
static void write_messages(FILE *out, const report_ctx *c)
{
    const jm_mpi *m = c->mpi;
    size_t n = m ? m->nmsgs : 0, step = n > REPORT_MAX_ARROWS ? (n + REPORT_MAX_ARROWS - 1) / REPORT_MAX_ARROWS : 1;
    size_t drawn = 0;
    fputs(",\"messages\":{\"a\":[", out);
    for (size_t i = 0; i < n; i += step) {
        const jm_mpi_msg *x = &m->msgs[i];
        if (x->send_call >= m->ncalls || x->recv_call >= m->ncalls) continue;
        const jm_mpi_call *sc = &m->calls[x->send_call], *rc = &m->calls[x->recv_call];
        if (sc->part >= c->n || rc->part >= c->n) continue;
        int64_t ts, tr;
        if (c->clock) { /* the model's times are on the job's clock */
            ts = (int64_t)sc->t0 - (int64_t)c->origin;
            tr = (int64_t)rc->t1 - (int64_t)c->origin;
        } else {
            ts = (int64_t)sc->local_t0 - (int64_t)c->in[sc->part].t0;
            tr = (int64_t)(rc->local_t0 + (rc->t1 - rc->t0)) - (int64_t)c->in[rc->part].t0;
        }
        fprintf(out, "%s%u,%u,%lld,%u,%u,%lld", drawn ? "," : "", sc->part, sc->thread, (long long)ts, rc->part,
                rc->thread, (long long)tr);
        drawn++;
    }
    fprintf(out, "],\"n\":%zu,\"drawn\":%zu}", n, drawn);
}

/* Collective instances drawn at most (every k-th beyond). */
#define REPORT_MAX_COLLECTIVES 2000

typedef struct coll_key {
    uint64_t comm, k;
    uint32_t call;
} coll_key;

static int cmp_coll_key(const void *a, const void *b)
{
    const coll_key *x = a, *y = b;
    if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->call < y->call ? -1 : x->call > y->call;
}

/* `"collectives":{"funcs":[…],"n":N,"drawn":K,"a":[[func,p,thread,t0,t1,…],…]}`: each
 * instance of a collective (the k-th on a communicator of every member, all members in the
 * job) with each member's call on its process's page clock, so the page can join them
 * across the rank lanes. */
static int write_collectives(FILE *out, const report_ctx *c)
{
    const jm_mpi *m = c->mpi;
    size_t nk = 0;
    coll_key *v = NULL;
    if (m && m->ncalls) {
        enum { NCOMM = 64 };
        uint64_t comm[NCOMM], count[NCOMM];
        if (!(v = malloc(m->ncalls * sizeof *v))) return -1;
        for (size_t p = 0; p < m->nranks; p++) { /* the k-th collective of each communicator on this rank */
            size_t a = m->first[p], b = m->first[p + 1], nc = 0;
            for (size_t i = a; i < b; i++) {
                const jm_mpi_call *x = &m->calls[i];
                if (!jm_mpi_is_collective(m->funcs[x->func])) continue;
                size_t j = 0;
                while (j < nc && comm[j] != x->comm) j++;
                if (j == nc) {
                    if (nc == NCOMM) continue; /* beyond 64 communicators a rank's collectives are not joined */
                    comm[nc] = x->comm;
                    count[nc++] = 0;
                }
                v[nk++] = (coll_key){x->comm, count[j]++, (uint32_t)i};
            }
        }
        if (nk > 1) qsort(v, nk, sizeof *v, cmp_coll_key);
    }
    size_t ninst = 0;
    for (size_t a = 0, b; a < nk; a = b) { /* instances with every member present */
        for (b = a; b < nk && v[b].comm == v[a].comm && v[b].k == v[a].k; b++) {}
        if (b - a == m->calls[v[a].call].comm_size && b - a > 1) ninst++;
    }
    size_t step = ninst > REPORT_MAX_COLLECTIVES ? (ninst + REPORT_MAX_COLLECTIVES - 1) / REPORT_MAX_COLLECTIVES : 1;
    size_t idx = 0, drawn = 0;
    fputs(",\"collectives\":{\"funcs\":[", out);
    for (uint32_t f = 0; m && f < m->nfuncs; f++) {
        if (f) fputc(',', out);
        tu_json_str(out, m->funcs[f], (size_t)-1);
    }
    fputs("],\"a\":[", out);
    for (size_t a = 0, b; a < nk; a = b) {
        for (b = a; b < nk && v[b].comm == v[a].comm && v[b].k == v[a].k; b++) {}
        if (!(b - a == m->calls[v[a].call].comm_size && b - a > 1)) continue;
        if (idx++ % step) continue;
        fprintf(out, "%s[%u", drawn ? "," : "", m->calls[v[a].call].func);
        for (size_t i = a; i < b; i++) {
            const jm_mpi_call *x = &m->calls[v[i].call];
            if (x->part >= c->n) continue;
            int64_t t0 = c->clock ? (int64_t)x->t0 - (int64_t)c->origin : (int64_t)x->local_t0 - (int64_t)c->in[x->part].t0;
            fprintf(out, ",%u,%u,%lld,%lld", x->part, x->thread, (long long)t0, (long long)(t0 + (int64_t)(x->t1 - x->t0)));
        }
        fputc(']', out);
        drawn++;
    }
    fprintf(out, "],\"n\":%zu,\"drawn\":%zu}", ninst, drawn);
    free(v);
    return 0;
}

static int write_data(FILE *out, const report_ctx *c)
{
    fprintf(out, "{\"v\":1,\"generator\":\"jager %s\",", jager_version_string());
    rm_layout(c->in, c->n);
    job_layout(c);
    rm_write_runs(out, c->in, c->n);
    fputc(',', out);
    rm_write_sites(out, c->in, c->n);
    fputc(',', out);
    if (rm_write_tree(out, c->in, c->n)) return -1;
    fputc(',', out);
    rm_write_table(out, c->in, c->n);
    fputc(',', out);
    if (rm_write_findings(out, c->in, c->n)) return -1;
    fputc(',', out);
    rm_write_allocators(out, c->in, c->n);
    fputc(',', out);
    rm_write_attrs(out, c->in, c->n);
    fputc(',', out);
    rm_write_methods(out, c->in, c->n);
    if (c->base) {
        fputc(',', out);
        rm_write_baseline(out, c->base);
    }
    if (rs_write_json(out, c->in, c->n)) return -1;
    /* the timeline: every recording's lanes, counters and strings in one array each */
    uint32_t str_base = 0;
    rt_json_ctx *jc = calloc(c->n, sizeof *jc);
    job_clock *clocks = calloc(c->n, sizeof *clocks);
    char(*prefix)[96] = calloc(c->n, sizeof *prefix);
    if (!jc || !prefix || !clocks) {
        free(jc);
        free(clocks);
        free(prefix);
        return -1;
    }
    for (size_t i = 0; i < c->n; i++) {
        const rm_input *in = &c->in[i];
        if (c->n > 1) {
            if (in->rank) snprintf(prefix[i], sizeof prefix[i], "rank %.32s: ", in->rank);
            else snprintf(prefix[i], sizeof prefix[i], "process %zu: ", i + 1);
        }
        jc[i] = (rt_json_ctx){in->t0, (uint32_t)i, in->site_base, str_base, c->n > 1 ? prefix[i] : NULL, NULL, NULL};
        if (c->clock) { /* every lane on the job's clock, from its origin */
            clocks[i] = (job_clock){c->clock, (uint32_t)i};
            jc[i].t0 = c->origin;
            jc[i].map = job_map;
            jc[i].map_arg = &clocks[i];
        }
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
    fputc(']', out);
    write_messages(out, c);
    if (write_collectives(out, c)) return -1;
    fputc('}', out);
    free(jc);
    free(clocks);
    free(prefix);
    return ferror(out) ? -1 : 0;
}

/* The supply-chain banner (docs/supply-chain.md): red, at the top, when any recording holds
 * security events; written here, HTML-escaped, so it shows even without JavaScript. */
static void write_banner(FILE *out, const report_ctx *c)
{
    uint64_t total = 0;
    for (size_t i = 0; i < c->n; i++) total += c->in[i].m ? c->in[i].m->security_events : 0;
    if (!total) return;
    fprintf(out, "<div class=\"security-banner\" id=\"security-banner\" role=\"alert\"><strong>Supply chain: %llu security event%s"
                 "</strong> — the code that ran differs from its lock; distrust these measurements until "
                 "<code>jager verify</code> is clean.<ul>",
            (unsigned long long)total, total == 1 ? "" : "s");
    unsigned shown = 0;
    for (size_t i = 0; i < c->n && shown < 20; i++) {
        const jm_model *m = c->in[i].m;
        for (uint32_t k = 0; m && k < m->nsecurity && shown < 20; k++, shown++) {
            fputs("<li>", out);
            tu_html_str(out, m->security[k].body, (size_t)-1);
            fputs("</li>", out);
        }
    }
    if (total > shown) fprintf(out, "<li>… and %llu more</li>", (unsigned long long)(total - shown));
    fputs("</ul></div>", out);
}

/* The template with {{CSP}} {{GENERATOR}} {{TITLE}} {{CSS}} {{BANNER}} {{DATA}} {{JS}} filled in. */
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
        else if (n == 6 && !memcmp(name, "BANNER", 6))
            write_banner(out, c);
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
    if (!in->r && !(in->r = cli_open("report", in->path))) return JAGER_EXIT_INPUT; /* (a job's parts come open) */
    /* Stacks and symbols are written late; read them first so GC findings can name frames. */
    jager_reader_load_tables(in->r);
    if (jager_reader_rewind(in->r) != JAGER_OK) {
        fprintf(stderr, "jager report: %s: %s\n", in->path, jager_reader_error(in->r));
        return JAGER_EXIT_INPUT;
    }
    if (jm_model_new(in->r, NULL, &in->m) != JAGER_OK || !(in->rt = rt_new(in->r, &a->lod)) || !(in->rs = rs_new(in->r)))
        goto oom;
    while ((rc = jager_reader_next(in->r, &ev)) > 0)
        if (jm_model_add(in->m, &ev) != JAGER_OK || rt_add(in->rt, &ev) || rs_add(in->rs, &ev)) goto oom;
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
    rs_free(in->rs);
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
    char *owned_out = NULL;
    tu_outfile out = {0};
    report_ctx c = {.a = &a, .n = a.ninputs};
    rm_input base = {0};
    jm_job *job = NULL;
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
    /* files, job files and folders: one input per process (rank), in rank order */
    if (!(job = cli_open_job("report", a.inputs, a.ninputs))) {
        exit_code = JAGER_EXIT_INPUT;
        goto done;
    }
    c.n = job->n;
    /* a job (several ranks): the MPI view for its wait states and message arrows */
    jm_mpi *mpi = NULL;
    if ((job->n > 1 || job->from_job_file) && jm_mpi_build(job, &mpi)) goto oom;
    c.mpi = mpi;
    if (!(c.in = calloc(c.n, sizeof *c.in))) {
        fprintf(stderr, "jager report: out of memory\n");
        exit_code = JAGER_EXIT_INPUT;
        goto done;
    }
    for (size_t i = 0; i < c.n; i++) {
        c.in[i].path = job->parts[i].label;
        c.in[i].r = job->parts[i].r;
        job->parts[i].r = NULL; /* the input closes it */
        int code = read_input(&c.in[i], &a);
        if (code == JAGER_EXIT_INPUT) { /* a page without one of the recordings would mislead */
            exit_code = JAGER_EXIT_INPUT;
            goto done;
        }
        if (code > exit_code) exit_code = code;
    }
    if (mpi) { /* the job's findings (wait states, ranks missing) go with rank 0's */
        const jm_model **ms = calloc(c.n, sizeof *ms);
        hunt_finding *jf = NULL;
        size_t jn = 0;
        if (!ms) goto oom;
        for (size_t i = 0; i < c.n; i++) ms[i] = c.in[i].m;
        hunt_options ho;
        hunt_options_default(&ho);
        if (a.min_pct >= 0) ho.min_pct = a.min_pct;
        int hr = hunt_run_mpi(mpi, job, ms, &ho, &jf, &jn);
        free(ms);
        if (hr) goto oom;
        if (jn) {
            hunt_finding *g = realloc(c.in[0].findings, (c.in[0].nfindings + jn) * sizeof *g);
            if (!g) {
                hunt_free(jf, jn);
                goto oom;
            }
            memcpy(g + c.in[0].nfindings, jf, jn * sizeof *g);
            c.in[0].findings = g;
            c.in[0].nfindings += jn;
            free(jf);
        }
    }
    job_clock_setup(&c);
    if (!a.output) {
        if (!(owned_out = default_output(a.input))) goto oom;
        a.output = owned_out;
    }

    /* Atomically onto a regular file (a failed run never leaves half a report), straight
     * onto a device, pipe or "-" (outfile.h). */
    char why[1024];
    if (tu_outfile_open(&out, a.output, why, sizeof why) != 0) {
        fprintf(stderr, "jager report: cannot write %s\n", why);
        exit_code = JAGER_EXIT_USAGE;
        goto done;
    }
    errno = 0;
    int werr = write_page(out.f, &c);
    int werrno = errno;
    if (tu_outfile_close(&out, !werr, why, sizeof why) != 0) {
        if (werr) fprintf(stderr, "jager report: %s: write failed: %s\n", a.output, !werrno ? "out of memory" : strerror(werrno));
        else fprintf(stderr, "jager report: write failed: %s\n", why);
        exit_code = JAGER_EXIT_USAGE;
    }
    goto done;

oom:
    fprintf(stderr, "jager report: out of memory\n");
    exit_code = JAGER_EXIT_INPUT;
done:
    if (out.f) tu_outfile_close(&out, 0, NULL, 0);
    for (size_t i = 0; c.in && i < c.n; i++) free_input(&c.in[i]);
    if (c.base) free_input(c.base);
    free(c.in);
    jm_mpi_free((jm_mpi *)c.mpi);
    jm_job_free(job);
    free(owned_out);
    free(a.inputs);
    return exit_code;
}
