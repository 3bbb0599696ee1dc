/* sampler_code.c on its own: the drain cuts a frame-pointer stack at its first return
 * address outside every executable mapping (the junk a walk through code without frame
 * pointers reads: small integers, stack addresses) and keeps stacks of real code whole —
 * including code of a library loaded after the map was first read. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sampler_internal.h"

__attribute__((noinline)) static int some_code(int x) { return x * 3 + 1; }

static void test_cut_at_junk(void **state)
{
    (void)state;
    smp_state st = {0};
    int local = some_code(1), refreshed = 0;
    uint64_t code = (uint64_t)(uintptr_t)&some_code + 8; /* a return address inside it */
    uint64_t main_code = (uint64_t)(uintptr_t)&test_cut_at_junk + 16;
    uint64_t ips[6] = {code, main_code, code, 0x43, (uint64_t)(uintptr_t)&local, main_code};
    uint16_t flags = 2;
    assert_int_equal(smp_code_cut(&st, ips, 6, &refreshed, &flags), 3); /* up to 0x43 */
    assert_int_equal(flags, 2 | SMP_F_NOT_CODE);
    assert_int_equal(refreshed, 1);
    /* a whole stack of code: kept, flags untouched */
    flags = 0;
    assert_int_equal(smp_code_cut(&st, ips, 3, &refreshed, &flags), 3);
    assert_int_equal(flags, 0);
    /* a stack address right after the pc: leaf only */
    uint64_t leaf[2] = {code, (uint64_t)(uintptr_t)&local};
    assert_int_equal(smp_code_cut(&st, leaf, 2, &refreshed, &flags), 1);
    assert_int_equal(flags, SMP_F_NOT_CODE);
    (void)local;
    smp_code_free(&st);
}

/* Code mapped after the first read counts once the map is re-read (once per drain). */
static void test_new_library(void **state)
{
    (void)state;
    smp_state st = {0};
    int refreshed = 0;
    uint16_t flags = 0;
    uint64_t here = (uint64_t)(uintptr_t)&test_new_library + 8;
    uint64_t first[2] = {here, here};
    assert_int_equal(smp_code_cut(&st, first, 2, &refreshed, &flags), 2); /* reads the map */
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    void *cosf_ = dlsym(h, "cosf");
    assert_non_null(cosf_);
    uint64_t lib[2] = {here, (uint64_t)(uintptr_t)cosf_ + 4};
    refreshed = 0; /* a new drain */
    assert_int_equal(smp_code_cut(&st, lib, 2, &refreshed, &flags), 2);
    assert_int_equal(flags, 0);
    smp_code_free(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cut_at_junk), cmocka_unit_test(test_new_library)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
