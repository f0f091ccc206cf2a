/* sRGB by table (texture/tex_srgb_internal.h) against the functions it
 * stands for, tex_srgb_to_linear() and tex_linear_to_srgb(): every code's
 * decode, and the encode of every float where the tables decide it. */
#include "check.h"
#include "tex_file_testing.h"
#include "tex_image.h"
#include "tex_srgb_internal.h"
#include "texture.h"
#include "ustring.h"

#include <math.h>
#include <sys/wait.h>

/* Floats from lo to hi, every `step`-th one (by bits: all of them at 1). */
#define FOR_FLOATS(v, lo, hi, step)                                                                \
    for (uint32_t b_ = bits_of(lo), e_ = bits_of(hi); b_ <= e_; b_ += (step))                      \
        for (float v = float_of(b_), *once_ = &v; once_; once_ = NULL)

static uint32_t
bits_of(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static float
float_of(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static void
case_decode(const char *arg)
{
    (void)arg;
    tex__srgb_u8_init();
    tex__srgb_u16_init();
    for (int k = 0; k < 256; k++)
        CHECK(tex__srgb_u8[k] == tex_srgb_to_linear((float)k / 255.0f));
    int wrong = 0;
    for (int k = 0; k < 65536; k++)
        wrong += tex__srgb_u16[k] != tex_srgb_to_linear((float)k / 65535.0f);
    CHECK_EQ_INT(wrong, 0);
}

/* Every float above the knee, where the cells and thresholds decide the
 * code (70 million of them), and a sweep of those below it. */
static void
case_encode_u16(const char *arg)
{
    (void)arg;
    tex__srgb_u16_init();
    long wrong = 0, tested = 0;
    FOR_FLOATS(v, nextafterf(TEX__SRGB_KNEE, 1), 1.0f, 1)
    {
        long want = lrintf(tex_linear_to_srgb(v) * 65535.0f), got = tex__srgb_encode_u16(v);
        tested++;
        if (got != want && wrong++ < 5)
            RT_CHECK_FAIL_("%.9g encodes to %ld, %ld wanted", v, got, want);
    }
    FOR_FLOATS(v, 0.0f, TEX__SRGB_KNEE, 4099)
    {
        long want = lrintf(tex_linear_to_srgb(v) * 65535.0f), got = tex__srgb_encode_u16(v);
        tested++;
        if (got != want && wrong++ < 5)
            RT_CHECK_FAIL_("%.9g encodes to %ld, %ld wanted", v, got, want);
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK(tested > 70000000);
    CHECK_EQ_INT(tex__srgb_encode_u16(0.0f), 0);
    CHECK_EQ_INT(tex__srgb_encode_u16(1.0f), 65535);
}

/* The 8-bit encoder rounds by thresholds at the decodes of k + 0.5, which
 * is the reference's rounding except where the curve lands within a
 * thousandth of a code of a half (float error either way): every 16th
 * float in [0, 1]. */
static void
case_encode_u8(const char *arg)
{
    (void)arg;
    tex__srgb_u8_init();
    long wrong = 0, near_half = 0;
    FOR_FLOATS(v, 0.0f, 1.0f, 16)
    {
        float e = tex_linear_to_srgb(v) * 255.0f;
        long  want = lrintf(e), got = tex__srgb_encode_u8(v);
        if (got == want)
            continue;
        if (fabsf(e - floorf(e) - 0.5f) <= 1e-3f && labs(got - want) == 1)
            near_half++;
        else if (wrong++ < 5)
            RT_CHECK_FAIL_("%.9g encodes to %ld, %ld wanted", v, got, want);
    }
    CHECK_EQ_INT(wrong, 0);
    printf("%ld floats within a thousandth of a half rounded the other way\n", near_half);
}

/* Closest lookups at every texel of level 0 of a 16-bit sRGB file, each
 * channel exactly its code's decode. */
static void
lookups_match(tex_system *ts, tex_thread *tc, const char *path, const tex_image *img)
{
    ustr          name = ustr_intern_cstr(path);
    tex_file_info fi;
    REQUIRE(tex_file_info_get(ts, name, &fi) == TEX_OK);
    CHECK(fi.srgb);
    CHECK_EQ_INT(fi.type, TEX_TYPE_U16);
    tex_derivs d = {.dsdx = 1.0f / img->width, .dtdy = 1.0f / img->height};
    tex_opts   o = {.filter = TEX_FILTER_CLOSEST};
    int        wrong = 0;
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++) {
            float rgba[4];
            REQUIRE(tex_lookup(ts, tc, name, (x + 0.5f) / img->width, (y + 0.5f) / img->height, &d,
                               &o, rgba) == TEX_OK);
            for (uint32_t c = 0; c < 3; c++) {
                uint16_t code = ((const uint16_t *)img->pixels)[(y * img->width + x) * 3 + c];
                if (rgba[c] != tex_srgb_to_linear(code / 65535.0f) && wrong++ < 5)
                    RT_CHECK_FAIL_("%s (%u, %u) channel %u: code %u looked up as %.9g", path, x, y,
                                   c, code, rgba[c]);
            }
        }
    CHECK_EQ_INT(wrong, 0);
}

/* A lookup decodes a 16-bit sRGB texel by the table, which the file's
 * opening builds: a tiled .tx, looked up first, so that no MIP level made
 * in this process has built the table already, and a PNG, cut into tiles
 * here. */
static void
case_lookup_u16(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN], cmd[9000];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, 48, 40, 3, TEX_TYPE_U16, err) == TEX_OK);
    img.srgb = true;
    uint16_t *p = img.pixels;
    for (uint32_t i = 0; i < 48 * 40 * 3; i++)
        p[i] = (uint16_t)(i * 40503u); /* 5,760 codes spread over the range */
    p[0] = 0, p[1] = 65535;
    const char *png = tex_test_path("u16.png"), *tx = tex_test_path("u16.tx");
    REQUIRE(tex_png_write(png, &img, err) == TEX_OK);
    snprintf(cmd, sizeof cmd, "'%s' --tile 16 -o '%s' '%s' 2>/dev/null", MAKETX, tx, png);
    int s = system(cmd);
    REQUIRE(WIFEXITED(s) && WEXITSTATUS(s) == 0);
    tex_system *ts;
    tex_thread *tc;
    REQUIRE(tex_system_create(NULL, &ts, NULL) == TEX_OK);
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    lookups_match(ts, tc, tx, &img);
    lookups_match(ts, tc, png, &img);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
    tex_image_free(&img);
}

/* A 16-bit sample decoded as a lookup decodes it. */
static float
decoded(uint16_t code, bool srgb)
{
    return srgb ? tex_srgb_to_linear(code / 65535.0f) : code * (1.0f / 65535.0f);
}

/* For files of 1 to 4 channels of `type` (8 or 16 bits), w x h, every
 * sample a different scramble of its index, written as STEM<nc>.png in the
 * test folder: `wrong` counts the lookups of one file, as colour and as
 * data (raw), that are not what they should be; each must count none. */
static void
each_scrambled_png(uint32_t w, uint32_t h, tex_type type, const char *stem,
                   int (*wrong)(tex_system *ts, tex_thread *tc, const tex_image *img,
                                const char *name, bool raw))
{
    char        err[TEX_ERR_LEN];
    tex_system *ts;
    tex_thread *tc;
    REQUIRE(tex_system_create(NULL, &ts, NULL) == TEX_OK);
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    for (uint32_t nc = 1; nc <= 4; nc++) {
        tex_image img;
        REQUIRE(tex_image_alloc(&img, w, h, nc, type, err) == TEX_OK);
        for (uint32_t i = 0; i < w * h * nc; i++) {
            uint32_t v = i * 2654435761u;
            if (type == TEX_TYPE_U16)
                ((uint16_t *)img.pixels)[i] = (uint16_t)(v >> 7);
            else
                ((uint8_t *)img.pixels)[i] = (uint8_t)(v >> 11);
        }
        char name[32];
        snprintf(name, sizeof name, "%s%u.png", stem, nc);
        REQUIRE(tex_png_write(tex_test_path(name), &img, err) == TEX_OK);
        for (int raw = 0; raw < 2; raw++)
            CHECK_EQ_INT(wrong(ts, tc, &img, name, raw), 0);
        tex_image_free(&img);
    }
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
}

/* Whether channel c of an nc-channel file reads through the sRGB curve:
 * not where the lookup is raw, and never alpha (the last of 2 or 4). */
static bool
channel_srgb(uint32_t nc, uint32_t c, bool raw)
{
    return !raw && !((nc == 2 || nc == 4) && c == nc - 1);
}

/* Whether a lookup's rgba is a file's nc channel values ch as RGBA (grey
 * gives R, G and B; a missing alpha is the fill's, fill_a), bit for bit;
 * the first three that are not are reported, `wrong` being those so far. */
static bool
rgba_is(const float rgba[4], const float ch[4], uint32_t nc, float fill_a, const char *name,
        bool raw, uint32_t x, uint32_t y, int wrong)
{
    float want[4] = {ch[0], ch[nc <= 2 ? 0 : 1], ch[nc <= 2 ? 0 : 2],
                     nc == 2 || nc == 4 ? ch[nc - 1] : fill_a};
    if (memcmp(rgba, want, sizeof want) == 0)
        return true;
    if (wrong < 3)
        RT_CHECK_FAIL_("%s%s at (%u, %u): %.9g %.9g %.9g %.9g, not %.9g %.9g %.9g %.9g", name,
                       raw ? " raw" : "", x, y, rgba[0], rgba[1], rgba[2], rgba[3], want[0],
                       want[1], want[2], want[3]);
    return false;
}

/* Bilinear lookups on 16-bit files of 1 to 4 channels, colour and data, at
 * every tap of level 0: the tap inside a tile (the wide tap, tex_sample_internal.h)
 * and across a tile's edge (x0 = 63, the general path) give exactly the
 * general path's decode and blend. */
static int
bilinear_u16_wrong(tex_system *ts, tex_thread *tc, const tex_image *img, const char *name, bool raw)
{
    const float     fx = 0.375f, fy = 0.625f;
    const uint16_t *p = img->pixels;
    uint32_t        w = img->width, h = img->height, nc = img->nchannels;
    tex_opts        o = {.filter = TEX_FILTER_BILINEAR, .raw = raw, .fill = {0, 0, 0, 0.25f}};
    ustr            file = ustr_intern_cstr(tex_test_path(name));
    int             wrong = 0;
    for (uint32_t y0 = 0; y0 + 1 < h; y0++)
        for (uint32_t x0 = 0; x0 + 1 < w; x0++) {
            float rgba[4], ch[4];
            REQUIRE(tex_lookup(ts, tc, file, (x0 + fx + 0.5f) / w, (y0 + fy + 0.5f) / h, NULL, &o,
                               rgba) == TEX_OK);
            for (uint32_t c = 0; c < nc; c++) {
                bool     srgb = channel_srgb(nc, c, raw);
                uint32_t at = (y0 * w + x0) * nc + c;
                float    a = decoded(p[at], srgb), b = decoded(p[at + nc], srgb);
                float    d = decoded(p[at + w * nc], srgb), e = decoded(p[at + w * nc + nc], srgb);
                float    top = a + (b - a) * fx, bottom = d + (e - d) * fx;
                ch[c] = top + (bottom - top) * fy;
            }
            wrong += !rgba_is(rgba, ch, nc, o.fill[3], name, raw, x0, y0, wrong);
        }
    return wrong;
}

static void
case_bilinear_u16(const char *arg)
{
    (void)arg;
    each_scrambled_png(80, 20, TEX_TYPE_U16, "bilinear", bilinear_u16_wrong);
}

/* Closest lookups on 8-bit files of 1 to 4 channels, colour and data, at
 * every texel of level 0 (the general decode, decode_texel()): colour
 * channels of a colour file decoded as sRGB, alpha (the last of 2 or 4)
 * and every channel of a data file as stored over 255. */
static int
closest_u8_wrong(tex_system *ts, tex_thread *tc, const tex_image *img, const char *name, bool raw)
{
    const uint8_t *p = img->pixels;
    uint32_t       w = img->width, h = img->height, nc = img->nchannels;
    tex_derivs     d = {.dsdx = 1.0f / w, .dtdy = 1.0f / h};
    tex_opts       o = {.filter = TEX_FILTER_CLOSEST, .raw = raw, .fill = {0, 0, 0, 0.25f}};
    ustr           file = ustr_intern_cstr(tex_test_path(name));
    int            wrong = 0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            float rgba[4], ch[4];
            REQUIRE(tex_lookup(ts, tc, file, (x + 0.5f) / w, (y + 0.5f) / h, &d, &o, rgba) ==
                    TEX_OK);
            for (uint32_t c = 0; c < nc; c++) { /* as texture/srgb.c and decode() */
                uint8_t code = p[(y * w + x) * nc + c];
                bool    srgb = channel_srgb(nc, c, raw);
                ch[c] = srgb ? tex_srgb_to_linear(code / 255.0f) : code * (1.0f / 255.0f);
            }
            wrong += !rgba_is(rgba, ch, nc, o.fill[3], name, raw, x, y, wrong);
        }
    return wrong;
}

static void
case_closest_u8(const char *arg)
{
    (void)arg;
    each_scrambled_png(80, 12, TEX_TYPE_U8, "closest", closest_u8_wrong);
}

/* A 1x1 16-bit sRGB PNG is one level, so no MIP chain builds the table,
 * and a constant file, its texel decoded once as it opens: the opening
 * itself must build it (cache_cut.c). */
static void
case_constant_u16(const char *arg)
{
    (void)arg;
    char      err[TEX_ERR_LEN];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, 1, 1, 3, TEX_TYPE_U16, err) == TEX_OK);
    img.srgb = true;
    uint16_t *p = img.pixels;
    p[0] = 1000, p[1] = 30000, p[2] = 65535;
    const char *png = tex_test_path("one.png");
    REQUIRE(tex_png_write(png, &img, err) == TEX_OK);
    tex_system *ts;
    tex_thread *tc;
    REQUIRE(tex_system_create(NULL, &ts, NULL) == TEX_OK);
    REQUIRE(tex_thread_create(ts, &tc) == TEX_OK);
    lookups_match(ts, tc, png, &img);
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
    tex_image_free(&img);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"decode", case_decode},
        {"encode_u16", case_encode_u16},
        {"encode_u8", case_encode_u8},
        {"lookup_u16", case_lookup_u16},
        {"bilinear_u16", case_bilinear_u16},
        {"closest_u8", case_closest_u8},
        {"constant_u16", case_constant_u16},
        {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
