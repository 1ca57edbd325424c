// lint-fixture-counts.mjs — for 40-lint: what each pinned JSON report of a
// lint fixture says.
//
//   node tests/lib/lint-fixture-counts.mjs tests/lint/*/*.json
//
// One line per tests/lint/ID/{bad,good}.json: "ID/KIND HITS ERRORS", HITS the
// findings of rule ID, ERRORS the summary's error count; -1 -1 for a file
// that does not parse. Other paths are ignored.
import fs from "node:fs";

for (const f of process.argv.slice(2)) {
  const [, id, kind] = f.match(/tests\/lint\/([^/]+)\/(bad|good)\.json$/) || [];
  if (!id) continue;
  try {
    const j = JSON.parse(fs.readFileSync(f, "utf8"));
    console.log(`${id}/${kind} ${j.findings.filter((x) => x.rule === id).length} ${j.summary.errors}`);
  } catch {
    console.log(`${id}/${kind} -1 -1`);
  }
}
