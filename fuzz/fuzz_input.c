/* Reading fuzz input: see fuzz_input.h. */
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint8_t
fuzz_u8(fuzz_input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

uint32_t
fuzz_u32(fuzz_input *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

uint32_t
fuzz_range(fuzz_input *in, uint32_t lo, uint32_t hi)
{
    if (hi <= lo)
        return lo;
    uint32_t span = hi - lo, v = 0;
    for (uint32_t bits = 0; bits < 32 && (span >> bits) != 0; bits += 8)
        v |= (uint32_t)fuzz_u8(in) << bits;
    return span == UINT32_MAX ? v : lo + v % (span + 1);
}

float
fuzz_float(fuzz_input *in)
{
    uint32_t bits = fuzz_u32(in);
    float    f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

char *
fuzz_string(fuzz_input *in, size_t max, size_t *len)
{
    size_t n = fuzz_u8(in);
    if (n == 255 && max > 255)
        n += fuzz_range(in, 0, (uint32_t)(max - 255 < UINT32_MAX ? max - 255 : UINT32_MAX));
    if (n > max)
        n = max;
    if (n > in->n)
        n = in->n;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, in->p, n);
    s[n] = '\0';
    in->p += n;
    in->n -= n;
    if (len)
        *len = n;
    return s;
}

const char *
fuzz_file(const uint8_t *data, size_t size)
{
    static int  fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-input", 0);
        if (fd < 0)
            fuzz_fail("memfd_create failed");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0)
        fuzz_fail("ftruncate failed");
    for (size_t at = 0; at < size;) {
        ssize_t w = pwrite(fd, data + at, size - at, (off_t)at);
        if (w <= 0)
            fuzz_fail("cannot write the input to its memfd");
        at += (size_t)w;
    }
    return path;
}

void
fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz: contract broken: %s\n", what);
    abort();
}

void
fuzz_check_err(const char *err, size_t cap)
{
    size_t n = strnlen(err, cap);
    if (n == cap)
        fuzz_fail("error message not NUL-terminated");
    if (n == 0)
        fuzz_fail("empty error message");
    if (memchr(err, '\n', n))
        fuzz_fail("error message of more than one line");
}

void
fuzz_tiles_read(uint32_t nx, uint32_t ny, fuzz_tile_read read, void *ctx, size_t errlen)
{
    char *err = malloc(errlen);
    if (!err)
        return;
    uint32_t at[4][2] = {{0, 0}, {nx - 1, ny - 1}, {nx - 1, 0}, {nx, ny}};
    for (int i = 0; i < 4; i++) {
        if (read(ctx, at[i][0], at[i][1], err) != 0)
            fuzz_check_err(err, errlen);
        else if (at[i][0] >= nx)
            fuzz_fail("a tile past the level's end was read");
    }
    free(err);
}
