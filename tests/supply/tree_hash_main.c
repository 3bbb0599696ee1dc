/* tree_hash_main.c — prints the scanner's git tree hash of a folder (supply_hash.c), for the
 * tests to compare with `git write-tree` and with Pkg's own. */
#include <stdio.h>

#include "supply.h"

int main(int argc, char **argv)
{
    char hex[41];
    if (argc != 2 || js_tree_hash(argv[1], hex) != 0) {
        fprintf(stderr, "usage: supply_tree_hash DIR (readable)\n");
        return 2;
    }
    puts(hex);
    return 0;
}
