// schema-bounds.mjs — for 72-schema: writes the configs that hold the
// schema and the compiler to the same bounds and defaults.
//
//   node tests/lib/schema-bounds.mjs docs/config.schema.json DIR
//
// For every integer key, DIR/ok--KEY--min.toml and --max (to be accepted by
// both) and DIR/ko--KEY--below-min.toml and --above-max (to be refused by
// both); and DIR/ok--every-key-at-its-default.toml, every key at its schema
// default.
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main([schemaFile, dir], io) {
  const s = JSON.parse(fs.readFileSync(schemaFile, "utf8"));
  const toml = (v) => typeof v === "string" ? JSON.stringify(v) : Array.isArray(v) ? "[" + v.map(toml).join(", ") + "]"
    : typeof v === "object" ? "{" + Object.entries(v).map(([k, x]) => JSON.stringify(k) + " = " + toml(x)).join(", ") + "}" : String(v);
  const line = (t, k, v) => (t ? `[${t}]\n` : "") + `${k} = ${v}\n`;
  const all = [[], {}];
  for (const [k, p] of Object.entries(s.properties)) {
    const keys = p.type === "object" && p.properties ? Object.entries(p.properties).map(([k2, p2]) => [k, k2, p2]) : [[null, k, p]];
    for (const [t, key, q] of keys) {
      const name = (t ? t + "." : "") + key;
      if (t) (all[1][t] ??= []).push(`${key} = ${toml(q.default)}`); else all[0].push(`${key} = ${toml(q.default)}`);
      if (q.type !== "integer") continue;
      for (const [tag, v, ok] of [["min", q.minimum, 1], ["max", q.maximum, 1], ["below-min", BigInt(q.minimum) - 1n, 0], ["above-max", BigInt(q.maximum) + 1n, 0]])
        fs.writeFileSync(`${dir}/${ok ? "ok" : "ko"}--${name}--${tag}.toml`, line(t, key, v));
    }
  }
  fs.writeFileSync(`${dir}/ok--every-key-at-its-default.toml`, all[0].join("\n") + "\n" +
    Object.entries(all[1]).map(([t, ls]) => `\n[${t}]\n` + ls.join("\n") + "\n").join(""));
  return 0;
}
cli(import.meta, main);
