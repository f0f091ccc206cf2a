/* rt_scene.h alone, as strict C11: it must compile with nothing before it. */
#include "rt_scene.h"

int
main(void)
{
    rt_scene *s = NULL;
    rt_scene_free(s);
    return rt_result_str(RT_ERR_EMPTY)[0] == '\0' || RT_SLOT_COUNT != 6;
}
