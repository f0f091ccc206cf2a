/* Which fence this process runs (ustr_fence.h), checked against the one a
 * test entry is for: with USTR_NO_MEMBARRIER the symmetric one; without it
 * the asymmetric one wherever the kernel offers expedited private
 * membarriers (asked with MEMBARRIER_CMD_QUERY), so that a fence.c that
 * stopped registering fails here. Where the kernel does not offer them (an
 * old kernel, a seccomp filter) or ThreadSanitizer runs (it cannot model
 * membarrier) the entry is reported skipped (exit 77), not passed on the
 * symmetric fence it did not set out to test. */
#ifndef RT_TEST_FENCE_TESTING_H
#define RT_TEST_FENCE_TESTING_H

#include "check.h"
#include "ustr_fence.h"

#include <linux/membarrier.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
#define FENCE_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FENCE_TEST_TSAN 1
#endif
#endif
#ifndef FENCE_TEST_TSAN
#define FENCE_TEST_TSAN 0
#endif

/* Whether this process should have the asymmetric fence: no
 * USTR_NO_MEMBARRIER, no ThreadSanitizer, and a kernel that offers
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED. */
static inline bool
fence_test_asymmetric_expected(void)
{
    if (getenv("USTR_NO_MEMBARRIER") || FENCE_TEST_TSAN)
        return false;
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

/* `also`: what to add to the skip line ("" for nothing). */
static inline void
fence_test_mode_check(const char *also)
{
    ustr_fence_init();
    bool asymmetric = ustr_fence_asymmetric();
    fprintf(stderr, "fence: %s\n", asymmetric ? "asymmetric (membarrier)" : "symmetric");
    if (getenv("USTR_NO_MEMBARRIER")) {
        CHECK(!asymmetric);
    } else if (fence_test_asymmetric_expected()) {
        CHECK(asymmetric); /* the kernel offers it: registering must have worked */
    } else if (!asymmetric) {
        fprintf(stderr,
                "skipped: no asymmetric fence here (the kernel offers no expedited private "
                "membarrier, or ThreadSanitizer, which cannot model it)%s\n",
                also);
        exit(77);
    }
}

#endif
