/* Files: the table keyed by ustr pointer, the per-thread microcache in front
 * of it, and opening a file on its first lookup. */
#include "tex_io_internal.h"
#include "texture_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the table ---- */

static size_t
slot_of(ustr name, bool raw, size_t mask)
{
    /* The stored hash is a good one, and reading it touches the string's
     * header only, never its characters. */
    return (size_t)(ustr_hash(name) + raw) & mask;
}

static tex__file_array *
array_new(size_t cap)
{
    tex__file_array *a = calloc(1, sizeof *a + cap * sizeof a->slots[0]);
    if (a)
        a->mask = cap - 1;
    return a;
}

tex_result
tex__files_init(tex_system *ts)
{
    tex__file_array *a = array_new(256);
    if (!a)
        return TEX_ERR_NOMEM;
    atomic_init(&ts->files, a);
    return TEX_OK;
}

static void
file_free(tex__file *f)
{
    if (f->levels) {
        for (uint32_t l = 0; l < f->info.nlevels; l++)
            free(f->levels[l].slots);
        free(f->levels);
    }
    tex__tiled_close(&f->handle);
    free(f->udim_prefix);
    free(f->udim_suffix);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

void
tex__files_free(tex_system *ts)
{
    tex__file_array *a = atomic_load_explicit(&ts->files, memory_order_relaxed);
    for (size_t i = 0; a && i <= a->mask; i++) {
        tex__file *f = atomic_load_explicit(&a->slots[i], memory_order_relaxed);
        if (f)
            file_free(f);
    }
    while (a) {
        tex__file_array *older = a->older;
        free(a);
        a = older;
    }
    while (ts->aliases) {
        tex__alias *next = ts->aliases->next;
        free(ts->aliases->path);
        free(ts->aliases);
        ts->aliases = next;
    }
    pthread_mutex_destroy(&ts->files_lock);
}

static tex__file *
array_find(tex__file_array *a, ustr name, bool raw)
{
    for (size_t i = slot_of(name, raw, a->mask);; i = (i + 1) & a->mask) {
        /* Acquire pairs with the release in array_put(): whoever sees the
         * pointer sees the file's initialised fields. */
        tex__file *f = atomic_load_explicit(&a->slots[i], memory_order_acquire);
        if (!f || (f->name == name && f->raw == raw))
            return f;
    }
}

static void
array_put(tex__file_array *a, tex__file *f)
{
    size_t i = slot_of(f->name, f->raw, a->mask);
    /* Relaxed: under files_lock, which every writer holds. */
    while (atomic_load_explicit(&a->slots[i], memory_order_relaxed))
        i = (i + 1) & a->mask;
    /* Release publishes the file to lock-free readers (array_find). */
    atomic_store_explicit(&a->slots[i], f, memory_order_release);
}

/* The alias of `name`, or NULL; files_lock held. */
static const tex__alias *
alias_of(const tex_system *ts, ustr name)
{
    for (const tex__alias *a = ts->aliases; a; a = a->next)
        if (a->name == name)
            return a;
    return NULL;
}

static tex__file *
file_new(const tex_system *ts, ustr name, bool raw)
{
    tex__file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->name = name;
    f->alias = alias_of(ts, name);
    f->path = f->alias && f->alias->path ? f->alias->path : name;
    f->raw = raw;
    pthread_mutex_init(&f->lock, NULL);
    const char *udim = strstr(name, "<UDIM>");
    /* Every tile number has four digits (1001 to 2000). A pattern whose
     * tiles' names could not be paths is no pattern: a file that fails to
     * open, saying why (open_locked()). */
    f->udim_too_long = udim && strlen(name) - strlen("<UDIM>") + 4 >= TEX__PATH_MAX;
    if (udim && !f->udim_too_long) {
        f->udim_prefix = strndup(name, (size_t)(udim - name));
        f->udim_suffix = strdup(udim + strlen("<UDIM>"));
        if (!f->udim_prefix || !f->udim_suffix) {
            file_free(f);
            return NULL;
        }
    }
    return f;
}

/* Adds a file for `name` unless another thread just did; under files_lock. */
static tex__file *
insert_locked(tex_system *ts, ustr name, bool raw)
{
    /* Relaxed: files_lock orders everything writers do. */
    tex__file_array *a = atomic_load_explicit(&ts->files, memory_order_relaxed);
    tex__file       *f = array_find(a, name, raw);
    if (f)
        return f;
    if ((ts->nfiles + 1) * 2 > a->mask + 1) {
        tex__file_array *bigger = array_new((a->mask + 1) * 2);
        if (!bigger)
            return NULL;
        for (size_t i = 0; i <= a->mask; i++) {
            tex__file *g = atomic_load_explicit(&a->slots[i], memory_order_relaxed);
            if (g)
                array_put(bigger, g);
        }
        bigger->older = a;
        /* Release: readers that load the new array see its slots filled. */
        atomic_store_explicit(&ts->files, bigger, memory_order_release);
        a = bigger;
    }
    f = file_new(ts, name, raw);
    if (!f)
        return NULL;
    array_put(a, f);
    ts->nfiles++;
    return f;
}

tex__file *
tex__file_find_slow(tex_system *ts, tex_thread *tc, ustr name, bool raw)
{
    /* Two-way: the pair of entries the name's hash picks, the last used
     * first. Direct-mapped, two files a shading point alternates between
     * (a material's slots, an environment map) can share an entry and evict
     * each other at every lookup. Both ways missed (tex__file_find()): the
     * name goes first, the entry there second, the one used longest ago
     * leaves. */
    tex__micro *m = tex__micro_pair(tc, name, raw);
    /* Acquire pairs with the release in insert_locked(). */
    tex__file *f = array_find(atomic_load_explicit(&ts->files, memory_order_acquire), name, raw);
    if (!f) {
        pthread_mutex_lock(&ts->files_lock);
        f = insert_locked(ts, name, raw);
        pthread_mutex_unlock(&ts->files_lock);
        if (!f)
            return NULL;
    }
    m[1] = m[0];
    m[0] = (tex__micro){name, raw, f};
    return f;
}

/* Adds the alias `al` (its path the caller's to free on failure). */
static tex_result
alias_add(tex_system *ts, const tex__alias *al)
{
    pthread_mutex_lock(&ts->files_lock);
    /* Relaxed: files_lock orders every writer. */
    tex__file_array *a = atomic_load_explicit(&ts->files, memory_order_relaxed);
    tex__alias      *copy = NULL;
    tex_result       r = TEX_ERR_INVALID; /* too late: the name was looked up already */
    if (!array_find(a, al->name, false) && !array_find(a, al->name, true))
        r = (copy = malloc(sizeof *copy)) ? TEX_OK : TEX_ERR_NOMEM;
    if (copy) {
        *copy = *al;
        copy->next = ts->aliases;
        ts->aliases = copy;
    }
    pthread_mutex_unlock(&ts->files_lock);
    return r;
}

tex_result
tex_file_alias(tex_system *ts, ustr name, const char *path)
{
    if (!name || !path)
        return TEX_ERR_INVALID;
    tex__alias al = {.name = name, .path = strdup(path)};
    tex_result r = al.path ? alias_add(ts, &al) : TEX_ERR_NOMEM;
    if (r != TEX_OK)
        free(al.path);
    return r;
}

tex_result
tex_file_alias_bytes(tex_system *ts, ustr name, const void *data, size_t size)
{
    if (!name || (!data && size))
        return TEX_ERR_INVALID;
    return alias_add(ts, &(tex__alias){.name = name, .data = data, .size = size});
}

/* ---- UDIM ---- */

const char *
tex__udim_resolve(tex_thread *tc, const tex__file *f, float *s, float *t)
{
    float u = floorf(*s), v = floorf(*t);
    if (!(u >= 0 && u < 10 && v >= 0 && v < 100))
        return NULL; /* no UDIM tile there (or NaN) */
    int n = snprintf(tc->udim_name, sizeof tc->udim_name, "%s%d%s", f->udim_prefix,
                     1001 + (int)u + 10 * (int)v, f->udim_suffix);
    if (n < 0 || (size_t)n >= sizeof tc->udim_name)
        return NULL;
    *s -= u;
    *t -= v;
    return tc->udim_name;
}

/* ---- opening ---- */

/* A tiled file with MIP levels (EXR or TIFF) is read tile by tile; any
 * other EXR or TIFF is decoded once, by rows, like a PNG. */
static tex_result
open_tiled(tex_system *ts, tex_thread *tc, tex__file *f, tex__format format, const char *path,
           char err[TEX_ERR_LEN])
{
    tex__source     source = format == TEX__FORMAT_EXR ? TEX__SOURCE_EXR : TEX__SOURCE_TIFF;
    tex__tiled_info info;
    tex_result      r = tex__tiled_open(source, path, &f->handle, &info, err);
    if (r != TEX_OK)
        return r;
    if (!info.tile_width || (info.nlevels == 1 && (info.width > 1 || info.height > 1))) {
        tex__tiled_close(&f->handle);
        return tex__cut_file(ts, tc, f, format, -1, path, &info, err);
    }
    f->source = source;
    f->info.width = info.width;
    f->info.height = info.height;
    f->info.nchannels = info.nchannels;
    f->info.type = info.type;
    f->info.srgb = info.srgb && !f->raw;
    f->associated = info.associated;
    tex__sample_prepare(f);
    f->info.tiled_on_disk = true;
    tex__handle_opened(ts, f);
    r = tex__levels_init(f, &f->handle, info.nlevels, info.tile_width, info.tile_height, err);
    if (r != TEX_OK)
        tex__handle_close(ts, f);
    return r;
}

static tex_result
open_file_gated(tex_system *ts, tex_thread *tc, tex__file *f, char err[TEX_ERR_LEN])
{
    tex__read_from src;
    tex_result     r = tex__read_open(ts, f, &src, err);
    if (r != TEX_OK)
        return r;
    /* Opened once: sniffed, then a PNG or JPEG decoded, from the one
     * descriptor (an EXR's or TIFF's library opens it by name): a second
     * open by name repeats the path walk and the checks, per file
     * (docs/benchmarks.md, "One open a file"). */
    int         fd = src.fd >= 0 ? src.fd : tex_open_regular(src.path, err);
    tex__format format = fd >= 0 ? tex__sniff(fd, err, &r) : TEX__FORMAT_UNKNOWN;
    if (fd < 0)
        r = TEX_ERR_OPEN;
    switch (format) {
    case TEX__FORMAT_EXR:
    case TEX__FORMAT_TIFF:
        r = open_tiled(ts, tc, f, format, src.path, err);
        break;
    case TEX__FORMAT_PNG:
    case TEX__FORMAT_JPEG:
        r = tex__cut_file(ts, tc, f, format, fd, src.path, NULL, err);
        break;
    default:
        break; /* opening or sniffing said why */
    }
    if (fd >= 0 && fd != src.fd)
        close(fd);
    tex__read_close(&src);
    return r;
}

/* A place among the max_decoding whole-image decodes, and giving it back. */
static void
decode_enter(tex_system *ts)
{
    pthread_mutex_lock(&ts->decode_lock);
    while (ts->decoding >= ts->max_decoding)
        pthread_cond_wait(&ts->decode_free, &ts->decode_lock);
    ts->decoding++;
    ts->peak_decoding = ts->decoding > ts->peak_decoding ? ts->decoding : ts->peak_decoding;
    pthread_mutex_unlock(&ts->decode_lock);
}

static void
decode_leave(tex_system *ts)
{
    pthread_mutex_lock(&ts->decode_lock);
    ts->decoding--;
    pthread_cond_signal(&ts->decode_free);
    pthread_mutex_unlock(&ts->decode_lock);
}

/* Microseconds on CLOCK_MONOTONIC. */
static uint64_t
now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static tex_result
open_file(tex_system *ts, tex_thread *tc, tex__file *f, char err[TEX_ERR_LEN])
{
    decode_enter(ts); /* a tiled file decodes nothing, but opening it is brief */
    /* Timed inside the gate: what a render spends opening its textures
     * (open_us), which a study holds against its threads' busy time. */
    uint64_t   t0 = now_us();
    tex_result r = open_file_gated(ts, tc, f, err);
    tex__count(&tc->counters.open_us, now_us() - t0);
    decode_leave(ts);
    return r;
}

static tex_result open_locked(tex_system *ts, tex_thread *tc, tex__file *f);

/* One declared file (tex_files_declare()) that nobody has begun, opened by
 * a thread that would otherwise wait; false when none is left to try. */
static bool
help_open(tex_system *ts, tex_thread *tc)
{
    /* Relaxed: the index only hands each declared file to one helper; the
     * file's lock and state order its opening. */
    size_t i = atomic_fetch_add_explicit(&ts->declared_next, 1, memory_order_relaxed);
    if (i >= ts->ndeclared)
        return false;
    tex__file *g = ts->declared[i];
    /* Relaxed: a hint; the state is read again under g's lock. */
    if (atomic_load_explicit(&g->state, memory_order_relaxed) == TEX__UNOPENED &&
        pthread_mutex_trylock(&g->lock) == 0)
        (void)open_locked(ts, tc, g); /* its error is reported; its own lookups return it */
    return true;
}

/* Takes f's lock; while another thread holds it (opening f, mostly), opens
 * declared files nobody has begun instead of sleeping. False if f became
 * READY or BROKEN meanwhile (its lock not taken). Holds no other file's
 * lock while it waits, so opening one under it keeps the lock order. */
static bool
file_lock_helping(tex_system *ts, tex_thread *tc, tex__file *f)
{
    while (pthread_mutex_trylock(&f->lock) != 0) {
        if (!help_open(ts, tc)) {
            pthread_mutex_lock(&f->lock);
            return true;
        }
        /* Acquire: as in tex__file_ready_slow(). */
        if (atomic_load_explicit(&f->state, memory_order_acquire) != TEX__UNOPENED)
            return false;
    }
    return true;
}

tex_result
tex__file_ready_slow(tex_system *ts, tex_thread *tc, tex__file *f)
{
    /* Acquire pairs with the releases in open_locked() and
     * tex__file_break(): READY means the fields are set, BROKEN that
     * `error` is. */
    int state = atomic_load_explicit(&f->state, memory_order_acquire);
    if (state == TEX__READY)
        return TEX_OK;
    if (state == TEX__BROKEN)
        return f->error;
    if (!file_lock_helping(ts, tc, f))
        return tex__file_ready_slow(ts, tc, f); /* settled while this thread helped */
    return open_locked(ts, tc, f);
}

/* Opens f if nobody has (its lock held by the caller), unlocks it and
 * reports a failure, once; f's result. */
static tex_result
open_locked(tex_system *ts, tex_thread *tc, tex__file *f)
{
    char err[TEX_ERR_LEN] = "";
    bool report = false;
    /* Relaxed: f->lock orders everything written under it. */
    if (atomic_load_explicit(&f->state, memory_order_relaxed) == TEX__UNOPENED) {
        if (f->udim_too_long) { /* no prefix: opened as a file, which this one cannot be */
            snprintf(err, sizeof err,
                     "a <UDIM> name whose tiles' names are %zu bytes, past the "
                     "%d a path may have",
                     strlen(f->name) - strlen("<UDIM>") + 4, TEX__PATH_MAX - 1);
            f->error = TEX_ERR_INVALID;
        } else if (f->udim_prefix) {
            snprintf(err, sizeof err, "a <UDIM> name is a pattern, not a file");
            f->error = TEX_ERR_INVALID;
        } else {
            f->error = open_file(ts, tc, f, err);
        }
        report = f->error != TEX_OK;
        tex__count(report ? &tc->counters.file_errors : &tc->counters.files_opened, 1);
        /* Release publishes the file's fields with its state. */
        atomic_store_explicit(&f->state, report ? TEX__BROKEN : TEX__READY, memory_order_release);
    }
    tex_result r = f->error;
    pthread_mutex_unlock(&f->lock);
    if (report) /* outside the lock: the callback may call back into us */
        tex__report(ts, f->name, err);
    return r;
}
