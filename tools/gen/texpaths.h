/* texpaths: realistic texture file paths for benchmarks.
 *
 * Interning costs depend on what is interned: length, shared prefixes, how
 * the bytes hash. Benchmarks therefore intern paths shaped like the ones a
 * production renderer sees, four kinds mixed:
 *
 *   /prod/shows/kestrel/assets/prop/lantern_07/tex/v004/lantern_07_roughness.1013.tx  (45%)
 *   textures/stone/cobblestone_417/cobblestone_417_normal_gl_4k.png                     (25%)
 *   /prod/shows/ember/seq/KD/KD0420/fx/tex/smoke_card_v003.exr                          (15%)
 *   /mnt/texlib/wood/walnut_qhtbwzk/qhtbwzk_2k_basecolor.jpg                            (15%)
 *
 * Words come from fixed lists, picked by an xorshift64* generator seeded from
 * (seed, index). The output depends on nothing else: not on the platform, the
 * call order or the thread. */
#ifndef TEXPATHS_H
#define TEXPATHS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* oiio-ustring-bench is C++ */
#endif

#define TEXPATH_MIN_LEN 30 /* every path is at least this many bytes ... */
#define TEXPATH_MAX_LEN 90 /* ... and at most this many, before the NUL */

/* For one seed, indices 0 .. TEXPATH_UNIQUE_MAX - 1 give pairwise distinct
 * paths: guaranteed by construction, not by chance. Past it, paths repeat
 * earlier ones: 6.3% of the next 2^24 repeat one (measured, seed 1). */
#define TEXPATH_UNIQUE_MAX ((uint64_t)1 << 24)

/* Writes path number `index` of the family `seed` into buf and returns its
 * length, always in [TEXPATH_MIN_LEN, TEXPATH_MAX_LEN]. Like snprintf(): it
 * writes at most cap - 1 bytes and a NUL (nothing when cap is 0) and returns
 * the full length, so a buf of TEXPATH_MAX_LEN + 1 bytes always suffices.
 * Paths are printable ASCII with no spaces. Different seeds give unrelated
 * families. Pure function; safe from any number of threads at once. */
size_t texpath_make(uint64_t seed, uint64_t index, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
