/* Interleavings of the lock-free index that a timed race hits once in a
 * blue moon, forced: a worker thread stops at one of lockfree.c's race
 * points (this test links a copy of the library built with them live,
 * USTR_RACE_POINTS) while the main thread makes a shard move under it, then
 * goes on. All strings are picked to fall in one shard of a table made for
 * 1 string, whose first array holds 8 (16 slots), so a few inserts fill it.
 *
 *   publish_after_move  a worker holds room in an array (claimed) and has
 *                       not yet published when the array moves on: its
 *                       string must still end up in the new array, once.
 *   helper_preempted    a worker has taken a chunk of a move to copy and
 *                       stops; the main thread fills the next array and
 *                       must finish the move without waiting for it.
 *
 * Run under ThreadSanitizer and AddressSanitizer by their presets: the
 * stopped worker still holds arrays that the main thread retires. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "ustr_testing.h"
#include "ustring.h"
#include "ustring_internal.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

enum {
    ROUNDS = 8,               /* keys tried in publish_after_move */
    FILL = 40,                /* strings main adds meanwhile (publish_after_move) */
    HELPER_FILL = 300,        /* the same in helper_preempted: past 256, so main
                               * also tries to free retired arrays */
    STRINGS = 9 + HELPER_FILL /* of one shard, made once */
};

/* ---- the race point ---- */

static sem_t                     stopped, resume;
static atomic_int                stops;   /* times a thread stopped */
static _Thread_local const char *stop_at; /* this thread stops there, once */

void ustr__race_point(const char *where);

void
ustr__race_point(const char *where)
{
    if (stop_at && strcmp(where, stop_at) == 0) {
        stop_at = NULL;
        atomic_fetch_add(&stops, 1);
        sem_post(&stopped);
        while (sem_wait(&resume) != 0)
            ;
    }
}

/* ---- strings of one shard ---- */

static char   names[STRINGS][32];
static size_t lens[STRINGS];

/* Fills names[] with strings whose hashes pick shard 0. */
static void
one_shard_strings(void)
{
    size_t n = 0;
    for (unsigned i = 0; n < STRINGS; i++) {
        int len = snprintf(names[n], sizeof names[n], "race/%u.tx", i);
        if (ustr__lf_shard_of(ustr__hash(names[n], (size_t)len)) == 0)
            lens[n++] = (size_t)len;
    }
}

static ustr
intern(ustr_table *t, size_t k)
{
    return ustr_table_intern(t, names[k], lens[k]);
}

/* ---- the worker ---- */

typedef struct job {
    ustr_table *t;
    const char *stop;  /* race point */
    size_t      first; /* strings [first, first + count) */
    size_t      count;
    ustr        got[STRINGS];
} job;

static void *
job_main(void *arg)
{
    job *j = arg;
    stop_at = j->stop;
    for (size_t k = j->first; k < j->first + j->count; k++)
        j->got[k] = intern(j->t, k);
    if (stop_at) /* never stopped: let main go on, and fail it there */
        sem_post(&stopped);
    return NULL;
}

/* Starts j and waits until its thread stops at its race point. */
static pthread_t
job_start_and_stop(job *j)
{
    pthread_t th;
    int       before = atomic_load(&stops);
    REQUIRE(pthread_create(&th, NULL, job_main, j) == 0);
    while (sem_wait(&stopped) != 0)
        ;
    REQUIRE(atomic_load(&stops) == before + 1); /* it did stop there */
    return th;
}

static void
job_resume_and_join(pthread_t th)
{
    sem_post(&resume);
    REQUIRE(pthread_join(th, NULL) == 0);
}

/* Main interns strings [first, first + count) and returns how many times
 * the index grew meanwhile. */
static uint64_t
main_fill(ustr_table *t, size_t first, size_t count, ustr *got)
{
    uint64_t grows = ustr_test_stats(t).grows;
    for (size_t k = first; k < first + count; k++) {
        got[k] = intern(t, k);
        REQUIRE(got[k] != NULL);
    }
    return ustr_test_stats(t).grows - grows;
}

/* Every string [0, n) is in t once, with the pointer got[] says. */
static void
check_table(ustr_table *t, const ustr *got, size_t n)
{
    for (size_t k = 0; k < n; k++)
        CHECK_EQ_PTR(intern(t, k), got[k]);
    CHECK_EQ_U64(ustr__table_walk_count(t), n);
    CHECK_EQ_U64(ustr_test_stats(t).strings, n);
}

/* ---- cases ---- */

static void
case_publish_after_move(const char *arg)
{
    (void)arg;
    for (size_t round = 0; round < ROUNDS; round++) {
        ustr_table *t = ustr_test_table("lockfree", 1);
        static job  j;
        j = (job){.t = t, .stop = "claimed", .first = round, .count = 1};
        pthread_t th = job_start_and_stop(&j);
        /* The worker holds room for names[round] in the shard's first
         * array; the others fill it and move it on. */
        static ustr got[STRINGS];
        CHECK(main_fill(t, ROUNDS, FILL, got) >= 1);
        job_resume_and_join(th);
        REQUIRE(j.got[round] != NULL);
        /* The table: names[round] and main's FILL strings, each once. */
        CHECK_EQ_PTR(intern(t, round), j.got[round]);
        for (size_t k = ROUNDS; k < ROUNDS + FILL; k++)
            CHECK_EQ_PTR(intern(t, k), got[k]);
        CHECK_EQ_U64(ustr__table_walk_count(t), FILL + 1);
        CHECK_EQ_U64(ustr_test_stats(t).strings, FILL + 1);
        ustr_table_destroy(t);
    }
}

static void
case_helper_preempted(const char *arg)
{
    (void)arg;
    alarm(20); /* a main thread that waits for the stopped helper hangs */
    ustr_table *t = ustr_test_table("lockfree", 1);
    static job  j;
    /* The worker's ninth string finds the first array full, starts its
     * move and takes its only chunk to copy. */
    j = (job){.t = t, .stop = "copying", .first = 0, .count = 9};
    pthread_t th = job_start_and_stop(&j);
    CHECK_EQ_U64(ustr_test_stats(t).grows, 0); /* the move has not ended */
    /* Main fills the next array (32 of 64 slots) past its room: finishing
     * the first move is now needed, and main must do it itself. */
    static ustr got[STRINGS];
    CHECK(main_fill(t, 9, HELPER_FILL, got) >= 2);
    job_resume_and_join(th);
    for (size_t k = 0; k < 9; k++)
        got[k] = j.got[k];
    check_table(t, got, 9 + HELPER_FILL);
    ustr_table_destroy(t);
    alarm(0);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"publish_after_move", case_publish_after_move},
        {"helper_preempted", case_helper_preempted},
        {NULL, NULL},
    };
    REQUIRE(sem_init(&stopped, 0, 0) == 0 && sem_init(&resume, 0, 0) == 0);
    one_shard_strings();
    return rt_test_main(cases, argc, argv);
}
