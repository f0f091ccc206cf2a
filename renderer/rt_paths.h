/* Allowed folders, for scenes written by others (render --restrict-paths):
 * a file may be read only if its path, with every symbolic link and ".."
 * resolved, lies inside one of the folders. The scene importer checks the
 * files assimp opens (materials, buffers), the texture system each texture
 * (through tex_config.allow). */
#ifndef RT_PATHS_H
#define RT_PATHS_H

#include "rt_scene.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct rt_paths rt_paths; /* opaque, read-only once made: any thread */

/* The n folders, resolved now (one that does not exist allows nothing).
 * RT_OK or RT_ERR_NOMEM. */
rt_result rt_paths_create(const char *const *dirs, size_t n, rt_paths **out);
void      rt_paths_destroy(rt_paths *p); /* NULL is a no-op */

/* Whether `path` may be read: true for NULL p (no restriction) and for a
 * file that does not exist (opening it fails and says so itself). */
bool rt_paths_allow(const rt_paths *p, const char *path);

#endif
