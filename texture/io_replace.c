/* Files written whole or not at all (tex_image.h). */
#define _DEFAULT_SOURCE /* mkstemp, fchmod, fileno, realpath, readlink, lstat */
#include "tex_image.h"

#include <errno.h>
#include <fcntl.h>
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

static tex_result
cannot(char err[TEX_ERR_LEN], const char *why)
{
    snprintf(err, TEX_ERR_LEN, "cannot write: %s", why);
    return TEX_ERR_WRITE;
}

/* The path a chain of symbolic links ends at, whether or not a file is
 * there (a dangling link's target is where the file goes): *out, malloc'd. */
static tex_result
link_end(const char *path, char **out, char err[TEX_ERR_LEN])
{
    char *p = strdup(path);
    for (int hops = 0; p; hops++) {
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) {
            *out = p; /* no file (a new one goes here), or not a link */
            return TEX_OK;
        }
        char    to[4096];
        ssize_t n = hops < 40 ? readlink(p, to, sizeof to - 1) : (errno = ELOOP, -1);
        if (n < 0) {
            free(p);
            return cannot(err, strerror(errno));
        }
        to[n] = '\0';
        const char *slash = strrchr(p, '/');
        size_t      dir = to[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
        char       *next = malloc(dir + (size_t)n + 1);
        if (next)
            memcpy(next, p, dir), memcpy(next + dir, to, (size_t)n + 1);
        free(p);
        p = next;
    }
    snprintf(err, TEX_ERR_LEN, "out of memory");
    return TEX_ERR_NOMEM;
}

tex_result
tex_output_resolve(const char *path, char **target, bool *direct, char err[TEX_ERR_LEN])
{
    *target = NULL, *direct = false;
    struct stat st;
    if (stat(path, &st) == 0) { /* what the links lead to */
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
            *direct = true;
            return TEX_OK;
        }
        if (S_ISDIR(st.st_mode))
            return cannot(err, strerror(EISDIR));
        if (!S_ISREG(st.st_mode))
            return cannot(err, "not a regular file, a FIFO or a character device");
        if (!(*target = realpath(path, NULL)))
            return cannot(err, strerror(errno));
        return TEX_OK;
    }
    if (errno != ENOENT)
        return cannot(err, strerror(errno));
    return link_end(path, target, err);
}

tex_result
tex_output_copy(int fd, const char *path, char err[TEX_ERR_LEN])
{
    int out = open(path, O_WRONLY | O_CLOEXEC);
    if (out < 0)
        return cannot(err, strerror(errno));
    char       buf[1 << 16];
    ssize_t    n = 0;
    tex_result r = lseek(fd, 0, SEEK_SET) == 0 ? TEX_OK : cannot(err, strerror(errno));
    while (r == TEX_OK && (n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t done = 0; r == TEX_OK && done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno != EINTR)
                r = cannot(err, strerror(errno));
            done += w > 0 ? w : 0;
        }
    if (r == TEX_OK && n < 0)
        r = cannot(err, strerror(errno));
    if (close(out) != 0 && r == TEX_OK)
        r = cannot(err, strerror(errno));
    return r;
}

/* A temporary file for an output written directly (a FIFO, a device): in
 * $TMPDIR, unlinked at once, so nothing is left behind whatever happens. */
static int
direct_tmp(void)
{
    const char *dir = getenv("TMPDIR");
    char        tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/rt-output-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmpl);
    if (fd >= 0)
        unlink(tmpl);
    return fd;
}

tex_result
tex_replace_begin(tex_replace *r, const char *path, char err[TEX_ERR_LEN])
{
    *r = (tex_replace){.path = path};
    char      *target;
    bool       direct;
    tex_result res = tex_output_resolve(path, &target, &direct, err);
    if (res != TEX_OK)
        return res;
    int fd = -1;
    if (direct) {
        r->direct = true;
        fd = direct_tmp();
    } else {
        /* Beside the file the links lead to, so rename() replaces it in
         * one step and never crosses a file system. */
        size_t n = strlen(target);
        if (!(r->tmp = malloc(n + sizeof ".tmp-XXXXXX"))) {
            free(target);
            snprintf(err, TEX_ERR_LEN, "out of memory");
            return TEX_ERR_NOMEM;
        }
        memcpy(r->tmp, target, n);
        memcpy(r->tmp + n, ".tmp-XXXXXX", sizeof ".tmp-XXXXXX");
        r->mode = file_mode(target);
        r->target = target;
        fd = mkstemp(r->tmp);
    }
    if (fd < 0 || !(r->f = fdopen(fd, direct ? "w+b" : "wb"))) {
        res = cannot(err, strerror(errno));
        if (fd >= 0)
            close(fd);
        if (r->tmp && fd >= 0)
            unlink(r->tmp);
        free(r->tmp), free(r->target);
        *r = (tex_replace){0};
    }
    return res;
}

tex_result
tex_replace_end(tex_replace *r, bool ok, char err[TEX_ERR_LEN])
{
    /* fflush() and fclose() report what the buffered writes could not;
     * fsync(), before the rename, that the bytes are on the disk when the
     * name says the file is whole (as the EXR writer does). */
    tex_result code = ok ? TEX_OK : TEX_ERR_WRITE;
    if (ok && (ferror(r->f) || fflush(r->f) != 0))
        code = cannot(err, strerror(errno ? errno : EIO));
    if (code == TEX_OK && r->direct)
        code = tex_output_copy(fileno(r->f), r->path, err);
    else if (code == TEX_OK && (fchmod(fileno(r->f), r->mode) != 0 || fsync(fileno(r->f)) != 0))
        code = cannot(err, strerror(errno));
    if (fclose(r->f) != 0 && code == TEX_OK)
        code = cannot(err, strerror(errno));
    if (code == TEX_OK && !r->direct && rename(r->tmp, r->target) != 0)
        code = cannot(err, strerror(errno));
    if (code != TEX_OK && r->tmp)
        unlink(r->tmp);
    free(r->tmp), free(r->target);
    *r = (tex_replace){0};
    return code;
}
