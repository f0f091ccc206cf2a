/* procgen: the deterministic noise that texgen, scenegen and objgen paint
 * and shape with, and their --seed. Pure functions of their arguments: the same key and
 * coordinates give the same value on every machine, so generated files are
 * reproducible for a seed. */
#ifndef PROCGEN_H
#define PROCGEN_H

#include <stdint.h>
#include <stdio.h>

/* A 64-bit mix (splitmix64's finaliser): every input bit affects every
 * output bit. */
uint64_t procgen_mix64(uint64_t z);

/* A value in [0, 1) for lattice point (x, y) of layer k. */
float procgen_lattice(uint64_t k, int64_t x, int64_t y);

/* Smoothly interpolated value noise in [0, 1) at (u, v) in [0, 1)^2, with
 * `cells` lattice cells across; tiles seamlessly with period 1. */
float procgen_noise(uint64_t k, float u, float v, int cells);

/* Sum of `octaves` noise layers from `cells` cells, each twice as fine and
 * half as strong as the last; in [0, 1). */
float procgen_fbm(uint64_t k, float u, float v, int cells, int octaves);

/* The generators' command line, `PROG [--seed K] NAME DIR`, through
 * tool_getopt() (so --help prints `usage` and --version the version): K
 * decimal digits only, 0 to 2^64 - 1 (default 1); NAME one of
 * names[0..n). Sets *seed, *which (NAME's index) and *dir; a bad command
 * line exits 2 (the usage, or one line naming the problem, on stderr). */
void procgen_command_line(int argc, char **argv, const char *usage, const char *const names[],
                          int n, uint64_t *seed, int *which, const char **dir);

#endif
