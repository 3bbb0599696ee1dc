/* Which process records, and where (launch.c): launcher names, launcher rank variables,
 * output path expansion (%p, %r, one file per rank), the claim of an output file (a write
 * lock, never two live writers; a file an earlier process of the run wrote is not
 * overwritten, a stale one is), devices written straight, and the lazy file sink of
 * zero-code mode (no event, no file). Two jager_init()s on one JAGER_OUTPUT: the second
 * is refused with one sentence and the first's file stays whole. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "jager_reader.h"
#include "testutil.h"

static const char *const rank_env[] = {"PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                                       "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
                                       "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "PALS_RANKID", "PALS_SIZE",
                                       "ALPS_APP_PE", NULL};

static void clear_rank_env(void)
{
    for (int i = 0; rank_env[i]; i++) unsetenv(rank_env[i]);
}

static void test_launcher_names(void **state)
{
    (void)state;
    unsetenv("JAGER_LAUNCHERS");
    const char *yes[] = {"timeout", "env", "time", "nice", "taskset", "numactl", "sh", "bash", "dash",
                         "mpiexec", "mpirun", "mpiexec.hydra", "hydra_pmi_proxy", "srun", "valgrind", "valgrind.bin"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) assert_int_equal(jg_launch_is_launcher(yes[i]), 1);
    const char *no[] = {"julia", "solver", "python3", "launch_prog", "", "timeoutx", "envy"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) assert_int_equal(jg_launch_is_launcher(no[i]), 0);
    setenv("JAGER_LAUNCHERS", "mywrap, -nice,other", 1);
    assert_int_equal(jg_launch_is_launcher("mywrap"), 1);
    assert_int_equal(jg_launch_is_launcher("other"), 1);
    assert_int_equal(jg_launch_is_launcher("nice"), 0);
    assert_int_equal(jg_launch_is_launcher("timeout"), 1);
    unsetenv("JAGER_LAUNCHERS");
    assert_int_equal(jg_launch_is_launcher(NULL), 0); /* this test program */
}

static void test_rank_variables(void **state)
{
    (void)state;
    clear_rank_env();
    int size = 0;
    assert_int_equal(jg_launch_rank(&size), -1);
    assert_int_equal(size, -1);
    setenv("PMI_RANK", "3", 1);
    setenv("PMI_SIZE", "4", 1);
    assert_int_equal(jg_launch_rank(&size), 3);
    assert_int_equal(size, 4);
    clear_rank_env();
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    assert_int_equal(jg_launch_rank(&size), 2);
    assert_int_equal(size, -1);
    clear_rank_env();
    /* a batch script: SLURM_PROCID without a job step is not a rank */
    setenv("SLURM_PROCID", "0", 1);
    assert_int_equal(jg_launch_rank(&size), -1);
    setenv("SLURM_STEP_NUM_TASKS", "8", 1);
    assert_int_equal(jg_launch_rank(&size), 0);
    assert_int_equal(size, 8);
    clear_rank_env();
    setenv("PMI_RANK", "-1", 1);
    assert_int_equal(jg_launch_rank(NULL), -1);
    setenv("PMI_RANK", "7x", 1);
    assert_int_equal(jg_launch_rank(NULL), -1);
    clear_rank_env();
}

static void test_output_path(void **state)
{
    (void)state;
    clear_rank_env();
    char out[256], want[256];
    jg_launch_output_path(out, sizeof out, "run.jgr", 0);
    assert_string_equal(out, "run.jgr");
    jg_launch_output_path(out, sizeof out, "run.%p.jgr", 0);
    snprintf(want, sizeof want, "run.%d.jgr", (int)getpid());
    assert_string_equal(out, want);
    jg_launch_output_path(out, sizeof out, "run.%r.jgr", 0);
    snprintf(want, sizeof want, "run.p%d.jgr", (int)getpid());
    assert_string_equal(out, want);
    setenv("PMI_RANK", "5", 1);
    setenv("PMI_SIZE", "8", 1);
    jg_launch_output_path(out, sizeof out, "job.jgr", 0); /* one file per rank */
    assert_string_equal(out, "job.jgr.5");
    jg_launch_output_path(out, sizeof out, "job.%r.jgr", 0);
    assert_string_equal(out, "job.5.jgr");
    jg_launch_output_path(out, sizeof out, "job.%p.jgr", 0);
    snprintf(want, sizeof want, "job.%d.jgr", (int)getpid());
    assert_string_equal(out, want);
    setenv("PMI_SIZE", "1", 1); /* a job of one: its file is the output */
    jg_launch_output_path(out, sizeof out, "job.jgr", 0);
    assert_string_equal(out, "job.jgr");
    clear_rank_env();
    char tiny[8];
    jg_launch_output_path(tiny, sizeof tiny, "abcdefghijkl%p", 0); /* truncated, terminated */
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

static off_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* A live holder refuses a second claim (from another process: a lock is per file
 * description, and a child's open is another one). */
static void test_claim_lock(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    unsetenv("JAGER_AUTOSTARTED");
    jg_launch_snapshot_env(); /* what jager_init would have copied */
    char why[512];
    int fd = jg_launch_claim(path, why, sizeof why);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abc", 3), 3);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char w[512];
        int r = jg_launch_claim(path, w, sizeof w);
        _exit(r == -2 && strstr(w, "is being recorded by another process") && strstr(w, path) ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(file_size(path), 3); /* not truncated by the refused claim */
    close(fd);
    fd = jg_launch_claim(path, why, sizeof why); /* released: taken, and truncated */
    assert_true(fd >= 0);
    assert_int_equal(file_size(path), 0);
    close(fd);
    unlink(path);
}

/* The tree's mark: a file that existed when the tree began is stale and replaced; one that
 * changed since (an earlier process of the run wrote it) is not. */
static void test_claim_tree(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    assert_int_equal(tu_write_file(path, "old recording", 13), 0);
    setenv("JAGER_OUTPUT", path, 1);
    unsetenv("JAGER_AUTOSTARTED");
    jg_launch_mark_tree();
    assert_non_null(getenv("JAGER_AUTOSTARTED"));
    pid_t pid = fork(); /* another process of the run: the stale file is replaced */
    if (pid == 0) {
        char w[512];
        int r = jg_launch_claim(path, w, sizeof w);
        if (r < 0) _exit(1);
        if (write(r, "first", 5) != 5) _exit(2);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(WEXITSTATUS(st), 0);
    size_t n = 0;
    uint8_t *d = tu_read_file(path, &n);
    assert_int_equal(n, 5);
    assert_memory_equal(d, "first", 5);
    free(d);
    pid = fork(); /* a later process of the same run: the first wins */
    if (pid == 0) {
        char w[512];
        int r = jg_launch_claim(path, w, sizeof w);
        _exit(r == -2 && strstr(w, "was recorded by an earlier process of this run") ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(file_size(path), 5);
    /* no file when the tree began: whatever is there now is this run's */
    unlink(path);
    unsetenv("JAGER_AUTOSTARTED");
    jg_launch_mark_tree();
    assert_non_null(strstr(getenv("JAGER_AUTOSTARTED"), ":none"));
    assert_int_equal(tu_write_file(path, "x", 1), 0);
    pid = fork();
    if (pid == 0) {
        char w[512];
        _exit(jg_launch_claim(path, w, sizeof w) == -2 ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(WEXITSTATUS(st), 0);
    /* a %p output has no single file: the mark says so and only the lock applies */
    setenv("JAGER_OUTPUT", "run.%p.jgr", 1);
    unsetenv("JAGER_AUTOSTARTED");
    jg_launch_mark_tree();
    const char *m = getenv("JAGER_AUTOSTARTED");
    assert_string_equal(strchr(m, ':'), ":p");
    char out[256];
    setenv("PMI_RANK", "2", 1);
    setenv("PMI_SIZE", "4", 1);
    setenv("JAGER_OUTPUT", "run.2.jgr", 1); /* what a wrapper's mpi plugin left for its exec */
    jg_launch_output_path(out, sizeof out, "run.2.jgr", 1);
    assert_string_equal(out, "run.2.jgr"); /* no second suffix */
    unsetenv("JAGER_AUTOSTARTED");
    jg_launch_output_path(out, sizeof out, "run.2.jgr", 1);
    assert_string_equal(out, "run.2.jgr.2");
    clear_rank_env();
    unsetenv("JAGER_AUTOSTARTED");
    unsetenv("JAGER_OUTPUT");
    unlink(path);
}

/* A device is opened as it is: not locked, not truncated, not replaced. */
static void test_claim_device(void **state)
{
    (void)state;
    char why[512];
    int fd = jg_launch_claim("/dev/null", why, sizeof why);
    assert_true(fd >= 0);
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    close(fd);
    assert_int_equal(stat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_int_equal(jg_launch_claim("/nonexistent-dir/x.jgr", why, sizeof why), -1);
    assert_non_null(strstr(why, "cannot open output"));
}

/* The lazy sink (zero-code mode): no event, no file; the first event creates it. */
static void test_lazy_sink(void **state)
{
    (void)state;
    unsetenv("JAGER_AUTOSTARTED");
    jg_launch_snapshot_env(); /* what jager_init would have copied */
    const char *path = tu_tmp_path(".jgr");
    unlink(path);
    jager_sink s;
    assert_int_equal(jg_file_sink_create(path, 1, &s), JAGER_OK);
    assert_int_equal(s.open(s.ctx), JAGER_OK);
    jager_batch empty = {0};
    assert_int_equal(s.write(s.ctx, &empty), JAGER_OK);
    s.flush(s.ctx);
    assert_int_equal(file_size(path), -1);
    s.close(s.ctx);
    assert_int_equal(file_size(path), -1); /* discarded, not left "not closed" */
}

/* A program run bare that recorded nothing keeps its (empty, complete) recording; once it
 * has made a child with fork() it is a wrapper that handed on and leaves none. Runs first:
 * the other tests fork. */
static void test_keep_empty(void **state)
{
    (void)state;
    char mark[64];
    snprintf(mark, sizeof mark, "%d:none", (int)getpid());
    setenv("JAGER_AUTOSTARTED", mark, 1);
    jg_launch_snapshot_env(); /* what jager_init would have copied */
    assert_int_equal(jg_launch_keep_empty(), 1);
    const char *path = tu_tmp_path(".jgr");
    jager_sink s;
    assert_int_equal(jg_file_sink_create(path, 1, &s), JAGER_OK);
    assert_int_equal(s.open(s.ctx), JAGER_OK);
    s.flush(s.ctx);
    assert_int_equal(file_size(path), -1); /* not before the end */
    s.close(s.ctx);
    jager_reader *r;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    jager_event ev;
    int rc, events = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) events++;
    assert_int_equal(rc, 0);
    jager_reader_info info = {.struct_size = sizeof info};
    assert_int_equal(jager_reader_get_info(r, &info), JAGER_OK);
    assert_int_equal(info.clean_end, 1);
    assert_int_equal(events, 0);
    jager_reader_close(r);
    unlink(path);
    snprintf(mark, sizeof mark, "%d:none", (int)getpid() + 1); /* not the tree's first process */
    setenv("JAGER_AUTOSTARTED", mark, 1);
    jg_launch_snapshot_env(); /* what jager_init would have copied */
    assert_int_equal(jg_launch_keep_empty(), 0);
    snprintf(mark, sizeof mark, "%d:none", (int)getpid());
    setenv("JAGER_AUTOSTARTED", mark, 1);
    jg_launch_snapshot_env(); /* what jager_init would have copied */
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_int_equal(jg_launch_keep_empty(), 0); /* it forked: a wrapper */
    unsetenv("JAGER_AUTOSTARTED");
}

/* Two programs with one JAGER_OUTPUT (16.10): the second jager_init() is refused with one
 * sentence naming the file; the first's recording is whole. */
static void test_two_writers(void **state)
{
    (void)state;
    unsetenv("JAGER_AUTOSTARTED");
    const char *path = tu_tmp_path(".jgr");
    int go[2], res[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(res), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the second program: starts once the first records */
        char c;
        close(go[1]);
        close(res[0]);
        if (read(go[0], &c, 1) != 1) _exit(3);
        jager_config cfg = tu_config(0);
        cfg.output = path;
        jager_status st = jager_init(&cfg);
        char msg[600];
        snprintf(msg, sizeof msg, "%d|%s", (int)st, jager_last_error());
        if (write(res[1], msg, strlen(msg)) < 0) _exit(4);
        _exit(0);
    }
    close(go[0]);
    close(res[1]);
    jager_config cfg = tu_config(16u << 20);
    cfg.output = path;
    assert_int_equal(jager_init(&cfg), JAGER_OK);
    jager_site site = jager_site_register("claim.span", __FILE__, __LINE__);
    for (int i = 0; i < 1000; i++) jager_span_end(jager_span_begin(site));
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(write(go[1], "g", 1), 1);
    char msg[600] = "";
    ssize_t n = read(res[0], msg, sizeof msg - 1);
    assert_true(n > 0);
    msg[n] = 0;
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char want[600];
    snprintf(want, sizeof want, "%d|%s is being recorded by another process; process %d", (int)JAGER_E_IO, path, (int)pid);
    assert_true(strncmp(msg, want, strlen(want)) == 0);
    for (int i = 0; i < 1000; i++) jager_span_end(jager_span_begin(site));
    jager_shutdown();
    jager_reader *r;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    jager_event ev;
    int rc;
    uint64_t spans = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) spans += ev.type == JAGER_EV_SPAN;
    assert_int_equal(rc, 0);
    jager_reader_info info = {.struct_size = sizeof info};
    assert_int_equal(jager_reader_get_info(r, &info), JAGER_OK);
    assert_int_equal(info.clean_end, 1);
    assert_int_equal(info.truncated, 0);
    assert_int_equal(spans, 2000);
    jager_reader_close(r);
    close(go[1]);
    close(res[0]);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_empty),     cmocka_unit_test(test_launcher_names),
        cmocka_unit_test(test_rank_variables),
        cmocka_unit_test(test_output_path),    cmocka_unit_test(test_claim_lock),
        cmocka_unit_test(test_claim_tree),     cmocka_unit_test(test_claim_device),
        cmocka_unit_test(test_lazy_sink),      cmocka_unit_test(test_two_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
