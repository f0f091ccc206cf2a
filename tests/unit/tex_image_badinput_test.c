/* Bad input for the PNG and JPEG readers: missing, unreadable, empty,
 * truncated, corrupt and oversized files. Each case checks the tex_result,
 * words of the one-line message, that no image is handed back and that
 * nothing is printed (libpng and libjpeg warnings included). Oversized
 * files run under a 1 GiB address-space limit where no sanitizer is on, so
 * a reader that allocated before checking the size would fail with
 * TEX_ERR_NOMEM instead of TEX_ERR_TOO_LARGE. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "tex_exr.h"
#include "tex_file_testing.h"
#include "tex_image.h"
#include "tex_io_internal.h" /* tex__jpeg_fail_reads_from() */
#include "tex_jpeg_testing.h"

#include <zlib.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef tex_result (*reader)(const char *path, tex_image *out, char err[TEX_ERR_LEN]);

/* A PNG read by libpng alone (RT_PNG_FAST=0): tex_png_read() first tries
 * the fast path (texture/io_png_fast.c), which must fail as libpng does,
 * with the same message. */
static tex_result
png_read_libpng(const char *path, tex_image *out, char err[TEX_ERR_LEN])
{
    REQUIRE(setenv("RT_PNG_FAST", "0", 1) == 0);
    tex_result r = tex_png_read(path, out, err);
    unsetenv("RT_PNG_FAST");
    return r;
}

/* Reads `path` with `read`, expecting failure `want` with `word` in the
 * message, no pixels and nothing on stderr; a PNG by libpng alone too. */
static void expect_one(reader read, const char *path, tex_result want, const char *word);

static void
expect(reader read, const char *path, tex_result want, const char *word)
{
    expect_one(read, path, want, word);
    if (read == tex_png_read)
        expect_one(png_read_libpng, path, want, word);
}

static void
expect_one(reader read, const char *path, tex_result want, const char *word)
{
    tex_image img = {.pixels = (void *)&img}; /* must be cleared */
    char      err[TEX_ERR_LEN];
    memset(err, 'x', sizeof err);
    tex_test_stderr_capture();
    tex_result  r = read(path, &img, err);
    size_t      printed = tex_test_stderr_release();
    static char last[TEX_ERR_LEN]; /* each message once, for the log */
    if (memchr(err, '\0', sizeof err) && strcmp(err, last) != 0) {
        printf("%s: %s\n", tex_result_str(r), err);
        snprintf(last, sizeof last, "%s", err);
    }
    if (r != want)
        RT_CHECK_FAIL_("%s: %s (%s), want %s", path, tex_result_str(r), err, tex_result_str(want));
    REQUIRE(memchr(err, '\0', sizeof err) != NULL);
    CHECK_CONTAINS(err, word);
    CHECK_ONE_LINE(err);
    CHECK(img.pixels == NULL);
    CHECK_EQ_INT(printed, 0);
    if (r == TEX_OK)
        tex_image_free(&img);
}

/* ---- PNG chunk surgery ---- */

static uint32_t
be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
be32_put(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* The offset of the first chunk of `type` (its length field). */
static size_t
chunk_find(const unsigned char *d, size_t n, const char *type)
{
    for (size_t p = 8; p + 12 <= n; p += 12 + be32(d + p))
        if (memcmp(d + p + 4, type, 4) == 0)
            return p;
    REQUIRE(!"chunk not found");
    return 0;
}

/* Recomputes the CRC of the chunk at `p`, so only the damage meant is there. */
static void
chunk_crc_fix(unsigned char *d, size_t p)
{
    uint32_t len = be32(d + p);
    be32_put(d + p + 8 + len, (uint32_t)crc32(0, d + p + 4, len + 4));
}

/* A valid PNG written by tex_png_write(): w x h, nch channels of noise. */
static unsigned char *
png_make(uint32_t w, uint32_t h, uint32_t nch, size_t *n)
{
    tex_image img;
    char      err[TEX_ERR_LEN];
    REQUIRE(tex_image_alloc(&img, w, h, nch, TEX_TYPE_U8, err) == TEX_OK);
    uint64_t seed = 12345;
    for (size_t i = 0; i < tex_image_bytes(&img); i++)
        ((uint8_t *)img.pixels)[i] = (uint8_t)(tex_test_rand(&seed) >> 40);
    const char *path = tex_test_path("base.png");
    REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
    tex_image_free(&img);
    unsigned char *d = tex_test_file_read(path, n);
    REQUIRE(remove(path) == 0);
    return d;
}

/* A PNG whose IHDR says w x h, bit depth, colour type; CRC correct. */
static void
png_ihdr_write(const char *path, uint32_t w, uint32_t h, int depth, int color)
{
    size_t         n;
    unsigned char *d = png_make(4, 4, 1, &n);
    size_t         p = chunk_find(d, n, "IHDR");
    be32_put(d + p + 8, w);
    be32_put(d + p + 12, h);
    d[p + 16] = (unsigned char)depth;
    d[p + 17] = (unsigned char)color;
    chunk_crc_fix(d, p);
    tex_test_file_write(path, d, n);
    free(d);
}

/* Address space capped at 1 GiB, where no sanitizer has reserved more. */
static void
memory_limit(void)
{
#ifndef RT_SANITIZED
    struct rlimit rl = {.rlim_cur = (rlim_t)1 << 30, .rlim_max = (rlim_t)1 << 30};
    REQUIRE(setrlimit(RLIMIT_AS, &rl) == 0);
#endif
}

/* ---- PNG cases ---- */

static void
case_png_empty(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("empty.png");
    tex_test_file_write(path, "", 0);
    expect(tex_png_read, path, TEX_ERR_FORMAT, "not a PNG file");
}

/* Cut at every length: each is an error that says "truncated". */
static void
case_png_truncated(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = png_make(37, 23, 3, &n);
    const char    *path = tex_test_path("cut.png");
    for (size_t cut = 1; cut < n; cut++) {
        tex_test_file_write(path, d, cut);
        expect(tex_png_read, path, TEX_ERR_CORRUPT, "truncated");
    }
    free(d);
}

/* A zlib stream that ends cleanly, but before the last row. */
static void
case_png_short_idat(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = png_make(8, 8, 1, &n);
    size_t         p = chunk_find(d, n, "IDAT");
    uint32_t       len = be32(d + p);
    unsigned char  rows[4 * 9] = {0}; /* 4 of 8 rows: filter byte + 8 samples */
    unsigned char  z[256];
    uLongf         zn = sizeof z;
    REQUIRE(compress(z, &zn, rows, sizeof rows) == Z_OK);
    REQUIRE(zn <= len);
    /* New IDAT in place of the old one, then IEND. */
    size_t         m = p + 12 + zn + 12;
    unsigned char *e = malloc(m);
    REQUIRE(e != NULL);
    memcpy(e, d, p);
    be32_put(e + p, (uint32_t)zn);
    memcpy(e + p + 4, "IDAT", 4);
    memcpy(e + p + 8, z, zn);
    chunk_crc_fix(e, p);
    memcpy(e + p + 12 + zn, d + n - 12, 12); /* IEND */
    const char *path = tex_test_path("short.png");
    tex_test_file_write(path, e, m);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "truncated");
    free(e);
    free(d);
}

static void
case_png_bad_crc(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = png_make(16, 16, 3, &n);
    const char    *path = tex_test_path("crc.png");
    size_t         p = chunk_find(d, n, "IDAT");
    uint32_t       len = be32(d + p);

    d[p + 8 + len / 2] ^= 0x10; /* inside the data */
    tex_test_file_write(path, d, n);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "bad CRC in IDAT chunk");
    d[p + 8 + len / 2] ^= 0x10;

    d[p + 8 + len + 2] ^= 0x01; /* the CRC itself */
    tex_test_file_write(path, d, n);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "bad CRC in IDAT chunk");
    d[p + 8 + len + 2] ^= 0x01;

    size_t q = chunk_find(d, n, "IHDR");
    d[q + 8] ^= 0x01; /* width */
    tex_test_file_write(path, d, n);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "bad CRC in IHDR chunk");
    free(d);
}

/* A bad CRC in an ancillary chunk (sRGB) drops the chunk with a warning;
 * the image is fine. The warning must not be printed. */
static void
case_png_ancillary_crc(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = png_make(16, 16, 3, &n);
    size_t         p = chunk_find(d, n, "sRGB");
    d[p + 8 + be32(d + p)] ^= 0x01;
    const char *path = tex_test_path("ancillary.png");
    tex_test_file_write(path, d, n);
    tex_image img;
    char      err[TEX_ERR_LEN] = "";
    tex_test_stderr_capture();
    tex_result r = tex_png_read(path, &img, err);
    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    CHECK_EQ_INT(r, TEX_OK);
    CHECK_EQ_INT(img.width, 16);
    tex_image_free(&img);
    free(d);
}

/* IDAT data that is not a zlib stream, with a correct CRC. */
static void
case_png_bad_zlib(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = png_make(16, 16, 3, &n);
    size_t         p = chunk_find(d, n, "IDAT");
    uint64_t       seed = 99;
    for (uint32_t i = 0; i < be32(d + p); i++)
        d[p + 8 + i] = (unsigned char)(tex_test_rand(&seed) >> 56);
    chunk_crc_fix(d, p);
    const char *path = tex_test_path("zlib.png");
    tex_test_file_write(path, d, n);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "");
    free(d);
}

static void
case_png_zero_width(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("zero.png");
    png_ihdr_write(path, 0, 4, 8, 0);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "width is zero");
    png_ihdr_write(path, 4, 0, 8, 0);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "height is zero");
}

static void
case_png_bit_depth(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("depth.png");
    png_ihdr_write(path, 4, 4, 3, 0);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "bit depth 3");
    png_ihdr_write(path, 4, 4, 16, 3); /* palette at 16 bits */
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "bad IHDR");
    png_ihdr_write(path, 4, 4, 8, 5); /* no colour type 5 */
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "colour type 5");
}

static void
case_png_too_large(const char *arg)
{
    (void)arg;
    memory_limit();
    const char *path = tex_test_path("huge.png");
    png_ihdr_write(path, 100000, 100000, 8, 2);
    expect(tex_png_read, path, TEX_ERR_TOO_LARGE, "100000x100000 pixels is over the limit");
    png_ihdr_write(path, 65537, 1, 8, 0); /* one side over */
    expect(tex_png_read, path, TEX_ERR_TOO_LARGE, "65537x1");
    png_ihdr_write(path, 65536, 65536, 16, 6); /* each side at the limit, the area over */
    expect(tex_png_read, path, TEX_ERR_TOO_LARGE, "65536x65536");
    png_ihdr_write(path, 16385, 16384, 8, 0);
    expect(tex_png_read, path, TEX_ERR_TOO_LARGE, "16385x16384");
}

/* A chunk claiming 2 GB in a file of a few hundred bytes (found by
 * fuzz-png: libpng allocated the claimed length of a text chunk before
 * reading it): "truncated", before any allocation, even under a 1 GiB
 * address-space cap. */
static void
case_png_huge_chunk(const char *arg)
{
    (void)arg;
    memory_limit();
    size_t         n;
    unsigned char *d = png_make(4, 4, 3, &n);
    size_t         p = chunk_find(d, n, "IDAT");
    unsigned char *e = malloc(n + 28);
    REQUIRE(e != NULL);
    memcpy(e, d, p);
    be32_put(e + p, 0x7fffffffu);
    memcpy(e + p + 4, "iTXt", 4);
    memset(e + p + 8, 'x', 20); /* 20 of its 2^31 - 1 bytes, then the IDAT */
    memcpy(e + p + 28, d + p, n - p);
    const char *path = tex_test_path("huge_chunk.png");
    tex_test_file_write(path, e, n + 28);
    expect(tex_png_read, path, TEX_ERR_CORRUPT, "truncated: iTXt chunk ends early");
    free(e);
    free(d);
}

static void
case_png_directory(const char *arg)
{
    (void)arg;
    expect(tex_png_read, tex_test_dir(), TEX_ERR_OPEN, "Is a directory");
}

static void
case_png_missing(const char *arg)
{
    (void)arg;
    expect(tex_png_read, tex_test_path("nothing-here.png"), TEX_ERR_OPEN,
           "No such file or directory");
    expect(tex_png_read, tex_test_path("no-dir/x.png"), TEX_ERR_OPEN, "No such file");
}

/* Root reads any file whatever its mode, so as root (CI runs as root) the
 * read is tried as user nobody, the file's mode then mattering. */
static void
case_png_unreadable(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = png_make(4, 4, 1, &n);
    const char    *path = tex_test_path("locked.png");
    tex_test_file_write(path, d, n);
    REQUIRE(chmod(path, 0) == 0);
    bool root = geteuid() == 0;
    if (root) { /* the folder open to all (expect() writes there too), so the file's mode refuses */
        REQUIRE(chmod(tex_test_dir(), 01777) == 0);
        REQUIRE(seteuid(65534) == 0); /* nobody; the real uid stays 0, to come back */
    }
    expect(tex_png_read, path, TEX_ERR_OPEN, "Permission denied");
    if (root)
        REQUIRE(seteuid(0) == 0);
    free(d);
}

/* Names that are not regular files fail at once: a FIFO with no writer
 * would block the reader for ever (alarm() fails the case instead), a
 * device would stream. Every reader goes through tex_open_regular(). */
static tex_result
exr_read(const char *path, tex_image *out, char err[TEX_ERR_LEN])
{
    out->pixels = NULL;
    tex_exr     *f;
    tex_exr_info info;
    return tex_exr_open(path, &f, &info, err); /* never TEX_OK here */
}

/* Names from files are printed escaped: controls (C0, DEL, C1 as UTF-8)
 * and invalid UTF-8 as \xNN, printable UTF-8 as it is, never cut inside
 * a character or an escape. */
static void
case_printable_names(const char *arg)
{
    (void)arg;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"tex/a.png", "tex/a.png"},
        {"\x1b[31mred\x1b[0m.png", "\\x1b[31mred\\x1b[0m.png"},
        {"a\nb\tc\x7f", "a\\x0ab\\x09c\\x7f"},
        {"caf\xc3\xa9.png", "caf\xc3\xa9.png"}, /* U+00E9 kept */
        {"\xc2\x9b"
         "31m",
         "\\xc2\\x9b"
         "31m"},                                    /* U+009B, the C1 CSI */
        {"\xff\xfe", "\\xff\\xfe"},                 /* not UTF-8 */
        {"\xe2\x82", "\\xe2\\x82"},                 /* a cut sequence */
        {"\xc0\xaf", "\\xc0\\xaf"},                 /* overlong '/' */
        {"\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!"}, /* U+1F600 kept */
    };
    char out[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tex_name_printable(out, sizeof out, cases[i].in);
        if (strcmp(out, cases[i].out) != 0)
            RT_CHECK_FAIL_("case %zu: '%s', want '%s'", i, out, cases[i].out);
    }
    tex_name_printable(out, 6, "ab\x1b"); /* "ab\x1b" needs 7 bytes with its NUL */
    CHECK(strcmp(out, "ab") == 0);
    tex_name_printable(out, 4, "a\xc3\xa9z"); /* no half character */
    CHECK(strcmp(out, "a\xc3\xa9") == 0);
    tex_name_printable(out, 3, "a\xc3\xa9z");
    CHECK(strcmp(out, "a") == 0);
}

static void
case_special_files(const char *arg)
{
    (void)arg;
    const char *fifo = tex_test_path("pipe.png");
    REQUIRE(mkfifo(fifo, 0600) == 0);
    alarm(20);
    reader readers[] = {tex_png_read, tex_jpeg_read, tex_image_read, exr_read};
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
        expect(readers[i], fifo, TEX_ERR_OPEN, "cannot open: a FIFO, not a regular file");
        expect(readers[i], "/dev/zero", TEX_ERR_OPEN,
               "cannot open: a character device, not a regular file");
    }
    alarm(0);
    char err[TEX_ERR_LEN];
    errno = 0;
    CHECK(tex_open_regular(fifo, err) == -1);
    CHECK_EQ_INT(errno, EINVAL);
    CHECK(tex_open_regular(tex_test_dir(), err) == -1);
    CHECK_EQ_INT(errno, EISDIR);
    CHECK_CONTAINS(err, "Is a directory");
    /* A regular file is handed over blocking, as a reader expects: opened
     * non-blocking (against a FIFO swapped in), that flag is cleared. */
    const char *plain = tex_test_path("plain.bin");
    tex_test_file_write(plain, "x", 1);
    int fd = tex_open_regular(plain, err);
    REQUIRE(fd >= 0);
    int flags = fcntl(fd, F_GETFL);
    CHECK(flags >= 0 && !(flags & O_NONBLOCK) && (flags & O_ACCMODE) == O_RDONLY);
    close(fd);
}

static void
case_png_not_png(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("text.png");
    const char  text[] = "This is a text file, not an image.\n";
    tex_test_file_write(path, text, sizeof text - 1);
    expect(tex_png_read, path, TEX_ERR_FORMAT, "not a PNG file");

    uint8_t        px[3 * 8 * 8] = {0};
    size_t         n;
    unsigned char *jpg = tex_test_jpeg_encode(px, 8, 8, 3, JCS_RGB, JCS_YCbCr, false, 90, &n);
    path = tex_test_path("jpeg.png");
    tex_test_file_write(path, jpg, n);
    expect(tex_png_read, path, TEX_ERR_FORMAT, "not a PNG file");
    free(jpg);
}

/* ---- JPEG cases ---- */

/* A JPEG of the test pattern, its scans as tex_test_jpeg_scans() takes them. */
static unsigned char *
jpeg_make(uint32_t w, uint32_t h, int scans, size_t *n)
{
    uint8_t       *px = tex_test_jpeg_pattern(w, h, 3);
    unsigned char *d = tex_test_jpeg_encode(px, w, h, 3, JCS_RGB, JCS_YCbCr, scans, 90, n);
    free(px);
    return d;
}

/* The offset of the first marker 0xFF `code` outside entropy-coded data:
 * markers before the first scan, which is all these tests look for. */
static size_t
marker_find(const unsigned char *d, size_t n, unsigned code)
{
    for (size_t p = 2; p + 4 <= n;) {
        REQUIRE(d[p] == 0xFF);
        if (d[p + 1] == code)
            return p;
        REQUIRE(d[p + 1] != 0xDA); /* start of scan: too far */
        p += 2 + ((size_t)d[p + 2] << 8 | d[p + 3]);
    }
    REQUIRE(!"marker not found");
    return 0;
}

static void
case_jpeg_empty(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("empty.jpg");
    tex_test_file_write(path, "", 0);
    expect(tex_jpeg_read, path, TEX_ERR_FORMAT, "empty");
}

/* Cut at every length, baseline and progressive: libjpeg only warns and
 * pads with grey; the reader must fail. */
static void
case_jpeg_truncated(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("cut.jpg");
    for (int progressive = 0; progressive < 2; progressive++) {
        size_t         n;
        unsigned char *d = jpeg_make(37, 23, progressive, &n);
        for (size_t cut = 1; cut < n; cut++) {
            tex_test_file_write(path, d, cut);
            expect(tex_jpeg_read, path, TEX_ERR_CORRUPT, "truncated");
        }
        free(d);
    }
}

static tex_result
rows_count(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    (void)shape, (void)y, (void)row, (void)err;
    ++*(uint32_t *)ctx;
    return TEX_OK;
}

/* A read of `path` by rows that comes to `want`: the rows handed over. */
static uint32_t
rows_read(const char *path, tex_result want, char err[TEX_ERR_LEN])
{
    uint32_t rows = 0;
    CHECK_EQ_INT(tex_jpeg_read_rows(path, rows_count, &rows, err), want);
    return rows;
}

/* A JPEG that declares 4096 rows and ends right after its scan's header:
 * the read fails at the first row, not after libjpeg has made up all 4096
 * (a 627-byte file declaring 16384x16384 took 1.7 s to fail; 40 of them in
 * one scene, 80 s). */
static void
case_jpeg_truncated_stops(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = jpeg_make(64, 48, false, &n);
    size_t         sof = marker_find(d, n, 0xC0), sos = marker_find(d, n, 0xDA);
    d[sof + 5] = 4096 >> 8, d[sof + 6] = 4096 & 255; /* the height */
    size_t      end = sos + 2 + ((size_t)d[sos + 2] << 8 | d[sos + 3]);
    const char *path = tex_test_path("cut4096.jpg");
    tex_test_file_write(path, d, end);
    char     err[TEX_ERR_LEN];
    uint32_t rows = rows_read(path, TEX_ERR_CORRUPT, err);
    CHECK(strstr(err, "truncated") != NULL);
    CHECK(rows < 16); /* a row of MCUs at most; all 4096 before */
    expect(tex_jpeg_read, path, TEX_ERR_CORRUPT, "truncated");
    free(d);
}

/* An EOI marker inside the entropy-coded data: the scan ends early and
 * libjpeg fills the rest with grey, warning only. */
static void
case_jpeg_cut_scan(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = jpeg_make(64, 48, false, &n);
    size_t         sos = marker_find(d, n, 0xDA);
    size_t         mid = sos + (n - sos) / 2;
    d[mid] = 0xFF;
    d[mid + 1] = 0xD9;
    const char *path = tex_test_path("cutscan.jpg");
    tex_test_file_write(path, d, mid + 2);
    expect(tex_jpeg_read, path, TEX_ERR_CORRUPT, "corrupt JPEG data");
    free(d);
}

/* Markers the decoder skips (APP15, 65,533 bytes each, as an ICC profile
 * or EXIF block can be) that run past the reader's 64 KiB blocks: skipped
 * to the byte, the picture the same as without them; cut inside one, the
 * file is truncated. */
static void
case_jpeg_big_markers(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = jpeg_make(40, 30, false, &n);
    enum { MARKERS = 3, PAYLOAD = 65533 };
    size_t         big_n = n + MARKERS * (4 + PAYLOAD);
    unsigned char *big = malloc(big_n);
    REQUIRE(big != NULL);
    memcpy(big, d, 2); /* SOI */
    size_t at = 2;
    for (int m = 0; m < MARKERS; m++) {
        unsigned char head[4] = {0xFF, 0xEF, (PAYLOAD + 2) >> 8, (PAYLOAD + 2) & 0xFF};
        memcpy(big + at, head, 4);
        memset(big + at + 4, 0xA5 + m, PAYLOAD);
        at += 4 + PAYLOAD;
    }
    memcpy(big + at, d + 2, n - 2);
    char        err[TEX_ERR_LEN];
    tex_image   plain, padded;
    const char *path = tex_test_path("plain.jpg");
    tex_test_file_write(path, d, n);
    REQUIRE(tex_jpeg_read(path, &plain, err) == TEX_OK);
    path = tex_test_path("markers.jpg");
    tex_test_file_write(path, big, big_n);
    CHECK_EQ_INT(tex_jpeg_read(path, &padded, err), TEX_OK);
    CHECK(padded.pixels && memcmp(plain.pixels, padded.pixels, tex_image_bytes(&plain)) == 0);
    tex_image_free(&padded);
    tex_image_free(&plain);
    /* cut inside the second marker, past the first block */
    tex_test_file_write(path, big, 2 + 4 + PAYLOAD + 1000);
    expect(tex_jpeg_read, path, TEX_ERR_CORRUPT, "truncated");
    free(big);
    free(d);
}

static tex_result
row_placed(void *ctx, const tex_image *shape, uint32_t y, const void *row, char err[TEX_ERR_LEN])
{
    (void)shape, (void)y, (void)err;
    *(int *)ctx += ((uintptr_t)row & 31) == 16;
    return TEX_OK;
}

/* The row a read by rows hands over lies 16 bytes past a 32-byte boundary,
 * so libjpeg-turbo writes it with stores that keep it in the cache for the
 * consumer, not with the non-temporal ones it uses on an aligned row
 * (io_jpeg.c, row_alloc()). */
static void
case_jpeg_row_placed(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = jpeg_make(64, 48, false, &n);
    const char    *path = tex_test_path("rows.jpg");
    tex_test_file_write(path, d, n);
    char err[TEX_ERR_LEN];
    for (int i = 0; i < 8; i++) { /* wherever malloc() puts it */
        void *shift = malloc((size_t)i * 16 + 1);
        int   placed = 0;
        CHECK_EQ_INT(tex_jpeg_read_rows(path, row_placed, &placed, err), TEX_OK);
        CHECK_EQ_INT(placed, 48);
        free(shift);
    }
    free(d);
}

/* A progressive (or multi-scan) file whose header declares 8192x8192 but
 * which holds 40x30's scans: libjpeg would allocate and zero the whole
 * coefficient array (200 MB; 1.5 GB at 16k x 16k, from 120 bytes) before
 * finding the data cut short. Refused before, as too short to hold a
 * first scan (a bit a block at least): whole and by rows, budget or not. */
static void
case_jpeg_scans_too_short(const char *arg)
{
    (void)arg;
    for (int scans = TEX_TEST_JPEG_PROGRESSIVE; scans <= TEX_TEST_JPEG_MULTISCAN; scans++) {
        size_t         n;
        unsigned char *d = jpeg_make(40, 30, scans, &n);
        const char    *path = tex_test_path("scans.jpg");
        tex_test_file_write(path, d, n);
        tex_image img;
        char      err[TEX_ERR_LEN];
        CHECK_EQ_INT(tex_jpeg_read(path, &img, err), TEX_OK); /* as written: whole */
        tex_image_free(&img);
        size_t sof = marker_find(d, n, scans == TEX_TEST_JPEG_PROGRESSIVE ? 0xC2 : 0xC0);
        d[sof + 5] = 0x20, d[sof + 6] = 0x00; /* height 8192 */
        d[sof + 7] = 0x20, d[sof + 8] = 0x00; /* width 8192 */
        tex_test_file_write(path, d, n);
        expect(tex_jpeg_read, path, TEX_ERR_CORRUPT, "needs at least 32768 bytes");
        CHECK_EQ_INT(rows_read(path, TEX_ERR_CORRUPT, err), 0);
        free(d);
    }
}

/* Arithmetic coding: its decoder fills data that stops early with zeros
 * and warns of nothing, so even a file cut inside its scan (an EOI after
 * the cut) would decode "whole". Refused, whole or cut, both ways of
 * reading. */
static void
case_jpeg_arithmetic(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = jpeg_make(40, 30, TEX_TEST_JPEG_ARITHMETIC, &n);
    const char    *path = tex_test_path("arith.jpg");
    tex_test_file_write(path, d, n);
    expect(tex_jpeg_read, path, TEX_ERR_UNSUPPORTED, "arithmetic-coded JPEG");
    size_t scan = marker_find(d, n, 0xDA), cut = scan + (n - scan) / 3;
    d[cut] = 0xFF, d[cut + 1] = 0xD9; /* the data stops here: EOI */
    tex_test_file_write(path, d, cut + 2);
    expect(tex_jpeg_read, path, TEX_ERR_UNSUPPORTED, "arithmetic-coded JPEG");
    char err[TEX_ERR_LEN];
    CHECK_EQ_INT(rows_read(path, TEX_ERR_UNSUPPORTED, err), 0);
    free(d);
}

/* A read that fails (not the end of the file) is said to be one, with its
 * reason, whole or by rows: at the first block, and past the first 64 KiB
 * block, inside the scan (a noisy 512x512 image), where the
 * rows read before it were handed over and the failure is not taken for
 * a file cut short. */
static void
case_jpeg_read_error(const char *arg)
{
    (void)arg;
    enum { W = 512 };
    uint8_t *px = malloc((size_t)W * W * 3);
    REQUIRE(px != NULL);
    uint64_t seed = 99;
    for (size_t i = 0; i < (size_t)W * W * 3; i++)
        px[i] = (uint8_t)(tex_test_rand(&seed) >> 40);
    size_t         n;
    unsigned char *d = tex_test_jpeg_encode(px, W, W, 3, JCS_RGB, JCS_YCbCr, false, 95, &n);
    REQUIRE(n > 3 * 65536);
    const char *path = tex_test_path("eio.jpg");
    tex_test_file_write(path, d, n);
    char err[TEX_ERR_LEN];
    CHECK_EQ_INT(rows_read(path, TEX_OK, err), W);
    static const uint64_t at[] = {0, 2 * 65536};
    for (int k = 0; k < 2; k++) {
        tex__jpeg_fail_reads_from(at[k]);
        expect(tex_jpeg_read, path, TEX_ERR_OPEN, "cannot read: Input/output error");
        uint32_t rows = rows_read(path, TEX_ERR_OPEN, err);
        CHECK_CONTAINS(err, "cannot read: Input/output error");
        CHECK(k == 0 ? rows == 0 : rows > 0 && rows < W);
        tex__jpeg_fail_reads_from(UINT64_MAX);
    }
    free(d);
    free(px);
}

static void
case_jpeg_not_jpeg(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("text.jpg");
    const char  text[] = "This is a text file, not an image.\n";
    tex_test_file_write(path, text, sizeof text - 1);
    expect(tex_jpeg_read, path, TEX_ERR_FORMAT, "not a JPEG file");

    size_t         n;
    unsigned char *png = png_make(4, 4, 3, &n);
    path = tex_test_path("png.jpg");
    tex_test_file_write(path, png, n);
    expect(tex_jpeg_read, path, TEX_ERR_FORMAT, "not a JPEG file");
    free(png);
}

static void
case_jpeg_directory(const char *arg)
{
    (void)arg;
    expect(tex_jpeg_read, tex_test_dir(), TEX_ERR_OPEN, "Is a directory");
}

static void
case_jpeg_missing(const char *arg)
{
    (void)arg;
    expect(tex_jpeg_read, tex_test_path("nothing-here.jpg"), TEX_ERR_OPEN,
           "No such file or directory");
}

/* A progressive JPEG claiming 65500 x 65500: libjpeg would allocate its
 * coefficients for the whole image (gigabytes) when decoding starts. */
static void
case_jpeg_too_large(const char *arg)
{
    (void)arg;
    memory_limit();
    size_t         n;
    unsigned char *d = jpeg_make(16, 16, true, &n);
    size_t         sof = marker_find(d, n, 0xC2); /* SOF2: progressive */
    d[sof + 5] = 0xFF, d[sof + 6] = 0xDC;         /* height 65500 */
    d[sof + 7] = 0xFF, d[sof + 8] = 0xDC;         /* width 65500 */
    const char *path = tex_test_path("huge.jpg");
    tex_test_file_write(path, d, n);
    expect(tex_jpeg_read, path, TEX_ERR_TOO_LARGE, "65500x65500 pixels is over the limit");
    free(d);
}

static void
case_jpeg_zero_width(const char *arg)
{
    (void)arg;
    size_t         n;
    unsigned char *d = jpeg_make(16, 16, false, &n);
    size_t         sof = marker_find(d, n, 0xC0); /* SOF0: baseline */
    d[sof + 7] = 0, d[sof + 8] = 0;
    const char *path = tex_test_path("zero.jpg");
    tex_test_file_write(path, d, n);
    expect(tex_jpeg_read, path, TEX_ERR_CORRUPT, "");
    free(d);
}

static const rt_test_case cases[] = {
    {"png_empty", case_png_empty},
    {"png_truncated", case_png_truncated},
    {"png_short_idat", case_png_short_idat},
    {"png_bad_crc", case_png_bad_crc},
    {"png_ancillary_crc", case_png_ancillary_crc},
    {"png_bad_zlib", case_png_bad_zlib},
    {"png_zero_width", case_png_zero_width},
    {"png_bit_depth", case_png_bit_depth},
    {"png_too_large", case_png_too_large},
    {"png_huge_chunk", case_png_huge_chunk},
    {"png_directory", case_png_directory},
    {"png_missing", case_png_missing},
    {"png_unreadable", case_png_unreadable},
    {"png_not_png", case_png_not_png},
    {"special_files", case_special_files},
    {"printable_names", case_printable_names},
    {"jpeg_empty", case_jpeg_empty},
    {"jpeg_truncated", case_jpeg_truncated},
    {"jpeg_truncated_stops", case_jpeg_truncated_stops},
    {"jpeg_cut_scan", case_jpeg_cut_scan},
    {"jpeg_big_markers", case_jpeg_big_markers},
    {"jpeg_read_error", case_jpeg_read_error},
    {"jpeg_arithmetic", case_jpeg_arithmetic},
    {"jpeg_scans_too_short", case_jpeg_scans_too_short},
    {"jpeg_row_placed", case_jpeg_row_placed},
    {"jpeg_not_jpeg", case_jpeg_not_jpeg},
    {"jpeg_directory", case_jpeg_directory},
    {"jpeg_missing", case_jpeg_missing},
    {"jpeg_too_large", case_jpeg_too_large},
    {"jpeg_zero_width", case_jpeg_zero_width},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
