/* Allowed folders, for scenes written by others (render --restrict-paths):
 * a file may be read only if its path, with every symbolic link and ".."
 * resolved, lies inside one of the folders. The check is made on the file
 * actually opened (its descriptor), so a name swapped for a symbolic link
 * between a check and an open cannot lead out: the scene importer checks
 * each file assimp opens (materials, buffers), the texture system each
 * texture (through tex_config.allow). */
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

/* Whether the file open as `fd` may be read: true for NULL p (no
 * restriction); otherwise its path, as the kernel has it
 * (/proc/self/fd/FD), must lie in one of the folders, and a regular file
 * must have one name (a hard link's others may lie outside them; an
 * unlinked file, reached through /proc/self/fd, has none). Fails
 * closed: false when that path cannot be read (no /proc) or is not a
 * file's in a folder (a pipe, a socket). Safe from any thread. Whoever
 * refuses a file says TEX_NOT_ALLOWED (texture.h), as for a file that is
 * not there: a scene learns nothing of what exists outside the folders. */
bool rt_paths_allow_fd(const rt_paths *p, int fd);

#endif
