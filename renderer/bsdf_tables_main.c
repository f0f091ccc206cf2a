/* bsdf-tables: integrates the BSDF's multiple-scattering tables and writes
 * them as C to FILE (through a temporary file and a rename, so a failed
 * run leaves no half-written tables for the build to trust).
 *
 *   bsdf-tables FILE */
#define _POSIX_C_SOURCE 200809L

#include "rt_bsdf.h" /* built with RT_BSDF_TABLES_GENERATOR */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: bsdf-tables FILE\n", stderr);
        return 2;
    }
    size_t n = strlen(argv[1]) + 8;
    char  *tmp = malloc(n);
    if (!tmp)
        return 1;
    snprintf(tmp, n, "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    bool  ok = f && rt__bsdf_tables_write(f);
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok || rename(tmp, argv[1]) != 0) {
        fprintf(stderr, "bsdf-tables: %s: cannot write\n", argv[1]);
        remove(tmp);
        free(tmp);
        return 1;
    }
    free(tmp);
    return 0;
}
