/* The import's own large stack (import_stack.h). */
#define _GNU_SOURCE /* program_invocation_short_name, MAP_STACK, MADV_NOHUGEPAGE */
#include "import_stack.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

/* RT_SANITIZED: set by CMake in sanitizer builds, which catch and report
 * overflows themselves. */
#ifndef RT_SANITIZED
#define RT_SANITIZED 0
#endif

/* The line an overflow prints, set before each import. */
static char   overflow_line[512];
static size_t overflow_len;

typedef struct big_stack_job {
    void (*fn)(void *);
    void *arg;
} big_stack_job;

#if RT_SANITIZED
/* Under the sanitizers, the import gets a thread of its own with the large
 * stack: they follow threads, not a switch of stacks on one. */
static void *
big_stack_main(void *p)
{
    const big_stack_job *job = p;
    job->fn(job->arg);
    return NULL;
}

static bool
run_big(big_stack_job *job, size_t mb)
{
    pthread_attr_t attr;
    pthread_t      t;
    int            e = pthread_attr_init(&attr);
    if (!e)
        e = pthread_attr_setstacksize(&attr, mb << 20);
    if (!e)
        e = pthread_create(&t, &attr, big_stack_main, job);
    pthread_attr_destroy(&attr);
    if (e) {
        errno = e;
        return false;
    }
    pthread_join(t, NULL);
    return true;
}
#else
/* Otherwise the import runs on the calling thread, switched onto a stack
 * of its own (swapcontext(3)). A thread of its own, as before, cost a small
 * render's start-up its creation, its join and a malloc arena of its own
 * whose first pages were all new (docs/render-performance.md, "Start-up").
 * The stack is address space, committed only as far as it is used; below it, a
 * guard zone wide enough that no one frame steps over it. */

/* What the SIGSEGV handler knows while an import runs: the guard zone
 * below the import's stack (set before the handler is installed, so an
 * overflow there, in program order after, sees it). One import at a time.
 * Volatile: read in a signal handler. */
static volatile uintptr_t zone_lo, zone_hi;
static struct sigaction   segv_before;
static stack_t            altstack_before;

static void
on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)ctx;
    uintptr_t a = (uintptr_t)si->si_addr;
    if (a >= zone_lo && a < zone_hi) {
        ssize_t n = write(STDERR_FILENO, overflow_line, overflow_len);
        (void)n; /* nothing to do if stderr is gone */
        _exit(1);
    }
    /* Not an overflow of ours: put the handler before back and return; the
     * faulting instruction runs again and faults under it. */
    sigaction(SIGSEGV, &segv_before, NULL);
}

/* Watches [lo, hi), the guard below the import's stack, from this thread
 * on: the handler runs on a stack of its own (not the one that overflowed),
 * this thread's alternate stack until unwatch(). False: not watched (the
 * import still runs; an overflow is then a plain SIGSEGV). */
static bool
watch(uintptr_t lo, uintptr_t hi)
{
    static char alt[1 << 16];
    stack_t     ss = {.ss_sp = alt, .ss_size = sizeof alt};
    if (sigaltstack(&ss, &altstack_before) != 0)
        return false;
    zone_lo = lo, zone_hi = hi;
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &segv_before);
    return true;
}

static void
unwatch(void)
{
    sigaction(SIGSEGV, &segv_before, NULL);
    zone_lo = zone_hi = 0;
    sigaltstack(&altstack_before, NULL);
}

static ucontext_t           caller, import;
static const big_stack_job *running;

static void
import_entry(void)
{
    running->fn(running->arg); /* then back to `caller`: import.uc_link */
}

static bool
run_big(big_stack_job *job, size_t mb)
{
    size_t guard = (size_t)1 << 20, size = mb << 20;
    char  *base = mmap(NULL, guard + size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED)
        return false;
    /* Small pages: an import touches a few of them, and a huge one would
     * be 2 MiB to clear at the first call. */
    madvise(base, guard + size, MADV_NOHUGEPAGE);
    if (mprotect(base, guard, PROT_NONE) != 0 || getcontext(&import) != 0) {
        int e = errno;
        munmap(base, guard + size);
        errno = e;
        return false;
    }
    import.uc_stack = (stack_t){.ss_sp = base + guard, .ss_size = size};
    import.uc_link = &caller;
    running = job;
    makecontext(&import, import_entry, 0);
    bool watched = watch((uintptr_t)base, (uintptr_t)base + guard);
    swapcontext(&caller, &import);
    if (watched)
        unwatch();
    munmap(base, guard + size);
    return true;
}
#endif

/* RT_IMPORT_STACK_MB, or the environment's RT_IMPORT_STACK_MB (1..4096). */
static size_t
stack_mb(void)
{
    const char   *e = getenv("RT_IMPORT_STACK_MB");
    char         *end;
    unsigned long v = e ? strtoul(e, &end, 10) : 0;
    return e && *e && !*end && v >= 1 && v <= 4096 ? (size_t)v : RT_IMPORT_STACK_MB;
}

bool
rt__import_on_big_stack(void (*fn)(void *), void *arg, const char *name)
{
    size_t mb = stack_mb();
    overflow_len = (size_t)snprintf(overflow_line, sizeof overflow_line,
                                    "%s: %.300s: too deeply nested: the import overflowed its "
                                    "%zu MiB stack\n",
                                    program_invocation_short_name, name, mb);
    if (overflow_len >= sizeof overflow_line)
        overflow_len = sizeof overflow_line - 1;
    big_stack_job job = {fn, arg};
    return run_big(&job, mb);
}
