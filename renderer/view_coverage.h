/* How much of an image a camera fills with the geometry that matters: the
 * measure by which the automatic camera (framing.c) picks a view of a
 * level from what the camera would see, not from a bounding box alone. */
#ifndef RT_VIEW_COVERAGE_H
#define RT_VIEW_COVERAGE_H

#include "rt_scene.h"

#include <stdbool.h>

/* A pinhole camera: at `position`, looking along unit `forward` with unit
 * `up` (orthogonal to it) at the image's top; tan_half is the tangent of
 * half the vertical field, aspect the image's width over its height. */
typedef struct rt__pinhole {
    double position[3], forward[3], up[3];
    double tan_half, aspect;
} rt__pinhole;

/* Whether p lies in the box lo..hi, its faces included. */
static inline bool
rt__in_box(const float p[3], const float lo[3], const float hi[3])
{
    return p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1] && p[2] >= lo[2] &&
           p[2] <= hi[2];
}

/* The share (0 to 1) of a 64x48 grid over the image that the triangles of
 * s lying wholly in the box lo..hi cover, seen from `cam` (occlusion does
 * not matter: a cell is covered when any of them falls on it). Triangles
 * with a corner outside the box (a skybox, a far outlier) and any with a
 * corner behind the camera are left out. Of a scene of more than 2^18
 * triangles, 2^18 evenly spaced ones: each still covers its cells, and a
 * mesh that dense has tens in each of the 3072. */
double rt__view_coverage(const rt_scene *s, const float lo[3], const float hi[3],
                         const rt__pinhole *cam);

#endif
