/* texture-bench --cold (texture_cold.h).
 *
 * Ours, per round: a new texture system, then for each file in turn, on
 * one thread, tex_file_open() and one closest-filter lookup per tile of
 * every MIP level, so that the whole file is decoded, its levels built and
 * every tile brought into the cache: the most of a file a cold render can
 * touch (a render's first pass touches most of level 0 and the levels
 * below it where surfaces recede). The floor, per round: each file
 * decoded by libpng or libjpeg alone into one buffer, freed
 * (decode_floor.h). Both read the files from the page cache: every file is
 * read by both before the first timed round. */
#define _POSIX_C_SOURCE 200809L

#include "texture_cold.h"

#include "decode_floor.h"
#include "texture.h"
#include "tool.h"
#include "ustring.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { COLD_MAX_ROUNDS = 63 };

typedef struct cold_file {
    const char   *path;
    ustr          name;
    tex_file_info info;
    uint64_t      floor_sum; /* decode_floor_checksum() of the floor's decode */
    size_t        bytes;     /* level 0 decoded */
} cold_file;

/* One floor round: every file decoded, then freed; the seconds of the
 * decodes alone. Each free is outside the clock, as ours keeps its tiles
 * and frees them (tex_system_destroy()) after its clock stops; freed
 * before the next decode all the same, so the floor reuses its heap as it
 * always has. */
static double
floor_round(cold_file *files, unsigned n)
{
    char   err[DECODE_FLOOR_ERR_LEN];
    double secs = 0;
    for (unsigned i = 0; i < n; i++) {
        decode_floor_image img;
        double             t0 = tool_now();
        if (decode_floor_file(files[i].path, &img, err) != 0)
            tool_die("%s: %s", files[i].path, err);
        secs += tool_now() - t0;
        decode_floor_free(&img);
    }
    return secs;
}

static void
lookup_or_die(tex_system *ts, tex_thread *tc, const cold_file *f, float s, float t,
              const tex_derivs *d, const tex_opts *o, float rgba[4])
{
    if (tex_lookup(ts, tc, f->name, s, t, d, o, rgba) != TEX_OK)
        tool_die("%s: a lookup failed (see the message above)", f->path);
}

/* One lookup at each tile of every level: derivatives of 2^l texels of
 * level 0 pick level l exactly (closest filter). */
static void
touch_every_tile(tex_system *ts, tex_thread *tc, const cold_file *f, bool raw)
{
    const tex_file_info *in = &f->info;
    tex_opts             o = {.filter = TEX_FILTER_CLOSEST, .nchannels = 4, .raw = raw};
    float                rgba[4];
    for (uint32_t l = 0; l < in->nlevels; l++) {
        uint32_t w = in->width >> l ? in->width >> l : 1, h = in->height >> l ? in->height >> l : 1;
        float    step = ldexpf(1.0f, (int)l);
        tex_derivs d = {step / (float)in->width, 0, 0, step / (float)in->height};
        for (uint32_t y = 0; y < h; y += in->tile_height)
            for (uint32_t x = 0; x < w; x += in->tile_width)
                lookup_or_die(ts, tc, f, (x + 0.5f) / (float)w, (y + 0.5f) / (float)h, &d, &o,
                              rgba);
    }
}

static tex_system *
system_new(size_t max_memory_mb)
{
    char        err[TEX_ERR_LEN];
    tex_config  cfg = {.max_memory_mb = max_memory_mb};
    tex_system *ts;
    if (tex_system_create(&cfg, &ts, err) != TEX_OK)
        tool_die("cannot create a texture system: %s", err);
    return ts;
}

/* One round of ours: a new system, every file's first touch; seconds. The
 * last round prints the system's statistics. */
static double
ours_round(const texture_cold_opts *o, cold_file *files, bool last)
{
    double      t0 = tool_now();
    tex_system *ts = system_new(o->max_memory_mb);
    tex_thread *tc;
    if (tex_thread_create(ts, &tc) != TEX_OK)
        tool_die("out of memory");
    for (unsigned i = 0; i < o->nfiles; i++) {
        if (tex_file_open(ts, tc, files[i].name, o->raw) != TEX_OK)
            tool_die("%s: cannot be opened (see the message above)", files[i].path);
        touch_every_tile(ts, tc, &files[i], o->raw);
    }
    tex_thread_destroy(tc);
    double secs = tool_now() - t0;
    if (last) {
        tex_stats s;
        tex_system_stats(ts, &s);
        tex_stats_print(&s, "  ", stderr);
    }
    tex_system_destroy(ts);
    return secs;
}

/* Reads every file once both ways before timing: the page cache then holds
 * them, the floor's checksums and sizes are known, and so is each file's
 * shape (from a system of its own). */
static void
prepare(const texture_cold_opts *o, cold_file *files)
{
    char        err[DECODE_FLOOR_ERR_LEN];
    tex_system *ts = system_new(o->max_memory_mb);
    for (unsigned i = 0; i < o->nfiles; i++) {
        cold_file         *f = &files[i];
        decode_floor_image img;
        *f = (cold_file){.path = o->files[i], .name = ustr_intern_cstr(o->files[i])};
        if (decode_floor_file(f->path, &img, err) != 0)
            tool_die("%s: %s", f->path, err);
        f->floor_sum = decode_floor_checksum(&img);
        f->bytes = decode_floor_bytes(&img);
        decode_floor_free(&img);
        if (tex_file_info_get(ts, f->name, &f->info) != TEX_OK)
            tool_die("%s: cannot be opened (see the message above)", f->path);
    }
    tex_system_destroy(ts);
}

/* Level 0 of one file read back texel by texel through a raw system (the
 * stored values, no sRGB decoding), folded as decode_floor_checksum()
 * folds the floor's samples. */
static uint64_t
read_back(tex_system *ts, tex_thread *tc, const cold_file *f)
{
    /* Where each stored channel lands in a lookup's RGBA (grey fills R, G
     * and B; its alpha is A). */
    static const int     at[4][4] = {{0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
    const tex_file_info *in = &f->info;
    float                scale = in->type == TEX_TYPE_U16 ? 65535.0f : 255.0f, rgba[4];
    tex_opts             o = {.filter = TEX_FILTER_CLOSEST, .nchannels = 4, .raw = true};
    uint64_t             h = DECODE_FLOOR_HASH0;
    for (uint32_t y = 0; y < in->height; y++)
        for (uint32_t x = 0; x < in->width; x++) {
            lookup_or_die(ts, tc, f, (x + 0.5f) / (float)in->width, (y + 0.5f) / (float)in->height,
                          NULL, &o, rgba);
            for (uint32_t c = 0; c < in->nchannels; c++)
                h = decode_floor_hash(h, (uint32_t)lrintf(rgba[at[in->nchannels - 1][c]] * scale));
        }
    return h;
}

/* A file's checksum folded into the run's, one half at a time. */
static uint64_t
fold64(uint64_t h, uint64_t v)
{
    return decode_floor_hash(decode_floor_hash(h, (uint32_t)v), (uint32_t)(v >> 32));
}

/* Both sides decoded the same pixels: the floor cannot do less work than
 * ours unnoticed. Ends the program where a file's checksums differ. */
static void
check_same_pixels(const texture_cold_opts *o, const cold_file *files)
{
    tex_system *ts = system_new(o->max_memory_mb);
    tex_thread *tc;
    uint64_t    ours = DECODE_FLOOR_HASH0, floor = DECODE_FLOOR_HASH0;
    if (tex_thread_create(ts, &tc) != TEX_OK)
        tool_die("out of memory");
    for (unsigned i = 0; i < o->nfiles; i++) {
        uint64_t h = read_back(ts, tc, &files[i]);
        if (h != files[i].floor_sum)
            tool_die("%s: level 0 read back (%016" PRIx64 ") differs from the floor's decode "
                     "(%016" PRIx64 ")",
                     files[i].path, h, files[i].floor_sum);
        ours = fold64(ours, h);
        floor = fold64(floor, files[i].floor_sum);
    }
    tex_thread_destroy(tc);
    tex_system_destroy(ts);
    fprintf(stderr, "  level 0 checksum: ours %016" PRIx64 ", floor %016" PRIx64 "\n", ours, floor);
}

void
texture_cold_run(const texture_cold_opts *o)
{
    cold_file *files = calloc(o->nfiles, sizeof *files);
    double     floor[COLD_MAX_ROUNDS], ours[COLD_MAX_ROUNDS], ratio[COLD_MAX_ROUNDS];
    int        rounds = o->rounds < COLD_MAX_ROUNDS ? o->rounds : COLD_MAX_ROUNDS;
    size_t     bytes = 0;
    if (!files)
        tool_die("out of memory");
    prepare(o, files);
    for (unsigned i = 0; i < o->nfiles; i++)
        bytes += files[i].bytes;
    double lo = 0, hi = 0;
    for (int r = 0; r < rounds; r++) {
        floor[r] = floor_round(files, o->nfiles);
        ours[r] = ours_round(o, files, r == rounds - 1);
        ratio[r] = ours[r] / floor[r];
        lo = r == 0 || ratio[r] < lo ? ratio[r] : lo;
        hi = r == 0 || ratio[r] > hi ? ratio[r] : hi;
        fprintf(stderr, "  round %d: floor %.4f s, ours %.4f s, ratio %.3f\n", r + 1, floor[r],
                ours[r], ratio[r]);
    }
    check_same_pixels(o, files);
    double a = tool_median(floor, rounds), s = tool_median(ours, rounds);
    printf("texture-bench cold files=%u bytes=%zu decode_secs=%.4f secs=%.4f ratio=%.3f "
           "spread=%.3f-%.3f\n",
           o->nfiles, bytes, a, s, s / a, lo, hi);
    fflush(stdout);
    free(files);
}
