/* ustring: interned strings.
 *
 * A ustr is a pointer to canonical, immutable, NUL-terminated characters.
 * Within one table, two ustrs are equal exactly when the pointers are equal,
 * so comparing, hashing and keying maps by a ustr costs one pointer. The length
 * and the hash live just before the characters and are read in O(1).
 *
 * Every render thread interns a texture filename at every lookup, so a table
 * must be fast at one thread and stay fast at 32. The lock strategy is chosen
 * per table at run time, so one binary can compare them in a timing study.
 *
 * Interned strings live until their table is destroyed; the global table
 * lives until process exit. */
#ifndef USTRING_H
#define USTRING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Canonical characters; print with "%s" (stops at an embedded NUL, use
 * ustr_len() for the whole string). Never write through it, never free it. */
typedef const char *ustr;

typedef struct ustr_table ustr_table; /* opaque; safe to share between threads */

typedef enum ustr_result {
    USTR_OK = 0,
    USTR_ERR_NOMEM,   /* an allocation failed */
    USTR_ERR_INVALID, /* a bad argument: unknown strategy name, ... */
    USTR_ERR_BUSY,    /* the global table is already in use */
} ustr_result;

const char *ustr_result_str(ustr_result r);

/* How a table guards itself. Every strategy gives the same answers; they
 * differ only in how they scale with threads. */
typedef enum ustr_lock {
    USTR_LOCK_DEFAULT = 0, /* the strategy that measures best: lockfree */
    USTR_LOCK_MUTEX,       /* one pthread mutex around lookup and insert */
    USTR_LOCK_SPIN,        /* one test-and-test-and-set spin lock */
    USTR_LOCK_RWSPIN,      /* one reader/writer spin lock; lookups share it */
    USTR_LOCK_SHARDED,     /* USTR_SHARDS shards by hash bits, an rwspin each */
    USTR_LOCK_LOCKFREE,    /* lookups take no lock; inserts publish by CAS */
} ustr_lock;

#define USTR_LOCK_COUNT 5 /* named strategies: USTR_LOCK_MUTEX..LOCKFREE */
#define USTR_SHARDS     64

/* "mutex", "spin", "rwspin", "sharded", "lockfree"; DEFAULT gives the name of
 * the strategy it stands for. */
const char *ustr_lock_name(ustr_lock lock);
/* Parses a name above (or "default"). USTR_ERR_INVALID for anything else. */
ustr_result ustr_lock_parse(const char *name, ustr_lock *out);

/* Where a table gets memory. Tests use it to make allocations fail; NULL
 * functions mean malloc() and free(). alloc_fn returns 16-byte-aligned
 * memory or NULL. */
typedef struct ustr_allocator {
    void *(*alloc_fn)(size_t size, void *ctx);
    void (*free_fn)(void *p, size_t size, void *ctx);
    void *ctx;
} ustr_allocator;

typedef struct ustr_config {    /* zero-initialised means defaults */
    ustr_lock lock;             /* 0: USTR_LOCK_DEFAULT */
    size_t    initial_capacity; /* strings before the first growth; 0: 1024;
                                 * at most USTR_MAX_INITIAL_CAPACITY */
    ustr_allocator allocator;
} ustr_config;

#define USTR_MAX_INITIAL_CAPACITY ((size_t)1 << 30)

/* The longest string a table accepts, in bytes. */
#define USTR_MAX_LEN ((size_t)1 << 30)

/* Creates an empty table. On USTR_OK *out is yours; free it with
 * ustr_table_destroy(). On failure *out is NULL and nothing leaks:
 * USTR_ERR_INVALID for an unknown lock, an initial_capacity over
 * USTR_MAX_INITIAL_CAPACITY or an allocator with only one function;
 * USTR_ERR_NOMEM when memory runs out. */
ustr_result ustr_table_create(const ustr_config *cfg, ustr_table **out);

/* Frees the table and every string it interned. No thread may use the table
 * or its strings during or after the call. NULL is a no-op. */
void ustr_table_destroy(ustr_table *t);

/* Interns the `len` bytes at `s` (embedded NUL bytes allowed) and returns the
 * canonical copy, NUL-terminated after `len` bytes. Safe concurrently with any
 * other call on the same table from any thread.
 * Returns NULL and sets errno when it cannot:
 *   EINVAL  s is NULL and len is not 0 (NULL with len 0 is the empty string);
 *   ERANGE  len > USTR_MAX_LEN;
 *   ENOMEM  out of memory: the table is unchanged and stays usable.
 * A string becomes visible to other threads only whole. */
ustr ustr_table_intern(ustr_table *t, const char *s, size_t len);

/* As ustr_table_intern() with len = strlen(s); NULL gives EINVAL. */
ustr ustr_table_intern_cstr(ustr_table *t, const char *s);

/* The global table. ustr_global_init() chooses its configuration; call it
 * before the first use of the global table, or get USTR_ERR_BUSY. Without it
 * the first use creates the table with defaults. If creation runs out of
 * memory, ustr_intern() returns NULL with ENOMEM. */
ustr_result ustr_global_init(const ustr_config *cfg);
ustr_table *ustr_global(void); /* NULL only when out of memory */

/* ustr_table_intern() and ustr_table_intern_cstr() on the global table. */
ustr ustr_intern(const char *s, size_t len);
ustr ustr_intern_cstr(const char *s);

/* Length in bytes (without the terminating NUL) and the 64-bit hash that the
 * table stored with the characters. `u` must come from an intern call. */
static inline size_t
ustr_len(ustr u)
{
    return (size_t)((const uint64_t *)(const void *)u)[-1];
}

static inline uint64_t
ustr_hash(ustr u)
{
    return ((const uint64_t *)(const void *)u)[-2];
}

/* The hash a table stores for these bytes; equal bytes, equal hash. Keyed
 * per process (hash.c says why): the same bytes hash differently in another
 * run, unless USTR_HASH_SEED in the environment fixes the key (a number,
 * decimal or 0x hex, read before main()). Nothing a table returns depends
 * on the key: only where a string sits in an index. */
uint64_t ustr_hash_bytes(const char *s, size_t len);

/* The seed the keys of this process came from (USTR_HASH_SEED's value,
 * or a random one). */
uint64_t ustr_hash_seed(void);

/* The counts, one list each (adding one is one line here plus the code that
 * counts it; the render's report, its --stats-json and the study's columns
 * follow). X(name, what): `name` is a uint64_t field of ustr_stats.
 *
 * Counted per thread, each thread writing only its own, and summed when read,
 * so keeping them on costs no shared write: */
#define USTR_THREAD_COUNTS(X)                                                                      \
    X(lookups, "intern calls that succeeded")                                                      \
    X(inserts, "of those, calls that added a new string")                                          \
    X(contended, "lock acquisitions that had to wait")                                             \
    X(string_bytes, "bytes of string storage taken from arenas")

/* Of the table as a whole: kept by it, or worked out when read (strings
 * from the inserts, nothing being removed; threads by counting records): */
#define USTR_TABLE_COUNTS(X)                                                                       \
    X(strings, "distinct strings held")                                                            \
    X(capacity, "slots in the hash index (all shards)")                                            \
    X(index_bytes, "bytes of hash index (all shards, all arrays)")                                 \
    X(grows, "times an index grew (2x, or 4x for small lock-free arrays)")                         \
    X(threads, "per-thread records: one per thread that used the table, except that a new "        \
               "thread takes over the record of one that has exited")

#define USTR_STATS_COUNTS(X) USTR_THREAD_COUNTS(X) USTR_TABLE_COUNTS(X)

/* A snapshot: read while other threads intern, the figures are recent and
 * slightly inconsistent. */
typedef struct ustr_stats {
    ustr_lock lock; /* the table's strategy */
#define USTR_STATS_FIELD_(name, what) uint64_t name;
    USTR_STATS_COUNTS(USTR_STATS_FIELD_)
#undef USTR_STATS_FIELD_
} ustr_stats;

/* Fills *out. Safe concurrently with interning. */
void ustr_table_stats(ustr_table *t, ustr_stats *out);

/* A short human-readable report, a few lines, each starting with `prefix`. */
void ustr_stats_print(const ustr_stats *s, const char *prefix, FILE *f);

#endif
