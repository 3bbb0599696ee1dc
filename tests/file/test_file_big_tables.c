/* Big tables read back exactly (issue 16 item 12: each once cost quadratic time): 100,000
 * metadata keys set in the host while recording, flushed every 1,000 (each META block
 * holds the keys set since the last), some of them set again later (the later value
 * stands, the first position stays); 100,000 inline frames for one address, added in a shuffled order
 * with repeats of some depths (the first frame of a depth stands), symbolized to the
 * shallowest frames in depth order. The speed is bench/quadratic's measure, not a test's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager_reader.h"
#include "testutil.h"

#define NKEYS 100000u
#define NFRAMES 100000u

static void test_many_metadata_keys(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    jager_config c = tu_config(0);
    c.output = path;
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_site site = jager_site_register("work", "big.c", 1);
    char k[64], v[64];
    for (unsigned i = 0; i < NKEYS; i++) { /* while recording: each flush's META block holds the keys set since the last */
        snprintf(k, sizeof k, "big.key.%u", i);
        snprintf(v, sizeof v, "value %u", i);
        assert_int_equal(jager_metadata_set(k, v), JAGER_OK);
        jager_span_end(jager_span_begin(site));
        if (i % 1000 == 999) jager_flush();
    }
    for (unsigned i = 0; i < NKEYS; i += 1000) { /* set again: replaces the value */
        snprintf(k, sizeof k, "big.key.%u", i);
        snprintf(v, sizeof v, "second %u", i);
        assert_int_equal(jager_metadata_set(k, v), JAGER_OK);
        jager_span_end(jager_span_begin(site));
        if (i % 10000 == 0) jager_flush();
    }
    jager_shutdown();

    jager_reader *r;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    size_t n = jager_reader_meta_count(r), first = n, big = 0;
    const char *key, *val;
    unsigned expect = 0;
    for (size_t i = 0; i < n; i++) { /* insertion order: big.key.0, 1, 2, … */
        assert_int_equal(jager_reader_meta_at(r, i, &key, &val), JAGER_OK);
        if (strncmp(key, "big.key.", 8) != 0) continue;
        if (first == n) first = i;
        snprintf(k, sizeof k, "big.key.%u", expect);
        assert_string_equal(key, k);
        snprintf(v, sizeof v, expect % 1000 ? "value %u" : "second %u", expect);
        assert_string_equal(val, v);
        expect++;
        big++;
    }
    assert_int_equal(big, NKEYS);
    for (unsigned i = 7; i < NKEYS; i += 7919) {
        snprintf(k, sizeof k, "big.key.%u", i);
        snprintf(v, sizeof v, i % 1000 ? "value %u" : "second %u", i);
        assert_string_equal(jager_reader_meta(r, k), v);
    }
    assert_string_equal(jager_reader_meta(r, "big.key.0"), "second 0");
    assert_null(jager_reader_meta(r, "big.key.100000"));
    assert_null(jager_reader_meta(r, "big.key."));
    assert_non_null(jager_reader_meta(r, "host.name"));
    jager_reader_close(r);
    remove(path);
}

static void test_many_frames_one_address(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    jager_config c = tu_config(0);
    c.output = path;
    assert_int_equal(jager_init(&c), JAGER_OK);
    const uint64_t ip = 0x7000123;
    uint64_t ips[1] = {ip};
    assert_true(jager_stack_intern(ips, 1) != 0);
    char fn[64];
    /* depths in a shuffled order (a multiplicative permutation of 0..N-1) */
    for (unsigned i = 0; i < NFRAMES; i++) {
        unsigned d = (unsigned)(((uint64_t)i * 7919u) % NFRAMES);
        snprintf(fn, sizeof fn, "f%u", d);
        assert_int_equal(jager_symbol_add(ip, d, fn, "deep.h", d + 1), JAGER_OK);
    }
    for (unsigned d = 0; d < 64; d++) { /* repeats: the first frame of a depth stands */
        snprintf(fn, sizeof fn, "repeat%u", d);
        assert_int_equal(jager_symbol_add(ip, d, fn, "other.h", 1), JAGER_OK);
    }
    jager_shutdown();

    jager_reader *r;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    jager_frame out[16];
    assert_int_equal(jager_reader_symbolize(r, ip, out, 16), 16);
    for (unsigned d = 0; d < 16; d++) {
        snprintf(fn, sizeof fn, "f%u", d);
        assert_int_equal(out[d].inline_depth, d);
        assert_string_equal(out[d].func, fn);
        assert_string_equal(out[d].file, "deep.h");
        assert_int_equal(out[d].line, d + 1);
    }
    jager_frame *all = calloc(NFRAMES + 64, sizeof *all);
    assert_non_null(all);
    assert_int_equal(jager_reader_symbolize(r, ip, all, NFRAMES + 64), NFRAMES); /* repeats left out */
    for (unsigned d = 0; d < NFRAMES; d += 997) assert_int_equal(all[d].inline_depth, d);
    free(all);
    jager_reader_close(r);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_metadata_keys),
        cmocka_unit_test(test_many_frames_one_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
