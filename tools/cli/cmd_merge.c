/* cmd_merge.c — `jager merge FILE… -o JOB.jgr`: the per-rank recordings of an MPI job
 * (JAGER_MPI_AGGREGATE=0, or the files a job left when its gather failed), folders of
 * them, or job files, joined into one job file: the same bytes the mpi plugin gathers at
 * MPI_Finalize (docs/mpi.md "Aggregation"), parts in rank order. Each part is checked to
 * read to its end first; parts of different jobs (another mpi.trace_id) are refused
 * unless --force. Exit 0, 1 bad usage, 2 unreadable input or output, 3 a part is cut
 * short (merged as it is). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "job.h"
#include "plugin_events.h"

static void usage(FILE *out)
{
    fputs("usage: jager merge FILE.jgr… | FOLDER -o JOB.jgr [--force]\n"
          "  joins the per-rank recordings of an MPI job (or job files) into one job file, ranks in order\n"
          "  --force  merge recordings of different jobs (different mpi.trace_id)\n",
          out);
}

int cmd_merge(int argc, char **argv)
{
    const char *outp = NULL;
    int force = 0;
    const cli_opt opts[] = {
        CLI_STRING_OPT("--output", "-o", &outp),
        {.name = "--force", .kind = CLI_FLAG, .dest = &force, .flag_value = 1},
    };
    const char **pos = calloc((size_t)argc + 1, sizeof *pos);
    if (!pos) return JAGER_EXIT_INPUT;
    const cli_spec spec = {"merge", usage, opts, sizeof opts / sizeof opts[0], 1, (size_t)argc, 0, "recording"};
    size_t npos = 0;
    int a = cli_parse(&spec, argc, argv, pos, &npos);
    if (a != 0) {
        free(pos);
        return cli_parse_exit(a);
    }
    if (!outp) {
        fprintf(stderr, "jager merge: -o JOB.jgr is required\n");
        usage(stderr);
        free(pos);
        return JAGER_EXIT_USAGE;
    }
    jm_job *j = cli_open_job("merge", pos, npos);
    free(pos);
    if (!j) return JAGER_EXIT_INPUT;
    int code = JAGER_EXIT_OK;
    const char *trace = NULL;
    for (size_t i = 0; i < j->n; i++) {
        jm_part *p = &j->parts[i];
        jager_event ev;
        int rc;
        while ((rc = jager_reader_next(p->r, &ev)) > 0) {}
        if (rc < 0) {
            fprintf(stderr, "jager merge: %s: %s (merged as it is)\n", p->label, jager_reader_error(p->r));
            code = JAGER_EXIT_PARTIAL;
        }
        const char *t = jager_reader_meta(p->r, jp_mpi_meta[JP_MPI_META_TRACE_ID]);
        if (t && trace && strcmp(t, trace) && !force) {
            fprintf(stderr, "jager merge: %s belongs to another job (mpi.trace_id %s, not %s); --force merges anyway\n",
                    p->label, t, trace);
            jm_job_free(j);
            return JAGER_EXIT_INPUT;
        }
        if (t && !trace) trace = t;
        if (p->rank < 0)
            fprintf(stderr, "jager merge: %s: no MPI rank in it (no mpi.rank metadata): merged after the ranks\n", p->label);
    }
    if (jm_job_write(j, outp)) {
        /* nothing to remove: a regular file is left as it was (written through a temporary),
         * and a device or FIFO is never removed */
        fprintf(stderr, "jager merge: %s: cannot write\n", outp);
        jm_job_free(j);
        return JAGER_EXIT_INPUT;
    }
    printf("jager merge: %zu rank(s) into %s", j->n, outp);
    if (j->nmissing) {
        printf(", missing rank(s):");
        for (size_t i = 0; i < j->nmissing; i++) printf("%s%u", i ? "," : " ", j->missing[i]);
    }
    printf("\n");
    jm_job_free(j);
    return code;
}
