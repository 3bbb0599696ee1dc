/* Malformed configuration values (issue 16 item 14): a negative number is not a huge one,
 * a switch that is neither on nor off is reported with the documented message, and the
 * default stays in force; the message reaches stderr once from jager_init(NULL). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

static const char *const vars[] = {"JAGER_SAMPLE", "JAGER_RING_BYTES", "JAGER_FLUSH_MS", "JAGER_MAX_THREADS",
                                   "JAGER_DISABLE", "JAGER_QUIET", NULL};

static void clear(void)
{
    for (int i = 0; vars[i]; i++) unsetenv(vars[i]);
}

/* Set \p var to \p value and expect jager_config_from_env to refuse it with "VAR: cannot
 * parse 'value'", leaving the defaults. */
static void refused(const char *var, const char *value)
{
    clear();
    setenv(var, value, 1);
    jager_config c, d;
    jager_config_init(&c);
    jager_config_init(&d);
    assert_int_equal(jager_config_from_env(&c), JAGER_E_INVALID);
    char want[200];
    snprintf(want, sizeof want, "%s: cannot parse '%s'", var, value);
    if (strcmp(jager_last_error(), want) != 0) fail_msg("%s=%s: '%s', want '%s'", var, value, jager_last_error(), want);
    assert_int_equal(c.sample_mode, d.sample_mode);
    assert_int_equal(c.sample_interval_ns, d.sample_interval_ns);
    assert_int_equal(c.sample_n, d.sample_n);
    assert_int_equal(c.ring_bytes, d.ring_bytes);
    assert_int_equal(c.flush_interval_ms, d.flush_interval_ms);
    assert_int_equal(c.max_threads, d.max_threads);
    assert_int_equal(c.disable, 0);
    assert_int_equal(c.quiet, 0);
    clear();
}

static void test_negative_and_overflowing_numbers(void **state)
{
    (void)state;
    refused("JAGER_SAMPLE", "interval:-1");
    refused("JAGER_SAMPLE", "interval: -5");
    refused("JAGER_SAMPLE", "interval:+5");
    refused("JAGER_SAMPLE", "interval:18446744073709551615"); /* × 10^6 ns would wrap */
    refused("JAGER_SAMPLE", "1/-1");
    refused("JAGER_RING_BYTES", "-1");
    refused("JAGER_RING_BYTES", "-64K");
    refused("JAGER_FLUSH_MS", "-20");
    refused("JAGER_MAX_THREADS", "-1");
    refused("JAGER_MAX_THREADS", "4294967296");
    /* what still parses */
    clear();
    setenv("JAGER_SAMPLE", "interval:18446744073709", 1); /* the largest ms that fits, about */
    jager_config c;
    jager_config_init(&c);
    assert_int_equal(jager_config_from_env(&c), JAGER_OK);
    assert_int_equal(c.sample_interval_ns, 18446744073709ull * 1000000ull);
    clear();
}

static void test_switches(void **state)
{
    (void)state;
    refused("JAGER_DISABLE", "garbage");
    refused("JAGER_DISABLE", "2");
    refused("JAGER_QUIET", "garbage");
    refused("JAGER_QUIET", "-1");
    const char *on[] = {"1", "true", "TRUE", "yes", "on"}, *off[] = {"0", "false", "No", "off"};
    for (size_t i = 0; i < 5; i++) {
        clear();
        setenv("JAGER_QUIET", on[i], 1);
        setenv("JAGER_DISABLE", on[i], 1);
        jager_config c;
        jager_config_init(&c);
        assert_int_equal(jager_config_from_env(&c), JAGER_OK);
        assert_int_equal(c.quiet, 1);
        assert_int_equal(c.disable, 1);
    }
    for (size_t i = 0; i < 4; i++) {
        clear();
        setenv("JAGER_QUIET", off[i], 1);
        setenv("JAGER_DISABLE", off[i], 1);
        jager_config c;
        jager_config_init(&c);
        c.quiet = 1;
        assert_int_equal(jager_config_from_env(&c), JAGER_OK);
        assert_int_equal(c.quiet, 0);
        assert_int_equal(c.disable, 0);
    }
    clear();
}

/* jager_init(NULL) with a bad value says "jager: VAR: cannot parse 'v' (ignored)" once on
 * stderr and records anyway. */
static void test_message_on_stderr(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        clear();
        unsetenv("JAGER_OUTPUT");
        setenv("JAGER_QUIET", "garbage", 1);
        jager_status st = jager_init(NULL);
        int rec = jager_is_enabled();
        jager_shutdown();
        _exit(st == JAGER_OK && rec ? 0 : 1);
    }
    close(p[1]);
    char buf[1024];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof buf - 1 && (k = read(p[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)k;
    buf[n] = 0;
    close(p[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_string_equal(buf, "jager: JAGER_QUIET: cannot parse 'garbage' (ignored)\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negative_and_overflowing_numbers),
        cmocka_unit_test(test_switches),
        cmocka_unit_test(test_message_on_stderr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
