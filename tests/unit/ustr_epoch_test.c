/* ustr_epoch.h, the reclamation rules on one thread: a retired object is
 * freed once no record is inside an epoch that could hold it, and not
 * before. Run with USTR_NO_MEMBARRIER unset (the asymmetric fence, where the
 * kernel offers membarrier) and set (the symmetric one); the racing side
 * is the stress tests' (ThreadSanitizer, more threads than cores). And the
 * fence's registration, made before main(). */
#define _DEFAULT_SOURCE /* syscall() */
#include "check.h"
#include "fence_testing.h"
#include "ustr_epoch.h"

#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct object {
    ustr_epoch_node node; /* first: the node is the object */
    int            *freed;
} object;

static void
object_free(ustr_epoch_node *node, void *ctx)
{
    (void)ctx;
    object *o = (object *)(void *)node;
    ++*o->freed;
    free(o);
}

static void
retire_one(ustr_epoch *d, int *freed)
{
    object *o = malloc(sizeof *o);
    REQUIRE(o != NULL);
    o->freed = freed;
    ustr_epoch_retire(d, &o->node, object_free, NULL);
}

static void
case_mode(const char *arg)
{
    (void)arg;
    ustr_epoch d;
    ustr_epoch_init(&d);
    fence_test_mode_check("");
    ustr_epoch_destroy(&d);
}

static void
case_rules(const char *arg)
{
    (void)arg;
    ustr_epoch d;
    ustr_epoch_init(&d);
    fence_test_mode_check("");
    ustr_epoch_rec *early = aligned_alloc(64, 64); /* a line of its own */
    ustr_epoch_rec *late = aligned_alloc(64, 64);
    REQUIRE(early && late);
    ustr_epoch_register(&d, early);
    ustr_epoch_register(&d, late);
    int freed = 0;

    /* Nobody inside: freed at the first reclaim. */
    retire_one(&d, &freed);
    CHECK_EQ_U64(ustr_epoch_reclaim(&d), 1);
    CHECK_EQ_INT(freed, 1);

    /* A reader inside since before the retirement holds it... */
    ustr_epoch_enter(&d, early);
    retire_one(&d, &freed);
    /* ...one that entered after it does not (it cannot reach it)... */
    ustr_epoch_enter(&d, late);
    CHECK_EQ_U64(ustr_epoch_reclaim(&d), 0);
    CHECK_EQ_INT(freed, 1);
    /* ...and leaving lets it go, whatever the late reader does. */
    ustr_epoch_leave(early);
    CHECK_EQ_U64(ustr_epoch_reclaim(&d), 1);
    CHECK_EQ_INT(freed, 2);
    ustr_epoch_leave(late);

    /* Destroy frees whatever is still retired. */
    ustr_epoch_enter(&d, early);
    retire_one(&d, &freed);
    CHECK_EQ_U64(ustr_epoch_reclaim(&d), 0);
    ustr_epoch_leave(early);
    ustr_epoch_unregister(&d, early);
    ustr_epoch_unregister(&d, late);
    ustr_epoch_destroy(&d);
    CHECK_EQ_INT(freed, 3);
    free(early), free(late);
}

/* try_reclaim frees what reclaim would, unless the domain is held (by a
 * reclaiming thread, as a rule): then it frees nothing and returns at
 * once, and the next try frees it. */
static void
case_try(const char *arg)
{
    (void)arg;
    ustr_epoch d;
    ustr_epoch_init(&d);
    int freed = 0;
    retire_one(&d, &freed);
    REQUIRE(pthread_mutex_lock(&d.lock) == 0); /* as a reclaimer would */
    CHECK_EQ_U64(ustr_epoch_try_reclaim(&d), 0);
    CHECK_EQ_INT(freed, 0);
    REQUIRE(pthread_mutex_unlock(&d.lock) == 0);
    CHECK_EQ_U64(ustr_epoch_try_reclaim(&d), 1);
    CHECK_EQ_INT(freed, 1);
    ustr_epoch_destroy(&d);
}

/* The registration was made before main(), while the process had one
 * thread (fence.c: made later, with threads alive, it costs an RCU grace
 * period). Nothing here has made a domain or called ustr_fence_init(), yet
 * the fence is already asymmetric and the writer's membarrier is allowed
 * (it fails with EPERM in an unregistered process). */
static void
case_early(const char *arg)
{
    (void)arg;
    bool before = ustr_fence_asymmetric();
    ustr_fence_init();
    bool after = ustr_fence_asymmetric();
    if (getenv("USTR_NO_MEMBARRIER")) {
        CHECK(!before && !after);
        return;
    }
    CHECK(before == after); /* registering only now is the late registration */
    if (fence_test_asymmetric_expected()) {
        CHECK(after); /* the kernel offers it: the constructor must have registered */
    } else if (!after) {
        fprintf(stderr, "skipped: the kernel offers no expedited private membarrier, or "
                        "ThreadSanitizer\n");
        exit(77);
    }
    CHECK_EQ_INT((int)syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0), 0);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"mode", case_mode}, {"rules", case_rules}, {"early", case_early},
        {"try", case_try},   {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
