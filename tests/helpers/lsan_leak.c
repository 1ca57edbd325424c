/*
 * lsan_leak.c — 13-lsan-roots' subject. Holds heap blocks the three ways a
 * process's globals hold them, then leaks one more when asked:
 *   lsan_leak          three blocks held, none lost: exits 0, no report
 *   lsan_leak leak     and one block of 4242 bytes lost: LeakSanitizer's
 *                      report, exit 1 (ASan's code for it)
 * The three ways: a pointer in this program's .data; one in .bss, 6 MB into
 * an array of which it is the only page touched (as the sanitizer runtime's
 * own tables are, which tests/lib/lsan_roots.c skips); and one that only
 * libc's globals reach (setenv's copy of the environment).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdlib.h>
#include <string.h>

static char *held_data = (char *)1; /* .data: initialised */
static char *held_bss[1 << 20];     /* .bss: 8 MB, one slot used */
void *volatile lsan_leak_sink;      /* where the lost block's address goes */

/* in a function of its own, so that no copy of the pointers is left on
 * main's stack or in its registers to reach the blocks instead */
__attribute__((noinline)) static int hold(void)
{
    held_data = malloc(100);
    held_bss[777777] = malloc(200);
    if (!held_data || !held_bss[777777] || setenv("DRUN_LSAN_LEAK", "held by libc", 1) != 0)
        return 2;
    memset(held_data, 1, 100);
    memset(held_bss[777777], 2, 200);
    return 0;
}

int main(int argc, char **argv)
{
    if (hold() != 0)
        return 2;
    if (argc > 1 && strcmp(argv[1], "leak") == 0) {
        lsan_leak_sink = malloc(4242);
        lsan_leak_sink = NULL;
    }
    return 0;
}
