// End-to-end over stdio: the official TypeScript SDK client drives `shellgate mcp`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { BIN, TOOL, project, stdioClient, findPid, alive, waitGone, exited } from './helpers.mjs';

test('tools/list shows the tool and its schema', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['job_input', 'job_kill', 'job_list', 'job_output', TOOL]);
    const tool = tools.find((t) => t.name === TOOL);
    assert.equal(tool.name, TOOL);
    assert.match(tool.description, new RegExp(p.root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.match(tool.description, /Network: OFF/);
    const s = tool.inputSchema;
    assert.equal(s.type, 'object');
    assert.deepEqual(s.required, ['command']);
    assert.equal(s.properties.command.type, 'string');
    assert.equal(s.properties.directory.default, '.');
    assert.equal(s.properties.timeout_ms.type, 'integer');
    assert.equal(s.properties.timeout_ms.default, 120000);
    assert.equal(s.properties.timeout_ms.maximum, 600000);
    assert.equal(s.properties.timeout_ms.minimum, 1);
    assert.equal(s.properties.description.type, 'string');
    for (const f of ['status', 'data', 'text', 'stats', 'context', 'error']) {
      assert.ok(tool.outputSchema.properties[f], `outputSchema lacks ${f}`);
    }
  } finally {
    await client.close();
  }
});

test('echo hi returns the envelope', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    const res = await client.callTool({ name: TOOL, arguments: { command: 'echo hi' } });
    const env = res.structuredContent;
    assert.equal(env.status, 'success');
    assert.equal(env.data.stdout, 'hi\n');
    assert.equal(env.data.exit_code, 0);
    assert.equal(env.data.directory, '.');
    assert.equal(res.isError ?? false, false);
    // Each channel complete on its own: the text with the output, the structured
    // envelope with the output in data only and a summary as its text.
    assert.equal(res.content.length, 1);
    assert.match(res.content[0].text, /^Command succeeded: echo hi\n[^]*--- STDOUT \(3 bytes\) ---\nhi$/);
    assert.equal(env.text.split('\n')[0], 'Command succeeded.');
    assert.doesNotMatch(env.text, /STDOUT/);
    assert.ok(JSON.stringify(env).length <= res.content[0].text.length * 1.3 + 200);
  } finally {
    await client.close();
  }
});

test('bad input and refusals are error envelopes, not protocol errors', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    const cases = [
      [{ command: 'true', timeout_ms: 0 }, 'INVALID_PARAM', /timeout_ms must be an integer between 1 and 600000/],
      [{ command: 'true', timeout_ms: 9999999 }, 'INVALID_PARAM', /timeout_ms/],
      [{}, 'INVALID_PARAM', /command/],
      [{ command: 'sudo true' }, 'POLICY_DENIED', /privilege|sudo/],
      [{ command: 'sleep 5', timeout_ms: 200 }, 'TIMEOUT', /timeout/i],
    ];
    for (const [args, code, message] of cases) {
      const res = await client.callTool({ name: TOOL, arguments: args });
      assert.equal(res.isError, true, JSON.stringify(args));
      assert.equal(res.structuredContent.status, 'error');
      assert.equal(res.structuredContent.error.code, code, JSON.stringify(args));
      assert.match(res.structuredContent.error.message, message);
    }
  } finally {
    await client.close();
  }
});

test('progress notifications arrive for a command printing for 3 s', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    const notes = [];
    const res = await client.callTool(
      { name: TOOL, arguments: { command: 'for i in $(seq 1 15); do echo line $i; sleep 0.2; done' } },
      undefined,
      { onprogress: (n) => notes.push({ at: Date.now(), ...n }) },
    );
    assert.equal(res.structuredContent.status, 'success');
    assert.ok(notes.length >= 2, `${notes.length} progress notifications`);
    for (let i = 1; i < notes.length; i++) {
      assert.ok(notes[i].progress > notes[i - 1].progress, 'progress increases');
      assert.ok(notes[i].at - notes[i - 1].at >= 700, 'at most one notification a second');
    }
    assert.match(notes.at(-1).message, /line \d+/);
  } finally {
    await client.close();
  }
});

test('cancellation kills a sleep', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    const ac = new AbortController();
    const call = client.callTool(
      { name: TOOL, arguments: { command: 'sleep 301.21 & exec sleep 300.21' } },
      undefined,
      { signal: ac.signal },
    );
    const fg = await findPid('300.21');
    const bg = await findPid('301.21');
    assert.ok(alive(fg) && alive(bg));
    ac.abort();
    await assert.rejects(call);
    await waitGone(fg);
    await waitGone(bg);
  } finally {
    await client.close();
  }
});

test('an ask command goes through elicitation', async (t) => {
  const answers = {
    accept: { action: 'accept', content: { decision: 'allow_once' } },
    decline: { action: 'decline' },
  };
  for (const [name, answer] of Object.entries(answers)) {
    await t.test(name, async () => {
      const p = project();
      const asked = [];
      const { client } = await stdioClient(p, (params) => {
        asked.push(params);
        return answer;
      });
      try {
        const res = await client.callTool({ name: TOOL, arguments: { command: 'touch approved' } });
        assert.equal(asked.length, 1, 'asked once');
        assert.match(asked[0].message, /touch approved/);
        assert.ok(asked[0].requestedSchema.properties.decision.enum.includes('allow_session'));
        const env = res.structuredContent;
        if (name === 'accept') {
          assert.equal(env.status, 'success', env.text);
          assert.ok(existsSync(join(p.root, 'approved')));
        } else {
          assert.equal(env.status, 'error');
          assert.equal(env.error.code, 'APPROVAL_REQUIRED');
          assert.ok(!existsSync(join(p.root, 'approved')));
        }
      } finally {
        await client.close();
      }
    });
  }
  await t.test('client without elicitation', async () => {
    const p = project();
    const { client } = await stdioClient(p);
    try {
      const res = await client.callTool({ name: TOOL, arguments: { command: 'touch approved' } });
      assert.equal(res.structuredContent.error.code, 'APPROVAL_REQUIRED');
      assert.match(res.structuredContent.error.message, /take the ask rule out/);
      assert.ok(!existsSync(join(p.root, 'approved')));
    } finally {
      await client.close();
    }
  });
});

// With allow-listed egress, a connection to a domain not on the list is asked
// about through elicitation: the question is the domain, for the session.
test('an unlisted domain is asked about through elicitation', async (t) => {
  const web = createServer((req, res) => res.end('hello from the host'));
  await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
  const port = web.address().port;
  const p = project();
  // The address is allowed, the name localhost is not: shellgate's proxy asks about it.
  p.args.push('--allow-domain', '127.0.0.1');
  const asked = [];
  const { client } = await stdioClient(p, (params) => {
    asked.push(params);
    return { action: 'accept', content: { decision: 'allow_session' } };
  });
  try {
    const { tools } = await client.listTools();
    if (!/Network: allow-listed/.test(tools.find((x) => x.name === TOOL).description)) return t.skip('allow-listed egress needs the Linux sandbox');
    const fetch = `curl -sS --max-time 60 --noproxy '' -x "$HTTP_PROXY" http://localhost:${port}/`;
    for (let i = 0; i < 2; i++) {
      const res = await client.callTool({ name: TOOL, arguments: { command: fetch } });
      assert.equal(res.structuredContent.data.stdout, 'hello from the host', res.structuredContent.text);
    }
    assert.equal(asked.length, 1, 'asked once, then allowed for the session');
    const { message, requestedSchema } = asked[0];
    assert.equal(message, `Allow localhost for this session?\n\n│ ${fetch}\n\nThis command connects to it, on port ${port}; it is not on the network allow-list.`);
    assert.deepEqual(requestedSchema.properties.decision.enumNames, ['Only this command', 'This session', 'Deny']);
  } finally {
    await client.close();
    web.close();
  }
});

// Raw JSON-RPC over the binary's own pipes, to control stdin precisely and see every
// byte it writes on stdout.
function rawServer(p) {
  const child = spawn(BIN, p.args, { env: p.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const waiters = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) w();
  });
  let stderr = '';
  child.stderr.on('data', (b) => (stderr += b));
  const send = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
  const response = async (id) => {
    for (;;) {
      const found = lines.map((l) => JSON.parse(l)).find((m) => m.id === id);
      if (found) return found;
      await new Promise((r) => waiters.push(r));
    }
  };
  send({ id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  send({ method: 'notifications/initialized' });
  return { child, lines, send, response, stderr: () => stderr };
}

test('stdout carries only JSON-RPC, and no message over 1 MiB, for 50 MB of output', async () => {
  const p = project();
  const s = rawServer(p);
  s.send({ id: 1, method: 'tools/call', params: { _meta: { progressToken: 'big' }, name: TOOL, arguments: { command: 'yes "noise on stdout" | head -c 50000000; yes "noise on stderr" | head -c 5000000 >&2; sleep 1.1; echo done' } } });
  const res = await s.response(1);
  assert.equal(res.result.structuredContent.stats.stdout_bytes, 50000005);
  assert.equal(res.result.structuredContent.data.truncated, true);
  assert.ok(s.lines.some((l) => JSON.parse(l).method === 'notifications/progress'), 'progress was reported');
  s.child.stdin.end();
  assert.equal(await exited(s.child), 0);
  for (const line of s.lines) {
    const size = Buffer.byteLength(line);
    assert.ok(size <= 1 << 20, `a ${size}-byte message`);
    const msg = JSON.parse(line);
    assert.equal(msg.jsonrpc, '2.0');
  }
});

test('stdin EOF with a sleep 300 in flight leaves no process behind', async () => {
  const p = project();
  const s = rawServer(p);
  s.send({ id: 1, method: 'tools/call', params: { name: TOOL, arguments: { command: 'sleep 299.22 & exec sleep 300.22' } } });
  const fg = await findPid('300.22');
  const bg = await findPid('299.22');
  const start = Date.now();
  s.child.stdin.end();
  assert.equal(await exited(s.child), 0, s.stderr());
  assert.ok(Date.now() - start < 10000, 'exited promptly');
  assert.ok(!alive(fg) && !alive(bg), 'the command and its background job are gone');
});

test('SIGTERM with a command in flight kills it and exits', async () => {
  const p = project();
  const s = rawServer(p);
  s.send({ id: 1, method: 'tools/call', params: { name: TOOL, arguments: { command: 'exec sleep 300.23' } } });
  const fg = await findPid('300.23');
  s.child.kill('SIGTERM');
  await exited(s.child);
  assert.ok(!alive(fg));
});
