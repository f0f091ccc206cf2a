/* render's own checks on a scene file's bytes, made before assimp reads
 * them: which format the file is, and whether what it declares can be
 * true of a file that size.
 *
 * The format comes from the bytes, never the name (a PLY named x.gltf is
 * read as PLY, by assimp's PLY importer alone: assimp_read.h):
 * - "glTF" then version 2: GLB; any other version is refused;
 * - "ply" on the first line: PLY;
 * - '{' first (after white space): glTF's JSON;
 * - anything else: OBJ, whose importer refuses what is not OBJ text.
 *
 * What each check refuses, with a one-line reason naming it:
 * - PLY: a header without end_header in its first RT_PLY_MAX_HEADER
 *   bytes (assimp read past the end, or looped there for ever), and element
 *   counts that need more bytes than follow the header (assimp reserves
 *   for the declared counts before it reads one);
 * - glTF: JSON that does not parse, a number out of a double's range
 *   (1e309), an asset.version other than 2.x, a buffer view outside its
 *   buffer, a sparse accessor whose indices or values run past their
 *   buffer views or lack one (assimp read past the end of its buffer), an
 *   accessor with no buffer view whose zero-filled data would be larger
 *   than the import's memory budget allows for the file. */
#ifndef RT_IMPORT_CHECK_H
#define RT_IMPORT_CHECK_H

#include "assimp_read.h"
#include "rt_scene.h"

#include <stdint.h>

#define RT_PLY_MAX_HEADER (64 << 10)

/* JSON nesting is counted before assimp reads a glTF (.gltf, or a .glb's
 * JSON chunk), whose importer recurses once per level: a million nested
 * arrays in `extras` (2 MB) overflowed any stack. Over RT_MAX_JSON_DEPTH
 * levels the file is refused. */
#define RT_MAX_JSON_DEPTH 1000

/* What the check reads of a glTF's JSON for the import (all empty for
 * other formats): the names in its top-level "extensionsRequired" and
 * "extensionsUsed", whole, made printable by tex_name_printable(), ", "
 * between them ("" for none; a list longer than the buffer ends at the last
 * whole name); and what Debian's assimp 5.2 does not read: each material's
 * KHR_materials_emissive_strength and KHR_materials_specular factors,
 * strength[i] and specular[i] for materials[i] (NAN: none given; arrays of
 * nstrength and nspecular, malloc()ed, NULL when no material has one).
 * rt__gltf_facts_free() frees them. */
typedef struct rt__gltf_graph rt__gltf_graph;

typedef struct rt__gltf_facts {
    bool            gltf; /* the bytes are glTF's (JSON or GLB), whatever the file's name */
    char            required[RT_ERR_LEN], used[RT_ERR_LEN];
    float          *strength, *specular;
    uint32_t        nstrength, nspecular;
    rt__gltf_graph *graph; /* where a node holds a light; NULL: none does */
} rt__gltf_facts;

/* The node graph of a glTF whose nodes hold KHR_lights_punctual lights:
 * assimp 5.2 makes one light per definition, placed at the last node that
 * names it, where every node that names one is a light of its own. The
 * graph is the JSON's: nodes[n] holds light[n] (-1: none), its children
 * are kids[first[n]] .. kids[first[n] + count[n] - 1], and the scene's
 * root nodes are roots[0 .. nroots - 1]; every index is checked to be a
 * node. assimp builds its node tree in the same shape (one root node, or
 * a root of its own over several), so the scene build walks both together
 * (rt__lights_load()). */
struct rt__gltf_graph {
    uint32_t  nnodes, nroots;
    int32_t  *light;
    uint32_t *first, *count, *kids, *roots;
};

void rt__gltf_facts_free(rt__gltf_facts *facts);

/* RT_OK, or RT_ERR_FORMAT with err saying the JSON json[0..len) nests
 * deeper than RT_MAX_JSON_DEPTH, and at which byte (at0: where the JSON
 * starts in its file). Brackets inside strings do not count.
 * rt__import_check() runs it on a glTF's JSON before cJSON parses it
 * (which stops at the same depth, but says only that the JSON does not
 * parse). */
rt_result rt__json_depth_check(const char *json, size_t len, uint64_t at0, char err[RT_ERR_LEN]);

/* The format of the regular file open at fd, checked as above (read with
 * pread: the offset stays): RT_OK with *format and *facts (always set:
 * free it with rt__gltf_facts_free()), or RT_ERR_FORMAT with
 * err (RT_ERR_OPEN where it cannot be read, RT_ERR_NOMEM where memory runs out, or a glTF declares
 * more data than `budget`, the most bytes an import of the file may allocate). */
rt_result rt__import_check(int fd, uint64_t budget, rt__format *format, rt__gltf_facts *facts,
                           char err[RT_ERR_LEN]);

#endif
