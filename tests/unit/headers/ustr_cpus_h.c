/* ustr_cpus.h alone, as strict C11: it must compile with nothing before it. */
#include "ustr_cpus.h"

int
main(void)
{
    unsigned id;
    return ustr_cpus_usable() < 1 || ustr_cpus_usable_ids(&id, 1) > 1;
}
