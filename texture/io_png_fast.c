/* The PNG fast path (tex_io_internal.h, tex__png_fast_rows()): a plain PNG
 * decoded without libpng. Inflating the image data was three quarters of
 * a PNG's decode with libpng and zlib (perf, the many-textures scene's
 * PNGs). libdeflate inflates much faster, but only a whole stream, so this
 * path reads the whole file, gathers its IDAT chunks,
 * inflates them at once and undoes the row filters in place: the
 * many-textures PNGs decode in 65 ms against libpng's 160 (2.45x; the
 * measurement: docs/benchmarks.md, "PNG without libpng").
 *
 * It takes only what it can read exactly as libpng would: 8- or 16-bit
 * grey, grey+alpha, RGB or RGBA, or an 8-bit palette (whose PLTE, and tRNS if any, come
 * once, in order, before the image data, and whose pixels all name one of
 * its colours; expanded to RGB, or RGBA with tRNS, as io_png.c asks libpng
 * to), not interlaced, every chunk's CRC right, IHDR first, the IDAT
 * chunks together, IEND last at the file's end, no PLTE or tRNS in any
 * other colour type and no other critical chunk, no chunk over libpng's limit
 * (TEX_PNG_MAX_CHUNK_BYTES), one zlib stream filling the IDAT chunks
 * exactly and inflating to exactly the image's filtered rows, whose
 * filter bytes are all known. Ancillary chunks libpng would only read
 * (gAMA, iCCP, text) or drop it skips, as tex_png_read() ignores them.
 * Anything else, and files over FAST_MAX_BYTES, it refuses before handing
 * over a row, and io_png.c reads the file with libpng: same pixels, same
 * errors. One divergence, as for EXR (exr_chunks.h): libdeflate reads a
 * few kinds of invalid deflate stream that zlib rejects (a code-length
 * repeat that overruns, an incomplete code, ...), so a damaged stream whose
 * CRCs and Adler-32 are right anyway gives pixels where libpng says
 * "damaged image data" (one bit flipped, the CRCs made right again, can do
 * it: tex_png.fast_divergence pins such a file). */
#include "tex_io_internal.h"

#include <libdeflate.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most the path holds at once, the file and its inflated rows: past
 * this libpng's row-at-a-time read is the leaner. */
#define FAST_MAX_BYTES ((uint64_t)64 << 20)

#define SIGNATURE_BYTES 8
#define CHUNK_OVERHEAD  12 /* length, type, CRC */

/* Reads that took the path, for tests (relaxed: a count, ordering nothing). */
static _Atomic uint64_t fast_reads;

uint64_t
tex_png_fast_reads(void)
{
    return atomic_load_explicit(&fast_reads, memory_order_relaxed);
}

typedef struct plain_png {
    uint32_t width, height;
    unsigned bpp;      /* bytes a pixel in the file: 8-bit grey or palette 1, ... */
    unsigned channels; /* a pixel handed over: a palette's become RGB, RGBA with tRNS */
    bool     palette;
    bool     wide; /* 16-bit samples, big-endian in the file, handed over in host order */
    unsigned colours, alphas; /* PLTE's entries, tRNS's */
    uint8_t  plte[256 * 3], alpha[256];
    size_t   stream; /* bytes of the zlib stream, gathered at the buffer's start */
} plain_png;

static uint32_t
be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool
is_type(const uint8_t *t, const char *name)
{
    return memcmp(t, name, 4) == 0;
}

/* libpng's own test of a chunk type: four ASCII letters. */
static bool
letters(const uint8_t *t)
{
    for (int i = 0; i < 4; i++)
        if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z')))
            return false;
    return true;
}

/* IHDR's data, if it is a plain image within our limits: 8 bits a
 * sample, or 16 but for a palette. */
static bool
header_take(const uint8_t *d, uint32_t len, plain_png *p)
{
    static const unsigned samples[7] = {[0] = 1, [2] = 3, [3] = 1, [4] = 2, [6] = 4};
    char                  err[TEX_ERR_LEN];
    if (len != 13 || (d[8] != 8 && d[8] != 16) || d[9] > 6 || d[10] != 0 || d[11] != 0 ||
        d[12] != 0 || (d[8] == 16 && d[9] == 3))
        return false;
    p->width = be32(d);
    p->height = be32(d + 4);
    p->wide = d[8] == 16;
    p->palette = d[9] == 3;
    p->bpp = samples[d[9]] * (p->wide ? 2 : 1);
    p->channels = p->palette ? 3 : samples[d[9]]; /* 4 if a palette's tRNS comes */
    return p->bpp && tex_check_size(p->width, p->height, err) == TEX_OK;
}

/* A palette image's PLTE (once, before the image data, 1 to 256 colours)
 * or tRNS (once, after PLTE, before the image data, an alpha for 1 to all
 * of its colours): kept, if libpng would keep it as it is; anything else
 * is libpng's to judge. */
static bool
palette_take(const uint8_t *type, const uint8_t *d, uint32_t len, plain_png *p)
{
    if (is_type(type, "PLTE")) {
        if (p->colours || len == 0 || len % 3 || len > sizeof p->plte)
            return false;
        p->colours = len / 3;
        memcpy(p->plte, d, len);
        return true;
    }
    if (!p->colours || p->alphas || len == 0 || len > p->colours) /* tRNS */
        return false;
    p->alphas = len;
    memcpy(p->alpha, d, len);
    p->channels = 4;
    return true;
}

static const uint8_t signature[SIGNATURE_BYTES] = {137, 'P', 'N', 'G', 13, 10, 26, 10};

/* Walks the chunks of the file in buf[0..size), checking each one's CRC,
 * and moves the IDAT chunks' data together to the buffer's start (each
 * chunk's data lies past where the gathered stream has reached). The
 * header must be the one *p holds, read before anything was sized from
 * it: a file rewritten between the two reads is refused, not read with
 * another image's sizes. */
static bool
chunks_walk(uint8_t *buf, size_t size, plain_png *p)
{
    size_t at = SIGNATURE_BYTES;
    int    idat = 0; /* 0: none yet; 1: in the run; 2: past it */
    p->stream = 0;
    if (size < SIGNATURE_BYTES || memcmp(buf, signature, SIGNATURE_BYTES) != 0)
        return false;
    for (bool first = true;; first = false) {
        if (size - at < CHUNK_OVERHEAD)
            return false;
        uint32_t len = be32(buf + at);
        uint8_t *type = buf + at + 4, *data = type + 4;
        if (len > TEX_PNG_MAX_CHUNK_BYTES || len > size - at - CHUNK_OVERHEAD || !letters(type))
            return false;
        if (libdeflate_crc32(0, type, 4 + (size_t)len) != be32(data + len))
            return false;
        at += CHUNK_OVERHEAD + (size_t)len;
        if (first != is_type(type, "IHDR"))
            return false;
        if (first) {
            plain_png again;
            if (!header_take(data, len, &again) || again.width != p->width ||
                again.height != p->height || again.bpp != p->bpp || again.palette != p->palette ||
                again.wide != p->wide)
                return false;
        } else if (is_type(type, "IDAT")) {
            if (idat == 2 || (p->palette && !p->colours))
                return false;
            idat = 1;
            memmove(buf + p->stream, data, len);
            p->stream += len;
        } else if (is_type(type, "IEND")) {
            return idat && len == 0 && at == size;
        } else if (is_type(type, "PLTE") || is_type(type, "tRNS")) {
            if (!p->palette || idat || !palette_take(type, data, len, p))
                return false;
        } else if (type[0] < 'a') { /* critical, and one we do not know */
            return false;
        } else if (idat) {
            idat = 2;
        }
    }
}

/* Inflates the gathered stream into out[0..n), which it must fill
 * exactly, using every byte of it. The stream's window (its CMF byte)
 * must hold every distance libdeflate may follow, as zlib enforces it
 * for libpng: 32 KiB, or all of out. */
static bool
inflate_rows(const uint8_t *in, size_t in_n, uint8_t *out, size_t n)
{
    if (in_n < 2 || (in[0] & 15) != 8 || (n > (size_t)256 << (in[0] >> 4) && in[0] >> 4 != 7))
        return false;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t                          used = 0;
    bool                            ok =
        d &&
        libdeflate_zlib_decompress_ex(d, in, in_n, out, n, &used, NULL) == LIBDEFLATE_SUCCESS &&
        used == in_n;
    libdeflate_free_decompressor(d);
    return ok;
}

/* The Paeth predictor of PNG's filter 4: of left a, up b and up-left c,
 * the one closest to a + b - c, ties going to a, then b. */
static inline uint8_t
paeth(int a, int b, int c)
{
    int up = b - c, left = a - c;
    int pa = abs(up), pb = abs(left), pc = abs(up + left);
    return (uint8_t)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

#if defined(__x86_64__)
/* Paeth for 3 or 4 bytes a pixel, a pixel at a time in SSE2's 16-bit
 * lanes (SSE2 is part of x86-64): the bytes of a pixel predicted at once
 * rather than one after another, the path's costliest filter by far
 * (perf, the many-textures PNGs). Reads 4 bytes a pixel, so a row of 3
 * needs a byte after it (rows_give()'s buffers have one); writes bpp. */
static void
paeth_sse2(uint8_t *row, const uint8_t *up, size_t n, unsigned bpp)
{
    __m128i zero = _mm_setzero_si128(), a = zero, c = zero;
    for (size_t i = 0; i < n; i += bpp) {
        uint32_t x32, b32;
        memcpy(&x32, row + i, 4);
        memcpy(&b32, up + i, 4);
        __m128i x = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)x32), zero);
        __m128i b = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)b32), zero);
        __m128i p = _mm_sub_epi16(b, c), q = _mm_sub_epi16(a, c), r = _mm_add_epi16(p, q);
        __m128i pa = _mm_max_epi16(p, _mm_sub_epi16(zero, p));
        __m128i pb = _mm_max_epi16(q, _mm_sub_epi16(zero, q));
        __m128i pc = _mm_max_epi16(r, _mm_sub_epi16(zero, r));
        __m128i to_c = _mm_cmpgt_epi16(pb, pc); /* b unless c is closer */
        __m128i bc = _mm_or_si128(_mm_and_si128(to_c, c), _mm_andnot_si128(to_c, b));
        __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
        __m128i pred = _mm_or_si128(_mm_and_si128(not_a, bc), _mm_andnot_si128(not_a, a));
        a = _mm_and_si128(_mm_add_epi16(x, pred), _mm_set1_epi16(0xff));
        c = b;
        uint32_t out = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(a, zero));
        memcpy(row + i, &out, bpp);
    }
}
#endif

/* Undoes one row's filter in place: row[0..n) filtered by `filter`
 * against the row above, `up` (zeros for the first), bpp bytes a pixel. */
static void
unfilter(uint8_t filter, uint8_t *row, const uint8_t *up, size_t n, unsigned bpp)
{
    size_t i;
    switch (filter) {
    case 1: /* Sub */
        for (i = bpp; i < n; i++)
            row[i] = (uint8_t)(row[i] + row[i - bpp]);
        break;
    case 2: /* Up */
        for (i = 0; i < n; i++)
            row[i] = (uint8_t)(row[i] + up[i]);
        break;
    case 3: /* Average */
        for (i = 0; i < bpp; i++)
            row[i] = (uint8_t)(row[i] + (up[i] >> 1));
        for (; i < n; i++)
            row[i] = (uint8_t)(row[i] + ((row[i - bpp] + up[i]) >> 1));
        break;
    case 4: /* Paeth */
#if defined(__x86_64__)
        if (bpp == 3 || bpp == 4) {
            paeth_sse2(row, up, n, bpp);
            break;
        }
#endif
        for (i = 0; i < bpp; i++)
            row[i] = (uint8_t)(row[i] + up[i]); /* a = c = 0: b */
        for (; i < n; i++)
            row[i] = (uint8_t)(row[i] + paeth(row[i - bpp], up[i], up[i - bpp]));
        break;
    default: /* None */
        break;
    }
}

/* Whether every pixel of a palette image names one of its colours: libpng
 * reads any other as black (and opaque), with a warning; refused here. */
static bool
indices_known(const plain_png *p, const uint8_t *rows)
{
    uint8_t top = 0;
    for (uint32_t y = 0; y < p->height; y++) {
        const uint8_t *index = rows + y * ((size_t)p->width + 1) + 1;
        for (uint32_t x = 0; x < p->width; x++)
            top = index[x] > top ? index[x] : top;
    }
    return top < p->colours;
}

/* A row of palette indices as the RGB or RGBA libpng expands it to
 * (png_set_palette_to_rgb(), png_set_tRNS_to_alpha(): colours past tRNS's
 * last alpha are opaque). */
static void
palette_expand(const plain_png *p, const uint8_t *index, uint8_t *out)
{
    for (uint32_t x = 0; x < p->width; x++, out += p->channels) {
        memcpy(out, p->plte + 3 * index[x], 3);
        if (p->channels == 4)
            out[3] = index[x] < p->alphas ? p->alpha[index[x]] : 255;
    }
}

/* A row of 16-bit samples, big-endian, as host-order numbers (what
 * io_png.c's png_set_swap() gives on a little-endian host, and libpng
 * alone on a big-endian one), in an aligned buffer. */
static void
wide_samples(const uint8_t *row, size_t n, uint16_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (uint16_t)(row[2 * i] << 8 | row[2 * i + 1]);
}

/* Undoes each row's filter and hands it over, once every filter byte (and
 * a palette image's every index) is known good: a row handed over cannot
 * be taken back. Every row is unfiltered before the first is handed over:
 * a palette image's, to check its indices; any image's, because the Paeth
 * loop ran at half its speed interleaved with the consumer's work (cutting
 * rows into fresh tile memory, averaging MIP levels; perf: 15.8% of the
 * cold bench's samples against 8.9% alone). Then rows go one at a time, a
 * palette image's expanded, a 16-bit one's put in host order. */
static tex_result
rows_give(const plain_png *p, uint8_t *rows, tex_rows_fn fn, void *ctx, bool *taken,
          char err[TEX_ERR_LEN])
{
    size_t n = (size_t)p->width * p->bpp;
    for (uint32_t y = 0; y < p->height; y++)
        if (rows[y * (n + 1)] > 4)
            return TEX_OK; /* libpng: "bad adaptive filter value" */
    uint8_t *zeros = calloc(n + 1, 1);
    bool     copy = p->palette || p->wide; /* rows handed over from `out` */
    uint8_t *out = copy ? malloc((size_t)p->width * p->channels * (p->wide ? 2 : 1)) : NULL;
    if (!zeros || (copy && !out)) {
        free(zeros);
        return TEX_OK;
    }
    for (uint32_t y = 0; y < p->height; y++) {
        uint8_t *row = rows + y * (n + 1);
        unfilter(row[0], row + 1, y ? row - n : zeros, n, p->bpp);
    }
    tex_result r = TEX_OK;
    if (!p->palette || indices_known(p, rows)) {
        *taken = true;
        atomic_fetch_add_explicit(&fast_reads, 1, memory_order_relaxed);
        tex_image shape = {.width = p->width,
                           .height = p->height,
                           .nchannels = p->channels,
                           .type = p->wide ? TEX_TYPE_U16 : TEX_TYPE_U8,
                           .srgb = true};
        for (uint32_t y = 0; y < p->height && r == TEX_OK; y++) {
            uint8_t *row = rows + y * (n + 1);
            if (p->palette)
                palette_expand(p, row + 1, out);
            else if (p->wide)
                wide_samples(row + 1, n / 2, (uint16_t *)(void *)out);
            r = fn(ctx, &shape, y, copy ? out : row + 1, err);
        }
    }
    free(out);
    free(zeros);
    return r;
}

/* Whether the file starts as a plain PNG does: its signature, then IHDR,
 * whose fields go to *p. Enough to know what the read will hold before
 * anything is allocated. */
static bool
header_read(int fd, plain_png *p)
{
    uint8_t head[SIGNATURE_BYTES + CHUNK_OVERHEAD + 13];
    return tex__pio_all(fd, false, head, sizeof head, 0) &&
           memcmp(head, signature, SIGNATURE_BYTES) == 0 && be32(head + 8) == 13 &&
           is_type(head + 12, "IHDR") && header_take(head + 16, 13, p);
}

tex_result
tex__png_fast_rows(int fd, uint64_t file_size, tex_rows_fn fn, void *ctx,
                   const tex__decode_budget *budget, bool *taken, char err[TEX_ERR_LEN])
{
    *taken = false;
    const char *env = getenv("RT_PNG_FAST");
    plain_png   p = {0};
    if ((env && strcmp(env, "0") == 0) || file_size > FAST_MAX_BYTES || !header_read(fd, &p))
        return TEX_OK;
    uint64_t rows_bytes = (uint64_t)p.height * ((uint64_t)p.width * p.bpp + 1);
    char     what[64];
    snprintf(what, sizeof what, "PNG %" PRIu32 "x%" PRIu32, p.width, p.height);
    /* The budget, where there is one, is charged what the read will hold
     * before it is allocated; a file too large for it goes to libpng,
     * which holds a row (and the budget's refusal is not this read's
     * error: it has its own message buffer). */
    char refused[TEX_ERR_LEN];
    if (file_size + rows_bytes > FAST_MAX_BYTES ||
        (budget && budget->reserve(budget->ctx, file_size + rows_bytes, what, refused) != TEX_OK))
        return TEX_OK;
    uint8_t   *file = malloc(file_size), *rows = NULL;
    tex_result r = TEX_OK;
    if (file && tex__pio_all(fd, false, file, file_size, 0) && chunks_walk(file, file_size, &p) &&
        (rows = malloc(rows_bytes + 1)) && inflate_rows(file, p.stream, rows, rows_bytes))
        r = rows_give(&p, rows, fn, ctx, taken, err);
    free(rows);
    free(file);
    return r;
}
