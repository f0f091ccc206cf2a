/* The counts every render worker keeps, in one list: each line makes a
 * field of the worker's, a rank's and a study run's statistics, the sums
 * over threads and ranks, a key of --stats-json (and of each rank's entry
 * in it), a figure of the --stats report and a column of the study's CSV
 * and JSON. Adding a count is one line here plus the code that counts it
 * (docs/design.md, "One list per fact").
 *
 * RT_WORK_COUNTS(X) calls X(name, label) for each: `name` is the field and
 * the JSON key, `label` how the report names it. Each is a uint64_t, a sum
 * over the workers of a process (and over its ranks, under MPI). */
#ifndef RT_COUNTERS_H
#define RT_COUNTERS_H

#define RT_WORK_COUNTS(X)                                                                          \
    X(rays, "rays")                                                                                \
    X(shading_points, "shading points")                                                            \
    X(lookups, "texture lookups")                                                                  \
    X(interns, "interns")                                                                          \
    X(bypasses, "bypassed lookups")                                                                \
    X(early_outs, "early-outs")                                                                    \
    X(lookup_errors, "lookup errors")                                                              \
    X(bad_samples, "bad samples") /* samples that were not finite: left out (render warns) */

/* The fields, inside a struct: RT_WORK_COUNTS(RT_WORK_COUNT_FIELD) */
#define RT_WORK_COUNT_FIELD(name, label) uint64_t name;

/* How many there are. */
#define RT_WORK_COUNT_ONE_(name, label) +1
#define RT_WORK_NCOUNTS                 (0 RT_WORK_COUNTS(RT_WORK_COUNT_ONE_))

#endif
