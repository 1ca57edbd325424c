// explain-compare.mjs — for 41-review: `explain --json` answers against the
// enforcement probes (tests/enforce/probes/NAME).
//
//   node tests/lib/explain-compare.mjs PROBES ANSWERS.json exec|template   (or tap_node)
//
// Exit 0 when every answer agrees, 3 when only known open issues differ
// (TODO(linux|macos) in the probe file's comment block, or the SBPL
// workspace-order limitation; listed as "TODO ..."), 1 otherwise (listed).
import fs from "node:fs";
import { cli } from "./cli.mjs";

export function main([probes, answers, mode], io) {
  const log = (s) => io.out(s + "\n");
  // probe lines, each with the comment block right above it (TODO(linux|macos) marks a known open issue)
  const probe = [];
  let block = [];
  for (const l of fs.readFileSync(probes, "utf8").split("\n")) {
    if (l.startsWith("#")) { block.push(l); continue; }
    if (!l.trim()) { block = []; continue; }
    probe.push({ line: l, note: block.join(" ") });
  }
  const a = JSON.parse(fs.readFileSync(answers, "utf8"));
  const bad = [], todo = [];
  if (a.length !== probe.length) { log(`${a.length} answers for ${probe.length} probes`); return 1; }
  probe.forEach(({ line, note }, i) => {
    const tags = {};
    let m, rest = line;
    while ((m = rest.match(/^(.*) (linux|gap|macos):(none|read|write)$/))) { rest = m[1]; tags[m[2]] = m[3]; }
    const level = rest.split(" ")[0], x = a[i], L = x.targets.linux, M = x.targets.macos;
    const known = (t, why) => note.includes(`TODO(${t})`) || why;
    const report = (t, msg, why) => (known(t, why) ? todo : bad).push(`${line}: ${msg}${known(t, why) ? " (known: " + (why || "TODO(" + t + ") in the probe file") + ")" : ""}`);
    if (x.level !== level) bad.push(`${line}: lattice ${x.level}, probe ${level}`);
    if (mode === "exec") {
      const ok = tags.linux ? [tags.linux] : tags.gap ? [tags.gap, level] : [level];
      if (!ok.includes(L.level)) report("linux", `linux (bwrap_eval, exec-time plan) ${L.level}, want ${ok.join(" or ")}`);
    }
    if (!L.documented) report("linux", `linux differs from the lattice: ${L.differs}`);
    const mac = tags.macos || level;
    // the SBPL profile cannot know where the workspace is (sbpl.c orders rules at compile time)
    const sbplWs = M.differs && M.differs.startsWith("the SBPL profile orders its rules") ? "SBPL rule order vs a workspace holding policy paths" : "";
    if (M.lattice !== mac) bad.push(`${line}: macos lattice ${M.lattice}, want ${mac}`);
    else if (M.level !== mac) report("macos", `macos (sbpl_eval) ${M.level}, want ${mac}`, sbplWs);
    if (!("decision" in L) || !("artifact" in L) || !("decision" in M) || !("artifact" in M)) bad.push(`${line}: targets lack decision/artifact`);
  });
  for (const t of todo.slice(0, 8)) log("TODO " + t);
  if (todo.length > 8) log(`TODO ... ${todo.length - 8} more`);
  for (const t of bad.slice(0, 15)) log(t);
  if (bad.length > 15) log(`... ${bad.length - 15} more`);
  return bad.length ? 1 : todo.length ? 3 : 0;
}
cli(import.meta, main);
