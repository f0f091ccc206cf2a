/* Fuzz target: the whole import of a scene file, as `render` runs it:
 * render's own checks (import_check.h, the glTF precheck), assimp with the
 * one importer they choose (assimp_read.h), the steps, and the scene
 * build. The first byte picks the file's name, the extensions assimp knows
 * for other formats among them (a name must not open another importer);
 * the rest is the file. Files the scene names are looked for in a folder
 * of its own, the only one allowed. Checks: the load ends with a scene or
 * with one error line, and a scene's indices address its vertices. */
#define _GNU_SOURCE /* mkdtemp */
#include "fuzz_input.h"
#include "rt_paths.h"
#include "rt_scene.h"
#include "ustring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"in.gltf",  "in.glb", "in.obj", "in.ply",
                                    "in.scene", "in",     "in.ase", "in.md5mesh",
                                    "in.3mf",   "in.dae", "in.stl", "in.off"};
#define NNAMES (sizeof names / sizeof *names)

static char      dir[64];
static rt_paths *allowed;

static void
remove_dir(void)
{
    char path[128];
    for (size_t i = 0; i < NNAMES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    rt_paths_destroy(allowed);
}

static void
setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fuzz-import-XXXXXX", t && *t ? t : "/tmp");
    const char *dirs[] = {dir};
    if (!mkdtemp(dir) || rt_paths_create(dirs, 1, &allowed) != RT_OK)
        fuzz_fail("cannot make the fuzzer's folder");
    atexit(remove_dir);
}

static void
check_scene(const rt_scene *s)
{
    for (uint64_t i = 0; i < 3 * (uint64_t)s->ntris; i++)
        if (s->indices[i] >= s->nverts)
            fuzz_fail("a triangle index past the vertices");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        setup();
    if (size == 0)
        return 0;
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, names[data[0] % NNAMES]);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1 || fclose(f) != 0)
        fuzz_fail("cannot write the input");
    rt_scene          *s = NULL;
    char               err[RT_ERR_LEN];
    rt_scene_load_opts o = {.allowed = allowed, .max_file_bytes = 1 << 20};
    rt_result          r = rt_scene_load_with(path, NULL, &o, &s, err);
    if (r == RT_OK) {
        if (!s)
            fuzz_fail("RT_OK without a scene");
        check_scene(s);
        rt_scene_free(s);
    } else {
        if (s)
            fuzz_fail("an error with a scene");
        fuzz_check_err(err, RT_ERR_LEN);
    }
    unlink(path);
    return 0;
}
