/* Opening only regular files (tex_image.h). */
#define _POSIX_C_SOURCE 200809L
#include "tex_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not a regular one is, for the message. */
static const char *
kind_of(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* -1 with err and errno set when st is not a regular file's status. */
static int
refuse_unless_regular(const struct stat *st, char err[TEX_ERR_LEN])
{
    if (S_ISREG(st->st_mode))
        return 0;
    if (S_ISDIR(st->st_mode))
        snprintf(err, TEX_ERR_LEN, "cannot open: %s", strerror(EISDIR));
    else
        snprintf(err, TEX_ERR_LEN, "cannot open: %s, not a regular file", kind_of(st->st_mode));
    errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
    return -1;
}

/* -1, closing fd (when open) and saying errno's reason. */
static int
fail(int fd, char err[TEX_ERR_LEN])
{
    snprintf(err, TEX_ERR_LEN, "cannot open: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

int
tex_open_regular(const char *path, char err[TEX_ERR_LEN])
{
    /* stat() first, so that a device is refused without being opened
     * (opening some has effects of its own). */
    struct stat st;
    if (stat(path, &st) != 0)
        return fail(-1, err);
    if (refuse_unless_regular(&st, err) != 0)
        return -1;
    /* The name may have been swapped for a FIFO since: O_NONBLOCK makes
     * opening one return at once instead of waiting for a writer, and
     * fstat() then judges the file actually opened. O_NOCTTY: a terminal
     * never becomes ours. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0)
        return fail(fd, err);
    if (refuse_unless_regular(&st, err) != 0) {
        close(fd);
        return -1;
    }
    /* O_NONBLOCK off again, by one call: of the flags F_SETFL sets (append,
     * async, non-blocking, direct, no atime), O_NONBLOCK is the only one
     * the open above sets, so setting none clears it (a read of the flags
     * first was a system call a file more). Add another of those to the
     * open and this must keep it. */
    if (fcntl(fd, F_SETFL, 0) != 0)
        return fail(fd, err);
    return fd;
}

/* The length of the UTF-8 sequence at s if it is valid and encodes a
 * printable character (not a C1 control, U+0080..U+009F), else 0. */
static size_t
utf8_printable(const unsigned char *s)
{
    size_t   n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
    uint32_t c = s[0] & (0x7f >> n);
    if (s[0] < 0xc2 || s[0] > 0xf4)
        return 0; /* a continuation byte, an overlong lead, or beyond U+10FFFF */
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    bool overlong = (n == 3 && c < 0x800) || (n == 4 && c < 0x10000);
    bool bad = overlong || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) || c < 0xa0;
    return bad ? 0 : n;
}

void
tex_name_printable(char *dst, size_t size, const char *src)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t               o = 0;
    while (*s && o + 1 < size) {
        size_t n = *s >= 0x20 && *s < 0x7f ? 1 : *s >= 0x80 ? utf8_printable(s) : 0;
        if (n ? o + n >= size : o + 4 >= size)
            break; /* no half character or half escape */
        if (n) {
            memcpy(dst + o, s, n);
            o += n, s += n;
        } else {
            o += (size_t)snprintf(dst + o, size - o, "\\x%02x", *s++);
        }
    }
    dst[o] = '\0';
}
