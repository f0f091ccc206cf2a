/* Many threads intern into one table while it grows: each string must get one
 * pointer everywhere, and the table must end with exactly the distinct count.
 * Every case runs once per lock strategy (its name is the argument), at 32
 * threads on a 2-core machine, under ThreadSanitizer in the tsan preset.
 *
 * Worker threads never call CHECK (its failure counter is not atomic): they
 * count what they saw in their own struct, and main checks after the join. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "ustr_testing.h"
#include "ustring.h"
#include "ustring_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A racing phase lasts about RUN_MS whatever the build (a native run does
 * far more calls than a TSan one), but every thread makes at least MIN_OPS
 * calls. The checks count calls, so they stay exact. */
enum {
    THREADS = 32,
    RUN_MS = 1000,
    MIN_OPS = 1000,
    POOL = 20000,   /* shared strings of the overlap case */
    NEW_MAX = 6000, /* per thread, new strings at most (all_new, grow_while_reading) */
    PRELOAD = 2000  /* strings the readers of grow_while_reading look up */
};

/* The benches' generator (docs/design.md): xorshift64*, thread t seeded with
 * (t + 1) * 0x9E3779B97F4A7C15. */
static uint64_t
rng_next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}

static uint64_t
rng_seed(unsigned t)
{
    return (t + 1) * 0x9E3779B97F4A7C15ULL;
}

/* A pool of distinct strings of assorted lengths, formatted once. */
typedef struct pool {
    char  *s[POOL];
    size_t len[POOL];
} pool;

static void
pool_init(pool *p, const char *fmt_tag)
{
    char buf[96];
    for (unsigned i = 0; i < POOL; i++) {
        int n = snprintf(buf, sizeof buf, "%s/set%03u/tex_%u_%.*s.tx", fmt_tag, i % 211, i,
                         (int)(i % 13), "abcdefghijklm");
        p->len[i] = (size_t)n;
        p->s[i] = malloc((size_t)n + 1);
        REQUIRE(p->s[i] != NULL);
        memcpy(p->s[i], buf, (size_t)n + 1);
    }
}

static void
pool_free(pool *p)
{
    for (unsigned i = 0; i < POOL; i++)
        free(p->s[i]);
}

static bool
same_bytes(ustr u, const char *s, size_t len)
{
    return ustr_len(u) == len && memcmp(u, s, len) == 0 && u[len] == '\0' &&
           ustr_hash(u) == ustr_hash_bytes(s, len);
}

typedef struct harness harness;

typedef struct worker {
    pthread_t thread;
    unsigned  id;
    harness  *h;
    ustr     *got;  /* per string index: the pointer this thread got, or NULL */
    long      null; /* calls that returned NULL */
    long      flip; /* calls that returned another pointer than before for an index */
    long      ops;  /* calls made */
    long      odd;  /* stats snapshots out of bounds (grow_while_reading); NULL
                     * without ENOMEM (grow_nomem) */
    uint64_t end;   /* CLOCK_MONOTONIC ns when the racing phase ends */
} worker;

struct harness {
    ustr_table       *t;
    pthread_barrier_t start;
    const pool       *pool;
    ustr              one;          /* same_string: the preloaded pointer */
    const ustr       *preloaded;    /* grow_while_reading: pointers of the first PRELOAD */
    atomic_int        writers_left; /* grow_while_reading */
    worker            w[THREADS];
};

/* Waits at the start barrier and starts the thread's clock. */
static void
worker_start(worker *w, pthread_barrier_t *start)
{
    pthread_barrier_wait(start);
    w->end = ustr_test_now_ns() + (uint64_t)RUN_MS * 1000000u;
}

/* Whether to make call number i (from 0): at least MIN_OPS, then until time
 * is up (looked at every 64 calls). */
static bool
worker_more(const worker *w, long i)
{
    return i < MIN_OPS || i % 64 != 0 || ustr_test_now_ns() < w->end;
}

/* Records `u` for index `k`: a second, different pointer is a flip. */
static void
worker_got(worker *w, size_t k, ustr u)
{
    w->ops++;
    if (!u)
        w->null++;
    else if (w->got[k] && w->got[k] != u)
        w->flip++;
    else
        w->got[k] = u;
}

static void
harness_run(harness *h, size_t got_per_thread, void *(*fn)(void *))
{
    REQUIRE(pthread_barrier_init(&h->start, NULL, THREADS) == 0);
    for (unsigned i = 0; i < THREADS; i++) {
        worker *w = &h->w[i];
        w->id = i;
        w->h = h;
        w->got = calloc(got_per_thread, sizeof *w->got);
        REQUIRE(w->got != NULL);
        w->null = w->flip = w->ops = w->odd = 0;
    }
    for (unsigned i = 0; i < THREADS; i++)
        REQUIRE(pthread_create(&h->w[i].thread, NULL, fn, &h->w[i]) == 0);
    for (unsigned i = 0; i < THREADS; i++)
        REQUIRE(pthread_join(h->w[i].thread, NULL) == 0);
    pthread_barrier_destroy(&h->start);
    long null = 0, flip = 0;
    for (unsigned i = 0; i < THREADS; i++) {
        null += h->w[i].null;
        flip += h->w[i].flip;
    }
    CHECK_EQ_INT(null, 0);
    CHECK_EQ_INT(flip, 0);
}

static void
harness_free(harness *h)
{
    for (unsigned i = 0; i < THREADS; i++)
        free(h->w[i].got);
}

static long
harness_ops(const harness *h)
{
    long ops = 0;
    for (unsigned i = 0; i < THREADS; i++)
        ops += h->w[i].ops;
    return ops;
}

/* overlap: random draws from the shared pool, so threads collide. */
static void *
overlap_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    uint64_t x = rng_seed(w->id);
    worker_start(w, &h->start);
    for (long i = 0; worker_more(w, i); i++) {
        size_t k = (size_t)(rng_next(&x) % POOL);
        worker_got(w, k, ustr_table_intern(h->t, h->pool->s[k], h->pool->len[k]));
    }
    return NULL;
}

/* lockstep: every thread interns the pool in the same order, so each new
 * string is raced for by many threads at once, also at the moments the index
 * fills up and grows. */
static void *
lockstep_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    worker_start(w, &h->start);
    for (long i = 0; i < POOL && worker_more(w, i); i++)
        worker_got(w, (size_t)i, ustr_table_intern(h->t, h->pool->s[i], h->pool->len[i]));
    return NULL;
}

/* Runs `fn` on every thread over a shared pool, then checks that each pool
 * string got one pointer everywhere and that the table counted exactly. */
static void
pool_case(const char *arg, void *(*fn)(void *))
{
    static pool    p;
    static harness h;
    static ustr    first[POOL];
    pool_init(&p, "pool");
    h.t = ustr_test_table(arg, 16);
    h.pool = &p;
    harness_run(&h, POOL, fn);

    /* Every index maps to one pointer across all threads, with its bytes. */
    uint64_t touched = 0;
    long     split = 0, wrong = 0;
    for (size_t k = 0; k < POOL; k++) {
        first[k] = NULL;
        for (unsigned i = 0; i < THREADS; i++) {
            ustr u = h.w[i].got[k];
            if (!u)
                continue;
            if (!first[k]) {
                first[k] = u;
                touched++;
                wrong += !same_bytes(u, p.s[k], p.len[k]);
            } else if (u != first[k]) {
                if (split++ < 5)
                    fprintf(stderr, "index %zu: %p (thread %u) != %p\n", k, (const void *)u, i,
                            (const void *)first[k]);
            }
        }
    }
    fprintf(stderr, "%ld calls, %llu distinct strings\n", harness_ops(&h),
            (unsigned long long)touched);
    CHECK_EQ_INT(split, 0);
    CHECK_EQ_INT(wrong, 0);
    CHECK(touched >= MIN_OPS);

    ustr_stats s = ustr_test_stats(h.t);
    CHECK_EQ_U64(s.strings, touched);
    CHECK_EQ_U64(ustr__table_walk_count(h.t), touched); /* the index, not the counters */
    CHECK_EQ_U64(s.lookups, harness_ops(&h));
    CHECK(harness_ops(&h) >= (long)THREADS * MIN_OPS);
    CHECK_EQ_U64(s.threads, THREADS);
    CHECK(s.grows > 0);
    CHECK(s.capacity >= s.strings);

    /* One thread now: the touched strings give the same pointers, the rest
     * go in new. */
    long changed = 0;
    for (size_t k = 0; k < POOL; k++) {
        ustr u = ustr_table_intern(h.t, p.s[k], p.len[k]);
        CHECK(u != NULL);
        if (first[k] && u != first[k])
            changed++;
    }
    CHECK_EQ_INT(changed, 0);
    CHECK_EQ_U64(ustr_test_stats(h.t).strings, POOL);
    CHECK_EQ_U64(ustr__table_walk_count(h.t), POOL);
    harness_free(&h);
    ustr_table_destroy(h.t);
    pool_free(&p);
}

static void
case_overlap(const char *arg)
{
    pool_case(arg, overlap_thread);
}

static void
case_lockstep(const char *arg)
{
    pool_case(arg, lockstep_thread);
}

/* same_string: every thread interns one string, from a buffer of its own. */
static void *
same_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    char     buf[] = "textures/shared/one_name_for_all.tx";
    worker_start(w, &h->start);
    for (long i = 0; worker_more(w, i); i++) {
        ustr u = i % 2 ? ustr_table_intern_cstr(h->t, buf)
                       : ustr_table_intern(h->t, buf, sizeof buf - 1);
        worker_got(w, 0, u);
    }
    return NULL;
}

static void
case_same_string(const char *arg)
{
    static harness h;
    h.t = ustr_test_table(arg, 16);
    harness_run(&h, 1, same_thread);
    ustr u = h.w[0].got[0];
    REQUIRE(u != NULL);
    for (unsigned i = 1; i < THREADS; i++)
        CHECK_EQ_PTR(h.w[i].got[0], u);
    CHECK_EQ_STR(u, "textures/shared/one_name_for_all.tx");
    CHECK_EQ_PTR(ustr_table_intern_cstr(h.t, "textures/shared/one_name_for_all.tx"), u);
    ustr_stats s = ustr_test_stats(h.t);
    CHECK_EQ_U64(s.strings, 1);
    CHECK_EQ_U64(ustr__table_walk_count(h.t), 1);
    CHECK_EQ_U64(s.lookups, harness_ops(&h) + 1);
    CHECK_EQ_U64(s.threads, THREADS + 1);
    harness_free(&h);
    ustr_table_destroy(h.t);
}

/* same_large: every thread interns one 32 KiB string, from a buffer of its
 * own; all but one lose the race to insert it and must take the winner's
 * pointer. A few calls each: the race is at the start. */
enum { LARGE_LEN = 32 * 1024, LARGE_OPS = 50 };

static void
large_fill(char *buf)
{
    for (size_t i = 0; i < LARGE_LEN; i++)
        buf[i] = (char)('a' + (i * 7 + i / 1000) % 26);
}

static void *
large_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    char    *buf = malloc(LARGE_LEN);
    if (!buf)
        return NULL; /* shows as calls missing */
    large_fill(buf);
    pthread_barrier_wait(&h->start);
    for (int i = 0; i < LARGE_OPS; i++)
        worker_got(w, 0, ustr_table_intern(h->t, buf, LARGE_LEN));
    free(buf);
    return NULL;
}

static void
case_same_large(const char *arg)
{
    static harness h;
    static char    want[LARGE_LEN];
    large_fill(want);
    h.t = ustr_test_table(arg, 16);
    harness_run(&h, 1, large_thread);
    ustr u = h.w[0].got[0];
    REQUIRE(u != NULL);
    for (unsigned i = 1; i < THREADS; i++)
        CHECK_EQ_PTR(h.w[i].got[0], u);
    CHECK(same_bytes(u, want, LARGE_LEN));
    CHECK_EQ_U64(harness_ops(&h), (uint64_t)THREADS * LARGE_OPS);
    ustr_stats s = ustr_test_stats(h.t);
    CHECK_EQ_U64(s.strings, 1);
    CHECK_EQ_U64(ustr__table_walk_count(h.t), 1);
    CHECK_EQ_U64(s.lookups, harness_ops(&h));
    CHECK(s.string_bytes >= LARGE_LEN);
    harness_free(&h);
    ustr_table_destroy(h.t);
}

/* all_new: each thread interns strings no other thread has. */
static int
format_new(char *buf, size_t size, unsigned t, int i)
{
    return snprintf(buf, size, "new/t%02u/%d/%.*s", t, i, i % 11, "0123456789a");
}

static void *
new_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    char     buf[64];
    worker_start(w, &h->start);
    for (int i = 0; i < NEW_MAX && worker_more(w, i); i++) {
        int n = format_new(buf, sizeof buf, w->id, i);
        worker_got(w, (size_t)i, ustr_table_intern(h->t, buf, (size_t)n));
    }
    return NULL;
}

static int
cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const ustr *)a, y = (uintptr_t) * (const ustr *)b;
    return (x > y) - (x < y);
}

static void
case_all_new(const char *arg)
{
    static harness h;
    static ustr    all[THREADS * NEW_MAX];
    size_t         nall = 0;
    char           buf[64];
    h.t = ustr_test_table(arg, 16);
    harness_run(&h, NEW_MAX, new_thread);

    long wrong = 0, changed = 0;
    for (unsigned t = 0; t < THREADS; t++) {
        for (long i = 0; i < h.w[t].ops; i++) {
            ustr u = h.w[t].got[i];
            all[nall++] = u;
            int n = format_new(buf, sizeof buf, t, (int)i);
            if (u && !same_bytes(u, buf, (size_t)n))
                wrong++;
        }
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_U64(nall, harness_ops(&h));
    CHECK(nall >= (size_t)THREADS * MIN_OPS);
    ustr_stats s = ustr_test_stats(h.t);
    CHECK_EQ_U64(s.strings, nall);
    CHECK_EQ_U64(ustr__table_walk_count(h.t), nall);
    CHECK_EQ_U64(s.lookups, nall);
    CHECK(s.grows > 0);

    qsort(all, nall, sizeof all[0], cmp_ptr);
    long dups = 0;
    for (size_t i = 1; i < nall; i++)
        dups += all[i] == all[i - 1];
    CHECK_EQ_INT(dups, 0);

    for (unsigned t = 0; t < THREADS; t++) {
        for (long i = 0; i < h.w[t].ops; i++) {
            int n = format_new(buf, sizeof buf, t, (int)i);
            changed += ustr_table_intern(h.t, buf, (size_t)n) != h.w[t].got[i];
        }
    }
    CHECK_EQ_INT(changed, 0);
    CHECK_EQ_U64(ustr_test_stats(h.t).strings, nall);
    harness_free(&h);
    ustr_table_destroy(h.t);
}

/* grow_while_reading: half the threads look up strings interned before the
 * start (their pointers are known) while the other half insert new strings
 * and make the index grow under them. A lookup that misses during a growth
 * would insert a duplicate and return another pointer. */
static void *
grow_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    bool     writer = w->id % 2;
    uint64_t x = rng_seed(w->id);
    char     buf[64];
    worker_start(w, &h->start);
    if (writer) {
        for (int i = 0; i < NEW_MAX && worker_more(w, i); i++) {
            int n = format_new(buf, sizeof buf, w->id, i);
            worker_got(w, (size_t)i, ustr_table_intern(h->t, buf, (size_t)n));
        }
        /* Relaxed: nothing is published through it; the readers only need to
         * stop some time after the last writer, and the join orders the rest. */
        atomic_fetch_sub_explicit(&h->writers_left, 1, memory_order_relaxed);
    } else {
        for (long i = 0;
             i < MIN_OPS || atomic_load_explicit(&h->writers_left, memory_order_relaxed); i++) {
            size_t k = (size_t)(rng_next(&x) % PRELOAD);
            ustr   u = ustr_table_intern(h->t, h->pool->s[k], h->pool->len[k]);
            w->ops++;
            if (u != h->preloaded[k])
                w->flip++;
            /* Thread 0 also reads the stats while the others intern (for
             * lockfree tables that also frees retired index arrays). A
             * snapshot may be inconsistent (capacity can lag strings while
             * an index moves), but each counter stays within bounds. */
            if (w->id == 0 && i % 16 == 0) {
                ustr_stats s = ustr_test_stats(h->t);
                w->odd += s.strings < PRELOAD || s.strings > PRELOAD + THREADS / 2 * NEW_MAX ||
                          s.lookups < PRELOAD;
            }
        }
    }
    return NULL;
}

static void
case_grow_while_reading(const char *arg)
{
    static pool    p;
    static harness h;
    static ustr    pre[PRELOAD];
    pool_init(&p, "grow");
    h.t = ustr_test_table(arg, 16);
    h.pool = &p;
    h.preloaded = pre;
    for (size_t k = 0; k < PRELOAD; k++) {
        pre[k] = ustr_table_intern(h.t, p.s[k], p.len[k]);
        REQUIRE(pre[k] != NULL);
    }
    ustr_stats before = ustr_test_stats(h.t);
    atomic_init(&h.writers_left, THREADS / 2);
    harness_run(&h, NEW_MAX, grow_thread);

    CHECK_EQ_INT(h.w[0].odd, 0);
    uint64_t added = 0;
    for (unsigned i = 1; i < THREADS; i += 2)
        added += (uint64_t)h.w[i].ops;
    ustr_stats s = ustr_test_stats(h.t);
    CHECK_EQ_U64(s.strings, PRELOAD + added);
    /* stats.c reports inserts as strings: count what the index holds. */
    CHECK_EQ_U64(ustr__table_walk_count(h.t), PRELOAD + added);
    CHECK_EQ_U64(s.lookups, PRELOAD + (uint64_t)harness_ops(&h));
    CHECK(s.grows > before.grows); /* the index did grow during the race */
    for (size_t k = 0; k < PRELOAD; k++)
        CHECK_EQ_PTR(ustr_table_intern(h.t, p.s[k], p.len[k]), pre[k]);
    harness_free(&h);
    ustr_table_destroy(h.t);
    pool_free(&p);
}

/* sequential_threads: threads that use the table one after another, each
 * gone before the next starts. A new thread may take over the record of an
 * exited one (ustring.h, ustr_stats.threads), so the counts its calls add to
 * must carry on from the dead thread's, and its strings stay valid. */
enum { SEQ_THREADS = 6 };

static void *
seq_thread(void *arg)
{
    worker *w = arg;
    char    buf[32];
    int     n = snprintf(buf, sizeof buf, "seq/%u", w->id);
    w->got[0] = ustr_table_intern_cstr(w->h->t, "seq/common");
    w->got[1] = ustr_table_intern(w->h->t, buf, (size_t)n);
    return NULL;
}

static void
case_sequential_threads(const char *arg)
{
    static harness h;
    static ustr    mine[SEQ_THREADS][2];
    h.t = ustr_test_table(arg, 0);
    for (unsigned i = 0; i < SEQ_THREADS; i++) {
        worker *w = &h.w[i];
        w->id = i;
        w->h = &h;
        w->got = mine[i];
        REQUIRE(pthread_create(&w->thread, NULL, seq_thread, w) == 0);
        REQUIRE(pthread_join(w->thread, NULL) == 0);
    }
    for (unsigned i = 0; i < SEQ_THREADS; i++) {
        CHECK(mine[i][0] != NULL && mine[i][1] != NULL);
        CHECK_EQ_PTR(mine[i][0], mine[0][0]);
        for (unsigned j = 0; j < i; j++)
            CHECK_NE_PTR(mine[i][1], mine[j][1]);
    }
    ustr_stats s = ustr_test_stats(h.t);
    CHECK_EQ_U64(s.strings, SEQ_THREADS + 1);
    CHECK_EQ_U64(s.lookups, 2 * SEQ_THREADS);
    CHECK(s.threads >= 1 && s.threads <= SEQ_THREADS);
    fprintf(stderr, "%d threads, %llu records\n", SEQ_THREADS, (unsigned long long)s.threads);
    /* A later thread still finds what the first one interned. */
    CHECK_EQ_PTR(ustr_table_intern_cstr(h.t, "seq/common"), mine[0][0]);
    ustr_table_destroy(h.t);
}

/* grow_nomem: every thread interns the shared pool in the same order into a
 * table whose allocator refuses one allocation in FAIL_EVERY, so index
 * growth, arena blocks and thread records fail now and then while other
 * threads race on the same strings (for lockfree: a failed maker of the next
 * array hands the job on). A refused call returns NULL with ENOMEM and leaves
 * the table unchanged: a string some thread got keeps that one pointer, and
 * the table holds exactly the strings that someone got. */
enum { FAIL_EVERY = 3 };

typedef struct flaky_alloc {
    atomic_bool on;      /* refusing */
    atomic_long calls;   /* allocations while refusing */
    atomic_long refused; /* of those, refused */
} flaky_alloc;

static void *
flaky_alloc_fn(size_t size, void *ctx)
{
    flaky_alloc *fa = ctx;
    /* Relaxed, all three: counts and a switch that main flips while no
     * worker runs; the join and thread creation order the rest. */
    if (atomic_load_explicit(&fa->on, memory_order_relaxed) &&
        atomic_fetch_add_explicit(&fa->calls, 1, memory_order_relaxed) % FAIL_EVERY ==
            FAIL_EVERY - 1) {
        atomic_fetch_add_explicit(&fa->refused, 1, memory_order_relaxed);
        return NULL;
    }
    return malloc(size);
}

static void
flaky_free_fn(void *p, size_t size, void *ctx)
{
    (void)size, (void)ctx;
    free(p);
}

static void *
nomem_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    worker_start(w, &h->start);
    for (long i = 0; i < POOL && worker_more(w, i); i++) {
        errno = 0;
        ustr u = ustr_table_intern(h->t, h->pool->s[i], h->pool->len[i]);
        w->ops++;
        if (!u) {
            w->null++;
            w->odd += errno != ENOMEM;
        } else if (w->got[i] && w->got[i] != u) {
            w->flip++;
        } else {
            w->got[i] = u;
        }
    }
    return NULL;
}

static void
case_grow_nomem(const char *arg)
{
    static pool        p;
    static harness     h;
    static ustr        first[POOL];
    static flaky_alloc fa;
    pool_init(&p, "nomem");
    ustr_config cfg = {
        .lock = ustr_test_lock(arg),
        .initial_capacity = 16,
        .allocator = {.alloc_fn = flaky_alloc_fn, .free_fn = flaky_free_fn, .ctx = &fa},
    };
    REQUIRE(ustr_table_create(&cfg, &h.t) == USTR_OK);
    h.pool = &p;
    REQUIRE(pthread_barrier_init(&h.start, NULL, THREADS) == 0);
    for (unsigned i = 0; i < THREADS; i++) {
        worker *w = &h.w[i];
        w->id = i;
        w->h = &h;
        w->got = calloc(POOL, sizeof *w->got);
        REQUIRE(w->got != NULL);
        w->null = w->flip = w->ops = w->odd = 0;
    }
    /* seq_cst, as every plain atomic_*(): no worker runs yet, and thread
     * creation orders it before their calls anyway. */
    atomic_store(&fa.on, true);
    for (unsigned i = 0; i < THREADS; i++)
        REQUIRE(pthread_create(&h.w[i].thread, NULL, nomem_thread, &h.w[i]) == 0);
    for (unsigned i = 0; i < THREADS; i++)
        REQUIRE(pthread_join(h.w[i].thread, NULL) == 0);
    atomic_store(&fa.on, false); /* after the join: ordered by it */
    pthread_barrier_destroy(&h.start);

    long     null = 0, flip = 0, bad_errno = 0, split = 0, wrong = 0;
    uint64_t touched = 0;
    for (unsigned i = 0; i < THREADS; i++) {
        null += h.w[i].null;
        flip += h.w[i].flip;
        bad_errno += h.w[i].odd;
    }
    for (size_t k = 0; k < POOL; k++) {
        first[k] = NULL;
        for (unsigned i = 0; i < THREADS; i++) {
            ustr u = h.w[i].got[k];
            if (!u)
                continue;
            if (!first[k]) {
                first[k] = u;
                touched++;
                wrong += !same_bytes(u, p.s[k], p.len[k]);
            } else if (u != first[k]) {
                split++;
            }
        }
    }
    long refused = atomic_load(&fa.refused); /* after the join: ordered by it */
    fprintf(stderr, "%ld calls, %ld refused allocations, %ld NULL, %llu distinct strings\n",
            harness_ops(&h), refused, null, (unsigned long long)touched);
    CHECK(refused > 0);
    CHECK(null > 0); /* the failure paths did run */
    CHECK_EQ_INT(bad_errno, 0);
    CHECK_EQ_INT(flip, 0);
    CHECK_EQ_INT(split, 0);
    CHECK_EQ_INT(wrong, 0);
    CHECK(touched > 0);

    ustr_stats s = ustr_test_stats(h.t);
    CHECK_EQ_U64(s.strings, touched);
    CHECK_EQ_U64(ustr__table_walk_count(h.t), touched); /* the index: no refusal left a string */
    CHECK_EQ_U64(s.lookups, (uint64_t)(harness_ops(&h) - null));
    CHECK(s.capacity >= s.strings);

    /* Memory is back: what anyone got is still there, the rest goes in. */
    long changed = 0;
    for (size_t k = 0; k < POOL; k++) {
        ustr u = ustr_table_intern(h.t, p.s[k], p.len[k]);
        CHECK(u != NULL);
        changed += first[k] && u != first[k];
    }
    CHECK_EQ_INT(changed, 0);
    CHECK_EQ_U64(ustr_test_stats(h.t).strings, POOL);
    harness_free(&h);
    ustr_table_destroy(h.t);
    pool_free(&p);
}

/* many_tables: each thread interns into more tables than its thread-local
 * cache holds (ustring_internal.h, USTR__TLS_ENTRIES), cycling through them so
 * that most calls miss the cache and look the thread's record up again while
 * other threads register and the indexes grow. Each table must give one
 * pointer per string, keep tables apart, and keep one record per thread. */
enum { MT_TABLES = 6, MT_POOL = 3000 };

static ustr_table *mt_tables[MT_TABLES];

static void *
many_tables_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    uint64_t x = rng_seed(w->id);
    worker_start(w, &h->start);
    for (long i = 0; worker_more(w, i); i++) {
        size_t tb = (size_t)i % MT_TABLES, k = (size_t)(rng_next(&x) % MT_POOL);
        worker_got(w, tb * MT_POOL + k,
                   ustr_table_intern(mt_tables[tb], h->pool->s[k], h->pool->len[k]));
    }
    return NULL;
}

static void
case_many_tables(const char *arg)
{
    static pool    p;
    static harness h;
    static ustr    first[MT_TABLES * MT_POOL];
    pool_init(&p, "many");
    for (unsigned tb = 0; tb < MT_TABLES; tb++)
        mt_tables[tb] = ustr_test_table(arg, 16);
    h.pool = &p;
    harness_run(&h, MT_TABLES * MT_POOL, many_tables_thread);

    long     split = 0, wrong = 0, shared = 0;
    uint64_t touched[MT_TABLES] = {0}, ops[MT_TABLES] = {0};
    for (size_t j = 0; j < MT_TABLES * MT_POOL; j++) {
        first[j] = NULL;
        for (unsigned i = 0; i < THREADS; i++) {
            ustr u = h.w[i].got[j];
            if (!u)
                continue;
            if (!first[j]) {
                first[j] = u;
                touched[j / MT_POOL]++;
                wrong += !same_bytes(u, p.s[j % MT_POOL], p.len[j % MT_POOL]);
            } else {
                split += u != first[j];
            }
        }
    }
    /* The same bytes in two tables: two pointers. */
    for (size_t k = 0; k < MT_POOL; k++)
        for (size_t a = 0; a < MT_TABLES; a++)
            for (size_t b = a + 1; b < MT_TABLES; b++)
                shared +=
                    first[a * MT_POOL + k] && first[a * MT_POOL + k] == first[b * MT_POOL + k];
    for (unsigned i = 0; i < THREADS; i++)
        for (long c = 0; c < h.w[i].ops; c++)
            ops[c % MT_TABLES]++;
    fprintf(stderr, "%ld calls over %d tables\n", harness_ops(&h), MT_TABLES);
    CHECK_EQ_INT(split, 0);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(shared, 0);
    for (unsigned tb = 0; tb < MT_TABLES; tb++) {
        ustr_stats s = ustr_test_stats(mt_tables[tb]);
        CHECK_EQ_U64(s.threads, THREADS); /* a cache miss finds the thread's record again */
        CHECK_EQ_U64(s.strings, touched[tb]);
        CHECK_EQ_U64(s.lookups, ops[tb]);
    }
    for (size_t j = 0; j < MT_TABLES * MT_POOL; j++)
        if (first[j])
            CHECK_EQ_PTR(
                ustr_table_intern(mt_tables[j / MT_POOL], p.s[j % MT_POOL], p.len[j % MT_POOL]),
                first[j]);
    harness_free(&h);
    for (unsigned tb = 0; tb < MT_TABLES; tb++)
        ustr_table_destroy(mt_tables[tb]);
    pool_free(&p);
}

/* thread_churn: a few long-lived threads make the index grow (and, for
 * lockfree tables, retire and free arrays, scanning every thread's record)
 * while a churner thread starts short-lived threads one after another, each
 * gone before the next starts. A short-lived thread may take over the record
 * of one that has exited (ustring.h, ustr_stats.threads); the takeover must
 * keep that record's strings and counts, and every string one pointer.
 *
 * thread_churn_cross: the same with two churners, so a thread started by
 * one churner may take over the record of a thread that the other one
 * joined. No join then orders the dead thread's last writes to the record
 * before the new owner's first ones; only the record itself does (a
 * takeover acquires the release that ends every intern call, thread.c).
 * Before it did, the order was libc's own (its thread-stack cache), which
 * ThreadSanitizer cannot see: it reported a race on the record's arena in
 * about one run in three. */
enum { CHURN_BG = 4, CHURNERS_MAX = 2, CHURN_EACH = 40, CHURN_LEN = 48 };

typedef struct churn_run {
    harness    *h;
    unsigned    id; /* churner, from 0 */
    ustr        common[CHURN_EACH], own[CHURN_EACH], pre[CHURN_EACH];
    long        ops; /* calls that returned a pointer, counted by the churner */
    pthread_t   thread;
    atomic_bool done;
} churn_run;

static churn_run churn_runs[CHURNERS_MAX];
static unsigned  churners; /* in use; set before any thread starts */

typedef struct churn_child {
    churn_run *run;
    unsigned   i;
} churn_child;

static void *
churn_child_thread(void *arg)
{
    churn_child *c = arg;
    churn_run   *r = c->run;
    char         buf[CHURN_LEN];
    int          n = snprintf(buf, sizeof buf, "churn/%u/%u", r->id, c->i);
    size_t       k = (size_t)(r->id * CHURN_EACH + c->i) % PRELOAD;
    r->common[c->i] = ustr_table_intern_cstr(r->h->t, "churn/common");
    r->own[c->i] = ustr_table_intern(r->h->t, buf, (size_t)n);
    r->pre[c->i] = ustr_table_intern(r->h->t, r->h->pool->s[k], r->h->pool->len[k]);
    return NULL;
}

static void *
churner_thread(void *arg)
{
    churn_run  *r = arg;
    churn_child c = {r, 0};
    for (c.i = 0; c.i < CHURN_EACH; c.i++) {
        pthread_t child;
        if (pthread_create(&child, NULL, churn_child_thread, &c) != 0 ||
            pthread_join(child, NULL) != 0)
            break; /* shows as calls missing */
        r->ops += (r->common[c.i] != NULL) + (r->own[c.i] != NULL) + (r->pre[c.i] != NULL);
    }
    /* Release: nothing read through it needs it (main joins us), but the
     * background threads stop on it. */
    atomic_store_explicit(&r->done, true, memory_order_release);
    return NULL;
}

static void *
churn_bg_thread(void *arg)
{
    worker  *w = arg;
    harness *h = w->h;
    char     buf[64];
    uint64_t x = rng_seed(w->id);
    for (int i = 0; i < NEW_MAX; i++) {
        bool more = false;
        for (unsigned c = 0; c < churners; c++)
            /* Acquire: pairs with the churner's release; only a stop sign. */
            more |= !atomic_load_explicit(&churn_runs[c].done, memory_order_acquire);
        if (!more && i >= MIN_OPS)
            break;
        int n = format_new(buf, sizeof buf, w->id, i);
        worker_got(w, (size_t)i, ustr_table_intern(h->t, buf, (size_t)n));
        size_t k = (size_t)(rng_next(&x) % PRELOAD);
        w->flip += ustr_table_intern(h->t, h->pool->s[k], h->pool->len[k]) != h->preloaded[k];
    }
    return NULL;
}

static void
churn_case(const char *arg, unsigned nchurners)
{
    static pool    p;
    static harness h;
    static ustr    pre[PRELOAD];
    churn_run     *runs = churn_runs;
    churners = nchurners;
    pool_init(&p, "churn");
    h.t = ustr_test_table(arg, 16);
    h.pool = &p;
    h.preloaded = pre;
    for (size_t k = 0; k < PRELOAD; k++) {
        pre[k] = ustr_table_intern(h.t, p.s[k], p.len[k]);
        REQUIRE(pre[k] != NULL);
    }
    for (unsigned c = 0; c < churners; c++) {
        runs[c] = (churn_run){.h = &h, .id = c};
        atomic_init(&runs[c].done, false);
    }
    for (unsigned i = 0; i < CHURN_BG; i++) {
        worker *w = &h.w[i];
        w->id = i;
        w->h = &h;
        w->got = calloc(NEW_MAX, sizeof *w->got);
        REQUIRE(w->got != NULL);
        w->null = w->flip = w->ops = w->odd = 0;
        REQUIRE(pthread_create(&w->thread, NULL, churn_bg_thread, w) == 0);
    }
    for (unsigned c = 0; c < churners; c++)
        REQUIRE(pthread_create(&runs[c].thread, NULL, churner_thread, &runs[c]) == 0);
    for (unsigned c = 0; c < churners; c++)
        REQUIRE(pthread_join(runs[c].thread, NULL) == 0);
    for (unsigned i = 0; i < CHURN_BG; i++)
        REQUIRE(pthread_join(h.w[i].thread, NULL) == 0);

    long bg_ops = 0, churn_ops = 0, bad = 0;
    ustr common = runs[0].common[0];
    for (unsigned i = 0; i < CHURN_BG; i++) {
        CHECK_EQ_INT(h.w[i].null, 0);
        CHECK_EQ_INT(h.w[i].flip, 0);
        bg_ops += h.w[i].ops; /* one new string and one preloaded lookup each */
    }
    REQUIRE(common != NULL);
    for (unsigned c = 0; c < churners; c++) {
        churn_ops += runs[c].ops;
        for (unsigned i = 0; i < CHURN_EACH; i++) {
            char   buf[CHURN_LEN];
            int    n = snprintf(buf, sizeof buf, "churn/%u/%u", c, i);
            size_t k = (size_t)(c * CHURN_EACH + i) % PRELOAD;
            bad += runs[c].common[i] != common;
            bad += !runs[c].own[i] || !same_bytes(runs[c].own[i], buf, (size_t)n);
            bad += runs[c].pre[i] != pre[k];
            bad += runs[c].own[i] && ustr_table_intern(h.t, buf, (size_t)n) != runs[c].own[i];
        }
    }
    fprintf(stderr, "%ld background calls, %ld calls from %u short-lived threads\n", 2 * bg_ops,
            churn_ops, churners * CHURN_EACH);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(churn_ops, 3 * churners * CHURN_EACH);
    ustr_stats s = ustr_test_stats(h.t);
    /* PRELOAD, the background threads' new strings, one common, one each. */
    CHECK_EQ_U64(s.strings, PRELOAD + (uint64_t)bg_ops + 1 + churners * CHURN_EACH);
    /* Above: PRELOAD by main, 2 per background op, the churn calls, and main's
     * churners * CHURN_EACH lookups of own strings just now. */
    CHECK_EQ_U64(s.lookups,
                 PRELOAD + 2 * (uint64_t)bg_ops + (uint64_t)churn_ops + churners * CHURN_EACH);
    CHECK(s.threads >= 1 + CHURN_BG + 1 && s.threads <= 1 + CHURN_BG + churners * CHURN_EACH);
    fprintf(stderr, "%llu thread records\n", (unsigned long long)s.threads);
    for (unsigned i = 0; i < CHURN_BG; i++)
        free(h.w[i].got);
    ustr_table_destroy(h.t);
    pool_free(&p);
}

static void
case_thread_churn(const char *arg)
{
    churn_case(arg, 1);
}

static void
case_thread_churn_cross(const char *arg)
{
    churn_case(arg, CHURNERS_MAX);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"overlap", case_overlap},
        {"lockstep", case_lockstep},
        {"same_string", case_same_string},
        {"same_large", case_same_large},
        {"all_new", case_all_new},
        {"grow_while_reading", case_grow_while_reading},
        {"sequential_threads", case_sequential_threads},
        {"grow_nomem", case_grow_nomem},
        {"many_tables", case_many_tables},
        {"thread_churn", case_thread_churn},
        {"thread_churn_cross", case_thread_churn_cross},
        {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
