// Drives the real agents (Claude Code, Codex, Gemini CLI, installed from npm as
// devDependencies) against the model stand-in of fakemodel.mjs, each in a lab
// under /var/tmp with its own HOME, so nothing of the user's is read or touched.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN } from './helpers.mjs';
import { startModel } from './fakemodel.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const bin = (name) => join(here, 'node_modules', '.bin', name);

// The labs made here, removed when the test file exits.
const made = [];
process.on('exit', () => {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
});

// lab makes a fresh directory with a home, a project root and a temp dir.
export function lab(name) {
  mkdirSync('/var/tmp', { recursive: true });
  const base = realpathSync(mkdtempSync(`/var/tmp/shellgate-${name}-`));
  made.push(base);
  const dirs = { base, home: join(base, 'home'), root: join(base, 'root'), tmp: join(base, 'tmp') };
  for (const d of [dirs.home, dirs.root, dirs.tmp]) mkdirSync(d);
  return dirs;
}

// missing says why an agent cannot run here, or '' when it can: it must be
// installed and answer --version (a native binary that cannot start here fails).
export function missing(agent) {
  const b = bin(AGENTS[agent].bin);
  if (!existsSync(b)) return `${b} is not installed: run npm ci in e2e/`;
  const l = lab(`${agent}-version`);
  const r = spawnSync(b, ['--version'], { env: baseEnv(l), cwd: l.root, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) return `${b} --version failed (${r.error || `status ${r.status}`}): ${(r.stderr || '').trim().slice(0, 300)}`;
  return '';
}

// The environment every agent gets: no variable of the user's but PATH.
function baseEnv(l) {
  return { PATH: process.env.PATH, HOME: l.home, TMPDIR: l.tmp, LANG: 'C.UTF-8', XDG_CONFIG_HOME: join(l.home, '.config'), XDG_STATE_HOME: join(l.home, '.local', 'state'), XDG_CACHE_HOME: join(l.home, '.cache') };
}

// shellgateArgs is how each agent starts shellgate's MCP server.
const shellgateArgs = (l) => ['mcp', '--root', l.root];

// AGENTS says, for each agent, how to configure it for the stand-in and run it
// non-interactively: setup(lab, modelURL, mode) writes its settings and returns
// { env, args }. mode is 'mcp' (shellgate as an MCP server) or 'hook' (shellgate
// as the hook before the agent's own shell tool; Claude Code also 'prefix': the
// hook and shellgate-exec as CLAUDE_CODE_SHELL_PREFIX).
export const AGENTS = {
  'claude-code': {
    bin: 'claude',
    // The MCP tool as Claude Code names it, and its own shell tool.
    tool: { mcp: (n) => n === 'mcp__shellgate__run_shell_command', hook: (n) => n === 'Bash', prefix: (n) => n === 'Bash' },
    setup(l, url, mode, { approveAsks = false } = {}) {
      const env = {
        ...baseEnv(l),
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: 'sk-ant-stand-in',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        // Otherwise MCP tools are deferred behind its ToolSearch tool.
        ENABLE_TOOL_SEARCH: 'false',
        MCP_TOOL_TIMEOUT: '120000',
      };
      const args = ['-p', 'Run the command.', '--output-format', 'json'];
      if (mode === 'mcp') {
        const config = join(l.base, 'mcp.json');
        writeFileSync(config, JSON.stringify({ mcpServers: { shellgate: { command: BIN, args: shellgateArgs(l) } } }));
        args.push('--mcp-config', config, '--strict-mcp-config', '--allowedTools', 'mcp__shellgate__run_shell_command');
      } else {
        // As `shellgate install claude-code` writes it (docs/clients.md).
        mkdirSync(join(l.home, '.claude'), { recursive: true });
        const settings = {};
        if (mode === 'prefix') {
          // As docs/clients.md sets the prefix up: shellgate-exec in ~/.local/bin,
          // a link to the shellgate that answers the hook. The hook command stays
          // the test's build, under /var/tmp or /tmp, which the sandbox hides:
          // Claude Code runs hook commands through the prefix too, and shellgate
          // exec must answer its own hook outside the sandbox.
          const dir = join(l.home, '.local', 'bin');
          mkdirSync(dir, { recursive: true });
          symlinkSync(BIN, join(dir, 'shellgate-exec'));
          settings.env = { CLAUDE_CODE_SHELL_PREFIX: join(dir, 'shellgate-exec') };
        }
        const hook = { type: 'command', command: `${BIN} hook claude-code`, timeout: 10 };
        settings.hooks = { PreToolUse: [{ matcher: 'Bash', hooks: [hook] }] };
        writeFileSync(join(l.home, '.claude', 'settings.json'), JSON.stringify(settings));
        env.CLAUDE_PROJECT_DIR = l.root;
        if (approveAsks) {
          // Headless, Claude Code puts a permission question (a hook's "ask") to
          // an MCP tool named by --permission-prompt-tool: this one approves
          // every question, as a user would in the dialog, and logs it.
          writeFileSync(join(l.root, 'approve.mjs'), APPROVER);
          const config = join(l.base, 'approver.json');
          writeFileSync(config, JSON.stringify({ mcpServers: { approver: { command: process.execPath, args: [join(l.root, 'approve.mjs')] } } }));
          args.push('--mcp-config', config, '--permission-prompt-tool', 'mcp__approver__approve');
        }
      }
      return { env, args };
    },
  },
  codex: {
    bin: 'codex',
    // Codex offers an MCP server's tools in a namespace, mcp__shellgate; its
    // own shell tool is exec_command (the hook sees it as Bash).
    tool: { mcp: (n) => n === 'run_shell_command', hook: (n) => n === 'exec_command' },
    setup(l, url, mode, { approve = true, trust = true } = {}) {
      const codexHome = join(l.home, '.codex');
      mkdirSync(codexHome, { recursive: true });
      const q = JSON.stringify;
      const args = ['exec', '--skip-git-repo-check', '-C', l.root, 'Run the command.'];
      const mcp = [
        '[mcp_servers.shellgate]',
        `command = ${q(BIN)}`,
        `args = ${q(shellgateArgs(l))}`,
        'tool_timeout_sec = 600',
        // As docs/clients.md says, default_tools_approval_mode included.
        ...(approve ? ['default_tools_approval_mode = "approve"'] : []),
      ];
      // The hook: its own shell runs commands in its workspace-write sandbox,
      // as a user would run it, and hooks.json as `shellgate install codex`
      // writes it.
      const hook = ['sandbox_mode = "workspace-write"'];
      writeFileSync(join(codexHome, 'config.toml'), [
        'model = "stand-in"',
        'model_provider = "standin"',
        ...(mode === 'hook' ? hook : []),
        '[model_providers.standin]',
        'name = "stand-in"',
        `base_url = ${q(`${url}/v1`)}`,
        'wire_api = "responses"',
        ...(mode === 'mcp' ? mcp : []),
        '',
      ].join('\n'));
      if (mode === 'hook') {
        const entry = { type: 'command', command: `${BIN} hook codex`, timeout: 10 };
        writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [entry] }] } }));
        // Headless, a hook runs only when trusted (the TUI's /hooks records
        // that) or with this flag, which docs/clients.md gives for automation.
        if (trust) args.splice(1, 0, '--dangerously-bypass-hook-trust');
      }
      return { env: { ...baseEnv(l), CODEX_HOME: codexHome }, args };
    },
  },
  'gemini-cli': {
    bin: 'gemini',
    // shellgate's tool under another name than Gemini CLI's own shell tool,
    // run_shell_command: excluding that name (tools.exclude) hides shellgate's
    // tool too, and headless Gemini CLI never offers a tool of that name.
    tool: { mcp: (n) => n === 'mcp_shellgate_shell', hook: (n) => n === 'run_shell_command' },
    setup(l, url, mode) {
      mkdirSync(join(l.home, '.gemini'), { recursive: true });
      const settings = { security: { auth: { selectedType: 'gemini-api-key' } } };
      const args = ['-p', 'Run the command.', '--output-format', 'json'];
      if (mode === 'mcp') {
        // As docs/clients.md says: trusted (shellgate asks itself), named shell,
        // Gemini CLI's own shell tool left out.
        settings.mcpServers = { shellgate: { command: BIN, args: [...shellgateArgs(l), '--tool-name', 'shell'], timeout: 600000, trust: true } };
        settings.tools = { exclude: ['run_shell_command'] };
      } else {
        // As `shellgate install gemini-cli` writes it (docs/clients.md).
        const hook = { name: 'shellgate', type: 'command', command: `${BIN} hook gemini-cli`, timeout: 10000 };
        settings.hooks = { BeforeTool: [{ matcher: 'run_shell_command', hooks: [hook] }] };
        // Headless, Gemini CLI offers its model its own shell tool only when
        // every call is approved beforehand.
        args.push('--approval-mode', 'yolo');
      }
      writeFileSync(join(l.home, '.gemini', 'settings.json'), JSON.stringify(settings));
      const env = {
        ...baseEnv(l),
        GOOGLE_GEMINI_BASE_URL: url,
        GEMINI_API_KEY: 'stand-in',
        GEMINI_CLI_NO_RELAUNCH: 'true',
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
        GEMINI_PROJECT_DIR: l.root,
      };
      return { env, args };
    },
  },
};

// APPROVER is a stdio MCP server with one tool, approve, answering Claude Code's
// permission questions with "allow" and appending each to approved.log beside it.
// Plain JSON-RPC, no imports: it runs in shellgate's sandbox (Claude Code starts
// MCP servers through the prefix too), from the project directory.
const APPROVER = `import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return;
  if (method === 'initialize') return send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'approver', version: '1' } } });
  if (method === 'tools/list') return send({ id, result: { tools: [{ name: 'approve', description: 'Answers permission questions.', inputSchema: { type: 'object', properties: { tool_name: { type: 'string' }, input: { type: 'object' } }, required: ['tool_name', 'input'] } }] } });
  if (method === 'tools/call') {
    appendFileSync(new URL('approved.log', import.meta.url), JSON.stringify(params.arguments) + '\\n');
    return send({ id, result: { content: [{ type: 'text', text: JSON.stringify({ behavior: 'allow', updatedInput: params.arguments.input }) }] } });
  }
  send({ id, result: {} });
});
`;

// runAgent runs agent once against a fresh stand-in that makes calls (an array of
// tool arguments) in turn, and resolves to { results, offered, code, stdout, stderr }.
// setup is passed on to the agent's setup (Codex: { approve: false }); before(lab),
// when given, runs before the agent starts.
export async function runAgent(agent, calls, { mode = 'mcp', timeoutMs = 150000, setup = {}, before } = {}) {
  const a = AGENTS[agent];
  const l = lab(agent);
  const model = await startModel({ wantTool: a.tool[mode], calls });
  try {
    const { env, args } = a.setup(l, model.url, mode, setup);
    if (before) before(l);
    const child = spawn(bin(a.bin), args, { cwd: l.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? sig)));
    clearTimeout(timer);
    return { results: model.results, offered: model.offered, requests: model.requests, code, stdout, stderr, lab: l };
  } finally {
    await model.close();
  }
}
