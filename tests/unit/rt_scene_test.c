/* renderer/include/rt_scene.h: scene import through assimp. The OBJ and glTF cases
 * write their own files into a fresh temporary folder; the testdata cases
 * take ${RT_TESTDATA} on the command line and exit 77 where it is missing. */
#include "check.h"
#include "rt_paths.h"
#include "rt_scene.h"
#include "view_coverage.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define SKIP 77

#define CHECK_NEAR(a, b)                                                                           \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(fabs(a_ - b_) <= 1e-4 * (1 + fabs(b_))))                                             \
            RT_CHECK_FAIL_("CHECK_NEAR(%s, %s): %.9g != %.9g", #a, #b, a_, b_);                    \
    } while (0)

/* --- a temporary folder, removed at exit --------------------------------- */

static char tmpdir[256];

static void
tmp_cleanup(void)
{
    if (getenv("RT_TEST_KEEP")) /* for a look at the files after a failure */
        return;
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
    struct dirent *e;
    char           p[512];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        if (unlink(p) != 0)
            rmdir(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

static const char *
tmp_make(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/rt_scene_XXXXXX", base && *base ? base : "/tmp");
    REQUIRE(mkdtemp(tmpdir));
    atexit(tmp_cleanup);
    return tmpdir;
}

static char *
tmp_path(const char *name)
{
    static char bufs[4][512];
    static int  next;
    char       *p = bufs[next++ % 4];
    snprintf(p, sizeof bufs[0], "%s/%s", tmpdir, name);
    return p;
}

static void
file_write(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(data, 1, size, f) == size);
    REQUIRE(fclose(f) == 0);
}

static void
file_write_str(const char *path, const char *text)
{
    file_write(path, text, strlen(text));
}

static bool
file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The error line: non-empty, one line. */
static void
check_err_line(const char *err)
{
    CHECK(err[0] != '\0');
    CHECK(strchr(err, '\n') == NULL);
    CHECK(strlen(err) < RT_ERR_LEN);
}

static void
check_normals_unit(const rt_scene *s)
{
    for (uint32_t i = 0; i < s->nverts; i++) {
        const float *n = &s->normals[3 * i];
        CHECK_NEAR(sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), 1.0);
    }
}

/* Each triangle's geometric normal (counter-clockwise) agrees with its
 * vertices' shading normals. */
static void
check_winding(const rt_scene *s)
{
    for (uint32_t t = 0; t < s->ntris; t++) {
        const uint32_t *ix = &s->indices[3 * t];
        const float    *a = &s->positions[3 * ix[0]], *b = &s->positions[3 * ix[1]],
                    *c = &s->positions[3 * ix[2]];
        float        e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float        e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float        g[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                             e1[0] * e2[1] - e1[1] * e2[0]};
        const float *n = &s->normals[3 * ix[0]];
        CHECK(g[0] * n[0] + g[1] * n[1] + g[2] * n[2] > 0);
    }
}

/* --- OBJ + MTL ------------------------------------------------------------ */

static void
case_obj(const char *arg)
{
    (void)arg;
    tmp_make();
    file_write_str(tmp_path("quad.mtl"), "newmtl stone\n"
                                         "Kd 0.5 0.6 0.7\n"
                                         "Ns 98\n"
                                         "d 1\n"
                                         "map_Kd tex\\base.png\n"
                                         "map_bump tex/bump.png\n"
                                         "map_Ks ./spec.png\n"
                                         "map_d /abs/alpha.png\n");
    /* A unit quad at z = 2, normals written unnormalised. */
    file_write_str(tmp_path("quad.obj"), "mtllib quad.mtl\n"
                                         "v 0 0 2\nv 1 0 2\nv 1 1 2\nv 0 1 2\n"
                                         "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                                         "vn 0 0 3\n"
                                         "usemtl stone\n"
                                         "f 1/1/1 2/2/1 3/3/1\n"
                                         "f 1/1/1 3/3/1 4/4/1\n");
    ustr_table *strings;
    REQUIRE(ustr_table_create(NULL, &strings) == USTR_OK);
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(tmp_path("quad.obj"), strings, &s, err);
    if (r != RT_OK)
        fprintf(stderr, "load: %s\n", err);
    REQUIRE(r == RT_OK && s);

    CHECK_EQ_INT(s->ntris, 2);
    CHECK_EQ_INT(s->nverts, 4);
    CHECK_EQ_STR(s->path, tmp_path("quad.obj"));
    CHECK_EQ_STR(s->folder, tmpdir);
    check_normals_unit(s);
    check_winding(s);
    for (uint32_t i = 0; i < s->nverts; i++) {
        const float *p = &s->positions[3 * i], *uv = &s->uvs[2 * i], *n = &s->normals[3 * i];
        CHECK_NEAR(p[2], 2.0);
        CHECK_NEAR(n[2], 1.0);
        /* OBJ's v runs up the image; the scene's t runs down it. */
        CHECK_NEAR(uv[0], p[0]);
        CHECK_NEAR(uv[1], 1.0 - p[1]);
        /* Tangent along +s = +x; up the image (-t) is +y = cross(z, x). */
        CHECK_NEAR(s->tangents[4 * i], 1.0);
        CHECK_NEAR(s->tangents[4 * i + 3], 1.0);
    }
    CHECK(s->uvs1 == NULL);
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(s->bounds_min[k], k == 2 ? 2 : 0);
        CHECK_NEAR(s->bounds_max[k], k == 2 ? 2 : 1);
    }
    CHECK(!s->camera.from_file);
    /* No light, nothing emissive: the default light, from behind and above
     * the camera, pointing into the view and down. */
    REQUIRE(s->nlights == 1);
    CHECK(s->default_light);
    CHECK_EQ_INT(s->lights[0].kind, RT_LIGHT_DIRECTIONAL);
    const float *ld = s->lights[0].direction, *cf = s->camera.forward, *cu = s->camera.up;
    CHECK(ld[0] * cf[0] + ld[1] * cf[1] + ld[2] * cf[2] > 0.2f);
    CHECK(ld[0] * cu[0] + ld[1] * cu[1] + ld[2] * cu[2] < -0.5f);
    CHECK_NEAR(ld[0] * ld[0] + ld[1] * ld[1] + ld[2] * ld[2], 1.0);
    CHECK_NEAR(s->lights[0].color[1], 3.0);
    CHECK_EQ_INT(s->nembedded, 0);

    /* The triangles' material is "stone" (assimp may add a default one),
     * the same for both: a hit need not read material[]. */
    REQUIRE(s->material[0] < s->nmaterials);
    CHECK_EQ_INT(s->material[0], s->material[1]);
    CHECK(s->one_material);
    CHECK_EQ_INT(rt_scene_material_of(s, 1), s->material[0]);
    const rt_material *m = &s->materials[s->material[0]];
    CHECK_EQ_STR(m->name, "stone");
    CHECK_NEAR(m->base_color[0], 0.5);
    CHECK_NEAR(m->base_color[1], 0.6);
    CHECK_NEAR(m->base_color[2], 0.7);
    CHECK_NEAR(m->base_color[3], 1.0);
    CHECK_NEAR(m->metallic, 0.0);
    CHECK_NEAR(m->roughness, sqrt(2.0 / 100.0));
    CHECK_NEAR(m->alpha_cutoff, 0.5); /* map_d */

    char want[600];
    snprintf(want, sizeof want, "%s/tex/base.png", tmpdir);
    CHECK_EQ_STR(m->slots[RT_SLOT_BASE_COLOR].filename, want);
    snprintf(want, sizeof want, "%s/tex/bump.png", tmpdir);
    CHECK_EQ_STR(m->slots[RT_SLOT_NORMAL].filename, want);
    snprintf(want, sizeof want, "%s/spec.png", tmpdir);
    CHECK_EQ_STR(m->slots[RT_SLOT_METALLIC_ROUGHNESS].filename, want);
    CHECK_EQ_STR(m->slots[RT_SLOT_OPACITY].filename, "/abs/alpha.png");
    CHECK(m->slots[RT_SLOT_EMISSIVE].filename == NULL);
    CHECK(m->slots[RT_SLOT_OCCLUSION].filename == NULL);
    CHECK(!m->slots[RT_SLOT_BASE_COLOR].raw);
    CHECK(m->slots[RT_SLOT_NORMAL].raw);
    CHECK(m->slots[RT_SLOT_METALLIC_ROUGHNESS].raw);
    CHECK(m->slots[RT_SLOT_OPACITY].raw);
    for (int k = 0; k < RT_SLOT_COUNT; k++) {
        const rt_texture_slot *ts = &m->slots[k];
        if (!ts->filename) {
            CHECK(ts->name == NULL);
            continue;
        }
        CHECK_EQ_INT(ts->uv, 0);
        CHECK(strchr(ts->filename, '\\') == NULL);
        CHECK_EQ_PTR(ts->name, ustr_table_intern_cstr(strings, ts->filename));
        CHECK_EQ_U64(ts->filename_len, strlen(ts->filename));
    }
    rt_scene_free(s);

    /* Two materials on two triangles: each hit reads its own. */
    file_write_str(tmp_path("two.mtl"), "newmtl a\nKd 1 0 0\nnewmtl b\nKd 0 1 0\n");
    file_write_str(tmp_path("two.obj"), "mtllib two.mtl\n"
                                        "v 0 0 2\nv 1 0 2\nv 1 1 2\nv 0 1 2\n"
                                        "usemtl a\nf 1 2 3\n"
                                        "usemtl b\nf 1 3 4\n");
    r = rt_scene_load(tmp_path("two.obj"), strings, &s, err);
    REQUIRE(r == RT_OK && s);
    REQUIRE(s->ntris == 2);
    CHECK(!s->one_material);
    CHECK(rt_scene_material_of(s, 0) != rt_scene_material_of(s, 1));
    CHECK_NEAR(s->materials[rt_scene_material_of(s, 0)].base_color[0] +
                   s->materials[rt_scene_material_of(s, 1)].base_color[0],
               1.0); /* one red, one green */
    rt_scene_free(s);

    /* An emissive material lights the scene: no default light then. */
    file_write_str(tmp_path("glow.mtl"), "newmtl glow\nKd 0.5 0.5 0.5\nKe 2 2 2\n");
    file_write_str(tmp_path("glow.obj"), "mtllib glow.mtl\n"
                                         "v 0 0 2\nv 1 0 2\nv 1 1 2\n"
                                         "usemtl glow\n"
                                         "f 1 2 3\n");
    r = rt_scene_load(tmp_path("glow.obj"), strings, &s, err);
    REQUIRE(r == RT_OK && s);
    CHECK_EQ_INT(s->nlights, 0);
    CHECK(!s->default_light);
    rt_scene_free(s);
    ustr_table_destroy(strings);
}

/* --- PLY ------------------------------------------------------------------- */

/* An ASCII PLY quad with normals and texture coordinates (s, t), split
 * into two triangles; PLY has no materials, so assimp gives it a default. */
static void
case_ply(const char *arg)
{
    (void)arg;
    tmp_make();
    file_write_str(tmp_path("quad.ply"), "ply\n"
                                         "format ascii 1.0\n"
                                         "element vertex 4\n"
                                         "property float x\nproperty float y\nproperty float z\n"
                                         "property float nx\nproperty float ny\nproperty float nz\n"
                                         "property float s\nproperty float t\n"
                                         "element face 1\n"
                                         "property list uchar int vertex_indices\n"
                                         "end_header\n"
                                         "0 0 0 0 0 1 0 0\n"
                                         "2 0 0 0 0 1 1 0\n"
                                         "2 1 0 0 0 1 1 1\n"
                                         "0 1 0 0 0 1 0 1\n"
                                         "4 0 1 2 3\n");
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(tmp_path("quad.ply"), NULL, &s, err);
    if (r != RT_OK)
        fprintf(stderr, "load: %s\n", err);
    REQUIRE(r == RT_OK && s);
    CHECK_EQ_INT(s->ntris, 2); /* the quad, triangulated */
    CHECK(s->nmaterials >= 1);
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(s->bounds_min[k], 0);
        CHECK_NEAR(s->bounds_max[k], k == 0 ? 2 : k == 1 ? 1 : 0);
    }
    for (uint32_t i = 0; i < s->nverts; i++) {
        CHECK_NEAR(s->normals[3 * i + 2], 1.0);
        /* PLY's t runs up the image, as OBJ's: flipped on import, so the
         * vertex at y = 1 reads the image's top row. */
        float y = s->positions[3 * i + 1], t = s->uvs[2 * i + 1];
        CHECK_NEAR(t, 1.0 - y);
    }
    CHECK(!s->camera.from_file);
    CHECK(s->default_light);
    rt_scene_free(s);
}

/* --- shared vertices ------------------------------------------------------ */

/* Two triangles sharing the edge (1,0,0)-(0,1,0), the second naming its own
 * normal for it, `vn2`. */
static rt_scene *
join_obj(const char *name, const char *vn2)
{
    char text[512];
    snprintf(text, sizeof text,
             "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"
             "vn 0 0 1\nvn %s\n"
             "f 1//1 2//1 3//1\n"
             "f 2//2 4//2 3//2\n",
             vn2);
    file_write_str(tmp_path(name), text);
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(tmp_path(name), NULL, &s, err);
    if (r != RT_OK)
        fprintf(stderr, "load: %s\n", err);
    REQUIRE(r == RT_OK && s);
    CHECK_EQ_INT(s->ntris, 2);
    check_winding(s);
    return s;
}

/* Vertices are shared as assimp's JoinIdenticalVertices shared them: the
 * same position and normals no more than 1e-5 apart (the first kept's
 * normal then serves both triangles); further apart, they stay two. A
 * vertex no triangle uses is dropped, and out of the bounds. Without a
 * normal map, no tangents. */
static void
case_join(const char *arg)
{
    (void)arg;
    tmp_make();
    rt_scene *s = join_obj("near.obj", "0 0.000001 1");
    CHECK_EQ_INT(s->nverts, 4);
    for (uint32_t i = 0; i < s->nverts; i++)
        CHECK(s->normals[3 * i + 1] == 0 || s->positions[3 * i] + s->positions[3 * i + 1] == 2);
    for (uint32_t i = 0; i < 4 * s->nverts; i++)
        CHECK(s->tangents[i] == 0);
    rt_scene_free(s);
    s = join_obj("far.obj", "0 0.001 1");
    CHECK_EQ_INT(s->nverts, 6);
    rt_scene_free(s);

    file_write_str(tmp_path("unused.ply"), "ply\n"
                                           "format ascii 1.0\n"
                                           "element vertex 5\n"
                                           "property float x\nproperty float y\nproperty float z\n"
                                           "element face 2\n"
                                           "property list uchar int vertex_indices\n"
                                           "end_header\n"
                                           "0 0 0\n1 0 0\n0 1 0\n1 1 0\n9 9 9\n"
                                           "3 0 1 2\n3 1 3 2\n");
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(tmp_path("unused.ply"), NULL, &s, err);
    if (r != RT_OK)
        fprintf(stderr, "load: %s\n", err);
    REQUIRE(r == RT_OK && s);
    CHECK_EQ_INT(s->nverts, 4);
    CHECK_EQ_INT(s->ntris, 2);
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(s->bounds_min[k], 0);
        CHECK_NEAR(s->bounds_max[k], k < 2 ? 1 : 0);
    }
    rt_scene_free(s);
}

/* --- glTF ------------------------------------------------------------------ */

/* The quad's buffer: positions, normals, UV sets 0 and 1, uint16 indices,
 * and (in the GLB) 8 bytes of image data. */
#define QUAD_BIN_GEOM 172
static const char quad_image[8] = "\x89PNGfake";

static size_t
quad_bin(unsigned char *out)
{
    const float pos[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    const float nrm[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    /* glTF UVs: (0, 0) at the image's top-left, so t = 1 - y here. */
    const float    uv0[8] = {0, 1, 1, 1, 1, 0, 0, 0};
    const float    uv1[8] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.25f, 0.75f};
    const uint16_t idx[6] = {0, 1, 2, 0, 2, 3};
    size_t         o = 0;
    memcpy(out + o, pos, sizeof pos), o += sizeof pos;
    memcpy(out + o, nrm, sizeof nrm), o += sizeof nrm;
    memcpy(out + o, uv0, sizeof uv0), o += sizeof uv0;
    memcpy(out + o, uv1, sizeof uv1), o += sizeof uv1;
    memcpy(out + o, idx, sizeof idx), o += sizeof idx;
    REQUIRE(o == QUAD_BIN_GEOM);
    return o;
}

/* A parent (translation 10,0,0, scale 2) with the quad (translation 0,5,0),
 * a camera (0,0,10) and a point light (1,2,3) as children; a mirrored
 * instance (scale -1,1,1) at the root. `buffer` is the buffers[0] object;
 * `images` the images array. */
static void
quad_gltf(char *out, size_t size, const char *buffer, const char *images)
{
    snprintf(
        out, size,
        "{\"asset\":{\"version\":\"2.0\"},"
        "\"extensionsUsed\":[\"KHR_lights_punctual\",\"KHR_texture_transform\"],"
        "\"extensions\":{\"KHR_lights_punctual\":{\"lights\":["
        "{\"type\":\"point\",\"color\":[1,0.5,0.25],\"intensity\":4}]}},"
        "\"scene\":0,\"scenes\":[{\"nodes\":[0,4]}],"
        "\"nodes\":["
        "{\"name\":\"parent\",\"translation\":[10,0,0],\"scale\":[2,2,2],\"children\":[1,2,3]},"
        "{\"name\":\"child\",\"mesh\":0,\"translation\":[0,5,0]},"
        "{\"name\":\"eye\",\"camera\":0,\"translation\":[0,0,10]},"
        "{\"name\":\"lamp\",\"translation\":[1,2,3],"
        "\"extensions\":{\"KHR_lights_punctual\":{\"light\":0}}},"
        "{\"name\":\"mirror\",\"mesh\":0,\"scale\":[-1,1,1]}],"
        "\"cameras\":[{\"type\":\"perspective\",\"perspective\":"
        "{\"yfov\":0.8,\"aspectRatio\":1.5,\"znear\":0.1,\"zfar\":100}}],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"NORMAL\":1,"
        "\"TEXCOORD_0\":2,\"TEXCOORD_1\":3},\"indices\":4,\"material\":0}]}],"
        "\"materials\":[{\"name\":\"pbr\",\"pbrMetallicRoughness\":{"
        "\"baseColorFactor\":[0.5,0.25,1,1],\"baseColorTexture\":{\"index\":0,"
        "\"extensions\":{\"KHR_texture_transform\":"
        "{\"offset\":[0.25,0.125],\"rotation\":0.5,\"scale\":[2,3]}}},"
        "\"metallicFactor\":0.3,\"roughnessFactor\":0.7,"
        "\"metallicRoughnessTexture\":{\"index\":1}},"
        "\"normalTexture\":{\"index\":2,\"scale\":0.9,"
        "\"extensions\":{\"KHR_texture_transform\":{\"offset\":[0.5,0]}}},"
        "\"occlusionTexture\":{\"index\":3,\"texCoord\":1,\"strength\":0.6},"
        "\"emissiveTexture\":{\"index\":4},\"emissiveFactor\":[1,0.5,0],"
        "\"alphaMode\":\"MASK\",\"alphaCutoff\":0.3,\"doubleSided\":true}],"
        "\"textures\":[{\"source\":0},{\"source\":1},{\"source\":2},{\"source\":3},"
        "{\"source\":4}],"
        "\"images\":%s,"
        "\"buffers\":[%s],"
        "\"bufferViews\":["
        "{\"buffer\":0,\"byteOffset\":0,\"byteLength\":48},"
        "{\"buffer\":0,\"byteOffset\":48,\"byteLength\":48},"
        "{\"buffer\":0,\"byteOffset\":96,\"byteLength\":32},"
        "{\"buffer\":0,\"byteOffset\":128,\"byteLength\":32},"
        "{\"buffer\":0,\"byteOffset\":160,\"byteLength\":12},"
        "{\"buffer\":0,\"byteOffset\":172,\"byteLength\":8}],"
        "\"accessors\":["
        "{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\","
        "\"min\":[0,0,0],\"max\":[1,1,0]},"
        "{\"bufferView\":1,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\"},"
        "{\"bufferView\":2,\"componentType\":5126,\"count\":4,\"type\":\"VEC2\"},"
        "{\"bufferView\":3,\"componentType\":5126,\"count\":4,\"type\":\"VEC2\"},"
        "{\"bufferView\":4,\"componentType\":5123,\"count\":6,\"type\":\"SCALAR\"}]}",
        images, buffer);
}

static const char quad_images_files[] =
    "[{\"uri\":\"tex/base.png\"},{\"uri\":\"tex/mr.png\"},{\"uri\":\"normal.png\"},"
    "{\"uri\":\"tex/ao.png\"},{\"uri\":\"/abs/emit.png\"}]";

static char *
write_quad_gltf(void)
{
    unsigned char bin[QUAD_BIN_GEOM + sizeof quad_image];
    size_t        n = quad_bin(bin);
    memcpy(bin + n, quad_image, sizeof quad_image);
    file_write(tmp_path("quad.bin"), bin, sizeof bin);
    char buffer[128];
    snprintf(buffer, sizeof buffer, "{\"uri\":\"quad.bin\",\"byteLength\":%zu}", sizeof bin);
    static char json[8192];
    quad_gltf(json, sizeof json, buffer, quad_images_files);
    file_write_str(tmp_path("quad.gltf"), json);
    return json;
}

/* A GLB of the same scene whose base-colour image lives in the BIN chunk. */
static size_t
quad_glb(unsigned char *out, size_t cap)
{
    unsigned char bin[QUAD_BIN_GEOM + sizeof quad_image];
    size_t        nbin = quad_bin(bin);
    memcpy(bin + nbin, quad_image, sizeof quad_image);
    nbin += sizeof quad_image;
    char json[8192], buffer[64];
    snprintf(buffer, sizeof buffer, "{\"byteLength\":%zu}", nbin);
    quad_gltf(json, sizeof json, buffer,
              "[{\"bufferView\":5,\"mimeType\":\"image/png\"},{\"uri\":\"tex/mr.png\"},"
              "{\"uri\":\"normal.png\"},{\"uri\":\"tex/ao.png\"},{\"uri\":\"/abs/emit.png\"}]");
    size_t njson = strlen(json);
    while (njson % 4)
        json[njson++] = ' ';
    size_t nbinp = (nbin + 3) & ~(size_t)3;
    size_t total = 12 + 8 + njson + 8 + nbinp;
    REQUIRE(total <= cap);
    uint32_t hdr[3] = {0x46546C67u, 2, (uint32_t)total}; /* "glTF", little-endian */
    uint32_t jh[2] = {(uint32_t)njson, 0x4E4F534Au};     /* "JSON" */
    uint32_t bh[2] = {(uint32_t)nbinp, 0x004E4942u};     /* "BIN\0" */
    size_t   o = 0;
    memcpy(out + o, hdr, 12), o += 12;
    memcpy(out + o, jh, 8), o += 8;
    memcpy(out + o, json, njson), o += njson;
    memcpy(out + o, bh, 8), o += 8;
    memset(out + o, 0, nbinp);
    memcpy(out + o, bin, nbin), o += nbinp;
    return o;
}

static void
check_quad_scene(const rt_scene *s)
{
    CHECK_EQ_INT(s->ntris, 4);
    CHECK_EQ_INT(s->nverts, 8);
    check_normals_unit(s);
    check_winding(s);
    /* Child instance: parent * (child translation + p) = 10 + 2 * (p + (0,5,0)).
     * Mirrored instance: (-x, y, z). Told apart by the sign of x. */
    int child = 0, mirror = 0;
    for (uint32_t i = 0; i < s->nverts; i++) {
        const float *p = &s->positions[3 * i], *uv = &s->uvs[2 * i], *t = &s->tangents[4 * i];
        CHECK_NEAR(s->normals[3 * i + 2], 1.0);
        if (p[0] >= 10) {
            child++;
            double x = (p[0] - 10) / 2, y = p[1] / 2 - 5;
            CHECK(fabs(x) < 1e-5 || fabs(x - 1) < 1e-5);
            CHECK(fabs(y) < 1e-5 || fabs(y - 1) < 1e-5);
            CHECK_NEAR(p[2], 0.0);
            CHECK_NEAR(uv[0], x);
            CHECK_NEAR(uv[1], 1 - y); /* glTF's own (s, t) */
            CHECK_NEAR(t[0], 1.0);
            CHECK_NEAR(t[3], 1.0);
        } else {
            mirror++;
            CHECK(p[0] <= 0);
            CHECK_NEAR(uv[0], -p[0]);
            CHECK_NEAR(uv[1], 1 - p[1]);
            /* +s now runs along -x and the handedness flips with it. */
            CHECK_NEAR(t[0], -1.0);
            CHECK_NEAR(t[3], -1.0);
        }
    }
    CHECK_EQ_INT(child, 4);
    CHECK_EQ_INT(mirror, 4);
    REQUIRE(s->uvs1);
    bool found = false;
    for (uint32_t i = 0; i < s->nverts; i++)
        found |= fabsf(s->uvs1[2 * i] - 0.25f) < 1e-6f && fabsf(s->uvs1[2 * i + 1] - 0.75f) < 1e-6f;
    CHECK(found);
    CHECK_NEAR(s->bounds_min[0], -1.0);
    CHECK_NEAR(s->bounds_max[0], 12.0);
    CHECK_NEAR(s->bounds_max[1], 12.0);

    /* Camera at parent * (0,0,10) = (10,0,20), looking down -z. */
    CHECK(s->camera.from_file);
    CHECK_NEAR(s->camera.position[0], 10.0);
    CHECK_NEAR(s->camera.position[1], 0.0);
    CHECK_NEAR(s->camera.position[2], 20.0);
    CHECK_NEAR(s->camera.forward[2], -1.0);
    CHECK_NEAR(s->camera.up[1], 1.0);
    CHECK_NEAR(s->camera.yfov, 0.8);

    /* Light at parent * (1,2,3) = (12,4,6), colour times intensity. */
    REQUIRE(s->nlights == 1);
    CHECK(!s->default_light); /* the file's own */
    CHECK_EQ_INT(s->lights[0].kind, RT_LIGHT_POINT);
    CHECK_NEAR(s->lights[0].position[0], 12.0);
    CHECK_NEAR(s->lights[0].position[1], 4.0);
    CHECK_NEAR(s->lights[0].position[2], 6.0);
    CHECK_NEAR(s->lights[0].color[0], 4.0);
    CHECK_NEAR(s->lights[0].color[1], 2.0);
    CHECK_NEAR(s->lights[0].color[2], 1.0);

    REQUIRE(s->material[0] < s->nmaterials);
    const rt_material *m = &s->materials[s->material[0]];
    CHECK_EQ_STR(m->name, "pbr");
    CHECK_NEAR(m->base_color[0], 0.5);
    CHECK_NEAR(m->base_color[1], 0.25);
    CHECK_NEAR(m->base_color[2], 1.0);
    CHECK_NEAR(m->base_color[3], 1.0);
    CHECK_NEAR(m->metallic, 0.3);
    CHECK_NEAR(m->roughness, 0.7);
    CHECK_NEAR(m->emissive[0], 1.0);
    CHECK_NEAR(m->emissive[1], 0.5);
    CHECK_NEAR(m->emissive[2], 0.0);
    CHECK_NEAR(m->normal_scale, 0.9);
    CHECK_NEAR(m->occlusion_strength, 0.6);
    CHECK_NEAR(m->alpha_cutoff, 0.3);
    CHECK(m->double_sided);
    char want[600];
    snprintf(want, sizeof want, "%s/tex/mr.png", tmpdir);
    CHECK_EQ_STR(m->slots[RT_SLOT_METALLIC_ROUGHNESS].filename, want);
    snprintf(want, sizeof want, "%s/normal.png", tmpdir);
    CHECK_EQ_STR(m->slots[RT_SLOT_NORMAL].filename, want);
    snprintf(want, sizeof want, "%s/tex/ao.png", tmpdir);
    CHECK_EQ_STR(m->slots[RT_SLOT_OCCLUSION].filename, want);
    CHECK_EQ_STR(m->slots[RT_SLOT_EMISSIVE].filename, "/abs/emit.png");
    CHECK(m->slots[RT_SLOT_OPACITY].filename == NULL);
    CHECK_EQ_INT(m->slots[RT_SLOT_OCCLUSION].uv, 1);
    CHECK_EQ_INT(m->slots[RT_SLOT_BASE_COLOR].uv, 0);
    CHECK(!m->slots[RT_SLOT_BASE_COLOR].raw);
    CHECK(!m->slots[RT_SLOT_EMISSIVE].raw);
    CHECK(m->slots[RT_SLOT_METALLIC_ROUGHNESS].raw);
    CHECK(m->slots[RT_SLOT_NORMAL].raw);
    CHECK(m->slots[RT_SLOT_OCCLUSION].raw);
    for (int k = 0; k < RT_SLOT_COUNT; k++)
        if (m->slots[k].filename)
            CHECK_EQ_PTR(m->slots[k].name, ustr_intern_cstr(m->slots[k].filename));
    /* KHR_texture_transform, as the file gives it: u' = cos sx u + sin sy
     * v + ox, v' = -sin sx u + cos sy v + oy (offset 0.25, 0.125, rotation
     * 0.5, scale 2, 3), undone from what assimp made of it. */
    const rt_texture_slot *b = &m->slots[RT_SLOT_BASE_COLOR], *nm = &m->slots[RT_SLOT_NORMAL];
    REQUIRE(b->uv_transformed);
    double c = cos(0.5), sn = sin(0.5);
    double want_b[2][3] = {{2 * c, 3 * sn, 0.25}, {-2 * sn, 3 * c, 0.125}};
    double want_n[2][3] = {{1, 0, 0.5}, {0, 1, 0}};
    for (int i = 0; i < 6; i++) {
        CHECK_NEAR(b->uv_xform[i / 3][i % 3], want_b[i / 3][i % 3]);
        CHECK_NEAR(nm->uv_xform[i / 3][i % 3], want_n[i / 3][i % 3]);
    }
    CHECK(nm->uv_transformed);
    CHECK(!m->slots[RT_SLOT_EMISSIVE].uv_transformed);
}

static void
case_gltf(const char *arg)
{
    (void)arg;
    tmp_make();
    write_quad_gltf();
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(tmp_path("quad.gltf"), NULL, &s, err);
    if (r != RT_OK)
        fprintf(stderr, "load: %s\n", err);
    REQUIRE(r == RT_OK && s);
    check_quad_scene(s);
    char want[600];
    snprintf(want, sizeof want, "%s/tex/base.png", tmpdir);
    CHECK_EQ_STR(s->materials[s->material[0]].slots[RT_SLOT_BASE_COLOR].filename, want);
    CHECK_EQ_INT(s->nembedded, 0);
    rt_scene_free(s);
}

static void
case_glb(const char *arg)
{
    (void)arg;
    tmp_make();
    static unsigned char glb[16384];
    size_t               n = quad_glb(glb, sizeof glb);
    file_write(tmp_path("quad.glb"), glb, n);
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(tmp_path("quad.glb"), NULL, &s, err);
    if (r != RT_OK)
        fprintf(stderr, "load: %s\n", err);
    REQUIRE(r == RT_OK && s);
    check_quad_scene(s);
    char want[600];
    snprintf(want, sizeof want, "%s#embedded0.png", tmp_path("quad.glb"));
    REQUIRE(s->nembedded == 1);
    CHECK_EQ_STR(s->embedded[0].name, want);
    CHECK_EQ_INT(s->embedded[0].size, sizeof quad_image);
    CHECK(memcmp(s->embedded[0].data, quad_image, sizeof quad_image) == 0);
    const rt_texture_slot *b = &s->materials[s->material[0]].slots[RT_SLOT_BASE_COLOR];
    CHECK_EQ_STR(b->filename, want);
    CHECK_EQ_PTR(b->name, ustr_intern_cstr(want));
    rt_scene_free(s);
}

/* --- shared test data ------------------------------------------------------ */

static rt_scene *
testdata_load(const char *dir, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(path, NULL, &s, err);
    if (r != RT_OK) {
        fprintf(stderr, "%s: %s\n", path, err);
        CHECK_EQ_INT(r, RT_OK);
        return NULL;
    }
    CHECK(s->ntris > 0);
    check_normals_unit(s);
    for (uint32_t t = 0; t < 3 * s->ntris; t++)
        if (s->indices[t] >= s->nverts) {
            CHECK(s->indices[t] < s->nverts);
            break;
        }
    return s;
}

/* Every slot that names a file names one that exists. */
static int
check_slots_exist(const rt_scene *s)
{
    int n = 0;
    for (uint32_t i = 0; i < s->nmaterials; i++)
        for (int k = 0; k < RT_SLOT_COUNT; k++) {
            const char *f = s->materials[i].slots[k].filename;
            if (!f || strstr(f, "#embedded"))
                continue;
            n++;
            if (!file_exists(f))
                fprintf(stderr, "missing texture: %s\n", f);
            CHECK(file_exists(f));
            CHECK(strchr(f, '\\') == NULL);
        }
    return n;
}

static void
case_testdata(const char *dir)
{
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/scene-fox-glb/Fox.glb", dir ? dir : "");
    if (!dir || !file_exists(probe)) {
        fprintf(stderr, "skipped: no scenes under %s\n", dir ? dir : "(none)");
        exit(SKIP);
    }

    rt_scene *s = testdata_load(dir, "scene-stellarium-testscene/"
                                     "Stellarium-Testscene_withGrid_Bump.obj");
    if (s) {
        CHECK_EQ_INT(s->ntris, 3242);
        CHECK_EQ_INT(check_slots_exist(s), 4); /* 3 map_Kd + 1 map_bump */
        CHECK(!s->camera.from_file);
        rt_scene_free(s);
    }

    s = testdata_load(dir, "scene-fox-glb/Fox.glb");
    if (s) {
        CHECK_EQ_INT(s->ntris, 576);
        REQUIRE(s->nembedded == 1);
        CHECK(s->embedded[0].size > 0);
        CHECK(memcmp(s->embedded[0].data, "\x89PNG", 4) == 0);
        const char *e = strstr(s->embedded[0].name, "Fox.glb#embedded0.png");
        CHECK(e && strcmp(e, "Fox.glb#embedded0.png") == 0);
        bool used = false;
        for (uint32_t i = 0; i < s->nmaterials; i++)
            used |= s->materials[i].slots[RT_SLOT_BASE_COLOR].filename == s->embedded[0].name;
        CHECK(used);
        rt_scene_free(s);
    }

    s = testdata_load(dir, "scene-cge-castle/castle.gltf");
    if (s) {
        CHECK_EQ_INT(s->ntris, 24614); /* instances included */
        CHECK_EQ_INT(check_slots_exist(s), 11);
        CHECK(!s->camera.from_file);
        CHECK_EQ_INT(s->nlights, 1); /* no lights, nothing emissive: the default */
        CHECK(s->default_light);
        rt_scene_free(s);
    }

    s = testdata_load(dir, "scene-cge-example-level/example_level.gltf");
    if (s) {
        CHECK_EQ_INT(s->ntris, 2908);
        CHECK(s->camera.from_file);
        CHECK_NEAR(s->camera.yfov, 0.5033799372418416); /* the file's yfov */
        CHECK_EQ_INT(s->nlights, 6);
        CHECK_EQ_INT(check_slots_exist(s), 6); /* every texture slot still found */
        rt_scene_free(s);
    }

    s = testdata_load(dir, "scene-cge-test-environment/test_environment.gltf");
    if (s) {
        CHECK_EQ_INT(s->ntris, 32282);
        CHECK(s->camera.from_file);
        CHECK_NEAR(s->camera.yfov, 0.39959652046304894); /* no aspectRatio */
        CHECK_EQ_INT(s->nlights, 3);
        CHECK_EQ_INT(check_slots_exist(s), 4);
        rt_scene_free(s);
    }
}

/* The glTF-Validator's damaged GLBs: an error line or a scene, no crash. */
static void
case_validator_glb(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/gltf-validator-glb", dir ? dir : "");
    DIR *d = dir ? opendir(path) : NULL;
    if (!d) {
        fprintf(stderr, "skipped: no %s\n", path);
        exit(SKIP);
    }
    struct dirent *e;
    int            n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".glb") != 0)
            continue;
        char file[2048];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        rt_scene *s = NULL;
        char      err[RT_ERR_LEN];
        rt_result r = rt_scene_load(file, NULL, &s, err);
        n++;
        if (r == RT_OK) {
            CHECK(s && s->ntris > 0);
            rt_scene_free(s);
        } else {
            CHECK(s == NULL);
            CHECK(r == RT_ERR_FORMAT || r == RT_ERR_EMPTY);
            check_err_line(err);
            CHECK(strstr(err, file) == NULL);
        }
    }
    closedir(d);
    CHECK(n >= 28);
}

/* --- bad input ------------------------------------------------------------- */

static void
expect_fail(const char *path, rt_result want, const char *msg)
{
    rt_scene *s = (rt_scene *)&s; /* must come back NULL */
    char      err[RT_ERR_LEN];
    rt_result r = rt_scene_load(path, NULL, &s, err);
    CHECK_EQ_INT(r, want);
    CHECK(s == NULL);
    check_err_line(err);
    if (strchr(msg, '*')) {
        size_t n = (size_t)(strchr(msg, '*') - msg);
        if (strncmp(err, msg, n) != 0)
            RT_CHECK_FAIL_("error \"%s\" does not start with \"%.*s\"", err, (int)n, msg);
    } else {
        CHECK_EQ_STR(err, msg);
    }
    CHECK(strstr(err, path) == NULL);
}

static void
case_missing(const char *arg)
{
    (void)arg;
    tmp_make();
    expect_fail(tmp_path("nope.gltf"), RT_ERR_OPEN, "cannot open: No such file or directory");
}

static void
case_directory(const char *arg)
{
    (void)arg;
    tmp_make();
    expect_fail(tmpdir, RT_ERR_OPEN, "cannot open: Is a directory");
}

static void
case_empty(const char *arg)
{
    (void)arg;
    tmp_make();
    file_write_str(tmp_path("empty.obj"), "");
    expect_fail(tmp_path("empty.obj"), RT_ERR_FORMAT, "not a scene file: empty file");
}

static void
case_not_scene(const char *arg)
{
    (void)arg;
    tmp_make();
    file_write_str(tmp_path("notes.txt"), "These are not the triangles you are looking for.\n");
    expect_fail(tmp_path("notes.txt"), RT_ERR_FORMAT, "not a scene file: *");
}

static void
case_truncated_gltf(const char *arg)
{
    (void)arg;
    tmp_make();
    char *json = write_quad_gltf();
    file_write(tmp_path("cut.gltf"), json, strlen(json) / 2);
    expect_fail(tmp_path("cut.gltf"), RT_ERR_FORMAT, "not a scene file: *");
}

static void
case_truncated_glb(const char *arg)
{
    (void)arg;
    tmp_make();
    static unsigned char glb[16384];
    size_t               n = quad_glb(glb, sizeof glb);
    /* Cut in the JSON, and cut in the BIN chunk. */
    file_write(tmp_path("cut1.glb"), glb, n / 2);
    expect_fail(tmp_path("cut1.glb"), RT_ERR_FORMAT, "not a scene file: *");
    file_write(tmp_path("cut2.glb"), glb, n - 20);
    expect_fail(tmp_path("cut2.glb"), RT_ERR_FORMAT, "not a scene file: *");
}

static void
case_no_triangles(const char *arg)
{
    (void)arg;
    tmp_make();
    file_write_str(tmp_path("points.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\np 1\np 2\np 3\nl 1 2\n");
    expect_fail(tmp_path("points.obj"), RT_ERR_EMPTY, "no triangles: only points and lines");
}

/* Files that crashed or hung assimp (issue 31), each refused in one line
 * before it could: the PLY and glTF checks of import_check.h, the corner
 * check before Triangulate, the importer chosen by the bytes. */
#define PLY_HEAD                                                                                   \
    "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"                \
    "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
#define PLY_NO_END  PLY_HEAD "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"
#define NO_END_SAID "not a scene file: a PLY header with no end_header line in its first 64 KiB"

static const struct {
    const char *name, *text;
    rt_result   want;
    const char *msg;
} hostile[] = {
    {"face0.ply", PLY_HEAD "end_header\n0 0 0\n1 0 0\n0 1 0\n0\n", RT_ERR_FORMAT,
     "not a scene file: face 0 of mesh 0 has no corners"},
    {"noend.ply", PLY_NO_END, RT_ERR_FORMAT, NO_END_SAID},
    /* The same PLY under a name no importer claims: the bytes choose. */
    {"noend.scene", PLY_NO_END, RT_ERR_FORMAT, NO_END_SAID},
    {"many.ply",
     "ply\nformat binary_little_endian 1.0\nelement vertex 1000000\n"
     "property float x\nproperty float y\nproperty float z\nend_header\n0000",
     RT_ERR_FORMAT,
     "not a scene file: a PLY header that declares 1000000 vertex elements (with the rest, at "
     "least 12000000 bytes), but 4 bytes follow it"},
    {"v1.gltf", "{\"asset\": {\"version\": \"1.0\"}, \"meshes\": {}}", RT_ERR_FORMAT,
     "not a scene file: glTF version 1.0; render reads glTF 2.0"},
    {"huge.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"x\": 1e309}", RT_ERR_FORMAT,
     "not a scene file: its glTF JSON has a number beyond a double's range (over 1e308)"},
    /* A sparse accessor of 1000 values in a 12-byte buffer view. */
    {"sparse.gltf",
     "{\"asset\": {\"version\": \"2.0\"}, \"accessors\": [{\"count\": 2000, "
     "\"componentType\": 5126, \"type\": \"VEC3\", \"sparse\": {\"count\": 1000, "
     "\"indices\": {\"bufferView\": 0, \"componentType\": 5125}, \"values\": "
     "{\"bufferView\": 0}}}], \"bufferViews\": [{\"buffer\": 0, \"byteLength\": 12}], "
     "\"buffers\": [{\"byteLength\": 12, \"uri\": "
     "\"data:application/octet-stream;base64,AAAAAAAAAAAAAAAA\"}]}",
     RT_ERR_FORMAT,
     "not a scene file: glTF accessor 0 is sparse, and its indices or values are not all in a "
     "buffer view"},
    /* A sparse accessor whose own 3 VEC4 (48 bytes) lie in a 36-byte view
     * (assimp copied them past its end; found by fuzz-import). */
    {"sparse-base.gltf",
     "{\"asset\": {\"version\": \"2.0\"}, \"accessors\": [{\"bufferView\": 0, \"count\": 3, "
     "\"componentType\": 5126, \"type\": \"VEC4\", \"sparse\": {\"count\": 1, "
     "\"indices\": {\"bufferView\": 1, \"componentType\": 5121}, \"values\": "
     "{\"bufferView\": 0}}}], \"bufferViews\": [{\"buffer\": 0, \"byteLength\": 36}, "
     "{\"buffer\": 0, \"byteLength\": 1}], \"buffers\": [{\"byteLength\": 36, \"uri\": "
     "\"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA\"}]}",
     RT_ERR_FORMAT,
     "not a scene file: glTF accessor 0's elements run past its buffer view, or the view past "
     "its buffer"},
    /* A plain accessor in a view whose byteOffset is 2^64 - 8: assimp's own
     * check wrapped around 2^64 and read 36 bytes before the buffer (an
     * audit, AddressSanitizer); and the same offset on the accessor. */
    {"view-wrap.gltf",
     "{\"asset\": {\"version\": \"2.0\"}, \"accessors\": [{\"bufferView\": 0, \"count\": 3, "
     "\"componentType\": 5126, \"type\": \"VEC3\"}], \"bufferViews\": [{\"buffer\": 0, "
     "\"byteOffset\": 18446744073709551608, \"byteLength\": 36}], \"buffers\": [{\"byteLength\": "
     "36, \"uri\": "
     "\"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8"
     "AAAAA\"}]}",
     RT_ERR_FORMAT, "not a scene file: glTF buffer view 0 runs past its buffer"},
    /* The same offset on an image's view, which no accessor reads (a
     * review: assimp read before the buffer as for an accessor's). */
    {"image-view-wrap.gltf",
     "{\"asset\": {\"version\": \"2.0\"}, \"images\": [{\"bufferView\": 0, \"mimeType\": "
     "\"image/png\"}], \"textures\": [{\"source\": 0}], \"bufferViews\": [{\"buffer\": 0, "
     "\"byteOffset\": 18446744073709551608, \"byteLength\": 36}], \"buffers\": [{\"byteLength\": "
     "36, \"uri\": "
     "\"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8"
     "AAAAA\"}]}",
     RT_ERR_FORMAT, "not a scene file: glTF buffer view 0 runs past its buffer"},
    /* "scene": 1e300, once cast to an int unchecked (undefined; found by
     * fuzz-import under clang's UBSan, and by the ASan build's
     * float-cast-overflow): assimp refuses it. */
    {"scene-huge.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"scene\": 1e300, \"scenes\": [{}]}",
     RT_ERR_FORMAT,
     "not a scene file: Member \"scene\" was not of type \"uint\" when reading the document"},
    {"accessor-wrap.gltf",
     "{\"asset\": {\"version\": \"2.0\"}, \"accessors\": [{\"bufferView\": 0, \"byteOffset\": "
     "18446744073709551608, \"count\": 3, \"componentType\": 5126, \"type\": \"VEC3\"}], "
     "\"bufferViews\": [{\"buffer\": 0, \"byteLength\": 36}], \"buffers\": [{\"byteLength\": 36, "
     "\"uri\": \"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8"
     "AAAAA\"}]}",
     RT_ERR_FORMAT,
     "not a scene file: glTF accessor 0's elements run past its buffer view, or the view past "
     "its buffer"},
    {"nan.obj", "v nan nan nan\nv nan 0 0\nv inf 0 0\nf 1 2 3\n", RT_ERR_EMPTY,
     "no triangles: no vertex position is a number (NaN or infinite)"},
    /* An ASE file (assimp's ASE importer crashed on mutations of one):
     * never read as ASE, whatever its name. */
    {"x.ase", "*3DSMAX_ASCIIEXPORT 200\n*GEOMOBJECT {\n}\n", RT_ERR_FORMAT, "not a scene file: *"},
};

static void
case_hostile_formats(const char *arg)
{
    (void)arg;
    tmp_make();
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        file_write_str(tmp_path(hostile[i].name), hostile[i].text);
        expect_fail(tmp_path(hostile[i].name), hostile[i].want, hostile[i].msg);
    }
    /* The binary twin of face0.ply: three vertices of zeros, a face of 0. */
    static const char head[] = "ply\nformat binary_little_endian 1.0\nelement vertex 3\n"
                               "property float x\nproperty float y\nproperty float z\n"
                               "element face 1\nproperty list uchar int vertex_indices\n"
                               "end_header\n";
    char              bin[sizeof head - 1 + 37] = {0};
    memcpy(bin, head, sizeof head - 1);
    file_write(tmp_path("face0b.ply"), bin, sizeof bin);
    expect_fail(tmp_path("face0b.ply"), RT_ERR_FORMAT,
                "not a scene file: face 0 of mesh 0 has no corners");
}

/* A binary PLY whose 800 million vertices fit its size (a 10 GB sparse
 * file, which holds no blocks): import_check.h passes it, and assimp's
 * reservation for them meets the import's memory budget
 * (import_budget.h). The budget was the process's only while the import
 * ran: the data limit is as it was after, and a block larger than the
 * budget can be had. */
static void
case_import_budget(const char *arg)
{
    (void)arg;
#if RT_SANITIZED
    printf("skipped: no import budget under the sanitizers\n");
    exit(77);
#endif
    tmp_make();
    static const char head[] = "ply\nformat binary_little_endian 1.0\nelement vertex 800000000\n"
                               "property float x\nproperty float y\nproperty float z\n"
                               "end_header\n";
    file_write_str(tmp_path("huge.ply"), head);
    REQUIRE(truncate(tmp_path("huge.ply"), (off_t)10 << 30) == 0);
    struct rlimit before, after;
    REQUIRE(getrlimit(RLIMIT_DATA, &before) == 0);
    expect_fail(tmp_path("huge.ply"), RT_ERR_NOMEM,
                "too large for its size: the import ran out of its memory budget of 256.*");
    REQUIRE(getrlimit(RLIMIT_DATA, &after) == 0);
    CHECK(after.rlim_cur == before.rlim_cur && after.rlim_max == before.rlim_max);
    void *volatile big = malloc((size_t)512 << 20);
    CHECK(big != NULL);
    free(big);
}

static void
case_bad_args(const char *arg)
{
    (void)arg;
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    CHECK_EQ_INT(rt_scene_load(NULL, NULL, &s, err), RT_ERR_INVALID);
    CHECK(s == NULL);
    CHECK_EQ_INT(rt_scene_load("", NULL, &s, err), RT_ERR_INVALID);
    CHECK_EQ_INT(rt_scene_load("x.gltf", NULL, NULL, err), RT_ERR_INVALID);
    rt_scene_free(NULL);
    for (int r = RT_OK; r <= RT_ERR_INVALID; r++)
        CHECK(rt_result_str((rt_result)r)[0] != '\0');
}

/* rt_paths_allow_fd() judges the file open, by the kernel's name for it:
 * inside the folder (directly or through a link from outside) yes; outside
 * (directly or through a link from inside) no; a pipe, which has no path,
 * no (it fails closed). */
static void
case_paths_fd(const char *arg)
{
    (void)arg;
    tmp_make();
    REQUIRE(mkdir(tmp_path("in"), 0700) == 0 && mkdir(tmp_path("out"), 0700) == 0);
    const char *in = tmp_path("in/a.png"), *out = tmp_path("out/b.png");
    FILE       *f = fopen(in, "w");
    REQUIRE(f && fclose(f) == 0);
    REQUIRE((f = fopen(out, "w")) && fclose(f) == 0);
    REQUIRE(symlink(out, tmp_path("in/link-out.png")) == 0);
    REQUIRE(symlink(in, tmp_path("out/link-in.png")) == 0);
    const char *dirs[] = {tmp_path("in")};
    rt_paths   *p;
    REQUIRE(rt_paths_create(dirs, 1, &p) == RT_OK);
    struct {
        const char *name;
        bool        allowed;
    } cases[] = {{"in/a.png", true},
                 {"out/link-in.png", true},
                 {"out/b.png", false},
                 {"in/link-out.png", false},
                 {"in/../out/b.png", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = open(tmp_path(cases[i].name), O_RDONLY);
        REQUIRE(fd >= 0);
        if (rt_paths_allow_fd(p, fd) != cases[i].allowed)
            RT_CHECK_FAIL_("%s: allowed %d, want %d", cases[i].name, !cases[i].allowed,
                           cases[i].allowed);
        CHECK(rt_paths_allow_fd(NULL, fd)); /* no restriction */
        close(fd);
    }
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    CHECK(!rt_paths_allow_fd(p, pipe_fds[0]));
    CHECK(!rt_paths_allow_fd(p, 9999)); /* not open */
    close(pipe_fds[0]), close(pipe_fds[1]);
    rt_paths_destroy(p);
    REQUIRE(unlink(tmp_path("in/a.png")) == 0 && unlink(tmp_path("in/link-out.png")) == 0 &&
            rmdir(tmp_path("in")) == 0);
    REQUIRE(unlink(tmp_path("out/b.png")) == 0 && unlink(tmp_path("out/link-in.png")) == 0 &&
            rmdir(tmp_path("out")) == 0);
}

/* The scene in the test's folder under `name`, its names interned in
 * *strings (yours to destroy after the scene). */
static rt_scene *
tmp_scene(const char *name, ustr_table **strings)
{
    REQUIRE(ustr_table_create(NULL, strings) == USTR_OK);
    rt_scene *s = NULL;
    char      err[RT_ERR_LEN];
    REQUIRE(rt_scene_load(tmp_path(name), *strings, &s, err) == RT_OK);
    return s;
}

/* An OBJ of n small triangles near the origin and one at x = 1e6, its
 * names interned in *strings (yours to destroy after the scene). */
static rt_scene *
outlier_obj(unsigned n, ustr_table **strings)
{
    FILE *f = fopen(tmp_path("outlier.obj"), "w");
    REQUIRE(f);
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "v %u 0 0\nv %u.5 0 0\nv %u 1 0\nf -3 -2 -1\n", i % 10, i % 10, i % 10);
    fprintf(f, "v 1e6 0 0\nv 1000001 0 0\nv 1e6 1 0\nf -3 -2 -1\n");
    REQUIRE(fclose(f) == 0);
    return tmp_scene("outlier.obj", strings);
}

static float
dot3f(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The automatic camera frames the 2nd..98th percentile of the corners: a
 * far outlier drops out once there are enough corners (not with 10
 * triangles, 33 corners). Each view looks along its axis from outside that
 * box, with the default light re-aimed from behind the new camera, and a
 * file's camera stays unless a view is asked for. */
static void
case_framing(const char *arg)
{
    (void)arg;
    float       lo[3], hi[3];
    ustr_table *strings;
    rt_scene   *s = outlier_obj(10, &strings);
    rt_scene_frame_bounds(s, lo, hi);
    CHECK_NEAR(hi[0], 1e6 + 1);
    rt_scene_free(s);
    ustr_table_destroy(strings);

    s = outlier_obj(200, &strings);
    rt_scene_frame_bounds(s, lo, hi);
    CHECK_NEAR(lo[0], 0.0);
    CHECK_NEAR(hi[0], 9.5);
    CHECK_NEAR(hi[1], 1.0);
    CHECK(!s->camera.from_file);
    CHECK(s->camera.position[0] < 100); /* looking at the triangles, not at 1e6 */
    static const struct {
        rt_up_axis up;
        rt_view    view;
        float      forward[3], up_vec[3];
    } views[] = {{RT_UP_Y, RT_VIEW_FRONT, {0, 0, -1}, {0, 1, 0}},
                 {RT_UP_Y, RT_VIEW_TOP, {0, -1, 0}, {0, 0, -1}},
                 {RT_UP_Y, RT_VIEW_LEFT, {1, 0, 0}, {0, 1, 0}},
                 {RT_UP_Z, RT_VIEW_FRONT, {0, 1, 0}, {0, 0, 1}},
                 {RT_UP_Z, RT_VIEW_BACK, {0, -1, 0}, {0, 0, 1}},
                 {RT_UP_X, RT_VIEW_BOTTOM, {1, 0, 0}, {0, 0, 1}}};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        rt_scene_frame(s, views[i].up, views[i].view);
        const rt_camera *c = &s->camera;
        CHECK_NEAR(dot3f(c->forward, views[i].forward), 1.0);
        CHECK_NEAR(dot3f(c->up, views[i].up_vec), 1.0);
        /* Outside the box, on the side it looks from. */
        for (int k = 0; k < 3; k++)
            if (views[i].forward[k] != 0)
                CHECK(views[i].forward[k] > 0 ? c->position[k] < lo[k] : c->position[k] > hi[k]);
        REQUIRE(s->default_light && s->nlights == 1);
        CHECK(dot3f(s->lights[0].direction, c->forward) > 0.2f);
        CHECK(dot3f(s->lights[0].direction, c->up) < -0.5f);
    }
    /* A strip flat along z, as a level seen z-up: from the front (-y),
     * turned right (+x) or not, from 30 to 75 degrees above. */
    rt_scene_frame(s, RT_UP_Z, RT_VIEW_AUTO);
    CHECK(s->camera.forward[0] <= 0 && s->camera.forward[1] > 0.25f);
    CHECK(s->camera.forward[2] <= -0.49f && s->camera.forward[2] >= -0.97f);
    CHECK_NEAR(dot3f(s->camera.forward, s->camera.up), 0.0); /* orthonormal */
    CHECK_NEAR(dot3f(s->camera.up, s->camera.up), 1.0);
    CHECK(s->camera.up[2] > 0.25f);
    /* A file's camera wins over RT_VIEW_AUTO, not over another view. */
    s->camera.from_file = true;
    s->camera.position[2] = 42;
    rt_scene_frame(s, RT_UP_Z, RT_VIEW_AUTO);
    CHECK(s->camera.from_file && s->camera.position[2] == 42);
    rt_scene_frame(s, RT_UP_Y, RT_VIEW_FRONT);
    CHECK(!s->camera.from_file);
    rt_scene_free(s);
    ustr_table_destroy(strings);
}

/* A scene from OBJ text, its names interned in *strings. */
static rt_scene *
obj_scene(const char *text, ustr_table **strings)
{
    FILE *f = fopen(tmp_path("scene.obj"), "w");
    REQUIRE(f && fputs(text, f) >= 0 && fclose(f) == 0);
    return tmp_scene("scene.obj", strings);
}

/* What a camera sees: a square of side 2 facing a camera that fits its
 * height to the image covers 3/4 of the 4:3 grid; one corner out of the
 * box, or behind the camera, and it counts for nothing. */
static void
case_view_coverage(const char *arg)
{
    (void)arg;
    ustr_table *strings;
    rt_scene   *s = obj_scene("v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3 4\n", &strings);
    double      t = 0.5;
    rt__pinhole cam = {{0, 0, 1 / t}, {0, 0, -1}, {0, 1, 0}, t, 4.0 / 3};
    float       lo[3] = {-1, -1, 0}, hi[3] = {1, 1, 0};
    CHECK_NEAR(rt__view_coverage(s, lo, hi, &cam), 0.75);
    cam.position[2] = 2 / t; /* twice as far: a quarter of that, to a cell */
    CHECK(fabs(rt__view_coverage(s, lo, hi, &cam) - 0.75 / 4) < 0.01);
    cam.position[0] = 1000; /* looking past it */
    CHECK(rt__view_coverage(s, lo, hi, &cam) == 0);
    cam.position[0] = 0, cam.position[2] = -1; /* behind the camera */
    CHECK(rt__view_coverage(s, lo, hi, &cam) == 0);
    cam.position[2] = 1 / t, hi[0] = 0.5; /* two corners out of the box */
    CHECK(rt__view_coverage(s, lo, hi, &cam) == 0);
    rt_scene_free(s);
    ustr_table_destroy(strings);
}

/* The automatic view of an object stays three-quarter, 30 degrees up; a
 * level (a floor of 40x40 ringed by walls 2 high) is seen from higher,
 * so that it fills at least 0.4 of the image where 30 degrees left it a
 * band across the middle. */
static void
case_framing_level(const char *arg)
{
    (void)arg;
    ustr_table *strings;
    rt_scene   *s = obj_scene("v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\n"
                                "v -1 3 -1\nv 1 3 -1\nv 1 3 1\nv -1 3 1\n"
                                "f 1 2 3 4\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n",
                              &strings);
    CHECK_NEAR(s->camera.forward[1], -0.5); /* a tower: sin 30 degrees */
    rt_scene_free(s);
    ustr_table_destroy(strings);
    s = obj_scene("v -20 0 -20\nv 20 0 -20\nv 20 0 20\nv -20 0 20\n"
                  "v -20 2 -20\nv 20 2 -20\nv 20 2 20\nv -20 2 20\n"
                  "f 1 2 3 4\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n",
                  &strings);
    CHECK(s->camera.forward[1] < -0.6f); /* higher than 30 degrees */
    float       lo[3] = {-20, 0, -20}, hi[3] = {20, 2, 20};
    rt__pinhole cam = {.tan_half = tan(s->camera.yfov / 2), .aspect = 4.0 / 3};
    for (int k = 0; k < 3; k++)
        cam.position[k] = s->camera.position[k], cam.forward[k] = s->camera.forward[k],
        cam.up[k] = s->camera.up[k];
    CHECK(rt__view_coverage(s, lo, hi, &cam) >= 0.4);
    rt_scene_free(s);
    ustr_table_destroy(strings);
}

static const rt_test_case cases[] = {
    {"framing", case_framing},
    {"framing_level", case_framing_level},
    {"view_coverage", case_view_coverage},
    {"obj", case_obj},
    {"ply", case_ply},
    {"join", case_join},
    {"gltf", case_gltf},
    {"glb", case_glb},
    {"testdata", case_testdata},
    {"validator_glb", case_validator_glb},
    {"missing", case_missing},
    {"directory", case_directory},
    {"empty", case_empty},
    {"not_scene", case_not_scene},
    {"truncated_gltf", case_truncated_gltf},
    {"truncated_glb", case_truncated_glb},
    {"no_triangles", case_no_triangles},
    {"hostile_formats", case_hostile_formats},
    {"import_budget", case_import_budget},
    {"bad_args", case_bad_args},
    {"paths_fd", case_paths_fd},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return rt_test_main(cases, argc, argv);
}
