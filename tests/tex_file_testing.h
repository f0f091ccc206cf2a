/* Helpers shared by the tests that write image files (PNG, JPEG, EXR, the
 * texture system's): a private temporary folder removed at exit, whole-file
 * reads and writes, message checks, and the skip status. Needs
 * _POSIX_C_SOURCE 200809L (mkdtemp, lstat, dup). */
#ifndef RT_TEST_TEX_FILE_TESTING_H
#define RT_TEST_TEX_FILE_TESTING_H

#include "check.h"
#include "tex_image.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEX_TEST_SKIP 77 /* SKIP_RETURN_CODE in tests/CMakeLists.txt (RT_TEST_SKIP) */

/* Fails unless `msg` contains `word`, printing both. */
#define CHECK_CONTAINS(msg, word)                                                                  \
    do {                                                                                           \
        const char *m_ = (msg), *w_ = (word);                                                      \
        if (!strstr(m_, w_))                                                                       \
            RT_CHECK_FAIL_("CHECK_CONTAINS(%s, %s): \"%s\" lacks \"%s\"", #msg, #word, m_, w_);    \
    } while (0)

/* An error message as the contract wants it: one non-empty line. */
#define CHECK_ONE_LINE(msg)                                                                        \
    do {                                                                                           \
        const char *m_ = (msg);                                                                    \
        if (!m_[0] || strchr(m_, '\n') || strlen(m_) >= TEX_ERR_LEN)                               \
            RT_CHECK_FAIL_("CHECK_ONE_LINE(%s): \"%s\" is not one non-empty line", #msg, m_);      \
    } while (0)

static char tex_test_dir_[4096];

/* Removes `path` and, if it is a folder, everything in it. */
static inline void
tex_test_rm_(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                size_t n = strlen(path) + strlen(e->d_name) + 2;
                char  *sub = malloc(n);
                if (!sub)
                    break;
                snprintf(sub, n, "%s/%s", path, e->d_name);
                tex_test_rm_(sub);
                free(sub);
            }
            closedir(d);
        }
    }
    if (remove(path) != 0)
        perror(path);
}

static inline void
tex_test_dir_remove_(void)
{
    if (tex_test_dir_[0])
        tex_test_rm_(tex_test_dir_);
}

/* A new empty folder of this process, removed with all it holds at exit. */
static inline const char *
tex_test_dir(void)
{
    if (!tex_test_dir_[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(tex_test_dir_, sizeof tex_test_dir_, "%s/rt-tex-XXXXXX", t && t[0] ? t : "/tmp");
        REQUIRE(mkdtemp(tex_test_dir_) != NULL);
        atexit(tex_test_dir_remove_);
    }
    return tex_test_dir_;
}

/* `name` inside tex_test_dir(), in a static buffer of 8 rotating slots. */
static inline const char *
tex_test_path(const char *name)
{
    static char buf[8][4200];
    static int  next;
    char       *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", tex_test_dir(), name);
    return p;
}

static inline void
tex_test_file_write(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    REQUIRE(fwrite(data, 1, n, f) == n);
    REQUIRE(fclose(f) == 0);
}

/* Writes `path`, a w x h 8-bit PNG of nc channels whose texel (x, y),
 * channel c is value(k, x, y, c): file k of a test's set. */
static inline void
tex_test_png(const char *path, uint32_t w, uint32_t h, uint32_t nc,
             uint8_t (*value)(int, uint32_t, uint32_t, uint32_t), int k)
{
    char      err[TEX_ERR_LEN];
    tex_image img;
    REQUIRE(tex_image_alloc(&img, w, h, nc, TEX_TYPE_U8, err) == TEX_OK);
    uint8_t *p = img.pixels;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t c = 0; c < nc; c++)
                p[((size_t)y * w + x) * nc + c] = value(k, x, y, c);
    REQUIRE(tex_png_write(path, &img, err) == TEX_OK);
    tex_image_free(&img);
}

/* tex_test_png() of an n x n RGBA file. */
static inline void
tex_test_png_rgba(const char *path, uint32_t n, uint8_t (*value)(int, uint32_t, uint32_t, uint32_t),
                  int k)
{
    tex_test_png(path, n, n, 4, value, k);
}

/* The whole file; *n is its size. Free with free(). */
static inline unsigned char *
tex_test_file_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL);
    REQUIRE(fseek(f, 0, SEEK_END) == 0);
    long size = ftell(f);
    REQUIRE(size >= 0);
    rewind(f);
    unsigned char *data = malloc((size_t)size + 1);
    REQUIRE(data != NULL);
    REQUIRE(fread(data, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return data;
}

/* Sends stderr to a file until tex_test_stderr_release(), which returns how
 * many bytes were written there (and copies them to the real stderr): a
 * reader must print nothing, warnings included. */
static int  tex_test_stderr_saved_ = -1;
static char tex_test_stderr_path_[4200];

static inline void
tex_test_stderr_capture(void)
{
    fflush(stderr);
    tex_test_stderr_saved_ = dup(2);
    REQUIRE(tex_test_stderr_saved_ >= 0);
    snprintf(tex_test_stderr_path_, sizeof tex_test_stderr_path_, "%s/stderr.txt", tex_test_dir());
    int fd = open(tex_test_stderr_path_, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(dup2(fd, 2) == 2);
    close(fd);
}

static inline size_t
tex_test_stderr_release(void)
{
    fflush(stderr);
    REQUIRE(dup2(tex_test_stderr_saved_, 2) == 2);
    close(tex_test_stderr_saved_);
    size_t         n;
    unsigned char *text = tex_test_file_read(tex_test_stderr_path_, &n);
    if (n)
        fprintf(stderr, "printed on stderr: %.*s\n", (int)n, (const char *)text);
    free(text);
    REQUIRE(remove(tex_test_stderr_path_) == 0);
    return n;
}

/* Reads path with a tex_*_read_rows() function into a whole image, and
 * checks that it matches `whole` (the same file read whole): shape, bytes,
 * and the rows given once each, in order. */
typedef struct tex_test_rows_ {
    tex_image img;
    uint32_t  next;
    int       out_of_order;
} tex_test_rows_;

static inline tex_result
tex_test_rows_take_(void *ctx, const tex_image *shape, uint32_t y, const void *row,
                    char err[TEX_ERR_LEN])
{
    tex_test_rows_ *g = ctx;
    if (y == 0) {
        REQUIRE(tex_image_alloc(&g->img, shape->width, shape->height, shape->nchannels, shape->type,
                                err) == TEX_OK);
        g->img.srgb = shape->srgb;
    }
    g->out_of_order += y != g->next++ || y >= g->img.height;
    size_t stride = (size_t)shape->width * shape->nchannels * tex_type_size(shape->type);
    if (y < g->img.height)
        memcpy((char *)g->img.pixels + y * stride, row, stride);
    return TEX_OK;
}

static inline void
tex_test_rows_check(tex_result (*read_rows)(const char *, tex_rows_fn, void *, char *),
                    const char *path, const tex_image *whole)
{
    tex_test_rows_ g = {0};
    char           err[TEX_ERR_LEN] = "";
    tex_result     r = read_rows(path, tex_test_rows_take_, &g, err);
    if (r != TEX_OK)
        fprintf(stderr, "%s by rows: %s\n", path, err);
    REQUIRE(r == TEX_OK);
    CHECK_EQ_INT(g.out_of_order, 0);
    CHECK_EQ_INT(g.next, whole->height);
    CHECK_EQ_INT(g.img.width, whole->width);
    CHECK_EQ_INT(g.img.height, whole->height);
    CHECK_EQ_INT(g.img.nchannels, whole->nchannels);
    CHECK_EQ_INT(g.img.type, whole->type);
    CHECK_EQ_INT(g.img.srgb, whole->srgb);
    if (g.img.pixels && tex_image_bytes(&g.img) == tex_image_bytes(whole))
        CHECK(memcmp(g.img.pixels, whole->pixels, tex_image_bytes(whole)) == 0);
    tex_image_free(&g.img);
}

/* A growing byte buffer, for files built by hand; free(b.p) when done. */
typedef struct tex_test_bytes {
    unsigned char *p;
    size_t         n, cap;
} tex_test_bytes;

static inline void
tex_test_bytes_add(tex_test_bytes *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        REQUIRE(b->p != NULL);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

/* Deterministic test data: xorshift64*. */
static inline uint64_t
tex_test_rand(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C(0x2545F4914F6CDD1D);
}

#endif
