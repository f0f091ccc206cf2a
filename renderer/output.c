/* Writing the image (EXR or PNG, never half-written: the texture library's
 * writers go through a temporary file and a rename), and the report. */
#include "rt_render.h"
#include "tex_exr.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#ifndef RT_VERSION
#define RT_VERSION "0"
#endif

void
rt_image_free(rt_image *img)
{
    free(img->rgba);
    free(img->done);
    img->rgba = NULL, img->done = NULL;
}

bool
rt_output_is_png(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".png") == 0;
}

/* --exr-compression as the shim's; the enums differ only so that
 * rt_options.h needs no texture header. */
static tex_exr_compression
exr_compression(rt_exr_compression c)
{
    switch (c) {
    case RT_EXR_NONE:
        return TEX_EXR_NONE;
    case RT_EXR_RLE:
        return TEX_EXR_RLE;
    case RT_EXR_ZIPS:
        return TEX_EXR_ZIPS;
    case RT_EXR_PIZ:
        return TEX_EXR_PIZ;
    case RT_EXR_ZIP:
        break;
    }
    return TEX_EXR_ZIP;
}

static rt_result
from_tex(tex_result r)
{
    return r == TEX_OK ? RT_OK : r == TEX_ERR_NOMEM ? RT_ERR_NOMEM : RT_ERR_OPEN;
}

/* Appends printf-style to the string in buf; what does not fit is cut. */
static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
append(char *buf, size_t size, const char *fmt, ...)
{
    size_t  len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

void
rt_image_options_format(const rt_options *o, char *buf, size_t size)
{
    const char *slash = strrchr(o->scene, '/'), *name = slash ? slash + 1 : o->scene;
    snprintf(buf, size,
             "scene %s; %s; texture %s; spp %u; seed %" PRIu64 "; tile %u; depth %u; lights %s; "
             "envmap %s",
             name, rt_integrator_name(o->integrator), rt_texture_mode_name(o->texture_mode), o->spp,
             o->seed, o->tile, o->max_depth, rt_light_sampling_name(o->light_sampling),
             o->envmap ? o->envmap : "none");
    const float *c = o->camera_pos, *l = o->look_at;
    if (o->has_camera_pos)
        append(buf, size, "; camera %.9g,%.9g,%.9g", c[0], c[1], c[2]);
    if (o->has_look_at)
        append(buf, size, "; look-at %.9g,%.9g,%.9g", l[0], l[1], l[2]);
    if (o->has_fov)
        append(buf, size, "; fov %.9g", o->fov_degrees);
}

/* One item of an image-options line: "KEY VALUE", or a VALUE alone (the
 * integrator), whose key is then empty. */
typedef struct opt_item {
    const char *key, *value;
    int         key_len, value_len;
} opt_item;

/* The item at *s, moving *s past it; false at the end of the line. */
static bool
item_next(const char **s, opt_item *it)
{
    if (!**s)
        return false;
    const char *end = strstr(*s, "; ");
    size_t      len = end ? (size_t)(end - *s) : strlen(*s);
    const char *space = memchr(*s, ' ', len);
    it->key = *s;
    it->key_len = space ? (int)(space - *s) : 0;
    it->value = space ? space + 1 : *s;
    it->value_len = (int)(*s + len - it->value);
    *s = end ? end + 2 : *s + len;
    return true;
}

static bool
item_key_is(const opt_item *it, const opt_item *other)
{
    return it->key_len == other->key_len && strncmp(it->key, other->key, it->key_len) == 0;
}

/* How many items of `line` before `at` (one of them) share its key: the
 * n-th item of a key in one line pairs with the n-th in the other. */
static unsigned
item_rank(const char *line, const opt_item *at)
{
    opt_item it;
    unsigned n = 0;
    while (item_next(&line, &it) && it.key != at->key)
        n += item_key_is(&it, at);
    return n;
}

/* The item of `line` that pairs with `like`, the rank-th of its key. */
static bool
item_find(const char *line, const opt_item *like, unsigned rank, opt_item *out)
{
    while (item_next(&line, out))
        if (item_key_is(out, like) && rank-- == 0)
            return true;
    return false;
}

/* Appends "KEY THEIRS (this render: MINE)", either side "unset" when NULL. */
static void
diff_append(char *buf, size_t size, const opt_item *theirs, const opt_item *mine)
{
    const opt_item *it = theirs ? theirs : mine;
    append(buf, size, "%s%.*s %.*s (this render: %.*s)", *buf ? ", " : "",
           it->key_len ? it->key_len : (int)strlen("integrator"),
           it->key_len ? it->key : "integrator", theirs ? theirs->value_len : 5,
           theirs ? theirs->value : "unset", mine ? mine->value_len : 5,
           mine ? mine->value : "unset");
}

bool
rt_image_options_diff(const char *theirs, const char *mine, char *buf, size_t size)
{
    const char *s = mine;
    opt_item    m, t;
    buf[0] = '\0';
    while (item_next(&s, &m)) {
        bool paired = item_find(theirs, &m, item_rank(mine, &m), &t);
        if (!paired || t.value_len != m.value_len || strncmp(t.value, m.value, m.value_len) != 0)
            diff_append(buf, size, paired ? &t : NULL, &m);
    }
    for (s = theirs; item_next(&s, &t);)
        if (!item_find(mine, &t, item_rank(theirs, &t), &m))
            diff_append(buf, size, &t, NULL);
    return buf[0] != '\0';
}

char *
rt_tiles_missing_format(const uint8_t *done, uint32_t ntiles)
{
    size_t cap = 64, len = 0;
    char  *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (uint32_t i = 0; i < ntiles; i++) {
        if (done[i])
            continue;
        uint32_t j = i;
        while (j + 1 < ntiles && !done[j + 1])
            j++;
        char part[32];
        int  n = j > i ? snprintf(part, sizeof part, "%s%u-%u", len ? "," : "", i, j)
                       : snprintf(part, sizeof part, "%s%u", len ? "," : "", i);
        if (len + (size_t)n + 1 > cap) {
            char *bigger = realloc(s, cap = 2 * cap + (size_t)n);
            if (!bigger) {
                free(s);
                return NULL;
            }
            s = bigger;
        }
        memcpy(s + len, part, (size_t)n + 1);
        len += (size_t)n;
        i = j;
    }
    return s;
}

bool
rt_tiles_missing_parse(const char *s, uint8_t *done, uint32_t ntiles)
{
    memset(done, 1, ntiles);
    while (*s) {
        char         *end;
        unsigned long a = strtoul(s, &end, 10), b = a;
        if (end == s || *s == '-')
            return false;
        if (*end == '-') {
            const char *t = end + 1;
            b = strtoul(t, &end, 10);
            if (end == t || *t == '-')
                return false;
        }
        if (a > b || b >= ntiles || (*end && *end != ','))
            return false;
        memset(done + a, 0, b - a + 1);
        s = *end ? end + 1 : end;
    }
    return true;
}

void
rt_partial_path(const char *output, char *buf, size_t size)
{
    const char *slash = strrchr(output, '/'), *dot = strrchr(output, '.');
    if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : output))
        snprintf(buf, size, "%s.partial", output); /* no extension */
    else
        snprintf(buf, size, "%.*s.partial%s", (int)(dot - output), output, dot);
}

/* What an image says of the render that made it: EXR attributes of their
 * own types (numbers as numbers), and the same as PNG text. `text` holds
 * the strings the attributes point at. Returns how many. */
enum { RENDER_ATTRS = 24 };
typedef struct render_text {
    char seed[32], image_options[RT_IMAGE_OPTIONS_LEN];
} render_text;

static size_t
render_attrs(const rt_options *o, const rt_render_stats *st, render_text *t,
             tex_exr_attr a[RENDER_ATTRS])
{
    const rt_thread_stats *c = &st->total;
    rt_image_options_format(o, t->image_options, sizeof t->image_options);
    snprintf(t->seed, sizeof t->seed, "%" PRIu64, o->seed); /* 64 bits: no EXR number holds it */
#define STR(n, v) {.name = n, .kind = TEX_EXR_ATTR_STRING, .s = v}
#define INT(n, v)                                                                                  \
    {                                                                                              \
        .name = n, .kind = TEX_EXR_ATTR_INT, .i = (int32_t)(v)                                     \
    }
#define DBL(n, v)                                                                                  \
    {                                                                                              \
        .name = n, .kind = TEX_EXR_ATTR_DOUBLE, .d = (double)(v)                                   \
    }
    tex_exr_attr list[] = {
        STR("rt:version", RT_VERSION),
        DBL("rt:render_seconds", st->render_secs),
        INT("rt:threads", st->threads),
        INT("rt:ranks", st->nranks ? st->nranks : 1),
        INT("rt:spp", o->spp),
        STR("rt:texture_mode", rt_texture_mode_name(o->texture_mode)),
        STR("rt:intern", rt_intern_mode_name(o->intern)),
        STR("rt:open_textures", rt_open_mode_name(o->open)),
        STR("rt:ustring_lock", ustr_lock_name(o->lock)),
        STR("rt:integrator", rt_integrator_name(o->integrator)),
        INT("rt:max_depth", o->max_depth),
        STR("rt:envmap", o->envmap ? o->envmap : ""),
        INT("rt:tile", o->tile),
        STR("rt:image_options", t->image_options),
        STR("rt:seed", t->seed),
        DBL("rt:rays", c->rays),
        DBL("rt:shading_points", c->shading_points),
        DBL("rt:lookups", c->lookups),
        DBL("rt:interns", c->interns),
    };
#undef STR
#undef INT
#undef DBL
    size_t n = sizeof list / sizeof list[0];
    _Static_assert(sizeof list / sizeof list[0] <= RENDER_ATTRS, "room for the attributes");
    memcpy(a, list, sizeof list);
    return n;
}

/* The attributes as PNG text; `buf` holds the numbers' text. */
static size_t
render_png_text(const tex_exr_attr *a, size_t n, tex_png_text *text, char buf[][32])
{
    for (size_t i = 0; i < n; i++) {
        text[i].key = a[i].name;
        if (a[i].kind == TEX_EXR_ATTR_STRING) {
            text[i].value = a[i].s;
            continue;
        }
        if (a[i].kind == TEX_EXR_ATTR_INT)
            snprintf(buf[i], 32, "%" PRId32, a[i].i);
        else
            snprintf(buf[i], 32, "%.17g", a[i].kind == TEX_EXR_ATTR_DOUBLE ? a[i].d : a[i].f);
        text[i].value = buf[i];
    }
    return n;
}

rt_result
rt_image_write(const rt_options *o, const rt_image *img, const rt_render_stats *stats,
               char err[RT_ERR_LEN])
{
    char        partial[RT_MAX_OUTPUT_PATH + 16];
    const char *path = o->output;
    if (img->done) {
        rt_partial_path(o->output, partial, sizeof partial);
        path = partial;
    }
    tex_image    film = {.width = img->width,
                         .height = img->height,
                         .nchannels = 4,
                         .type = TEX_TYPE_FLOAT,
                         .pixels = img->rgba};
    char         terr[TEX_ERR_LEN];
    tex_result   r;
    render_text  t;
    tex_exr_attr attrs[RENDER_ATTRS + 2];
    size_t       nattrs = render_attrs(o, stats, &t, attrs);
    if (rt_output_is_png(path)) {
        /* Exposure, then clamp and sRGB-encode to 8 bits. */
        tex_image exposed, png;
        float     k = exp2f(o->exposure);
        r = tex_image_alloc(&exposed, img->width, img->height, 4, TEX_TYPE_FLOAT, terr);
        if (r == TEX_OK) {
            float *p = exposed.pixels;
            for (size_t i = 0; i < (size_t)img->width * img->height * 4; i++)
                p[i] = i % 4 == 3 ? img->rgba[i] : img->rgba[i] * k;
            r = tex_image_convert(&exposed, TEX_TYPE_U8, true, &png, terr);
            tex_image_free(&exposed);
        }
        if (r == TEX_OK) {
            tex_png_text text[RENDER_ATTRS];
            char         numbers[RENDER_ATTRS][32];
            size_t       ntext = render_png_text(attrs, nattrs, text, numbers);
            r = tex_png_write_text(path, &png, text, ntext, terr);
            tex_image_free(&png);
        }
    } else {
        /* A partial image says so, and which tiles it lacks, for --resume. */
        char *missing = img->done ? rt_tiles_missing_format(img->done, rt_options_tiles(o)) : NULL;
        if (img->done) {
            attrs[nattrs++] =
                (tex_exr_attr){.name = "rt:partial", .kind = TEX_EXR_ATTR_STRING, .s = "1"};
            attrs[nattrs++] = (tex_exr_attr){.name = "rt:missing_tiles",
                                             .kind = TEX_EXR_ATTR_STRING,
                                             .s = missing ? missing : ""};
        }
        /* zlib level 1: on renders 15-40% less time than OpenEXR's
         * default 4 for files 0.2-7% larger; the blocks of lines are
         * compressed on -t threads of OpenEXR's pool, emptied again before
         * the call returns (docs/render-performance.md, "Writing the
         * image"). */
        tex_exr_write_opts wo = {.compression = exr_compression(o->exr_compression),
                                 .zip_level = 1,
                                 .threads = o->threads};
        r = img->done && !missing
                ? TEX_ERR_NOMEM
                : tex_exr_write_scanline_opts(path, &film, attrs, nattrs, &wo, terr);
        if (r == TEX_ERR_NOMEM && img->done && !missing)
            snprintf(terr, sizeof terr, "out of memory");
        free(missing);
    }
    if (r != TEX_OK)
        snprintf(err, RT_ERR_LEN, "%s", terr);
    return from_tex(r);
}

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

void
rt_report_print(const rt_options *o, const rt_render_stats *s, tex_system *ts, ustr_table *strings,
                FILE *f)
{
    const rt_thread_stats *t = &s->total;
    double                 most = 0, least = 1e300;
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
    fprintf(f,
            "  rays %" PRIu64 " (%.2f Mrays/s), shading points %" PRIu64 ", bad samples %" PRIu64
            "\n",
            t->rays, per_sec(t->rays, s->render_secs) / 1e6, t->shading_points, t->bad_samples);
    fprintf(f,
            "  texture lookups %" PRIu64 " (%.2f M/s, %" PRIu64 " errors), interns %" PRIu64
            ", bypassed %" PRIu64 ", early-outs %" PRIu64 "\n",
            t->lookups, per_sec(t->lookups, s->render_secs) / 1e6, t->lookup_errors, t->interns,
            t->bypasses, t->early_outs);
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
                r, k->tiles, k->threads, k->load_secs, k->bvh_secs, k->render_secs, k->busy_secs,
                k->comm_secs, (double)k->bytes_sent / 1e6, k->tex_lookups, k->ustr_lookups,
                k->ustr_contended);
    }
}

void
rt_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

rt_result
rt_report_json(const rt_options *o, const rt_render_stats *s, tex_system *ts, ustr_table *strings,
               const char *path, char err[RT_ERR_LEN])
{
    /* Written whole or not at all, as images are. */
    tex_replace out;
    char        terr[TEX_ERR_LEN];
    if (tex_replace_begin(&out, path, terr) != TEX_OK) {
        snprintf(err, RT_ERR_LEN, "%s", terr);
        return RT_ERR_OPEN;
    }
    FILE                  *f = out.f;
    const rt_thread_stats *t = &s->total;
    ustr_stats             us;
    tex_stats              ss;
    ustr_table_stats(strings, &us);
    tex_system_stats(ts, &ss);
    fprintf(f,
            "{\"width\": %u, \"height\": %u, \"spp\": %u, \"threads\": %u,\n"
            " \"integrator\": \"%s\", \"texture_mode\": \"%s\", \"intern\": \"%s\","
            " \"open_textures\": \"%s\", \"ustring_lock\": \"%s\",\n"
            " \"load_secs\": %.6f, \"bvh_secs\": %.6f, \"render_secs\": %.6f,\n"
            " \"tiles\": %" PRIu64 ", \"tiles_rendered\": %" PRIu64
            ", \"partial\": %s, \"resumed\": %s,\n"
            " \"rays\": %" PRIu64 ", \"shading_points\": %" PRIu64 ",\n"
            " \"lookups\": %" PRIu64 ", \"lookup_errors\": %" PRIu64 ", \"interns\": %" PRIu64
            ", \"bypasses\": %" PRIu64 ", \"early_outs\": %" PRIu64 ", \"bad_samples\": %" PRIu64
            ",\n",
            o->width, o->height, o->spp, s->threads, rt_integrator_name(o->integrator),
            rt_texture_mode_name(o->texture_mode), rt_intern_mode_name(o->intern),
            rt_open_mode_name(o->open), ustr_lock_name(o->lock), s->load_secs, s->bvh_secs,
            s->render_secs, s->ntiles, t->tiles, s->partial ? "true" : "false",
            s->resumed ? "true" : "false", t->rays, t->shading_points, t->lookups, t->lookup_errors,
            t->interns, t->bypasses, t->early_outs, t->bad_samples);
    struct rusage ru; /* the process's peak resident memory so far: everything it held */
    uint64_t      peak_rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
    fprintf(f, " \"peak_rss\": %" PRIu64 ",\n", peak_rss);
    fprintf(f,
            " \"scene\": {\"triangles\": %u, \"meshes\": %u, \"instances\": %u, \"lights\": %u},\n",
            s->ntris, s->nmeshes, s->ninstances, s->nlights);
    const rt_camera *c = &s->camera;
    fprintf(f,
            " \"camera\": {\"position\": [%.9g, %.9g, %.9g], \"forward\": [%.9g, %.9g, %.9g],"
            " \"up\": [%.9g, %.9g, %.9g], \"yfov_degrees\": %.6g, \"from\": \"%s\","
            " \"up_axis\": \"%s\", \"view\": \"%s\"},\n",
            c->position[0], c->position[1], c->position[2], c->forward[0], c->forward[1],
            c->forward[2], c->up[0], c->up[1], c->up[2], c->yfov * 180 / 3.14159265358979323846,
            camera_from(o, s), rt_up_axis_name(o->up), rt_view_name(o->view));
    fprintf(f, " \"max_depth\": %u, \"light_sampling\": \"%s\", \"envmap\": ", o->max_depth,
            rt_light_sampling_name(o->light_sampling));
    rt_json_string(f, o->envmap);
    fputs(",\n", f);
    fprintf(f, " \"thread_busy_secs\": [");
    for (unsigned i = 0; i < s->threads; i++)
        fprintf(f, "%s%.6f", i ? ", " : "", s->per_thread[i].busy_secs);
    fprintf(f, "],\n \"thread_cpu_secs\": [");
    for (unsigned i = 0; i < s->threads; i++)
        fprintf(f, "%s%.6f", i ? ", " : "", s->per_thread[i].cpu_secs);
    fprintf(f, "],\n \"thread_tiles\": [");
    for (unsigned i = 0; i < s->threads; i++)
        fprintf(f, "%s%" PRIu64, i ? ", " : "", s->per_thread[i].tiles);
    fprintf(f,
            "],\n \"ustring\": {\"lock\": \"%s\", \"lookups\": %" PRIu64 ", \"inserts\": %" PRIu64
            ", \"contended\": %" PRIu64 ", \"strings\": %" PRIu64 "},\n",
            ustr_lock_name(us.lock), us.lookups, us.inserts, us.contended, us.strings);
    fprintf(f,
            " \"texture\": {\"lookups\": %" PRIu64 ", \"tile_hits\": %" PRIu64
            ", \"tile_misses\": %" PRIu64 ", \"tiles_loaded\": %" PRIu64
            ", \"tiles_evicted\": %" PRIu64 ", \"bytes_read\": %" PRIu64
            ", \"files_opened\": %" PRIu64 ", \"file_errors\": %" PRIu64
            ", \"peak_memory\": %" PRIu64 "},\n \"ranks\": [",
            ss.lookups, ss.tile_hits, ss.tile_misses, ss.tiles_loaded, ss.tiles_evicted,
            ss.bytes_read, ss.files_opened, ss.file_errors, ss.peak_memory);
    for (unsigned r = 0; r < s->nranks; r++) {
        const rt_rank_stats *k = &s->ranks[r];
        fprintf(f,
                "%s\n  {\"rank\": %u, \"threads\": %u, \"tiles\": %" PRIu64
                ", \"load_secs\": %.6f, \"bvh_secs\": %.6f, \"render_secs\": %.6f"
                ", \"busy_secs\": %.6f, \"cpu_secs\": %.6f, \"comm_secs\": %.6f"
                ", \"bytes_sent\": %" PRIu64 ", \"rays\": %" PRIu64 ", \"lookups\": %" PRIu64
                ", \"interns\": %" PRIu64 ",\n   \"texture\": {\"lookups\": %" PRIu64
                ", \"tiles_loaded\": %" PRIu64 ", \"bytes_read\": %" PRIu64
                ", \"peak_memory\": %" PRIu64 "}, \"ustring\": {\"lookups\": %" PRIu64
                ", \"inserts\": %" PRIu64 ", \"contended\": %" PRIu64 "}}",
                r ? "," : "", r, k->threads, k->tiles, k->load_secs, k->bvh_secs, k->render_secs,
                k->busy_secs, k->cpu_secs, k->comm_secs, k->bytes_sent, k->rays, k->lookups,
                k->interns, k->tex_lookups, k->tex_tiles_loaded, k->tex_bytes_read,
                k->tex_peak_memory, k->ustr_lookups, k->ustr_inserts, k->ustr_contended);
    }
    fputs("]}\n", f);
    if (tex_replace_end(&out, true, terr) != TEX_OK) {
        snprintf(err, RT_ERR_LEN, "%s", terr);
        return RT_ERR_OPEN;
    }
    return RT_OK;
}
