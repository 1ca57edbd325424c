// lint-fixture-counts.mjs — for 40-lint: what each pinned JSON report of a
// lint fixture says.
//
//   node tests/lib/lint-fixture-counts.mjs tests/lint/*/*.json   (or tap_node)
//
// One line per tests/lint/ID/{bad,good}.json: "ID/KIND HITS ERRORS", HITS the
// findings of rule ID, ERRORS the summary's error count; -1 -1 for a file
// that does not parse. Other paths are ignored.
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main(files, io) {
  for (const f of files) {
    const [, id, kind] = f.match(/tests\/lint\/([^/]+)\/(bad|good)\.json$/) || [];
    if (!id) continue;
    try {
      const j = JSON.parse(fs.readFileSync(f, "utf8"));
      io.out(`${id}/${kind} ${j.findings.filter((x) => x.rule === id).length} ${j.summary.errors}\n`);
    } catch {
      io.out(`${id}/${kind} -1 -1\n`);
    }
  }
  return 0;
}
cli(import.meta, main);
