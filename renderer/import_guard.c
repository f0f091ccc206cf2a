/* What guards an import (import_guard.h): its memory budget, the JSON
 * nesting count, its own large stack. */
#define _GNU_SOURCE /* program_invocation_short_name, MAP_STACK, MADV_NOHUGEPAGE */
#include "import_guard.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

/* ---- the memory budget ---- */

/* The import's count. Thread-local: only the thread running it counts, and
 * no other thread's malloc pays more than the test of `on`. */
static _Thread_local struct {
    bool     on, over;
    uint64_t used, budget;
    uint64_t held, asked; /* when refused: what was in use, and the request */
} budget;

void
rt__import_budget_start(void)
{
    budget.on = true, budget.over = false;
    budget.used = budget.held = budget.asked = 0;
    budget.budget = (uint64_t)RT_IMPORT_BUDGET_BASE_MB << 20;
}

void
rt__import_budget_file(int fd)
{
    struct stat st;
    if (budget.on && fstat(fd, &st) == 0)
        budget.budget += (uint64_t)st.st_blocks * 512 * RT_IMPORT_BUDGET_PER_BYTE;
}

bool
rt__import_budget_stop(rt__budget_report *out)
{
    budget.on = false;
    *out = (rt__budget_report){.held = budget.held, .asked = budget.asked, .budget = budget.budget};
    return budget.over;
}

#if !RT_SANITIZED
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void  __libc_free(void *p);

/* Whether n more bytes, `old` ones being given back, fit the budget; when
 * not, the request is noted. Blocks are counted at their usable size,
 * taken after the allocation and given back at free. */
static bool
budget_fits(uint64_t n, uint64_t old)
{
    uint64_t held = budget.used - (old < budget.used ? old : budget.used);
    if (held + n <= budget.budget)
        return true;
    budget.over = true, budget.held = held, budget.asked = n;
    errno = ENOMEM;
    return false;
}

static void
budget_count(void *p, uint64_t old)
{
    budget.used -= old < budget.used ? old : budget.used; /* blocks from before the start */
    if (p)
        budget.used += malloc_usable_size(p);
}

void *
malloc(size_t n)
{
    if (!budget.on)
        return __libc_malloc(n);
    void *p = budget_fits(n, 0) ? __libc_malloc(n) : NULL;
    budget_count(p, 0);
    return p;
}

void *
calloc(size_t n, size_t size)
{
    if (!budget.on)
        return __libc_calloc(n, size);
    bool wraps = size && n > SIZE_MAX / size; /* glibc's calloc refuses it too */
    if (wraps)
        errno = ENOMEM;
    void *p = !wraps && budget_fits((uint64_t)n * size, 0) ? __libc_calloc(n, size) : NULL;
    budget_count(p, 0);
    return p;
}

void *
realloc(void *p, size_t n)
{
    if (!budget.on)
        return __libc_realloc(p, n);
    uint64_t old = p ? malloc_usable_size(p) : 0;
    if (!budget_fits(n, old))
        return NULL; /* p stays as it was */
    void *q = __libc_realloc(p, n);
    if (q || n == 0)
        budget_count(q, old);
    return q;
}

void
free(void *p)
{
    if (budget.on && p)
        budget_count(NULL, malloc_usable_size(p));
    __libc_free(p);
}
#endif

/* ---- JSON nesting ---- */

/* One pass over a glTF's JSON, counting its nesting: brackets inside
 * strings do not count. What else render reads of the JSON, it reads with
 * cJSON (import_check.c), which parses no deeper than this allows. */
typedef struct json_scan {
    unsigned depth;
    bool     in_string, escaped;
} json_scan;

/* Whether byte c takes the JSON deeper than RT_MAX_JSON_DEPTH. */
static bool
json_byte(json_scan *j, char c)
{
    if (j->in_string) {
        if (j->escaped)
            j->escaped = false;
        else if (c == '\\')
            j->escaped = true;
        else if (c == '"')
            j->in_string = false;
        return false;
    }
    if (c == '"')
        j->in_string = true;
    else if (c == '[' || c == '{')
        return ++j->depth > RT_MAX_JSON_DEPTH;
    else if ((c == ']' || c == '}') && j->depth > 0)
        j->depth--;
    return false;
}

rt_result
rt__json_depth_check(const char *json, size_t len, uint64_t at0, char err[RT_ERR_LEN])
{
    json_scan j = {.depth = 0};
    for (size_t i = 0; i < len; i++)
        if (json_byte(&j, json[i])) {
            snprintf(err, RT_ERR_LEN,
                     "too deeply nested: JSON deeper than %d levels (at byte %llu)",
                     RT_MAX_JSON_DEPTH, (unsigned long long)(at0 + i));
            return RT_ERR_FORMAT;
        }
    return RT_OK;
}

/* ---- the import's own stack ---- */

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
 * whose first pages were all new (docs/render-performance.md, "Start-up");
 * and the import's memory budget is counted per thread either way. The
 * stack is address space, committed only as far as it is used; below it, a
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
