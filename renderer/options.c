/* The command line of `render`: getopt_long, every value checked strictly,
 * one error line plus a hint for anything wrong (see rt_options.h). */
#define _POSIX_C_SOURCE 200809L

#include "rt_options.h"
#include "rt_scene.h" /* RT_MAX_COORD */
#include "ustr_cpus.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
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

/* A finite float with nothing after it; ends at `stop` when it is not NUL.
 * A number too small for a float is its nearest (0 for 1e-300): only one
 * too large is refused (strtof() says ERANGE for both). */
static bool
parse_float(const char *s, char stop, float *out, const char **rest)
{
    if (!s || !*s || *s == ' ' || *s == '\t' || *s == '\n')
        return false;
    char *end;
    float v = strtof(s, &end);
    if (end == s || !isfinite(v) || *end != stop)
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

/* ---- the options: one table ---- */

/* What a handler sees besides the option's value. */
typedef struct opt_state {
    rt_options           *o;
    const struct opt_def *def;  /* the option being read */
    const char           *name; /* the option as written, for messages: "--spp", "-t" */
    int                   argc;
    char                **argv;
    bool                  bypass, early_out; /* both given is an error, found after the loop */
} opt_state;

/* An option's handler: checks the value and sets it; returns -1 to go on,
 * or the status to exit with (2 after usage_error(); 0 after --help). */
typedef int (*opt_set)(opt_state *st, const char *arg);

/* One option, as getopt_long, the parser and the help all see it. */
typedef struct opt_def {
    const char *name;   /* the long name */
    char        letter; /* the short one, or 0 */
    const char *arg;    /* the value's name in the help; NULL: a flag, no value */
    const char *help;   /* its lines in the help, '\n' between them */
    opt_set     set;
    size_t      flag; /* set_flag(): the offset of its bool in rt_options */
} opt_def;

/* A flag that sets a bool of rt_options: the row's `flag`. */
static int
set_flag(opt_state *st, const char *arg)
{
    (void)arg;
    *(bool *)(void *)((char *)st->o + st->def->flag) = true;
    return -1;
}

static int
set_threads(opt_state *st, const char *arg)
{
    uint64_t v;
    if (!parse_u64(arg, 1, RT_MAX_THREADS, &v))
        return usage_error("%s: '%s' is not a thread count (1..%d)", st->name, arg, RT_MAX_THREADS);
    st->o->threads = (unsigned)v;
    return -1;
}

static int
set_output(opt_state *st, const char *arg)
{
    const char *ext = extension(arg);
    if (!ext)
        return usage_error("%s: '%s' has no extension; use .exr or .png", st->name, arg);
    if (strcasecmp(ext, ".exr") != 0 && strcasecmp(ext, ".png") != 0)
        return usage_error("%s: '%s': unsupported extension '%s'; use .exr or .png", st->name, arg,
                           ext);
    st->o->output = arg;
    return -1;
}

/* "W H" as two words, or "WxH" as one. */
static int
set_resolution(opt_state *st, const char *arg)
{
    const char *w = arg, *h;
    char        buf[64];
    const char *x = strpbrk(arg, "xX");
    if (x) {
        size_t n = (size_t)(x - arg);
        if (n >= sizeof buf)
            return usage_error("%s: '%s' is not a resolution (W H or WxH)", st->name, arg);
        memcpy(buf, arg, n);
        buf[n] = '\0';
        w = buf;
        h = x + 1;
    } else {
        if (optind >= st->argc)
            return usage_error("%s: '%s' needs a height after it (W H or WxH)", st->name, arg);
        h = st->argv[optind++]; /* glibc's permutation copes with this */
    }
    uint64_t wv, hv;
    if (!parse_u64(w, 1, RT_MAX_RESOLUTION, &wv))
        return usage_error("%s: '%s' is not a width (1..%d)", st->name, w, RT_MAX_RESOLUTION);
    if (!parse_u64(h, 1, RT_MAX_RESOLUTION, &hv))
        return usage_error("%s: '%s' is not a height (1..%d)", st->name, h, RT_MAX_RESOLUTION);
    st->o->width = (uint32_t)wv;
    st->o->height = (uint32_t)hv;
    return -1;
}

static int
set_spp(opt_state *st, const char *arg)
{
    uint64_t v;
    if (!parse_u64(arg, 1, RT_MAX_SPP, &v))
        return usage_error("%s: '%s' is not a sample count (1..%d)", st->name, arg, RT_MAX_SPP);
    st->o->spp = (unsigned)v;
    return -1;
}

static int
set_tile(opt_state *st, const char *arg)
{
    uint64_t v;
    if (!parse_u64(arg, 1, RT_MAX_TILE, &v))
        return usage_error("%s: '%s' is not a tile size (1..%d)", st->name, arg, RT_MAX_TILE);
    st->o->tile = (unsigned)v;
    return -1;
}

static int
set_seed(opt_state *st, const char *arg)
{
    if (!parse_u64(arg, 0, UINT64_MAX, &st->o->seed))
        return usage_error("%s: '%s' is not a seed (0..%" PRIu64 ")", st->name, arg, UINT64_MAX);
    return -1;
}

static int
set_bypass(opt_state *st, const char *arg)
{
    (void)arg;
    st->bypass = true;
    return -1;
}

static int
set_early_out(opt_state *st, const char *arg)
{
    (void)arg;
    st->early_out = true;
    return -1;
}

static int
set_intern(opt_state *st, const char *arg)
{
    if (strcmp(arg, "per-lookup") == 0)
        st->o->intern = RT_INTERN_PER_LOOKUP;
    else if (strcmp(arg, "once") == 0)
        st->o->intern = RT_INTERN_ONCE;
    else
        return usage_error("%s: '%s' is not a mode (per-lookup or once)", st->name, arg);
    return -1;
}

static int
set_open(opt_state *st, const char *arg)
{
    if (strcmp(arg, "upfront") == 0)
        st->o->open = RT_OPEN_UPFRONT;
    else if (strcmp(arg, "lazy") == 0)
        st->o->open = RT_OPEN_LAZY;
    else
        return usage_error("%s: '%s' is not a mode (upfront or lazy)", st->name, arg);
    return -1;
}

static int
set_lock(opt_state *st, const char *arg)
{
    if (ustr_lock_parse(arg, &st->o->lock) != USTR_OK)
        return usage_error("%s: '%s' is not a strategy (mutex, spin, rwspin, sharded, "
                           "lockfree or default)",
                           st->name, arg);
    return -1;
}

static int
set_integrator(opt_state *st, const char *arg)
{
    for (int i = RT_INTEGRATOR_EYELIGHT; i <= RT_INTEGRATOR_PATH; i++)
        if (strcmp(arg, rt_integrator_name((rt_integrator)i)) == 0) {
            st->o->integrator = (rt_integrator)i;
            return -1;
        }
    return usage_error("%s: '%s' is not an integrator (eyelight, normal, uv, albedo, ao or path)",
                       st->name, arg);
}

static int
set_max_depth(opt_state *st, const char *arg)
{
    uint64_t v;
    if (!parse_u64(arg, 0, RT_MAX_DEPTH, &v))
        return usage_error("%s: '%s' is not a depth (0..%d)", st->name, arg, RT_MAX_DEPTH);
    st->o->max_depth = (unsigned)v;
    return -1;
}

static int
set_envmap(opt_state *st, const char *arg)
{
    if (!*arg)
        return usage_error("%s: needs a file name", st->name);
    st->o->envmap = arg;
    return -1;
}

static int
set_search_path(opt_state *st, const char *arg)
{
    if (!*arg)
        return usage_error("%s: needs a folder", st->name);
    if (st->o->nsearch_paths == RT_MAX_SEARCH_PATHS)
        return usage_error("%s: at most %d folders", st->name, RT_MAX_SEARCH_PATHS);
    st->o->search_paths[st->o->nsearch_paths++] = arg;
    return -1;
}

static int
set_light_sampling(opt_state *st, const char *arg)
{
    for (int m = RT_SAMPLING_MIS; m <= RT_SAMPLING_BSDF; m++)
        if (strcmp(arg, rt_light_sampling_name((rt_light_sampling)m)) == 0) {
            st->o->light_sampling = (rt_light_sampling)m;
            return -1;
        }
    return usage_error("%s: '%s' is not a strategy (mis, light or bsdf)", st->name, arg);
}

static int
set_max_memory(opt_state *st, const char *arg)
{
    uint64_t v;
    if (!parse_u64(arg, 0, RT_MAX_MEMORY_MB, &v)) /* 0: the default */
        return usage_error("%s: '%s' is not a size in MiB (0..%" PRIu64 ")", st->name, arg,
                           RT_MAX_MEMORY_MB);
    st->o->max_memory_mb = (size_t)v;
    return -1;
}

static int
set_max_scene(opt_state *st, const char *arg)
{
    uint64_t v;
    if (!parse_u64(arg, 1, RT_MAX_SCENE_MB, &v))
        return usage_error("%s: '%s' is not a size in MiB (1..%" PRIu64 ")", st->name, arg,
                           (uint64_t)RT_MAX_SCENE_MB);
    st->o->max_scene_mb = v;
    return -1;
}

static int
point_error(opt_state *st, const char *arg)
{
    return usage_error("%s: '%s' is not a point X,Y,Z (each within +-%g)", st->name, arg,
                       RT_MAX_COORD);
}

static int
set_camera_pos(opt_state *st, const char *arg)
{
    if (!parse_vec3(arg, st->o->camera_pos))
        return point_error(st, arg);
    st->o->has_camera_pos = true;
    return -1;
}

static int
set_look_at(opt_state *st, const char *arg)
{
    if (!parse_vec3(arg, st->o->look_at))
        return point_error(st, arg);
    st->o->has_look_at = true;
    return -1;
}

static int
set_fov(opt_state *st, const char *arg)
{
    float *f = &st->o->fov_degrees;
    if (!parse_float(arg, '\0', f, NULL) || !(*f > 0) || !(*f < 180))
        return usage_error("%s: '%s' is not an angle in degrees (0 < fov < 180)", st->name, arg);
    st->o->has_fov = true;
    return -1;
}

static int
set_up(opt_state *st, const char *arg)
{
    for (int a = RT_UP_Y; a <= RT_UP_X; a++)
        if (strcmp(arg, rt_up_axis_name((rt_up_axis)a)) == 0) {
            st->o->up = (rt_up_axis)a, st->o->up_given = true;
            return -1;
        }
    return usage_error("%s: '%s' is not an axis (x, y or z)", st->name, arg);
}

static int
set_view(opt_state *st, const char *arg)
{
    for (int w = RT_VIEW_AUTO; w <= RT_VIEW_BOTTOM; w++)
        if (strcmp(arg, rt_view_name((rt_view)w)) == 0) {
            st->o->view = (rt_view)w;
            return -1;
        }
    return usage_error("%s: '%s' is not a view (auto, front, back, left, right, top, bottom)",
                       st->name, arg);
}

static int
set_exposure(opt_state *st, const char *arg)
{
    rt_options *o = st->o;
    o->exposure_given = strcmp(arg, "auto") != 0;
    o->exposure = 0;
    if (o->exposure_given && !parse_float(arg, '\0', &o->exposure, NULL))
        return usage_error("%s: '%s' is not a number of stops, or auto", st->name, arg);
    return -1;
}

static int
set_exr_compression(opt_state *st, const char *arg)
{
    for (int k = RT_EXR_ZIP; k <= RT_EXR_PIZ; k++)
        if (strcmp(arg, rt_exr_compression_name((rt_exr_compression)k)) == 0) {
            st->o->exr_compression = (rt_exr_compression)k;
            return -1;
        }
    return usage_error("%s: '%s' is not a compression (zip, none, rle, zips or piz)", st->name,
                       arg);
}

static int
set_stats_json(opt_state *st, const char *arg)
{
    if (!*arg)
        return usage_error("%s: needs a file name", st->name);
    st->o->stats_json = arg;
    return -1;
}

static int
show_help(opt_state *st, const char *arg)
{
    (void)st, (void)arg;
    rt_options_usage(stdout);
    return 0;
}

static int
show_version(opt_state *st, const char *arg)
{
    (void)st, (void)arg;
    printf("%s %s\n", prog, RT_VERSION); /* study, render-bench: their own name */
    return 0;
}

/* A row's last two fields: a handler of its own, or a flag of rt_options. */
#define VALUE(handler) handler, 0
#define FLAG(field)    set_flag, offsetof(rt_options, field)

/* Every option of render, in the order of its help. Adding one is a row
 * here, its handler above and the field it sets (docs/design.md, "One list
 * per fact"). */
static const opt_def options[] = {
    {"threads", 't', "N", "worker threads (default: one a CPU it may run on)", VALUE(set_threads)},
    {"output", 'o', "FILE",
     ".exr (float RGBA) or .png (8-bit sRGB) by extension\n(default " RT_DEFAULT_OUTPUT ")",
     VALUE(set_output)},
    {"resolution", 'r', "W H", "image size, also WxH (default 640 480; at most 16384\na side)",
     VALUE(set_resolution)},
    {"spp", 0, "N", "samples per pixel (default 16 with path, 1 with the\nothers; at most 65536)",
     VALUE(set_spp)},
    {"tile", 0, "N", "tile edge in pixels (default 32)", VALUE(set_tile)},
    {"seed", 0, "N", "seed of the sampling (default 0)", VALUE(set_seed)},
    {"bypass-texture", 0, NULL,
     "each texture lookup interns its filename, then returns\nthe material's constant instead "
     "of reading the texture",
     VALUE(set_bypass)},
    {"early-out", 0, NULL,
     "each texture lookup returns that constant before\ninterning (excludes --bypass-texture)",
     VALUE(set_early_out)},
    {"intern", 0, "MODE",
     "per-lookup: intern the filename at every lookup, or\nonce: at scene load (default "
     "per-lookup)",
     VALUE(set_intern)},
    {"open-textures", 0, "M",
     "upfront: the workers open every texture the scene\nnames before the first tile; lazy: "
     "each on its\nfirst lookup, or by a worker that would wait for\nanother's (default upfront)",
     VALUE(set_open)},
    {"ustring-lock", 0, "L",
     "mutex, spin, rwspin, sharded, lockfree or default\n(default: default, which is lockfree)",
     VALUE(set_lock)},
    {"integrator", 0, "I", "path, eyelight, normal, uv, albedo or ao (default\npath)",
     VALUE(set_integrator)},
    {"max-depth", 0, "N", "bounces of a path (path; default 8, at most 1024)",
     VALUE(set_max_depth)},
    {"envmap", 0, "FILE",
     "lat-long environment map, EXR or PNG, +y up (path;\ndefault none: black)", VALUE(set_envmap)},
    {"resume", 0, NULL,
     "finish the partial EXR an interrupted render left\nbeside the output (NAME.partial.exr; "
     "same scene\nand options)",
     FLAG(resume)},
    {"restrict-paths", 0, NULL,
     "read textures only from the scene's folder and the\n--search-path folders (untrusted "
     "scenes)",
     FLAG(restrict_paths)},
    {"search-path", 0, "DIR", "a folder textures may come from (repeatable)",
     VALUE(set_search_path)},
    {"light-sampling", 0, "S",
     "mis, light or bsdf: how the path tracer finds area\nlights and the environment (default "
     "mis)",
     VALUE(set_light_sampling)},
    {"max-memory-mb", 0, "N",
     "texture memory in MiB: the tile cache and what\ndecodes hold (default 1024)",
     VALUE(set_max_memory)},
    {"max-scene-mb", 0, "N",
     "the largest scene file (or buffer, material library)\nan import reads, in MiB (default "
     "16384)",
     VALUE(set_max_scene)},
    {"camera-pos", 0, "X,Y,Z",
     "camera position (default: the scene's camera, else\nframed automatically: see --view)",
     VALUE(set_camera_pos)},
    {"look-at", 0, "X,Y,Z", "point the camera looks at (default: as above)", VALUE(set_look_at)},
    {"fov", 0, "DEGREES", "vertical field of view, 0 < fov < 180 (default: as\nabove)",
     VALUE(set_fov)},
    {"up", 0, "AXIS",
     "x, y or z: the world's up for the automatic camera\n(default y, glTF's; z for an OBJ/PLY "
     "far flatter\nalong z than across, with a note)",
     VALUE(set_up)},
    {"view", 0, "V",
     "auto, front, back, left, right, top or bottom: the\nautomatic camera's view (default "
     "auto: the scene's\ncamera, else three-quarter from the front right and\nabove); another "
     "view replaces the scene's camera",
     VALUE(set_view)},
    {"exposure", 0, "STOPS",
     "exposure applied to PNG output, or auto (the\ndefault: 0, or what brings a dim image's "
     "lit\npixels to a mean luminance of 0.18)",
     VALUE(set_exposure)},
    {"exr-compression", 0, "C",
     "zip, none, rle, zips or piz: how an EXR image is\ncompressed, all lossless (default zip; "
     "none writes\nquickest, the largest file)",
     VALUE(set_exr_compression)},
    {"stats", 0, NULL, "print the statistics report on stderr", set_flag,
     offsetof(rt_options, stats)},
    {"stats-json", 0, "FILE", "write the statistics as JSON to FILE (default none)",
     VALUE(set_stats_json)},
    {"quiet", 0, NULL, "no progress bar, no warnings (errors still print)", set_flag,
     offsetof(rt_options, quiet)},
    {"progress", 0, NULL,
     "progress as lines on stderr, for logs: at the start,\nthe first tile, then at most one a "
     "second (also with\n--quiet; under mpirun, each rank's own tiles)",
     FLAG(progress)},
    {"help", 'h', NULL, "print this help and exit", VALUE(show_help)},
    {"version", 0, NULL, "print the version and exit", VALUE(show_version)},
};

#define NOPTIONS ((int)(sizeof options / sizeof *options))
#define OPT_LONG 256 /* getopt_long returns OPT_LONG + i for options[i] by its long name */

void
rt_options_usage(FILE *f)
{
    fputs("usage: render [options] SCENE\n"
          "Renders SCENE (glTF, GLB, OBJ, PLY) to an image.\n",
          f);
    for (int i = 0; i < NOPTIONS; i++) {
        const opt_def *d = &options[i];
        char           head[64];
        int n = d->letter ? snprintf(head, sizeof head, "  -%c, --%s", d->letter, d->name)
                          : snprintf(head, sizeof head, "      --%s", d->name);
        if (d->arg)
            snprintf(head + n, sizeof head - (size_t)n, " %s", d->arg);
        /* The help's lines from column 26, the first beside the option. */
        fprintf(f, "%-25s ", head);
        for (const char *s = d->help; *s; s++) {
            fputc(*s, f);
            if (*s == '\n')
                fprintf(f, "%26s", "");
        }
        fputc('\n', f);
    }
    fputs("Under mpirun (a build with MPI), one image is rendered across the ranks,\n"
          "each with -t threads; rank 0 writes it (docs/distributed.md).\n",
          f);
}

/* -t's default: the CPUs the process may run on (ustr_cpus.h), so that a
 * render under taskset or in a container's cpuset runs one thread a CPU. */
static unsigned
default_threads(void)
{
    unsigned n = ustr_cpus_usable();
    return n > RT_MAX_THREADS ? RT_MAX_THREADS : n;
}

/* An option word as the user wrote it, without any "=value": "--foo=1" gives
 * "--foo". */
static int
word_len(const char *w)
{
    const char *eq = strncmp(w, "--", 2) == 0 ? strchr(w, '=') : NULL;
    return eq ? (int)(eq - w) : (int)strlen(w);
}

/* getopt_long's view of the table: the long options, and the short ones
 * as ":t:o:r:h" (the leading ':' reports a missing value apart). */
static void
getopt_tables(struct option longopts[NOPTIONS + 1], char shortopts[2 * NOPTIONS + 2])
{
    int k = 0;
    shortopts[k++] = ':';
    for (int i = 0; i < NOPTIONS; i++) {
        longopts[i] = (struct option){
            options[i].name, options[i].arg ? required_argument : no_argument, NULL, OPT_LONG + i};
        if (options[i].letter) {
            shortopts[k++] = options[i].letter;
            if (options[i].arg)
                shortopts[k++] = ':';
        }
    }
    longopts[NOPTIONS] = (struct option){NULL, 0, NULL, 0};
    shortopts[k] = '\0';
}

/* The option getopt_long returned (OPT_LONG + i, or a letter); -1 for none. */
static int
option_index(int c)
{
    if (c >= OPT_LONG && c < OPT_LONG + NOPTIONS)
        return c - OPT_LONG;
    for (int i = 0; i < NOPTIONS; i++)
        if (options[i].letter && options[i].letter == c)
            return i;
    return -1;
}

/* What getopt_long could not take: a missing value (':'), an unknown
 * option, or a value given to a flag. */
static int
getopt_error(int c, char **argv)
{
    const char *w = argv[optind - 1];
    if (c == ':') { /* optind is past the option word */
        if (strncmp(w, "--", 2) == 0)
            return usage_error("option '%.*s' needs a value", word_len(w), w);
        return usage_error("option '-%c' needs a value", optopt);
    }
    /* '?': optopt is 0 for an unknown long option, the letter for an
     * unknown short one, our code for a known flag given "=value" */
    if (optopt == 0)
        return usage_error("unknown option '%.*s'", word_len(w), w);
    int i = option_index(optopt);
    if (i >= 0 && !options[i].arg)
        return usage_error("option '%.*s' takes no value", word_len(w), w);
    return usage_error("unknown option '-%c'", optopt);
}

/* What the options say together, once all are read. */
static int
options_finish(opt_state *st, int argc, char **argv)
{
    rt_options *o = st->o;
    if (st->bypass && st->early_out)
        return usage_error("--bypass-texture and --early-out exclude each other");
    if (o->has_camera_pos && o->has_look_at && o->camera_pos[0] == o->look_at[0] &&
        o->camera_pos[1] == o->look_at[1] && o->camera_pos[2] == o->look_at[2])
        return usage_error("--look-at: the point of --camera-pos itself (no direction to look in)");
    o->texture_mode = st->bypass      ? RT_TEXTURE_BYPASS
                      : st->early_out ? RT_TEXTURE_EARLY_OUT
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

int
rt_options_parse(int argc, char **argv, rt_options *o)
{
    *o = (rt_options){
        .output = RT_DEFAULT_OUTPUT,
        .threads = default_threads(),
        .width = RT_DEFAULT_WIDTH,
        .height = RT_DEFAULT_HEIGHT,
        .spp = 0, /* the integrator's default, in options_finish() */
        .tile = RT_DEFAULT_TILE,
        .texture_mode = RT_TEXTURE_FULL,
        .intern = RT_INTERN_PER_LOOKUP,
        .lock = USTR_LOCK_DEFAULT,
        .integrator = RT_INTEGRATOR_PATH,
        .max_depth = 8,
    };
    opt_state st = {.o = o, .argc = argc, .argv = argv};
    if (argc > 0 && argv[0] && *argv[0]) {
        const char *slash = strrchr(argv[0], '/');
        prog = slash ? slash + 1 : argv[0];
    }
    struct option longopts[NOPTIONS + 1];
    char          shortopts[2 * NOPTIONS + 2];
    getopt_tables(longopts, shortopts);
    optind = 0; /* glibc: full reinitialisation, so we can be called again */
    opterr = 0; /* our own messages */
    for (;;) {
        int longindex = -1;
        int c = getopt_long(argc, argv, shortopts, longopts, &longindex);
        if (c == -1)
            break;
        int i = option_index(c);
        if (i < 0)
            return getopt_error(c, argv);
        char name[64]; /* the option as written, for messages */
        if (longindex >= 0)
            snprintf(name, sizeof name, "--%s", options[i].name);
        else
            snprintf(name, sizeof name, "-%c", c);
        st.name = name;
        st.def = &options[i];
        int r = options[i].set(&st, optarg);
        if (r >= 0)
            return r;
    }
    return options_finish(&st, argc, argv);
}
