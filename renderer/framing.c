/* How a scene is shown when it does not say: the automatic view
 * (rt_scene.h, rt_scene_frame()): which geometry matters, and where to
 * look at it from; and the default light, for a scene whose own lights
 * cannot show it.
 *
 * What matters is the box between the 2nd and the 98th percentile of the
 * triangles' corners along each axis (of up to FRAME_SAMPLES triangles,
 * evenly spaced in the file's order): a far outlier, a skybox of a dozen
 * triangles or a ground plane of two drops out of it, while a deep pit or
 * a tall tower made of real geometry stays in. Then the box grows again
 * to take in every corner near it (within half its size on each side):
 * the trim also cut small parts of the subject itself (a helmet's plinth,
 * a few corners against thousands), which an image must not cut, while
 * a skybox or a stray vertex lies far off. A scene of fewer than 50
 * corners keeps its whole bounding box.
 *
 * An object is seen three-quarter, fitted to that box. A level (a box far
 * wider than tall) is seen from what the camera sees: a view is fitted to
 * the level's own vertices (its box's upper corners are mostly sky) and
 * tried for how much of the image it fills (view_coverage.h). */
#include "rt_scene.h"
#include "scene_internal.h"
#include "view_coverage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FRAME_SAMPLES = 1 << 16 };

#define PI           3.14159265358979323846 /* M_PI is XSI, not C11 or POSIX */
#define FRAME_TRIM   0.02                   /* cut from each end, per axis */
#define FRAME_NEAR   0.5                    /* near the box: within this of its size */
#define FRAME_ASPECT (4.0 / 3.0)            /* the image's width over height, assumed */
#define FRAME_FOV    (PI / 4)               /* the automatic camera's vertical field */
#define FRAME_TAN    0.41421356237309505    /* tan(FRAME_FOV / 2), sqrt(2) - 1 */
#define FRAME_AZIM   (PI / 4)               /* three-quarter: from the front, turned right */
#define FRAME_ELEV   (30.0 * PI / 180)      /* ... and raised above the horizon */
#define FRAME_FLAT   0.5                    /* a level: less tall than this of its width */
#define FRAME_FILL   0.4                    /* a level's view: geometry on this much of it */

/* The k-th smallest of v[0..n-1], reordering v: Wirth's selection, linear
 * on average. Coordinates are finite (the import checks them). */
static float
select_kth(float *v, long n, long k)
{
    long lo = 0, hi = n - 1;
    while (lo < hi) {
        float x = v[k];
        long  i = lo, j = hi;
        do {
            while (v[i] < x)
                i++;
            while (x < v[j])
                j--;
            if (i <= j) {
                float t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        } while (i <= j);
        if (j < k)
            lo = i;
        if (k < i)
            hi = j;
    }
    return v[k];
}

/* Grows lo..hi to every sampled corner within FRAME_NEAR of its size (the
 * largest side's, on a flat axis) of it. */
static void
take_in_near(const rt_scene *s, size_t step, float lo[3], float hi[3])
{
    float near_lo[3], near_hi[3], most = 0;
    for (int k = 0; k < 3; k++)
        most = fmaxf(most, hi[k] - lo[k]);
    for (int k = 0; k < 3; k++) {
        float pad = (float)FRAME_NEAR * (hi[k] > lo[k] ? hi[k] - lo[k] : most);
        near_lo[k] = lo[k] - pad, near_hi[k] = hi[k] + pad;
    }
    for (size_t t = 0; t < s->ntris; t += step)
        for (int c = 0; c < 3; c++) {
            const float *p = &s->positions[3 * (size_t)s->indices[3 * t + c]];
            if (rt__in_box(p, near_lo, near_hi))
                for (int k = 0; k < 3; k++)
                    lo[k] = fminf(lo[k], p[k]), hi[k] = fmaxf(hi[k], p[k]);
        }
}

void
rt_scene_frame_bounds(const rt_scene *s, float lo[3], float hi[3])
{
    memcpy(lo, s->bounds_min, sizeof s->bounds_min);
    memcpy(hi, s->bounds_max, sizeof s->bounds_max);
    size_t step = s->ntris > FRAME_SAMPLES ? (s->ntris + FRAME_SAMPLES - 1) / FRAME_SAMPLES : 1;
    size_t n = 3 * ((s->ntris + step - 1) / step);
    size_t trim = (size_t)(FRAME_TRIM * (double)n);
    float *v = trim > 0 ? malloc(n * sizeof *v) : NULL;
    if (!v)
        return; /* small (or no memory): the whole box */
    for (int k = 0; k < 3; k++) {
        size_t m = 0;
        for (size_t t = 0; t < s->ntris; t += step)
            for (int c = 0; c < 3; c++)
                v[m++] = s->positions[3 * (size_t)s->indices[3 * t + c] + k];
        lo[k] = select_kth(v, (long)m, (long)trim);
        hi[k] = select_kth(v, (long)m, (long)(m - 1 - trim));
    }
    free(v);
    take_in_near(s, step, lo, hi);
}

/* The world's up, the direction a front view looks from, and the right of
 * a front view, for each up axis: Y up (glTF's convention) faces +z, Z up
 * (Blender's, surveys') faces -y, X up faces +z. */
static void
axes(rt_up_axis up, double u[3], double front[3], double right[3])
{
    static const double table[3][3][3] = {
        [RT_UP_Y] = {{0, 1, 0}, {0, 0, 1}, {1, 0, 0}},
        [RT_UP_Z] = {{0, 0, 1}, {0, -1, 0}, {1, 0, 0}},
        [RT_UP_X] = {{1, 0, 0}, {0, 0, 1}, {0, -1, 0}},
    };
    int a = up == RT_UP_Z || up == RT_UP_X ? (int)up : RT_UP_Y;
    memcpy(u, table[a][0], sizeof table[a][0]);
    memcpy(front, table[a][1], sizeof table[a][1]);
    memcpy(right, table[a][2], sizeof table[a][2]);
}

/* A view being fitted: looking back along unit `from` at c, with `up` up
 * (orthonormal to it); f and r are its forward and right. */
typedef struct aim {
    double c[3], from[3], up[3], f[3], r[3];
} aim;

static aim
aim_at(const double c[3], const double from[3], const double up[3])
{
    aim a;
    for (int k = 0; k < 3; k++)
        a.c[k] = c[k], a.from[k] = from[k], a.up[k] = up[k], a.f[k] = -from[k];
    a.r[0] = a.f[1] * up[2] - a.f[2] * up[1];
    a.r[1] = a.f[2] * up[0] - a.f[0] * up[2];
    a.r[2] = a.f[0] * up[1] - a.f[1] * up[0];
    return a;
}

/* The point p relative to the aim's centre: right, up and forward. */
static void
aim_local(const aim *a, const float p[3], double *x, double *y, double *z)
{
    *x = *y = *z = 0;
    for (int k = 0; k < 3; k++) {
        double d = p[k] - a->c[k];
        *x += d * a->r[k], *y += d * a->up[k], *z += d * a->f[k];
    }
}

/* How far from the aim's centre, along `from`, the camera must be to see
 * p with 5% of the image to spare in an image of FRAME_ASPECT (render's
 * default 640x480: a wider image shows more around it, a narrower one may
 * cut its sides), and never nearer to it than `near`. */
static double
fit_point(const aim *a, const float p[3], double near)
{
    double x, y, z;
    aim_local(a, p, &x, &y, &z);
    /* Its depth from the camera is dist + z: it must exceed |x| / t and
     * |y| / t, and stay ahead of the camera. */
    return 1.05 * (fmax(fmax(fabs(x) / FRAME_ASPECT, fabs(y)) / FRAME_TAN, near) - z);
}

static double
diagonal(const float lo[3], const float hi[3])
{
    double size = 0;
    for (int k = 0; k < 3; k++)
        size += ((double)hi[k] - lo[k]) * ((double)hi[k] - lo[k]);
    return sqrt(size);
}

/* The distance from the aim's centre at which all 8 corners of the box
 * lo..hi are in view (fit_point()), never nearer than its near side. */
static double
fit_box(const aim *a, const float lo[3], const float hi[3])
{
    double d = 0, near = 0.05 * diagonal(lo, hi);
    for (int corner = 0; corner < 8; corner++) {
        float q[3];
        for (int k = 0; k < 3; k++)
            q[k] = corner >> k & 1 ? hi[k] : lo[k];
        d = fmax(d, fit_point(a, q, near));
    }
    return d > 0 ? d : 1.0;
}

/* The same for the scene's vertices in the box instead of its corners:
 * nearer, where the box has empty corners (a level's walls reach up at its
 * edges, not all over). */
static double
fit_vertices(const rt_scene *s, const aim *a, const float lo[3], const float hi[3])
{
    double d = 0, near = 0.05 * diagonal(lo, hi);
    for (uint32_t i = 0; i < s->nverts; i++) {
        const float *p = &s->positions[3 * (size_t)i];
        if (rt__in_box(p, lo, hi))
            d = fmax(d, fit_point(a, p, near));
    }
    return d > 0 ? d : fit_box(a, lo, hi);
}

/* fit_vertices() with the camera moved sideways so that the vertices'
 * image is centred (a level seen from above lies low in an image centred
 * on its box: its far side is smaller), then fitted again: the aim's
 * centre moves with the camera. The distance. */
static double
fit_level(const rt_scene *s, aim *a, const float lo[3], const float hi[3])
{
    double d = fit_vertices(s, a, lo, hi);
    double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
    for (uint32_t i = 0; i < s->nverts; i++) {
        const float *p = &s->positions[3 * (size_t)i];
        double       x, y, z;
        if (!rt__in_box(p, lo, hi))
            continue;
        aim_local(a, p, &x, &y, &z);
        x_lo = fmin(x_lo, x / (d + z)), x_hi = fmax(x_hi, x / (d + z));
        y_lo = fmin(y_lo, y / (d + z)), y_hi = fmax(y_hi, y / (d + z));
    }
    if (!(x_lo <= x_hi && y_lo <= y_hi))
        return d; /* no vertex in the box */
    for (int k = 0; k < 3; k++)
        a->c[k] += d * (0.5 * (x_lo + x_hi) * a->r[k] + 0.5 * (y_lo + y_hi) * a->up[k]);
    return fit_vertices(s, a, lo, hi);
}

/* The direction a camera of `view` looks back from (unit `from`) and its
 * up, orthonormal: the world's (u), less its part along the view (the
 * camera looks down on the scene). f and rt are a front view's direction
 * and right (axes()); elev is the automatic view's height above the
 * horizon, azim its turn from the front towards the right. */
static void
view_direction(rt_view view, double elev, double azim, const double u[3], const double f[3],
               const double rt[3], double from[3], double cam_up[3])
{
    double ca = cos(azim), sa = sin(azim), ce = cos(elev), se = sin(elev);
    for (int k = 0; k < 3; k++) {
        cam_up[k] = u[k];
        switch (view) {
        case RT_VIEW_FRONT:
            from[k] = f[k];
            break;
        case RT_VIEW_BACK:
            from[k] = -f[k];
            break;
        case RT_VIEW_RIGHT:
            from[k] = rt[k];
            break;
        case RT_VIEW_LEFT:
            from[k] = -rt[k];
            break;
        case RT_VIEW_TOP: /* the front at the bottom of the image */
            from[k] = u[k], cam_up[k] = -f[k];
            break;
        case RT_VIEW_BOTTOM:
            from[k] = -u[k], cam_up[k] = f[k];
            break;
        default: /* three-quarter */
            from[k] = ce * (ca * f[k] + sa * rt[k]) + se * u[k];
            break;
        }
    }
    double along = cam_up[0] * from[0] + cam_up[1] * from[1] + cam_up[2] * from[2], len = 0;
    for (int k = 0; k < 3; k++) {
        cam_up[k] -= along * from[k];
        len += cam_up[k] * cam_up[k];
    }
    for (int k = 0; k < 3; k++)
        cam_up[k] /= sqrt(len);
}

/* Whether the box lo..hi is a level's rather than an object's: less than
 * FRAME_FLAT of its width tall along up (axis `a`). */
static bool
level_like(const float lo[3], const float hi[3], int a)
{
    double wide = 0;
    for (int k = 0; k < 3; k++)
        if (k != a)
            wide = fmax(wide, (double)hi[k] - lo[k]);
    return (double)hi[a] - lo[a] < FRAME_FLAT * wide;
}

/* A level's automatic view, from what the camera sees: the first of these
 * views (elevation above the horizon, azimuth from the front towards the
 * right; in degrees) that puts geometry on FRAME_FILL of the image, else
 * the one that puts the most; each fitted to the level's vertices. A low
 * three-quarter view shows a level's depth; but from 30 degrees a wide
 * flat one is a thin band across a black image, and a square one seen
 * across its corner a diamond that fills half its frame. */
static const struct {
    double elev, azim;
} level_views[] = {{30, 45}, {45, 45}, {30, 0}, {45, 0}, {60, 45}, {60, 0}, {75, 0}};

static void
level_view(const rt_scene *s, const float lo[3], const float hi[3], const double c[3],
           const double u[3], const double f[3], const double rt[3], double *elev, double *azim)
{
    double most = -1;
    for (size_t i = 0; i < sizeof level_views / sizeof *level_views; i++) {
        double e = level_views[i].elev * PI / 180, a = level_views[i].azim * PI / 180;
        double from[3], up[3];
        view_direction(RT_VIEW_AUTO, e, a, u, f, rt, from, up);
        aim         at = aim_at(c, from, up);
        double      d = fit_level(s, &at, lo, hi);
        rt__pinhole cam = {.tan_half = FRAME_TAN, .aspect = FRAME_ASPECT};
        for (int k = 0; k < 3; k++)
            cam.position[k] = at.c[k] + d * from[k], cam.forward[k] = -from[k], cam.up[k] = up[k];
        double got = rt__view_coverage(s, lo, hi, &cam);
        if (got > most)
            most = got, *elev = e, *azim = a;
        if (got >= FRAME_FILL)
            return;
    }
}

void
rt_scene_frame(rt_scene *s, rt_up_axis up, rt_view view)
{
    if (s->camera.from_file && view == RT_VIEW_AUTO)
        return; /* the scene's own camera wins */
    const float *lo = s->focus_min, *hi = s->focus_max;
    double       c[3], u[3], f[3], rt[3], from[3], cam_up[3], elev = FRAME_ELEV, azim = FRAME_AZIM;
    for (int k = 0; k < 3; k++)
        c[k] = 0.5 * ((double)lo[k] + hi[k]);
    axes(up, u, f, rt);
    int  a = u[0] != 0 ? 0 : u[1] != 0 ? 1 : 2;
    bool level = view == RT_VIEW_AUTO && level_like(lo, hi, a);
    if (level)
        level_view(s, lo, hi, c, u, f, rt, &elev, &azim);
    view_direction(view, elev, azim, u, f, rt, from, cam_up);
    aim    at = aim_at(c, from, cam_up);
    double d = level ? fit_level(s, &at, lo, hi) : fit_box(&at, lo, hi);
    for (int k = 0; k < 3; k++) {
        s->camera.position[k] = (float)(at.c[k] + d * from[k]);
        s->camera.forward[k] = (float)-from[k];
        s->camera.up[k] = (float)cam_up[k];
    }
    s->camera.yfov = (float)FRAME_FOV;
    s->camera.from_file = false;
    rt__scene_aim_default_light(s);
}

/* Luminance of a linear RGB colour (Rec. 709). */
static double
luminance(const float c[3])
{
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}

double
rt_scene_light_estimate(const rt_scene *s)
{
    const float *lo = s->focus_min, *hi = s->focus_max;
    double       c[3], r2 = 0;
    for (int k = 0; k < 3; k++) {
        c[k] = 0.5 * ((double)lo[k] + hi[k]);
        r2 += 0.25 * ((double)hi[k] - lo[k]) * ((double)hi[k] - lo[k]);
    }
    r2 = r2 > 0 ? r2 : 1;
    double e = 0, flux = 0;
    for (uint32_t i = 0; i < s->nlights; i++) {
        const rt_light *l = &s->lights[i];
        if (s->default_light && i + 1 == s->nlights)
            continue; /* not the scene's own */
        if (l->kind == RT_LIGHT_DIRECTIONAL) {
            e += luminance(l->color);
            continue;
        }
        double d2 = 0;
        for (int k = 0; k < 3; k++)
            d2 += (l->position[k] - c[k]) * (l->position[k] - c[k]);
        e += luminance(l->color) / fmax(d2, 0.25 * r2);
    }
    for (uint32_t t = 0; t < s->ntris; t++) {
        double le = luminance(s->materials[s->material[t]].emissive);
        if (!(le > 0))
            continue;
        const float *p[3];
        for (int k = 0; k < 3; k++)
            p[k] = &s->positions[3 * (size_t)s->indices[3 * t + k]];
        double a[3], b[3], x[3];
        for (int k = 0; k < 3; k++)
            a[k] = (double)p[1][k] - p[0][k], b[k] = (double)p[2][k] - p[0][k];
        x[0] = a[1] * b[2] - a[2] * b[1];
        x[1] = a[2] * b[0] - a[0] * b[2];
        x[2] = a[0] * b[1] - a[1] * b[0];
        flux += PI * le * 0.5 * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    }
    return e + flux / (4 * PI * r2);
}

rt_result
rt__scene_default_light(rt_scene *s)
{
    double own = rt_scene_light_estimate(s);
    if (own >= RT_WEAK_LIGHT * RT_DEFAULT_LIGHT)
        return RT_OK;
    rt_light *grown = realloc(s->lights, (s->nlights + 1) * sizeof *s->lights);
    if (!grown)
        return RT_ERR_NOMEM;
    s->lights = grown;
    rt_light *l = &s->lights[s->nlights++];
    *l = (rt_light){.kind = RT_LIGHT_DIRECTIONAL};
    l->color[0] = l->color[1] = l->color[2] = RT_DEFAULT_LIGHT;
    s->default_light = true;
    rt__scene_aim_default_light(s);
    if (s->nlights > 1 || own > 0) { /* lights there were: say why one more */
        char why[200];
        snprintf(why, sizeof why,
                 "the scene's lights are too weak to show it (about %.2g of the default "
                 "light's irradiance): the default light is added",
                 own / RT_DEFAULT_LIGHT);
        rt__scene_warn(s, why);
    }
    return RT_OK;
}

void
rt__scene_aim_default_light(rt_scene *s)
{
    if (!s->default_light || s->nlights < 1)
        return;
    /* Forward, down and to the right of the camera: from behind the
     * viewer's right shoulder. */
    const float *f = s->camera.forward, *u = s->camera.up;
    double       r[3] = {(double)f[1] * u[2] - (double)f[2] * u[1],
                         (double)f[2] * u[0] - (double)f[0] * u[2],
                         (double)f[0] * u[1] - (double)f[1] * u[0]};
    double       d[3], len = 0;
    for (int k = 0; k < 3; k++) {
        d[k] = 0.6 * f[k] - u[k] + 0.5 * r[k];
        len += d[k] * d[k];
    }
    len = sqrt(len);
    for (int k = 0; k < 3; k++)
        s->lights[s->nlights - 1].direction[k] = (float)(d[k] / len);
}
