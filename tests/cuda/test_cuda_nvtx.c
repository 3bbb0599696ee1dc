/* test_cuda_nvtx.c — a real NVTX3 producer (this program and a second library, both with the
 * toolkit's header-only NVTX) with the cuda plugin as injection: NVTX ranges become Jäger
 * spans (nested), marks Jäger marks, start/end ranges cuda.nvtx_range events; and the
 * injection configured before Jäger (a counting library) receives every call with its own
 * handles. No GPU: CUPTI and the driver are the test double. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <nvtx3/nvToolsExt.h>

#include "cuda_test_util.h"
#include "fake_cuda.h"
#include "internal.h"
#include "testutil.h"

void nvtx_user_work(int n); /* nvtx_user.c */

static size_t spans_at(const memsink *m, jager_site s, uint32_t parent_site_span_ids[], size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; k < m->nrecs; k++) {
        const jager_record *r = memsink_at(m, k).rec;
        if (r->type != JAGER_EV_SPAN || r->aux != s) continue;
        if (parent_site_span_ids && n < cap) parent_site_span_ids[n] = ((const jager_rec_span *)r)->parent_id;
        n++;
    }
    return n;
}

static int span_id_at(const memsink *m, jager_site s, uint32_t id)
{
    for (size_t k = 0; k < m->nrecs; k++) {
        const jager_record *r = memsink_at(m, k).rec;
        if (r->type == JAGER_EV_SPAN && r->aux == s && ((const jager_rec_span *)r)->span_id == id) return 1;
    }
    return 0;
}

static void test_nvtx_both_ways(void **unused)
{
    (void)unused;
    setenv("NVTX_INJECTION64_PATH", JAGER_NVTX_COUNT_LIB, 1); /* configured before Jäger */
    unsetenv("JAGER_CUDA_NVTX_CHAIN");
    fake_reset(FAKE_OK);
    ct_env(NULL, NULL);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_range = ct_type("cuda.nvtx_range");
    assert_true(t_range != 0);
    const char *inj = getenv("NVTX_INJECTION64_PATH");
    assert_non_null(inj);
    assert_non_null(strstr(inj, "libjager-cuda.so"));
    assert_string_equal(getenv("JAGER_CUDA_NVTX_CHAIN"), JAGER_NVTX_COUNT_LIB);

    for (int i = 0; i < 3; i++) {
        nvtxRangePushA("outer");
        nvtxRangePushA("inner");
        nvtxRangePop();
        nvtxRangePop();
    }
    nvtxMarkA("checkpoint");
    nvtxMarkA("checkpoint");
    nvtxRangeId_t id = nvtxRangeStartA("async_range");
    tu_sleep_ns(100000);
    nvtxRangeEnd(id);
    nvtxDomainHandle_t d = nvtxDomainCreateA("solver");
    nvtxStringHandle_t h = nvtxDomainRegisterStringA(d, "registered_range");
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = h;
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "dmark";
    nvtxDomainMarkEx(d, &a);
    nvtx_user_work(4);
    jager_shutdown();
    ct_env_clear();

    /* the Jäger side */
    jager_site s_outer = jager_site_register("outer", "nvtx", 0), s_inner = jager_site_register("inner", "nvtx", 0),
               s_reg = jager_site_register("registered_range", "nvtx", 0),
               s_lib = jager_site_register("lib_range", "nvtx", 0);
    uint32_t parents[8];
    assert_int_equal(spans_at(m, s_outer, NULL, 0), 3);
    assert_int_equal(spans_at(m, s_inner, parents, 8), 3);
    for (int i = 0; i < 3; i++) assert_true(span_id_at(m, s_outer, parents[i])); /* nested in "outer" */
    assert_int_equal(spans_at(m, s_reg, NULL, 0), 1);
    assert_int_equal(spans_at(m, s_lib, NULL, 0), 4);
    assert_int_equal(memsink_count(m, JAGER_EV_MARK, 0, 0), 4);
    assert_int_equal(memsink_count(m, JAGER_EV_MARK, 1, jg_intern("checkpoint")), 2);
    assert_int_equal(memsink_count(m, JAGER_EV_MARK, 1, jg_intern("lib_mark")), 1);
    assert_int_equal(ct_count(m, t_range), 1);
    const jager_rec_plugin *r = ct_rec(m, t_range, 0);
    assert_true(r->fields[0] >= 100000);
    assert_string_equal(jg_string((uint32_t)r->fields[1]), "async_range");

    /* the chained injection: every call, its own handles, one init per library */
    void *c = dlopen(JAGER_NVTX_COUNT_LIB, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(c);
    int (*inits)(void) = (int (*)(void))dlsym(c, "nvtx_count_inits");
    int (*bad)(void) = (int (*)(void))dlsym(c, "nvtx_count_bad");
    int (*core)(int) = (int (*)(int))dlsym(c, "nvtx_count_core");
    int (*core2)(int) = (int (*)(int))dlsym(c, "nvtx_count_core2");
    assert_true(inits && bad && core && core2);
    assert_int_equal(inits(), 2);
    assert_int_equal(bad(), 0);
    assert_int_equal(core(NVTX_CBID_CORE_RangePushA), 10);
    assert_int_equal(core(NVTX_CBID_CORE_RangePop), 10);
    assert_int_equal(core(NVTX_CBID_CORE_MarkA), 3);
    assert_int_equal(core(NVTX_CBID_CORE_RangeStartA), 1);
    assert_int_equal(core(NVTX_CBID_CORE_RangeEnd), 1);
    assert_int_equal(core2(NVTX_CBID_CORE2_DomainCreateA), 1);
    assert_int_equal(core2(NVTX_CBID_CORE2_DomainRegisterStringA), 1);
    assert_int_equal(core2(NVTX_CBID_CORE2_DomainRangePushEx), 1);
    assert_int_equal(core2(NVTX_CBID_CORE2_DomainRangePop), 1);
    assert_int_equal(core2(NVTX_CBID_CORE2_DomainMarkEx), 1);
    dlclose(c);
    unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("JAGER_CUDA_NVTX_CHAIN");
    memsink_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_nvtx_both_ways)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
