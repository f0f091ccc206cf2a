/* Scene import through assimp (rt_scene.h, assimp_read.h): the import, and the scene built from it.
 */
#include "assimp_read.h"
#include "import_budget.h"
#include "import_check.h"
#include "import_stack.h"
#include "rt_paths.h"
#include "rt_scene.h"
#include "scene_build.h"
#include "scene_internal.h"
#include "tex_image.h"

#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *
rt_result_str(rt_result r)
{
    switch (r) {
    case RT_OK:
        return "ok";
    case RT_ERR_OPEN:
        return "cannot open";
    case RT_ERR_FORMAT:
        return "not a scene file";
    case RT_ERR_EMPTY:
        return "no triangles";
    case RT_ERR_NOMEM:
        return "out of memory";
    case RT_ERR_INVALID:
        return "invalid argument";
    }
    return "unknown error";
}

/* --- loading ------------------------------------------------------------- */

/* assimp's C API keeps the last error in one global string, and its
 * importers are not documented as reentrant: one import at a time. */
static pthread_mutex_t import_lock = PTHREAD_MUTEX_INITIALIZER;

/* err = prefix + msg on one line, without the file's own name (the caller
 * prints that): assimp likes to quote it. */
static void
err_set(char *err, const char *prefix, const char *msg, const char *path)
{
    char   buf[RT_ERR_LEN];
    size_t plen = strlen(path), o = 0;
    for (const char *m = msg; *m && o + 1 < sizeof buf;) {
        if (plen && strncmp(m, path, plen) == 0) {
            m += plen;
            continue;
        }
        char ch = *m++;
        if (ch == '\n' || ch == '\r' || ch == '\t')
            ch = ' ';
        if (ch == ' ' && (o == 0 || buf[o - 1] == ' '))
            continue;
        buf[o++] = ch;
    }
    buf[o] = '\0';
    /* What quoting the name left behind: "" and a space before it. */
    char *q;
    while ((q = strstr(buf, " \"\"")) || (q = strstr(buf, "\"\""))) {
        size_t n = q[0] == ' ' ? 3 : 2;
        memmove(q, q + n, strlen(q + n) + 1);
    }
    /* ... and the words that led up to it: "for the file format of file". */
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '.'))
        buf[--n] = '\0';
    if (n >= 8 && strcmp(buf + n - 8, " of file") == 0)
        buf[n - 8] = '\0';
    char shown[RT_ERR_LEN]; /* assimp quotes what the file holds: names, values */
    tex_name_printable(shown, sizeof shown, buf);
    snprintf(err, RT_ERR_LEN, "%s%.200s", prefix, shown[0] ? shown : "unknown reason");
}

void
rt_scene_free(rt_scene *pub)
{
    if (!pub)
        return;
    scene_priv *s = (scene_priv *)pub;
    for (size_t i = 0; i < s->nstrs; i++)
        free(s->strs[i]);
    free(s->strs);
    free(pub->positions);
    free(pub->normals);
    free(pub->uvs);
    free(pub->uvs1);
    free(pub->tangents);
    free(pub->indices);
    free(pub->material);
    free(pub->materials);
    free(pub->lights);
    free(pub->warning);
    for (uint32_t i = 0; i < pub->nembedded; i++)
        free((void *)pub->embedded[i].data);
    free(pub->embedded);
    free(s);
}

/* The folder of `path` ("." when it has none). */
static char *
path_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char  *f = malloc(n + 1);
    if (f) {
        memcpy(f, path, n);
        f[n] = '\0';
    }
    return f;
}
/* What rt__scene_build() does into a scene allocated for it. */
static rt_result
scene_fill(const struct aiScene *ai, const char *path, ustr_table *strings,
           const rt__gltf_facts *extra, scene_priv *s, char *err)
{
    rt_scene  *pub = &s->pub;
    load_ctx   c = {.ai = ai, .s = s, .strings = strings};
    mesh_join *joins = NULL;
    rt_result  r = RT_ERR_NOMEM;

    s->gltf = extra ? extra->gltf : rt__path_is_gltf(path);
    pub->path = rt__scene_strdup(s, path);
    pub->folder = rt__scene_keep(s, path_folder(path));
    if (!pub->path || !pub->folder)
        goto fail;

    bool uv1 = false;
    for (unsigned i = 0; i < ai->mNumMeshes; i++)
        uv1 |= ai->mMeshes[i]->mTextureCoords[1] != NULL;
    walk w = {.ai = ai, .s = s, .uv1 = uv1};
    if (!(w.joins = joins = calloc(ai->mNumMeshes ? ai->mNumMeshes : 1, sizeof *joins)))
        goto fail;
    if (ai->mRootNode) {
        xform root = xform_identity();
        rt__walk_node(&w, ai->mRootNode, &root);
    }
    if (w.r == RT_ERR_FORMAT) {
        snprintf(err, RT_ERR_LEN, "not a scene file: a face index out of range");
        r = w.r;
        goto out;
    }
    if ((r = w.r) != RT_OK)
        goto fail;
    r = RT_ERR_NOMEM;
    if (w.ntris == 0) {
        snprintf(err, RT_ERR_LEN, "no triangles");
        r = RT_ERR_EMPTY;
        goto out;
    }
    if (w.nverts > UINT32_MAX || w.ntris > UINT32_MAX / 3) {
        snprintf(err, RT_ERR_LEN, "too many triangles: %llu", (unsigned long long)w.ntris);
        r = RT_ERR_FORMAT;
        goto out;
    }

    if ((r = rt__embedded_load(&c)) != RT_OK)
        goto fail;
    r = RT_ERR_NOMEM;
    pub->nmaterials = ai->mNumMaterials ? ai->mNumMaterials : 1;
    pub->materials = calloc(pub->nmaterials, sizeof *pub->materials);
    if (!pub->materials)
        goto fail;
    for (uint32_t i = 0; i < pub->nmaterials; i++) {
        if (i < ai->mNumMaterials && ai->mMaterials[i]) {
            if ((r = rt__material_load(&c, ai->mMaterials[i], &pub->materials[i])) != RT_OK)
                goto fail;
        } else {
            rt_material *m = &pub->materials[i];
            m->name = "";
            m->base_color[0] = m->base_color[1] = m->base_color[2] = m->base_color[3] = 1;
            m->roughness = 1, m->normal_scale = 1, m->occlusion_strength = 1;
            m->alpha_cutoff = -1;
        }
    }
    rt__emissive_strengths(pub, extra);
    rt__specular_factors(pub, extra);
    r = RT_ERR_NOMEM;

    size_t nv = (size_t)w.nverts, nt = (size_t)w.ntris;
    pub->positions = malloc(nv * 3 * sizeof(float));
    pub->normals = malloc(nv * 3 * sizeof(float));
    pub->uvs = calloc(nv * 2, sizeof(float));
    pub->uvs1 = uv1 ? calloc(nv * 2, sizeof(float)) : NULL;
    pub->tangents = calloc(nv * 4, sizeof(float));
    pub->indices = malloc(nt * 3 * sizeof(uint32_t));
    pub->material = malloc(nt * sizeof(uint32_t));
    if (!pub->positions || !pub->normals || !pub->uvs || (uv1 && !pub->uvs1) || !pub->tangents ||
        !pub->indices || !pub->material)
        goto fail;
    for (int k = 0; k < 3; k++)
        pub->bounds_min[k] = INFINITY, pub->bounds_max[k] = -INFINITY;
    uint32_t nmeshes = w.nmeshes, ninstances = w.ninstances; /* the count's */
    w = (walk){.ai = ai, .s = s, .joins = joins, .uv1 = uv1, .fill = true};
    xform id = xform_identity();
    rt__walk_node(&w, ai->mRootNode, &id);
    pub->nverts = (uint32_t)w.nverts;
    pub->ntris = (uint32_t)w.ntris;
    pub->one_material = true;
    for (uint32_t t = 1; t < pub->ntris && pub->one_material; t++)
        pub->one_material = pub->material[t] == pub->material[0];
    pub->nmeshes = nmeshes;
    pub->ninstances = ninstances;

    if (w.far) {
        snprintf(err, RT_ERR_LEN,
                 "a vertex at (%g, %g, %g): coordinates must be finite and within "
                 "+-%g",
                 w.far_at[0], w.far_at[1], w.far_at[2], RT_MAX_COORD);
        r = RT_ERR_FORMAT;
        goto out;
    }
    rt_scene_frame_bounds(pub, pub->focus_min, pub->focus_max);
    rt__camera_load(ai, s);
    if (!pub->camera.from_file)
        rt_scene_frame(pub, RT_UP_Y, RT_VIEW_AUTO);
    double cam[3] = {pub->camera.position[0], pub->camera.position[1], pub->camera.position[2]};
    if (!coords_ok(cam)) {
        snprintf(err, RT_ERR_LEN,
                 "the camera at (%g, %g, %g): coordinates must be finite and "
                 "within +-%g",
                 cam[0], cam[1], cam[2], RT_MAX_COORD);
        r = RT_ERR_FORMAT;
        goto out;
    }
    if ((r = rt__lights_load(ai, pub, extra)) != RT_OK ||
        (r = rt__scene_default_light(pub)) != RT_OK)
        goto fail;
    goto out;
fail:
    snprintf(err, RT_ERR_LEN, "%s", rt_result_str(r));
out:
    rt__mesh_joins_free(joins, ai->mNumMeshes);
    free(c.embedded_names);
    return r;
}

rt_result
rt__scene_build(const struct aiScene *ai, const char *path, ustr_table *strings,
                const rt__gltf_facts *extra, rt_scene **out, char err[RT_ERR_LEN])
{
    *out = NULL;
    scene_priv *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }
    rt_result r = scene_fill(ai, path, strings, extra, s, err);
    if (r != RT_OK) {
        rt_scene_free(&s->pub);
        return r;
    }
    *out = &s->pub;
    return RT_OK;
}

/* True where a material has a normal or bump map: only those read tangents
 * (rt_scene.h), and assimp's CalcTangentSpace costs a spatial sort. */
static bool
scene_needs_tangents(const struct aiScene *ai)
{
    for (unsigned i = 0; i < ai->mNumMaterials; i++)
        if (ai->mMaterials[i] &&
            (aiGetMaterialTextureCount(ai->mMaterials[i], aiTextureType_NORMALS) ||
             aiGetMaterialTextureCount(ai->mMaterials[i], aiTextureType_HEIGHT)))
            return true;
    return false;
}

/* The glTF extensions render implements, fully or in part (what it
 * ignores of them), and those assimp implements or refuses to load
 * without: whatever else a file uses is ignored. */
static const struct {
    const char *name;
    const char *ignored; /* NULL: none of it */
    bool        unread;  /* assimp cannot read a file that needs it */
} gltf_extensions[] = {
    {"KHR_lights_punctual", NULL, false},
    {"KHR_materials_emissive_strength", NULL, false},
    {"KHR_materials_specular", "its textures", false},
    {"KHR_texture_transform", "texCoord", false},
    /* Not read by Debian's assimp 5.2: a file that needs them fails to
     * import (named then); one that merely lists them has fallbacks. */
    {"KHR_draco_mesh_compression", NULL, true},
    {"EXT_meshopt_compression", NULL, true},
};

/* Of the extensions a glTF requires (", " between them), those assimp
 * cannot read: unknown to render, or marked so above. A failed import of
 * such a file names them first; one that requires only extensions assimp
 * reads failed for its own reason. */
static void
gltf_unread(const char *required, char out[RT_ERR_LEN])
{
    out[0] = '\0';
    for (const char *p = required; *p;) {
        size_t len = strcspn(p, ","), k = 0, n = sizeof gltf_extensions / sizeof *gltf_extensions;
        while (k < n && !(strlen(gltf_extensions[k].name) == len &&
                          strncmp(p, gltf_extensions[k].name, len) == 0))
            k++;
        if (k == n || gltf_extensions[k].unread) {
            size_t m = strlen(out);
            snprintf(out + m, RT_ERR_LEN - m, "%s%.*s", m ? ", " : "", (int)len, p);
        }
        p += len;
        p += strspn(p, ", ");
    }
}

/* For a glTF: every extension the file uses that render ignores, named
 * once in a warning; one it requires that render ignores, an error naming
 * it (the file says it cannot be drawn right without it). `required` and
 * `used` as rt__import_check() gives them. */
static rt_result
gltf_extensions_check(rt_scene *s, const char *required, const char *used, char err[RT_ERR_LEN])
{
    char ignored[RT_ERR_LEN] = "", needed[RT_ERR_LEN] = "";
    for (const char *p = used; *p;) {
        size_t      len = strcspn(p, ",");
        const char *part = NULL;
        bool        known = false;
        for (size_t k = 0; k < sizeof gltf_extensions / sizeof *gltf_extensions && !known; k++)
            if (strlen(gltf_extensions[k].name) == len &&
                strncmp(p, gltf_extensions[k].name, len) == 0)
                known = true, part = gltf_extensions[k].ignored;
        if (!known || part) {
            size_t n = strlen(ignored);
            snprintf(ignored + n, sizeof ignored - n, "%s%.*s%s%s%s", n ? ", " : "", (int)len, p,
                     part ? " (" : "", part ? part : "", part ? ")" : "");
            /* required: the whole name between separators */
            for (const char *q = required; !known && *q;) {
                size_t qlen = strcspn(q, ",");
                if (qlen == len && strncmp(q, p, len) == 0) {
                    size_t m = strlen(needed);
                    snprintf(needed + m, sizeof needed - m, "%s%.*s", m ? ", " : "", (int)len, p);
                }
                q += qlen;
                q += strspn(q, ", ");
            }
        }
        p += len;
        p += strspn(p, ", ");
    }
    if (needed[0]) {
        snprintf(err, RT_ERR_LEN,
                 "needs the glTF extensions %.150s, which render does not implement", needed);
        return RT_ERR_FORMAT;
    }
    if (ignored[0]) {
        char text[RT_ERR_LEN + 64];
        snprintf(text, sizeof text, "ignores the glTF extensions %s", ignored);
        rt__scene_warn(s, text);
    }
    return RT_OK;
}

rt_result
rt_scene_load(const char *path, ustr_table *strings, rt_scene **out, char err[RT_ERR_LEN])
{
    return rt_scene_load_restricted(path, strings, NULL, out, err);
}

/* One import, run on the import's own large stack (import_stack.h):
 * assimp's parse, its post-processing, the scene build and the release of
 * assimp's scene all recurse over the node hierarchy. */
typedef struct import_job {
    const char           *path;
    rt__format            format; /* import_check.h's verdict: the one importer that runs */
    ustr_table           *strings;
    unsigned              flags;
    io_guard              guard; /* every file assimp opens passes here */
    const rt__gltf_facts *facts; /* what import_check.h read of a glTF */
    rt_scene             *scene; /* the result, or NULL */
    rt_result             r;
    char                  err[RT_ERR_LEN];
} import_job;

/* What the importer made, before assimp's steps walk it: a face of no
 * corners (a PLY face line "0") failed an assertion in Triangulate. False,
 * with err set, where some face has none. */
static bool
faces_have_corners(const struct aiScene *ai, char err[RT_ERR_LEN])
{
    for (unsigned m = 0; m < ai->mNumMeshes; m++)
        for (unsigned f = 0; ai->mMeshes[m] && f < ai->mMeshes[m]->mNumFaces; f++)
            if (ai->mMeshes[m]->mFaces[f].mNumIndices == 0) {
                snprintf(err, RT_ERR_LEN, "not a scene file: face %u of mesh %u has no corners", f,
                         m);
                return false;
            }
    return true;
}

/* Whether some mesh has a vertex whose position is a number: assimp's
 * FindInvalidData deletes a mesh with none, and the import then ends with
 * "no triangles", whose cause this names. */
static bool
some_vertex_finite(const struct aiScene *ai)
{
    for (unsigned m = 0; m < ai->mNumMeshes; m++) {
        const struct aiMesh *mesh = ai->mMeshes[m];
        for (unsigned v = 0; mesh && mesh->mVertices && v < mesh->mNumVertices; v++)
            if (isfinite(mesh->mVertices[v].x) && isfinite(mesh->mVertices[v].y) &&
                isfinite(mesh->mVertices[v].z))
                return true;
    }
    return false;
}

/* assimp's import and steps: the scene, or NULL with j->err and j->r. */
static const struct aiScene *
import_assimp(import_job *j, rt__ai **imp)
{
    /* No log stream is attached: assimp's default logger is the null one,
     * so it writes nothing to stdout or stderr. */
    struct aiFileIO       io = {rt__io_open, rt__io_close, (char *)(void *)&j->guard};
    char                  why[RT_ERR_LEN] = "";
    const struct aiScene *ai = rt__ai_read(j->path, j->format, &io,
                                           aiPrimitiveType_POINT | aiPrimitiveType_LINE, imp, why);
    if (ai && !faces_have_corners(ai, j->err)) {
        j->r = RT_ERR_FORMAT;
        return NULL;
    }
    bool finite = !ai || some_vertex_finite(ai);
    if (ai)
        ai = rt__ai_post(*imp, j->flags, why);
    if (ai && scene_needs_tangents(ai))
        ai = rt__ai_post(*imp, aiProcess_GenSmoothNormals | aiProcess_CalcTangentSpace, why);
    if (ai)
        return ai;
    j->r = RT_ERR_FORMAT;
    if (j->guard.refused[0]) {
        snprintf(j->err, RT_ERR_LEN, "%s", j->guard.refused);
        j->r = RT_ERR_OPEN;
    } else if (strstr(why, "No meshes remaining")) {
        /* FindInvalidData dropped every mesh, or SortByPType did: points
         * and lines only. */
        snprintf(j->err, RT_ERR_LEN, "no triangles: %s",
                 finite ? "only points and lines"
                        : "no vertex position is a number (NaN or infinite)");
        j->r = RT_ERR_EMPTY;
    } else if (strstr(why, "out of memory") || strstr(why, "bad_alloc")) {
        snprintf(j->err, RT_ERR_LEN, "out of memory while importing");
        j->r = RT_ERR_NOMEM;
    } else {
        err_set(j->err, "not a scene file: ", why, j->path);
    }
    return NULL;
}

static void
import_run(void *arg)
{
    import_job *j = arg;
    rt__ai     *imp = NULL;
    /* On this thread, whose malloc arena assimp's buffer comes from. */
    bool heap = rt__obj_heap_prepare(j->path);
    rt__import_budget_start();
    const struct aiScene *ai = import_assimp(j, &imp);
    if (ai && (!ai->mRootNode || ai->mNumMeshes == 0)) {
        snprintf(j->err, RT_ERR_LEN, "no triangles");
        j->r = RT_ERR_EMPTY;
    } else if (ai) {
        j->r = rt__scene_build(ai, j->path, j->strings, j->facts, &j->scene, j->err);
        if (j->r == RT_OK && j->guard.refused[0] && !j->scene->warning &&
            !(j->scene->warning = strdup(j->guard.refused))) {
            rt_scene_free(j->scene);
            j->scene = NULL;
            snprintf(j->err, RT_ERR_LEN, "out of memory");
            j->r = RT_ERR_NOMEM;
        }
    }
    /* Whatever ran out while the budget was on, the budget was what ran
     * out: the file claimed more than its size could hold. */
    uint64_t budget = rt__import_budget_stop();
    if (budget && j->r == RT_ERR_NOMEM) {
        rt_scene_free(j->scene);
        j->scene = NULL;
        snprintf(j->err, RT_ERR_LEN,
                 "too large for its size: the import ran out of its memory budget of %.1f MiB "
                 "(%d MiB + %d x the bytes its files hold)",
                 (double)budget / (1 << 20), RT_IMPORT_BUDGET_BASE_MB, RT_IMPORT_BUDGET_PER_BYTE);
    }
    rt__ai_free(imp);
    rt__obj_heap_release(heap); /* after assimp has freed all it had */
}

rt_result
rt_scene_load_restricted(const char *path, ustr_table *strings, const rt_paths *allowed,
                         rt_scene **out, char err[RT_ERR_LEN])
{
    return rt_scene_load_with(path, strings, &(rt_scene_load_opts){.allowed = allowed}, out, err);
}

/* OBJ and PLY say nothing of up. One far flatter along z than across x
 * and y, but not flat (a terrain, a city block from GIS data, which are
 * z-up by habit) is taken as z-up and framed so. A plane in the xy plane
 * (a picture, a test card) faces the viewer as y-up; a y-up thing that
 * stands in that plane with some depth (a facade) is taken as z-up too,
 * hence the note render prints. */
#define RT_FLAT_RATIO 0.1

static void
up_guess(rt_scene *s, rt__format format)
{
    float e[3];
    for (int k = 0; k < 3; k++)
        e[k] = s->focus_max[k] - s->focus_min[k];
    s->up = RT_UP_Y;
    if (format != RT_FORMAT_GLTF && e[2] > 0 && e[2] < RT_FLAT_RATIO * e[0] &&
        e[2] < RT_FLAT_RATIO * e[1]) {
        s->up = RT_UP_Z, s->up_guessed = true;
        if (!s->camera.from_file)
            rt_scene_frame(s, RT_UP_Z, RT_VIEW_AUTO);
    }
}

/* The checks before assimp: a regular file, not too large, not empty
 * (assimp would say "unable to open file" for any of these), JSON not too
 * deep, and what import_check.h looks at, which gives the format. */
static rt_result
file_checks(const char *path, const rt_scene_load_opts *o, rt__format *format,
            rt__gltf_facts *facts, char err[RT_ERR_LEN])
{
    *facts = (rt__gltf_facts){.strength = NULL};
    char        why[RT_ERR_LEN];
    int         fd = tex_open_regular(path, why);
    struct stat st;
    bool        ok = fd >= 0 && fstat(fd, &st) == 0;
    if (fd >= 0 && !ok)
        snprintf(why, sizeof why, "%s", strerror(errno));
    ok = ok && rt__scene_file_size_ok(fd, o->max_file_bytes, why);
    rt_result r = ok ? RT_OK : RT_ERR_OPEN;
    if (!ok) {
        snprintf(err, RT_ERR_LEN, "%s", why);
    } else if (st.st_size == 0) {
        snprintf(err, RT_ERR_LEN, "not a scene file: empty file");
        r = RT_ERR_FORMAT;
    } else {
        uint64_t budget = ((uint64_t)RT_IMPORT_BUDGET_BASE_MB << 20) +
                          (uint64_t)st.st_size * RT_IMPORT_BUDGET_PER_BYTE;
        r = rt__import_check(fd, budget, format, facts, err);
    }
    if (fd >= 0)
        close(fd);
    return r;
}

rt_result
rt_scene_load_with(const char *path, ustr_table *strings, const rt_scene_load_opts *o,
                   rt_scene **out, char err[RT_ERR_LEN])
{
    static const rt_scene_load_opts none = {0};
    o = o ? o : &none;
    char dummy[RT_ERR_LEN];
    if (!err)
        err = dummy;
    err[0] = '\0';
    if (out)
        *out = NULL;
    if (!path || !out || !*path) {
        snprintf(err, RT_ERR_LEN, "invalid argument");
        return RT_ERR_INVALID;
    }
    if (!strings && !(strings = ustr_global())) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        return RT_ERR_NOMEM;
    }

    rt__format     format;
    rt__gltf_facts facts;
    rt_result      checked = file_checks(path, o, &format, &facts, err);
    if (checked != RT_OK) {
        rt__gltf_facts_free(&facts);
        return checked;
    }
    const char *required = facts.required, *used = facts.used;

    /* Triangulate + SortByPType with points and lines removed: triangles
     * only. FindInvalidData drops all-zero normal/UV arrays, so that they
     * are made anew. FlipUVs: (0, 0) at the image's top-left, as
     * tex_lookup() takes (s, t); assimp runs it first, so bitangents point
     * down the image. Tangents only where a material has a normal map, in
     * a second pass with GenSmoothNormals, which they need: assimp runs
     * its steps in a fixed order, where CalcTangentSpace comes right after
     * GenSmoothNormals, so the second pass sees what one pass would have
     * shown it, and gives the same tangents. Otherwise the smooth normals
     * of a mesh without any (scene_normals.c) and the joining of identical
     * vertices (scene_mesh.c, mesh_join_make()) are rt__scene_build()'s,
     * in O(n): assimp's steps search by a spatial sort, most of a large
     * mesh's load. */
    unsigned flags = aiProcess_Triangulate | aiProcess_SortByPType | aiProcess_FindInvalidData |
                     aiProcess_FlipUVs;

    pthread_mutex_lock(&import_lock);
    import_job job = {
        .path = path, .format = format, .strings = strings, .flags = flags, .facts = &facts};
    job.guard.allowed = o->allowed;
    job.guard.max_bytes = o->max_file_bytes;
    bool ran = rt__import_on_big_stack(import_run, &job, path);
    int  run_errno = errno;
    pthread_mutex_unlock(&import_lock);
    if (!ran) {
        snprintf(err, RT_ERR_LEN, "cannot start the import: %s", strerror(run_errno));
        return RT_ERR_NOMEM;
    }
    char unread[RT_ERR_LEN];
    gltf_unread(required, unread);
    if ((job.r == RT_ERR_FORMAT || job.r == RT_ERR_EMPTY) && unread[0]) /* what it needs first */
        snprintf(err, RT_ERR_LEN,
                 "needs the glTF extensions %.90s, which render cannot read (%.100s)", unread,
                 job.err);
    else
        snprintf(err, RT_ERR_LEN, "%s", job.err);
    if (job.r == RT_OK &&
        (job.r = gltf_extensions_check(job.scene, required, used, err)) != RT_OK) {
        rt_scene_free(job.scene);
        job.scene = NULL;
    }
    rt__gltf_facts_free(&facts);
    if (job.scene)
        up_guess(job.scene, format);
    *out = job.scene;
    return job.r;
}
