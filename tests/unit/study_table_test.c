/* tools/study/study_table.h on made-up figures: the classic study line's
 * percentages and expected times, the median, and the interning cost. */
#include "check.h"
#include "study_table.h"
#include "tool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char tool_prog[] = "study_table_test"; /* tool.h: its messages' prefix */

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

/* The printed rows, as a study shows them: named columns, the unit that
 * fits, '*' past the marked (hardware) thread count, the noise note. */
static void
case_print(const char *arg)
{
    (void)arg;
    char  buf[1024] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    REQUIRE(f);
    study_row  a = study_row_make(1, 444, 444), b = study_row_make(2, 230, 444);
    study_row  c = study_row_make(4, 120, 444);
    study_unit s = study_unit_for(444);
    study_row_header(f, true);
    study_row_print(f, &a, 2, s, true, 440, 450, study_row_noise(444, 440, 450, 0));
    study_row_print(f, &b, 2, s, true, 200, 260, study_row_noise(230, 200, 260, 0));
    study_row_print(f, &c, 2, s, false, 0, 0, 0);
    fclose(f);
    CHECK(strstr(buf, "threads") && strstr(buf, "speed-up") && strstr(buf, "% of light speed") &&
          strstr(buf, "expected") && strstr(buf, "[min .. max]"));
    CHECK(strstr(buf, "-t1 ") && strstr(buf, "444.000 s"));
    CHECK(strstr(buf, "-t2 ") && strstr(buf, "1.93x") && strstr(buf, "97%") &&
          strstr(buf, "222.000 s") && strstr(buf, "[200.000 .. 260.000]"));
    CHECK(strstr(buf, "-t4*") && strstr(buf, "92%") && strstr(buf, "111.000 s"));
    CHECK(strstr(buf, "-t1*") == NULL && strstr(buf, "-t2*") == NULL);
    /* -t2's runs spread 60 s around 230: 26% of the median; -t1's 2%. */
    CHECK(strstr(buf, "! spread 26% of the median: more --repeat") != NULL);
    CHECK(strstr(buf, "spread 2%") == NULL);
}

/* Times print in the unit their table's largest needs: never 0.000 s. */
static void
case_units(const char *arg)
{
    (void)arg;
    char b[32];
    study_secs_format(b, sizeof b, 2.5, study_unit_for(2.5));
    CHECK_EQ_STR(b, "2.500 s");
    study_secs_format(b, sizeof b, 0.0123, study_unit_for(0.0456));
    CHECK_EQ_STR(b, "12.30 ms");
    study_secs_format(b, sizeof b, 0.000042, study_unit_for(0.0009));
    CHECK_EQ_STR(b, "42.0 µs");
    study_secs_format(b, sizeof b, 0.5, study_unit_for(1.0)); /* the table's unit, not its own */
    CHECK_EQ_STR(b, "0.500 s");
}

/* Noise flags: a spread over 10% of the median, a render under 10 ms, and
 * a negative interning cost, each with what to do. */
static void
case_noise(const char *arg)
{
    (void)arg;
    CHECK_EQ_INT(study_row_noise(1.0, 0.96, 1.05, 0.95), 0);
    CHECK_EQ_INT(study_row_noise(1.0, 0.96, 1.05, 0.56), STUDY_NOISE_WAITING);
    CHECK_EQ_INT(study_row_noise(1.0, 0.9, 1.2, 0), STUDY_NOISE_SPREAD);
    CHECK_EQ_INT(study_row_noise(0.005, 0.005, 0.005, 0), STUDY_NOISE_SHORT);
    CHECK_EQ_INT(study_row_noise(0.005, 0.004, 0.006, 0), STUDY_NOISE_SHORT | STUDY_NOISE_SPREAD);
    char note[200];
    study_noise_note(note, sizeof note, 0, 1, 1, 1, 0);
    CHECK_EQ_STR(note, "");
    study_noise_note(note, sizeof note, STUDY_NOISE_SPREAD | STUDY_NOISE_SHORT, 0.005, 0.004, 0.006,
                     0);
    CHECK_EQ_STR(note, "! spread 40% of the median: more --repeat; under 10 ms: a larger -r");
    study_noise_note(note, sizeof note, STUDY_NOISE_NEGATIVE, 0, 0, 0, 0);
    CHECK(strstr(note, "! below zero") == note && strstr(note, "more --repeat"));
    study_noise_note(note, sizeof note, STUDY_NOISE_WAITING, 1, 1, 1, 0.564);
    CHECK_EQ_STR(note, "! on a CPU 56% of the time: the threads waited (for a lock, a file, or a "
                       "core)");
}

/* The verdict's fastest lock: the smallest positive time. */
static void
case_fastest(const char *arg)
{
    (void)arg;
    double t[] = {3.0, 1.5, 0, 2.0}, none[] = {0, 0};
    CHECK_EQ_INT(study_fastest(t, 4), 1);
    CHECK_EQ_INT(study_fastest(none, 2), -1);
}

/* tool_median(), the one median of the tools, as the tables use it. */
static void
case_median(const char *arg)
{
    (void)arg;
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {7};
    CHECK_CLOSE(tool_median(odd, 3), 2);
    CHECK_CLOSE(tool_median(even, 4), 2.5);
    CHECK_CLOSE(tool_median(one, 1), 7);
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
    /* From rounds: the median of each round's difference and ratio, not
     * the difference of medians. Round 2 ran in a slow spell (everything
     * twice as slow): its difference is large, its ratio the others'. */
    double b[] = {1.25, 2.5, 1.3}, e[] = {1.0, 2.0, 1.0}, f[] = {10, 20, 10};
    c = study_intern_rounds(b, e, f, 3);
    CHECK_CLOSE(c.secs, 0.3);    /* median of 0.25, 0.5, 0.3 */
    CHECK_CLOSE(c.share, 0.025); /* median of 0.025, 0.025, 0.03 */
    CHECK(c.has_share);
    /* An interrupted last round without its full render: the share from
     * the rounds that have one (0.025 and 0.015), not 0 for all. */
    double f2[] = {10, 0, 20};
    c = study_intern_rounds(b, e, f2, 3);
    CHECK_CLOSE(c.secs, 0.3);
    CHECK_CLOSE(c.share, 0.02);
    CHECK(c.has_share);
    c = study_intern_rounds(b, e, NULL, 3);
    CHECK(!c.has_share); /* no full renders: no share */
    CHECK_CLOSE(c.share, 0);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"rows", case_rows},       {"print", case_print}, {"median", case_median},
        {"intern", case_intern},   {"units", case_units}, {"noise", case_noise},
        {"fastest", case_fastest}, {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
