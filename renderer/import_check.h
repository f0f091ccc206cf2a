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
#include "import_guard.h"
#include "rt_scene.h"

#include <stdint.h>

#define RT_PLY_MAX_HEADER (64 << 10)

/* The format of the regular file open at fd, checked as above (read with
 * pread: the offset stays): RT_OK with *format and, for a glTF, the
 * specular factors in *facts (import_guard.h; the rest is the precheck's), or RT_ERR_FORMAT with
 * err (RT_ERR_OPEN where it cannot be read, RT_ERR_NOMEM where memory runs out, or a glTF declares
 * more data than `budget`, the most bytes an import of the file may allocate). */
rt_result rt__import_check(int fd, uint64_t budget, rt__format *format, rt__gltf_facts *facts,
                           char err[RT_ERR_LEN]);

#endif
