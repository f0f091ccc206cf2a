/* Bad input and out-of-memory: NULL bytes, over-long strings, an unknown
 * strategy, an initial capacity too large to allocate, and allocation failure
 * injected at every allocation of table creation and of a workload that grows
 * the index several times. Every case but bad_config runs once per lock
 * strategy (its name is the argument); run under ASan to catch leaks and UAF. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "ustr_testing.h"
#include "ustring.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
case_null_bytes(const char *arg)
{
    ustr_table *t = ustr_test_table(arg, 0);
    errno = 0;
    CHECK(ustr_table_intern(t, NULL, 5) == NULL);
    CHECK_EQ_INT(errno, EINVAL);
    errno = 0;
    CHECK(ustr_table_intern(t, NULL, 1) == NULL);
    CHECK_EQ_INT(errno, EINVAL);
    CHECK_EQ_U64(ustr_test_stats(t).strings, 0);
    /* NULL with length 0 is the empty string, not an error. */
    ustr e = ustr_table_intern(t, NULL, 0);
    CHECK(e != NULL && ustr_len(e) == 0 && e[0] == '\0');
    ustr_table_destroy(t);
}

static void
case_null_cstr(const char *arg)
{
    ustr_table *t = ustr_test_table(arg, 0);
    errno = 0;
    CHECK(ustr_table_intern_cstr(t, NULL) == NULL);
    CHECK_EQ_INT(errno, EINVAL);
    /* The table is untouched and still works. */
    ustr_stats s;
    ustr_table_stats(t, &s);
    CHECK_EQ_U64(s.strings, 0);
    CHECK_EQ_U64(s.lookups, 0);
    ustr u = ustr_table_intern_cstr(t, "after");
    CHECK(u != NULL && ustr_len(u) == 5);
    ustr_table_destroy(t);
}

/* The length is checked before any byte is read: the 4-byte buffer would
 * otherwise be overrun by a gigabyte (ASan reports that read). */
static void
case_too_long(const char *arg)
{
    ustr_table       *t = ustr_test_table(arg, 0);
    static const char small[4] = "abc";
    errno = 0;
    CHECK(ustr_table_intern(t, small, USTR_MAX_LEN + 1) == NULL);
    CHECK_EQ_INT(errno, ERANGE);
    errno = 0;
    CHECK(ustr_table_intern(t, small, SIZE_MAX) == NULL);
    CHECK_EQ_INT(errno, ERANGE);
    errno = 0;
    CHECK(ustr_intern(small, USTR_MAX_LEN + 1) == NULL);
    CHECK_EQ_INT(errno, ERANGE);
    ustr_stats s;
    ustr_table_stats(t, &s);
    CHECK_EQ_U64(s.strings, 0);
    CHECK_EQ_U64(s.lookups, 0);
    ustr u = ustr_table_intern(t, small, 3);
    CHECK(u != NULL && ustr_len(u) == 3 && strcmp(u, "abc") == 0);
    ustr_table_destroy(t);
}

/* A strategy outside the enum is refused, and *out is NULL. */
static void
case_bad_config(const char *arg)
{
    (void)arg;
    const ustr_lock bad[] = {(ustr_lock)(USTR_LOCK_LOCKFREE + 1), (ustr_lock)-1, (ustr_lock)1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static int  not_a_table;
        ustr_table *t = (ustr_table *)(void *)&not_a_table;
        ustr_config cfg = {.lock = bad[i]};
        CHECK_EQ_INT(ustr_table_create(&cfg, &t), USTR_ERR_INVALID);
        CHECK_EQ_PTR(t, NULL);
    }
}

/* An allocator that counts what is live and refuses on cue. Each block
 * carries its size in a 16-byte header, so free_fn's `size` is checked too. */
typedef struct fail_alloc {
    size_t max_size;   /* refuse anything larger, as malloc() would; 0: no limit */
    long   fail_at;    /* index (from 0, since arming) of the first refusal; <0: never */
    bool   one_shot;   /* refuse only allocation fail_at, not every one after it */
    long   calls;      /* allocations asked for since arming */
    long   refused;    /* allocations refused, ever */
    long   live;       /* blocks not yet freed */
    size_t live_bytes; /* their sizes, as asked for */
    long   bad_frees;  /* free_fn given a size other than the block's */
} fail_alloc;

enum { HDR = 16 };

static void *
fail_alloc_fn(size_t size, void *ctx)
{
    fail_alloc *fa = ctx;
    long        i = fa->calls++;
    if ((fa->max_size && size > fa->max_size) ||
        (fa->fail_at >= 0 && (fa->one_shot ? i == fa->fail_at : i >= fa->fail_at))) {
        fa->refused++;
        return NULL;
    }
    size_t total = (size + HDR + 15) / 16 * 16;
    char  *p = aligned_alloc(16, total);
    REQUIRE(p != NULL);
    memcpy(p, &size, sizeof size);
    fa->live++;
    fa->live_bytes += size;
    return p + HDR;
}

static void
fail_free_fn(void *p, size_t size, void *ctx)
{
    fail_alloc *fa = ctx;
    if (!p)
        return;
    char  *base = (char *)p - HDR;
    size_t had;
    memcpy(&had, base, sizeof had);
    if (had != size)
        fa->bad_frees++;
    fa->live--;
    fa->live_bytes -= had;
    free(base);
}

static ustr_config
fail_config(const char *arg, fail_alloc *fa, size_t initial_capacity)
{
    ustr_config cfg = {
        .lock = ustr_test_lock(arg),
        .initial_capacity = initial_capacity,
        .allocator = {.alloc_fn = fail_alloc_fn, .free_fn = fail_free_fn, .ctx = fa},
    };
    return cfg;
}

/* Creation fails cleanly at every allocation it makes, then succeeds. */
static void
case_create_nomem(const char *arg)
{
    fail_alloc  fa = {.fail_at = -1};
    ustr_config cfg = fail_config(arg, &fa, 0);
    long        n;
    for (n = 0; n < 10000; n++) {
        static int  not_a_table;
        ustr_table *t = (ustr_table *)(void *)&not_a_table;
        fa.calls = 0;
        fa.fail_at = n;
        ustr_result r = ustr_table_create(&cfg, &t);
        if (r == USTR_OK) {
            CHECK(t != NULL);
            CHECK(fa.calls > 0); /* the table's memory came from the allocator */
            fa.fail_at = -1;
            ustr u = ustr_table_intern_cstr(t, "created");
            CHECK(u != NULL && strcmp(u, "created") == 0);
            ustr_table_destroy(t);
            break;
        }
        CHECK_EQ_INT(r, USTR_ERR_NOMEM);
        CHECK_EQ_PTR(t, NULL);
        CHECK_EQ_INT(fa.live, 0);
        CHECK_EQ_U64(fa.live_bytes, 0);
        if (rt_test_failures) {
            fprintf(stderr, "  (allocation %ld refused)\n", n);
            break;
        }
    }
    CHECK(n < 10000);
    CHECK_EQ_INT(fa.live, 0);
    CHECK_EQ_U64(fa.live_bytes, 0);
    CHECK_EQ_INT(fa.bad_frees, 0);
    fprintf(stderr, "%s: create makes %ld allocation(s)\n", arg, n);
}

/* An initial capacity over USTR_MAX_INITIAL_CAPACITY is refused as invalid
 * before anything is allocated (no index size computed from it can wrap);
 * the largest allowed one is refused for memory or gives a table that
 * works. The allocator refuses more than 256 MiB at once, as a real one
 * would refuse terabytes. alarm(): a capacity computation that loops forever
 * ends the case. And an allocator with one function but not the other is
 * invalid (it would mix heaps). */
static void
case_huge_capacity(const char *arg)
{
    const size_t caps[] = {
        USTR_MAX_INITIAL_CAPACITY + 1, (size_t)1 << 40, (size_t)1 << 62, (size_t)1 << 63, SIZE_MAX,
        USTR_MAX_INITIAL_CAPACITY};
    alarm(60);
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        static int  not_a_table;
        fail_alloc  fa = {.max_size = (size_t)256 << 20, .fail_at = -1};
        ustr_config cfg = fail_config(arg, &fa, caps[i]);
        ustr_table *t = (ustr_table *)(void *)&not_a_table;
        fprintf(stderr, "%s: initial_capacity %zu\n", arg, caps[i]);
        ustr_result r = ustr_table_create(&cfg, &t);
        if (caps[i] > USTR_MAX_INITIAL_CAPACITY) {
            CHECK_EQ_INT(r, USTR_ERR_INVALID);
            CHECK_EQ_PTR(t, NULL);
            CHECK_EQ_INT(fa.calls, 0);
        } else if (r == USTR_OK) {
            REQUIRE(t != NULL);
            char buf[32];
            for (int k = 0; k < 100; k++) {
                int  n = snprintf(buf, sizeof buf, "huge/%d", k);
                ustr u = ustr_table_intern(t, buf, (size_t)n);
                CHECK(u != NULL && ustr_len(u) == (size_t)n && strcmp(u, buf) == 0);
                CHECK_EQ_PTR(ustr_table_intern(t, buf, (size_t)n), u);
            }
            ustr_table_destroy(t);
        } else {
            CHECK_EQ_INT(r, USTR_ERR_NOMEM);
            CHECK_EQ_PTR(t, NULL);
        }
        CHECK_EQ_INT(fa.live, 0);
        CHECK_EQ_U64(fa.live_bytes, 0);
    }
    fail_alloc  fa = {.fail_at = -1};
    ustr_config half = fail_config(arg, &fa, 0);
    half.allocator.free_fn = NULL;
    ustr_table *t = NULL;
    CHECK_EQ_INT(ustr_table_create(&half, &t), USTR_ERR_INVALID);
    CHECK_EQ_PTR(t, NULL);
    half = fail_config(arg, &fa, 0);
    half.allocator.alloc_fn = NULL;
    CHECK_EQ_INT(ustr_table_create(&half, &t), USTR_ERR_INVALID);
    CHECK_EQ_INT(fa.calls, 0);
    alarm(0);
}

/* The workload: WL_OPS intern calls over WL_STRINGS distinct strings, new
 * ones interleaved with repeats of earlier ones, into a table sized for 4, so
 * the index grows several times. */
enum { WL_STRINGS = 2000, WL_OPS = 3000 };

typedef struct workload {
    char   s[WL_STRINGS][40];
    size_t len[WL_STRINGS];
    int    op[WL_OPS]; /* string index of each call */
} workload;

static void
workload_init(workload *w)
{
    for (int i = 0; i < WL_STRINGS; i++) {
        int n = snprintf(w->s[i], sizeof w->s[i], "tex/set%02d/tile_%d_%.*s.tx", i % 37, i, i % 7,
                         "uvwxyz");
        w->len[i] = (size_t)n;
    }
    int fresh = 0;
    for (int i = 0; i < WL_OPS; i++)
        w->op[i] =
            (i % 3 == 2 && fresh > 0) ? (int)((unsigned)i * 7919u % (unsigned)fresh) : fresh++;
    REQUIRE(fresh == WL_STRINGS);
}

/* What one run did: allocations the workload asked for, failed calls. */
typedef struct run_result {
    long calls;
    long failed;
    long grows;
} run_result;

static run_result
run_workload(const char *arg, const workload *w, long fail_at, bool one_shot)
{
    fail_alloc  fa = {.fail_at = -1};
    ustr_config cfg = fail_config(arg, &fa, 4);
    ustr_table *t = NULL;
    REQUIRE(ustr_table_create(&cfg, &t) == USTR_OK);
    int         before = rt_test_failures;
    static ustr got[WL_STRINGS];
    memset(got, 0, sizeof got);
    uint64_t   distinct = 0, ok_calls = 0;
    run_result res = {0, 0, 0};

    fa.calls = 0;
    fa.one_shot = one_shot;
    fa.fail_at = fail_at;
    for (int i = 0; i < WL_OPS; i++) {
        int  k = w->op[i];
        long refused = fa.refused;
        errno = 0;
        ustr u = ustr_table_intern(t, w->s[k], w->len[k]);
        if (!u) {
            res.failed++;
            CHECK_EQ_INT(errno, ENOMEM);
            CHECK(fa.refused > refused); /* no failure without a refusal */
            CHECK_EQ_U64(ustr_test_stats(t).strings, distinct);
        } else {
            ok_calls++;
            CHECK(ustr_len(u) == w->len[k] && memcmp(u, w->s[k], w->len[k] + 1) == 0);
            if (got[k]) {
                CHECK_EQ_PTR(u, got[k]);
            } else {
                got[k] = u;
                distinct++;
            }
        }
        if (rt_test_failures > before)
            break;
    }
    res.calls = fa.calls;
    fa.fail_at = -1;

    ustr_stats s;
    ustr_table_stats(t, &s);
    CHECK_EQ_U64(s.strings, distinct);
    CHECK_EQ_U64(s.inserts, distinct);
    CHECK_EQ_U64(s.lookups, ok_calls);
    /* Memory again: earlier strings keep their pointers, the rest go in. */
    for (int k = 0; k < WL_STRINGS; k++) {
        errno = 0;
        ustr u = ustr_table_intern(t, w->s[k], w->len[k]);
        CHECK(u != NULL);
        if (u && got[k])
            CHECK_EQ_PTR(u, got[k]);
        if (u)
            CHECK(ustr_len(u) == w->len[k] && memcmp(u, w->s[k], w->len[k] + 1) == 0);
        if (rt_test_failures > before)
            break;
    }
    ustr_table_stats(t, &s);
    CHECK_EQ_U64(s.strings, WL_STRINGS);
    res.grows = (long)s.grows;
    ustr_table_destroy(t);
    CHECK_EQ_INT(fa.live, 0);
    CHECK_EQ_U64(fa.live_bytes, 0);
    CHECK_EQ_INT(fa.bad_frees, 0);
    if (rt_test_failures > before)
        fprintf(stderr, "  (%s: allocation %ld refused%s)\n", arg, fail_at,
                one_shot ? ", only that one" : " and every later one");
    return res;
}

/* Refuses each allocation of the workload in turn: once only (the workload
 * carries on past the failure), and from there on (memory has run out). */
static void
case_intern_nomem(const char *arg)
{
    static workload w;
    workload_init(&w);
    run_result clean = run_workload(arg, &w, -1, false);
    CHECK_EQ_INT(clean.failed, 0);
    CHECK(clean.grows >= 3);
    CHECK(clean.calls > 0);
    /* Every allocation index, unless there are very many (then a stride). */
    long step = clean.calls / 1000 + 1, points = 0, failed = 0;
    for (long k = 0; k < clean.calls && !rt_test_failures; k += step) {
        /* A refusal need not fail a call (a table may carry on without a
         * growth), but a failed call must be a clean one. */
        failed += run_workload(arg, &w, k, true).failed;
        failed += run_workload(arg, &w, k, false).failed;
        points++;
    }
    CHECK(failed > 0);
    fprintf(stderr, "%s: refused each of %ld of %ld workload allocations; %ld calls failed\n", arg,
            points, clean.calls, failed);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"null_bytes", case_null_bytes},       {"null_cstr", case_null_cstr},
        {"too_long", case_too_long},           {"create_nomem", case_create_nomem},
        {"intern_nomem", case_intern_nomem},   {"bad_config", case_bad_config},
        {"huge_capacity", case_huge_capacity}, {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
