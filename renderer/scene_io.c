/* The files assimp opens (regular files, in the allowed folders) and the OBJ line buffer. */
#define _DEFAULT_SOURCE /* madvise(), MADV_HUGEPAGE */
#include "import_budget.h"
#include "rt_paths.h"
#include "scene_build.h"
#include "tex_image.h"
#include "texture.h"

#include <assimp/cfileio.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#endif

/* ---- files assimp opens: regular files only, within the allowed folders ---- */

/* Sizes as people read them: "16.0 GiB". */
static void
size_text(uint64_t n, char *buf, size_t len)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double                   v = (double)n;
    int                      u = 0;
    while (v >= 1024 && u < 6)
        v /= 1024, u++;
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

bool
rt__scene_file_size_ok(int fd, uint64_t max_bytes, char why[RT_ERR_LEN])
{
    struct stat st;
    uint64_t    limit = max_bytes ? max_bytes : (uint64_t)RT_MAX_SCENE_FILE_MB_DEFAULT << 20;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size <= limit)
        return true; /* an fstat that fails is the read's to report */
    char size[32], most[32];
    size_text((uint64_t)st.st_size, size, sizeof size);
    size_text(limit, most, sizeof most);
    snprintf(why, RT_ERR_LEN, "%s, over the %s a scene's file may be (--max-scene-mb)", size, most);
    return false;
}

static size_t
io_read(struct aiFile *f, char *buf, size_t size, size_t count)
{
    return fread(buf, size, count, (FILE *)(void *)f->UserData);
}

static size_t
io_write(struct aiFile *f, const char *buf, size_t size, size_t count)
{
    return fwrite(buf, size, count, (FILE *)(void *)f->UserData);
}

static size_t
io_tell(struct aiFile *f)
{
    long at = ftell((FILE *)(void *)f->UserData);
    return at < 0 ? 0 : (size_t)at;
}

static size_t
io_size(struct aiFile *f)
{
    struct stat st;
    return fstat(fileno((FILE *)(void *)f->UserData), &st) == 0 ? (size_t)st.st_size : 0;
}

static enum aiReturn
io_seek(struct aiFile *f, size_t offset, enum aiOrigin origin)
{
    int whence = origin == aiOrigin_CUR ? SEEK_CUR : origin == aiOrigin_END ? SEEK_END : SEEK_SET;
    if (offset > (size_t)LONG_MAX)
        return aiReturn_FAILURE;
    return fseek((FILE *)(void *)f->UserData, (long)offset, whence) == 0 ? aiReturn_SUCCESS
                                                                         : aiReturn_FAILURE;
}

static void
io_flush(struct aiFile *f)
{
    fflush((FILE *)(void *)f->UserData);
}

struct aiFile *
rt__io_open(struct aiFileIO *io, const char *name, const char *mode)
{
    io_guard *g = (io_guard *)(void *)io->UserData;
    /* Only ever read (no importer writes), and only regular files: a FIFO
     * named as an OBJ's material library or a glTF buffer would otherwise
     * block the import forever. The folder check is made on the file
     * opened, so a name swapped for a link out after a check cannot
     * escape. */
    char why[TEX_ERR_LEN];
    if (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+')) {
        char shown[160];
        tex_name_printable(shown, sizeof shown, name);
        if (!g->refused[0])
            snprintf(g->refused, sizeof g->refused, "%s: cannot open for writing", shown);
        return NULL;
    }
    char too_big[RT_ERR_LEN];
    int  fd = tex_open_regular(name, why);
    if (fd >= 0 && !rt__scene_file_size_ok(fd, g->max_bytes, too_big)) {
        char shown[160];
        tex_name_printable(shown, sizeof shown, name);
        if (!g->refused[0])
            snprintf(g->refused, sizeof g->refused, "%s: %.90s", shown, too_big);
        close(fd);
        return NULL;
    }
    if (fd < 0 || !rt_paths_allow_fd(g->allowed, fd)) {
        char shown[160];
        tex_name_printable(shown, sizeof shown, name);
        /* Restricted, a file refused and one that is not there read alike
         * (texture.h, TEX_NOT_ALLOWED): the scene learns nothing of what
         * exists outside. */
        if (!g->refused[0])
            snprintf(g->refused, sizeof g->refused, "%s: %.90s", shown,
                     g->allowed ? TEX_NOT_ALLOWED : why);
        if (fd >= 0)
            close(fd);
        return NULL; /* as if it were not there */
    }
    rt__import_budget_file(fd);
    FILE          *fp = fdopen(fd, "rb");
    struct aiFile *f = fp ? calloc(1, sizeof *f) : NULL;
    if (!fp)
        close(fd);
    if (!f) {
        if (fp)
            fclose(fp);
        return NULL;
    }
    *f = (struct aiFile){io_read, io_write, io_tell, io_size, io_seek, io_flush, (char *)fp};
    return f;
}

void
rt__io_close(struct aiFileIO *io, struct aiFile *f)
{
    (void)io;
    if (f) {
        fclose((FILE *)(void *)f->UserData);
        free(f);
    }
}

/* ---- the OBJ importer's line buffer ---- */

/* assimp 5.2's OBJ importer reads through an IOStreamBuffer whose
 * constructor allocates a 16 MiB buffer and fills it, whatever the file's
 * size. glibc maps a block that big afresh, so the fill takes 4096 page
 * faults: some 12 ms, a third of what a small OBJ's whole render took. In
 * 2 MiB pages it takes 8. So, before an OBJ import, rt__obj_heap_prepare()
 * leaves 20 MiB free at the top of the heap, advised for transparent huge
 * pages, for that buffer to be carved from:
 * - malloc and free 20 MiB: glibc maps and unmaps it, and on the free
 *   raises its dynamic mmap threshold to 20 MiB (mallopt(3)), as freeing
 *   assimp's buffer would have raised it to 16; blocks below that size now
 *   come from the heap;
 * - malloc 20 MiB again, now from the heap's top, madvise(MADV_HUGEPAGE) its
 *   2 MiB-aligned interior, and free it: it joins the top again, which
 *   glibc trims only beyond twice the threshold.
 * rt__obj_heap_release() hands what is free back to the system afterwards,
 * as the unmapped buffer was. No mallopt(), so glibc's dynamic threshold
 * goes on adapting. Where huge pages are off or the threshold was fixed
 * (mallopt(), MALLOC_MMAP_THRESHOLD_), this costs a few system calls and
 * changes nothing else; nothing here is needed for correctness. */
bool
rt__obj_heap_prepare(const char *path)
{
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    const char *dot = strrchr(path, '.');
    if (!dot || strcasecmp(dot, ".obj") != 0)
        return false;
    const size_t n = (size_t)20 << 20, huge = (size_t)2 << 20;
    /* volatile: a block freed unused would be elided by the compiler, and
     * this one is allocated for what its free() does inside glibc. */
    void *volatile first = malloc(n);
    free(first);
    char *p = malloc(n);
    if (!p)
        return false;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(huge - 1);
    if (e > a)
        madvise((void *)a, e - a, MADV_HUGEPAGE); /* EINVAL where huge pages are off */
    free(p);
    return true;
#else
    (void)path;
    return false;
#endif
}

void
rt__obj_heap_release(bool prepared)
{
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    if (prepared)
        malloc_trim(0);
#else
    (void)prepared;
#endif
}
