/* Timing-study arithmetic (see study_table.h). */
#include "study_table.h"
#include "tool.h"

#include <stdlib.h>
#include <string.h>

study_row
study_row_make(unsigned threads, double secs, double t1)
{
    study_row r = {.threads = threads, .secs = secs};
    if (t1 > 0 && secs > 0 && threads > 0) {
        r.speedup = t1 / secs;
        r.expected = t1 / threads;
        r.lightspeed = r.expected / secs;
    }
    return r;
}

study_intern
study_intern_make(double bypass, double early_out, double full)
{
    study_intern c = {.secs = bypass - early_out};
    c.share = full > 0 ? c.secs / full : 0;
    return c;
}

study_unit
study_unit_for(double largest_secs)
{
    if (largest_secs >= 1)
        return (study_unit){"s", 1, 3};
    if (largest_secs >= 1e-3)
        return (study_unit){"ms", 1e3, 2};
    return (study_unit){"µs", 1e6, 1};
}

void
study_secs_format(char *buf, size_t size, double secs, study_unit u)
{
    snprintf(buf, size, "%.*f %s", u.decimals, secs * u.per_sec, u.name);
}

unsigned
study_row_noise(double median, double lo, double hi, double cpu_share)
{
    unsigned n = 0;
    if (cpu_share > 0 && cpu_share < STUDY_MIN_CPU)
        n |= STUDY_NOISE_WAITING;
    if (median > 0 && hi - lo > STUDY_NOISY_SPREAD * median)
        n |= STUDY_NOISE_SPREAD;
    if (median > 0 && median < STUDY_SHORT_SECS)
        n |= STUDY_NOISE_SHORT;
    return n;
}

void
study_noise_note(char *buf, size_t size, unsigned noise, double median, double lo, double hi,
                 double cpu_share)
{
    size_t at = 0;
    buf[0] = '\0';
    if (noise & STUDY_NOISE_SPREAD)
        at += (size_t)snprintf(buf + at, size - at, "%sspread %.0f%% of the median: more --repeat",
                               at ? "; " : "! ", 100 * (hi - lo) / median);
    if ((noise & STUDY_NOISE_SHORT) && at < size)
        at += (size_t)snprintf(buf + at, size - at, "%sunder %.0f ms: a larger -r",
                               at ? "; " : "! ", 1e3 * STUDY_SHORT_SECS);
    if ((noise & STUDY_NOISE_WAITING) && at < size)
        at += (size_t)snprintf(buf + at, size - at,
                               "%son a CPU %.0f%% of the time: the threads waited (for a lock, "
                               "a file, or a core)",
                               at ? "; " : "! ", 100 * cpu_share);
    if ((noise & STUDY_NOISE_NEGATIVE) && at < size)
        snprintf(buf + at, size - at,
                 "%sbelow zero: the noise is larger than the cost; "
                 "more --repeat, a larger -r",
                 at ? "; " : "! ");
}

void
study_row_header(FILE *f, bool range)
{
    fprintf(f, "  %-7s %11s %9s %17s %11s %7s%s\n", "threads", "time", "speed-up",
            "% of light speed", "expected", "on CPU", range ? "   [min .. max]" : "");
}

/* printf pads by bytes: a time in µs (two bytes for one character) needs a
 * field one wider to line up. */
static int
width(int w, study_unit u)
{
    return w + (u.name[0] != 's' && u.name[0] != 'm');
}

void
study_row_print(FILE *f, const study_row *r, unsigned marked, study_unit u, bool range, double lo,
                double hi, unsigned noise)
{
    char n[16], t[32], e[32] = "", note[200];
    snprintf(n, sizeof n, "-t%u%s", r->threads, marked && r->threads > marked ? "*" : "");
    study_secs_format(t, sizeof t, r->secs, u);
    fprintf(f, "  %-7s %*s", n, width(11, u), t);
    if (r->expected > 0) {
        study_secs_format(e, sizeof e, r->expected, u);
        fprintf(f, " %8.2fx %16.0f%% %*s", r->speedup, 100 * r->lightspeed, width(11, u), e);
    } else {
        fprintf(f, " %9s %17s %11s", "", "", "");
    }
    if (r->cpu_share > 0)
        fprintf(f, " %6.0f%%", 100 * r->cpu_share);
    else
        fprintf(f, " %7s", "");
    if (range)
        fprintf(f, "   [%.*f .. %.*f]", u.decimals, lo * u.per_sec, u.decimals, hi * u.per_sec);
    study_noise_note(note, sizeof note, noise, r->secs, lo, hi, r->cpu_share);
    fprintf(f, "%s%s\n", note[0] ? "  " : "", note);
}

study_intern
study_intern_rounds(const double *bypass, const double *early_out, const double *full, int n)
{
    double diff[64], share[64];
    int    shares = 0;
    if (n < 1)
        return (study_intern){0};
    if (n > 64)
        n = 64;
    for (int k = 0; k < n; k++) {
        diff[k] = bypass[k] - early_out[k];
        if (full && full[k] > 0)
            share[shares++] = diff[k] / full[k];
    }
    return (study_intern){.secs = tool_median(diff, n),
                          .share = shares ? tool_median(share, shares) : 0,
                          .has_share = shares > 0};
}

int
study_fastest(const double *secs, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (secs[i] > 0 && (best < 0 || secs[i] < secs[best]))
            best = i;
    return best;
}
