/* renderer/include/rt_options.h: the command line of `render`. Every option in both
 * the "=" and the space form, the defaults, --help and --version, and the bad
 * inputs, each of which must print exactly one error line and the hint. */
#define _GNU_SOURCE /* sched_getaffinity(), sched_setaffinity() */
#include "check.h"
#include "rt_options.h"

#include <sched.h>
#include <stdbool.h>
#include <unistd.h>

#define MAX_ARGS 64

/* argv for one parse: "render" then the words, copied (getopt permutes the
 * array, and the options point into the strings). */
typedef struct args {
    int   argc;
    char *argv[MAX_ARGS + 2];
} args;

static void
args_make(args *a, const char *const *words)
{
    a->argc = 0;
    a->argv[a->argc++] = strdup("render");
    for (; *words; words++) {
        REQUIRE(a->argc <= MAX_ARGS);
        a->argv[a->argc++] = strdup(*words);
    }
    a->argv[a->argc] = NULL;
}

static void
args_free(args *a)
{
    for (int i = 0; i < a->argc; i++)
        free(a->argv[i]);
    a->argc = 0;
}

/* Output captured from fd 1 or 2 into a temporary file. */
typedef struct capture {
    int   fd, saved;
    FILE *tmp;
    char  text[8192];
} capture;

static void
capture_begin(capture *c, int fd)
{
    fflush(fd == 1 ? stdout : stderr);
    c->fd = fd;
    c->tmp = tmpfile();
    REQUIRE(c->tmp);
    c->saved = dup(fd);
    REQUIRE(c->saved >= 0);
    REQUIRE(dup2(fileno(c->tmp), fd) == fd);
}

static void
capture_end(capture *c)
{
    fflush(c->fd == 1 ? stdout : stderr);
    REQUIRE(dup2(c->saved, c->fd) == c->fd);
    close(c->saved);
    rewind(c->tmp);
    size_t n = fread(c->text, 1, sizeof c->text - 1, c->tmp);
    c->text[n] = '\0';
    fclose(c->tmp);
}

static int
count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Parses the words; stdout and stderr captured into out and err. */
static int
parse_capture(const char *const *words, rt_options *o, args *a, capture *out, capture *err)
{
    args_make(a, words);
    capture_begin(out, 1);
    capture_begin(err, 2);
    int rc = rt_options_parse(a->argc, a->argv, o);
    capture_end(err);
    capture_end(out);
    return rc;
}

/* Parses words that must be accepted silently (-1: go on). */
static void
parse_ok(const char *const *words, rt_options *o, args *a)
{
    capture out, err;
    int     rc = parse_capture(words, o, a, &out, &err);
    CHECK_EQ_INT(rc, -1);
    CHECK_EQ_STR(out.text, "");
    CHECK_EQ_STR(err.text, "");
    if (rc != -1)
        fprintf(stderr, "  (%s)\n", err.text);
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void
case_defaults(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    parse_ok(WORDS("scene.gltf"), &o, &a);
    CHECK_EQ_STR(o.scene, "scene.gltf");
    CHECK_EQ_STR(o.output, "render.exr");
    cpu_set_t set; /* one thread a CPU the process may run on, not the machine's */
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    int n = CPU_COUNT(&set);
    CHECK_EQ_INT(o.threads, n > RT_MAX_THREADS ? RT_MAX_THREADS : n);
    CHECK(o.threads >= 1);
    CHECK_EQ_INT(o.width, 640);
    CHECK_EQ_INT(o.height, 480);
    CHECK_EQ_INT(o.spp, 16); /* the path tracer's default */
    CHECK_EQ_INT(o.tile, 32);
    CHECK_EQ_U64(o.seed, 0);
    CHECK_EQ_INT(o.texture_mode, RT_TEXTURE_FULL);
    CHECK_EQ_INT(o.intern, RT_INTERN_PER_LOOKUP);
    CHECK_EQ_INT(o.open, RT_OPEN_UPFRONT);
    CHECK_EQ_INT(o.lock, USTR_LOCK_DEFAULT);
    CHECK_EQ_INT(o.integrator, RT_INTEGRATOR_PATH);
    CHECK_EQ_INT(o.max_depth, 8);
    CHECK_EQ_PTR(o.envmap, NULL);
    CHECK_EQ_U64(o.max_memory_mb, 0);
    CHECK(!o.has_camera_pos && !o.has_look_at && !o.has_fov);
    CHECK_EQ_INT(o.up, RT_UP_Y);
    CHECK_EQ_INT(o.view, RT_VIEW_AUTO);
    CHECK(o.exposure == 0.0f);
    CHECK_EQ_INT(o.exr_compression, RT_EXR_ZIP);
    CHECK(!o.stats && !o.quiet);
    CHECK_EQ_PTR(o.stats_json, NULL);
    args_free(&a);
}

/* Pinned to one CPU (as taskset or a container's cpuset would), -t's
 * default is one thread, whatever the machine has. */
static void
case_threads_pinned(const char *arg)
{
    (void)arg;
    cpu_set_t set;
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    if (CPU_COUNT(&set) < 2) {
        fprintf(stderr, "skipped: one CPU to run on, so pinning to it changes nothing\n");
        exit(77); /* SKIP_RETURN_CODE (RT_TEST_SKIP) */
    }
    int last = CPU_SETSIZE - 1;
    while (!CPU_ISSET(last, &set))
        last--;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    rt_options o;
    args       a;
    parse_ok(WORDS("scene.gltf"), &o, &a);
    CHECK_EQ_INT(o.threads, 1);
    args_free(&a);
    parse_ok(WORDS("-t", "3", "scene.gltf"), &o, &a); /* the user's choice stands */
    CHECK_EQ_INT(o.threads, 3);
    args_free(&a);
}

/* Checks the values the every-option command lines below set. */
static void
check_all(const rt_options *o)
{
    CHECK_EQ_STR(o->scene, "s.obj");
    CHECK_EQ_INT(o->threads, 24);
    CHECK_EQ_STR(o->output, "out.PNG");
    CHECK_EQ_INT(o->width, 320);
    CHECK_EQ_INT(o->height, 200);
    CHECK_EQ_INT(o->spp, 16);
    CHECK_EQ_INT(o->tile, 8);
    CHECK_EQ_U64(o->seed, UINT64_MAX);
    CHECK_EQ_INT(o->texture_mode, RT_TEXTURE_BYPASS);
    CHECK_EQ_INT(o->intern, RT_INTERN_ONCE);
    CHECK_EQ_INT(o->open, RT_OPEN_LAZY);
    CHECK_EQ_INT(o->lock, USTR_LOCK_SHARDED);
    CHECK_EQ_INT(o->integrator, RT_INTEGRATOR_AO);
    CHECK_EQ_INT(o->max_depth, 3);
    CHECK_EQ_STR(o->envmap, "sky.exr");
    CHECK_EQ_U64(o->max_memory_mb, 256);
    CHECK(o->has_camera_pos && o->has_look_at && o->has_fov);
    CHECK(o->camera_pos[0] == 1.0f && o->camera_pos[1] == -2.5f && o->camera_pos[2] == 3e2f);
    CHECK(o->look_at[0] == 0.0f && o->look_at[1] == 0.5f && o->look_at[2] == -1.0f);
    CHECK(o->fov_degrees == 45.5f);
    CHECK(o->exposure == -1.5f);
    CHECK_EQ_INT(o->exr_compression, RT_EXR_PIZ);
    CHECK(o->stats && o->quiet);
    CHECK_EQ_STR(o->stats_json, "stats.json");
    CHECK_EQ_INT(o->up, RT_UP_Z);
    CHECK_EQ_INT(o->view, RT_VIEW_TOP);
}

static void
case_equals_form(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    parse_ok(WORDS("--threads=24", "--output=out.PNG", "--resolution=320x200", "--spp=16",
                   "--tile=8", "--seed=18446744073709551615", "--bypass-texture", "--intern=once",
                   "--open-textures=lazy", "--ustring-lock=sharded", "--integrator=ao",
                   "--max-depth=3", "--envmap=sky.exr", "--max-memory-mb=256",
                   "--camera-pos=1,-2.5,3e2", "--look-at=0,0.5,-1", "--fov=45.5", "--exposure=-1.5",
                   "--exr-compression=piz", "--stats", "--stats-json=stats.json", "--quiet",
                   "--up=z", "--view=top", "s.obj"),
             &o, &a);
    check_all(&o);
    args_free(&a);
}

static void
case_space_form(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    parse_ok(WORDS("--threads", "24", "--output", "out.PNG", "--resolution", "320", "200", "--spp",
                   "16", "--tile", "8", "--seed", "18446744073709551615", "--bypass-texture",
                   "--intern", "once", "--open-textures", "lazy", "--ustring-lock", "sharded",
                   "--integrator", "ao", "--max-depth", "3", "--envmap", "sky.exr",
                   "--max-memory-mb", "256", "--camera-pos", "1,-2.5,3e2", "--look-at", "0,0.5,-1",
                   "--fov", "45.5", "--exposure", "-1.5", "--exr-compression", "piz", "--stats",
                   "--stats-json", "stats.json", "--quiet", "--up", "z", "--view", "top", "s.obj"),
             &o, &a);
    check_all(&o);
    args_free(&a);

    /* The other values of each word option. */
    static const struct {
        const char *value;
        int         integrator;
    } integrators[] = {{"eyelight", RT_INTEGRATOR_EYELIGHT},
                       {"normal", RT_INTEGRATOR_NORMAL},
                       {"uv", RT_INTEGRATOR_UV},
                       {"albedo", RT_INTEGRATOR_ALBEDO},
                       {"ao", RT_INTEGRATOR_AO},
                       {"path", RT_INTEGRATOR_PATH}};
    for (size_t i = 0; i < sizeof integrators / sizeof *integrators; i++) {
        parse_ok(WORDS("--integrator", integrators[i].value, "s"), &o, &a);
        CHECK_EQ_INT(o.integrator, integrators[i].integrator);
        args_free(&a);
    }
    static const struct {
        const char *value;
        ustr_lock   lock;
    } locks[] = {{"mutex", USTR_LOCK_MUTEX},       {"spin", USTR_LOCK_SPIN},
                 {"rwspin", USTR_LOCK_RWSPIN},     {"sharded", USTR_LOCK_SHARDED},
                 {"lockfree", USTR_LOCK_LOCKFREE}, {"default", USTR_LOCK_DEFAULT}};
    for (size_t i = 0; i < sizeof locks / sizeof *locks; i++) {
        parse_ok(WORDS("--ustring-lock", locks[i].value, "s"), &o, &a);
        CHECK_EQ_INT(o.lock, locks[i].lock);
        args_free(&a);
    }
    static const struct {
        const char        *value;
        rt_exr_compression compression;
    } compressions[] = {{"zip", RT_EXR_ZIP},
                        {"none", RT_EXR_NONE},
                        {"rle", RT_EXR_RLE},
                        {"zips", RT_EXR_ZIPS},
                        {"piz", RT_EXR_PIZ}};
    for (size_t i = 0; i < sizeof compressions / sizeof *compressions; i++) {
        parse_ok(WORDS("--exr-compression", compressions[i].value, "s"), &o, &a);
        CHECK_EQ_INT(o.exr_compression, compressions[i].compression);
        args_free(&a);
    }
    parse_ok(WORDS("--restrict-paths", "--search-path", "a", "--search-path=b/c", "s"), &o, &a);
    CHECK(o.restrict_paths);
    CHECK_EQ_INT(o.nsearch_paths, 2);
    CHECK_EQ_STR(o.search_paths[0], "a");
    CHECK_EQ_STR(o.search_paths[1], "b/c");
    args_free(&a);
    parse_ok(WORDS("--integrator", "eyelight", "s"), &o, &a);
    CHECK_EQ_INT(o.spp, 1); /* one point per pixel is the simple integrators' default */
    args_free(&a);
    parse_ok(WORDS("--intern", "per-lookup", "--open-textures", "upfront", "--early-out",
                   "--output", "x/y.z/a.ExR", "s"),
             &o, &a);
    CHECK_EQ_INT(o.intern, RT_INTERN_PER_LOOKUP);
    CHECK_EQ_INT(o.open, RT_OPEN_UPFRONT);
    CHECK_EQ_INT(o.texture_mode, RT_TEXTURE_EARLY_OUT);
    CHECK_EQ_STR(o.output, "x/y.z/a.ExR");
    args_free(&a);
}

static void
case_short_forms(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    /* The example, exactly as written. */
    parse_ok(WORDS("-t", "24", "--bypass-texture", "scene"), &o, &a);
    CHECK_EQ_INT(o.threads, 24);
    CHECK_EQ_INT(o.texture_mode, RT_TEXTURE_BYPASS);
    CHECK_EQ_STR(o.scene, "scene");
    args_free(&a);
    /* Attached values. */
    parse_ok(WORDS("-t3", "-oa.exr", "-r800x600", "scene"), &o, &a);
    CHECK_EQ_INT(o.threads, 3);
    CHECK_EQ_STR(o.output, "a.exr");
    CHECK_EQ_INT(o.width, 800);
    CHECK_EQ_INT(o.height, 600);
    args_free(&a);
    parse_ok(WORDS("-o", "b.png", "scene"), &o, &a);
    CHECK_EQ_STR(o.output, "b.png");
    args_free(&a);
}

static void
case_resolution(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    parse_ok(WORDS("-r", "640", "360", "scene"), &o, &a);
    CHECK_EQ_INT(o.width, 640);
    CHECK_EQ_INT(o.height, 360);
    args_free(&a);
    /* A coordinate too small for a float is 0, not "out of range". */
    parse_ok(WORDS("--camera-pos", "1e-300,0,-1e-50", "scene"), &o, &a);
    CHECK(o.camera_pos[0] == 0 && o.camera_pos[2] == 0);
    args_free(&a);
    parse_ok(WORDS("-r", "1920x1080", "scene"), &o, &a);
    CHECK_EQ_INT(o.width, 1920);
    CHECK_EQ_INT(o.height, 1080);
    args_free(&a);
    parse_ok(WORDS("--resolution=16384", "1", "scene"), &o, &a);
    CHECK_EQ_INT(o.width, 16384);
    CHECK_EQ_INT(o.height, 1);
    args_free(&a);
    /* The scene first, then -r W H: the height is not taken for a scene. */
    parse_ok(WORDS("scene", "-r", "2", "3", "--spp", "4"), &o, &a);
    CHECK_EQ_STR(o.scene, "scene");
    CHECK_EQ_INT(o.width, 2);
    CHECK_EQ_INT(o.height, 3);
    CHECK_EQ_INT(o.spp, 4);
    args_free(&a);
    /* The largest image the sample limit allows at 1 spp... */
    parse_ok(WORDS("-r", "16384", "16384", "--spp", "64", "scene"), &o, &a);
    CHECK_EQ_U64((uint64_t)o.width * o.height * o.spp, RT_MAX_PIXEL_SAMPLES);
    args_free(&a);
}

static void
case_permuted(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    parse_ok(WORDS("scene.glb", "--quiet", "-t", "2"), &o, &a);
    CHECK_EQ_STR(o.scene, "scene.glb");
    CHECK(o.quiet);
    CHECK_EQ_INT(o.threads, 2);
    args_free(&a);
    /* "--" ends the options: a scene may start with '-'. */
    parse_ok(WORDS("-t", "1", "--", "-odd.gltf"), &o, &a);
    CHECK_EQ_STR(o.scene, "-odd.gltf");
    args_free(&a);
}

/* getopt's state is reset by every call: the same words give the same result
 * after a failure and after a success. */
static void
case_repeated(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    capture    out, err;
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(parse_capture(WORDS("-t", "0", "scene"), &o, &a, &out, &err), 2);
        args_free(&a);
        parse_ok(WORDS("--spp", "5", "-t", "7", "scene"), &o, &a);
        CHECK_EQ_INT(o.spp, 5);
        CHECK_EQ_INT(o.threads, 7);
        args_free(&a);
        CHECK_EQ_INT(parse_capture(WORDS("-ts", "scene"), &o, &a, &out, &err), 2);
        args_free(&a);
    }
}

static void
case_help(const char *arg)
{
    (void)arg;
    const char *const *forms[] = {WORDS("--help"), WORDS("-h"), WORDS("scene", "-t", "2", "-h")};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        rt_options o;
        args       a;
        capture    out, err;
        CHECK_EQ_INT(parse_capture(forms[i], &o, &a, &out, &err), 0);
        CHECK(strncmp(out.text, "usage: render [options] SCENE\n", 30) == 0);
        CHECK_EQ_STR(err.text, "");
        /* Every option is listed. */
        static const char *const names[] = {"--threads",
                                            "--output",
                                            "--resolution",
                                            "--spp",
                                            "--tile",
                                            "--seed",
                                            "--bypass-texture",
                                            "--early-out",
                                            "--intern",
                                            "--open-textures",
                                            "--ustring-lock",
                                            "--integrator",
                                            "--max-depth",
                                            "--envmap",
                                            "--restrict-paths",
                                            "--search-path",
                                            "--max-memory-mb",
                                            "--camera-pos",
                                            "--look-at",
                                            "--fov",
                                            "--exposure",
                                            "--exr-compression",
                                            "--up",
                                            "--view",
                                            "--resume",
                                            "--light-sampling",
                                            "--max-scene-mb",
                                            "--progress",
                                            "--stats ",
                                            "--stats-json",
                                            "--quiet",
                                            "--help",
                                            "--version",
                                            "-t,",
                                            "-o,",
                                            "-r,",
                                            "-h,"};
        for (size_t j = 0; j < sizeof names / sizeof *names; j++)
            if (!strstr(out.text, names[j]))
                RT_CHECK_FAIL_("usage lacks '%s'", names[j]);
        args_free(&a);
    }
}

static void
case_version(const char *arg)
{
    (void)arg;
    rt_options o;
    args       a;
    capture    out, err;
    CHECK_EQ_INT(parse_capture(WORDS("--version"), &o, &a, &out, &err), 0);
    CHECK_EQ_STR(out.text, "render " RT_VERSION "\n");
    CHECK_EQ_STR(err.text, "");
    args_free(&a);
}

static void
case_names(const char *arg)
{
    (void)arg;
    CHECK_EQ_STR(rt_integrator_name(RT_INTEGRATOR_EYELIGHT), "eyelight");
    CHECK_EQ_STR(rt_integrator_name(RT_INTEGRATOR_NORMAL), "normal");
    CHECK_EQ_STR(rt_integrator_name(RT_INTEGRATOR_UV), "uv");
    CHECK_EQ_STR(rt_integrator_name(RT_INTEGRATOR_ALBEDO), "albedo");
    CHECK_EQ_STR(rt_integrator_name(RT_INTEGRATOR_AO), "ao");
    CHECK_EQ_STR(rt_texture_mode_name(RT_TEXTURE_FULL), "full");
    CHECK_EQ_STR(rt_texture_mode_name(RT_TEXTURE_BYPASS), "bypass");
    CHECK_EQ_STR(rt_texture_mode_name(RT_TEXTURE_EARLY_OUT), "early-out");
    CHECK_EQ_STR(rt_exr_compression_name(RT_EXR_ZIP), "zip");
    CHECK_EQ_STR(rt_exr_compression_name(RT_EXR_NONE), "none");
    CHECK_EQ_STR(rt_exr_compression_name(RT_EXR_RLE), "rle");
    CHECK_EQ_STR(rt_exr_compression_name(RT_EXR_ZIPS), "zips");
    CHECK_EQ_STR(rt_exr_compression_name(RT_EXR_PIZ), "piz");
}

/* ---- bad input: one line naming the option and the value, the hint, 2 ---- */

typedef struct bad_input {
    const char        *name;
    const char *const *words;
    const char        *expect[3]; /* each must be in the error line */
} bad_input;

static const bad_input bad_inputs[] = {
    {"threads_zero", WORDS("-t", "0", "s"), {"-t", "'0'", "1..1024"}},
    {"threads_negative", WORDS("-t", "-3", "s"), {"-t", "'-3'"}},
    {"threads_word", WORDS("--threads", "x", "s"), {"--threads", "'x'"}},
    {"threads_trailing", WORDS("--threads=4x", "s"), {"--threads", "'4x'"}},
    {"resolution_zero", WORDS("-r", "0", "0", "s"), {"-r", "'0'", "width"}},
    {"resolution_one", WORDS("-r", "640"), {"-r", "'640'", "height"}},
    {"resolution_huge", WORDS("-r", "99999", "10", "s"), {"-r", "'99999'", "16384"}},
    {"resolution_word", WORDS("--resolution=640x", "s"), {"--resolution", "''", "height"}},
    {"pixel_samples", WORDS("-r", "16384x16384", "--spp", "65", "s"), {"16384x16384", "65"}},
    {"spp_zero", WORDS("--spp", "0", "s"), {"--spp", "'0'"}},
    {"spp_huge", WORDS("--spp", "65537", "s"), {"--spp", "'65537'", "1..65536"}},
    {"threads_huge", WORDS("-t", "1025", "s"), {"-t", "'1025'", "1..1024"}},
    {"tile_huge", WORDS("--tile", "16385", "s"), {"--tile", "'16385'", "1..16384"}},
    {"max_memory_huge",
     WORDS("--max-memory-mb", "1048577", "s"),
     {"--max-memory-mb", "'1048577'", "0..1048576"}},
    {"search_path_many",
     WORDS("--search-path=a", "--search-path=a", "--search-path=a", "--search-path=a",
           "--search-path=a", "--search-path=a", "--search-path=a", "--search-path=a",
           "--search-path=a", "--search-path=a", "--search-path=a", "--search-path=a",
           "--search-path=a", "--search-path=a", "--search-path=a", "--search-path=a",
           "--search-path=a", "s"),
     {"--search-path", "at most 16"}},
    {"tile_zero", WORDS("--tile=0", "s"), {"--tile", "'0'"}},
    {"seed_negative", WORDS("--seed", "-1", "s"), {"--seed", "'-1'"}},
    {"fov_180", WORDS("--fov", "180", "s"), {"--fov", "'180'"}},
    {"fov_zero", WORDS("--fov=0", "s"), {"--fov", "'0'"}},
    {"camera_pos_two", WORDS("--camera-pos", "1,2", "s"), {"--camera-pos", "'1,2'"}},
    {"camera_pos_four", WORDS("--camera-pos=1,2,3,4", "s"), {"--camera-pos", "'1,2,3,4'"}},
    {"look_at_word", WORDS("--look-at", "1,a,3", "s"), {"--look-at", "'1,a,3'"}},
    {"up_word", WORDS("--up", "w", "s"), {"--up", "'w'", "x, y or z"}},
    {"view_word", WORDS("--view=sideways", "s"), {"--view", "'sideways'", "front"}},
    {"exposure_inf", WORDS("--exposure", "inf", "s"), {"--exposure", "'inf'"}},
    {"exr_compression_bad",
     WORDS("--exr-compression=dwaa", "s"),
     {"--exr-compression", "'dwaa'", "zip, none, rle, zips or piz"}},
    {"output_jpg", WORDS("-o", "out.jpg", "s"), {"-o", "'out.jpg'", "'.jpg'"}},
    {"output_none", WORDS("--output", "dir.d/out", "s"), {"--output", "'dir.d/out'"}},
    {"intern_bad", WORDS("--intern", "twice", "s"), {"--intern", "'twice'"}},
    {"open_bad", WORDS("--open-textures=eager", "s"), {"--open-textures", "'eager'"}},
    {"lock_bad", WORDS("--ustring-lock=futex", "s"), {"--ustring-lock", "'futex'"}},
    {"integrator_bad", WORDS("--integrator", "whitted", "s"), {"--integrator", "'whitted'"}},
    {"max_depth_word", WORDS("--max-depth", "deep", "s"), {"--max-depth", "'deep'"}},
    {"max_depth_huge", WORDS("--max-depth=1025", "s"), {"--max-depth", "'1025'"}},
    {"envmap_empty", WORDS("--envmap=", "s"), {"--envmap"}},
    {"search_path_empty", WORDS("--search-path=", "s"), {"--search-path"}},
    {"bypass_and_early_out",
     WORDS("--early-out", "--bypass-texture", "s"),
     {"--bypass-texture", "--early-out"}},
    {"unknown_long", WORDS("--foo=3", "s"), {"unknown option '--foo'"}},
    {"unknown_short", WORDS("--quiet", "-xh", "s"), {"unknown option '-x'"}},
    {"missing_value", WORDS("s", "--spp"), {"'--spp'", "value"}},
    {"flag_with_value", WORDS("--stats=yes", "s"), {"'--stats'", "no value"}},
    {"no_scene", WORDS("-t", "2"), {"SCENE"}},
    {"two_scenes", WORDS("a.gltf", "b.gltf"), {"'a.gltf'", "'b.gltf'"}},
};

static void
case_bad(const char *arg)
{
    const bad_input *b = NULL;
    for (size_t i = 0; i < sizeof bad_inputs / sizeof *bad_inputs; i++)
        if (arg && strcmp(arg, bad_inputs[i].name) == 0)
            b = &bad_inputs[i];
    REQUIRE(b);
    rt_options o;
    args       a;
    capture    out, err;
    CHECK_EQ_INT(parse_capture(b->words, &o, &a, &out, &err), 2);
    CHECK_EQ_STR(out.text, "");
    CHECK_EQ_INT(count_lines(err.text), 2);
    CHECK(strncmp(err.text, "render: ", 8) == 0);
    const char *nl = strchr(err.text, '\n');
    REQUIRE(nl);
    CHECK_EQ_STR(nl + 1, "Try 'render --help'.\n");
    for (int i = 0; i < 3 && b->expect[i]; i++) {
        const char *hit = strstr(err.text, b->expect[i]);
        if (!hit || hit > nl)
            RT_CHECK_FAIL_("error line lacks \"%s\"", b->expect[i]);
    }
    fprintf(stderr, "%s", err.text); /* shown with ctest -V */
    args_free(&a);
}

static const rt_test_case cases[] = {
    {"defaults", case_defaults},
    {"threads_pinned", case_threads_pinned},
    {"equals_form", case_equals_form},
    {"space_form", case_space_form},
    {"short_forms", case_short_forms},
    {"resolution", case_resolution},
    {"permuted", case_permuted},
    {"repeated", case_repeated},
    {"help", case_help},
    {"version", case_version},
    {"names", case_names},
    {"bad", case_bad},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
