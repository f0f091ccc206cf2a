/* tools/study_table.h on made-up figures: the classic study line's
 * percentages and expected times, the median, and the interning cost. */
#include "check.h"
#include "study_table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHECK_CLOSE(a, b)                                                                          \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= 1e-9 * (fabs(b_) > 1 ? fabs(b_) : 1)))                              \
            RT_CHECK_FAIL_("CHECK_CLOSE(%s, %s): %.12g != %.12g", #a, #b, a_, b_);                 \
    } while (0)

/* The example of the issue: -t1 444 s, -t2 230 s is 97% of light speed,
 * expected 222 s. */
static void
case_rows(const char *arg)
{
    (void)arg;
    study_row r = study_row_make(2, 230, 444);
    CHECK_CLOSE(r.expected, 222);
    CHECK_CLOSE(r.lightspeed, 222.0 / 230);
    CHECK_CLOSE(r.speedup, 444.0 / 230);
    CHECK_EQ_INT((int)lround(100 * r.lightspeed), 97);
    r = study_row_make(1, 444, 444);
    CHECK_CLOSE(r.lightspeed, 1);
    r = study_row_make(32, 40, 444); /* 13.875 expected: 35% */
    CHECK_CLOSE(r.expected, 13.875);
    CHECK_CLOSE(r.lightspeed, 13.875 / 40);
    r = study_row_make(4, 100, 0); /* no 1-thread time: nothing to compare */
    CHECK_CLOSE(r.expected, 0);
    CHECK_CLOSE(r.lightspeed, 0);
}

/* The printed line, as a study shows it; '*' past the physical cores. */
static void
case_print(const char *arg)
{
    (void)arg;
    char  buf[256] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    REQUIRE(f);
    study_row a = study_row_make(1, 444, 444), b = study_row_make(2, 230, 444);
    study_row c = study_row_make(4, 120, 444);
    study_row_print(f, &a, 2);
    study_row_print(f, &b, 2);
    study_row_print(f, &c, 2);
    fclose(f);
    CHECK(strstr(buf, "-t1") && strstr(buf, "444.000 s"));
    CHECK(strstr(buf, "-t2 ") && strstr(buf, "97%  (expected 222.000 s)"));
    CHECK(strstr(buf, "-t4*") && strstr(buf, "92%  (expected 111.000 s)"));
    CHECK(strstr(buf, "-t1*") == NULL && strstr(buf, "-t2*") == NULL);
}

static void
case_median(const char *arg)
{
    (void)arg;
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {7};
    CHECK_CLOSE(study_median(odd, 3), 2);
    CHECK_CLOSE(study_median(even, 4), 2.5);
    CHECK_CLOSE(study_median(one, 1), 7);
    CHECK_CLOSE(odd[0], 3); /* the input is left alone */
}

static void
case_intern(const char *arg)
{
    (void)arg;
    study_intern c = study_intern_make(1.25, 1.0, 10);
    CHECK_CLOSE(c.secs, 0.25);
    CHECK_CLOSE(c.share, 0.025);
    c = study_intern_make(1.25, 1.0, 0); /* no full render measured */
    CHECK_CLOSE(c.share, 0);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"rows", case_rows},     {"print", case_print}, {"median", case_median},
        {"intern", case_intern}, {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
