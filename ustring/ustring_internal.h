/* Private to ustring/: the pieces the strategies share. */
#ifndef USTRING_INTERNAL_H
#define USTRING_INTERNAL_H

#include "ustr_epoch.h"
#include "ustr_rwspin.h"
#include "ustr_spin.h"
#include "ustring.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define USTR__CACHE_LINE 64

/* Unaligned loads of a string's bytes, native byte order. */
static inline uint64_t
ustr__load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w); /* unaligned-safe; compiles to one load */
    return w;
}

static inline uint64_t
ustr__load32(const char *p)
{
    uint32_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* An interned string: hash and length just before the characters, which is
 * what ustr_len() and ustr_hash() in ustring.h read. */
typedef struct ustr__rep {
    uint64_t hash;
    uint64_t len;
    char     chars[]; /* len bytes, then NUL */
} ustr__rep;

static inline const ustr__rep *
ustr__rep_of(ustr u)
{
    return (const ustr__rep *)(const void *)(u - offsetof(ustr__rep, chars));
}

static inline bool
ustr__rep_matches(const ustr__rep *r, uint64_t hash, const char *s, size_t len)
{
    return r->hash == hash && r->len == len && memcmp(r->chars, s, len) == 0;
}

/* ---- the hash (hash.c says why it is shaped so and keyed) --------------- */

/* k[0] starts the state, k[1]/k[2] key the first block's words and k[3]/
 * k[4] step them from block to block (odd), k[5]/k[6] key the last 1..16
 * bytes, k[7] the final fold. */
extern uint64_t ustr__hash_keys[8];

/* a + b mod 2^64, added in 128 bits: deliberate wrap-around, which the
 * fuzz preset's sanitizer (unsigned-integer-overflow) would flag in 64. */
static inline uint64_t
ustr__add_wrap(uint64_t a, uint64_t b)
{
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)((u128)a + b);
}

/* a * b mod 2^64, likewise. */
static inline uint64_t
ustr__mul_wrap(uint64_t a, uint64_t b)
{
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)((u128)a * b);
}

/* x * y to 128 bits, low half xor high half. */
static inline uint64_t
ustr__fold(uint64_t x, uint64_t y)
{
    __extension__ unsigned __int128 p = (unsigned __int128)x * y;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static inline uint64_t
ustr__rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

/* The last n (0..16) bytes at s as two words, read with loads that may
 * overlap rather than byte by byte; the hash mixes the length in, which
 * tells the cases apart. Both 0 for n = 0 (only the empty string). */
static inline void
ustr__tail_words(const char *s, size_t n, uint64_t *a, uint64_t *b)
{
    *a = *b = 0;
    if (n >= 8) {
        *a = ustr__load64(s);
        *b = ustr__load64(s + n - 8);
    } else if (n >= 4) {
        *a = ustr__load32(s);
        *b = ustr__load32(s + n - 4);
    } else if (n > 0) {
        *a = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
             (uint64_t)(unsigned char)s[n - 1] << 16;
    }
}

/* ustr_hash_bytes(), inline: the intern's hot path hashes with it. */
static inline uint64_t
ustr__hash(const char *s, size_t len)
{
    const uint64_t *k = ustr__hash_keys;
    uint64_t        h = k[0] ^ len, ka = k[1], kb = k[2];
    size_t          n = len;
    for (; n > 16; s += 16, n -= 16, ka = ustr__add_wrap(ka, k[3]), kb = ustr__add_wrap(kb, k[4]))
        h = ustr__rotl(h, 29) ^ ustr__fold(ustr__load64(s) ^ ka, ustr__load64(s + 8) ^ kb);
    /* The tail has keys of its own: the length fixes its position, and
     * the block keys stay loop-local. */
    uint64_t a, b;
    ustr__tail_words(s, n, &a, &b);
    h = ustr__rotl(h, 29) ^ ustr__fold(a ^ k[5], b ^ k[6]);
    return ustr__fold(h ^ k[7], h ^ k[1]);
}

/* Re-keys the hash from `seed`, as USTR_HASH_SEED would. Tests only: not
 * thread-safe, and strings interned before it keep their old hashes. */
void ustr__hash_seed_set(uint64_t seed);

/* ---- memory -------------------------------------------------------------- */

void *ustr__alloc(const ustr_table *t, size_t size); /* 16-aligned or NULL */
/* Zeroed; with the default allocator big blocks come zeroed from the kernel
 * (calloc), so a big index costs no memset. */
void *ustr__alloc_zeroed(const ustr_table *t, size_t size);
void  ustr__free(const ustr_table *t, void *p, size_t size);
/* Zeroed, cache-line-aligned memory, so that what threads write apart never
 * shares a line. *raw is what to pass to ustr__lines_free() with the same
 * size. */
void *ustr__lines_alloc(const ustr_table *t, size_t size, void **raw);
void  ustr__lines_free(const ustr_table *t, void *raw, size_t size);

/* A per-thread bump allocator of string storage: no lock, no shared write.
 * Blocks are freed only with the table. */
typedef struct ustr__block ustr__block;
typedef struct ustr__arena {
    ustr__block *blocks; /* newest first */
    char        *cur, *end;
} ustr__arena;

/* ---- per-thread state ---------------------------------------------------- */

/* Counters written only by their owner thread, with a relaxed load and store
 * rather than a locked read-modify-write; ustr_table_stats() sums them. */
typedef struct ustr__counters {
#define USTR__COUNTER_FIELD_(name, what) _Atomic uint64_t name;
    USTR_THREAD_COUNTS(USTR__COUNTER_FIELD_)
#undef USTR__COUNTER_FIELD_
} ustr__counters;

static inline void
ustr__count(_Atomic uint64_t *c, int64_t n)
{
    /* Relaxed: only the owner writes, and readers want a snapshot, not an
     * ordering; atomic only so a concurrent reader is not a data race. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (uint64_t)n,
                          memory_order_relaxed);
}

/* As ustr__count(), with release: ends every intern call, so that a thread
 * taking the record over later (thread.c) acquires all the owner did. */
static inline void
ustr__count_release(_Atomic uint64_t *c, int64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (uint64_t)n,
                          memory_order_release);
}

/* One per (thread, table). Owned by the table, which frees it. */
typedef struct ustr__thread {
    ustr_epoch_rec       rec; /* lockfree readers' epoch record; first: 64-aligned */
    ustr__counters       counters;
    ustr__arena          arena;
    const void          *owner;            /* address of a thread-local: who owns it */
    struct ustr__thread *next;             /* the table's list; guarded by its registry lock */
    void                *raw;              /* what the allocator returned */
    alignas(USTR__CACHE_LINE) char end[1]; /* nothing else shares the lines above */
} ustr__thread;

typedef struct ustr__tls_entry {
    uint64_t      table_id;
    ustr__thread *thread;
} ustr__tls_entry;

#define USTR__TLS_ENTRIES 4
extern _Thread_local ustr__tls_entry ustr__tls[USTR__TLS_ENTRIES];

ustr__thread *ustr__thread_register(ustr_table *t);
void          ustr__threads_free(ustr_table *t);

/* Copies the string into a new rep in th's arena; NULL when out of memory. */
ustr__rep *ustr__rep_make(const ustr_table *t, ustr__thread *th, const char *s, size_t len,
                          uint64_t hash);
/* Takes back th's most recent rep, which lost the race to publish. */
void ustr__rep_unmake(const ustr_table *t, ustr__thread *th, ustr__rep *r);
void ustr__arena_free(const ustr_table *t, ustr__arena *a);

/* The calling thread's state for t; NULL when out of memory. */
static inline ustr__thread *
ustr__thread_get(ustr_table *t, uint64_t table_id)
{
    for (int i = 0; i < USTR__TLS_ENTRIES; i++)
        if (ustr__tls[i].table_id == table_id)
            return ustr__tls[i].thread;
    return ustr__thread_register(t);
}

/* ---- the locked index: open addressing under an external lock ---------- */

typedef struct ustr__slot {
    uint64_t         hash;
    const ustr__rep *rep; /* NULL: empty */
} ustr__slot;

typedef struct ustr__map {
    ustr__slot *slots;
    size_t      mask;  /* capacity - 1; capacity is a power of two */
    size_t      count; /* reps held */
} ustr__map;

ustr_result      ustr__map_init(ustr_table *t, ustr__map *m, size_t capacity);
void             ustr__map_free(ustr_table *t, ustr__map *m);
const ustr__rep *ustr__map_find(const ustr__map *m, uint64_t hash, const char *s, size_t len);
/* Adds r, known to be absent, growing first if needed. false: out of memory,
 * and the map is unchanged. */
bool ustr__map_insert(ustr_table *t, ustr__map *m, const ustr__rep *r);

/* A shard: one lock and the index it guards. mutex, spin and rwspin tables
 * have one; sharded tables have USTR_SHARDS. */
typedef struct ustr__shard {
    alignas(USTR__CACHE_LINE) union {
        pthread_mutex_t mutex;
        ustr_spin       spin;
        ustr_rwspin     rw;
    } lock; /* guards map; take no other lock inside */
    ustr__map map;
} ustr__shard;

/* ---- the lock-free index ------------------------------------------------- */

typedef struct ustr__lf_array ustr__lf_array;

/* The index is USTR__LF_SHARDS independent arrays, picked by hash bits
 * 32-37 (slots take the low bits, the tags bits 48-62: lockfree.c), each
 * counting, growing and moving on its own: inserts from many threads meet
 * on one shard's counter and one shard's move only when their strings
 * fall in the same shard. */
#define USTR__LF_SHARD_BITS 6
#define USTR__LF_SHARDS     (1 << USTR__LF_SHARD_BITS)

/* The shard of a hash: bits that neither the slot index (the low bits of
 * any array under 2^32 slots) nor the tag uses, so that the strings of one
 * shard still spread over its slots and differ in tags. */
static inline size_t
ustr__lf_shard_of(uint64_t hash)
{
    return (size_t)(hash >> 32) & (USTR__LF_SHARDS - 1);
}

typedef struct ustr__lockfree {
    ustr_epoch epochs; /* the records of this table's threads; retired arrays */
    /* Read by every lookup, written only when a shard's move ends: no
     * line of its own needed (the table itself is only malloc-aligned). */
    _Atomic(ustr__lf_array *) current[USTR__LF_SHARDS];
    /* Bytes of the arrays retired and not yet freed: when an attempt to
     * free them is worth its cost (lockfree.c, reclaim_due()). */
    _Atomic size_t retired_bytes;
} ustr__lockfree;

/* ---- the table ----------------------------------------------------------- */

struct ustr_table {
    /* What every lookup reads, together at the start: a hit touches one
     * line of the table. */
    ustr_lock      lock; /* never USTR_LOCK_DEFAULT */
    uint64_t       id;   /* unique in the process; keys ustr__tls */
    ustr__lockfree lf;
    ustr_allocator allocator;
    size_t         initial_capacity;

    /* Guards threads. Taken when a thread first uses the table and when
     * stats are read; never on a
     * lookup. Outermost: a shard lock may not be held while taking it. */
    pthread_mutex_t registry_lock;
    ustr__thread   *threads;

    /* Index-wide figures, changed when an index grows or a retired
     * array is freed (rare). Relaxed: stats, and a hint for when to
     * reclaim (lockfree.c, reclaim_due()); nothing is ordered by them. */
    _Atomic uint64_t capacity, index_bytes, grows;

    ustr__shard *shards; /* not for lockfree */
    size_t       nshards;
    void        *shards_raw;
};

static inline void
ustr__index_grew(ustr_table *t, int64_t dcap, int64_t dbytes, int grows)
{
    /* Relaxed: as above; several shards may grow at once, hence the adds. */
    atomic_fetch_add_explicit(&t->capacity, (uint64_t)dcap, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->index_bytes, (uint64_t)dbytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->grows, (uint64_t)grows, memory_order_relaxed);
}

ustr_result      ustr__locked_init(ustr_table *t);
void             ustr__locked_free(ustr_table *t);
const ustr__rep *ustr__locked_intern(ustr_table *t, ustr__thread *th, const char *s, size_t len,
                                     uint64_t hash);

ustr_result ustr__lockfree_init(ustr_table *t);
void        ustr__lockfree_free(ustr_table *t);
/* ustr_table_intern() on a lockfree table, the arguments checked (s not
 * NULL, len at most USTR_MAX_LEN): the thread's record, the hash and the
 * count included. */
ustr ustr__lockfree_intern(ustr_table *t, const char *s, size_t len);
/* Frees retired arrays that no reader can hold. */
void ustr__lockfree_reclaim(ustr_table *t);

/* Strings held, counted by walking the index slot by slot rather than read
 * from the insert counters (tests check one against the other). No thread
 * may intern meanwhile. */
uint64_t ustr__table_walk_count(ustr_table *t);
uint64_t ustr__locked_walk_count(ustr_table *t);
uint64_t ustr__lockfree_walk_count(ustr_table *t);

size_t ustr__pow2_at_least(size_t n);

#endif
