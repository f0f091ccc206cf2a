/* render's own checks on a scene file's bytes (import_check.h). */
#include "import_check.h"
#include "tex_image.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint32_t
le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* len bytes of fd from off, NUL-terminated, malloc()ed; NULL with err. */
static char *
read_span(int fd, uint64_t off, uint64_t len, rt_result *r, char err[RT_ERR_LEN])
{
    char *buf = len < SIZE_MAX ? malloc((size_t)len + 1) : NULL;
    if (!buf) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        *r = RT_ERR_NOMEM;
        return NULL;
    }
    for (uint64_t got = 0; got < len;) {
        ssize_t n = pread(fd, buf + got, (size_t)(len - got), (off_t)(off + got));
        if (n <= 0) {
            snprintf(err, RT_ERR_LEN, "cannot read: %s", n < 0 ? strerror(errno) : "file shrank");
            *r = RT_ERR_OPEN;
            free(buf);
            return NULL;
        }
        got += (uint64_t)n;
    }
    buf[len] = '\0';
    return buf;
}

/* ---- PLY: the header's promises against the bytes after it ---- */

/* The fewest bytes one value of PLY type `t` takes: its size in a binary
 * file; in an ASCII one, a digit and a separator. 0: not a PLY type. */
static unsigned
ply_type_bytes(const char *t, bool ascii)
{
    static const struct {
        const char *name;
        unsigned    size;
    } types[] = {{"char", 1},  {"uchar", 1},   {"int8", 1},   {"uint8", 1},
                 {"short", 2}, {"ushort", 2},  {"int16", 2},  {"uint16", 2},
                 {"int", 4},   {"uint", 4},    {"int32", 4},  {"uint32", 4},
                 {"float", 4}, {"float32", 4}, {"double", 8}, {"float64", 8}};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(t, types[i].name) == 0)
            return ascii ? 2 : types[i].size;
    return 0;
}

/* The fewest bytes the header's elements take, summed as the lines are
 * read: each element's count times its properties' least size (a list:
 * its count alone). Saturates at UINT64_MAX. */
typedef struct ply_need {
    bool     ascii;
    uint64_t total, count, per; /* the element being read: its count, its bytes per item */
    char     name[32];
    uint64_t name_count; /* the largest element, for the message */
    char     big[32];
} ply_need;

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void
ply_element_end(ply_need *p)
{
    uint64_t bytes = p->per && p->count > UINT64_MAX / p->per ? UINT64_MAX : p->count * p->per;
    p->total = sat_add(p->total, bytes);
    if (p->count >= p->name_count)
        p->name_count = p->count, memcpy(p->big, p->name, sizeof p->big);
    p->count = p->per = 0;
}

/* The next word of a header line; NULL at its end. */
static char *
ply_word(char **save)
{
    return strtok_r(NULL, " \t\r", save);
}

/* One header line, counted; false when it is not one PLY allows, in the
 * shape it allows: "format F V", "element NAME COUNT", "property TYPE
 * NAME", "property list TYPE TYPE NAME", a comment. (assimp leaked, or
 * worse, on a list whose item type was missing.) */
static bool
ply_line(ply_need *p, char *line)
{
    char *save = NULL, *word = strtok_r(line, " \t\r", &save);
    if (!word || strcmp(word, "comment") == 0 || strcmp(word, "obj_info") == 0 ||
        strcmp(word, "ply") == 0)
        return true;
    if (strcmp(word, "format") == 0) {
        char *f = ply_word(&save);
        p->ascii = f && strcmp(f, "ascii") == 0;
        return f && ply_word(&save) && !ply_word(&save);
    }
    if (strcmp(word, "element") == 0) {
        ply_element_end(p);
        char *name = ply_word(&save), *n = ply_word(&save), *end = NULL;
        tex_name_printable(p->name, sizeof p->name, name ? name : "?");
        p->count = n ? strtoull(n, &end, 10) : 0;
        return n && *n >= '0' && *n <= '9' && !*end && !ply_word(&save);
    }
    if (strcmp(word, "property") != 0)
        return false;
    char    *t = ply_word(&save);
    unsigned size = t ? ply_type_bytes(t, p->ascii) : 0;
    if (t && strcmp(t, "list") == 0) { /* a list: its count's type, then its items' */
        t = ply_word(&save);
        size = t ? ply_type_bytes(t, p->ascii) : 0;
        t = ply_word(&save);
        size = t && ply_type_bytes(t, p->ascii) ? size : 0;
    }
    p->per += size;
    return size && ply_word(&save) && !ply_word(&save);
}

static rt_result
ply_check(int fd, uint64_t size, char err[RT_ERR_LEN])
{
    rt_result r = RT_OK;
    uint64_t  len = size < RT_PLY_MAX_HEADER ? size : RT_PLY_MAX_HEADER;
    char     *head = read_span(fd, 0, len, &r, err);
    if (!head)
        return r;
    char *end = strstr(head, "\nend_header");
    char *data = end ? end + strlen("\nend_header") : NULL;
    if (data && *data == '\r')
        data++;
    if (!data || *data != '\n') {
        snprintf(err, RT_ERR_LEN,
                 "not a scene file: a PLY header with no end_header line in its first %d KiB",
                 RT_PLY_MAX_HEADER >> 10);
        free(head);
        return RT_ERR_FORMAT;
    }
    uint64_t after = size - (uint64_t)(data + 1 - head);
    *end = '\0';
    ply_need p = {.ascii = false};
    char    *save = NULL, shown[64] = "";
    for (char *line = strtok_r(head, "\n", &save); line && !shown[0];
         line = strtok_r(NULL, "\n", &save)) {
        char copy[64];
        snprintf(copy, sizeof copy, "%s", line);
        if (!ply_line(&p, line))
            tex_name_printable(shown, sizeof shown, copy);
    }
    ply_element_end(&p);
    if (shown[0]) {
        snprintf(err, RT_ERR_LEN, "not a scene file: a PLY header line render does not read: %s",
                 shown);
        r = RT_ERR_FORMAT;
    } else if (p.total > after) {
        snprintf(err, RT_ERR_LEN,
                 "not a scene file: a PLY header that declares %llu %s elements (with the rest, "
                 "at least %llu bytes), but %llu bytes follow it",
                 (unsigned long long)p.name_count, p.big, (unsigned long long)p.total,
                 (unsigned long long)after);
        r = RT_ERR_FORMAT;
    }
    free(head);
    return r;
}

/* ---- glTF: what the JSON says of its buffers ---- */

/* The members the checks read; a missing one is `dflt`. False when the
 * member is there but not a whole number in 0..2^53. */
static bool
member_u64(const cJSON *o, const char *key, uint64_t dflt, uint64_t *out)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = dflt;
    if (!m)
        return true;
    double v = m->valuedouble;
    if (!cJSON_IsNumber(m) || !(v >= 0 && v <= 9007199254740992.0) || v != (double)(uint64_t)v)
        return false;
    *out = (uint64_t)v;
    return true;
}

/* A number no double holds (1e309 parses as infinity): assimp's JSON
 * reader refuses the file with "No suitable reader found". */
static bool
has_huge_number(const cJSON *j)
{
    for (; j; j = j->next)
        if ((cJSON_IsNumber(j) && !(j->valuedouble - j->valuedouble == 0)) ||
            has_huge_number(j->child)) /* depth: cJSON parses at most 1000 levels */
            return true;
    return false;
}

/* Bytes of one element of an accessor; 0 where type or componentType is
 * not glTF's (assimp refuses those itself). */
static uint64_t
element_bytes(const cJSON *acc)
{
    static const struct {
        const char *name;
        unsigned    n;
    } types[] = {{"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4},
                 {"MAT2", 4},   {"MAT3", 9}, {"MAT4", 16}};
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(acc, "type"));
    uint64_t    ct, comps = 0;
    for (size_t i = 0; t && i < sizeof types / sizeof *types; i++)
        if (strcmp(t, types[i].name) == 0)
            comps = types[i].n;
    if (!member_u64(acc, "componentType", 0, &ct))
        return 0;
    uint64_t size = ct == 5120 || ct == 5121   ? 1
                    : ct == 5122 || ct == 5123 ? 2
                    : ct == 5125 || ct == 5126 ? 4
                                               : 0;
    return comps * size;
}

typedef struct gltf_doc {
    const cJSON *views, *buffers;
    bool         glb; /* buffer 0 may be the GLB's binary chunk, with no uri */
    uint64_t     budget;
} gltf_doc;

/* The buffer of buffer view v, if v names a view; NULL if not. *has_data:
 * whether that buffer holds data (a uri, or a GLB's binary chunk). */
static const cJSON *
view_buffer(const gltf_doc *d, uint64_t v, bool *has_data)
{
    const cJSON *view = v < INT32_MAX ? cJSON_GetArrayItem(d->views, (int)v) : NULL;
    uint64_t     b;
    if (!cJSON_IsObject(view) || !member_u64(view, "buffer", UINT64_MAX, &b))
        return NULL;
    const cJSON *buf = b < INT32_MAX ? cJSON_GetArrayItem(d->buffers, (int)b) : NULL;
    *has_data = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(buf, "uri")) || (d->glb && b == 0);
    return cJSON_IsObject(buf) ? buf : NULL;
}

/* Buffer view v's length, if v names one whose buffer holds data and
 * which lies inside it. */
static bool
view_length(const gltf_doc *d, uint64_t v, uint64_t *len)
{
    const cJSON *view = v < INT32_MAX ? cJSON_GetArrayItem(d->views, (int)v) : NULL;
    bool         has_data = false;
    const cJSON *buf = view_buffer(d, v, &has_data);
    uint64_t     off, blen;
    return buf && has_data && member_u64(view, "byteOffset", 0, &off) &&
           member_u64(view, "byteLength", 0, len) && member_u64(buf, "byteLength", 0, &blen) &&
           off <= blen && *len <= blen - off;
}

/* One side of a sparse accessor (its "indices" or "values"): count items
 * of `item` bytes from byteOffset in a buffer view that holds them. */
static bool
sparse_side_fits(const gltf_doc *d, const cJSON *side, uint64_t count, uint64_t item)
{
    uint64_t v, off, len;
    if (!cJSON_IsObject(side) || !member_u64(side, "bufferView", UINT64_MAX, &v) ||
        !member_u64(side, "byteOffset", 0, &off) || !view_length(d, v, &len))
        return false;
    return item && count <= UINT64_MAX / item && off <= len && count * item <= len - off;
}

static bool
sparse_fits(const gltf_doc *d, const cJSON *acc, const cJSON *sparse)
{
    uint64_t     count, total, ct;
    const cJSON *ix = cJSON_GetObjectItemCaseSensitive(sparse, "indices");
    if (!member_u64(sparse, "count", UINT64_MAX, &count) || !member_u64(acc, "count", 0, &total) ||
        count == 0 || count > total || !member_u64(ix, "componentType", 0, &ct))
        return false;
    uint64_t isize = ct == 5121 ? 1 : ct == 5123 ? 2 : ct == 5125 ? 4 : 0;
    return sparse_side_fits(d, ix, count, isize) &&
           sparse_side_fits(d, cJSON_GetObjectItemCaseSensitive(sparse, "values"), count,
                            element_bytes(acc));
}

/* An accessor's own elements (count of them, byteStride apart where its
 * view says) lie inside its buffer view, and the view inside its buffer.
 * Assimp checks this itself, but not under a sparse accessor, whose base
 * elements it copied past the view's end (found by fuzz-import), nor where
 * an offset wraps its sums around 2^64 (a byteOffset of 2^64 - 8 read 36
 * bytes before the buffer: an audit with AddressSanitizer). */
static bool
base_fits(const gltf_doc *d, const cJSON *acc, uint64_t esize)
{
    uint64_t v, off, len, count, stride;
    if (!cJSON_GetObjectItemCaseSensitive(acc, "bufferView"))
        return true; /* none: zeros, made up (the budget below) */
    if (!member_u64(acc, "bufferView", UINT64_MAX, &v))
        return false;
    const cJSON *view = v < INT32_MAX ? cJSON_GetArrayItem(d->views, (int)v) : NULL;
    if (!view_length(d, v, &len) || !member_u64(acc, "byteOffset", 0, &off) ||
        !member_u64(acc, "count", 0, &count) || !member_u64(view, "byteStride", esize, &stride))
        return false;
    if (count == 0 || esize == 0)
        return true; /* nothing to read, or assimp refuses the type */
    stride = stride > esize ? stride : esize;
    return off <= len && count - 1 <= (len - off) / stride &&
           (count - 1) * stride + esize <= len - off;
}

/* View v lies inside its buffer, where that buffer holds data (a view of
 * none, or of an extension's fallback buffer, assimp refuses itself). Every
 * view, not only those of accessors: an image's view of byteOffset
 * 2^64 - 8 made assimp read before the buffer as an accessor's did. */
static rt_result
view_check(const gltf_doc *d, int v, char err[RT_ERR_LEN])
{
    bool     has_data = false;
    uint64_t len;
    if (view_buffer(d, (uint64_t)v, &has_data) && has_data && !view_length(d, (uint64_t)v, &len)) {
        snprintf(err, RT_ERR_LEN, "not a scene file: glTF buffer view %d runs past its buffer", v);
        return RT_ERR_FORMAT;
    }
    return RT_OK;
}

/* Accessor i's data is in the file, or small enough to make up. */
static rt_result
accessor_check(const gltf_doc *d, const cJSON *acc, int i, char err[RT_ERR_LEN])
{
    uint64_t     count, v, esize = element_bytes(acc);
    const cJSON *sparse = cJSON_GetObjectItemCaseSensitive(acc, "sparse");
    /* A view that is none, or whose buffer has no data (an extension's
     * fallback buffer), assimp refuses, saying why: left to it. */
    bool has_data = false;
    bool checked = sparse || (member_u64(acc, "bufferView", UINT64_MAX, &v) &&
                              view_buffer(d, v, &has_data) && has_data);
    if (checked && !base_fits(d, acc, esize)) {
        snprintf(err, RT_ERR_LEN,
                 "not a scene file: glTF accessor %d's elements run past its buffer view, or "
                 "the view past its buffer",
                 i);
        return RT_ERR_FORMAT;
    }
    if (sparse && !sparse_fits(d, acc, sparse)) {
        snprintf(err, RT_ERR_LEN,
                 "not a scene file: glTF accessor %d is sparse, and its indices or values are "
                 "not all in a buffer view",
                 i);
        return RT_ERR_FORMAT;
    }
    if (!cJSON_GetObjectItemCaseSensitive(acc, "bufferView") &&
        member_u64(acc, "count", 0, &count) && esize && count > d->budget / esize) {
        snprintf(err, RT_ERR_LEN,
                 "too large for its size: accessor %d declares %llu MiB of data that is not in "
                 "the file, over the import's budget of %llu MiB",
                 i, (unsigned long long)(count * esize >> 20),
                 (unsigned long long)(d->budget >> 20));
        return RT_ERR_NOMEM;
    }
    return RT_OK;
}

/* materials[m].extensions.EXT.KEY for each m: an array of them (NAN where
 * absent or not a number >= 0) in *out, of *n; NULL when no material has
 * one. False when memory runs out. */
static bool
material_factors(const cJSON *root, const char *ext, const char *key, float **out, uint32_t *n)
{
    const cJSON *mats = cJSON_GetObjectItemCaseSensitive(root, "materials");
    int          count = cJSON_IsArray(mats) ? cJSON_GetArraySize(mats) : 0, m = 0;
    for (const cJSON *mat = count ? mats->child : NULL; mat; mat = mat->next, m++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mat, "extensions"),
                                             ext),
            key);
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 1e30))
            continue;
        if (!*out) {
            if (!(*out = malloc((size_t)count * sizeof **out)))
                return false;
            for (int i = 0; i < count; i++)
                (*out)[i] = NAN;
            *n = (uint32_t)count;
        }
        (*out)[m] = (float)v->valuedouble;
    }
    return true;
}

/* The strings of the top-level array `key`, whole and printable, ", "
 * between them, into out (RT_ERR_LEN bytes; ends at the last whole name
 * that fits). */
static void
name_list(const cJSON *root, const char *key, char out[RT_ERR_LEN])
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, key);
    out[0] = '\0';
    for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e; e = e->next) {
        char   shown[RT_ERR_LEN];
        size_t n = strlen(out);
        if (!cJSON_IsString(e))
            continue;
        tex_name_printable(shown, sizeof shown, e->valuestring);
        if (n + strlen(shown) + 3 > RT_ERR_LEN)
            break;
        snprintf(out + n, RT_ERR_LEN - n, "%s%s", n ? ", " : "", shown);
    }
}

/* The indices in array `a` (NULL: none), each a node, into out from *at;
 * false if one is not. */
static bool
node_indices(const cJSON *a, uint32_t nnodes, uint32_t *out, uint32_t *at, uint32_t *n)
{
    *n = 0;
    for (const cJSON *e = cJSON_IsArray(a) ? a->child : NULL; e; e = e->next, (*n)++) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble < nnodes))
            return false;
        out[(*at)++] = (uint32_t)e->valuedouble;
    }
    return true;
}

/* nodes[n].extensions.KHR_lights_punctual.light; NULL: none. */
static const cJSON *
node_light(const cJSON *node)
{
    return cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "extensions"),
                                         "KHR_lights_punctual"),
        "light");
}

/* The node graph (rt__gltf_graph), when some node holds a light: NULL
 * when none does, or the graph is not one (an index that is no node). */
static rt__gltf_graph *
graph_read(const cJSON *root, bool *nomem)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    int          nn = cJSON_IsArray(nodes) ? cJSON_GetArraySize(nodes) : 0, links = 0, lit = 0;
    for (const cJSON *n = nn ? nodes->child : NULL; n; n = n->next) {
        const cJSON *l = node_light(n);
        lit += cJSON_IsNumber(l);
        links += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(n, "children"));
    }
    /* The scene by index, converted only once known to fit: 1e300 cast to
     * an int is undefined (found by fuzz-import under clang's UBSan). */
    uint64_t     sc;
    int          scene = member_u64(root, "scene", 0, &sc) && sc < INT32_MAX ? (int)sc : -1;
    const cJSON *scenes = cJSON_GetObjectItemCaseSensitive(root, "scenes");
    const cJSON *roots =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(scenes, scene), "nodes");
    int nroots = cJSON_GetArraySize(roots);
    if (!lit)
        return NULL;
    size_t          slots = 3 * (size_t)nn + (size_t)links + (size_t)nroots;
    rt__gltf_graph *g = malloc(sizeof *g + slots * sizeof(uint32_t));
    if (!g) {
        *nomem = true;
        return NULL;
    }
    uint32_t *p = (uint32_t *)(g + 1), at = 0, *kids = p + 3 * nn;
    *g = (rt__gltf_graph){.nnodes = (uint32_t)nn,
                          .light = (int32_t *)p,
                          .first = p + nn,
                          .count = p + 2 * nn,
                          .kids = kids,
                          .roots = kids + links};
    bool ok = node_indices(roots, g->nnodes, g->roots, &(uint32_t){0}, &g->nroots);
    int  i = 0;
    for (const cJSON *n = nn ? nodes->child : NULL; n && ok; n = n->next, i++) {
        const cJSON *l = node_light(n);
        g->light[i] = cJSON_IsNumber(l) && l->valuedouble >= 0 && l->valuedouble < INT32_MAX
                          ? (int32_t)l->valuedouble
                          : -1;
        g->first[i] = at;
        ok = node_indices(cJSON_GetObjectItemCaseSensitive(n, "children"), g->nnodes, kids, &at,
                          &g->count[i]);
    }
    if (!ok)
        free(g), g = NULL;
    return g;
}

/* What the import needs of the JSON (rt__gltf_facts). */
static rt_result
gltf_facts_read(const cJSON *root, rt__gltf_facts *f)
{
    name_list(root, "extensionsRequired", f->required);
    name_list(root, "extensionsUsed", f->used);
    bool nomem = false;
    f->graph = graph_read(root, &nomem);
    bool ok = !nomem &&
              material_factors(root, "KHR_materials_emissive_strength", "emissiveStrength",
                               &f->strength, &f->nstrength) &&
              material_factors(root, "KHR_materials_specular", "specularFactor", &f->specular,
                               &f->nspecular);
    return ok ? RT_OK : RT_ERR_NOMEM;
}

void
rt__gltf_facts_free(rt__gltf_facts *facts)
{
    free(facts->strength);
    free(facts->specular);
    free(facts->graph);
    *facts = (rt__gltf_facts){.strength = NULL};
}

static rt_result
gltf_json_check(const char *json, size_t len, bool glb, uint64_t budget, rt__gltf_facts *facts,
                char err[RT_ERR_LEN])
{
    const char *stop = NULL;
    cJSON      *root = cJSON_ParseWithLengthOpts(json, len, &stop, false);
    if (!cJSON_IsObject(root)) {
        snprintf(err, RT_ERR_LEN, "not a scene file: its glTF JSON does not parse (at byte %zu)",
                 root ? 0 : (size_t)(stop ? stop - json : 0));
        cJSON_Delete(root);
        return RT_ERR_FORMAT;
    }
    rt_result   r = RT_OK;
    const char *version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "asset"), "version"));
    gltf_doc    d = {.views = cJSON_GetObjectItemCaseSensitive(root, "bufferViews"),
                     .buffers = cJSON_GetObjectItemCaseSensitive(root, "buffers"),
                     .glb = glb,
                     .budget = budget};
    if (has_huge_number(root)) {
        snprintf(
            err, RT_ERR_LEN,
            "not a scene file: its glTF JSON has a number beyond a double's range (over 1e308)");
        r = RT_ERR_FORMAT;
    } else if (!version || strncmp(version, "2.", 2) != 0) {
        char shown[64];
        tex_name_printable(shown, sizeof shown, version ? version : "none");
        snprintf(err, RT_ERR_LEN, "not a scene file: glTF version %s; render reads glTF 2.0",
                 shown);
        r = RT_ERR_FORMAT;
    }
    int nviews = cJSON_IsArray(d.views) ? cJSON_GetArraySize(d.views) : 0;
    for (int v = 0; v < nviews && r == RT_OK; v++)
        r = view_check(&d, v, err);
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(root, "accessors");
    int          i = 0;
    for (const cJSON *a = acc ? acc->child : NULL; a && r == RT_OK; a = a->next, i++)
        r = accessor_check(&d, a, i, err);
    if (r == RT_OK && gltf_facts_read(root, facts) != RT_OK) {
        snprintf(err, RT_ERR_LEN, "out of memory");
        r = RT_ERR_NOMEM;
    }
    cJSON_Delete(root);
    return r;
}

/* ---- the format, and its check ---- */

/* One pass over a glTF's JSON, counting its nesting: brackets inside
 * strings do not count. What else render reads of the JSON, it reads with
 * cJSON (below), which parses no deeper than this allows. */
typedef struct json_scan {
    unsigned depth;
    bool     in_string, escaped;
} json_scan;

/* Whether byte c takes the JSON deeper than RT_MAX_JSON_DEPTH. */
static bool
json_byte(json_scan *j, char c)
{
    if (j->in_string) {
        if (j->escaped)
            j->escaped = false;
        else if (c == '\\')
            j->escaped = true;
        else if (c == '"')
            j->in_string = false;
        return false;
    }
    if (c == '"')
        j->in_string = true;
    else if (c == '[' || c == '{')
        return ++j->depth > RT_MAX_JSON_DEPTH;
    else if ((c == ']' || c == '}') && j->depth > 0)
        j->depth--;
    return false;
}

rt_result
rt__json_depth_check(const char *json, size_t len, uint64_t at0, char err[RT_ERR_LEN])
{
    json_scan j = {.depth = 0};
    for (size_t i = 0; i < len; i++)
        if (json_byte(&j, json[i])) {
            snprintf(err, RT_ERR_LEN,
                     "too deeply nested: JSON deeper than %d levels (at byte %llu)",
                     RT_MAX_JSON_DEPTH, (unsigned long long)(at0 + i));
            return RT_ERR_FORMAT;
        }
    return RT_OK;
}

/* The glTF JSON in [off, off + len) of fd, checked. */
static rt_result
json_span_check(int fd, uint64_t off, uint64_t len, bool glb, uint64_t budget,
                rt__gltf_facts *facts, char err[RT_ERR_LEN])
{
    rt_result r = RT_OK;
    char     *json = read_span(fd, off, len, &r, err);
    if (json && (r = rt__json_depth_check(json, (size_t)len, off, err)) == RT_OK)
        r = gltf_json_check(json, (size_t)len, glb, budget, facts, err);
    free(json);
    return r;
}

static rt_result
glb_check(int fd, uint64_t size, const unsigned char *head, size_t nhead, uint64_t budget,
          rt__gltf_facts *facts, char err[RT_ERR_LEN])
{
    if (nhead < 20 || le32(head + 4) != 2) {
        snprintf(err, RT_ERR_LEN, "not a scene file: GLB version %u; render reads glTF 2.0",
                 nhead >= 8 ? le32(head + 4) : 0);
        return RT_ERR_FORMAT;
    }
    uint64_t len = le32(head + 12);
    if (memcmp(head + 16, "JSON", 4) != 0 || len > size - 20) {
        snprintf(err, RT_ERR_LEN,
                 "not a scene file: a GLB whose first chunk is not JSON within the file");
        return RT_ERR_FORMAT;
    }
    return json_span_check(fd, 20, len, true, budget, facts, err);
}

static rt_result
check_fd(int fd, uint64_t size, uint64_t budget, rt__format *format, rt__gltf_facts *facts,
         char err[RT_ERR_LEN])
{
    unsigned char head[20];
    ssize_t       n = pread(fd, head, sizeof head, 0);
    size_t        got = n > 0 ? (size_t)n : 0;
    /* JSON may start with UTF-8's byte order mark, which cJSON does not
     * skip (nor does assimp's reader, which then says why it failed). */
    size_t bom = got >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0, ws = bom;
    while (ws < got && strchr(" \t\r\n", head[ws]))
        ws++;
    if (got >= 4 && memcmp(head, "glTF", 4) == 0) {
        *format = RT_FORMAT_GLTF;
        return glb_check(fd, size, head, got, budget, facts, err);
    }
    if (got >= 4 && memcmp(head, "ply", 3) == 0 && (head[3] == '\n' || head[3] == '\r')) {
        *format = RT_FORMAT_PLY;
        return ply_check(fd, size, err);
    }
    if (ws < got && head[ws] == '{') {
        *format = RT_FORMAT_GLTF;
        return json_span_check(fd, bom, size - bom, false, budget, facts, err);
    }
    *format = RT_FORMAT_OBJ;
    return RT_OK;
}

rt_result
rt__import_check(int fd, uint64_t budget, rt__format *format, rt__gltf_facts *facts,
                 char err[RT_ERR_LEN])
{
    *facts = (rt__gltf_facts){.strength = NULL};
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, RT_ERR_LEN, "cannot read: %s", strerror(errno));
        return RT_ERR_OPEN;
    }
    rt_result r = check_fd(fd, (uint64_t)st.st_size, budget, format, facts, err);
    facts->gltf = r == RT_OK && *format == RT_FORMAT_GLTF;
    return r;
}
