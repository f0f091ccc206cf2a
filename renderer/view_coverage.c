/* The share of an image the geometry that matters covers, by rasterizing
 * its triangles onto a coarse grid (view_coverage.h). */
#include "view_coverage.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

enum { GRID_W = 64, GRID_H = 48, MAX_TRIANGLES = 1 << 18 };

/* A corner in grid cells (x right, y down), or false when it lies behind
 * the camera (or so near its plane that it would project anywhere); r is
 * the camera's right. */
static bool
project(const rt__pinhole *cam, const double r[3], const float p[3], double near, double cell[2])
{
    double        q[3], x = 0, y = 0, z = 0;
    const double *f = cam->forward, *u = cam->up;
    for (int k = 0; k < 3; k++) {
        q[k] = (double)p[k] - cam->position[k];
        x += q[k] * r[k], y += q[k] * u[k], z += q[k] * f[k];
    }
    if (!(z > near))
        return false;
    cell[0] = 0.5 * (1 + x / (z * cam->tan_half * cam->aspect)) * GRID_W;
    cell[1] = 0.5 * (1 - y / (z * cam->tan_half)) * GRID_H;
    return true;
}

/* Which side of the edge a..b the point (x, y) is on, times twice the
 * area of the triangle they make. */
static double
edge(const double a[2], const double b[2], double x, double y)
{
    return (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
}

/* Marks the cells whose centres the triangle v covers, and the cell of its
 * first corner: a triangle smaller than a cell still covers that one. */
static void
rasterize(bool grid[GRID_H][GRID_W], const double v[3][2])
{
    double lo[2], hi[2];
    for (int k = 0; k < 2; k++) {
        lo[k] = fmin(v[0][k], fmin(v[1][k], v[2][k]));
        hi[k] = fmax(v[0][k], fmax(v[1][k], v[2][k]));
    }
    if (v[0][0] >= 0 && v[0][0] < GRID_W && v[0][1] >= 0 && v[0][1] < GRID_H)
        grid[(int)v[0][1]][(int)v[0][0]] = true;
    int    x0 = (int)fmax(0, floor(lo[0])), x1 = (int)fmin(GRID_W - 1, ceil(hi[0]));
    int    y0 = (int)fmax(0, floor(lo[1])), y1 = (int)fmin(GRID_H - 1, ceil(hi[1]));
    double area = edge(v[0], v[1], v[2][0], v[2][1]);
    if (area == 0)
        return;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            double cx = x + 0.5, cy = y + 0.5;
            double a = edge(v[1], v[2], cx, cy) * area, b = edge(v[2], v[0], cx, cy) * area,
                   c = edge(v[0], v[1], cx, cy) * area;
            if (a >= 0 && b >= 0 && c >= 0)
                grid[y][x] = true;
        }
}

double
rt__view_coverage(const rt_scene *s, const float lo[3], const float hi[3], const rt__pinhole *cam)
{
    static_assert(GRID_W * 3 == GRID_H * 4, "the grid has the automatic camera's aspect");
    bool          grid[GRID_H][GRID_W];
    double        size = 0, r[3];
    const double *f = cam->forward, *u = cam->up;
    r[0] = f[1] * u[2] - f[2] * u[1]; /* the camera's right, once */
    r[1] = f[2] * u[0] - f[0] * u[2];
    r[2] = f[0] * u[1] - f[1] * u[0];
    memset(grid, 0, sizeof grid);
    for (int k = 0; k < 3; k++)
        size = fmax(size, (double)hi[k] - lo[k]);
    size_t step = s->ntris > MAX_TRIANGLES ? (s->ntris + MAX_TRIANGLES - 1) / MAX_TRIANGLES : 1;
    for (size_t t = 0; t < s->ntris; t += step) {
        double v[3][2];
        bool   in = true;
        for (int c = 0; c < 3 && in; c++) {
            const float *p = &s->positions[3 * (size_t)s->indices[3 * t + c]];
            in = rt__in_box(p, lo, hi) && project(cam, r, p, 1e-6 * size, v[c]);
        }
        if (in)
            rasterize(grid, (const double(*)[2])v);
    }
    int covered = 0;
    for (int y = 0; y < GRID_H; y++)
        for (int x = 0; x < GRID_W; x++)
            covered += grid[y][x];
    return (double)covered / (GRID_W * GRID_H);
}
