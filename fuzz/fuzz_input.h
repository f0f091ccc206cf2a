/* A fuzzer's bytes read as structured values, and as a file.
 *
 * The targets in fuzz/ turn libFuzzer's input into what the code under
 * test takes: numbers, strings, a whole file. Every read succeeds; past the
 * end of the input a read gives zeros (or an empty string), so any input,
 * the empty one included, decodes to something and libFuzzer's mutations
 * of it stay meaningful. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuzz_input {
    const uint8_t *p; /* what is left to read */
    size_t         n;
} fuzz_input;

uint8_t  fuzz_u8(fuzz_input *in);
uint32_t fuzz_u32(fuzz_input *in);
/* A value in lo..hi (inclusive), from as few bytes as the range needs. */
uint32_t fuzz_range(fuzz_input *in, uint32_t lo, uint32_t hi);
/* Any float, NaN, infinities and subnormals included: four bytes as bits. */
float fuzz_float(fuzz_input *in);
/* A string of at most `max` bytes (a length byte or two, then the bytes;
 * it may hold NUL bytes), NUL-terminated, malloc'd: free() it. *len (if
 * not NULL) is its length. NULL only when memory runs out. */
char *fuzz_string(fuzz_input *in, size_t max, size_t *len);

/* The path of a file that holds data[0..size-1]: an in-memory file
 * (memfd) reached as /proc/self/fd/N, so loaders that take a path read the
 * input without touching the disk. The path stays valid until the next
 * call. Aborts when no memfd can be made (a fuzzer cannot go on). */
const char *fuzz_file(const uint8_t *data, size_t size);

/* Aborts with `what` on stderr: a target found the code under test
 * breaking its contract (a result that is not one line, a size over a
 * limit), which libFuzzer reports as a crash, with the input. */
_Noreturn void fuzz_fail(const char *what);

/* Checks an error line as the libraries promise it: non-empty, one line,
 * NUL-terminated within `cap` bytes. */
void fuzz_check_err(const char *err, size_t cap);

/* Reads a few tiles of a level of nx x ny tiles through read() (0: read,
 * else err holds the reason, errlen bytes): the corners, and one past the
 * end, which the reader must refuse. Checks each error line. */
typedef int (*fuzz_tile_read)(void *ctx, uint32_t tx, uint32_t ty, char *err);
void fuzz_tiles_read(uint32_t nx, uint32_t ny, fuzz_tile_read read, void *ctx, size_t errlen);

#endif
