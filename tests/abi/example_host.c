/*
 * example_host.c — built against the *installed* SDK by example-plugin-test.sh: runs spans
 * on two threads with JAGER_PLUGINS=example (from the environment), then reads the
 * recording back with the reader library and checks the plugin's example.site_calls
 * events: one per site with at least JAGER_EXAMPLE_MIN_CALLS calls, exact counts.
 *
 * usage: example_host OUTPUT.jgr   (exit 0: all checks passed)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jager.h>
#include <jager_reader.h>

static jager_site hot, warm, cold;

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        jager_span s = jager_span_begin(hot);
        if (i % 100 == 0) jager_span_end(jager_span_begin(warm));
        jager_span_end(s);
    }
    return NULL;
}

static int check(const char *path)
{
    jager_reader *r;
    if (jager_reader_open(path, &r) != JAGER_OK) {
        fprintf(stderr, "example_host: %s\n", jager_last_error());
        return 1;
    }
    uint16_t t = jager_reader_type_by_name(r, "example.site_calls");
    const jager_type_desc *td = t ? jager_reader_type(r, t) : NULL;
    if (!td || td->nfields != 2 || strcmp(td->fields[0].name, "site") || td->fields[0].kind != JAGER_FIELD_SITE ||
        strcmp(td->fields[1].name, "calls") || td->fields[1].kind != JAGER_FIELD_U64) {
        fprintf(stderr, "example_host: no example.site_calls(site SITE, calls U64) type in %s\n", path);
        jager_reader_close(r);
        return 1;
    }
    uint64_t got_hot = 0, got_warm = 0, got_cold = 0, n = 0, other = 0;
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        if (ev.type != t) continue;
        const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
        const char *name = NULL;
        jager_reader_site(r, (jager_site)p->fields[0], &name, NULL, NULL);
        printf("example.site_calls site=%s calls=%llu\n", name ? name : "?", (unsigned long long)p->fields[1]);
        if (name && !strcmp(name, "example.hot")) got_hot = p->fields[1];
        else if (name && !strcmp(name, "example.warm")) got_warm = p->fields[1];
        else if (name && !strcmp(name, "example.cold")) got_cold = p->fields[1];
        else other++;
        n++;
    }
    if (rc < 0) fprintf(stderr, "example_host: %s\n", jager_reader_error(r));
    jager_reader_close(r);
    /* Two threads: hot 2×1000, warm 2×10; cold 1 call, below JAGER_EXAMPLE_MIN_CALLS=2. */
    int ok = rc == 0 && got_hot == 2000 && got_warm == 20 && got_cold == 0 && other == 0 && n == 2;
    if (!ok)
        fprintf(stderr, "example_host: expected hot=2000 warm=20 and no cold/other; got hot=%llu warm=%llu cold=%llu other=%llu\n",
                (unsigned long long)got_hot, (unsigned long long)got_warm, (unsigned long long)got_cold,
                (unsigned long long)other);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: example_host OUTPUT.jgr\n");
        return 2;
    }
    setenv("JAGER_OUTPUT", argv[1], 1);
    if (jager_init(NULL) != JAGER_OK) {
        fprintf(stderr, "example_host: jager_init: %s\n", jager_last_error());
        return 1;
    }
    hot = jager_site_register("example.hot", __FILE__, __LINE__);
    warm = jager_site_register("example.warm", __FILE__, __LINE__);
    cold = jager_site_register("example.cold", __FILE__, __LINE__);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, work, NULL);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    jager_span_end(jager_span_begin(cold));
    jager_shutdown();
    return check(argv[1]);
}
