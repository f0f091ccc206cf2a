/* renderer/include/rt_render.h: the list of missing tiles a partial render
 * records, written and read back; and every text the writer would not
 * write refused, since --resume trusts what it reads: an empty list once
 * read as "none missing" wrote never-rendered tiles as a finished image. */
#include "check.h"
#include "rt_render.h"

#include <stdlib.h>
#include <string.h>

enum { NTILES = 40 };

/* Each map of missing tiles of some shapes: written, then read back. */
static void
case_round_trip(const char *arg)
{
    (void)arg;
    static const char *const maps[] = {"0", "39", "0-39", "3,5,7", "0-2,4-6,39", "10-11,13"};
    for (size_t k = 0; k < sizeof maps / sizeof *maps; k++) {
        uint8_t done[NTILES];
        REQUIRE(rt_tiles_missing_parse(maps[k], done, NTILES));
        char *again = rt_tiles_missing_format(done, NTILES);
        REQUIRE(again);
        CHECK_EQ_STR(again, maps[k]);
        free(again);
    }
    uint8_t done[NTILES];
    REQUIRE(rt_tiles_missing_parse("2-4,9", done, NTILES));
    for (int i = 0; i < NTILES; i++)
        CHECK_EQ_INT(done[i], !(i >= 2 && i <= 4) && i != 9);
}

/* What the writer never writes for a partial render. */
static void
case_refused(const char *arg)
{
    (void)arg;
    static const char *const bad[] = {
        "",      /* a partial render misses a tile at least */
        "99",    /* past the tiles */
        "3,3",   /* repeated */
        "5,3",   /* out of order */
        "3,4",   /* touching: written as 3-4 */
        "3-4,5", /* likewise */
        "4-3",   /* backwards */
        "4-4",   /* a range of one: written as 4 */
        "3,",    /* a comma after */
        ",3",    "3,,4", "-3", "3-",    "3-+4", " 3",
        "3 ",    "+3",   "3a", "1-2-3", "0x3",  "18446744073709551617", /* wraps an unsigned long */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        uint8_t done[NTILES];
        bool    accepted = rt_tiles_missing_parse(bad[k], done, NTILES);
        if (accepted)
            fprintf(stderr, "accepted: '%s'\n", bad[k]);
        CHECK(!accepted);
    }
}

static const rt_test_case cases[] = {
    {"round_trip", case_round_trip},
    {"refused", case_refused},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
