/* clock.h — the runtime's two clocks, in milliseconds: monotonic for idle
 * times and deadlines, wall-clock for what is shown to a client.
 */
#ifndef DRUN_RT_CLOCK_H
#define DRUN_RT_CLOCK_H

#include <stdint.h>

/* Monotonic milliseconds. */
int64_t clock_now_ms(void);
/* Wall-clock milliseconds since the epoch. */
int64_t clock_wall_ms(void);

#endif
