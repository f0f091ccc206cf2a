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

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The benches' generator (DESIGN.md): xorshift64*, thread t seeded with
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
    long      odd;  /* stats snapshots out of bounds (grow_while_reading) */
    uint64_t  end;  /* CLOCK_MONOTONIC ns when the racing phase ends */
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

static uint64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits at the start barrier and starts the thread's clock. */
static void
worker_start(worker *w, pthread_barrier_t *start)
{
    pthread_barrier_wait(start);
    w->end = now_ns() + (uint64_t)RUN_MS * 1000000u;
}

/* Whether to make call number i (from 0): at least MIN_OPS, then until time
 * is up (looked at every 64 calls). */
static bool
worker_more(const worker *w, long i)
{
    return i < MIN_OPS || i % 64 != 0 || now_ns() < w->end;
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
    CHECK_EQ_U64(s.inserts, touched);
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
    CHECK_EQ_U64(s.inserts, 1);
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
    CHECK_EQ_U64(s.inserts, 1);
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
    CHECK_EQ_U64(s.inserts, nall);
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
    CHECK_EQ_U64(s.inserts, s.strings);
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
        {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
