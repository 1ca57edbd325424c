// lane.mjs — one of tests/suites/60-mcp's two node test processes.
//
// `node --test` starts a node process per file it is given, and each pays
// for node and the MCP SDK again (about 0.7 s of CPU). 60-mcp gives it two
// files, lane-0.mjs and lane-1.mjs, each of which imports its half of
// every tests/mcp/*.test.mjs here, one after another: node --test
// --test-concurrency=2 runs the two lanes side by side, so one lane's waits
// (deadlines, timeouts, cancels) are still filled with the other's work.
// The reporter names each test by the file it is written in, as before; a
// new *.test.mjs file needs no edit anywhere (it goes to the lane with less
// work so far).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/* Seconds each file takes alone (plain build, 2 cores), to share the work
 * evenly: the longest first, each to the lane with less so far. A file not
 * listed counts 5 s. */
const WALL = {
  'mcp.test.mjs': 33, 'abuse.test.mjs': 30, 'reaper.test.mjs': 13, 'sessions.test.mjs': 12.5,
  'network.test.mjs': 8, 'protocol.test.mjs': 6.5,
};

/** The *.test.mjs files of lane n (0 or 1), in the order they run. */
export function laneFiles(n) {
  const files = fs.readdirSync(here).filter((f) => f.endsWith('.test.mjs')).sort()
    .map((f) => [f, WALL[f] ?? 5]).sort((a, b) => b[1] - a[1]);
  const lanes = [[], []], load = [0, 0];
  for (const [f, s] of files) {
    const k = load[0] <= load[1] ? 0 : 1;
    lanes[k].push(f);
    load[k] += s;
  }
  return lanes[n];
}

/** Imports lane n's files in turn; each registers its tests, which run one
 * after another in that order. A file's before() hooks run once, before the
 * next test to start after the file is imported; its after() hooks run once,
 * when the lane's last test is done (its shared servers stop then, and a
 * sanitizer report still fails the lane). */
export async function runLane(n) {
  for (const f of laneFiles(n)) await import(path.join(here, f));
}
