/* The importer's own code, apart from assimp's parsing: for the fuzz
 * target (fuzz/fuzz_scene.c), which builds an aiScene from its input and
 * hands it here, as rt_scene_load() hands what assimp parsed. */
#ifndef RT_SCENE_INTERNAL_H
#define RT_SCENE_INTERNAL_H

#include "import_check.h" /* rt__gltf_facts */
#include "rt_scene.h"

struct aiScene;

/* Flattens `ai` into a new scene: meshes under the node hierarchy's
 * transforms, materials and their texture paths (resolved against the
 * folder of `path`), with what `facts` adds to them (the emissive strengths
 * assimp does not read; NULL: nothing), embedded textures, the first
 * camera, the lights. `ai`
 * need only be as assimp's ValidateDataStructure step leaves a scene:
 * counts match arrays, pointers are set where counts say, face indices
 * address their mesh's vertices, material properties are well formed;
 * values (floats, strings, names) may be anything. On RT_OK *out is yours
 * (rt_scene_free()); on failure *out is NULL, err says why, nothing
 * leaks. Does not touch `ai`. */
rt_result rt__scene_build(const struct aiScene *ai, const char *path, ustr_table *strings,
                          const rt__gltf_facts *facts, rt_scene **out, char err[RT_ERR_LEN]);

/* Adds `text` to s->warning ("; " after what is there). Out of memory:
 * the warning is lost, nothing else. */
void rt__scene_warn(rt_scene *s, const char *text);

/* Adds the default light (s->default_light, the last of s->lights) when
 * rt_scene_light_estimate() is under RT_WEAK_LIGHT of it, saying so in
 * s->warning when the scene had lights of its own. RT_OK or
 * RT_ERR_NOMEM. */
rt_result rt__scene_default_light(rt_scene *s);

/* Points the default light from behind the camera's right shoulder,
 * forward and down (the import and rt_scene_frame() call it). */
void rt__scene_aim_default_light(rt_scene *s);

#endif
