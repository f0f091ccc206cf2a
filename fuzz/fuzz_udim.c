/* Fuzz target: UDIM name resolution in the texture system. A name made
 * from the input (a "<UDIM>" pattern or not, of any length and bytes) is
 * looked up at points and footprints from the input, with filters, wraps
 * and channels from the input, in a folder that holds a few real UDIM
 * tiles. Checks: every lookup writes finite values when its coordinates
 * are finite, and every report is one line. */
#define _GNU_SOURCE /* mkdtemp */
#include "fuzz_input.h"
#include "tex_image.h"
#include "texture.h"
#include "ustring.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_LOOKUPS 8
#define FUZZ_MAX_NAME    2048 /* past the texture system's 1024-byte resolved name */

static char dir[64];
/* Tiles 1001, 1002 and 1011: u 0 and 1 of row v 0, u 0 of row v 1. */
static const struct {
    unsigned tile, size, nchannels;
} tiles[] = {{1001, 2, 3}, {1002, 5, 4}, {1011, 1, 1}};

static void
remove_dir(void)
{
    char path[128];
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        snprintf(path, sizeof path, "%s/t.%u.png", dir, tiles[i].tile);
        unlink(path);
    }
    rmdir(dir);
}

static void
make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%.40s/fuzz-udim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        fuzz_fail("cannot make a folder for the UDIM tiles");
    atexit(remove_dir);
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        tex_image img;
        char      err[TEX_ERR_LEN], path[128];
        if (tex_image_alloc(&img, tiles[i].size, tiles[i].size, tiles[i].nchannels, TEX_TYPE_U8,
                            err) != TEX_OK)
            fuzz_fail(err);
        for (size_t b = 0; b < tex_image_bytes(&img); b++)
            ((uint8_t *)img.pixels)[b] = (uint8_t)(b * 37 + tiles[i].tile);
        snprintf(path, sizeof path, "%s/t.%u.png", dir, tiles[i].tile);
        if (tex_png_write(path, &img, err) != TEX_OK)
            fuzz_fail(err);
        tex_image_free(&img);
    }
}

static void
report(void *ctx, const char *name, const char *reason)
{
    (void)ctx;
    (void)name;
    fuzz_check_err(reason, TEX_ERR_LEN); /* a reason is one of the texture system's lines */
}

/* The name to look up: the real pattern, or one with parts from the input
 * around and inside it. */
static char *
make_name(fuzz_input *in)
{
    char *mid = fuzz_string(in, FUZZ_MAX_NAME, NULL);
    char *name = malloc(FUZZ_MAX_NAME + 128);
    if (!mid || !name) {
        free(mid);
        free(name);
        return NULL;
    }
    switch (fuzz_u8(in) % 4) {
    case 0:
        snprintf(name, FUZZ_MAX_NAME + 128, "%s/t.<UDIM>.png", dir);
        break;
    case 1:
        snprintf(name, FUZZ_MAX_NAME + 128, "%s/t.<UDIM>%s", dir, mid);
        break;
    case 2:
        snprintf(name, FUZZ_MAX_NAME + 128, "%s/%s", dir, mid);
        break;
    default:
        snprintf(name, FUZZ_MAX_NAME + 128, "%s", mid);
        break;
    }
    free(mid);
    return name;
}

static void
lookups(fuzz_input *in, tex_system *ts, tex_thread *tc, ustr name)
{
    unsigned n = fuzz_range(in, 1, FUZZ_MAX_LOOKUPS);
    for (unsigned i = 0; i < n; i++) {
        float      s = fuzz_float(in), t = fuzz_float(in);
        tex_derivs d = {fuzz_float(in), fuzz_float(in), fuzz_float(in), fuzz_float(in)};
        tex_opts   o = {.filter = (tex_filter)(fuzz_u8(in) % 4),
                        .swrap = (tex_wrap)(fuzz_u8(in) % 4),
                        .twrap = (tex_wrap)(fuzz_u8(in) % 4),
                        .first_channel = fuzz_range(in, 0, 5),
                        .nchannels = fuzz_range(in, 0, 5),
                        .fill = {0.25f, 0.5f, 0.75f, 1},
                        .raw = fuzz_u8(in) & 1,
                        .max_anisotropy = fuzz_range(in, 0, 64)};
        float      out[4] = {0};
        tex_lookup(ts, tc, name, s, t, &d, &o, out);
        bool finite = isfinite(s) && isfinite(t) && isfinite(d.dsdx) && isfinite(d.dtdx) &&
                      isfinite(d.dsdy) && isfinite(d.dtdy);
        unsigned nout = o.nchannels && o.nchannels <= 4 ? o.nchannels : 4;
        for (unsigned c = 0; finite && c < nout; c++)
            if (!isfinite(out[c]))
                fuzz_fail("a lookup at finite coordinates gave a value that is not finite");
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        make_dir();
    fuzz_input  in = {data, size};
    ustr_table *strings = NULL;
    tex_system *ts = NULL;
    tex_thread *tc = NULL;
    char       *name = make_name(&in);
    if (name && ustr_table_create(NULL, &strings) == USTR_OK &&
        tex_system_create(&(tex_config){.max_memory_mb = 1, .strings = strings, .report = report},
                          &ts, NULL) == TEX_OK &&
        tex_thread_create(ts, &tc) == TEX_OK) {
        ustr u = ustr_table_intern_cstr(strings, name);
        if (u)
            lookups(&in, ts, tc, u);
    }
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
    ustr_table_destroy(strings);
    free(name);
    return 0;
}
