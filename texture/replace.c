/* Files written whole or not at all (tex_image.h). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fchmod, fileno */
#include "tex_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The mode a new file at `path` would get from open(path, O_CREAT, 0666),
 * which mkstemp() does not give: 0666 less the umask, read without
 * changing it (umask() would, for every thread). An existing file keeps
 * its mode. */
static mode_t
file_mode(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        return st.st_mode & 07777;
    mode_t mask = 022;
    FILE  *f = fopen("/proc/self/status", "r");
    if (f) {
        char     line[256];
        unsigned m;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "Umask: %o", &m) == 1) {
                mask = (mode_t)m;
                break;
            }
        fclose(f);
    }
    return 0666 & ~mask;
}

tex_result
tex_replace_begin(tex_replace *r, const char *path, char err[TEX_ERR_LEN])
{
    *r = (tex_replace){.path = path};
    /* Beside `path`, so rename() replaces the old file in one step and
     * never crosses a file system. */
    size_t n = strlen(path);
    if (!(r->tmp = malloc(n + sizeof ".tmp-XXXXXX"))) {
        snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    memcpy(r->tmp, path, n);
    memcpy(r->tmp + n, ".tmp-XXXXXX", sizeof ".tmp-XXXXXX");
    r->mode = file_mode(path);
    int fd = mkstemp(r->tmp);
    if (fd < 0 || !(r->f = fdopen(fd, "wb"))) {
        snprintf(err, TEX_ERR_LEN, "cannot write: %s", strerror(errno));
        if (fd >= 0)
            close(fd), unlink(r->tmp);
        free(r->tmp);
        r->tmp = NULL;
        return TEX_ERR_WRITE;
    }
    return TEX_OK;
}

tex_result
tex_replace_end(tex_replace *r, bool ok, char err[TEX_ERR_LEN])
{
    /* fflush() and fclose() report what the buffered writes could not. */
    tex_result code = ok ? TEX_OK : TEX_ERR_WRITE;
    if (ok && (ferror(r->f) || fflush(r->f) != 0 || fchmod(fileno(r->f), r->mode) != 0)) {
        code = TEX_ERR_WRITE;
        snprintf(err, TEX_ERR_LEN, "cannot write: %s", strerror(errno ? errno : EIO));
    }
    if (fclose(r->f) != 0 && code == TEX_OK) {
        code = TEX_ERR_WRITE;
        snprintf(err, TEX_ERR_LEN, "cannot write: %s", strerror(errno));
    }
    if (code == TEX_OK && rename(r->tmp, r->path) != 0) {
        code = TEX_ERR_WRITE;
        snprintf(err, TEX_ERR_LEN, "cannot write: %s", strerror(errno));
    }
    if (code != TEX_OK)
        unlink(r->tmp);
    free(r->tmp);
    *r = (tex_replace){0};
    return code;
}
