package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/shellgate/shellgate/hook"
)

const installUsage = `Usage: shellgate install   AGENT [--settings FILE | --project] [--command CMD] [--dry-run]
       shellgate uninstall AGENT [--settings FILE | --project] [--dry-run]

Adds "shellgate hook AGENT" to the agent's settings file (Claude Code:
~/.claude/settings.json, Codex: ~/.codex/hooks.json or $CODEX_HOME/hooks.json,
Gemini CLI: ~/.gemini/settings.json, Cursor: ~/.cursor/hooks.json), or removes it.
The file is merged, not replaced: other settings and hooks keep their place. The
change is shown as a diff; --dry-run shows it without writing. Agents: claude-code,
codex, gemini-cli, cursor.

Exit status: 0 changed, or nothing to change; 64 bad usage (unknown flag or agent);
125 the settings file cannot be read, understood or written.

Flags:
`

func cmdInstall(args []string, stdout, stderr io.Writer) int {
	return install(args, stdout, stderr, true)
}

func cmdUninstall(args []string, stdout, stderr io.Writer) int {
	return install(args, stdout, stderr, false)
}

func install(args []string, stdout, stderr io.Writer, add bool) int {
	name := "install"
	if !add {
		name = "uninstall"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var (
		settings = fs.String("settings", "", "the settings `FILE` to change (default: the agent's user settings)")
		project  = fs.Bool("project", false, "change the project's settings file under --root (default: the current directory)")
		root     = fs.String("root", "", "project root for --project")
		command  = fs.String("command", "", "the hook command to write (default: this shellgate's absolute path, then hook AGENT)")
		dryRun   = fs.Bool("dry-run", false, "show the change without writing it")
	)
	agent, rest, help, err := agentArg(fs, args, func(w io.Writer) { fmt.Fprint(w, installUsage) }, stdout)
	switch {
	case help:
		return 0
	case err != nil:
		return usageFailure(stderr, name, err.Error())
	case len(rest) > 0:
		return usageFailure(stderr, name, fmt.Sprintf("unexpected arguments %q", rest))
	case *settings != "" && *project:
		return usageFailure(stderr, name, "--settings and --project both name the file; give one")
	}
	path, err := settingsPath(agent, *settings, *project, *root)
	if err != nil {
		fmt.Fprintf(stderr, "shellgate %s: %v\n", name, err)
		return exitShellgate
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "shellgate %s: %v\n", name, err)
		return exitShellgate
	}
	err = nil // a missing file is an empty one
	var updated []byte
	hookLine := *command
	if add {
		if hookLine == "" {
			hookLine, err = hookCommand(agent.Name)
		}
		if err == nil {
			updated, err = agent.Install(old, hookLine)
		}
	} else {
		updated, err = agent.Uninstall(old)
	}
	if err != nil {
		fmt.Fprintf(stderr, "shellgate %s: %s: %v\n", name, path, err)
		return exitShellgate
	}
	if bytes.Equal(old, updated) {
		fmt.Fprintf(stdout, "%s: nothing to change\n", path)
		if add {
			fmt.Fprint(stdout, installNote(agent.Name, hookLine))
		}
		return 0
	}
	fmt.Fprint(stdout, unifiedDiff(path, string(old), string(updated)))
	if *dryRun {
		fmt.Fprintln(stdout, "(dry run: nothing written)")
		return 0
	}
	if err := writeFileAtomic(path, updated); err != nil {
		fmt.Fprintf(stderr, "shellgate %s: %v\n", name, err)
		return exitShellgate
	}
	if add {
		fmt.Fprint(stdout, installNote(agent.Name, hookLine))
	}
	return 0
}

// installNote is what the user must know once a hook is in place, which the
// diff does not show: a hook decides and runs nothing, so what it allows runs
// as the agent runs it; and each agent's own catch (docs/clients.md). command
// is the hook's command line.
func installNote(agent, command string) string {
	switch agent {
	case "claude-code":
		return `Note: the hook only decides. What it allows runs in Claude Code's own shell, without
shellgate's sandbox and checkpoints, so it allows outright only what only reads, and
leaves what may write to Claude Code's own permission prompt. For a sandbox and
checkpoints, run commands through shellgate exec (CLAUDE_CODE_SHELL_PREFIX): docs/clients.md.
`
	case "codex":
		return `Note: Codex runs a hook only once you trust it, and skips it without a word until then:
start codex, type /hooks and trust shellgate's hook (again after its command changes).
What it allows runs under Codex's own approval policy and sandbox: docs/clients.md.
`
	case "cursor":
		return fmt.Sprintf(`Note: the hook only decides. What it allows runs in Cursor's own shell, without
shellgate's sandbox and checkpoints. In Cursor's Auto-review mode an "ask" runs without
a prompt: there, install with --command %q. See docs/clients.md.
`, command+" --mode never")
	}
	return `Note: the hook only decides. What it allows runs in the agent's own shell, without
shellgate's sandbox and checkpoints, so it allows outright only what only reads, and
leaves what may write to the agent's own confirmation. For a sandbox and checkpoints,
serve the tool with shellgate mcp: docs/clients.md.
`
}

func settingsPath(agent *hook.Agent, file string, project bool, root string) (string, error) {
	switch {
	case file != "":
		return filepath.Abs(file)
	case project:
		if root == "" {
			root = "."
		}
		abs, err := filepath.Abs(root)
		return agent.ProjectSettings(abs), err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the user settings (give --settings FILE): %v", err)
	}
	return agent.UserSettings(home, os.Getenv), nil
}

// hookCommand runs this very binary, so that the agent finds it whatever its PATH.
func hookCommand(agent string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this program's path (give --command): %v", err)
	}
	return quoteArg(exe) + " hook " + agent, nil
}

// writeFileAtomic replaces path with data through a temporary file beside it, so
// that the agent never reads half a settings file; it keeps the file's mode.
func writeFileAtomic(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a settings file linked from a dotfiles repository stays a link
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".shellgate-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// unifiedDiff shows the lines that changed between a and b, with two lines of
// context: settings files are small, so a plain LCS table is enough.
func unifiedDiff(path, a, b string) string {
	x, y := splitLines(a), splitLines(b)
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var ops []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, line{' ', x[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]): // removals first, as diff shows them
			ops = append(ops, line{'-', x[i]})
			i++
		default:
			ops = append(ops, line{'+', y[j]})
			j++
		}
	}
	var out strings.Builder
	from := path
	if a == "" {
		from = "/dev/null"
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, path)
	const ctx = 2
	last := -1 // the last line shown
	for k, l := range ops {
		near := false
		for d := max(0, k-ctx); d <= min(len(ops)-1, k+ctx); d++ {
			if ops[d].op != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if last < 0 || k > last+1 { // every hunk starts with @@
			out.WriteString("@@\n")
		}
		fmt.Fprintf(&out, "%c%s\n", l.op, l.text)
		last = k
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
