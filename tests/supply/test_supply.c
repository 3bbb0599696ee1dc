/* test_supply.c — the supply-chain engine's pieces (sdk/src/supply/): SHA-256 of known
 * inputs, a file that changes while it is hashed (read() wrapped with --wrap=read to
 * append to the file mid-hash: deterministic), symlinks inside and escaping a package,
 * the lock file's checks, and the problem table's escaping. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supply.h"

/* --wrap=read: when armed, the first read appends a byte to the armed file. */
ssize_t __real_read(int fd, void *buf, size_t n);
static const char *grow_path;
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n)
{
    if (grow_path) {
        int w = open(grow_path, O_WRONLY | O_APPEND);
        if (w >= 0) {
            if (write(w, "!", 1) != 1) { /* the test then fails on the result */
            }
            close(w);
        }
        grow_path = NULL;
    }
    return __real_read(fd, buf, n);
}

static char dir[64];

static void put(const char *rel, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/jager-supply-unit.XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char p[256];
    snprintf(p, sizeof p, "%s/src", dir);
    mkdir(p, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void sha256_known(void **state)
{
    (void)state;
    put("abc", "abc");
    put("empty", "");
    char p[256], hex[65];
    int e = 0;
    snprintf(p, sizeof p, "%s/abc", dir);
    assert_int_equal(js_sha256_file(p, 1, hex, &e), JS_HASH_OK);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    snprintf(p, sizeof p, "%s/empty", dir);
    assert_int_equal(js_sha256_file(p, 1, hex, &e), JS_HASH_OK);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    snprintf(p, sizeof p, "%s/missing", dir);
    assert_int_equal(js_sha256_file(p, 1, hex, &e), JS_HASH_UNREADABLE);
    assert_int_not_equal(e, 0);
}

static void changed_while_hashed(void **state)
{
    (void)state;
    put("src/grows.jl", "x = 1\n");
    char p[256], hex[65];
    snprintf(p, sizeof p, "%s/src/grows.jl", dir);
    grow_path = p;
    assert_int_equal(js_sha256_file(p, 1, hex, NULL), JS_HASH_CHANGED);
    /* through a package walk: reported with package and file */
    js_report r = {0};
    grow_path = p;
    json_t *files = js_dir_files(dir, "Pkg", 1, &r);
    assert_non_null(files);
    int found = 0;
    for (size_t i = 0; i < r.n; i++)
        if (!strcmp(r.v[i].kind, "changed-while-hashed") && !strcmp(r.v[i].package, "Pkg") &&
            !strcmp(r.v[i].file, "src/grows.jl"))
            found++;
    assert_int_equal(found, 1);
    json_decref(files);
    js_report_free(&r);
}

static void symlinks(void **state)
{
    (void)state;
    put("src/a.jl", "a\n");
    char p[256];
    snprintf(p, sizeof p, "%s/src/inside", dir);
    assert_int_equal(symlink("a.jl", p), 0);
    snprintf(p, sizeof p, "%s/src/up_ok", dir);
    assert_int_equal(symlink("../src/a.jl", p), 0);
    snprintf(p, sizeof p, "%s/src/escape", dir);
    assert_int_equal(symlink("../../etc/passwd", p), 0);
    snprintf(p, sizeof p, "%s/abs", dir);
    assert_int_equal(symlink("/etc/passwd", p), 0);
    js_report r = {0};
    json_t *files = js_dir_files(dir, "Pkg", 2, &r);
    assert_non_null(files);
    assert_string_equal(json_string_value(json_object_get(files, "src/inside")), "symlink:a.jl");
    assert_string_equal(json_string_value(json_object_get(files, "src/escape")), "symlink:../../etc/passwd");
    int escapes = 0;
    for (size_t i = 0; i < r.n; i++)
        if (!strcmp(r.v[i].kind, "symlink-escape")) {
            escapes++;
            assert_true(!strcmp(r.v[i].file, "src/escape") || !strcmp(r.v[i].file, "abs"));
        }
    assert_int_equal(escapes, 2);
    json_decref(files);
    js_report_free(&r);
}

static void lock_checks(void **state)
{
    (void)state;
    char err[512];
    static const struct {
        const char *json, *why;
    } bad[] = {
        {"[]", "top level is not a JSON object"},
        {"{\"format\":\"x\",\"version\":1}", "\"format\" is not"},
        {"{\"format\":\"jager.lock\"}", "without a valid \"version\""},
        {"{\"format\":\"jager.lock\",\"version\":3}", "version 3 is newer"},
        {"{\"format\":\"jager.lock\",\"version\":1,\"julia\":{\"packages\":[{\"name\":\"A\"}]}}", "needs string fields"},
        {"{\"format\":\"jager.lock\",\"version\":1,\"julia\":{\"packages\":[{\"name\":\"A\",\"uuid\":\"u\",\"files\":{\"a\":1}}]}}",
         "is not a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *d = json_loads(bad[i].json, 0, NULL);
        assert_non_null(d);
        assert_int_equal(js_lock_check(d, err, sizeof err), -1);
        if (!strstr(err, bad[i].why)) fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].why);
        json_decref(d);
    }
    json_t *ok = js_lock_new();
    assert_int_equal(js_lock_check(ok, err, sizeof err), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/x.lock", dir);
    assert_int_equal(js_lock_save(p, ok, err, sizeof err), 0);
    json_decref(ok);
    json_t *back = js_lock_load(p, err, sizeof err);
    assert_non_null(back);
    assert_int_equal(json_integer_value(json_object_get(back, "version")), JS_LOCK_VERSION);
    json_decref(back);
}

static void table_escapes(void **state)
{
    (void)state;
    js_report r = {0};
    js_report_add(&r, "added", "P\033[31m", "a\nb", "x%sy", "\x7f");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    js_report_print(&r, f);
    fclose(f);
    assert_non_null(strstr(buf, "P\\x1b[31m"));
    assert_non_null(strstr(buf, "a\\x0ab"));
    assert_non_null(strstr(buf, "x\\x7fy"));
    assert_null(strchr(buf, '\033'));
    free(buf);
    js_report_free(&r);
}

/* The lock step's cache: an entry is stored only for a file whose ctime is over 1 s older
 * than the moment its hashing began (racily clean otherwise), found only with the very same
 * (device, inode, size, mtime, ctime), and reused by js_hash_file without reading. */
static void lock_cache(void **state)
{
    (void)state;
    put("src/c.jl", "abc");
    char path[256], cpath[256], err[512], sha[65], blob[41];
    snprintf(path, sizeof path, "%s/src/c.jl", dir);
    snprintf(cpath, sizeof cpath, "%s/cache/c.json", dir);
    js_cache *c = js_cache_open(cpath, err, sizeof err);
    assert_non_null(c);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    long long ct = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
    const char *h = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; /* sha256("abc") */
    const char *b = "f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f";                         /* git hash-object */
    js_cache_put(c, &st, ct + 500000000LL, h, b); /* hashed half a second after its change: racy */
    assert_int_equal(js_cache_get_stats(c).racy, 1);
    assert_int_equal(js_cache_get(c, &st, sha, blob, 1), 0);
    js_cache_put(c, &st, ct + 2000000000LL, h, b);
    assert_int_equal(js_cache_get_stats(c).stored, 1);
    assert_int_equal(js_cache_get(c, &st, sha, blob, 1), 1);
    assert_string_equal(sha, h);
    assert_string_equal(blob, b);
    struct stat other = st;
    other.st_ctim.tv_nsec ^= 1; /* one nanosecond of ctime apart: another file for the cache */
    assert_int_equal(js_cache_get(c, &other, sha, blob, 1), 0);
    other = st;
    other.st_size++;
    assert_int_equal(js_cache_get(c, &other, sha, blob, 1), 0);
    /* js_hash_file through the cache: the real hashes (an old file's entry is reused) */
    js_lock_cache = c;
    char sha2[65], blob2[41];
    assert_int_equal(js_hash_file(path, 1, sha2, blob2, NULL), JS_HASH_OK);
    assert_string_equal(sha2, h);
    assert_string_equal(blob2, b);
    js_cache_stats cs = js_cache_get_stats(c);
    assert_int_equal(cs.hits, 2);
    assert_int_equal(cs.misses, 3);
    assert_int_equal(cs.rejected, 0);
    js_lock_cache = NULL;
    assert_int_equal(js_cache_save(c, err, sizeof err), 0);
    js_cache_close(c);
    /* reopened: the saved entry is valid under the same key */
    c = js_cache_open(cpath, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(js_cache_get(c, &st, sha, blob, 1), 1);
    js_cache_close(c);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/cache'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sha256_known, setup, teardown),
        cmocka_unit_test_setup_teardown(changed_while_hashed, setup, teardown),
        cmocka_unit_test_setup_teardown(symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(lock_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(table_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(lock_cache, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
