/* test_gc_outside_julia.c — JAGER_PLUGINS=gc in a program without Julia: the plugin says
 * once that this is no Julia process, steps aside, and the program records on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "memsink.h"
#include "testutil.h"

static size_t diags_from(const memsink *m, const char *source, const char *needle)
{
    uint32_t src = jg_intern(source);
    size_t n = 0;
    for (size_t k = 0; k < m->nrecs; k++) {
        const jager_record *rec = memsink_at(m, k).rec;
        if (rec->type != JAGER_EV_DIAG) continue;
        const jager_rec_diag *d = (const jager_rec_diag *)rec;
        if (d->source == src && (!needle || memmem(d + 1, d->text_len, needle, strlen(needle)))) n++;
    }
    return n;
}

static int has_type(const char *name)
{
    for (uint32_t id = JAGER_EV_FIRST_PLUGIN; id < jg_type_count(); id++) {
        const jager_type_desc *d = jg_type_get((uint16_t)id);
        if (d && d->name && strcmp(d->name, name) == 0) return 1;
    }
    return 0;
}

/* One recording; \p from_env: configure through JAGER_PLUGINS/JAGER_PLUGIN_PATH. */
static void record_without_julia(int from_env)
{
    jager_sink sink;
    memsink *m = memsink_new(&sink);
    assert_non_null(m);
    assert_int_equal(jager_sink_add(&sink), JAGER_OK);
    jager_config cfg = tu_config(0);
    if (from_env) {
        setenv("JAGER_PLUGINS", "gc", 1);
        setenv("JAGER_PLUGIN_PATH", JAGER_TEST_PLUGIN_DIR, 1);
        assert_int_equal(jager_config_from_env(&cfg), JAGER_OK);
    } else {
        cfg.plugins = "gc";
        cfg.plugin_path = JAGER_TEST_PLUGIN_DIR;
    }
    assert_int_equal(jager_init(&cfg), JAGER_OK); /* a plugin stepping aside never fails init */
    assert_int_equal(jager_is_enabled(), 1);
    assert_false(has_type("gc.pause"));           /* it registered nothing */
    assert_null(jager_extension_get("jager.gc/1")); /* and is not loaded */

    jager_site s = jager_site_register("outside_julia.work", __FILE__, __LINE__);
    for (int i = 0; i < 100; i++) {
        jager_span sp = jager_span_begin(s);
        jager_span_end(sp);
    }
    jager_site_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_site_stats(s, &st), JAGER_OK);
    assert_int_equal(st.calls, 100);
    jager_shutdown();
    if (from_env) {
        unsetenv("JAGER_PLUGINS");
        unsetenv("JAGER_PLUGIN_PATH");
    }

    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, s), 100);
    assert_int_equal(diags_from(m, "gc", "not a Julia process"), 1);
    memsink_free(m);
}

static void test_steps_aside_once_config(void **unused)
{
    (void)unused;
    record_without_julia(0);
}

static void test_steps_aside_once_env_and_again_next_run(void **unused)
{
    (void)unused;
    record_without_julia(1); /* each recording says it once */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_aside_once_config),
        cmocka_unit_test(test_steps_aside_once_env_and_again_next_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
