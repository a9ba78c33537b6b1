// Command shellgate runs AI agents' shell commands safely: it checks them against a
// policy, runs them confined to a project root, and reports a standard JSON envelope.
//
//	shellgate run   [flags] -- COMMAND   run a command, print its output and a summary
//	shellgate check [flags] -- COMMAND   show the policy decision without running
//	shellgate mcp   [flags]              serve the shell tool over MCP (stdio or HTTP)
//	shellgate hook  AGENT                answer an agent's pre-tool hook
//	shellgate exec  [flags] COMMAND      run a command as a prefix would, through the gate
//	shellgate install|uninstall AGENT    add or remove the hook in the agent's settings
//	shellgate changes|undo [flags] [N]   what commands changed in the project; take it back
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/shellgate/shellgate/internal/inherit"
)

// Exit statuses of shellgate itself; otherwise `run` exits with the command's status.
const (
	exitTimeout   = 124 // the command timed out and was killed (as GNU timeout)
	exitShellgate = 125 // shellgate refused or could not run the command
	exitCancelled = 130 // interrupted (Ctrl-C)
)

const usage = `shellgate: the shell-execution layer for AI coding agents.

Usage:
  shellgate run   [flags] -- COMMAND   check, run and report a command
  shellgate check [flags] -- COMMAND   show the policy decision without running it
  shellgate mcp   [flags]              serve the shell tool over MCP (stdio, or --http ADDR)
  shellgate hook  AGENT                answer AGENT's pre-tool hook (claude-code, codex, gemini-cli, cursor)
  shellgate exec  [flags] COMMAND      run COMMAND through the gate with its own stdio and exit status
  shellgate install|uninstall AGENT    add or remove the hook in AGENT's settings
  shellgate doctor                     say which sandbox layers this machine supports
  shellgate changes [flags] [N]        what recent commands changed in the project (checkpoints)
  shellgate undo    [flags] [N]        put the project back as it was before command N (the last)
  shellgate help  COMMAND              show a command's flags
  shellgate --version                  print the version

Run "shellgate run -h" for flags and exit statuses. Bad usage exits with 64.
`

func main() {
	// Commands get only what shellgate hands them, never a descriptor the
	// agent that started shellgate left open across exec.
	inherit.Stop(3)
	args := os.Args[1:]
	// Installed as shellgate-exec, it is the one program CLAUDE_CODE_SHELL_PREFIX
	// can name (the prefix is quoted as a single word).
	if isExecAlias(os.Args[0]) {
		args = append([]string{"exec"}, args...)
	}
	os.Exit(dispatch(args, os.Stdout, os.Stderr))
}

// isExecAlias reports whether prog is named shellgate-exec, and so runs as
// `shellgate exec`.
func isExecAlias(prog string) bool {
	return strings.TrimSuffix(filepath.Base(prog), ".exe") == "shellgate-exec"
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := map[string]func([]string, io.Writer, io.Writer) int{
		"run":   cmdRun,
		"check": cmdCheck,
		"mcp":   cmdMCP,

		"hook":      cmdHook,
		"exec":      cmdExec,
		"doctor":    cmdDoctor,
		"changes":   cmdChanges,
		"undo":      cmdUndo,
		"install":   cmdInstall,
		"uninstall": cmdUninstall,

		keeperCommand: cmdKeeper,
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, "shellgate", version())
		return 0
	case "help":
		switch {
		case len(args) == 1:
			fmt.Fprint(stdout, usage)
			return 0
		case len(args) == 2 && cmds[args[1]] != nil:
			return cmds[args[1]]([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprintf(stderr, "shellgate help: no command %q; see `shellgate -h`\n", strings.Join(args[1:], " "))
		return exitUsage
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "shellgate: unknown command %q; see `shellgate -h`\n", name)
		return exitUsage
	}
	return cmd(args[1:], stdout, stderr)
}

// version is the module version this binary was built from ("(devel)" for a build
// in a clone), with the commit when the build recorded one.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
}
