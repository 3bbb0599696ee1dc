/* no_mpi.c — a Jäger program without MPI: JAGER_PLUGINS=mpi must say so once and step
 * aside while the program runs on. */
#include <jager.h>
#include <stdio.h>

int main(void)
{
    if (jager_init(NULL) != JAGER_OK) return 1;
    jager_site s = jager_site_register("work", __FILE__, __LINE__);
    jager_span sp = jager_span_begin(s);
    jager_span_end(sp);
    jager_shutdown();
    puts("ran");
    return 0;
}
