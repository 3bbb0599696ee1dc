/* test_dispatch_map.c — the dispatch plugin's map and array: exact lookups through growth,
 * and allocation failures that leave both intact (calloc/realloc wrapped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "dispatch_internal.h"

/* Fail the n-th allocation from now (0: never). */
static int fail_in = 0;
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
static int should_fail(void)
{
    return fail_in > 0 && --fail_in == 0;
}
void *__wrap_calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t size)
{
    return should_fail() ? NULL : __real_realloc(p, size);
}

static void test_map_put_find_grow(void **state)
{
    (void)state;
    dp_map m = {0};
    const uint32_t n = 20000;
    for (uint32_t i = 1; i <= n; i++)
        assert_int_equal(dp_map_put(&m, (uint64_t)i << 32 | (i * 7u), i), JAGER_OK);
    assert_int_equal(m.count, n);
    assert_true(m.count * 4 <= m.cap * 3);
    uint32_t v = 0;
    for (uint32_t i = 1; i <= n; i++) {
        assert_int_equal(dp_map_find(&m, (uint64_t)i << 32 | (i * 7u), &v), 1);
        assert_int_equal(v, i);
    }
    assert_int_equal(dp_map_find(&m, (uint64_t)(n + 1) << 32, &v), 0);
    assert_int_equal(dp_map_find(&m, 0, &v), 0);
    assert_int_equal(dp_map_put(&m, 0, 1), JAGER_E_INVALID);
    /* Replace keeps the count. */
    assert_int_equal(dp_map_put(&m, (uint64_t)5 << 32 | 35u, 77), JAGER_OK);
    assert_int_equal(m.count, n);
    assert_int_equal(dp_map_find(&m, (uint64_t)5 << 32 | 35u, &v), 1);
    assert_int_equal(v, 77);
    dp_map_free(&m);
    dp_map_free(NULL);
}

/* Every allocation of a growth fails in turn: the map keeps every entry and stays usable. */
static void test_map_grow_failure_keeps_entries(void **state)
{
    (void)state;
    for (int k = 1; k <= 2; k++) {
        dp_map m = {0};
        uint32_t i = 1;
        for (; m.cap == 0 || (m.count + 1) * 4 <= m.cap * 3; i++)
            assert_int_equal(dp_map_put(&m, i, i), JAGER_OK);
        /* The next put must grow; fail its k-th allocation (keys, then values). */
        size_t before = m.count;
        fail_in = k;
        assert_int_equal(dp_map_put(&m, i, i), JAGER_E_NOMEM);
        fail_in = 0;
        assert_int_equal(m.count, before);
        uint32_t v;
        for (uint32_t j = 1; j < i; j++) {
            assert_int_equal(dp_map_find(&m, j, &v), 1);
            assert_int_equal(v, j);
        }
        assert_int_equal(dp_map_find(&m, i, &v), 0);
        assert_int_equal(dp_map_put(&m, i, i), JAGER_OK); /* and it recovers */
        assert_int_equal(dp_map_find(&m, i, &v), 1);
        dp_map_free(&m);
    }
}

static void test_vec_push_and_failure(void **state)
{
    (void)state;
    dp_vec v = {.elem = sizeof(uint64_t)};
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t *e = dp_vec_push(&v);
        assert_non_null(e);
        assert_int_equal(*e, 0); /* zeroed */
        *e = i * 3;
    }
    for (uint64_t i = 0; i < 1000; i++)
        assert_int_equal(*(uint64_t *)dp_vec_at(&v, i), i * 3);
    assert_null(dp_vec_at(&v, 1000));
    while (v.n < v.cap)
        assert_non_null(dp_vec_push(&v));
    size_t n = v.n;
    fail_in = 1;
    assert_null(dp_vec_push(&v));
    fail_in = 0;
    assert_int_equal(v.n, n);
    assert_int_equal(*(uint64_t *)dp_vec_at(&v, 999), 999 * 3);
    dp_vec_free(&v);
    dp_vec_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_put_find_grow),
        cmocka_unit_test(test_map_grow_failure_keeps_entries),
        cmocka_unit_test(test_vec_push_and_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
