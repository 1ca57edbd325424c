// reporter.mjs — a node:test reporter that prints flat TAP: one top-level
// "ok N - file: name" / "not ok N - file: name" per top-level test of every
// file, failure details as "# " lines, and "1..N" at the end. tests/run
// counts only top-level lines, so subtests (if any) are left out.
import path from 'node:path';

export default async function* tapReporter(source) {
  let n = 0;
  yield 'TAP version 13\n';
  for await (const ev of source) {
    if (ev.type !== 'test:pass' && ev.type !== 'test:fail') {
      if (ev.type === 'test:diagnostic' && ev.data.nesting === 0) yield `# ${ev.data.message}\n`;
      // a test's own "# ..." lines (figures worth keeping in the log)
      if (ev.type === 'test:stdout' && /^#/.test(ev.data.message)) yield ev.data.message;
      continue;
    }
    const d = ev.data;
    if (d.nesting !== 0) continue;
    const file = d.file ? path.basename(d.file, '.mjs') : '';
    const name = `${file ? `${file}: ` : ''}${d.name}`.replace(/\n/g, ' ');
    n++;
    if (ev.type === 'test:pass') {
      yield `ok ${n} - ${name}${d.skip ? ' # SKIP' : ''}\n`;
    } else {
      yield `not ok ${n} - ${name}\n`;
      const err = d.details?.error;
      const cause = err?.cause ?? err;
      // the message first: tests append context (the server's stderr) to it
      // after the stack was captured
      const msg = String(cause?.message ?? cause ?? 'failed');
      const stack = String(cause?.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)).slice(0, 8);
      for (const line of [...msg.split('\n').slice(0, 80), ...stack]) yield `#   ${line}\n`;
    }
  }
  yield `1..${n}\n`;
}
