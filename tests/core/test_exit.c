/* The end of the process keeps the recording whole: exit(), quick_exit(), return from
 * main, SIGINT and SIGTERM (with the default action, and chained to a program's own
 * handler) each leave a complete file (END block, statistics) with the exact span count; a
 * forked child never touches its parent's file; a FIFO whose reader leaves, or that has
 * none, never kills or blocks the program; jager_flush() racing jager_init() and
 * jager_shutdown() on other threads is safe (run under ASan and TSan by the sanitizer
 * tests). Each case runs exit_helper (exit_helper.c) as a child process. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "jager_reader.h"
#include "testutil.h"

#define N 20000

typedef struct child {
    pid_t pid;
    FILE *out; /* its stdout */
    int in;    /* its stdin, -1 if not piped */
} child;

/* Start exit_helper MODE PATH n with stdout (and stdin when \p pipe_in) piped. */
static child start(const char *mode, const char *path, long n, int pipe_in, const char *signals_env)
{
    child c = {-1, NULL, -1};
    int out[2], in[2] = {-1, -1};
    assert_int_equal(pipe(out), 0);
    if (pipe_in) assert_int_equal(pipe(in), 0);
    char nbuf[32];
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    c.pid = fork();
    assert_true(c.pid >= 0);
    if (c.pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        if (pipe_in) {
            dup2(in[0], 0);
            close(in[0]);
            close(in[1]);
        }
        if (signals_env) setenv("JAGER_SIGNALS", signals_env, 1);
        else unsetenv("JAGER_SIGNALS");
        setenv("JAGER_QUIET", "1", 1);
        setenv("JAGER_RING_BYTES", "16777216", 1); /* no ring drops: exact counts */
        setenv("JAGER_SAMPLE", "all", 1);          /* and every span an event */
        execl(EXIT_HELPER, EXIT_HELPER, mode, path, nbuf, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    c.out = fdopen(out[0], "r");
    if (pipe_in) {
        close(in[0]);
        c.in = in[1];
    }
    return c;
}

/* Wait (at most 60 s) for the child; returns its wait status. */
static int finish(child *c)
{
    int status = 0;
    for (int i = 0; i < 6000; i++) {
        pid_t w = waitpid(c->pid, &status, WNOHANG);
        if (w == c->pid) break;
        if (i == 5999) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, &status, 0);
            fail_msg("exit_helper did not end within 60 s (blocked?)");
        }
        tu_sleep_ns(10000000);
    }
    if (c->out) fclose(c->out);
    if (c->in >= 0) close(c->in);
    return status;
}

static void wait_ready(child *c)
{
    char line[32] = "";
    assert_non_null(fgets(line, sizeof line, c->out));
    assert_string_equal(line, "ready\n");
}

/* The file is whole (clean end, every frame read) with exactly \p spans spans of
 * "exit.span", and its statistics block says the same. */
static void assert_complete(const char *path, uint64_t spans)
{
    jager_reader *r;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    jager_event ev;
    int rc;
    uint64_t n = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) n += ev.type == JAGER_EV_SPAN;
    assert_int_equal(rc, 0);
    jager_reader_info info = {.struct_size = sizeof info};
    assert_int_equal(jager_reader_get_info(r, &info), JAGER_OK);
    assert_int_equal(info.clean_end, 1);
    assert_int_equal(info.truncated, 0);
    assert_int_equal(n, spans);
    jager_site site = 0;
    for (uint32_t s = 1; s <= jager_reader_site_count(r); s++) {
        const char *name;
        if (jager_reader_site(r, s, &name, NULL, NULL) == JAGER_OK && !strcmp(name, "exit.span")) site = s;
    }
    assert_true(site != 0);
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_reader_site_stats(r, site, &ss), JAGER_OK);
    assert_int_equal(ss.calls, spans);
    jager_reader_close(r);
}

static void exits_with(const char *mode, int code)
{
    const char *path = tu_tmp_path(".jgr");
    child c = start(mode, path, N, 0, NULL);
    int status = finish(&c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), code);
    assert_complete(path, N);
    unlink(path);
}

static void test_exit(void **st) { (void)st; exits_with("exit", 3); }
static void test_quick_exit(void **st) { (void)st; exits_with("quick_exit", 4); }
static void test_return_from_main(void **st) { (void)st; exits_with("return", 5); }

/* Under ThreadSanitizer, whose runtime catches every signal and delivers it to the program
 * later, the helper now and then never acts on the test's kill: gdb shows its main thread
 * still waiting for the signal and the collector idle, with pause() or a nanosleep loop
 * alike (1 run in 2–4 of this test on a loaded 2-CPU host; CI saw test_sigterm hang once).
 * The three signal tests are skipped there; natively, under ASan and valgrind they run. */
#if defined(__SANITIZE_THREAD__)
#define JG_TEST_NO_SIGNALS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define JG_TEST_NO_SIGNALS 1
#endif
#endif

static void killed_by(int sig)
{
#ifdef JG_TEST_NO_SIGNALS
    skip();
#endif
    const char *path = tu_tmp_path(".jgr");
    child c = start("signal", path, N, 0, NULL);
    wait_ready(&c);
    kill(c.pid, sig);
    int status = finish(&c);
    assert_true(WIFSIGNALED(status)); /* the default action still ends the process */
    assert_int_equal(WTERMSIG(status), sig);
    assert_complete(path, N);
    unlink(path);
}

static void test_sigint(void **st) { (void)st; killed_by(SIGINT); }
static void test_sigterm(void **st) { (void)st; killed_by(SIGTERM); }

/* The program's own SIGINT handler runs, and the program goes on recording. */
static void test_sigint_chained(void **st)
{
    (void)st;
#ifdef JG_TEST_NO_SIGNALS
    skip();
#endif
    const char *path = tu_tmp_path(".jgr");
    child c = start("chained", path, N, 0, NULL);
    wait_ready(&c);
    kill(c.pid, SIGINT);
    int status = finish(&c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_complete(path, 2 * N);
    unlink(path);
}

/* JAGER_SIGNALS=0: Jäger leaves SIGINT alone (the file is then not finished). */
static void test_signals_off(void **st)
{
    (void)st;
    const char *path = tu_tmp_path(".jgr");
    child c = start("signal", path, N, 0, "0");
    wait_ready(&c);
    kill(c.pid, SIGINT);
    int status = finish(&c);
    assert_true(WIFSIGNALED(status));
    jager_reader *r;
    if (jager_reader_open(path, &r) == JAGER_OK) {
        jager_reader_load_tables(r);
        jager_reader_info info = {.struct_size = sizeof info};
        jager_reader_get_info(r, &info);
        assert_int_equal(info.clean_end, 0);
        jager_reader_close(r);
    }
    unlink(path);
}

static void forked(const char *mode)
{
    const char *path = tu_tmp_path(".jgr");
    child c = start(mode, path, N, 0, NULL);
    int status = finish(&c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_complete(path, 2 * N); /* the child's spans are not recorded, its exit wrote nothing */
    unlink(path);
}

static void test_fork_child_exits(void **st) { (void)st; forked("fork-exit"); }
static void test_fork_child_shuts_down(void **st) { (void)st; forked("fork-shutdown"); }
static void test_fork_child_underscore_exit(void **st) { (void)st; forked("fork-_exit"); }

/* With %p in the output the child records on its own (issue 17): two files, each complete,
 * the parent's with its 2 N spans, the child's with its N only, whichever way it leaves.
 * ThreadSanitizer kills a child of a multithreaded fork that starts a thread (its
 * die_after_fork), as the child's collector is: skipped there. AddressSanitizer (GCC 12's
 * libasan) has no fork handlers for its allocator: a child forked while another thread held
 * a size class's lock hangs in its first allocation — the child's new collector thread's, in
 * glibc's pthread_getattr_np at its start (gdb, 1 run in 23–60 of this test under ASan;
 * glibc's malloc locks its arenas around fork) — so these three are skipped there too; they
 * run natively and under valgrind. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define JG_TEST_NO_FORK_THREADS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define JG_TEST_NO_FORK_THREADS 1
#endif
#endif
static void forked_per_pid(const char *mode)
{
#ifdef JG_TEST_NO_FORK_THREADS
    skip();
#endif
    char dir[] = "/tmp/jager-fork-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pattern[64];
    snprintf(pattern, sizeof pattern, "%s/w.%%p.jgr", dir);
    child c = start(mode, pattern, N, 0, NULL);
    int status = finish(&c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char path[2][512];
    int nfiles = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        assert_true(nfiles < 2);
        snprintf(path[nfiles++], sizeof path[0], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    assert_int_equal(nfiles, 2);
    /* the parent's file is w.<helper pid>.jgr */
    char parent[128];
    snprintf(parent, sizeof parent, "%s/w.%d.jgr", dir, (int)c.pid);
    int p = strcmp(path[0], parent) == 0 ? 0 : 1;
    assert_string_equal(path[p], parent);
    assert_complete(path[p], 2 * N);
    assert_complete(path[1 - p], N);
    unlink(path[0]);
    unlink(path[1]);
    rmdir(dir);
}

static void test_fork_per_pid_exit(void **st) { (void)st; forked_per_pid("fork-exit"); }
static void test_fork_per_pid_shutdown(void **st) { (void)st; forked_per_pid("fork-shutdown"); }
static void test_fork_per_pid_underscore_exit(void **st) { (void)st; forked_per_pid("fork-_exit"); }

/* A FIFO whose reader reads the start and leaves: no SIGPIPE death, the loss is counted. */
static void test_fifo_reader_leaves(void **st)
{
    (void)st;
    const char *path = tu_tmp_path(".fifo");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    int rd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* the helper must not hold a reader */
    assert_true(rd >= 0);
    child c = start("pipe", path, N, 1, NULL);
    wait_ready(&c);
    char buf[4096];
    (void)!read(rd, buf, sizeof buf);
    close(rd); /* the reader leaves */
    assert_int_equal(write(c.in, "go\n", 3), 3);
    int status = finish(&c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* not 141 (SIGPIPE), and dropped[SINK] > 0 */
    unlink(path);
}

/* A FIFO nobody reads: jager_init does not block, the program runs to its end. */
static void test_fifo_without_reader(void **st)
{
    (void)st;
    const char *path = tu_tmp_path(".fifo");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    child c = start("plain", path, N, 0, NULL);
    int status = finish(&c);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    unlink(path);
}

/* jager_flush() on one thread, init/shutdown cycles on another, spans on a third. */
static _Atomic(int) race_stop;
static jager_site race_site;

static void *race_flusher(void *arg)
{
    (void)arg;
    while (!atomic_load(&race_stop)) jager_flush();
    return NULL;
}

static void *race_spans(void *arg)
{
    (void)arg;
    while (!atomic_load(&race_stop)) {
        jager_span s = jager_span_begin(race_site);
        jager_span_end(s);
    }
    return NULL;
}

static void *one_span(void *arg)
{
    (void)arg;
    jager_span s = jager_span_begin(race_site);
    jager_span_end(s);
    return NULL;
}

static void *race_short_threads(void *arg)
{
    (void)arg;
    while (!atomic_load(&race_stop)) { /* threads that record once and exit: their rings are reaped */
        pthread_t t;
        if (pthread_create(&t, NULL, one_span, NULL) == 0) pthread_join(t, NULL);
    }
    return NULL;
}

static void test_flush_races_init_and_shutdown(void **st)
{
    (void)st;
    /* A race test needs threads that really interleave: ASan and TSan run it; memcheck's
     * one-thread-at-a-time scheduler can spin the flusher for minutes, so valgrind skips it. */
    if (getenv("JAGER_UNDER_VALGRIND")) skip();
    jager_config c = tu_config(1 << 16);
    c.flush_interval_ms = 1;
    race_site = jager_site_register("race.span", __FILE__, __LINE__);
    atomic_store(&race_stop, 0);
    pthread_t th[3];
    assert_int_equal(pthread_create(&th[0], NULL, race_flusher, NULL), 0);
    assert_int_equal(pthread_create(&th[1], NULL, race_spans, NULL), 0);
    assert_int_equal(pthread_create(&th[2], NULL, race_short_threads, NULL), 0);
    for (int i = 0; i < 60; i++) {
        c.sample_mode = i % 2 ? JAGER_SAMPLE_ONE_IN_N : JAGER_SAMPLE_ALL;
        c.sample_n = 2;
        assert_int_equal(jager_init(&c), JAGER_OK);
        pthread_t t;
        for (int k = 0; k < 4; k++)
            if (pthread_create(&t, NULL, one_span, NULL) == 0) pthread_join(t, NULL);
        tu_sleep_ns(1000000);
        jager_shutdown();
    }
    atomic_store(&race_stop, 1);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    assert_int_equal(jager_flush(), JAGER_E_STATE);
}

int main(void)
{
    signal(SIGPIPE, SIG_DFL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit),
        cmocka_unit_test(test_quick_exit),
        cmocka_unit_test(test_return_from_main),
        cmocka_unit_test(test_sigint),
        cmocka_unit_test(test_sigterm),
        cmocka_unit_test(test_sigint_chained),
        cmocka_unit_test(test_signals_off),
        cmocka_unit_test(test_fork_child_exits),
        cmocka_unit_test(test_fork_child_shuts_down),
        cmocka_unit_test(test_fork_child_underscore_exit),
        cmocka_unit_test(test_fork_per_pid_exit),
        cmocka_unit_test(test_fork_per_pid_shutdown),
        cmocka_unit_test(test_fork_per_pid_underscore_exit),
        cmocka_unit_test(test_fifo_reader_leaves),
        cmocka_unit_test(test_fifo_without_reader),
        cmocka_unit_test(test_flush_races_init_and_shutdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
