/* cmd_hunt.c — `jager hunt FILE [--format text|json] [--min-pct P]`: the ranked findings
 * of hunt_rules.h, as text for people or JSON for tools. Exit 0, or 3 when the file was
 * cut short (findings for the readable prefix), 2 when it cannot be read at all. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "hunt_rules.h"
#include "model.h"
#include "toolutil.h"

typedef struct hunt_cli {
    const char *path;
    int json;
    hunt_options opt;
} hunt_cli;

static void usage(FILE *out)
{
    fputs("usage: jager hunt FILE.jgr [--format text|json] [--min-pct P]\n"
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
    const cli_spec spec = {"hunt", usage, opts, sizeof opts / sizeof opts[0], 1, 1, 0, NULL};
    size_t npos;
    return cli_parse(&spec, argc, argv, &o->path, &npos);
}

static void print_text(const jm_model *m, const hunt_cli *o, const hunt_finding *f, size_t n)
{
    char a[32], fit[2048];
    jm_text_fit(fit, sizeof fit, o->path, 120);
    printf("jager hunt %s: run %s, %" PRIu64 " events", fit, tu_fmt_ns(a, sizeof a, (double)m->run_ns), m->events);
    if (m->info.truncated) printf(", file TRUNCATED (findings cover the readable part)");
    printf("\n");
    size_t problems = 0;
    for (size_t i = 0; i < n; i++) problems += f[i].kind != HUNT_PLUGIN_EVENTS && f[i].kind != HUNT_DROPPED_EVENTS;
    if (!problems) printf("no performance problems found above %.1f%% of the run\n", o->opt.min_pct);
    for (size_t i = 0; i < n; i++) {
        const hunt_finding *x = &f[i];
        jm_text_fit(fit, sizeof fit, x->title, 0);
        printf("\n%zu. [%s] %s\n", i + 1, hunt_kind_name(x->kind), fit);
        if (*x->func) {
            jm_text_fit(fit, sizeof fit, x->func, 80);
            printf("   at %s", fit);
            if (*x->file) {
                jm_text_fit(fit, sizeof fit, x->file, 120);
                printf(" (%s:%u)", fit, x->line);
            }
            printf("\n");
        }
        if (x->cost_ns > 0) printf("   cost %s (%.1f%% of the run)\n", tu_fmt_ns(a, sizeof a, x->cost_ns), x->pct_of_run);
        printf("   evidence:");
        for (uint32_t e = 0; e < x->nevidence; e++) {
            const hunt_evidence *v = &x->evidence[e];
            if (!strcmp(v->unit, "ns")) printf(" %s=%s", v->key, tu_fmt_ns(a, sizeof a, v->value));
            else if (!strcmp(v->unit, "bytes")) printf(" %s=%s", v->key, tu_fmt_bytes(a, sizeof a, v->value));
            else if (!strcmp(v->unit, "%")) printf(" %s=%.1f%%", v->key, v->value);
            else if (v->value == (double)(uint64_t)v->value) printf(" %s=%" PRIu64, v->key, (uint64_t)v->value);
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
}

static void json_num(double v)
{
    if (v != v || v > 1e300 || v < -1e300) printf("0"); /* JSON has no NaN or infinity */
    else if (v == (double)(int64_t)v && v < 9e15 && v > -9e15) printf("%" PRId64, (int64_t)v);
    else printf("%.6g", v);
}

static void print_json(const jm_model *m, const hunt_cli *o, const hunt_finding *f, size_t n)
{
    printf("{\"tool\":\"jager hunt\",\"version\":");
    tu_json_str(stdout, jager_version_string(), (size_t)-1);
    printf(",\"file\":");
    tu_json_str(stdout, o->path, (size_t)-1);
    printf(",\"run_ns\":%" PRIu64 ",\"events\":%" PRIu64 ",\"truncated\":%s,\"clean_end\":%s,\"min_pct\":", m->run_ns,
           m->events, m->info.truncated ? "true" : "false", m->info.clean_end ? "true" : "false");
    json_num(o->opt.min_pct);
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
    printf("]}\n");
}

int cmd_hunt(int argc, char **argv)
{
    hunt_cli o;
    int a = parse_args(argc, argv, &o);
    if (a != 0) return cli_parse_exit(a);
    jager_reader *r = cli_open("hunt", o.path);
    if (!r) return JAGER_EXIT_INPUT;
    jm_model *m = NULL;
    int rc = 0;
    if (jm_model_build(r, NULL, &m, &rc) != JAGER_OK) {
        fprintf(stderr, "jager hunt: %s: out of memory\n", o.path);
        jager_reader_close(r);
        return JAGER_EXIT_INPUT;
    }
    if (rc < 0 && m->events == 0 && rc != JAGER_E_TRUNCATED) { /* nothing readable: no findings to give */
        int code = cli_finish("hunt", o.path, r, rc);
        jm_model_free(m);
        jager_reader_close(r);
        return code;
    }
    hunt_finding *f = NULL;
    size_t n = 0;
    int code;
    if (hunt_run(m, &o.opt, &f, &n) != 0) {
        fprintf(stderr, "jager hunt: %s: out of memory\n", o.path);
        code = JAGER_EXIT_INPUT;
    } else {
        if (o.json) print_json(m, &o, f, n);
        else print_text(m, &o, f, n);
        fflush(stdout);
        code = cli_finish("hunt", o.path, r, rc);
    }
    hunt_free(f, n);
    jm_model_free(m);
    jager_reader_close(r);
    return code;
}
