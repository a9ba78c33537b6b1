// The MCP Inspector's CLI (@modelcontextprotocol/inspector --cli, from npm)
// against `shellgate mcp` over stdio: it lists the tools and calls each one.
// Every call of the CLI is a session of its own, so the job tools are called
// with an id no job has, and answer with an error envelope, not a protocol error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, TOOL } from './helpers.mjs';
import { lab } from './agents.mjs';

const inspector = join(dirname(fileURLToPath(import.meta.url)), 'node_modules', '.bin', 'mcp-inspector');
const skip = existsSync(inspector) ? false : `${inspector} is not installed: run npm ci in e2e/`;

// inspect runs the Inspector CLI once and resolves to the result it prints
// first (it prints a second object, an error, after a result with isError).
function inspect(l, args) {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH, HOME: l.home, TMPDIR: l.tmp };
    const child = spawn(inspector, ['--cli', ...args, '--', BIN, 'mcp', '--root', l.root], { cwd: l.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (err += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90000);
    child.on('exit', () => {
      clearTimeout(timer);
      const first = /^\{[^]*?\n\}/.exec(out);
      try {
        resolve(JSON.parse(first ? first[0] : out));
      } catch {
        reject(new Error(`the Inspector printed no result:\n${out.slice(0, 2000)}\n${err.slice(-2000)}`));
      }
    });
  });
}

// strictList has the Inspector check every tool's schemas for portability
// (--strict): it exits 6, the problems on stderr, if any is an error.
function strictList(l) {
  return new Promise((resolve) => {
    const env = { PATH: process.env.PATH, HOME: l.home, TMPDIR: l.tmp };
    const child = spawn(inspector, ['--cli', '--strict', '--method', 'tools/list', '--', BIN, 'mcp', '--root', l.root], { cwd: l.root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b) => (err += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, err });
    });
  });
}

const call = (l, name, args) => inspect(l, ['--method', 'tools/call', '--tool-name', name, ...(args.length ? ['--tool-arg', ...args] : [])]);

test('the Inspector lists every tool and calls each one', { skip, timeout: 600000 }, async (t) => {
  const l = lab('inspector');
  const { tools } = await inspect(l, ['--method', 'tools/list']);
  assert.deepEqual(tools.map((x) => x.name).sort(), ['job_input', 'job_kill', 'job_list', 'job_output', TOOL]);
  for (const tool of tools) {
    assert.ok(tool.description.length > 50, `${tool.name} has no description`);
    assert.equal(tool.inputSchema.type, 'object', tool.name);
  }

  await t.test('the schemas are portable (--strict)', async () => {
    // context.sandbox was the bare schema `true`: "Bare `true` used where a
    // schema object is expected", on every tools/list.
    const { code, err } = await strictList(l);
    assert.equal(code, 0, err);
  });
  await t.test(TOOL, async () => {
    const res = await call(l, TOOL, ['command=echo hi']);
    assert.equal(res.isError ?? false, false);
    assert.match(res.content[0].text, /^Command succeeded: echo hi\n[^]*--- STDOUT \(3 bytes\) ---\nhi$/);
    assert.equal(res.structuredContent.status, 'success');
    assert.equal(res.structuredContent.data.stdout, 'hi\n');
  });
  await t.test(`${TOOL}: a refusal is a result`, async () => {
    const res = await call(l, TOOL, ['command=sudo true']);
    assert.equal(res.isError, true);
    assert.equal(res.structuredContent.error.code, 'POLICY_DENIED');
    assert.equal(res.structuredContent.error.rule, 'privilege');
  });
  await t.test('job_list', async () => {
    const res = await call(l, 'job_list', []);
    assert.equal(res.isError ?? false, false, JSON.stringify(res));
    assert.equal(res.structuredContent.status, 'success');
  });
  for (const [name, args] of [['job_output', ['job_id=j9']], ['job_input', ['job_id=j9', 'text=x']], ['job_kill', ['job_id=j9']]]) {
    await t.test(`${name}: no such job`, async () => {
      const res = await call(l, name, args);
      assert.equal(res.isError, true);
      assert.equal(res.structuredContent.error.code, 'NOT_FOUND');
      assert.match(res.content[0].text, /No job "j9" in this session/);
    });
  }
});
