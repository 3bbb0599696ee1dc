/* test_sampler_nofp.c — a workload built without frame pointers (-O2 -fomit-frame-pointer):
 * the sampler still samples it and names the innermost frame, and says once, clearly,
 * that its stacks are truncated and how to rebuild. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sampler_fixture.h"

volatile uint64_t nofp_sink;

__attribute__((noinline, used)) void nofp_leaf(uint64_t n)
{
    uint64_t x = nofp_sink, y = x ^ 0x9e3779b97f4a7c15ull, z = x + 7, w = y * 3;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + y;
        y = y * 2862933555777941757ull + z;
        z = z * 3202034522624059733ull + w;
        w = w * 1181783497276652981ull + x;
    }
    nofp_sink = x ^ y ^ z ^ w;
}
__attribute__((noinline, used)) void nofp_mid(uint64_t n)
{
    for (int i = 0; i < 4; i++) nofp_leaf(n);
    nofp_sink++;
}

static void *worker(void *arg)
{
    for (int i = 0; i < 400; i++) nofp_mid(*(uint64_t *)arg);
    return NULL;
}

static void test_truncated_stacks_are_reported(void **unused)
{
    (void)unused;
    uint64_t n = getenv("JAGER_UNDER_VALGRIND") ? 20000 : 200000; /* memcheck runs ~30x slower */
    const char *path = fx_start(1000, "auto", 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, worker, &n), 0);
    pthread_join(th, NULL);
    fx_run r;
    fx_stop(path, &r);
    if (getenv("JAGER_UNDER_VALGRIND")) { /* leaf-only walks by configuration: memory checks only */
        fx_free(&r);
        return;
    }
    size_t leaf = fx_count(&r, "nofp_leaf", UINT64_MAX, 0);
    print_message("samples %zu, in nofp_leaf %zu, leaf-only walks %llu\n%s", r.ns, leaf,
                  (unsigned long long)r.summary[12], r.diags);
    assert_true(leaf >= 20);
    assert_true(r.summary[12] * 2 > r.ns);
    const char *note = strstr(r.diags, "truncated to their innermost frame");
    assert_non_null(note);
    assert_non_null(strstr(r.diags, "-fno-omit-frame-pointer"));
    assert_null(strstr(note + 1, "truncated to their innermost frame")); /* said once */
    fx_free(&r);
}

int main(void)
{
    /* memcheck flags a walk's reads of unwritten stack words: leaf only under valgrind */
    if (getenv("JAGER_UNDER_VALGRIND")) setenv("JAGER_SAMPLER_DEPTH", "1", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_truncated_stacks_are_reported)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
