// lane-0.mjs — the first of tests/suites/60-mcp's two node test processes: its
// half of tests/mcp/*.test.mjs (lane.mjs says which and why).
import { runLane } from './lane.mjs';

await runLane(0);
