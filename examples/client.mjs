// client.mjs — a short drun-mcp client with the official MCP TypeScript SDK.
//
//   npm install @modelcontextprotocol/sdk
//   node examples/client.mjs                      # starts drun-mcp over stdio
//   DRUN_MCP_URL=http://127.0.0.1:7273/mcp DRUN_MCP_TOKEN=... node examples/client.mjs
//
// DRUN_MCP (default: drun-mcp on PATH) and DRUN_CONFIG choose the binary and the
// policy for the stdio case. It creates a session, writes a script into it,
// runs it in the sandbox, reads its output back, shows what the policy is, and
// closes the session.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.env.DRUN_MCP_URL;
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: process.env.DRUN_MCP_TOKEN ? { Authorization: `Bearer ${process.env.DRUN_MCP_TOKEN}` } : {} },
  })
  : new StdioClientTransport({
    command: process.env.DRUN_MCP || 'drun-mcp',
    args: ['--stdio'],
    env: { ...process.env },
  });

const client = new Client({ name: 'drun-example', version: '1.0.0' });
await client.connect(transport);

/** Calls a tool; prints and throws on a tool error; returns structuredContent. */
async function call(name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
  return r.structuredContent;
}

const { tools } = await client.listTools();
console.log(`drun-mcp offers ${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);

const { session_id, limits } = await call('create_session', { label: 'example' });
console.log(`session ${session_id}: commands time out after ${limits.bash_timeout_ms} ms`);
try {
  await call('session_write_file', {
    session_id,
    path: 'hello.sh',
    content: 'echo "hello from $(pwd)"; echo "network interfaces: $(ls /sys/class/net | tr "\\n" " ")"\n',
  });
  const run = await call('session_bash', { session_id, command: 'bash hello.sh | tee out.txt' });
  console.log(`exit ${run.exit_code} in ${run.duration_ms} ms:\n${run.stdout}`);
  const out = await call('session_read_file', { session_id, path: 'out.txt' });
  console.log(`out.txt holds ${out.bytes} bytes`);

  // A refused call is a result with isError, and a sentence that says why.
  const escape = await client.callTool({ name: 'session_read_file', arguments: { session_id, path: '../../etc/passwd' } });
  console.log(`reading ../../etc/passwd: ${escape.content[0].text}`);

  const policy = await call('get_policy');
  console.log(`policy: ${policy.state}, generation ${policy.generation} from ${policy.source}; ` +
    `${policy.counters.checks} config checks, ${policy.counters.compiles} compiles`);
} finally {
  await call('session_close', { session_id });
  await client.close();
}
