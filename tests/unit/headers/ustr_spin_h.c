/* ustr_spin.h alone, as strict C11: it must compile with nothing before it. */
#include "ustr_spin.h"

int
main(void)
{
    ustr_spin    l = USTR_SPIN_INIT;
    ustr_backoff b = USTR_BACKOFF_INIT;
    ustr_backoff_wait(&b);
    bool waited = ustr_spin_lock(&l);
    ustr_spin_unlock(&l);
    return waited || atomic_load(&l.held) != 0;
}
