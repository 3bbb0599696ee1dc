/* The tabular model of `jager export` (export_table.c) on a real recording: the core
 * writes a file and feeds a memory sink the same batches; every event the reader returns
 * becomes a row whose cells must equal what the memory sink's record says (ids resolved
 * to names, strings cleaned to UTF-8, nulls where an id has no text). No node, no peers:
 * this runs in the unit label, under the sanitizers and valgrind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include "export_table.h"
#include "internal.h"
#include "memsink.h"
#include "testutil.h"

static int col_index(const ex_table *t, const char *name)
{
    for (uint32_t c = 0; c < t->ncols; c++)
        if (!strcmp(t->cols[c].name, name)) return (int)c;
    fail_msg("no column %s in %s", name, t->name);
    return -1;
}

static const ex_cell *cell(const ex_table *t, const ex_cell *cells, const char *name)
{
    return &cells[col_index(t, name)];
}

static void assert_str_cell(const ex_cell *c, const char *want)
{
    if (!want) {
        assert_true(c->null);
        return;
    }
    assert_false(c->null);
    assert_int_equal(c->n, strlen(want));
    assert_memory_equal(c->s, want, c->n);
}

static void test_rows_match_the_core(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    jager_sink sink;
    memsink *ms = memsink_new(&sink);
    assert_non_null(ms);
    assert_int_equal(jager_sink_add(&sink), JAGER_OK);
    jager_config cfg = tu_config(0);
    cfg.output = path;
    assert_int_equal(jager_init(&cfg), JAGER_OK);

    jager_site outer = jager_site_register("outer, \"quoted\"", "t.c", 7);
    jager_site inner = jager_site_register("inner", NULL, 0);
    jager_counter g = jager_counter_register("gauge", "bytes", JAGER_COUNTER_GAUGE);
    static const jager_field_desc fields[] = {{"n", JAGER_FIELD_U64, 0},     {"label", JAGER_FIELD_STRING, 0},
                                              {"where", JAGER_FIELD_SITE, 0}, {"x", JAGER_FIELD_F64, 0},
                                              {"ok", JAGER_FIELD_BOOL, 0},    {"d", JAGER_FIELD_I64, 0}};
    uint16_t type;
    assert_int_equal(jg_type_register("unit.sample", fields, 6, 0, &type), JAGER_OK);

    for (int i = 0; i < 5; i++) {
        jager_span o = jager_span_begin(outer);
        jager_span in = jager_span_begin(inner);
        jager_span_end(in);
        jager_span_end_bytes(o, 100u + (uint64_t)i);
    }
    jager_attr a[2] = {{.key = "k", .kind = JAGER_ATTR_STR, .value.str = "v\"1\n"},
                       {.key = "n", .kind = JAGER_ATTR_I64, .value.i64 = -3}};
    jager_log(JAGER_SEV_WARN, "bad \xff byte", a, 2);
    jager_log(JAGER_SEV_INFO, "plain", NULL, 0);
    jager_counter_set(g, 2.5);
    jager_mark("m1");
    double x = -0.125;
    uint64_t f[6] = {UINT64_MAX, jg_intern("lbl"), inner, 0, 1, (uint64_t)(int64_t)-9};
    memcpy(&f[3], &x, 8);
    jg_emit_plugin(type, 0, f, 6);
    f[1] = 0; /* no string: null */
    f[2] = 0; /* no site: null name */
    jg_emit_plugin(type, 0, f, 6);
    jager_shutdown();

    jager_reader *r;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    static ex_table *tables[65536];
    ex_cell cells[64];
    tu_buf scratch = {0};
    size_t next = 0, rows = 0, plugin_rows = 0;
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        /* one thread here: file order equals the memory sink's order */
        memsink_rec m = memsink_at(ms, next++);
        assert_non_null(m.rec);
        assert_int_equal(m.rec->type, ev.type);
        assert_int_equal(m.rec->words, ev.rec->words);
        assert_memory_equal(m.rec, ev.rec, (size_t)ev.rec->words * 8u);
        if (!tables[ev.type]) tables[ev.type] = ex_table_new(r, ev.type);
        const ex_table *t = tables[ev.type];
        assert_non_null(t);
        assert_true(t->ncols <= 64);
        assert_int_equal(ex_table_row(t, r, &ev, cells, &scratch), 0);
        rows++;
        assert_int_equal(cell(t, cells, "thread")->i, m.thread);
        switch (ev.type) {
        case JAGER_EV_SPAN: {
            const jager_rec_span *s = (const void *)m.rec;
            int is_outer = s->h.aux == outer;
            assert_str_cell(cell(t, cells, "name"), is_outer ? "outer, \"quoted\"" : "inner");
            assert_str_cell(cell(t, cells, "file"), is_outer ? "t.c" : NULL);
            assert_int_equal(cell(t, cells, "line")->i, is_outer ? 7 : 0);
            assert_int_equal(cell(t, cells, "start_ns")->i, s->start_ns);
            assert_int_equal(cell(t, cells, "duration_ns")->i, s->end_ns - s->start_ns);
            assert_int_equal(cell(t, cells, "parent_id")->i, s->parent_id);
            assert_int_equal(cell(t, cells, "bytes")->i, s->bytes);
            break;
        }
        case JAGER_EV_LOG: {
            const jager_rec_log *l = (const void *)m.rec;
            if ((l->h.aux & 0xFF) == JAGER_SEV_WARN) {
                assert_str_cell(cell(t, cells, "body"), "bad \xef\xbf\xbd byte");
                assert_str_cell(cell(t, cells, "attributes"), "{\"k\":\"v\\\"1\\n\",\"n\":-3}");
                assert_str_cell(cell(t, cells, "severity_text"), "WARN");
            } else {
                assert_str_cell(cell(t, cells, "body"), "plain");
                assert_str_cell(cell(t, cells, "attributes"), NULL);
            }
            assert_str_cell(cell(t, cells, "trace_id"), NULL);
            assert_int_equal(cell(t, cells, "time_ns")->i, l->time_ns);
            break;
        }
        case JAGER_EV_COUNTER:
            assert_str_cell(cell(t, cells, "name"), "gauge");
            assert_str_cell(cell(t, cells, "unit"), "bytes");
            assert_str_cell(cell(t, cells, "kind"), "gauge");
            assert_true(cell(t, cells, "value")->f == 2.5);
            break;
        case JAGER_EV_MARK: assert_str_cell(cell(t, cells, "name"), "m1"); break;
        default:
            if (ev.type != type) break;
            assert_string_equal(t->name, "unit.sample");
            assert_int_equal(t->cols[col_index(t, "n")].kind, EX_U64);
            assert_int_equal(t->cols[col_index(t, "where_name")].kind, EX_STR);
            assert_int_equal((uint64_t)cell(t, cells, "n")->i, UINT64_MAX);
            assert_str_cell(cell(t, cells, "label"), plugin_rows == 0 ? "lbl" : NULL);
            assert_int_equal(cell(t, cells, "where")->i, plugin_rows == 0 ? inner : 0);
            assert_str_cell(cell(t, cells, "where_name"), plugin_rows == 0 ? "inner" : NULL);
            assert_true(cell(t, cells, "x")->f == -0.125);
            assert_int_equal(cell(t, cells, "ok")->i, 1);
            assert_int_equal(cell(t, cells, "d")->i, -9);
            plugin_rows++;
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(next, ms->nrecs); /* every record the core delivered, and only those */
    assert_int_equal(plugin_rows, 2);
    assert_true(rows >= 5 * 2 + 2 + 1 + 1 + 2);
    char stem[64];
    ex_table_file_stem(tables[type], stem, sizeof stem);
    assert_string_equal(stem, "unit.sample");
    for (uint32_t i = 0; i < 65536; i++) ex_table_free(tables[i]);
    tu_buf_free(&scratch);
    jager_reader_close(r);
    memsink_free(ms);
    remove(path);
}

/* Issue 16 item 9: distinct types never share a file: "a/b" and "a_b", a plugin type
 * named like a core table, upper case that a case-insensitive file system folds. */
static void test_file_stems_never_collide(void **st)
{
    (void)st;
    ex_table t[] = {
        {.type = 300, .name = "unit.a_b"},
        {.type = 301, .name = "unit.a/b"},
        {.type = 302, .name = "span", .shared_name = 1},
        {.type = JAGER_EV_SPAN, .builtin = 1, .name = "span"},
        {.type = 303, .name = "unit.A_b"},
        {.type = 304, .name = "unit.a b"},
        {.type = 305, .name = "unit.a_b", .shared_name = 1}, /* a hostile file's second "unit.a_b" */
    };
    const char *want[] = {"unit.a_b", "unit.a_b~301", "span~302", "span", "unit.__b~303", "unit.a_b~304", "unit.a_b~305"};
    char stems[7][64];
    for (int i = 0; i < 7; i++) {
        ex_table_file_stem(&t[i], stems[i], sizeof stems[i]);
        assert_string_equal(stems[i], want[i]);
        for (int k = 0; k < i; k++) assert_true(strcasecmp(stems[i], stems[k]) != 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rows_match_the_core), cmocka_unit_test(test_file_stems_never_collide)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
