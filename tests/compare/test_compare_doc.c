/* jager-bench documents: a round trip keeps every value, a baseline holds one result per
 * machine class, and every kind of broken file is refused with a message that says where. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_doc.h"
#include "compare.h"
#include "testutil.h"

static jb_result *make_result(jb_doc *d, const char *cls, double center, size_t runs)
{
    jb_result *r = jb_doc_add_result(d);
    assert_non_null(r);
    free(r->machine_class);
    r->machine_class = strdup(cls);
    jb_kernel *k = jb_result_kernel(r, "solve|<b>", "src/solve.c", 42);
    assert_non_null(k);
    for (size_t i = 0; i < runs; i++) {
        jb_run run = {center * (1 + 0.001 * (double)i), center, center * 0.9, 100, 4096 * 100, 7, 1};
        assert_int_equal(jb_kernel_add_run(k, &run), 0);
    }
    return r;
}

static void test_round_trip(void **state)
{
    (void)state;
    jb_doc d = {0};
    jb_result *r = make_result(&d, "x86_64 Test CPU", 1000, 6);
    r->kernels[0].threshold = 0.05;
    r->threshold = 0.04;
    r->warmup = 2;
    const char *path = tu_tmp_path(".json");
    char err[512];
    assert_int_equal(jb_doc_save(&d, path, err, sizeof err), 0);
    jb_doc back;
    assert_int_equal(jb_doc_load(path, &back, err, sizeof err), 0);
    assert_int_equal(back.nresults, 1);
    const jb_result *b = &back.results[0];
    assert_string_equal(b->machine_class, "x86_64 Test CPU");
    assert_int_equal(b->warmup, 2);
    assert_float_equal(b->threshold, 0.04, 1e-12);
    assert_int_equal(b->nkernels, 1);
    const jb_kernel *k = &b->kernels[0];
    assert_string_equal(k->name, "solve|<b>");
    assert_string_equal(k->file, "src/solve.c");
    assert_int_equal(k->line, 42);
    assert_float_equal(k->threshold, 0.05, 1e-12);
    assert_int_equal(k->nruns, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_float_equal(k->runs[i].median_ns, 1000 * (1 + 0.001 * (double)i), 1e-6);
        assert_int_equal(k->runs[i].median_exact, 1);
        assert_int_equal(k->runs[i].calls, 100);
        assert_int_equal(k->runs[i].bytes, 409600);
        assert_int_equal(k->runs[i].gc_ns, 7);
    }
    jb_doc_free(&back);
    jb_doc_free(&d);
    remove(path);
}

static void test_store_by_class(void **state)
{
    (void)state;
    jb_doc base = {0}, other = {0};
    make_result(&base, "x86_64 Intel A", 1000, 5);
    make_result(&base, "aarch64 Neoverse", 2000, 5);
    jb_result *r = make_result(&other, "x86_64 Intel A", 3000, 7);
    assert_int_equal(jb_doc_store(&base, r), 0);
    assert_int_equal(base.nresults, 2);
    const jb_result *f = jb_doc_find(&base, "x86_64 Intel A");
    assert_non_null(f);
    assert_int_equal(f->kernels[0].nruns, 7);
    assert_null(jb_doc_find(&base, "x86_64 AMD B"));
    jb_result *n = make_result(&other, "x86_64 AMD B", 3000, 5);
    assert_int_equal(jb_doc_store(&base, n), 0);
    assert_int_equal(base.nresults, 3);
    jb_doc_free(&base);
    jb_doc_free(&other);
}

/* Each broken document and the words its message must contain. */
static void test_bad_documents(void **state)
{
    (void)state;
    static const struct { const char *text, *want; } cases[] = {
        {"{\"schema\": \"jager-bench\", \"version\": 1, \"results\": [", "malformed JSON at line 1"},
        {"[1, 2]", "not a jager-bench document"},
        {"{\"schema\": \"other\", \"version\": 1, \"results\": []}", "not a jager-bench document"},
        {"{\"schema\": \"jager-bench\", \"version\": 2, \"results\": []}", "schema version 2 is not supported"},
        {"{\"schema\": \"jager-bench\", \"version\": \"1\", \"results\": []}", "\"version\" must be an integer"},
        {"{\"schema\": \"jager-bench\", \"version\": 1, \"results\": []}", "non-empty array"},
        {"{\"schema\": \"jager-bench\", \"version\": 1, \"results\": [{\"kernels\": []}]}", "results[0].machine"},
        {"{\"schema\": \"jager-bench\", \"version\": 1, \"results\": [{\"machine\": {\"class\": \"c\"}, \"kernels\": [{\"name\": \"k\", "
         "\"runs\": {\"median_ns\": [1, 2], \"mean_ns\": [1], \"min_ns\": [1, 2], \"calls\": [1, 2], \"bytes\": [0, 0], \"gc_ns\": [0, 0]}}]}]}",
         "results[0].kernels[0].runs.mean_ns: 1 values, but median_ns has 2"},
        {"{\"schema\": \"jager-bench\", \"version\": 1, \"results\": [{\"machine\": {\"class\": \"c\"}, \"kernels\": [{\"name\": \"k\", "
         "\"runs\": {\"median_ns\": [-5], \"mean_ns\": [1], \"min_ns\": [1], \"calls\": [1], \"bytes\": [0], \"gc_ns\": [0]}}]}]}",
         "median_ns[0]: must be finite and >= 0"},
        {"{\"schema\": \"jager-bench\", \"version\": 1, \"results\": [{\"machine\": {\"class\": \"c\"}, \"kernels\": "
         "[{\"name\": \"k\", \"threshold\": 0, \"runs\": {\"median_ns\": [], \"mean_ns\": [], \"min_ns\": [], \"calls\": [], "
         "\"bytes\": [], \"gc_ns\": []}}]}]}",
         "threshold: must be in (0, 10)"},
        {"{\"schema\": \"jager-bench\", \"version\": 1, \"results\": [{\"machine\": {\"class\": \"c\"}, \"kernels\": []},"
         "{\"machine\": {\"class\": \"c\"}, \"kernels\": []}]}",
         "the same machine class"},
        {"{\"schema\": \"jager-bench\", \"schema\": \"jager-bench\", \"version\": 1, \"results\": []}", "malformed JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        jb_doc d;
        char err[512] = "";
        int rc = jb_doc_parse(cases[i].text, strlen(cases[i].text), "base.json", &d, err, sizeof err);
        if (rc != -1 || !strstr(err, cases[i].want) || strncmp(err, "base.json: ", 11))
            fail_msg("case %zu: rc %d, message \"%s\", wanted \"%s\"", i, rc, err, cases[i].want);
    }
    jb_doc d;
    char err[512];
    assert_int_equal(jb_doc_load("/nonexistent/base.json", &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file"));
}

static void test_compare_pairs_and_gates(void **state)
{
    (void)state;
    jb_doc d = {0};
    jb_result *base = make_result(&d, "c", 1000, 8), *head = make_result(&d, "c", 1200, 8);
    base = &d.results[0];                      /* the array may have moved */
    jb_kernel *gone = jb_result_kernel(base, "old_kernel", "a.c", 1);
    jb_run run = {5, 5, 5, 1, 0, 0, 1};
    for (int i = 0; i < 8; i++) jb_kernel_add_run(gone, &run);
    head = &d.results[1];
    head->kernels[0].line = 44;                /* code moved: still the same kernel */
    jb_kernel *added = jb_result_kernel(head, "new_kernel", "a.c", 2);
    jb_kernel_add_run(added, &run);
    for (size_t i = 0; i < head->kernels[0].nruns; i++) head->kernels[0].runs[i].bytes += 100; /* +1 B per call */
    jc_options o;
    jc_options_default(&o);
    jc_report rep;
    assert_int_equal(jc_compare(base, head, &o, &rep), 0);
    assert_int_equal(rep.nrows, 3);
    assert_int_equal(rep.regressed, 1);
    assert_int_equal(rep.alloc_regressed, 1);
    assert_int_equal(rep.added, 1);
    assert_int_equal(rep.removed, 1);
    assert_int_equal(rep.rows[0].verdict, JC_REGRESSED);
    assert_float_equal(rep.rows[0].head_bytes - rep.rows[0].base_bytes, 1.0, 1e-9);
    assert_true(jc_report_failed(&rep));
    jc_report_free(&rep);
    jb_doc_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_store_by_class),
        cmocka_unit_test(test_bad_documents),
        cmocka_unit_test(test_compare_pairs_and_gates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
