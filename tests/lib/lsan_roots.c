/*
 * lsan_roots.c — linked into the sanitizer build's drun-policy (SAN=1;
 * Makefile, SAN_OBJ), the program the SAN suites start most. It makes
 * LeakSanitizer's exit-time check cheap without changing its verdict.
 *
 * Only there: with clang 14 each root region costs LeakSanitizer a read of
 * /proc/self/maps, and a program that loads libcurl's 40 libraries needs a
 * region or more per library; in drun-mcp, the unit tests and the suites'
 * helpers that cost more system time than the skipped scan saved (62-fetch
 * under SAN: 14-15 s of CPU without the roots, 17-18 s with them).
 * drun-policy loads 7 (--as-needed).
 *
 * Why: at every exit LeakSanitizer scans each module's writable segments for
 * pointers into the heap ("globals"). With the sanitizer runtime linked into
 * the program, that is about 10 MB, nearly all of it the runtime's own stack
 * depot tables in .bss, which no process ever touches: reading them faults
 * in some 2,400 pages. That costs 40 ms of CPU per process exit on the CI
 * machines (a page fault is expensive under their hypervisor), out of 60 ms
 * for an empty program, and the SAN suites start thousands of processes.
 * Measured here (clang 14, the Makefile's SAN_CC), CPU per process:
 * `drun-policy --version` 100 -> 63 ms; with no leak check at all, 30 ms.
 *
 * How: the globals scan is turned off (use_globals=0, as a default that
 * LSAN_OPTIONS still overrides) and, just before the check, the same
 * segments are handed to LeakSanitizer as root regions, page runs the
 * process has touched only (mincore). A page never touched holds zeros
 * (.bss) or the file's bytes (.data): no heap pointer, which only a running
 * process can store. LeakSanitizer's own allocator state is left out, as its
 * globals scan leaves it out. So the roots hold every pointer the globals
 * scan would have found, and nothing it would not have read; a mistake here
 * can only drop roots, which reports a leak that is not one (loud), never
 * hides one. With swap, a swapped-out page would be such a dropped root: CI
 * has none. tests/suites/13-lsan-roots proves both ways that it works.
 *
 * Not in the fuzz harnesses: libFuzzer checks for leaks while it runs, not
 * only at exit, and these roots exist only at exit.
 */
#ifdef DRUN_SAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* dl_iterate_phdr; the Makefile defines it, helpers may not */
#endif
#include <link.h>
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* LeakSanitizer's allocator state, which its globals scan leaves out (it
 * points at every chunk). An internal function of the runtime linked into
 * this program: if a compiler-rt release renames it, the link fails. */
void _ZN6__lsan23GetAllocatorGlobalRangeEPmS0_(uintptr_t *begin, uintptr_t *end);

const char *__lsan_default_options(void);

const char *__lsan_default_options(void)
{
    return "use_globals=0";
}

static uintptr_t alloc_begin, alloc_end;

/* [b, e) as a root region, less the allocator's state */
static void add_root(uintptr_t b, uintptr_t e)
{
    if (b >= e)
        return;
    if (alloc_begin < e && b < alloc_end) {
        add_root(b, alloc_begin);
        add_root(alloc_end, e);
        return;
    }
    __lsan_register_root_region((void *)b, e - b);
}

/* Each root region costs LeakSanitizer a read of /proc/self/maps (clang 14:
 * once per region), some 100 us in a process with many libraries; a page
 * read in vain costs a fault, some 10 us. So touched runs closer than this
 * many pages become one region. */
#define LSAN_ROOTS_GAP 16

/* the touched pages of [b, e), as few regions as LSAN_ROOTS_GAP allows; all
 * of it where mincore cannot tell */
static void add_touched(uintptr_t b, uintptr_t e, uintptr_t page)
{
    unsigned char vec[4096];
    uintptr_t p = b & ~(page - 1), run = 0, last = 0; /* run: first page of a run, 0: none */
    while (p < e) {
        uintptr_t n = (e - p + page - 1) / page;
        if (n > sizeof vec)
            n = sizeof vec;
        if (mincore((void *)p, n * page, vec) != 0) {
            add_root(run ? run : (p < b ? b : p), e);
            return;
        }
        for (uintptr_t i = 0; i < n; i++) {
            uintptr_t at = p + i * page;
            if (!(vec[i] & 1))
                continue;
            if (run && at - last > LSAN_ROOTS_GAP * page) {
                add_root(run < b ? b : run, last + page);
                run = 0;
            }
            if (!run)
                run = at;
            last = at;
        }
        p += n * page;
    }
    if (run)
        add_root(run < b ? b : run, last + page > e ? e : last + page);
}

static int add_module(struct dl_phdr_info *info, size_t size, void *page)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        /* what LeakSanitizer's globals scan reads: writable loaded segments */
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || ph->p_memsz == 0)
            continue;
        uintptr_t b = info->dlpi_addr + ph->p_vaddr;
        add_touched(b, b + ph->p_memsz, *(uintptr_t *)page);
    }
    return 0;
}

/* at exit, before the leak check: every module loaded by then, dlopen'd
 * ones included, and every page touched by then */
static void add_roots(void)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t pg = page > 0 ? (uintptr_t)page : 4096;
    _ZN6__lsan23GetAllocatorGlobalRangeEPmS0_(&alloc_begin, &alloc_end);
    dl_iterate_phdr(add_module, &pg);
}

/* The runtime registered its leak check with atexit before any constructor
 * ran; handlers run last-registered first, so this one runs before it. */
__attribute__((constructor)) static void lsan_roots_init(void)
{
    if (atexit(add_roots) != 0)
        abort();
}
#endif
