// The real agents — Claude Code, Codex and Gemini CLI, from npm — run shellgate
// (as an MCP server, and as the hook before their own shell tool) against a local
// stand-in for their model API, which calls the tool and records what comes back:
// these tests check what each model really reads. An agent that cannot run here
// is skipped with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENTS, missing, runAgent } from './agents.mjs';

// Output of 5 MiB: 655 360 lines of 8 bytes, the last one 1655360.
const FIVE_MB = 'seq 1000001 1655360';

// has and lacks assert on what the model read, quoting only its ends when they
// fail: a result can be 45 000 characters.
const excerpt = (text) => (text.length > 1200 ? `${text.slice(0, 600)}\n[…]\n${text.slice(-600)}` : text);
function has(text, re) {
  assert.ok(re.test(text), `${re} is not in what the model read (${text.length} characters):\n${excerpt(text)}`);
}
function lacks(text, re) {
  assert.ok(!re.test(text), `${re} is in what the model read (${text.length} characters):\n${excerpt(text)}`);
}

// plain is the text a result holds, unwrapped from Gemini CLI's JSON.
const plain = (r) => (r.response ? Object.values(r.response).join('\n') : r.text);

const SCENARIOS = [
  {
    name: 'echo hi',
    doc: '`echo hi`',
    args: { command: 'echo hi' },
    check(text, agent, n) {
      has(text, /Command succeeded: echo hi\n/);
      has(text, /--- STDOUT \(3 bytes\) ---\nhi\n?(<\/untrusted_context>)?$/);
      // The text alone: with structuredContent these agents show their model the JSON.
      lacks(text, /"status"\s*:/);
      assert.ok(n < 300, `${n} characters for echo hi`);
    },
  },
  {
    name: 'refusal',
    doc: '`sudo apt-get install cowsay`',
    args: { command: 'sudo apt-get install cowsay' },
    check(text, agent, n) {
      has(text, /Command not run/);
      has(text, /elevated privileges \(rule privilege\)/);
      has(text, /Work as the current user inside the project/);
      assert.ok(n < 600, `${n} characters for a refusal`);
    },
  },
  {
    name: 'timeout',
    doc: '`sleep 30`',
    args: { command: 'sleep 30', timeout_ms: 1000 },
    check(text, agent, n) {
      has(text, /Timed out after 1s: sleep 30/);
      has(text, /the command and everything it started were killed/);
      assert.ok(n < 800, `${n} characters for a timeout`);
    },
  },
  {
    name: '5 MB of output',
    doc: '5 MiB of output',
    args: { command: FIVE_MB },
    check(text, agent, n) {
      // Bounded, the tail kept, the whole output's file named, and nothing cut
      // by the agent on the way (Codex and Gemini CLI cut the middle out of a
      // long result, Claude Code keeps only the head).
      assert.ok(n < 40000, `${n} characters for 5 MB`);
      has(text, /\n1000001\n/);
      has(text, /\n1655360(\n|$)/);
      has(text, /full output: \/\S*spill\S*\.(job-)?stdout\.log\]/); // named once, where stdout was cut; a session call's spill is its job log
      lacks(text, /tokens truncated|Output too large/);
    },
  },
  {
    name: '5 MB, then 9 KB on stderr',
    doc: 'the same, then 9 KB on stderr',
    args: { command: `${FIVE_MB}; seq 1 2000 >&2` },
    check(text) {
      // Both streams' last lines reach the model.
      has(text, /\n1655360(\n|$)/);
      has(text, /\n1999\n2000(\n|$)/);
      lacks(text, /tokens truncated|Output too large/);
    },
  },
];

// The characters each model read, per call, for docs/clients.md.
const measured = [];

// docs/clients.md's tables of the characters each model reads, so that the page
// cannot drift from what the agents do: a figure may differ from the page by 2 %
// or 24 characters, whichever is more (a run's wall time, process group id and
// spill file name vary in length).
const clientsDoc = readFileSync(new URL('../docs/clients.md', import.meta.url), 'utf8');
const COLUMN = { 'claude-code': 'Claude Code', codex: 'Codex', 'gemini-cli': 'Gemini CLI' };
function documented(header, row, agent) {
  const lines = clientsDoc.split('\n');
  const start = lines.findIndex((l) => l.startsWith(header));
  assert.ok(start >= 0, `docs/clients.md has no table headed ${header}`);
  const cells = (l) => l.split('|').slice(1, -1).map((c) => c.trim());
  const col = cells(lines[start]).findIndex((c) => c.startsWith(COLUMN[agent]));
  assert.ok(col > 0, `docs/clients.md's table ${header} has no column for ${COLUMN[agent]}`);
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const c = cells(lines[i]);
    if (!c[0].startsWith(row)) continue;
    const m = /^(\d[\d ]*)/.exec(c[col]);
    assert.ok(m, `docs/clients.md, ${header} / ${row} / ${COLUMN[agent]}: no figure in ${JSON.stringify(c[col])}`);
    return Number(m[1].replace(/ /g, ''));
  }
  assert.fail(`docs/clients.md's table ${header} has no row ${row}`);
}
function asDocumented(header, row, agent, n) {
  const want = documented(header, row, agent);
  const slack = Math.max(24, Math.round(want * 0.02));
  assert.ok(Math.abs(n - want) <= slack, `the model read ${n} characters; docs/clients.md (${row}, ${COLUMN[agent]}) says ${want}: update the page`);
}
const MCP_TABLE = '| call | Claude Code | Codex | Gemini CLI |';
const HOOK_TABLE = '| call | Claude Code (`Bash`)';
process.on('exit', () => {
  if (measured.length) console.log(`# characters the model read\n${measured.map((m) => `# ${m}`).join('\n')}`);
});

for (const agent of Object.keys(AGENTS)) {
  const why = missing(agent);
  test(`${agent}: what the model reads from shellgate's MCP tool`, { skip: why || false, timeout: 240000 }, async (t) => {
    // Gemini CLI adds wait_for_previous to every MCP tool and tells its model to set it.
    const calls = SCENARIOS.map((s) => (agent === 'gemini-cli' ? { ...s.args, wait_for_previous: true } : s.args));
    const run = await runAgent(agent, calls);
    assert.equal(run.code, 0, `${agent} exited with ${run.code}:\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`);
    // The tool as the model is shown it: the essentials within the first 2 000
    // characters, where Claude Code cuts descriptions.
    const head = run.offered.description.slice(0, 2000);
    for (const needle of [/timeout_ms/, /run_in_background/, /Refused/, /a file holding the whole output/]) has(head, needle);
    measured.push(`${agent} mcp: tool description ${run.offered.description.length} characters`);
    asDocumented(MCP_TABLE, "the tool's description", agent, run.offered.description.length);
    if (agent === 'gemini-cli') {
      assert.ok(!run.offered.tools.includes('run_shell_command'), `Gemini CLI's own shell is offered too: ${run.offered.tools}`);
    }
    for (const [i, s] of SCENARIOS.entries()) {
      await t.test(s.name, () => {
        const r = run.results[i];
        assert.ok(r, `no result of call ${i} (${s.name}) reached the model; ${run.results.length} did:\n${run.stderr.slice(-2000)}`);
        measured.push(`${agent} mcp ${s.name}: ${r.text.length}`);
        asDocumented(MCP_TABLE, s.doc, agent, r.text.length);
        // Bounds on what the model read; content in the text it holds (Gemini
        // CLI gives its model the result as a JSON object).
        s.check(plain(r), agent, r.text.length);
      });
    }
  });
}

// docs/clients.md: without default_tools_approval_mode = "approve", Codex asks
// before every call of the server's tools; `codex exec` cannot ask, so it refuses.
test('codex: without default_tools_approval_mode no call reaches shellgate', { skip: missing('codex') || false, timeout: 240000 }, async () => {
  const run = await runAgent('codex', [{ command: 'echo hi' }], { setup: { approve: false } });
  assert.ok(run.results[0], `no result reached the model:\n${run.stderr.slice(-2000)}`);
  has(run.results[0].text, /requires approval/);
  lacks(run.results[0].text, /Command succeeded/);
});

// The hooks: the agent's own shell tool, with `shellgate hook AGENT` deciding.
const HOOK_CALLS = {
  'claude-code': [
    { command: 'echo hi', description: 'Say hi' },
    { command: 'sudo apt-get install cowsay', description: 'Install cowsay' },
    { command: 'python3 -c "print(6*7)"', description: 'Compute' },
  ],
  // Codex's own shell tool, exec_command, takes cmd.
  codex: [
    { cmd: 'echo hi' },
    { cmd: 'sudo apt-get install cowsay' },
    { cmd: 'python3 -c "print(6*7)"' },
  ],
  'gemini-cli': [
    { command: 'echo hi', description: 'Say hi' },
    { command: 'sudo apt-get install cowsay', description: 'Install cowsay' },
    { command: 'python3 -c "print(6*7)"', description: 'Compute' },
  ],
};

for (const agent of Object.keys(HOOK_CALLS)) {
  const why = missing(agent);
  test(`${agent}: what the model reads with shellgate's hook`, { skip: why || false, timeout: 240000 }, async (t) => {
    const run = await runAgent(agent, HOOK_CALLS[agent], { mode: 'hook' });
    assert.equal(run.code, 0, `${agent} exited with ${run.code}:\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`);
    const result = (i) => {
      const r = run.results[i];
      assert.ok(r, `no result of call ${i} reached the model:\n${run.stderr.slice(-2000)}`);
      const command = HOOK_CALLS[agent][i].command ?? HOOK_CALLS[agent][i].cmd;
      measured.push(`${agent} hook ${command}: ${r.text.length}`);
      asDocumented(HOOK_TABLE, `\`${command}\``, agent, r.text.length);
      return r.text;
    };
    await t.test('allowed: echo hi runs', () => {
      has(result(0), /\bhi\b/);
    });
    await t.test('denied: the model reads the reason and the rule', () => {
      const text = result(1);
      has(text, /shellgate: .*elevated privileges \(rule privilege\)/); // the rule once, in the reason
    });
    await t.test('no sandbox behind the hook: python3 -c is not allowed outright', () => {
      const text = result(2);
      lacks(text, /^\s*42\s*$/m);
      has(text, /code-execution|permission|approv/i);
    });
  });
}

// Codex: what the hook refuses does not run, what it allows does; a hook Codex
// does not trust is skipped without a word, so docs/clients.md says how to trust it.
test('codex: a command the hook refuses does not run, one it allows does', { skip: missing('codex') || false, timeout: 240000 }, async (t) => {
  const calls = [
    { cmd: 'touch allowed.txt' },
    { cmd: 'touch denied.txt && sudo true' },
    { cmd: `python3 -c "open('asked.txt', 'w')"` },
  ];
  const run = await runAgent('codex', calls, { mode: 'hook' });
  assert.equal(run.code, 0, `codex exited with ${run.code}:\n${run.stderr.slice(-2000)}`);
  const made = (f) => existsSync(join(run.lab.root, f));
  await t.test('allowed: it ran', () => {
    assert.ok(made('allowed.txt'), `allowed.txt was not made; the model read:\n${run.results[0]?.text}`);
  });
  await t.test('denied: it did not run, and the model reads why', () => {
    assert.ok(!made('denied.txt'), 'denied.txt was made: the refused line ran');
    has(run.results[1].text, /^Command blocked by PreToolUse hook: shellgate: .*\(rule privilege\)/);
    lacks(run.results[1].text, /\.\. Command:/);
  });
  await t.test('asked: refused, saying approval is needed and how to give it', () => {
    assert.ok(!made('asked.txt'), 'asked.txt was made: the asked command ran');
    has(run.results[2].text, /rule code-execution/);
    has(run.results[2].text, /Approval required, and Codex's hook cannot ask for it/);
    lacks(run.results[2].text, /must approve it/); // said once: approval is required
    has(run.results[2].text, /\[policy\] allow = /);
  });
  const untrusted = await runAgent('codex', [calls[1]], { mode: 'hook', setup: { trust: false } });
  await t.test('a hook Codex does not trust is skipped', () => {
    assert.ok(existsSync(join(untrusted.lab.root, 'denied.txt')), `the untrusted hook refused; the model read:\n${untrusted.results[0]?.text}`);
  });
});

// Without the prefix, Claude Code's own shell runs what the hook allows, with no
// sandbox or checkpoint of shellgate's, and the hook's allow would skip Claude
// Code's own prompt: so a line that may write is left to Claude Code's own
// permission flow, as without the hook. Headless and unapproved it does not run;
// approved by the user (the tool named by --permission-prompt-tool), it runs.
test("claude-code: a line that may write is left to Claude Code's own permissions", { skip: missing('claude-code') || false, timeout: 240000 }, async (t) => {
  const call = { command: 'touch made.txt', description: 'Make a file' };
  const refused = await runAgent('claude-code', [call], { mode: 'hook' });
  await t.test('nobody approves it: it does not run', () => {
    assert.equal(refused.code, 0, `claude-code exited with ${refused.code}:\n${refused.stderr.slice(-2000)}`);
    assert.ok(refused.results[0], `no result reached the model:\n${refused.stderr.slice(-2000)}`);
    assert.ok(!existsSync(join(refused.lab.root, 'made.txt')), `made.txt was made unasked; the model read:\n${refused.results[0].text}`);
  });
  const approved = await runAgent('claude-code', [call], { mode: 'hook', setup: { approveAsks: true } });
  await t.test('the user approves it in Claude Code: it runs', () => {
    assert.equal(approved.code, 0, `claude-code exited with ${approved.code}:\n${approved.stderr.slice(-2000)}`);
    assert.match(readFileSync(join(approved.lab.root, 'approved.log'), 'utf8'), /touch made\.txt/, 'the user was not asked');
    assert.ok(existsSync(join(approved.lab.root, 'made.txt')), `made.txt was not made; the model read:\n${approved.results[0]?.text}`);
  });
});

// The hook with the prefix: Claude Code runs each command through
// `shellgate exec` in the sandbox, and the hook decides as that sandbox will.
// Claude Code runs hook commands through the prefix as well; the hook's binary
// is the test's build, which the sandbox hides (/tmp, /var/tmp): shellgate exec
// answers its own hook outside the sandbox, or Claude Code would go on without it.
test("claude-code: what the model reads with shellgate's hook and prefix", { skip: missing('claude-code') || false, timeout: 240000 }, async (t) => {
  const calls = [
    { command: 'echo hi', description: 'Say hi' },
    { command: 'python3 -c "print(6*7)"', description: 'Compute' },
    { command: 'cat ~/.ssh/id_rsa; echo end', description: 'Read a key' },
    { command: 'sudo apt-get install cowsay', description: 'Install cowsay' },
  ];
  const run = await runAgent('claude-code', calls, {
    mode: 'prefix',
    // A key the sandbox must hide.
    before: (l) => {
      mkdirSync(join(l.home, '.ssh'));
      writeFileSync(join(l.home, '.ssh', 'id_rsa'), 'PRIVATE-KEY-MATERIAL\n');
    },
  });
  assert.equal(run.code, 0, `claude-code exited with ${run.code}:\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`);
  const result = (i) => {
    const r = run.results[i];
    assert.ok(r, `no result of call ${i} reached the model:\n${run.stderr.slice(-2000)}`);
    measured.push(`claude-code prefix ${calls[i].command}: ${r.text.length}`);
    return r.text;
  };
  await t.test('echo hi runs', () => has(result(0), /^hi$/));
  await t.test('python3 -c runs, in the sandbox', () => has(result(1), /^42$/));
  await t.test('~/.ssh is hidden', () => {
    const text = result(2);
    lacks(text, /PRIVATE-KEY-MATERIAL/);
    // In the order printed: Claude Code gives a Bash call one file for both
    // streams (and a hook two sockets, which it joins as data comes), and
    // shellgate exec keeps the order of either (docs/clients.md).
    has(text, /id_rsa: No such file or directory\nend$/);
  });
  await t.test('sudo is denied', () => has(result(3), /shellgate: .*\(rule privilege\)/));
  await t.test('the hook decided each command, outside the sandbox', () => {
    // Its audit lines, in the lab's home, which the sandbox does not show.
    const log = readFileSync(join(run.lab.home, '.local', 'state', 'shellgate', 'audit.jsonl'), 'utf8');
    const hooks = log.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.event === 'hook');
    assert.deepEqual(hooks.map((r) => [r.command, r.decision]), calls.map((c, i) => [c.command, i === 3 ? 'deny' : 'allow']));
  });
});

// An ask with the hook and the prefix: the hook asks (rule sandbox-escape), the
// user approves in Claude Code's permission flow (headless: the tool named by
// --permission-prompt-tool), and shellgate exec, which cannot see that answer,
// takes the note the hook left as the approval: the command runs, once.
test('claude-code: an ask the user approves runs through the prefix', { skip: missing('claude-code') || false, timeout: 240000 }, async () => {
  const call = { command: './bin/docker run alpine true', description: 'Run a container' };
  const run = await runAgent('claude-code', [call], {
    mode: 'prefix',
    setup: { approveAsks: true },
    before: (l) => {
      mkdirSync(join(l.root, 'bin'));
      writeFileSync(join(l.root, 'bin', 'docker'), '#!/bin/sh\necho docker ran\n', { mode: 0o755 });
    },
  });
  assert.equal(run.code, 0, `claude-code exited with ${run.code}:\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`);
  const approved = readFileSync(join(run.lab.root, 'approved.log'), 'utf8');
  assert.match(approved, /docker run alpine true/, 'the user was asked');
  const r = run.results[0];
  assert.ok(r, `no result reached the model:\n${run.stderr.slice(-2000)}`);
  measured.push(`claude-code prefix, approved ask ${call.command}: ${r.text.length}`);
  has(r.text, /^docker ran$/);
});
