// schema-shape.mjs — for 72-schema: the JSON Schema is draft-07, every
// object with properties is closed (additionalProperties false), every key
// has a description, and every pattern compiles without look-around (Taplo
// compiles patterns with Rust's regex crate).
//
//   node tests/lib/schema-shape.mjs docs/config.schema.json
//
// Prints one problem a line; nothing when the schema passes.
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main([file], io) {
  const s = JSON.parse(fs.readFileSync(file, "utf8"));
  const bad = [];
  if (s.$schema !== "http://json-schema.org/draft-07/schema#") bad.push("$schema is not draft-07");
  (function walk(o, at) {
    if (Array.isArray(o)) return o.forEach((x, i) => walk(x, `${at}/${i}`));
    if (!o || typeof o !== "object") return;
    if (o.properties && o.additionalProperties !== false) bad.push(`${at}: an object with properties is not closed`);
    if (o.properties) for (const [k, v] of Object.entries(o.properties))
      if (typeof v.description !== "string" || !v.description) bad.push(`${at}/properties/${k}: no description`);
    if (typeof o.pattern === "string") {
      if (/\(\?[=!<]/.test(o.pattern)) bad.push(`${at}: look-around in ${o.pattern}`);
      try { new RegExp(o.pattern, "u"); } catch (e) { bad.push(`${at}: ${e.message}`); }
    }
    for (const [k, v] of Object.entries(o)) if (k !== "default" && k !== "enum") walk(v, `${at}/${k}`);
  })(s, "");
  io.out(bad.join("\n") + "\n");
  return 0;
}
cli(import.meta, main);
