/* ustr_rwspin.h alone, as strict C11: it must compile with nothing before it. */
#include "ustr_rwspin.h"

int
main(void)
{
    ustr_rwspin l = USTR_RWSPIN_INIT;
    bool        waited = ustr_rwspin_read_lock(&l);
    ustr_rwspin_read_unlock(&l);
    waited |= ustr_rwspin_write_lock(&l);
    ustr_rwspin_write_unlock(&l);
    return waited || atomic_load(&l.state) != 0;
}
