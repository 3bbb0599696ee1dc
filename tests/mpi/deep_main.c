/* deep_main.c — MPI_Init/Finalize in the program, the MPI work in a library opened with
 * dlopen(…, RTLD_NOW | RTLD_DEEPBIND) (argv[1]). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND) : NULL;
    int (*work)(void) = h ? (int (*)(void))dlsym(h, "deep_work") : NULL;
    if (!work) {
        fprintf(stderr, "cannot load %s: %s\n", argc > 1 ? argv[1] : "(none)", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    work();
    MPI_Finalize();
    return 0;
}
