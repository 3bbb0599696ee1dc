/* test_dispatch_plugin.c — the dispatch plugin's bookkeeping through "jager.dispatch/1":
 * the real plugin, loaded by the core from the build tree, records into a memory sink. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dispatch_fixture.h"
#include "jager.h"

/* Field indexes (docs/event-types.md, dispatch section). */
enum { SIG_SITE, SIG_SIGNATURE, SIG_CALLS, SIG_DISTINCT, SIG_FINAL };
enum { CMP_DURATION, CMP_INFERENCE, CMP_SIGNATURE };
enum { SPC_METHOD, SPC_COUNT, SPC_FILE, SPC_LINE, SPC_PREVIOUS, SPC_CENSUSES, SPC_FIRST_COUNT, SPC_FIRST_NS, SPC_FINAL };
enum { INS_SITE, INS_SIGNATURE, INS_FLAGS, INS_REASON, INS_CHAIN };
enum { SUM_SITES, SUM_SIGNATURES, SUM_POLYMORPHIC, SUM_METHODS, SUM_SPECIALIZATIONS, SUM_COMPILES,
       SUM_CODEGEN, SUM_INFERENCE, SUM_UNSTABLE, SUM_REJECTED };

static const char *SIG_F64 = "Tuple{typeof(deposit!), Vector{Float64}, Float64}";
static const char *SIG_F32 = "Tuple{typeof(deposit!), Vector{Float64}, Float32}";

/* The final (summary) signature record of (site, text), or NULL. */
static const jager_rec_plugin *final_signature(const dfx *f, jager_site site, const char *text)
{
    const jager_rec_plugin *r;
    for (size_t i = 0; (r = dfx_nth(f, f->t_signature, i)) != NULL; i++)
        if (r->fields[SIG_FINAL] == 1 && r->fields[SIG_SITE] == site &&
            strcmp(dfx_str(r->fields[SIG_SIGNATURE]), text) == 0)
            return r;
    return NULL;
}

static void test_extension_table(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    assert_int_equal(f.d->struct_size, sizeof(jager_dispatch_api));
    /* The offsets Julia relies on: function i at 8 + 8 i. */
    assert_int_equal(offsetof(jager_dispatch_api, signature_seen), 8);
    assert_int_equal(offsetof(jager_dispatch_api, instability), 8 + 8 * 4);
    assert_int_equal(offsetof(jager_dispatch_api, method_specializations), 8 + 8 * 7);
    assert_null(jager_extension_get("jager.dispatch/2"));
    assert_ptr_equal(jager_extension_get(JAGER_DISPATCH_EXTENSION_ID), f.d);
    dfx_stop(&f);
    /* Nothing fed: only the summary, all zeros. */
    assert_int_equal(dfx_count(&f, f.t_signature), 0);
    assert_int_equal(dfx_count(&f, f.t_summary), 1);
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    for (int i = SUM_SITES; i <= SUM_REJECTED; i++)
        assert_int_equal(s->fields[i], 0);
    dfx_free(&f);
}

static void test_signatures_exact_counts(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    jager_site a = jager_site_register("deposit!", "pic.jl", 42);
    jager_site b = jager_site_register("push!", "pic.jl", 50);
    assert_int_equal(f.d->signature_seen(a, SIG_F64), JAGER_OK);
    assert_int_equal(f.d->signature_seen(a, SIG_F64), JAGER_OK); /* again: no new event */
    assert_int_equal(f.d->signature_seen(a, SIG_F32), JAGER_OK);
    assert_int_equal(f.d->signature_seen(b, SIG_F64), JAGER_OK);
    uint64_t n = 99;
    assert_int_equal(f.d->site_signatures(a, &n), JAGER_OK);
    assert_int_equal(n, 2);
    assert_int_equal(f.d->site_signatures(b, &n), JAGER_OK);
    assert_int_equal(n, 1);
    assert_int_equal(f.d->site_signatures(b + 100, &n), JAGER_OK);
    assert_int_equal(n, 0);

    /* Absolute counts: the last one sent wins. */
    assert_int_equal(f.d->signature_count(a, SIG_F64, 10), JAGER_OK);
    assert_int_equal(f.d->signature_count(a, SIG_F64, 60000), JAGER_OK);
    assert_int_equal(f.d->signature_count(a, SIG_F32, 40000), JAGER_OK);
    assert_int_equal(f.d->signature_count(b, SIG_F64, 7), JAGER_OK);
    assert_int_equal(f.d->signature_calls(a, SIG_F64, &n), JAGER_OK);
    assert_int_equal(n, 60000);
    assert_int_equal(f.d->signature_calls(a, "Tuple{}", &n), JAGER_E_NOTFOUND);
    /* signature_count registers an unseen pair too. */
    assert_int_equal(f.d->signature_count(b, SIG_F32, 3), JAGER_OK);
    dfx_stop(&f);

    /* First sights: 4 pairs with calls 0 and the running distinct count per site. */
    assert_int_equal(dfx_count_where(&f, f.t_signature, SIG_FINAL, 0), 4);
    const jager_rec_plugin *r0 = dfx_nth(&f, f.t_signature, 0);
    assert_int_equal(r0->fields[SIG_SITE], a);
    assert_string_equal(dfx_str(r0->fields[SIG_SIGNATURE]), SIG_F64);
    assert_int_equal(r0->fields[SIG_CALLS], 0);
    assert_int_equal(r0->fields[SIG_DISTINCT], 1);
    const jager_rec_plugin *r1 = dfx_nth(&f, f.t_signature, 1);
    assert_string_equal(dfx_str(r1->fields[SIG_SIGNATURE]), SIG_F32);
    assert_int_equal(r1->fields[SIG_DISTINCT], 2);

    /* The summary: exact counts per (site, signature). */
    assert_int_equal(dfx_count_where(&f, f.t_signature, SIG_FINAL, 1), 4);
    const jager_rec_plugin *fa64 = final_signature(&f, a, SIG_F64);
    const jager_rec_plugin *fa32 = final_signature(&f, a, SIG_F32);
    const jager_rec_plugin *fb64 = final_signature(&f, b, SIG_F64);
    const jager_rec_plugin *fb32 = final_signature(&f, b, SIG_F32);
    assert_non_null(fa64);
    assert_non_null(fa32);
    assert_non_null(fb64);
    assert_non_null(fb32);
    assert_int_equal(fa64->fields[SIG_CALLS], 60000);
    assert_int_equal(fa32->fields[SIG_CALLS], 40000);
    assert_int_equal(fb64->fields[SIG_CALLS], 7);
    assert_int_equal(fb32->fields[SIG_CALLS], 3);
    assert_int_equal(fa64->fields[SIG_DISTINCT], 2);
    assert_int_equal(fb64->fields[SIG_DISTINCT], 2);

    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_SITES], 2);
    assert_int_equal(s->fields[SUM_SIGNATURES], 4);
    assert_int_equal(s->fields[SUM_POLYMORPHIC], 2);
    assert_int_equal(s->fields[SUM_REJECTED], 0);
    dfx_free(&f);
}

static void test_compile_events(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    uint64_t before = jager_now_ns();
    assert_int_equal(f.d->compile(before - 5000, 184355012, 101074892, "Tuple{typeof(Main.bar), Float64}"), JAGER_OK);
    assert_int_equal(f.d->compile(0, 26508559, 0, "Tuple{typeof(Main.bar), Int64}"), JAGER_OK);
    assert_int_equal(f.d->compile(0, 1, 1, NULL), JAGER_E_INVALID);
    uint64_t after = jager_now_ns();
    dfx_stop(&f);
    assert_int_equal(dfx_count(&f, f.t_compile), 2);
    const jager_rec_plugin *c0 = dfx_nth(&f, f.t_compile, 0);
    const jager_rec_plugin *c1 = dfx_nth(&f, f.t_compile, 1);
    assert_int_equal(c0->time_ns, before - 5000);
    assert_int_equal(c0->fields[CMP_DURATION], 184355012);
    assert_int_equal(c0->fields[CMP_INFERENCE], 101074892);
    assert_string_equal(dfx_str(c0->fields[CMP_SIGNATURE]), "Tuple{typeof(Main.bar), Float64}");
    /* time 0 means "now". */
    assert_true(c1->time_ns >= before && c1->time_ns <= after);
    assert_int_equal(c1->fields[CMP_INFERENCE], 0);
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_COMPILES], 2);
    assert_int_equal(s->fields[SUM_CODEGEN], 184355012 + 26508559);
    assert_int_equal(s->fields[SUM_INFERENCE], 101074892);
    assert_int_equal(s->fields[SUM_REJECTED], 1);
    dfx_free(&f);
}

static void test_specialization_growth(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    const char *hk = "hk(::Val{N}) where N in Main at /src/val.jl:3";
    const char *g = "g(x) in Main at /src/g.jl:9";
    uint64_t t0 = jager_now_ns();
    assert_int_equal(f.d->specializations(hk, "/src/val.jl", 3, 1), JAGER_OK);
    assert_int_equal(f.d->specializations(hk, "/src/val.jl", 3, 1), JAGER_OK);   /* unchanged: no event */
    assert_int_equal(f.d->specializations(hk, "/src/val.jl", 3, 150), JAGER_OK);
    assert_int_equal(f.d->specializations(hk, "/src/val.jl", 3, 300), JAGER_OK);
    assert_int_equal(f.d->specializations(g, "", 9, 2), JAGER_OK);
    uint64_t n = 0, censuses = 0;
    assert_int_equal(f.d->method_specializations(hk, &n, &censuses), JAGER_OK);
    assert_int_equal(n, 300);
    assert_int_equal(censuses, 4);
    assert_int_equal(f.d->method_specializations("nope", &n, NULL), JAGER_E_NOTFOUND);
    dfx_stop(&f);

    /* The series: one event per change (1, 150, 300) plus one for g, then two finals. */
    assert_int_equal(dfx_count_where(&f, f.t_specializations, SPC_FINAL, 0), 4);
    const jager_rec_plugin *e0 = dfx_nth(&f, f.t_specializations, 0);
    const jager_rec_plugin *e1 = dfx_nth(&f, f.t_specializations, 1);
    const jager_rec_plugin *e2 = dfx_nth(&f, f.t_specializations, 2);
    assert_string_equal(dfx_str(e0->fields[SPC_METHOD]), hk);
    assert_string_equal(dfx_str(e0->fields[SPC_FILE]), "/src/val.jl");
    assert_int_equal(e0->fields[SPC_LINE], 3);
    assert_int_equal(e0->fields[SPC_COUNT], 1);
    assert_int_equal(e0->fields[SPC_PREVIOUS], 0);
    assert_int_equal(e0->fields[SPC_CENSUSES], 1);
    assert_true(e0->fields[SPC_FIRST_NS] >= t0);
    assert_int_equal(e1->fields[SPC_COUNT], 150);
    assert_int_equal(e1->fields[SPC_PREVIOUS], 1);
    assert_int_equal(e1->fields[SPC_CENSUSES], 3);
    assert_int_equal(e2->fields[SPC_COUNT], 300);
    assert_int_equal(e2->fields[SPC_PREVIOUS], 150);
    assert_int_equal(e2->fields[SPC_FIRST_COUNT], 1);
    assert_true(e2->time_ns >= e1->time_ns && e1->time_ns >= e0->time_ns);

    assert_int_equal(dfx_count_where(&f, f.t_specializations, SPC_FINAL, 1), 2);
    const jager_rec_plugin *fin = dfx_nth(&f, f.t_specializations, 4);
    assert_int_equal(fin->fields[SPC_FINAL], 1);
    assert_string_equal(dfx_str(fin->fields[SPC_METHOD]), hk);
    assert_int_equal(fin->fields[SPC_COUNT], 300);
    assert_int_equal(fin->fields[SPC_FIRST_COUNT], 1);
    assert_int_equal(fin->fields[SPC_CENSUSES], 4);
    assert_int_equal(fin->fields[SPC_FIRST_NS], e0->fields[SPC_FIRST_NS]);
    const jager_rec_plugin *fg = dfx_nth(&f, f.t_specializations, 5);
    assert_int_equal(fg->fields[SPC_FILE], 0); /* "" file: no string */

    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_METHODS], 2);
    assert_int_equal(s->fields[SUM_SPECIALIZATIONS], 302);
    dfx_free(&f);
}

static void test_instability_once_per_signature(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    jager_site a = jager_site_register("deposit!", "pic.jl", 42);
    const char *reason = "runtime dispatch: `+(::Float64, ::Real)` at pic.jl:44";
    const char *chain = "deposit!(::Vector{Float64}, ::Vector{Particle})";
    assert_int_equal(f.d->instability(a, SIG_F64, JAGER_DISPATCH_RUNTIME_DISPATCH, reason, chain), JAGER_OK);
    assert_int_equal(f.d->instability(a, SIG_F64, JAGER_DISPATCH_BAD_UNION, "other", ""), JAGER_OK); /* repeat */
    assert_int_equal(f.d->instability(a, SIG_F32, JAGER_DISPATCH_BAD_UNION | JAGER_DISPATCH_ABSTRACT_RETURN,
                                      "non-concrete value `%20::Union{Float64, Int64}` at acc.jl:5", NULL),
                     JAGER_OK);
    assert_int_equal(f.d->instability(a, "Tuple{typeof(ok)}", 0, "no flags", ""), JAGER_E_INVALID);
    assert_int_equal(f.d->instability(a, "Tuple{typeof(ok)}", 1, NULL, ""), JAGER_E_INVALID);
    dfx_stop(&f);
    assert_int_equal(dfx_count(&f, f.t_instability), 2);
    const jager_rec_plugin *i0 = dfx_nth(&f, f.t_instability, 0);
    assert_int_equal(i0->fields[INS_SITE], a);
    assert_string_equal(dfx_str(i0->fields[INS_SIGNATURE]), SIG_F64);
    assert_int_equal(i0->fields[INS_FLAGS], JAGER_DISPATCH_RUNTIME_DISPATCH);
    assert_string_equal(dfx_str(i0->fields[INS_REASON]), reason);
    assert_string_equal(dfx_str(i0->fields[INS_CHAIN]), chain);
    const jager_rec_plugin *i1 = dfx_nth(&f, f.t_instability, 1);
    assert_int_equal(i1->fields[INS_FLAGS], 10);
    assert_int_equal(i1->fields[INS_CHAIN], 0);
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_UNSTABLE], 2);
    assert_int_equal(s->fields[SUM_REJECTED], 2);
    dfx_free(&f);
}

/* Misuse: refused with a status, reported once per kind, counted; the program runs on. */
static void test_misuse_said_once(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    jager_site a = jager_site_register("k", "k.jl", 1);
    jager_flush();
    size_t diags0 = dfx_diags(&f); /* whatever the core said at start */
    assert_int_equal(f.d->signature_seen(0, SIG_F64), JAGER_E_INVALID);
    assert_int_equal(f.d->signature_seen(a + 1000, SIG_F64), JAGER_E_INVALID);
    assert_int_equal(f.d->signature_count(0, SIG_F64, 5), JAGER_E_INVALID);
    assert_int_equal(f.d->signature_seen(a, NULL), JAGER_E_INVALID);
    assert_int_equal(f.d->signature_seen(a, ""), JAGER_E_INVALID);
    assert_int_equal(f.d->specializations(NULL, "f.jl", 1, 3), JAGER_E_INVALID);
    assert_int_equal(f.d->site_signatures(a, NULL), JAGER_E_INVALID);
    jager_flush();
    size_t diags1 = dfx_diags(&f);
    dfx_stop(&f);
    /* Two kinds (bad site, bad string): two diagnostics, six refused calls. */
    assert_int_equal(diags1 - diags0, 2);
    assert_int_equal(dfx_count(&f, f.t_signature), 0);
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_REJECTED], 6);
    dfx_free(&f);
}

/* A string longer than 4 KiB is cut at a UTF-8 boundary with "…" appended. */
static void test_long_strings_cut(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    jager_site a = jager_site_register("k", "k.jl", 1);
    size_t len = 10000;
    char *big = malloc(len + 1);
    assert_non_null(big);
    for (size_t i = 0; i < len; i += 2) { /* "é" = C3 A9: a cut must not split it */
        big[i] = (char)0xC3;
        big[i + 1] = (char)0xA9;
    }
    big[len] = '\0';
    assert_int_equal(f.d->signature_seen(a, big), JAGER_OK);
    dfx_stop(&f);
    const jager_rec_plugin *r = dfx_nth(&f, f.t_signature, 0);
    const char *s = dfx_str(r->fields[SIG_SIGNATURE]);
    size_t n = strlen(s);
    assert_true(n <= 4096);
    assert_true(n >= 4090);
    assert_memory_equal(s + n - 3, "\xE2\x80\xA6", 3);
    assert_int_equal((n - 3) % 2, 0); /* whole characters only */
    free(big);
    dfx_free(&f);
}

static void test_limit_max_signatures(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, "JAGER_DISPATCH_MAX_SIGNATURES=3"), 0);
    jager_site a = jager_site_register("k", "k.jl", 1);
    assert_int_equal(f.d->signature_seen(a, "Tuple{A}"), JAGER_OK);
    assert_int_equal(f.d->signature_seen(a, "Tuple{B}"), JAGER_OK);
    assert_int_equal(f.d->signature_seen(a, "Tuple{C}"), JAGER_OK);
    assert_int_equal(f.d->signature_seen(a, "Tuple{D}"), JAGER_E_FULL);
    assert_int_equal(f.d->signature_count(a, "Tuple{B}", 9), JAGER_OK); /* known pairs still count */
    dfx_stop(&f);
    unsetenv("JAGER_DISPATCH_MAX_SIGNATURES");
    assert_int_equal(dfx_count_where(&f, f.t_signature, SIG_FINAL, 1), 3);
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_SIGNATURES], 3);
    assert_int_equal(s->fields[SUM_REJECTED], 1);
    dfx_free(&f);
}

/* A second recording in the same process starts from empty books. */
static void test_restart_fresh_books(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    jager_site a = jager_site_register("k", "k.jl", 1);
    assert_int_equal(f.d->signature_count(a, SIG_F64, 5), JAGER_OK);
    dfx_stop(&f);
    dfx_free(&f);
    assert_int_equal(dfx_start(&f, NULL), 0);
    uint64_t n = 99;
    assert_int_equal(f.d->site_signatures(a, &n), JAGER_OK);
    assert_int_equal(n, 0);
    assert_int_equal(f.d->signature_calls(a, SIG_F64, &n), JAGER_E_NOTFOUND);
    dfx_stop(&f);
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_SIGNATURES], 0);
    dfx_free(&f);
}

/* A sink whose close runs after the plugins' stop (and before their shutdown): calls made
 * there are refused with JAGER_E_STATE, not recorded, and the program runs on. */
static const jager_dispatch_api *late_api;
static jager_site late_site;
static int32_t late_status[3] = {99, 99, 99};
static jager_status late_write(void *ctx, const jager_batch *batch)
{
    (void)ctx;
    (void)batch;
    return JAGER_OK;
}
static void late_close(void *ctx)
{
    (void)ctx;
    if (!late_api)
        return;
    late_status[0] = late_api->signature_seen(late_site, SIG_F64);
    late_status[1] = late_api->compile(0, 1, 1, SIG_F64);
    late_status[2] = late_api->signature_seen(late_site, SIG_F32); /* second time: no new diagnostic */
}

static void test_calls_after_stop_refused(void **state)
{
    (void)state;
    jager_sink probe = {.struct_size = sizeof(jager_sink), .name = "late", .write = late_write, .close = late_close};
    assert_int_equal(jager_sink_add(&probe), JAGER_OK);
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    late_api = f.d;
    late_site = jager_site_register("late", "late.jl", 1);
    assert_int_equal(f.d->signature_seen(late_site, SIG_F64), JAGER_OK);
    dfx_stop(&f);
    late_api = NULL;
    assert_int_equal(late_status[0], JAGER_E_STATE);
    assert_int_equal(late_status[1], JAGER_E_STATE);
    assert_int_equal(late_status[2], JAGER_E_STATE);
    /* The summary was written at stop, before the late calls: one signature, nothing rejected yet. */
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_int_equal(s->fields[SUM_SIGNATURES], 1);
    assert_int_equal(s->fields[SUM_REJECTED], 0);
    dfx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extension_table),
        cmocka_unit_test(test_signatures_exact_counts),
        cmocka_unit_test(test_compile_events),
        cmocka_unit_test(test_specialization_growth),
        cmocka_unit_test(test_instability_once_per_signature),
        cmocka_unit_test(test_misuse_said_once),
        cmocka_unit_test(test_long_strings_cut),
        cmocka_unit_test(test_limit_max_signatures),
        cmocka_unit_test(test_restart_fresh_books),
        cmocka_unit_test(test_calls_after_stop_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
