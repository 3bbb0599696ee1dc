/* The tools' fuzz target (issue 16: "the fuzz target over every command"): each input is
 * written to a file and run through the `jager` commands in-process, as the command line
 * calls them (tools/cli: cmd_*.c) — info, dump, summary (merged, per thread, JSON, by
 * method), hunt (its rules), report (the report model and the page), every exporter (chrome,
 * speedscope, pprof, parquet, csv, folded), merge into a job file and that job through
 * summary and the one-output-per-job exports, compare of the input with itself. Any crash,
 * overread, leak, UB or hang is a bug.
 *
 * Two ways in: LLVMFuzzerTestOneInput (libFuzzer, run_fuzz.sh builds it with clang) and
 * fuzz_tools_run(), which fuzz_replay.c calls for each file of the committed corpus
 * (tests/file/fuzz-corpus: test_file_fuzz_corpus, built always, also under ASan/UBSan and
 * valgrind). Outputs go to one private folder under $TMPDIR; stdout goes to /dev/null. */
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "fuzz_tools.h"

static char work[4096]; /* the private folder */
static char in[4200];   /* the input, written there */

static int setup(void)
{
    if (work[0]) return 0;
    const char *t = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/jager-fuzz-tools-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(work)) {
        perror("fuzz_tools: mkdtemp");
        work[0] = 0;
        return -1;
    }
    snprintf(in, sizeof in, "%s/in.jgr", work);
    /* the commands' tables and JSON: not wanted, and a fuzzer's output should stay readable */
    int dn = open("/dev/null", O_WRONLY);
    if (dn >= 0) {
        fflush(stdout);
        dup2(dn, 1);
        close(dn);
    }
    setenv("JAGER_QUIET", "1", 1);
    return 0;
}

/* Run one command: argv[0] is the command's name; "@IN" is the input, "@OUT/x" a path
 * in the private folder. Returns its exit code. */
static int run(int (*cmd)(int, char **), ...)
{
    char *argv[16];
    char buf[16][4300];
    int argc = 0;
    va_list ap;
    va_start(ap, cmd);
    for (const char *a; argc < 15 && (a = va_arg(ap, const char *));) {
        if (!strcmp(a, "@IN")) snprintf(buf[argc], sizeof buf[argc], "%s", in);
        else if (!strncmp(a, "@OUT/", 5)) snprintf(buf[argc], sizeof buf[argc], "%s/%s", work, a + 5);
        else snprintf(buf[argc], sizeof buf[argc], "%s", a);
        argv[argc] = buf[argc];
        argc++;
    }
    va_end(ap);
    argv[argc] = NULL;
    int rc = cmd(argc, argv);
    fflush(stdout);
    return rc;
}

int fuzz_tools_run(const uint8_t *data, size_t size, int *codes, int max)
{
    if (setup()) return -1;
    FILE *f = fopen(in, "wb");
    if (!f) return -1;
    int bad = size && fwrite(data, 1, size, f) != size;
    bad |= fclose(f) != 0; /* closed either way */
    if (bad) return -1;
    char job[4200]; /* not a previous input's: each input reproduces alone */
    snprintf(job, sizeof job, "%s/job.jgr", work);
    unlink(job);
    int c[FUZZ_TOOLS_COMMANDS], n = 0;
    c[n++] = run(cmd_info, "info", "@IN", NULL);
    c[n++] = run(cmd_dump, "dump", "--limit", "5000", "@IN", NULL);
    c[n++] = run(cmd_summary, "summary", "@IN", NULL);
    c[n++] = run(cmd_summary, "summary", "--threads", "--format", "json", "@IN", NULL);
    c[n++] = run(cmd_summary, "summary", "--by", "method", "--depth", "3", "@IN", NULL);
    c[n++] = run(cmd_hunt, "hunt", "--format", "json", "@IN", NULL);
    c[n++] = run(cmd_report, "report", "-o", "@OUT/report.html", "@IN", NULL);
    c[n++] = run(cmd_export, "export", "--format", "chrome", "-o", "@OUT/out.trace.json", "@IN", NULL);
    c[n++] = run(cmd_export, "export", "--format", "speedscope", "-o", "@OUT/out.speedscope.json", "@IN", NULL);
    c[n++] = run(cmd_export, "export", "--format", "pprof", "-o", "@OUT/out.pb.gz", "@IN", NULL);
    c[n++] = run(cmd_export, "export", "--format", "parquet", "-o", "@OUT/parquet", "@IN", NULL);
    c[n++] = run(cmd_export, "export", "--format", "csv", "-o", "@OUT/csv", "@IN", NULL);
    c[n++] = run(cmd_export, "export", "--format", "folded", "-o", "@OUT/out.folded", "@IN", NULL);
    /* the job paths: the input twice as two parts of one job file, read back as a job */
    c[n++] = run(cmd_merge, "merge", "--force", "-o", "@OUT/job.jgr", "@IN", "@IN", NULL);
    c[n++] = run(cmd_summary, "summary", "@OUT/job.jgr", NULL);
    c[n++] = run(cmd_export, "export", "--format", "chrome", "-o", "@OUT/job.trace.json", "@OUT/job.jgr", NULL);
    c[n++] = run(cmd_export, "export", "--format", "pprof", "-o", "@OUT/job.pb.gz", "@OUT/job.jgr", NULL);
    c[n++] = run(cmd_compare, "compare", "@IN", "@IN", NULL);
    unlink(in);
    for (int i = 0; i < n && i < max; i++) codes[i] = c[i];
    return n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void fuzz_tools_cleanup(void)
{
    if (work[0]) nftw(work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    work[0] = 0;
}

#ifdef FUZZ_TOOLS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int codes[FUZZ_TOOLS_COMMANDS];
    fuzz_tools_run(data, size, codes, FUZZ_TOOLS_COMMANDS);
    return 0;
}
#endif
