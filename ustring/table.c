/* The public face: argument checks, the thread's state, the hash, then the
 * table's strategy. Also the global table and the names of things. */
#include "ustring_internal.h"

#include <errno.h>

/* Relaxed: ids only need to be unique, not ordered. Starts at 1: 0 marks an
 * empty thread-local cache entry. */
static _Atomic uint64_t next_table_id = 1;

static const char *const lock_names[] = {
    [USTR_LOCK_MUTEX] = "mutex",       [USTR_LOCK_SPIN] = "spin",
    [USTR_LOCK_RWSPIN] = "rwspin",     [USTR_LOCK_SHARDED] = "sharded",
    [USTR_LOCK_LOCKFREE] = "lockfree",
};

/* Measured best on hot lookups at every thread count (README, "Choosing a
 * lock strategy"). */
#define DEFAULT_LOCK USTR_LOCK_LOCKFREE

const char *
ustr_lock_name(ustr_lock lock)
{
    if (lock == USTR_LOCK_DEFAULT)
        lock = DEFAULT_LOCK;
    if (lock < USTR_LOCK_MUTEX || lock > USTR_LOCK_LOCKFREE)
        return "unknown";
    return lock_names[lock];
}

ustr_result
ustr_lock_parse(const char *name, ustr_lock *out)
{
    if (name && strcmp(name, "default") == 0) {
        *out = USTR_LOCK_DEFAULT;
        return USTR_OK;
    }
    for (int l = USTR_LOCK_MUTEX; name && l <= USTR_LOCK_LOCKFREE; l++) {
        if (strcmp(name, lock_names[l]) == 0) {
            *out = (ustr_lock)l;
            return USTR_OK;
        }
    }
    return USTR_ERR_INVALID;
}

const char *
ustr_result_str(ustr_result r)
{
    switch (r) {
    case USTR_OK:
        return "ok";
    case USTR_ERR_NOMEM:
        return "out of memory";
    case USTR_ERR_INVALID:
        return "invalid argument";
    case USTR_ERR_BUSY:
        return "the global table is already in use";
    }
    return "unknown error";
}

ustr_result
ustr_table_create(const ustr_config *cfg, ustr_table **out)
{
    static const ustr_config defaults;
    *out = NULL;
    if (!cfg)
        cfg = &defaults;
    ustr_lock lock = cfg->lock == USTR_LOCK_DEFAULT ? DEFAULT_LOCK : cfg->lock;
    if (lock < USTR_LOCK_MUTEX || lock > USTR_LOCK_LOCKFREE)
        return USTR_ERR_INVALID;
    if (cfg->initial_capacity > USTR_MAX_INITIAL_CAPACITY)
        return USTR_ERR_INVALID; /* keeps every index size far from overflow */
    if (!cfg->allocator.alloc_fn != !cfg->allocator.free_fn)
        return USTR_ERR_INVALID; /* one without the other would mix heaps */

    ustr_table proto = {
        .lock = lock,
        .allocator = cfg->allocator,
        .initial_capacity = cfg->initial_capacity ? cfg->initial_capacity : 1024,
    };
    ustr_table *t = ustr__alloc(&proto, sizeof *t);
    if (!t)
        return USTR_ERR_NOMEM;
    *t = proto;
    t->id = atomic_fetch_add_explicit(&next_table_id, 1, memory_order_relaxed);
    pthread_mutex_init(&t->registry_lock, NULL);

    ustr_result r = lock == USTR_LOCK_LOCKFREE ? ustr__lockfree_init(t) : ustr__locked_init(t);
    if (r != USTR_OK) {
        ustr_table_destroy(t);
        return r;
    }
    *out = t;
    return USTR_OK;
}

void
ustr_table_destroy(ustr_table *t)
{
    if (!t)
        return;
    if (t->lock == USTR_LOCK_LOCKFREE)
        ustr__lockfree_free(t);
    else
        ustr__locked_free(t);
    ustr__threads_free(t);
    pthread_mutex_destroy(&t->registry_lock);
    ustr__free(t, t, sizeof *t);
}

/* ustr_table_intern(), from the argument checks on. Out of line, so that
 * the frame its locked path needs is not set up for the lockfree hit that
 * ustr_table_intern() hands straight on. */
static __attribute__((noinline)) ustr
intern_checked(ustr_table *t, const char *s, size_t len)
{
    if (!s && len) {
        errno = EINVAL;
        return NULL;
    }
    if (len > USTR_MAX_LEN) {
        errno = ERANGE;
        return NULL;
    }
    if (!s)
        s = "";
    if (t->lock == USTR_LOCK_LOCKFREE)
        return ustr__lockfree_intern(t, s, len); /* NULL with 0 bytes: the empty string */
    ustr__thread *th = ustr__thread_get(t, t->id);
    if (!th) {
        errno = ENOMEM;
        return NULL;
    }
    const ustr__rep *r = ustr__locked_intern(t, th, s, len, ustr__hash(s, len));
    /* On every path, failures too: see ustr__count_release(). */
    ustr__count_release(&th->counters.lookups, r ? 1 : 0);
    return r ? r->chars : NULL; /* on NULL, errno was set by the strategy */
}

ustr
ustr_table_intern(ustr_table *t, const char *s, size_t len)
{
    if (t->lock == USTR_LOCK_LOCKFREE && s && len <= USTR_MAX_LEN)
        return ustr__lockfree_intern(t, s, len); /* all inline there, in one frame */
    return intern_checked(t, s, len);
}

uint64_t
ustr__table_walk_count(ustr_table *t)
{
    return t->lock == USTR_LOCK_LOCKFREE ? ustr__lockfree_walk_count(t)
                                         : ustr__locked_walk_count(t);
}

ustr
ustr_table_intern_cstr(ustr_table *t, const char *s)
{
    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    return ustr_table_intern(t, s, strlen(s));
}

/* ---- the global table ---- */

static pthread_mutex_t       global_lock = PTHREAD_MUTEX_INITIALIZER; /* guards making it */
static _Atomic(ustr_table *) global_table;

static ustr_result
global_make_locked(const ustr_config *cfg)
{
    ustr_table *t;
    ustr_result r = ustr_table_create(cfg, &t);
    if (r == USTR_OK)
        /* Release pairs with the acquire in ustr_global(): whoever sees the
         * pointer sees a fully built table. */
        atomic_store_explicit(&global_table, t, memory_order_release);
    return r;
}

ustr_result
ustr_global_init(const ustr_config *cfg)
{
    pthread_mutex_lock(&global_lock);
    /* Relaxed: global_lock orders every write of the pointer. */
    ustr_result r = atomic_load_explicit(&global_table, memory_order_relaxed)
                        ? USTR_ERR_BUSY
                        : global_make_locked(cfg);
    pthread_mutex_unlock(&global_lock);
    return r;
}

ustr_table *
ustr_global(void)
{
    /* Acquire pairs with the release in global_make_locked(). */
    ustr_table *t = atomic_load_explicit(&global_table, memory_order_acquire);
    if (t)
        return t;
    pthread_mutex_lock(&global_lock);
    /* Relaxed, both: global_lock orders every write of the pointer. */
    if (!atomic_load_explicit(&global_table, memory_order_relaxed))
        global_make_locked(NULL);
    t = atomic_load_explicit(&global_table, memory_order_relaxed);
    pthread_mutex_unlock(&global_lock);
    return t;
}

ustr
ustr_intern(const char *s, size_t len)
{
    ustr_table *t = ustr_global();
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    return ustr_table_intern(t, s, len);
}

ustr
ustr_intern_cstr(const char *s)
{
    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    return ustr_intern(s, strlen(s));
}
