/* Which fence this process runs (ustr_fence.h), checked against the one a
 * test entry is for: with USTR_NO_MEMBARRIER the symmetric one; without it
 * the asymmetric one, and where membarrier(2) registration failed (an old
 * kernel, a seccomp filter) or ThreadSanitizer runs (it cannot model
 * membarrier) the entry is reported skipped (exit 77), not passed on the
 * symmetric fence it did not set out to test. */
#ifndef RT_TEST_FENCE_TESTING_H
#define RT_TEST_FENCE_TESTING_H

#include "check.h"
#include "ustr_fence.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* `also`: what to add to the skip line ("" for nothing). */
static inline void
fence_test_mode_check(const char *also)
{
    ustr_fence_init();
    bool asymmetric = ustr_fence_asymmetric();
    fprintf(stderr, "fence: %s\n", asymmetric ? "asymmetric (membarrier)" : "symmetric");
    if (getenv("USTR_NO_MEMBARRIER")) {
        CHECK(!asymmetric);
    } else if (!asymmetric) {
        fprintf(stderr,
                "skipped: no asymmetric fence here (membarrier(2) registration failed, or "
                "ThreadSanitizer, which cannot model it)%s\n",
                also);
        exit(77);
    }
}

#endif
