/* tools/util: tu_outfile (atomic onto regular files and new paths, straight onto devices
 * and links, nothing left behind on failure) and the checked double-to-integer
 * conversions (no undefined cast on NaN, infinities or out-of-range values). */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "toolutil.h"

static char dir[256];

static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = 0;
    fclose(f);
}

static void test_regular_and_new(void **state)
{
    (void)state;
    char path[300], buf[64], err[300];
    snprintf(path, sizeof path, "%s/new.txt", dir);
    tu_outfile o;
    assert_int_equal(tu_outfile_open(&o, path, err, sizeof err), 0);
    assert_non_null(o.tmp);
    fputs("one", o.f);
    struct stat sb;
    assert_int_equal(stat(path, &sb), -1); /* nothing at the path until it is complete */
    assert_int_equal(tu_outfile_close(&o, 1, err, sizeof err), 0);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "one");
    assert_int_equal(entries(), 1);
    chmod(path, 0640);
    assert_int_equal(tu_outfile_open(&o, path, err, sizeof err), 0);
    fputs("two", o.f);
    assert_int_equal(tu_outfile_close(&o, 0, err, sizeof err), -1); /* the writer failed */
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "one"); /* untouched */
    assert_int_equal(entries(), 1);  /* no temporary left */
    assert_int_equal(tu_outfile_open(&o, path, err, sizeof err), 0);
    fputs("three", o.f);
    assert_int_equal(tu_outfile_close(&o, 1, err, sizeof err), 0);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "three");
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640); /* the mode is kept */
    unlink(path);
}

static void test_device_link_and_missing(void **state)
{
    (void)state;
    char err[300], path[300], target[300], buf[64];
    tu_outfile o;
    assert_int_equal(tu_outfile_open(&o, "/dev/null", err, sizeof err), 0);
    assert_null(o.tmp); /* straight */
    fputs("x", o.f);
    assert_int_equal(tu_outfile_close(&o, 1, err, sizeof err), 0);
    struct stat sb;
    assert_int_equal(stat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    if (access("/dev/full", W_OK) == 0) { /* a write error surfaces at close */
        assert_int_equal(tu_outfile_open(&o, "/dev/full", err, sizeof err), 0);
        fputs("x", o.f);
        assert_int_equal(tu_outfile_close(&o, 1, err, sizeof err), -1);
        assert_non_null(strstr(err, "/dev/full: No space left on device"));
    }
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(path, sizeof path, "%s/link", dir);
    FILE *f = fopen(target, "w");
    fputs("old old old", f);
    fclose(f);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(tu_outfile_open(&o, path, err, sizeof err), 0);
    assert_null(o.tmp);
    fputs("new", o.f);
    assert_int_equal(tu_outfile_close(&o, 1, err, sizeof err), 0);
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode)); /* still a link */
    slurp(target, buf, sizeof buf);
    assert_string_equal(buf, "new"); /* written through, truncated */
    unlink(path);
    unlink(target);
    snprintf(path, sizeof path, "%s/no/such/dir.txt", dir);
    assert_int_equal(tu_outfile_open(&o, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file or directory"));
    assert_int_equal(entries(), 0);
    assert_int_equal(tu_outfile_open(&o, "-", err, sizeof err), 0);
    assert_ptr_equal(o.f, stdout);
    assert_int_equal(tu_outfile_close(&o, 1, err, sizeof err), 0);
}

static void test_double_conversions(void **state)
{
    (void)state;
    int64_t i = 7;
    uint64_t u = 7;
    assert_int_equal(tu_double_as_i64(NAN, &i), 0);
    assert_int_equal(tu_double_as_i64(INFINITY, &i), 0);
    assert_int_equal(tu_double_as_i64(-INFINITY, &i), 0);
    assert_int_equal(tu_double_as_i64(9223372036854775808.0, &i), 0);
    assert_int_equal(tu_double_as_i64(1e300, &i), 0);
    assert_int_equal(tu_double_as_i64(2.5, &i), 0);
    assert_int_equal(i, 7); /* untouched when refused */
    assert_int_equal(tu_double_as_i64(-9223372036854775808.0, &i), 1);
    assert_true(i == INT64_MIN);
    assert_int_equal(tu_double_as_i64(-42.0, &i), 1);
    assert_int_equal(i, -42);
    assert_int_equal(tu_double_as_u64(NAN, &u), 0);
    assert_int_equal(tu_double_as_u64(-1.0, &u), 0);
    assert_int_equal(tu_double_as_u64(18446744073709551616.0, &u), 0);
    assert_int_equal(tu_double_as_u64(0.5, &u), 0);
    assert_int_equal(u, 7);
    assert_int_equal(tu_double_as_u64(18446744073709549568.0, &u), 1); /* the largest below 2^64 */
    assert_true(u == 18446744073709549568ull);
    assert_int_equal(tu_double_as_u64(1200.0, &u), 1);
    assert_int_equal(u, 1200);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/jager-outfile-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_and_new),
        cmocka_unit_test(test_device_link_and_missing),
        cmocka_unit_test(test_double_conversions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
