/* Why paths are distinct: each index maps, through a keyed permutation of
 * 24-bit numbers, to a key k, and every template writes all of k into fields
 * that can be read back from the text (word-list positions, digits, letters),
 * like digits in a mixed-radix number. Templates start with different
 * literal prefixes, so equal paths would need equal templates and then equal
 * keys, hence equal indices. Fields that do not carry k are free to be drawn
 * from the generator, so the paths do not look like a counter. */
#include "texpaths.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#define COUNT(a)   (sizeof(a) / sizeof((a)[0]))
#define KEY_BITS   24
#define KEY_MASK   ((UINT32_C(1) << KEY_BITS) - 1)
#define KEY_DOMAIN (UINT32_C(1) << KEY_BITS)

_Static_assert(TEXPATH_UNIQUE_MAX == KEY_DOMAIN, "the header promises what the key carries");

/* Word lists. Their longest words bound the path lengths; see each
 * template. Lists whose size is a radix of k have their size asserted. */
static const char *const shows[] = {
    "ember",  "tundra", "halcyon", "parallax", "kestrel",  "monsoon",  "nimbus",   "orchard",
    "quarry", "vesper", "cobalt",  "juniper",  "solstice", "foxglove", "wildfire", "marrow",
}; /* 5..8 bytes */
_Static_assert(COUNT(shows) == 16, "shows");

static const char *const kinds[] = {"char", "prop", "env", "veh"}; /* 3..4 bytes */

/* 16 assets per kind, in the order of kinds[]: asset a is of kind a / 16. */
static const char *const assets[] = {
    "hero",    "villain",    "sidekick",  "elder",      "guard",      "merchant",  "child",
    "knight",  "pilot",      "witch",     "dragon",     "wolf",       "horse",     "raven",
    "golem",   "mermaid",    "lantern",   "chair",      "table",      "barrel",    "crate",
    "sword",   "shield",     "teapot",    "bookshelf",  "lamp_post",  "mailbox",   "anvil",
    "bucket",  "clock",      "rope_coil", "cart_wheel", "cliff_rock", "oak_tree",  "pine_tree",
    "fern",    "grass_tuft", "boulder",   "ruins_wall", "bridge",     "tower",     "cottage",
    "well",    "fence",      "dock",      "cave_arch",  "waterfall",  "shoreline", "car_sedan",
    "truck",   "bicycle",    "boat",      "rowboat",    "airship",    "train",     "tram",
    "tractor", "wagon",      "carriage",  "scooter",    "biplane",    "submarine", "tank",
    "rover",
}; /* 4..10 bytes */
_Static_assert(COUNT(assets) == 16 * COUNT(kinds), "assets");

static const char *const asset_channels[] = {
    "diffuse", "basecolor", "roughness", "specular",   "metalness",  "normal", "bump", "displace",
    "opacity", "emission",  "sss_color", "sss_radius", "coat_rough", "sheen",  "ao",   "mask",
}; /* 2..10 bytes */
_Static_assert(COUNT(asset_channels) == 16, "asset_channels");

static const char *const categories[] = {
    "brick", "concrete", "fabric", "ground", "metal", "stone", "wood", "plaster",
}; /* 4..8 bytes */

/* 9 materials per category, in the order of categories[]. */
static const char *const materials[] = {
    "red_brick",    "old_brick",    "brick_wall",   "clinker",     "white_brick", "glazed_brick",
    "brick_floor",  "adobe",        "terracotta",   "concrete",    "cinderblock", "rough_cast",
    "slab_smooth",  "pavement",     "curb_stone",   "asphalt",     "road_worn",   "sidewalk",
    "denim",        "wool_knit",    "linen",        "velvet",      "leather",     "canvas",
    "burlap",       "silk",         "carpet",       "mud",         "gravel",      "sand_dune",
    "forest_floor", "moss",         "soil_dry",     "snow",        "pebbles",     "leaf_litter",
    "rust_steel",   "brushed_alu",  "copper",       "brass",       "iron_cast",   "gold_foil",
    "chrome",       "tin_roof",     "galvanized",   "cobblestone", "granite",     "marble",
    "slate",        "limestone",    "basalt",       "sandstone",   "flagstone",   "travertine",
    "oak_planks",   "walnut",       "pine_bark",    "plywood",     "birch",       "bamboo",
    "mahogany",     "teak_deck",    "driftwood",    "plaster",     "stucco",      "drywall",
    "lime_wash",    "painted_wall", "cracked_wall", "tiles_white", "terrazzo",    "wallpaper",
}; /* 3..12 bytes */
_Static_assert(COUNT(materials) == 9 * COUNT(categories), "materials");

static const char *const lib_channels[] = {
    "basecolor", "albedo",   "roughness", "normal", "normal_gl", "metallic", "height", "ao",
    "opacity",   "displace", "specular",  "gloss",  "emissive",  "bump",     "cavity", "sheen",
}; /* 2..9 bytes */
_Static_assert(COUNT(lib_channels) == 16, "lib_channels");

static const char *const resolutions[] = {"1k", "2k", "4k", "8k"};
_Static_assert(COUNT(resolutions) == 4, "resolutions");

static const char *const lib_exts[] = {"png", "jpg", "exr", "tx"};
_Static_assert(COUNT(lib_exts) == 4, "lib_exts");

static const char *const depts[] = {"lgt", "fx", "env", "comp"}; /* 2..4 bytes */

static const char *const elements[] = {
    "smoke_card",  "fire_card", "dust_plate", "sky_dome",     "matte_far", "matte_near",
    "rain_streak", "cloud_bg",  "fog_ramp",   "ember_sprite", "caustics",  "glow_gobo",
    "gobo_leaf",   "lens_dirt", "bokeh_card", "star_field",
}; /* 8..12 bytes */
_Static_assert(COUNT(elements) == 16, "elements");

/* splitmix64's finaliser: a bijection on 64 bits with full avalanche. */
static uint64_t
mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* xorshift64*; the state is never 0. */
static uint64_t
rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* Uniform in [0, n) for small n; the modulo bias is below n / 2^64. */
static unsigned
rng_below(uint64_t *s, unsigned n)
{
    return (unsigned)(rng_next(s) % n);
}

/* A permutation of [0, 2^24) chosen by `key`: every step (xor a key word,
 * multiply by an odd number, xor-shift right) is a bijection on 24 bits. */
static uint32_t
permute24(uint32_t x, uint64_t key)
{
    for (unsigned r = 0; r < 4; r++) {
        x ^= (uint32_t)mix64(key + r) & KEY_MASK;
        x = (x * UINT32_C(0x2C1B3D)) & KEY_MASK;
        x ^= x >> 12;
        x = (x * UINT32_C(0x9E3779)) & KEY_MASK;
        x ^= x >> 11;
    }
    return x;
}

/* The next mixed-radix digit of k, least significant first. */
static unsigned
take(uint32_t *k, unsigned radix)
{
    unsigned d = *k % radix;
    *k /= radix;
    return d;
}

/* A version number, mostly low, as in a real asset history: 1..30. */
static unsigned
version(uint64_t *s)
{
    unsigned a = rng_below(s, 30), b = rng_below(s, 30);
    return 1 + (a < b ? a : b);
}

/* Length, longest words: 12 + 8 + 8 + 4 + 1 + 10+3 + 6+3 + 1 + 10+4 + 10 + 1+4 + 1+3 = 89;
 * shortest: 12 + 5 + 8 + 3 + 1 + 4+3 + 6+3 + 1 + 4+4 + 2 + 1+4 + 1+2 = 64. k = channel 16, tile 99,
 * nn 100, asset 64, top 2 (in show). */
static int
make_asset(uint32_t k, uint64_t *s, char *out, size_t cap)
{
    unsigned ch = take(&k, 16), tile = take(&k, 99), nn = take(&k, 100), a = take(&k, 64);
    /* 2^24 / (16 * 99 * 100 * 64) < 2: one bit is left, folded into the show
     * as its parity so that every show still appears. */
    assert(k < 2);
    unsigned    show = k + 2 * rng_below(s, COUNT(shows) / 2);
    const char *ext = rng_below(s, 5) ? "tx" : "exr";
    return snprintf(out, cap, "/prod/shows/%s/assets/%s/%s_%02u/tex/v%03u/%s_%02u_%s.%u.%s",
                    shows[show], kinds[a / 16], assets[a], nn, version(s), assets[a], nn,
                    asset_channels[ch], 1001 + tile, ext);
}

/* Length, longest words: 9 + 8 + 1 + 12+4 + 1 + 12+5 + 9 + 1+2 + 1+3 = 68;
 * shortest: 9 + 4 + 1 + 3+4 + 1 + 3+5 + 2 + 1+2 + 1+2 = 38.
 * k = material 72, channel 16, resolution 4, extension 4, then the number,
 * which is below 2^24 / 18432 < 911 and so fits three digits. */
static int
make_library(uint32_t k, char *out, size_t cap)
{
    unsigned m = take(&k, COUNT(materials)), ch = take(&k, 16), res = take(&k, 4),
             ext = take(&k, 4);
    assert(k < 1000);
    return snprintf(out, cap, "textures/%s/%s_%03u/%s_%03u_%s_%s.%s", categories[m / 9],
                    materials[m], (unsigned)k, materials[m], (unsigned)k, lib_channels[ch],
                    resolutions[res], lib_exts[ext]);
}

/* Length, longest words: 12 + 8 + 5 + 2+1 + 6+1 + 4 + 5 + 12 + 2+3 + 1+3 = 65;
 * shortest: 12 + 5 + 5 + 2+1 + 6+1 + 2 + 5 + 8 + 2+3 + 1+2 = 55.
 * k = element 16, shot 999, sequence 26 * 26, top 2 (in show). */
static int
make_shot(uint32_t k, uint64_t *s, char *out, size_t cap)
{
    unsigned el = take(&k, 16), shot = 10 * (1 + take(&k, 999)), sq = take(&k, 26 * 26);
    assert(k < 2); /* 2^24 / (16 * 999 * 676) < 2 */
    unsigned    show = k + 2 * rng_below(s, COUNT(shows) / 2);
    unsigned    e = rng_below(s, 20);
    const char *ext = e < 12 ? "exr" : e < 17 ? "tx" : "png";
    char        a = (char)('A' + sq / 26), b = (char)('A' + sq % 26);
    return snprintf(out, cap, "/prod/shows/%s/seq/%c%c/%c%c%04u/%s/tex/%s_v%03u.%s", shows[show], a,
                    b, a, b, shot, depts[rng_below(s, COUNT(depts))], elements[el], version(s),
                    ext);
}

/* Length, longest words: 12 + 8 + 1 + 12+1+7 + 1 + 7+1+2+1 + 9 + 1+3 = 66;
 * shortest: 12 + 4 + 1 + 3+1+7 + 1 + 7+1+2+1 + 2 + 1+3 = 46.
 * All of k goes into the 7-letter scan id, as id mod 2^24; the rest of the
 * id is random, so it looks like a catalogue id, not a counter. */
static int
make_scan(uint32_t k, uint64_t *s, char *out, size_t cap)
{
    /* 478 * 2^24 <= 26^7, so the id fits seven letters. */
    uint64_t id = k + ((uint64_t)rng_below(s, 478) << KEY_BITS);
    char     letters[8];
    for (int i = 6; i >= 0; i--) {
        letters[i] = (char)('a' + id % 26);
        id /= 26;
    }
    letters[7] = '\0';
    unsigned    m = rng_below(s, COUNT(materials));
    const char *res = resolutions[rng_below(s, COUNT(resolutions))];
    unsigned    ch = rng_below(s, COUNT(lib_channels));
    const char *ext = rng_below(s, 5) ? "jpg" : "exr";
    return snprintf(out, cap, "/mnt/texlib/%s/%s_%s/%s_%s_%s.%s", categories[m / 9], materials[m],
                    letters, letters, res, lib_channels[ch], ext);
}

size_t
texpath_make(uint64_t seed, uint64_t index, char *buf, size_t cap)
{
    /* The generator's state mixes seed and index so that neighbouring
     * indices, or seeds, give unrelated streams; never 0. */
    uint64_t s = mix64(mix64(seed ^ UINT64_C(0x6A09E667F3BCC908)) ^ index);
    if (s == 0)
        s = UINT64_C(0x9E3779B97F4A7C15);
    /* The key: a permutation of the index's low 24 bits, a different one
     * for each seed and each block of 2^24 indices. */
    uint64_t pkey = mix64(seed ^ UINT64_C(0xBB67AE8584CAA73B)) + (index >> KEY_BITS);
    uint32_t k = permute24((uint32_t)(index & KEY_MASK), pkey);

    char     tmp[128];
    int      n;
    unsigned t = rng_below(&s, 100);
    if (t < 45)
        n = make_asset(k, &s, tmp, sizeof tmp);
    else if (t < 70)
        n = make_library(k, tmp, sizeof tmp);
    else if (t < 85)
        n = make_shot(k, &s, tmp, sizeof tmp);
    else
        n = make_scan(k, &s, tmp, sizeof tmp);

    /* The bounds above make this hold; if a word list ever breaks them, an
     * assert build says so and a release build cuts the path short. */
    assert(n >= TEXPATH_MIN_LEN && n <= TEXPATH_MAX_LEN);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len > TEXPATH_MAX_LEN)
        len = TEXPATH_MAX_LEN;
    if (cap > 0) {
        size_t w = len < cap - 1 ? len : cap - 1;
        memcpy(buf, tmp, w);
        buf[w] = '\0';
    }
    return len;
}
