/* Bad input to the OpenEXR shim (texture/include/tex_exr.h): missing, unreadable,
 * empty, foreign, truncated and hand-made hostile files, and every file of
 * ${RT_TESTDATA}/exr-damaged (skipped with exit 77 when missing).
 *
 * Each case asserts the result and the message: one line, no file name,
 * nothing printed on stderr. Damaged files run one per child process with
 * an alarm, so a crash or a hang names its file. Under AddressSanitizer
 * CMake sets max_allocation_size_mb to TEX_MAX_PIXELS * 4 channels * 4 bytes,
 * so an allocation past the documented limits aborts the child. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* wait4() */

#include "check.h"
#include "tex_exr.h"
#include "tex_file_testing.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Opens `path` and reads every level (and, when tiled, every tile of
 * level 0): returns the first failure's result, with its message in err. */
static tex_result
read_all(const char *path, char err[TEX_ERR_LEN])
{
    tex_exr     *f;
    tex_exr_info in;
    tex_result   r = tex_exr_open(path, &f, &in, err);
    if (r != TEX_OK)
        return r;
    for (uint32_t l = 0; l < in.nlevels && r == TEX_OK; l++) {
        tex_image img;
        r = tex_exr_read_image(f, l, &img, err);
        tex_image_free(&img);
    }
    tex_exr_close(f);
    return r;
}

/* The result and message of opening and reading `path`. */
static void
expect(const char *path, tex_result want, const char *msg)
{
    char err[TEX_ERR_LEN] = "";
    tex_test_stderr_capture();
    tex_result r = read_all(path, err);
    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    CHECK_EQ_INT(r, want);
    CHECK_ONE_LINE(err);
    CHECK_CONTAINS(err, msg);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strstr(err, base))
        RT_CHECK_FAIL_("the message names the file: %s", err);
    printf("%s: %s\n", base, err);
}

static void
case_missing(const char *arg)
{
    (void)arg;
    expect(tex_test_path("no_such.exr"), TEX_ERR_OPEN, "cannot open: No such file or directory");
}

static void
case_directory(const char *arg)
{
    (void)arg;
    const char *dir = tex_test_path("folder.exr");
    REQUIRE(mkdir(dir, 0700) == 0);
    expect(dir, TEX_ERR_OPEN, "cannot open: Is a directory");
}

static void
case_empty(const char *arg)
{
    (void)arg;
    const char *path = tex_test_path("empty.exr");
    tex_test_file_write(path, "", 0);
    expect(path, TEX_ERR_FORMAT, "empty file: not an OpenEXR file");
}

static void
case_garbage(const char *arg)
{
    (void)arg;
    const char   *path = tex_test_path("garbage.exr");
    unsigned char junk[4096];
    uint64_t      s = 12345;
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)tex_test_rand(&s);
    junk[0] = 'x';
    tex_test_file_write(path, junk, sizeof junk);
    expect(path, TEX_ERR_FORMAT, "not an OpenEXR file");
    tex_test_file_write(path, "\x89PNG\r\n\x1a\n", 8);
    expect(path, TEX_ERR_FORMAT, "not an OpenEXR file");
    tex_test_file_write(path, "v/1", 3); /* a magic number cut short */
    expect(path, TEX_ERR_CORRUPT, "truncated: file ends inside the OpenEXR magic number");
    /* The magic number, then junk. */
    memcpy(junk, "\x76\x2f\x31\x01", 4);
    tex_test_file_write(path, junk, sizeof junk);
    expect(path, TEX_ERR_CORRUPT, "bad header");
}

/* A valid file cut at several points: never TEX_OK, always "truncated". */
static void
case_truncated(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, 64, 48, 4, TEX_TYPE_HALF, err) == TEX_OK);
    uint64_t s = 1;
    for (size_t i = 0; i < (size_t)64 * 48 * 4; i++)
        ((uint16_t *)img.pixels)[i] = (uint16_t)(tex_test_rand(&s) & 0x3bff);
    const char *whole = tex_test_path("whole.exr"), *cut = tex_test_path("cut.exr");
    REQUIRE(tex_exr_write_scanline(whole, &img, NULL, 0, err) == TEX_OK);
    size_t         n;
    unsigned char *data = tex_test_file_read(whole, &n);
    size_t         at[] = {4, 8, 40, 200, 330, 350, n / 4, n / 2, 3 * n / 4, n - 100, n - 1};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        REQUIRE(at[i] < n);
        tex_test_file_write(cut, data, at[i]);
        printf("cut at %zu of %zu: ", at[i], n);
        expect(cut, TEX_ERR_CORRUPT, "truncated");
    }
    free(data);
    tex_image_free(&img);
}

/* A tiled file cut in the middle: tiles before the cut still read, and
 * read right; those after it fail, each with its own message. */
static void
case_truncated_tiles(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, 64, 64, 3, TEX_TYPE_FLOAT, err) == TEX_OK);
    uint64_t s = 2;
    for (size_t i = 0; i < (size_t)64 * 64 * 3; i++)
        ((float *)img.pixels)[i] = (float)(tex_test_rand(&s) % 1000) / 10.0f;
    const char *path = tex_test_path("tiles.exr");
    REQUIRE(tex_exr_write_tiled(path, &img, 1, 16, NULL, 0, err) == TEX_OK);
    size_t         n;
    unsigned char *data = tex_test_file_read(path, &n);
    tex_test_file_write(path, data, n * 6 / 10);
    free(data);

    tex_exr     *f;
    tex_exr_info in;
    REQUIRE(tex_exr_open(path, &f, &in, err) == TEX_OK);
    float tile[16 * 16 * 3];
    int   good = 0, bad = 0;
    tex_test_stderr_capture();
    for (uint32_t ty = 0; ty < 4; ty++) {
        for (uint32_t tx = 0; tx < 4; tx++) {
            tex_result r = tex_exr_read_tile(f, 0, tx, ty, tile, err);
            if (r == TEX_OK) {
                good++;
                for (uint32_t y = 0; y < 16; y++)
                    CHECK(!memcmp(&tile[y * 16 * 3],
                                  (float *)img.pixels + ((ty * 16 + y) * 64 + tx * 16) * 3,
                                  16 * 3 * sizeof(float)));
            } else {
                bad++;
                CHECK_EQ_INT(r, TEX_ERR_CORRUPT);
                CHECK_ONE_LINE(err);
                CHECK_CONTAINS(err, "truncated");
            }
        }
    }
    tex_image whole;
    CHECK_EQ_INT(tex_exr_read_image(f, 0, &whole, err), TEX_ERR_CORRUPT);
    CHECK(whole.pixels == NULL);
    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    printf("%d tiles read, %d cut off: %s\n", good, bad, err);
    CHECK(good >= 4);
    CHECK(bad >= 4);
    tex_exr_close(f);
    tex_image_free(&img);
}

/* A 64x64 half RGB gradient written with ZIP, tiled 16x16 (16 chunks) or
 * as scanlines (4 blocks of 16 lines), read back whole; where its chunk
 * table is. */
typedef struct zip_file {
    const char    *path;
    unsigned char *data;
    size_t         n;
    size_t         table;  /* byte offset of the chunk table */
    size_t         chunks; /* its entries */
} zip_file;

static uint64_t
u64_at(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void
zip_file_write(zip_file *z, tex_image *img, bool tiled)
{
    char err[TEX_ERR_LEN];
    REQUIRE(tex_image_alloc(img, 64, 64, 3, TEX_TYPE_HALF, err) == TEX_OK);
    for (size_t i = 0; i < (size_t)64 * 64 * 3; i++) /* small halves: 0 .. 0x3bff */
        ((uint16_t *)img->pixels)[i] = (uint16_t)((i / 3 % 64 + i / 3 / 64) * 120 + i % 3);
    z->path = tex_test_path("zip.exr");
    z->chunks = tiled ? 16 : 4;
    REQUIRE((tiled ? tex_exr_write_tiled(z->path, img, 1, 16, NULL, 0, err)
                   : tex_exr_write_scanline(z->path, img, NULL, 0, err)) == TEX_OK);
    z->data = tex_test_file_read(z->path, &z->n);
    REQUIRE(z->data);
    /* The table is where its first entry, the first chunk, is all its
     * entries on. */
    z->table = 0;
    for (size_t p = 8; p + z->chunks * 8 <= z->n && !z->table; p++)
        if (u64_at(z->data + p) == p + z->chunks * 8)
            z->table = p;
    REQUIRE(z->table);
}

static void
put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Ways to damage z's file, each on a fresh copy. */
typedef enum zip_damage {
    FLIP,       /* bytes flipped in the middle of chunk 0's stream */
    SWAP,       /* table entries 0 and 1 swapped: each chunk says it is the other */
    PAST_END,   /* entry 0 past the end of the file */
    IN_HEADER,  /* entry 0 at byte 8, inside the header */
    ZERO,       /* entry 0 zero: OpenEXR rebuilds the table by scanning */
    SYMBOL_286, /* chunk 0 a stream zlib rejects and libdeflate reads */
} zip_damage;

/* A zlib stream of 1,536 bytes of 0x80 (a 16x16 half RGB tile of 0x8080
 * after the predictor): one literal, then back-references of length 258
 * whose first uses length symbol 286, which deflate does not define.
 * zlib: "invalid literal/length code"; libdeflate 1.14 reads it as 258. */
static const unsigned char symbol_286[] = {0x78, 0x01, 0x6b, 0x18, 0x03, 0xa3, 0x60,
                                           0x14, 0x8c, 0x82, 0x51, 0x30, 0x22, 0x01,
                                           0x00, 0x0d, 0x1e, 0x00, 0x2e};

/* z's file damaged as `how` says; `header`: bytes of a chunk's header
 * before its stream, the last 4 of them its size. */
static void
zip_file_damage(const zip_file *z, size_t header, zip_damage how)
{
    unsigned char *bad = malloc(z->n);
    REQUIRE(bad);
    memcpy(bad, z->data, z->n);
    size_t   c0 = (size_t)u64_at(z->data + z->table);
    uint32_t size = (uint32_t)z->data[c0 + header - 4] | (uint32_t)z->data[c0 + header - 3] << 8;
    REQUIRE(size > sizeof symbol_286 && size < 16 * 64 * 6); /* compressed */
    switch (how) {
    case FLIP:
        for (uint32_t i = 0; i < 4; i++)
            bad[c0 + header + size / 2 + i] ^= 0x5a;
        break;
    case SWAP:
        memcpy(bad + z->table, z->data + z->table + 8, 8);
        memcpy(bad + z->table + 8, z->data + z->table, 8);
        break;
    case PAST_END:
        put_u64(bad + z->table, z->n + 4096);
        break;
    case IN_HEADER:
        put_u64(bad + z->table, 8);
        break;
    case ZERO:
        put_u64(bad + z->table, 0);
        break;
    case SYMBOL_286: /* in place of the stream, its size field changed */
        memcpy(bad + c0 + header, symbol_286, sizeof symbol_286);
        bad[c0 + header - 4] = (unsigned char)sizeof symbol_286;
        bad[c0 + header - 3] = 0;
        break;
    }
    tex_test_file_write(z->path, bad, z->n);
    free(bad);
}

/* Reads all 16 tiles; returns how many failed, each as TEX_ERR_CORRUPT
 * with one line, and checks the others' pixels. */
static int
zip_tiles_read(const zip_file *z, const tex_image *img, uint64_t *fast)
{
    char         err[TEX_ERR_LEN];
    tex_exr     *f;
    tex_exr_info in;
    uint16_t     tile[16 * 16 * 3];
    int          bad = 0;
    REQUIRE(tex_exr_open(z->path, &f, &in, err) == TEX_OK);
    for (uint32_t k = 0; k < 16; k++) {
        uint32_t   tx = k % 4, ty = k / 4;
        tex_result r = tex_exr_read_tile(f, 0, tx, ty, tile, err);
        if (r != TEX_OK) {
            bad++;
            CHECK_EQ_INT(r, TEX_ERR_CORRUPT);
            CHECK_ONE_LINE(err);
            printf("tile (%u, %u): %s\n", tx, ty, err);
            continue;
        }
        for (uint32_t y = 0; y < 16; y++)
            CHECK(!memcmp(&tile[y * 16 * 3],
                          (uint16_t *)img->pixels + ((ty * 16 + y) * 64 + tx * 16) * 3,
                          16 * 3 * sizeof(uint16_t)));
    }
    *fast = tex_exr_fast_chunks(f);
    tex_exr_close(f);
    return bad;
}

/* ZIP chunks are decoded by our own code (exr_chunks.h), which must refuse
 * what OpenEXR refuses: a damaged stream, and a chunk table that points
 * at the wrong chunk. Each such tile is CORRUPT, the rest still read; a
 * whole image with one is CORRUPT. */
static void
case_damaged_zip_tile(const char *arg)
{
    (void)arg;
    zip_file  z;
    tex_image img;
    uint64_t  fast;
    zip_file_write(&z, &img, true);
    tex_test_stderr_capture();
    CHECK_EQ_INT(zip_tiles_read(&z, &img, &fast), 0);
    CHECK_EQ_INT(fast, 16); /* whole: all 16 through the fast path */
    /* A tile chunk's header: x, y, level x, level y, size. How many tiles
     * fail, and how many of the others take the fast path. */
    static const struct {
        zip_damage how;
        int        bad;
        uint64_t   fast;
    } cases[] = {
        {FLIP, 1, 15},      {SWAP, 2, 14}, {PAST_END, 1, 15},
        {IN_HEADER, 1, 15}, {ZERO, 0, 0}, /* OpenEXR finds every tile by scanning; only it reads
                                             them */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        zip_file_damage(&z, 20, cases[i].how);
        CHECK_EQ_INT(zip_tiles_read(&z, &img, &fast), cases[i].bad);
        CHECK_EQ_INT(fast, cases[i].fast);
    }

    /* The one divergence, pinned: libdeflate reads a stream zlib rejects. */
    zip_file_damage(&z, 20, SYMBOL_286);
    char         err[TEX_ERR_LEN];
    tex_exr     *f;
    tex_exr_info in;
    uint16_t     tile[16 * 16 * 3];
    REQUIRE(tex_exr_open(z.path, &f, &in, err) == TEX_OK);
    CHECK_EQ_INT(tex_exr_read_tile(f, 0, 0, 0, tile, err), TEX_OK);
    CHECK_EQ_INT(tile[0], 0x8080);
    CHECK_EQ_INT(tile[16 * 16 * 3 - 1], 0x8080);
    tex_exr_close(f);
    REQUIRE(setenv("RT_EXR_FAST", "0", 1) == 0);
    REQUIRE(tex_exr_open(z.path, &f, &in, err) == TEX_OK);
    unsetenv("RT_EXR_FAST");
    CHECK_EQ_INT(tex_exr_read_tile(f, 0, 0, 0, tile, err), TEX_ERR_CORRUPT);
    CHECK_CONTAINS(err, "zlib");
    tex_exr_close(f);

    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    free(z.data);
    tex_image_free(&img);
}

/* The whole image of z's file: its result, and how many chunks took the
 * fast path; on TEX_OK its pixels are img's. */
static tex_result
zip_lines_read(const zip_file *z, const tex_image *img, uint64_t *fast)
{
    char         err[TEX_ERR_LEN];
    tex_exr     *f;
    tex_exr_info in;
    tex_image    got;
    REQUIRE(tex_exr_open(z->path, &f, &in, err) == TEX_OK);
    tex_result r = tex_exr_read_image(f, 0, &got, err);
    if (r == TEX_OK) {
        CHECK(!memcmp(got.pixels, img->pixels, (size_t)64 * 64 * 3 * sizeof(uint16_t)));
        tex_image_free(&got);
    } else {
        CHECK(got.pixels == NULL);
        CHECK_ONE_LINE(err);
        printf("scanlines: %s\n", err);
    }
    *fast = tex_exr_fast_chunks(f);
    tex_exr_close(f);
    return r;
}

static void
case_damaged_zip_lines(const char *arg)
{
    (void)arg;
    zip_file  z;
    tex_image img;
    uint64_t  fast;
    zip_file_write(&z, &img, false);
    tex_test_stderr_capture();
    CHECK_EQ_INT(zip_lines_read(&z, &img, &fast), TEX_OK);
    CHECK_EQ_INT(fast, 4); /* 64 lines, 16 a block */
    /* A scanline chunk's header: y, size. */
    static const zip_damage bad[] = {FLIP, SWAP, PAST_END, IN_HEADER};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        zip_file_damage(&z, 8, bad[i]);
        CHECK_EQ_INT(zip_lines_read(&z, &img, &fast), TEX_ERR_CORRUPT);
        CHECK_EQ_INT(fast, 0);
    }
    zip_file_damage(&z, 8, ZERO); /* OpenEXR finds the block by scanning */
    CHECK_EQ_INT(zip_lines_read(&z, &img, &fast), TEX_OK);
    CHECK_EQ_INT(fast, 0);
    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    free(z.data);
    tex_image_free(&img);
}

/* An uncompressed file cut short after it was opened: an error, as
 * OpenEXR's own reader says it, not the missing bytes read as zeros. */
static void
case_shrunk_after_open(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN];
    tex_image img;
    zip_file  z;
    zip_file_write(&z, &img, false); /* for the image; rewritten uncompressed */
    tex_exr_write_opts opts = {.compression = TEX_EXR_NONE};
    REQUIRE(tex_exr_write_scanline_opts(z.path, &img, NULL, 0, &opts, err) == TEX_OK);
    tex_exr     *f;
    tex_exr_info in;
    tex_image    got;
    struct stat  st;
    REQUIRE(stat(z.path, &st) == 0);
    REQUIRE(tex_exr_open(z.path, &f, &in, err) == TEX_OK);
    /* 100 bytes off: inside the last line's samples, its header whole. */
    REQUIRE(truncate(z.path, st.st_size - 100) == 0);
    tex_test_stderr_capture();
    CHECK_EQ_INT(tex_exr_read_image(f, 0, &got, err), TEX_ERR_CORRUPT);
    CHECK(got.pixels == NULL);
    CHECK_ONE_LINE(err);
    CHECK_CONTAINS(err, "shrank");
    CHECK_EQ_INT(tex_test_stderr_release(), 0);
    printf("%s\n", err);
    tex_exr_close(f);
    free(z.data);
    tex_image_free(&img);
}

/* ---- hand-made headers ---- */

typedef tex_test_bytes byte_buf;

static void
put(byte_buf *b, const void *data, size_t n)
{
    tex_test_bytes_add(b, data, n);
}

static void
put_u32(byte_buf *b, uint32_t v) /* little-endian, as OpenEXR stores it */
{
    unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 24)};
    put(b, le, 4);
}

static void
put_attr(byte_buf *b, const char *name, const char *type, uint32_t size)
{
    put(b, name, strlen(name) + 1);
    put(b, type, strlen(type) + 1);
    put_u32(b, size);
}

typedef struct spec {
    uint32_t     w, h;
    const char **channels;        /* NULL-terminated; default {"Y"} */
    uint32_t     nchannels_extra; /* more FLOAT channels named c00000, c00001, ... */
    int          pixel_type;      /* 0 UINT, 1 HALF, 2 FLOAT */
    int          sampling;        /* of every channel; 0: 1 */
    uint32_t     tile_w, tile_h;  /* 0: scanline */
    uint32_t     version;         /* 0: 2 */
    uint32_t     table;           /* zero entries written after the header */
    uint32_t     opaque_size;     /* an attribute of a type OpenEXR does not know,
                                   * claiming this many bytes (8 present); 0: none */
    uint32_t preview;             /* a preview image this wide and high; 0: none */
    int32_t  x0;                  /* the data window's left edge (then w wide) */
    uint8_t  compression;         /* OpenEXR's number: 0 none, 3 ZIP */
} spec;

/* A single-part file (uncompressed unless sp->compression says): the
 * header and `table` zero entries of chunk table, no pixels. */
static void
write_spec(const char *path, const spec *sp)
{
    static const char *y[] = {"Y", NULL};
    const char       **names = sp->channels ? sp->channels : y;
    byte_buf           b = {0};
    put(&b, "\x76\x2f\x31\x01", 4);
    put_u32(&b, (sp->version ? sp->version : 2) | (sp->tile_w ? 0x200 : 0));
    uint32_t size = 1;
    for (const char **c = names; *c; c++)
        size += (uint32_t)strlen(*c) + 1 + 16;
    size += sp->nchannels_extra * (7 + 16);
    put_attr(&b, "channels", "chlist", size);
    for (uint32_t i = 0, n = 0; names[n] || i < sp->nchannels_extra;) {
        char extra[16];
        int  type = sp->pixel_type ? sp->pixel_type : 1;
        if (names[n]) {
            put(&b, names[n], strlen(names[n]) + 1);
            n++;
        } else {
            snprintf(extra, sizeof extra, "c%05u", i++);
            put(&b, extra, 7);
            type = 2;
        }
        put_u32(&b, (uint32_t)type);
        put_u32(&b, 0); /* pLinear, reserved */
        put_u32(&b, (uint32_t)(sp->sampling ? sp->sampling : 1));
        put_u32(&b, (uint32_t)(sp->sampling ? sp->sampling : 1));
    }
    put(&b, "", 1);
    put_attr(&b, "compression", "compression", 1);
    put(&b, &sp->compression, 1);
    for (int i = 0; i < 2; i++) {
        /* The display window at most 64 x 64: OpenEXR refuses a huge one
         * itself, before the data window is looked at. */
        int32_t  x0 = i ? 0 : sp->x0;
        uint32_t w = i && sp->w > 64 ? 64 : sp->w, h = i && sp->h > 64 ? 64 : sp->h;
        put_attr(&b, i ? "displayWindow" : "dataWindow", "box2i", 16);
        put_u32(&b, (uint32_t)x0);
        put_u32(&b, 0);
        put_u32(&b, (uint32_t)x0 + w - 1);
        put_u32(&b, h - 1);
    }
    put_attr(&b, "lineOrder", "lineOrder", 1);
    put(&b, "", 1);
    put_attr(&b, "pixelAspectRatio", "float", 4);
    put_u32(&b, 0x3f800000);
    put_attr(&b, "screenWindowCenter", "v2f", 8);
    put_u32(&b, 0);
    put_u32(&b, 0);
    put_attr(&b, "screenWindowWidth", "float", 4);
    put_u32(&b, 0x3f800000);
    if (sp->preview) {
        put_attr(&b, "preview", "preview", 8);
        put_u32(&b, sp->preview);
        put_u32(&b, sp->preview);
    }
    if (sp->opaque_size) {
        put_attr(&b, "blob", "myOwnType", sp->opaque_size);
        put(&b, "01234567", 8);
    }
    if (sp->tile_w) {
        put_attr(&b, "tiles", "tiledesc", 9);
        put_u32(&b, sp->tile_w);
        put_u32(&b, sp->tile_h);
        put(&b, "", 1); /* ONE_LEVEL, ROUND_DOWN */
    }
    put(&b, "", 1); /* end of header */
    for (uint32_t i = 0; i < sp->table; i++) {
        put_u32(&b, 0);
        put_u32(&b, 0);
    }
    tex_test_file_write(path, b.p, b.n);
    free(b.p);
}

static void
expect_spec(const spec *sp, tex_result want, const char *msg)
{
    const char *path = tex_test_path("made.exr");
    write_spec(path, sp);
    expect(path, want, msg);
}

static void
case_too_large(const char *arg)
{
    (void)arg;
    /* Over TEX_MAX_DIM on one side; over TEX_MAX_PIXELS in all. */
    expect_spec(&(spec){.w = 100000, .h = 2, .table = 2}, TEX_ERR_TOO_LARGE,
                "100000x2 pixels is over the limit");
    /* Data windows of 2^31 and 2^32 - 1 pixels across (the second from
     * INT_MIN to INT_MAX: its width does not fit in an int). OpenEXR's own
     * header check refuses these first, as invalid. */
    expect_spec(&(spec){.w = 0x80000000u, .h = 1, .table = 1}, TEX_ERR_CORRUPT,
                "bad header: invalid data window");
    expect_spec(&(spec){.x0 = INT32_MIN, .w = UINT32_MAX, .h = 1, .table = 1}, TEX_ERR_CORRUPT,
                "bad header: invalid data window");
    expect_spec(&(spec){.w = 20000, .h = 20000, .table = 20000}, TEX_ERR_TOO_LARGE,
                "20000x20000 pixels is over the limit");
    /* A tile too large for the cache to hold, on a small image. */
    expect_spec(&(spec){.w = 64, .h = 64, .tile_w = 8192, .tile_h = 8192, .table = 1},
                TEX_ERR_TOO_LARGE, "tile size 8192x8192");
    /* 4000 float channels: a 65536-pixel scanline of 1 GB. */
    expect_spec(&(spec){.w = 65536, .h = 1, .nchannels_extra = 4000, .table = 1}, TEX_ERR_TOO_LARGE,
                "over the limit of 67108864 bytes");
    /* 18 channels of 4 bytes, 65536 wide, one line: 4.5 MiB uncompressed,
     * but OpenEXR gives ZIP a buffer of 16 lines, 72 MiB, however short
     * the image. */
    spec wide = {.w = 65536, .h = 1, .nchannels_extra = 17, .table = 1, .compression = 3};
    expect_spec(&wide, TEX_ERR_TOO_LARGE, "over the limit of 67108864 bytes");
    wide.compression = 0; /* one line a block: opens */
    const char  *path = tex_test_path("made.exr");
    tex_exr     *f;
    tex_exr_info info;
    char         err[TEX_ERR_LEN];
    write_spec(path, &wide);
    CHECK_EQ_INT(tex_exr_open(path, &f, &info, err), TEX_OK);
    tex_exr_close(f);
}

/* An attribute claiming 1.3 GB in a file of 400 bytes (found by
 * fuzz-exr: OpenEXR allocates what an attribute of an unknown type claims
 * before reading it). Refused before OpenEXR reads the header; its test
 * entry runs under ASan with a 64 MiB cap on any one allocation. */
static void
case_huge_attribute(const char *arg)
{
    (void)arg;
    expect_spec(&(spec){.w = 4, .h = 4, .table = 4, .opaque_size = 0x52000000}, TEX_ERR_CORRUPT,
                "truncated: header attribute 'blob' of 1375731712 bytes runs past the end");
    expect_spec(&(spec){.w = 4, .h = 4, .table = 4, .opaque_size = 0x80000000}, TEX_ERR_CORRUPT,
                "bad header: attribute 'blob' has a negative size");
    /* A preview of 65535 x 65535 RGBA pixels: 17 GB, allocated before its
     * pixels are read. */
    expect_spec(&(spec){.w = 4, .h = 4, .table = 4, .preview = 65535}, TEX_ERR_CORRUPT,
                "truncated: header attribute 'preview' of 17179344908 bytes");
    /* 2^32 - 1 on a side: 4 w h does not fit in 64 bits (fuzz-exr). */
    expect_spec(&(spec){.w = 4, .h = 4, .table = 4, .preview = UINT32_MAX}, TEX_ERR_CORRUPT,
                "truncated: header attribute 'preview'");
    /* What the file holds: read as any attribute is. */
    const char  *path = tex_test_path("made.exr");
    tex_exr     *f;
    tex_exr_info info;
    char         err[TEX_ERR_LEN];
    write_spec(path, &(spec){.w = 4, .h = 4, .table = 4, .opaque_size = 8});
    REQUIRE(tex_exr_open(path, &f, &info, err) == TEX_OK);
    tex_exr_close(f);
}

static void
case_many_tiles(const char *arg)
{
    (void)arg;
    /* 16384x16384 in 1x1 tiles: 2^28 chunks, a 2 GB chunk table, in a file
     * of 400 bytes. Refused quickly and without the allocation. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_spec(&(spec){.w = 16384, .h = 16384, .tile_w = 1, .tile_h = 1, .table = 4},
                TEX_ERR_CORRUPT, "truncated");
    /* The same with 100000 of its 2^24 table entries present. (OpenEXR
     * 3.1 itself reads past the end here before check_header() compares
     * the count with the file's size.) */
    expect_spec(&(spec){.w = 4096, .h = 4096, .tile_w = 1, .tile_h = 1, .table = 100000},
                TEX_ERR_CORRUPT, "truncated");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("%.3f s\n", secs);
    CHECK(secs < 10);
}

static void
case_unsupported(const char *arg)
{
    (void)arg;
    static const char *yc[] = {"BY", "RY", "Y", NULL}, *r[] = {"R", NULL};
    expect_spec(&(spec){.w = 64, .h = 64, .channels = yc, .tile_w = 64, .tile_h = 64, .table = 1},
                TEX_ERR_UNSUPPORTED, "luminance/chroma channels in a tiled file");
    expect_spec(&(spec){.w = 64, .h = 64, .channels = r, .sampling = 2, .table = 64},
                TEX_ERR_UNSUPPORTED, "channel 'R' is subsampled (2x2)");
    expect_spec(&(spec){.w = 8, .h = 8, .version = 3, .table = 8}, TEX_ERR_CORRUPT, "bad header");
}

/* ---- ${RT_TESTDATA}/exr-damaged ---- */

static double
seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* In the child: everything a texture system might do with the file.
 * Prints one summary line. Exit status: 1 if the contract broke (a
 * message that is not one line, names the file, or TEX_ERR_NOMEM);
 * otherwise REFUSED, READ (every level and tile read) or PARTLY. */
enum { REFUSED = 10, READ = 11, PARTLY = 12 };

static int
exercise(const char *path, const char *name)
{
    char         err[TEX_ERR_LEN] = "";
    tex_exr     *f;
    tex_exr_info in;
    tex_result   r = tex_exr_open(path, &f, &in, err);
    bool         ok = true;
#define MESSAGE_OK(res)                                                                            \
    ((res) == TEX_OK || ((res) != TEX_ERR_NOMEM && err[0] && !strchr(err, '\n') &&                 \
                         strlen(err) < TEX_ERR_LEN && !strstr(err, name)))
    if (r != TEX_OK) {
        ok = MESSAGE_OK(r);
        printf("refused (%s): %s", tex_result_str(r), err);
        return ok ? REFUSED : 1;
    }
    uint32_t levels_ok = 0, tiles_ok = 0, tiles_bad = 0;
    char     first[TEX_ERR_LEN] = "";
    for (uint32_t l = 0; l < in.nlevels; l++) {
        tex_image img;
        r = tex_exr_read_image(f, l, &img, err);
        ok &= MESSAGE_OK(r);
        levels_ok += r == TEX_OK;
        if (r != TEX_OK && !first[0])
            snprintf(first, sizeof first, "%s", err);
        tex_image_free(&img);
        if (!in.tiled)
            continue;
        uint32_t w, h;
        tex_exr_level_size(f, l, &w, &h);
        size_t bytes = (size_t)in.tile_width * in.tile_height * in.nchannels * 4;
        void  *tile = malloc(bytes);
        if (!tile)
            return 1;
        uint32_t nx = (w + in.tile_width - 1) / in.tile_width;
        uint32_t ny = (h + in.tile_height - 1) / in.tile_height;
        for (uint64_t k = 0; k < (uint64_t)nx * ny && k < 100000; k++) {
            r = tex_exr_read_tile(f, l, (uint32_t)(k % nx), (uint32_t)(k / nx), tile, err);
            ok &= MESSAGE_OK(r);
            tiles_ok += r == TEX_OK;
            tiles_bad += r != TEX_OK;
            if (r != TEX_OK && !first[0])
                snprintf(first, sizeof first, "%s", err);
        }
        free(tile);
    }
#undef MESSAGE_OK
    printf("opened %ux%u %s, %u/%u level(s) read", in.width, in.height,
           in.tiled ? "tiled" : "scanline", levels_ok, in.nlevels);
    if (in.tiled)
        printf(", tiles %u read %u failed", tiles_ok, tiles_bad);
    if (first[0])
        printf(": %s", first);
    tex_exr_close(f);
    return !ok ? 1 : levels_ok == in.nlevels && tiles_bad == 0 ? READ : PARTLY;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
case_damaged(const char *arg)
{
    struct stat st;
    if (!arg || stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("skipped: no test data folder at %s\n", arg ? arg : "(none given)");
        exit(TEX_TEST_SKIP);
    }
    DIR *d = opendir(arg);
    REQUIRE(d);
    char         **names = NULL;
    size_t         n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "README", 6) ||
            !strncmp(e->d_name, "LICENSE", 7))
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        REQUIRE(names && (names[n] = strdup(e->d_name)));
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);

    const char *errfile = tex_test_path("child-stderr.txt");
    double      slowest[3] = {0};
    const char *slow_name[3] = {"", "", ""};
    int         count[3] = {0}; /* REFUSED, READ, PARTLY */
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", arg, names[i]);
        printf("%-80s ", names[i]);
        fflush(stdout);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int fd = open(errfile, O_CREAT | O_TRUNC | O_WRONLY, 0600);
            if (fd < 0 || dup2(fd, 2) != 2)
                _exit(3);
#ifndef __SANITIZE_ADDRESS__
            /* Outside ASan (which reserves terabytes of address space), a
             * ceiling for the machine's sake: the largest image the limits
             * allow is 4 GiB. */
            struct rlimit rl = {.rlim_cur = (rlim_t)6 << 30, .rlim_max = (rlim_t)6 << 30};
            setrlimit(RLIMIT_AS, &rl);
#endif
            alarm(20);
            int rc = exercise(path, names[i]);
            fflush(stdout);
            _exit(rc);
        }
        int           status;
        struct rusage ru;
        REQUIRE(wait4(pid, &status, 0, &ru) == pid);
        double secs = seconds_since(&t0);
        printf(" [%.2f s, %ld MB]\n", secs, ru.ru_maxrss / 1024);
        size_t         nerr;
        unsigned char *text = tex_test_file_read(errfile, &nerr);
        if (WIFSIGNALED(status)) {
            RT_CHECK_FAIL_("%s: %s", names[i],
                           WTERMSIG(status) == SIGALRM ? "still running after 20 s"
                                                       : strsignal(WTERMSIG(status)));
        } else if (WEXITSTATUS(status) < REFUSED || WEXITSTATUS(status) > PARTLY) {
            RT_CHECK_FAIL_("%s: the contract failed (exit %d)", names[i], WEXITSTATUS(status));
        } else {
            count[WEXITSTATUS(status) - REFUSED]++;
        }
        if (nerr) {
            RT_CHECK_FAIL_("%s: printed on stderr: %.*s", names[i],
                           (int)(nerr > 2000 ? 2000 : nerr), (const char *)text);
        }
        free(text);
        for (int k = 0; k < 3; k++) {
            if (secs > slowest[k]) {
                for (int m = 2; m > k; m--) {
                    slowest[m] = slowest[m - 1];
                    slow_name[m] = slow_name[m - 1];
                }
                slowest[k] = secs;
                slow_name[k] = names[i];
                break;
            }
        }
    }
    printf("%zu files: %d refused at open, %d read whole, %d opened with damaged pixels\n", n,
           count[0], count[1], count[2]);
    printf("slowest: %s %.2f s, %s %.2f s, %s %.2f s\n", slow_name[0], slowest[0], slow_name[1],
           slowest[1], slow_name[2], slowest[2]);
    /* The folder as shipped (../shared/testdata/exr-damaged), and what the
     * readers make of it: a reader that refused every damaged file at open
     * would keep the contract above and lose what it is for, reading what
     * can be read (76, 1 and 18 with Debian 12's OpenEXR 3.1; the bounds
     * leave a library update room). */
    CHECK_EQ_INT((int)n, 95);
    CHECK(count[1] >= 1);
    CHECK(count[2] >= 15);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static const rt_test_case cases[] = {
    {"missing", case_missing},
    {"directory", case_directory},
    {"empty", case_empty},
    {"garbage", case_garbage},
    {"truncated", case_truncated},
    {"truncated_tiles", case_truncated_tiles},
    {"too_large", case_too_large},
    {"huge_attribute", case_huge_attribute},
    {"many_tiles", case_many_tiles},
    {"unsupported", case_unsupported},
    {"damaged", case_damaged},
    {"damaged_zip_tile", case_damaged_zip_tile},
    {"damaged_zip_lines", case_damaged_zip_lines},
    {"shrunk_after_open", case_shrunk_after_open},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
