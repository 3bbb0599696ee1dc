/* Damaged recordings: a file cut at every byte offset, every byte flipped, frames
 * missing or appended. The reader must return exactly the events of the whole, intact
 * frames before the damage and then a precise error — never crash, never invent events.
 * Run under ASan/UBSan in the sanitizer build (label unit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_fixture.h"
#include "testutil.h"

#define MAX_FRAMES 4096

typedef struct damage_fixture {
    uint8_t *data;
    size_t size;
    fx_frame frames[MAX_FRAMES];
    int nframes;
    uint64_t total;
} damage_fixture;

static int setup(void **state)
{
    damage_fixture *f = calloc(1, sizeof *f);
    const char *path = tu_tmp_path(".jgr");
    fx_expect ex;
    if (!f || fx_record(path, 2, 12, &ex) != 0) return -1;
    f->data = tu_read_file(path, &f->size);
    unlink(path);
    if (!f->data) return -1;
    f->nframes = fx_frames(f->data, f->size, f->frames, MAX_FRAMES);
    if (f->nframes < 5) return -1;
    for (int i = 0; i < f->nframes; i++) f->total += f->frames[i].events;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    damage_fixture *f = *state;
    free(f->data);
    free(f);
    return 0;
}

/* Events in the frames that lie wholly before byte \p end. */
static uint64_t events_before(const damage_fixture *f, size_t end)
{
    uint64_t n = 0;
    for (int i = 0; i < f->nframes && f->frames[i].offset + f->frames[i].len <= end; i++) n += f->frames[i].events;
    return n;
}

static size_t whole_frames_end(const damage_fixture *f, size_t end)
{
    size_t at = 0;
    for (int i = 0; i < f->nframes && f->frames[i].offset + f->frames[i].len <= end; i++)
        at = f->frames[i].offset + f->frames[i].len;
    return at;
}

/* The independent walker agrees with the reader on the intact file. */
static void test_intact(void **state)
{
    damage_fixture *f = *state;
    assert_int_equal(f->frames[0].kind, 0);
    assert_int_equal(f->frames[1].kind, 1); /* META first */
    assert_int_equal(f->frames[f->nframes - 1].kind, 11); /* END last */
    jager_reader *r;
    assert_int_equal(jager_reader_open_memory(f->data, f->size, &r), JAGER_OK);
    uint64_t n;
    assert_int_equal(fx_drain(r, NULL, &n), 0);
    assert_int_equal(n, f->total);
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    assert_int_equal(info.frames, (uint64_t)f->nframes);
    jager_reader_close(r);
}

static void check_prefix(const damage_fixture *f, jager_reader *r, size_t len)
{
    uint64_t n;
    int rc = fx_drain(r, NULL, &n);
    if (len == f->size) {
        assert_int_equal(rc, 0);
    } else {
        if (rc != JAGER_E_TRUNCATED) fprintf(stderr, "cut at %zu: rc %d: %s\n", len, rc, jager_reader_error(r));
        assert_int_equal(rc, JAGER_E_TRUNCATED);
        assert_true(strlen(jager_reader_error(r)) > 10);
        assert_int_equal(jager_reader_next(r, &(jager_event){0}), JAGER_E_TRUNCATED); /* sticky */
    }
    assert_int_equal(n, events_before(f, len));
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    assert_int_equal(info.truncated, len != f->size);
    assert_int_equal(info.bytes_consumed, whole_frames_end(f, len));
    assert_int_equal(info.events, n);
}

/* Cut at every byte: the preamble must be whole to open; after it, every whole frame's
 * events come back, then JAGER_E_TRUNCATED. */
static void test_truncated_everywhere(void **state)
{
    damage_fixture *f = *state;
    for (size_t len = 0; len <= f->size; len++) {
        uint8_t *copy = malloc(len ? len : 1); /* exact-size copy: ASan sees any overread */
        memcpy(copy, f->data, len);
        jager_reader *r = NULL;
        jager_status st = jager_reader_open_memory(copy, len, &r);
        if (len < f->frames[1].offset) {
            assert_int_equal(st, JAGER_E_FORMAT);
            assert_null(r);
            assert_non_null(strstr(jager_last_error(), ".jgr"));
        } else {
            assert_int_equal(st, JAGER_OK);
            check_prefix(f, r, len);
            /* load_tables meets the same cut and keeps what it read */
            int lt = jager_reader_load_tables(r);
            assert_int_equal(lt, len == f->size ? JAGER_OK : JAGER_E_TRUNCATED);
            check_prefix(f, r, len);
            jager_reader_close(r);
        }
        free(copy);
    }
}

/* The same through files (the windowed file input), at every frame boundary ±1 and a
 * stride of offsets in between. */
static void test_truncated_files(void **state)
{
    damage_fixture *f = *state;
    const char *path = tu_tmp_path(".jgr");
    for (size_t len = f->frames[1].offset; len <= f->size; len++) {
        int boundary = 0;
        for (int i = 0; i < f->nframes; i++) {
            size_t e = f->frames[i].offset + f->frames[i].len;
            if (len + 1 >= e && len <= e + 1) boundary = 1;
        }
        if (!boundary && len % 61 != 0) continue;
        assert_int_equal(tu_write_file(path, f->data, len), 0);
        jager_reader *r;
        assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
        check_prefix(f, r, len);
        jager_reader_close(r);
    }
    unlink(path);
}

static int frame_of(const damage_fixture *f, size_t off)
{
    for (int i = 0; i < f->nframes; i++)
        if (off >= f->frames[i].offset && off < f->frames[i].offset + f->frames[i].len) return i;
    return -1;
}

/* Flip bits in every byte in turn. Only the preamble's minor version and its ignorable
 * flag bits (bytes 18-21) may change without an error; anything else is refused, after
 * exactly the events of the frames before the damaged one. */
static void test_corrupt_every_byte(void **state)
{
    damage_fixture *f = *state;
    uint8_t *copy = malloc(f->size);
    static const uint8_t masks[] = {0x01, 0x80, 0x5a};
    unsigned checksum = 0, format = 0, truncated = 0, benign = 0;
    for (size_t off = 0; off < f->size; off++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(copy, f->data, f->size);
            copy[off] ^= masks[m];
            jager_reader *r = NULL;
            jager_status st = jager_reader_open_memory(copy, f->size, &r);
            if (st != JAGER_OK) {
                assert_int_equal(st, JAGER_E_FORMAT);
                assert_true(off < f->frames[1].offset);
                continue;
            }
            uint64_t n;
            int rc = fx_drain(r, NULL, &n);
            if (off >= 18 && off < 22) {
                assert_int_equal(rc, 0);
                assert_int_equal(n, f->total);
            } else if (rc == 0) {
                /* A flip that leaves the decompressed content unchanged (e.g. a match
                 * offset inside a run of zeros) is not damage: prove it is one. */
                fx_frame *mine = malloc(MAX_FRAMES * sizeof *mine);
                assert_int_equal(fx_frames(copy, f->size, mine, MAX_FRAMES), f->nframes);
                for (int i = 0; i < f->nframes; i++) assert_true(mine[i].hash == f->frames[i].hash);
                assert_int_equal(n, f->total);
                free(mine);
                benign++;
            } else {
                if (rc >= 0) fprintf(stderr, "flip 0x%02x at %zu went unnoticed\n", masks[m], off);
                assert_true(rc < 0);
                int k = frame_of(f, off);
                assert_true(k >= 0);
                assert_int_equal(n, events_before(f, f->frames[k].offset));
                /* the message names a frame and a byte offset */
                assert_non_null(strstr(jager_reader_error(r), "frame "));
                assert_non_null(strstr(jager_reader_error(r), " at byte "));
                checksum += rc == JAGER_E_CHECKSUM;
                format += rc == JAGER_E_FORMAT;
                truncated += rc == JAGER_E_TRUNCATED;
            }
            jager_reader_close(r);
        }
    }
    /* compressed bytes are guarded by the content checksum */
    assert_true(checksum > f->size);
    assert_true(format > 0);
    print_message("%zu bytes x %zu flips: %u checksum, %u format, %u truncated errors, %u content-preserving\n",
                  f->size, sizeof masks, checksum, format, truncated, benign);
    assert_true(benign * 20 < f->size * sizeof masks); /* under 5% of the flips */
    free(copy);
}

/* A whole events frame removed from the middle: the END block's counts expose it. */
static void test_missing_frame(void **state)
{
    damage_fixture *f = *state;
    int k = -1;
    for (int i = 1; i < f->nframes; i++)
        if (f->frames[i].kind == 7) { k = i; break; }
    assert_true(k > 0);
    size_t cut = f->frames[k].len;
    uint8_t *copy = malloc(f->size - cut);
    memcpy(copy, f->data, f->frames[k].offset);
    memcpy(copy + f->frames[k].offset, f->data + f->frames[k].offset + cut, f->size - f->frames[k].offset - cut);
    jager_reader *r;
    assert_int_equal(jager_reader_open_memory(copy, f->size - cut, &r), JAGER_OK);
    uint64_t n;
    assert_int_equal(fx_drain(r, NULL, &n), JAGER_E_FORMAT);
    assert_int_equal(n, f->total - f->frames[k].events);
    assert_non_null(strstr(jager_reader_error(r), "missing"));
    jager_reader_close(r);
    free(copy);
}

/* Bytes after the END block are refused (after every event was returned). */
static void test_trailing_data(void **state)
{
    damage_fixture *f = *state;
    uint8_t *copy = malloc(f->size + 3);
    memcpy(copy, f->data, f->size);
    memcpy(copy + f->size, "xyz", 3);
    jager_reader *r;
    assert_int_equal(jager_reader_open_memory(copy, f->size + 3, &r), JAGER_OK);
    uint64_t n;
    assert_int_equal(fx_drain(r, NULL, &n), JAGER_E_FORMAT);
    assert_int_equal(n, f->total);
    assert_non_null(strstr(jager_reader_error(r), "after the END block"));
    jager_reader_close(r);
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intact),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_truncated_files),
        cmocka_unit_test(test_corrupt_every_byte),
        cmocka_unit_test(test_missing_frame),
        cmocka_unit_test(test_trailing_data),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
