/* ustring.h alone, as strict C11: it must compile with nothing before it. */
#include "ustring.h"

int
main(void)
{
    ustr_config cfg = {.lock = USTR_LOCK_DEFAULT};
    ustr_table *t = NULL;
    if (ustr_table_create(&cfg, &t) != USTR_OK)
        return 1;
    ustr u = ustr_table_intern_cstr(t, "header");
    int  bad = !u || ustr_len(u) != 6 || ustr_hash(u) != ustr_hash_bytes("header", 6);
    ustr_table_destroy(t);
    return bad;
}
