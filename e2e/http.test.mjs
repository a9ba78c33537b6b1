// End-to-end over streamable HTTP: the official TypeScript SDK client drives
// `shellgate mcp --http`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TOOL, project, startHTTP, httpClient, findPid, alive, waitGone, exited, call } from './helpers.mjs';

const TOKEN = 'e2e-' + Math.random().toString(36).slice(2);
let p, server, url;

before(async () => {
  p = project();
  server = startHTTP(p, TOKEN);
  url = await server.url;
});

after(async () => {
  server.child.kill('SIGTERM');
  await exited(server.child);
});

test('without the token the server answers 401', async () => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
  });
  assert.equal(res.status, 401);
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
  await assert.rejects(httpClient(url, undefined));
  await assert.rejects(httpClient(url, 'wrong-token'));
});

test('a foreign Origin is refused', async () => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, Origin: 'http://evil.example', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: '{}',
  });
  assert.equal(res.status, 403);
});

test('tools/list and echo hi', async () => {
  const { client } = await httpClient(url, TOKEN);
  try {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === TOOL);
    assert.ok(tool, `no ${TOOL} in ${tools.map((t) => t.name)}`);
    assert.deepEqual(tool.inputSchema.required, ['command']);
    assert.equal(tool.inputSchema.properties.timeout_ms.maximum, 600000);
    const res = await client.callTool({ name: TOOL, arguments: { command: 'echo hi' } });
    assert.equal(res.structuredContent.status, 'success');
    assert.equal(res.structuredContent.data.stdout, 'hi\n');
    assert.match(res.content[0].text, /^Command succeeded: echo hi\n/);
  } finally {
    await client.close();
  }
});

test('progress notifications arrive for a command printing for 3 s', async () => {
  const { client } = await httpClient(url, TOKEN);
  try {
    const notes = [];
    const res = await client.callTool(
      { name: TOOL, arguments: { command: 'for i in $(seq 1 15); do echo line $i; sleep 0.2; done' } },
      undefined,
      { onprogress: (n) => notes.push(n) },
    );
    assert.equal(res.structuredContent.status, 'success');
    assert.ok(notes.length >= 2, `${notes.length} progress notifications`);
    assert.match(notes.at(-1).message, /line \d+/);
  } finally {
    await client.close();
  }
});

test('cancellation kills a sleep', async () => {
  const { client } = await httpClient(url, TOKEN);
  try {
    const ac = new AbortController();
    const call = client.callTool({ name: TOOL, arguments: { command: 'exec sleep 300.31' } }, undefined, { signal: ac.signal });
    const fg = await findPid('300.31');
    assert.ok(alive(fg));
    ac.abort();
    await assert.rejects(call);
    await waitGone(fg);
  } finally {
    await client.close();
  }
});

test('ending the session kills its command', async () => {
  const { client, transport } = await httpClient(url, TOKEN);
  const call = client.callTool({ name: TOOL, arguments: { command: 'exec sleep 300.32' } }).catch(() => {});
  const pid = await findPid('300.32');
  await transport.terminateSession();
  await waitGone(pid);
  await client.close();
  await call;
});

test('an ask command goes through elicitation, per session', async () => {
  const asked = [];
  const { client } = await httpClient(url, TOKEN, (params) => {
    asked.push(params.message);
    return { action: 'accept', content: { decision: 'allow_session' } };
  });
  const declined = [];
  const other = await httpClient(url, TOKEN, (params) => {
    declined.push(params.message);
    return { action: 'decline' };
  });
  try {
    for (const f of ['h1', 'h2']) {
      const res = await client.callTool({ name: TOOL, arguments: { command: `touch ${f}` } });
      assert.equal(res.structuredContent.status, 'success', res.structuredContent.text);
    }
    assert.equal(asked.length, 1, 'the session approval is remembered');
    const res = await other.client.callTool({ name: TOOL, arguments: { command: 'touch h3' } });
    assert.equal(declined.length, 1, 'another session is asked itself');
    assert.equal(res.structuredContent.error.code, 'APPROVAL_REQUIRED');
    assert.ok(existsSync(join(p.root, 'h2')) && !existsSync(join(p.root, 'h3')));
  } finally {
    await client.close();
    await other.client.close();
  }
});

test('SIGTERM with a command in flight kills it and stops the server', async () => {
  const q = project();
  const s = startHTTP(q, TOKEN);
  const u = await s.url;
  const { client } = await httpClient(u, TOKEN);
  const call = client.callTool({ name: TOOL, arguments: { command: 'exec sleep 300.33' } }).catch(() => {});
  const fg = await findPid('300.33');
  s.child.kill('SIGTERM');
  assert.equal(await exited(s.child), 0, s.stderr());
  assert.ok(!alive(fg));
  await call;
  await client.close().catch(() => {});
});

test('each HTTP session has its own directory and jobs, which die with it', async () => {
  mkdirSync(join(p.root, 'a'), { recursive: true });
  const one = await httpClient(url, TOKEN);
  const two = await httpClient(url, TOKEN);
  try {
    await call(one.client, TOOL, { command: 'cd a' });
    const pwdOne = await call(one.client, TOOL, { command: 'pwd' });
    const pwdTwo = await call(two.client, TOOL, { command: 'pwd' });
    assert.equal(pwdOne.data.stdout, join(p.root, 'a') + '\n');
    assert.equal(pwdTwo.data.stdout, p.root + '\n');
    const job = await call(one.client, TOOL, { command: 'sleep 4244.5', run_in_background: true });
    assert.equal(job.data.job.state, 'running');
    const none = await call(two.client, 'job_output', { job_id: job.data.job.id });
    assert.equal(none.error.code, 'NOT_FOUND');
    const pid = await findPid('4244.5');
    await one.transport.terminateSession();
    await waitGone(pid, 15000); // found by the server's sweep for ended sessions
  } finally {
    await one.client.close();
    await two.client.close();
  }
});
