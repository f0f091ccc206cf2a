/* TIFF through libtiff (tex_tiff.h): reading tiles and rows, writing tiled
 * MIP-mapped files. */
#include "tex_io_internal.h"
#include "tex_tiff.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

/* OpenImageIO keeps its attributes as "oiio:Name=value" words in the
 * ImageDescription; this one says how integer samples are encoded. */
#define COLORSPACE_KEY "oiio:ColorSpace="

/* ---- libtiff's messages, caught per file ---- */

#define TIFF_NAME "tiff" /* the file's name, to libtiff */

typedef struct tiff_msg {
    char text[TEX_ERR_LEN]; /* the first error since it was cleared */
} tiff_msg;

/* format: fmt is libtiff's printf format (clang checks vsnprintf's use). */
__attribute__((format(printf, 4, 0))) static int
on_error(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)t;
    (void)module;
    tiff_msg *m = user;
    if (!m->text[0]) {
        char line[TEX_ERR_LEN];
        vsnprintf(line, sizeof line, fmt, ap);
        /* Some messages start with the name we gave libtiff: the caller
         * names the file. */
        bool named = strncmp(line, TIFF_NAME ": ", sizeof TIFF_NAME + 1) == 0;
        tex__io_message(m->text, "", line + (named ? sizeof TIFF_NAME + 1 : 0));
    }
    return 1; /* handled: libtiff prints nothing */
}

static int
on_warning(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)t, (void)user, (void)module, (void)fmt, (void)ap;
    return 1; /* unknown tags and the like: nothing a reader must hear */
}

/* libtiff over fd, its messages into m, no allocation over the chunk
 * limit. On success fd is the TIFF's (TIFFClose() closes it); on failure it
 * is still the caller's. */
static TIFF *
tiff_open_fd(int fd, const char *mode, tiff_msg *m)
{
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (!o)
        return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, m);
    TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, m);
    TIFFOpenOptionsSetMaxSingleMemAlloc(o, (tmsize_t)TEX_TIFF_MAX_CHUNK_BYTES);
    TIFF *t = TIFFFdOpenExt(fd, TIFF_NAME, mode, o);
    TIFFOpenOptionsFree(o);
    return t;
}

/* err = prefix + libtiff's reason (or `otherwise` when it gave none). */
static void
say(char err[TEX_ERR_LEN], tiff_msg *m, const char *prefix, const char *otherwise)
{
    tex__io_message(err, prefix, m->text[0] ? m->text : otherwise);
    m->text[0] = '\0';
}

/* ---- reading ---- */

/* What one directory holds, as far as we read it. */
typedef struct dir_shape {
    uint32_t width, height, tile_width, tile_height; /* tiles 0 in strips */
    uint32_t nchannels;
    tex_type type;
    bool     srgb;
    bool     associated; /* ExtraSamples: the alpha is associated (premultiplied) */
} dir_shape;

struct tex_tiff {
    TIFF         *t;
    tiff_msg      msg;
    tex_tiff_info info;
    uint32_t      current;    /* the level libtiff's directory is at */
    size_t        tile_bytes; /* decoded bytes of a whole tile */
    uint64_t      file_bytes; /* its size when opened */
    uint64_t      ntiles;     /* over the levels found */
    struct {
        uint64_t offset; /* of its directory */
        uint32_t width, height;
    } levels[TEX_TIFF_MAX_LEVELS];
};

static const char *
photometric_name(uint16_t p)
{
    switch (p) {
    case PHOTOMETRIC_MINISWHITE:
        return "MinIsWhite";
    case PHOTOMETRIC_PALETTE:
        return "palette";
    case PHOTOMETRIC_SEPARATED:
        return "separated (CMYK)";
    case PHOTOMETRIC_YCBCR:
        return "YCbCr";
    case PHOTOMETRIC_CIELAB:
    case PHOTOMETRIC_ICCLAB:
    case PHOTOMETRIC_ITULAB:
        return "Lab";
    case PHOTOMETRIC_LOGL:
    case PHOTOMETRIC_LOGLUV:
        return "LogLuv";
    default:
        return NULL;
    }
}

/* The sample type of `bits`-bit samples of `format`; false if unsupported. */
static bool
sample_type(uint16_t bits, uint16_t format, tex_type *type)
{
    if (format == SAMPLEFORMAT_UINT && (bits == 8 || bits == 16))
        *type = bits == 8 ? TEX_TYPE_U8 : TEX_TYPE_U16;
    else if (format == SAMPLEFORMAT_IEEEFP && (bits == 16 || bits == 32))
        *type = bits == 16 ? TEX_TYPE_HALF : TEX_TYPE_FLOAT;
    else
        return false;
    return true;
}

/* The current directory's shape, or why we cannot read it. */
static tex_result
dir_read(TIFF *t, dir_shape *d, char err[TEX_ERR_LEN])
{
    uint16_t spp = 1, bits = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
    uint16_t photometric, compression = COMPRESSION_NONE;
    *d = (dir_shape){0};
    TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &d->width);
    TIFFGetField(t, TIFFTAG_IMAGELENGTH, &d->height);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
    if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric))
        photometric = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    const char *named = photometric_name(photometric);
    tex_result  r = tex_check_size(d->width, d->height, err);
    if (r != TEX_OK)
        return r;
    if (d->width == 0 || d->height == 0) {
        snprintf(err, TEX_ERR_LEN, "bad header: %ux%u pixels", d->width, d->height);
        return TEX_ERR_CORRUPT;
    }
    r = TEX_ERR_UNSUPPORTED;
    if (spp < 1 || spp > 4)
        snprintf(err, TEX_ERR_LEN, "%u samples per pixel are not supported (1 to 4 are)", spp);
    else if (!sample_type(bits, format, &d->type))
        snprintf(err, TEX_ERR_LEN, "%u-bit %s samples are not supported", bits,
                 format == SAMPLEFORMAT_IEEEFP ? "floating-point"
                 : format == SAMPLEFORMAT_INT  ? "signed"
                 : format == SAMPLEFORMAT_UINT ? "unsigned"
                                               : "other");
    else if (planar != PLANARCONFIG_CONTIG)
        snprintf(err, TEX_ERR_LEN, "separate sample planes are not supported");
    else if (named)
        snprintf(err, TEX_ERR_LEN, "%s images are not supported", named);
    else if (photometric != PHOTOMETRIC_RGB && photometric != PHOTOMETRIC_MINISBLACK)
        snprintf(err, TEX_ERR_LEN, "photometric interpretation %u is not supported", photometric);
    else if ((photometric == PHOTOMETRIC_RGB) != (spp >= 3))
        snprintf(err, TEX_ERR_LEN, "%u samples of %s are not supported", spp,
                 spp >= 3 ? "grey" : "RGB");
    else if (!TIFFIsCODECConfigured(compression))
        snprintf(err, TEX_ERR_LEN, "compression %u is not supported by this libtiff", compression);
    else
        r = TEX_OK;
    if (r != TEX_OK)
        return r;
    d->nchannels = spp;
    const char *desc = NULL, *cs = NULL;
    if (TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc)
        cs = strstr(desc, COLORSPACE_KEY);
    d->srgb = (d->type == TEX_TYPE_U8 || d->type == TEX_TYPE_U16) &&
              (!cs || strncasecmp(cs + strlen(COLORSPACE_KEY), "sRGB", 4) == 0);
    uint16_t  nextra = 0;
    uint16_t *extra = NULL;
    d->associated = (spp == 2 || spp == 4) &&
                    TIFFGetField(t, TIFFTAG_EXTRASAMPLES, &nextra, &extra) && nextra >= 1 &&
                    extra && extra[0] == EXTRASAMPLE_ASSOCALPHA;
    if (!TIFFIsTiled(t))
        return TEX_OK;
    TIFFGetField(t, TIFFTAG_TILEWIDTH, &d->tile_width);
    TIFFGetField(t, TIFFTAG_TILELENGTH, &d->tile_height);
    uint64_t pixels = (uint64_t)d->tile_width * d->tile_height;
    if (pixels == 0) {
        snprintf(err, TEX_ERR_LEN, "bad header: %ux%u tiles", d->tile_width, d->tile_height);
        return TEX_ERR_CORRUPT;
    }
    if (pixels > TEX_TIFF_MAX_TILE_PIXELS) {
        snprintf(err, TEX_ERR_LEN, "%ux%u tiles are over the limit of %u pixels", d->tile_width,
                 d->tile_height, TEX_TIFF_MAX_TILE_PIXELS);
        return TEX_ERR_TOO_LARGE;
    }
    if (pixels * spp * tex_type_size(d->type) > TEX_TIFF_MAX_CHUNK_BYTES) {
        snprintf(err, TEX_ERR_LEN, "%ux%u tiles of %u samples are over the limit of %llu bytes",
                 d->tile_width, d->tile_height, spp, (unsigned long long)TEX_TIFF_MAX_CHUNK_BYTES);
        return TEX_ERR_TOO_LARGE;
    }
    return TEX_OK;
}

/* Whether `size` is `above` halved, rounded down or up, at least 1. */
static bool
halved(uint32_t size, uint32_t above)
{
    return size == (above / 2 ? above / 2 : 1) || size == (above + 1) / 2;
}

/* Tiles of a level of w x h pixels. */
static uint64_t
tiles_of(const tex_tiff *f, uint32_t w, uint32_t h)
{
    uint64_t tw = f->info.tile_width, th = f->info.tile_height;
    return ((w + tw - 1) / tw) * ((h + th - 1) / th);
}

/* Whether `tiles` more fit in the file: each tile needs an offset and a
 * byte count in its directory, at least 4 bytes (two SHORTs). A claim of
 * more is a lie that would make the cache reserve a table for them (a
 * 16-byte slot a tile: 4 GiB for 1x1 tiles of a 16384² image in 638 bytes). */
static bool
tiles_fit(const tex_tiff *f, uint64_t tiles)
{
    return f->ntiles + tiles <= f->file_bytes / 4;
}

/* Follows the directories after level 0 while they are its MIP levels. */
static void
levels_find(tex_tiff *f, const dir_shape *top)
{
    f->info.nlevels = 1;
    while (f->info.nlevels < TEX_TIFF_MAX_LEVELS && TIFFReadDirectory(f->t)) {
        dir_shape d;
        char      ignored[TEX_ERR_LEN];
        uint32_t  l = f->info.nlevels;
        if (dir_read(f->t, &d, ignored) != TEX_OK || d.tile_width != top->tile_width ||
            d.tile_height != top->tile_height || d.nchannels != top->nchannels ||
            d.type != top->type || !halved(d.width, f->levels[l - 1].width) ||
            !halved(d.height, f->levels[l - 1].height) ||
            !tiles_fit(f, tiles_of(f, d.width, d.height)))
            break;
        f->ntiles += tiles_of(f, d.width, d.height);
        f->levels[l].offset = TIFFCurrentDirOffset(f->t);
        f->levels[l].width = d.width;
        f->levels[l].height = d.height;
        f->info.nlevels++;
    }
    f->msg.text[0] = '\0'; /* a damaged directory past the chain only ends it */
    f->current = UINT32_MAX;
}

tex_result
tex_tiff_open(const char *path, tex_tiff **out, tex_tiff_info *info, char err[TEX_ERR_LEN])
{
    *out = NULL;
    tex_tiff *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    int         fd = tex_open_regular(path, err);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) {
            snprintf(err, TEX_ERR_LEN, "cannot read: %s", strerror(errno));
            close(fd);
        }
        free(f);
        return TEX_ERR_OPEN;
    }
    f->file_bytes = (uint64_t)st.st_size;
    unsigned char magic[4] = {0};
    if (pread(fd, magic, 4, 0) != 4 || !tex__tiff_magic(magic)) {
        close(fd);
        free(f);
        snprintf(err, TEX_ERR_LEN, "not a TIFF file");
        return TEX_ERR_FORMAT;
    }
    /* m: never map the file (one truncated under us would fault). O: read
     * the tile and strip tables on demand, not whole. */
    if (!(f->t = tiff_open_fd(fd, "rmO", &f->msg))) {
        close(fd);
        say(err, &f->msg, "bad header: ", "cannot read it");
        free(f);
        return TEX_ERR_CORRUPT;
    }
    dir_shape  top;
    tex_result r = dir_read(f->t, &top, err);
    if (r != TEX_OK) {
        tex_tiff_close(f);
        return r;
    }
    f->info = (tex_tiff_info){.width = top.width,
                              .height = top.height,
                              .nchannels = top.nchannels,
                              .type = top.type,
                              .srgb = top.srgb,
                              .associated = top.associated,
                              .tiled = top.tile_width > 0,
                              .tile_width = top.tile_width,
                              .tile_height = top.tile_height,
                              .nlevels = 1};
    f->tile_bytes =
        (size_t)top.tile_width * top.tile_height * top.nchannels * tex_type_size(top.type);
    f->levels[0].offset = TIFFCurrentDirOffset(f->t);
    f->levels[0].width = top.width;
    f->levels[0].height = top.height;
    f->current = 0;
    if (f->info.tiled) {
        uint64_t tiles = tiles_of(f, top.width, top.height);
        if (!tiles_fit(f, tiles)) {
            snprintf(err, TEX_ERR_LEN, "bad header: %llu tiles in a file of %llu bytes",
                     (unsigned long long)tiles, (unsigned long long)f->file_bytes);
            tex_tiff_close(f);
            return TEX_ERR_CORRUPT;
        }
        f->ntiles = tiles;
        levels_find(f, &top);
    }
    *info = f->info;
    *out = f;
    return TEX_OK;
}

void
tex_tiff_close(tex_tiff *f)
{
    if (!f)
        return;
    if (f->t)
        TIFFClose(f->t);
    free(f);
}

bool
tex_tiff_level_size(const tex_tiff *f, uint32_t level, uint32_t *width, uint32_t *height)
{
    if (level >= f->info.nlevels)
        return false;
    *width = f->levels[level].width;
    *height = f->levels[level].height;
    return true;
}

/* libtiff at `level`'s directory, still the shape it had when opened. */
static tex_result
level_enter(tex_tiff *f, uint32_t level, char err[TEX_ERR_LEN])
{
    if (f->current == level)
        return TEX_OK;
    f->current = UINT32_MAX;
    char where[32];
    snprintf(where, sizeof where, "level %u: ", level);
    f->msg.text[0] = '\0'; /* libtiff's errors from here on are this call's */
    if (!TIFFSetSubDirectory(f->t, f->levels[level].offset) || f->msg.text[0]) {
        say(err, &f->msg, where, "cannot read its directory");
        return TEX_ERR_CORRUPT;
    }
    dir_shape d;
    if (dir_read(f->t, &d, err) != TEX_OK || d.width != f->levels[level].width ||
        d.height != f->levels[level].height || d.tile_width != f->info.tile_width ||
        d.tile_height != f->info.tile_height || d.nchannels != f->info.nchannels ||
        d.type != f->info.type) {
        snprintf(err, TEX_ERR_LEN, "%schanged on disk since it was opened", where);
        return TEX_ERR_CORRUPT;
    }
    f->current = level;
    return TEX_OK;
}

/* Zeroes what lies outside the valid w x h part of a tile. */
static void
tile_pad(void *tile, uint32_t tw, uint32_t th, uint32_t w, uint32_t h, size_t pixel)
{
    unsigned char *p = tile;
    for (uint32_t y = 0; y < th; y++) {
        size_t keep = y < h ? w * pixel : 0;
        memset(p + y * tw * pixel + keep, 0, tw * pixel - keep);
    }
}

tex_result
tex_tiff_read_tile(tex_tiff *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                   char err[TEX_ERR_LEN])
{
    uint32_t tw = f->info.tile_width, th = f->info.tile_height;
    if (!f->info.tiled || level >= f->info.nlevels ||
        tx >= (f->levels[level].width + tw - 1) / tw ||
        ty >= (f->levels[level].height + th - 1) / th) {
        snprintf(err, TEX_ERR_LEN, "no tile (%u, %u) of level %u", tx, ty, level);
        return TEX_ERR_INVALID;
    }
    tex_result r = level_enter(f, level, err);
    if (r != TEX_OK)
        return r;
    uint32_t tile = TIFFComputeTile(f->t, tx * tw, ty * th, 0, 0);
    f->msg.text[0] = '\0';
    tmsize_t n = TIFFReadEncodedTile(f->t, tile, out, (tmsize_t)f->tile_bytes);
    /* An error said is a failure even when libtiff goes on: with a tile
     * table past the end of the file it reads the tile from offset 0. */
    if (n != (tmsize_t)f->tile_bytes || f->msg.text[0]) {
        char where[64];
        snprintf(where, sizeof where, "tile (%u, %u) of level %u: ", tx, ty, level);
        say(err, &f->msg, where, n < 0 ? "cannot be read" : "short");
        return TEX_ERR_CORRUPT;
    }
    uint32_t w = f->levels[level].width - tx * tw, h = f->levels[level].height - ty * th;
    if (w < tw || h < th)
        tile_pad(out, tw, th, w < tw ? w : tw, h < th ? h : th,
                 f->info.nchannels * tex_type_size(f->info.type));
    return TEX_OK;
}

/* Level 0 of a tiled file, a row of tiles at a time. */
static tex_result
rows_from_tiles(tex_tiff *f, const tex_image *shape, tex_rows_fn fn, void *ctx,
                char err[TEX_ERR_LEN])
{
    uint32_t tw = f->info.tile_width, th = f->info.tile_height;
    size_t   pixel = shape->nchannels * tex_type_size(shape->type);
    size_t   row = shape->width * pixel;
    /* A band of at most the image's height: a tile may be far taller. */
    char      *band = malloc(row * (th < shape->height ? th : shape->height));
    char      *tile = malloc(f->tile_bytes);
    tex_result r = TEX_OK;
    if (!band || !tile) {
        snprintf(err, TEX_ERR_LEN, "out of memory for a row of %ux%u tiles", tw, th);
        r = TEX_ERR_NOMEM;
    }
    for (uint32_t y0 = 0; r == TEX_OK && y0 < shape->height; y0 += th) {
        uint32_t h = shape->height - y0 < th ? shape->height - y0 : th;
        for (uint32_t x0 = 0; r == TEX_OK && x0 < shape->width; x0 += tw) {
            r = tex_tiff_read_tile(f, 0, x0 / tw, y0 / th, tile, err);
            size_t w = (shape->width - x0 < tw ? shape->width - x0 : tw) * pixel;
            for (uint32_t y = 0; r == TEX_OK && y < h; y++)
                memcpy(band + y * row + x0 * pixel, tile + y * tw * pixel, w);
        }
        for (uint32_t y = 0; r == TEX_OK && y < h; y++)
            r = fn(ctx, shape, y0 + y, band + y * row, err);
    }
    free(band);
    free(tile);
    return r;
}

/* A file in strips, a row at a time. */
static tex_result
rows_from_strips(tex_tiff *f, const tex_image *shape, tex_rows_fn fn, void *ctx,
                 char err[TEX_ERR_LEN])
{
    size_t row = shape->width * shape->nchannels * tex_type_size(shape->type);
    if ((uint64_t)TIFFScanlineSize64(f->t) != row) {
        say(err, &f->msg, "bad header: ", "rows of an unexpected size");
        return TEX_ERR_CORRUPT;
    }
    char *buf = malloc(row);
    if (!buf) {
        snprintf(err, TEX_ERR_LEN, "out of memory for a row");
        return TEX_ERR_NOMEM;
    }
    tex_result r = TEX_OK;
    for (uint32_t y = 0; r == TEX_OK && y < shape->height; y++) {
        f->msg.text[0] = '\0';
        if (TIFFReadScanline(f->t, buf, y, 0) < 0 || f->msg.text[0]) {
            char where[32];
            snprintf(where, sizeof where, "row %u: ", y);
            say(err, &f->msg, where, "cannot be read");
            r = TEX_ERR_CORRUPT;
        } else {
            r = fn(ctx, shape, y, buf, err);
        }
    }
    free(buf);
    return r;
}

tex_result
tex_tiff_read_rows(const char *path, tex_rows_fn fn, void *ctx, char err[TEX_ERR_LEN])
{
    tex_tiff     *f;
    tex_tiff_info info;
    tex_result    r = tex_tiff_open(path, &f, &info, err);
    if (r != TEX_OK)
        return r;
    tex_image shape = {.width = info.width,
                       .height = info.height,
                       .nchannels = info.nchannels,
                       .type = info.type,
                       .srgb = info.srgb,
                       .associated = info.associated};
    r = info.tiled ? rows_from_tiles(f, &shape, fn, ctx, err)
                   : rows_from_strips(f, &shape, fn, ctx, err);
    tex_tiff_close(f);
    return r;
}

/* ---- writing ---- */

struct tex_tiff_writer {
    tiff_msg       msg;
    tex_replace    out;
    TIFF          *t;
    tex_image      shape; /* level 0's, pixels NULL */
    char          *software;
    uint32_t       nlevels, tile;
    size_t         pixel, tile_bytes;
    unsigned char *tilebuf;
    /* Levels 1 and below, their rows as they came, until level 0 is done:
     * an unlinked file beside the output. */
    int lower_fd;
    struct {
        uint32_t width, height;
        uint64_t lower_at; /* where its rows start in lower_fd */
        uint8_t *written;  /* per row of tiles */
    } levels[TEX_TIFF_MAX_LEVELS];
    bool failed;
};

/* The tags of `level`'s directory, before its first tile. */
static bool
dir_write_tags(tex_tiff_writer *w, uint32_t level)
{
    const tex_image *s = &w->shape;
    bool             floats = s->type == TEX_TYPE_HALF || s->type == TEX_TYPE_FLOAT;
    (void)floats;
    uint16_t extra =
        s->associated ? EXTRASAMPLE_ASSOCALPHA : EXTRASAMPLE_UNASSALPHA; /* EXR's, PNG's */
    bool ok = TIFFSetField(w->t, TIFFTAG_SUBFILETYPE, level ? FILETYPE_REDUCEDIMAGE : 0) &&
              TIFFSetField(w->t, TIFFTAG_IMAGEWIDTH, w->levels[level].width) &&
              TIFFSetField(w->t, TIFFTAG_IMAGELENGTH, w->levels[level].height) &&
              TIFFSetField(w->t, TIFFTAG_TILEWIDTH, w->tile) &&
              TIFFSetField(w->t, TIFFTAG_TILELENGTH, w->tile) &&
              TIFFSetField(w->t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)s->nchannels) &&
              TIFFSetField(w->t, TIFFTAG_BITSPERSAMPLE, (uint16_t)(8 * tex_type_size(s->type))) &&
              TIFFSetField(w->t, TIFFTAG_SAMPLEFORMAT,
                           floats ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT) &&
              TIFFSetField(w->t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
              TIFFSetField(w->t, TIFFTAG_PHOTOMETRIC,
                           s->nchannels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK) &&
              TIFFSetField(w->t, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE) &&
              TIFFSetField(w->t, TIFFTAG_PREDICTOR,
                           floats ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL);
    if (ok && (s->nchannels == 2 || s->nchannels == 4))
        ok = TIFFSetField(w->t, TIFFTAG_EXTRASAMPLES, 1, &extra);
    /* Pixar's tag, as OpenImageIO's maketx writes it: without it,
     * OpenImageIO's tools see the levels as unrelated subimages. */
    if (ok && w->nlevels > 1)
        ok = TIFFSetField(w->t, TIFFTAG_PIXAR_TEXTUREFORMAT, "Plain Texture");
    if (ok && w->software)
        ok = TIFFSetField(w->t, TIFFTAG_SOFTWARE, w->software);
    if (ok)
        ok = TIFFSetField(w->t, TIFFTAG_IMAGEDESCRIPTION,
                          s->srgb && !floats ? COLORSPACE_KEY "sRGB" : COLORSPACE_KEY "Linear");
    return ok;
}

/* The row of tiles at y0 of the current directory, from band's rows. */
static tex_result
tiles_write(tex_tiff_writer *w, uint32_t level, uint32_t y0, const unsigned char *rows, uint32_t h,
            char err[TEX_ERR_LEN])
{
    uint32_t width = w->levels[level].width;
    size_t   row = (size_t)width * w->pixel;
    for (uint32_t x0 = 0; x0 < width; x0 += w->tile) {
        uint32_t tw = width - x0 < w->tile ? width - x0 : w->tile;
        for (uint32_t y = 0; y < h; y++)
            memcpy(w->tilebuf + y * w->tile * w->pixel, rows + y * row + x0 * w->pixel,
                   tw * w->pixel);
        tile_pad(w->tilebuf, w->tile, w->tile, tw, h, w->pixel);
        uint32_t tile = TIFFComputeTile(w->t, x0, y0, 0, 0);
        if (TIFFWriteEncodedTile(w->t, tile, w->tilebuf, (tmsize_t)w->tile_bytes) < 0) {
            say(err, &w->msg, "cannot write: ", strerror(errno ? errno : EIO));
            return TEX_ERR_WRITE;
        }
    }
    return TEX_OK;
}

/* An unlinked file beside `path` for the lower levels; -1 with err. */
static int
lower_open(const char *path, char err[TEX_ERR_LEN])
{
    size_t n = strlen(path);
    char  *name = malloc(n + sizeof ".levels-XXXXXX");
    if (!name) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return -1;
    }
    memcpy(name, path, n);
    memcpy(name + n, ".levels-XXXXXX", sizeof ".levels-XXXXXX");
    int fd = mkstemp(name);
    if (fd < 0)
        snprintf(err, TEX_ERR_LEN, "cannot write: %s", strerror(errno));
    else
        unlink(name);
    free(name);
    return fd;
}

static tex_result
writer_check(const tex_image *shape, uint32_t nlevels, uint32_t tile_size, char err[TEX_ERR_LEN])
{
    tex_result r = tex_check_size(shape->width, shape->height, err);
    if (r != TEX_OK)
        return r;
    if (shape->width == 0 || shape->height == 0 || shape->nchannels < 1 || shape->nchannels > 4 ||
        shape->type > TEX_TYPE_FLOAT) {
        snprintf(err, TEX_ERR_LEN, "bad image shape");
        return TEX_ERR_INVALID;
    }
    if (tile_size < 16 || tile_size > 1024 || tile_size % 16) {
        snprintf(err, TEX_ERR_LEN, "tile size %u: TIFF tiles are 16..1024, a multiple of 16",
                 tile_size);
        return TEX_ERR_INVALID;
    }
    if (nlevels != 1 && nlevels != tex_mip_levels(shape->width, shape->height)) {
        snprintf(err, TEX_ERR_LEN, "%u levels: 1 or the whole chain", nlevels);
        return TEX_ERR_INVALID;
    }
    return TEX_OK;
}

/* The writer's own memory and level table. */
static tex_result
writer_init(tex_tiff_writer *w, const char *software, char err[TEX_ERR_LEN])
{
    uint64_t at = 0;
    for (uint32_t l = 0; l < w->nlevels; l++) {
        uint32_t width = w->shape.width >> l, height = w->shape.height >> l;
        w->levels[l].width = width ? width : 1;
        w->levels[l].height = height ? height : 1;
        w->levels[l].lower_at = at;
        if (l > 0)
            at += (uint64_t)w->levels[l].width * w->levels[l].height * w->pixel;
        w->levels[l].written = calloc((w->levels[l].height + w->tile - 1) / w->tile, 1);
        if (!w->levels[l].written)
            goto nomem;
    }
    w->tilebuf = malloc(w->tile_bytes);
    if (!w->tilebuf || (software && !(w->software = strdup(software))))
        goto nomem;
    return TEX_OK;
nomem:
    snprintf(err, TEX_ERR_LEN, "out of memory");
    return TEX_ERR_NOMEM;
}

static void
writer_free(tex_tiff_writer *w)
{
    for (uint32_t l = 0; l < w->nlevels; l++)
        free(w->levels[l].written);
    if (w->lower_fd >= 0)
        close(w->lower_fd);
    free(w->tilebuf);
    free(w->software);
    free(w);
}

tex_result
tex_tiff_tiled_begin(const char *path, const tex_image *shape, uint32_t nlevels, uint32_t tile_size,
                     const char *software, tex_tiff_writer **out, char err[TEX_ERR_LEN])
{
    *out = NULL;
    tex_result r = writer_check(shape, nlevels, tile_size, err);
    if (r != TEX_OK)
        return r;
    tex_tiff_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    w->shape = *shape;
    w->shape.pixels = NULL;
    w->nlevels = nlevels;
    w->tile = tile_size;
    w->pixel = shape->nchannels * tex_type_size(shape->type);
    w->tile_bytes = (size_t)tile_size * tile_size * w->pixel;
    w->lower_fd = -1;
    r = writer_init(w, software, err);
    if (r == TEX_OK && nlevels > 1 && (w->lower_fd = lower_open(path, err)) < 0)
        r = TEX_ERR_WRITE;
    if (r == TEX_OK)
        r = tex_replace_begin(&w->out, path, err);
    if (r != TEX_OK) {
        writer_free(w);
        return r;
    }
    /* The temporary file's own descriptor (read and write: libtiff reads
     * back what it wrote), duplicated because TIFFClose() closes it. */
    int fd = dup(fileno(w->out.f));
    /* BigTIFF ("8") where the classic format's 32-bit offsets might not
     * reach: 3 GiB of samples, before compression. */
    uint64_t    bytes = (uint64_t)shape->width * shape->height * w->pixel * 4 / 3;
    const char *mode = bytes > ((uint64_t)3 << 30) ? "w8" : "w";
    if (fd < 0 || !(w->t = tiff_open_fd(fd, mode, &w->msg)) || !dir_write_tags(w, 0)) {
        if (fd >= 0 && !w->t)
            close(fd);
        say(err, &w->msg, "cannot write: ", strerror(errno ? errno : EIO));
        tex_tiff_tiled_end(w, false, err);
        return TEX_ERR_WRITE;
    }
    *out = w;
    return TEX_OK;
}

tex_result
tex_tiff_tiled_put(tex_tiff_writer *w, uint32_t level, uint32_t y0, const tex_image *band,
                   char err[TEX_ERR_LEN])
{
    if (w->failed) {
        snprintf(err, TEX_ERR_LEN, "an earlier write failed");
        return TEX_ERR_WRITE;
    }
    uint32_t rows = level < w->nlevels ? w->levels[level].height : 0;
    uint32_t h = rows - y0 < w->tile ? rows - y0 : w->tile;
    if (level >= w->nlevels || y0 >= rows || y0 % w->tile || !band->pixels ||
        band->width != w->levels[level].width || band->height != h || band->type != w->shape.type ||
        band->nchannels != w->shape.nchannels || w->levels[level].written[y0 / w->tile]) {
        snprintf(err, TEX_ERR_LEN, "bad band at row %u of level %u", y0, level);
        return TEX_ERR_INVALID;
    }
    size_t     row = (size_t)band->width * w->pixel;
    tex_result r = TEX_OK;
    if (level == 0) {
        r = tiles_write(w, 0, y0, band->pixels, h, err);
    } else if (!tex__pio_all(w->lower_fd, true, (void *)band->pixels, row * h,
                             w->levels[level].lower_at + (uint64_t)y0 * row)) {
        snprintf(err, TEX_ERR_LEN, "cannot write: %s", strerror(errno ? errno : ENOSPC));
        r = TEX_ERR_WRITE;
    }
    w->failed = r != TEX_OK;
    w->levels[level].written[y0 / w->tile] = r == TEX_OK;
    return r;
}

/* Rows of tiles never put, over every level. */
static uint32_t
rows_missing(const tex_tiff_writer *w)
{
    uint32_t missing = 0;
    for (uint32_t l = 0; l < w->nlevels; l++)
        for (uint32_t i = 0; i < (w->levels[l].height + w->tile - 1) / w->tile; i++)
            missing += !w->levels[l].written[i];
    return missing;
}

/* Level 0 is done: its directory, then each lower level's from lower_fd. */
static tex_result
lower_levels_write(tex_tiff_writer *w, char err[TEX_ERR_LEN])
{
    unsigned char *rows = NULL;
    tex_result     r = TEX_OK;
    for (uint32_t l = 1; l <= w->nlevels && r == TEX_OK; l++) {
        if (!TIFFWriteDirectory(w->t) || (l < w->nlevels && !dir_write_tags(w, l))) {
            say(err, &w->msg, "cannot write: ", strerror(errno ? errno : EIO));
            r = TEX_ERR_WRITE;
            break;
        }
        if (l == w->nlevels)
            break;
        size_t row = (size_t)w->levels[l].width * w->pixel;
        if (!rows && !(rows = malloc(row * w->tile))) { /* level 1's rows are the widest */
            snprintf(err, TEX_ERR_LEN, "out of memory");
            r = TEX_ERR_NOMEM;
            break;
        }
        for (uint32_t y0 = 0; r == TEX_OK && y0 < w->levels[l].height; y0 += w->tile) {
            uint32_t h = w->levels[l].height - y0 < w->tile ? w->levels[l].height - y0 : w->tile;
            if (!tex__pio_all(w->lower_fd, false, rows, row * h,
                              w->levels[l].lower_at + (uint64_t)y0 * row)) {
                snprintf(err, TEX_ERR_LEN, "cannot read back level %u: %s", l,
                         strerror(errno ? errno : EIO));
                r = TEX_ERR_WRITE;
            } else {
                r = tiles_write(w, l, y0, rows, h, err);
            }
        }
    }
    free(rows);
    return r;
}

tex_result
tex_tiff_tiled_end(tex_tiff_writer *w, bool ok, char err[TEX_ERR_LEN])
{
    tex_result r = ok ? TEX_OK : TEX_ERR_WRITE;
    uint32_t   missing = ok && !w->failed ? rows_missing(w) : 0;
    if (ok && w->failed) {
        snprintf(err, TEX_ERR_LEN, "an earlier write failed");
        r = TEX_ERR_WRITE;
    } else if (missing) {
        snprintf(err, TEX_ERR_LEN, "%u row%s of tiles %s never written", missing,
                 missing == 1 ? "" : "s", missing == 1 ? "was" : "were");
        r = TEX_ERR_INVALID;
    } else if (ok) {
        r = lower_levels_write(w, err);
    }
    if (w->t) {
        if (r == TEX_OK && !TIFFFlush(w->t)) {
            say(err, &w->msg, "cannot write: ", strerror(errno ? errno : EIO));
            r = TEX_ERR_WRITE;
        }
        TIFFClose(w->t);
    }
    if (w->out.f) {
        char       end_err[TEX_ERR_LEN];
        tex_result e = tex_replace_end(&w->out, r == TEX_OK, end_err);
        if (r == TEX_OK && e != TEX_OK) {
            memcpy(err, end_err, TEX_ERR_LEN);
            r = e;
        }
    }
    writer_free(w);
    return r;
}

#ifdef TEX_TIFF_MODULE
#include "tiff_module.h"

/* The module's one exported symbol (tiff_module.h); the functions above are
 * hidden in it, so they never clash with io_tiff_lazy.c's of the same names. */
__attribute__((visibility("default"))) const tex_tiff_module tex_tiff_module_table = {
    .size = sizeof(tex_tiff_module),
    .open = tex_tiff_open,
    .close = tex_tiff_close,
    .level_size = tex_tiff_level_size,
    .read_tile = tex_tiff_read_tile,
    .read_rows = tex_tiff_read_rows,
    .tiled_begin = tex_tiff_tiled_begin,
    .tiled_put = tex_tiff_tiled_put,
    .tiled_end = tex_tiff_tiled_end,
};
#endif
