/* bad_plugin.c — plugins that must not take `jager plugins` down (built twice):
 *   BAD_ABORT: the library's constructor aborts when it is opened
 *   BAD_LIAR:  the descriptor claims a million options over a table of one */
#include <stdlib.h>

#include "jager_plugin.h"

#ifdef BAD_ABORT
__attribute__((constructor)) static void die(void) { abort(); }
#define NAME "abort"
#define NOPTIONS 1u
#else
#define NAME "liar"
#define NOPTIONS 1000000u /* the lie */
#endif

static jager_status init(const jager_host_api *host, jager_plugin_handle *self, void **state)
{
    (void)host;
    (void)self;
    *state = NULL;
    return JAGER_OK;
}

static const jager_option_desc opts[] = {{.key = "only", .type = "int", .default_value = "1", .help = "the one real option"}};

static const jager_plugin_descriptor desc = {
    .struct_size = sizeof(jager_plugin_descriptor),
    .abi_major = JAGER_PLUGIN_ABI_MAJOR,
    .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = NAME,
    .version = "0",
    .description = "a test plugin that misbehaves",
    .init = init,
    .options = opts,
    .noptions = NOPTIONS,
    .option_size = sizeof(jager_option_desc),
};

JAGER_PLUGIN_EXPORT const jager_plugin_descriptor *jager_plugin_entry(uint32_t major, uint32_t minor)
{
    (void)major;
    (void)minor;
    return &desc;
}
