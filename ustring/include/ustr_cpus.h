/* The CPUs this process may run on: the one count every thread default,
 * decode cap and "more threads than CPUs" mark in the project uses.
 *
 * Not the machine's online CPUs (sysconf(_SC_NPROCESSORS_ONLN)) but the
 * calling thread's affinity, the set `taskset`, `numactl` or a container's
 * cpuset leaves it: a render pinned to 4 of a machine's 64 CPUs runs 4
 * threads at once, and a timing study sized and marked for 64 would time
 * 16 threads on 4 CPUs and call it scaling. `nproc` counts the same way. */
#ifndef USTR_CPUS_H
#define USTR_CPUS_H

/* How many CPUs the calling thread may run on; at least 1. The set is
 * sized for every CPU the machine has (a fixed cpu_set_t holds 1,024; the
 * call fails on a kernel that counts more); where the affinity cannot be
 * read, the machine's online CPUs. A system call each time: callers read
 * it once, at start-up. Thread-safe. */
unsigned ustr_cpus_usable(void);

/* The numbers of those CPUs, ascending, the first `max` of them into `ids`;
 * returns how many it wrote, 0 where the affinity cannot be read. */
unsigned ustr_cpus_usable_ids(unsigned *ids, unsigned max);

#endif
