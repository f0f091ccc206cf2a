/* The texture system's public face: creation, worker contexts, the lookup
 * entry point (UDIM resolution, then the sampler), stats. */
#include "texture_internal.h"
#include "ustr_cpus.h"

#include <errno.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

tex_result
tex_system_create(const tex_config *cfg, tex_system **out, char err[TEX_ERR_LEN])
{
    static const tex_config defaults;
    *out = NULL;
    tex_system *ts = calloc(1, sizeof *ts);
    if (!ts) {
        if (err)
            snprintf(err, TEX_ERR_LEN, "out of memory");
        return TEX_ERR_NOMEM;
    }
    ts->cfg = cfg ? *cfg : defaults;
    if (!ts->cfg.max_memory_mb)
        ts->cfg.max_memory_mb = TEX_DEFAULT_MAX_MEMORY_MB;
    if (!ts->cfg.max_open_files)
        ts->cfg.max_open_files = 256;
    ts->max_memory = ts->cfg.max_memory_mb << 20;
    ts->spill_fd = -1;
    tex__sample_init(); /* before any thread can look up */
    /* Every lock first, so that destroy after a failure meets no
     * uninitialised one. */
    pthread_mutex_init(&ts->threads_lock, NULL);
    pthread_mutex_init(&ts->files_lock, NULL);
    pthread_mutex_init(&ts->cache_lock, NULL);
    pthread_mutex_init(&ts->handles_lock, NULL);
    pthread_mutex_init(&ts->decode_lock, NULL);
    pthread_cond_init(&ts->decode_free, NULL);
    pthread_cond_init(&ts->budget_free, NULL);
    ts->max_decoding = ustr_cpus_usable();
    tex_result r = tex__files_init(ts);
    if (r == TEX_OK)
        r = tex__cache_init(ts, err);
    if (r == TEX_OK && !(ts->strings = ts->cfg.strings ? ts->cfg.strings : ustr_global()))
        r = TEX_ERR_NOMEM;
    if (r != TEX_OK) {
        if (r == TEX_ERR_NOMEM && err)
            snprintf(err, TEX_ERR_LEN, "out of memory");
        tex_system_destroy(ts);
        return r;
    }
    *out = ts;
    return TEX_OK;
}

void
tex_system_destroy(tex_system *ts)
{
    if (!ts)
        return;
    while (ts->threads)
        tex_thread_destroy(ts->threads);
    tex__cache_free(ts);
    free(ts->declared);
    tex__files_free(ts);
    pthread_mutex_destroy(&ts->threads_lock);
    pthread_mutex_destroy(&ts->decode_lock);
    pthread_cond_destroy(&ts->decode_free);
    pthread_cond_destroy(&ts->budget_free);
    free(ts);
}

tex_result
tex_thread_create(tex_system *ts, tex_thread **out)
{
    /* Aligned so the hazard pointer and counters share no line with others. */
    tex_thread *tc = aligned_alloc(TEX__CACHE_LINE, (sizeof *tc + TEX__CACHE_LINE - 1) &
                                                        ~(size_t)(TEX__CACHE_LINE - 1));
    *out = NULL;
    if (!tc)
        return TEX_ERR_NOMEM;
    memset(tc, 0, sizeof *tc);
    atomic_init(&tc->hazard, NULL);
    tc->ts = ts;
    pthread_mutex_lock(&ts->threads_lock);
    tc->next = ts->threads;
    if (ts->threads)
        ts->threads->prev = tc;
    ts->threads = tc;
    pthread_mutex_unlock(&ts->threads_lock);
    *out = tc;
    return TEX_OK;
}

static void
counters_add(tex_stats *s, const tex__counters *c)
{
    /* Relaxed: a snapshot of counters their owners keep writing. */
#define ADD(field, what) s->field += atomic_load_explicit(&c->field, memory_order_relaxed);
    TEX_THREAD_COUNTS(ADD)
#undef ADD
}

void
tex_thread_destroy(tex_thread *tc)
{
    if (!tc)
        return;
    tex_system *ts = tc->ts;

    pthread_mutex_lock(&ts->threads_lock);
    counters_add(&ts->dead_stats, &tc->counters);
    if (tc->prev)
        tc->prev->next = tc->next;
    else
        ts->threads = tc->next;
    if (tc->next)
        tc->next->prev = tc->prev;
    pthread_mutex_unlock(&ts->threads_lock);
    free(tc);
}

static void
fill(const tex_opts *o, float *result, unsigned n)
{
    unsigned first = o->first_channel < 4 ? o->first_channel : 4;
    for (unsigned c = 0; c < n; c++)
        result[c] = o->fill[first + c < 4 ? first + c : 3];
}

tex_result
tex_lookup(tex_system *ts, tex_thread *tc, ustr name, float s, float t, const tex_derivs *d,
           const tex_opts *o, float *result)
{
    static const tex_opts defaults;
    if (!o)
        o = &defaults;
    unsigned n = o->nchannels && o->nchannels <= 4 ? o->nchannels : 4;
    tex__count(&tc->counters.lookups, 1);
    if (!name) {
        fill(o, result, n);
        return TEX_ERR_INVALID;
    }

    tex__file *f = tex__file_find(ts, tc, name, o->raw);
    if (f && f->udim_prefix) {
        const char *resolved = tex__udim_resolve(tc, f, &s, &t);
        ustr        u = resolved ? ustr_table_intern_cstr(ts->strings, resolved) : NULL;
        f = u ? tex__file_find(ts, tc, u, o->raw) : NULL;
        if (!f) {
            fill(o, result, n);
            return resolved ? TEX_ERR_NOMEM : TEX_ERR_OPEN;
        }
    }
    tex_result r = f ? tex__file_ready(ts, tc, f) : TEX_ERR_NOMEM;
    if (r != TEX_OK) {
        fill(o, result, n);
        return r;
    }
    float rgba[4];
    if (!tex__sample(ts, tc, f, s, t, d, o, rgba))
        /* Acquire: as in tex__file_ready(); a broken file has its error. */
        r = atomic_load_explicit(&f->state, memory_order_acquire) == TEX__BROKEN ? f->error
                                                                                 : TEX_ERR_NOMEM;
    tex__tile_release(tc);
    if (n >= 3 && o->first_channel == 0) {      /* the usual requests, RGB and RGBA: a copy */
        memcpy(result, rgba, 3 * sizeof *rgba); /* of known size: no call, no loop */
        if (n == 4)
            result[3] = rgba[3];
        return r;
    }
    unsigned first = o->first_channel < 4 ? o->first_channel : 4; /* no wrap-around */
    for (unsigned c = 0; c < n; c++)
        result[c] = first + c < 4 ? rgba[first + c] : o->fill[3];
    return r;
}

tex_result
tex_file_open(tex_system *ts, tex_thread *tc, ustr name, bool raw)
{
    if (!name)
        return TEX_ERR_INVALID;
    tex__file *f = tex__file_find(ts, tc, name, raw);
    if (!f)
        return TEX_ERR_NOMEM;
    return f->udim_prefix ? TEX_OK : tex__file_ready(ts, tc, f);
}

tex_result
tex_files_declare(tex_system *ts, const ustr *names, const bool *raw, size_t n)
{
    tex_thread *tc;
    tex_result  r = tex_thread_create(ts, &tc);
    if (r != TEX_OK)
        return r;
    tex__file **list = n ? malloc(n * sizeof *list) : NULL;
    size_t      k = 0;
    for (size_t i = 0; list && i < n; i++) {
        tex__file *f = names[i] ? tex__file_find(ts, tc, names[i], raw[i]) : NULL;
        if (f && !f->udim_prefix) /* a <UDIM> pattern is no file to open */
            list[k++] = f;
    }
    tex_thread_destroy(tc);
    if (n && !list)
        return TEX_ERR_NOMEM;
    free(ts->declared);
    ts->declared = list, ts->ndeclared = k;
    /* Relaxed: the caller starts the looking-up threads after this. */
    atomic_store_explicit(&ts->declared_next, 0, memory_order_relaxed);
    return TEX_OK;
}

tex_result
tex_file_info_get(tex_system *ts, ustr name, tex_file_info *out)
{
    tex_thread *tc;
    tex_result  r = tex_thread_create(ts, &tc);
    if (r != TEX_OK)
        return r;
    tex__file *f = tex__file_find(ts, tc, name, false);
    r = f ? tex__file_ready(ts, tc, f) : TEX_ERR_NOMEM;
    if (r == TEX_OK)
        *out = f->info;
    tex_thread_destroy(tc);
    return r;
}

void
tex_system_stats(tex_system *ts, tex_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&ts->threads_lock);
    *out = ts->dead_stats;
    for (tex_thread *tc = ts->threads; tc; tc = tc->next)
        counters_add(out, &tc->counters);
    pthread_mutex_unlock(&ts->threads_lock);
    /* Relaxed: stats only. */
    out->memory = atomic_load_explicit(&ts->memory, memory_order_relaxed);
    out->peak_memory = atomic_load_explicit(&ts->peak_memory, memory_order_relaxed);
    out->files_closed += atomic_load_explicit(&ts->files_closed, memory_order_relaxed);
    pthread_mutex_lock(&ts->decode_lock);
    out->peak_decoding = ts->peak_decoding;
    pthread_mutex_unlock(&ts->decode_lock);
}

void
tex_stats_print(const tex_stats *s, const char *prefix, FILE *f)
{
    double hit = s->tile_hits + s->tile_misses
                     ? 100.0 * (double)s->tile_hits / (double)(s->tile_hits + s->tile_misses)
                     : 0.0;
    fprintf(f, "%slookups %" PRIu64 ", file microcache hits %" PRIu64 "\n", prefix, s->lookups,
            s->microcache_hits);
    fprintf(f,
            "%stiles: %" PRIu64 " hits, %" PRIu64 " misses (%.2f%% hits), %" PRIu64
            " loaded, %" PRIu64 " kept, %" PRIu64 " evicted (%" PRIu64 " spilled), %.1f MiB read\n",
            prefix, s->tile_hits, s->tile_misses, hit, s->tiles_loaded, s->tiles_kept,
            s->tiles_evicted, s->tiles_spilled, (double)s->bytes_read / (1 << 20));
    fprintf(f,
            "%sfiles: %" PRIu64 " opened (%.1f ms of threads' time), %" PRIu64 " closed, %" PRIu64
            " errors; memory %.1f MiB, peak %.1f MiB\n",
            prefix, s->files_opened, (double)s->open_us / 1e3, s->files_closed, s->file_errors,
            (double)s->memory / (1 << 20), (double)s->peak_memory / (1 << 20));
}
