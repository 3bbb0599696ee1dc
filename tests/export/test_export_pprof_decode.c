/* `jager export --format pprof` read back with the unpacker protoc-c generated from our
 * profile.proto (not with the code that wrote it): a recording made with the real core —
 * nested spans on two threads, and sampler.sample events with known stacks, weights and
 * CPU times whose addresses carry symbols (one with a frame inlined into it) — is exported
 * through the exporter, gunzipped with zlib and unpacked. The span profile must hold
 * exactly the span count and exclusive time of every span path that the memory sink saw
 * (the oracle: the records the core delivered); the CPU profile exactly the samples, Σ
 * cpu_ns, addresses and frames (inlined callee first) that were emitted. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "export.h"
#include "internal.h"
#include "jager_reader.h"
#include "memsink.h"
#include "profile.pb-c.h"

#define THREADS 2
#define OUTER 6
#define INNER 3

static jager_site s_outer, s_inner, s_leaf;

static void spin_ns(uint64_t ns)
{
    uint64_t end = jager_now_ns() + ns;
    while (jager_now_ns() < end) {
    }
}

/* outer > inner × 3 > (leaf on every second inner): three distinct paths. */
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < OUTER; i++) {
        jager_span o = jager_span_begin(s_outer);
        spin_ns(3000);
        for (int j = 0; j < INNER; j++) {
            jager_span in = jager_span_begin(s_inner);
            spin_ns(5000);
            if (j % 2 == 0) {
                jager_span l = jager_span_begin(s_leaf);
                spin_ns(20000);
                jager_span_end(l);
            }
            jager_span_end(in);
        }
        jager_span_end(o);
    }
    return NULL;
}

/* The sampled stacks (innermost first) and how often each is emitted. 0x1001 holds an
 * inlined frame: the location must list `kernel_inl` (callee) before `kernel`. */
static const uint64_t stack_a[] = {0x1001, 0x2001, 0x3001};
static const uint64_t stack_b[] = {0x1101, 0x2001, 0x3001};
static const uint64_t stack_c[] = {0x4001};
#define NA 7
#define NB 3
#define NC 2

typedef struct rec_path {
    char key[64]; /* leaf-first site names joined by '<' */
    uint64_t count, wall;
} rec_path;

typedef struct fixture {
    char dir[256], jgr[300], out[300], cpu[300];
    rec_path paths[8];
    size_t npaths;
    uint64_t spans;
} fixture;

static const char *site_name(jager_site s)
{
    return s == s_outer ? "outer" : s == s_inner ? "inner" : s == s_leaf ? "leaf" : "?";
}

/* The oracle: count and exclusive time per span path from the records the core delivered. */
static void oracle(fixture *fx, const memsink *ms)
{
    typedef struct sp {
        uint32_t thread, id, parent, site;
        uint64_t dur, child;
    } sp;
    sp *v = calloc(ms->nrecs + 1, sizeof *v);
    size_t n = 0;
    assert_non_null(v);
    for (size_t i = 0; i < ms->nrecs; i++) {
        memsink_rec r = memsink_at(ms, i);
        if (r.rec->type != JAGER_EV_SPAN) continue;
        const jager_rec_span *s = (const void *)r.rec;
        v[n++] = (sp){r.thread, s->span_id, s->parent_id, s->h.aux, s->end_ns - s->start_ns, 0};
    }
    fx->spans = n;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++)
            if (v[i].parent && v[k].thread == v[i].thread && v[k].id == v[i].parent) v[k].child += v[i].dur;
    for (size_t i = 0; i < n; i++) {
        char key[64] = "";
        size_t at = 0;
        for (size_t c = i; c != SIZE_MAX;) {
            at += (size_t)snprintf(key + at, sizeof key - at, "%s%s", at ? "<" : "", site_name(v[c].site));
            size_t up = SIZE_MAX;
            for (size_t k = 0; k < n && v[c].parent; k++)
                if (v[k].thread == v[c].thread && v[k].id == v[c].parent) up = k;
            c = up;
        }
        rec_path *p = NULL;
        for (size_t q = 0; q < fx->npaths; q++)
            if (!strcmp(fx->paths[q].key, key)) p = &fx->paths[q];
        if (!p) {
            assert_true(fx->npaths < 8);
            p = &fx->paths[fx->npaths++];
            snprintf(p->key, sizeof p->key, "%s", key);
        }
        p->count++;
        p->wall += v[i].dur - v[i].child;
    }
    free(v);
}

static void emit_samples(const jager_stack_id *ids)
{
    static const jager_field_desc f[] = {{"stack", JAGER_FIELD_STACK, 0}, {"os_tid", JAGER_FIELD_U64, 0},
                                         {"site", JAGER_FIELD_SITE, 0},   {"weight", JAGER_FIELD_U64, 0},
                                         {"cpu_ns", JAGER_FIELD_U64, 0},  {"flags", JAGER_FIELD_U64, 0}};
    uint16_t t;
    assert_int_equal(jg_type_register("sampler.sample", f, 6, 0, &t), JAGER_OK);
    const int counts[3] = {NA, NB, NC};
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < counts[s]; i++) {
            /* weight 1 or 2 (a timer's overrun), cpu_ns = weight × 1 ms */
            uint64_t w = 1u + (uint64_t)(i % 2), fields[6] = {ids[s], 4242, 0, w, w * 1000000u, 0};
            jg_emit_plugin(t, jager_now_ns(), fields, 6);
        }
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    snprintf(fx->dir, sizeof fx->dir, "%s/pprof-decode-%ld", JAGER_TEST_BUILD_DIR, (long)getpid());
    assert_int_equal(export_mkdirs(fx->dir), 0);
    snprintf(fx->jgr, sizeof fx->jgr, "%s/run.jgr", fx->dir);
    snprintf(fx->out, sizeof fx->out, "%s/run.pb.gz", fx->dir);
    snprintf(fx->cpu, sizeof fx->cpu, "%s/run.cpu.pb.gz", fx->dir);

    jager_sink sink;
    memsink *ms = memsink_new(&sink);
    assert_non_null(ms);
    assert_int_equal(jager_sink_add(&sink), JAGER_OK);
    jager_config cfg;
    jager_config_init(&cfg);
    cfg.quiet = 1;
    cfg.output = fx->jgr;
    assert_int_equal(jager_init(&cfg), JAGER_OK);
    s_outer = jager_site_register("outer", "src/outer.c", 10);
    s_inner = jager_site_register("inner", "src/inner.c", 20);
    s_leaf = jager_site_register("leaf", "src/leaf.c", 30);
    jager_stack_id ids[3] = {jager_stack_intern(stack_a, 3), jager_stack_intern(stack_b, 3),
                             jager_stack_intern(stack_c, 1)};
    jager_symbol_add(0x1001, 0, "kernel", "src/kernel.c", 41);
    jager_symbol_add(0x1001, 1, "kernel_inl", "src/kernel.h", 7);
    jager_symbol_add(0x1101, 0, "other", "src/other.c", 12);
    jager_symbol_add(0x2001, 0, "solve", "src/solve.c", 99);
    jager_symbol_add(0x3001, 0, "main", "src/main.c", 3);
    /* 0x4001 has no symbol: its location has no lines, only the address */
    emit_samples(ids);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    jager_shutdown();
    oracle(fx, ms);
    memsink_free(ms);

    /* the exporter, driven as `jager export --format pprof` drives it */
    const exporter *ex = export_find("pprof");
    assert_non_null(ex);
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open(fx->jgr, &r), JAGER_OK);
    if (ex->needs_tables && jager_reader_load_tables(r) != JAGER_OK) jager_reader_rewind(r);
    export_opts o = {.input = fx->jgr, .out = fx->out};
    void *st = ex->open(r, &o);
    assert_non_null(st);
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) assert_int_equal(ex->event(st, &ev), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(ex->finish(st), 0);
    ex->free(st);
    jager_reader_close(r);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    remove(fx->jgr);
    remove(fx->out);
    remove(fx->cpu);
    rmdir(fx->dir);
    free(fx);
    return 0;
}

/* gunzip \p path (zlib reads the gzip wrapper) and unpack it with the generated code. */
static Perftools__Profiles__Profile *load(const char *path)
{
    gzFile g = gzopen(path, "rb");
    assert_non_null(g);
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    int n;
    assert_non_null(buf);
    while ((n = gzread(g, buf + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)n;
        if (len == cap) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    assert_int_equal(n, 0);
    gzclose(g);
    Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(p);
    return p;
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
    assert_true(i >= 0 && (size_t)i < p->n_string_table);
    return p->string_table[i];
}

static const Perftools__Profiles__Location *loc(const Perftools__Profiles__Profile *p, uint64_t id)
{
    const Perftools__Profiles__Location *found = NULL;
    for (size_t i = 0; i < p->n_location; i++)
        if (p->location[i]->id == id) {
            assert_null(found); /* ids unique */
            found = p->location[i];
        }
    assert_non_null(found);
    return found;
}

static const Perftools__Profiles__Function *fn(const Perftools__Profiles__Profile *p, uint64_t id)
{
    const Perftools__Profiles__Function *found = NULL;
    for (size_t i = 0; i < p->n_function; i++)
        if (p->function[i]->id == id) {
            assert_null(found);
            found = p->function[i];
        }
    assert_non_null(found);
    return found;
}

/* pprof's CheckValid rules: string 0 is "", one value per sample type, ids non-zero. */
static void check_valid(const Perftools__Profiles__Profile *p)
{
    assert_true(p->n_string_table > 0);
    assert_string_equal(p->string_table[0], "");
    for (size_t i = 0; i < p->n_sample; i++) {
        assert_int_equal(p->sample[i]->n_value, p->n_sample_type);
        for (size_t k = 0; k < p->sample[i]->n_location_id; k++) loc(p, p->sample[i]->location_id[k]);
    }
    for (size_t i = 0; i < p->n_location; i++) {
        assert_true(p->location[i]->id != 0);
        for (size_t k = 0; k < p->location[i]->n_line; k++) fn(p, p->location[i]->line[k]->function_id);
    }
    for (size_t i = 0; i < p->n_function; i++) assert_true(p->function[i]->id != 0);
}

static void test_span_profile(void **state)
{
    const fixture *fx = *state;
    Perftools__Profiles__Profile *p = load(fx->out);
    check_valid(p);
    assert_int_equal(p->n_sample_type, 2);
    assert_string_equal(str(p, p->sample_type[0]->type), "spans");
    assert_string_equal(str(p, p->sample_type[0]->unit), "count");
    assert_string_equal(str(p, p->sample_type[1]->type), "wall");
    assert_string_equal(str(p, p->sample_type[1]->unit), "nanoseconds");
    assert_string_equal(str(p, p->default_sample_type), "wall");
    assert_int_equal(p->n_sample, fx->npaths);
    assert_int_equal(fx->npaths, 3);
    uint64_t spans = 0;
    for (size_t i = 0; i < p->n_sample; i++) {
        const Perftools__Profiles__Sample *s = p->sample[i];
        char key[64] = "";
        size_t at = 0;
        for (size_t k = 0; k < s->n_location_id; k++) {
            const Perftools__Profiles__Location *l = loc(p, s->location_id[k]);
            assert_int_equal(l->n_line, 1);
            const Perftools__Profiles__Function *f = fn(p, l->line[0]->function_id);
            at += (size_t)snprintf(key + at, sizeof key - at, "%s%s", k ? "<" : "", str(p, f->name));
        }
        const rec_path *want = NULL;
        for (size_t q = 0; q < fx->npaths; q++)
            if (!strcmp(fx->paths[q].key, key)) want = &fx->paths[q];
        if (!want) fail_msg("path %s is not in the recording", key);
        assert_int_equal(s->value[0], want->count);
        assert_int_equal(s->value[1], want->wall);
        spans += (uint64_t)s->value[0];
    }
    assert_int_equal(spans, fx->spans);
    assert_int_equal(fx->spans, THREADS * OUTER * (1 + INNER + (INNER + 1) / 2));
    /* sites as functions with their file and line */
    int seen = 0;
    for (size_t i = 0; i < p->n_function; i++) {
        const Perftools__Profiles__Function *f = p->function[i];
        if (strcmp(str(p, f->name), "inner")) continue;
        assert_string_equal(str(p, f->filename), "src/inner.c");
        assert_int_equal(f->start_line, 20);
        seen++;
    }
    assert_int_equal(seen, 1);
    perftools__profiles__profile__free_unpacked(p, NULL);
}

/* The frames of location \p id, "callee|caller" for inlined ones. */
static void frames(const Perftools__Profiles__Profile *p, uint64_t id, char *out, size_t size)
{
    const Perftools__Profiles__Location *l = loc(p, id);
    size_t at = 0;
    out[0] = 0;
    for (size_t k = 0; k < l->n_line; k++) {
        const Perftools__Profiles__Function *f = fn(p, l->line[k]->function_id);
        at += (size_t)snprintf(out + at, size - at, "%s%s:%s:%lld", k ? "|" : "", str(p, f->name), str(p, f->filename),
                               (long long)l->line[k]->line);
    }
}

static void test_cpu_profile(void **state)
{
    const fixture *fx = *state;
    Perftools__Profiles__Profile *p = load(fx->cpu);
    check_valid(p);
    assert_int_equal(p->n_sample_type, 2);
    assert_string_equal(str(p, p->sample_type[0]->type), "samples");
    assert_string_equal(str(p, p->sample_type[0]->unit), "count");
    assert_string_equal(str(p, p->sample_type[1]->type), "cpu");
    assert_string_equal(str(p, p->sample_type[1]->unit), "nanoseconds");
    assert_int_equal(p->n_sample, 3);
    int found = 0;
    for (size_t i = 0; i < p->n_sample; i++) {
        const Perftools__Profiles__Sample *s = p->sample[i];
        uint64_t addr[3] = {0};
        assert_true(s->n_location_id >= 1 && s->n_location_id <= 3);
        for (size_t k = 0; k < s->n_location_id; k++) addr[k] = loc(p, s->location_id[k])->address;
        /* weights alternate 1, 2: Σ cpu_ns = (n + n/2) ms */
        if (addr[0] == 0x1001) {
            assert_int_equal(s->n_location_id, 3);
            assert_int_equal(addr[1], 0x2001);
            assert_int_equal(addr[2], 0x3001);
            assert_int_equal(s->value[0], NA);
            assert_int_equal(s->value[1], (NA + NA / 2) * 1000000ll);
            char f[256];
            frames(p, s->location_id[0], f, sizeof f);
            assert_string_equal(f, "kernel_inl:src/kernel.h:7|kernel:src/kernel.c:41");
            frames(p, s->location_id[1], f, sizeof f);
            assert_string_equal(f, "solve:src/solve.c:99");
            frames(p, s->location_id[2], f, sizeof f);
            assert_string_equal(f, "main:src/main.c:3");
            found |= 1;
        } else if (addr[0] == 0x1101) {
            assert_int_equal(s->n_location_id, 3);
            assert_int_equal(s->value[0], NB);
            assert_int_equal(s->value[1], (NB + NB / 2) * 1000000ll);
            char f[256];
            frames(p, s->location_id[0], f, sizeof f);
            assert_string_equal(f, "other:src/other.c:12");
            found |= 2;
        } else if (addr[0] == 0x4001) {
            assert_int_equal(s->n_location_id, 1);
            assert_int_equal(s->value[0], NC);
            assert_int_equal(s->value[1], (NC + NC / 2) * 1000000ll);
            found |= 4;
        } else
            fail_msg("a sample at 0x%llx that was never emitted", (unsigned long long)addr[0]);
    }
    assert_int_equal(found, 7);
    /* 0x2001 is shared by two stacks: one location, used by both */
    int shared = 0;
    for (size_t i = 0; i < p->n_location; i++) shared += p->location[i]->address == 0x2001;
    assert_int_equal(shared, 1);
    assert_int_equal(p->n_location, 5);
    assert_int_equal(p->n_function, 5); /* kernel, kernel_inl, other, solve, main */
    perftools__profiles__profile__free_unpacked(p, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_span_profile),
        cmocka_unit_test(test_cpu_profile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
