/* W3C traceparent: valid and invalid vectors written from the spec (Trace Context level 1,
 * §3.2), round trips, the current context, inject/extract over a carrier. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "testutil.h"

static const char *VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

static void test_parse_valid(void **state)
{
    (void)state;
    jager_trace_context c;
    assert_int_equal(jager_traceparent_parse(VALID, strlen(VALID), &c), JAGER_OK);
    assert_int_equal(c.trace_id[0], 0x4b);
    assert_int_equal(c.trace_id[15], 0x36);
    assert_int_equal(c.span_id[0], 0x00);
    assert_int_equal(c.span_id[7], 0xb7);
    assert_int_equal(c.flags, 1);
    char out[56];
    assert_int_equal(jager_traceparent_format(&c, out, sizeof out), JAGER_OK);
    assert_string_equal(out, VALID);
    /* a future version may append fields after a '-' */
    const char *future = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-the-future-holds";
    assert_int_equal(jager_traceparent_parse(future, strlen(future), &c), JAGER_OK);
    assert_int_equal(c.version, 0xcc);
    assert_int_equal(c.flags, 9);
    const char *future_exact = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    assert_int_equal(jager_traceparent_parse(future_exact, strlen(future_exact), &c), JAGER_OK);
}

static void test_parse_invalid(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "00",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",        /* short */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",      /* version 00 with extra */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-010",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       /* version ff */
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",       /* zero trace id */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",       /* zero parent id */
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",       /* uppercase */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       /* wrong separators */
        "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",      /* shifted */
        "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.extra", /* future: no '-' */
        " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
    };
    jager_trace_context c, untouched;
    memset(&untouched, 0x5a, sizeof untouched);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = untouched;
        jager_status st = jager_traceparent_parse(bad[i], strlen(bad[i]), &c);
        if (st != JAGER_E_FORMAT) fail_msg("accepted invalid traceparent '%s'", bad[i]);
        assert_memory_equal(&c, &untouched, sizeof c);
        assert_true(strlen(jager_last_error()) > 0);
    }
    /* length bounds are respected: a valid prefix with len cut short is rejected */
    assert_int_equal(jager_traceparent_parse(VALID, 54, &c), JAGER_E_FORMAT);
    assert_int_equal(jager_traceparent_parse(NULL, 55, &c), JAGER_E_INVALID);
}

static void test_new_and_child(void **state)
{
    (void)state;
    jager_trace_context a, b, ch;
    assert_int_equal(jager_trace_context_new(&a), JAGER_OK);
    assert_int_equal(jager_trace_context_new(&b), JAGER_OK);
    assert_memory_not_equal(a.trace_id, b.trace_id, 16);
    assert_int_equal(a.flags, 1);
    assert_int_equal(jager_trace_context_child(&a, &ch), JAGER_OK);
    assert_memory_equal(a.trace_id, ch.trace_id, 16);
    assert_memory_not_equal(a.span_id, ch.span_id, 8);
    jager_trace_context zero;
    memset(&zero, 0, sizeof zero);
    char buf[56];
    assert_int_equal(jager_traceparent_format(&zero, buf, sizeof buf), JAGER_E_INVALID);
    assert_int_equal(jager_traceparent_format(&a, buf, 55), JAGER_E_INVALID);
}

typedef struct kv {
    char key[32], value[128];
} kv;

static void kv_set(void *carrier, const char *key, const char *value)
{
    kv *c = carrier;
    snprintf(c->key, sizeof c->key, "%s", key);
    snprintf(c->value, sizeof c->value, "%s", value);
}

static const char *kv_get(void *carrier, const char *key)
{
    kv *c = carrier;
    return strcmp(c->key, key) == 0 ? c->value : NULL;
}

static void test_current_inject_extract(void **state)
{
    (void)state;
    jager_config cfg = tu_config(0);
    assert_int_equal(jager_init(&cfg), JAGER_OK);
    jager_trace_context cur;
    assert_int_equal(jager_context_current(&cur), JAGER_E_NOTFOUND);
    kv carrier = {"traceparent", ""};
    strcpy(carrier.value, VALID);
    assert_int_equal(jager_context_extract(&carrier, kv_get), JAGER_OK);
    assert_int_equal(jager_context_current(&cur), JAGER_OK);
    kv out;
    memset(&out, 0, sizeof out);
    assert_int_equal(jager_context_inject(&out, kv_set), JAGER_OK);
    assert_string_equal(out.key, "traceparent");
    assert_string_equal(out.value, VALID);
    /* a malformed header leaves the current context alone */
    strcpy(carrier.value, "00-zzzz");
    assert_int_equal(jager_context_extract(&carrier, kv_get), JAGER_E_FORMAT);
    assert_int_equal(jager_context_current(&cur), JAGER_OK);
    char buf[56];
    jager_traceparent_format(&cur, buf, sizeof buf);
    assert_string_equal(buf, VALID);
    kv empty = {"other", "x"};
    assert_int_equal(jager_context_extract(&empty, kv_get), JAGER_E_NOTFOUND);
    jager_context_set(NULL);
    assert_int_equal(jager_context_current(&cur), JAGER_E_NOTFOUND);
    jager_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid),
        cmocka_unit_test(test_parse_invalid),
        cmocka_unit_test(test_new_and_child),
        cmocka_unit_test(test_current_inject_extract),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
