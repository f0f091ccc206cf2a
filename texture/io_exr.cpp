/* The OpenEXR shim: tex_exr.h over OpenEXR 3.1's C++ API (tex_exr.h says
 * why not OpenEXRCore), but for the chunks io_exr_chunks.c decodes itself.
 * The project's only C++ file.
 *
 * Exceptions: every public function catches everything; OpenEXR's text
 * goes into err without the file name (our streams are all named
 * STREAM_NAME, which say_exc() cuts out). Files are read and written
 * through our own streams (FdIn, FdOut) over plain file descriptors, so
 * open errors carry errno's reason, reads past the end are reported as
 * truncation, and a failed write is noticed even where OpenEXR swallows the
 * exception (its OutputFile destructor writes the chunk table and ignores
 * errors).
 *
 * Defences against damaged files: OpenEXR parses and sanity-checks the
 * headers (MultiPartInputFile), then check_header() applies tex_exr.h's
 * limits before any InputPart, TiledInputPart or RgbaInputFile exists:
 * those are what allocate per-image tables and chunk buffers. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
extern "C" { /* C declarations: io_image.c, mip.c */
#include "tex_exr.h"
}
#include "exr_chunks.h" /* the fast path */

#include <Iex.h>
#include <ImfChannelList.h>
#include <ImfDoubleAttribute.h>
#include <ImfFloatAttribute.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfIO.h>
#include <ImfInputPart.h>
#include <ImfIntAttribute.h>
#include <ImfMultiPartInputFile.h>
#include <ImfOutputFile.h>
#include <ImfPartType.h>
#include <ImfRgbaFile.h>
#include <ImfStringAttribute.h>
#include <ImfThreading.h>
#include <ImfTileDescription.h>
#include <ImfTiledInputPart.h>
#include <ImfTiledOutputFile.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define STREAM_NAME "tex_exr"

namespace
{

void say(char err[TEX_ERR_LEN], const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void
say(char err[TEX_ERR_LEN], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, TEX_ERR_LEN, fmt, ap);
    va_end(ap);
}

/* "prefix: what" as one line of plain ASCII. OpenEXR's text names the
 * stream, as in `Cannot read image file "tex_exr". Early end of file.`:
 * everything up to the name goes, and so does the final period. A first
 * letter is lower-cased unless it starts an all-capitals word. Allocates
 * nothing, so it is safe inside a catch block. */
void
say_exc(char err[TEX_ERR_LEN], const char *prefix, const char *what)
{
    static const char marker[] = "\"" STREAM_NAME "\". ";
    const char       *cut = strstr(what, marker);
    if (cut)
        what = cut + sizeof marker - 1;
    int n = snprintf(err, TEX_ERR_LEN, "%s: ", prefix);
    if (n < 0 || n >= TEX_ERR_LEN - 1)
        return;
    char *m = err + n, *p = m;
    for (; *what && p < err + TEX_ERR_LEN - 1; what++) {
        unsigned char c = (unsigned char)*what;
        bool          space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
        if (space && p > m && p[-1] == ' ')
            continue; /* one space where OpenEXR has two, or a line break */
        *p++ = space ? ' ' : c < 0x20 || c >= 0x7f ? '?' : (char)c;
    }
    while (p > m && (p[-1] == '.' || p[-1] == ' '))
        p--;
    *p = '\0';
    if (p == m)
        snprintf(m, (size_t)(TEX_ERR_LEN - n), "unknown error");
    if (m[0] >= 'A' && m[0] <= 'Z' && m[1] >= 'a' && m[1] <= 'z')
        m[0] = (char)(m[0] - 'A' + 'a');
}

/* src as printable ASCII in dst[n], for names taken from a file. */
void
printable(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++)
        dst[i] = src[i] < 0x20 || src[i] >= 0x7f ? '?' : src[i];
    dst[i] = '\0';
}

/* Reads a file through pread(), so several streams may share one
 * descriptor, each with its own position. */
class FdIn final : public Imf::IStream
{
  public:
    FdIn(int fd, uint64_t size) : Imf::IStream(STREAM_NAME), fd_(fd), size_(size)
    {
    }

    bool read(char c[], int n) override
    {
        uint64_t want = n < 0 ? 0 : (uint64_t)n;
        if (pos_ > size_ || want > size_ - pos_) {
            hit_end_ = true;
            char msg[128];
            snprintf(msg, sizeof msg, "Early end of file: %llu bytes wanted at byte %llu of %llu",
                     (unsigned long long)want, (unsigned long long)pos_, (unsigned long long)size_);
            throw Iex::InputExc(msg);
        }
        for (uint64_t done = 0; done < want;) {
            ssize_t got = pread(fd_, c + done, want - done, (off_t)(pos_ + done));
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                hit_end_ = got == 0;
                throw Iex::InputExc(got < 0 ? strerror(errno) : "Early end of file: it shrank");
            }
            done += (uint64_t)got;
        }
        pos_ += want;
        return pos_ < size_;
    }

    uint64_t tellg() override
    {
        return pos_;
    }

    void seekg(uint64_t pos) override
    {
        pos_ = pos; /* past the end is fine until a read */
    }

    void clear() override
    {
    }

    bool hit_end() const
    {
        return hit_end_;
    }

    void forget_end()
    {
        hit_end_ = false;
    }

  private:
    int      fd_;
    uint64_t size_, pos_ = 0;
    bool     hit_end_ = false; /* some read wanted bytes past the end */
};

/* Writes a file through pwrite(); remembers the first failure's errno,
 * since OpenEXR's destructors swallow the exceptions we throw. */
class FdOut final : public Imf::OStream
{
  public:
    explicit FdOut(int fd) : Imf::OStream(STREAM_NAME), fd_(fd)
    {
    }

    /* OpenEXR writes a file in many small pieces (hundreds for a small
     * image, each its own system call before): they gather in a buffer,
     * written out when it fills, before a seek, and by flush(). */
    void write(const char c[], int n) override
    {
        size_t want = n < 0 ? 0 : (size_t)n;
        if (buf_.size() + want > BUF_BYTES)
            flush();
        if (want >= BUF_BYTES) {
            put(c, want, pos_);
        } else {
            if (buf_.empty())
                buf_pos_ = pos_;
            buf_.insert(buf_.end(), c, c + want);
        }
        pos_ += want;
    }

    uint64_t tellp() override
    {
        return pos_;
    }

    void seekp(uint64_t pos) override
    {
        flush();
        pos_ = pos;
    }

    /* Writes out what is buffered; throws as write() does. */
    void flush()
    {
        if (!buf_.empty()) {
            put(buf_.data(), buf_.size(), buf_pos_);
            buf_.clear();
        }
    }

    int error() const
    {
        return error_;
    }

  private:
    static constexpr size_t BUF_BYTES = 1 << 18;

    void put(const char *c, size_t want, uint64_t at)
    {
        for (size_t done = 0; done < want;) {
            ssize_t put = pwrite(fd_, c + done, want - done, (off_t)(at + done));
            if (put < 0 && errno == EINTR)
                continue;
            if (put <= 0) {
                int e = put < 0 ? errno : EIO;
                if (!error_)
                    error_ = e;
                throw Iex::IoExc(strerror(e));
            }
            done += (size_t)put;
        }
    }

    int               fd_;
    uint64_t          pos_ = 0, buf_pos_ = 0;
    int               error_ = 0;
    std::vector<char> buf_;
};

struct Fd {
    int fd = -1;
    ~Fd()
    {
        if (fd >= 0)
            close(fd);
    }
};

size_t
pixel_type_size(Imf::PixelType t)
{
    return t == Imf::HALF ? 2 : 4;
}

/* Scanlines per chunk, fixed by the compression (OpenEXR file layout). */
uint32_t
lines_per_chunk(Imf::Compression c)
{
    switch (c) {
    case Imf::ZIP_COMPRESSION:
    case Imf::PXR24_COMPRESSION:
        return 16;
    case Imf::PIZ_COMPRESSION:
    case Imf::B44_COMPRESSION:
    case Imf::B44A_COMPRESSION:
    case Imf::DWAA_COMPRESSION:
        return 32;
    case Imf::DWAB_COMPRESSION:
        return 256;
    default:
        return 1;
    }
}

/* Levels of one side under a rounding mode, and a level's side; the same
 * arithmetic as OpenEXR's, done before OpenEXR does it. */
uint32_t
levels_of(uint64_t size, bool round_up)
{
    uint32_t n = 0;
    while (((uint64_t)1 << n) < size && n < 63)
        n++; /* n = ceil(log2(size)) */
    return (round_up || ((uint64_t)1 << n) == size ? n : n - 1) + 1;
}

uint64_t
level_side(uint64_t size, uint32_t l, bool round_up)
{
    uint64_t s = round_up ? (size + ((uint64_t)1 << l) - 1) >> l : size >> l;
    return s ? s : 1;
}

uint64_t
tiles_of(uint64_t w, uint64_t h, uint64_t tw, uint64_t th)
{
    return ((w + tw - 1) / tw) * ((h + th - 1) / th);
}

} // namespace

struct tex_exr {
    Fd                                       fd; /* first member: closed last */
    uint64_t                                 size = 0;
    std::unique_ptr<FdIn>                    in;      /* for multi and its parts */
    std::unique_ptr<FdIn>                    in_rgba; /* for rgba */
    std::unique_ptr<Imf::MultiPartInputFile> multi;
    std::unique_ptr<Imf::InputPart>          scan;   /* a scanline file, or */
    std::unique_ptr<Imf::TiledInputPart>     tiles;  /* a tiled one, or */
    std::unique_ptr<Imf::RgbaInputFile>      rgba;   /* luminance/chroma */
    Imf::Header                              header; /* part 0's, for attributes */
    tex_exr_info                             info{};
    Imath::Box2i                             window; /* data window */
    std::string    chan[4];           /* file channel of each output channel; absent reads 0 */
    Imf::PixelType ptype = Imf::HALF; /* of the output samples */
    bool           ripmap = false;    /* read (0, 0) for level 0 */
    uint32_t       level_w[TEX_EXR_MAX_LEVELS] = {}, level_h[TEX_EXR_MAX_LEVELS] = {};
    const void    *tile_fb = nullptr; /* the `out` the tile frame buffer points at */
    /* The fast path (exr_chunks.h): its layout, planned at open where it
     * can read the file; its reader, made by the first read; how many
     * chunks it has read. */
    tex__exr_layout  fast_lay{};
    bool             fast_planned = false, fast_tried = false;
    bool             fast_fills = false; /* its chunks write every byte of their pixels */
    tex__exr_chunks *fast = nullptr;
    uint64_t         fast_chunks = 0;

    tex_exr() = default;
    tex_exr(const tex_exr &) = delete;
    tex_exr &operator=(const tex_exr &) = delete;
    ~tex_exr()
    {
        tex__exr_chunks_close(fast); /* before fd closes */
    }
};

namespace
{

/* Before a read: forget earlier reads past the end. After a failed one:
 * whether this one went past it. */
void
forget_end(tex_exr *f)
{
    if (f->in)
        f->in->forget_end();
    if (f->in_rgba)
        f->in_rgba->forget_end();
}

bool
hit_end(const tex_exr *f)
{
    return (f->in && f->in->hit_end()) || (f->in_rgba && f->in_rgba->hit_end());
}

/* Open, a regular file, and the magic number. */
tex_result
open_fd(tex_exr *f, const char *path, char err[TEX_ERR_LEN])
{
    f->fd.fd = tex_open_regular(path, err);
    struct stat st;
    if (f->fd.fd < 0)
        return TEX_ERR_OPEN;
    if (fstat(f->fd.fd, &st) != 0) {
        say(err, "cannot open: %s", strerror(errno));
        return TEX_ERR_OPEN;
    }
    f->size = (uint64_t)st.st_size;
    unsigned char magic[4];
    ssize_t       n;
    do
        n = pread(f->fd.fd, magic, sizeof magic, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        say(err, "cannot read: %s", strerror(errno));
        return TEX_ERR_OPEN;
    }
    static const unsigned char exr[4] = {0x76, 0x2f, 0x31, 0x01};
    if (n == 0) {
        say(err, "empty file: not an OpenEXR file");
        return TEX_ERR_FORMAT;
    }
    if (memcmp(magic, exr, (size_t)n) != 0) {
        say(err, "not an OpenEXR file");
        return TEX_ERR_FORMAT;
    }
    if (n < 4) {
        say(err, "truncated: file ends inside the OpenEXR magic number");
        return TEX_ERR_CORRUPT;
    }
    return TEX_OK;
}

/* n bytes at pos (fewer at the end of the file); how many, or -1. */
ssize_t
read_at(int fd, uint64_t pos, void *buf, size_t n)
{
    ssize_t got;
    do
        got = pread(fd, buf, n, (off_t)pos);
    while (got < 0 && errno == EINTR);
    return got;
}

/* A NUL-terminated name of at most max bytes at *pos, into name[256];
 * false when it does not end in time (OpenEXR will say what is wrong). */
bool
name_at(int fd, uint64_t *pos, size_t max, char name[256])
{
    ssize_t got = read_at(fd, *pos, name, max + 1);
    if (got <= 0)
        return false;
    const char *end = (const char *)memchr(name, '\0', (size_t)got);
    if (!end)
        return false;
    *pos += (uint64_t)(end - name) + 1;
    return true;
}

/* Bytes OpenEXR 3.1 reads for an attribute of a fixed-size type, whatever
 * size the file gives it; 0 for the others. */
uint64_t
fixed_size(const char *type)
{
    static const struct {
        const char *type;
        uint64_t    size;
    } fixed[] = {
        {"box2i", 16},      {"box2f", 16},   {"chromaticities", 32},
        {"compression", 1}, {"double", 8},   {"envmap", 1},
        {"float", 4},       {"int", 4},      {"keycode", 28},
        {"lineOrder", 1},   {"m33f", 36},    {"m33d", 72},
        {"m44f", 64},       {"m44d", 128},   {"rational", 8},
        {"tiledesc", 9},    {"timecode", 8}, {"v2i", 8},
        {"v2f", 8},         {"v2d", 16},     {"v3i", 12},
        {"v3f", 12},        {"v3d", 24},     {"deepImageState", 1},
    };
    for (const auto &t : fixed)
        if (strcmp(type, t.type) == 0)
            return t.size;
    return 0;
}

bool
u32_at(int fd, uint64_t pos, uint32_t *v)
{
    unsigned char b[4];
    if (read_at(fd, pos, b, 4) != 4)
        return false;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

enum attr_check { ATTR_OK, ATTR_PAST_END, ATTR_NEGATIVE };

/* Moves *pos past the value of an attribute of `type` and `size` that
 * starts there, to where OpenEXR will read the next attribute; *claim is
 * what reading it allocates. ATTR_PAST_END when that is more than the
 * file holds; ATTR_NEGATIVE for a negative size. Where the file is damaged
 * in another way *pos goes past the end, for OpenEXR to report it. */
attr_check
attr_skip(const tex_exr *f, const char *type, uint32_t size, uint64_t *pos, uint64_t *claim)
{
    uint64_t left = *pos <= f->size ? f->size - *pos : 0;
    if (uint64_t n = fixed_size(type)) { /* read whole, allocates nothing */
        *pos += n;
        return ATTR_OK;
    }
    if (strcmp(type, "chlist") == 0) { /* entries up to an empty name; the size is not used */
        char name[256];
        for (;;) {
            if (!name_at(f->fd.fd, pos, 255, name)) {
                *pos = UINT64_MAX;
                return ATTR_OK;
            }
            if (!name[0])
                return ATTR_OK;
            *pos += 16;
        }
    }
    uint32_t w, h;
    if (strcmp(type, "preview") == 0 && u32_at(f->fd.fd, *pos, &w) &&
        u32_at(f->fd.fd, *pos + 4, &h)) { /* w x h RGBA bytes, allocated first */
        /* w * h fits in 64 bits; 4 * w * h may not (fuzz-exr, under
         * UBSan's unsigned wrap check): compare before multiplying. */
        uint64_t pixels = (uint64_t)w * h;
        *claim = pixels <= (UINT64_MAX - 8) / 4 ? 8 + 4 * pixels : UINT64_MAX;
        if (left < 8 || pixels > (left - 8) / 4)
            return ATTR_PAST_END;
        *pos += *claim;
        return ATTR_OK;
    }
    *claim = size; /* string, opaque, ...: allocated, then read */
    if ((int32_t)size < 0)
        return ATTR_NEGATIVE;
    if (size > left)
        return ATTR_PAST_END;
    if (strcmp(type, "idmanifest") == 0) { /* 3.1: a 64-bit size, then size - 4 bytes */
        *pos += size >= 4 ? (uint64_t)size + 4 : UINT64_MAX / 2;
        return ATTR_OK;
    }
    if (strcmp(type, "stringvector") == 0) /* strings of 32-bit lengths, each allocated */
        for (uint64_t at = *pos, end = *pos + size; at + 4 <= end;) {
            uint32_t n;
            if (!u32_at(f->fd.fd, at, &n))
                break;
            at += 4;
            *claim = n;
            if ((int32_t)n < 0)
                return ATTR_NEGATIVE;
            if (n > f->size - at)
                return ATTR_PAST_END;
            at += n;
        }
    *pos += size;
    return ATTR_OK;
}

/* Every header attribute against what is left of the file, before OpenEXR
 * reads the header: it allocates what an attribute claims (a string's or
 * an unknown type's size, a preview's width x height) before reading the
 * value, so a file of 100 bytes claiming 1.3 GB made it allocate 1.3 GB
 * (found by fuzz-exr). Walks the header as OpenEXR 3.1 reads it (each
 * part's in a multipart file): name, type name, 32-bit size, value. What
 * else is wrong is left to OpenEXR to report. */
tex_result
headers_fit(const tex_exr *f, char err[TEX_ERR_LEN])
{
    unsigned char version[4];
    if (read_at(f->fd.fd, 4, version, 4) != 4)
        return TEX_OK;
    bool multipart = version[1] & 0x10; /* bit 12 */
    /* OpenEXR 3.1 reads names of up to 255 bytes whether or not the
     * long-names flag (bit 10) is set, so the walk does too. */
    uint64_t pos = 8;
    while (pos < f->size) {
        char     name[256], type[256];
        uint32_t size;
        if (!name_at(f->fd.fd, &pos, 255, name))
            return TEX_OK;
        if (!name[0]) { /* the end of a header */
            unsigned char next;
            if (!multipart || read_at(f->fd.fd, pos, &next, 1) != 1 || next == 0)
                return TEX_OK; /* ... and, in a multipart file, the empty one: the last */
            continue;
        }
        if (!name_at(f->fd.fd, &pos, 255, type) || !u32_at(f->fd.fd, pos, &size))
            return TEX_OK;
        pos += 4;
        uint64_t   claim = 0;
        attr_check c = attr_skip(f, type, size, &pos, &claim);
        if (c != ATTR_OK) {
            char shown[64];
            printable(shown, sizeof shown, name);
            if (c == ATTR_NEGATIVE)
                say(err, "bad header: attribute '%s' has a negative size", shown);
            else
                say(err,
                    "truncated: header attribute '%s' of %llu bytes runs past the end of the file",
                    shown, (unsigned long long)claim);
            return TEX_ERR_CORRUPT;
        }
    }
    return TEX_OK;
}

/* Which file channels make Y, YA, RGB or RGBA (see tex_exr.h). */
tex_result
choose_channels(tex_exr *f, const Imf::Header &h, bool tiled, char err[TEX_ERR_LEN])
{
    const Imf::ChannelList &cl = h.channels();
    auto     has = [&cl](const char *name) { return cl.findChannel(name) != nullptr; };
    uint32_t n = 0;
    bool     yc = has("Y") && (has("RY") || has("BY"));
    if (yc) {
        if (tiled) {
            say(err, "luminance/chroma channels in a tiled file are not supported");
            return TEX_ERR_UNSUPPORTED;
        }
        for (const char *c : {"R", "G", "B", "A"})
            if (c[0] != 'A' || has("A"))
                f->chan[n++] = c;
    } else if (has("R") || has("G") || has("B")) {
        for (const char *c : {"R", "G", "B", "A"})
            if (c[0] != 'A' || has("A"))
                f->chan[n++] = c;
    } else if (has("Y")) {
        f->chan[n++] = "Y";
        if (has("A"))
            f->chan[n++] = "A";
    } else {
        for (auto it = cl.begin(); it != cl.end() && n < 4; ++it)
            f->chan[n++] = it.name();
    }
    if (n == 0) {
        say(err, "bad header: no channels");
        return TEX_ERR_CORRUPT;
    }
    bool any_float = false;
    for (uint32_t c = 0; c < n && !yc; c++) {
        const Imf::Channel *ch = cl.findChannel(f->chan[c]);
        if (!ch)
            continue; /* reads as 0 */
        if (ch->xSampling != 1 || ch->ySampling != 1) {
            char name[40];
            printable(name, sizeof name, f->chan[c].c_str());
            say(err, "channel '%s' is subsampled (%dx%d), which only RY and BY may be", name,
                ch->xSampling, ch->ySampling);
            return TEX_ERR_UNSUPPORTED;
        }
        any_float |= ch->type != Imf::HALF;
    }
    f->ptype = any_float ? Imf::FLOAT : Imf::HALF;
    f->info.nchannels = n;
    f->info.type = any_float ? TEX_TYPE_FLOAT : TEX_TYPE_HALF;
    f->info.luminance_chroma = yc;
    return TEX_OK;
}

/* tex_exr.h's limits, on part 0's header as OpenEXR parsed it. */
tex_result
check_header(tex_exr *f, const Imf::Header &h, char err[TEX_ERR_LEN])
{
    std::string type = h.hasType() ? h.type() : std::string(Imf::SCANLINEIMAGE);
    if (Imf::isDeepData(type)) {
        say(err, "deep data is not supported");
        return TEX_ERR_UNSUPPORTED;
    }
    if (type != Imf::SCANLINEIMAGE && type != Imf::TILEDIMAGE) {
        char name[40];
        printable(name, sizeof name, type.c_str());
        say(err, "part type '%s' is not supported", name);
        return TEX_ERR_UNSUPPORTED;
    }
    bool         tiled = type == Imf::TILEDIMAGE;
    Imath::Box2i dw = h.dataWindow(), dpw = h.displayWindow();
    int64_t      w = (int64_t)dw.max.x - dw.min.x + 1, ht = (int64_t)dw.max.y - dw.min.y + 1;
    tex_result   r = tex_check_size(w < 0 ? 0 : (uint64_t)w, ht < 0 ? 0 : (uint64_t)ht, err);
    if (r != TEX_OK)
        return r;
    f->window = dw;
    f->info.width = (uint32_t)w;
    f->info.height = (uint32_t)ht;
    f->info.x0 = dw.min.x;
    f->info.y0 = dw.min.y;
    f->info.display_x0 = dpw.min.x;
    f->info.display_y0 = dpw.min.y;
    f->info.display_width = (uint32_t)((int64_t)dpw.max.x - dpw.min.x + 1);
    f->info.display_height = (uint32_t)((int64_t)dpw.max.y - dpw.min.y + 1);
    f->info.tiled = tiled;
    f->info.nlevels = 1;
    f->level_w[0] = f->info.width;
    f->level_h[0] = f->info.height;

    r = choose_channels(f, h, tiled, err);
    if (r != TEX_OK)
        return r;

    /* OpenEXR decodes every channel of a chunk, wanted or not. */
    uint64_t pixel_bytes = 0;
    for (auto it = h.channels().begin(); it != h.channels().end(); ++it)
        pixel_bytes += pixel_type_size(it.channel().type);

    uint64_t chunk_pixels, chunks;
    if (tiled) {
        const Imf::TileDescription &td = h.tileDescription();
        uint64_t                    tw = td.xSize, th = td.ySize;
        if (tw == 0 || th == 0 || tw * th > TEX_EXR_MAX_TILE_PIXELS) {
            say(err, "tile size %llux%llu is outside 1 to %lu pixels", (unsigned long long)tw,
                (unsigned long long)th, (unsigned long)TEX_EXR_MAX_TILE_PIXELS);
            return TEX_ERR_TOO_LARGE;
        }
        f->info.tile_width = (uint32_t)tw;
        f->info.tile_height = (uint32_t)th;
        chunk_pixels = tw * th;
        bool up = td.roundingMode == Imf::ROUND_UP;
        if (td.mode == Imf::MIPMAP_LEVELS) {
            chunks = 0;
            for (uint32_t l = 0, n = levels_of((uint64_t)std::max(w, ht), up); l < n; l++)
                chunks += tiles_of(level_side(w, l, up), level_side(ht, l, up), tw, th);
        } else if (td.mode == Imf::RIPMAP_LEVELS) {
            uint64_t across = 0, down = 0;
            for (uint32_t l = 0, n = levels_of(w, up); l < n; l++)
                across += (level_side(w, l, up) + tw - 1) / tw;
            for (uint32_t l = 0, n = levels_of(ht, up); l < n; l++)
                down += (level_side(ht, l, up) + th - 1) / th;
            chunks = across * down;
            f->ripmap = true;
        } else {
            chunks = tiles_of(w, ht, tw, th);
        }
    } else {
        /* The compression's whole block, even in a shorter image: that is
         * what OpenEXR allocates its line buffers for. */
        uint64_t lines = lines_per_chunk(h.compression());
        chunk_pixels = w * lines;
        chunks = (ht + lines - 1) / lines;
    }
    if (chunk_pixels * pixel_bytes > TEX_EXR_MAX_CHUNK_BYTES) {
        say(err, "a chunk of %llu pixels of %llu bytes is over the limit of %llu bytes",
            (unsigned long long)chunk_pixels, (unsigned long long)pixel_bytes,
            (unsigned long long)TEX_EXR_MAX_CHUNK_BYTES);
        return TEX_ERR_TOO_LARGE;
    }
    if (chunks > f->size / 8) {
        say(err, "truncated: %llu chunks need a %llu-byte table; the file has %llu bytes",
            (unsigned long long)chunks, (unsigned long long)chunks * 8,
            (unsigned long long)f->size);
        return TEX_ERR_CORRUPT;
    }
    return TEX_OK;
}

/* Makes the OpenEXR object that reads part 0, once its header passed. */
void
make_reader(tex_exr *f)
{
    if (f->info.luminance_chroma) {
        /* RgbaInputFile parses the headers again, from its own stream at 0. */
        f->in_rgba.reset(new FdIn(f->fd.fd, f->size));
        f->rgba.reset(new Imf::RgbaInputFile(*f->in_rgba, 0));
        f->multi.reset();
        return;
    }
    if (!f->info.tiled) {
        f->scan.reset(new Imf::InputPart(*f->multi, 0));
        return;
    }
    f->tiles.reset(new Imf::TiledInputPart(*f->multi, 0));
    if (f->tiles->levelMode() == Imf::MIPMAP_LEVELS) {
        int n = f->tiles->numLevels();
        if (n < 1 || n > TEX_EXR_MAX_LEVELS)
            throw Iex::ArgExc("Bad number of levels");
        f->info.nlevels = (uint32_t)n;
        for (int l = 0; l < n; l++) {
            f->level_w[l] = (uint32_t)f->tiles->levelWidth(l);
            f->level_h[l] = (uint32_t)f->tiles->levelHeight(l);
        }
    }
}

/* The fast path's layout (exr_chunks.h) for a file it can read: ZIP, ZIPS
 * or uncompressed, at most TEX__EXR_MAX_CHANNELS channels, and every
 * channel read at its own sample type (a half channel of a float output
 * is converted, so OpenEXR reads it). */
void
plan_fast_chunks(tex_exr *f)
{
    Imf::Compression c = f->header.compression();
    const char      *env = getenv("RT_EXR_FAST");
    if ((env && strcmp(env, "0") == 0) || (!f->tiles && !f->scan) ||
        (c != Imf::NO_COMPRESSION && c != Imf::ZIP_COMPRESSION && c != Imf::ZIPS_COMPRESSION))
        return;
    /* A chunk table OpenEXR had to rebuild by scanning the file: its
     * chunks are wherever that scan put them, which only it knows. */
    for (int p = 0; p < f->multi->parts(); p++)
        if (!f->multi->partComplete(p))
            return;
    tex__exr_layout &lay = f->fast_lay;
    size_t           ss = pixel_type_size(f->ptype);
    uint32_t         n = 0;
    lay.pixel = (uint32_t)(f->info.nchannels * ss);
    lay.tiled = f->tiles != nullptr;
    lay.chunk_width = lay.tiled ? f->info.tile_width : f->info.width;
    lay.chunk_height = lay.tiled ? f->info.tile_height : (uint32_t)lines_per_chunk(c);
    lay.max_lines =
        lay.tiled ? lay.chunk_height : std::min<uint32_t>(lay.chunk_height, f->info.height);
    const Imf::ChannelList &cl = f->header.channels();
    for (auto it = cl.begin(); it != cl.end(); ++it, n++) {
        if (n == TEX__EXR_MAX_CHANNELS)
            return;
        lay.name[n] = it.name(); /* lives in f->header's list */
        lay.size[n] = (uint8_t)pixel_type_size(it.channel().type);
        lay.offset[n] = -1;
        for (uint32_t o = 0; o < f->info.nchannels; o++) {
            if (f->chan[o] != it.name())
                continue;
            if (it.channel().type != f->ptype)
                return;
            lay.offset[n] = (int16_t)(o * ss);
        }
    }
    lay.nchannels = n;
    /* Whether a chunk read here writes every byte of its pixels: each
     * output channel is some file channel's (one the file lacks reads 0,
     * which only the zeroing before a read gives it). */
    f->fast_fills = true;
    for (uint32_t o = 0; o < f->info.nchannels; o++) {
        bool written = false;
        for (uint32_t k = 0; k < n; k++)
            written |= lay.offset[k] == (int16_t)(o * ss);
        f->fast_fills &= written;
    }
    f->fast_planned = true;
}

/* f's fast-path reader, made by the first read that wants it; NULL where
 * the file is OpenEXR's to read. */
tex__exr_chunks *
fast_reader(tex_exr *f)
{
    if (f->fast_planned && !f->fast_tried) {
        f->fast_tried = true;
        f->fast = tex__exr_chunks_open(f->fd.fd, f->size, &f->fast_lay);
    }
    return f->fast;
}

/* A whole level through the fast path: every scanline block, or every
 * tile, straight into `out`. False as soon as one chunk is refused (the
 * caller reads the level through OpenEXR, which overwrites it all). */
bool
fast_read_image(tex_exr *f, uint32_t level, tex_image *out)
{
    if (!fast_reader(f))
        return false;
    const tex__exr_layout &lay = f->fast_lay;
    size_t                 row = (size_t)lay.pixel * out->width;
    char                  *pixels = (char *)out->pixels;
    uint64_t               chunks = 0;
    if (!lay.tiled) {
        for (int64_t y = f->window.min.y; y <= f->window.max.y; y += lay.chunk_height, chunks++) {
            uint32_t h = (uint32_t)std::min<int64_t>(lay.chunk_height, f->window.max.y - y + 1);
            if (!tex__exr_chunks_lines(f->fast, (int32_t)y, h,
                                       pixels + (uint64_t)(y - f->window.min.y) * row, row))
                return false;
        }
    } else {
        uint32_t tw = lay.chunk_width, th = lay.chunk_height;
        for (uint32_t ty = 0; ty * th < out->height; ty++)
            for (uint32_t tx = 0; tx * tw < out->width; tx++, chunks++)
                if (!tex__exr_chunks_tile(
                        f->fast, level, tx, ty, std::min(tw, out->width - tx * tw),
                        std::min(th, out->height - ty * th),
                        pixels + (uint64_t)ty * th * row + (uint64_t)tx * tw * lay.pixel, row))
                    return false;
    }
    f->fast_chunks += chunks;
    return true;
}

/* One slice per output channel into interleaved samples at `base`, where
 * pixel (x, y) of the file is at base + x * xs + y * ys. */
Imf::FrameBuffer
frame_buffer(const tex_exr *f, char *base, size_t xs, size_t ys, bool tile_coords)
{
    Imf::FrameBuffer fb;
    size_t           ss = pixel_type_size(f->ptype);
    for (uint32_t c = 0; c < f->info.nchannels; c++)
        fb.insert(f->chan[c],
                  Imf::Slice(f->ptype, base + c * ss, xs, ys, 1, 1, 0.0, tile_coords, tile_coords));
    return fb;
}

/* The address that file pixel (x0, y0) maps to `pixels` through: computed
 * as an integer, since it may lie outside the buffer (OpenEXR only adds
 * offsets that land inside). Signed: with a window's origin far from (0,
 * 0) the unsigned form wrapped around (fuzz-exr, UBSan's unsigned check);
 * the offset is below 2^52 in size and an address below 2^47, so the
 * difference fits. */
char *
origin_shift(void *pixels, int64_t x0, int64_t y0, size_t xs, size_t ys)
{
    int64_t offset = x0 * (int64_t)xs + y0 * (int64_t)ys;
    return (char *)(intptr_t)((intptr_t)pixels - (intptr_t)offset);
}

/* The luminance/chroma path: RgbaInputFile converts to RGB(A) half, read in
 * strips so the Rgba buffer stays small. */
void
read_rgba(tex_exr *f, tex_image *out)
{
    const uint32_t         w = f->info.width, strip = 64, nch = f->info.nchannels;
    std::vector<Imf::Rgba> buf((size_t)w * strip);
    uint16_t              *px = (uint16_t *)out->pixels;
    for (int64_t y = f->window.min.y; y <= f->window.max.y; y += strip) {
        int64_t y2 = std::min<int64_t>(y + strip - 1, f->window.max.y);
        auto   *base = (Imf::Rgba *)origin_shift(buf.data(), f->window.min.x, y, sizeof(Imf::Rgba),
                                                 sizeof(Imf::Rgba) * w);
        f->rgba->setFrameBuffer(base, 1, w);
        f->rgba->readPixels((int)y, (int)y2);
        for (int64_t row = y; row <= y2; row++) {
            const Imf::Rgba *src = &buf[(size_t)(row - y) * w];
            uint16_t        *dst = px + (size_t)(row - f->window.min.y) * w * nch;
            for (uint32_t x = 0; x < w; x++, dst += nch) {
                dst[0] = src[x].r.bits();
                dst[1] = src[x].g.bits();
                dst[2] = src[x].b.bits();
                if (nch == 4)
                    dst[3] = src[x].a.bits();
            }
        }
    }
}

/* A file written under a temporary name in path's folder, then flushed to
 * disk (fsync) and renamed over path by finish(true). finish(false), a
 * failure at any step, or destruction before finish() removes it: path is
 * untouched. */
class AtomicFile
{
  public:
    AtomicFile() = default;
    AtomicFile(const AtomicFile &) = delete;
    AtomicFile &operator=(const AtomicFile &) = delete;

    ~AtomicFile()
    {
        if (fd_.fd >= 0)
            unlink(tmp_.c_str());
    }

    /* Where `path` leads (tex_output_resolve()): beside the regular file a
     * link leads to, or, for a FIFO or a device, an unlinked temporary file
     * copied there at the end (OpenEXR seeks back to write its offsets). */
    tex_result open(const char *path, char err[TEX_ERR_LEN])
    {
        char      *target = nullptr;
        bool       direct = false;
        tex_result r = tex_output_resolve(path, &target, &direct, err);
        if (r != TEX_OK)
            return r;
        std::string base = direct ? tmp_dir() + "/rt-output" : std::string(target);
        free(target);
        /* Relaxed: the counter only has to differ between calls of this
         * process (the pid tells processes apart); it orders nothing. */
        static std::atomic<unsigned> counter{0};
        for (int attempt = 0; attempt < 100 && fd_.fd < 0; attempt++) {
            tmp_ = base + ".tmp-" + std::to_string(getpid()) + "-" +
                   std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
            fd_.fd = ::open(tmp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd_.fd < 0 && errno != EEXIST)
                break;
        }
        if (fd_.fd < 0) {
            say(err, "cannot write: %s", strerror(errno));
            return TEX_ERR_WRITE;
        }
        if (direct) /* nothing is left behind, whatever happens */
            unlink(tmp_.c_str()), tmp_.clear();
        direct_ = direct;
        path_ = direct ? std::string(path) : base;
        out_ = std::make_unique<FdOut>(fd_.fd);
        return TEX_OK;
    }

    FdOut &out()
    {
        return *out_;
    }

    /* An exception from a write, said in err: errno's reason where the
     * stream failed, else OpenEXR's. */
    tex_result failed(const std::exception &e, char err[TEX_ERR_LEN])
    {
        if (out_ && out_->error())
            say(err, "cannot write: %s", strerror(out_->error()));
        else
            say_exc(err, "cannot write", e.what());
        return TEX_ERR_WRITE;
    }

    /* ok: every write succeeded. Returns TEX_OK once renamed, else
     * TEX_ERR_WRITE (err says why when the failure is its own). */
    tex_result finish(bool ok, char err[TEX_ERR_LEN])
    {
        tex_result r = ok ? TEX_OK : TEX_ERR_WRITE;
        if (ok) {
            try {
                out_->flush();                 /* what the file's destructor wrote last */
            } catch (const std::exception &) { /* out_->error() has it */
            }
            if (out_->error()) { /* or swallowed by a destructor */
                say(err, "cannot write: %s", strerror(out_->error()));
                r = TEX_ERR_WRITE;
            }
        }
        if (r == TEX_OK && direct_)
            r = tex_output_copy(fd_.fd, path_.c_str(), err);
        else if (r == TEX_OK && fsync(fd_.fd) != 0) {
            say(err, "cannot write: %s", strerror(errno));
            r = TEX_ERR_WRITE;
        }
        int closed = close(fd_.fd);
        fd_.fd = -1;
        if (r == TEX_OK && closed != 0) {
            say(err, "cannot write: %s", strerror(errno));
            r = TEX_ERR_WRITE;
        }
        if (r == TEX_OK && !direct_ && rename(tmp_.c_str(), path_.c_str()) != 0) {
            say(err, "cannot write: %s", strerror(errno));
            r = TEX_ERR_WRITE;
        }
        if (r != TEX_OK && !direct_)
            unlink(tmp_.c_str());
        return r;
    }

  private:
    static std::string tmp_dir()
    {
        const char *dir = getenv("TMPDIR");
        return dir && *dir ? dir : "/tmp";
    }

    Fd                     fd_;
    std::string            tmp_, path_;
    bool                   direct_ = false;
    std::unique_ptr<FdOut> out_;
};

/* Writes path through an AtomicFile: body(stream) writes it whole. */
template <class Body>
tex_result
write_atomically(const char *path, char err[TEX_ERR_LEN], Body &&body)
{
    AtomicFile file;
    tex_result r = file.open(path, err);
    if (r != TEX_OK)
        return r;
    try {
        body(file.out());
    } catch (const std::bad_alloc &) {
        say(err, "out of memory");
        r = TEX_ERR_NOMEM;
    } catch (const std::exception &e) {
        r = file.failed(e, err);
    }
    tex_result done = file.finish(r == TEX_OK, err);
    return r != TEX_OK ? r : done;
}

/* An image's shape (its pixels are not looked at) as OpenEXR can write it. */
tex_result
check_shape(const tex_image *img, const char *what, char err[TEX_ERR_LEN])
{
    if ((img->type != TEX_TYPE_HALF && img->type != TEX_TYPE_FLOAT) || img->nchannels < 1 ||
        img->nchannels > 4) {
        say(err, "%s: %u channels of type %d: OpenEXR takes 1-4 channels of half or float", what,
            img->nchannels, (int)img->type);
        return TEX_ERR_INVALID;
    }
    tex_result r = tex_check_size(img->width, img->height, err);
    return r == TEX_ERR_TOO_LARGE || r == TEX_OK ? r : TEX_ERR_INVALID;
}

tex_result
check_image(const tex_image *img, const char *what, char err[TEX_ERR_LEN])
{
    if (!img || !img->pixels) {
        say(err, "%s has no pixels", what);
        return TEX_ERR_INVALID;
    }
    return check_shape(img, what, err);
}

/* The header of a file to write: size, compression (zlib's level: 0 is
 * OpenEXR's default), channels, extra attributes. */
tex_result
make_header(Imf::Header &h, const tex_image *img, Imf::Compression comp, int zip_level,
            const tex_exr_attr *attrs, size_t nattrs, char err[TEX_ERR_LEN])
{
    static const char *const names[4][4] = {
        {"Y"}, {"Y", "A"}, {"R", "G", "B"}, {"R", "G", "B", "A"}};
    h = Imf::Header((int)img->width, (int)img->height);
    h.compression() = comp;
    if (zip_level > 0)
        h.zipCompressionLevel() = zip_level;
    Imf::PixelType t = img->type == TEX_TYPE_HALF ? Imf::HALF : Imf::FLOAT;
    for (uint32_t c = 0; c < img->nchannels; c++)
        h.channels().insert(names[img->nchannels - 1][c], Imf::Channel(t));
    if (nattrs > 0 && !attrs) {
        say(err, "%zu attributes but no array", nattrs);
        return TEX_ERR_INVALID;
    }
    /* All checked against OpenEXR's own attributes before any is added, so
     * a repeated name is not taken for one of them. */
    for (size_t i = 0; i < nattrs; i++) {
        const tex_exr_attr *a = &attrs[i];
        size_t              len = a->name ? strlen(a->name) : 0;
        if (len == 0 || len > 31) {
            say(err, "attribute %zu: a name must have 1-31 bytes", i);
            return TEX_ERR_INVALID;
        }
        bool reserved = h.find(a->name) != h.end();
        for (const char *n : {"tiles", "type", "name", "version", "chunkCount"})
            reserved |= strcmp(a->name, n) == 0;
        if (reserved) {
            say(err, "attribute '%s' is one OpenEXR writes itself", a->name);
            return TEX_ERR_INVALID;
        }
        /* Read as its underlying type: a C caller may store any int there. */
        std::underlying_type<tex_exr_attr_kind>::type kind;
        memcpy(&kind, &a->kind, sizeof kind);
        if (kind < TEX_EXR_ATTR_FLOAT || kind > TEX_EXR_ATTR_DOUBLE) {
            say(err, "attribute %zu: kind %d is not one of tex_exr_attr_kind", i, (int)kind);
            return TEX_ERR_INVALID;
        }
        if (kind == TEX_EXR_ATTR_STRING && !a->s) {
            say(err, "attribute %zu: string is NULL", i);
            return TEX_ERR_INVALID;
        }
    }
    for (size_t i = 0; i < nattrs; i++) {
        const tex_exr_attr *a = &attrs[i];
        /* A repeated name keeps the last; not through Header::erase(),
         * which leaks the attribute in OpenEXR 3.1. */
        bool later = false;
        for (size_t j = i + 1; j < nattrs && !later; j++)
            later = strcmp(attrs[j].name, a->name) == 0;
        if (later)
            continue;
        switch (a->kind) { /* checked above */
        case TEX_EXR_ATTR_STRING:
            h.insert(a->name, Imf::StringAttribute(a->s));
            break;
        case TEX_EXR_ATTR_INT:
            h.insert(a->name, Imf::IntAttribute(a->i));
            break;
        case TEX_EXR_ATTR_DOUBLE:
            h.insert(a->name, Imf::DoubleAttribute(a->d));
            break;
        default:
            h.insert(a->name, Imf::FloatAttribute(a->f));
            break;
        }
    }
    return TEX_OK;
}

/* Slices over an image whose top-left pixel is (0, 0) in the file; with
 * tile_rows, whose top row is each tile's own (a row of tiles). */
Imf::FrameBuffer
image_frame_buffer(const tex_image *img, bool tile_rows = false)
{
    static const char *const names[4][4] = {
        {"Y"}, {"Y", "A"}, {"R", "G", "B"}, {"R", "G", "B", "A"}};
    Imf::PixelType   t = img->type == TEX_TYPE_HALF ? Imf::HALF : Imf::FLOAT;
    size_t           ss = pixel_type_size(t), xs = ss * img->nchannels;
    Imf::FrameBuffer fb;
    for (uint32_t c = 0; c < img->nchannels; c++)
        fb.insert(names[img->nchannels - 1][c],
                  Imf::Slice(t, (char *)img->pixels + c * ss, xs, xs * img->width, 1, 1, 0.0, false,
                             tile_rows));
    return fb;
}

/* OpenEXR's global thread pool, lent to scanline writes (tex_exr.h,
 * "Threads"). OpenEXR 3.1 hands every chunk of every file to that one pool
 * (ThreadPool::addGlobalTask; with no threads the caller runs it), so a
 * pool left running would take the texture system's tile reads off their
 * own threads, and its threads would be joined by a static destructor at
 * exit. It has threads only while a lease is held. Changing its size is
 * safe with chunks in flight only two ways, which are the only ones used:
 * growing it, and emptying it (OpenEXR then swaps in a threadless pool and
 * the old one runs what is queued before its threads end). Shrinking it to
 * fewer threads would drop queued chunks (3.1's finish() clears the queue)
 * and hang their files. */
std::mutex pool_lock;    /* guards pool_leases, pool_threads; held while OpenEXR resizes its pool */
unsigned   pool_leases;  /* writes holding a PoolLease */
int        pool_threads; /* the pool's size as set here; 0 when no lease is held */

class PoolLease
{
  public:
    /* Threads for a write that wants `want`; threads() says how many it
     * got (0: it runs on the calling thread). */
    explicit PoolLease(unsigned want)
    {
        if (want < 2)
            return;
        std::lock_guard<std::mutex> g(pool_lock);
        if ((int)want > pool_threads) {
            try {
                Imf::setGlobalThreadCount((int)want);
            } catch (...) { /* no thread to start: use those there are */
            }
            pool_threads = Imf::globalThreadCount();
        }
        pool_leases++;
        held_ = true;
        threads_ = std::min((int)want, pool_threads);
    }

    ~PoolLease()
    {
        if (!held_)
            return;
        std::lock_guard<std::mutex> g(pool_lock);
        if (--pool_leases > 0 || pool_threads == 0)
            return;
        try {
            Imf::setGlobalThreadCount(0); /* runs what is queued, joins the threads */
            pool_threads = 0;
        } catch (...) { /* out of memory for the threadless pool: the next lease tries */
        }
    }

    PoolLease(const PoolLease &) = delete;
    PoolLease &operator=(const PoolLease &) = delete;

    int threads() const
    {
        return threads_;
    }

  private:
    bool held_ = false;
    int  threads_ = 0;
};

/* The OpenEXR compression of *c; false for a value outside the enum. A C
 * caller may store any int there, which C++ must not load as the enum
 * (UBSan: "not a valid value"), so it is read as its underlying type. */
bool
compression_of(const tex_exr_compression *c, Imf::Compression *out)
{
    std::underlying_type<tex_exr_compression>::type v;
    memcpy(&v, c, sizeof v);
    switch (v) {
    case TEX_EXR_ZIP:
        *out = Imf::ZIP_COMPRESSION;
        return true;
    case TEX_EXR_NONE:
        *out = Imf::NO_COMPRESSION;
        return true;
    case TEX_EXR_RLE:
        *out = Imf::RLE_COMPRESSION;
        return true;
    case TEX_EXR_ZIPS:
        *out = Imf::ZIPS_COMPRESSION;
        return true;
    case TEX_EXR_PIZ:
        *out = Imf::PIZ_COMPRESSION;
        return true;
    }
    return false;
}

/* Threads worth asking the pool for: more than the CPUs only take turns,
 * and more than the blocks of lines have nothing to do (each costs OpenEXR
 * two line buffers). */
unsigned
write_threads(unsigned want, uint32_t height, Imf::Compression c)
{
    unsigned cpus = std::thread::hardware_concurrency(); /* 0: unknown */
    uint64_t blocks = ((uint64_t)height + lines_per_chunk(c) - 1) / lines_per_chunk(c);
    if (cpus > 0 && want > cpus)
        want = cpus;
    return blocks < want ? (unsigned)blocks : want;
}

} // namespace

extern "C" bool
tex_exr_available(char *)
{
    return true; /* linked in */
}

extern "C" tex_result
tex_exr_open(const char *path, tex_exr **out, tex_exr_info *info, char err[TEX_ERR_LEN])
{
    if (out)
        *out = nullptr;
    if (!path || !out || !info) {
        say(err, "no file name or no place for the result");
        return TEX_ERR_INVALID;
    }
    const char *stage = "bad header";
    tex_exr    *f = nullptr;
    try {
        f = new tex_exr;
        tex_result r = open_fd(f, path, err);
        if (r == TEX_OK)
            r = headers_fit(f, err);
        if (r == TEX_OK) {
            f->in.reset(new FdIn(f->fd.fd, f->size));
            f->multi.reset(new Imf::MultiPartInputFile(*f->in, 0));
            f->info.nparts = (uint32_t)f->multi->parts();
            f->header = f->multi->header(0);
            r = check_header(f, f->header, err);
        }
        if (r == TEX_OK) {
            make_reader(f);
            plan_fast_chunks(f);
        }
        if (r != TEX_OK) {
            delete f;
            return r;
        }
        *info = f->info;
        *out = f;
        return TEX_OK;
    } catch (const std::bad_alloc &) {
        say(err, "out of memory");
        delete f;
        return TEX_ERR_NOMEM;
    } catch (const std::exception &e) {
        if (f && hit_end(f))
            stage = "truncated";
        say_exc(err, stage, e.what());
        delete f;
        return TEX_ERR_CORRUPT;
    } catch (...) {
        say(err, "bad header: unknown error");
        delete f;
        return TEX_ERR_CORRUPT;
    }
}

extern "C" void
tex_exr_close(tex_exr *f)
{
    delete f;
}

extern "C" bool
tex_exr_level_size(const tex_exr *f, uint32_t level, uint32_t *width, uint32_t *height)
{
    if (!f || level >= f->info.nlevels)
        return false;
    if (width)
        *width = f->level_w[level];
    if (height)
        *height = f->level_h[level];
    return true;
}

extern "C" tex_result
tex_exr_read_tile(tex_exr *f, uint32_t level, uint32_t tx, uint32_t ty, void *out,
                  char err[TEX_ERR_LEN])
{
    if (!f || !out) {
        say(err, "no file or no buffer");
        return TEX_ERR_INVALID;
    }
    if (!f->tiles) {
        say(err, "not a tiled file");
        return TEX_ERR_INVALID;
    }
    if (level >= f->info.nlevels) {
        say(err, "level %u: the file has %u", level, f->info.nlevels);
        return TEX_ERR_INVALID;
    }
    uint32_t tw = f->info.tile_width, th = f->info.tile_height;
    uint32_t nx = (f->level_w[level] + tw - 1) / tw, ny = (f->level_h[level] + th - 1) / th;
    if (tx >= nx || ty >= ny) {
        say(err, "tile (%u, %u) is outside level %u's %ux%u tiles", tx, ty, level, nx, ny);
        return TEX_ERR_INVALID;
    }
    size_t   px = f->info.nchannels * pixel_type_size(f->ptype), bytes = (size_t)tw * th * px;
    uint32_t w = std::min(tw, f->level_w[level] - tx * tw);
    uint32_t h = std::min(th, f->level_h[level] - ty * th);
    /* Zeroed first unless the fast path will write every byte: a whole
     * tile of a file whose every output channel it reads is written once,
     * not twice (a cold lookup's tiles are mostly fresh memory;
     * docs/benchmarks.md, "EXR tiles written once"). */
    bool whole = w == tw && h == th && f->fast_fills && fast_reader(f);
    if (!whole)
        memset(out, 0, bytes);
    if (fast_reader(f) && tex__exr_chunks_tile(f->fast, level, tx, ty, w, h, out, px * tw)) {
        f->fast_chunks++;
        return TEX_OK;
    }
    if (whole) /* refused, `out` untouched: OpenEXR's reader gets it zeroed, as ever */
        memset(out, 0, bytes);
    forget_end(f);
    try {
        /* Tile-relative slices: one frame buffer serves every tile read
         * into the same buffer. */
        if (f->tile_fb != out) {
            f->tile_fb = nullptr;
            f->tiles->setFrameBuffer(frame_buffer(f, (char *)out, px, px * tw, true));
            f->tile_fb = out;
        }
        f->tiles->readTile((int)tx, (int)ty, (int)level, (int)level);
        return TEX_OK;
    } catch (const std::bad_alloc &) {
        say(err, "out of memory");
        return TEX_ERR_NOMEM;
    } catch (const std::exception &e) {
        char where[80];
        snprintf(where, sizeof where, "tile (%u, %u) of level %u%s", tx, ty, level,
                 hit_end(f) ? ": truncated" : "");
        say_exc(err, where, e.what());
        return TEX_ERR_CORRUPT;
    } catch (...) {
        say(err, "tile (%u, %u) of level %u: unknown error", tx, ty, level);
        return TEX_ERR_CORRUPT;
    }
}

extern "C" uint64_t
tex_exr_fast_chunks(const tex_exr *f)
{
    return f ? f->fast_chunks : 0;
}

extern "C" tex_result
tex_exr_read_image(tex_exr *f, uint32_t level, tex_image *out, char err[TEX_ERR_LEN])
{
    if (!f || !out) {
        say(err, "no file or no image");
        return TEX_ERR_INVALID;
    }
    *out = tex_image{};
    if (level >= f->info.nlevels) {
        say(err, "level %u: the file has %u", level, f->info.nlevels);
        return TEX_ERR_INVALID;
    }
    tex_result r = tex_image_alloc(out, f->level_w[level], f->level_h[level], f->info.nchannels,
                                   f->info.type, err);
    if (r != TEX_OK)
        return r;
    forget_end(f);
    try {
        size_t xs = f->info.nchannels * pixel_type_size(f->ptype), ys = xs * out->width;
        if (!f->rgba && fast_read_image(f, level, out))
            return TEX_OK;
        if (f->rgba) {
            read_rgba(f, out);
        } else if (f->scan) {
            char *base = origin_shift(out->pixels, f->window.min.x, f->window.min.y, xs, ys);
            f->scan->setFrameBuffer(frame_buffer(f, base, xs, ys, false));
            f->scan->readPixels(f->window.min.y, f->window.max.y);
        } else {
            int          l = f->ripmap ? 0 : (int)level;
            Imath::Box2i b = f->tiles->dataWindowForLevel(l, l);
            f->tile_fb = nullptr;
            f->tiles->setFrameBuffer(frame_buffer(
                f, origin_shift(out->pixels, b.min.x, b.min.y, xs, ys), xs, ys, false));
            f->tiles->readTiles(0, f->tiles->numXTiles(l) - 1, 0, f->tiles->numYTiles(l) - 1, l, l);
        }
        return TEX_OK;
    } catch (const std::bad_alloc &) {
        say(err, "out of memory");
        r = TEX_ERR_NOMEM;
    } catch (const std::exception &e) {
        char where[48];
        snprintf(where, sizeof where, "level %u%s", level, hit_end(f) ? ": truncated" : "");
        say_exc(err, where, e.what());
        r = TEX_ERR_CORRUPT;
    } catch (...) {
        say(err, "level %u: unknown error", level);
        r = TEX_ERR_CORRUPT;
    }
    tex_image_free(out);
    return r;
}

extern "C" bool
tex_exr_attr_string(const tex_exr *f, const char *name, const char **value)
{
    if (!f || !name || !value)
        return false;
    try {
        auto *a = f->header.findTypedAttribute<Imf::StringAttribute>(name);
        if (!a)
            return false;
        *value = a->value().c_str();
        return true;
    } catch (...) {
        return false;
    }
}

/* A number attribute of part 0 (an int only where ints is true) as a
 * double: true and *value set, or false. */
static bool
attr_number(const tex_exr *f, const char *name, bool ints, double *value)
{
    if (!f || !name || !value)
        return false;
    try {
        auto *i = ints ? f->header.findTypedAttribute<Imf::IntAttribute>(name) : nullptr;
        auto *a = f->header.findTypedAttribute<Imf::FloatAttribute>(name);
        auto *d = f->header.findTypedAttribute<Imf::DoubleAttribute>(name);
        if (!i && !a && !d)
            return false;
        *value = i ? i->value() : a ? a->value() : d->value();
        return true;
    } catch (...) {
        return false;
    }
}

extern "C" bool
tex_exr_attr_float(const tex_exr *f, const char *name, float *value)
{
    double v;
    if (!attr_number(f, name, false, &v))
        return false;
    *value = (float)v;
    return true;
}

extern "C" bool
tex_exr_attr_number(const tex_exr *f, const char *name, double *value)
{
    return attr_number(f, name, true, value);
}

extern "C" tex_result
tex_exr_write_scanline_opts(const char *path, const tex_image *img, const tex_exr_attr *attrs,
                            size_t nattrs, const tex_exr_write_opts *opts, char err[TEX_ERR_LEN])
{
    if (!path) {
        say(err, "no file name");
        return TEX_ERR_INVALID;
    }
    const tex_exr_write_opts  defaults = {};
    const tex_exr_write_opts *o = opts ? opts : &defaults;
    Imf::Compression          c;
    if (!compression_of(&o->compression, &c)) {
        say(err, "compression is not one of tex_exr_compression");
        return TEX_ERR_INVALID;
    }
    if (o->zip_level < 0 || o->zip_level > 9) {
        say(err, "zip level %d is outside 0-9", o->zip_level);
        return TEX_ERR_INVALID;
    }
    try {
        tex_result  r = check_image(img, "image", err);
        Imf::Header h;
        if (r == TEX_OK)
            r = make_header(h, img, c, o->zip_level, attrs, nattrs, err);
        if (r != TEX_OK)
            return r;
        PoolLease pool(write_threads(o->threads, img->height, c));
        return write_atomically(path, err, [&](FdOut &os) {
            Imf::OutputFile file(os, h, pool.threads());
            file.setFrameBuffer(image_frame_buffer(img));
            file.writePixels((int)img->height);
        });
    } catch (const std::bad_alloc &) {
        say(err, "out of memory");
        return TEX_ERR_NOMEM;
    } catch (const std::exception &e) {
        say_exc(err, "cannot write", e.what());
        return TEX_ERR_WRITE;
    } catch (...) {
        say(err, "cannot write: unknown error");
        return TEX_ERR_WRITE;
    }
}

extern "C" tex_result
tex_exr_write_scanline(const char *path, const tex_image *img, const tex_exr_attr *attrs,
                       size_t nattrs, char err[TEX_ERR_LEN])
{
    return tex_exr_write_scanline_opts(path, img, attrs, nattrs, nullptr, err);
}

/* A tiled file being written a row of tiles at a time (tex_exr.h). */
struct tex_exr_tiled_writer {
    AtomicFile                            file; /* before `tiled`, which writes into it */
    std::unique_ptr<Imf::TiledOutputFile> tiled;
    tex_image                             shape; /* level 0's; no pixels */
    uint32_t                              nlevels, tile;
    uint64_t                              tiles_left;
    bool                                  failed;
};

extern "C" tex_result
tex_exr_tiled_begin(const char *path, const tex_image *shape, uint32_t nlevels, uint32_t tile_size,
                    const tex_exr_attr *attrs, size_t nattrs, tex_exr_tiled_writer **out,
                    char err[TEX_ERR_LEN])
{
    *out = nullptr;
    if (!path || !shape) {
        say(err, "no file name or no image");
        return TEX_ERR_INVALID;
    }
    try {
        tex_result r = check_shape(shape, "the image", err);
        if (r != TEX_OK)
            return r;
        uint32_t full = tex_mip_levels(shape->width, shape->height);
        if (nlevels != 1 && nlevels != full) {
            say(err, "%u levels: a %ux%u image takes 1 or %u", nlevels, shape->width, shape->height,
                full);
            return TEX_ERR_INVALID;
        }
        if (tile_size < 1 || tile_size > 4096) {
            say(err, "tile size %u is outside 1-4096", tile_size);
            return TEX_ERR_INVALID;
        }
        Imf::Header hd;
        r = make_header(hd, shape, Imf::ZIP_COMPRESSION, 0, attrs, nattrs, err);
        if (r != TEX_OK)
            return r;
        hd.setTileDescription(Imf::TileDescription(
            tile_size, tile_size, nlevels == 1 ? Imf::ONE_LEVEL : Imf::MIPMAP_LEVELS,
            Imf::ROUND_DOWN));
        /* Tiles go into the file as they are written: a chain of levels
         * made from a stream of rows interleaves them, and INCREASING_Y
         * would hold every out-of-order tile in memory until its turn. */
        hd.lineOrder() = Imf::RANDOM_Y;
        auto w = std::make_unique<tex_exr_tiled_writer>();
        w->shape = *shape;
        w->shape.pixels = nullptr;
        w->nlevels = nlevels;
        w->tile = tile_size;
        r = w->file.open(path, err);
        if (r != TEX_OK)
            return r;
        try {
            w->tiled = std::make_unique<Imf::TiledOutputFile>(w->file.out(), hd, 0);
        } catch (const std::bad_alloc &) {
            throw;
        } catch (const std::exception &e) {
            return w->file.failed(e, err);
        }
        if ((uint32_t)w->tiled->numLevels() != nlevels)
            throw Iex::LogicExc("OpenEXR counts the levels differently");
        for (uint32_t l = 0; l < nlevels; l++)
            w->tiles_left +=
                (uint64_t)w->tiled->numXTiles((int)l) * (uint64_t)w->tiled->numYTiles((int)l);
        *out = w.release();
        return TEX_OK;
    } catch (const std::bad_alloc &) {
        say(err, "out of memory");
        return TEX_ERR_NOMEM;
    } catch (const std::exception &e) {
        say_exc(err, "cannot write", e.what());
        return TEX_ERR_WRITE;
    }
}

extern "C" tex_result
tex_exr_tiled_put(tex_exr_tiled_writer *w, uint32_t level, uint32_t y0, const tex_image *band,
                  char err[TEX_ERR_LEN])
{
    if (w->failed) {
        say(err, "an earlier write to this file failed");
        return TEX_ERR_WRITE;
    }
    if (level >= w->nlevels) {
        say(err, "level %u of a file of %u", level, w->nlevels);
        return TEX_ERR_INVALID;
    }
    uint32_t lw = std::max(w->shape.width >> level, 1u),
             lh = std::max(w->shape.height >> level, 1u);
    tex_result r = check_image(band, "the band", err);
    if (r != TEX_OK)
        return r;
    if (band->type != w->shape.type || band->nchannels != w->shape.nchannels || y0 >= lh ||
        y0 % w->tile != 0 || band->width != lw || band->height != std::min(w->tile, lh - y0)) {
        say(err,
            "a band of %ux%u, %u channels of type %d at row %u of level %u (%ux%u, tiles of %u, "
            "%u channels of type %d)",
            band->width, band->height, band->nchannels, (int)band->type, y0, level, lw, lh, w->tile,
            w->shape.nchannels, (int)w->shape.type);
        return TEX_ERR_INVALID;
    }
    try {
        int ty = (int)(y0 / w->tile), nx = w->tiled->numXTiles((int)level);
        w->tiled->setFrameBuffer(image_frame_buffer(band, true));
        w->tiled->writeTiles(0, nx - 1, ty, ty, (int)level);
        w->tiles_left -= (uint64_t)nx;
        return TEX_OK;
    } catch (const std::bad_alloc &) {
        w->failed = true;
        say(err, "out of memory");
        return TEX_ERR_NOMEM;
    } catch (const std::exception &e) {
        w->failed = true;
        return w->file.failed(e, err);
    }
}

extern "C" tex_result
tex_exr_tiled_end(tex_exr_tiled_writer *w, bool ok, char err[TEX_ERR_LEN])
{
    tex_result r = ok ? TEX_OK : TEX_ERR_WRITE;
    if (ok && w->failed) {
        say(err, "an earlier write to this file failed");
        r = TEX_ERR_WRITE;
    } else if (ok && w->tiles_left > 0) {
        say(err, "%llu tile%s never written", (unsigned long long)w->tiles_left,
            w->tiles_left == 1 ? " was" : "s were");
        r = TEX_ERR_INVALID;
    }
    w->tiled.reset(); /* writes the tile offsets; a failure shows in the stream's error */
    tex_result done = w->file.finish(r == TEX_OK, err);
    delete w;
    return r != TEX_OK ? r : done;
}

extern "C" tex_result
tex_exr_write_tiled(const char *path, const tex_image *levels, uint32_t nlevels, uint32_t tile_size,
                    const tex_exr_attr *attrs, size_t nattrs, char err[TEX_ERR_LEN])
{
    if (!path || !levels) {
        say(err, "no file name or no levels");
        return TEX_ERR_INVALID;
    }
    tex_result r = check_image(&levels[0], "level 0", err);
    uint32_t   w = levels[0].width, h = levels[0].height;
    for (uint32_t l = 1; r == TEX_OK && l < nlevels && nlevels == tex_mip_levels(w, h); l++) {
        char what[32];
        snprintf(what, sizeof what, "level %u", l);
        const tex_image *lv = &levels[l];
        uint32_t         lw = w >> l ? w >> l : 1, lh = h >> l ? h >> l : 1;
        r = check_image(lv, what, err);
        if (r == TEX_OK && (lv->width != lw || lv->height != lh || lv->type != levels[0].type ||
                            lv->nchannels != levels[0].nchannels)) {
            say(err, "level %u is %ux%u, %u channels of type %d; it must be %ux%u, %u of type %d",
                l, lv->width, lv->height, lv->nchannels, (int)lv->type, lw, lh, levels[0].nchannels,
                (int)levels[0].type);
            r = TEX_ERR_INVALID;
        }
    }
    tex_exr_tiled_writer *wr = nullptr;
    if (r == TEX_OK)
        r = tex_exr_tiled_begin(path, &levels[0], nlevels, tile_size, attrs, nattrs, &wr, err);
    if (r != TEX_OK)
        return r;
    for (uint32_t l = 0; l < nlevels && r == TEX_OK; l++) {
        const tex_image *lv = &levels[l];
        size_t           row = (size_t)lv->width * lv->nchannels * tex_type_size(lv->type);
        for (uint32_t y0 = 0; y0 < lv->height && r == TEX_OK; y0 += tile_size) {
            tex_image band = *lv;
            band.pixels = (char *)lv->pixels + y0 * row;
            band.height = std::min(tile_size, lv->height - y0);
            r = tex_exr_tiled_put(wr, l, y0, &band, err);
        }
    }
    tex_result done = tex_exr_tiled_end(wr, r == TEX_OK, err);
    return r != TEX_OK ? r : done;
}

#ifdef TEX_EXR_MODULE
#include "exr_module.h"

/* The module's one exported symbol (exr_module.h); the functions above are
 * hidden in it, so they never clash with io_exr_lazy.c's of the same names. */
extern "C" __attribute__((visibility("default"))) const tex_exr_module tex_exr_module_table = {
    sizeof(tex_exr_module),      tex_exr_open,        tex_exr_close,       tex_exr_level_size,
    tex_exr_read_tile,           tex_exr_read_image,  tex_exr_attr_string, tex_exr_attr_float,
    tex_exr_write_scanline_opts, tex_exr_write_tiled, tex_exr_tiled_begin, tex_exr_tiled_put,
    tex_exr_tiled_end,           tex_exr_attr_number, tex_exr_fast_chunks,
};
#endif
