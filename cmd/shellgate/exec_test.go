package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
)

// execIn runs the real binary's `shellgate exec` in a fresh root with no user
// configuration.
func execIn(t *testing.T, bin string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := t.TempDir()
	cmd := exec.Command(bin, append([]string{"exec", "--root", root}, args...)...)
	cmd.Dir = root
	cmd.Env = hookEnv(t)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// execBinary builds shellgate for a test that runs POSIX shell commands through it.
func execBinary(t *testing.T) string {
	if testing.Short() || runtime.GOOS == "windows" {
		t.Skip("builds the binary; POSIX shell commands")
	}
	return buildBinary(t)
}

// execAlias links bin as shellgate-exec in a directory of the test's own (tests
// running at once may share bin's directory through SHELLGATE_TEST_BIN).
func execAlias(t *testing.T, bin string) string {
	alias := filepath.Join(visibleTempDir(t), "shellgate-exec")
	if err := os.Symlink(bin, alias); err != nil {
		t.Fatal(err)
	}
	return alias
}

// showInSandbox makes the user configuration in env show paths to sandboxed
// commands ([sandbox] visible), as a user whose shellgate is not in a
// toolchain's directory would.
func showInSandbox(t *testing.T, env []string, paths ...string) []string {
	t.Helper()
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			dir = v
		}
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = strconv.Quote(p)
	}
	cfg := filepath.Join(dir, "shellgate", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[sandbox]\nvisible = ["+strings.Join(quoted, ", ")+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestExecBinary(t *testing.T) {
	bin := execBinary(t)
	tests := []struct {
		name           string
		stdin          string
		args           []string
		stdout, stderr string // stderr: a substring
		code           int
	}{
		{"one command line", "", []string{"echo out; echo err >&2; exit 3"}, "out\n", "err\n", 3},
		{"argv keeps its words", "", []string{"sh", "-c", `printf '[%s]' "$1" "$2"`, "sh", "a b", "$HOME"}, "[a b][$HOME]", "", 0},
		{"argv after --", "", []string{"--", "printf", "%s\n", "x y"}, "x y\n", "", 0},
		{"stdin is passed through", "line one\nline two\n", []string{"wc -l"}, "2\n", "", 0},
		{"binary output is raw", "", []string{`printf 'a\000b\377'`}, "a\x00b\xff", "", 0},
		{"killed by a signal", "", []string{"kill -TERM $$"}, "", "", 128 + int(syscall.SIGTERM)},
		{"timeout", "", []string{"--timeout", "200ms", "sleep 5"}, "", "timed out after 200ms and was killed", 124},
		{"refused", "", []string{"rm -rf ~"}, "", "rule catastrophic", 125},
		{"refused argv", "", []string{"sudo", "ls"}, "", "rule privilege", 125},
		{"interactive program refused", "", []string{"vim notes.txt"}, "", "rule interactive", 125},
		{"no command", "", nil, "", "shellgate exec: no command given (shellgate exec [flags] COMMAND-LINE); see `shellgate exec -h`\n", exitUsage},
		{"bad flag", "", []string{"--bogus", "true"}, "", "shellgate exec: unknown flag --bogus; see `shellgate exec -h`\n", exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := execIn(t, bin, tc.stdin, tc.args...)
			if code != tc.code || stdout != tc.stdout || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			if tc.code == 125 && stdout != "" {
				t.Errorf("a refusal wrote to stdout: %q", stdout)
			}
		})
	}
}

// Installed under the name shellgate-exec, the binary is `shellgate exec`: the
// form CLAUDE_CODE_SHELL_PREFIX needs, which quotes the prefix as one word.
func TestExecAlias(t *testing.T) {
	bin := execBinary(t)
	alias := execAlias(t, bin)
	root := t.TempDir()
	// As Claude Code runs a Bash command with the prefix set: bash -c "'PREFIX' 'COMMAND'".
	cmd := exec.Command("bash", "-c", quoteArg(alias)+" "+quoteArg("echo hi; exit 7"))
	cmd.Dir = root
	cmd.Env = hookEnv(t, "CLAUDE_PROJECT_DIR="+root)
	out, err := cmd.Output()
	if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != 7 || string(out) != "hi\n" {
		t.Errorf("err %v, stdout %q; want exit 7 and hi", err, out)
	}
}

// A stdio MCP server started through exec still speaks JSON-RPC over its stdin
// and stdout: shellgate's own, answering initialize and tools/list.
func TestExecStdioMCPServer(t *testing.T) {
	bin := execBinary(t)
	root := t.TempDir()
	// As Claude Code starts a stdio server with the prefix set: PREFIX and one
	// argument, the quoted command line.
	cmd := exec.Command(bin, "exec", quoteArgv([]string{bin, "mcp", "--root", root}))
	cmd.Dir = root
	cmd.Env = showInSandbox(t, hookEnv(t, "CLAUDE_PROJECT_DIR="+root), bin)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(outPipe)
	send := func(msg string) map[string]any {
		t.Helper()
		if _, err := in.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s; stderr %q", msg, errb.String())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("not JSON-RPC: %q", lines.Text())
		}
		return m
	}
	init := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if res, _ := init["result"].(map[string]any); res == nil || res["serverInfo"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	list := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if !strings.Contains(lines.Text(), "run_shell_command") {
		t.Errorf("tools/list: %v", list)
	}
	in.Close() // the client goes away: the server, and so exec, end
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exec after stdin EOF: %v; stderr %q", err, errb.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("exec did not end after the server's stdin closed")
	}
}

// Claude Code's Bash tool hands the prefix a script around the model's command: it
// sources a snapshot of the user's shell and writes the working directory to a file
// in the temp dir. Those two run; the model's command is judged as usual.
func TestExecClaudeCodeBashWrapper(t *testing.T) {
	bin := execBinary(t)
	alias := execAlias(t, bin)
	// The home directory, as a real one, is not in /tmp: the sandbox shows it.
	root, home, tmp := t.TempDir(), visibleTempDir(t), t.TempDir()
	snap := filepath.Join(home, ".claude", "shell-snapshots", "snapshot-bash-1763827200000-abc123.sh")
	os.MkdirAll(filepath.Dir(snap), 0o755)
	if err := os.WriteFile(snap, []byte("myfn() { echo from the snapshot; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cwdFile := filepath.Join(tmp, "claude-8f3a-cwd")
	wrap := func(model string) string {
		return "source " + quoteArg(snap) + ` 2>/dev/null || true && { \builtin shopt -u extglob || \builtin setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true && eval ` +
			quoteArg(model) + " < /dev/null && pwd -P >| " + quoteArg(cwdFile)
	}
	run := func(script string) (string, string, int) {
		cmd := exec.Command("bash", "-c", quoteArg(alias)+" "+quoteArg(script))
		cmd.Dir = root
		cmd.Env = append(hookEnv(t), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "CLAUDE_PROJECT_DIR="+root, "TMPDIR="+tmp)
		return runCmd(t, cmd)
	}
	if out, errs, code := run(wrap("myfn; echo model")); code != 0 || out != "from the snapshot\nmodel\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if b, err := os.ReadFile(cwdFile); err != nil || strings.TrimSpace(string(b)) != root {
		t.Errorf("cwd file: %q %v; want %s", b, err, root)
	}
	if _, errs, code := run(wrap("rm -rf ~")); code != 125 || !strings.Contains(errs, "catastrophic") {
		t.Errorf("the model's command was not judged: exit %d, stderr %q", code, errs)
	}
	// The exceptions are that one file and that one snapshot, nothing else.
	other := filepath.Join(tmp, "other")
	if _, errs, code := run(wrap("echo x > " + other)); code != 125 || !strings.Contains(errs, "confinement") {
		t.Errorf("a write beside the cwd file: exit %d, stderr %q", code, errs)
	}
	// Another file sourced is stored code: refused without the sandbox, run
	// inside it (where it is contained), never treated as the snapshot.
	if _, errs, code := run("source " + quoteArg(filepath.Join(tmp, "snapshot-bash-1.sh")) + " && pwd -P >| " + quoteArg(cwdFile)); code == 0 || code == 125 && !strings.Contains(errs, "stored-code") {
		t.Errorf("a snapshot outside ~/.claude: exit %d, stderr %q", code, errs)
	}

	// An ask: refused, unless the hook put it to the user in Claude Code's dialog,
	// and then once.
	docker := filepath.Join(root, "bin", "docker")
	os.MkdirAll(filepath.Dir(docker), 0o755)
	if err := os.WriteFile(docker, []byte("#!/bin/sh\necho docker ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	asked := "./bin/docker run alpine true"
	if _, errs, code := run(wrap(asked)); code != 125 || !strings.Contains(errs, "No one could be asked to approve it") {
		t.Errorf("an ask nobody asked: exit %d, stderr %q", code, errs)
	}
	// The hook as Claude Code runs it with the prefix set: through the prefix.
	hookCmd := exec.Command("bash", "-c", quoteArg(alias)+" "+quoteArg(quoteArg(bin)+" hook claude-code"))
	hookCmd.Dir = root
	hookCmd.Env = append(hookEnv(t), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "CLAUDE_PROJECT_DIR="+root, "CLAUDE_CODE_SHELL_PREFIX="+alias)
	hookCmd.Stdin = strings.NewReader(editPayload(t, "claude-code-bash.json", func(m map[string]any) {
		m["cwd"] = root
		m["tool_input"].(map[string]any)["command"] = asked
	}))
	if out, _, _ := runCmd(t, hookCmd); !strings.Contains(out, `"permissionDecision":"ask"`) {
		t.Fatalf("the hook did not ask: %s", out)
	}
	if out, errs, code := run(wrap(asked)); code != 0 || out != "docker ran\n" {
		t.Errorf("the ask the hook put to the user: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, code := run(wrap(asked)); code != 125 || !strings.Contains(errs, "No one could be asked to approve it") {
		t.Errorf("a second run on one approval: exit %d, stderr %q", code, errs)
	}
}

// Claude Code runs hook commands through the prefix too, as bash -c "'PREFIX'
// 'HOOK COMMAND'". shellgate's own hook answers outside the sandbox, whose view
// hides its binary (here under /var/tmp) and the audit log and notes it writes;
// anything else dressed as it runs through the gate as usual.
func TestExecWrapsHook(t *testing.T) {
	bin := execBinary(t)
	alias := execAlias(t, bin)
	root, home := t.TempDir(), visibleTempDir(t)
	key := filepath.Join(home, ".ssh", "id_rsa")
	os.MkdirAll(filepath.Dir(key), 0o700)
	if err := os.WriteFile(key, []byte("PRIVATE-KEY-MATERIAL\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(visibleTempDir(t), "audit.jsonl")
	env := append(hookEnv(t), "HOME="+home, "CLAUDE_PROJECT_DIR="+root, "CLAUDE_CODE_SHELL_PREFIX="+alias, shellgate.AuditLogEnv+"="+auditLog)
	prefixed := func(line, stdin string) (string, string, int) {
		cmd := exec.Command("bash", "-c", quoteArg(alias)+" "+quoteArg(line))
		cmd.Dir = root
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		return runCmd(t, cmd)
	}
	payload := editPayload(t, "claude-code-bash.json", func(m map[string]any) {
		m["cwd"] = root
		m["tool_input"].(map[string]any)["command"] = "sudo rm -rf build"
	})
	for _, line := range []string{quoteArg(bin) + " hook claude-code", quoteArg(bin) + " hook --mode never claude-code"} {
		out, errs, code := prefixed(line, payload)
		if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "privilege") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want the hook's deny", line, code, out, errs)
		}
	}
	if b, _ := os.ReadFile(auditLog); strings.Count(string(b), `"event":"hook"`) != 2 {
		t.Errorf("the hook's decisions are not in the audit log:\n%s", b)
	}
	// A hook line that exec cannot vouch for runs in the sandbox, which hides the
	// key and the binary: a look-alike in the project, this shellgate asked to
	// run something else, or its hook with more on the line.
	fake := filepath.Join(root, "shellgate")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\ncat "+quoteArg(key)+"; echo fake ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		quoteArg(fake) + " hook claude-code",
		quoteArg(bin) + " run -- cat " + quoteArg(key),
		quoteArg(bin) + " hook claude-code; cat " + quoteArg(key),
		quoteArg(bin) + " hook claude-code < " + quoteArg(key),
	} {
		out, errs, _ := prefixed(line, payload)
		if strings.Contains(out+errs, "PRIVATE-KEY") || strings.Contains(out, "permissionDecision") {
			t.Errorf("%s ran outside the sandbox: stdout %q, stderr %q", line, out, errs)
		}
	}
	// Its hook given a config file the agent wrote in the project: trusted as
	// the user's, its [audit] path had the hook append a line of the agent's
	// choosing ("$(…)" in the command) to a file outside, ~/.bashrc say.
	rc := filepath.Join(home, ".bashrc")
	if err := os.WriteFile(filepath.Join(root, "evil.toml"), []byte("[audit]\npath = "+strconv.Quote(rc)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same file outside the project, through a link in it (a tool cache or
	// the session's temp dir is such a place the agent can write).
	outside := filepath.Join(visibleTempDir(t), "evil.toml")
	if err := os.WriteFile(outside, []byte("[audit]\npath = "+strconv.Quote(rc)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "cfg.toml")); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{quoteArg(bin) + " hook claude-code --config evil.toml", quoteArg(bin) + " hook --config=" + quoteArg(filepath.Join(root, "evil.toml")) + " claude-code", quoteArg(bin) + " hook -config cfg.toml claude-code"} {
		prefixed(line, payload)
		if _, err := os.Stat(rc); err == nil {
			t.Errorf("%s wrote %s outside the sandbox", line, rc)
			os.Remove(rc)
		}
	}
	if out, errs, code := prefixed(quoteArg(fake)+" hook claude-code", payload); code != 0 || out != "fake ran\n" {
		t.Errorf("the look-alike: exit %d, stdout %q, stderr %q; want it run, in the sandbox", code, out, errs)
	}

	// A guard hook written as Claude Code's documentation suggests, through the
	// project directory's variable: known, so the program is known and runs. (Were
	// it refused, Claude Code would take that as a hook error and go on without it.)
	guard := filepath.Join(root, ".claude", "hooks", "guard.sh")
	os.MkdirAll(filepath.Dir(guard), 0o755)
	if err := os.WriteFile(guard, []byte("#!/bin/sh\necho guard read: $(cat)\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "exec", `"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh`)
	cmd.Dir = root
	cmd.Env = hookEnv(t, "CLAUDE_PROJECT_DIR="+root)
	cmd.Stdin = strings.NewReader("{}")
	if stdout, stderr, code := runCmd(t, cmd); code != 2 || stdout != "guard read: {}\n" {
		t.Errorf("guard hook: exit %d, stdout %q, stderr %q; want exit 2 and what it read", code, stdout, stderr)
	}
}
