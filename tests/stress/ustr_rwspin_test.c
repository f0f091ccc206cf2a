/* The spin locks of ustr_rwspin.h and ustr_spin.h: exclusion under load at more
 * threads than cores, writer preference, and the uncontended fast paths.
 *
 * Exclusion is checked twice over. Inside each critical section relaxed
 * atomics count who else is inside: relaxed, so they add no happens-before
 * edges of their own and leave ThreadSanitizer to judge the plain counters
 * that only the lock guards. A broken lock shows up as a violation count, a
 * wrong final counter, or a TSan race report. Worker threads never call CHECK
 * (its failure counter is not atomic); main checks after the join. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "ustr_rwspin.h"
#include "ustr_spin.h"
#include "ustr_testing.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* The exclusion cases run for about RUN_MS whatever the build, each thread
 * taking the lock at least MIN_ITERS times; they count what they did. */
enum {
    RUN_MS = 300,
    MIN_ITERS = 2000,
    READERS = 6,
    WRITERS = 3,
    SPINNERS = 8,
    PREF_READERS = 8,  /* continuously arriving readers, 4x the cores */
    PREF_CAP = 200000, /* per reader, after the writer starts trying */
    PREF_WARMUP = 100, /* read sections each reader does before that */
    CS_WORK = 32       /* loads inside a section, so that sections overlap */
};

static void
sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Waits at `start`, then returns when this thread's run ends. */
static uint64_t
run_start(pthread_barrier_t *start)
{
    pthread_barrier_wait(start);
    return ustr_test_now_ns() + (uint64_t)RUN_MS * 1000000u;
}

/* Whether to take the lock for time number i: at least MIN_ITERS times, then
 * until `end` (looked at every 64 times). */
static bool
run_more(uint64_t end, long i)
{
    return i < MIN_ITERS || i % 64 != 0 || ustr_test_now_ns() < end;
}

/* Waits until *flag is nonzero; false after about 10 s. */
static bool
wait_flag(atomic_int *flag)
{
    for (int i = 0; i < 10000; i++) {
        if (atomic_load(flag))
            return true;
        sleep_ms(1);
    }
    return atomic_load(flag) != 0;
}

static void
thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    REQUIRE(pthread_create(th, NULL, fn, arg) == 0);
}

static void
thread_join(pthread_t th)
{
    REQUIRE(pthread_join(th, NULL) == 0);
}

/* A little work inside a critical section, so that sections overlap when
 * the lock fails to keep them apart. */
static atomic_int cs_sink;

static void
cs_work(void)
{
    for (int k = 0; k < CS_WORK; k++)
        (void)atomic_load_explicit(&cs_sink, memory_order_relaxed);
}

/* ---- ustr_rwspin: deterministic cases ---- */

static void
case_rw_uncontended(const char *arg)
{
    (void)arg;
    ustr_rwspin l = USTR_RWSPIN_INIT;
    int         waited = 0;
    for (int i = 0; i < 1000; i++) {
        waited += ustr_rwspin_read_lock(&l);
        waited += ustr_rwspin_read_lock(&l); /* a second reader never waits */
        CHECK_EQ_U64(atomic_load(&l.state), 2 * USTR_RWSPIN_READER);
        ustr_rwspin_read_unlock(&l);
        ustr_rwspin_read_unlock(&l);
        waited += ustr_rwspin_write_lock(&l);
        CHECK_EQ_U64(atomic_load(&l.state), USTR_RWSPIN_WRITER);
        ustr_rwspin_write_unlock(&l);
        CHECK_EQ_U64(atomic_load(&l.state), 0);
        if (rt_test_failures)
            break;
    }
    CHECK_EQ_INT(waited, 0);
}

typedef struct probe {
    ustr_rwspin *l;
    atomic_int   trying;  /* set just before the lock call */
    atomic_int   entered; /* set once inside */
    atomic_int  *seq;     /* shared entry counter; NULL: not used */
    int          order;   /* value of *seq on entry (1 = first) */
    bool         waited;  /* what the lock call returned */
} probe;

static void *
probe_writer(void *arg)
{
    probe *p = arg;
    atomic_store(&p->trying, 1);
    p->waited = ustr_rwspin_write_lock(p->l);
    if (p->seq)
        p->order = atomic_fetch_add(p->seq, 1) + 1;
    atomic_store(&p->entered, 1);
    sleep_ms(2);
    ustr_rwspin_write_unlock(p->l);
    return NULL;
}

static void *
probe_reader(void *arg)
{
    probe *p = arg;
    atomic_store(&p->trying, 1);
    p->waited = ustr_rwspin_read_lock(p->l);
    if (p->seq)
        p->order = atomic_fetch_add(p->seq, 1) + 1;
    atomic_store(&p->entered, 1);
    ustr_rwspin_read_unlock(p->l);
    return NULL;
}

/* A writer waits for a reader to leave. */
static void
case_rw_write_waits(const char *arg)
{
    (void)arg;
    ustr_rwspin l = USTR_RWSPIN_INIT;
    probe       w = {.l = &l};
    pthread_t   th;
    ustr_rwspin_read_lock(&l);
    thread_start(&th, probe_writer, &w);
    REQUIRE(wait_flag(&w.trying));
    sleep_ms(30);
    CHECK_EQ_INT(atomic_load(&w.entered), 0);
    /* Seen waiting in the lock's state (not merely not yet in), it must
     * say that it waited. */
    bool announced = (atomic_load(&l.state) & USTR_RWSPIN_WRITER_BITS) != 0;
    ustr_rwspin_read_unlock(&l);
    thread_join(th);
    CHECK_EQ_INT(atomic_load(&w.entered), 1);
    if (announced)
        CHECK(w.waited);
    CHECK_EQ_U64(atomic_load(&l.state), 0);
}

/* A reader waits for a writer to leave. */
static void
case_rw_read_waits(const char *arg)
{
    (void)arg;
    ustr_rwspin l = USTR_RWSPIN_INIT;
    probe       r = {.l = &l};
    pthread_t   th;
    ustr_rwspin_write_lock(&l);
    thread_start(&th, probe_reader, &r);
    REQUIRE(wait_flag(&r.trying));
    sleep_ms(30);
    CHECK_EQ_INT(atomic_load(&r.entered), 0);
    /* A waiting reader leaves no mark in the lock's state (it withdraws
     * its count), but it spins and yields: 10 ms of CPU time in that
     * thread, whose only other work is to start, says it was inside the
     * lock call while the writer held it, and then it must say it waited.
     * (Preempted before the call instead, it may enter without waiting.) */
    clockid_t       cpu;
    struct timespec used = {0, 0};
    if (pthread_getcpuclockid(th, &cpu) == 0)
        clock_gettime(cpu, &used);
    bool spun = used.tv_sec > 0 || used.tv_nsec >= 10000000;
    ustr_rwspin_write_unlock(&l);
    thread_join(th);
    CHECK_EQ_INT(atomic_load(&r.entered), 1);
    if (spun)
        CHECK(r.waited);
    else
        fprintf(stderr, "the reader used %ld ns of CPU: waited not checked\n", used.tv_nsec);
    CHECK_EQ_U64(atomic_load(&l.state), 0);
}

/* Writer preference, step by step: main holds the lock shared; a writer
 * arrives and waits; then a new reader arrives. The reader must queue behind
 * the waiting writer although the lock is held only shared. */
static void
case_rw_writer_first(const char *arg)
{
    (void)arg;
    ustr_rwspin l = USTR_RWSPIN_INIT;
    atomic_int  seq = 0;
    probe       w = {.l = &l, .seq = &seq}, r = {.l = &l, .seq = &seq};
    pthread_t   wt, rt;

    ustr_rwspin_read_lock(&l);
    thread_start(&wt, probe_writer, &w);
    /* The writer has announced itself once the state shows a waiting writer. */
    bool announced = false;
    for (int i = 0; i < 10000 && !announced; i++) {
        announced = (atomic_load(&l.state) & USTR_RWSPIN_WRITER_BITS) != 0;
        if (!announced)
            sleep_ms(1);
    }
    CHECK(announced);
    thread_start(&rt, probe_reader, &r);
    REQUIRE(wait_flag(&r.trying));
    sleep_ms(30);
    CHECK_EQ_INT(atomic_load(&w.entered), 0); /* main still reads */
    CHECK_EQ_INT(atomic_load(&r.entered), 0); /* queued behind the writer */
    ustr_rwspin_read_unlock(&l);
    thread_join(wt);
    thread_join(rt);
    CHECK_EQ_INT(w.order, 1);
    CHECK_EQ_INT(r.order, 2);
    CHECK(w.waited); /* it was seen waiting, so it must say so */
    CHECK_EQ_U64(atomic_load(&l.state), 0);
}

/* ---- ustr_rwspin: exclusion under load ---- */

static struct {
    ustr_rwspin       lock;
    pthread_barrier_t start;
    atomic_int        readers_in, writers_in; /* relaxed: see the top */
    atomic_long       violations;
    long              a, b; /* plain; guarded by lock; a writer keeps a == b */
} rw = {.lock = USTR_RWSPIN_INIT};

static void *
rw_reader(void *arg)
{
    long    *done = arg;
    uint64_t end = run_start(&rw.start);
    long     i;
    for (i = 0; run_more(end, i); i++) {
        ustr_rwspin_read_lock(&rw.lock);
        atomic_fetch_add_explicit(&rw.readers_in, 1, memory_order_relaxed);
        long bad = atomic_load_explicit(&rw.writers_in, memory_order_relaxed) != 0;
        long a = rw.a;
        cs_work();
        bad += rw.b != a; /* a writer changed them under us, or we saw it halfway */
        bad += atomic_load_explicit(&rw.writers_in, memory_order_relaxed) != 0;
        atomic_fetch_sub_explicit(&rw.readers_in, 1, memory_order_relaxed);
        ustr_rwspin_read_unlock(&rw.lock);
        if (bad)
            atomic_fetch_add_explicit(&rw.violations, bad, memory_order_relaxed);
    }
    *done = i;
    return NULL;
}

static void *
rw_writer(void *arg)
{
    long    *done = arg;
    uint64_t end = run_start(&rw.start);
    long     i;
    for (i = 0; run_more(end, i); i++) {
        ustr_rwspin_write_lock(&rw.lock);
        long bad = atomic_fetch_add_explicit(&rw.writers_in, 1, memory_order_relaxed) != 0;
        bad += atomic_load_explicit(&rw.readers_in, memory_order_relaxed) != 0;
        long a = rw.a + 1;
        rw.a = a;
        if (i % 64 == 0)
            sched_yield(); /* sometimes get preempted while holding it */
        else
            cs_work();
        rw.b = a;
        bad += atomic_load_explicit(&rw.readers_in, memory_order_relaxed) != 0;
        atomic_fetch_sub_explicit(&rw.writers_in, 1, memory_order_relaxed);
        ustr_rwspin_write_unlock(&rw.lock);
        if (bad)
            atomic_fetch_add_explicit(&rw.violations, bad, memory_order_relaxed);
        /* Pause outside the lock, so readers get in between writers. */
        for (int k = 0; k < 8; k++)
            cs_work();
    }
    *done = i;
    return NULL;
}

static void
case_rw_exclusion(const char *arg)
{
    (void)arg;
    pthread_t th[READERS + WRITERS];
    long      done[READERS + WRITERS], reads = 0, total = 0;
    REQUIRE(pthread_barrier_init(&rw.start, NULL, READERS + WRITERS) == 0);
    for (int i = 0; i < READERS + WRITERS; i++)
        thread_start(&th[i], i < READERS ? rw_reader : rw_writer, &done[i]);
    for (int i = 0; i < READERS + WRITERS; i++) {
        thread_join(th[i]);
        *(i < READERS ? &reads : &total) += done[i];
    }
    pthread_barrier_destroy(&rw.start);
    fprintf(stderr, "%ld read sections, %ld write sections\n", reads, total);
    CHECK_EQ_INT(atomic_load(&rw.violations), 0);
    CHECK(total >= (long)WRITERS * MIN_ITERS);
    CHECK_EQ_INT(rw.a, total);
    CHECK_EQ_INT(rw.b, total);
    CHECK_EQ_U64(atomic_load(&rw.lock.state), 0);
}

/* ---- ustr_rwspin: a stream of readers must not starve a writer ---- */

static struct {
    ustr_rwspin       lock;
    pthread_barrier_t start;
    atomic_int        trying, inside, done; /* the writer's progress */
    atomic_int        readers_in;           /* relaxed: see the top */
    atomic_long       violations;
    atomic_long       progress[PREF_READERS]; /* read sections done, per reader */
    long              after[PREF_READERS];    /* sections begun after `trying` */
} pref = {.lock = USTR_RWSPIN_INIT};

static void *
pref_reader(void *arg)
{
    int  id = (int)(intptr_t)arg;
    long after = 0, done = 0;
    pthread_barrier_wait(&pref.start);
    while (!atomic_load(&pref.done)) {
        if (atomic_load(&pref.trying) && ++after >= PREF_CAP)
            break;
        ustr_rwspin_read_lock(&pref.lock);
        atomic_fetch_add_explicit(&pref.readers_in, 1, memory_order_relaxed);
        long bad = atomic_load_explicit(&pref.inside, memory_order_relaxed) != 0;
        cs_work();
        atomic_fetch_sub_explicit(&pref.readers_in, 1, memory_order_relaxed);
        ustr_rwspin_read_unlock(&pref.lock);
        if (bad)
            atomic_fetch_add_explicit(&pref.violations, bad, memory_order_relaxed);
        atomic_store_explicit(&pref.progress[id], ++done, memory_order_relaxed);
    }
    pref.after[id] = after;
    return NULL;
}

static void *
pref_writer(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&pref.start);
    /* Start trying only once every reader is in its loop. */
    for (int i = 0; i < PREF_READERS; i++)
        while (atomic_load_explicit(&pref.progress[i], memory_order_relaxed) < PREF_WARMUP &&
               !atomic_load(&pref.done))
            sched_yield();
    atomic_store(&pref.trying, 1);
    ustr_rwspin_write_lock(&pref.lock);
    atomic_store_explicit(&pref.inside, 1, memory_order_relaxed);
    long bad = atomic_load_explicit(&pref.readers_in, memory_order_relaxed) != 0;
    atomic_store_explicit(&pref.inside, 0, memory_order_relaxed);
    ustr_rwspin_write_unlock(&pref.lock);
    if (bad)
        atomic_fetch_add_explicit(&pref.violations, bad, memory_order_relaxed);
    atomic_store(&pref.done, 1);
    return NULL;
}

static void
case_rw_writer_preference(const char *arg)
{
    (void)arg;
    pthread_t th[PREF_READERS + 1];
    REQUIRE(pthread_barrier_init(&pref.start, NULL, PREF_READERS + 1) == 0);
    for (int i = 0; i < PREF_READERS; i++)
        thread_start(&th[i], pref_reader, (void *)(intptr_t)i);
    thread_start(&th[PREF_READERS], pref_writer, NULL);
    for (int i = 0; i <= PREF_READERS; i++)
        thread_join(th[i]);
    pthread_barrier_destroy(&pref.start);

    long most = 0;
    int  capped = 0;
    for (int i = 0; i < PREF_READERS; i++) {
        most = pref.after[i] > most ? pref.after[i] : most;
        capped += pref.after[i] >= PREF_CAP;
    }
    fprintf(stderr, "most read sections begun by one reader while the writer waited: %ld\n", most);
    CHECK_EQ_INT(capped, 0); /* the writer got in before any reader gave up */
    CHECK_EQ_INT(atomic_load(&pref.done), 1);
    CHECK_EQ_INT(atomic_load(&pref.violations), 0);
    CHECK_EQ_U64(atomic_load(&pref.lock.state), 0);
}

/* ---- ustr_spin ---- */

static void
case_spin_uncontended(const char *arg)
{
    (void)arg;
    ustr_spin l = USTR_SPIN_INIT;
    int       waited = 0;
    for (int i = 0; i < 1000; i++) {
        waited += ustr_spin_lock(&l);
        CHECK_EQ_INT(atomic_load(&l.held), 1);
        ustr_spin_unlock(&l);
        CHECK_EQ_INT(atomic_load(&l.held), 0);
        if (rt_test_failures)
            break;
    }
    CHECK_EQ_INT(waited, 0);
}

static struct {
    ustr_spin         lock;
    pthread_barrier_t start;
    atomic_int        inside; /* relaxed: see the top */
    atomic_long       violations;
    long              count; /* plain; guarded by lock */
} sp = {.lock = USTR_SPIN_INIT};

static void *
spin_thread(void *arg)
{
    long    *done = arg;
    uint64_t end = run_start(&sp.start);
    long     i;
    for (i = 0; run_more(end, i); i++) {
        ustr_spin_lock(&sp.lock);
        long bad = atomic_fetch_add_explicit(&sp.inside, 1, memory_order_relaxed) != 0;
        long c = sp.count;
        if (i % 64 == 0)
            sched_yield(); /* sometimes get preempted while holding it */
        else
            cs_work();
        sp.count = c + 1;
        atomic_fetch_sub_explicit(&sp.inside, 1, memory_order_relaxed);
        ustr_spin_unlock(&sp.lock);
        if (bad)
            atomic_fetch_add_explicit(&sp.violations, bad, memory_order_relaxed);
    }
    *done = i;
    return NULL;
}

static void
case_spin_exclusion(const char *arg)
{
    (void)arg;
    pthread_t th[SPINNERS];
    long      done[SPINNERS], total = 0;
    REQUIRE(pthread_barrier_init(&sp.start, NULL, SPINNERS) == 0);
    for (int i = 0; i < SPINNERS; i++)
        thread_start(&th[i], spin_thread, &done[i]);
    for (int i = 0; i < SPINNERS; i++) {
        thread_join(th[i]);
        total += done[i];
    }
    pthread_barrier_destroy(&sp.start);
    fprintf(stderr, "%ld sections\n", total);
    CHECK_EQ_INT(atomic_load(&sp.violations), 0);
    CHECK(total >= (long)SPINNERS * MIN_ITERS);
    CHECK_EQ_INT(sp.count, total);
    CHECK_EQ_INT(atomic_load(&sp.lock.held), 0);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"rw_uncontended", case_rw_uncontended},
        {"rw_write_waits", case_rw_write_waits},
        {"rw_read_waits", case_rw_read_waits},
        {"rw_writer_first", case_rw_writer_first},
        {"rw_exclusion", case_rw_exclusion},
        {"rw_writer_preference", case_rw_writer_preference},
        {"spin_uncontended", case_spin_uncontended},
        {"spin_exclusion", case_spin_exclusion},
        {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
