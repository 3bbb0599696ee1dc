/* jager — turns .jgr recordings into summaries, findings, reports and standard formats. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "export.h"
#include "jager.h"

typedef struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} command;

static void usage(FILE *out, const command *cmds, size_t n)
{
    fprintf(out, "usage: jager <command> [options] FILE.jgr\n\ncommands:\n");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].help);
    fprintf(out, "\n'jager <command> --help' describes each command. jager %s\n", jager_version_string());
}

int main(int argc, char **argv)
{
    const command cmds[] = {
        {"summary", cmd_summary, "per-site table: calls, time, % of parent, percentiles, bytes, GC %"},
        {"dump", cmd_dump, "every event as one JSON line"},
        {"hunt", cmd_hunt, "ranked findings: what is slow and why"},
        {"report", cmd_report, "one self-contained HTML report (timeline, flame graph, findings)"},
        {"export", cmd_export, export_format_names()}, /* the registry's list: none missed */
        {"info", cmd_info, "file metadata, threads, event types and counts"},
        {"plugins", cmd_plugins, "list installed plugins and their options"},
        {"bench", cmd_bench, "run a benchmark command N times: per-kernel results as JSON (docs/compare.md)"},
        {"compare", cmd_compare, "compare benchmark results: regressions with confidence intervals (a CI gate)"},
        {"merge", cmd_merge, "join the per-rank recordings of an MPI job into one job file"},
        {"lock", cmd_lock, "lock file of the shared objects a program maps and a Julia environment's packages"},
        {"verify", cmd_verify, "check shared objects and packages against a lock file (exit 1 on any difference)"},
        {"plugin-check", cmd_plugin_check, "load a plugin in a scratch process, run it twice, report every rule it breaks"},
    };
    const size_t n = sizeof cmds / sizeof cmds[0];
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout, cmds, n);
        return argc < 2 ? JAGER_EXIT_USAGE : JAGER_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("jager %s\n", jager_version_string());
        return JAGER_EXIT_OK;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(argv[1], cmds[i].name) != 0) continue;
        return cmds[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "jager: unknown command '%s'\n", argv[1]);
    usage(stderr, cmds, n);
    return JAGER_EXIT_USAGE;
}
