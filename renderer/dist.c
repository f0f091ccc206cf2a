/* One image over several processes, with MPI: see rt_dist.h. */
#include "rt_dist.h"

#include <mpi.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages between rank 0 and the others, by tag. */
enum {
    TAG_ASK = 1, /* rank -> 0: uint32, how many tiles it wants */
    TAG_GIVE,    /* 0 -> rank: uint32[2], the first tile and how many (0: no more) */
    TAG_STATS,   /* rank -> 0: its rt_rank_stats, then an error line ("" if none) */
    TAG_MAP,     /* rank -> 0: one byte per tile, 1: rendered there */
    TAG_PIXELS,  /* rank -> 0: the pixels of those tiles, in tile order, packed */
};

struct rt_dist {
    int      rank, size;
    double   comm_secs; /* in MPI calls, this rank */
    uint64_t bytes_sent;
};

bool
rt_dist_start(int *argc, char ***argv, rt_dist **out, char err[RT_ERR_LEN])
{
    *out = NULL;
    if (rt_dist_launched_ranks() <= 1)
        return true;
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(err, RT_ERR_LEN, "MPI: cannot start");
        return false;
    }
    rt_dist *d = calloc(1, sizeof *d);
    if (!d || provided < MPI_THREAD_FUNNELED) {
        snprintf(err, RT_ERR_LEN, d ? "MPI: no thread support (FUNNELED)" : "out of memory");
        free(d);
        MPI_Finalize();
        return false;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    if (d->size > RT_MAX_RANKS) {
        snprintf(err, RT_ERR_LEN, "%d ranks: at most %d", d->size, RT_MAX_RANKS);
        rt_dist_finish(d);
        return false;
    }
    *out = d;
    return true;
}

unsigned
rt_dist_rank(const rt_dist *d)
{
    return (unsigned)d->rank;
}

unsigned
rt_dist_size(const rt_dist *d)
{
    return (unsigned)d->size;
}

void
rt_dist_finish(rt_dist *d)
{
    if (!d)
        return;
    MPI_Finalize();
    free(d);
}

/* ---- agreeing to start ---- */

typedef struct verdict {
    char failure[RT_ERR_LEN]; /* "" when this rank is ready */
    /* Its image-options line, whole: a hash would need a key shared by the
     * ranks (ustring's is drawn per process), and 9 KB once per rank is
     * nothing. */
    char image[RT_IMAGE_OPTIONS_LEN + 32];
} verdict;

bool
rt_dist_agree(rt_dist *d, const rt_options *o, const char *failure, char err[RT_ERR_LEN])
{
    verdict mine = {{0}, {0}};
    snprintf(mine.failure, sizeof mine.failure, "%s", failure ? failure : "");
    /* The image-options line (what --resume compares) and the size, which
     * a resumed EXR checks by itself. */
    char *line = mine.image;
    rt_image_options_format(o, line, RT_IMAGE_OPTIONS_LEN);
    size_t n = strlen(line);
    snprintf(line + n, sizeof mine.image - n, "; %ux%u", o->width, o->height);
    verdict *all = d->rank == 0 ? calloc((size_t)d->size, sizeof *all) : NULL;
    int      go = 1;
    double   t0 = rt_now();
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (d->rank == 0) {
        for (int r = 0; go && all && r < d->size; r++)
            if (all[r].failure[0]) {
                snprintf(err, RT_ERR_LEN, "rank %d: %.230s", r, all[r].failure);
                go = 0;
            }
        for (int r = 1; go && all && r < d->size; r++)
            if (strcmp(all[r].image, all[0].image) != 0) {
                snprintf(err, RT_ERR_LEN, "rank %d: its options make another image than rank 0's",
                         r);
                go = 0;
            }
        if (!all) {
            snprintf(err, RT_ERR_LEN, "out of memory");
            go = 0;
        }
    }
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    d->comm_secs += rt_now() - t0;
    free(all);
    return go != 0;
}

/* ---- handing out tiles ---- */

/* This rank's tile source. Rank 0 hands tiles out from `next`, to its own
 * workers one at a time and to the other ranks in batches; on the other
 * ranks the workers take tiles from a queue that the thread that called
 * rt_dist_render() keeps filled by asking rank 0. */
typedef struct source {
    rt_dist         *d;
    uint32_t         ntiles, batch;
    _Atomic uint32_t next; /* rank 0: the first tile not handed out yet */
    pthread_mutex_t  lock; /* the others: guards queue, queued, finished */
    pthread_cond_t   ready;
    uint32_t        *queue; /* tiles to render, in order: 2 * batch of them */
    uint32_t         head, queued;
    bool             finished; /* rank 0 has no more */
} source;

/* Up to `want` tiles from the counter: [*first, *first + return). */
static uint32_t
take(source *s, uint32_t want, uint32_t *first)
{
    if (rt_render_cancelled())
        return 0;
    /* Relaxed: the counter only hands each tile to one taker; the pixels
     * travel in messages and through pthread_join(), which order them. */
    uint32_t t = atomic_fetch_add_explicit(&s->next, want, memory_order_relaxed);
    *first = t;
    return t < s->ntiles ? (s->ntiles - t < want ? s->ntiles - t : want) : 0;
}

static bool
root_next(void *ctx, uint32_t *tile)
{
    return take(ctx, 1, tile) == 1;
}

/* Answers every request waiting. `block` (gathering, after rank 0's own
 * render): wait for a message of any kind, and return the rank whose
 * results (not a request) came. Otherwise (between rank 0's tiles) look at
 * requests only, so that one rank's waiting results cannot hide the others'
 * requests, and return -1 when none is left. */
static int
root_serve(source *s, bool block)
{
    rt_dist *d = s->d;
    for (;;) {
        MPI_Status st;
        int        waiting = 1;
        double     t0 = rt_now();
        if (block)
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        else
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &waiting, &st);
        if (!waiting || st.MPI_TAG != TAG_ASK) {
            d->comm_secs += rt_now() - t0;
            return waiting ? st.MPI_SOURCE : -1;
        }
        uint32_t want, give[2];
        MPI_Recv(&want, 1, MPI_UINT32_T, st.MPI_SOURCE, TAG_ASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        give[1] = take(s, want ? want : 1, &give[0]);
        MPI_Send(give, 2, MPI_UINT32_T, st.MPI_SOURCE, TAG_GIVE, MPI_COMM_WORLD);
        d->bytes_sent += sizeof give;
        d->comm_secs += rt_now() - t0;
    }
}

static void
root_poll(void *ctx)
{
    (void)root_serve(ctx, false);
}

static bool
rank_next(void *ctx, uint32_t *tile)
{
    source *s = ctx;
    pthread_mutex_lock(&s->lock);
    while (s->queued == 0 && !s->finished && !rt_render_cancelled())
        pthread_cond_wait(&s->ready, &s->lock);
    bool got = s->queued > 0 && !rt_render_cancelled();
    if (got) {
        *tile = s->queue[s->head];
        s->head = (s->head + 1) % (2 * s->batch);
        s->queued--;
    }
    pthread_mutex_unlock(&s->lock);
    return got;
}

/* Asks rank 0 for a batch once the queue holds less than one, so the next
 * batch is there before the workers run out. */
static void
rank_poll(void *ctx)
{
    source *s = ctx;
    pthread_mutex_lock(&s->lock);
    bool ask = !s->finished && s->queued < s->batch;
    if (rt_render_cancelled() && !s->finished) {
        s->finished = true; /* no more: the workers leave after their tiles */
        pthread_cond_broadcast(&s->ready);
    }
    pthread_mutex_unlock(&s->lock);
    if (!ask || rt_render_cancelled())
        return;
    uint32_t give[2];
    double   t0 = rt_now();
    MPI_Send(&s->batch, 1, MPI_UINT32_T, 0, TAG_ASK, MPI_COMM_WORLD);
    MPI_Recv(give, 2, MPI_UINT32_T, 0, TAG_GIVE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    s->d->bytes_sent += sizeof s->batch;
    s->d->comm_secs += rt_now() - t0;
    pthread_mutex_lock(&s->lock);
    for (uint32_t i = 0; i < give[1]; i++) /* room: queued < batch, give[1] <= batch */
        s->queue[(s->head + s->queued++) % (2 * s->batch)] = give[0] + i;
    s->finished = give[1] == 0;
    pthread_cond_broadcast(&s->ready);
    pthread_mutex_unlock(&s->lock);
}

/* ---- gathering the image ---- */

/* This rank's figures, as rank 0 lists them. */
static void
rank_stats_fill(const rt_dist *d, const rt_render_stats *st, tex_system *ts, ustr_table *strings,
                rt_rank_stats *out)
{
    *out = (rt_rank_stats){.load_secs = st->load_secs,
                           .bvh_secs = st->bvh_secs,
                           .render_secs = st->render_secs,
                           .comm_secs = d->comm_secs,
                           .bytes_sent = d->bytes_sent,
                           .threads = st->threads,
                           .work = st->total};
    tex_system_stats(ts, &out->tex);
    ustr_table_stats(strings, &out->ustr);
}

/* Tile t's corner and size (edge tiles are clipped). */
static void
tile_rect(const rt_options *o, uint32_t t, uint32_t *x0, uint32_t *y0, uint32_t *w, uint32_t *h)
{
    uint32_t tx = rt_options_tiles_x(o);
    *x0 = (t % tx) * o->tile, *y0 = (t / tx) * o->tile;
    *w = o->width - *x0 < o->tile ? o->width - *x0 : o->tile;
    *h = o->height - *y0 < o->tile ? o->height - *y0 : o->tile;
}

static size_t
tile_floats(const rt_options *o, uint32_t t)
{
    uint32_t x0, y0, w, h;
    tile_rect(o, t, &x0, &y0, &w, &h);
    return 4 * (size_t)w * h;
}

/* Tile t's pixels, row by row: copied out of (pack) or into (!pack) buf. */
static size_t
tile_copy(const rt_options *o, float *rgba, uint32_t t, float *buf, bool pack)
{
    uint32_t x0, y0, w, h;
    tile_rect(o, t, &x0, &y0, &w, &h);
    for (uint32_t y = 0; y < h; y++, buf += 4 * w) {
        float *row = rgba + 4 * ((size_t)(y0 + y) * o->width + x0);
        memcpy(pack ? buf : row, pack ? row : buf, 4 * sizeof(float) * w);
    }
    return 4 * (size_t)w * h;
}

/* A rank other than 0: its figures, its map and its pixels to rank 0.
 * Out of memory here ends the job: rank 0 could not finish without them. */
static void
rank_send(rt_dist *d, const rt_options *o, const rt_image *img, const rt_rank_stats *rs,
          const char *failure)
{
    uint32_t ntiles = rt_options_tiles(o), have = 0;
    for (uint32_t t = 0; img->done && t < ntiles; t++)
        have += img->done[t] != 0;
    uint8_t *map = calloc(ntiles, 1);
    float   *px = malloc(((size_t)have * o->tile * o->tile * 4 + 1) * sizeof(float));
    if (!map || !px) {
        fprintf(stderr, "render: rank %d: out of memory for the tiles to send\n", d->rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t at = 0;
    for (uint32_t t = 0; img->done && t < ntiles; t++)
        if ((map[t] = img->done[t] != 0))
            at += tile_copy(o, img->rgba, t, px + at, true);
    char line[RT_ERR_LEN];
    snprintf(line, sizeof line, "%s", failure ? failure : "");
    double t0 = rt_now();
    MPI_Send(rs, sizeof *rs, MPI_BYTE, 0, TAG_STATS, MPI_COMM_WORLD);
    MPI_Send(line, sizeof line, MPI_CHAR, 0, TAG_STATS, MPI_COMM_WORLD);
    MPI_Send(map, (int)ntiles, MPI_BYTE, 0, TAG_MAP, MPI_COMM_WORLD);
    MPI_Send(px, (int)at, MPI_FLOAT, 0, TAG_PIXELS, MPI_COMM_WORLD);
    d->comm_secs += rt_now() - t0;
    d->bytes_sent += sizeof *rs + sizeof line + ntiles + at * sizeof(float);
    free(px);
    free(map);
}

/* Rank 0: rank r's figures, map and pixels, into stats->ranks[r] and img
 * (when rank 0 has an image to put them in). False (with err) when r
 * failed, sent a tile some rank sent before, or sent pixels its map does
 * not account for. */
static bool
root_receive(rt_dist *d, const rt_options *o, int r, rt_image *img, rt_render_stats *stats,
             char err[RT_ERR_LEN])
{
    uint32_t ntiles = rt_options_tiles(o);
    char     line[RT_ERR_LEN];
    uint8_t *map = malloc(ntiles);
    if (!map) {
        fprintf(stderr, "render: rank 0: out of memory for rank %d's tiles\n", r);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double t0 = rt_now();
    MPI_Recv(&stats->ranks[r], sizeof stats->ranks[r], MPI_BYTE, r, TAG_STATS, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Recv(line, sizeof line, MPI_CHAR, r, TAG_STATS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(map, (int)ntiles, MPI_BYTE, r, TAG_MAP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Status st;
    int        count;
    MPI_Probe(r, TAG_PIXELS, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_FLOAT, &count);
    float *px = malloc(((size_t)count + 1) * sizeof(float));
    if (!px) {
        fprintf(stderr, "render: rank 0: out of memory for rank %d's tiles\n", r);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Recv(px, count, MPI_FLOAT, r, TAG_PIXELS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    d->comm_secs += rt_now() - t0;

    line[sizeof line - 1] = '\0';
    /* What it sent last, counted here: its figures were made before. */
    stats->ranks[r].bytes_sent +=
        sizeof stats->ranks[r] + sizeof line + ntiles + (uint64_t)count * sizeof(float);
    size_t need = 0;
    bool   ok = !line[0], twice = false;
    for (uint32_t t = 0; t < ntiles; t++)
        if (map[t]) {
            need += tile_floats(o, t);
            twice |= img->done && img->done[t];
        }
    if (!ok)
        snprintf(err, RT_ERR_LEN, "rank %d: %.230s", r, line);
    else if (twice || need != (size_t)count)
        snprintf(err, RT_ERR_LEN, "rank %d: %s", r,
                 twice ? "sent a tile another rank rendered" : "sent pixels its tiles do not hold");
    ok = ok && !twice && need == (size_t)count;
    size_t at = 0;
    for (uint32_t t = 0; ok && img->rgba && t < ntiles; t++)
        if (map[t]) {
            at += tile_copy(o, img->rgba, t, px + at, false);
            img->done[t] = 1;
        }
    free(px);
    free(map);
    return ok;
}

/* Rank 0, its own tiles rendered (r): answers the last requests, takes
 * every rank's results into img and stats, and says whether the image is
 * whole (its map freed, as rt_render() leaves a whole image's), partial
 * after an interruption (map kept), or short of tiles (an error). */
static rt_result
root_gather(rt_dist *d, const rt_options *o, source *s, rt_image *img, rt_render_stats *stats,
            rt_result r, char err[RT_ERR_LEN])
{
    char why[RT_ERR_LEN] = "";
    for (int pending = d->size - 1; pending > 0; pending--) {
        int  from = root_serve(s, true);
        char e[RT_ERR_LEN];
        if (!root_receive(d, o, from, img, stats, e) && !why[0])
            snprintf(why, sizeof why, "%s", e);
    }
    stats->ranks[0].comm_secs = d->comm_secs;
    stats->ranks[0].bytes_sent = d->bytes_sent;
    for (unsigned k = 1; k < stats->nranks; k++)
        rt_thread_stats_add(&stats->total, &stats->ranks[k].work);
    if (r != RT_OK)
        return r;
    if (why[0]) {
        snprintf(err, RT_ERR_LEN, "%s", why);
        return RT_ERR_INVALID;
    }
    uint32_t missing = 0;
    for (uint32_t t = 0; t < s->ntiles; t++)
        missing += !img->done[t];
    if (missing == 0) {
        free(img->done);
        img->done = NULL;
    } else if (!rt_render_cancelled()) {
        snprintf(err, RT_ERR_LEN, "%u tiles never came back (a rank stopped early)", missing);
        return RT_ERR_INVALID;
    }
    return RT_OK;
}

rt_result
rt_dist_render(rt_dist *d, const rt_options *o, const rt_scene *scene, tex_system *ts,
               ustr_table *strings, rt_image *img, rt_render_stats *stats, char err[RT_ERR_LEN])
{
    source s = {.d = d,
                .ntiles = rt_options_tiles(o),
                .batch = o->threads,
                .queue = d->rank ? malloc(2 * (size_t)o->threads * sizeof(uint32_t)) : NULL};
    atomic_init(&s.next, 0);
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.ready, NULL);
    rt_tile_source src = {d->rank ? rank_next : root_next, d->rank ? rank_poll : root_poll, &s,
                          (unsigned)d->rank};
    rt_result      r = d->rank && !s.queue ? RT_ERR_NOMEM : RT_OK;
    double         t0 = rt_now();
    if (r == RT_OK)
        r = rt_render_from(o, scene, ts, strings, &src, img, stats, err);
    else
        snprintf(err, RT_ERR_LEN, "out of memory");

    rt_rank_stats mine;
    rank_stats_fill(d, stats, ts, strings, &mine);
    if (d->rank != 0) {
        /* Whatever happened, rank 0 waits for this: tiles, or the reason. */
        if (r != RT_OK) /* none of its tiles count: rank 0 reports the hole */
            rt_image_free(img);
        rank_send(d, o, img, &mine, r == RT_OK ? NULL : err);
    } else {
        stats->nranks = (unsigned)d->size;
        stats->ranks[0] = mine;
        r = root_gather(d, o, &s, img, stats, r, err);
        /* The job's render: from rank 0's first worker's start (every rank
         * builds its BVH and environment at once, before its workers) to
         * the last rank's pixels back on rank 0; its set-up left out, as
         * one process's render_secs leaves it out: rank counts compare. */
        stats->render_secs = rt_now() - (stats->started > 0 ? stats->started : t0);
    }
    pthread_cond_destroy(&s.ready);
    pthread_mutex_destroy(&s.lock);
    free(s.queue);
    return r;
}
