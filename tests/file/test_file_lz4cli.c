/* liblz4's own command-line tool accepts our files: `lz4 -t` verifies every frame and
 * `lz4 -dc` decompresses the concatenated block contents (skipping the preamble), byte
 * for byte what the blocks hold. Skips (77) when the lz4 tool is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file_fixture.h"
#include "testutil.h"

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_lz4_tool_reads_recordings(void **state)
{
    (void)state;
    char path[512], out[512], cmd[2048];
    snprintf(path, sizeof path, "%s", tu_tmp_path(".jgr"));
    snprintf(out, sizeof out, "%s", tu_tmp_path(".raw"));
    fx_expect ex;
    assert_int_equal(fx_record(path, 2, 200, &ex), 0);
    snprintf(cmd, sizeof cmd, "lz4 -q -t '%s'", path);
    assert_int_equal(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "lz4 -q -dc '%s' >'%s'", path, out);
    assert_int_equal(sh(cmd), 0);

    size_t size, raw_size;
    uint8_t *data = tu_read_file(path, &size), *raw = tu_read_file(out, &raw_size);
    assert_non_null(data);
    assert_non_null(raw);
    fx_frame fr[1024];
    int n = fx_frames(data, size, fr, 1024);
    assert_true(n > 3);
    uint64_t total = 0, events = 0;
    for (int i = 0; i < n; i++) total += fr[i].content, events += fr[i].events;
    assert_int_equal(raw_size, total);
    /* the first block is META: kind 1, reserved 0; the last is END: kind 11 */
    static const uint8_t meta[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(raw, meta, 8);
    assert_int_equal(raw[raw_size - 32], 11);
    uint64_t end_events;
    memcpy(&end_events, raw + raw_size - 16, 8);
    assert_int_equal(end_events, events);

    /* a damaged copy is refused by lz4 as well */
    data[size / 2] ^= 0x55;
    assert_int_equal(tu_write_file(out, data, size), 0);
    snprintf(cmd, sizeof cmd, "lz4 -q -t '%s' 2>/dev/null", out);
    assert_int_not_equal(sh(cmd), 0);
    free(data);
    free(raw);
    unlink(path);
    unlink(out);
}

int main(void)
{
    if (sh("command -v lz4 >/dev/null 2>&1") != 0) {
        printf("SKIP: the lz4 command-line tool is not installed (Debian package lz4)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lz4_tool_reads_recordings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
