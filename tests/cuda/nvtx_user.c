/* nvtx_user.c — a second shared library that includes the NVTX3 headers: it has NVTX
 * globals of its own, so the injection is initialised once more for it. */
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) void nvtx_user_work(int n)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("lib_range");
        nvtxRangePop();
    }
    nvtxMarkA("lib_mark");
}
