/* Where a texture file's bytes are read from, for one open by a decoder
 * (texture_internal.h, tex__read_open()): its path; under tex_config.allow
 * the descriptor that was judged; for an alias of bytes, a memory file.
 * The file table (cache_files.c) and the tile loads (cache_tiles.c) both
 * open through it. */
#define _GNU_SOURCE /* memfd_create */
#include "texture_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* An alias's bytes as a file, for one open: a memory file with no name
 * anywhere (memfd), so that nothing is left behind however the process
 * ends (a folder of extracted files outlived every SIGKILL), and no
 * descriptor is held between opens (one per embedded image would run into
 * the open-file limit). A PNG or JPEG is read from it; an EXR's or TIFF's
 * library reopens it by its /proc/self/fd name. */
static tex_result
bytes_open(const tex__alias *al, tex__read_from *src, char err[TEX_ERR_LEN])
{
    int         fd = memfd_create("rt-embedded", MFD_CLOEXEC), e = errno;
    const char *p = al->data;
    size_t      left = al->size;
    while (fd >= 0 && left) {
        ssize_t n = write(fd, p, left);
        if (n > 0) {
            p += n, left -= (size_t)n;
        } else if (n == 0 || errno != EINTR) {
            e = n == 0 ? EIO : errno;
            close(fd), fd = -1;
        }
    }
    if (fd < 0) {
        snprintf(err, TEX_ERR_LEN, "cannot hold the image in memory: %s", strerror(e));
        return e == ENOMEM ? TEX_ERR_NOMEM : TEX_ERR_OPEN;
    }
    src->fd = fd;
    snprintf(src->proc, sizeof src->proc, "/proc/self/fd/%d", fd);
    src->path = src->proc;
    return TEX_OK;
}

tex_result
tex__read_open(tex_system *ts, const tex__file *f, tex__read_from *src, char err[TEX_ERR_LEN])
{
    src->fd = -1;
    src->path = f->path;
    if (f->alias && !f->alias->path)
        return bytes_open(f->alias, src, err);
    /* A name aliased to a path of the caller's own (tex_file_alias) is
     * trusted: the caller wrote that file. */
    if (!ts->cfg.allow || f->alias)
        return TEX_OK;
    /* Missing, not a regular file, or refused: one message for all, so
     * that a scene learns nothing of what exists where it may not read. */
    int fd = tex_open_regular(f->path, err);
    if (fd < 0 || !ts->cfg.allow(ts->cfg.allow_ctx, fd)) {
        if (fd >= 0)
            close(fd);
        snprintf(err, TEX_ERR_LEN, "%s", TEX_NOT_ALLOWED);
        return TEX_ERR_OPEN;
    }
    src->fd = fd;
    snprintf(src->proc, sizeof src->proc, "/proc/self/fd/%d", fd);
    src->path = src->proc;
    return TEX_OK;
}

void
tex__read_close(tex__read_from *src)
{
    if (src->fd >= 0)
        close(src->fd);
    src->fd = -1;
}
