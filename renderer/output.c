/* Writing the image (EXR or PNG, never half-written: the texture library's
 * writers go through a temporary file and a rename); report.c writes the
 * report. */
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
    /* Only the text rt_tiles_missing_format() writes: items ascending, each
     * past the one before by a gap (runs are merged), a range "a-b" with
     * b > a, a comma between and none after. A partial render misses a tile
     * at least, so "" is damage too: read as "none missing" it wrote
     * never-rendered tiles as a finished image (an audit). */
    memset(done, 1, ntiles);
    unsigned long next = 0; /* the least the next item may start at */
    do {
        char         *end;
        unsigned long a = strtoul(s, &end, 10), b = a;
        if (end == s || *s < '0' || *s > '9')
            return false;
        if (*end == '-') {
            const char *t = end + 1;
            b = strtoul(t, &end, 10);
            if (end == t || *t < '0' || *t > '9' || b <= a)
                return false;
        }
        if (a < next || b >= ntiles || (*end && (*end != ',' || !end[1])))
            return false;
        memset(done + a, 0, b - a + 1);
        next = b + 2;
        s = *end ? end + 1 : end;
    } while (*s);
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
        /* zlib level 1: much less time than OpenEXR's default 4 for
         * files a little larger (the figures in the doc below); the blocks of lines are
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
