/* reaper.h — no sandbox process is left as a zombie or an orphan (SPEC §12).
 *
 * drun-mcp is a child subreaper (PR_SET_CHILD_SUBREAPER, set in main.c), so
 * when a bwrap exits before the sandbox's pid 1 (its child, pid 1 of the
 * sandbox's pid namespace) has finished, that pid 1 is re-parented to
 * drun-mcp rather than to the init above it, and must be reaped here. When
 * drun-mcp is itself pid 1 of a container, the same holds without the flag.
 *
 * Whose exit status is whose: exec.c waits for the bwrap it spawned by pid;
 * the host probes wait for theirs. Those children all live in drun-mcp's own
 * pid namespace. drun-mcp never starts a process in another pid namespace
 * (bwrap's clone(CLONE_NEWPID) makes the sandbox's pid 1 bwrap's child), so
 * a child of drun-mcp in a descendant pid namespace can only be a sandbox
 * process that was re-parented here, whose bwrap, and so whose run, is over:
 * nobody waits for it. The reaper kills such a child if it still runs and
 * reaps it once it is a zombie. Identity is checked through a pidfd, so a pid
 * reused meanwhile is never signalled or reaped by mistake.
 */
#ifndef DRUN_RT_REAPER_H
#define DRUN_RT_REAPER_H

#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h> /* before P_PIDFD below: glibc's is an enum member */

/* pidfds (Linux 5.3+, P_PIDFD 5.4+), for headers older than the kernel. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Starts the reaper thread once (later calls do nothing): it scans this
 * process's children every REAPER_SCAN_MS. Never fails: without a thread the
 * orphans are still reaped by reaper_scan. */
void reaper_start(void);

/* Scans once now (see above). Returns the number of processes reaped. */
unsigned reaper_scan(void);

/* Is pidfd's process (pid) in a descendant pid namespace of ours, the child
 * of bwrap_pid (0: of no bwrap) or, re-parented, of this process? Checked
 * after the pidfd was opened, so the answer is about that process. */
bool reaper_is_sandbox_pid1(int pidfd, pid_t pid, pid_t bwrap_pid);

#define REAPER_SCAN_MS 500

#endif
