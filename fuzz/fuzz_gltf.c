/* Fuzz target: the glTF pre-check that runs before assimp reads a glTF
 * (renderer/import_guard.h): its JSON nesting count. The input is the
 * file, as a .gltf and, when it starts as one, a .glb. Checks: the result
 * is RT_OK, or RT_ERR_FORMAT saying "too deeply nested" in one line; the
 * scan's verdict does not depend on the name. (What else render reads of
 * a glTF's JSON, it reads with cJSON: fuzz_import.c runs that.) */
#define _GNU_SOURCE /* mkdtemp */
#include "fuzz_input.h"
#include "import_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], as_gltf[96];

static void
remove_dir(void)
{
    unlink(as_gltf);
    rmdir(dir);
}

/* The check of path, its contract checked; whether it refused the file. */
static bool
check(const char *path)
{
    char      err[RT_ERR_LEN];
    rt_result r = rt__gltf_precheck(path, err);
    if (r == RT_OK)
        return false;
    if (r != RT_ERR_FORMAT)
        fuzz_fail("a result other than RT_OK or RT_ERR_FORMAT");
    fuzz_check_err(err, RT_ERR_LEN);
    if (!strstr(err, "too deeply nested"))
        fuzz_fail("a refusal that is not about nesting");
    return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fuzz-gltf-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir))
            fuzz_fail("mkdtemp failed");
        snprintf(as_gltf, sizeof as_gltf, "%s/in.gltf", dir);
        atexit(remove_dir);
    }
    /* The same bytes under a .gltf name (read as JSON throughout) and, as
     * fuzz_file() names it, with no extension (read only if it starts as a
     * .glb): a .glb's verdict is the same under either name. */
    const char *path = fuzz_file(data, size);
    unlink(as_gltf);
    if (symlink(path, as_gltf) != 0)
        fuzz_fail("symlink failed");
    bool glb = size >= 20 && memcmp(data, "glTF", 4) == 0 && memcmp(data + 16, "JSON", 4) == 0;
    bool deep_gltf = check(as_gltf), deep_plain = check(path);
    if (glb ? deep_gltf != deep_plain : deep_plain)
        fuzz_fail("the verdict depends on the file's name");
    return 0;
}
