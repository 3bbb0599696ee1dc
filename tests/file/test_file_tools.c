/* `jager dump` and `jager info` run as the user runs them, on a recording made through
 * the core: exact counts and lines, hostile strings escaped, exit codes for complete,
 * truncated, corrupt and missing files and for bad usage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file_fixture.h"
#include "testutil.h"

typedef struct tools_fixture {
    char path[512], out[512], err[512];
    fx_expect ex;
    uint8_t *data;
    size_t size;
} tools_fixture;

static int setup(void **state)
{
    tools_fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->path, sizeof f->path, "%s", tu_tmp_path(".jgr"));
    snprintf(f->out, sizeof f->out, "%s", tu_tmp_path(".out"));
    snprintf(f->err, sizeof f->err, "%s", tu_tmp_path(".err"));
    if (fx_record(f->path, 2, 30, &f->ex) != 0) return -1;
    f->data = tu_read_file(f->path, &f->size);
    *state = f;
    return f->data ? 0 : -1;
}

static int teardown(void **state)
{
    tools_fixture *f = *state;
    unlink(f->path);
    unlink(f->out);
    unlink(f->err);
    free(f->data);
    free(f);
    return 0;
}

/* Run `jager <args>`, stdout and stderr into files; returns the exit code. */
static int run(const tools_fixture *f, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", JAGER_CLI, args, f->out, f->err);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    size_t n;
    uint8_t *d = tu_read_file(path, &n);
    assert_non_null(d);
    char *s = realloc(d, n + 1);
    s[n] = 0;
    return s;
}

static size_t count_lines(const char *s, const char *prefix)
{
    size_t n = 0;
    for (const char *p = s; *p;) {
        if (!strncmp(p, prefix, strlen(prefix))) n++;
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

static void test_dump(void **state)
{
    tools_fixture *f = *state;
    char args[1024];
    snprintf(args, sizeof args, "dump '%s'", f->path);
    assert_int_equal(run(f, args), 0);
    char *out = slurp(f->out);
    const fx_expect *ex = &f->ex;
    uint64_t total = 0;
    for (int t = 0; t < 512; t++) total += ex->by_type[t];
    assert_int_equal(count_lines(out, "{"), total);
    assert_int_equal(count_lines(out, "{\"type\":\"span\","), ex->spans);
    assert_int_equal(count_lines(out, "{\"type\":\"log\","), ex->logs);
    assert_int_equal(count_lines(out, "{\"type\":\"counter\","), ex->counters);
    assert_int_equal(count_lines(out, "{\"type\":\"mark\","), ex->marks);
    assert_int_equal(count_lines(out, "{\"type\":\"span_attr\","), ex->span_attrs);
    assert_int_equal(count_lines(out, "{\"type\":\"span_error\","), ex->span_errors);
    assert_int_equal(count_lines(out, "{\"type\":\"test.kernel\","), ex->plugin);
    /* every line is one object; no raw markup or control characters anywhere */
    for (const char *p = out; *p; p++) {
        assert_true(*p != '<' && *p != '>' && *p != '&');
        assert_true((unsigned char)*p >= 0x20 || *p == '\n');
    }
    assert_int_equal(count_lines(out, "{"), count_lines(out, ""));
    /* names resolved and escaped */
    assert_non_null(strstr(out, "\"site\":\"kernel\\u003c\\\"\\u0026\\\"\\u003e\""));
    assert_non_null(strstr(out, "\"site\":\"solve\""));
    assert_non_null(strstr(out, "\"body\":\"step \\\"done\\\" \\u003c\\u0026\\u003e\\u0001\",\"attrs\":{\"residual\":0.5,\"ok\":false}"));
    assert_non_null(strstr(out, "\"message\":\"diverged \\u003cb\\u003e\""));
    assert_non_null(strstr(out, "\"attrs\":{\"iter\":0,\"thread\":1,\"tag\":\"\\u003c/script\\u003e\\\"\\n\"}"));
    assert_non_null(strstr(out, "\"counter\":\"iterations\",\"unit\":\"1\",\"value\":30}"));
    assert_non_null(strstr(out, "\"name\":\"after flush\"}"));
    char want[256];
    snprintf(want, sizeof want, "\"fields\":{\"duration_ns\":1029,\"bytes\":4096,\"stack\":%" PRIu64 ",\"ok\":true}}",
             (uint64_t)ex->stack);
    assert_non_null(strstr(out, want));
    free(out);

    /* from a pipe (read strictly forward) the output is the same */
    char *whole = slurp(f->out);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cat '%s' | '%s' dump /dev/stdin >'%s' 2>'%s'", f->path, JAGER_CLI, f->out, f->err);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    out = slurp(f->out);
    assert_string_equal(out, whole);
    free(out);
    free(whole);

    /* --type and --limit */
    snprintf(args, sizeof args, "dump --type test.kernel '%s'", f->path);
    assert_int_equal(run(f, args), 0);
    out = slurp(f->out);
    assert_int_equal(count_lines(out, "{\"type\":\"test.kernel\","), ex->plugin);
    assert_int_equal(count_lines(out, "{"), ex->plugin);
    free(out);
    snprintf(args, sizeof args, "dump --limit 7 '%s'", f->path);
    assert_int_equal(run(f, args), 0);
    out = slurp(f->out);
    assert_int_equal(count_lines(out, "{"), 7);
    free(out);
}

static void test_info(void **state)
{
    tools_fixture *f = *state;
    char args[1024];
    snprintf(args, sizeof args, "info '%s'", f->path);
    assert_int_equal(run(f, args), 0);
    char *out = slurp(f->out);
    const fx_expect *ex = &f->ex;
    uint64_t total = 0;
    for (int t = 0; t < 512; t++) total += ex->by_type[t];
    char want[512];
    assert_non_null(strstr(out, "\nstatus: complete\n"));
    snprintf(want, sizeof want, "\nformat: %d.%d\n", JAGER_FORMAT_MAJOR, JAGER_FORMAT_MINOR);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "\nevents: %" PRIu64 "\n", total);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "\nbytes: %zu\n", f->size);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "\n  1 \"span\" core events %" PRIu64 "\n", ex->spans);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "\n  2 \"log\" core events %" PRIu64 "\n", ex->logs);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want,
             "\n  %u \"test.kernel\" plugin events %" PRIu64
             " fields \"duration_ns\":duration_ns \"bytes\":bytes \"stack\":stack \"ok\":bool\n",
             ex->plugin_type, ex->plugin);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "\ncounters: 1\n  1 \"iterations\" unit \"1\" monotonic\n"));
    assert_non_null(strstr(out, "\n  \"test.evil\": \"\\u003c/script\\u003e\\n\\u001b[31m\\\"\"\n"));
    assert_non_null(strstr(out, "\ndropped: 0\n"));
    assert_non_null(strstr(out, "\ndrop_records: 0 events_lost 0\n"));
    /* two workers with the same count, plus the main thread's last mark */
    snprintf(want, sizeof want, " events %" PRIu64 "\n", (total - 1) / 2);
    const char *th = strstr(out, "\nthreads: 3\n");
    assert_non_null(th);
    size_t workers = 0;
    for (const char *p = th; (p = strstr(p + 1, want)) != NULL;) workers++;
    assert_int_equal(workers, 2);
    for (const char *p = out; *p; p++) assert_true(*p != '<' && *p != '>' && ((unsigned char)*p >= 0x20 || *p == '\n'));
    free(out);
}

/* A file cut inside its last events frame: the good prefix, exit 3. */
static void test_truncated(void **state)
{
    tools_fixture *f = *state;
    fx_frame fr[1024];
    int n = fx_frames(f->data, f->size, fr, 1024);
    assert_true(n > 3);
    int k = n - 1;
    while (k > 0 && fr[k].kind != 7) k--;
    assert_true(k > 0);
    uint64_t good = 0;
    for (int i = 0; i < k; i++) good += fr[i].events;
    size_t cut = fr[k].offset + fr[k].len / 2;
    char path[600], args[1024];
    snprintf(path, sizeof path, "%s.cut", f->path);
    assert_int_equal(tu_write_file(path, f->data, cut), 0);
    snprintf(args, sizeof args, "dump '%s'", path);
    assert_int_equal(run(f, args), 3);
    char *out = slurp(f->out), *err = slurp(f->err);
    assert_int_equal(count_lines(out, "{"), good);
    assert_non_null(strstr(err, "partial results"));
    assert_non_null(strstr(err, "file ends inside the frame"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "info '%s'", path);
    assert_int_equal(run(f, args), 3);
    out = slurp(f->out);
    assert_non_null(strstr(out, "\nstatus: truncated\n"));
    char want[128];
    snprintf(want, sizeof want, "\nevents: %" PRIu64 "\n", good);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "\nreadable_bytes: %zu\n", fr[k].offset);
    assert_non_null(strstr(out, want));
    free(out);
    unlink(path);
}

static void test_bad_input_and_usage(void **state)
{
    tools_fixture *f = *state;
    char path[600], args[1024];
    snprintf(path, sizeof path, "%s.txt", f->path);
    assert_int_equal(tu_write_file(path, "just some text, not a recording\n", 32), 0);
    snprintf(args, sizeof args, "dump '%s'", path);
    assert_int_equal(run(f, args), 2);
    char *err = slurp(f->err);
    assert_non_null(strstr(err, "not a .jgr recording"));
    free(err);
    snprintf(args, sizeof args, "info '%s'", path);
    assert_int_equal(run(f, args), 2);
    assert_int_equal(run(f, "dump /nonexistent/file.jgr"), 2);
    assert_int_equal(run(f, "info /nonexistent/file.jgr"), 2);
    assert_int_equal(run(f, "dump"), 1);
    assert_int_equal(run(f, "info"), 1);
    assert_int_equal(run(f, "dump --bogus x.jgr"), 1);
    assert_int_equal(run(f, "dump --limit x x.jgr"), 1);
    assert_int_equal(run(f, "info a.jgr b.jgr"), 1);
    assert_int_equal(run(f, "dump --help"), 0);
    char *out = slurp(f->out);
    assert_non_null(strstr(out, "usage: jager dump"));
    free(out);
    /* a corrupt byte in the middle: events before the damage, then exit 3 */
    uint8_t *copy = malloc(f->size);
    memcpy(copy, f->data, f->size);
    copy[f->size - 40] ^= 0xff;
    assert_int_equal(tu_write_file(path, copy, f->size), 0);
    snprintf(args, sizeof args, "dump '%s'", path);
    int rc = run(f, args);
    assert_true(rc == 3);
    err = slurp(f->err);
    assert_non_null(strstr(err, "frame "));
    free(err);
    free(copy);
    unlink(path);
}

/* `jager merge -o A A B`: the output names an input (issue 16 item 2, every command that
 * writes files). The job file was opened with fopen "wb" — A truncated before its part was
 * copied from it, the merge failed and removed A. Now written through a temporary: both
 * parts whole, A's bytes first. */
static void test_merge_onto_input(void **state)
{
    tools_fixture *f = *state;
    char a[512], args[2048];
    snprintf(a, sizeof a, "%s", tu_tmp_path(".jgr"));
    assert_int_equal(tu_write_file(a, f->data, f->size), 0);
    snprintf(args, sizeof args, "merge --force -o '%s' '%s' '%s'", a, a, f->path);
    assert_int_equal(run(f, args), 0);
    snprintf(args, sizeof args, "info '%s'", a);
    assert_int_equal(run(f, args), 0);
    char *out = slurp(f->out), want[64];
    snprintf(want, sizeof want, "\nbytes: %zu\n", f->size);
    assert_int_equal(count_lines(out, "status: complete"), 2);
    size_t parts = 0;
    for (const char *p = out; (p = strstr(p, want)) != NULL; p++) parts++;
    assert_int_equal(parts, 2);
    free(out);
    unlink(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_bad_input_and_usage),
        cmocka_unit_test(test_merge_onto_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
