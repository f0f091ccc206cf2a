/* The fence of ustr_fence.h checked by what it forbids, not by what it
 * calls: a store-buffering litmus test, the shape of every protocol built on
 * it (ustr_epoch.h's announcement and scan, texture/cache_tiles.c's hazard
 * pointers).
 *
 *   writer (a reclaimer)                   reader
 *   x = i            (seq_cst)             ustr_fence_announce(&y, i)
 *   ustr_fence_writer()                    r2 = x   (seq_cst)
 *   r1 = y           (seq_cst)
 *
 * Forbidden: r1 and r2 both older than round i (neither saw the other's
 * store). The writer's accesses are seq_cst, as the callers' are (the
 * epoch's fetch-add and scan, the slot's clear and the hazard scan): on
 * x86 its store is then a full fence of its own, so what is tested is the
 * reader's side, the one the asymmetric fence exists for. There the
 * reader's store is relaxed behind a compiler barrier, and its store buffer
 * may hold it past its own load of x; only the writer's membarrier(2),
 * which makes the reader's CPU execute a full barrier during the call,
 * rules the outcome out. Without it (ustr_fence_writer() returning true
 * and doing nothing) the outcome shows up within hundreds of rounds here (a
 * two-CPU KVM guest), as the control shows: the same rounds with the
 * writer's fence left out. With the symmetric fence (USTR_NO_MEMBARRIER)
 * the announcement is a seq_cst store, a full fence on the reader's side,
 * and the same check applies to it: a relaxed store there fails it too.
 *
 * The test can only tell a working fence from none where the two threads
 * run at once and the unfenced control shows the forbidden outcome: with
 * one CPU (a context switch is a full barrier), or a machine so busy that
 * the threads never overlap within the time budget, it says so and exits
 * 77 (skipped). */
#define _GNU_SOURCE /* pthread_setaffinity_np() */
#include "check.h"
#include "fence_testing.h"
#include "time_testing.h"
#include "ustr_cpus.h"
#include "ustr_fence.h"

#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Under ThreadSanitizer (fence.c's test for it) every atomic access is a
 * call into its runtime, and the unfenced control never showed the outcome
 * (none in 630000 rounds, 2.5 s): nothing to compare a fence with, so the
 * test skips at once. The plain build's .symmetric entry checks the fence
 * that ThreadSanitizer builds run. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

enum {
    SKIP = 77,   /* SKIP_RETURN_CODE in tests/CMakeLists.txt (RT_TEST_SKIP) */
    BLOCK = 256, /* rounds of one kind in a row, control and fenced alternating */
    /* A fence that does nothing makes the fenced rounds control rounds in
     * all but name; over as many rounds they show about as many forbidden
     * outcomes (measured: 1-4 per 256 rounds of each kind), so a fence
     * that does nothing passes with odds of about e^-20 when the control
     * saw 20, e^-5 when the budget ran out with 5 seen. */
    CONTROL_WANTED = 20,  /* forbidden outcomes of the control that end the run */
    CONTROL_ENOUGH = 5,   /* fewer within the budget: the threads did not race; skip */
    WRITER_JITTER = 1024, /* delay loops before the writer's store: 0 .. this - 1 */
    READER_JITTER = 64,   /* and before the reader's */
};
#define BUDGET_S 2.5 /* seconds, the longest a run goes on looking for the control's outcome */
#define STOP     UINT64_MAX

/* Each variable on a line of its own: x and y are written by one thread and
 * read by the other, and x's line must not ride with y's. Round i's stores
 * write i, so nothing is reset between rounds: each store then finds its
 * line shared with the other thread (it read the last round's value) and
 * waits in the store buffer for the other copy to be invalidated, while the
 * load that follows it reads its own cached copy. That is the window in
 * which the forbidden outcome appears without a fence. */
typedef struct litmus {
    alignas(64) _Atomic uint64_t x;  /* the writer's store (a reclaimer's unlink) */
    alignas(64) _Atomic uint64_t y;  /* the reader's store (an announcement) */
    alignas(64) _Atomic uint64_t go; /* round the writer started; STOP: leave */
    /* 2 * round the reader finished + whether its load saw that round's x */
    alignas(64) _Atomic uint64_t done;
    int reader_cpu; /* -1: not pinned */
} litmus;

/* Rounds alternate in blocks: control (no writer fence), fenced, and so on,
 * so that both kinds run under the same conditions (a busy machine, a
 * membarrier's interrupts) and in equal numbers. */
static bool
round_fenced(uint64_t i) /* i >= 1 */
{
    return ((i - 1) / BLOCK) & 1;
}

static uint64_t
rand_next(uint64_t *state) /* xorshift64* */
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C(0x2545F4914F6CDD1D);
}

/* A random delay, so that over many rounds the two sides' stores meet at
 * every small offset: the reader sees `go` one cache-line transfer after the
 * writer stores it (some 300 iterations of this loop in a KVM guest, fewer
 * on bare metal), and the outcome needs the two stores within a few tens of
 * nanoseconds of each other. */
static void
delay(unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        atomic_signal_fence(memory_order_seq_cst); /* the loop stays a loop */
}

/* Waiting for the other side: a plain spin, not PAUSE (in a virtual machine
 * a PAUSE loop makes the hypervisor deschedule the vCPU, for far longer than
 * a round), yielding once the other side has plainly been descheduled. */
static void
spin(unsigned *spins)
{
    if (++*spins > (1u << 20))
        sched_yield();
    else
        atomic_signal_fence(memory_order_seq_cst);
}

static void
pin(int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0);
}

static void *
reader(void *arg)
{
    litmus  *l = arg;
    uint64_t seed = UINT64_C(0x9E3779B97F4A7C15);
    pin(l->reader_cpu);
    for (uint64_t i = 1;; i++) {
        uint64_t g;
        unsigned spins = 0;
        /* Acquire pairs with the writer's release of `go`: round i - 1's
         * outcome was read before this round starts. */
        while ((g = atomic_load_explicit(&l->go, memory_order_acquire)) < i)
            spin(&spins);
        if (g == STOP)
            return NULL;
        delay((unsigned)(rand_next(&seed) % READER_JITTER));
        if (round_fenced(i)) {
            ustr_fence_announce(&l->y, i); /* the reader's half of the fence */
        } else {
            /* The control: the asymmetric announcement (which is all the
             * reader ever does there) with no writer fence to pair with. */
            atomic_store_explicit(&l->y, i, memory_order_relaxed);
            atomic_signal_fence(memory_order_seq_cst);
        }
        /* seq_cst, as the callers' second load (ustr_epoch's scan, the
         * hazard's recheck): the symmetric fence's proof needs it. */
        bool saw = atomic_load_explicit(&l->x, memory_order_seq_cst) == i;
        /* Release: the writer reads the outcome after the round. */
        atomic_store_explicit(&l->done, 2 * i + saw, memory_order_release);
    }
}

static void
case_litmus(const char *arg)
{
    (void)arg;
    fence_test_mode_check("; the .symmetric entry checks the symmetric fence");
    if (UNDER_TSAN) {
        fprintf(stderr, "skipped: under ThreadSanitizer even the unfenced control never races, "
                        "so no fence can be told from none\n");
        exit(SKIP);
    }
    unsigned cpu[2];
    if (ustr_cpus_usable_ids(cpu, 2) < 2) { /* the first two CPUs it may run on */
        fprintf(stderr,
                "skipped: %u CPU to run on: the two sides never run at once (a context "
                "switch is a full barrier), so no fence can be told from none\n",
                ustr_cpus_usable());
        exit(SKIP);
    }
    /* Each side on a CPU of its own: both run at once far more often. */
    static litmus l; /* static: aligned, and zero (round 0 is done) */
    l.reader_cpu = (int)cpu[1];
    pin((int)cpu[0]);
    pthread_t thread;
    REQUIRE(pthread_create(&thread, NULL, reader, &l) == 0);

    uint64_t        seed = UINT64_C(0xD1B54A32D192ED03), forbidden[2] = {0, 0}, rounds[2] = {0, 0};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t i = 1;; i++) {
        bool fenced = round_fenced(i);
        /* Release pairs with the reader's acquire: it starts round i. */
        atomic_store_explicit(&l.go, i, memory_order_release);
        delay((unsigned)(rand_next(&seed) % WRITER_JITTER));
        atomic_store_explicit(&l.x, i, memory_order_seq_cst);
        if (fenced)
            REQUIRE(ustr_fence_writer()); /* registered at start-up: it cannot fail */
        else
            atomic_signal_fence(memory_order_seq_cst);
        bool     saw = atomic_load_explicit(&l.y, memory_order_seq_cst) == i;
        uint64_t d;
        unsigned spins = 0;
        /* Acquire pairs with the reader's release of `done`. */
        while ((d = atomic_load_explicit(&l.done, memory_order_acquire)) < 2 * i)
            spin(&spins);
        rounds[fenced]++;
        forbidden[fenced] += !saw && !(d & 1);
        /* After each fenced block, so both kinds have run equally often. */
        if (fenced && i % BLOCK == 0 &&
            (forbidden[0] >= CONTROL_WANTED || forbidden[1] > 0 || test_secs_since(&t0) > BUDGET_S))
            break;
    }
    double secs = test_secs_since(&t0);
    atomic_store_explicit(&l.go, STOP, memory_order_release);
    REQUIRE(pthread_join(thread, NULL) == 0);
    fprintf(stderr,
            "unfenced control: %llu forbidden outcome(s) in %llu rounds; fenced: %llu in %llu "
            "rounds (%.2f s, CPUs %d and %d)\n",
            (unsigned long long)forbidden[0], (unsigned long long)rounds[0],
            (unsigned long long)forbidden[1], (unsigned long long)rounds[1], secs, cpu[0], cpu[1]);
    CHECK_EQ_U64(rounds[1], rounds[0]);
    /* The fence's guarantee: never both stores missed. Checked before the
     * control's count: a fenced failure is a failure however few rounds
     * raced. */
    CHECK_EQ_U64(forbidden[1], 0);
    if (forbidden[1] == 0 && forbidden[0] < CONTROL_ENOUGH) {
        fprintf(stderr,
                "skipped: the unfenced control showed the forbidden outcome %llu time(s) "
                "in %.1f s (the threads hardly ran at once: a busy machine?), too few "
                "to tell a working fence from none\n",
                (unsigned long long)forbidden[0], secs);
        exit(SKIP);
    }
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"litmus", case_litmus},
        {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
