/* The command line of `render`: getopt_long, every value checked strictly,
 * one error line plus a hint for anything wrong (see rt_options.h). */
#define _POSIX_C_SOURCE 200809L

#include "rt_options.h"
#include "rt_scene.h" /* RT_MAX_COORD */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef RT_VERSION
#define RT_VERSION "unknown"
#endif

#define RT_MAX_TILE          RT_MAX_RESOLUTION
#define RT_MAX_MEMORY_MB     ((uint64_t)1 << 20) /* 1 TiB of texture cache */
#define RT_DEFAULT_OUTPUT    "render.exr"
#define RT_DEFAULT_WIDTH     640
#define RT_DEFAULT_HEIGHT    480
#define RT_DEFAULT_SPP       1
#define RT_DEFAULT_PATH_SPP  16
#define RT_DEFAULT_TILE      32
#define RT_DEFAULT_TEX_CACHE 1024 /* texture.h: max_memory_mb 0 means 1024 */

void
rt_options_usage(FILE *f)
{
    fputs("usage: render [options] SCENE\n"
          "Renders SCENE (glTF, GLB, OBJ, PLY) to an image.\n"
          "  -t, --threads N         worker threads (default: all hardware threads)\n"
          "  -o, --output FILE       .exr (float RGBA) or .png (8-bit sRGB) by extension\n"
          "                          (default " RT_DEFAULT_OUTPUT ")\n"
          "  -r, --resolution W H    image size, also WxH (default 640 480; at most 16384\n"
          "                          a side)\n"
          "      --spp N             samples per pixel (default 16 with path, 1 with the\n"
          "                          others; at most 65536)\n"
          "      --tile N            tile edge in pixels (default 32)\n"
          "      --seed N            seed of the sampling (default 0)\n"
          "      --bypass-texture    each texture lookup interns its filename, then returns\n"
          "                          the material's constant instead of reading the texture\n"
          "      --early-out         each texture lookup returns that constant before\n"
          "                          interning (excludes --bypass-texture)\n"
          "      --intern MODE       per-lookup: intern the filename at every lookup, or\n"
          "                          once: at scene load (default per-lookup)\n"
          "      --open-textures M   upfront: the workers open every texture the scene\n"
          "                          names before the first tile; lazy: each on its\n"
          "                          first lookup, or by a worker that would wait for\n"
          "                          another's (default upfront)\n"
          "      --ustring-lock L    mutex, spin, rwspin, sharded, lockfree or default\n"
          "                          (default: default, which is lockfree)\n"
          "      --integrator I      path, eyelight, normal, uv, albedo or ao (default\n"
          "                          path)\n"
          "      --max-depth N       bounces of a path (path; default 8, at most 1024)\n"
          "      --envmap FILE       lat-long environment map, EXR or PNG, +y up (path;\n"
          "                          default none: black)\n"
          "      --resume            finish the partial EXR an interrupted render left\n"
          "                          beside the output (NAME.partial.exr; same scene\n"
          "                          and options)\n"
          "      --restrict-paths    read textures only from the scene's folder and the\n"
          "                          --search-path folders (untrusted scenes)\n"
          "      --search-path DIR   a folder textures may come from (repeatable)\n"
          "      --light-sampling S  mis, light or bsdf: how the path tracer finds area\n"
          "                          lights and the environment (default mis)\n"
          "      --max-memory-mb N   texture memory in MiB: the tile cache and what\n"
          "                          decodes hold (default 1024)\n"
          "      --max-scene-mb N    the largest scene file (or buffer, material library)\n"
          "                          an import reads, in MiB (default 16384)\n"
          "      --camera-pos X,Y,Z  camera position (default: the scene's camera, else\n"
          "                          framed automatically: see --view)\n"
          "      --look-at X,Y,Z     point the camera looks at (default: as above)\n"
          "      --fov DEGREES       vertical field of view, 0 < fov < 180 (default: as\n"
          "                          above)\n"
          "      --up AXIS           x, y or z: the world's up for the automatic camera\n"
          "                          (default y, glTF's; z for an OBJ/PLY far flatter\n"
          "                          along z than across, with a note)\n"
          "      --view V            auto, front, back, left, right, top or bottom: the\n"
          "                          automatic camera's view (default auto: the scene's\n"
          "                          camera, else three-quarter from the front right and\n"
          "                          above); another view replaces the scene's camera\n"
          "      --exposure STOPS    exposure applied to PNG output, or auto (the\n"
          "                          default: 0, or what brings a dim image's lit\n"
          "                          pixels to a mean luminance of 0.18)\n"
          "      --exr-compression C zip, none, rle, zips or piz: how an EXR image is\n"
          "                          compressed, all lossless (default zip; none writes\n"
          "                          quickest, the largest file)\n"
          "      --stats             print the statistics report on stderr\n"
          "      --stats-json FILE   write the statistics as JSON to FILE (default none)\n"
          "      --quiet             no progress bar, no warnings (errors still print)\n"
          "      --progress          progress as lines on stderr, for logs: at the start,\n"
          "                          the first tile, then at most one a second (also with\n"
          "                          --quiet; under mpirun, each rank's own tiles)\n"
          "  -h, --help              print this help and exit\n"
          "      --version           print the version and exit\n"
          "Under mpirun (a build with MPI), one image is rendered across the ranks,\n"
          "each with -t threads; rank 0 writes it (docs/distributed.md).\n",
          f);
}

uint32_t
rt_options_tiles_x(const rt_options *o)
{
    return (o->width + o->tile - 1) / o->tile;
}

uint32_t
rt_options_tiles(const rt_options *o)
{
    return rt_options_tiles_x(o) * ((o->height + o->tile - 1) / o->tile);
}

const char *
rt_integrator_name(rt_integrator i)
{
    switch (i) {
    case RT_INTEGRATOR_EYELIGHT:
        return "eyelight";
    case RT_INTEGRATOR_NORMAL:
        return "normal";
    case RT_INTEGRATOR_UV:
        return "uv";
    case RT_INTEGRATOR_ALBEDO:
        return "albedo";
    case RT_INTEGRATOR_AO:
        return "ao";
    case RT_INTEGRATOR_PATH:
        return "path";
    }
    return "unknown";
}

const char *
rt_texture_mode_name(rt_texture_mode m)
{
    switch (m) {
    case RT_TEXTURE_FULL:
        return "full";
    case RT_TEXTURE_BYPASS:
        return "bypass";
    case RT_TEXTURE_EARLY_OUT:
        return "early-out";
    }
    return "unknown";
}

const char *
rt_intern_mode_name(rt_intern_mode m)
{
    return m == RT_INTERN_ONCE ? "once" : "per-lookup";
}

const char *
rt_light_sampling_name(rt_light_sampling m)
{
    return m == RT_SAMPLING_LIGHT ? "light" : m == RT_SAMPLING_BSDF ? "bsdf" : "mis";
}

const char *
rt_open_mode_name(rt_open_mode m)
{
    return m == RT_OPEN_LAZY ? "lazy" : "upfront";
}

const char *
rt_up_axis_name(rt_up_axis a)
{
    return a == RT_UP_Z ? "z" : a == RT_UP_X ? "x" : "y";
}

const char *
rt_view_name(rt_view v)
{
    static const char *const names[] = {"auto", "front", "back", "left", "right", "top", "bottom"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "auto";
}

const char *
rt_exr_compression_name(rt_exr_compression c)
{
    switch (c) {
    case RT_EXR_ZIP:
        return "zip";
    case RT_EXR_NONE:
        return "none";
    case RT_EXR_RLE:
        return "rle";
    case RT_EXR_ZIPS:
        return "zips";
    case RT_EXR_PIZ:
        return "piz";
    }
    return "unknown";
}

/* ---- errors ---- */

/* The program the messages name: argv[0]'s last component ("render", or a
 * tool that takes render's options, such as "study"). */
static const char *prog = "render";

/* Prints "PROG: MESSAGE" and the hint; returns 2, the usage-error status. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int
usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return 2;
}

/* ---- values ---- */

/* A decimal unsigned number, nothing before or after it, within lo..hi. */
static bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false; /* no sign, no space, not empty */
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* A finite float with nothing after it; ends at `stop` when it is not NUL. */
static bool
parse_float(const char *s, char stop, float *out, const char **rest)
{
    if (!s || !*s || *s == ' ' || *s == '\t' || *s == '\n')
        return false;
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || *end != stop)
        return false;
    *out = v;
    if (rest)
        *rest = end;
    return true;
}

static bool
parse_vec3(const char *s, float v[3])
{
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        if (!parse_float(p, i < 2 ? ',' : '\0', &v[i], &p) || !(fabsf(v[i]) <= RT_MAX_COORD))
            return false;
        if (i < 2)
            p++; /* the comma */
    }
    return true;
}

static const char *
extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot : NULL;
}

/* ---- the parser ---- */

enum {
    OPT_SPP = 256,
    OPT_TILE,
    OPT_SEED,
    OPT_BYPASS,
    OPT_EARLY_OUT,
    OPT_INTERN,
    OPT_OPEN,
    OPT_LOCK,
    OPT_INTEGRATOR,
    OPT_MAX_MEMORY,
    OPT_CAMERA_POS,
    OPT_LOOK_AT,
    OPT_UP,
    OPT_VIEW,
    OPT_FOV,
    OPT_EXPOSURE,
    OPT_EXR_COMPRESSION,
    OPT_MAX_DEPTH,
    OPT_ENVMAP,
    OPT_LIGHT_SAMPLING,
    OPT_RESTRICT_PATHS,
    OPT_RESUME,
    OPT_SEARCH_PATH,
    OPT_STATS,
    OPT_STATS_JSON,
    OPT_QUIET,
    OPT_PROGRESS,
    OPT_MAX_SCENE,
    OPT_VERSION,
};

static const struct option longopts[] = {
    {"threads", required_argument, NULL, 't'},
    {"output", required_argument, NULL, 'o'},
    {"resolution", required_argument, NULL, 'r'},
    {"spp", required_argument, NULL, OPT_SPP},
    {"tile", required_argument, NULL, OPT_TILE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"bypass-texture", no_argument, NULL, OPT_BYPASS},
    {"early-out", no_argument, NULL, OPT_EARLY_OUT},
    {"intern", required_argument, NULL, OPT_INTERN},
    {"open-textures", required_argument, NULL, OPT_OPEN},
    {"ustring-lock", required_argument, NULL, OPT_LOCK},
    {"integrator", required_argument, NULL, OPT_INTEGRATOR},
    {"max-memory-mb", required_argument, NULL, OPT_MAX_MEMORY},
    {"camera-pos", required_argument, NULL, OPT_CAMERA_POS},
    {"look-at", required_argument, NULL, OPT_LOOK_AT},
    {"up", required_argument, NULL, OPT_UP},
    {"view", required_argument, NULL, OPT_VIEW},
    {"fov", required_argument, NULL, OPT_FOV},
    {"exposure", required_argument, NULL, OPT_EXPOSURE},
    {"exr-compression", required_argument, NULL, OPT_EXR_COMPRESSION},
    {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
    {"envmap", required_argument, NULL, OPT_ENVMAP},
    {"light-sampling", required_argument, NULL, OPT_LIGHT_SAMPLING},
    {"restrict-paths", no_argument, NULL, OPT_RESTRICT_PATHS},
    {"resume", no_argument, NULL, OPT_RESUME},
    {"search-path", required_argument, NULL, OPT_SEARCH_PATH},
    {"stats", no_argument, NULL, OPT_STATS},
    {"stats-json", required_argument, NULL, OPT_STATS_JSON},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"max-scene-mb", required_argument, NULL, OPT_MAX_SCENE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static unsigned
hardware_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > RT_MAX_THREADS ? RT_MAX_THREADS : (unsigned)n;
}

/* An option word as the user wrote it, without any "=value": "--foo=1" gives
 * "--foo". */
static int
word_len(const char *w)
{
    const char *eq = strncmp(w, "--", 2) == 0 ? strchr(w, '=') : NULL;
    return eq ? (int)(eq - w) : (int)strlen(w);
}

static bool
parse_integrator(const char *s, rt_integrator *out)
{
    for (int i = RT_INTEGRATOR_EYELIGHT; i <= RT_INTEGRATOR_PATH; i++) {
        if (strcmp(s, rt_integrator_name((rt_integrator)i)) == 0) {
            *out = (rt_integrator)i;
            return true;
        }
    }
    return false;
}

int
rt_options_parse(int argc, char **argv, rt_options *o)
{
    *o = (rt_options){
        .output = RT_DEFAULT_OUTPUT,
        .threads = hardware_threads(),
        .width = RT_DEFAULT_WIDTH,
        .height = RT_DEFAULT_HEIGHT,
        .spp = 0, /* the integrator's default, below */
        .tile = RT_DEFAULT_TILE,
        .texture_mode = RT_TEXTURE_FULL,
        .intern = RT_INTERN_PER_LOOKUP,
        .lock = USTR_LOCK_DEFAULT,
        .integrator = RT_INTEGRATOR_PATH,
        .max_depth = 8,
    };
    bool bypass = false, early_out = false;

    if (argc > 0 && argv[0] && *argv[0]) {
        const char *slash = strrchr(argv[0], '/');
        prog = slash ? slash + 1 : argv[0];
    }
    optind = 0; /* glibc: full reinitialisation, so we can be called again */
    opterr = 0; /* our own messages */
    for (;;) {
        int longindex = -1;
        int c = getopt_long(argc, argv, ":t:o:r:h", longopts, &longindex);
        if (c == -1)
            break;
        /* The option's name as written, for error messages. */
        char name[64];
        if (longindex >= 0)
            snprintf(name, sizeof name, "--%s", longopts[longindex].name);
        else
            snprintf(name, sizeof name, "-%c", c);
        uint64_t v;
        switch (c) {
        case 't':
            if (!parse_u64(optarg, 1, RT_MAX_THREADS, &v))
                return usage_error("%s: '%s' is not a thread count (1..%d)", name, optarg,
                                   RT_MAX_THREADS);
            o->threads = (unsigned)v;
            break;
        case 'o': {
            const char *ext = extension(optarg);
            if (!ext)
                return usage_error("%s: '%s' has no extension; use .exr or .png", name, optarg);
            if (strcasecmp(ext, ".exr") != 0 && strcasecmp(ext, ".png") != 0)
                return usage_error("%s: '%s': unsupported extension '%s'; use .exr or .png", name,
                                   optarg, ext);
            o->output = optarg;
            break;
        }
        case 'r': {
            /* "W H" as two words, or "WxH" as one. */
            const char *w = optarg, *h;
            char        buf[64];
            const char *x = strpbrk(optarg, "xX");
            if (x) {
                size_t n = (size_t)(x - optarg);
                if (n >= sizeof buf)
                    return usage_error("%s: '%s' is not a resolution (W H or WxH)", name, optarg);
                memcpy(buf, optarg, n);
                buf[n] = '\0';
                w = buf;
                h = x + 1;
            } else {
                if (optind >= argc)
                    return usage_error("%s: '%s' needs a height after it (W H or WxH)", name,
                                       optarg);
                h = argv[optind++]; /* glibc's permutation copes with this */
            }
            uint64_t wv, hv;
            if (!parse_u64(w, 1, RT_MAX_RESOLUTION, &wv))
                return usage_error("%s: '%s' is not a width (1..%d)", name, w, RT_MAX_RESOLUTION);
            if (!parse_u64(h, 1, RT_MAX_RESOLUTION, &hv))
                return usage_error("%s: '%s' is not a height (1..%d)", name, h, RT_MAX_RESOLUTION);
            o->width = (uint32_t)wv;
            o->height = (uint32_t)hv;
            break;
        }
        case OPT_SPP:
            if (!parse_u64(optarg, 1, RT_MAX_SPP, &v))
                return usage_error("%s: '%s' is not a sample count (1..%d)", name, optarg,
                                   RT_MAX_SPP);
            o->spp = (unsigned)v;
            break;
        case OPT_TILE:
            if (!parse_u64(optarg, 1, RT_MAX_TILE, &v))
                return usage_error("%s: '%s' is not a tile size (1..%d)", name, optarg,
                                   RT_MAX_TILE);
            o->tile = (unsigned)v;
            break;
        case OPT_SEED:
            if (!parse_u64(optarg, 0, UINT64_MAX, &o->seed))
                return usage_error("%s: '%s' is not a seed (0..%" PRIu64 ")", name, optarg,
                                   UINT64_MAX);
            break;
        case OPT_BYPASS:
            bypass = true;
            break;
        case OPT_EARLY_OUT:
            early_out = true;
            break;
        case OPT_INTERN:
            if (strcmp(optarg, "per-lookup") == 0)
                o->intern = RT_INTERN_PER_LOOKUP;
            else if (strcmp(optarg, "once") == 0)
                o->intern = RT_INTERN_ONCE;
            else
                return usage_error("%s: '%s' is not a mode (per-lookup or once)", name, optarg);
            break;
        case OPT_OPEN:
            if (strcmp(optarg, "upfront") == 0)
                o->open = RT_OPEN_UPFRONT;
            else if (strcmp(optarg, "lazy") == 0)
                o->open = RT_OPEN_LAZY;
            else
                return usage_error("%s: '%s' is not a mode (upfront or lazy)", name, optarg);
            break;
        case OPT_LOCK:
            if (ustr_lock_parse(optarg, &o->lock) != USTR_OK)
                return usage_error("%s: '%s' is not a strategy (mutex, spin, rwspin, sharded, "
                                   "lockfree or default)",
                                   name, optarg);
            break;
        case OPT_INTEGRATOR:
            if (!parse_integrator(optarg, &o->integrator))
                return usage_error("%s: '%s' is not an integrator (eyelight, normal, uv, "
                                   "albedo, ao or path)",
                                   name, optarg);
            break;
        case OPT_MAX_MEMORY:
            if (!parse_u64(optarg, 0, RT_MAX_MEMORY_MB, &v)) /* 0: the default */
                return usage_error("%s: '%s' is not a size in MiB (0..%" PRIu64 ")", name, optarg,
                                   RT_MAX_MEMORY_MB);
            o->max_memory_mb = (size_t)v;
            break;
        case OPT_MAX_SCENE:
            if (!parse_u64(optarg, 1, RT_MAX_SCENE_MB, &v))
                return usage_error("%s: '%s' is not a size in MiB (1..%" PRIu64 ")", name, optarg,
                                   (uint64_t)RT_MAX_SCENE_MB);
            o->max_scene_mb = v;
            break;
        case OPT_CAMERA_POS:
            if (!parse_vec3(optarg, o->camera_pos))
                return usage_error("%s: '%s' is not a point X,Y,Z (each within +-%g)", name, optarg,
                                   RT_MAX_COORD);
            o->has_camera_pos = true;
            break;
        case OPT_LOOK_AT:
            if (!parse_vec3(optarg, o->look_at))
                return usage_error("%s: '%s' is not a point X,Y,Z (each within +-%g)", name, optarg,
                                   RT_MAX_COORD);
            o->has_look_at = true;
            break;
        case OPT_FOV:
            if (!parse_float(optarg, '\0', &o->fov_degrees, NULL) || !(o->fov_degrees > 0) ||
                !(o->fov_degrees < 180))
                return usage_error("%s: '%s' is not an angle in degrees (0 < fov < 180)", name,
                                   optarg);
            o->has_fov = true;
            break;
        case OPT_MAX_DEPTH:
            if (!parse_u64(optarg, 0, RT_MAX_DEPTH, &v))
                return usage_error("%s: '%s' is not a depth (0..%d)", name, optarg, RT_MAX_DEPTH);
            o->max_depth = (unsigned)v;
            break;
        case OPT_ENVMAP:
            if (!*optarg)
                return usage_error("%s: needs a file name", name);
            o->envmap = optarg;
            break;
        case OPT_RESTRICT_PATHS:
            o->restrict_paths = true;
            break;
        case OPT_RESUME:
            o->resume = true;
            break;
        case OPT_SEARCH_PATH:
            if (!*optarg)
                return usage_error("%s: needs a folder", name);
            if (o->nsearch_paths == RT_MAX_SEARCH_PATHS)
                return usage_error("%s: at most %d folders", name, RT_MAX_SEARCH_PATHS);
            o->search_paths[o->nsearch_paths++] = optarg;
            break;
        case OPT_UP: {
            bool found = false;
            for (int a = RT_UP_Y; a <= RT_UP_X && !found; a++)
                if (strcmp(optarg, rt_up_axis_name((rt_up_axis)a)) == 0)
                    o->up = (rt_up_axis)a, o->up_given = found = true;
            if (!found)
                return usage_error("%s: '%s' is not an axis (x, y or z)", name, optarg);
            break;
        }
        case OPT_VIEW: {
            bool found = false;
            for (int w = RT_VIEW_AUTO; w <= RT_VIEW_BOTTOM && !found; w++)
                if (strcmp(optarg, rt_view_name((rt_view)w)) == 0)
                    o->view = (rt_view)w, found = true;
            if (!found)
                return usage_error(
                    "%s: '%s' is not a view (auto, front, back, left, right, top, bottom)", name,
                    optarg);
            break;
        }
        case OPT_LIGHT_SAMPLING: {
            bool found = false;
            for (int m = RT_SAMPLING_MIS; m <= RT_SAMPLING_BSDF && !found; m++)
                if (strcmp(optarg, rt_light_sampling_name((rt_light_sampling)m)) == 0)
                    o->light_sampling = (rt_light_sampling)m, found = true;
            if (!found)
                return usage_error("%s: '%s' is not a strategy (mis, light or bsdf)", name, optarg);
            break;
        }
        case OPT_EXPOSURE:
            o->exposure_given = strcmp(optarg, "auto") != 0;
            o->exposure = 0;
            if (o->exposure_given && !parse_float(optarg, '\0', &o->exposure, NULL))
                return usage_error("%s: '%s' is not a number of stops, or auto", name, optarg);
            break;
        case OPT_EXR_COMPRESSION: {
            bool found = false;
            for (int k = RT_EXR_ZIP; k <= RT_EXR_PIZ && !found; k++)
                if (strcmp(optarg, rt_exr_compression_name((rt_exr_compression)k)) == 0)
                    o->exr_compression = (rt_exr_compression)k, found = true;
            if (!found)
                return usage_error("%s: '%s' is not a compression (zip, none, rle, zips or piz)",
                                   name, optarg);
            break;
        }
        case OPT_STATS:
            o->stats = true;
            break;
        case OPT_STATS_JSON:
            if (!*optarg)
                return usage_error("%s: needs a file name", name);
            o->stats_json = optarg;
            break;
        case OPT_QUIET:
            o->quiet = true;
            break;
        case OPT_PROGRESS:
            o->progress = true;
            break;
        case 'h':
            rt_options_usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("%s %s\n", prog, RT_VERSION); /* study, render-bench: their own name */
            return 0;
        case ':': {
            /* A missing value: optind is past the option word. */
            const char *w = argv[optind - 1];
            if (strncmp(w, "--", 2) == 0)
                return usage_error("option '%.*s' needs a value", word_len(w), w);
            return usage_error("option '-%c' needs a value", optopt);
        }
        default: { /* '?': optopt is 0 for an unknown long option, the letter for an
                    * unknown short one, our code for a known flag given "=value" */
            const char *w = argv[optind - 1];
            if (optopt == 0)
                return usage_error("unknown option '%.*s'", word_len(w), w);
            if (optopt >= OPT_SPP || optopt == 'h')
                return usage_error("option '%.*s' takes no value", word_len(w), w);
            return usage_error("unknown option '-%c'", optopt);
        }
        }
    }

    if (bypass && early_out)
        return usage_error("--bypass-texture and --early-out exclude each other");
    if (o->has_camera_pos && o->has_look_at && o->camera_pos[0] == o->look_at[0] &&
        o->camera_pos[1] == o->look_at[1] && o->camera_pos[2] == o->look_at[2])
        return usage_error("--look-at: the point of --camera-pos itself (no direction to look in)");
    o->texture_mode = bypass      ? RT_TEXTURE_BYPASS
                      : early_out ? RT_TEXTURE_EARLY_OUT
                                  : RT_TEXTURE_FULL;
    if (o->spp == 0) /* a path tracer needs samples; the others see one point */
        o->spp = o->integrator == RT_INTEGRATOR_PATH ? RT_DEFAULT_PATH_SPP : RT_DEFAULT_SPP;
    if ((uint64_t)o->width * o->height * o->spp > RT_MAX_PIXEL_SAMPLES)
        return usage_error("-r %" PRIu32 "x%" PRIu32 " with --spp %u: more than %" PRIu64
                           " samples in all",
                           o->width, o->height, o->spp, RT_MAX_PIXEL_SAMPLES);
    if (optind >= argc)
        return usage_error("no SCENE given");
    if (argc - optind > 1)
        return usage_error("one SCENE only: '%s' and '%s'", argv[optind], argv[optind + 1]);
    o->scene = argv[optind];
    return -1; /* go on */
}
