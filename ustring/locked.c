/* The four locked strategies share one shape: look up under the shared side
 * of the lock (the only side a mutex or spin lock has); on a miss, make the
 * rep outside the lock, take the exclusive side, look again (another thread
 * may have won), and publish. Sharded tables pick a shard by the hash's top
 * bits, which the slot index (low bits) never uses. */
#include "ustring_internal.h"

#include <errno.h>

#define SHARD_BITS 6
_Static_assert(USTR_SHARDS == 1 << SHARD_BITS, "USTR_SHARDS must match SHARD_BITS");

static bool
mutex_lock_counted(pthread_mutex_t *m)
{
    if (pthread_mutex_trylock(m) == 0)
        return false;
    pthread_mutex_lock(m);
    return true;
}

static bool
lock_shared(const ustr_table *t, ustr__shard *sh)
{
    switch (t->lock) {
    case USTR_LOCK_MUTEX:
        return mutex_lock_counted(&sh->lock.mutex);
    case USTR_LOCK_SPIN:
        return ustr_spin_lock(&sh->lock.spin);
    default:
        return ustr_rwspin_read_lock(&sh->lock.rw);
    }
}

static void
unlock_shared(const ustr_table *t, ustr__shard *sh)
{
    switch (t->lock) {
    case USTR_LOCK_MUTEX:
        pthread_mutex_unlock(&sh->lock.mutex);
        break;
    case USTR_LOCK_SPIN:
        ustr_spin_unlock(&sh->lock.spin);
        break;
    default:
        ustr_rwspin_read_unlock(&sh->lock.rw);
    }
}

static bool
lock_exclusive(const ustr_table *t, ustr__shard *sh)
{
    if (t->lock == USTR_LOCK_RWSPIN || t->lock == USTR_LOCK_SHARDED)
        return ustr_rwspin_write_lock(&sh->lock.rw);
    return lock_shared(t, sh);
}

static void
unlock_exclusive(const ustr_table *t, ustr__shard *sh)
{
    if (t->lock == USTR_LOCK_RWSPIN || t->lock == USTR_LOCK_SHARDED)
        ustr_rwspin_write_unlock(&sh->lock.rw);
    else
        unlock_shared(t, sh);
}

const ustr__rep *
ustr__locked_intern(ustr_table *t, ustr__thread *th, const char *s, size_t len, uint64_t hash)
{
    ustr__shard *sh = &t->shards[t->nshards > 1 ? hash >> (64 - SHARD_BITS) : 0];

    bool             waited = lock_shared(t, sh);
    const ustr__rep *found = ustr__map_find(&sh->map, hash, s, len);
    unlock_shared(t, sh);
    if (waited)
        ustr__count(&th->counters.contended, 1);
    if (found)
        return found;

    ustr__rep *mine = ustr__rep_make(t, th, s, len, hash);
    if (!mine) {
        errno = ENOMEM;
        return NULL;
    }
    waited = lock_exclusive(t, sh);
    found = ustr__map_find(&sh->map, hash, s, len);
    bool published = !found && ustr__map_insert(t, &sh->map, mine);
    unlock_exclusive(t, sh);
    if (waited)
        ustr__count(&th->counters.contended, 1);

    if (published) {
        ustr__count(&th->counters.inserts, 1);
        return mine;
    }
    ustr__rep_unmake(t, th, mine);
    if (!found)
        errno = ENOMEM; /* the index could not grow */
    return found;
}

ustr_result
ustr__locked_init(ustr_table *t)
{
    t->nshards = t->lock == USTR_LOCK_SHARDED ? USTR_SHARDS : 1;
    t->shards = ustr__lines_alloc(t, t->nshards * sizeof(ustr__shard), &t->shards_raw);
    if (!t->shards)
        return USTR_ERR_NOMEM;

    for (size_t i = 0; i < t->nshards && t->lock == USTR_LOCK_MUTEX; i++)
        pthread_mutex_init(&t->shards[i].lock.mutex, NULL);
    size_t per_shard = t->initial_capacity / t->nshards;
    for (size_t i = 0; i < t->nshards; i++) {
        if (ustr__map_init(t, &t->shards[i].map, per_shard) != USTR_OK) {
            ustr__locked_free(t); /* unmade maps are NULL, which frees as a no-op */
            return USTR_ERR_NOMEM;
        }
    }
    return USTR_OK;
}

void
ustr__locked_free(ustr_table *t)
{
    if (!t->shards)
        return;
    for (size_t i = 0; i < t->nshards; i++) {
        ustr__map_free(t, &t->shards[i].map);
        if (t->lock == USTR_LOCK_MUTEX)
            pthread_mutex_destroy(&t->shards[i].lock.mutex);
    }
    ustr__lines_free(t, t->shards_raw, t->nshards * sizeof(ustr__shard));
    t->shards = t->shards_raw = NULL;
}

uint64_t
ustr__locked_walk_count(ustr_table *t)
{
    uint64_t n = 0;
    for (size_t i = 0; i < t->nshards; i++)
        for (size_t k = 0; k <= t->shards[i].map.mask; k++)
            n += t->shards[i].map.slots[k].rep != NULL;
    return n;
}
