/* texture_floor: the least a texture lookup can cost, which `texture-bench
 * --floor` times beside the texture system's own lookups (issue 33;
 * docs/benchmarks.md, "Lookups against the floor").
 *
 * The floor holds the very texels the texture system holds, read out of it
 * whole after a warm-up: every MIP level of every file as one array, in the
 * file's own sample type (8-bit, 16-bit, half or float) and channel count,
 * rows top to bottom, channels interleaved. A lookup filters them with the
 * sampler's own arithmetic (texture/tex_sample_internal.h: the footprint,
 * the level choice, the tap's coordinates, the decoding tables and half
 * conversion) but reads the arrays by index: no tiles, no tile cache, no
 * file table or microcache, no interned names, no statistics. What is left
 * is the work any lookup must do; the texture system's time over the
 * floor's is what its machinery costs.
 *
 * For every filter (closest, bilinear, trilinear, anisotropic) and periodic
 * wrap, a floor lookup gives the same bits as tex_lookup() on the same
 * system, file, coordinates, derivatives and options: texture-bench checks
 * that by checksum every round, which is how it knows the two did the same
 * work. */
#ifndef TEXTURE_FLOOR_H
#define TEXTURE_FLOOR_H

#include "texture.h"

typedef struct texture_floor texture_floor;

/* Reads names[0..n-1], each as lookups with tex_opts.raw == raw find it,
 * out of ts: every tile of every level, through the tile reads the cache
 * itself uses (a file not yet open is opened). The system should hold them
 * all in its cache (its budget at least their size), or the reads evict
 * what the lookups will want. TEX_OK with *out yours, to free with
 * texture_floor_destroy(); otherwise *out is NULL and err says why, with
 * the file's name ("tex.png: MIP level 3 tile 7 cannot be read"). Call it
 * while no lookup runs on ts. */
tex_result texture_floor_create(tex_system *ts, const ustr *names, unsigned n, bool raw,
                                texture_floor **out, char err[TEX_ERR_LEN]);
void       texture_floor_destroy(texture_floor *fl); /* NULL is a no-op */

/* The bytes of texels the floor holds, every level of every file. */
size_t texture_floor_bytes(const texture_floor *fl);

/* Filters file `file` (an index into the names it was made from) at
 * (s, t) with derivatives d, as tex_lookup() with options o would, into
 * rgba: o's filter, fill and max_anisotropy count; the wrap modes are
 * periodic whatever o says, and all four channels are returned (a grey
 * file's value in R, G and B, a missing alpha the fill's). Read-only:
 * any number of threads may look up at once. */
void texture_floor_lookup(const texture_floor *fl, unsigned file, float s, float t,
                          const tex_derivs *d, const tex_opts *o, float rgba[4]);

#endif
