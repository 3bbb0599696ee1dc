/* csv_names OUT: a recording whose site names a spreadsheet would run as formulas (issue 16
 * item 8) beside an ordinary one, one span each. */
#include <stdlib.h>

#include "jager.h"

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    setenv("JAGER_OUTPUT", argv[1], 1);
    if (jager_init(NULL) != JAGER_OK) return 3;
    static const char *const names[] = {"=cmd|' /C calc'!A0", "+HYPERLINK(\"http://x\",\"y\")", "-2+3", "@SUM(A1:A2)",
                                        "\tTAB", "\rCR", "plain_name", "a=b"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        jager_span s = jager_span_begin(jager_site_register(names[i], "csv_names.c", (uint32_t)i + 1));
        jager_span_end(s);
    }
    jager_shutdown();
    return 0;
}
