/*
 * Hung plugins (issue 16 item 11): a plugin whose start, stop, sink write or timer
 * callback never returns
 * must not hang the program. Each case runs a forked child that records into a file with
 * the hung plugin and a well-behaved one ("good"), then leaves through exit() (whose
 * handler runs jager_shutdown()). Asserted on outcomes only, never on durations: the child
 * exits 0, the file reads to its END block with every span, the hung plugin is named once
 * on stderr and gets no callback after the hung one, and the good plugin's lifecycle is
 * complete. The bound (JAGER_PLUGIN_TIMEOUT_MS) is 1 s, far above what a good callback
 * takes even on a crowded machine; ctest's timeout catches a hang (the failure before the
 * fix).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "abi_util.h"
#include "jager_reader.h"
#include "testutil.h"
#include "tp_probe.h"

#define SPANS 1000

typedef struct child_out {
    int exit_code;       /* -1: killed by a signal */
    char err[8192];      /* its stderr */
    uint64_t spans;      /* span records of site "hung.work" in the file */
    int clean_end;       /* the file has its END block */
    int read_status;     /* 0 (read to the end) or the reader's error */
} child_out;

static void read_file(const char *path, child_out *o)
{
    jager_reader *r = NULL;
    o->read_status = jager_reader_open(path, &r);
    if (o->read_status != JAGER_OK) return;
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        if (ev.type != JAGER_EV_SPAN) continue;
        const char *name = NULL;
        if (jager_reader_site(r, (jager_site)ev.rec->aux, &name, NULL, NULL) == JAGER_OK && name &&
            strcmp(name, "hung.work") == 0)
            o->spans++;
    }
    o->read_status = rc;
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    o->clean_end = (int)info.clean_end;
    jager_reader_close(r);
}

/* Record SPANS spans with \p plugins loaded, in a child that then calls exit(0). */
static void run_child(const char *plugins, child_out *o)
{
    memset(o, 0, sizeof *o);
    char path[96], errp[96];
    snprintf(path, sizeof path, "/tmp/jager-hung-%d.jgr", (int)getpid());
    snprintf(errp, sizeof errp, "/tmp/jager-hung-%d.err", (int)getpid());
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(90);
        setenv("JAGER_PLUGIN_TIMEOUT_MS", "1000", 1);
        jager_config c = tu_config(0);
        c.output = path;
        c.plugins = plugins;
        c.plugin_path = TP_DIR;
        c.quiet = 0;
        if (jager_init(&c) != JAGER_OK) _exit(91);
        jager_site s = jager_site_register("hung.work", __FILE__, __LINE__);
        for (int i = 0; i < SPANS; i++) jager_span_end(jager_span_begin(s));
        if (jager_flush() != JAGER_OK) _exit(92);
        if (getenv("HUNG_TEST_LINGER")) tu_sleep_ns(200000000ull); /* lets a 1 ms timer fire (either outcome is checked) */
        exit(0); /* the exit handler shuts the recording down */
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    o->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    size_t n = 0;
    uint8_t *e = tu_read_file(errp, &n);
    if (e) {
        n = n < sizeof o->err - 1 ? n : sizeof o->err - 1;
        memcpy(o->err, e, n);
        free(e);
    }
    o->err[n] = 0;
    read_file(path, o);
    unlink(path);
    unlink(errp);
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The good plugin ran its whole lifecycle. */
static void assert_good_complete(const char *journal)
{
    const char *j = abi_journal_read(journal);
    assert_int_equal(count_of(j, "good:init\n"), 1);
    assert_int_equal(count_of(j, "good:start\n"), 1);
    assert_int_equal(count_of(j, "good:stop\n"), 1);
    assert_int_equal(count_of(j, "good:shutdown\n"), 1);
}

static void assert_file_complete(const child_out *o)
{
    if (o->exit_code != 0) fail_msg("child exit %d, stderr:\n%s", o->exit_code, o->err);
    assert_int_equal(o->read_status, 0);
    assert_int_equal(o->clean_end, 1);
    assert_int_equal(o->spans, SPANS);
}

static void test_hung_start(void **st)
{
    (void)st;
    const char *journal = abi_journal_for("hang,good");
    child_out o;
    run_child("hang,good", &o);
    assert_file_complete(&o);
    assert_int_equal(count_of(o.err, "plugin 'hang': its start has not returned after 1000 ms (JAGER_PLUGIN_TIMEOUT_MS): "
                                      "the plugin is disabled"),
                     1);
    assert_int_equal(count_of(o.err, "has not returned"), 1);
    const char *j = abi_journal_read(journal);
    assert_int_equal(count_of(j, "hang:start\n"), 1);
    assert_int_equal(count_of(j, "hang:flush\n"), 0);
    assert_int_equal(count_of(j, "hang:stop\n"), 0);
    assert_int_equal(count_of(j, "hang:shutdown\n"), 0);
    assert_good_complete(journal);
}

static void test_hung_stop(void **st)
{
    (void)st;
    const char *journal = abi_journal_for("hangstop,good");
    child_out o;
    run_child("hangstop,good", &o);
    assert_file_complete(&o);
    assert_int_equal(count_of(o.err, "plugin 'hangstop': its stop has not returned after 1000 ms"), 1);
    assert_int_equal(count_of(o.err, "has not returned"), 1);
    const char *j = abi_journal_read(journal);
    assert_int_equal(count_of(j, "hangstop:stop\n"), 1);
    assert_int_equal(count_of(j, "hangstop:shutdown\n"), 0);
    assert_good_complete(journal);
}

static void test_hung_sink_write(void **st)
{
    (void)st;
    const char *journal = abi_journal_for("hangwrite,good");
    child_out o;
    run_child("hangwrite,good", &o);
    assert_file_complete(&o);
    assert_int_equal(count_of(o.err, "plugin 'hangwrite': its sink 'tp-sink' write has not returned after 1000 ms"), 1);
    assert_int_equal(count_of(o.err, "has not returned"), 1);
    const char *j = abi_journal_read(journal);
    assert_int_equal(count_of(j, "hangwrite:sink-open\n"), 1);
    assert_int_equal(count_of(j, "hangwrite:sink-write\n"), 1); /* never called again */
    assert_int_equal(count_of(j, "hangwrite:sink-close\n"), 0);
    assert_int_equal(count_of(j, "hangwrite:stop\n"), 0);     /* disabled: no callback after the hung one */
    assert_int_equal(count_of(j, "hangwrite:shutdown\n"), 0);
    assert_good_complete(journal);
}

static void test_hung_timer_callback(void **st)
{
    (void)st;
    const char *journal = abi_journal_for("hangtimer,good");
    setenv("JAGER_HANGTIMER_INTERVAL_US", "1000", 1);
    setenv("HUNG_TEST_LINGER", "1", 1);
    child_out o;
    run_child("hangtimer,good", &o);
    unsetenv("JAGER_HANGTIMER_INTERVAL_US");
    unsetenv("HUNG_TEST_LINGER");
    assert_file_complete(&o);
    const char *j = abi_journal_read(journal);
    /* The child may end before the second callback: then nothing hung, all is clean. */
    if (count_of(j, "hangtimer:timer-hangs\n")) {
        assert_int_equal(count_of(o.err, "plugin 'hangtimer': its timer callback has not returned after 1000 ms"), 1);
        assert_int_equal(count_of(j, "hangtimer:stop\n"), 0);
        assert_int_equal(count_of(j, "hangtimer:shutdown\n"), 0);
    } else {
        assert_int_equal(count_of(o.err, "has not returned"), 0);
        assert_int_equal(count_of(j, "hangtimer:stop\n"), 1);
    }
    assert_int_equal(count_of(o.err, "has not returned"), count_of(j, "hangtimer:timer-hangs\n"));
    assert_good_complete(journal);
}

/* Where start runs: a plugin's on a host thread (so it can be bounded), one flagged
 * JAGER_PLUGIN_FLAG_CALLER_THREAD on the thread calling jager_init. */
static void test_caller_thread_flag(void **st)
{
    (void)st;
    setenv("JAGER_PLUGIN_TIMEOUT_MS", "10000", 1);
    uint64_t me = (uint64_t)syscall(SYS_gettid);
    abi_run r;
    abi_start(&r, "good", TP_DIR);
    const tp_probe *p = jager_extension_get(TP_PROBE_ID);
    assert_non_null(p);
    uint64_t good_tid = p->value(TP_V_START_TID);
    abi_finish(&r);
    abi_start(&r, "callerthread", TP_DIR);
    p = jager_extension_get(TP_PROBE_ID);
    assert_non_null(p);
    assert_int_equal(p->value(TP_V_START_TID), me);
    abi_finish(&r);
    assert_true(good_tid != 0 && good_tid != me);
    unsetenv("JAGER_PLUGIN_TIMEOUT_MS");
}

/* A flagged plugin's start cannot be cut off, but one that runs past the bound is named
 * once (its start sleeps 1.5 s, the bound is 300 ms: said by the watcher, or by the host
 * as the call returns when the watcher was not scheduled in time). */
static void test_caller_thread_overrun_said(void **st)
{
    (void)st;
    setenv("JAGER_PLUGIN_TIMEOUT_MS", "300", 1);
    abi_run r;
    abi_start(&r, "slowstart", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    assert_non_null(jager_extension_get(TP_PROBE_ID)); /* not disabled */
    assert_int_equal(jager_flush(), JAGER_OK);
    abi_diag d[4];
    assert_int_equal(abi_diags(r.m, "slowstart", d, 4), 1);
    assert_non_null(strstr(d[0].text, "plugin 'slowstart': its start has run for more than 300 ms (JAGER_PLUGIN_TIMEOUT_MS) "
                                      "on the program's thread; it cannot be cut off"));
    abi_finish(&r);
    unsetenv("JAGER_PLUGIN_TIMEOUT_MS");
}

/* In process: a hung sink's batches are counted as sink drops, the file sink has them all. */
static void test_hung_sink_write_counted(void **st)
{
    (void)st;
    setenv("JAGER_PLUGIN_TIMEOUT_MS", "1000", 1);
    (void)abi_journal_for("hangwrite");
    abi_run r;
    abi_start(&r, "hangwrite", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    jager_site s = jager_site_register("hung.work", __FILE__, __LINE__);
    for (int i = 0; i < SPANS; i++) jager_span_end(jager_span_begin(s));
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(jager_flush(), JAGER_OK);
    jager_stat stt = {.struct_size = sizeof stt};
    assert_int_equal(jager_stats(&stt), JAGER_OK);
    /* the memory sink saw every event (so none is a sink drop); the hung sink lost them all,
     * counted as its own failures */
    assert_int_equal(stt.dropped[JAGER_DROP_SINK], 0);
    assert_int_equal(memsink_count(r.m, JAGER_EV_SPAN, 1, s), SPANS);
    uint64_t hung_failed = 0, mem_delivered = 0;
    for (uint32_t i = 0; i < stt.sinks; i++) {
        jager_sink_stat ks = {.struct_size = sizeof ks};
        assert_int_equal(jager_sink_stats(i, &ks), JAGER_OK);
        if (!strcmp(ks.name, "tp-sink")) hung_failed = ks.events_failed;
        else mem_delivered += ks.events_delivered;
        assert_int_equal(ks.events_delivered + ks.events_failed, stt.events_written);
    }
    assert_true(hung_failed >= SPANS);
    assert_true(mem_delivered >= SPANS);
    abi_diag d[4];
    assert_int_equal(abi_diags(r.m, "hangwrite", d, 4), 1);
    assert_non_null(strstr(d[0].text, "its sink 'tp-sink' write has not returned after 1000 ms"));
    abi_finish(&r);
    unsetenv("JAGER_PLUGIN_TIMEOUT_MS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hung_start),
        cmocka_unit_test(test_hung_stop),
        cmocka_unit_test(test_hung_sink_write),
        cmocka_unit_test(test_hung_timer_callback),
        cmocka_unit_test(test_caller_thread_flag),
        cmocka_unit_test(test_caller_thread_overrun_said),
        /* last: it leaves a thread stuck in the plugin, and the cases above fork (which
         * ThreadSanitizer refuses in a process with threads) */
        cmocka_unit_test(test_hung_sink_write_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
