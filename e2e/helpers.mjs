// Shared helpers for the end-to-end tests: they drive the real shellgate binary
// (path in $SHELLGATE_BIN) with the official TypeScript MCP SDK.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, realpathSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const BIN = process.env.SHELLGATE_BIN;
if (!BIN) {
  throw new Error('set SHELLGATE_BIN to the shellgate binary (CGO_ENABLED=0 go build -o /var/tmp/shellgate ./cmd/shellgate)');
}

export const TOOL = 'run_shell_command';

// The projects made by this test file, removed when it exits: a run by hand
// leaves nothing in the temp dir either.
const made = [];
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

// A fresh project: a root directory, a home without user config, and a --config file
// that makes "touch *" need approval.
export function project() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'shellgate-e2e-')));
  made.push(base);
  const root = join(base, 'root');
  const home = join(base, 'home');
  mkdirSync(root);
  mkdirSync(home);
  const config = join(base, 'shellgate.toml');
  writeFileSync(config, '[policy]\nask = ["touch *"]\n');
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_STATE_HOME: join(home, '.local', 'state') };
  delete env.SHELLGATE_MCP_TOKEN;
  return { base, root, home, config, env, args: ['mcp', '--root', root, '--config', config] };
}

// newClient returns a Client; elicit, when given, answers elicitation requests.
export function newClient(elicit) {
  const capabilities = elicit ? { elicitation: {} } : {};
  const client = new Client({ name: 'shellgate-e2e', version: '1.0.0' }, { capabilities });
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params));
  }
  return client;
}

// stdioClient starts the binary over stdio and connects a client to it.
export async function stdioClient(p, elicit) {
  const transport = new StdioClientTransport({ command: BIN, args: p.args, env: p.env, stderr: 'pipe' });
  const client = newClient(elicit);
  await client.connect(transport);
  return { client, transport };
}

// startHTTP starts the binary with --http on a free loopback port and resolves once it
// listens, with its URL.
export function startHTTP(p, token, extra = []) {
  // The token goes in the environment: a command line is visible to every process.
  const child = spawn(BIN, [...p.args, '--http', '127.0.0.1:0', ...extra], {
    env: { ...p.env, SHELLGATE_MCP_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const url = new Promise((resolve, reject) => {
    child.stderr.on('data', (b) => {
      stderr += b;
      const m = /serving streamable HTTP at (http:\/\/\S+\/)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`shellgate exited with ${code}: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr };
}

export async function httpClient(url, token, elicit) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = newClient(elicit);
  await client.connect(transport);
  return { client, transport };
}

// waitFor polls fn until it returns a truthy value.
export async function waitFor(fn, what, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// findPid waits for the process running `sleep <secs>` — give each test its own
// duration — and returns its PID as this process sees it: in the sandbox a
// command only knows the numbers of its own PID namespace.
export function findPid(secs) {
  const want = `sleep\0${secs}\0`;
  return waitFor(() => {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (readFileSync(`/proc/${name}/cmdline`, 'utf8') === want && alive(Number(name))) return Number(name);
      } catch {}
    }
    return 0;
  }, `sleep ${secs}`);
}

// alive reports whether pid is a live (non-zombie) process.
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export function waitGone(pid, ms = 5000) {
  return waitFor(() => !alive(pid), `process ${pid} to exit`, ms);
}

export function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.on('exit', (code) => resolve(code));
  });
}

// findCmdline waits for a live process whose command line (arguments joined by
// spaces) contains s, and returns its PID as this process sees it.
export function findCmdline(s) {
  return waitFor(() => {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
      try {
        const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
        if (cmd.includes(s) && !cmd.startsWith('node ') && alive(Number(name))) return Number(name);
      } catch {}
    }
    return 0;
  }, `a process running ${s}`);
}

// call calls a tool and returns its structuredContent (the envelope).
export async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  return res.structuredContent;
}
