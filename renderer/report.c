/* The report of a render: the lines --stats prints and the --stats-json
 * file, written with cJSON. The work's counts come from one list
 * (rt_counters.h). */
#include "rt_json.h"
#include "rt_render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static double
per_sec(uint64_t n, double secs)
{
    return secs > 0 ? (double)n / secs : 0;
}

/* Where the view rendered came from: "file", "auto" or "command line". */
static const char *
camera_from(const rt_options *o, const rt_render_stats *s)
{
    if (s->camera.from_file)
        return "file";
    return o->has_camera_pos || o->has_look_at || o->has_fov ? "command line" : "auto";
}

/* ---- the lines ---- */

/* The work's counts, four to a line, each with its rate. */
static void
work_print(const rt_thread_stats *t, double secs, FILE *f)
{
    int k = 0;
#define COUNT(name, label)                                                                         \
    fprintf(f, "%s%s %" PRIu64 " (%.2f M/s)",                                                      \
            k % 4 ? ", "                                                                           \
            : k   ? "\n        "                                                                   \
                  : "  work: ",                                                                      \
            label, t->name, per_sec(t->name, secs) / 1e6);                                         \
    k++;
    RT_WORK_COUNTS(COUNT)
#undef COUNT
    fputc('\n', f);
}

void
rt_report_print(const rt_options *o, const rt_render_stats *s, tex_system *ts, ustr_table *strings,
                FILE *f)
{
    double most = 0, least = 1e300;
    for (unsigned i = 0; i < s->threads; i++) {
        most = s->per_thread[i].busy_secs > most ? s->per_thread[i].busy_secs : most;
        least = s->per_thread[i].busy_secs < least ? s->per_thread[i].busy_secs : least;
    }
    fprintf(f, "render: %ux%u, %u spp, %u threads, %s, texture %s, intern %s, open %s, lock %s\n",
            o->width, o->height, o->spp, s->threads, rt_integrator_name(o->integrator),
            rt_texture_mode_name(o->texture_mode), rt_intern_mode_name(o->intern),
            rt_open_mode_name(o->open), ustr_lock_name(o->lock));
    fprintf(f, "  scene: %u triangles, %u meshes, %u instances, %u lights, camera from %s\n",
            s->ntris, s->nmeshes, s->ninstances, s->nlights, camera_from(o, s));
    fprintf(f, "  time: scene %.3f s, BVH %.3f s, render %.3f s\n", s->load_secs, s->bvh_secs,
            s->render_secs);
    fprintf(f,
            "  threads: busy %.3f..%.3f s (imbalance %.1f%%), on a CPU %.0f%% of it, %" PRIu64
            " tiles\n",
            least, most, most > 0 ? 100.0 * (most - least) / most : 0.0,
            s->total.busy_secs > 0 ? 100.0 * s->total.cpu_secs / s->total.busy_secs : 0.0,
            s->ntiles);
    if (o->integrator == RT_INTEGRATOR_PATH)
        fprintf(f, "  path: max depth %u, light sampling %s, environment %s\n", o->max_depth,
                rt_light_sampling_name(o->light_sampling), o->envmap ? o->envmap : "none");
    work_print(&s->total, s->render_secs, f);
    ustr_stats us;
    ustr_table_stats(strings, &us);
    ustr_stats_print(&us, "  ustring: ", f);
    tex_stats ss;
    tex_system_stats(ts, &ss);
    tex_stats_print(&ss, "  texture: ", f);
    if (s->nranks) /* a distributed render: the lines above are rank 0's own tables */
        fprintf(f, "  ranks: %u (the ustring and texture lines above are rank 0's)\n", s->nranks);
    for (unsigned r = 0; r < s->nranks; r++) {
        const rt_rank_stats *k = &s->ranks[r];
        fprintf(f,
                "    rank %u: %" PRIu64 " tiles, %u threads, scene %.3f s, BVH %.3f s, render %.3f "
                "s, busy %.3f s, MPI %.3f s, %.2f MB sent; texture %" PRIu64
                " lookups, ustring %" PRIu64 " lookups (%" PRIu64 " contended)\n",
                r, k->work.tiles, k->threads, k->load_secs, k->bvh_secs, k->render_secs,
                k->work.busy_secs, k->comm_secs, (double)k->bytes_sent / 1e6, k->tex.lookups,
                k->ustr.lookups, k->ustr.contended);
    }
}

/* ---- the JSON ---- */

static void
add_vec3(cJSON *o, const char *key, const float v[3], bool *ok)
{
    cJSON *a = rt_json_array(o, key, ok);
    for (int i = 0; i < 3; i++)
        rt_json_push_num(a, v[i], ok);
}

/* The work's counts (rt_counters.h) as members of o. */
static void
add_work(cJSON *o, const rt_thread_stats *t, bool *ok)
{
#define COUNT(name, label) rt_json_num(o, #name, (double)t->name, ok);
    RT_WORK_COUNTS(COUNT)
#undef COUNT
}

static void
add_options(cJSON *j, const rt_options *o, const rt_render_stats *s, bool *ok)
{
    rt_json_num(j, "width", o->width, ok);
    rt_json_num(j, "height", o->height, ok);
    rt_json_num(j, "spp", o->spp, ok);
    rt_json_num(j, "threads", s->threads, ok);
    rt_json_str(j, "integrator", rt_integrator_name(o->integrator), ok);
    rt_json_str(j, "texture_mode", rt_texture_mode_name(o->texture_mode), ok);
    rt_json_str(j, "intern", rt_intern_mode_name(o->intern), ok);
    rt_json_str(j, "open_textures", rt_open_mode_name(o->open), ok);
    rt_json_str(j, "ustring_lock", ustr_lock_name(o->lock), ok);
}

static void
add_scene_and_camera(cJSON *j, const rt_options *o, const rt_render_stats *s, bool *ok)
{
    cJSON *sc = rt_json_obj(j, "scene", ok);
    rt_json_num(sc, "triangles", s->ntris, ok);
    rt_json_num(sc, "meshes", s->nmeshes, ok);
    rt_json_num(sc, "instances", s->ninstances, ok);
    rt_json_num(sc, "lights", s->nlights, ok);
    const rt_camera *c = &s->camera;
    cJSON           *cam = rt_json_obj(j, "camera", ok);
    add_vec3(cam, "position", c->position, ok);
    add_vec3(cam, "forward", c->forward, ok);
    add_vec3(cam, "up", c->up, ok);
    rt_json_num(cam, "yfov_degrees", c->yfov * 180 / 3.14159265358979323846, ok);
    rt_json_str(cam, "from", camera_from(o, s), ok);
    rt_json_str(cam, "up_axis", rt_up_axis_name(o->up), ok);
    rt_json_str(cam, "view", rt_view_name(o->view), ok);
}

static void
add_threads(cJSON *j, const rt_render_stats *s, bool *ok)
{
    cJSON *busy = rt_json_array(j, "thread_busy_secs", ok);
    cJSON *cpu = rt_json_array(j, "thread_cpu_secs", ok);
    cJSON *tiles = rt_json_array(j, "thread_tiles", ok);
    for (unsigned i = 0; i < s->threads; i++) {
        rt_json_push_num(busy, s->per_thread[i].busy_secs, ok);
        rt_json_push_num(cpu, s->per_thread[i].cpu_secs, ok);
        rt_json_push_num(tiles, (double)s->per_thread[i].tiles, ok);
    }
}

static void
add_tables(cJSON *j, const ustr_stats *us, const tex_stats *ts, bool *ok)
{
    cJSON *u = rt_json_obj(j, "ustring", ok);
    rt_json_str(u, "lock", ustr_lock_name(us->lock), ok);
#define NUM(name, what) rt_json_num(u, #name, (double)us->name, ok);
    USTR_STATS_COUNTS(NUM) /* ustring.h */
#undef NUM
    cJSON *t = rt_json_obj(j, "texture", ok);
#define NUM(name, what) rt_json_num(t, #name, (double)ts->name, ok);
    TEX_STATS_COUNTS(NUM) /* texture.h */
#undef NUM
}

static void
add_rank(cJSON *ranks, unsigned r, const rt_rank_stats *k, bool *ok)
{
    cJSON *o = rt_json_push_obj(ranks, ok);
    rt_json_num(o, "rank", r, ok);
    rt_json_num(o, "threads", k->threads, ok);
    rt_json_num(o, "tiles", (double)k->work.tiles, ok);
    rt_json_num(o, "load_secs", k->load_secs, ok);
    rt_json_num(o, "bvh_secs", k->bvh_secs, ok);
    rt_json_num(o, "render_secs", k->render_secs, ok);
    rt_json_num(o, "busy_secs", k->work.busy_secs, ok);
    rt_json_num(o, "cpu_secs", k->work.cpu_secs, ok);
    rt_json_num(o, "comm_secs", k->comm_secs, ok);
    rt_json_num(o, "bytes_sent", (double)k->bytes_sent, ok);
    add_work(o, &k->work, ok);
    add_tables(o, &k->ustr, &k->tex, ok);
}

/* The report as a cJSON tree; *ok false when memory ran out. */
static cJSON *
report_tree(const rt_options *o, const rt_render_stats *s, tex_system *ts, ustr_table *strings,
            bool *okp)
{
    ustr_stats us;
    tex_stats  ss;
    ustr_table_stats(strings, &us);
    tex_system_stats(ts, &ss);
    struct rusage ru; /* the process's peak resident memory so far: everything it held */
    uint64_t      peak_rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
    bool          ok = true;
    cJSON        *j = cJSON_CreateObject();
    add_options(j, o, s, &ok);
    rt_json_num(j, "load_secs", s->load_secs, &ok);
    rt_json_num(j, "bvh_secs", s->bvh_secs, &ok);
    rt_json_num(j, "render_secs", s->render_secs, &ok);
    rt_json_num(j, "open_secs", s->open_secs, &ok);
    rt_json_num(j, "tiles", (double)s->ntiles, &ok);
    rt_json_num(j, "tiles_rendered", (double)s->total.tiles, &ok);
    rt_json_bool(j, "partial", s->partial, &ok);
    rt_json_bool(j, "resumed", s->resumed, &ok);
    add_work(j, &s->total, &ok);
    rt_json_num(j, "peak_rss", (double)peak_rss, &ok);
    add_scene_and_camera(j, o, s, &ok);
    rt_json_num(j, "max_depth", o->max_depth, &ok);
    rt_json_str(j, "light_sampling", rt_light_sampling_name(o->light_sampling), &ok);
    rt_json_str(j, "envmap", o->envmap, &ok);
    add_threads(j, s, &ok);
    add_tables(j, &us, &ss, &ok);
    cJSON *ranks = rt_json_array(j, "ranks", &ok);
    for (unsigned r = 0; r < s->nranks; r++)
        add_rank(ranks, r, &s->ranks[r], &ok);
    *okp = ok;
    return j;
}

rt_result
rt_report_json(const rt_options *o, const rt_render_stats *s, tex_system *ts, ustr_table *strings,
               const char *path, char err[RT_ERR_LEN])
{
    bool   ok;
    cJSON *tree = report_tree(o, s, ts, strings, &ok);
    return rt_json_write(tree, ok, path, err, RT_ERR_LEN); /* whole or not at all, as images */
}
