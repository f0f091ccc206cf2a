/* The keyed hash of a vertex position's bits, which joining vertices
 * (scene_mesh.c) and smoothing normals (scene_normals.c) both index by. */
#include "scene_build.h"

#include <pthread.h>

/* The key of a multilinear hash of positions (strongly universal in its
 * top 32 bits: Lemire and Kaser, "Strongly universal string hashing is
 * fast", 2014), drawn once per process, so that no file can be made whose
 * positions collide: ustring's keyed hash of 0..3, secret as its keys are
 * (ustring.h; USTR_HASH_SEED fixes both). */
static uint64_t       pos_seed[4];
static pthread_once_t pos_once = PTHREAD_ONCE_INIT;

static void
pos_seed_draw(void)
{
    for (uint64_t i = 0; i < 4; i++)
        pos_seed[i] = ustr_hash_bytes((const char *)&i, sizeof i);
}

void
rt__pos_seed(void)
{
    pthread_once(&pos_once, pos_seed_draw);
}

__extension__ typedef unsigned __int128 u128;

/* The sum is taken in 128 bits, where it cannot wrap (each product is
 * under 2^96), and its low 64 bits kept: the multilinear hash mod 2^64,
 * with no wrap-around for the fuzz build's unsigned-overflow check. */
uint64_t
rt__pos_hash(const uint32_t p[3])
{
    return (uint64_t)((u128)pos_seed[0] + (u128)pos_seed[1] * p[0] + (u128)pos_seed[2] * p[1] +
                      (u128)pos_seed[3] * p[2]);
}
