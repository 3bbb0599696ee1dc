/*
 * report_plugin_fixture.c — a recording with a plugin no tool knows by name (the ABI
 * tests' "good" plugin, reached through its probe extension): a thread that only emits
 * plugin events, five samples of a field flagged GAUGE, three other events. Prints what
 * it recorded as one JSON line.
 *
 *   report_plugin_fixture OUT.jgr TEST_PLUGIN_DIR
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <jager_plugin.h>

#include "tp_probe.h"

static const tp_probe *probe;
static uint16_t level;

static void *worker(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= 5; i++) {
        uint64_t f[1] = {1024u * i};
        probe->host->emit(level, 0, f, 1);
    }
    probe->emit_ticks(3);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: report_plugin_fixture OUT.jgr TEST_PLUGIN_DIR\n");
        return 1;
    }
    jager_config c;
    jager_config_init(&c);
    c.output = argv[1];
    c.plugins = "good";
    c.plugin_path = argv[2];
    c.quiet = 1;
    if (jager_init(&c) != JAGER_OK || !(probe = jager_extension_get(TP_PROBE_ID))) {
        fprintf(stderr, "report_plugin_fixture: %s\n", jager_last_error());
        return 1;
    }
    static const jager_field_desc fd[] = {{"rss", JAGER_FIELD_BYTES, JAGER_FIELD_FLAG_GAUGE}};
    if (probe->host->register_type(probe->self, "good.level", fd, 1, &level) != JAGER_OK) return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
    pthread_join(t, NULL);
    jager_shutdown();
    printf("{\"samples\":5,\"ticks\":3}\n");
    return 0;
}
