// Load, churn and kill -9 against `shellgate mcp --http` (scripts/load.sh runs it):
//
//  1. 1 000 mixed calls over 20 HTTP sessions at once (output, refusals,
//     timeouts, bad input, failures, background jobs): every one answered as
//     expected;
//  2. 500 sessions opened and abandoned (initialize, then nothing): each
//     answered (200, or 503 past --max-sessions), then reaped, after which
//     memory, descriptors, threads and child processes are back to baseline
//     and a new session is accepted;
//  3. kill -9 of the server with 20 sessions' calls in flight: every call
//     answered (an error, no hang), no process of theirs left;
//  and every audit line written meanwhile is valid JSON.
//
// It prints the figures docs/benchmarks.md quotes and exits 1 if a check fails.
import { readFileSync, readdirSync, readlinkSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startHTTP, httpClient, exited, alive } from './helpers.mjs';

const TOKEN = 'load-test-token-0123456789';
const SESSIONS = 20;
const CALLS = 1000;
const ABANDONED = 500;

const failures = [];
function check(ok, what) {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

mkdirSync('/var/tmp', { recursive: true });
const base = realpathSync(mkdtempSync('/var/tmp/shellgate-load-'));
const l = { root: join(base, 'root'), home: join(base, 'home'), state: join(base, 'state'), tmp: join(base, 'tmp') };
for (const d of Object.values(l)) mkdirSync(d);
const p = {
  args: ['mcp', '--root', l.root],
  env: { PATH: process.env.PATH, HOME: l.home, TMPDIR: l.tmp, XDG_STATE_HOME: l.state, XDG_CONFIG_HOME: join(l.home, '.config') },
};
const servers = [];
process.on('exit', () => {
  for (const s of servers) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

// The server's figures: resident memory, descriptors (sockets apart: idle
// keep-alive connections are closed after 2 minutes), threads, and the
// processes below it (sandbox helpers, commands).
function stats(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)[1]);
  const fds = readdirSync(`/proc/${pid}/fd`);
  let sockets = 0;
  let deleted = 0;
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:')) sockets++;
      else if (target.endsWith(' (deleted)')) deleted++;
    } catch {}
  }
  return { rssMB: Math.round(field('VmRSS') / 102.4) / 10, fds: fds.length, sockets, deleted, files: fds.length - sockets - deleted, threads: field('Threads'), children: descendants(pid).length };
}

function descendants(pid) {
  const parent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const out = [];
  for (const [child] of parent) {
    for (let p = parent.get(child); p; p = parent.get(p)) {
      if (p === pid) {
        out.push(child);
        break;
      }
    }
  }
  return out;
}

// processesIn lists live processes whose command line holds marker.
function processesWith(marker) {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').includes(marker) && alive(Number(name))) out.push(Number(name));
    } catch {}
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const show = (s) => `RSS ${s.rssMB} MB, ${s.fds} fds (${s.sockets} sockets, ${s.deleted} removed files), ${s.threads} threads, ${s.children} child processes`;
const pct = (xs, q) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function start(extra = []) {
  const srv = startHTTP(p, TOKEN, extra);
  servers.push(srv.child);
  return { child: srv.child, url: await srv.url };
}

// settle waits until the server's figures stop falling, at most ms.
async function settle(pid, want, ms) {
  const deadline = Date.now() + ms;
  let s = stats(pid);
  while (Date.now() < deadline && !want(s)) {
    await sleep(1000);
    s = stats(pid);
  }
  return s;
}

// The mix: each entry is the arguments and what the answer must be.
function mixed(session, i) {
  const tag = `s${session}c${i}`;
  switch (i % 10) {
    case 4:
      return [{ command: 'sudo true' }, (r) => r.isError && r.structuredContent.error.code === 'POLICY_DENIED'];
    case 5:
      return [{ command: 'sleep 5', timeout_ms: 300 }, (r) => r.structuredContent.error?.code === 'TIMEOUT'];
    case 6:
      return [{ command: 'seq 1 200000' }, (r) => r.structuredContent.data.truncated && r.structuredContent.data.stdout.endsWith('200000\n') && !!r.structuredContent.data.full_output_path];
    case 7:
      return [{ command: 'true', timeout_ms: 0 }, (r) => r.structuredContent.error?.code === 'INVALID_PARAM'];
    case 8:
      return [{ command: `echo oops-${tag} >&2; exit 3` }, (r) => r.structuredContent.data.exit_code === 3 && r.structuredContent.data.stderr === `oops-${tag}\n`];
    case 9:
      return [{ command: `sleep 0.2; echo bg-${tag}`, run_in_background: true }, (r) => !!r.structuredContent.data.job?.id];
    default:
      return [{ command: `echo ${tag}` }, (r) => r.structuredContent.status === 'success' && r.structuredContent.data.stdout === `${tag}\n`];
  }
}

// Phase 1.
async function phaseLoad(srv) {
  const latencies = [];
  let good = 0;
  let jobsRead = 0;
  const bad = [];
  const t0 = Date.now();
  let peak = stats(srv.child.pid);
  const sampler = setInterval(() => {
    const s = stats(srv.child.pid);
    if (s.rssMB > peak.rssMB) peak = s;
  }, 500);
  await Promise.all(Array.from({ length: SESSIONS }, async (_, s) => {
    const { client, transport } = await httpClient(srv.url, TOKEN);
    for (let i = 0; i < CALLS / SESSIONS; i++) {
      const [args, ok] = mixed(s, i);
      const t = Date.now();
      let res;
      try {
        res = await client.callTool({ name: 'run_shell_command', arguments: args });
      } catch (err) {
        bad.push(`${JSON.stringify(args)}: ${err.message}`);
        continue;
      }
      latencies.push(Date.now() - t);
      if (ok(res)) good++;
      else {
        // What the check read, not only the text's head: status, flags, both ends.
        const e = res.structuredContent ?? {};
        const d = e.data ?? {};
        bad.push(`${JSON.stringify(args)}: status ${e.status}, error ${e.error?.code}, truncated ${d.truncated}, full_output_path ${d.full_output_path}, ` +
          `stdout ${d.stdout?.length} chars ending ${JSON.stringify(d.stdout?.slice(-40))}, stderr ${JSON.stringify(d.stderr?.slice(-200))}; text ${JSON.stringify(res.content?.[0]?.text?.slice(0, 200))}`);
      }
      if (args.run_in_background && res.structuredContent.data.job?.id) {
        const out = await client.callTool({ name: 'job_output', arguments: { job_id: res.structuredContent.data.job.id, wait_ms: 10000, until: '^bg-' } });
        if (/bg-s\d+c\d+/.test(out.content[0].text)) jobsRead++;
      }
    }
    await transport.terminateSession();
    await client.close();
  }));
  clearInterval(sampler);
  const secs = (Date.now() - t0) / 1000;
  console.log(`\n1. ${CALLS} mixed calls over ${SESSIONS} sessions: ${secs.toFixed(1)} s, ${(CALLS / secs).toFixed(0)} calls/s; latency p50 ${pct(latencies, 0.5)} ms, p95 ${pct(latencies, 0.95)} ms, max ${Math.max(...latencies)} ms; peak ${show(peak)}`);
  for (const b of bad.slice(0, 5)) console.log(`   unexpected: ${b}`);
  check(good === CALLS, `${good} of ${CALLS} calls answered as expected`);
  check(jobsRead === CALLS / 10, `${jobsRead} of ${CALLS / 10} background jobs' output read`);
}

// Phase 2.
async function phaseAbandon(srv, baseline) {
  const codes = {};
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'abandoned', version: '1' } } };
  const t0 = Date.now();
  for (let i = 0; i < ABANDONED; i += 25) {
    await Promise.all(Array.from({ length: Math.min(25, ABANDONED - i) }, async () => {
      try {
        const res = await fetch(srv.url, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
          body: JSON.stringify(init),
          signal: AbortSignal.timeout(30000),
        });
        await res.text();
        codes[res.status] = (codes[res.status] || 0) + 1;
      } catch (err) {
        codes[err.name] = (codes[err.name] || 0) + 1;
      }
    }));
  }
  const open = stats(srv.child.pid);
  console.log(`\n2. ${ABANDONED} sessions opened and abandoned in ${((Date.now() - t0) / 1000).toFixed(1)} s: answers ${JSON.stringify(codes)}; then ${show(open)}`);
  const answered = (codes[200] || 0) + (codes[503] || 0);
  check(answered === ABANDONED, `${answered} of ${ABANDONED} initializations answered (200 or 503)`);
  // The abandoned sessions hold every slot until they are closed (2 minutes
  // after they started, having run nothing): then a new client is accepted.
  const t1 = Date.now();
  let accepted = null;
  while (!accepted && Date.now() - t1 < 200000) {
    try {
      accepted = await httpClient(srv.url, TOKEN);
    } catch (err) {
      if (err.code !== 503) throw err;
      await sleep(2000);
    }
  }
  check(!!accepted, `a new session is accepted once the abandoned ones are closed (${((Date.now() - t1) / 1000).toFixed(0)} s)`);
  if (accepted) {
    const res = await accepted.client.callTool({ name: 'run_shell_command', arguments: { command: 'echo after' } });
    check(res.structuredContent.data.stdout === 'after\n', 'and runs a command');
    await accepted.transport.terminateSession();
    await accepted.client.close();
  }
  const after = await settle(srv.child.pid, (s) => s.fds <= baseline.fds + 2 && s.children <= baseline.children, 150000);
  console.log(`   then: ${show(after)} (baseline ${show(baseline)})`);
  check(after.fds <= baseline.fds + 2, `descriptors back to baseline (${after.fds} against ${baseline.fds})`);
  check(after.children <= baseline.children, `child processes back to baseline (${after.children} against ${baseline.children})`);
  check(after.rssMB <= Math.max(open.rssMB, baseline.rssMB + 40), `memory no higher than during the load (${after.rssMB} MB; baseline ${baseline.rssMB} MB)`);
}

// Phase 3.
async function phaseKill() {
  const srv = await start();
  const marker = 'sleep 313';
  const clients = await Promise.all(Array.from({ length: SESSIONS }, () => httpClient(srv.url, TOKEN)));
  let answered = 0;
  let errors = 0;
  let hung = 0;
  const loops = clients.map(async ({ client }, s) => {
    for (let i = 0; ; i++) {
      const args = i % 3 === 2 ? { command: marker, timeout_ms: 60000 } : { command: `echo k${s}-${i}` };
      const r = await Promise.race([
        client.callTool({ name: 'run_shell_command', arguments: args }).then(() => 'ok', () => 'error'),
        sleep(20000).then(() => 'hung'),
      ]);
      if (r === 'ok') answered++;
      else {
        if (r === 'error') errors++;
        else hung++;
        return;
      }
    }
  });
  // Kill once the load is on: at least half the sessions with a command running.
  const t0 = Date.now();
  while (processesWith(marker).length < SESSIONS / 2 && Date.now() - t0 < 60000) await sleep(200);
  const inflight = processesWith(marker).length;
  srv.child.kill('SIGKILL');
  await exited(srv.child);
  await Promise.all(loops);
  // Neither the commands nor the server's sandbox helpers (the binary again).
  const leftover = () => [...processesWith(marker), ...processesWith(process.env.SHELLGATE_BIN)];
  let left = leftover();
  for (let i = 0; i < 20 && left.length; i++) {
    await sleep(250);
    left = leftover();
  }
  console.log(`\n3. kill -9 with ${SESSIONS} sessions in flight (${inflight} processes of ${marker}): ${answered} calls answered before, ${errors} failed at the kill, ${hung} hung; ${left.length} processes left`);
  check(inflight >= SESSIONS / 2, `the kill came with commands running (${inflight})`);
  check(errors + hung === SESSIONS && hung === 0, `every session's call in flight ended with an error, none hung (${errors} errors, ${hung} hung)`);
  check(left.length === 0, `no command or helper left running after kill -9 (${left.length})`);
  for (const { client } of clients) await client.close().catch(() => {});
}

function auditLines() {
  const dir = join(l.state, 'shellgate');
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('audit')) : [];
  let valid = 0;
  let invalid = 0;
  const events = {};
  for (const f of files) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const rec = JSON.parse(line);
        valid++;
        events[rec.event] = (events[rec.event] || 0) + 1;
      } catch {
        invalid++;
      }
    }
  }
  console.log(`\naudit: ${files.length} files, ${valid} lines valid, ${invalid} not; events ${JSON.stringify(events)}`);
  check(valid > CALLS && invalid === 0, `every audit line is valid JSON (${valid} valid, ${invalid} not)`);
}

const srv = await start();
{
  const { client, transport } = await httpClient(srv.url, TOKEN);
  await client.callTool({ name: 'run_shell_command', arguments: { command: 'echo warm' } });
  await transport.terminateSession();
  await client.close();
}
await sleep(2000);
const baseline = stats(srv.child.pid);
console.log(`baseline: ${show(baseline)}`);
await phaseLoad(srv);
const afterLoad = await settle(srv.child.pid, (s) => s.files + s.deleted <= baseline.files && s.children <= baseline.children, 30000);
console.log(`   30 s after the sessions ended: ${show(afterLoad)}`);
check(afterLoad.files <= baseline.files && afterLoad.children <= baseline.children, `files and child processes back to baseline once the sessions ended (${afterLoad.files} files, ${afterLoad.children} processes)`);
// internal/jobs: a removed job log's reader stays open until a GC collects it.
check(afterLoad.deleted === 0, `no removed file held open 30 s after the sessions ended (${afterLoad.deleted})`);
await phaseAbandon(srv, baseline);
srv.child.kill('SIGTERM');
await exited(srv.child);
await phaseKill();
auditLines();
console.log(failures.length ? `\nFAIL: ${failures.length} checks failed` : '\nPASS');
process.exit(failures.length ? 1 : 0);
