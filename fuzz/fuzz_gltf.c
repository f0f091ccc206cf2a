/* Fuzz target: the nesting count that runs on a glTF's JSON before cJSON
 * and assimp read it (rt__json_depth_check(), renderer/import_check.h).
 * The input is the JSON. Checks: the result is RT_OK, or RT_ERR_FORMAT
 * saying "too deeply nested" in one line, at a byte of the input that
 * opens an array or an object. (What else render reads of a glTF's JSON,
 * it reads with cJSON: fuzz_import.c runs that.) */
#include "fuzz_input.h"
#include "import_check.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char               err[RT_ERR_LEN];
    unsigned long long at = 0;
    rt_result          r = rt__json_depth_check((const char *)data, size, 0, err);
    if (r == RT_OK)
        return 0;
    if (r != RT_ERR_FORMAT)
        fuzz_fail("a result other than RT_OK or RT_ERR_FORMAT");
    fuzz_check_err(err, RT_ERR_LEN);
    const char *said = strstr(err, "(at byte ");
    if (!strstr(err, "too deeply nested") || !said || sscanf(said, "(at byte %llu)", &at) != 1)
        fuzz_fail("a refusal that is not about nesting, or names no byte");
    if (at >= size || (data[at] != '[' && data[at] != '{'))
        fuzz_fail("the byte named does not open an array or an object");
    return 0;
}
