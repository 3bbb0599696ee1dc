/*
 * report_plugin_fixture.c — a recording with a plugin no tool knows by name (the ABI
 * tests' "good" plugin, reached through its probe extension): a thread that only emits
 * plugin events, five samples of a field flagged GAUGE, three of a U64 field flagged
 * COUNTER, three other events, and two counters the plugin registered through the host
 * (host->counter_register, unit "items"): one fed with counter_add, one with counter_set.
 * Prints what it recorded as one JSON line.
 *
 *   report_plugin_fixture OUT.jgr TEST_PLUGIN_DIR
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <jager_plugin.h>

#include "tp_probe.h"

static const tp_probe *probe;
static uint16_t level, io;
static jager_counter done, depth;

static void *worker(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= 5; i++) {
        uint64_t f[1] = {1024u * i};
        probe->host->emit(level, 0, f, 1);
    }
    static const uint64_t reads[3] = {10, 25, 40};
    for (int i = 0; i < 3; i++) probe->host->emit(io, 0, &reads[i], 1);
    static const double add[3] = {2, 3, 5}, set[3] = {7, 3, 9};
    for (int i = 0; i < 3; i++) {
        probe->host->counter_add(done, add[i]); /* running total 2, 5, 10 */
        probe->host->counter_set(depth, set[i]);
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
    static const jager_field_desc fio[] = {{"reads", JAGER_FIELD_U64, JAGER_FIELD_FLAG_COUNTER}};
    const jager_host_api *h = probe->host;
    if (h->register_type(probe->self, "good.level", fd, 1, &level) != JAGER_OK ||
        h->register_type(probe->self, "good.io", fio, 1, &io) != JAGER_OK)
        return 1;
    done = h->counter_register(probe->self, "items_done", "items", JAGER_COUNTER_MONOTONIC);
    depth = h->counter_register(probe->self, "queue_depth", "items", JAGER_COUNTER_GAUGE);
    if (!done || !depth) {
        fprintf(stderr, "report_plugin_fixture: counter_register: %s\n", jager_last_error());
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
    pthread_join(t, NULL);
    jager_shutdown();
    printf("{\"samples\":5,\"reads\":[10,25,40],\"items_done\":[2,5,10],\"queue_depth\":[7,3,9],\"ticks\":3}\n");
    return 0;
}
