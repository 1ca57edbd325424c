// schema-undocumented.mjs — for 72-schema: the keys of the schema that a
// doc page does not name (as `key` or `[table]`).
//
//   node tests/lib/schema-undocumented.mjs docs/config.schema.json docs/policy.md
//
// Prints one key a line (table.key for a table's keys); nothing when all are there.
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main([schemaFile, docFile], io) {
  const s = JSON.parse(fs.readFileSync(schemaFile, "utf8"));
  const doc = fs.readFileSync(docFile, "utf8");
  for (const [k, p] of Object.entries(s.properties)) {
    if (!doc.includes("`" + k + "`") && !doc.includes("`[" + k + "]`")) io.out(k + "\n");
    for (const k2 of Object.keys(p.properties ?? {})) if (!doc.includes("`" + k2 + "`")) io.out(k + "." + k2 + "\n");
  }
  return 0;
}
cli(import.meta, main);
