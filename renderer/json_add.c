/* Building and writing a JSON tree with cJSON (rt_json.h). */
#include "rt_json.h"
#include "tex_image.h"

#include <stdio.h>

void
rt_json_num(cJSON *o, const char *key, double v, bool *ok)
{
    *ok &= cJSON_AddNumberToObject(o, key, v) != NULL;
}

void
rt_json_str(cJSON *o, const char *key, const char *v, bool *ok)
{
    *ok &= (v ? cJSON_AddStringToObject(o, key, v) : cJSON_AddNullToObject(o, key)) != NULL;
}

void
rt_json_bool(cJSON *o, const char *key, bool v, bool *ok)
{
    *ok &= cJSON_AddBoolToObject(o, key, v) != NULL;
}

cJSON *
rt_json_obj(cJSON *o, const char *key, bool *ok)
{
    cJSON *c = cJSON_AddObjectToObject(o, key);
    *ok &= c != NULL;
    return c;
}

cJSON *
rt_json_array(cJSON *o, const char *key, bool *ok)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    *ok &= a != NULL;
    return a;
}

/* Appends item (NULL: cJSON could not make it) to array. */
static cJSON *
push(cJSON *array, cJSON *item, bool *ok)
{
    if (item && array && cJSON_AddItemToArray(array, item))
        return item;
    cJSON_Delete(item);
    *ok = false;
    return NULL;
}

cJSON *
rt_json_push_obj(cJSON *array, bool *ok)
{
    return push(array, cJSON_CreateObject(), ok);
}

void
rt_json_push_num(cJSON *array, double v, bool *ok)
{
    push(array, cJSON_CreateNumber(v), ok);
}

void
rt_json_push_str(cJSON *array, const char *v, bool *ok)
{
    push(array, cJSON_CreateString(v), ok);
}

rt_result
rt_json_write(cJSON *tree, bool ok, const char *path, char *err, size_t errlen)
{
    char *text = ok && tree ? cJSON_Print(tree) : NULL;
    cJSON_Delete(tree);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return RT_ERR_NOMEM;
    }
    tex_replace out;
    char        terr[TEX_ERR_LEN];
    bool        written = tex_replace_begin(&out, path, terr) == TEX_OK;
    if (written) {
        fputs(text, out.f);
        fputc('\n', out.f);
        written = tex_replace_end(&out, true, terr) == TEX_OK;
    }
    if (!written)
        snprintf(err, errlen, "%s", terr);
    cJSON_free(text);
    return written ? RT_OK : RT_ERR_OPEN;
}
