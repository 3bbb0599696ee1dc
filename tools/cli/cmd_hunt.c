/* cmd_hunt.c — `jager hunt FILE [--format text|json] [--min-pct P]`: the ranked findings
 * of hunt_rules.h, as text for people or JSON for tools. Exit 0, or 3 when the file was
 * cut short (findings for the readable prefix), 2 when it cannot be read at all. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "hunt_rules.h"
#include "job.h"
#include "model.h"
#include "model_mpi.h"
#include "toolutil.h"

#define HUNT_CLI_ALLOCATORS 8 /* rows of the "largest allocators" table */

typedef struct hunt_cli {
    const char *path;      /* the first input, or "N recordings" */
    const char **paths;
    size_t npaths;
    char label[64];
    int json;
    hunt_options opt;
} hunt_cli;

static void usage(FILE *out)
{
    fputs("usage: jager hunt FILE.jgr… | FOLDER [--format text|json] [--min-pct P]\n"
          "  several files, a job file or a folder: the ranks of one MPI job (per-rank and wait-state findings)\n"
          "  --min-pct P  hide findings that cost less than P% of the run (default 1)\n"
          "Rules and thresholds: docs/hunt.md\n",
          out);
}

static const cli_choice formats[] = {{"text", 0}, {"json", 1}, {NULL, 0}};

static int parse_args(int argc, char **argv, hunt_cli *o)
{
    memset(o, 0, sizeof *o);
    hunt_options_default(&o->opt);
    const cli_opt opts[] = {
        {.name = "--format", .kind = CLI_CHOICE, .dest = &o->json, .choices = formats, .bad = "unknown format '%s' (text or json)"},
        {.name = "--min-pct", .kind = CLI_DOUBLE, .dest = &o->opt.min_pct, .min = 0, .max = 100,
         .bad = "--min-pct wants a percentage (0..100)"},
    };
    const cli_spec spec = {"hunt", usage, opts, sizeof opts / sizeof opts[0], 1, (size_t)argc, 0, NULL};
    if (!(o->paths = calloc((size_t)argc + 1, sizeof *o->paths))) return -1;
    int rc = cli_parse(&spec, argc, argv, o->paths, &o->npaths);
    o->path = o->paths[0];
    if (o->npaths > 1) {
        snprintf(o->label, sizeof o->label, "%zu recordings", o->npaths);
        o->path = o->label;
    }
    return rc;
}

/* What the header says about the input: one recording, or every part of a job. */
typedef struct hunt_input {
    uint64_t run_ns, events;
    int truncated, clean_end;
    size_t parts;
    const jm_model *model; /* the one recording's model; NULL for a job (sites are per rank) */
} hunt_input;

static void print_text(const hunt_input *m, const hunt_cli *o, const hunt_finding *f, size_t n)
{
    char a[32], fit[2048];
    jm_text_fit(fit, sizeof fit, o->path, 120);
    printf("jager hunt %s: run %s, %" PRIu64 " events", fit, tu_fmt_ns(a, sizeof a, (double)m->run_ns), m->events);
    if (m->parts > 1) printf(", %zu ranks", m->parts);
    if (m->truncated) printf(", file TRUNCATED (findings cover the readable part)");
    printf("\n");
    /* Thinned sites are sampled on purpose: say so, and never as lost events. */
    const jm_model *mm = m->model;
    if (mm && mm->sampled_sites) {
        printf("%u site%s sampled on purpose (JAGER_SAMPLE; not loss, totals exact):", mm->sampled_sites,
               mm->sampled_sites == 1 ? "" : "s");
        uint32_t shown = 0;
        for (uint32_t id = 1; id < mm->nsites && shown < 5; id++) {
            if (!mm->sites[id].sample_1_in) continue;
            jm_text_fit(fit, sizeof fit, mm->sites[id].name, 60);
            printf("%s %s sampled 1 in %" PRIu64, shown++ ? "," : "", fit, mm->sites[id].sample_1_in);
        }
        printf("%s\n", shown < mm->sampled_sites ? ", …" : "");
    }
    size_t problems = 0;
    for (size_t i = 0; i < n; i++) problems += f[i].kind != HUNT_PLUGIN_EVENTS && f[i].kind != HUNT_DROPPED_EVENTS;
    if (!problems) printf("no performance problems found above %.1f%% of the run\n", o->opt.min_pct);
    for (size_t i = 0; i < n; i++) {
        const hunt_finding *x = &f[i];
        jm_text_fit(fit, sizeof fit, x->title, 0);
        printf("\n%zu. [%s%s] %s\n", i + 1, hunt_kind_name(x->kind), x->severity == 0 && x->kind != HUNT_PLUGIN_EVENTS ? ", note" : "",
               fit);
        if (*x->func) {
            jm_text_fit(fit, sizeof fit, x->func, 80);
            printf("   at %s", fit);
            if (*x->file) {
                jm_text_fit(fit, sizeof fit, x->file, 120);
                printf(" (%s:%u)", fit, x->line);
            }
            printf("\n");
        }
        if (x->cost_ns > 0) {
            printf("   cost %s (%.1f%% of the run)", tu_fmt_ns(a, sizeof a, x->cost_ns), x->pct_of_run);
            if (x->estimate && *x->estimate) printf(", estimated from %s", x->estimate);
            printf("\n");
        }
        const jm_site *xs = mm && x->site ? jm_site_get(mm, x->site) : NULL;
        if (xs && xs->sample_1_in)
            printf("   sampled 1 in %" PRIu64 " here: its events were thinned on purpose, its totals are exact\n",
                   xs->sample_1_in);
        printf("   evidence:");
        for (uint32_t e = 0; e < x->nevidence; e++) {
            const hunt_evidence *v = &x->evidence[e];
            uint64_t u;
            if (!strcmp(v->unit, "ns")) printf(" %s=%s", v->key, tu_fmt_ns(a, sizeof a, v->value));
            else if (!strcmp(v->unit, "bytes")) printf(" %s=%s", v->key, tu_fmt_bytes(a, sizeof a, v->value));
            else if (!strcmp(v->unit, "%")) printf(" %s=%.1f%%", v->key, v->value);
            else if (tu_double_as_u64(v->value, &u)) printf(" %s=%" PRIu64, v->key, u);
            else printf(" %s=%.3g", v->key, v->value);
        }
        printf("\n");
        for (uint32_t d = 0; d < x->ndetails; d++) {
            jm_text_fit(fit, sizeof fit, x->details[d], 200);
            printf("   - %s\n", fit);
        }
        jm_text_fit(fit, sizeof fit, x->hint, 0);
        printf("   hint: %s\n", fit);
    }
    hunt_allocator al[HUNT_CLI_ALLOCATORS];
    size_t na = mm ? hunt_allocators(mm, al, HUNT_CLI_ALLOCATORS) : 0;
    if (!na) return;
    printf("\nlargest allocators (self: outside the sites inside them)\n");
    printf("   %-32s %10s %10s %8s %10s %9s %9s\n", "site", "self", "total", "calls", "per call", "GB/s", "GC");
    for (size_t i = 0; i < na; i++) {
        const jm_site *s = jm_site_get(mm, al[i].site);
        char b1[32], b2[32], b3[32], b4[32];
        jm_text_fit(fit, sizeof fit, s ? s->name : "?", 32);
        printf("   %-32s %10s %10s %8" PRIu64 " %10s %9.2f %9s\n", fit, tu_fmt_bytes(b1, sizeof b1, (double)al[i].self_bytes),
               tu_fmt_bytes(b2, sizeof b2, (double)al[i].bytes), al[i].calls,
               tu_fmt_bytes(b3, sizeof b3, al[i].calls ? (double)al[i].bytes / (double)al[i].calls : 0), al[i].bytes_per_ns,
               tu_fmt_ns(b4, sizeof b4, (double)al[i].gc_ns));
    }
}

static void json_num(double v)
{
    int64_t i;
    if (v != v || v > 1e300 || v < -1e300) printf("0"); /* JSON has no NaN or infinity */
    else if (v < 9e15 && v > -9e15 && tu_double_as_i64(v, &i)) printf("%" PRId64, i);
    else printf("%.6g", v);
}

static void print_json(const hunt_input *m, const hunt_cli *o, const hunt_finding *f, size_t n)
{
    printf("{\"tool\":\"jager hunt\",\"version\":");
    tu_json_str(stdout, jager_version_string(), (size_t)-1);
    printf(",\"file\":");
    tu_json_str(stdout, o->path, (size_t)-1);
    printf(",\"run_ns\":%" PRIu64 ",\"events\":%" PRIu64 ",\"parts\":%zu,\"truncated\":%s,\"clean_end\":%s,\"min_pct\":",
           m->run_ns, m->events, m->parts, m->truncated ? "true" : "false", m->clean_end ? "true" : "false");
    json_num(o->opt.min_pct);
    printf(",\"sampled_sites\":[");
    const jm_model *mm = m->model;
    for (uint32_t id = 1, k = 0; mm && id < mm->nsites; id++) {
        if (!mm->sites[id].sample_1_in) continue;
        printf("%s{\"site\":%u,\"name\":", k++ ? "," : "", id);
        tu_json_str(stdout, mm->sites[id].name, (size_t)-1);
        printf(",\"sampled_1_in\":%" PRIu64 ",\"thinned\":%" PRIu64 "}", mm->sites[id].sample_1_in, mm->sites[id].thinned);
    }
    printf("]");
    printf(",\"findings\":[");
    for (size_t i = 0; i < n; i++) {
        const hunt_finding *x = &f[i];
        printf("%s{\"rank\":%zu,\"kind\":\"%s\",\"severity\":%d,\"title\":", i ? "," : "", i + 1, hunt_kind_name(x->kind),
               x->severity);
        tu_json_str(stdout, x->title, (size_t)-1);
        printf(",\"cost_ns\":");
        json_num(x->cost_ns > 0 ? x->cost_ns : 0);
        printf(",\"cost_known\":%s,\"pct_of_run\":", x->cost_ns >= 0 ? "true" : "false");
        json_num(x->pct_of_run);
        printf(",\"estimate\":");
        tu_json_str(stdout, x->estimate ? x->estimate : "", (size_t)-1);
        printf(",\"location\":{\"site\":%u,\"function\":", x->site);
        tu_json_str(stdout, x->func, (size_t)-1);
        printf(",\"file\":");
        tu_json_str(stdout, x->file, (size_t)-1);
        printf(",\"line\":%u},\"evidence\":{", x->line);
        for (uint32_t e = 0; e < x->nevidence; e++) {
            printf("%s\"%s\":", e ? "," : "", x->evidence[e].key);
            json_num(x->evidence[e].value);
        }
        printf("},\"details\":[");
        for (uint32_t d = 0; d < x->ndetails; d++) {
            if (d) printf(",");
            tu_json_str(stdout, x->details[d], (size_t)-1);
        }
        printf("],\"hint\":");
        tu_json_str(stdout, x->hint, (size_t)-1);
        printf("}");
    }
    printf("],\"allocators\":[");
    hunt_allocator al[HUNT_CLI_ALLOCATORS];
    size_t na = mm ? hunt_allocators(mm, al, HUNT_CLI_ALLOCATORS) : 0;
    for (size_t i = 0; i < na; i++) {
        const jm_site *s = jm_site_get(mm, al[i].site);
        printf("%s{\"site\":%u,\"function\":", i ? "," : "", al[i].site);
        tu_json_str(stdout, s ? s->name : "", (size_t)-1);
        printf(",\"file\":");
        tu_json_str(stdout, s ? s->file : "", (size_t)-1);
        printf(",\"line\":%u,\"bytes\":%" PRIu64 ",\"self_bytes\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"region_ns\":",
               s ? s->line : 0, al[i].bytes, al[i].self_bytes, al[i].calls);
        json_num(al[i].region_ns);
        printf(",\"bytes_per_ns\":");
        json_num(al[i].bytes_per_ns);
        printf(",\"gc_ns\":%" PRIu64 "}", al[i].gc_ns);
    }
    printf("]}\n");
}

/* Prefix each finding of one rank with "rank R: " so a job's list says whose it is. */
static int label_rank(hunt_finding *f, size_t n, int64_t rank)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(f[i].title) + 32;
        char *t = malloc(len);
        if (!t) return -1;
        snprintf(t, len, "rank %lld: %s", (long long)rank, f[i].title);
        free(f[i].title);
        f[i].title = t;
    }
    return 0;
}

int cmd_hunt(int argc, char **argv)
{
    hunt_cli o;
    int a = parse_args(argc, argv, &o);
    if (a != 0) {
        free(o.paths);
        return cli_parse_exit(a);
    }
    jm_job *j = cli_open_job("hunt", o.paths, o.npaths);
    if (!j) {
        free(o.paths);
        return JAGER_EXIT_INPUT;
    }
    if (j->n > 1 || j->from_job_file) o.path = o.npaths == 1 ? o.paths[0] : o.label;
    jm_model **ms = calloc(j->n, sizeof *ms);
    int *rcs = calloc(j->n, sizeof *rcs);
    hunt_finding *f = NULL;
    size_t n = 0;
    hunt_input in = {.clean_end = 1, .parts = j->n};
    int code = JAGER_EXIT_OK, oom = !ms || !rcs, readable = 0;
    jm_mpi *mpi = NULL;
    if (!oom && jm_mpi_build(j, &mpi)) oom = 1;
    for (size_t p = 0; p < j->n && !oom; p++) {
        jager_reader_rewind(j->parts[p].r);
        if (jm_model_build(j->parts[p].r, NULL, &ms[p], &rcs[p]) != JAGER_OK) {
            oom = 1;
            break;
        }
        const jm_model *m = ms[p];
        if (rcs[p] < 0 && m->events == 0 && rcs[p] != JAGER_E_TRUNCATED) continue; /* nothing readable */
        readable++;
        in.model = j->n == 1 ? m : NULL;
        if (m->run_ns > in.run_ns) in.run_ns = m->run_ns;
        in.events += m->events;
        in.truncated |= m->info.truncated;
        in.clean_end &= m->info.clean_end;
        hunt_finding *pf = NULL;
        size_t pn = 0;
        if (hunt_run(m, &o.opt, &pf, &pn) != 0) {
            oom = 1;
            break;
        }
        if (mpi) pn = hunt_mpi_filter_part(mpi, (uint32_t)p, m, pf, pn);
        if (j->n > 1 && label_rank(pf, pn, j->parts[p].rank)) oom = 1;
        if (!pn) {
            free(pf);
            continue;
        }
        hunt_finding *grown = realloc(f, (n + pn) * sizeof *f);
        if (!grown) {
            hunt_free(pf, pn);
            oom = 1;
            break;
        }
        f = grown;
        memcpy(f + n, pf, pn * sizeof *f);
        n += pn;
        free(pf);
    }
    if (!oom && readable && hunt_run_mpi(mpi, j, (const jm_model *const *)ms, &o.opt, &f, &n) != 0) oom = 1;
    if (oom) {
        fprintf(stderr, "jager hunt: %s: out of memory\n", o.path);
        code = JAGER_EXIT_INPUT;
    } else if (!readable) {
        code = cli_finish("hunt", j->parts[0].label, j->parts[0].r, rcs[0]);
    } else {
        if (o.json) print_json(&in, &o, f, n);
        else print_text(&in, &o, f, n);
        fflush(stdout);
        for (size_t p = 0; p < j->n; p++) {
            int c = cli_finish("hunt", j->parts[p].label, j->parts[p].r, rcs[p]);
            if (c > code) code = c;
        }
    }
    if (j->n > 1 && j->nmissing && !oom) {
        fprintf(stderr, "jager hunt: %s: rank(s) missing from the job:", o.path);
        for (size_t i = 0; i < j->nmissing; i++) fprintf(stderr, "%s%u", i ? "," : " ", j->missing[i]);
        fprintf(stderr, "\n");
    }
    hunt_free(f, n);
    for (size_t p = 0; ms && p < j->n; p++) jm_model_free(ms[p]);
    free(ms);
    free(rcs);
    jm_mpi_free(mpi);
    jm_job_free(j);
    free(o.paths);
    return code;
}
