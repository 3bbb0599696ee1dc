/* A test plugin that writes "rolestub.site_role" events on request (extension
 * "jager.rolestub/1"), so a test can give any site any role, as the openmp plugin does. */
#include <string.h>

#include "jager_plugin.h"

typedef struct rolestub_ext {
    void (*emit_role)(jager_site site, const char *role, const char *kind);
} rolestub_ext;

static const jager_host_api *host;
static uint16_t ev_role;

static void emit_role(jager_site site, const char *role, const char *kind)
{
    uint64_t f[3] = {site, host->intern(role), host->intern(kind)};
    host->emit(ev_role, 0, f, 3);
}

static const rolestub_ext ext = {emit_role};

static jager_status rs_init(const jager_host_api *h, jager_plugin_handle *self, void **state)
{
    static const jager_field_desc f[] = {{"site", JAGER_FIELD_SITE, 0}, {"role", JAGER_FIELD_STRING, 0},
                                         {"kind", JAGER_FIELD_STRING, 0}};
    host = h;
    *state = NULL;
    return h->register_type(self, "rolestub.site_role", f, 3, &ev_role);
}

static const void *rs_ext(void *state, const char *id) { return strcmp(id, "jager.rolestub/1") == 0 ? &ext : NULL; }

static const jager_plugin_descriptor desc = {
    .struct_size = sizeof desc, .abi_major = JAGER_PLUGIN_ABI_MAJOR, .abi_minor = JAGER_PLUGIN_ABI_MINOR,
    .name = "rolestub", .version = "1", .description = "test: site roles on request",
    .init = rs_init, .get_extension = rs_ext,
};
JAGER_PLUGIN_DEFINE_ENTRY(&desc)
