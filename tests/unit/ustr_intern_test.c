/* Interning on one thread: identity, length, hash, termination, embedded NULs,
 * large and empty strings, growth, stats, strategy names and the global table.
 * Cases that take an argument run once per lock strategy (its name). */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "ustr_testing.h"
#include "ustring.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const lock_names[USTR_LOCK_COUNT] = {"mutex", "spin", "rwspin", "sharded",
                                                        "lockfree"};
static const ustr_lock   lock_values[USTR_LOCK_COUNT] = {
      USTR_LOCK_MUTEX, USTR_LOCK_SPIN, USTR_LOCK_RWSPIN, USTR_LOCK_SHARDED, USTR_LOCK_LOCKFREE};

/* A malloc'd copy of `len` bytes, so a test interns from a buffer of its own. */
static char *
dup_bytes(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    REQUIRE(p != NULL);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

/* `u` holds exactly the `len` bytes at `s`, NUL-terminated, with their hash. */
static void
check_ustr(ustr u, const char *s, size_t len)
{
    CHECK(u != NULL);
    if (!u)
        return;
    CHECK_EQ_U64(ustr_len(u), len);
    CHECK(memcmp(u, s, len) == 0);
    CHECK_EQ_INT(u[len], '\0');
    CHECK_EQ_U64(ustr_hash(u), ustr_hash_bytes(s, len));
}

static int
cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const ustr *)a, y = (uintptr_t) * (const ustr *)b;
    return (x > y) - (x < y);
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Number of adjacent equal pointers once sorted: 0 when all are distinct. */
static size_t
count_duplicates(const ustr *ptrs, size_t n)
{
    ustr *sorted = malloc(n * sizeof *sorted);
    REQUIRE(sorted != NULL);
    memcpy(sorted, ptrs, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_ptr);
    size_t dups = 0;
    for (size_t i = 1; i < n; i++)
        dups += sorted[i] == sorted[i - 1];
    free(sorted);
    return dups;
}

static void
case_same_pointer(const char *arg)
{
    ustr_table *t = ustr_test_table(arg, 0);
    char        a[] = "textures/wood/oak_diffuse.tx";
    size_t      n = strlen(a);
    char       *b = dup_bytes(a, n);

    ustr ua = ustr_table_intern(t, a, n);
    ustr ub = ustr_table_intern_cstr(t, b);
    check_ustr(ua, a, n);
    CHECK_EQ_PTR(ua, ub);
    CHECK_EQ_PTR(ustr_table_intern(t, ua, ustr_len(ua)), ua); /* a ustr interns to itself */
    CHECK_NE_PTR(ua, a); /* the canonical copy, not the caller's buffer */
    CHECK_NE_PTR(ua, b);

    /* Different content, including a prefix and a one-byte change. */
    ustr prefix = ustr_table_intern(t, a, n - 1);
    check_ustr(prefix, a, n - 1);
    CHECK_NE_PTR(prefix, ua);
    CHECK_EQ_PTR(ustr_table_intern_cstr(t, "textures/wood/oak_diffuse.t"), prefix);
    b[n - 1] = 'X';
    ustr changed = ustr_table_intern(t, b, n);
    check_ustr(changed, b, n);
    CHECK_NE_PTR(changed, ua);
    CHECK_NE_PTR(changed, prefix);

    /* The first string is a copy: rewriting the caller's buffer leaves it. */
    memset(a, 'z', n);
    CHECK_EQ_STR(ua, "textures/wood/oak_diffuse.tx");
    CHECK_EQ_PTR(ustr_table_intern_cstr(t, "textures/wood/oak_diffuse.tx"), ua);

    /* Two tables give two canonical copies. */
    ustr_table *t2 = ustr_test_table(arg, 0);
    ustr        other = ustr_table_intern_cstr(t2, "textures/wood/oak_diffuse.tx");
    check_ustr(other, "textures/wood/oak_diffuse.tx", n);
    CHECK_NE_PTR(other, ua);
    ustr_table_destroy(t2);

    free(b);
    ustr_table_destroy(t);
}

static void
case_len_hash(const char *arg)
{
    enum { N = 1000 };
    ustr_table *t = ustr_test_table(arg, 0);
    char        buf[N + 8];
    ustr        u[N];
    uint64_t    h[N];

    /* Lengths 0..999 (every length a word-at-a-time hash can trip on), each
     * with its own content. */
    for (size_t len = 0; len < N; len++) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)('a' + (i * 7 + len) % 26);
        u[len] = ustr_table_intern(t, buf, len);
        check_ustr(u[len], buf, len);
        h[len] = ustr_hash_bytes(buf, len);
        /* The same bytes at other alignments hash the same. */
        for (size_t off = 1; off < 8; off++) {
            char *p = malloc(len + off); /* exactly: ASan sees a read past it */
            REQUIRE(p != NULL);
            memcpy(p + off, buf, len);
            CHECK_EQ_U64(ustr_hash_bytes(p + off, len), h[len]);
            CHECK_EQ_PTR(ustr_table_intern(t, p + off, len), u[len]);
            free(p);
        }
    }
    CHECK_EQ_U64(count_duplicates(u, N), 0);

    /* 1000 distinct strings, 1000 distinct 64-bit hashes (a collision here
     * has odds near 1e-14; a weak hash shows up at once). */
    qsort(h, N, sizeof h[0], cmp_u64);
    size_t same = 0;
    for (size_t i = 1; i < N; i++)
        same += h[i] == h[i - 1];
    CHECK_EQ_U64(same, 0);
    ustr_table_destroy(t);
}

/* Allocates like malloc() but fills the block with garbage first, so a
 * missing terminator cannot hide behind memory that happens to be zero. */
static void *
poison_alloc(size_t size, void *ctx)
{
    (void)ctx;
    void *p = malloc(size);
    if (p)
        memset(p, 0xa5, size);
    return p;
}

static void
poison_free(void *p, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(p);
}

/* The stored string ends in a NUL even when the input does not: each input
 * is a malloc'd block of exactly `len` bytes (ASan catches a read past it),
 * and the table's memory starts out as garbage. */
static void
case_nul_terminated(const char *arg)
{
    ustr_config cfg = {
        .lock = ustr_test_lock(arg),
        .allocator = {.alloc_fn = poison_alloc, .free_fn = poison_free},
    };
    ustr_table *t = NULL;
    REQUIRE(ustr_table_create(&cfg, &t) == USTR_OK);
    for (size_t len = 1; len <= 200; len++) {
        char *p = malloc(len);
        REQUIRE(p != NULL);
        memset(p, 'x', len);
        p[0] = (char)('A' + len % 26);
        ustr u = ustr_table_intern(t, p, len);
        check_ustr(u, p, len);
        if (u)
            CHECK_EQ_U64(strlen(u), len);
        free(p);
    }
    /* A prefix of a longer string is terminated at its own length. */
    ustr whole = ustr_table_intern_cstr(t, "abcdef");
    ustr part = ustr_table_intern(t, "abcdef", 3);
    CHECK_EQ_STR(part, "abc");
    CHECK_EQ_STR(whole, "abcdef");
    ustr empty = ustr_table_intern(t, NULL, 0);
    CHECK(empty != NULL && empty[0] == '\0');
    ustr_table_destroy(t);
}

static void
case_embedded_nul(const char *arg)
{
    ustr_table *t = ustr_test_table(arg, 0);
    static const struct {
        const char *s;
        size_t      len;
    } in[] = {{"a\0b", 3}, {"a\0c", 3}, {"a", 1}, {"a\0", 2}, {"\0", 1}, {"", 0}, {"\0\0b", 3}};
    enum { N = sizeof in / sizeof in[0] };
    ustr u[N];
    for (size_t i = 0; i < N; i++) {
        u[i] = ustr_table_intern(t, in[i].s, in[i].len);
        check_ustr(u[i], in[i].s, in[i].len);
    }
    CHECK_EQ_U64(count_duplicates(u, N), 0);
    CHECK_EQ_U64(ustr_len(u[0]), 3); /* not strlen's 1 */
    /* Again from copies: the same pointers. */
    for (size_t i = 0; i < N; i++) {
        char *p = dup_bytes(in[i].s, in[i].len);
        CHECK_EQ_PTR(ustr_table_intern(t, p, in[i].len), u[i]);
        free(p);
    }
    /* The cstr form stops at the first NUL. */
    CHECK_EQ_PTR(ustr_table_intern_cstr(t, "a\0b"), u[2]);
    ustr_stats s;
    ustr_table_stats(t, &s);
    CHECK_EQ_U64(s.strings, N);
    ustr_table_destroy(t);
}

static void
case_large(const char *arg)
{
    const size_t n = (size_t)1 << 20;
    ustr_table  *t = ustr_test_table(arg, 0);
    char        *a = malloc(n), *b = malloc(n);
    REQUIRE(a != NULL && b != NULL);
    for (size_t i = 0; i < n; i++)
        a[i] = (char)('a' + (i * 31 + i / 4096) % 26);
    memcpy(b, a, n);
    b[n - 1] = a[n - 1] == 'q' ? 'r' : 'q';

    ustr ua = ustr_table_intern(t, a, n);
    ustr ub = ustr_table_intern(t, b, n);
    check_ustr(ua, a, n);
    check_ustr(ub, b, n);
    CHECK_NE_PTR(ua, ub);
    CHECK(ustr_hash(ua) != ustr_hash(ub));
    /* One byte shorter is a third string. */
    ustr shorter = ustr_table_intern(t, a, n - 1);
    check_ustr(shorter, a, n - 1);
    CHECK_NE_PTR(shorter, ua);
    CHECK_NE_PTR(shorter, ub);

    memcpy(b, a, n); /* now equal to a: the first pointer again */
    CHECK_EQ_PTR(ustr_table_intern(t, b, n), ua);
    ustr_stats s;
    ustr_table_stats(t, &s);
    CHECK_EQ_U64(s.strings, 3);
    CHECK(s.string_bytes >= 3 * n - 1);
    free(a);
    free(b);
    ustr_table_destroy(t);
}

static void
case_empty(const char *arg)
{
    ustr_table *t = ustr_test_table(arg, 0);
    ustr        a = ustr_table_intern(t, NULL, 0);
    ustr        b = ustr_table_intern(t, "", 0);
    ustr        c = ustr_table_intern_cstr(t, "");
    ustr        d = ustr_table_intern(t, "abc", 0);
    check_ustr(a, "", 0);
    CHECK_EQ_PTR(a, b);
    CHECK_EQ_PTR(a, c);
    CHECK_EQ_PTR(a, d);
    ustr x = ustr_table_intern_cstr(t, "x");
    check_ustr(x, "x", 1);
    CHECK_NE_PTR(x, a);
    ustr_table_destroy(t);
}

/* 50,000 strings into a table sized for 4: many growths, same answers. */
static void
case_growth(const char *arg)
{
    enum { N = 50000 };
    ustr_table *t = ustr_test_table(arg, 4);
    ustr       *u = malloc(N * sizeof *u);
    char        buf[64];
    REQUIRE(u != NULL);
    for (unsigned i = 0; i < N; i++) {
        int len = snprintf(buf, sizeof buf, "growth/%u/%0*u", i % 113, (int)(i % 9), i);
        u[i] = ustr_table_intern(t, buf, (size_t)len);
        check_ustr(u[i], buf, (size_t)len);
    }
    CHECK_EQ_U64(count_duplicates(u, N), 0);
    for (unsigned i = 0; i < N; i++) {
        int  len = snprintf(buf, sizeof buf, "growth/%u/%0*u", i % 113, (int)(i % 9), i);
        ustr again = ustr_table_intern(t, buf, (size_t)len);
        if (again != u[i]) {
            CHECK_EQ_PTR(again, u[i]);
            break;
        }
    }
    ustr_stats s;
    ustr_table_stats(t, &s);
    CHECK_EQ_U64(s.strings, N);
    CHECK_EQ_U64(s.inserts, N);
    CHECK_EQ_U64(s.lookups, 2 * N);
    CHECK(s.capacity >= N);
    CHECK(s.grows > 0);
    free(u);
    ustr_table_destroy(t);
}

/* Bytes a table holds from its allocator now, and the blocks it has
 * given back. */
static uint64_t held_bytes, freed_blocks;

static void *
held_alloc(size_t size, void *ctx)
{
    (void)ctx;
    held_bytes += size;
    return malloc(size);
}

static void
held_free(void *p, size_t size, void *ctx)
{
    (void)ctx;
    held_bytes -= size;
    freed_blocks++;
    free(p);
}

/* A growing lock-free table frees the arrays its growth retires as it
 * goes, not only when it is destroyed or asked for its statistics
 * (lockfree.c, reclaim_due()): one thread, nobody else reading, so every
 * attempt frees all, and an attempt follows each 256th insert once the
 * retired arrays reach 1/8 of the index (and 64 KiB). Asking for the
 * statistics frees what is left, so what that frees is what was waiting.
 * Growing 4x, a wave of the 64 shards' growth retires a quarter of the
 * index at once, which waits for the table's destruction if nothing
 * frees it on the way. The rule counts an array's own bytes; each
 * takes a cache line more from the allocator, to align it (arena.c). */
static void
case_retired_freed(const char *arg)
{
    (void)arg;
    enum { N = 1 << 18, CHECK_EVERY = 1 << 14, LINE = 64 /* ustr__lines_alloc()'s extra */ };
    const uint64_t least = 64 << 10;
    ustr_config    cfg = {.lock = USTR_LOCK_LOCKFREE,
                          .allocator = {.alloc_fn = held_alloc, .free_fn = held_free}};
    ustr_table    *t;
    REQUIRE(ustr_table_create(&cfg, &t) == USTR_OK);
    char     buf[32];
    uint64_t worst = 0, at = 0, freed_by_inserts = 0;
    for (unsigned i = 1; i <= N; i++) {
        int      len = snprintf(buf, sizeof buf, "retired/%07u", i);
        uint64_t blocks = freed_blocks;
        REQUIRE(ustr_table_intern(t, buf, (size_t)len) != NULL);
        freed_by_inserts += freed_blocks - blocks;
        if (i % CHECK_EVERY)
            continue;
        uint64_t   before = held_bytes;
        ustr_stats s;
        blocks = freed_blocks;
        ustr_table_stats(t, &s); /* frees every retired array */
        uint64_t waited = before - held_bytes - (freed_blocks - blocks) * LINE;
        uint64_t share = (s.index_bytes + waited) / 8; /* of the index as it was */
        uint64_t allowed = share > least ? share : least;
        if (waited >= allowed && waited > worst)
            worst = waited, at = i;
    }
    if (worst)
        fprintf(stderr,
                "ustr-test: %" PRIu64 " bytes of retired arrays unfreed after %" PRIu64
                " inserts\n",
                worst, at);
    CHECK_EQ_U64(worst, 0);
    CHECK(freed_by_inserts > 0); /* not everything left to the statistics */
    ustr_table_destroy(t);
    CHECK_EQ_U64(held_bytes, 0);
}

/* One thread, more tables than it can cache, used in turn; and tables made
 * and destroyed over and over (a new table may take a dead one's address). */
static void
case_many_tables(const char *arg)
{
    enum { TABLES = 9, STRINGS = 50, ROUNDS = 4 };
    ustr_table *t[TABLES];
    static ustr u[TABLES][STRINGS];
    char        buf[32];
    for (int i = 0; i < TABLES; i++)
        t[i] = ustr_test_table(arg, 0);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < TABLES; i++) {
            for (int k = 0; k < STRINGS; k++) {
                int  n = snprintf(buf, sizeof buf, "many/%d", k);
                ustr v = ustr_table_intern(t[i], buf, (size_t)n);
                if (round == 0) {
                    check_ustr(v, buf, (size_t)n);
                    u[i][k] = v;
                } else if (v != u[i][k]) {
                    CHECK_EQ_PTR(v, u[i][k]);
                }
            }
        }
    }
    /* The same bytes in different tables: different pointers. */
    CHECK_EQ_U64(count_duplicates(&u[0][0], TABLES * STRINGS), 0);
    for (int i = 0; i < TABLES; i++) {
        ustr_stats s;
        ustr_table_stats(t[i], &s);
        CHECK_EQ_U64(s.threads, 1);
        CHECK_EQ_U64(s.strings, STRINGS);
        CHECK_EQ_U64(s.lookups, ROUNDS * STRINGS);
    }

    for (int i = 0; i < 200; i++) {
        ustr_table *c = ustr_test_table(arg, 0);
        ustr        v = ustr_table_intern_cstr(c, "churn");
        check_ustr(v, "churn", 5);
        CHECK_EQ_PTR(ustr_table_intern_cstr(c, "churn"), v);
        CHECK_EQ_PTR(ustr_table_intern_cstr(t[i % TABLES], "many/7"), u[i % TABLES][7]);
        ustr_stats s;
        ustr_table_stats(c, &s);
        CHECK_EQ_U64(s.strings, 1);
        CHECK_EQ_U64(s.lookups, 2);
        ustr_table_destroy(c);
        if (rt_test_failures)
            break;
    }
    for (int i = 0; i < TABLES; i++)
        ustr_table_destroy(t[i]);
}

/* Counts a tmpfile's lines, and those that do not start with `prefix`. */
static void
count_lines(FILE *f, const char *prefix, int *lines, int *bad)
{
    char line[512];
    *lines = *bad = 0;
    rewind(f);
    while (fgets(line, sizeof line, f)) {
        ++*lines;
        if (strncmp(line, prefix, strlen(prefix)) != 0) {
            fprintf(stderr, "line without prefix: %s", line);
            ++*bad;
        }
    }
}

static void
case_stats(const char *arg)
{
    ustr_lock   lock = ustr_test_lock(arg);
    ustr_table *t = ustr_test_table(arg, 0);
    ustr_stats  s;

    memset(&s, 0xa5, sizeof s);
    ustr_table_stats(t, &s);
    CHECK_EQ_INT(s.lock, lock);
    CHECK_EQ_U64(s.lookups, 0);
    CHECK_EQ_U64(s.inserts, 0);
    CHECK_EQ_U64(s.strings, 0);

    /* 5 successful calls, 3 of them new strings; 2 failed calls, not counted. */
    ustr a = ustr_table_intern_cstr(t, "stats/a");
    ustr b = ustr_table_intern(t, "stats/b", 7);
    CHECK_EQ_PTR(ustr_table_intern(t, "stats/a", 7), a);
    CHECK(ustr_table_intern(t, NULL, 3) == NULL);
    CHECK(ustr_table_intern_cstr(t, NULL) == NULL);
    CHECK(ustr_table_intern_cstr(t, "stats/c") != NULL);
    CHECK_EQ_PTR(ustr_table_intern_cstr(t, "stats/b"), b);

    memset(&s, 0xa5, sizeof s);
    ustr_table_stats(t, &s);
    CHECK_EQ_INT(s.lock, lock);
    CHECK_EQ_U64(s.lookups, 5);
    CHECK_EQ_U64(s.inserts, 3);
    CHECK_EQ_U64(s.strings, 3);
    CHECK_EQ_U64(s.threads, 1);
    CHECK_EQ_U64(s.contended, 0); /* one thread never waits */
    CHECK(s.string_bytes >= 3 * 7);
    CHECK(s.capacity >= s.strings);
    CHECK(s.index_bytes > 0);

    FILE *f = tmpfile();
    REQUIRE(f != NULL);
    ustr_stats_print(&s, "ustr-test: ", f);
    int lines, bad;
    count_lines(f, "ustr-test: ", &lines, &bad);
    CHECK_EQ_INT(lines, 3);
    CHECK_EQ_INT(bad, 0);
    /* The figures above, as printed. */
    char text[1024] = "";
    rewind(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    char want[128];
    snprintf(want, sizeof want, "ustr-test: lock %s, 1 thread(s)\n", ustr_lock_name(lock));
    CHECK(strstr(text, want) != NULL);
    CHECK(strstr(text, "ustr-test: lookups 5, inserts 3, contended 0 (0.00%)\n") != NULL);
    CHECK(strstr(text, "ustr-test: strings 3 in ") != NULL);
    if (!strstr(text, "lookups 5, inserts 3"))
        fprintf(stderr, "printed:\n%s", text);
    fclose(f);
    ustr_table_destroy(t);
}

static void
case_lock_names(const char *arg)
{
    (void)arg;
    for (int i = 0; i < USTR_LOCK_COUNT; i++) {
        ustr_lock lock = USTR_LOCK_DEFAULT;
        CHECK_EQ_INT(ustr_lock_parse(lock_names[i], &lock), USTR_OK);
        CHECK_EQ_INT(lock, lock_values[i]);
        CHECK_EQ_STR(ustr_lock_name(lock_values[i]), lock_names[i]);
    }

    /* DEFAULT names one of the five, and "default" parses to it. */
    const char *def = ustr_lock_name(USTR_LOCK_DEFAULT);
    bool        known = false;
    for (int i = 0; i < USTR_LOCK_COUNT; i++)
        known |= def && strcmp(def, lock_names[i]) == 0;
    CHECK(known);
    ustr_lock lock = USTR_LOCK_MUTEX;
    CHECK_EQ_INT(ustr_lock_parse("default", &lock), USTR_OK);
    CHECK_EQ_STR(ustr_lock_name(lock), def);

    static const char *const bad[] = {"", "bogus", "mute", "mutexx", "lock free", "default "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (ustr_lock_parse(bad[i], &lock) != USTR_ERR_INVALID) {
            fprintf(stderr, "ustr_lock_parse(\"%s\") accepted\n", bad[i]);
            CHECK_EQ_INT(ustr_lock_parse(bad[i], &lock), USTR_ERR_INVALID);
        }
    }
}

static void
case_result_str(const char *arg)
{
    (void)arg;
    const ustr_result codes[] = {USTR_OK, USTR_ERR_NOMEM, USTR_ERR_INVALID, USTR_ERR_BUSY};
    enum { N = sizeof codes / sizeof codes[0] };
    for (int i = 0; i < N; i++) {
        const char *si = ustr_result_str(codes[i]);
        CHECK(si != NULL && si[0] != '\0');
        for (int j = 0; j < i && si; j++) {
            const char *sj = ustr_result_str(codes[j]);
            CHECK(sj == NULL || strcmp(si, sj) != 0);
        }
    }
}

/* The global table, created on first use with defaults. */
static void
case_global(const char *arg)
{
    (void)arg;
    char *copy = dup_bytes("global/one", 10);
    ustr  a = ustr_intern_cstr("global/one");
    check_ustr(a, "global/one", 10);
    CHECK_EQ_PTR(ustr_intern_cstr(copy), a);
    CHECK_EQ_PTR(ustr_intern(copy, 10), a);
    CHECK_NE_PTR(ustr_intern(copy, 9), a);
    ustr_table *g = ustr_global();
    CHECK(g != NULL);
    CHECK_EQ_PTR(ustr_table_intern_cstr(g, "global/one"), a);
    CHECK_EQ_PTR(ustr_global(), g);

    ustr_config cfg = {.lock = USTR_LOCK_MUTEX};
    CHECK_EQ_INT(ustr_global_init(&cfg), USTR_ERR_BUSY);
    CHECK_EQ_PTR(ustr_global(), g); /* unchanged by the refused init */
    CHECK_EQ_PTR(ustr_intern_cstr("global/one"), a);
    ustr_stats s;
    ustr_table_stats(g, &s);
    CHECK_EQ_U64(s.strings, 2);
    CHECK_EQ_U64(s.lookups, 6);
    free(copy);
}

/* In a process of its own: init before first use chooses the strategy. */
static void
case_global_init(const char *arg)
{
    (void)arg;
    ustr_config cfg = {.lock = USTR_LOCK_RWSPIN};
    CHECK_EQ_INT(ustr_global_init(&cfg), USTR_OK);
    ustr_table *g = ustr_global();
    REQUIRE(g != NULL);
    ustr_stats s;
    ustr_table_stats(g, &s);
    CHECK_EQ_INT(s.lock, USTR_LOCK_RWSPIN);
    ustr a = ustr_intern_cstr("global/two");
    check_ustr(a, "global/two", 10);
    CHECK_EQ_PTR(ustr_table_intern_cstr(g, "global/two"), a);
    cfg.lock = USTR_LOCK_MUTEX;
    CHECK_EQ_INT(ustr_global_init(&cfg), USTR_ERR_BUSY);
    ustr_table_stats(ustr_global(), &s);
    CHECK_EQ_INT(s.lock, USTR_LOCK_RWSPIN);
}

int
main(int argc, char **argv)
{
    static const rt_test_case cases[] = {
        {"same_pointer", case_same_pointer},
        {"len_hash", case_len_hash},
        {"nul_terminated", case_nul_terminated},
        {"embedded_nul", case_embedded_nul},
        {"large", case_large},
        {"empty", case_empty},
        {"growth", case_growth},
        {"many_tables", case_many_tables},
        {"stats", case_stats},
        {"lock_names", case_lock_names},
        {"result_str", case_result_str},
        {"global", case_global},
        {"global_init", case_global_init},
        {"retired_freed", case_retired_freed},
        {NULL, NULL},
    };
    return rt_test_main(cases, argc, argv);
}
