/* The PNG fast path (texture/io_png_fast.c) against a file that changes
 * while it is read: another process rewriting a texture, say. The path
 * reads the header first, to size and charge what it will hold, then the
 * whole file; here the two reads see different files, as they could in
 * life, through a tex__pio_all() of the test's own (the path is built
 * into this test alone, without the rest of the library). Each case must
 * refuse the file, leaving it to libpng, and touch nothing outside what
 * it allocated (the asan preset runs these). */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "tex_io_internal.h"

#include <zlib.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- the file, as each read finds it ---- */

typedef struct version {
    unsigned char bytes[4096];
    size_t        n;
} version;

static version first, later; /* the header read's file, then every later read's */
static int     reads;

/* A read that comes up short leaves in buf what was there before: here
 * the first version's bytes, as a buffer malloc() handed back from an
 * earlier read of the same file could hold. Only the result says the
 * bytes are not the file's. */
bool
tex__pio_all(int fd, bool write, void *buf, size_t n, uint64_t at)
{
    (void)fd;
    REQUIRE(!write);
    const version *v = reads++ ? &later : &first;
    if (at > v->n || n > v->n - at) { /* short: the file ended */
        if (at <= first.n)
            memcpy(buf, first.bytes + at, n < first.n - at ? n : first.n - at);
        return false;
    }
    memcpy(buf, v->bytes + at, n);
    return true;
}

/* The library's limits, as far as these files go. */
tex_result
tex_check_size(uint64_t width, uint64_t height, char err[TEX_ERR_LEN])
{
    (void)err;
    return width && height && width <= TEX_MAX_DIM && height <= TEX_MAX_DIM ? TEX_OK
                                                                            : TEX_ERR_TOO_LARGE;
}

static void
put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static void
chunk(version *v, const char *type, const void *data, uint32_t n)
{
    unsigned char *o = v->bytes + v->n;
    REQUIRE(v->n + 12 + n <= sizeof v->bytes);
    put32(o, n);
    memcpy(o + 4, type, 4);
    if (n)
        memcpy(o + 8, data, n);
    put32(o + 8 + n, (uint32_t)crc32(0, o + 4, n + 4));
    v->n += 12 + n;
}

/* A whole, valid-looking PNG: w x h of colour type `color`, whose one IDAT
 * holds `rows` (raw filtered rows, as many as the caller gives) deflated. */
static void
png_make(version *v, uint32_t w, uint32_t h, int color, const unsigned char *rows, size_t n)
{
    static const unsigned char sig[8] = {137, 'P', 'N', 'G', 13, 10, 26, 10};
    unsigned char              ihdr[13] = {0}, z[2048];
    uLongf                     zn = sizeof z;
    REQUIRE(compress(z, &zn, rows, n) == Z_OK);
    v->n = 0;
    memcpy(v->bytes, sig, 8);
    v->n = 8;
    put32(ihdr, w);
    put32(ihdr + 4, h);
    ihdr[8] = 8;
    ihdr[9] = (unsigned char)color;
    chunk(v, "IHDR", ihdr, 13);
    chunk(v, "IDAT", z, (uint32_t)zn);
    chunk(v, "IEND", NULL, 0);
}

static int rows_seen;

static tex_result
count_rows(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    (void)ctx, (void)shape, (void)y, (void)row, (void)err;
    rows_seen++;
    return TEX_OK;
}

/* Runs the path over `first` then `later`, told the file has `size` bytes;
 * returns whether it took the file. */
static bool
fast_read(size_t size)
{
    bool taken = true;
    char err[TEX_ERR_LEN] = "";
    reads = rows_seen = 0;
    CHECK_EQ_INT(tex__png_fast_rows(3, size, count_rows, NULL, NULL, &taken, err), TEX_OK);
    if (!taken)
        CHECK_EQ_INT(rows_seen, 0);
    return taken;
}

/* ---- cases ---- */

/* The same file both times: taken, every row handed over (the harness
 * works). */
static void
case_unchanged(const char *arg)
{
    (void)arg;
    unsigned char rows[2 * 4] = {0}; /* 3x2 grey: a filter byte and 3 samples a row */
    png_make(&first, 3, 2, 0, rows, sizeof rows);
    later = first;
    CHECK(fast_read(first.n));
    CHECK_EQ_INT(rows_seen, 2);
}

/* A 1x1 grey header sized the rows (2 bytes); the whole read finds a 64x64
 * RGBA file whose stream inflates to those 2 bytes. Read with the second
 * header's sizes, the rows would be 64 times 257 bytes in a 3-byte buffer. */
static void
case_rewritten_larger(const char *arg)
{
    (void)arg;
    unsigned char rows[2] = {0};
    png_make(&first, 1, 1, 0, rows, sizeof rows);
    png_make(&later, 64, 64, 6, rows, sizeof rows);
    CHECK(!fast_read(later.n));
}

/* The other way: a 4x4 grey header sized the rows (20 bytes), and the
 * whole read finds a 2x2 grey file whose stream inflates to 20 bytes. Read
 * with the second header's sizes, it would be taken, a picture of neither
 * file. */
static void
case_rewritten_smaller(const char *arg)
{
    (void)arg;
    unsigned char rows[4 * 5] = {0};
    png_make(&first, 4, 4, 0, rows, sizeof rows);
    png_make(&later, 2, 2, 0, rows, sizeof rows);
    CHECK(!fast_read(later.n));
}

/* The header read finds a whole file; by the whole read it has shrunk
 * below the signature, and the size said so. */
static void
case_shrunk_to_nothing(const char *arg)
{
    (void)arg;
    unsigned char rows[2] = {0};
    png_make(&first, 1, 1, 0, rows, sizeof rows);
    memcpy(later.bytes, first.bytes, 4);
    later.n = 4;
    CHECK(!fast_read(later.n));
}

/* The file shrank after its size was taken: the whole read comes up short,
 * though the buffer holds the whole file as it was. */
static void
case_shrunk_after_stat(const char *arg)
{
    (void)arg;
    unsigned char rows[2 * 4] = {0};
    png_make(&first, 3, 2, 0, rows, sizeof rows);
    later = first;
    later.n -= 12; /* IEND gone */
    CHECK(!fast_read(first.n));
}

static tex_result
reserve_refused(void *ctx, uint64_t bytes, const char *what, char err[TEX_ERR_LEN])
{
    (void)ctx, (void)bytes;
    snprintf(err, TEX_ERR_LEN, "%s: over the budget", what);
    return TEX_ERR_TOO_LARGE;
}

/* A budget that cannot hold the read sends the file to libpng, whose read
 * is then the read: the budget's words must not be left in its message. */
static void
case_budget_refuses(const char *arg)
{
    (void)arg;
    unsigned char rows[2 * 4] = {0};
    png_make(&first, 3, 2, 0, rows, sizeof rows);
    later = first;
    tex__decode_budget budget = {reserve_refused, NULL};
    bool               taken = true;
    char               err[TEX_ERR_LEN] = "";
    reads = rows_seen = 0;
    CHECK_EQ_INT(tex__png_fast_rows(3, first.n, count_rows, NULL, &budget, &taken, err), TEX_OK);
    CHECK(!taken);
    CHECK_EQ_INT(rows_seen, 0);
    CHECK_EQ_INT(err[0], '\0');
}

static const rt_test_case cases[] = {
    {"unchanged", case_unchanged},
    {"rewritten_larger", case_rewritten_larger},
    {"rewritten_smaller", case_rewritten_smaller},
    {"shrunk_to_nothing", case_shrunk_to_nothing},
    {"shrunk_after_stat", case_shrunk_after_stat},
    {"budget_refuses", case_budget_refuses},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
