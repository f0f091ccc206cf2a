/* Building a JSON tree with cJSON without a check after every member: each
 * function clears *ok when cJSON could not add (out of memory), and adding
 * to a NULL object or array fails the same way, so a writer builds its
 * whole tree and checks *ok once before printing it. render's --stats-json
 * (report.c) and the study's JSON are written so. */
#ifndef RT_JSON_H
#define RT_JSON_H

#include "rt_scene.h" /* rt_result */

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stddef.h>

void   rt_json_num(cJSON *o, const char *key, double v, bool *ok);
void   rt_json_str(cJSON *o, const char *key, const char *v, bool *ok); /* NULL: null */
void   rt_json_bool(cJSON *o, const char *key, bool v, bool *ok);
cJSON *rt_json_obj(cJSON *o, const char *key, bool *ok);   /* a new member object */
cJSON *rt_json_array(cJSON *o, const char *key, bool *ok); /* a new member array */
cJSON *rt_json_push_obj(cJSON *array, bool *ok);           /* a new object at its end */
void   rt_json_push_num(cJSON *array, double v, bool *ok);
void   rt_json_push_str(cJSON *array, const char *v, bool *ok);

/* Prints tree (formatted) to path through a temporary file and a rename,
 * whole or not at all, and deletes it. RT_ERR_NOMEM when memory ran out
 * (ok false, or printing failed), RT_ERR_OPEN when the file could not be
 * written, each with err. */
rt_result rt_json_write(cJSON *tree, bool ok, const char *path, char *err, size_t errlen);

#endif
