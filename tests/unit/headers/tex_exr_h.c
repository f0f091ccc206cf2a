/* tex_exr.h alone, as strict C11: it must compile with nothing before it. */
#include "tex_exr.h"

int
main(void)
{
    char         err[TEX_ERR_LEN];
    tex_exr     *f = NULL;
    tex_exr_info info;
    tex_result   r = tex_exr_open("/nonexistent/header.exr", &f, &info, err);
    return r == TEX_ERR_OPEN && f == NULL ? 0 : 1;
}
