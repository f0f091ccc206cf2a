/* The one door to assimp: an import in which only the importer for the
 * file's format exists.
 *
 * assimp picks an importer by the file's extension and, failing that, by
 * sniffing its bytes with each of the ~60 it carries: a mutated MD5, ASE
 * or 3MF file named `x.scene` reached code render never meant to run, and
 * crashed it. render reads glTF 2.0 (.gltf, .glb), OBJ (with its MTL) and
 * PLY; the caller names which of them a file is (import_check.h decides
 * it from the bytes), and every other importer, glTF 1.0's included, is
 * taken out of the import before it starts.
 *
 * The import runs in two steps, so that render's own checks can look at
 * what the importer made before assimp's post-processing walks it (a PLY
 * face of no vertices failed an assertion in Triangulate): rt__ai_read()
 * parses and validates; rt__ai_post() runs the steps. */
#ifndef RT_ASSIMP_READ_H
#define RT_ASSIMP_READ_H

#include "rt_scene.h"

#include <assimp/cfileio.h>
#include <assimp/scene.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rt__format {
    RT_FORMAT_GLTF, /* glTF 2.0: .gltf (JSON) or .glb */
    RT_FORMAT_OBJ,
    RT_FORMAT_PLY,
} rt__format;

/* An import in progress: assimp's importer and the scene it owns. */
typedef struct rt__ai rt__ai;

/* Reads `path` with the importer for `format` alone, every file through
 * `io`, then assimp's ValidateDataStructure step; no other step runs.
 * `remove` is AI_CONFIG_PP_SBP_REMOVE for rt__ai_post()'s SortByPType.
 * The scene (owned by *imp), or NULL with err saying why: assimp's own
 * words, "out of memory" for an allocation that failed. *imp is set either
 * way: free it with rt__ai_free(). */
const struct aiScene *rt__ai_read(const char *path, rt__format format, struct aiFileIO *io,
                                  int remove, rt__ai **imp, char err[RT_ERR_LEN]);

/* Runs the post-processing steps `flags` on the scene rt__ai_read() gave;
 * the scene, or NULL with err (the scene is then gone). */
const struct aiScene *rt__ai_post(rt__ai *imp, unsigned flags, char err[RT_ERR_LEN]);

/* Frees the importer and its scene; NULL is a no-op. */
void rt__ai_free(rt__ai *imp);

#ifdef __cplusplus
}
#endif

#endif
