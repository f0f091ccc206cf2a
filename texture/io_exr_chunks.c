/* exr_chunks.h: EXR chunks found and read by OpenEXRCore, decoded here. */
#include "exr_chunks.h"
#include "tex_io_internal.h" /* tex__pio_all() */

#include <libdeflate.h>
#include <openexr.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "io_exr_chunks.c copies the file's little-endian samples as they are"
#endif

struct tex__exr_chunks {
    int                             fd;
    uint64_t                        size;
    exr_context_t                   core;
    struct libdeflate_decompressor *inflater;
    tex__exr_layout                 lay;
    size_t                          max_raw; /* bytes of the largest raw chunk */
    uint8_t                        *packed;  /* max_raw bytes: the stored chunk, then raw */
    uint8_t                        *scratch; /* max_raw bytes: the inflated chunk */
    bool                            failed;  /* a read failed since the last call */
};

/* OpenEXRCore's stream: the shared descriptor, by position. A read past
 * the size the file had at open is short, as a stream's end is. A read
 * that fails (an I/O error, or the end before that size: the file shrank,
 * which OpenEXR's C++ reader calls an error) sets `failed`, which every
 * call here checks, and claims the bytes as zeros: OpenEXR 3.1.5's core
 * takes a -1 from a read it allows to be short as a length, and zeroes
 * the byte before the buffer (ASan, tex_exr_badinput.shrunk_after_open). */
static int64_t
core_read(exr_const_context_t ctx, void *user, void *buf, uint64_t n, uint64_t pos,
          exr_stream_error_func_ptr_t error_cb)
{
    (void)ctx;
    (void)error_cb;
    tex__exr_chunks *t = user;
    uint64_t         have = pos < t->size ? (n < t->size - pos ? n : t->size - pos) : 0;
    if (!tex__pio_all(t->fd, false, buf, (size_t)have, pos)) {
        t->failed = true;
        memset(buf, 0, n);
        return (int64_t)n;
    }
    return (int64_t)have;
}

static int64_t
core_size(exr_const_context_t ctx, void *user)
{
    (void)ctx;
    return (int64_t)((const tex__exr_chunks *)user)->size;
}

/* Said nowhere: a refusal only sends the chunk to the C++ reader, which
 * words its own error. */
static void
core_quiet(exr_const_context_t ctx, exr_result_t code, const char *msg)
{
    (void)ctx;
    (void)code;
    (void)msg;
}

/* Whether the core sees part 0 as the C++ reader did: compression this
 * path decodes, the same storage and chunk size, and the same channels in
 * the same order at the same sizes, none subsampled. */
static bool
core_agrees(const tex__exr_chunks *t)
{
    exr_compression_t comp;
    exr_storage_t     storage;
    if (exr_get_compression(t->core, 0, &comp) != EXR_ERR_SUCCESS ||
        (comp != EXR_COMPRESSION_NONE && comp != EXR_COMPRESSION_ZIP &&
         comp != EXR_COMPRESSION_ZIPS) ||
        exr_get_storage(t->core, 0, &storage) != EXR_ERR_SUCCESS ||
        storage != (t->lay.tiled ? EXR_STORAGE_TILED : EXR_STORAGE_SCANLINE))
        return false;
    uint32_t         tw, th;
    int              lines;
    exr_attr_box2i_t dw;
    if (t->lay.tiled
            ? exr_get_tile_descriptor(t->core, 0, &tw, &th, NULL, NULL) != EXR_ERR_SUCCESS ||
                  tw != t->lay.chunk_width || th != t->lay.chunk_height
            : exr_get_scanlines_per_chunk(t->core, 0, &lines) != EXR_ERR_SUCCESS ||
                  lines != (int)t->lay.chunk_height ||
                  exr_get_data_window(t->core, 0, &dw) != EXR_ERR_SUCCESS ||
                  (int64_t)dw.max.x - dw.min.x + 1 != (int64_t)t->lay.chunk_width)
        return false;
    const exr_attr_chlist_t *cl;
    if (exr_get_channels(t->core, 0, &cl) != EXR_ERR_SUCCESS ||
        cl->num_channels != (int)t->lay.nchannels)
        return false;
    for (uint32_t c = 0; c < t->lay.nchannels; c++) {
        const exr_attr_chlist_entry_t *e = &cl->entries[c];
        uint8_t                        size = e->pixel_type == EXR_PIXEL_HALF ? 2 : 4;
        if (!e->name.str || strcmp(e->name.str, t->lay.name[c]) != 0 || size != t->lay.size[c] ||
            e->x_sampling != 1 || e->y_sampling != 1)
            return false;
    }
    return true;
}

/* Bytes of a raw chunk of width x height pixels. */
static size_t
raw_size(const tex__exr_layout *lay, uint32_t width, uint32_t height)
{
    size_t line = 0;
    for (uint32_t c = 0; c < lay->nchannels; c++)
        line += lay->size[c];
    return line * width * height;
}

tex__exr_chunks *
tex__exr_chunks_open(int fd, uint64_t size, const tex__exr_layout *lay)
{
    tex__exr_chunks *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->fd = fd;
    t->size = size;
    t->lay = *lay;
    t->max_raw = raw_size(lay, lay->chunk_width, lay->max_lines);
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.user_data = t;
    init.read_fn = core_read;
    init.size_fn = core_size;
    init.error_handler_fn = core_quiet;
    /* No rebuilding of damaged chunk tables: the core rebuilds by other
     * rules than the C++ reader, and could find a chunk where it finds
     * none. A chunk the table cannot find goes to the C++ reader. */
    init.flags =
        EXR_CONTEXT_FLAG_SILENT_HEADER_PARSE | EXR_CONTEXT_FLAG_DISABLE_CHUNK_RECONSTRUCTION;
    if (exr_start_read(&t->core, "texture", &init) != EXR_ERR_SUCCESS || t->failed ||
        !core_agrees(t) || t->max_raw == 0 || !(t->inflater = libdeflate_alloc_decompressor()) ||
        !(t->packed = malloc(t->max_raw)) || !(t->scratch = malloc(t->max_raw))) {
        tex__exr_chunks_close(t);
        return NULL;
    }
    return t;
}

void
tex__exr_chunks_close(tex__exr_chunks *t)
{
    if (!t)
        return;
    if (t->core)
        exr_finish(&t->core);
    libdeflate_free_decompressor(t->inflater);
    free(t->packed);
    free(t->scratch);
    free(t);
}

/* ZIP's predictor undone in place: the writer stored each byte as its
 * difference from the one before plus 128, so the bytes are a running sum
 * of the stored ones less 128 each (less 128 is xor 0x80, mod 256), the
 * first as stored. One byte a step, a chain of dependent adds, this was a
 * sixth of a cold random bilinear lookup on half-float EXR tiles
 * (docs/benchmarks.md); with SSE2, 16 at a time: a prefix sum in four
 * shifted adds, plus the block before's last byte. */
static void
undo_predictor(uint8_t *b, size_t n)
{
    if (n == 0)
        return;
    size_t i = 1;
#if defined(__SSE2__)
    const __m128i flip = _mm_set1_epi8((char)0x80);
    __m128i       carry = _mm_set1_epi8((char)b[0]); /* the sum so far, in every byte */
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(b + i)), flip);
        v = _mm_add_epi8(v, _mm_slli_si128(v, 1));
        v = _mm_add_epi8(v, _mm_slli_si128(v, 2));
        v = _mm_add_epi8(v, _mm_slli_si128(v, 4));
        v = _mm_add_epi8(v, _mm_slli_si128(v, 8));
        v = _mm_add_epi8(v, carry);
        _mm_storeu_si128((__m128i *)(void *)(b + i), v);
        __m128i high = _mm_unpackhi_epi8(v, v); /* byte 15 into all 16 */
        carry = _mm_shuffle_epi32(_mm_unpackhi_epi16(high, high), 0xff);
    }
#endif
    for (; i < n; i++)
        b[i] = (uint8_t)(b[i - 1] + b[i] - 128);
}

/* ZIP's byte split undone: the even bytes were stored in the first half
 * (which has the odd one out) and the odd ones in the second. */
static void
unsplit(const uint8_t *split, uint8_t *raw, size_t n)
{
    const uint8_t *even = split, *odd = split + (n + 1) / 2;
    size_t         half = n / 2, i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= half; i += 16) {
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(even + i));
        __m128i o = _mm_loadu_si128((const __m128i *)(const void *)(odd + i));
        _mm_storeu_si128((__m128i *)(void *)(raw + 2 * i), _mm_unpacklo_epi8(e, o));
        _mm_storeu_si128((__m128i *)(void *)(raw + 2 * i + 16), _mm_unpackhi_epi8(e, o));
    }
#endif
    for (; i < half; i++) {
        raw[2 * i] = even[i];
        raw[2 * i + 1] = odd[i];
    }
    if (n & 1)
        raw[n - 1] = even[half];
}

/* Undoes ZIP (and ZIPS): `packed` (n bytes, a zlib stream) inflates to
 * exactly raw_n bytes in `scratch`, whose predictor and byte split are
 * then undone into `raw`, which may be `packed` (read by then). */
static bool
unzip(struct libdeflate_decompressor *d, const uint8_t *packed, size_t n, uint8_t *scratch,
      uint8_t *raw, size_t raw_n)
{
    /* NULL for the actual size: anything but exactly raw_n bytes fails. */
    if (libdeflate_zlib_decompress(d, packed, n, scratch, raw_n, NULL) != LIBDEFLATE_SUCCESS)
        return false;
    undo_predictor(scratch, raw_n);
    unsplit(scratch, raw, raw_n);
    return true;
}

/* One line of one channel: n samples, `stride` bytes apart in the output.
 * A function per size, so that each copy is one load and one store. */
static void
scatter_half(const uint8_t *src, uint32_t n, uint8_t *dst, size_t stride)
{
    for (uint32_t x = 0; x < n; x++)
        memcpy(dst + x * stride, src + 2 * (size_t)x, 2);
}

static void
scatter_float(const uint8_t *src, uint32_t n, uint8_t *dst, size_t stride)
{
    for (uint32_t x = 0; x < n; x++)
        memcpy(dst + x * stride, src + 4 * (size_t)x, 4);
}

#if defined(__SSE2__)
/* Four half channels into 8-byte pixels, the usual RGBA texture: `plane[k]`
 * is the line of the channel that goes k-th in a pixel; eight pixels a
 * step by unpacks, where sample by sample was a 2-byte store each (a
 * scalar tail for the rest). */
static void
scatter_half4(const uint8_t *const plane[4], uint32_t n, uint8_t *dst)
{
    uint32_t x = 0;
    for (; x + 8 <= n; x += 8) {
        __m128i c[4];
        for (int k = 0; k < 4; k++)
            c[k] = _mm_loadu_si128((const __m128i *)(const void *)(plane[k] + 2 * (size_t)x));
        __m128i  lo01 = _mm_unpacklo_epi16(c[0], c[1]), lo23 = _mm_unpacklo_epi16(c[2], c[3]);
        __m128i  hi01 = _mm_unpackhi_epi16(c[0], c[1]), hi23 = _mm_unpackhi_epi16(c[2], c[3]);
        __m128i *o = (__m128i *)(void *)(dst + 8 * (size_t)x);
        _mm_storeu_si128(o, _mm_unpacklo_epi32(lo01, lo23));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi32(lo01, lo23));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi32(hi01, hi23));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi32(hi01, hi23));
    }
    for (; x < n; x++)
        for (int k = 0; k < 4; k++)
            memcpy(dst + 8 * (size_t)x + 2 * k, plane[k] + 2 * (size_t)x, 2);
}

/* Whether a line is four half channels filling 8-byte pixels; if so, which
 * channel goes k-th in a pixel, in order[k]. */
static bool
half4_order(const tex__exr_layout *lay, uint32_t order[4])
{
    if (lay->nchannels != 4 || lay->pixel != 8)
        return false;
    unsigned seen = 0;
    for (uint32_t c = 0; c < 4; c++) {
        if (lay->size[c] != 2 || lay->offset[c] < 0 || lay->offset[c] % 2 || lay->offset[c] > 6)
            return false;
        order[lay->offset[c] / 2] = c;
        seen |= 1u << (lay->offset[c] / 2);
    }
    return seen == 0xf;
}
#endif

/* The raw chunk's lines, each channel after the other, into interleaved
 * output pixels `row` bytes a line. */
static void
scatter(const tex__exr_layout *lay, const uint8_t *raw, uint32_t width, uint32_t height,
        uint8_t *out, size_t row)
{
#if defined(__SSE2__)
    uint32_t order[4];
    if (half4_order(lay, order)) {
        for (uint32_t y = 0; y < height; y++, out += row, raw += 8 * (size_t)width) {
            const uint8_t *plane[4];
            for (int k = 0; k < 4; k++)
                plane[k] = raw + 2 * (size_t)width * order[k];
            scatter_half4(plane, width, out);
        }
        return;
    }
#endif
    for (uint32_t y = 0; y < height; y++, out += row) {
        for (uint32_t c = 0; c < lay->nchannels; c++) {
            if (lay->offset[c] >= 0) {
                if (lay->size[c] == 2)
                    scatter_half(raw, width, out + lay->offset[c], lay->pixel);
                else
                    scatter_float(raw, width, out + lay->offset[c], lay->pixel);
            }
            raw += (size_t)lay->size[c] * width;
        }
    }
}

/* The chunk `ci` names, read and decoded into `out` (`row` bytes a line)
 * if it is width x height pixels, as `lay` says. */
static bool
chunk_read(tex__exr_chunks *t, const exr_chunk_info_t *ci, uint32_t width, uint32_t height,
           void *out, size_t row)
{
    size_t raw_n = raw_size(&t->lay, width, height);
    if (raw_n == 0 || raw_n > t->max_raw || ci->width != (int32_t)width ||
        ci->height != (int32_t)height || ci->unpacked_size != raw_n || ci->packed_size == 0 ||
        ci->packed_size > raw_n || exr_read_chunk(t->core, 0, ci, t->packed) != EXR_ERR_SUCCESS ||
        t->failed)
        return false;
    /* A chunk that would not shrink is stored as it is, whatever the
     * compression. */
    if (ci->compression == EXR_COMPRESSION_NONE
            ? ci->packed_size != raw_n
            : ci->packed_size < raw_n &&
                  !unzip(t->inflater, t->packed, ci->packed_size, t->scratch, t->packed, raw_n))
        return false;
    scatter(&t->lay, t->packed, width, height, out, row);
    return true;
}

bool
tex__exr_chunks_tile(tex__exr_chunks *t, uint32_t level, uint32_t tx, uint32_t ty, uint32_t width,
                     uint32_t height, void *out, size_t row)
{
    exr_chunk_info_t ci;
    t->failed = false;
    /* The core reads the chunk table once, checking every offset against
     * the file, and this chunk's header against the tile asked for. */
    return t->lay.tiled && level <= 255 && tx <= INT32_MAX && ty <= INT32_MAX &&
           exr_read_tile_chunk_info(t->core, 0, (int)tx, (int)ty, (int)level, (int)level, &ci) ==
               EXR_ERR_SUCCESS &&
           !t->failed && chunk_read(t, &ci, width, height, out, row);
}

bool
tex__exr_chunks_lines(tex__exr_chunks *t, int32_t y, uint32_t height, void *out, size_t row)
{
    exr_chunk_info_t ci;
    t->failed = false;
    /* As above: the core checks the block's header against y. */
    return !t->lay.tiled && exr_read_scanline_chunk_info(t->core, 0, y, &ci) == EXR_ERR_SUCCESS &&
           !t->failed && chunk_read(t, &ci, t->lay.chunk_width, height, out, row);
}
