// End-to-end: sessions and jobs over stdio with the official TypeScript SDK client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TOOL, project, stdioClient, findCmdline, findPid, alive, waitGone, call } from './helpers.mjs';

test('the dev-server flow: start in the background, wait until ready, fetch, read, kill', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    const start = await call(client, TOOL, {
      command: `python3 -u -m http.server 0 --bind 127.0.0.1 --directory ${p.root}`,
      run_in_background: true,
    });
    assert.equal(start.status, 'success', JSON.stringify(start));
    const id = start.data.job.id;
    assert.equal(start.data.job.state, 'running');
    const pid = await findCmdline(`http.server 0 --bind 127.0.0.1 --directory ${p.root}`);

    const ready = await call(client, 'job_output', { job_id: id, until: 'Serving HTTP on', wait_ms: 10000 });
    const m = /port (\d+)/.exec(ready.data.stdout);
    assert.ok(m, `no ready line: ${JSON.stringify(ready)}`);
    const port = Number(m[1]);

    // The port is up in this session's network namespace, and a second command
    // reaches it on loopback.
    const up = await call(client, 'job_output', { job_id: id, port, wait_ms: 5000 });
    assert.match(up.text, new RegExp(`Port ${port} accepts connections`));
    const fetch = await call(client, TOOL, { command: `curl -sS http://127.0.0.1:${port}/ | head -c 200` });
    assert.equal(fetch.status, 'success', JSON.stringify(fetch));
    assert.match(fetch.data.stdout, /Directory listing/);

    // Incremental output: the request's log line, and only what is new.
    const log = await call(client, 'job_output', { job_id: id, until: 'GET / ', wait_ms: 5000 });
    assert.match(log.data.stderr, /"GET \/ HTTP\/1\.1" 200/);
    const again = await call(client, 'job_output', { job_id: id });
    assert.equal(again.data.stderr ?? '', '');

    const list = await call(client, 'job_list', {});
    assert.equal(list.data.jobs.length, 1);
    assert.equal(list.data.jobs[0].state, 'running');

    const killed = await call(client, 'job_kill', { job_id: id });
    assert.equal(killed.data.job.state, 'killed');
    assert.ok(!alive(pid), `python3 (${pid}) still alive after job_kill`);
  } finally {
    await client.close();
  }
});

test('cd persists within the root, and cannot leave it', async () => {
  const p = project();
  mkdirSync(join(p.root, 'sub'));
  const { client } = await stdioClient(p);
  try {
    const cd = await call(client, TOOL, { command: 'cd sub' });
    assert.equal(cd.status, 'success');
    const pwd = await call(client, TOOL, { command: 'pwd' });
    assert.equal(pwd.data.stdout, join(p.root, 'sub') + '\n');
    const out = await call(client, TOOL, { command: 'cd ../..' });
    assert.equal(out.status, 'error');
    assert.equal(out.error.code, 'ACCESS_DENIED');
    const still = await call(client, TOOL, { command: 'pwd' });
    assert.equal(still.data.stdout, join(p.root, 'sub') + '\n');
  } finally {
    await client.close();
  }
});

test('yield_after_ms returns a job that later exits with its full output', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    const first = await call(client, TOOL, { command: 'echo one; sleep 1; echo two; exit 4', yield_after_ms: 300 });
    assert.equal(first.data.job.state, 'running', JSON.stringify(first));
    assert.equal(first.data.stdout, 'one\n');
    let env = first;
    let seen = first.data.stdout;
    while (env.data.job.state === 'running') {
      env = await call(client, 'job_output', { job_id: first.data.job.id, wait_ms: 5000 });
      seen += env.data.stdout ?? '';
    }
    assert.equal(env.data.job.state, 'exited');
    assert.equal(env.data.exit_code, 4);
    assert.equal(seen, 'one\ntwo\n');
    const all = await call(client, 'job_output', { job_id: first.data.job.id, tail_lines: 10 });
    assert.equal(all.data.stdout, 'one\ntwo\n');
  } finally {
    await client.close();
  }
});

test('closing the client kills every job', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  const started = await call(client, TOOL, { command: 'sleep 4242.5', run_in_background: true });
  assert.equal(started.data.job.state, 'running');
  await call(client, TOOL, { command: 'sleep 4243.5 & echo bg', yield_after_ms: 100 });
  const a = await findPid('4242.5');
  const b = await findPid('4243.5');
  await client.close();
  await waitGone(a);
  await waitGone(b);
});

test('a foreground read is reported as waiting for input, and the answer completes it', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    // (How soon: BenchmarkWaitingForInput; not a timed test.)
    const env = await call(client, TOOL, { command: "read -p 'name? ' x; echo hi $x" });
    assert.equal(env.status, 'partial');
    assert.equal(env.data.job.state, 'waiting_for_input', JSON.stringify(env));
    const answer = await call(client, 'job_input', { job_id: env.data.job.id, text: 'bob\n' });
    let done = answer;
    while (done.data.job.state !== 'exited') {
      done = await call(client, 'job_output', { job_id: env.data.job.id, wait_ms: 5000 });
    }
    const all = await call(client, 'job_output', { job_id: env.data.job.id, tail_lines: 5 });
    assert.equal(all.data.stdout, 'hi bob\n');
  } finally {
    await client.close();
  }
});

test('python3 in a terminal job answers print(6*7)', async () => {
  const p = project();
  const { client } = await stdioClient(p);
  try {
    let env = await call(client, TOOL, { command: 'python3 -q', tty: true });
    const id = env.data.job.id;
    while (env.data.job.state === 'running') {
      env = await call(client, 'job_output', { job_id: id, wait_ms: 2000 });
    }
    assert.equal(env.data.job.state, 'waiting_for_input', JSON.stringify(env));
    assert.match(env.data.stdout, />>>/);
    const answer = await call(client, 'job_input', { job_id: id, text: 'print(6*7)\n' });
    assert.match(answer.data.stdout, /^42$/m, JSON.stringify(answer));
    assert.doesNotMatch(answer.data.stdout, /\x1b/);
    const killed = await call(client, 'job_kill', { job_id: id });
    assert.equal(killed.data.job.state, 'killed');
  } finally {
    await client.close();
  }
});
